/* perfev.h: TLB event counters for the calling thread through perf_event_open(2): the
 * kernel's generic dTLB-load-misses and, where the CPU has a known event, page walks.
 * Used by bench-tlb --perf. Nothing here prints. */
#ifndef SLAB_PERFEV_H
#define SLAB_PERFEV_H

#include <stddef.h>

struct perfev;

/*
 * Open the counters, disabled, for user-mode work of the calling thread. NULL when not even
 * dTLB-load-misses can be counted; why then holds the reason (no PMU in this VM, the
 * perf_event_paranoid setting, ...), fit to follow "not available (". The caller closes.
 */
struct perfev *perfev_open(char *why, size_t len);

/* Name of the page-walk event counted ("L2 DTLB misses, raw event 0xf045"), or NULL with
 * the reason in why. */
const char *perfev_walk_event(const struct perfev *p, char *why, size_t len);

/* Count from now / stop counting; counts accumulate over start-stop pairs. */
void perfev_start(struct perfev *p);
void perfev_stop(struct perfev *p);

/* Counts so far, scaled up when the kernel multiplexed the counters; NAN when a counter
 * is absent or never ran. */
void perfev_read(struct perfev *p, double *dtlb_misses, double *walks);

void perfev_close(struct perfev *p);

#endif
