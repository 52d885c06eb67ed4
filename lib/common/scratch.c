/* scratch.c: growable scratch buffers kept between calls. */
#include "scratch.h"
#include "slab.h"

#include <stdlib.h>

#define KEEP_MAX (64u << 20)

int slab_scratch_reserve(struct slab_scratch *s, size_t need)
{
	void *p;

	if (need <= s->cap)
		return 0;
	p = realloc(s->p, need);
	if (!p)
		return SLAB_ERR_NOMEM;
	s->p = p;
	s->cap = need;
	return 0;
}

void slab_scratch_trim(struct slab_scratch *s)
{
	if (s->cap > KEEP_MAX)
		slab_scratch_free(s);
}

void slab_scratch_free(struct slab_scratch *s)
{
	free(s->p);
	s->p = NULL;
	s->cap = 0;
}
