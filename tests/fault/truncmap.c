/* truncmap.c: an LD_PRELOAD shim that truncates a file at a chosen moment of opening it, to
 * test that a .slab cut while it is opened is an error, not SIGBUS (tests/hardening.bats).
 *
 *   TRUNCMAP=PATH:SIZE:WHEN[:N]   truncate PATH to SIZE bytes, once, at the madvise(2)
 *                             call the reader makes on its mapping: WHEN "random" (after
 *                             mmap, before the header, the trailer and the table are read and
 *                             checked) or "normal" (after them, before anything else reads
 *                             the table); N: at the Nth such call (default 1: the 2nd
 *                             "random" is the plan walk's, after its own size check)
 *
 * The real madvise comes from dlsym(RTLD_NEXT). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_int done, seen;

int madvise(void *addr, size_t len, int advice)
{
	static int (*real)(void *, size_t, int);
	const char *spec = getenv("TRUNCMAP");
	char path[4096];
	long long size;
	char when[16];
	int nth = 1;

	if (!real)
		real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
	if (spec && !atomic_load(&done) &&
	    sscanf(spec, "%4095[^:]:%lld:%15[a-z]:%d", path, &size, when, &nth) >= 3 &&
	    ((advice == MADV_RANDOM && strcmp(when, "random") == 0) ||
	     (advice == MADV_NORMAL && strcmp(when, "normal") == 0)) &&
	    atomic_fetch_add(&seen, 1) + 1 == nth &&
	    !atomic_exchange(&done, 1) && truncate(path, (off_t)size) != 0) {
		perror("truncmap");
		abort();
	}
	return real(addr, len, advice);
}
