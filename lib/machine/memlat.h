/* memlat.h: what a memory access costs as the working set grows, on 4 KiB pages, transparent
 * huge pages and hugetlb pages: the measurement behind bench-tlb. Nothing here prints. */
#ifndef SLAB_MEMLAT_H
#define SLAB_MEMLAT_H

#include <stddef.h>
#include <stdint.h>

#include "perfev.h"
#include "sysfs.h"

#define SLAB_MEMLAT_LINE 64                  /* cache line: the unit of chase and seq */
#define SLAB_MEMLAT_SMALL_PAGE 4096
#define SLAB_MEMLAT_THP_SIZE (2u << 20)      /* x86-64 PMD size: what THP can give */
#define SLAB_MEMLAT_MIN_SIZE 4096            /* the smallest working set */

/* Column order everywhere: 4k, thp, hugetlb. */
enum slab_memlat_backing {
	SLAB_MEMLAT_4K, SLAB_MEMLAT_THP, SLAB_MEMLAT_HUGETLB, SLAB_MEMLAT_NBACKINGS
};

enum slab_memlat_pattern { SLAB_MEMLAT_CHASE, SLAB_MEMLAT_PAGE, SLAB_MEMLAT_SEQ };

/* "4k", "thp", "hugetlb"; "chase", "page", "seq". */
const char *slab_memlat_backing_name(enum slab_memlat_backing b);
const char *slab_memlat_pattern_name(enum slab_memlat_pattern p);

/*
 * One mapping of one backing, populated once; every working set is measured from its start.
 * A backing that cannot be had (no hugetlb pages reserved, no THP in the kernel, mmap
 * refused) leaves ok 0, and slab_memlat_region_error() says what is missing and how to get
 * it.
 */
struct slab_memlat_region {
	enum slab_memlat_backing backing;
	int ok;                         /* mapped and populated */
	char err[320];                  /* !ok: read with slab_memlat_region_error() */
	char note[320];                 /* ok: a limit worth saying ("only 64 MiB in ...") */
	unsigned char *base;            /* working sets start here */
	size_t len;                     /* bytes usable from base; larger sets are not measured */
	size_t want;                    /* bytes asked for */
	size_t page_size;               /* 4k: 4096; thp: 2 MiB asked for; hugetlb: 2 MiB or 1 GiB */
	uint64_t huge_bytes;            /* in huge pages at the last slab_memlat_region_check() */
	uint64_t huge_bytes_start;      /* ... and right after mapping */
	int huge_known;                 /* huge_bytes came from /proc/self/smaps (or is hugetlb) */
};

/*
 * Map WANT bytes of backing B into r: 4k with MADV_NOHUGEPAGE; thp 2 MiB-aligned with
 * MADV_HUGEPAGE; hugetlb with MAP_HUGETLB in pages of HUGETLB_PAGE (2 MiB or 1 GiB), as much
 * of WANT as the free reserved pages hold. Populated (faulted in, written) before it
 * returns. 0 (r->ok 1); SLAB_ERR_NOTFOUND when the backing is missing (no huge pages offered
 * or free), SLAB_ERR_IO when mmap, madvise or faulting in failed, SLAB_ERR_INVAL for a bad
 * B, WANT or HUGETLB_PAGE (r->ok 0 and slab_memlat_region_error() says why).
 */
int slab_memlat_region_map(struct slab_memlat_region *r, enum slab_memlat_backing b, size_t want,
			   size_t hugetlb_page);

/* Why the region is not ok: "no 2 MiB huge pages reserved (...)"; "" when it is. */
const char *slab_memlat_region_error(const struct slab_memlat_region *r);

/* Re-read how much of the region is in huge pages (khugepaged may have changed it). */
void slab_memlat_region_check(struct slab_memlat_region *r);

/* Unmap; safe on a region that is not mapped. */
void slab_memlat_region_unmap(struct slab_memlat_region *r);

/* Share of the region in huge pages, 0..1; -1 when unknown. */
double slab_memlat_huge_fraction(const struct slab_memlat_region *r);

struct slab_memlat_params {
	enum slab_memlat_pattern pattern;
	double min_time;                /* CPU seconds each timed repetition lasts at least */
	unsigned repeat;                /* timed repetitions, >= 1 */
	struct slab_perfev *perf;            /* NULL: no counters */
};

/* One working set on one backing. "Access": one load (chase, page) or one 64-byte line read
 * (seq). */
struct slab_memlat_point {
	int measured;                   /* 0: the set does not fit, or the backing is missing */
	double median, min, max;        /* ns per access over the repetitions */
	double gbps;                    /* seq: 64 bytes / median, in GB/s; otherwise 0 */
	uint64_t accesses;              /* per repetition */
	double cpu_share;               /* thread CPU time / wall-clock time of the repetitions */
	double dtlb_per_access;         /* perf counts per access; NAN when not counted */
	double walks_per_access;
};

/*
 * Measure working set WS (a multiple of slab_memlat_unit()) in region r: lay out the pattern
 * (a random cyclic chain of lines or of pages, the same order for every backing), warm up
 * (one traversal, cut short past 2 x min_time), calibrate the count so one repetition lasts
 * at least min_time, then time p->repeat repetitions by the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: slices given to other processes do not count). Sets
 * out->measured to 0 when WS does not fit. 0, or SLAB_ERR_NOMEM for the samples.
 */
int slab_memlat_measure(struct slab_memlat_region *r, size_t ws, const struct slab_memlat_params *p,
			struct slab_memlat_point *out);

/* Working sets are multiples of this: 64 (chase, seq) or 4096 (page). */
size_t slab_memlat_unit(enum slab_memlat_pattern p);

/*
 * The working sets: 4096 * 2^(k/steps) for k = 0, 1, ... up to max, each rounded to a
 * multiple of unit, duplicates dropped, and max itself (rounded down to unit) last. *out is
 * malloc'd; the caller frees it. 0, SLAB_ERR_INVAL (max below 4096, unit or steps 0) or
 * SLAB_ERR_NOMEM.
 */
int slab_memlat_sizes(uint64_t max, unsigned steps, size_t unit, uint64_t **out, size_t *n);

/* What the memory cgroup of this process lets it still have, over its cgroup and their
 * ancestors (the tightest of them). */
struct slab_memlat_cgroup {
	int limited;            /* 0: no limit found */
	uint64_t limit, usage;  /* of the tightest cgroup, in bytes */
	uint64_t room;          /* limit - usage (0 when over) */
};

/* The memory cgroup limits of this process: proc/self/cgroup, then memory.max and
 * memory.current (v2) or memory.limit_in_bytes and memory.usage_in_bytes (v1 memory
 * controller) of its cgroup and every ancestor under sys/fs/cgroup, under the root of fs
 * (NULL: this machine). 0 with *cg filled; SLAB_ERR_NOTFOUND when no limit applies ("max"
 * all the way up, no cgroup files). */
int slab_memlat_cgroup(struct slab_sysfs *fs, struct slab_memlat_cgroup *cg);

/* Up to max data and unified caches of CPU cpu (sys/devices/system/cpu/cpuN/cache under the
 * root of fs; NULL: this machine), by size; the count (0 when sysfs says nothing). */
int slab_memlat_caches(struct slab_sysfs *fs, unsigned cpu, struct slab_sysfs_cache *c, int max);

/* ---- the verdict ------------------------------------------------------------------------ */

#define SLAB_MEMLAT_MAX_PLATEAUS 16

/* A run of consecutive points spanning an octave or more whose medians lie within a factor
 * of 1.25 of each other: one level of the memory hierarchy. Neighbouring runs given the
 * same label are joined into one. */
struct slab_memlat_plateau {
	size_t first, last;             /* indices into the sizes */
	double value;                   /* median of the points' medians, ns */
	double lo, hi;                  /* smallest and largest of them */
	int cache;                      /* index into the caches; -1: memory */
};

struct slab_memlat_verdict {
	int ref;                        /* backing the plateaus come from; -1: none measured */
	size_t nplateaus;
	struct slab_memlat_plateau plateaus[SLAB_MEMLAT_MAX_PLATEAUS];
	int huge;                       /* huge-page backing the 4k curve is compared with; -1: none */
	long reach;                     /* first point from which 4k stays > 10% slower; -1: none */
	double reach_ratio;             /* 4k / huge there */
	double reach_median;            /* median of 4k / huge from there on */
	long largest[SLAB_MEMLAT_NBACKINGS]; /* per huge backing: largest point on it and on 4k; -1 */
	double speedup[SLAB_MEMLAT_NBACKINGS]; /* 4k / that backing at largest[]; NAN */
};

/*
 * Read the curves: med[b][i] is backing b's median at sizes[i] (NAN: not measured; med[b]
 * NULL: backing not selected); frac[b] its huge-page fraction (-1 unknown). The plateau
 * curve is the huge-page curve when one covers every size, else 4k's. A plateau at
 * memory_ns or slower (0: no such rule) is memory; any other is labelled with the smallest
 * of the caches (may be NULL; sorted by size) that holds its geometric middle, or memory
 * when none does. A huge backing is compared
 * with 4k when hugetlb was measured, or thp with at least half its memory in huge pages.
 * 0, or SLAB_ERR_NOMEM (*v then holds no finding).
 */
int slab_memlat_analyse(const uint64_t *sizes, size_t n,
			const double *const med[SLAB_MEMLAT_NBACKINGS],
			const double frac[SLAB_MEMLAT_NBACKINGS], const struct slab_sysfs_cache *caches,
			int ncaches, double memory_ns, struct slab_memlat_verdict *v);

#endif
