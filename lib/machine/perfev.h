/* perfev.h: TLB event counters for the calling thread through perf_event_open(2): the
 * kernel's generic dTLB-load-misses and, where the CPU has a known event, page walks.
 * Used by bench-tlb --perf. Nothing here prints. */
#ifndef SLAB_PERFEV_H
#define SLAB_PERFEV_H

#include <stddef.h>

struct slab_perfev;

/* A context with no counters open; NULL only when out of memory. */
struct slab_perfev *slab_perfev_new(void);

/*
 * Open the counters, disabled, for user-mode work of the calling thread. 0; SLAB_ERR_IO
 * when not even dTLB-load-misses can be counted: slab_perfev_error() then says why (no PMU
 * in this VM, the perf_event_paranoid setting, ...), fit to follow "not available (".
 */
int slab_perfev_open(struct slab_perfev *p);

/* Name of the page-walk event counted ("L2 DTLB misses, raw event 0xf045"), or NULL:
 * slab_perfev_error() then says why. */
const char *slab_perfev_walk_event(const struct slab_perfev *p);

/* Why the counters (after a failed open) or the page walks (after a successful one) are
 * absent; "" when nothing is. */
const char *slab_perfev_error(const struct slab_perfev *p);

/* Count from now / stop counting; counts accumulate over start-stop pairs. */
void slab_perfev_start(struct slab_perfev *p);
void slab_perfev_stop(struct slab_perfev *p);

/* Counts so far, scaled up when the kernel multiplexed the counters; NAN when a counter
 * is absent or never ran. */
void slab_perfev_read(struct slab_perfev *p, double *dtlb_misses, double *walks);

/* Accepts NULL. */
void slab_perfev_close(struct slab_perfev *p);

#endif
