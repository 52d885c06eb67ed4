/* unit.h: the few macros C unit tests of lib/ use. A test program exits 0 when every CHECK
 * held; each failed CHECK prints its place and expression. */
#ifndef SLAB_UNIT_H
#define SLAB_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		unit_failures++; \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
		fprintf(stderr, "%s:%d: CHECK_STR failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
			a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
		unit_failures++; \
	} \
} while (0)

#define UNIT_DONE() (unit_failures ? (fprintf(stderr, "%d check(s) failed\n", unit_failures), 1) : 0)

#endif
