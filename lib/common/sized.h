/* sized.h: structs a caller allocates and the library reads or fills, which may grow in later
 * versions. Their first member is `size_t size`, the caller's sizeof; 0 stands for the first
 * version's size, so a zero-initialised struct keeps working. */
#ifndef SLAB_SIZED_H
#define SLAB_SIZED_H

#include <stddef.h>
#include <string.h>

#include "slab.h"

/* The size of a version of struct `type` whose last member is `member`: where that member
 * ends, tail padding left out. A version's size is pinned so (or by the offsetof of the
 * first member the next version added), never by sizeof: the first member added would
 * change that. */
#define SLAB_SIZED_END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Copy the caller's struct src into dst (this library's version, full bytes): fields the
 * caller's version lacks are 0, the defaults; a NULL src is a struct of zeros. first: the
 * size of the first version. 0, or SLAB_ERR_INVAL when src->size is smaller than any
 * version. */
static inline int slab_sized_in(void *dst, size_t full, const void *src, size_t first)
{
	size_t n = 0;

	if (src)
		memcpy(&n, src, sizeof(n));
	if (n == 0)
		n = first;
	if (n < first)
		return SLAB_ERR_INVAL;
	memset(dst, 0, full);
	if (src)
		memcpy(dst, src, n < full ? n : full);
	memcpy(dst, &full, sizeof(full));
	return 0;
}

/* Fill the caller's struct dst from src (this library's version, full bytes): as many fields
 * as the caller's version has; dst->size is kept. */
static inline void slab_sized_out(void *dst, const void *src, size_t full, size_t first)
{
	size_t n;

	memcpy(&n, dst, sizeof(n));
	if (n < first)
		n = first;
	if (n > full)
		n = full;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t), n - sizeof(size_t));
}

#endif
