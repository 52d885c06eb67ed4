/* plan.c: epoch orderings over .slab datasets: sequential, uniform random, and quasi-random
 * (page-aware, a bounded window of live pages), split across ranks; and the plan file.
 * man/shuffle-plan.1 states the algorithm draw by draw; man/slab-plan.5 the file. */
#include "plan.h"
#include "fault.h"
#include "reader.h"
#include "crc32c.h"
#include "error.h"
#include "errfmt.h"
#include "format.h"
#include "io.h"
#include "sized.h"
#include "slab.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* struct slab_plan_entry in memory is the file's entry where integers are little-endian. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ENTRIES_AS_STORED 1
#else
#define ENTRIES_AS_STORED 0
#endif

/* ---- the generator: xoshiro256** seeded through splitmix64 ----------------------------- */

struct rng {
	uint64_t s[4];
};

/* splitmix64's output function (a bijection of 64-bit words). */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The generator runs twice per sample of a quasi plan: a call each time would cost more than
 * the draw. */
#define HOT static inline __attribute__((always_inline))

HOT uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

HOT uint64_t rng_next(struct rng *r)
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
HOT uint64_t rng_below(struct rng *r, uint64_t n)
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

/* One stream per use: 1 orders the whole dataset (the same for every rank), 2 + rank
 * interleaves a rank's window. Each input goes through the bijection mix64 in turn, so a
 * change of any one of them gives an unrelated state. */
static void rng_init(struct rng *r, uint64_t dataset, const struct slab_plan_params *p,
		     uint64_t stream)
{
	uint64_t x = mix64(mix64(mix64(mix64(dataset) ^ p->seed) ^ p->epoch) ^ stream);

	for (int i = 0; i < 4; i++) {
		x += 0x9e3779b97f4a7c15ull;
		r->s[i] = mix64(x);
	}
}

static void id_bytes(const struct slab_file_id *id, unsigned char b[SLAB_PLAN_ID_SIZE])
{
	memset(b, 0, SLAB_PLAN_ID_SIZE);
	slab_put64(b, id->file_size);
	slab_put64(b + 8, id->samples);
	slab_put32(b + 16, id->header_crc);
	slab_put32(b + 20, id->table_crc);
}

/* FNV-1a 64 over the identity records exactly as a plan file stores them. */
static uint64_t dataset_hash(const struct slab_file_id *ids, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < n; i++) {
		unsigned char b[SLAB_PLAN_ID_SIZE];
		id_bytes(&ids[i], b);
		for (size_t k = 0; k < sizeof(b); k++) {
			h ^= b[k];
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

static uint64_t per_rank(uint64_t total, uint32_t world, unsigned flags)
{
	if (!total)
		return 0;
	return flags & SLAB_PLAN_PAD ? (total + world - 1) / world : total / world;
}

/* ---- the dataset as units ---------------------------------------------------------------- */

/* A unit is what must be in memory to read a sample: one page with the samples that start
 * on it, or the whole pages of a sample larger than a page. Its samples are consecutive.
 * The samples planned are numbered by position: the global index itself, or with a subset
 * the place in the subset's increasing list (sub), whose units are the dataset's units that
 * hold some of its samples, with those samples only. */
struct dataset {
	uint32_t nfiles;
	uint64_t all;           /* samples in the files */
	uint64_t total;         /* samples planned: all, or the subset's */
	const uint32_t *sub;    /* position -> global index, increasing; NULL: the same */
	uint64_t *fstart;       /* first global sample index of each file, [nfiles + 1] */
	uint64_t nunits;
	uint32_t *ufirst;       /* [nunits + 1]: position of a unit's first sample */
	uint32_t *upages;       /* pages it occupies */
};

/* The global index of the sample at position pos. */
static uint64_t global_at(const struct dataset *d, uint64_t pos)
{
	return d->sub ? d->sub[pos] : pos;
}

static void dataset_free(struct dataset *d)
{
	free(d->fstart);
	free(d->ufirst);
	free(d->upages);
}

/* The file holding global sample g: the last f with fstart[f] <= g. */
static uint32_t file_of(const struct dataset *d, uint64_t g)
{
	uint32_t lo = 0, hi = d->nfiles;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->fstart[mid] <= g)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The pages a sample of `size` bytes occupies when pages are `ps` bytes. */
static uint32_t span_pages(uint64_t size, uint64_t ps)
{
	uint64_t n = size > ps ? size / ps + (size % ps != 0) : 1;

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The files' sample counts: d->fstart and d->all. */
static int dataset_count(struct dataset *d, struct slab *const *files, uint32_t nfiles,
			 struct slab_err *e)
{
	memset(d, 0, sizeof(*d));
	d->nfiles = nfiles;
	d->fstart = calloc((size_t)nfiles + 1, sizeof(*d->fstart));
	if (!d->fstart)
		return slab_fail(e, SLAB_ERR_NOMEM, NULL, "out of memory");
	for (uint32_t f = 0; f < nfiles; f++) {
		d->fstart[f] = d->all;
		d->all += slab_count(files[f]);
	}
	d->fstart[nfiles] = d->all;
	d->total = d->all;
	/* Samples are numbered with 32 bits inside the plan code and in plan entries. */
	if (d->all > UINT32_MAX) {
		return slab_fail(e, SLAB_ERR_INVAL, NULL,
				 "a dataset of %llu samples is too large (at most %lu)",
				 (unsigned long long)d->all, (unsigned long)UINT32_MAX);
	}
	return 0;
}

/* The units of the samples planned (d->total of them, the subset's when d->sub is set),
 * after dataset_count(). Every sample's record is read: a unit's bounds depend on its
 * neighbours, planned or not. Through slab_sample_span(): slab_sample() copies fields not
 * needed here, twice the time on ten million samples. */
static int dataset_units(struct dataset *d, struct slab *const *files, struct slab_err *e)
{
	const uint32_t *sub = d->sub;
	uint64_t cap = 0, u = 0, g = 0, k = 0, unit = 0, taken = UINT64_MAX, nsub = d->total;
	uint32_t unit_pages = 1;

	for (uint32_t f = 0; f < d->nfiles; f++) {
		struct slab *s = files[f];
		uint64_t ps = slab_page_size(s), data = slab_data_offset(s), last_page = UINT64_MAX;
		uint64_t count = slab_count(s);
		int shift = __builtin_ctzll(ps);        /* a power of two: no division per sample */
		for (uint64_t i = 0; i < count; i++, g++) {
			uint64_t off, size, page;
			uint32_t pages;
			int rc = slab_sample_span(s, i, &off, &size);

			if (rc < 0)
				return slab_fail_from(e, rc, slab_error(s));
			/* The page is derived from the checked offset, not taken from the record. */
			page = (off - data) >> shift;
			pages = span_pages(size, ps);
			if (pages > 1 || page != last_page) {
				unit++;         /* the dataset's units, numbered from 1 */
				unit_pages = pages;
			}
			/* a large sample's pages are its own: whatever follows starts a new unit */
			last_page = pages > 1 ? UINT64_MAX : page;
			if (sub && (k == nsub || sub[k] != g))
				continue;
			/* the sample is planned, at position k: the first of its unit starts one */
			if (unit != taken) {
				if (u + 1 >= cap) {
					uint64_t ncap = cap ? cap * 2 : 1024;
					uint32_t *a = realloc(d->ufirst, ncap * sizeof(*a));
					if (!a)
						goto nomem;
					d->ufirst = a;
					a = realloc(d->upages, ncap * sizeof(*a));
					if (!a)
						goto nomem;
					d->upages = a;
					cap = ncap;
				}
				d->ufirst[u] = (uint32_t)k;
				d->upages[u] = unit_pages;
				u++;
				taken = unit;
			}
			k++;
		}
	}
	if (!d->ufirst) {
		d->ufirst = malloc(sizeof(*d->ufirst));
		if (!d->ufirst)
			goto nomem;
	}
	d->ufirst[u] = (uint32_t)d->total;
	d->nunits = u;
	return 0;
nomem:
	return slab_fail(e, SLAB_ERR_NOMEM, NULL, "out of memory");
}

static void shuffle32(struct rng *r, uint32_t *a, uint64_t n)
{
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = rng_below(r, i);
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* shuffle32() of 16-bit numbers: the same draws, the same moves. */
static void shuffle16(struct rng *r, uint16_t *a, uint64_t n)
{
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = rng_below(r, i);
		uint16_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

/*
 * A uniform permutation of 0 .. n-1 into out, made in cache-sized
 * pieces (Rao and Sandelius's method): each number in turn draws one of 256 buckets (the top
 * 8 bits of a draw), the buckets are laid out in order with their numbers in order, then
 * each bucket is shuffled, bucket 0 first. Every permutation is equally likely, and a plain
 * Fisher-Yates over tens of megabytes would wait on memory at every step.
 */
static void permutation(struct rng *r, uint32_t *out, uint64_t n)
{
	uint64_t at[256] = { 0 }, count[256];
	struct rng replay = *r;

	for (uint64_t i = 0; i < n; i++)
		at[rng_next(r) >> 56]++;
	memcpy(count, at, sizeof(count));
	for (uint64_t b = 0, sum = 0; b < 256; b++) {
		uint64_t c = at[b];
		at[b] = sum;
		sum += c;
	}
	/* the same draws again: the generator ends where the first pass left it */
	for (uint64_t i = 0; i < n; i++)
		out[at[rng_next(&replay) >> 56]++] = (uint32_t)i;
	for (uint64_t b = 0; b < 256; b++)
		shuffle32(r, out + at[b] - count[b], count[b]);
}

/* ---- quasi-random: groups and the window ------------------------------------------------- */

/* A group is the part of one unit that falls in a rank's share. Its samples (local indexes
 * in its file) are list[base, base + count), or first + short_list[base, base + count);
 * those before base + taken are already out. Only what every step reads is here; the
 * unit and the cost are in arrays of their own. */
struct group {
	uint32_t file;
	uint32_t base;
	uint32_t count;
	uint32_t taken;
	uint32_t first;         /* short lists: the local index of the group's first sample */
};

#define NONE UINT32_MAX

/* The window: the groups of the share and the wheel they wait on. A wheel slot is a stack
 * of groups (head, then link); busy has a bit per slot that is not empty, so that a step
 * finds the next group with a count of trailing zeros rather than a test per slot (about
 * one group waits per slot: a test per slot is a branch mispredicted every other step). */
struct window {
	const struct dataset *d;
	uint64_t budget;        /* the window, in pages or bytes */
	struct group *gr;
	uint32_t *unit;         /* each group's unit */
	uint64_t *cost;         /* each group's cost */
	/* The groups' samples in the order they go out: as local indexes, or when every group
	 * is one run of consecutive samples of at most 65536 (no subset, no share wrapping onto
	 * its own unit) as 16-bit offsets from the group's first: half the memory, for plans of
	 * many small samples (ten million of one byte: 20 MB less, fresh pages the kernel
	 * clears). */
	uint32_t *list;
	uint16_t *short_list;
	uint64_t ngroups, next; /* groups, and the first not admitted yet */
	uint64_t live;          /* cost of the groups admitted and not done */
	uint64_t first_from;    /* the position of group 0's first sample */
	uint32_t *head, *link;
	uint64_t *busy, mask;   /* mask: slots - 1; slots a power of two, at least 64 */
};

/*
 * What the steps change, as one value: the step loop keeps it in registers. The slot `now`
 * is taken off the wheel whole into cur, whose groups are then popped in turn; a push due
 * now goes on top of cur, as it would on top of the slot. The busy bits of now's word of 64
 * slots are in bits, not in memory (whose word is zero but for pushes a lap of the wheel
 * ahead): a step then finds the next slot without waiting on the store of the step before.
 */
struct steps {
	struct rng r;
	uint64_t now;
	uint64_t bits;          /* busy slots of now's word, after now */
	uint64_t nlive;         /* L, the groups admitted and not done */
	uint32_t cur;           /* the rest of slot now, top first; NONE when empty */
	int admit;              /* a group left (or none came yet): try to admit */
};

/* Group g waits until time t (now <= t < now + slots). */
HOT void wheel_push(const struct window *w, struct steps *st, uint64_t t, uint32_t g)
{
	uint64_t slot = t & w->mask, bit, near;

	if (t == st->now) {
		w->link[g] = st->cur;
		st->cur = g;
		return;
	}
	w->link[g] = w->head[slot];
	w->head[slot] = g;
	/* no branch: whether t is in now's word is a coin toss each step */
	bit = 1ull << (t & 63);
	near = -(uint64_t)((t ^ st->now) < 64);
	st->bits |= bit & near;
	w->busy[slot >> 6] |= bit & ~near;
}

/* Slot `now` is empty, and not all are: move to the next one with a group and take it. */
HOT void wheel_advance(const struct window *w, struct steps *st)
{
	uint64_t s;

	while (!st->bits) {
		uint64_t *word;
		st->now = (st->now | 63) + 1;
		word = &w->busy[(st->now & w->mask) >> 6];
		st->bits = *word;
		*word = 0;
	}
	st->now = (st->now & ~(uint64_t)63) + (uint64_t)__builtin_ctzll(st->bits);
	st->bits &= st->bits - 1;
	s = st->now & w->mask;
	st->cur = w->head[s];
	w->head[s] = NONE;
}

/* A group's samples, in share order, into list[0, count): from position `from` to the end
 * of its unit, then (a share that wraps round onto its own unit: a dataset of one unit)
 * from the unit's first position on. Filled when the group enters the window, so that its
 * shuffle finds the list in cache. */
static void group_fill(const struct dataset *d, const struct group *g, uint32_t unit,
		       uint64_t from, uint32_t *list)
{
	uint64_t end = d->ufirst[unit + 1], run = end - from < g->count ? end - from : g->count;
	uint32_t base = (uint32_t)d->fstart[g->file];

	if (d->sub) {
		for (uint64_t i = 0; i < run; i++)
			list[i] = d->sub[from + i] - base;
		for (uint64_t i = run; i < g->count; i++)
			list[i] = d->sub[d->ufirst[unit] + i - run] - base;
	} else {
		for (uint64_t i = 0; i < run; i++)
			list[i] = (uint32_t)(from + i) - base;
		for (uint64_t i = run; i < g->count; i++)
			list[i] = (uint32_t)(d->ufirst[unit] + i - run) - base;
	}
}

/* Admit groups while the next one fits (one alone always may, however large); then fill
 * and shuffle each newcomer's list (small enough to stay in cache while it is shuffled; it
 * is read in order afterwards) and give it a slot. */
static __attribute__((noinline)) void window_admit(struct window *w, struct steps *st)
{
	uint64_t admitted = w->next;

	while (w->next < w->ngroups &&
	       (!st->nlive || (w->live <= w->budget && w->cost[w->next] <= w->budget - w->live))) {
		w->live += w->cost[w->next];
		st->nlive++;
		w->next++;
	}
	for (; admitted < w->next; admitted++) {
		struct group *g = &w->gr[admitted];
		if (w->short_list) {
			uint16_t *a = w->short_list + g->base;
			for (uint32_t i = 0; i < g->count; i++)
				a[i] = (uint16_t)i;
			shuffle16(&st->r, a, g->count);
		} else {
			uint32_t *a = w->list + g->base;
			group_fill(w->d, g, w->unit[admitted],
				   admitted ? w->d->ufirst[w->unit[admitted]] : w->first_from, a);
			shuffle32(&st->r, a, g->count);
		}
		wheel_push(w, st, st->now + rng_below(&st->r, st->nlive), (uint32_t)admitted);
	}
	st->admit = 0;
}

/* n steps of the window; their entries to out, or nowhere (NULL: the positions before
 * --start); with the short lists or not. Inlined for each, so the loop tests neither. */
HOT void window_steps(struct window *w, struct steps *state, uint64_t n, struct slab_plan_entry *out,
		      const int short_lists)
{
	struct steps st = *state;
	struct group *gr = w->gr;
	const uint32_t *list = w->list;
	const uint16_t *short_list = w->short_list;

	for (uint64_t i = 0; i < n; i++) {
		struct group *g;
		uint32_t gi, taken;
		if (__builtin_expect(st.admit, 0)) {
			struct steps tmp = st;  /* st's address stays here: registers */
			window_admit(w, &tmp);
			st = tmp;
		}
		if (st.cur == NONE)
			wheel_advance(w, &st);
		gi = st.cur;
		st.cur = w->link[gi];
		g = &gr[gi];
		taken = g->taken;
		/* the next cache line of the group's list: wanted 16 (short: 32) visits on, some
		 * 16 L steps from now; by then the line read now is long out of the cache */
		if (short_lists) {
			if (taken + 32 < g->count)
				__builtin_prefetch(short_list + g->base + taken + 32);
			if (out)
				out[i] = (struct slab_plan_entry){ g->file,
								   g->first + short_list[g->base + taken] };
		} else {
			if (taken + 16 < g->count)
				__builtin_prefetch(list + g->base + taken + 16);
			if (out)
				out[i] = (struct slab_plan_entry){ g->file, list[g->base + taken] };
		}
		g->taken = ++taken;
		if (taken == g->count) {
			w->live -= w->cost[gi];
			st.nlive--;
			st.admit = 1;
			continue;
		}
		wheel_push(w, &st, st.now + st.nlive / 2 + rng_below(&st.r, st.nlive), gi);
	}
	*state = st;
}

/*
 * Cut the rank's share out of the shuffled units (positions [from, from + len) of the global
 * sequence, cyclically) into groups, then interleave them through a window: groups enter in
 * order while their cost fits (the first one always may), their samples shuffled; each live
 * group waits on a timing wheel of slots; the step takes the group in the first non-empty slot,
 * emits its next sample, and puts it back L/2 to 3L/2 slots later (L: groups live), so about
 * one group waits per slot. So consecutive samples come from different pages and a page's
 * samples spread evenly over its stay, which FFCV's one-random-live-page-per-step does not
 * do, for the same memory (man/shuffle-plan.1 has the numbers).
 *
 * Entries [start, len) go to out. With crc, the CRC-32C of the entries as stored is worked
 * out block by block while they are in cache (slab_plan_write() would read them again).
 */
static int quasi(const struct dataset *d, struct slab *const *files, const struct slab_plan_params *p,
		 uint64_t hash, uint64_t from, uint64_t len, uint64_t start, struct slab_plan_entry *out,
		 uint32_t *crc)
{
	enum { BLOCK = 4096 };  /* entries per CRC: 32 KiB, in the first-level cache */
	struct window w = { .d = d, .budget = p->window };
	struct steps st = { .cur = NONE, .admit = 1 };
	uint32_t *order = NULL, prev_unit = NONE;
	uint64_t pos = 0, k, skip, min_cost = UINT64_MAX, most, slots;
	int bytes = !!(p->flags & SLAB_PLAN_MEMORY), ret = SLAB_ERR_NOMEM, short_ok = !d->sub;

	if (!len)
		return 0;
	order = malloc((d->nunits ? d->nunits : 1) * sizeof(*order));
	w.gr = malloc((d->nunits + 1) * sizeof(*w.gr));
	w.unit = malloc((d->nunits + 1) * sizeof(*w.unit));
	w.cost = malloc((d->nunits + 1) * sizeof(*w.cost));
	w.link = malloc((d->nunits + 1) * sizeof(*w.link));
	if (!order || !w.gr || !w.unit || !w.cost || !w.link)
		goto out;
	rng_init(&st.r, hash, p, 1);
	permutation(&st.r, order, d->nunits);

	/* Find the unit holding position `from`, then walk the units from there. */
	for (k = 0, skip = from; ; k++) {
		uint64_t c = d->ufirst[order[k] + 1] - d->ufirst[order[k]];
		if (skip < c)
			break;
		skip -= c;
	}
	w.first_from = d->ufirst[order[k]] + skip;
	while (pos < len) {
		uint32_t un = order[k];
		uint64_t first = d->ufirst[un] + skip, c = d->ufirst[un + 1] - first;
		if (c > len - pos)
			c = len - pos;
		if (un == prev_unit) {
			/* a share that wraps round onto its own unit extends the same group */
			short_ok = 0;
		} else {
			uint32_t f = file_of(d, global_at(d, first));   /* a unit is in one file */
			uint64_t ps = slab_page_size(files[f]), cost = bytes ? d->upages[un] * ps : d->upages[un];
			w.gr[w.ngroups] = (struct group){ .file = f, .base = (uint32_t)pos,
							  .first = (uint32_t)(global_at(d, first) - d->fstart[f]) };
			w.unit[w.ngroups] = un;
			w.cost[w.ngroups] = cost;
			if (cost < min_cost)
				min_cost = cost;
			w.ngroups++;
			prev_unit = un;
		}
		w.gr[w.ngroups - 1].count += (uint32_t)c;
		if (w.gr[w.ngroups - 1].count > 65536)
			short_ok = 0;
		pos += c;
		skip = 0;
		k = k + 1 == d->nunits ? 0 : k + 1;
	}

	/* The wheel must outrun the longest wait, 3L/2 slots with L at most `most`: then a
	 * slot never holds groups due at different times, and its size changes nothing else. */
	most = min_cost ? p->window / min_cost : w.ngroups;
	most = most < 1 ? 1 : most > w.ngroups ? w.ngroups : most;
	for (slots = 64; slots < 2 * most + 2; slots <<= 1)
		;
	w.head = malloc(slots * sizeof(*w.head));
	w.busy = calloc(slots / 64, sizeof(*w.busy));
	if (short_ok)
		w.short_list = malloc(len * sizeof(*w.short_list));
	else
		w.list = malloc(len * sizeof(*w.list));
	if (!w.head || !w.busy || (!w.list && !w.short_list))
		goto out;
	memset(w.head, 0xff, slots * sizeof(*w.head));  /* NONE */
	w.mask = slots - 1;

	rng_init(&st.r, hash, p, 2 + (uint64_t)p->rank);
	if (short_ok)
		window_steps(&w, &st, start, NULL, 1);
	else
		window_steps(&w, &st, start, NULL, 0);
	for (pos = start; pos < len; pos += BLOCK) {
		uint64_t n = len - pos < BLOCK ? len - pos : BLOCK;
		if (short_ok)
			window_steps(&w, &st, n, out + (pos - start), 1);
		else
			window_steps(&w, &st, n, out + (pos - start), 0);
		if (crc)
			*crc = slab_crc32c(*crc, out + (pos - start), (size_t)n * SLAB_PLAN_ENTRY_SIZE);
	}
	ret = 0;
out:
	free(order);
	free(w.list);
	free(w.short_list);
	free(w.gr);
	free(w.unit);
	free(w.cost);
	free(w.head);
	free(w.link);
	free(w.busy);
	return ret;
}

/* ---- the handle ------------------------------------------------------------------------- */

struct slab_plan *slab_plan_new(void)
{
	return calloc(1, sizeof(struct slab_plan));
}

/* Free what the plan holds; the handle and its error stay. */
static void plan_clear(struct slab_plan *plan)
{
	free(plan->ids);
	free(plan->entries);
	free(plan->members);
	plan->ids = NULL;
	plan->entries = NULL;
	plan->members = NULL;
	plan->nfiles = 0;
	plan->n = plan->length = plan->start = plan->total = plan->subset = 0;
	plan->subset_crc = 0;
	plan->crc = 0;
	plan->crc_known = 0;
}

/* The plan made or read in from replaces what to held. */
static void plan_take(struct slab_plan *to, struct slab_plan *from)
{
	plan_clear(to);
	to->p = from->p;
	to->p.size = sizeof(to->p);
	to->nfiles = from->nfiles;
	to->ids = from->ids;
	to->total = from->total;
	to->length = from->length;
	to->start = from->start;
	to->n = from->n;
	to->entries = from->entries;
	to->subset = from->subset;
	to->subset_crc = from->subset_crc;
	to->members = from->members;
	to->crc = from->crc;
	to->crc_known = from->crc_known;
	from->ids = NULL;
	from->entries = NULL;
	from->members = NULL;
}

int slab_plan_concat(struct slab_plan *out, const struct slab_plan *const *plans, size_t n)
{
	struct slab_plan got;
	uint64_t total = 0, at = 0;

	if (n == 0)
		return slab_fail(&out->err, SLAB_ERR_INVAL, NULL, "no plans to put together");
	for (size_t i = 0; i < n; i++) {
		if (plans[i] == out)
			return slab_fail(&out->err, SLAB_ERR_INVAL, NULL,
					 "a plan cannot be put together into itself");
		if (plans[i]->nfiles != plans[0]->nfiles || plans[i]->total != plans[0]->total ||
		    memcmp(plans[i]->ids, plans[0]->ids,
			   plans[0]->nfiles * sizeof(*plans[0]->ids)) != 0)
			return slab_fail(&out->err, SLAB_ERR_INVAL, NULL,
					 "plan %zu is over other files than plan 0", i);
		if (plans[i]->n > UINT64_MAX / sizeof(struct slab_plan_entry) - total)
			return slab_fail(&out->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		total += plans[i]->n;
	}
	memset(&got, 0, sizeof(got));
	got.p = plans[0]->p;
	got.nfiles = plans[0]->nfiles;
	got.total = plans[0]->total;
	got.length = got.n = total;
	got.subset = plans[0]->subset;          /* its parameters: the subset's size and CRC */
	got.subset_crc = plans[0]->subset_crc;
	got.ids = malloc((got.nfiles ? got.nfiles : 1) * sizeof(*got.ids));
	got.entries = malloc((total ? total : 1) * sizeof(*got.entries));
	if (!got.ids || !got.entries) {
		free(got.ids);
		free(got.entries);
		return slab_fail(&out->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	}
	memcpy(got.ids, plans[0]->ids, got.nfiles * sizeof(*got.ids));
	for (size_t i = 0; i < n; i++) {
		memcpy(got.entries + at, plans[i]->entries, plans[i]->n * sizeof(*got.entries));
		at += plans[i]->n;
	}
	plan_take(out, &got);
	return 0;
}

void slab_plan_free(struct slab_plan *plan)
{
	if (!plan)
		return;
	plan_clear(plan);
	free(plan);
}

const char *slab_plan_error(const struct slab_plan *plan)
{
	return plan->err.text;
}

const struct slab_plan_params *slab_plan_params(const struct slab_plan *plan)
{
	return &plan->p;
}

const struct slab_plan_entry *slab_plan_entries(const struct slab_plan *plan)
{
	return plan->entries;
}

uint64_t slab_plan_count(const struct slab_plan *plan) { return plan->n; }
uint64_t slab_plan_start(const struct slab_plan *plan) { return plan->start; }
uint64_t slab_plan_length(const struct slab_plan *plan) { return plan->length; }
uint64_t slab_plan_total(const struct slab_plan *plan) { return plan->total; }
uint32_t slab_plan_subset_crc(const struct slab_plan *plan) { return plan->subset_crc; }

uint64_t slab_plan_subset_count(const struct slab_plan *plan)
{
	return plan->p.flags & SLAB_PLAN_SUBSET ? plan->subset : plan->total;
}
uint32_t slab_plan_file_count(const struct slab_plan *plan) { return plan->nfiles; }

const struct slab_file_id *slab_plan_file_ids(const struct slab_plan *plan)
{
	return plan->ids;
}

/* ---- making a plan ----------------------------------------------------------------------- */

/*
 * The subset's global indexes, checked (each below the d->all samples, each once), in
 * increasing order into *members (n of them), and their CRC-32C as stored (u32 LE each). A
 * bitmap of the dataset's samples finds repeats and sorts in one pass each.
 */
static int subset_members(const struct dataset *d, const uint64_t *subset, size_t n,
			  uint32_t **members, uint32_t *crc, struct slab_err *e)
{
	uint64_t words = (d->all + 63) / 64, k = 0;
	uint64_t *bits = calloc(words ? words : 1, sizeof(*bits));
	uint32_t *m = NULL;
	int ret = SLAB_ERR_NOMEM;

	*crc = 0;
	if (!bits)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		uint64_t g = subset[i];
		if (g >= d->all) {
			ret = slab_fail(e, SLAB_ERR_RANGE, NULL,
					"subset entry %zu: sample %llu is out of range (the dataset has %llu %s)",
					i, (unsigned long long)g, (unsigned long long)d->all,
					slab_plural(d->all, "sample", "samples"));
			goto out;
		}
		if (bits[g / 64] >> (g % 64) & 1) {
			size_t j = 0;
			while (subset[j] != g)
				j++;
			ret = slab_fail(e, SLAB_ERR_INVAL, NULL, "subset entry %zu: sample %llu is already entry %zu",
					i, (unsigned long long)g, j);
			goto out;
		}
		bits[g / 64] |= 1ull << (g % 64);
	}
	/* n distinct samples below d->all <= 2^32 - 1 */
	m = malloc((n ? n : 1) * sizeof(*m));
	if (!m)
		goto nomem;
	for (uint64_t w = 0; w < words; w++)
		for (uint64_t b = bits[w]; b; b &= b - 1)
			m[k++] = (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(b));
	for (size_t i = 0; i < n; i += 1024) {
		unsigned char buf[4 * 1024];
		size_t c = n - i < 1024 ? n - i : 1024;
		for (size_t j = 0; j < c; j++)
			slab_put32(buf + 4 * j, m[i + j]);
		*crc = slab_crc32c(*crc, buf, 4 * c);
	}
	*members = m;
	m = NULL;
	ret = 0;
	goto out;
nomem:
	ret = slab_fail(e, SLAB_ERR_NOMEM, NULL, "out of memory");
out:
	free(bits);
	free(m);
	return ret;
}

/* dataset_units() with its reads of the files' tables guarded: a file truncated since it was
 * opened is an error naming it (what it made, d holds for the caller to free). */
static int dataset_units_guarded(struct dataset *d, struct slab *const *files,
				 struct slab_err *e)
{
	struct slab_fault g;
	int r;

	if ((r = slab_fault_setup(e)) < 0)
		return r;
	if (sigsetjmp(g.jump, 0))
		return slab_fault_files(files, d->nfiles, g.addr, e);
	slab_fault_begin(&g);
	r = dataset_units(d, files, e);
	slab_fault_end(&g);
	return r;
}

/* slab_plan_make(), or with is_subset slab_plan_make_subset(). */
static int plan_build(struct slab_plan *into, struct slab *const *files, uint32_t nfiles,
		      const struct slab_plan_params *in, int is_subset, const uint64_t *subset,
		      size_t nsubset, uint64_t start)
{
	struct slab_err *e = &into->err;
	struct slab_plan_params prm;
	const struct slab_plan_params *p = &prm;
	struct dataset d;
	struct slab_plan made, *plan = &made;
	uint32_t *perm = NULL;
	uint64_t per, from, hash;
	int ret = SLAB_ERR_NOMEM;

	memset(&d, 0, sizeof(d));
	memset(&made, 0, sizeof(made));
	if (slab_sized_in(&prm, sizeof(prm), in, SLAB_PLAN_PARAMS_FIRST) < 0)
		return slab_fail(e, SLAB_ERR_INVAL, NULL, "plan parameters of %zu %s: no such version",
				 in->size, slab_plural(in->size, "byte", "bytes"));
	if (p->mode > SLAB_PLAN_QUASI || p->world < 1 || p->rank >= p->world ||
	    (p->mode == SLAB_PLAN_QUASI && p->window < 1)) {
		ret = slab_fail(e, SLAB_ERR_INVAL, NULL,
				"mode %d, rank %u, world size %u, window %llu: out of range",
				(int)p->mode, p->rank, p->world, (unsigned long long)p->window);
		goto out;
	}
	if (!is_subset && (p->flags & SLAB_PLAN_SUBSET)) {
		ret = slab_fail(e, SLAB_ERR_INVAL, NULL,
				"SLAB_PLAN_SUBSET needs the subset: make the plan with slab_plan_make_subset()");
		goto out;
	}
	if (p->flags & ~(SLAB_PLAN_PAD | SLAB_PLAN_MEMORY | SLAB_PLAN_SUBSET)) {
		ret = slab_fail(e, SLAB_ERR_INVAL, NULL, "unknown plan flags 0x%x",
				p->flags & ~(SLAB_PLAN_PAD | SLAB_PLAN_MEMORY | SLAB_PLAN_SUBSET));
		goto out;
	}
	plan->p = *p;
	plan->nfiles = nfiles;
	plan->ids = calloc(nfiles ? nfiles : 1, sizeof(*plan->ids));
	if (!plan->ids)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		/* Never opened, or its open failed: no pages to plan by. */
		if (!slab_base(files[f])) {
			ret = slab_fail(e, SLAB_ERR_INVAL, slab_path(files[f]), "reader not open");
			goto out;
		}
		slab_file_identity(files[f], &plan->ids[f]);
	}
	hash = dataset_hash(plan->ids, nfiles);
	if ((ret = dataset_count(&d, files, nfiles, e)) < 0)
		goto out;
	plan->total = d.all;
	if (is_subset) {
		/* the samples planned are the subset's, in file order */
		if ((ret = subset_members(&d, subset, nsubset, &plan->members, &plan->subset_crc, e)) < 0)
			goto out;
		plan->p.flags |= SLAB_PLAN_SUBSET;
		plan->subset = nsubset;
		d.sub = plan->members;
		d.total = nsubset;
	}
	if (p->mode == SLAB_PLAN_QUASI && (ret = dataset_units_guarded(&d, files, e)) < 0)
		goto out;

	/* Rank r takes positions [r * per, r * per + per) of the global order, cyclically: pads
	 * repeat the order's first samples. Contiguous, so whole pages but at the slice ends. */
	per = per_rank(d.total, p->world, p->flags);
	from = d.total ? (uint64_t)p->rank * per % d.total : 0;
	plan->length = per;
	if (start > per) {
		ret = slab_fail(e, SLAB_ERR_RANGE, NULL,
				"start %llu is past the end of the plan (%llu %s)",
				(unsigned long long)start, (unsigned long long)per,
				slab_plural(per, "entry", "entries"));
		goto out;
	}
	plan->start = start;
	plan->n = per - start;
	plan->entries = malloc((plan->n ? plan->n : 1) * sizeof(*plan->entries));
	if (!plan->entries)
		goto nomem;

	switch (p->mode) {
	case SLAB_PLAN_SEQUENTIAL: {
		/* positions in order: their global indexes increase, but at the wrap */
		uint64_t k = (from + start) % (d.total ? d.total : 1);
		uint32_t f = d.total ? file_of(&d, global_at(&d, k)) : 0;
		for (uint64_t i = 0; i < plan->n; i++) {
			uint64_t g = global_at(&d, k);
			while (g >= d.fstart[f + 1])
				f++;
			plan->entries[i] = (struct slab_plan_entry){ f, (uint32_t)(g - d.fstart[f]) };
			if (++k == d.total) {
				k = 0;
				f = 0;
			}
		}
		break;
	}
	case SLAB_PLAN_RANDOM: {
		struct rng r;
		perm = malloc((d.total ? d.total : 1) * sizeof(*perm));
		if (!perm)
			goto nomem;
		rng_init(&r, hash, p, 1);
		permutation(&r, perm, d.total);
		for (uint64_t i = 0, k = (from + start) % (d.total ? d.total : 1); i < plan->n; i++) {
			uint64_t g = global_at(&d, perm[k]);
			uint32_t f = nfiles > 1 ? file_of(&d, g) : 0;
			plan->entries[i] = (struct slab_plan_entry){ f, (uint32_t)(g - d.fstart[f]) };
			if (++k == d.total)
				k = 0;
		}
		break;
	}
	case SLAB_PLAN_QUASI:
		plan->crc_known = ENTRIES_AS_STORED;
		if (quasi(&d, files, p, hash, from, per, start, plan->entries,
			  plan->crc_known ? &plan->crc : NULL) < 0)
			goto nomem;
		break;
	}
	plan_take(into, plan);
	ret = 0;
	goto out;
nomem:
	ret = slab_fail(e, SLAB_ERR_NOMEM, NULL, "out of memory");
out:
	dataset_free(&d);
	free(perm);
	plan_clear(&made);
	return ret;
}

int slab_plan_make(struct slab_plan *into, struct slab *const *files, uint32_t nfiles,
		   const struct slab_plan_params *in, uint64_t start)
{
	return plan_build(into, files, nfiles, in, 0, NULL, 0, start);
}

int slab_plan_make_subset(struct slab_plan *into, struct slab *const *files, uint32_t nfiles,
			  const struct slab_plan_params *in, const uint64_t *subset, size_t n,
			  uint64_t start)
{
	if (n && !subset)
		return slab_fail(&into->err, SLAB_ERR_INVAL, NULL, "no subset given");
	return plan_build(into, files, nfiles, in, 1, subset, n, start);
}

/* ---- the plan file ----------------------------------------------------------------------- */

static uint64_t header_region(uint32_t nfiles)
{
	uint64_t n = SLAB_PLAN_HEADER_FIXED + (uint64_t)nfiles * SLAB_PLAN_ID_SIZE;

	return (n + SLAB_ALIGN - 1) / SLAB_ALIGN * SLAB_ALIGN;
}

static void put_entries(unsigned char *b, const struct slab_plan_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		slab_put32(b + 8 * i, e[i].file);
		slab_put32(b + 8 * i + 4, e[i].sample);
	}
}

/* Entries [i, i + m) as stored in the file: the entries themselves where memory already holds
 * them so, else encoded into buf. */
static const void *stored_entries(const struct slab_plan *plan, uint64_t i, size_t m,
				  unsigned char *buf)
{
	if (ENTRIES_AS_STORED && sizeof(*plan->entries) == SLAB_PLAN_ENTRY_SIZE)
		return plan->entries + i;
	put_entries(buf, plan->entries + i, m);
	return buf;
}

int slab_plan_write(struct slab_plan *plan, int fd)
{
	enum { CHUNK = 8192 };  /* entries per write */
	uint64_t hsize = header_region(plan->nfiles);
	unsigned char *h = calloc(1, (size_t)hsize), *buf = malloc(CHUNK * SLAB_PLAN_ENTRY_SIZE);
	uint32_t crc = 0;
	int ret = SLAB_ERR_IO;

	/* A handle never made or read has a world of 0 ranks: its file would be refused. */
	if (plan->p.world == 0) {
		ret = slab_fail(&plan->err, SLAB_ERR_INVAL, NULL, "no plan to write: none was made or read");
		errno = EINVAL;
		goto out;
	}
	if (!h || !buf) {
		ret = slab_fail(&plan->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		errno = ENOMEM;
		goto out;
	}
	if (plan->crc_known)
		crc = plan->crc;
	else
		for (uint64_t i = 0; i < plan->n; i += CHUNK) {
			size_t m = plan->n - i < CHUNK ? (size_t)(plan->n - i) : CHUNK;
			crc = slab_crc32c(crc, stored_entries(plan, i, m, buf), m * SLAB_PLAN_ENTRY_SIZE);
		}
	memcpy(h, SLAB_PLAN_MAGIC, 8);
	slab_put16(h + 8, SLAB_PLAN_VERSION);
	/* the minor version says what a reader needs: a plan without a subset is as 1.0 wrote it */
	slab_put16(h + 10, plan->p.flags & SLAB_PLAN_SUBSET ? SLAB_PLAN_MINOR_SUBSET : 0);
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
	if (plan->p.flags & SLAB_PLAN_SUBSET) {
		slab_put64(h + 104, plan->subset);
		slab_put32(h + 112, plan->subset_crc);
	}
	for (uint32_t f = 0; f < plan->nfiles; f++)
		id_bytes(&plan->ids[f], h + SLAB_PLAN_HEADER_FIXED + (size_t)f * SLAB_PLAN_ID_SIZE);
	slab_put32(h + 96, slab_crc32c(0, h, (size_t)hsize));
	if (slab_write_full(fd, h, (size_t)hsize) < 0)
		goto write_error;
	/* Entries as memory holds them go in one write: a call per 64 KiB costs a quarter
	 * more than the copy itself. */
	for (uint64_t i = 0, step = ENTRIES_AS_STORED ? plan->n : CHUNK; i < plan->n; i += step) {
		size_t m = plan->n - i < step ? (size_t)(plan->n - i) : (size_t)step;
		if (slab_write_full(fd, stored_entries(plan, i, m, buf), m * SLAB_PLAN_ENTRY_SIZE) < 0)
			goto write_error;
	}
	ret = 0;
	goto out;
write_error:
	/* errno stays the write's: the caller may name its own output or ignore EPIPE. */
	ret = slab_fail(&plan->err, SLAB_ERR_IO, NULL, "%s", strerror(errno));
out:
	{
		int e = errno;          /* the caller may look at it */

		free(h);
		free(buf);
		errno = e;
	}
	return ret;
}

/* Read until len bytes or the end of the file: 0 and *got, or -1 with errno. */
static int read_upto(int fd, unsigned char *b, uint64_t len, uint64_t *got)
{
	*got = 0;
	while (*got < len) {
		size_t want = len - *got > (1u << 30) ? (1u << 30) : (size_t)(len - *got);
		ssize_t r = read(fd, b + *got, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		*got += (uint64_t)r;
	}
	return 0;
}

/*
 * Bytes [have, want) of *buf (which holds `have` bytes of *cap) from fd, growing *buf by
 * doubling from `first` bytes as they come: what the header declares is not trusted with an
 * allocation before the bytes are there, so a pipe that stops early costs only what it sent.
 * 0 with *got (< want at the end of the file), SLAB_ERR_NOMEM, or SLAB_ERR_IO with errno.
 */
static int read_grow(int fd, unsigned char **buf, uint64_t *cap, uint64_t have, uint64_t want,
		     uint64_t first, uint64_t *got)
{
	*got = have;
	for (;;) {
		uint64_t r;
		if (*cap < want || !*buf) {
			uint64_t ncap = *cap * 2 > first ? *cap * 2 : first;
			unsigned char *p;
			if (ncap > want)
				ncap = want;
			if (ncap < have)
				ncap = have;
			if (ncap != (size_t)ncap)
				return SLAB_ERR_NOMEM;
			p = realloc(*buf, ncap ? (size_t)ncap : 1);
			if (!p)
				return SLAB_ERR_NOMEM;
			*buf = p;
			*cap = ncap;
		}
		if (read_upto(fd, *buf + *got, *cap - *got, &r) < 0)
			return SLAB_ERR_IO;
		*got += r;
		if (*got < *cap || *got == want)
			return 0;
	}
}

/* The entries are read straight into the plan's array and decoded in place. */
_Static_assert(sizeof(struct slab_plan_entry) == SLAB_PLAN_ENTRY_SIZE,
	       "a plan entry in memory is as large as in the file");

/*
 * The header first, checked before anything it declares is read; then exactly the entries it
 * declares, and one byte more to make sure the file ends there. Works the same on a regular
 * file, a pipe, a FIFO or a device: sizes from fstat() only ever refuse early (a regular file
 * too short or too long for what its header says), never decide how much is read. So a file
 * that is not a plan (a .slab given by mistake, /dev/zero) is refused after its first 128
 * bytes, and memory is bounded by the lesser of what the header declares (at most 2^32 - 1
 * entries) and the bytes that came.
 */
int slab_plan_read(struct slab_plan *into, const char *path)
{
	enum { FIRST = 65536 };         /* the first allocation for bytes still to come */
	struct slab_err *err = &into->err;
	struct slab_plan got, *plan = &got;
	unsigned char *buf = NULL, *raw, probe;
	uint64_t hsize, n, bytes, sum = 0, cap = 0, have, remaining = UINT64_MAX, ecap = 0, shared;
	uint32_t crc, ecrc, mode, nfiles;
	int fd = -1, ret = SLAB_ERR_NOMEM, regular = 0, r;
	const char *name = slab_input_shown(path);
	struct stat st;

	memset(&got, 0, sizeof(got));
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		ret = slab_fail(err, SLAB_ERR_IO, name, "%s", strerror(errno));
		goto out;
	}
	/* A regular file's size says early what the header may declare (from where standard
	 * input stands, when it is one). */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t at = lseek(fd, 0, SEEK_CUR);
		if (at >= 0 && at <= st.st_size) {
			regular = 1;
			remaining = (uint64_t)(st.st_size - at);
		}
	}
	buf = malloc(SLAB_PLAN_HEADER_FIXED);
	if (!buf)
		goto nomem;
	cap = SLAB_PLAN_HEADER_FIXED;
	if (read_upto(fd, buf, SLAB_PLAN_HEADER_FIXED, &have) < 0)
		goto read_error;
	if (have < 8 || memcmp(buf, SLAB_PLAN_MAGIC, 8) != 0) {
		ret = slab_fail(err, SLAB_ERR_FORMAT, name, "not a plan file (bad magic number)");
		goto out;
	}
	if (have < SLAB_PLAN_HEADER_FIXED)
		goto bad_header;
	if (slab_le16(buf + 8) != SLAB_PLAN_VERSION) {
		ret = slab_fail(err, SLAB_ERR_FORMAT, name, "plan format version %u is not supported",
				slab_le16(buf + 8));
		goto out;
	}
	nfiles = slab_le32(buf + 88);
	hsize = slab_le32(buf + 12);
	if (nfiles > (1u << 24) || hsize != header_region(nfiles) || (regular && hsize > remaining))
		goto bad_header;
	r = read_grow(fd, &buf, &cap, have, hsize, FIRST, &have);
	if (r == SLAB_ERR_IO)
		goto read_error;
	if (r < 0)
		goto nomem;
	if (have < hsize)
		goto bad_header;
	crc = slab_le32(buf + 96);
	memset(buf + 96, 0, 4);
	if (slab_crc32c(0, buf, (size_t)hsize) != crc) {
		ret = slab_fail(err, SLAB_ERR_CORRUPT, name, "plan header checksum mismatch");
		goto out;
	}
	mode = slab_le32(buf + 16);
	n = slab_le64(buf + 64);
	plan->nfiles = nfiles;
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
	plan->subset = slab_le64(buf + 104);
	plan->subset_crc = slab_le32(buf + 112);
	plan->ids = calloc(nfiles ? nfiles : 1, sizeof(*plan->ids));
	if (!plan->ids)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		const unsigned char *b = buf + SLAB_PLAN_HEADER_FIXED + (size_t)f * SLAB_PLAN_ID_SIZE;
		plan->ids[f].file_size = slab_le64(b);
		plan->ids[f].samples = slab_le64(b + 8);
		plan->ids[f].header_crc = slab_le32(b + 16);
		plan->ids[f].table_crc = slab_le32(b + 20);
		sum += plan->ids[f].samples > UINT32_MAX ? (uint64_t)UINT32_MAX + 1 : plan->ids[f].samples;
	}
	/* The declared sizes follow from each other, and no dataset has more than 2^32 - 1
	 * samples (slab_plan_make() refuses it): so n is bounded before any entry is read. The
	 * ranks share the subset's S samples, at most N, or all N; without a subset its fields
	 * are zero. */
	shared = plan->p.flags & SLAB_PLAN_SUBSET ? plan->subset : plan->total;
	if (mode > SLAB_PLAN_QUASI || plan->p.world < 1 || plan->p.rank >= plan->p.world ||
	    (plan->p.flags & ~(SLAB_PLAN_PAD | SLAB_PLAN_MEMORY | SLAB_PLAN_SUBSET)) ||
	    plan->total != sum || plan->total > UINT32_MAX || shared > plan->total ||
	    (!(plan->p.flags & SLAB_PLAN_SUBSET) && (plan->subset || plan->subset_crc)) ||
	    plan->length != per_rank(shared, plan->p.world, plan->p.flags) ||
	    plan->start > plan->length || plan->length - plan->start != n) {
		ret = slab_fail(err, SLAB_ERR_CORRUPT, name, "inconsistent plan header");
		goto out;
	}
	plan->p.mode = (enum slab_plan_mode)mode;
	ecrc = slab_le32(buf + 92);
	free(buf);
	buf = NULL;

	bytes = n * SLAB_PLAN_ENTRY_SIZE;
	if (regular && remaining - hsize != bytes) {
		if (remaining - hsize > bytes)
			goto trailing;
		ret = slab_fail(err, SLAB_ERR_CORRUPT, name,
				"truncated plan: %llu %s announced, %llu %s of entries",
				(unsigned long long)n, slab_plural(n, "entry", "entries"),
				(unsigned long long)(remaining - hsize),
				slab_plural(remaining - hsize, "byte", "bytes"));
		goto out;
	}
	raw = NULL;
	r = read_grow(fd, &raw, &ecap, 0, bytes, regular ? bytes : FIRST, &have);
	plan->entries = (struct slab_plan_entry *)raw;
	if (r == SLAB_ERR_IO)
		goto read_error;
	if (r < 0)
		goto nomem;
	if (have < bytes) {
		ret = slab_fail(err, SLAB_ERR_CORRUPT, name,
				"truncated plan: %llu %s announced, %llu %s of entries",
				(unsigned long long)n, slab_plural(n, "entry", "entries"),
				(unsigned long long)have, slab_plural(have, "byte", "bytes"));
		goto out;
	}
	if (read_upto(fd, &probe, 1, &have) < 0)
		goto read_error;
	if (have)
		goto trailing;
	if (slab_crc32c(0, raw, (size_t)bytes) != ecrc) {
		ret = slab_fail(err, SLAB_ERR_CORRUPT, name, "plan entries checksum mismatch");
		goto out;
	}
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *e = raw + i * SLAB_PLAN_ENTRY_SIZE;
		uint32_t file = slab_le32(e), sample = slab_le32(e + 4);

		plan->entries[i].file = file;
		plan->entries[i].sample = sample;
		if (file >= nfiles || sample >= plan->ids[file].samples) {
			ret = slab_fail(err, SLAB_ERR_CORRUPT, name,
					"entry %llu names sample %u of file %u, which does not exist",
					(unsigned long long)i, sample, file);
			goto out;
		}
	}
	plan->crc = ecrc;
	plan->crc_known = 1;
	plan_take(into, plan);
	ret = 0;
	goto out;
bad_header:
	ret = slab_fail(err, SLAB_ERR_CORRUPT, name, "truncated or damaged plan header");
	goto out;
trailing:
	ret = slab_fail(err, SLAB_ERR_CORRUPT, name, "trailing bytes after the plan (%llu %s announced)",
			(unsigned long long)n, slab_plural(n, "entry", "entries"));
	goto out;
read_error:
	ret = slab_fail(err, SLAB_ERR_IO, name, "%s", strerror(errno));
	goto out;
nomem:
	ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
out:
	if (fd >= 0 && fd != STDIN_FILENO)
		close(fd);
	free(buf);
	plan_clear(&got);
	return ret;
}

int slab_plan_match(struct slab_plan *plan, struct slab *const *files, uint32_t nfiles)
{
	return slab_plan_match_err(plan, files, nfiles, &plan->err);
}

int slab_plan_match_err(const struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
			struct slab_err *e)
{
	if (plan->nfiles != nfiles)
		return slab_fail(e, SLAB_ERR_INVAL, NULL, "the plan is for %u file%s, %u given",
				 plan->nfiles, plan->nfiles == 1 ? "" : "s", nfiles);
	for (uint32_t f = 0; f < nfiles; f++) {
		struct slab_file_id id;
		slab_file_identity(files[f], &id);
		if (id.file_size != plan->ids[f].file_size || id.samples != plan->ids[f].samples ||
		    id.header_crc != plan->ids[f].header_crc || id.table_crc != plan->ids[f].table_crc) {
			return slab_fail(e, SLAB_ERR_INVAL, NULL,
					 "file %u is not the one the plan was made for (content differs)", f);
		}
	}
	return 0;
}

/* ---- measures ---------------------------------------------------------------------------- */

int slab_plan_stats(struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
		    struct slab_plan_stats *out)
{
	struct slab_err *err = &plan->err;
	struct slab_plan_stats full, *st = &full;
	uint64_t *page_base = calloc((size_t)nfiles + 1, sizeof(*page_base));
	uint64_t *sample_base = calloc((size_t)nfiles + 1, sizeof(*sample_base));
	uint64_t *first = NULL, *last = NULL, npages, total, over;
	uint32_t *spage = NULL, *span = NULL, *gpage = NULL, *place = NULL;
	uint64_t n = plan->n, live = 0, live_bytes = 0, same = 0, prev = UINT64_MAX;
	double disp = 0, at = 0, from = 0;
	int ret = SLAB_ERR_NOMEM;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	/* Other files would put the entries on pages that are not theirs, or past the end. */
	if ((ret = slab_plan_match(plan, files, nfiles)) < 0)
		goto out;
	ret = SLAB_ERR_NOMEM;
	if (!page_base || !sample_base)
		goto nomem;
	for (uint32_t f = 0; f < nfiles; f++) {
		/* every page a checked offset can fall in: the data area, rounded up */
		uint64_t area = slab_table_offset(files[f]) - slab_data_offset(files[f]);
		page_base[f + 1] = page_base[f] + area / slab_page_size(files[f]) + 1;
		sample_base[f + 1] = sample_base[f] + slab_count(files[f]);
	}
	npages = page_base[nfiles];
	total = sample_base[nfiles];
	if (npages > UINT32_MAX || total > UINT32_MAX) {
		ret = slab_fail(err, SLAB_ERR_INVAL, NULL, "a dataset of %llu samples in %llu pages is too large",
				(unsigned long long)total, (unsigned long long)npages);
		goto out;
	}
	spage = malloc((total ? total : 1) * sizeof(*spage));
	gpage = malloc((n ? n : 1) * sizeof(*gpage));
	span = malloc((total ? total : 1) * sizeof(*span));
	first = malloc((npages ? npages : 1) * sizeof(*first));
	last = malloc((npages ? npages : 1) * sizeof(*last));
	if (!spage || !gpage || !span || !first || !last)
		goto nomem;
	/* Each sample's page, read once in file order: the plan visits the records at random,
	 * which would wait on memory at every entry. */
	for (uint32_t f = 0; f < nfiles; f++) {
		struct slab *s = files[f];
		uint64_t ps = slab_page_size(s), data = slab_data_offset(s), count = slab_count(s);
		int shift = __builtin_ctzll(ps);
		for (uint64_t i = 0; i < count; i++) {
			struct slab_sample smp;
			uint32_t g, k;
			int rs = slab_sample(s, i, &smp);
			if (rs < 0) {
				ret = slab_fail_from(err, rs, slab_error(s));
				goto out;
			}
			g = (uint32_t)(page_base[f] + ((smp.offset - data) >> shift));
			spage[sample_base[f] + i] = g;
			/* A sample larger than a page reads the pages after its first too; they are
			 * its own, not its first page's: a smaller sample starting on the same page
			 * (an empty one sits at the next sample's offset) reads that page alone.
			 * The pages stay inside the file's numbering: the sample is in its data area. */
			k = span_pages(smp.size, ps);
			span[sample_base[f] + i] = k;
		}
	}
	for (uint64_t q = 0; q < npages; q++)
		first[q] = UINT64_MAX;
	/* A subset plan made here places a sample among its subset's, in file order. */
	over = total;
	if ((plan->p.flags & SLAB_PLAN_SUBSET) && plan->members) {
		over = plan->subset;
		place = calloc(total ? total : 1, sizeof(*place));
		if (!place)
			goto nomem;
		for (uint64_t k = 0; k < plan->subset; k++)
			if (plan->members[k] < total)
				place[plan->members[k]] = (uint32_t)k;
	}
	if (plan->length > 1 && over > 1) {
		at = 1.0 / (double)(plan->length - 1);
		from = 1.0 / (double)(over - 1);
	}
	for (uint64_t i = 0; i < n; i++) {
		const struct slab_plan_entry *e = &plan->entries[i];
		uint64_t gs;
		uint32_t g;
		if (e->file >= nfiles || e->sample >= slab_count(files[e->file])) {
			ret = slab_fail(err, SLAB_ERR_RANGE, NULL, "entry %llu: no such sample",
					(unsigned long long)i);
			goto out;
		}
		/* the entries visit samples at random: ask for the page of a later one early */
		if (i + 16 < n && e[16].file < nfiles && sample_base[e[16].file] + e[16].sample < total)
			__builtin_prefetch(spage + sample_base[e[16].file] + e[16].sample);
		gs = sample_base[e->file] + e->sample;
		g = gpage[i] = spage[gs];
		for (uint32_t q = g; q - g < span[gs]; q++) {
			if (first[q] == UINT64_MAX) {
				first[q] = i;
				st->distinct_pages++;
			}
			last[q] = i;
		}
		if (i && g == prev)
			same++;
		else if (i)
			st->page_switches++;
		prev = g;
		/* position in the plan vs position of the sample in file order, both as fractions */
		disp += fabs((double)(plan->start + i) * at - (double)(place ? place[gs] : gs) * from);
	}
	/* A page is live from its first to its last use. */
	for (uint64_t i = 0; i < n; i++) {
		const struct slab_plan_entry *e = &plan->entries[i];
		uint32_t g = gpage[i], k = span[sample_base[e->file] + e->sample];
		uint64_t ps = slab_page_size(files[e->file]);
		/* all the entry's pages are live at once: count them in before any leaves */
		for (uint32_t q = g; q - g < k; q++) {
			if (first[q] == i) {
				live++;
				live_bytes += ps;
			}
		}
		if (live > st->max_live_pages)
			st->max_live_pages = live;
		if (live_bytes > st->max_live_bytes)
			st->max_live_bytes = live_bytes;
		for (uint32_t q = g; q - g < k; q++) {
			if (last[q] == i) {
				live--;
				live_bytes -= ps;
			}
		}
	}
	st->samples = n;
	st->mean_run = n ? (double)n / (double)(st->page_switches + 1) : 0;
	st->displacement = n ? disp / (double)n : 0;
	st->same_page_neighbours = n > 1 ? (double)same / (double)(n - 1) : 0;
	slab_sized_out(out, st, sizeof(*st), SLAB_PLAN_STATS_FIRST);
	ret = 0;
	goto out;
nomem:
	ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory");
out:
	free(page_base);
	free(sample_base);
	free(spage);
	free(gpage);
	free(span);
	free(first);
	free(last);
	free(place);
	return ret;
}
