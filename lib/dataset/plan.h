/* plan.h: inside a plan handle (the API is in slab.h), and the plan file's layout constants.
 * The plan file layout is in man/slab-plan.5. */
#ifndef SLAB_PLAN_H
#define SLAB_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "slab.h"

#define SLAB_PLAN_MAGIC        "SLABPLAN"
#define SLAB_PLAN_VERSION      1
#define SLAB_PLAN_MINOR_SUBSET 1        /* the minor version a subset plan is written with */
#define SLAB_PLAN_HEADER_FIXED 128u
#define SLAB_PLAN_ID_SIZE      32u
#define SLAB_PLAN_ENTRY_SIZE   8u

/* The sizes of the first versions of the caller's structs (sized.h): all of them so far. */
#define SLAB_PLAN_PARAMS_FIRST SLAB_SIZED_END(struct slab_plan_params, flags)
#define SLAB_PLAN_STATS_FIRST SLAB_SIZED_END(struct slab_plan_stats, same_page_neighbours)

struct slab_plan {
	struct slab_plan_params p;
	uint32_t nfiles;
	struct slab_file_id *ids;
	uint64_t total;         /* samples in the dataset */
	uint64_t length;        /* entries of this rank's whole plan */
	uint64_t start;         /* position of entries[0] in it */
	uint64_t n;             /* entries held */
	struct slab_plan_entry *entries;
	/* With SLAB_PLAN_SUBSET in p.flags: the subset's size S and the CRC-32C of its global
	 * indexes in increasing order, each u32 little-endian (slab-plan(5)); a plan made here
	 * also holds them (members, S of them; NULL when read from a file or put together). */
	uint64_t subset;
	uint32_t subset_crc;
	uint32_t *members;
	/* The CRC-32C of the entries as stored, when known (crc_known): worked out while they
	 * were made or checked when read, so that writing them does not read them again. */
	uint32_t crc;
	int crc_known;
	struct slab_err err;
};

/* slab_plan_match() with the difference in *e, not the plan's error: for a plan walked by
 * many walks at once, which its read-only calls leave untouched. */
int slab_plan_match_err(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
			struct slab_err *e);

#endif
