/* error.c: the failure helper every library context shares (error.h). */
#include "error.h"
#include "errfmt.h"

#include <stdio.h>

int slab_vfail(struct slab_err *e, int code, const char *subject, const char *fmt, va_list ap)
{
	if (subject)
		slab_verrf(e->text, sizeof(e->text), subject, fmt, ap);
	else
		vsnprintf(e->text, sizeof(e->text), fmt, ap);
	return code;
}

int slab_fail(struct slab_err *e, int code, const char *subject, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	slab_vfail(e, code, subject, fmt, ap);
	va_end(ap);
	return code;
}

int slab_fail_from(struct slab_err *e, int code, const char *text)
{
	if (text != e->text)
		snprintf(e->text, sizeof(e->text), "%s", text);
	return code;
}

int slab_fail_silent(struct slab_err *e, int code)
{
	e->text[0] = '\0';
	return code;
}
