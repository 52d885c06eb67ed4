/* membench.c: NUMA memory bandwidth and latency matrices: buffers bound to a node with
 * mbind(2), threads pinned with sched_setaffinity(2), placement checked with move_pages(2),
 * warm-up discarded, runs repeated, median and spread kept. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "errfmt.h"
#include "membench.h"
#include "memlat.h"
#include "slab.h"
#include "sysfs.h"

#define HUGE_2M (2u << 20)
/* Bandwidth threads look at the stop flag after each chunk this size: ~20 us of reading. */
#define BW_CHUNK (256u << 10)
/* Latency: loads between looks at the clock. */
#define LAT_STEPS 16384u
/* Pages whose node move_pages reports, spread over the buffer. */
#define PLACE_SAMPLES 1024u

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t slab_membench_llc_bytes(const struct slab_topo_info *ti)
{
	uint64_t llc = 0;
	unsigned top = 0;

	for (unsigned i = 0; i < ti->ncaches; i++)
		if (ti->caches[i].level > top)
			top = ti->caches[i].level;
	for (unsigned i = 0; i < ti->ncaches; i++)
		if (ti->caches[i].level == top && strcmp(ti->caches[i].type, "instruction") != 0)
			llc += ti->caches[i].size * ti->caches[i].instances;
	return llc;
}

uint64_t slab_membench_default_size(const struct slab_topo_info *ti)
{
	uint64_t size = 256u << 20, llc = slab_membench_llc_bytes(ti);

	if (llc * 4 > size)
		size = (llc * 4 + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
	return size;
}

/* ---- statistics --------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summarize(struct slab_membench_stat *s)
{
	double *sorted = malloc(s->nruns * sizeof(*sorted));
	unsigned n = s->nruns;

	if (sorted == NULL || n == 0) {
		free(sorted);
		return;
	}
	memcpy(sorted, s->runs, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
}

/* ---- the buffer --------------------------------------------------------------------------- */

struct buffer {
	unsigned char *p;       /* 2 MiB aligned, so transparent huge pages can back it */
	size_t len;
};

static void buffer_free(struct buffer *b)
{
	if (b->p != NULL)
		munmap(b->p, b->len);
	b->p = NULL;
}

/*
 * Map len bytes, ask for transparent huge pages (fewer TLB misses, so the latency figure is
 * memory's rather than the page walker's; a no-op when THP is "never"), bind them to node
 * before any is touched, then touch them all. *bound is 0 when the kernel has no NUMA
 * support and one node was asked for: then binding means nothing. 0, or SLAB_ERR_IO with
 * errno set.
 */
static int buffer_alloc(struct buffer *b, size_t len, int node, int *bound)
{
	size_t map = len + HUGE_2M, head;
	unsigned char *raw;
	unsigned long *mask;
	size_t longs = (size_t)node / (8 * sizeof(long)) + 1;
	int saved;

	b->p = NULL;
	raw = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return SLAB_ERR_IO;
	head = (HUGE_2M - (uintptr_t)raw % HUGE_2M) % HUGE_2M;
	if (head)
		munmap(raw, head);
	munmap(raw + head + len, map - head - len);
	b->p = raw + head;
	b->len = len;
	madvise(b->p, len, MADV_HUGEPAGE);

	mask = calloc(longs, sizeof(*mask));
	if (mask == NULL) {
		buffer_free(b);
		errno = ENOMEM;
		return SLAB_ERR_IO;
	}
	mask[node / (8 * sizeof(long))] |= 1ul << (node % (8 * sizeof(long)));
	/* maxnode counts one more than the bits, as libnuma passes it. */
	*bound = 1;
	if (syscall(SYS_mbind, b->p, len, MPOL_BIND, mask, longs * 8 * sizeof(long) + 1,
		    MPOL_MF_STRICT) != 0) {
		saved = errno;
		if (saved == ENOSYS && node == 0) {
			*bound = 0;
		} else {
			free(mask);
			buffer_free(b);
			errno = saved;
			return SLAB_ERR_IO;
		}
	}
	free(mask);
	memset(b->p, 0x5a, len);
	return 0;
}

/* Share of sampled pages move_pages finds on node; -1 when it cannot say. */
static double on_node_share(const struct buffer *b, int node)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = b->len / page;
	unsigned n = pages < PLACE_SAMPLES ? (unsigned)pages : PLACE_SAMPLES, hits = 0, known = 0;
	void **addr = calloc(n ? n : 1, sizeof(*addr));
	int *status = calloc(n ? n : 1, sizeof(*status));
	double share = -1;

	if (addr == NULL || status == NULL || n == 0)
		goto out;
	for (unsigned i = 0; i < n; i++)
		addr[i] = b->p + (pages * i / n) * page;
	if (syscall(SYS_move_pages, 0, (unsigned long)n, addr, NULL, status, 0) != 0)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		if (status[i] < 0)
			continue;
		known++;
		hits += status[i] == node;
	}
	if (known)
		share = (double)hits / known;
out:
	free(addr);
	free(status);
	return share;
}

/* Share of the buffer the kernel backs with transparent huge pages (AnonHugePages in
 * /proc/self/smaps over its mappings); -1 when smaps cannot be read. */
static double huge_share(const struct buffer *b)
{
	int fd = slab_sysfs_openat(NULL, "proc/self/smaps", O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	uintptr_t lo = (uintptr_t)b->p, hi = lo + b->len;
	char *line = NULL;
	size_t cap = 0;
	int inside = 0, found = 0;
	uint64_t kb = 0;

	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		uintptr_t s, e;
		unsigned long long v;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &s, &e) == 2 && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = s >= lo && e <= hi;
			found |= inside;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %llu kB", &v) == 1)
			kb += v;
	}
	free(line);
	fclose(f);
	return found ? (double)(kb * 1024) / (double)b->len : -1;
}

/* A random single cycle through every line of the buffer (Sattolo's shuffle), each line
 * holding the address of the next, so every load depends on the one before and no
 * prefetcher can guess it. */
static int build_chain(struct buffer *b)
{
	size_t lines = b->len / SLAB_MEMBENCH_LINE;
	uint32_t *order;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	if (lines < 2 || lines > UINT32_MAX)
		return SLAB_ERR_INVAL;
	order = malloc(lines * sizeof(*order));
	if (order == NULL)
		return SLAB_ERR_NOMEM;
	for (size_t i = 0; i < lines; i++)
		order[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j;
		uint32_t tmp;

		/* xorshift64*: fast and plenty random for a shuffle */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		j = (size_t)(((x * 0x2545f4914f6cdd1dull) >> 32) * i >> 32);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (size_t i = 0; i < lines; i++)
		*(void **)(b->p + i * SLAB_MEMBENCH_LINE) = b->p + (size_t)order[i] * SLAB_MEMBENCH_LINE;
	free(order);
	return 0;
}

/* ---- runs --------------------------------------------------------------------------------- */

/* Threads wait at the gate until all of them exist (then the barriers know how many they
 * are), or are told to go home when one could not be started. */
enum gate { GATE_WAIT, GATE_RUN, GATE_QUIT };

struct bw_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum gate gate;
	pthread_barrier_t start, end;
	atomic_int stop, quit;
};

struct bw_thread {
	struct bw_shared *sh;
	const uint64_t *slice;
	size_t words;           /* 64-bit words in the slice */
	uint64_t bytes;         /* read in the last run */
	uint64_t sink;
};

static void *bw_worker(void *arg)
{
	struct bw_thread *w = arg;
	size_t chunk = BW_CHUNK / 8 < w->words ? BW_CHUNK / 8 : w->words, pos = 0;
	enum gate g;

	pthread_mutex_lock(&w->sh->lock);
	while ((g = w->sh->gate) == GATE_WAIT)
		pthread_cond_wait(&w->sh->cond, &w->sh->lock);
	pthread_mutex_unlock(&w->sh->lock);
	if (g == GATE_QUIT)
		return NULL;
	for (;;) {
		uint64_t bytes = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;

		pthread_barrier_wait(&w->sh->start);
		if (atomic_load_explicit(&w->sh->quit, memory_order_relaxed))
			break;
		do {
			const uint64_t *p;
			size_t n;

			if (pos + 4 > w->words)
				pos = 0;
			/* The slice's last piece may be shorter than a chunk: still read. */
			n = w->words - pos < chunk ? w->words - pos : chunk;
			p = w->slice + pos;
			/* Four independent sums: the loads, not an add chain, set the pace. */
			for (size_t i = 0; i + 4 <= n; i += 4) {
				s0 += p[i];
				s1 += p[i + 1];
				s2 += p[i + 2];
				s3 += p[i + 3];
			}
			pos += n / 4 * 4;
			bytes += n / 4 * 4 * 8;
		} while (!atomic_load_explicit(&w->sh->stop, memory_order_relaxed));
		w->bytes = bytes;
		w->sink += s0 + s1 + s2 + s3;
		pthread_barrier_wait(&w->sh->end);
	}
	return NULL;
}

static void sleep_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Create a thread on one CPU: it starts there, never elsewhere. */
static int spawn_on(pthread_t *th, unsigned cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t *set;
	size_t setsize = CPU_ALLOC_SIZE(cpu + 1);
	int rc;

	set = CPU_ALLOC(cpu + 1);
	if (set == NULL)
		return ENOMEM;
	CPU_ZERO_S(setsize, set);
	CPU_SET_S(cpu, setsize, set);
	pthread_attr_init(&attr);
	rc = pthread_attr_setaffinity_np(&attr, setsize, set);
	if (rc == 0)
		rc = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	CPU_FREE(set);
	return rc;
}

static void cell_fail(struct slab_membench_cell *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cell_fail(struct slab_membench_cell *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	c->ok = 0;
}

/* Bandwidth into c->bw: 0, or a negative SLAB_ERR_* with the reason in c->error. */
static int measure_bw(const struct buffer *b, const unsigned *cpus, unsigned ncpus,
		      unsigned nthreads,
		      unsigned runs, double seconds, struct slab_membench_cell *c)
{
	struct slab_membench_stat *st = &c->bw;
	struct bw_shared sh;
	struct bw_thread *w = calloc(nthreads, sizeof(*w));
	pthread_t *th = calloc(nthreads, sizeof(*th));
	size_t slice = b->len / nthreads / 4096 * 4096;
	unsigned started = 0;
	int ret = SLAB_ERR_IO;

	if (w == NULL || th == NULL) {
		cell_fail(c, "out of memory");
		free(w);
		free(th);
		return SLAB_ERR_NOMEM;
	}
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.cond, NULL);
	sh.gate = GATE_WAIT;
	pthread_barrier_init(&sh.start, NULL, nthreads + 1);
	pthread_barrier_init(&sh.end, NULL, nthreads + 1);
	atomic_init(&sh.stop, 0);
	atomic_init(&sh.quit, 0);
	for (unsigned i = 0; i < nthreads; i++) {
		int rc;

		w[i].sh = &sh;
		w[i].slice = (const uint64_t *)(b->p + (size_t)i * slice);
		w[i].words = slice / 8;
		rc = spawn_on(&th[i], cpus[i % ncpus], bw_worker, &w[i]);
		if (rc != 0) {
			cell_fail(c, "cannot start a thread on CPU %u: %s", cpus[i % ncpus],
				  strerror(rc));
			break;
		}
		started++;
	}
	pthread_mutex_lock(&sh.lock);
	sh.gate = started == nthreads ? GATE_RUN : GATE_QUIT;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	if (started == nthreads) {
		/* Run 0 is the warm-up: caches, TLBs, frequencies settle; it is not kept. */
		for (unsigned r = 0; r < runs + 1; r++) {
			uint64_t bytes = 0;
			double t0, t1;

			atomic_store(&sh.stop, 0);
			pthread_barrier_wait(&sh.start);
			t0 = now();
			sleep_for(seconds);
			atomic_store(&sh.stop, 1);
			pthread_barrier_wait(&sh.end);
			t1 = now();
			for (unsigned i = 0; i < nthreads; i++)
				bytes += w[i].bytes;
			if (r > 0)
				st->runs[st->nruns++] = (double)bytes / (t1 - t0) / 1e9;
		}
		ret = 0;
	}
	if (started == nthreads) {
		atomic_store(&sh.quit, 1);
		pthread_barrier_wait(&sh.start);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&sh.start);
	pthread_barrier_destroy(&sh.end);
	pthread_cond_destroy(&sh.cond);
	pthread_mutex_destroy(&sh.lock);
	free(w);
	free(th);
	if (ret == 0)
		summarize(st);
	return ret;
}

struct lat_job {
	void *start;
	unsigned runs;
	double seconds;
	struct slab_membench_stat *st;
};

static void *lat_worker(void *arg)
{
	struct lat_job *j = arg;
	void *volatile sink;
	void **p = j->start;

	for (unsigned r = 0; r < j->runs + 1; r++) {
		uint64_t loads = 0;
		double t0 = now(), t1;

		do {
			for (unsigned i = 0; i < LAT_STEPS; i += 8) {
				p = *p; p = *p; p = *p; p = *p;
				p = *p; p = *p; p = *p; p = *p;
			}
			loads += LAT_STEPS;
			t1 = now();
		} while (t1 - t0 < j->seconds);
		if (r > 0)
			j->st->runs[j->st->nruns++] = (t1 - t0) * 1e9 / (double)loads;
	}
	sink = p;
	(void)sink;
	return NULL;
}

/* Latency into c->lat: 0, or SLAB_ERR_IO with the reason in c->error. */
static int measure_lat(const struct buffer *b, unsigned cpu, unsigned runs, double seconds,
		       struct slab_membench_cell *c)
{
	struct lat_job j = { b->p, runs, seconds, &c->lat };
	pthread_t th;
	int rc = spawn_on(&th, cpu, lat_worker, &j);

	if (rc != 0) {
		cell_fail(c, "cannot start a thread on CPU %u: %s", cpu, strerror(rc));
		return SLAB_ERR_IO;
	}
	pthread_join(th, NULL);
	summarize(&c->lat);
	return 0;
}

/* Total and idle (idle + iowait) CPU time of all CPUs so far, in ticks: 0, or a negative
 * SLAB_ERR_* when /proc/stat cannot be read. */
static int cpu_times(unsigned long long *total, unsigned long long *idle)
{
	int fd = slab_sysfs_openat(NULL, "proc/stat", O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	unsigned long long v[8] = { 0 };
	int n;

	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return SLAB_ERR_IO;
	}
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return SLAB_ERR_CORRUPT;
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*idle = v[3] + v[4];
	return 0;
}

/* Other work competing for CPUs and memory makes the figures lower and noisier, and the
 * reader should know: the share of CPU time in use over a short look before measuring
 * (this process sleeps meanwhile). -1 when /proc/stat cannot be read. */
static double busy_share(double seconds)
{
	unsigned long long t0, i0, t1, i1;

	if (cpu_times(&t0, &i0) < 0)
		return -1;
	sleep_for(seconds);
	if (cpu_times(&t1, &i1) < 0 || t1 <= t0)
		return -1;
	return 1.0 - (double)(i1 - i0) / (double)(t1 - t0);
}

/* ---- the matrix --------------------------------------------------------------------------- */

/* The CPUs of a node this process may run on (cpuset, taskset), into out. */
static unsigned allowed_cpus(const struct slab_topo_node *nd, const cpu_set_t *mask,
			     size_t masksize,
			     unsigned *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nd->cpus.n; i++)
		if (nd->cpus.id[i] < masksize * 8 && CPU_ISSET_S(nd->cpus.id[i], masksize, mask))
			out[n++] = nd->cpus.id[i];
	return n;
}

static int alloc_stat(struct slab_membench_stat *s, unsigned n)
{
	s->runs = calloc(n, sizeof(*s->runs));
	s->nruns = 0;
	return s->runs != NULL ? 0 : SLAB_ERR_NOMEM;
}

int slab_membench_run(const struct slab_topo_info *ti, const struct slab_membench_opts *o,
		      struct slab_membench_result *r)
{
	unsigned repeat = o->repeat ? o->repeat : 5;
	double seconds = o->seconds > 0 ? o->seconds : 0.2;
	uint64_t size = o->size ? o->size : slab_membench_default_size(ti);
	size_t masksize = CPU_ALLOC_SIZE(8192);
	cpu_set_t *mask = NULL;
	unsigned *cpus = NULL, maxcpus = 0;
	int ret = SLAB_ERR_NOMEM, failed = 0;
	/* A memory cgroup (a container) may allow far less than a node has: past its limit the
	 * kernel kills the process filling a buffer. */
	struct slab_memlat_cgroup cg;
	int cg_limited = slab_memlat_cgroup(NULL, &cg) == 0;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->repeat = repeat;
	r->seconds = seconds;
	r->bound = 1;
	r->busy = busy_share(0.2);
	if (size < 4096 * (uint64_t)(o->threads ? o->threads : 1) ||
	    size / SLAB_MEMBENCH_LINE > UINT32_MAX || size > SIZE_MAX / 2) {
		snprintf(r->err, sizeof(r->err), "a buffer of %" PRIu64 " bytes cannot be measured that way",
			 size);
		return SLAB_ERR_INVAL;
	}
	size = size / 4096 * 4096;
	r->size = size;

	for (unsigned i = 0; i < ti->nnodes; i++) {
		r->nrows += ti->nodes[i].cpus.n > 0;
		r->ncols += ti->nodes[i].mem_total != 0;
		if (ti->nodes[i].cpus.n > maxcpus)
			maxcpus = ti->nodes[i].cpus.n;
	}
	r->row_node = calloc(r->nrows ? r->nrows : 1, sizeof(int));
	r->col_node = calloc(r->ncols ? r->ncols : 1, sizeof(int));
	r->cells = calloc((size_t)r->nrows * r->ncols + 1, sizeof(*r->cells));
	cpus = calloc(maxcpus + 1, sizeof(*cpus));
	mask = CPU_ALLOC(8192);
	if (r->row_node == NULL || r->col_node == NULL || r->cells == NULL || cpus == NULL ||
	    mask == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	if (r->nrows == 0 || r->ncols == 0) {
		snprintf(r->err, sizeof(r->err), "no node with CPUs or no node with memory");
		ret = SLAB_ERR_INVAL;
		goto out;
	}
	{
		unsigned a = 0, c = 0;
		for (unsigned i = 0; i < ti->nnodes; i++) {
			if (ti->nodes[i].cpus.n > 0)
				r->row_node[a++] = ti->nodes[i].id;
			if (ti->nodes[i].mem_total != 0)
				r->col_node[c++] = ti->nodes[i].id;
		}
	}
	CPU_ZERO_S(masksize, mask);
	if (sched_getaffinity(0, masksize, mask) != 0) {
		snprintf(r->err, sizeof(r->err), "sched_getaffinity: %s", strerror(errno));
		ret = SLAB_ERR_IO;
		goto out;
	}

	for (unsigned col = 0; col < r->ncols; col++) {
		int m = r->col_node[col];
		const struct slab_topo_node *mn = slab_topo_node(ti, m);
		struct buffer b = { NULL, 0 };
		double on_node = -1, huge = -1;
		char why[160] = "", sz[32], sz2[32];
		int bound = 1;

		if (o->progress)
			o->progress(-1, m, "placing", o->arg);
		if (mn->mem_total > 0 && size > (uint64_t)mn->mem_total / 2) {
			snprintf(why, sizeof(why), "a %s buffer is more than half of node %d's memory",
				 slab_size_text(size, sz, sizeof(sz)), m);
		} else if (cg_limited && size > cg.room / 2) {
			snprintf(why, sizeof(why), "a %s buffer is more than half of what the memory "
				 "cgroup allows (%s)", slab_size_text(size, sz, sizeof(sz)),
				 slab_size_text(cg.room, sz2, sizeof(sz2)));
		} else if (buffer_alloc(&b, size, m, &bound) != 0) {
			const char *reason = strerror(errno);   /* before anything else can set it */

			snprintf(why, sizeof(why), "cannot bind %s to node %d: %s",
				 slab_size_text(size, sz, sizeof(sz)), m, reason);
		} else if (build_chain(&b) != 0) {
			snprintf(why, sizeof(why), "out of memory building the pointer chain");
		} else {
			on_node = bound ? on_node_share(&b, m) : 1.0;
			huge = huge_share(&b);
		}
		if (!bound)
			r->bound = 0;
		for (unsigned row = 0; row < r->nrows; row++) {
			struct slab_membench_cell *c = &r->cells[(size_t)row * r->ncols + col];
			int cn = r->row_node[row];
			unsigned n, nthreads;

			c->on_node = on_node;
			c->huge = huge;
			if (why[0]) {
				cell_fail(c, "%s", why);
				continue;
			}
			n = allowed_cpus(slab_topo_node(ti, cn), mask, masksize, cpus);
			if (n == 0) {
				cell_fail(c, "this process may not run on node %d's CPUs (cpuset or "
					  "affinity)", cn);
				continue;
			}
			nthreads = o->threads ? o->threads : n;
			if (alloc_stat(&c->bw, repeat) != 0 || alloc_stat(&c->lat, repeat) != 0) {
				snprintf(r->err, sizeof(r->err), "out of memory");
				buffer_free(&b);
				goto out;
			}
			c->threads = nthreads;
			if (o->progress)
				o->progress(cn, m, "bandwidth", o->arg);
			if (measure_bw(&b, cpus, n, nthreads, repeat, seconds, c) != 0)
				continue;
			if (o->progress)
				o->progress(cn, m, "latency", o->arg);
			if (measure_lat(&b, cpus[0], repeat, seconds, c) != 0)
				continue;
			c->ok = 1;
		}
		buffer_free(&b);
	}
	for (size_t i = 0; i < (size_t)r->nrows * r->ncols; i++)
		if (!r->cells[i].ok) {
			if (!failed)
				snprintf(r->err, sizeof(r->err), "CPU node %d, memory node %d: %s",
					 r->row_node[i / r->ncols], r->col_node[i % r->ncols],
					 r->cells[i].error);
			failed = 1;
		}
	ret = failed ? SLAB_ERR_IO : 0;
out:
	free(cpus);
	if (mask != NULL)
		CPU_FREE(mask);
	return ret;
}

const char *slab_membench_error(const struct slab_membench_result *r)
{
	return r->err;
}

void slab_membench_free(struct slab_membench_result *r)
{
	for (size_t i = 0; r->cells != NULL && i < (size_t)r->nrows * r->ncols; i++) {
		free(r->cells[i].bw.runs);
		free(r->cells[i].lat.runs);
	}
	free(r->cells);
	free(r->row_node);
	free(r->col_node);
	memset(r, 0, sizeof(*r));
}
