/* follow.h: walk a plan over its .slab files, sample by sample, keeping the next pages of the
 * plan on their way into the page cache (WILLNEED) and, on request, dropping each page once
 * its last use in the plan has passed, so a dataset larger than memory streams through a
 * bounded amount of it. Or read with O_DIRECT, several reads in flight through Linux AIO, and
 * keep the cache out of it. Never prints. */
#ifndef SLAB_FOLLOW_H
#define SLAB_FOLLOW_H

#include <stdint.h>

#include "slab.h"

struct slab_plan;
struct slab_follow;

struct slab_follow_options {
	uint64_t ahead;         /* .slab pages of look-ahead, >= 1 */
	int release;            /* drop each page after its last use in the plan */
	int direct;             /* O_DIRECT into aligned buffers instead of the mapping */
	int direct_sync;        /* direct reads one at a time, without AIO (tests, comparison) */
};

/* One step of the walk. */
struct slab_follow_item {
	uint64_t pos;           /* position in the plan (plan->start + entry index) */
	uint32_t file;
	uint64_t index;         /* sample index in its file */
	struct slab_sample sample;
	/* The sample's sample.size bytes (from sample.offset): into the mapping, or into a
	 * buffer with direct. Valid until the next slab_follow_next() or slab_follow_close(). */
	const unsigned char *bytes;
	int direct;             /* bytes are a copy: pass them on to the writers */
};

struct slab_follow_stats {
	uint64_t samples;       /* steps taken */
	uint64_t bytes;         /* sample bytes handed out */
	uint64_t distinct_pages;        /* .slab pages the plan touches */
	uint64_t advised;       /* WILLNEED calls (runs of samples, or whole pages) */
	uint64_t whole_pages;   /* pages read whole: all their uses were near (quasi order) */
	uint64_t released;      /* pages dropped after their last use */
	uint64_t max_window;    /* most distinct pages in the window at once */
	uint64_t direct_reads;  /* O_DIRECT reads (each a run of adjacent samples) */
	uint64_t direct_bytes;  /* bytes they read */
	uint64_t max_buffered;  /* most bytes held in read buffers at once: at most ahead x
				 * the largest page size, or one larger sample alone */
	int async;              /* direct reads went through Linux AIO, several in flight */
};

/* Prepare a walk of plan over files[0..nfiles) (paths[] are their names, opened again for
 * advice and O_DIRECT). The plan must match the files (slab_plan_match). One pass over the
 * plan finds each page's last use. 0 and *out, or -1 with the reason in err (naming the
 * file where it helps). */
int slab_follow_open(struct slab_follow **out, struct slab *const *files,
		     const char *const *paths, uint32_t nfiles, const struct slab_plan *plan,
		     const struct slab_follow_options *o, char *err, size_t errlen);

/* The next sample: releases what the previous one used last, moves the look-ahead window,
 * reads the sample (direct) or hands out its place in the mapping. 1 and *it, 0 at the
 * end, or a negative error with the reason in slab_follow_error(). */
int slab_follow_next(struct slab_follow *f, struct slab_follow_item *it);

/* Make sure the sample's bytes are in memory: one byte per OS page is read through the
 * mapping (direct items are read already). */
void slab_follow_touch(const struct slab_follow_item *it);

void slab_follow_stats(const struct slab_follow *f, struct slab_follow_stats *st);
const char *slab_follow_error(const struct slab_follow *f);
/* Accepts NULL. Does not close the files. */
void slab_follow_close(struct slab_follow *f);

#endif
