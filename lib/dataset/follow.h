/* follow.h: what the library's own code asks of a plan walk beyond slab.h. */
#ifndef SLAB_FOLLOW_H
#define SLAB_FOLLOW_H

#include <stdint.h>

struct slab_follow;

/* With release, before the walk is closed early: drop the pages of its window and of the
 * plan's entries [window's end, end) that the caller read ahead of it (slab_follow_close()
 * drops the window's alone). Nothing with a page cache or local cache budget, nor in a
 * forked child. Accepts NULL. */
void slab_follow_drop_ahead(struct slab_follow *f, uint64_t end);

#endif
