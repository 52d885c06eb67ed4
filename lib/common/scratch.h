/* scratch.h: a growable scratch buffer a context keeps between calls (decoded pixels, filter
 * weights), so a run of similar images allocates once. */
#ifndef SLAB_SCRATCH_H
#define SLAB_SCRATCH_H

#include <stddef.h>

struct slab_scratch {
	void *p;
	size_t cap;
};

/* At least need bytes at s->p (contents not kept): 0, or SLAB_ERR_NOMEM with s unchanged. */
int slab_scratch_reserve(struct slab_scratch *s, size_t need);

/* After a call: give the memory back when it has grown past 64 MiB, so one huge picture does
 * not pin its pixels for the rest of a long run. */
void slab_scratch_trim(struct slab_scratch *s);

void slab_scratch_free(struct slab_scratch *s);

#endif
