/* memlat.c: the measurement behind bench-tlb: one region per backing, the chase, page and seq
 * patterns laid out in it, timing with warm-up, calibration and repetitions, and the reading
 * of the curves into plateaus, TLB reach and speed-up. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "errfmt.h"
#include "memlat.h"
#include "slab.h"
#include "sysfs.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

const char *slab_memlat_backing_name(enum slab_memlat_backing b)
{
	static const char *const names[] = { "4k", "thp", "hugetlb" };

	return (unsigned)b < SLAB_MEMLAT_NBACKINGS ? names[b] : "?";
}

const char *slab_memlat_pattern_name(enum slab_memlat_pattern p)
{
	static const char *const names[] = { "chase", "page", "seq" };

	return (unsigned)p <= SLAB_MEMLAT_SEQ ? names[p] : "?";
}

size_t slab_memlat_unit(enum slab_memlat_pattern p)
{
	return p == SLAB_MEMLAT_PAGE ? SLAB_MEMLAT_SMALL_PAGE : SLAB_MEMLAT_LINE;
}

static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* A number from a file of this machine's /sys or /proc (no allocation: see sysfs.h). */
static int read_ulong(const char *rel, unsigned long *out)
{
	int64_t v;
	int rc = slab_sysfs_i64(NULL, rel, &v);

	if (rc < 0)
		return rc;
	if (v < 0)
		return SLAB_ERR_CORRUPT;
	*out = (unsigned long)v;
	return 0;
}

/* ---- regions ---------------------------------------------------------------------------- */

/*
 * Fault every page in, writable, before anything is timed. MADV_POPULATE_WRITE (Linux 5.14)
 * reports a failure as an error where touching the pages would die of SIGBUS (a hugetlb
 * pool emptied by someone else); older kernels get the pages touched one by one.
 */
static int populate(unsigned char *p, size_t len, size_t step)
{
#ifdef MADV_POPULATE_WRITE
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return SLAB_ERR_IO;
#endif
	for (size_t off = 0; off < len; off += step)
		p[off] = 1;
	return 0;
}

/*
 * AnonHugePages of the mappings that overlap [base, base + len), from /proc/self/smaps: what
 * the kernel really gave, whatever was asked. -1 when smaps cannot be read.
 */
static int smaps_huge_bytes(const unsigned char *base, size_t len, uint64_t *out)
{
	int fd = slab_sysfs_openat(NULL, "proc/self/smaps", O_RDONLY);
	uintptr_t lo = (uintptr_t)base, hi = lo + len;
	char buf[16384];
	size_t have = 0;
	uint64_t sum = 0;
	int inside = 0, found = 0, eof = 0;

	if (fd < 0)
		return SLAB_ERR_IO;
	/* Line by line through a fixed buffer; a line longer than it (a very long path) is
	 * skipped: what matters are the address and AnonHugePages lines. */
	while (!eof) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return SLAB_ERR_IO;
		}
		eof = r == 0;
		have += (size_t)r;
		buf[have] = '\0';
		while ((nl = strchr(line, '\n')) != NULL || (eof && *line)) {
			unsigned long start, end;
			unsigned long long kb;
			char perms[8];

			if (nl != NULL)
				*nl = '\0';
			/* A mapping's first line: "start-end perms offset dev inode path". */
			if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) {
				inside = start < hi && end > lo;
			} else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
				sum += (uint64_t)kb * 1024;
				found = 1;
			}
			line = nl != NULL ? nl + 1 : buf + have;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	close(fd);
	if (!found)
		return SLAB_ERR_NOTFOUND;
	/* A neighbour merged into the same mapping would count too; never more than the region. */
	*out = sum > len ? len : sum;
	return 0;
}

void slab_memlat_region_check(struct slab_memlat_region *r)
{
	uint64_t huge;

	if (!r->ok || r->backing == SLAB_MEMLAT_HUGETLB)
		return;
	if (smaps_huge_bytes(r->base, r->len, &huge) == 0) {
		r->huge_bytes = huge;
		r->huge_known = 1;
	}
}

const char *slab_memlat_region_error(const struct slab_memlat_region *r)
{
	return r->err;
}

double slab_memlat_huge_fraction(const struct slab_memlat_region *r)
{
	if (!r->ok || !r->huge_known || r->len == 0)
		return -1;
	return (double)r->huge_bytes / (double)r->len;
}

static int map_anon(struct slab_memlat_region *r, size_t len, size_t align, int advice)
{
	size_t map_len = len + (align > SLAB_MEMLAT_SMALL_PAGE ? align : 0);
	unsigned char *p, *base;
	char a[32];

	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		say(r->err, sizeof(r->err), "mmap of %s: %s", slab_size_text(len, a, sizeof(a)),
		    strerror(errno));
		return SLAB_ERR_IO;
	}
	base = p;
	if (align > SLAB_MEMLAT_SMALL_PAGE) {
		/* Trim to an aligned region, so each 2 MiB of it can be one huge page. */
		base = (unsigned char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
		if (base > p)
			munmap(p, (size_t)(base - p));
		if (p + map_len > base + len)
			munmap(base + len, (size_t)(p + map_len - (base + len)));
	}
	r->base = base;
	r->len = len;
	if (madvise(base, len, advice) != 0 && advice == MADV_HUGEPAGE) {
		say(r->err, sizeof(r->err), "madvise MADV_HUGEPAGE: %s (a kernel without "
		    "transparent huge pages)", strerror(errno));
		return SLAB_ERR_IO;
	}
	/* MADV_NOHUGEPAGE fails only where there is no THP: 4 KiB pages anyway. */
	if (populate(base, len, SLAB_MEMLAT_SMALL_PAGE) != 0) {
		say(r->err, sizeof(r->err), "faulting in %s: %s", slab_size_text(len, a, sizeof(a)),
		    strerror(errno));
		return SLAB_ERR_IO;
	}
	return 0;
}

static int map_hugetlb(struct slab_memlat_region *r, size_t want, size_t hp)
{
	const char *name = hp == SLAB_MEMLAT_THP_SIZE ? "2 MiB" : "1 GiB";
	const char *howto = hp == SLAB_MEMLAT_THP_SIZE ?
		"echo N > /proc/sys/vm/nr_hugepages, or hugepages=N at boot" :
		"echo N > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages, or "
		"hugepagesz=1G hugepages=N at boot";
	unsigned long nr, nfree, resv = 0, avail, need, use;
	int shift = hp == SLAB_MEMLAT_THP_SIZE ? 21 : 30;
	char dir[96], path[160], a[32];
	unsigned char *p;

	snprintf(dir, sizeof(dir), "sys/kernel/mm/hugepages/hugepages-%zukB", hp >> 10);
	snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
	if (read_ulong(path, &nr) != 0) {
		say(r->err, sizeof(r->err), "this kernel or CPU offers no %s huge pages (no /%s)",
		    name, dir);
		return SLAB_ERR_NOTFOUND;
	}
	if (nr == 0) {
		say(r->err, sizeof(r->err), "no %s huge pages reserved (%s)", name, howto);
		return SLAB_ERR_NOTFOUND;
	}
	snprintf(path, sizeof(path), "%s/free_hugepages", dir);
	if (read_ulong(path, &nfree) != 0)
		nfree = nr;
	snprintf(path, sizeof(path), "%s/resv_hugepages", dir);
	read_ulong(path, &resv);
	avail = nfree > resv ? nfree - resv : 0;
	if (avail == 0) {
		say(r->err, sizeof(r->err), "all %lu reserved %s huge pages are in use (%s)",
		    nr, name, howto);
		return SLAB_ERR_NOTFOUND;
	}
	need = (unsigned long)((want + hp - 1) / hp);
	use = need < avail ? need : avail;
	p = mmap(NULL, use * hp, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
	if (p == MAP_FAILED) {
		say(r->err, sizeof(r->err), "mmap MAP_HUGETLB of %lu %s pages: %s (%lu free)",
		    use, name, strerror(errno), avail);
		return SLAB_ERR_IO;
	}
	r->base = p;
	r->len = use * hp;
	if (populate(p, r->len, hp) != 0) {
		say(r->err, sizeof(r->err), "faulting in %lu %s huge pages: %s", use, name,
		    strerror(errno));
		return SLAB_ERR_IO;
	}
	if (use < need)
		say(r->note, sizeof(r->note), "only %s in free %s huge pages: larger working sets "
		    "not measured", slab_size_text(r->len, a, sizeof(a)), name);
	r->huge_bytes = r->huge_bytes_start = r->len;
	r->huge_known = 1;
	return 0;
}

int slab_memlat_region_map(struct slab_memlat_region *r, enum slab_memlat_backing b, size_t want,
			   size_t hugetlb_page)
{
	size_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	r->backing = b;
	r->want = want;
	r->page_size = SLAB_MEMLAT_SMALL_PAGE;
	if (want == 0)
		return SLAB_ERR_INVAL;
	switch (b) {
	case SLAB_MEMLAT_4K:
		len = (want + SLAB_MEMLAT_SMALL_PAGE - 1) / SLAB_MEMLAT_SMALL_PAGE * SLAB_MEMLAT_SMALL_PAGE;
		rc = map_anon(r, len, SLAB_MEMLAT_SMALL_PAGE, MADV_NOHUGEPAGE);
		break;
	case SLAB_MEMLAT_THP:
		/* Whole 2 MiB extents, so even a 4 KiB working set sits in a huge page. */
		r->page_size = SLAB_MEMLAT_THP_SIZE;
		len = (want + SLAB_MEMLAT_THP_SIZE - 1) / SLAB_MEMLAT_THP_SIZE * SLAB_MEMLAT_THP_SIZE;
		rc = map_anon(r, len, SLAB_MEMLAT_THP_SIZE, MADV_HUGEPAGE);
		break;
	case SLAB_MEMLAT_HUGETLB:
		if (hugetlb_page != SLAB_MEMLAT_THP_SIZE && hugetlb_page != (size_t)1 << 30)
			return SLAB_ERR_INVAL;
		r->page_size = hugetlb_page;
		rc = map_hugetlb(r, want, hugetlb_page);
		break;
	default:
		return SLAB_ERR_INVAL;
	}
	if (rc != 0) {
		if (r->base != NULL)
			munmap(r->base, r->len);
		r->base = NULL;
		r->len = 0;
		return rc;
	}
	r->ok = 1;
	if (b != SLAB_MEMLAT_HUGETLB) {
		slab_memlat_region_check(r);
		r->huge_bytes_start = r->huge_bytes;
	}
	return 0;
}

void slab_memlat_region_unmap(struct slab_memlat_region *r)
{
	if (r->base != NULL)
		munmap(r->base, r->len);
	r->base = NULL;
	r->len = 0;
	r->ok = 0;
}

/* ---- patterns ----------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* splitmix64: fast, and good enough to shuffle; uniform below n by a 128-bit multiply. */
static uint64_t below(uint64_t *state, uint64_t n)
{
	*state += 0x9e3779b97f4a7c15u;
	return (uint64_t)(((unsigned __int128)mix64(*state) * n) >> 64);
}

/*
 * Element i of a chain: line i (chase), or one line of page i (page), at an offset drawn from
 * i so that the lines do not all fall into the same cache sets.
 */
static void **slot(unsigned char *base, enum slab_memlat_pattern pat, size_t i)
{
	if (pat == SLAB_MEMLAT_PAGE)
		return (void **)(base + i * SLAB_MEMLAT_SMALL_PAGE +
				 (size_t)(mix64(i) >> 58) * SLAB_MEMLAT_LINE);
	return (void **)(base + i * SLAB_MEMLAT_LINE);
}

/*
 * Store in every element a pointer to the next along one random cycle through all of them
 * (Sattolo's algorithm: a uniformly chosen cyclic permutation, so a chase visits every
 * element before it repeats and no prefetcher can guess the next). The order depends only
 * on the size and the pattern: every backing gets the same one.
 */
static void **lay_chain(unsigned char *base, size_t ws, enum slab_memlat_pattern pat)
{
	size_t n = ws / slab_memlat_unit(pat), i;
	uint64_t state = 0x62656e63682d746cu ^ ((uint64_t)ws << 4) ^ (uint64_t)pat;

	for (i = 0; i < n; i++)
		*slot(base, pat, i) = slot(base, pat, i);
	for (i = n - 1; i > 0; i--) {
		size_t j = (size_t)below(&state, i);
		void **a = slot(base, pat, i), **b = slot(base, pat, j), *t = *a;

		*a = *b;
		*b = t;
	}
	return slot(base, pat, 0);
}

/* Dependent loads: the next address is the value loaded, so they cannot overlap. */
#define HOP p = (void **)*p
__attribute__((noinline)) static void **
chase(void **p, uint64_t n)
{
	for (; n >= 16; n -= 16) {
		HOP; HOP; HOP; HOP; HOP; HOP; HOP; HOP;
		HOP; HOP; HOP; HOP; HOP; HOP; HOP; HOP;
	}
	for (; n > 0; n--)
		HOP;
	return p;
}
#undef HOP

/* Streaming read of every 64-bit word, four sums so the adds do not serialise. */
__attribute__((noinline)) static uint64_t
sum_lines(const uint64_t *w, size_t lines)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (size_t i = 0; i < lines; i++, w += SLAB_MEMLAT_LINE / 8) {
		a += w[0] + w[4];
		b += w[1] + w[5];
		c += w[2] + w[6];
		d += w[3] + w[7];
	}
	return a + b + c + d;
}

/* Results go here so the compiler cannot drop the work. */
static void *volatile chase_sink;
static volatile uint64_t seq_sink;

struct job {
	enum slab_memlat_pattern pat;
	void **p;                       /* chase, page: where the chain goes on */
	const uint64_t *words;          /* seq */
	size_t lines;                   /* seq: lines per pass */
	double wall;                    /* wall-clock seconds of the runs so far */
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * n units of work (loads; for seq, passes over the set); the seconds this thread spent on
 * a CPU doing them. Thread CPU time, not wall-clock time: where other processes share the
 * CPU, the scheduler's slices given to them would otherwise count as memory latency. The
 * wall-clock time is kept too, to tell how much the CPU was shared.
 */
static double run(struct job *j, uint64_t n)
{
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), c1;
	uint64_t s = 0;

	if (j->pat == SLAB_MEMLAT_SEQ) {
		for (uint64_t k = 0; k < n; k++) {
			s += sum_lines(j->words, j->lines);
			/* Memory "changes" between passes: no pass may be merged with another. */
			__asm__ __volatile__("" ::: "memory");
		}
	} else {
		j->p = chase(j->p, n);
	}
	c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	j->wall += clock_s(CLOCK_MONOTONIC) - w0;
	if (j->pat == SLAB_MEMLAT_SEQ)
		seq_sink = seq_sink + s;
	else
		chase_sink = j->p;
	return c1 - c0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int slab_memlat_measure(struct slab_memlat_region *r, size_t ws,
			const struct slab_memlat_params *prm,
			struct slab_memlat_point *out)
{
	struct job j;
	uint64_t elements, per_unit, n, n_rep, done;
	double t, t0, d0 = NAN, w0 = NAN, d1, w1, cpu = 0, *ns;
	unsigned k, reps = prm->repeat ? prm->repeat : 1;

	memset(out, 0, sizeof(*out));
	out->dtlb_per_access = out->walks_per_access = NAN;
	if (!r->ok || ws < slab_memlat_unit(prm->pattern) || ws > r->len)
		return 0;
	ns = malloc(reps * sizeof(*ns));
	if (ns == NULL)
		return SLAB_ERR_NOMEM;
	memset(&j, 0, sizeof(j));
	j.pat = prm->pattern;
	if (j.pat == SLAB_MEMLAT_SEQ) {
		j.words = (const uint64_t *)(const void *)r->base;
		j.lines = ws / SLAB_MEMLAT_LINE;
		per_unit = j.lines;
		elements = 1;                   /* one pass */
	} else {
		j.p = lay_chain(r->base, ws, j.pat);
		per_unit = 1;
		elements = ws / slab_memlat_unit(j.pat);
	}

	/*
	 * Warm-up, discarded: one whole traversal brings every line and translation the set
	 * can keep into the caches and TLBs; cut short past 2 x min_time, where it fits in
	 * none of them anyway.
	 */
	t0 = 0;
	for (done = 0; done < elements;) {
		uint64_t step = elements - done < 65536 ? elements - done : 65536;

		t0 += run(&j, step);
		done += step;
		if (t0 > 2 * prm->min_time)
			break;
	}

	/* Calibrate: grow the count until a run takes an eighth of min_time, then scale. */
	n = j.pat == SLAB_MEMLAT_SEQ ? 1 : 256;
	for (;;) {
		t = run(&j, n);
		if (t >= prm->min_time / 8 || n > UINT64_MAX / 4)
			break;
		n *= 2;
	}
	n_rep = t > 0 ? (uint64_t)ceil((double)n * prm->min_time / t) : n;
	if (n_rep < n)
		n_rep = n;
	if (j.pat != SLAB_MEMLAT_SEQ)
		n_rep = (n_rep + 15) / 16 * 16;

	if (prm->perf != NULL)
		slab_perfev_read(prm->perf, &d0, &w0);
	j.wall = 0;
	for (k = 0; k < reps; k++) {
		if (prm->perf != NULL)
			slab_perfev_start(prm->perf);
		t = run(&j, n_rep);
		if (prm->perf != NULL)
			slab_perfev_stop(prm->perf);
		ns[k] = t * 1e9 / ((double)n_rep * (double)per_unit);
		cpu += t;
	}
	out->cpu_share = j.wall > 0 ? fmin(cpu / j.wall, 1) : 1;
	if (prm->perf != NULL) {
		double total = (double)reps * (double)n_rep * (double)per_unit;

		slab_perfev_read(prm->perf, &d1, &w1);
		out->dtlb_per_access = (d1 - d0) / total;
		out->walks_per_access = (w1 - w0) / total;
	}

	qsort(ns, reps, sizeof(*ns), cmp_double);
	out->measured = 1;
	out->min = ns[0];
	out->max = ns[reps - 1];
	out->median = reps % 2 ? ns[reps / 2] : (ns[reps / 2 - 1] + ns[reps / 2]) / 2;
	out->accesses = n_rep * per_unit;
	if (j.pat == SLAB_MEMLAT_SEQ && out->median > 0)
		out->gbps = SLAB_MEMLAT_LINE / out->median;  /* bytes per ns = GB/s */
	free(ns);
	return 0;
}

int slab_memlat_sizes(uint64_t max, unsigned steps, size_t unit, uint64_t **out, size_t *n)
{
	uint64_t *v;
	size_t cap, cnt = 0;
	unsigned k;

	*out = NULL;
	*n = 0;
	if (unit == 0 || steps == 0)
		return SLAB_ERR_INVAL;
	max = max / unit * unit;
	if (max < SLAB_MEMLAT_MIN_SIZE)
		return SLAB_ERR_INVAL;
	cap = (size_t)64 * steps + 2;   /* 2^64 / 4096 is fewer than 64 octaves */
	v = malloc(cap * sizeof(*v));
	if (v == NULL)
		return SLAB_ERR_NOMEM;
	for (k = 0; cnt + 1 < cap; k++) {
		double x = (double)SLAB_MEMLAT_MIN_SIZE * pow(2.0, (double)k / steps);
		uint64_t s;

		if (x > (double)max)
			break;
		s = (uint64_t)llround(x / (double)unit) * unit;
		if (s > max)
			s = max;
		if (cnt == 0 || s > v[cnt - 1])
			v[cnt++] = s;
	}
	if (v[cnt - 1] != max)
		v[cnt++] = max;
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- what the machine says about itself ----------------------------------------------- */

/* ---- the memory cgroup ------------------------------------------------------------------ */

/* A limit file: "max" (v2) or a number; v1 says "no limit" with a number near 2^63. */
static int cgroup_value(struct slab_sysfs *fs, const char *rel, int64_t *out)
{
	char line[64];

	if (slab_sysfs_line(fs, rel, line, sizeof(line)) < 0)
		return SLAB_ERR_IO;
	if (strcmp(line, "max") == 0) {
		*out = -1;
		return 0;
	}
	if (slab_parse_i64(line, out) < 0 || *out < 0)
		return SLAB_ERR_CORRUPT;
	if (*out >= INT64_C(1) << 62)
		*out = -1;
	return 0;
}

/* The tightest limit minus usage over cgroup path and its ancestors, under base. */
static void cgroup_walk(struct slab_sysfs *fs, const char *base, const char *path,
			const char *max_file, const char *cur_file, struct slab_memlat_cgroup *cg)
{
	char dir[1024], rel[1200];

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	for (;;) {
		int64_t limit, usage;
		size_t len = strlen(dir);

		while (len > 0 && dir[len - 1] == '/')
			dir[--len] = '\0';
		snprintf(rel, sizeof(rel), "%s%s/%s", base, dir, max_file);
		if (cgroup_value(fs, rel, &limit) == 0 && limit >= 0) {
			snprintf(rel, sizeof(rel), "%s%s/%s", base, dir, cur_file);
			if (cgroup_value(fs, rel, &usage) < 0 || usage < 0)
				usage = 0;
			if (!cg->limited || (uint64_t)(limit > usage ? limit - usage : 0) < cg->room) {
				cg->limited = 1;
				cg->limit = (uint64_t)limit;
				cg->usage = (uint64_t)usage;
				cg->room = limit > usage ? (uint64_t)(limit - usage) : 0;
			}
		}
		if (len == 0)
			return;
		*strrchr(dir, '/') = '\0';
	}
}

int slab_memlat_cgroup(struct slab_sysfs *fs, struct slab_memlat_cgroup *cg)
{
	char text[4096], *line, *next;

	memset(cg, 0, sizeof(*cg));
	if (slab_sysfs_read(fs, "proc/self/cgroup", text, sizeof(text)) < 0)
		return SLAB_ERR_NOTFOUND;
	/* "4:memory:/a/b" (v1; the controllers may be a list) or "0::/a/b" (v2). A path that is
	 * not in this mount namespace's view (a container without a cgroup namespace) is not
	 * found; its ancestors, down to the mount's own root, are tried in turn. */
	for (line = text; line != NULL && *line != '\0'; line = next) {
		char *ctl, *path, *nl = strchr(line, '\n');

		next = nl ? nl + 1 : NULL;
		if (nl != NULL)
			*nl = '\0';
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (path == NULL || path[1] != '/')
			continue;
		*path++ = '\0';
		ctl++;
		if (*ctl == '\0') {
			cgroup_walk(fs, "sys/fs/cgroup", path, "memory.max", "memory.current", cg);
		} else {
			char *save = NULL;

			for (char *c = strtok_r(ctl, ",", &save); c != NULL;
			     c = strtok_r(NULL, ",", &save))
				if (strcmp(c, "memory") == 0)
					cgroup_walk(fs, "sys/fs/cgroup/memory", path,
						    "memory.limit_in_bytes", "memory.usage_in_bytes", cg);
		}
	}
	return cg->limited ? 0 : SLAB_ERR_NOTFOUND;
}

static int index_exists(struct slab_sysfs *fs, unsigned cpu, const char *index)
{
	char rel[96];
	int fd;

	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cache/%s", cpu, index);
	fd = slab_sysfs_openat(fs, rel, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int slab_memlat_caches(struct slab_sysfs *fs, unsigned cpu, struct slab_sysfs_cache *c, int max)
{
	int cnt = 0;

	for (int idx = 0; idx < 16 && cnt < max; idx++) {
		char index[24];
		int rc;

		snprintf(index, sizeof(index), "index%d", idx);
		rc = slab_sysfs_cache(fs, cpu, index, &c[cnt]);
		/* No such index: the last was the last. A file missing from one that is there
		 * leaves out that cache only, not those after it. */
		if (rc == SLAB_ERR_IO && !index_exists(fs, cpu, index))
			break;
		if (rc < 0 || strcmp(c[cnt].type, "Instruction") == 0)
			continue;
		cnt++;
	}
	/* By size, which is by level on every CPU that has sane caches. */
	for (int a = 1; a < cnt; a++)
		for (int b = a; b > 0 && c[b].size < c[b - 1].size; b--) {
			struct slab_sysfs_cache t = c[b];

			c[b] = c[b - 1];
			c[b - 1] = t;
		}
	return cnt;
}

/* ---- the verdict -------------------------------------------------------------------------- */

static size_t count_measured(const double *m, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; m != NULL && i < n; i++)
		c += isfinite(m[i]) != 0;
	return c;
}

/* Median of the finite values among m[first..last]; v has room for them (and may be m). */
static double median_of(const double *m, size_t first, size_t last, double *v)
{
	size_t n = 0;

	for (size_t i = first; i <= last; i++)
		if (isfinite(m[i]))
			v[n++] = m[i];
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Greedy, from small to large: a plateau is a run of points whose largest median is at most
 * 1.25 times the smallest (about +-11% around its middle) and that spans at least an octave;
 * the points between plateaus are the climbs from one level to the next. Cache levels are
 * 3x or more apart, so the tolerance can absorb the noise of a shared machine without
 * merging two levels. Two plateaus in a row within the same tolerance are one level cut
 * by a noisy point, and are joined.
 */
#define LEVEL_SPAN 1.25

/* A plateau's label for joining neighbours: its cache, MEMORY, or NO_LABEL. */
#define MEMORY (-1)
#define NO_LABEL (-2)

static int plateau_label(const struct slab_memlat_plateau *p, int ncaches, double memory_ns)
{
	if (p->cache >= 0)
		return p->cache;
	if (ncaches > 0 || (memory_ns > 0 && p->value >= memory_ns))
		return MEMORY;
	return NO_LABEL;
}

static void find_plateaus(const uint64_t *sizes, size_t n, const double *m,
			  const struct slab_sysfs_cache *caches, int ncaches, double memory_ns,
			  struct slab_memlat_verdict *v, double *scratch)
{
	size_t i = 0;

	while (i < n && v->nplateaus < SLAB_MEMLAT_MAX_PLATEAUS) {
		struct slab_memlat_plateau *p, *prev;
		double lo, hi;
		size_t j = i;

		if (!isfinite(m[i])) {
			i++;
			continue;
		}
		lo = hi = m[i];
		while (j + 1 < n && isfinite(m[j + 1])) {
			double nlo = fmin(lo, m[j + 1]), nhi = fmax(hi, m[j + 1]);

			if (nhi > nlo * LEVEL_SPAN)
				break;
			lo = nlo;
			hi = nhi;
			j++;
		}
		if (j == i || sizes[j] < 2 * sizes[i]) {
			i++;
			continue;
		}
		p = &v->plateaus[v->nplateaus++];
		p->first = i;
		p->last = j;
		p->value = median_of(m, i, j, scratch);
		prev = v->nplateaus > 1 ? p - 1 : NULL;
		if (prev != NULL &&
		    fmax(prev->value, p->value) <= LEVEL_SPAN * fmin(prev->value, p->value)) {
			prev->last = j;
			prev->value = median_of(m, prev->first, j, scratch);
			v->nplateaus--;
		}
		i = j + 1;
	}
	/*
	 * Labels: memory when slower than memory_ns (no cache level of any current CPU takes
	 * 50 ns), else the smallest cache that holds the plateau's geometric middle. Not by
	 * position: on a shared machine noise can split or hide a level.
	 */
	for (size_t k = 0; k < v->nplateaus; k++) {
		struct slab_memlat_plateau *p = &v->plateaus[k];
		double mid = sqrt((double)sizes[p->first] * (double)sizes[p->last]);

		p->cache = -1;
		if (memory_ns > 0 && p->value >= memory_ns)
			continue;
		for (int c = 0; c < ncaches; c++)
			if ((double)caches[c].size >= mid) {
				p->cache = c;
				break;
			}
	}
	/*
	 * Neighbours with one label are one level that rises slowly (or noise cut in two). A
	 * plateau no cache holds is memory only when caches are known (it is past them all) or
	 * it is slower than memory_ns; otherwise it has no label, and is joined to nothing:
	 * without caches in sysfs (some VMs), L1 and memory are two levels, not one.
	 */
	if (ncaches > 0 || memory_ns > 0) {
		size_t w = 0;

		for (size_t k = 0; k < v->nplateaus; k++) {
			if (w > 0 && plateau_label(&v->plateaus[w - 1], ncaches, memory_ns) ==
				     plateau_label(&v->plateaus[k], ncaches, memory_ns) &&
			    plateau_label(&v->plateaus[k], ncaches, memory_ns) != NO_LABEL) {
				v->plateaus[w - 1].last = v->plateaus[k].last;
				continue;
			}
			v->plateaus[w++] = v->plateaus[k];
		}
		v->nplateaus = w;
	}
	for (size_t k = 0; k < v->nplateaus; k++) {
		struct slab_memlat_plateau *p = &v->plateaus[k];

		p->value = median_of(m, p->first, p->last, scratch);
		p->lo = INFINITY;
		p->hi = -INFINITY;
		for (size_t q = p->first; q <= p->last; q++)
			if (isfinite(m[q])) {
				p->lo = fmin(p->lo, m[q]);
				p->hi = fmax(p->hi, m[q]);
			}
	}
}

int slab_memlat_analyse(const uint64_t *sizes, size_t n,
			const double *const med[SLAB_MEMLAT_NBACKINGS],
			const double frac[SLAB_MEMLAT_NBACKINGS], const struct slab_sysfs_cache *caches,
			int ncaches, double memory_ns, struct slab_memlat_verdict *v)
{
	const double *k4 = med[SLAB_MEMLAT_4K];
	int order[5], b;
	/* For the medians and the 4k / huge ratios: allocated once, so no part of the verdict
	 * is left out when memory runs short. */
	double *scratch = malloc((n ? n : 1) * sizeof(*scratch)), *tail;

	memset(v, 0, sizeof(*v));
	v->ref = v->huge = -1;
	v->reach = -1;
	v->reach_ratio = v->reach_median = NAN;
	for (b = 0; b < SLAB_MEMLAT_NBACKINGS; b++) {
		v->largest[b] = -1;
		v->speedup[b] = NAN;
	}
	if (scratch == NULL)
		return SLAB_ERR_NOMEM;
	if (count_measured(med[SLAB_MEMLAT_HUGETLB], n) > 0)
		v->huge = SLAB_MEMLAT_HUGETLB;
	else if (count_measured(med[SLAB_MEMLAT_THP], n) > 0 && frac[SLAB_MEMLAT_THP] >= 0.5)
		v->huge = SLAB_MEMLAT_THP;

	/*
	 * Plateaus: a huge-page curve shows the caches without TLB misses mixed in; the first
	 * curve that covers every size, else the first with any point.
	 */
	order[0] = v->huge;
	order[1] = frac[SLAB_MEMLAT_THP] >= 0.5 ? SLAB_MEMLAT_THP : -1;
	order[2] = SLAB_MEMLAT_4K;
	order[3] = SLAB_MEMLAT_THP;
	order[4] = SLAB_MEMLAT_HUGETLB;
	for (int o = 0; o < 5 && v->ref < 0; o++)
		if (order[o] >= 0 && count_measured(med[order[o]], n) == n)
			v->ref = order[o];
	for (int o = 0; o < 5 && v->ref < 0; o++)
		if (order[o] >= 0 && count_measured(med[order[o]], n) > 0)
			v->ref = order[o];
	if (v->ref >= 0)
		find_plateaus(sizes, n, med[v->ref], caches, ncaches, memory_ns, v, scratch);

	if (k4 == NULL)
		goto out;
	/*
	 * TLB reach: the first point where 4k is over 10% slower than the huge curve and stays
	 * so: the median ratio from there on is over 1.10, and no more than a quarter of the
	 * points from there on fall below 1.05 (a shared machine adds noise both ways).
	 */
	if (v->huge >= 0) {
		const double *h = med[v->huge];

		tail = scratch;
		for (size_t i = 0; i < n && v->reach < 0; i++) {
			double ri = k4[i] / h[i], mid;
			size_t cnt = 0, low = 0;

			if (!isfinite(ri) || ri <= 1.10)
				continue;
			for (size_t j = i; j < n; j++) {
				double rj = k4[j] / h[j];

				if (!isfinite(rj))
					continue;
				tail[cnt++] = rj;
				low += rj < 1.05;
			}
			/* One point is no trend: the last size alone cannot be the reach. */
			if (cnt < 2)
				continue;
			mid = median_of(tail, 0, cnt - 1, tail);
			if (mid > 1.10 && low * 4 <= cnt) {
				v->reach = (long)i;
				v->reach_ratio = ri;
				v->reach_median = mid;
			}
		}
	}
	for (b = SLAB_MEMLAT_THP; b < SLAB_MEMLAT_NBACKINGS; b++) {
		if (med[b] == NULL)
			continue;
		for (size_t i = n; i-- > 0;)
			if (isfinite(k4[i]) && isfinite(med[b][i]) && med[b][i] > 0) {
				v->largest[b] = (long)i;
				v->speedup[b] = k4[i] / med[b][i];
				break;
			}
	}
out:
	free(scratch);
	return 0;
}
