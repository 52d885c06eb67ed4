/* failmalloc.c: an LD_PRELOAD shim that makes one chosen allocation fail, to test the
 * out-of-memory paths of the tools (tests/oom.bats).
 *
 *   FAILMALLOC_NTH=N     the Nth allocation call after start-up returns NULL with ENOMEM
 *                        (only that one: later calls succeed, as after a transient shortage)
 *   FAILMALLOC_COUNT=F   at exit, write the number of allocation calls made to file F
 *   FAILMALLOC_TRACE=F   when the Nth call fails, write its backtrace to file F
 *
 * Counted: malloc, calloc, realloc (to a nonzero size), reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc, from every thread, once the shim's
 * constructor has run (before main). glibc's own strdup, asprintf, open_memstream, fopen,
 * qsort... call malloc through its public symbol, so they are counted and fail too.
 * The real functions come from dlsym(RTLD_NEXT); dlsym may itself allocate before they are
 * known, which a small static buffer serves. Not for sanitizer builds: their allocator
 * cannot be interposed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

static _Alignas(64) unsigned char boot[16384];
static size_t boot_used;
static int resolving;

static atomic_ulong calls;
static unsigned long nth;
static int armed;
static const char *count_path, *trace_path;
static _Thread_local int in_shim __attribute__((tls_model("initial-exec")));

static void *boot_alloc(size_t n)
{
	void *p;

	n = (n + 63) & ~(size_t)63;
	if (n > sizeof(boot) - boot_used)
		return NULL;
	p = boot + boot_used;
	boot_used += n;
	return p;
}

static int from_boot(const void *p)
{
	return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof(boot);
}

static void resolve(void)
{
	if (real_malloc || resolving)
		return;
	resolving = 1;
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	real_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	resolving = 0;
}

static void trace(unsigned long n)
{
	void *frames[64];
	int fd, depth;
	char line[64];

	if (!trace_path)
		return;
	fd = open(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	snprintf(line, sizeof(line), "allocation %lu failed:\n", n);
	if (write(fd, line, strlen(line)) < 0) {
		close(fd);
		return;
	}
	depth = backtrace(frames, 64);
	backtrace_symbols_fd(frames, depth, fd);
	close(fd);
}

/* 1 when this call is the one to fail. */
static int fail_now(void)
{
	unsigned long n;

	if (!armed || in_shim)
		return 0;
	n = atomic_fetch_add(&calls, 1) + 1;
	if (n != nth)
		return 0;
	in_shim = 1;
	trace(n);
	in_shim = 0;
	errno = ENOMEM;
	return 1;
}

__attribute__((constructor)) static void failmalloc_init(void)
{
	const char *s = getenv("FAILMALLOC_NTH");
	void *frame[1];

	resolve();
	count_path = getenv("FAILMALLOC_COUNT");
	trace_path = getenv("FAILMALLOC_TRACE");
	if (s && *s)
		nth = strtoul(s, NULL, 10);
	/* backtrace() loads libgcc_s on first use: do it now, not while failing. */
	if (trace_path)
		backtrace(frame, 1);
	armed = nth > 0 || count_path != NULL;
}

__attribute__((destructor)) static void failmalloc_fini(void)
{
	FILE *f;
	unsigned long n = atomic_load(&calls);

	if (!count_path)
		return;
	armed = 0;
	f = fopen(count_path, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", n);
	fclose(f);
}

void *malloc(size_t n)
{
	if (!real_malloc) {
		if (resolving)
			return boot_alloc(n);
		resolve();
	}
	if (fail_now())
		return NULL;
	return real_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	if (!real_calloc) {
		if (resolving) {
			/* static memory is zero, and the boot buffer is never reused */
			if (size && n > SIZE_MAX / size)
				return NULL;
			return boot_alloc(n * size);
		}
		resolve();
	}
	if (fail_now())
		return NULL;
	return real_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (from_boot(p)) {
		void *q = malloc(n);
		size_t room = (size_t)(boot + sizeof(boot) - (unsigned char *)p);
		if (q)
			memcpy(q, p, n < room ? n : room);
		return q;
	}
	if (!real_realloc) {
		if (resolving)
			return p ? NULL : boot_alloc(n);
		resolve();
	}
	if (n && fail_now())
		return NULL;
	return real_realloc(p, n);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}

void free(void *p)
{
	if (!p || from_boot(p))
		return;
	if (!real_free)
		resolve();
	if (real_free)          /* else a pointer from before the shim knew free: leak it */
		real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (!real_posix_memalign)
		resolve();
	if (fail_now())
		return ENOMEM;
	return real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	if (!real_aligned_alloc)
		resolve();
	if (fail_now())
		return NULL;
	return real_aligned_alloc(align, n);
}

void *memalign(size_t align, size_t n)
{
	if (!real_memalign)
		resolve();
	if (fail_now())
		return NULL;
	return real_memalign(align, n);
}

void *valloc(size_t n)
{
	if (!real_valloc)
		resolve();
	if (fail_now())
		return NULL;
	return real_valloc(n);
}

void *pvalloc(size_t n)
{
	if (!real_pvalloc)
		resolve();
	if (fail_now())
		return NULL;
	return real_pvalloc(n);
}
