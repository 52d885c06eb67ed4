/* plan.h: epoch orderings (plans) over a dataset of one or more .slab files, and the plan
 * file that carries one between tools. The plan file layout is in man/slab-plan.5. */
#ifndef SLAB_PLAN_H
#define SLAB_PLAN_H

#include <stddef.h>
#include <stdint.h>

struct slab;

enum slab_plan_mode { SLAB_PLAN_SEQUENTIAL, SLAB_PLAN_RANDOM, SLAB_PLAN_QUASI };

#define SLAB_PLAN_PAD     0x1u  /* ranks are filled up by repeating samples (else drop-last) */
#define SLAB_PLAN_MEMORY  0x2u  /* window is a budget in bytes, not in pages */

#define SLAB_PLAN_MAGIC        "SLABPLAN"
#define SLAB_PLAN_VERSION      1
#define SLAB_PLAN_HEADER_FIXED 128u
#define SLAB_PLAN_ID_SIZE      32u
#define SLAB_PLAN_ENTRY_SIZE   8u

/* What ties a plan to its files: their content, not their names. */
struct slab_file_id {
	uint64_t file_size;
	uint64_t samples;
	uint32_t header_crc;
	uint32_t table_crc;
};

/* One step of a plan: sample `sample` of file `file` (indexes from 0, files in the order
 * given to the tools). */
struct slab_plan_entry {
	uint32_t file;
	uint32_t sample;
};

struct slab_plan_params {
	enum slab_plan_mode mode;
	uint64_t seed;
	uint64_t epoch;
	uint32_t rank;          /* < world */
	uint32_t world;         /* >= 1 */
	uint64_t window;        /* quasi: live pages (or bytes with SLAB_PLAN_MEMORY), >= 1;
				 * recorded but unused by the other modes */
	unsigned flags;         /* SLAB_PLAN_* */
};

struct slab_plan {
	struct slab_plan_params p;
	uint32_t nfiles;
	struct slab_file_id *ids;
	uint64_t total;         /* samples in the dataset */
	uint64_t length;        /* entries of this rank's whole plan */
	uint64_t start;         /* position of entries[0] in it */
	uint64_t n;             /* entries held */
	struct slab_plan_entry *entries;
};

/* The identity of an open file. */
void slab_file_identity(const struct slab *s, struct slab_file_id *id);

/* Compute the plan of rank p->rank over the files, from position start on (start may equal
 * the plan's length: no entries). A pure function of the files' identities and the
 * parameters; man/shuffle-plan.1 (ALGORITHM) gives every step. The dataset may hold at most
 * 2^32 - 1 samples. 0 and *out (free with slab_plan_free), or -1 with the reason in err. */
int slab_plan_make(struct slab *const *files, uint32_t nfiles, const struct slab_plan_params *p,
		   uint64_t start, struct slab_plan **out, char *err, size_t errlen);

/* Write the binary plan file to fd (a file or a pipe: it never seeks). 0 or -1 with errno
 * set. */
int slab_plan_write(const struct slab_plan *plan, int fd);

/* Read and check a binary plan file, "-" for standard input (checksums, sizes, header
 * consistency, entry ranges against its own identities). 0 and *out, or -1 with the reason,
 * naming the path, in err. */
int slab_plan_read(const char *path, struct slab_plan **out, char *err, size_t errlen);

/* Does the plan belong to these files (same count, same identities, entries in range)?
 * 0, or -1 with the first difference in err. */
int slab_plan_match(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
		    char *err, size_t errlen);

void slab_plan_free(struct slab_plan *plan);

/* Measures of a plan's entries over its files (shuffle-plan --stats; man/shuffle-plan.1,
 * STATISTICS). A sample's page is the one holding its first byte; a sample larger than a page
 * counts all its pages. */
struct slab_plan_stats {
	uint64_t samples;
	uint64_t distinct_pages;
	uint64_t page_switches;         /* consecutive entries on different pages */
	double mean_run;                /* samples / (page_switches + 1) */
	uint64_t max_live_pages;        /* most pages between their first and last use at once */
	uint64_t max_live_bytes;
	double displacement;            /* mean |i / (length-1) - g / (total-1)| over the entries:
					 * i the position in the rank's plan, g the sample's index
					 * in file order; 0 for sequential, ~1/3 for random */
	double same_page_neighbours;    /* fraction of consecutive pairs on one page */
};

/* 0 and *st, or -1 with the reason in err. The files must be the plan's (slab_plan_match). */
int slab_plan_stats(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
		    struct slab_plan_stats *st, char *err, size_t errlen);

#endif
