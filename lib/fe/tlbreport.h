/* tlbreport.h: bench-tlb's run as its outputs see it, and the renderers: the verdict in
 * words, the table, CSV, JSON and the SVG chart. */
#ifndef SLAB_TLBREPORT_H
#define SLAB_TLBREPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memlat.h"
#include "perfev.h"
#include "sysfs.h"

/* chase: a level this slow is memory, not a cache. */
#define TLB_MEMORY_NS 50

/* What was asked for. */
struct tlb_opts {
	enum slab_memlat_pattern pattern;
	int selected[SLAB_MEMLAT_NBACKINGS];
	size_t hugetlb_page;
	uint64_t max;
	int max_given;
	unsigned steps;
	double min_time;
	unsigned repeat;
	long cpu;                       /* -1: not pinned */
	int perf, csv, json;
	const char *svg;
	const char *sysfs_root;         /* the hardware description from here; NULL: "/" */
};

/* Everything measured and found out, for whichever output. */
struct tlb_run {
	const struct tlb_opts *o;
	uint64_t max, mem_available;
	struct slab_memlat_cgroup cgroup;       /* the memory cgroup's limit, if any */
	int capped;                             /* 1: by MemAvailable, 2: by the cgroup */
	uint64_t *sizes;
	size_t n;
	struct slab_memlat_region reg[SLAB_MEMLAT_NBACKINGS];
	struct slab_memlat_point *pt[SLAB_MEMLAT_NBACKINGS];    /* n each; NULL: not selected */
	double *med[SLAB_MEMLAT_NBACKINGS];     /* medians, NAN where not measured */
	double frac[SLAB_MEMLAT_NBACKINGS];
	struct slab_sysfs_cache caches[8];
	int ncaches;
	char cpu_model[128], thp_enabled[32], thp_defrag[32];
	struct slab_perfev *perf;       /* NULL: not requested or not available */
	const char *perf_why;           /* --perf and perf NULL: why */
	const char *walk_why;           /* perf and walk_name NULL: why */
	const char *walk_name;
	double cpu_share;               /* mean over the points measured; -1: none */
	struct slab_memlat_verdict v;
	char verdict[24][400];
	int nverdict;
};

/* "4k: 256 MiB with MADV_NOHUGEPAGE: 0% in huge pages (AnonHugePages)" and the like, for
 * backing b. */
const char *tlb_backing_text(const struct tlb_run *r, int b, char *buf, size_t len);

/* Put r->v into words, r->verdict[0 .. nverdict-1]. */
void tlb_verdict_text(struct tlb_run *r);

/* The outputs, to standard output. */
void tlb_print_table(const struct tlb_run *r);
void tlb_print_csv(const struct tlb_run *r);
void tlb_print_json(const struct tlb_run *r);

/* The chart into f (for PATH, named in messages). 0, or -1 after a message. */
int tlb_svg_write(FILE *f, const char *path, const struct tlb_run *r);

#endif
