/* membench.h: what memory really costs between NUMA nodes on this machine: bandwidth (threads
 * pinned to one node's CPUs reading a buffer bound to another node) and latency (one pinned
 * thread chasing pointers through that buffer), as matrices like Intel MLC's. Uses the kernel's
 * mbind, move_pages and sched_setaffinity directly (no libnuma). Never prints. */
#ifndef SLAB_MEMBENCH_H
#define SLAB_MEMBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

/* Bytes of one chase step: the line the latency test loads, one per cache line. */
#define SLAB_MEMBENCH_LINE 64u

struct slab_membench_opts {
	uint64_t size;          /* buffer bytes per memory node (0: slab_membench_default_size) */
	unsigned threads;       /* bandwidth threads per CPU node; 0: one per CPU of the node */
	unsigned repeat;        /* measured runs of each figure, after one warm-up run (>= 1) */
	double seconds;         /* each run lasts at least this long (0: 0.2) */
	/* Called before each step ("placing", "bandwidth", "latency"); may be NULL. */
	void (*progress)(int cpu_node, int mem_node, const char *step, void *arg);
	void *arg;
};

/* One figure over its runs: median, smallest, largest, and every run in order. */
struct slab_membench_stat {
	double median, min, max;
	double *runs;
	unsigned nruns;
};

struct slab_membench_cell {
	int ok;                 /* 0: not measured, error says why */
	char error[192];
	struct slab_membench_stat bw; /* GB/s (10^9 bytes per second), all threads together */
	struct slab_membench_stat lat;        /* ns per dependent load */
	unsigned threads;       /* bandwidth threads used */
	double on_node;         /* share of sampled buffer pages on the memory node; -1 unknown */
	double huge;            /* share of the buffer in transparent huge pages; -1 unknown */
};

struct slab_membench_result {
	unsigned nrows, ncols;
	int *row_node;          /* rows: nodes with CPUs */
	int *col_node;          /* columns: nodes with memory */
	struct slab_membench_cell *cells;     /* nrows * ncols, row by row */
	int bound;              /* 1: buffers bound with mbind; 0: kernel without NUMA, one node */
	uint64_t size;
	unsigned repeat;
	double seconds;
	double busy;            /* share of CPU time in use (by anything) in the 0.2 s before
				 * measuring, from /proc/stat; -1 unknown */
	char err[256];          /* read with slab_membench_error() */
};

/* The last-level caches of the machine together (every instance of the highest level);
 * 0 when unknown. */
uint64_t slab_membench_llc_bytes(const struct slab_topo_info *ti);

/* 256 MiB, or 4 times slab_membench_llc_bytes() when that is larger: well above what caches hold,
 * so the figures are memory's. */
uint64_t slab_membench_default_size(const struct slab_topo_info *ti);

/* Measure every (CPU node, memory node) pair of ti, which must describe this machine (read
 * with root "/"). Fills r (free it with slab_membench_free, also on failure). 0 when every
 * pair was measured; SLAB_ERR_IO when some were not (their cells say why,
 * slab_membench_error() the first reason); SLAB_ERR_INVAL for unusable options;
 * SLAB_ERR_NOMEM. */
int slab_membench_run(const struct slab_topo_info *ti, const struct slab_membench_opts *o,
		      struct slab_membench_result *r);

/* Why the last slab_membench_run() on r failed; "" when it did not. */
const char *slab_membench_error(const struct slab_membench_result *r);

void slab_membench_free(struct slab_membench_result *r);

#endif
