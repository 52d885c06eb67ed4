/* plan.c: epoch orderings over .slab datasets: sequential, uniform random, and quasi-random
 * (page-aware, a sliding window of live pages), split across ranks; and the plan file. */
#include "plan.h"
#include "crc32c.h"
#include "format.h"
#include "slab.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---- the generator: xoshiro256** seeded through splitmix64 (man/slab-plan.5) ------------- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Uniform in [0, n), n >= 1, without bias (Lemire's multiply-and-reject). */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	__extension__ typedef unsigned __int128 u128;
	u128 m = (u128)rng_next(r) * n;
	uint64_t low = (uint64_t)m;

	if (low < n) {
		uint64_t floor = -n % n;
		while (low < floor) {
			m = (u128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Stream 1 orders the whole dataset (the same for every rank); stream 2 + rank interleaves a
 * rank's window. */
static void rng_init(struct rng *r, const struct slab_plan_params *p, uint64_t dataset,
		     uint64_t stream)
{
	uint64_t x = p->seed * 0x9e3779b97f4a7c15ull ^ p->epoch * 0xd1b54a32d192ed03ull ^
		     stream * 0xaef17502108ef2d9ull ^ dataset;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

/* FNV-1a 64 over the identities as stored in a plan file. */
static uint64_t dataset_hash(const struct slab_file_id *ids, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < n; i++) {
		unsigned char b[SLAB_PLAN_ID_SIZE] = { 0 };
		slab_put64(b, ids[i].file_size);
		slab_put64(b + 8, ids[i].samples);
		slab_put32(b + 16, ids[i].header_crc);
		slab_put32(b + 20, ids[i].table_crc);
		for (size_t k = 0; k < sizeof(b); k++) {
			h ^= b[k];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

/* ---- the dataset as pages ------------------------------------------------------------- */

/* A unit is what must be in memory to read a sample: one page, or the whole pages of a
 * sample larger than a page. Its samples are consecutive. */
struct dataset {
	uint32_t nfiles;
	uint64_t total;
	uint64_t *first;        /* first global sample index of each file, [nfiles + 1] */
	uint64_t nunits;
	uint64_t *unit_first;   /* global index of its first sample */
	uint32_t *unit_count;
	uint64_t *unit_cost;    /* pages, or bytes */
	uint32_t *unit_of;      /* unit of each global sample */
};

static void dataset_free(struct dataset *d)
{
	free(d->first);
	free(d->unit_first);
	free(d->unit_count);
	free(d->unit_cost);
	free(d->unit_of);
}

static int dataset_load(struct dataset *d, struct slab *const *files, uint32_t nfiles,
			int bytes, char *err, size_t errlen)
{
	uint64_t g = 0, u = 0;

	memset(d, 0, sizeof(*d));
	d->nfiles = nfiles;
	d->first = calloc((size_t)nfiles + 1, sizeof(*d->first));
	if (!d->first)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		d->first[f] = d->total;
		d->total += slab_count(files[f]);
	}
	d->first[nfiles] = d->total;
	if (d->total > UINT32_MAX * 4ull) {
		say(err, errlen, "dataset of %llu samples is too large", (unsigned long long)d->total);
		return -1;
	}
	d->unit_first = malloc((d->total ? d->total : 1) * sizeof(*d->unit_first));
	d->unit_count = malloc((d->total ? d->total : 1) * sizeof(*d->unit_count));
	d->unit_cost = malloc((d->total ? d->total : 1) * sizeof(*d->unit_cost));
	d->unit_of = malloc((d->total ? d->total : 1) * sizeof(*d->unit_of));
	if (!d->unit_first || !d->unit_count || !d->unit_cost || !d->unit_of)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		struct slab *s = files[f];
		uint64_t ps = slab_page_size(s), last_page = UINT64_MAX;
		for (uint64_t i = 0; i < slab_count(s); i++, g++) {
			struct slab_sample smp;
			uint64_t pages;
			if (slab_sample(s, i, &smp) < 0) {
				say(err, errlen, "%s", slab_error(s));
				return -1;
			}
			pages = smp.size > ps ? (smp.size + ps - 1) / ps : 1;
			if (pages > 1 || smp.page != last_page) {
				d->unit_first[u] = g;
				d->unit_count[u] = 0;
				d->unit_cost[u] = bytes ? pages * ps : pages;
				u++;
			}
			/* a large sample's pages are its own: whatever follows starts a new unit */
			last_page = pages > 1 ? UINT64_MAX : smp.page;
			d->unit_count[u - 1]++;
			d->unit_of[g] = (uint32_t)(u - 1);
		}
	}
	d->nunits = u;
	return 0;
nomem:
	say(err, errlen, "out of memory");
	return -1;
}

/* ---- making a plan ---------------------------------------------------------------------- */

/* The whole dataset in the order every rank agrees on. */
static uint64_t *global_order(const struct dataset *d, const struct slab_plan_params *p,
			      uint64_t dataset)
{
	uint64_t *seq = malloc((d->total ? d->total : 1) * sizeof(*seq)), k = 0;
	struct rng r;

	if (!seq)
		return NULL;
	rng_init(&r, p, dataset, 1);
	switch (p->mode) {
	case SLAB_PLAN_SEQUENTIAL:
		for (uint64_t i = 0; i < d->total; i++)
			seq[i] = i;
		break;
	case SLAB_PLAN_RANDOM:
		for (uint64_t i = 0; i < d->total; i++)
			seq[i] = i;
		for (uint64_t i = d->total; i > 1; i--) {
			uint64_t j = rng_below(&r, i), t = seq[i - 1];
			seq[i - 1] = seq[j];
			seq[j] = t;
		}
		break;
	case SLAB_PLAN_QUASI: {
		/* Shuffle the units; their samples follow in file order (the window mixes them). */
		uint64_t *units = malloc((d->nunits ? d->nunits : 1) * sizeof(*units));
		if (!units) {
			free(seq);
			return NULL;
		}
		for (uint64_t i = 0; i < d->nunits; i++)
			units[i] = i;
		for (uint64_t i = d->nunits; i > 1; i--) {
			uint64_t j = rng_below(&r, i), t = units[i - 1];
			units[i - 1] = units[j];
			units[j] = t;
		}
		for (uint64_t i = 0; i < d->nunits; i++)
			for (uint32_t c = 0; c < d->unit_count[units[i]]; c++)
				seq[k++] = d->unit_first[units[i]] + c;
		free(units);
		break;
	}
	}
	return seq;
}

/*
 * The window: groups (runs of the rank's share on one unit) enter in order while their cost
 * fits the budget (one always may); each step emits a sample drawn uniformly from all the
 * samples of all live groups; a group leaves when its last sample is out. Drawing from every
 * live sample, not from one random live page as FFCV does, mixes more for the same memory.
 */
static int interleave(const struct dataset *d, const struct slab_plan_params *p, uint64_t dataset,
		      const uint64_t *share, uint64_t n, uint64_t *out)
{
	uint64_t *gstart = malloc((n ? n : 1) * sizeof(*gstart));
	uint32_t *gleft = malloc((n ? n : 1) * sizeof(*gleft));
	uint64_t *pool = malloc((n ? n : 1) * sizeof(*pool));
	uint64_t *pool_g = malloc((n ? n : 1) * sizeof(*pool_g));
	uint64_t ngroups = 0, next = 0, live = 0, npool = 0, emitted = 0;
	struct rng r;
	int ret = -1;

	if (!gstart || !gleft || !pool || !pool_g)
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		if (i == 0 || d->unit_of[share[i]] != d->unit_of[share[i - 1]]) {
			gstart[ngroups] = i;
			gleft[ngroups] = 0;
			ngroups++;
		}
		gleft[ngroups - 1]++;
	}
	rng_init(&r, p, dataset, 2 + (uint64_t)p->rank);
	while (emitted < n) {
		while (next < ngroups) {
			uint64_t cost = d->unit_cost[d->unit_of[share[gstart[next]]]];
			if (live && live + cost > p->window)
				break;
			for (uint32_t c = 0; c < gleft[next]; c++) {
				pool[npool] = share[gstart[next] + c];
				pool_g[npool] = next;
				npool++;
			}
			live += cost;
			next++;
		}
		uint64_t j = rng_below(&r, npool), g = pool_g[j];
		out[emitted++] = pool[j];
		pool[j] = pool[npool - 1];
		pool_g[j] = pool_g[npool - 1];
		npool--;
		if (--gleft[g] == 0)
			live -= d->unit_cost[d->unit_of[share[gstart[g]]]];
	}
	ret = 0;
out:
	free(gstart);
	free(gleft);
	free(pool);
	free(pool_g);
	return ret;
}

void slab_plan_free(struct slab_plan *plan)
{
	if (!plan)
		return;
	free(plan->ids);
	free(plan->entries);
	free(plan);
}

int slab_plan_make(struct slab *const *files, uint32_t nfiles, const struct slab_plan_params *p,
		   uint64_t start, struct slab_plan **out, char *err, size_t errlen)
{
	struct dataset d;
	struct slab_plan *plan = calloc(1, sizeof(*plan));
	uint64_t *seq = NULL, *share = NULL, *mixed = NULL, per, hash;
	int ret = -1;

	*out = NULL;
	memset(&d, 0, sizeof(d));
	if (!plan)
		goto nomem;
	if (p->world < 1 || p->rank >= p->world || p->window < 1) {
		say(err, errlen, "rank %u, world size %u, window %llu: out of range", p->rank, p->world,
		    (unsigned long long)p->window);
		goto out;
	}
	plan->p = *p;
	plan->nfiles = nfiles;
	plan->ids = calloc(nfiles ? nfiles : 1, sizeof(*plan->ids));
	if (!plan->ids)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++)
		slab_file_identity(files[f], &plan->ids[f]);
	hash = dataset_hash(plan->ids, nfiles);
	if (dataset_load(&d, files, nfiles, !!(p->flags & SLAB_PLAN_MEMORY), err, errlen) < 0)
		goto out;
	plan->total = d.total;

	seq = global_order(&d, p, hash);
	if (!seq)
		goto nomem;
	/* Rank r takes the r-th contiguous slice: whole pages but at the slice ends. */
	per = p->flags & SLAB_PLAN_PAD ? (d.total + p->world - 1) / p->world : d.total / p->world;
	if (!d.total)
		per = 0;
	share = malloc((per ? per : 1) * sizeof(*share));
	if (!share)
		goto nomem;
	for (uint64_t i = 0; i < per; i++)
		share[i] = seq[((uint64_t)p->rank * per + i) % d.total];
	if (p->mode == SLAB_PLAN_QUASI) {
		mixed = malloc((per ? per : 1) * sizeof(*mixed));
		if (!mixed || interleave(&d, p, hash, share, per, mixed) < 0)
			goto nomem;
		free(share);
		share = mixed;
		mixed = NULL;
	}
	plan->length = per;
	if (start > per) {
		say(err, errlen, "start %llu is past the end of the plan (%llu entries)",
		    (unsigned long long)start, (unsigned long long)per);
		goto out;
	}
	plan->start = start;
	plan->n = per - start;
	plan->entries = malloc((plan->n ? plan->n : 1) * sizeof(*plan->entries));
	if (!plan->entries)
		goto nomem;
	for (uint64_t i = 0; i < plan->n; i++) {
		uint64_t g = share[start + i];
		uint32_t f = 0, lo = 0, hi = nfiles;
		/* the file holding global sample g: the last with first[f] <= g */
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (d.first[mid] <= g)
				lo = mid;
			else
				hi = mid;
		}
		f = lo;
		while (f + 1 < nfiles && d.first[f + 1] <= g)
			f++;
		plan->entries[i].file = f;
		plan->entries[i].sample = (uint32_t)(g - d.first[f]);
	}
	*out = plan;
	plan = NULL;
	ret = 0;
	goto out;
nomem:
	say(err, errlen, "out of memory");
out:
	dataset_free(&d);
	free(seq);
	free(share);
	free(mixed);
	slab_plan_free(plan);
	return ret;
}

/* ---- the plan file ---------------------------------------------------------------------- */

static uint64_t header_region(uint32_t nfiles)
{
	uint64_t n = SLAB_PLAN_HEADER_FIXED + (uint64_t)nfiles * SLAB_PLAN_ID_SIZE;

	return (n + SLAB_ALIGN - 1) / SLAB_ALIGN * SLAB_ALIGN;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int slab_plan_write(const struct slab_plan *plan, int fd)
{
	uint64_t hsize = header_region(plan->nfiles);
	unsigned char *h = calloc(1, (size_t)hsize), buf[8192];
	uint32_t crc = 0;
	size_t fill = 0;
	int ret = -1;

	if (!h)
		return -1;
	for (uint64_t i = 0; i < plan->n; i++) {
		unsigned char e[8];
		slab_put32(e, plan->entries[i].file);
		slab_put32(e + 4, plan->entries[i].sample);
		crc = slab_crc32c(crc, e, 8);
	}
	memcpy(h, SLAB_PLAN_MAGIC, 8);
	slab_put16(h + 8, SLAB_PLAN_VERSION);
	slab_put16(h + 10, 0);
	slab_put32(h + 12, (uint32_t)hsize);
	slab_put32(h + 16, (uint32_t)plan->p.mode);
	slab_put32(h + 20, plan->p.flags);
	slab_put64(h + 24, plan->p.seed);
	slab_put64(h + 32, plan->p.epoch);
	slab_put32(h + 40, plan->p.rank);
	slab_put32(h + 44, plan->p.world);
	slab_put64(h + 48, plan->p.window);
	slab_put64(h + 56, plan->start);
	slab_put64(h + 64, plan->n);
	slab_put64(h + 72, plan->length);
	slab_put64(h + 80, plan->total);
	slab_put32(h + 88, plan->nfiles);
	slab_put32(h + 92, crc);
	for (uint32_t f = 0; f < plan->nfiles; f++) {
		unsigned char *b = h + SLAB_PLAN_HEADER_FIXED + (size_t)f * SLAB_PLAN_ID_SIZE;
		slab_put64(b, plan->ids[f].file_size);
		slab_put64(b + 8, plan->ids[f].samples);
		slab_put32(b + 16, plan->ids[f].header_crc);
		slab_put32(b + 20, plan->ids[f].table_crc);
	}
	slab_put32(h + 96, slab_crc32c(0, h, (size_t)hsize));
	if (write_all(fd, h, (size_t)hsize) < 0)
		goto out;
	for (uint64_t i = 0; i < plan->n; i++) {
		slab_put32(buf + fill, plan->entries[i].file);
		slab_put32(buf + fill + 4, plan->entries[i].sample);
		fill += 8;
		if (fill == sizeof(buf)) {
			if (write_all(fd, buf, fill) < 0)
				goto out;
			fill = 0;
		}
	}
	if (fill && write_all(fd, buf, fill) < 0)
		goto out;
	ret = 0;
out:
	free(h);
	return ret;
}

int slab_plan_read(const char *path, struct slab_plan **out, char *err, size_t errlen)
{
	struct slab_plan *plan = calloc(1, sizeof(*plan));
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	uint64_t hsize, n;
	uint32_t crc;
	int fd = -1, ret = -1;

	*out = NULL;
	if (!plan)
		goto nomem;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		say(err, errlen, "'%s': %s", path, strerror(errno));
		goto out;
	}
	/* Read it whole: plans are 8 bytes a sample, and may come from a pipe. */
	for (;;) {
		ssize_t r;
		if (len == cap) {
			unsigned char *p = realloc(buf, cap ? cap * 2 : 65536);
			if (!p)
				goto nomem;
			buf = p;
			cap = cap ? cap * 2 : 65536;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			say(err, errlen, "'%s': %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len < SLAB_PLAN_HEADER_FIXED || memcmp(buf, SLAB_PLAN_MAGIC, 8) != 0) {
		say(err, errlen, "'%s': not a plan file (bad magic number)", path);
		goto out;
	}
	if (slab_le16(buf + 8) != SLAB_PLAN_VERSION) {
		say(err, errlen, "'%s': plan format version %u is not supported", path, slab_le16(buf + 8));
		goto out;
	}
	plan->nfiles = slab_le32(buf + 88);
	hsize = slab_le32(buf + 12);
	if (plan->nfiles > (1u << 24) || hsize != header_region(plan->nfiles) || hsize > len) {
		say(err, errlen, "'%s': truncated or damaged plan header", path);
		goto out;
	}
	crc = slab_le32(buf + 96);
	memset(buf + 96, 0, 4);
	if (slab_crc32c(0, buf, (size_t)hsize) != crc) {
		say(err, errlen, "'%s': plan header checksum mismatch", path);
		goto out;
	}
	n = slab_le64(buf + 64);
	if (n > (len - hsize) / SLAB_PLAN_ENTRY_SIZE || len - hsize != n * SLAB_PLAN_ENTRY_SIZE) {
		say(err, errlen, "'%s': truncated plan: %llu entries announced, %zu bytes of entries",
		    path, (unsigned long long)n, len - (size_t)hsize);
		goto out;
	}
	if (slab_crc32c(0, buf + hsize, (size_t)(n * SLAB_PLAN_ENTRY_SIZE)) != slab_le32(buf + 92)) {
		say(err, errlen, "'%s': plan entries checksum mismatch", path);
		goto out;
	}
	plan->p.mode = (enum slab_plan_mode)slab_le32(buf + 16);
	plan->p.flags = slab_le32(buf + 20);
	plan->p.seed = slab_le64(buf + 24);
	plan->p.epoch = slab_le64(buf + 32);
	plan->p.rank = slab_le32(buf + 40);
	plan->p.world = slab_le32(buf + 44);
	plan->p.window = slab_le64(buf + 48);
	plan->start = slab_le64(buf + 56);
	plan->n = n;
	plan->length = slab_le64(buf + 72);
	plan->total = slab_le64(buf + 80);
	if (plan->p.mode > SLAB_PLAN_QUASI || plan->p.world < 1 || plan->p.rank >= plan->p.world ||
	    plan->start > plan->length || plan->length - plan->start != n) {
		say(err, errlen, "'%s': inconsistent plan header", path);
		goto out;
	}
	plan->ids = calloc(plan->nfiles ? plan->nfiles : 1, sizeof(*plan->ids));
	plan->entries = malloc((n ? n : 1) * sizeof(*plan->entries));
	if (!plan->ids || !plan->entries)
		goto nomem;
	for (uint32_t f = 0; f < plan->nfiles; f++) {
		const unsigned char *b = buf + SLAB_PLAN_HEADER_FIXED + (size_t)f * SLAB_PLAN_ID_SIZE;
		plan->ids[f].file_size = slab_le64(b);
		plan->ids[f].samples = slab_le64(b + 8);
		plan->ids[f].header_crc = slab_le32(b + 16);
		plan->ids[f].table_crc = slab_le32(b + 20);
	}
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *e = buf + hsize + i * SLAB_PLAN_ENTRY_SIZE;
		plan->entries[i].file = slab_le32(e);
		plan->entries[i].sample = slab_le32(e + 4);
		if (plan->entries[i].file >= plan->nfiles ||
		    plan->entries[i].sample >= plan->ids[plan->entries[i].file].samples) {
			say(err, errlen, "'%s': entry %llu names sample %u of file %u, which does not exist",
			    path, (unsigned long long)i, plan->entries[i].sample, plan->entries[i].file);
			goto out;
		}
	}
	*out = plan;
	plan = NULL;
	ret = 0;
	goto out;
nomem:
	say(err, errlen, "out of memory");
out:
	if (fd > 0)
		close(fd);
	free(buf);
	slab_plan_free(plan);
	return ret;
}

int slab_plan_match(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
		    char *err, size_t errlen)
{
	if (plan->nfiles != nfiles) {
		say(err, errlen, "the plan is for %u files, %u given", plan->nfiles, nfiles);
		return -1;
	}
	for (uint32_t f = 0; f < nfiles; f++) {
		struct slab_file_id id;
		slab_file_identity(files[f], &id);
		if (memcmp(&id, &plan->ids[f], sizeof(id)) != 0) {
			say(err, errlen, "file %u is not the one the plan was made for (content differs)", f);
			return -1;
		}
	}
	return 0;
}

/* ---- measures --------------------------------------------------------------------------- */

int slab_plan_stats(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
		    struct slab_plan_stats *st, char *err, size_t errlen)
{
	uint64_t *page_base = calloc((size_t)nfiles + 1, sizeof(*page_base)), npages;
	uint64_t *gpage = NULL, *first = NULL, *last = NULL, *sample_base = NULL;
	int64_t *delta = NULL, *dbytes = NULL;
	uint64_t n = plan->n, live = 0, live_bytes = 0, same = 0, prev = UINT64_MAX;
	uint32_t *pages = NULL;
	double disp = 0;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	sample_base = calloc((size_t)nfiles + 1, sizeof(*sample_base));
	if (!page_base || !sample_base)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		page_base[f + 1] = page_base[f] + slab_page_count(files[f]) + 1;
		sample_base[f + 1] = sample_base[f] + slab_count(files[f]);
	}
	npages = page_base[nfiles];
	gpage = malloc((n ? n : 1) * sizeof(*gpage));
	pages = malloc((n ? n : 1) * sizeof(*pages));
	first = malloc((npages ? npages : 1) * sizeof(*first));
	last = malloc((npages ? npages : 1) * sizeof(*last));
	delta = calloc((size_t)n + 1, sizeof(*delta));
	dbytes = calloc((size_t)n + 1, sizeof(*dbytes));
	if (!gpage || !pages || !first || !last || !delta || !dbytes)
		goto nomem;
	for (uint64_t p = 0; p < npages; p++)
		first[p] = UINT64_MAX;
	for (uint64_t i = 0; i < n; i++) {
		const struct slab_plan_entry *e = &plan->entries[i];
		struct slab_sample smp;
		uint64_t ps, g;
		if (e->file >= nfiles || slab_sample(files[e->file], e->sample, &smp) < 0) {
			say(err, errlen, "entry %llu: no such sample", (unsigned long long)i);
			goto out;
		}
		ps = slab_page_size(files[e->file]);
		g = page_base[e->file] + smp.page;
		gpage[i] = g;
		pages[i] = (uint32_t)(smp.size > ps ? (smp.size + ps - 1) / ps : 1);
		if (first[g] == UINT64_MAX) {
			first[g] = i;
			st->distinct_pages += pages[i];
		}
		last[g] = i;
		if (i && g == prev)
			same++;
		else if (i)
			st->page_switches++;
		prev = g;
		/* position in the plan vs position of the sample in file order, both as fractions */
		disp += n > 1 && plan->total > 1 ?
			 fabs((double)(plan->start + i) / (double)(plan->length - 1) -
				(double)(sample_base[e->file] + e->sample) / (double)(plan->total - 1)) : 0;
	}
	/* a page is live from its first to its last use: sweep the intervals */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t g = gpage[i];
		if (first[g] == i) {
			uint64_t ps = slab_page_size(files[plan->entries[i].file]);
			delta[i] += pages[i];
			delta[last[g] + 1] -= pages[i];
			dbytes[i] += (int64_t)(pages[i] * ps);
			dbytes[last[g] + 1] -= (int64_t)(pages[i] * ps);
		}
	}
	for (uint64_t i = 0; i < n; i++) {
		live += (uint64_t)delta[i];
		live_bytes += (uint64_t)dbytes[i];
		if (live > st->max_live_pages)
			st->max_live_pages = live;
		if (live_bytes > st->max_live_bytes)
			st->max_live_bytes = live_bytes;
	}
	st->samples = n;
	st->mean_run = n ? (double)n / (double)(st->page_switches + 1) : 0;
	st->displacement = n ? disp / (double)n : 0;
	st->same_page_neighbours = n > 1 ? (double)same / (double)(n - 1) : 0;
	ret = 0;
	goto out;
nomem:
	say(err, errlen, "out of memory");
out:
	free(page_base);
	free(sample_base);
	free(gpage);
	free(pages);
	free(first);
	free(last);
	free(delta);
	free(dbytes);
	return ret;
}
