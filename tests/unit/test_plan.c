/* test_plan.c: epoch plans over synthetic datasets made with the writer: every mode gives a
 * permutation (or its exact drop-last / pad variant), rank shares are disjoint and complete,
 * the quasi window bounds the live pages, --start gives the tail, plans are deterministic and
 * random enough; subset plans do all that over their subset; and the plan file round-trips
 * and refuses damage. */
#include "crc32c.h"
#include "format.h"
#include "plan.h"
#include "slab.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXFILES 4

/* A dataset: up to MAXFILES .slab files in memory. */
struct ds {
	uint32_t n;
	struct slab *f[MAXFILES];
	unsigned char *buf[MAXFILES];
	uint64_t total;
};

/* One .slab of samples with the given sizes (one field each) in pages of ps bytes. tag
 * makes the bytes (so the identity) differ between files of equal shape. */
static void add_file(struct ds *d, const uint64_t *sizes, size_t n, uint64_t ps, unsigned tag)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = ps, .options = "tool=test_plan\n" };
	uint64_t most = 1;
	unsigned char *data;
	off_t end;

	for (size_t i = 0; i < n; i++)
		if (sizes[i] > most)
			most = sizes[i];
	data = malloc(most);
	for (uint64_t k = 0; k < most; k++)
		data[k] = (unsigned char)(k * 31 + tag);
	CHECK(fd >= 0 && w && data && d->n < MAXFILES);
	CHECK(slab_writer_open(w, fd, "mem", &o) == 0);
	for (size_t i = 0; i < n; i++) {
		char key[32];
		int kl = snprintf(key, sizeof(key), "t%u-%06zu", tag, i);
		struct slab_writer_field f = { .name = "bin", .data = data, .size = sizes[i] };
		CHECK(slab_writer_add(w, key, (size_t)kl, &f, 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	free(data);
	end = lseek(fd, 0, SEEK_END);
	d->buf[d->n] = malloc((size_t)end);
	CHECK(pread(fd, d->buf[d->n], (size_t)end, 0) == end);
	close(fd);
	d->f[d->n] = slab_new();
	CHECK(slab_open_mem(d->f[d->n], d->buf[d->n], (size_t)end, "mem") == 0);
	d->total += slab_count(d->f[d->n]);
	d->n++;
}

static void ds_free(struct ds *d)
{
	for (uint32_t i = 0; i < d->n; i++) {
		slab_close(d->f[i]);
		free(d->buf[i]);
	}
	memset(d, 0, sizeof(*d));
}

/* Sizes from a small generator: mostly small, now and then near a page or beyond. */
static uint64_t *sizes_mixed(size_t n, uint64_t ps, unsigned seed, int large)
{
	uint64_t *s = malloc((n ? n : 1) * sizeof(*s)), x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(x >> 33);
		if (large && r % 17 == 0)
			s[i] = ps + 1 + r % (2 * ps);           /* 2 or 3 pages */
		else if (r % 11 == 0)
			s[i] = ps / 2 + r % (ps / 2);
		else
			s[i] = r % 700;
	}
	return s;
}

static uint64_t global_index(const struct ds *d, struct slab_plan_entry e)
{
	uint64_t g = 0;

	for (uint32_t f = 0; f < e.file; f++)
		g += slab_count(d->f[f]);
	return g + e.sample;
}

/* The unit (page, or whole pages of a large sample) of each global sample, numbered. */
static uint64_t *units_of(const struct ds *d, uint64_t *nunits)
{
	uint64_t *u = malloc((d->total ? d->total : 1) * sizeof(*u)), g = 0, next = 0;

	for (uint32_t f = 0; f < d->n; f++) {
		uint64_t ps = slab_page_size(d->f[f]), last = UINT64_MAX;
		for (uint64_t i = 0; i < slab_count(d->f[f]); i++, g++) {
			struct slab_sample smp;
			CHECK(slab_sample(d->f[f], i, &smp) == 0);
			uint64_t page = (smp.offset - slab_data_offset(d->f[f])) / ps;
			int big = smp.size > ps;
			if (big || page != last)
				next++;
			u[g] = next - 1;
			last = big ? UINT64_MAX : page;
		}
	}
	*nunits = next;
	return u;
}

static struct slab_plan *make(const struct ds *d, enum slab_plan_mode mode, uint32_t rank, uint32_t world,
			      unsigned flags, uint64_t window, uint64_t seed, uint64_t epoch, uint64_t start)
{
	struct slab_plan_params p = { .mode = mode, .seed = seed, .epoch = epoch, .rank = rank,
				      .world = world, .window = window, .flags = flags };
	struct slab_plan *plan = slab_plan_new();

	CHECK(plan != NULL);
	if (slab_plan_make(plan, d->f, d->n, &p, start) < 0) {
		fprintf(stderr, "slab_plan_make: %s\n", slab_plan_error(plan));
		CHECK(0);
	}
	return plan;
}

static int same_entries(const struct slab_plan_entry *a, const struct slab_plan_entry *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (a[i].file != b[i].file || a[i].sample != b[i].sample)
			return 0;
	return 1;
}

/* All ranks of one configuration: equal lengths, shares disjoint (drop-last) or repeating
 * only the pads, all samples but fewer than world dropped, or all samples and fewer than
 * world repeated; quasi shares are whole units but where slices meet. */
static void check_shares(const struct ds *d, enum slab_plan_mode mode, unsigned flags, uint32_t world,
			 uint64_t window)
{
	uint32_t *seen = calloc(d->total ? d->total : 1, sizeof(*seen));
	uint64_t nunits = 0, *unit = units_of(d, &nunits), pairs = 0, per = 0, missing = 0, extra = 0;
	int pad = !!(flags & SLAB_PLAN_PAD);
	char *in_rank = calloc(nunits ? nunits : 1, 1);

	if (d->total)
		per = pad ? (d->total + world - 1) / world : d->total / world;
	for (uint32_t r = 0; r < world; r++) {
		struct slab_plan *plan = make(d, mode, r, world, flags, window, 5, 1, 0);
		if (!plan)
			continue;
		CHECK(plan->length == per && plan->n == per && plan->start == 0);
		CHECK(plan->total == d->total && plan->nfiles == d->n);
		memset(in_rank, 0, nunits ? nunits : 1);
		for (uint64_t i = 0; i < plan->n; i++) {
			struct slab_plan_entry e = plan->entries[i];
			CHECK(e.file < d->n && e.sample < slab_count(d->f[e.file]));
			uint64_t g = global_index(d, e);
			seen[g]++;
			if (!in_rank[unit[g]]) {
				in_rank[unit[g]] = 1;
				pairs++;
			}
		}
		slab_plan_free(plan);
	}
	for (uint64_t g = 0; g < d->total; g++) {
		if (!seen[g])
			missing++;
		else
			extra += seen[g] - 1;
	}
	if (pad) {
		CHECK(missing == 0);
		CHECK(extra == per * world - d->total);
		CHECK(extra < world);
	} else {
		CHECK(extra == 0);     /* disjoint */
		CHECK(missing == d->total - per * world);
		CHECK(missing < world);
	}
	/* each slice boundary splits at most one unit between two ranks (pad: the last rank
	 * wraps round onto the order's first units, one for each of its at most world - 1
	 * repeated samples where those units are small) */
	if (mode == SLAB_PLAN_QUASI)
		CHECK(pairs <= nunits + world - 1 + (pad ? per * world - d->total : 0));
	free(seen);
	free(unit);
	free(in_rank);
}

static void test_shares(void)
{
	uint64_t *s1 = sizes_mixed(300, 4096, 1, 1), *s2 = sizes_mixed(77, 4096, 2, 0);
	uint64_t tiny[3] = { 10, 20, 30 };
	struct ds a = { 0 }, b = { 0 }, c = { 0 }, e = { 0 };

	add_file(&a, s1, 300, 4096, 1);                 /* one file, large samples among them */
	add_file(&b, s2, 77, 8192, 2);                  /* three files, one empty, two page sizes */
	add_file(&b, NULL, 0, 4096, 3);
	add_file(&b, s1, 120, 4096, 4);
	add_file(&c, tiny, 3, 4096, 5);                 /* fewer samples than ranks */
	add_file(&e, NULL, 0, 4096, 6);                 /* no samples at all */
	for (int m = SLAB_PLAN_SEQUENTIAL; m <= SLAB_PLAN_QUASI; m++)
		for (uint32_t w = 1; w <= 7; w++)
			for (unsigned flags = 0; flags <= SLAB_PLAN_PAD; flags += SLAB_PLAN_PAD) {
				check_shares(&a, (enum slab_plan_mode)m, flags, w, 4);
				check_shares(&b, (enum slab_plan_mode)m, flags, w, 3);
				check_shares(&c, (enum slab_plan_mode)m, flags, w, 2);
				check_shares(&e, (enum slab_plan_mode)m, flags, w, 2);
			}
	/* N < W: drop-last leaves every rank empty, pad gives each rank one sample */
	{
		struct slab_plan *p = make(&c, SLAB_PLAN_QUASI, 6, 7, 0, 2, 0, 0, 0);
		CHECK(p && p->n == 0);
		slab_plan_free(p);
		p = make(&c, SLAB_PLAN_QUASI, 6, 7, SLAB_PLAN_PAD, 2, 0, 0, 0);
		CHECK(p && p->n == 1);
		slab_plan_free(p);
	}
	/* sequential over one rank is file order, files in the order given */
	{
		struct slab_plan *p = make(&b, SLAB_PLAN_SEQUENTIAL, 0, 1, 0, 1, 9, 9, 0);
		uint64_t i = 0;
		for (uint32_t f = 0; f < b.n; f++)
			for (uint64_t k = 0; k < slab_count(b.f[f]); k++, i++)
				CHECK(p->entries[i].file == f && p->entries[i].sample == k);
		CHECK(i == p->n);
		slab_plan_free(p);
	}
	ds_free(&a);
	ds_free(&b);
	ds_free(&c);
	ds_free(&e);
	free(s1);
	free(s2);
}

static void test_start_and_determinism(void)
{
	uint64_t *s1 = sizes_mixed(500, 4096, 7, 1);
	struct ds a = { 0 };

	add_file(&a, s1, 250, 4096, 1);
	add_file(&a, s1 + 250, 250, 4096, 2);
	for (int m = SLAB_PLAN_SEQUENTIAL; m <= SLAB_PLAN_QUASI; m++) {
		for (unsigned flags = 0; flags <= SLAB_PLAN_PAD; flags += SLAB_PLAN_PAD) {
			struct slab_plan *full = make(&a, (enum slab_plan_mode)m, 2, 3, flags, 5, 11, 2, 0);
			struct slab_plan *again = make(&a, (enum slab_plan_mode)m, 2, 3, flags, 5, 11, 2, 0);
			uint64_t ks[] = { 0, 1, 2, 17, full->length / 2, full->length - 1, full->length };
			CHECK(full->n == again->n && same_entries(full->entries, again->entries, full->n));
			for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
				struct slab_plan *tail = make(&a, (enum slab_plan_mode)m, 2, 3, flags, 5, 11, 2, ks[k]);
				CHECK(tail->start == ks[k] && tail->length == full->length);
				CHECK(tail->n == full->length - ks[k]);
				CHECK(same_entries(tail->entries, full->entries + ks[k], tail->n));
				slab_plan_free(tail);
			}
			slab_plan_free(full);
			slab_plan_free(again);
		}
		/* past the end */
		{
			struct slab_plan_params p = { .mode = (enum slab_plan_mode)m, .world = 1, .window = 4 };
			struct slab_plan *plan = slab_plan_new();
			CHECK(slab_plan_make(plan, a.f, a.n, &p, 501) == SLAB_ERR_RANGE);
			CHECK(slab_plan_count(plan) == 0 && slab_plan_entries(plan) == NULL);
			CHECK_STR(slab_plan_error(plan), "start 501 is past the end of the plan (500 entries)");
			/* a handle keeps what it held when the next make fails */
			CHECK(slab_plan_make(plan, a.f, a.n, &p, 500) == 0 && slab_plan_count(plan) == 0);
			CHECK(slab_plan_make(plan, a.f, a.n, &p, 499) == 0 && slab_plan_count(plan) == 1);
			CHECK(slab_plan_make(plan, a.f, a.n, &p, 501) == SLAB_ERR_RANGE);
			CHECK(slab_plan_count(plan) == 1 && slab_plan_start(plan) == 499);
			slab_plan_free(plan);
		}
	}
	/* seeds, epochs and ranks each give another order; sequential ignores seed and epoch */
	for (int m = SLAB_PLAN_RANDOM; m <= SLAB_PLAN_QUASI; m++) {
		struct slab_plan *p0 = make(&a, (enum slab_plan_mode)m, 0, 1, 0, 8, 1, 0, 0);
		struct slab_plan *ps = make(&a, (enum slab_plan_mode)m, 0, 1, 0, 8, 2, 0, 0);
		struct slab_plan *pe = make(&a, (enum slab_plan_mode)m, 0, 1, 0, 8, 1, 1, 0);
		struct slab_plan *pw = make(&a, (enum slab_plan_mode)m, 0, 1, 0, 9, 1, 0, 0);
		CHECK(!same_entries(p0->entries, ps->entries, p0->n));
		CHECK(!same_entries(p0->entries, pe->entries, p0->n));
		if (m == SLAB_PLAN_QUASI)
			CHECK(!same_entries(p0->entries, pw->entries, p0->n));
		else
			CHECK(same_entries(p0->entries, pw->entries, p0->n));
		slab_plan_free(p0);
		slab_plan_free(ps);
		slab_plan_free(pe);
		slab_plan_free(pw);
	}
	{
		struct slab_plan *p0 = make(&a, SLAB_PLAN_SEQUENTIAL, 0, 1, 0, 8, 1, 0, 0);
		struct slab_plan *p1 = make(&a, SLAB_PLAN_SEQUENTIAL, 0, 1, 0, 8, 2, 3, 0);
		CHECK(same_entries(p0->entries, p1->entries, p0->n));
		slab_plan_free(p0);
		slab_plan_free(p1);
	}
	/* bad parameters */
	{
		struct slab_plan_params p = { .mode = SLAB_PLAN_QUASI, .world = 2, .rank = 2, .window = 4 };
		struct slab_plan *plan = slab_plan_new();
		CHECK(slab_plan_make(plan, a.f, a.n, &p, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(plan), "mode 2, rank 2, world size 2, window 4: out of range");
		p.rank = 0;
		p.window = 0;
		CHECK(slab_plan_make(plan, a.f, a.n, &p, 0) == SLAB_ERR_INVAL);
		p.world = 0;
		p.window = 1;
		CHECK(slab_plan_make(plan, a.f, a.n, &p, 0) == SLAB_ERR_INVAL);
		/* a parameters struct smaller than any version */
		p.world = 1;
		p.size = sizeof(size_t);
		CHECK(slab_plan_make(plan, a.f, a.n, &p, 0) == SLAB_ERR_INVAL);
		p.size = sizeof(p);
		CHECK(slab_plan_make(plan, a.f, a.n, &p, 0) == 0);
		CHECK(slab_plan_params(plan)->size == sizeof(p) && slab_plan_params(plan)->window == 1);
		slab_plan_free(plan);
	}
	ds_free(&a);
	free(s1);
}

static void test_window(void)
{
	uint64_t *mixed = sizes_mixed(400, 4096, 3, 0), *withbig = sizes_mixed(400, 4096, 4, 1);
	uint64_t big[20];
	struct ds a = { 0 }, b = { 0 }, c = { 0 };
	struct slab_plan_stats st = { .size = sizeof(st) };

	add_file(&a, mixed, 400, 4096, 1);
	add_file(&b, withbig, 400, 4096, 2);
	for (int i = 0; i < 20; i++)
		big[i] = 2 * 4096 + 1;                  /* 3 pages each */
	add_file(&c, big, 20, 4096, 3);
	for (uint64_t w = 1; w <= 12; w++) {
		for (uint32_t world = 1; world <= 3; world++) {
			/* pages of one unit each: the window is a hard bound */
			struct slab_plan *p = make(&a, SLAB_PLAN_QUASI, world - 1, world, 0, w, w, 0, 0);
			CHECK(slab_plan_stats(p, a.f, a.n, &st) == 0);
			CHECK(st.max_live_pages <= w);
			CHECK(st.max_live_bytes <= w * 4096);
			if (w == 1)     /* one page at a time: each page is visited once */
				CHECK(st.page_switches + 1 == st.distinct_pages);
			slab_plan_free(p);
			/* large samples count their pages; one larger than the window may be alone */
			p = make(&b, SLAB_PLAN_QUASI, world - 1, world, 0, w, w, 0, 0);
			CHECK(slab_plan_stats(p, b.f, b.n, &st) == 0);
			CHECK(st.max_live_pages <= (w > 3 ? w : 3));
			slab_plan_free(p);
			/* the same budget in bytes */
			p = make(&b, SLAB_PLAN_QUASI, world - 1, world, SLAB_PLAN_MEMORY, w * 4096, w, 0, 0);
			CHECK(slab_plan_stats(p, b.f, b.n, &st) == 0);
			CHECK(st.max_live_bytes <= (w > 3 ? w : 3) * 4096);
			slab_plan_free(p);
		}
	}
	/* all samples of 3 pages: a window of 5 holds one, of 6 two at a time */
	{
		struct slab_plan *p = make(&c, SLAB_PLAN_QUASI, 0, 1, 0, 5, 0, 0, 0);
		CHECK(slab_plan_stats(p, c.f, c.n, &st) == 0);
		CHECK(st.max_live_pages == 3 && st.distinct_pages == 60);
		slab_plan_free(p);
		p = make(&c, SLAB_PLAN_QUASI, 0, 1, 0, 6, 0, 0, 0);
		CHECK(slab_plan_stats(p, c.f, c.n, &st) == 0);
		CHECK(st.max_live_pages <= 6);
		slab_plan_free(p);
		p = make(&c, SLAB_PLAN_QUASI, 0, 1, 0, 2, 0, 0, 0);    /* smaller than one sample */
		CHECK(p->n == 20);
		CHECK(slab_plan_stats(p, c.f, c.n, &st) == 0);
		CHECK(st.max_live_pages == 3);
		slab_plan_free(p);
	}
	ds_free(&a);
	ds_free(&b);
	ds_free(&c);
	free(mixed);
	free(withbig);
}

/* FFCV's QUASI_RANDOM (ffcv/traversal_order/quasi_random.py): pages shuffled, samples in
 * each page shuffled, a buffer of `window` pages; each step takes the next sample of one
 * live page chosen uniformly. Its randomness comes from its own little generator. */
static struct slab_plan *ffcv_order(const struct ds *d, uint64_t window, uint64_t seed)
{
	uint64_t nunits, *unit = units_of(d, &nunits), *start = calloc(nunits + 1, sizeof(*start));
	uint64_t *order = malloc(nunits * sizeof(*order)), *taken = calloc(nunits, sizeof(*taken));
	uint64_t *live = malloc(nunits * sizeof(*live)), nlive = 0, next = 0, x = seed | 1;
	uint32_t *samples = malloc(d->total * sizeof(*samples));
	struct slab_plan *plan = calloc(1, sizeof(*plan));

#define RND(n) ((x ^= x << 13, x ^= x >> 7, x ^= x << 17), x % (n))
	for (uint64_t g = 0; g < d->total; g++)
		start[unit[g] + 1]++;
	for (uint64_t u = 0; u < nunits; u++)
		start[u + 1] += start[u];
	for (uint64_t g = 0; g < d->total; g++)
		samples[g] = (uint32_t)g;               /* one file: global = local */
	for (uint64_t u = 0; u < nunits; u++) {
		order[u] = u;
		for (uint64_t i = start[u + 1] - start[u]; i > 1; i--) {
			uint64_t j = RND(i);
			uint32_t t = samples[start[u] + i - 1];
			samples[start[u] + i - 1] = samples[start[u] + j];
			samples[start[u] + j] = t;
		}
	}
	for (uint64_t i = nunits; i > 1; i--) {
		uint64_t j = RND(i), t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	plan->nfiles = 1;
	plan->ids = calloc(1, sizeof(*plan->ids));
	slab_file_identity(d->f[0], plan->ids);
	plan->total = plan->length = plan->n = d->total;
	plan->entries = malloc(d->total * sizeof(*plan->entries));
	for (uint64_t s = 0; s < d->total; s++) {
		uint64_t k, u;
		while (next < nunits && nlive < window)
			live[nlive++] = order[next++];
		k = RND(nlive);
		u = live[k];
		plan->entries[s] = (struct slab_plan_entry){ 0, samples[start[u] + taken[u]++] };
		if (taken[u] == start[u + 1] - start[u])
			live[k] = live[--nlive];
	}
#undef RND
	free(unit);
	free(start);
	free(order);
	free(taken);
	free(live);
	free(samples);
	return plan;
}

/* Mean number of distinct pages in consecutive batches of `batch` entries. */
static double batch_pages(const struct ds *d, const struct slab_plan *p, uint64_t batch)
{
	uint64_t nunits, *unit = units_of(d, &nunits), batches = 0, sum = 0;
	uint64_t *mark = calloc(nunits, sizeof(*mark));

	for (uint64_t b = 0; b + batch <= p->n; b += batch, batches++)
		for (uint64_t i = b; i < b + batch; i++) {
			uint64_t u = unit[global_index(d, p->entries[i])];
			if (mark[u] != b + 1) {
				mark[u] = b + 1;
				sum++;
			}
		}
	free(unit);
	free(mark);
	return batches ? (double)sum / (double)batches : 0;
}

static void test_randomness(void)
{
	enum { N = 20000 };
	uint64_t *sizes = malloc(N * sizeof(*sizes));
	struct ds a = { 0 };
	struct slab_plan_stats seq = { 0 }, rnd = { 0 }, qua = { 0 }, ffcv = { 0 };
	struct slab_plan *p;

	for (int i = 0; i < N; i++)
		sizes[i] = 60 + (uint64_t)(i * 7 % 80);         /* about 40 samples a page */
	add_file(&a, sizes, N, 4096, 1);
	p = make(&a, SLAB_PLAN_SEQUENTIAL, 0, 1, 0, 1, 0, 0, 0);
	CHECK(slab_plan_stats(p, a.f, a.n, &seq) == 0);
	slab_plan_free(p);
	p = make(&a, SLAB_PLAN_RANDOM, 0, 1, 0, 1, 3, 0, 0);
	CHECK(slab_plan_stats(p, a.f, a.n, &rnd) == 0);
	slab_plan_free(p);
	p = make(&a, SLAB_PLAN_QUASI, 0, 1, 0, 16, 3, 0, 0);
	CHECK(slab_plan_stats(p, a.f, a.n, &qua) == 0);
	{
		/* FFCV's reference at the same window (2 x batch size pages): ours has fewer
		 * neighbours from one page and more distinct pages per batch */
		struct slab_plan *f = ffcv_order(&a, 16, 3);
		double bq = batch_pages(&a, p, 8), bf = batch_pages(&a, f, 8);
		CHECK(slab_plan_stats(f, a.f, a.n, &ffcv) == 0);
		CHECK(ffcv.max_live_pages <= 16);
		CHECK(ffcv.same_page_neighbours > 0.03);
		CHECK(qua.same_page_neighbours < ffcv.same_page_neighbours / 10);
		CHECK(bq > bf && bq > 7.9);
		slab_plan_free(f);
	}
	slab_plan_free(p);
	CHECK(seq.displacement == 0);
	CHECK(seq.same_page_neighbours > 0.95);
	CHECK(seq.max_live_pages == 1);
	CHECK(seq.page_switches + 1 == seq.distinct_pages);
	CHECK(rnd.displacement > 0.3 && rnd.displacement < 0.37);      /* 1/3 in expectation */
	CHECK(rnd.same_page_neighbours < 0.01);
	CHECK(qua.displacement > 0.25);
	CHECK(qua.same_page_neighbours < 0.01);
	CHECK(qua.max_live_pages <= 16);
	CHECK(qua.distinct_pages == seq.distinct_pages && qua.samples == N);
	ds_free(&a);
	free(sizes);
}

/* Plan files live in a memory file, reached through /proc/self/fd. */
static int memfd = -1;

static const char *memfd_path(char *buf, size_t len)
{
	memfd = memfd_create("plan", 0);
	CHECK(memfd >= 0);
	snprintf(buf, len, "/proc/self/fd/%d", memfd);
	return buf;
}

static unsigned char *slurp(size_t *len)
{
	off_t n = lseek(memfd, 0, SEEK_END);
	unsigned char *b = malloc((size_t)n + 1);

	CHECK(pread(memfd, b, (size_t)n, 0) == n);
	*len = (size_t)n;
	return b;
}

static void spit(const unsigned char *b, size_t len)
{
	CHECK(ftruncate(memfd, 0) == 0);
	CHECK(pwrite(memfd, b, len, 0) == (ssize_t)len);
}

/* Plan bytes through a pipe (no size to trust, read to its end): the plan read back whole;
 * cut short or longer, refused; and a header declaring the largest plan there can be,
 * 2^32 - 1 entries (32 GiB), followed by a few: refused once the bytes stop, having taken
 * only about what came. */
static void read_piped(struct slab_plan *q, const unsigned char *b, size_t len)
{
	int fds[2];
	char path[64];

	CHECK(pipe(fds) == 0);
	CHECK(len < 65536 && write(fds[1], b, len) == (ssize_t)len);    /* fits the pipe */
	close(fds[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	slab_plan_read(q, path);
	close(fds[0]);
}

static void test_pipe(const unsigned char *b, size_t len)
{
	struct slab_plan *q = slab_plan_new();
	unsigned char *c = malloc(len + 8);

	CHECK(q && c);
	memcpy(c, b, len);
	read_piped(q, c, len);
	CHECK_STR(slab_plan_error(q), "");
	CHECK(slab_plan_count(q) == 15 && slab_plan_entries(q)[14].file == slab_le32(b + len - 8));
	read_piped(q, c, len - 3);
	CHECK(strstr(slab_plan_error(q), ": truncated plan: 15 entries announced, 117 bytes of entries") != NULL);
	memcpy(c + len, b + 4096, 8);
	read_piped(q, c, len + 1);
	CHECK(strstr(slab_plan_error(q), ": trailing bytes after the plan (15 entries announced)") != NULL);
	read_piped(q, c, 4000);
	CHECK(strstr(slab_plan_error(q), ": truncated or damaged plan header") != NULL);
	/* one file of 2^32 - 1 samples, world 1, the whole plan */
	slab_put64(c + 128 + 8, UINT32_MAX);
	slab_put32(c + 40, 0);
	slab_put32(c + 44, 1);
	slab_put64(c + 56, 0);
	slab_put64(c + 64, UINT32_MAX);
	slab_put64(c + 72, UINT32_MAX);
	slab_put64(c + 80, UINT32_MAX);
	slab_put32(c + 88, 1);
	memset(c + 160, 0, 32);         /* the second file's record */
	slab_put32(c + 96, 0);
	slab_put32(c + 96, slab_crc32c(0, c, 4096));
	read_piped(q, c, len);
	CHECK(strstr(slab_plan_error(q), ": truncated plan: 4294967295 entries announced, 120 bytes of entries") != NULL);
	/* and no more than a dataset may have: 2^32 samples */
	slab_put64(c + 128 + 8, (uint64_t)UINT32_MAX + 1);
	slab_put64(c + 64, (uint64_t)UINT32_MAX + 1);
	slab_put64(c + 72, (uint64_t)UINT32_MAX + 1);
	slab_put64(c + 80, (uint64_t)UINT32_MAX + 1);
	slab_put32(c + 96, 0);
	slab_put32(c + 96, slab_crc32c(0, c, 4096));
	read_piped(q, c, len);
	CHECK(strstr(slab_plan_error(q), ": inconsistent plan header") != NULL);
	free(c);
	slab_plan_free(q);
}

static void test_file(void)
{
	uint64_t *s1 = sizes_mixed(60, 4096, 9, 1);
	struct ds a = { 0 }, other = { 0 }, swapped = { 0 };
	struct slab_plan *p, *q;
	char path[64];
	unsigned char *b;
	size_t len;

	add_file(&a, s1, 30, 4096, 1);
	add_file(&a, s1 + 30, 30, 4096, 2);
	add_file(&other, s1, 30, 4096, 1);
	add_file(&other, s1 + 30, 30, 4096, 7);        /* same shape, other bytes */
	add_file(&swapped, s1 + 30, 30, 4096, 2);
	add_file(&swapped, s1, 30, 4096, 1);
	memfd_path(path, sizeof(path));
	p = make(&a, SLAB_PLAN_QUASI, 1, 3, SLAB_PLAN_PAD, 4, 12345678901234ull, 3, 5);
	CHECK(slab_plan_write(p, memfd) == 0);
	q = slab_plan_new();
	CHECK(q && slab_plan_read(q, path) == 0);
	CHECK(q->p.mode == SLAB_PLAN_QUASI && q->p.seed == 12345678901234ull && q->p.epoch == 3);
	CHECK(q->p.rank == 1 && q->p.world == 3 && q->p.window == 4 && q->p.flags == SLAB_PLAN_PAD);
	CHECK(q->start == 5 && q->length == 20 && q->n == 15 && q->total == 60 && q->nfiles == 2);
	CHECK(same_entries(p->entries, q->entries, p->n));
	CHECK(memcmp(p->ids, q->ids, 2 * sizeof(*p->ids)) == 0);
	CHECK(slab_plan_match(q, a.f, a.n) == 0);
	CHECK(slab_plan_match(q, other.f, other.n) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(q), "file 1 is not the one the plan was made for (content differs)");
	CHECK(slab_plan_match(q, swapped.f, swapped.n) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(q), "file 0 is not the one the plan was made for (content differs)");
	CHECK(slab_plan_match(q, a.f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(q), "the plan is for 2 files, 1 given");

	/* layout: a 4096-byte header, then 8-byte entries */
	b = slurp(&len);
	CHECK(len == 4096 + 15 * 8);
	CHECK(memcmp(b, "SLABPLAN", 8) == 0 && slab_le16(b + 8) == 1 && slab_le32(b + 12) == 4096);
	CHECK(slab_le32(b + 92) == slab_crc32c(0, b + 4096, 15 * 8));
	CHECK(slab_le32(b + 128 + 8) == 30 && slab_le32(b + 160 + 8) == 30);
	CHECK(slab_le32(b + 4096) == p->entries[0].file && slab_le32(b + 4100) == p->entries[0].sample);

	/* every single flipped byte is refused */
	{
		int accepted = 0;
		for (size_t off = 0; off < len; off++) {
			b[off] ^= 0x41;
			spit(b, len);
			if (slab_plan_read(q, path) == 0) {
				fprintf(stderr, "flip at %zu accepted\n", off);
				accepted++;
			}
			b[off] ^= 0x41;
		}
		CHECK(accepted == 0);
	}
	/* and every truncation */
	{
		int accepted = 0;
		for (size_t cut = 0; cut < len; cut++) {
			spit(b, cut);
			if (slab_plan_read(q, path) == 0)
				accepted++;
		}
		CHECK(accepted == 0);
		spit(b, len - 3);
		CHECK(slab_plan_read(q, path) == SLAB_ERR_CORRUPT);
		CHECK(strstr(slab_plan_error(q), "truncated plan: 15 entries announced, 117 bytes of entries") != NULL);
		spit(b, 100);
		CHECK(slab_plan_read(q, path) < 0);
		CHECK(strstr(slab_plan_error(q), ": truncated or damaged plan header") != NULL);
	}
	/* bytes after the entries the header announces */
	{
		unsigned char *longer = malloc(len + 8);

		CHECK(longer != NULL);
		memcpy(longer, b, len);
		memcpy(longer + len, b + 4096, 8);      /* one entry more, well formed */
		spit(longer, len + 8);
		CHECK(slab_plan_read(q, path) == SLAB_ERR_CORRUPT);
		CHECK(strstr(slab_plan_error(q), ": trailing bytes after the plan (15 entries announced)") != NULL);
		free(longer);
	}
	test_pipe(b, len);
	/* messages */
	spit((const unsigned char *)"hello, world", 12);
	CHECK(slab_plan_read(q, path) == SLAB_ERR_FORMAT);
	CHECK(strstr(slab_plan_error(q), ": not a plan file (bad magic number)") != NULL);
	b[8] = 2;
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, 4096));
	spit(b, len);
	CHECK(slab_plan_read(q, path) < 0);
	CHECK(strstr(slab_plan_error(q), ": plan format version 2 is not supported") != NULL);
	b[8] = 1;
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, 4096));
	b[4096 + 4] ^= 1;
	spit(b, len);
	CHECK(slab_plan_read(q, path) < 0);
	CHECK(strstr(slab_plan_error(q), ": plan entries checksum mismatch") != NULL);
	b[4096 + 4] ^= 1;
	b[50] ^= 1;
	spit(b, len);
	CHECK(slab_plan_read(q, path) < 0);
	CHECK(strstr(slab_plan_error(q), ": plan header checksum mismatch") != NULL);
	b[50] ^= 1;
	/* an entry out of range, with both checksums made right: refused all the same */
	slab_put32(b + 4096 + 4, 30);
	slab_put32(b + 92, slab_crc32c(0, b + 4096, 15 * 8));
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, 4096));
	spit(b, len);
	CHECK(slab_plan_read(q, path) < 0);
	CHECK(strstr(slab_plan_error(q), ": entry 0 names sample 30 of file ") != NULL);
	/* a header whose numbers disagree, checksum made right */
	slab_put32(b + 4096 + 4, p->entries[0].sample);
	slab_put32(b + 92, slab_crc32c(0, b + 4096, 15 * 8));
	slab_put64(b + 72, 21);
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, 4096));
	spit(b, len);
	CHECK(slab_plan_read(q, path) < 0);
	CHECK(strstr(slab_plan_error(q), ": inconsistent plan header") != NULL);
	CHECK(slab_plan_read(q, "/nonexistent/plan") == SLAB_ERR_IO);
	CHECK_STR(slab_plan_error(q), "'/nonexistent/plan': No such file or directory");
	/* what a failed read leaves: the plan read before it */
	CHECK(slab_plan_count(q) == 15 && slab_plan_file_count(q) == 2 &&
	      slab_plan_file_ids(q)[1].samples == 30 && slab_plan_entries(q)[0].file == p->entries[0].file);
	free(b);
	close(memfd);
	slab_plan_free(q);
	slab_plan_free(p);
	ds_free(&a);
	ds_free(&other);
	ds_free(&swapped);
	free(s1);
}

/* ---- subsets ----------------------------------------------------------------------------- */

static struct slab_plan *make_sub(const struct ds *d, const uint64_t *sub, size_t n,
				  enum slab_plan_mode mode, uint32_t rank, uint32_t world,
				  unsigned flags, uint64_t window, uint64_t seed, uint64_t start)
{
	struct slab_plan_params p = { .size = sizeof(p), .mode = mode, .seed = seed, .epoch = 2,
				      .rank = rank, .world = world, .window = window, .flags = flags };
	struct slab_plan *plan = slab_plan_new();

	CHECK(plan != NULL);
	if (slab_plan_make_subset(plan, d->f, d->n, &p, sub, n, start) < 0) {
		fprintf(stderr, "slab_plan_make_subset: %s\n", slab_plan_error(plan));
		CHECK(0);
	}
	return plan;
}

/* About one sample in `every` of the dataset, from a small generator, in a scrambled order;
 * *n of them. */
static uint64_t *pick(const struct ds *d, unsigned every, unsigned seed, size_t *n)
{
	uint64_t *s = malloc((d->total ? d->total : 1) * sizeof(*s)), x = seed * 0x9e3779b97f4a7c15ull + 7;
	size_t k = 0;

	for (uint64_t g = 0; g < d->total; g++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((x >> 33) % every == 0)
			s[k++] = g;
	}
	for (size_t i = k; i > 1; i--) {
		uint64_t t;
		size_t j;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		j = (size_t)((x >> 33) % i);
		t = s[i - 1];
		s[i - 1] = s[j];
		s[j] = t;
	}
	*n = k;
	return s;
}

/* Every rank of a subset plan: the shares hold subset samples only, disjoint (drop-last) or
 * repeating fewer than world (pad), missing fewer than world (drop-last) or none (pad); the
 * header counts the subset. */
static void check_subset_shares(const struct ds *d, const uint64_t *sub, size_t n,
				enum slab_plan_mode mode, unsigned flags, uint32_t world)
{
	uint32_t *seen = calloc(d->total ? d->total : 1, sizeof(*seen));
	char *in = calloc(d->total ? d->total : 1, 1);
	int pad = !!(flags & SLAB_PLAN_PAD);
	uint64_t per = n ? (pad ? (n + world - 1) / world : n / world) : 0, missing = 0, extra = 0;

	for (size_t i = 0; i < n; i++)
		in[sub[i]] = 1;
	for (uint32_t r = 0; r < world; r++) {
		struct slab_plan *p = make_sub(d, sub, n, mode, r, world, flags, 3, 7, 0);
		CHECK(p->n == per && p->length == per && p->total == d->total);
		CHECK(p->subset == n && slab_plan_subset_count(p) == n);
		CHECK(p->p.flags == (flags | SLAB_PLAN_SUBSET));
		for (uint64_t i = 0; i < p->n; i++) {
			uint64_t g = global_index(d, p->entries[i]);
			CHECK(in[g]);
			seen[g]++;
		}
		slab_plan_free(p);
	}
	for (size_t i = 0; i < n; i++) {
		if (!seen[sub[i]])
			missing++;
		else
			extra += seen[sub[i]] - 1;
	}
	if (pad)
		CHECK(missing == 0 && extra == per * world - n && extra < world);
	else
		CHECK(extra == 0 && missing == n - per * world && missing < world);
	free(seen);
	free(in);
}

static void test_subset(void)
{
	uint64_t *s1 = sizes_mixed(300, 4096, 1, 1), *s2 = sizes_mixed(77, 4096, 2, 0);
	uint64_t *mixed = sizes_mixed(600, 4096, 3, 0);
	struct ds a = { 0 }, b = { 0 }, m = { 0 };
	size_t na, nb, nm;
	uint64_t *suba, *subb, *subm, all[600];

	add_file(&a, s1, 300, 4096, 1);                 /* large samples among them */
	add_file(&b, s2, 77, 8192, 2);                  /* three files, one empty, two page sizes */
	add_file(&b, NULL, 0, 4096, 3);
	add_file(&b, s1, 120, 4096, 4);
	add_file(&m, mixed, 600, 4096, 5);              /* pages of one unit each */
	suba = pick(&a, 3, 1, &na);
	subb = pick(&b, 4, 2, &nb);
	subm = pick(&m, 5, 3, &nm);
	CHECK(na > 50 && nb > 30 && nm > 60);
	for (int mode = SLAB_PLAN_SEQUENTIAL; mode <= SLAB_PLAN_QUASI; mode++)
		for (uint32_t w = 1; w <= 5; w++)
			for (unsigned flags = 0; flags <= SLAB_PLAN_PAD; flags += SLAB_PLAN_PAD) {
				check_subset_shares(&a, suba, na, (enum slab_plan_mode)mode, flags, w);
				check_subset_shares(&b, subb, nb, (enum slab_plan_mode)mode, flags, w);
				check_subset_shares(&b, subb, 1, (enum slab_plan_mode)mode, flags, w);
			}

	for (int mode = SLAB_PLAN_SEQUENTIAL; mode <= SLAB_PLAN_QUASI; mode++) {
		enum slab_plan_mode md = (enum slab_plan_mode)mode;
		/* every sample as the subset, in any order: the plan without a subset */
		for (uint64_t g = 0; g < b.total; g++)
			all[g] = b.total - 1 - g;
		for (uint32_t r = 0; r < 3; r++) {
			struct slab_plan *full = make(&b, md, r, 3, SLAB_PLAN_PAD, 3, 7, 2, 0);
			struct slab_plan *sub = make_sub(&b, all, b.total, md, r, 3, SLAB_PLAN_PAD, 3, 7, 0);
			CHECK(full->n == sub->n && same_entries(full->entries, sub->entries, full->n));
			slab_plan_free(full);
			slab_plan_free(sub);
		}
		/* the set decides, not the order given; --start is the tail */
		{
			uint64_t *sorted = malloc(nb * sizeof(*sorted)), k = 0;
			struct slab_plan *p1, *p2, *tail;
			for (uint64_t g = 0; g < b.total; g++)
				for (size_t i = 0; i < nb; i++)
					if (subb[i] == g)
						sorted[k++] = g;
			p1 = make_sub(&b, subb, nb, md, 1, 2, 0, 4, 9, 0);
			p2 = make_sub(&b, sorted, nb, md, 1, 2, 0, 4, 9, 0);
			tail = make_sub(&b, subb, nb, md, 1, 2, 0, 4, 9, 5);
			CHECK(p1->n == p2->n && same_entries(p1->entries, p2->entries, p1->n));
			CHECK(p1->subset_crc == p2->subset_crc && p1->subset_crc != 0);
			CHECK(tail->n == p1->n - 5 && same_entries(tail->entries, p1->entries + 5, tail->n));
			slab_plan_free(p1);
			slab_plan_free(p2);
			slab_plan_free(tail);
			free(sorted);
		}
		/* the empty subset: an empty plan */
		{
			struct slab_plan *p = make_sub(&b, NULL, 0, md, 0, 2, SLAB_PLAN_PAD, 4, 9, 0);
			CHECK(p->n == 0 && p->length == 0 && p->subset == 0 && p->subset_crc == 0);
			CHECK(p->p.flags & SLAB_PLAN_SUBSET);
			slab_plan_free(p);
		}
	}
	/* sequential over one rank: the subset in file order; its displacement is 0 */
	{
		struct slab_plan_stats st = { .size = sizeof(st) };
		struct slab_plan *p = make_sub(&b, subb, nb, SLAB_PLAN_SEQUENTIAL, 0, 1, 0, 1, 0, 0);
		for (uint64_t i = 1; i < p->n; i++)
			CHECK(global_index(&b, p->entries[i - 1]) < global_index(&b, p->entries[i]));
		CHECK(slab_plan_stats(p, b.f, b.n, &st) == 0);
		CHECK(st.samples == nb && st.displacement == 0);
		slab_plan_free(p);
		p = make_sub(&b, subb, nb, SLAB_PLAN_RANDOM, 0, 1, 0, 1, 3, 0);
		CHECK(slab_plan_stats(p, b.f, b.n, &st) == 0);
		CHECK(st.displacement > 0.2);
		slab_plan_free(p);
	}
	/* quasi over the subset's pages: the window bounds them, each page is read in one stay
	 * with a window of one, and exactly the pages holding subset samples are read */
	{
		uint64_t nunits, *unit = units_of(&m, &nunits), held = 0;
		char *mark = calloc(nunits, 1);
		struct slab_plan_stats st = { .size = sizeof(st) };
		for (size_t i = 0; i < nm; i++)
			if (!mark[unit[subm[i]]]) {
				mark[unit[subm[i]]] = 1;
				held++;
			}
		for (uint64_t w = 1; w <= 9; w++) {
			struct slab_plan *p = make_sub(&m, subm, nm, SLAB_PLAN_QUASI, 0, 1, 0, w, w, 0);
			CHECK(p->n == nm);
			CHECK(slab_plan_stats(p, m.f, m.n, &st) == 0);
			CHECK(st.max_live_pages <= w && st.distinct_pages == held);
			if (w == 1)
				CHECK(st.page_switches + 1 == st.distinct_pages);
			slab_plan_free(p);
		}
		/* the same over the whole dataset reads every page */
		{
			struct slab_plan *p = make(&m, SLAB_PLAN_QUASI, 0, 1, 0, 4, 4, 0, 0);
			CHECK(slab_plan_stats(p, m.f, m.n, &st) == 0);
			CHECK(st.distinct_pages == nunits && held < nunits);
			slab_plan_free(p);
		}
		free(unit);
		free(mark);
	}
	/* bad subsets and flags */
	{
		struct slab_plan_params p = { .size = sizeof(p), .mode = SLAB_PLAN_QUASI, .world = 1,
					      .window = 4 };
		struct slab_plan *plan = slab_plan_new();
		uint64_t bad[4] = { 5, 9, b.total, 3 }, dup[4] = { 5, 9, 12, 9 };
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, bad, 4, 0) == SLAB_ERR_RANGE);
		CHECK(strcmp(slab_plan_error(plan), "subset entry 2: sample 197 is out of range (the dataset has 197 samples)") == 0 ||
		      b.total != 197);
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, dup, 4, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(plan), "subset entry 3: sample 9 is already entry 1");
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, NULL, 2, 0) == SLAB_ERR_INVAL);
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, dup, 3, 4) == SLAB_ERR_RANGE);
		CHECK_STR(slab_plan_error(plan), "start 4 is past the end of the plan (3 entries)");
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, dup, 3, 3) == 0 && slab_plan_count(plan) == 0);
		/* a subset plan's parameters, SLAB_PLAN_SUBSET and all, make the next epoch's */
		p = *slab_plan_params(plan);
		CHECK(p.flags == SLAB_PLAN_SUBSET);
		p.epoch++;
		CHECK(slab_plan_make_subset(plan, b.f, b.n, &p, dup, 3, 0) == 0 && slab_plan_count(plan) == 3);
		CHECK(slab_plan_make(plan, b.f, b.n, &p, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(plan), "SLAB_PLAN_SUBSET needs the subset: make the plan with slab_plan_make_subset()");
		p.flags = 0x8;
		CHECK(slab_plan_make(plan, b.f, b.n, &p, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(plan), "unknown plan flags 0x8");
		CHECK(slab_plan_count(plan) == 3 && slab_plan_subset_count(plan) == 3);
		slab_plan_free(plan);
	}
	ds_free(&a);
	ds_free(&b);
	ds_free(&m);
	free(s1);
	free(s2);
	free(mixed);
	free(suba);
	free(subb);
	free(subm);
}

/* A header made right again after a change: both checksums. */
static void reseal(unsigned char *b, size_t len)
{
	slab_put32(b + 92, slab_crc32c(0, b + 4096, len - 4096));
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, 4096));
}

static void test_subset_file(void)
{
	uint64_t *s1 = sizes_mixed(60, 4096, 9, 1), sub[12], sorted[12];
	struct ds a = { 0 };
	struct slab_plan *p, *q, *cat;
	const struct slab_plan *two[2];
	unsigned char *b, enc[4 * 12];
	char path[64];
	size_t len;

	add_file(&a, s1, 30, 4096, 1);
	add_file(&a, s1 + 30, 30, 4096, 2);
	for (int i = 0; i < 12; i++)
		sub[i] = (uint64_t)(59 - 5 * i);        /* 59, 54, ... 4 */
	for (int i = 0; i < 12; i++)
		sorted[i] = sub[11 - i];
	for (int i = 0; i < 12; i++)
		slab_put32(enc + 4 * i, (uint32_t)sorted[i]);
	memfd_path(path, sizeof(path));
	p = make_sub(&a, sub, 12, SLAB_PLAN_QUASI, 1, 3, SLAB_PLAN_PAD, 4, 5, 1);
	CHECK(p->length == 4 && p->n == 3 && p->subset == 12);
	CHECK(p->subset_crc == slab_crc32c(0, enc, sizeof(enc)));
	CHECK(slab_plan_write(p, memfd) == 0);
	q = slab_plan_new();
	CHECK(q && slab_plan_read(q, path) == 0);
	CHECK(q->p.flags == (SLAB_PLAN_PAD | SLAB_PLAN_SUBSET) && q->subset == 12 && q->total == 60);
	CHECK(q->subset_crc == p->subset_crc && q->members == NULL);
	CHECK(q->start == 1 && q->length == 4 && q->n == 3 && same_entries(p->entries, q->entries, 3));
	CHECK(slab_plan_subset_count(q) == 12 && slab_plan_subset_crc(q) == p->subset_crc);
	CHECK(slab_plan_match(q, a.f, a.n) == 0);
	/* the layout: minor version 1, S at 104, the CRC at 112, the rest reserved */
	b = slurp(&len);
	CHECK(len == 4096 + 3 * 8);
	CHECK(slab_le16(b + 8) == 1 && slab_le16(b + 10) == 1 && slab_le32(b + 20) == 5);
	CHECK(slab_le64(b + 80) == 60 && slab_le64(b + 104) == 12 && slab_le32(b + 112) == p->subset_crc);
	for (int k = 100; k < 128; k++)
		if (k < 104 || k >= 116)
			CHECK(b[k] == 0);
	/* stats of a plan read back: the subset is not listed, displacement is over the dataset */
	{
		struct slab_plan_stats st = { .size = sizeof(st) };
		CHECK(slab_plan_stats(q, a.f, a.n, &st) == 0 && st.samples == 3);
	}
	/* put together, the subset's size and CRC stay */
	two[0] = p;
	two[1] = q;
	cat = slab_plan_new();
	CHECK(slab_plan_concat(cat, two, 2) == 0 && slab_plan_count(cat) == 6);
	CHECK(slab_plan_subset_count(cat) == 12 && slab_plan_subset_crc(cat) == p->subset_crc);
	slab_plan_free(cat);
	/* what the reader refuses: S above N, L not from S, subset fields without the flag, the
	 * flag without... an S that fits (then it is a plan of S samples) */
	{
		unsigned char *c = malloc(len);
		const struct { size_t off; int width; uint64_t v; } bad[] = {
			{ 104, 8, 61 },                 /* S > N */
			{ 104, 8, 15 },                 /* L = 5 with pad, not 4 */
			{ 20, 4, 1 },                   /* no flag, but S and CRC set */
			{ 20, 4, 0x9 },                 /* an unknown flag */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(c, b, len);
			if (bad[i].width == 8)
				slab_put64(c + bad[i].off, bad[i].v);
			else
				slab_put32(c + bad[i].off, (uint32_t)bad[i].v);
			reseal(c, len);
			spit(c, len);
			CHECK(slab_plan_read(q, path) == SLAB_ERR_CORRUPT);
			CHECK(strstr(slab_plan_error(q), ": inconsistent plan header") != NULL);
		}
		/* S = 10, 11 or 12 all give L = 4 with pad over 3 ranks: read, not checked further */
		memcpy(c, b, len);
		slab_put64(c + 104, 10);
		reseal(c, len);
		spit(c, len);
		CHECK(slab_plan_read(q, path) == 0 && q->subset == 10);
		/* a plan without subset whose reserved bytes 104 .. 115 are not zero */
		free(c);
		slab_plan_free(p);
		p = make(&a, SLAB_PLAN_RANDOM, 0, 1, 0, 4, 5, 0, 0);
		CHECK(ftruncate(memfd, 0) == 0 && lseek(memfd, 0, SEEK_SET) == 0);
		CHECK(slab_plan_write(p, memfd) == 0);
		free(b);
		b = slurp(&len);
		CHECK(slab_le16(b + 10) == 0 && slab_le64(b + 104) == 0 && slab_le32(b + 112) == 0);
		CHECK(slab_plan_read(q, path) == 0 && !(q->p.flags & SLAB_PLAN_SUBSET));
		CHECK(slab_plan_subset_count(q) == 60 && slab_plan_subset_crc(q) == 0);
		slab_put32(b + 112, 1);
		reseal(b, len);
		spit(b, len);
		CHECK(slab_plan_read(q, path) == SLAB_ERR_CORRUPT);
		CHECK(strstr(slab_plan_error(q), ": inconsistent plan header") != NULL);
		/* the minor version is not checked */
		slab_put32(b + 112, 0);
		slab_put16(b + 10, 7);
		reseal(b, len);
		spit(b, len);
		CHECK(slab_plan_read(q, path) == 0);
	}
	free(b);
	close(memfd);
	slab_plan_free(p);
	slab_plan_free(q);
	ds_free(&a);
	free(s1);
}

int main(void)
{
	test_shares();
	test_start_and_determinism();
	test_window();
	test_randomness();
	test_file();
	test_subset();
	test_subset_file();
	return UNIT_DONE();
}
