/* deadline.h: the absolute time a timed wait gives up at, on the monotonic clock (a condition
 * variable waited on with pthread_cond_timedwait() is to be set to that clock with
 * pthread_condattr_setclock()). */
#ifndef SLAB_DEADLINE_H
#define SLAB_DEADLINE_H

#include <time.h>

/* now + sec (>= 0) on CLOCK_MONOTONIC into *ts. */
static inline void slab_deadline(struct timespec *ts, double sec)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)sec;
	ts->tv_nsec += (long)((sec - (double)(time_t)sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

#endif
