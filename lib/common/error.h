/* error.h: the one way a library context keeps the detail of its last failure. Every context
 * (reader, writer, tar reader, ...) embeds a struct slab_err; its functions return 0 or a
 * negative SLAB_ERR_* through slab_fail(), and its *_error() accessor returns the text. */
#ifndef SLAB_ERROR_H
#define SLAB_ERROR_H

#include <stdarg.h>

/* Room for a message naming a path near PATH_MAX and a key: slab_verrf shortens the subject
 * in its middle when both do not fit. */
#define SLAB_ERR_TEXT 1024

struct slab_err {
	char text[SLAB_ERR_TEXT];       /* "" until the first failure */
};

/* Keep "'subject': message" in e (only the message when subject is NULL) and return code, a
 * negative SLAB_ERR_*: `return slab_fail(&x->err, SLAB_ERR_IO, x->name, "%s", ...);`. No
 * allocation, so it serves the out-of-memory path too. */
int slab_fail(struct slab_err *e, int code, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int slab_vfail(struct slab_err *e, int code, const char *subject, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Take over another context's error text as it is (a call failed on a handle this context
 * uses): code is returned. */
int slab_fail_from(struct slab_err *e, int code, const char *text);

/* Empty the text: for a failure whose owner has said why already (a caller's hook). */
int slab_fail_silent(struct slab_err *e, int code);

#endif
