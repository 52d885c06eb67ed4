/* test_follow.c: unit tests of lib/dataset/follow.c: for plans in every mode, a hand-made plan with
 * repeats and empty samples, every look-ahead and both ways of reading (mapping, O_DIRECT
 * with and without AIO), each step hands out the plan's sample with its exact bytes, and
 * --release drops every page the plan touched exactly once; O_DIRECT buffers stay within
 * --ahead pages, also with thousands of samples on a page. */
#include "pagecache.h"
#include "plan.h"
#include "slab.h"
#include "unit.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFILES 2

static const char *const paths[NFILES] = { "f0.slab", "f1.slab" };

/* A file of n samples with sizes from 0 to several pages of 4 KiB; fsync'd. */
static void make_file(const char *path, unsigned n, unsigned seed)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 8192, .options = "tool=test\n" };
	unsigned char *buf = malloc(40000);
	uint32_t x = seed;

	CHECK(fd >= 0 && w && buf);
	CHECK(slab_writer_open(w, fd, path, &o) == 0);
	for (unsigned i = 0; i < n; i++) {
		struct slab_writer_field f[2];
		char key[32];
		size_t sizes[2];

		x = x * 1103515245u + 12345u;
		sizes[0] = (x >> 8) % 5 == 0 ? 0 : (x >> 8) % 3000;
		sizes[1] = (x >> 4) % 7 == 0 ? 20000 + (x % 15000) : (x >> 12) % 2500;
		for (size_t k = 0; k < 40000; k++)
			buf[k] = (unsigned char)(k * 31 + i * 7 + seed);
		memset(f, 0, sizeof(f));
		f[0] = (struct slab_writer_field){ .name = "a", .data = buf, .size = sizes[0] };
		f[1] = (struct slab_writer_field){ .name = "b", .data = buf + 3, .size = sizes[1] };
		snprintf(key, sizeof(key), "k%u", i);
		CHECK(slab_writer_add(w, key, strlen(key), f, i % 11 == 5 ? 0 : 2) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	CHECK(fsync(fd) == 0);
	slab_writer_free(w);
	free(buf);
	close(fd);
}

static int direct_ok = 1;

/* Walk plan with o; every step must be the plan's entry with the mapping's bytes. */
static void walk(struct slab **files, const struct slab_plan *plan,
		 const struct slab_follow_options *o)
{
	struct slab_follow *f = slab_follow_new();
	struct slab_follow_item it;
	struct slab_follow_stats st = { .size = sizeof(st) };
	uint64_t k = 0;
	int r;

	CHECK(f != NULL);
	r = slab_follow_open(f, files, paths, NFILES, plan, o);
	if (r < 0 && o->direct && strstr(slab_follow_error(f), "O_DIRECT")) {
		direct_ok = 0;
		slab_follow_close(f);
		return;
	}
	CHECK(r == 0);
	if (r < 0) {
		fprintf(stderr, "slab_follow_open: %s\n", slab_follow_error(f));
		slab_follow_close(f);
		return;
	}
	while ((r = slab_follow_next(f, &it)) == 1) {
		const struct slab_plan_entry *e = &plan->entries[k];
		struct slab_sample smp;

		CHECK(it.pos == plan->start + k);
		CHECK(it.file == e->file && it.index == e->sample);
		CHECK(slab_sample(files[e->file], e->sample, &smp) == 0);
		CHECK(it.sample.offset == smp.offset && it.sample.size == smp.size);
		CHECK(it.direct == o->direct);
		CHECK(memcmp(it.bytes, slab_base(files[e->file]) + smp.offset, (size_t)smp.size) == 0);
		slab_follow_touch(&it);
		k++;
	}
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "slab_follow_next: %s\n", slab_follow_error(f));
	CHECK(k == plan->n);
	CHECK(slab_follow_next(f, &it) == 0);   /* the end stays the end */
	slab_follow_stats(f, &st);
	CHECK(st.samples == plan->n);
	CHECK(st.released == (o->release ? st.distinct_pages : 0));
	CHECK(o->direct || st.max_window <= o->ahead + 8);      /* 8: the largest sample's pages */
	/* The buffers: --ahead pages of 8 KiB, or the largest sample (< 38000 bytes) alone. */
	CHECK(st.max_buffered <= (o->ahead * 8192 > 49152 ? o->ahead * 8192 : 49152));
	if (o->direct)
		CHECK(st.async == !o->direct_sync);
	slab_follow_close(f);
}

/* Many tiny samples on one page (TINY_N of TINY_SIZE bytes, TINY_PAGE): read directly, they
 * share the reads of the page's blocks, so the buffers never hold more than --ahead pages and
 * the page is read about once, not once a sample. */
#define TINY_N 20000u
#define TINY_SIZE 50u
#define TINY_PAGE (2u << 20)

static void tiny_samples(void)
{
	const char *path = "tiny.slab";
	const char *const tpaths[1] = { path };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options wo = { .page_size = TINY_PAGE, .options = "tool=test\n" };
	struct slab *file = slab_new();

	CHECK(fd >= 0 && w && file);
	CHECK(slab_writer_open(w, fd, path, &wo) == 0);
	for (unsigned i = 0; i < TINY_N; i++) {
		unsigned char b[TINY_SIZE];
		struct slab_writer_field fi = { .name = "a", .data = b, .size = sizeof(b) };
		char key[32];

		for (unsigned k = 0; k < sizeof(b); k++)
			b[k] = (unsigned char)(i * 13 + k);
		snprintf(key, sizeof(key), "t%u", i);
		CHECK(slab_writer_add(w, key, strlen(key), &fi, 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	CHECK(fsync(fd) == 0);
	slab_writer_free(w);
	close(fd);
	CHECK(slab_open(file, path) == 0);
	CHECK(slab_page_count(file) == 1);
	for (int m = 0; m < 3; m++) {
		struct slab_plan_params p = { .mode = (enum slab_plan_mode)m, .seed = 5, .world = 1,
					      .window = 1 };
		struct slab_plan *plan = slab_plan_new();

		CHECK(plan && slab_plan_make(plan, &file, 1, &p, 0) == 0);
		for (uint64_t ahead = 1; plan && ahead <= 4; ahead *= 4)
			for (int sync = 0; sync < 2; sync++) {
				struct slab_follow_options o = { .ahead = ahead, .release = 1,
								 .direct = 1, .direct_sync = sync };
				struct slab_follow *f = slab_follow_new();
				struct slab_follow_item it;
				struct slab_follow_stats st = { .size = sizeof(st) };
				uint64_t k = 0;
				int r;

				if (slab_follow_open(f, &file, tpaths, 1, plan, &o) < 0) {
					const char *err = slab_follow_error(f);
					if (!strstr(err, "O_DIRECT"))
						fprintf(stderr, "slab_follow_open: %s\n", err);
					CHECK(strstr(err, "O_DIRECT"));
					direct_ok = 0;
					slab_follow_close(f);
					break;
				}
				while ((r = slab_follow_next(f, &it)) == 1) {
					const struct slab_plan_entry *e = &plan->entries[k++];
					struct slab_sample smp;

					CHECK(it.index == e->sample);
					CHECK(slab_sample(file, e->sample, &smp) == 0);
					CHECK(it.sample.size == TINY_SIZE &&
					      memcmp(it.bytes, slab_base(file) + smp.offset,
						     TINY_SIZE) == 0);
				}
				CHECK(r == 0 && k == TINY_N);
				slab_follow_stats(f, &st);
				if (st.max_buffered > ahead * TINY_PAGE || st.direct_bytes > TINY_PAGE)
					fprintf(stderr, "tiny samples, mode %d, ahead %llu%s: %llu bytes in "
						"buffers at most, %llu read in %llu reads\n", m,
						(unsigned long long)ahead, sync ? ", sync" : "",
						(unsigned long long)st.max_buffered,
						(unsigned long long)st.direct_bytes,
						(unsigned long long)st.direct_reads);
				/* The bound --ahead promises, whatever the samples per page. */
				CHECK(st.max_buffered <= ahead * TINY_PAGE);
				/* Its ~1 MB are read about once, not a block or two per sample. */
				CHECK(st.direct_bytes <= TINY_PAGE);
				slab_follow_close(f);
			}
		slab_plan_free(plan);
	}
	slab_close(file);
	unlink(path);
}

static void walk_all(struct slab **files, const struct slab_plan *plan)
{
	static const uint64_t aheads[] = { 1, 2, 5, 1000 };

	for (size_t a = 0; a < sizeof(aheads) / sizeof(aheads[0]); a++)
		for (int mode = 0; mode < 3; mode++)
			for (int release = 0; release < 2; release++) {
				struct slab_follow_options o = {
					.ahead = aheads[a], .release = release,
					.direct = mode > 0, .direct_sync = mode == 2,
				};
				walk(files, plan, &o);
			}
}

/* Several plans as consecutive epochs, with and without a budget: every step is the plan's
 * entry (its own position, its epoch), the budget is kept (Belady), a fixed set never evicts,
 * a budget as large as the files makes every page after the first epoch a hit; errors. */
static void epochs(struct slab **files)
{
	struct slab_plan *pl[3], *cat = slab_plan_new(), *other = slab_plan_new();
	const struct slab_plan *const *plans = (const struct slab_plan *const *)pl;
	uint64_t sizes[] = { 0, 16384, 40000, 100000, 1u << 30 };
	struct slab_plan_params pp = { .mode = SLAB_PLAN_QUASI, .seed = 9, .world = 1, .window = 2 };
	struct slab_follow *f;

	for (int k = 0; k < 3; k++) {
		pp.epoch = (uint64_t)k;
		pp.mode = k == 1 ? SLAB_PLAN_RANDOM : SLAB_PLAN_QUASI;
		CHECK((pl[k] = slab_plan_new()) && slab_plan_make(pl[k], files, NFILES, &pp, k ? 0 : 30) == 0);
	}
	CHECK(slab_plan_concat(cat, plans, 3) == 0);
	CHECK(slab_plan_count(cat) == pl[0]->n + pl[1]->n + pl[2]->n && slab_plan_start(cat) == 0);
	CHECK(slab_plan_concat(cat, plans, 0) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(cat), "no plans to put together");
	for (int pol = 0; pol < 2; pol++) {
		for (size_t m = 0; m < sizeof(sizes) / sizeof(sizes[0]); m++) {
			struct slab_follow_options o = { .size = sizeof(o), .ahead = 2, .memory = sizes[m],
							 .policy = pol };
			struct slab_follow_stats st = { .size = sizeof(st) };
			struct slab_follow_item it;
			uint64_t n = 0;
			int r;

			f = slab_follow_new();
			CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == 0);
			while ((r = slab_follow_next(f, &it)) == 1) {
				size_t k = slab_follow_epoch(f);
				uint64_t before = k ? pl[0]->n + (k > 1 ? pl[1]->n : 0) : 0;
				const struct slab_plan_entry *e = &pl[k]->entries[n - before];

				CHECK(n >= before && n - before < pl[k]->n);
				CHECK(it.pos == pl[k]->start + (n - before));
				CHECK(it.file == e->file && it.index == e->sample);
				CHECK(memcmp(it.bytes, slab_base(files[e->file]) + it.sample.offset,
					     (size_t)it.sample.size) == 0);
				slab_follow_touch(&it);
				n++;
			}
			CHECK(r == 0 && n == slab_plan_count(cat));
			slab_follow_stats(f, &st);
			/* Over the budget only while the window alone is (at most ahead + 8
			 * pages: the largest sample's). */
			if (sizes[m] && pol == SLAB_CACHE_BELADY)
				CHECK(st.max_cached <= (sizes[m] > 10 * 8192 ? sizes[m] : 10 * 8192));
			if (pol == SLAB_CACHE_FIXED)
				CHECK(st.evicted == 0);
			if (sizes[m] == (1u << 30)) {
				CHECK(st.evicted == 0 && st.misses + st.adopted == st.distinct_pages);
				CHECK(st.hits > 0);
			}
			if (sizes[m] == 0)
				CHECK(st.kept == 0 && st.hits == 0 && st.misses == 0);
			slab_follow_close(f);
		}
	}
	/* Only the first plan walked: the rest is future. */
	{
		struct slab_follow_options o = { .size = sizeof(o), .memory = 40000, .walked = 1 };
		struct slab_follow_item it;
		uint64_t n = 0;

		f = slab_follow_new();
		CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == 0);
		while (slab_follow_next(f, &it) == 1)
			n++;
		CHECK(n == pl[0]->n && slab_follow_epoch(f) == 0);
		slab_follow_close(f);
	}
	/* Errors. */
	{
		struct slab_follow_options o = { .size = sizeof(o), .memory = 1, .direct = 1 };

		f = slab_follow_new();
		CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f),
			  "a page cache budget with O_DIRECT, which does not use the cache");
		o.direct = 0;
		o.walked = 4;
		CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f), "4 plans to walk of 3");
		o.walked = 0;
		o.policy = 7;
		CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f), "no cache policy 7");
		o.policy = 0;
		struct slab_plan *third = pl[2];

		CHECK(slab_plan_make(other, files, 1, &pp, 0) == 0);
		pl[2] = other;
		CHECK(slab_follow_open_plans(f, files, paths, NFILES, plans, 3, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f), "plan 2 is over other files than plan 0");
		slab_follow_close(f);
		pl[2] = third;
	}
	for (int k = 0; k < 3; k++)
		slab_plan_free(pl[k]);
	slab_plan_free(cat);
	slab_plan_free(other);
}

/* f0.slab's name given another file of the same size (its first sample's byte changed) after
 * the reader mapped it: a walk, which opens the name again for advice and O_DIRECT, refuses
 * it rather than hand out the other file's bytes (O_DIRECT) or advise it. Last: the name
 * stays on the other file. */
static void renamed_over(struct slab **files)
{
	struct slab_plan_params pp = { .size = sizeof(pp), .world = 1, .window = 1 };
	struct slab_plan *plan = slab_plan_new();
	uint64_t len = slab_file_size(files[0]);
	unsigned char *b = malloc((size_t)len);
	int fd = open("f0.slab.new", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(plan && b && fd >= 0);
	CHECK(slab_plan_make(plan, files, NFILES, &pp, 0) == 0);
	memcpy(b, slab_base(files[0]), (size_t)len);
	b[slab_data_offset(files[0])] ^= 0xff;
	CHECK(write(fd, b, (size_t)len) == (ssize_t)len && close(fd) == 0);
	CHECK(rename("f0.slab.new", paths[0]) == 0);
	for (int direct = 0; direct < 2; direct++) {
		struct slab_follow_options o = { .size = sizeof(o), .ahead = 2, .direct = direct };
		struct slab_follow *f = slab_follow_new();
		int r = slab_follow_open(f, files, paths, NFILES, plan, &o);

		if (!(direct && !direct_ok)) {
			CHECK(r == SLAB_ERR_IO);
			CHECK_STR(slab_follow_error(f),
				  "'f0.slab': the file changed while it was being opened");
		}
		slab_follow_close(f);
	}
	slab_plan_free(plan);
	free(b);
}

int main(void)
{
	struct slab *files[NFILES];

	tiny_samples();
	make_file(paths[0], 60, 1);
	make_file(paths[1], 37, 2);
	for (int i = 0; i < NFILES; i++) {
		files[i] = slab_new();
		CHECK(files[i] && slab_open(files[i], paths[i]) == 0);
	}
	for (int m = 0; m < 3; m++) {
		struct slab_plan_params p = { .mode = (enum slab_plan_mode)m, .seed = 3, .world = 1,
					      .window = 3 };
		struct slab_plan *plan = slab_plan_new();

		CHECK(plan && slab_plan_make(plan, files, NFILES, &p, 0) == 0);
		walk_all(files, plan);
		/* a resumed plan: positions from start on */
		CHECK(slab_plan_make(plan, files, NFILES, &p, 40) == 0);
		walk_all(files, plan);
		slab_plan_free(plan);
	}
	{
		/* By hand: repeats, back and forth between files, an empty plan. */
		static struct slab_plan_entry e[] = {
			{ 0, 5 }, { 0, 5 }, { 1, 0 }, { 0, 59 }, { 0, 0 }, { 1, 36 }, { 0, 16 },
			{ 0, 5 }, { 1, 1 }, { 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 0 },
		};
		struct slab_plan plan;
		struct slab_file_id ids[NFILES];

		memset(&plan, 0, sizeof(plan));
		for (int i = 0; i < NFILES; i++)
			slab_file_identity(files[i], &ids[i]);
		plan.ids = ids;
		plan.nfiles = NFILES;
		plan.n = plan.length = sizeof(e) / sizeof(e[0]);
		plan.entries = e;
		walk_all(files, &plan);
		plan.n = plan.length = 0;
		walk_all(files, &plan);
	}
	epochs(files);
	renamed_over(files);
	if (!direct_ok)
		fprintf(stderr, "note: no O_DIRECT here; direct walks not checked\n");
	for (int i = 0; i < NFILES; i++) {
		slab_close(files[i]);
		unlink(paths[i]);
	}
	return UNIT_DONE();
}
