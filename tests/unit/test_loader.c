/* test_loader.c: the batch loader through slab.h: every sample of a plan once, in plan order,
 * the bytes slab_get() gives, for several thread counts, batch sizes and rings; held batches,
 * a full ring, close mid-epoch, fields wanted and missing, a corrupt sample under both
 * policies, the transform hook, the same batches with 1 and 8 threads, and with a page cache
 * budget over the next epochs' plans; labels parsed from a field, good and bad. */
#include "slab.h"
#include "crc32c.h"
#include "unit.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <turbojpeg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Write path with n samples keyed PREFIX0 ...: "txt" of 1 to ~3000 bytes in each, and a
 * second field `other` (4 bytes) in the samples whose index is not a multiple of 3. */
static void make_file(const char *path, const char *prefix, unsigned n, const char *other)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };
	static char text[4096];

	CHECK(fd >= 0 && w);
	CHECK(slab_writer_open(w, fd, path, &o) == 0);
	for (unsigned i = 0; i < n; i++) {
		char key[64];
		unsigned char bin[4] = { (unsigned char)i, 1, 2, (unsigned char)(i >> 8) };
		size_t len = 1 + (i * 997u) % 3000u;
		struct slab_writer_field f[2] = {
			{ .name = "txt", .data = text, .size = len },
			{ .name = other, .data = bin, .size = sizeof(bin) },
		};

		for (size_t k = 0; k < len; k++)
			text[k] = (char)('a' + (i + k) % 26);
		snprintf(key, sizeof(key), "%s%u", prefix, i);
		CHECK(slab_writer_add(w, key, strlen(key), f, i % 3 ? 2 : 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(close(fd) == 0);
}

static struct slab_plan *make_plan(struct slab_dataset *d, uint64_t seed)
{
	struct slab_plan_params p = { .size = sizeof(p), .mode = SLAB_PLAN_RANDOM, .seed = seed,
				      .world = 1, .window = 4 };
	struct slab_plan *plan = NULL;

	CHECK(slab_dataset_plan_make(d, &p, 0, &plan) == 0);
	return plan;
}

/* What a walk saw, byte for byte, to compare runs. */
struct trace {
	unsigned char *buf;
	size_t len, cap;
};

static void put(struct trace *t, const void *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2;
		t->buf = realloc(t->buf, t->cap);
		CHECK(t->buf != NULL);
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

/* Check batch b (number k) against the plan: its samples are the plan's entries from k * B
 * on, less those skipped (skip_file/skip_index, if any), with slab_get's bytes. */
static void check_batch(struct slab_dataset *d, struct slab_plan *plan, struct slab_loader *l,
			struct slab_loader_batch *b, uint64_t k, size_t B, struct trace *t,
			size_t skip_file, uint64_t skip_index)
{
	uint64_t e = k * B, end = e + B < slab_plan_count(plan) ? e + B : slab_plan_count(plan);
	size_t j = 0, n = slab_loader_batch_count(b);
	struct slab_loader_sample smp;

	CHECK(slab_loader_batch_number(b) == k);
	for (; e < end; e++) {
		size_t file;
		uint64_t index;
		struct slab *s;
		struct slab_sample ref;

		CHECK(slab_plan_get(plan, e, &file, &index) == 0);
		if (file == skip_file && index == skip_index)
			continue;
		if (j >= n) {
			CHECK(j < n);
			return;
		}
		s = slab_dataset_file(d, file);
		CHECK(slab_loader_batch_sample(b, j, &smp) == 0);
		CHECK(smp.pos == e && smp.file == file && smp.index == index);
		CHECK(slab_sample(s, index, &ref) == 0);
		CHECK(smp.key_len == ref.key_len && memcmp(smp.key, ref.key, ref.key_len) == 0);
		put(t, &smp.pos, sizeof(smp.pos));
		put(t, smp.key, smp.key_len);
		for (unsigned f = 0; f < slab_loader_field_count(l); f++) {
			const unsigned char *data = (const unsigned char *)"x";
			uint64_t size = 99;
			int id = slab_field_lookup(s, slab_loader_field_name(l, f));
			struct slab_field fl;
			int want = id < 0 ? 0 : slab_get(s, index, (unsigned)id, &fl);
			int got = slab_loader_batch_field(b, j, f, &data, &size);

			CHECK(got == want);
			if (want == 1) {
				CHECK(data == fl.data && size == fl.size);
				CHECK(memcmp(data, fl.data, (size_t)size) == 0);
				put(t, data, (size_t)size);
			} else {
				CHECK(data == NULL && size == 0);
			}
		}
		j++;
	}
	CHECK(j == n);
	CHECK(slab_loader_batch_sample(b, n, &smp) == SLAB_ERR_RANGE);
}

/* Load the whole plan, releasing each batch once checked; the trace of it in *t. */
static void run(struct slab_dataset *d, struct slab_plan *plan, const struct slab_loader_options *o,
		struct trace *t)
{
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_batch *b;
	uint64_t n = slab_plan_count(plan), want, k = 0, samples = 0;
	int rc;

	CHECK(slab_loader_open(l, d, plan, o) == 0);
	want = o->drop_last ? n / o->batch : (n + o->batch - 1) / o->batch;
	CHECK(slab_loader_batches(l) == want);
	while ((rc = slab_loader_next(l, &b)) == 1) {
		size_t expect = n - k * o->batch < o->batch ? (size_t)(n - k * o->batch) : o->batch;

		CHECK(slab_loader_batch_count(b) == expect);
		CHECK(slab_loader_batch_skipped(b) == 0);
		check_batch(d, plan, l, b, k, o->batch, t, SIZE_MAX, 0);
		samples += slab_loader_batch_count(b);
		slab_loader_release(l, b);
		slab_loader_release(l, b);      /* twice: ignored */
		k++;
	}
	CHECK(rc == 0);
	CHECK(k == want);
	CHECK(samples == (o->drop_last ? want * o->batch : n));
	CHECK(slab_loader_next(l, &b) == 0);
	CHECK_STR(slab_loader_error(l), "");
	slab_loader_close(l);
}

static void test_matrix(void)
{
	const char *paths[] = { "a.slab", "b.slab" };
	static const unsigned threads[] = { 1, 2, 4, 8 };
	static const size_t batches[] = { 1, 3, 64 };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct trace first[3][2] = { { { 0 } } };

	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 7);
	CHECK(slab_plan_count(plan) == 200);
	for (size_t ti = 0; ti < 4; ti++)
		for (size_t bi = 0; bi < 3; bi++)
			for (int drop = 0; drop < 2; drop++) {
				struct slab_loader_options o = {
					.size = sizeof(o), .batch = batches[bi],
					.threads = threads[ti], .drop_last = drop,
					/* read-ahead, and release, in some of them */
					.ahead = ti % 2 ? 4 : 0, .release = ti == 3,
					.verify = bi == 1,
				};
				struct trace t = { 0 };

				run(d, plan, &o, &t);
				if (ti == 0) {
					first[bi][drop] = t;
					continue;
				}
				/* The same batches, byte for byte, whatever the thread count. */
				CHECK(t.len == first[bi][drop].len &&
				      memcmp(t.buf, first[bi][drop].buf, t.len) == 0);
				free(t.buf);
			}
	for (size_t bi = 0; bi < 3; bi++)
		for (int drop = 0; drop < 2; drop++)
			free(first[bi][drop].buf);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* A page cache budget over this plan and two next ones, under both policies, with and without
 * release, a budget smaller than a batch's pages and one larger than the data: the same
 * batches, byte for byte, as with no budget, whatever the thread count. */
static void test_budget(void)
{
	const char *paths[] = { "a.slab", "b.slab" };
	static const unsigned threads[] = { 1, 2, 4 };
	static const uint64_t memory[] = { 3 * 4096, 40 * 4096, 1 << 30 };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan, *next[2];
	struct trace ref = { 0 };

	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 11);
	next[0] = make_plan(d, 12);
	next[1] = make_plan(d, 13);
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 7, .threads = 1 };
		run(d, plan, &o, &ref);
	}
	for (size_t ti = 0; ti < 3; ti++)
		for (size_t mi = 0; mi < 3; mi++)
			for (int policy = 0; policy < 2; policy++) {
				struct slab_loader_options o = {
					.size = sizeof(o), .batch = 7, .threads = threads[ti],
					.ahead = 1 + 3 * mi, .release = (int)(ti + mi) % 2,
					.memory = memory[mi],
					.cache_policy = policy ? SLAB_CACHE_FIXED : SLAB_CACHE_BELADY,
					.next_plans = (const struct slab_plan *const *)next,
					.nnext = mi == 1 ? 1 : 2,
				};
				struct trace t = { 0 };

				run(d, plan, &o, &t);
				CHECK(t.len == ref.len && memcmp(t.buf, ref.buf, t.len) == 0);
				free(t.buf);
			}
	/* Next plans announced and not given. */
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 7, .ahead = 1,
						 .memory = 1 << 20, .nnext = 2 };
		struct slab_loader *l = slab_loader_new();

		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "2 next plans, none given");
		slab_loader_close(l);
	}
	free(ref.buf);
	slab_plan_free(next[0]);
	slab_plan_free(next[1]);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* Rings of 1 and 2; a consumer holding batches, releasing out of order; close mid-epoch. */
static void test_ring(void)
{
	const char *paths[] = { "a.slab", "b.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct slab_loader *l;
	struct slab_loader_batch *b[4], *x;
	struct trace t = { 0 };
	uint64_t k = 0;
	int rc;

	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 3);

	/* Ring of 1: one batch at a time. */
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 3, .threads = 4, .ring = 1 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
	}
	CHECK(slab_loader_next(l, &b[0]) == 1);
	CHECK(slab_loader_next(l, &x) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "the ring's one batch is held: release it first");
	slab_loader_release(l, b[0]);
	CHECK(slab_loader_next(l, &b[1]) == 1 && slab_loader_batch_number(b[1]) == 1);
	check_batch(d, plan, l, b[1], 1, 3, &t, SIZE_MAX, 0);
	slab_loader_release(l, b[1]);
	k = 2;
	while ((rc = slab_loader_next(l, &x)) == 1) {
		check_batch(d, plan, l, x, k++, 3, &t, SIZE_MAX, 0);
		slab_loader_release(l, x);
	}
	CHECK(rc == 0 && k == 67);
	slab_loader_close(l);

	/* Ring of 2: two held, the third refused; released in reverse order. */
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 64, .threads = 2, .ring = 2,
						 .ahead = 2, .release = 1 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
	}
	CHECK(slab_loader_next(l, &b[0]) == 1 && slab_loader_next(l, &b[1]) == 1);
	CHECK(slab_loader_next(l, &x) == SLAB_ERR_INVAL);
	check_batch(d, plan, l, b[0], 0, 64, &t, SIZE_MAX, 0);
	check_batch(d, plan, l, b[1], 1, 64, &t, SIZE_MAX, 0);
	slab_loader_release(l, b[1]);
	CHECK(slab_loader_next(l, &b[2]) == 1);
	check_batch(d, plan, l, b[2], 2, 64, &t, SIZE_MAX, 0);
	/* b[0] is still good while held, whatever was released after it. */
	check_batch(d, plan, l, b[0], 0, 64, &t, SIZE_MAX, 0);
	slab_loader_release(l, b[0]);
	slab_loader_release(l, b[2]);
	CHECK(slab_loader_next(l, &b[3]) == 1 && slab_loader_batch_count(b[3]) == 200 - 3 * 64);
	check_batch(d, plan, l, b[3], 3, 64, &t, SIZE_MAX, 0);
	slab_loader_release(l, b[3]);
	CHECK(slab_loader_next(l, &x) == 0);
	slab_loader_close(l);

	/* Holding three of a ring of four all along. */
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 5, .threads = 3, .ring = 4 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
	}
	CHECK(slab_loader_next(l, &b[0]) == 1 && slab_loader_next(l, &b[1]) == 1);
	k = 2;
	while ((rc = slab_loader_next(l, &b[2])) == 1) {
		check_batch(d, plan, l, b[2], k++, 5, &t, SIZE_MAX, 0);
		check_batch(d, plan, l, b[0], k - 3, 5, &t, SIZE_MAX, 0);
		slab_loader_release(l, b[0]);
		b[0] = b[1];
		b[1] = b[2];
	}
	CHECK(rc == 0 && k == 40);

	/* Close with two batches held, workers filling the rest. */
	slab_loader_close(l);
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 3, .threads = 8, .ahead = 3,
						 .release = 1 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
	}
	CHECK(slab_loader_next(l, &b[0]) == 1 && slab_loader_next(l, &b[1]) == 1);
	slab_loader_close(l);
	/* Closed before any batch is asked for. */
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 1, .threads = 2 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
	}
	slab_loader_close(l);
	slab_loader_close(NULL);
	free(t.buf);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

static void test_fields(void)
{
	const char *paths[] = { "a.slab", "b.slab" };
	const char *bin[] = { "bin" }, *nope[] = { "txt", "nope" }, *twice[] = { "txt", "txt" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct slab_loader *l = slab_loader_new();
	struct trace t = { 0 };

	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 11);
	{
		/* All: every file's names, sorted. */
		struct slab_loader_options o = { .size = sizeof(o), .batch = 7, .threads = 2 };
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_field_count(l) == 3);
		CHECK_STR(slab_loader_field_name(l, 0), "bin");
		CHECK_STR(slab_loader_field_name(l, 1), "extra");
		CHECK_STR(slab_loader_field_name(l, 2), "txt");
		CHECK(slab_loader_field_name(l, 3) == NULL);
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "loader already open");
		slab_loader_close(l);
	}
	{
		/* One field, which b.slab lacks and a.slab has in two samples of three. */
		struct slab_loader_options o = { .size = sizeof(o), .batch = 7, .threads = 2,
						 .fields = bin, .nfields = 1 };
		struct slab_loader_batch *b;
		unsigned present = 0, absent = 0;
		int rc;

		run(d, plan, &o, &t);
		l = slab_loader_new();
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_field_count(l) == 1);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			for (size_t j = 0; j < slab_loader_batch_count(b); j++) {
				const unsigned char *p;
				uint64_t size;
				struct slab_loader_sample s;

				CHECK(slab_loader_batch_sample(b, j, &s) == 0);
				rc = slab_loader_batch_field(b, j, 0, &p, &size);
				CHECK(rc == (s.file == 0 && s.index % 3 != 0));
				if (rc == 1)
					CHECK(size == 4 && p[0] == (unsigned char)s.index);
				present += rc == 1;
				absent += rc == 0;
			}
			CHECK(slab_loader_batch_field(b, 0, 1, &(const unsigned char *){ 0 },
						      &(uint64_t){ 0 }) == SLAB_ERR_RANGE);
			slab_loader_release(l, b);
		}
		CHECK(rc == 0);
		CHECK(present == 80 && absent == 200 - 80);
		slab_loader_close(l);
	}
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 7, .fields = nope, .nfields = 2 };
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_NOTFOUND);
		CHECK_STR(slab_loader_error(l), "no file has a field 'nope' (fields: bin, extra, txt)");
		o.fields = twice;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "field 'txt' wanted twice");
		o.nfields = 1;
		o.batch = 0;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "batch size 0");
		o.batch = 1;
		o.threads = 1025;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "1025 threads: at most 1024");
		o.threads = 1;
		o.size = 8;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "loader options of 8 bytes: no such version");
		CHECK(slab_loader_next(l, &(struct slab_loader_batch *){ 0 }) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "loader not open");
	}
	slab_loader_close(l);
	free(t.buf);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* Copy a.slab to c.slab with one byte of sample 5's "txt" flipped; the expected message. */
static void make_corrupt(char *msg, size_t len)
{
	struct slab *s = slab_new();
	struct slab_field fl;
	unsigned char *buf;
	struct stat st;
	int fd, id;
	uint32_t crc;

	CHECK(slab_open(s, "a.slab") == 0);
	id = slab_field_lookup(s, "txt");
	CHECK(id >= 0 && slab_get(s, 5, (unsigned)id, &fl) == 1);
	CHECK(stat("a.slab", &st) == 0);
	buf = malloc((size_t)st.st_size);
	memcpy(buf, slab_base(s), (size_t)st.st_size);
	buf[fl.offset + 1] ^= 0x20;
	crc = slab_crc32c(0, buf + fl.offset, (size_t)fl.size);
	snprintf(msg, len, "'c.slab': sample #5 'k5': field 'txt': CRC32C %08x, recorded %08x", crc,
		 fl.crc);
	fd = open("c.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, buf, (size_t)st.st_size) == st.st_size && close(fd) == 0);
	free(buf);
	slab_close(s);
}

static void test_corrupt(void)
{
	const char *paths[] = { "c.slab", "b.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct trace t1 = { 0 }, t8 = { 0 };
	char msg[256];
	uint64_t bad = 0;

	make_corrupt(msg, sizeof(msg));
	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 5);
	for (uint64_t e = 0; e < slab_plan_count(plan); e++) {
		size_t file;
		uint64_t index;

		CHECK(slab_plan_get(plan, e, &file, &index) == 0);
		if (file == 0 && index == 5)
			bad = e;
	}
	for (unsigned threads = 1; threads <= 8; threads += 7) {
		/* Fail: the batch holding it fails, and every later call. */
		struct slab_loader *l = slab_loader_new();
		struct slab_loader_options o = { .size = sizeof(o), .batch = 3, .threads = threads,
						 .verify = 1, .ahead = 2 };
		struct slab_loader_batch *b;
		uint64_t k = 0, skipped = 0;
		int rc;

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			k++;
			slab_loader_release(l, b);
		}
		CHECK(rc == SLAB_ERR_CORRUPT && k == bad / 3);
		CHECK_STR(slab_loader_error(l), msg);
		CHECK(slab_loader_next(l, &b) == SLAB_ERR_CORRUPT);
		slab_loader_close(l);

		/* Skip: the batch is one shorter, the rest as usual. */
		l = slab_loader_new();
		o.skip = 1;
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		k = 0;
		while ((rc = slab_loader_next(l, &b)) == 1) {
			int has = k == bad / 3;

			CHECK(slab_loader_batch_skipped(b) == (size_t)has);
			CHECK(slab_loader_batch_count(b) == (k == 66 ? 2u : 3u) - has);
			check_batch(d, plan, l, b, k, 3, threads == 1 ? &t1 : &t8, 0, 5);
			skipped += slab_loader_batch_skipped(b);
			CHECK_STR(slab_loader_error(l), k >= bad / 3 ? msg : "");
			slab_loader_release(l, b);
			k++;
		}
		CHECK(rc == 0 && skipped == 1 && slab_loader_skipped(l) == 1);
		CHECK(k == 67);
		CHECK_STR(slab_loader_error(l), msg);
		slab_loader_close(l);

		/* Without verify the flipped byte goes through, as slab_get gives it. */
		l = slab_loader_new();
		o.verify = 0;
		o.skip = 0;
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		k = 0;
		while ((rc = slab_loader_next(l, &b)) == 1) {
			struct trace t = { 0 };
			check_batch(d, plan, l, b, k++, 3, &t, SIZE_MAX, 0);
			free(t.buf);
			slab_loader_release(l, b);
		}
		CHECK(rc == 0 && k == 67);
		slab_loader_close(l);
	}
	CHECK(t1.len > 0 && t1.len == t8.len && memcmp(t1.buf, t8.buf, t1.len) == 0);
	free(t1.buf);
	free(t8.buf);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* The hook: 16 bytes per sample, the txt field's size and first bytes; keys ending in 7 fail. */
static int stamp(void *arg, const struct slab_loader_sample *smp, const unsigned char *bytes,
		 uint64_t size, unsigned char *out, char *why, size_t why_size)
{
	CHECK(arg == (void *)stamp);
	CHECK(((uintptr_t)out & 63) == 0);
	if (smp->key[smp->key_len - 1] == '7') {
		snprintf(why, why_size, "no sevens");
		return SLAB_ERR_CORRUPT;
	}
	memset(out, 0, 16);
	memcpy(out, &size, sizeof(size));
	memcpy(out + 8, bytes, size < 8 ? (size_t)size : 8);
	return 0;
}

static void test_transform(void)
{
	const char *paths[] = { "a.slab", "b.slab" }, *txt[] = { "txt" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_options o = { .size = sizeof(o), .batch = 64, .threads = 4, .skip = 1,
					 .transform = stamp, .transform_arg = (void *)stamp,
					 .transform_field = "txt", .out_size = 16 };
	struct slab_loader_batch *b;
	uint64_t delivered = 0, sevens = 0;
	int rc;

	CHECK(slab_dataset_open(d, paths, 2) == 0);
	plan = make_plan(d, 2);
	for (uint64_t e = 0; e < slab_plan_count(plan); e++) {
		size_t file;
		uint64_t index;
		CHECK(slab_plan_get(plan, e, &file, &index) == 0);
		sevens += index % 10 == 7;
	}
	CHECK(slab_loader_open(l, d, plan, &o) == 0);
	while ((rc = slab_loader_next(l, &b)) == 1) {
		for (size_t j = 0; j < slab_loader_batch_count(b); j++) {
			struct slab_loader_sample s;
			const unsigned char *p, *out = slab_loader_batch_out(b, j);
			uint64_t size, osize;

			CHECK(slab_loader_batch_sample(b, j, &s) == 0);
			CHECK(slab_loader_batch_field(b, j, 2, &p, &size) == 1);
			CHECK(out != NULL);
			memcpy(&osize, out, sizeof(osize));
			CHECK(osize == size && memcmp(out + 8, p, size < 8 ? size : 8) == 0);
			CHECK(s.index % 10 != 7);
		}
		CHECK(slab_loader_batch_out(b, slab_loader_batch_count(b)) == NULL);
		delivered += slab_loader_batch_count(b);
		slab_loader_release(l, b);
	}
	CHECK(rc == 0 && delivered == 200 - sevens && slab_loader_skipped(l) == sevens);
	CHECK(strstr(slab_loader_error(l), "7': no sevens") != NULL);
	slab_loader_close(l);

	l = slab_loader_new();
	o.fields = txt;
	o.nfields = 1;
	o.transform_field = "bin";
	CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "transform field 'bin' is not one of the wanted fields");
	slab_loader_close(l);

	/* an out_size whose rounding up to 64 bytes wraps: refused, not a ring with no output
	 * (the transform was handed NULL to write out_size bytes to) */
	o.transform_field = "txt";
	o.batch = 1;
	for (int k = 0; k < 2; k++) {
		size_t big = k ? SIZE_MAX : SIZE_MAX - 10;
		char want[96];

		l = slab_loader_new();
		o.out_size = big;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		snprintf(want, sizeof(want), "transform output of %zu bytes a sample: too large", big);
		CHECK_STR(slab_loader_error(l), want);
		slab_loader_close(l);
	}
	/* and one that fits alone but not in a batch of one sample */
	l = slab_loader_new();
	o.out_size = SIZE_MAX / 4;
	CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "batch of 1 sample: too large");
	slab_loader_close(l);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* The image pipeline in the workers: i.jpg holds 14 JPEGs of several sizes and one that is
 * cut short. Every output equals slab_image_*() called directly with the sample's global
 * index; 1 and 4 threads give the same bytes; the cut JPEG is a bad sample (skipped and
 * counted, or failing its batch). */
static void make_jpegs(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };
	tjhandle tj = tjInitCompress();

	CHECK(fd >= 0 && w && tj);
	CHECK(slab_writer_open(w, fd, path, &o) == 0);
	for (unsigned i = 0; i < 15; i++) {
		int iw = 40 + (int)(i * 37 % 200), ih = 30 + (int)(i * 53 % 150);
		unsigned char *pix = malloc((size_t)iw * (size_t)ih * 3), *jpg = NULL;
		unsigned long jlen = 0;
		char key[16];

		for (int k = 0; k < iw * ih * 3; k++)
			pix[k] = (unsigned char)((k / 3 % iw) * 5 + (k / 3 / iw) * 3 + k % 3 * 60 + i);
		CHECK(tjCompress2(tj, pix, iw, 0, ih, TJPF_RGB, &jpg, &jlen, TJSAMP_420, 85, 0) == 0);
		if (i == 9)
			jlen = jlen * 2 / 3;    /* cut short: a bad sample */
		snprintf(key, sizeof(key), "i%u", i);
		struct slab_writer_field f = { .name = "jpg", .data = jpg, .size = jlen };
		CHECK(slab_writer_add(w, key, strlen(key), &f, 1) == 0);
		tjFree(jpg);
		free(pix);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	tjDestroy(tj);
	CHECK(close(fd) == 0);
}

static void image_run(struct slab_dataset *d, struct slab_plan *plan, unsigned threads,
		      const struct slab_image_spec *spec, struct trace *t)
{
	const char *fields[] = { "jpg" };
	struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .threads = threads,
					 .fields = fields, .nfields = 1, .skip = 1,
					 .transform_field = "jpg", .image = spec, .seed = 5,
					 .epoch = 2 };
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_batch *b;
	struct slab_image_decoder *dec = slab_image_decoder_new();
	size_t out = (size_t)spec->out_w * spec->out_h * 3;
	unsigned char *want = malloc(out);
	int rc;

	CHECK(slab_loader_open(l, d, plan, &o) == 0);
	while ((rc = slab_loader_next(l, &b)) == 1) {
		const struct slab_loader_sample *all = slab_loader_batch_samples(b);
		const unsigned char *col[4];
		uint64_t colsize[4];

		CHECK(slab_loader_batch_count(b) <= 4);
		CHECK(slab_loader_batch_column(b, 0, col, colsize) == 0);
		CHECK(slab_loader_batch_column(b, 1, col, colsize) == SLAB_ERR_RANGE);
		for (size_t j = 0; j < slab_loader_batch_count(b); j++) {
			struct slab_loader_sample smp;
			const unsigned char *data;
			uint64_t size, g;
			uint32_t iw, ih;
			struct slab_image_params ip;

			CHECK(slab_loader_batch_sample(b, j, &smp) == 0);
			CHECK(slab_loader_batch_field(b, j, 0, &data, &size) == 1);
			/* The bulk accessors give the same; the images are one array. */
			CHECK(all[j].pos == smp.pos && all[j].key == smp.key);
			CHECK(col[j] == data && colsize[j] == size);
			CHECK(slab_loader_batch_out(b, j) == slab_loader_batch_out(b, 0) + j * out);
			CHECK(slab_dataset_global(d, smp.file, smp.index, &g) == 0);
			CHECK(slab_image_size(dec, data, size, &iw, &ih) == 0);
			CHECK(slab_image_params(spec, iw, ih, 5, 2, g, &ip) == 0);
			CHECK(slab_image_decode(dec, data, size, spec, &ip, want, NULL) == 0);
			CHECK(memcmp(slab_loader_batch_out(b, j), want, out) == 0);
			put(t, slab_loader_batch_out(b, j), out);
			put(t, smp.key, smp.key_len);
		}
		slab_loader_release(l, b);
	}
	CHECK(rc == 0);
	CHECK(slab_loader_skipped(l) == 1);
	CHECK(strstr(slab_loader_error(l), "'i.slab': sample #9 'i9': ") == slab_loader_error(l));
	{
		struct slab_loader_stats st = { .size = sizeof(st) };

		slab_loader_stats(l, &st);
		CHECK(st.batches == 4 && st.samples == 14 && st.skipped == 1 && st.images == 14);
		CHECK(st.scaled[0] + st.scaled[1] + st.scaled[2] + st.scaled[3] == 14);
		CHECK(st.scaled[0] < 14 && st.region <= 14 && st.decoded_pixels > 0);
		CHECK(st.bytes > 0);
	}
	slab_loader_close(l);
	slab_image_decoder_free(dec);
	free(want);
}

static void test_images(void)
{
	const char *paths[] = { "i.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan *plan;
	struct slab_image_spec spec;
	struct trace one = { 0 }, four = { 0 };

	make_jpegs("i.slab");
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	plan = make_plan(d, 3);
	/* An odd size: 31 x 23 x 3 bytes is no multiple of 64, the images still touch. */
	slab_image_spec_init(&spec, 31, 23);
	spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	spec.flip = 1;
	image_run(d, plan, 1, &spec, &one);
	image_run(d, plan, 4, &spec, &four);
	/* 14 images (i9 skipped) and their keys: i0 .. i8, i10 .. i14. */
	CHECK(one.len == 14 * 31 * 23 * 3 + 9 * 2 + 5 * 3 && one.len == four.len);
	CHECK(memcmp(one.buf, four.buf, one.len) == 0);

	/* Without skip the cut JPEG fails its batch, naming it. */
	{
		const char *fields[] = { "jpg" };
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .threads = 2,
						 .fields = fields, .nfields = 1,
						 .transform_field = "jpg", .image = &spec };
		struct slab_loader *l = slab_loader_new();
		struct slab_loader_batch *b;
		int rc;

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		while ((rc = slab_loader_next(l, &b)) == 1)
			slab_loader_release(l, b);
		CHECK(rc == SLAB_ERR_CORRUPT);
		CHECK(strstr(slab_loader_error(l), "'i.slab': sample #9 'i9': ") != NULL);
		slab_loader_close(l);
	}
	/* An image spec needs its field, and excludes a transform. */
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .image = &spec };
		struct slab_loader *l = slab_loader_new();

		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l),
			  "an image spec needs the image field (transform_field)");
		slab_loader_close(l);
	}
	free(one.buf);
	free(four.buf);
	slab_plan_free(plan);
	slab_dataset_close(d);
	unlink("i.slab");
}


/* A transform that fails every sample of file 0 whose index is below 10. */
static int fail_low(void *arg, const struct slab_loader_sample *smp, const unsigned char *bytes,
		    uint64_t size, unsigned char *out, char *why, size_t why_size)
{
	(void)arg;
	(void)bytes;
	(void)size;
	(void)out;
	if (smp->file == 0 && smp->index < 10) {
		snprintf(why, why_size, "low");
		return SLAB_ERR_CORRUPT;
	}
	return 0;
}

/* A stop in the middle of a batch: the transform's first call waits until a consumer blocked
 * in slab_loader_next() has come back from the stop, and counts every call. */
struct midstop {
	struct slab_loader *l;
	int calls, started, back, rc;
};

static int midstop_transform(void *arg, const struct slab_loader_sample *smp,
			     const unsigned char *bytes, uint64_t size, unsigned char *out,
			     char *why, size_t why_size)
{
	struct midstop *m = arg;

	(void)smp;
	(void)bytes;
	(void)size;
	(void)why;
	(void)why_size;
	memset(out, 0, 8);
	if (__atomic_fetch_add(&m->calls, 1, __ATOMIC_SEQ_CST) == 0) {
		__atomic_store_n(&m->started, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&m->back, __ATOMIC_SEQ_CST))
			sched_yield();
	}
	return 0;
}

static void *midstop_consumer(void *arg)
{
	struct midstop *m = arg;
	struct slab_loader_batch *b;

	m->rc = slab_loader_next(m->l, &b);
	__atomic_store_n(&m->back, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* slab_loader_stop() while a worker is in the middle of a batch of 120 samples: it stops
 * after the sample in hand, not after the batch (thousands of images or clips take
 * seconds), and the consumer waiting for that batch gets "loader closed". */
static void test_stop_midbatch(void)
{
	const char *paths[] = { "a.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan_params pp = { .size = sizeof(pp), .mode = SLAB_PLAN_SEQUENTIAL, .world = 1 };
	struct slab_plan *plan = NULL;
	struct midstop m = { 0 };
	struct slab_loader_options o = { .size = sizeof(o), .batch = 120, .threads = 1, .ring = 1,
					 .transform = midstop_transform, .transform_arg = &m,
					 .transform_field = "txt", .out_size = 8 };
	pthread_t consumer;

	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	m.l = slab_loader_new();
	CHECK(slab_loader_open(m.l, d, plan, &o) == 0);
	CHECK(pthread_create(&consumer, NULL, midstop_consumer, &m) == 0);
	while (!__atomic_load_n(&m.started, __ATOMIC_SEQ_CST))
		sched_yield();
	slab_loader_stop(m.l);
	CHECK(pthread_join(consumer, NULL) == 0);
	CHECK(m.rc == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(m.l), "loader closed");
	CHECK(m.calls == 1);
	slab_loader_close(m.l);
	slab_plan_free(plan);
	slab_dataset_close(d);
}

/* What a training job meets: stop with batches held (they stay readable, next fails), a
 * batch whose every sample was skipped (not handed out), a batch size past the plan (one
 * batch, no ring of that size), crop ranges that fit no image (refused at open), a file
 * truncated while loaded (an error naming it, no SIGBUS), a fork() child (refused there,
 * its close frees without joining). */
static void test_hardening(void)
{
	const char *paths[] = { "a.slab" }, *tpaths[] = { "t.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan_params pp = { .size = sizeof(pp), .mode = SLAB_PLAN_SEQUENTIAL, .world = 1 };
	struct slab_plan *plan = NULL;
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_batch *b, *b2;
	struct slab_loader_sample smp;
	const unsigned char *p;
	uint64_t size;
	int rc;

	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 5, .threads = 2, .ahead = 2 };

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_next(l, &b) == 1 && slab_loader_next(l, &b2) == 1);
		slab_loader_stop(l);
		slab_loader_stop(l);
		CHECK(slab_loader_next(l, &b) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "loader closed");
		CHECK(slab_loader_batch_count(b) == 5 && slab_loader_batch_number(b2) == 1);
		CHECK(slab_loader_batch_sample(b2, 4, &smp) == 0 && smp.index == 9);
		CHECK(slab_loader_batch_field(b2, 3, 0, &p, &size) == 1 && size == 4 && p[0] == 8);
		slab_loader_release(l, b);
		slab_loader_close(l);
	}
	l = slab_loader_new();
	{
		/* Batches of 4: samples 0-9 fail, so batches 0 and 1 are all skipped, 2 half. */
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .threads = 3, .skip = 1,
						 .transform = fail_low, .transform_field = "txt",
						 .out_size = 8 };
		uint64_t first = UINT64_MAX, batches = 0;
		struct slab_loader_stats st = { .size = sizeof(st) };

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			CHECK(slab_loader_batch_count(b) > 0);
			if (first == UINT64_MAX)
				first = slab_loader_batch_number(b);
			batches++;
			slab_loader_release(l, b);
		}
		slab_loader_stats(l, &st);
		CHECK(rc == 0 && first == 2 && batches == 28 && slab_loader_batches(l) == 30);
		CHECK(slab_loader_skipped(l) == 10 && st.skipped == 10 && st.batches == 28);
		CHECK(st.samples == 110);
		slab_loader_close(l);
	}
	l = slab_loader_new();
	{
		/* Options of the first version's size (0.1.0: up to nnext) are taken, the fields
		 * after it default; smaller ones are no version. */
		struct slab_loader_options o = { .size = offsetof(struct slab_loader_options,
								  max_pixels),
						 .batch = 8, .max_pixels = 1 };

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_next(l, &b) == 1 && slab_loader_batch_count(b) == 8);
		slab_loader_close(l);
		l = slab_loader_new();
		o.size = offsetof(struct slab_loader_options, nnext);
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		slab_loader_close(l);
	}
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = (size_t)1 << 40,
						 .threads = 2 };

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_batches(l) == 1);
		CHECK(slab_loader_next(l, &b) == 1 && slab_loader_batch_count(b) == 120);
		slab_loader_release(l, b);
		CHECK(slab_loader_next(l, &b) == 0);
		slab_loader_close(l);
	}
	l = slab_loader_new();
	{
		struct slab_image_spec spec;
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .image = &spec,
						 .transform_field = "txt" };

		slab_image_spec_init(&spec, 8, 8);
		spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
		spec.scale_min = spec.scale_max = 0;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "image scale (0, 0): wanted 0 < min <= max <= 1");
		spec.scale_max = 1;
		spec.scale_min = 0.5;
		spec.ratio_max = 1.0 / 0.0;
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "image ratio (0.75, inf): wanted 0 < min <= max, both finite");
		slab_loader_close(l);
	}
	slab_plan_free(plan);
	slab_dataset_close(d);

	/* Truncated under the loader, after the first batch was handed out. */
	make_file("t.slab", "t", 120, "bin");
	d = slab_dataset_new();
	plan = NULL;
	CHECK(slab_dataset_open(d, tpaths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .threads = 2, .ring = 2,
						 .verify = 1 };
		unsigned got = 1;

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_next(l, &b) == 1);
		CHECK(truncate("t.slab", 4096) == 0);
		slab_loader_release(l, b);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			got++;
			slab_loader_release(l, b);
		}
		CHECK(rc == SLAB_ERR_IO && got < 30);
		CHECK(strncmp(slab_loader_error(l), "'t.slab': ", 10) == 0);
		CHECK(strstr(slab_loader_error(l), "the file is 4096 bytes now, ") != NULL);
		CHECK(strstr(slab_loader_error(l), "(truncated while in use)") != NULL);
		CHECK(slab_loader_next(l, &b) == SLAB_ERR_IO);
		slab_loader_close(l);
	}
	slab_plan_free(plan);
	slab_dataset_close(d);
	unlink("t.slab");

#ifndef __SANITIZE_THREAD__     /* TSan does not follow a threaded process into fork() */
	d = slab_dataset_new();
	plan = NULL;
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 4, .threads = 2, .ahead = 4 };
		unsigned got = 1;
		pid_t pid;
		int status;

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_next(l, &b) == 1);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			int ok = slab_loader_next(l, &b2) == SLAB_ERR_INVAL &&
				 strstr(slab_loader_error(l), "a fork() child has none of its threads") &&
				 slab_loader_batch_count(b) == 4;

			slab_loader_release(l, b);
			slab_loader_close(l);
			slab_plan_free(plan);
			slab_dataset_close(d);
			_exit(ok ? 0 : 1);
		}
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
		slab_loader_release(l, b);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			CHECK(slab_loader_batch_number(b) == got);
			got++;
			slab_loader_release(l, b);
		}
		CHECK(rc == 0 && got == 30);
		slab_loader_close(l);
	}
	slab_plan_free(plan);
	slab_dataset_close(d);
#endif
}

/* Labels (label_field): l.slab's "cls" texts, good and bad, in a sequential plan. Good ones
 * parse to what they say, in a page-aligned array per batch, with 1 and 4 threads alike; bad
 * ones are bad samples whose message names the key, the field and the text; the field must be
 * one of the wanted ones; options of the version before label_field still open. */
static const struct {
	const char *text;       /* NULL: the sample has no cls */
	size_t len;
	int64_t want;
	const char *why;        /* NULL: a good label */
} labels[] = {
	{ "0", 1, 0, NULL },
	{ "42\n", 3, 42, NULL },
	{ " -7 ", 4, -7, NULL },
	{ "+3", 2, 3, NULL },
	{ "9223372036854775807", 19, INT64_MAX, NULL },
	{ "-9223372036854775808", 20, INT64_MIN, NULL },
	{ "abc", 3, 0, "field 'cls': not an integer: 'abc'" },
	{ "", 0, 0, "field 'cls': not an integer: ''" },
	{ "9223372036854775808", 19, 0,
	  "field 'cls': integer out of the int64 range: '9223372036854775808'" },
	{ "1 2", 3, 0, "field 'cls': not an integer: '1 2'" },
	{ NULL, 0, 0, "no label field 'cls'" },
	{ "\t\r\n 15 \n\v\f", 10, 15, NULL },
	{ "-", 1, 0, "field 'cls': not an integer: '-'" },
	{ "0x10", 4, 0, "field 'cls': not an integer: '0x10'" },
	{ "12\0", 3, 0, "field 'cls': not an integer: '12\\x00'" },
	{ "-9223372036854775809\n", 21, 0,
	  "field 'cls': integer out of the int64 range: '-9223372036854775809\\n'" },
	{ "0000000000000000000000000000000000000007", 40, 7, NULL },
	{ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 40, 0,
	  "field 'cls': not an integer: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'" },
	{ "99999999999999999999999x", 24, 0,
	  "field 'cls': not an integer: '99999999999999999999999x'" },
	{ "'\\'", 3, 0, "field 'cls': not an integer: '\\'\\\\\\''" },
};
#define NLABELS (sizeof(labels) / sizeof(labels[0]))

static void make_labels(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };

	CHECK(fd >= 0 && w);
	CHECK(slab_writer_open(w, fd, path, &o) == 0);
	for (unsigned i = 0; i < NLABELS; i++) {
		char key[16];
		struct slab_writer_field f[2] = {
			{ .name = "txt", .data = "t", .size = 1 },
			{ .name = "cls", .data = labels[i].text, .size = labels[i].len },
		};

		snprintf(key, sizeof(key), "l%u", i);
		CHECK(slab_writer_add(w, key, strlen(key), f, labels[i].text ? 2 : 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(close(fd) == 0);
}

/* Every batch with skip: the good labels in order, the bad counted, the first one's error. */
static void labels_run(struct slab_dataset *d, struct slab_plan *plan, unsigned threads,
		       const char *const *fields, size_t nfields)
{
	struct slab_loader_options o = { .size = sizeof(o), .batch = 3, .threads = threads,
					 .fields = fields, .nfields = nfields, .skip = 1,
					 .label_field = "cls" };
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_batch *b;
	size_t want = 0, bad = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	int rc;

	for (size_t i = 0; i < NLABELS; i++)
		bad += labels[i].why != NULL;
	CHECK(slab_loader_open(l, d, plan, &o) == 0);
	while ((rc = slab_loader_next(l, &b)) == 1) {
		const int64_t *lab = slab_loader_batch_labels(b);

		CHECK(lab != NULL && (uintptr_t)lab % page == 0);
		CHECK(slab_loader_batch_out(b, 0) == NULL);
		for (size_t j = 0; j < slab_loader_batch_count(b); j++) {
			struct slab_loader_sample smp;

			while (want < NLABELS && labels[want].why)
				want++;
			CHECK(slab_loader_batch_sample(b, j, &smp) == 0 && smp.index == want);
			CHECK(want < NLABELS && lab[j] == labels[want].want);
			want++;
		}
		slab_loader_release(l, b);
	}
	CHECK(rc == 0 && slab_loader_skipped(l) == bad);
	CHECK_STR(slab_loader_error(l), "'l.slab': sample #6 'l6': field 'cls': not an integer: 'abc'");
	slab_loader_close(l);
}

/* Labels with the image pipeline: li.slab, 7 samples of a small JPEG and cls "1000 i\n"; the
 * labels are on a page of their own after the images. */
static void labels_images(void)
{
	const char *paths[] = { "li.slab" }, *jpg[] = { "jpg" };
	int fd = open("li.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options wo = { .page_size = 4096 };
	tjhandle tj = tjInitCompress();
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan_params pp = { .size = sizeof(pp), .mode = SLAB_PLAN_SEQUENTIAL, .world = 1 };
	struct slab_plan *plan = NULL;
	struct slab_image_spec spec;
	struct slab_loader *l = slab_loader_new();
	struct slab_loader_batch *b;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), seen = 0;
	int rc;

	CHECK(fd >= 0 && w && tj);
	CHECK(slab_writer_open(w, fd, "li.slab", &wo) == 0);
	for (unsigned i = 0; i < 7; i++) {
		unsigned char pix[20 * 16 * 3], *j = NULL;
		unsigned long jlen = 0;
		char key[8], cls[8];

		for (size_t k = 0; k < sizeof(pix); k++)
			pix[k] = (unsigned char)(k * 7 + i * 40);
		CHECK(tjCompress2(tj, pix, 20, 0, 16, TJPF_RGB, &j, &jlen, TJSAMP_444, 90, 0) == 0);
		snprintf(key, sizeof(key), "j%u", i);
		snprintf(cls, sizeof(cls), "%u\n", i * 1000);
		struct slab_writer_field f[2] = {
			{ .name = "jpg", .data = j, .size = jlen },
			{ .name = "cls", .data = cls, .size = strlen(cls) },
		};
		CHECK(slab_writer_add(w, key, strlen(key), f, 2) == 0);
		tjFree(j);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	tjDestroy(tj);
	CHECK(close(fd) == 0);
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	slab_image_spec_init(&spec, 9, 7);
	spec.center_ratio = 0.875;
	{
		/* No fields named: every field, cls among them. */
		struct slab_loader_options o = { .size = sizeof(o), .batch = 3, .threads = 2,
						 .transform_field = "jpg", .image = &spec,
						 .label_field = "cls" };

		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		while ((rc = slab_loader_next(l, &b)) == 1) {
			const int64_t *lab = slab_loader_batch_labels(b);
			size_t n = slab_loader_batch_count(b);

			CHECK(lab && (uintptr_t)lab % page == 0);
			CHECK((const unsigned char *)lab >= slab_loader_batch_out(b, 0) + n * 9 * 7 * 3);
			for (size_t j = 0; j < n; j++)
				CHECK(lab[j] == (int64_t)(seen + j) * 1000);
			seen += n;
			slab_loader_release(l, b);
		}
		CHECK(rc == 0 && seen == 7);
		slab_loader_close(l);
		/* Only the wanted fields: the label field is one of them or refused. */
		o.fields = jpg;
		o.nfields = 1;
		l = slab_loader_new();
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "label field 'cls' is not one of the wanted fields");
		slab_loader_close(l);
	}
	slab_plan_free(plan);
	slab_dataset_close(d);
	unlink("li.slab");
}

static void test_labels(void)
{
	const char *paths[] = { "l.slab" }, *cls[] = { "cls" }, *txt[] = { "txt" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan_params pp = { .size = sizeof(pp), .mode = SLAB_PLAN_SEQUENTIAL, .world = 1 };
	struct slab_plan *plan = NULL;
	struct slab_loader *l;
	struct slab_loader_batch *b;
	int rc;

	make_labels("l.slab");
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_dataset_plan_make(d, &pp, 0, &plan) == 0);
	labels_run(d, plan, 1, NULL, 0);
	labels_run(d, plan, 4, cls, 1);
	/* Each bad label fails its batch, named exactly, when not skipped: a plan from it on. */
	for (size_t i = 0; i < NLABELS; i++) {
		struct slab_plan_params one = pp;
		struct slab_loader_options o = { .size = sizeof(o), .batch = 1, .threads = 2,
						 .label_field = "cls" };
		struct slab_plan *p1 = NULL;
		char want[256];

		CHECK(slab_dataset_plan_make(d, &one, i, &p1) == 0);
		l = slab_loader_new();
		CHECK(slab_loader_open(l, d, p1, &o) == 0);
		rc = slab_loader_next(l, &b);
		if (labels[i].why) {
			snprintf(want, sizeof(want), "'l.slab': sample #%zu 'l%zu': %s", i, i, labels[i].why);
			CHECK(rc == SLAB_ERR_CORRUPT);
			CHECK_STR(slab_loader_error(l), want);
		} else {
			CHECK(rc == 1 && slab_loader_batch_labels(b)[0] == labels[i].want);
		}
		slab_loader_close(l);
		slab_plan_free(p1);
	}
	/* The label field must be wanted, and be somewhere. */
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 2, .fields = txt,
						 .nfields = 1, .label_field = "cls" };

		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_INVAL);
		CHECK_STR(slab_loader_error(l), "label field 'cls' is not one of the wanted fields");
		o.fields = NULL;
		o.nfields = 0;
		o.label_field = "nope";
		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_NOTFOUND);
		CHECK_STR(slab_loader_error(l), "no file has a field 'nope' (fields: cls, txt)");
		/* The options' first version, without label_field: no labels. */
		o.size = offsetof(struct slab_loader_options, label_field);
		CHECK(slab_loader_open(l, d, plan, &o) == 0);
		CHECK(slab_loader_next(l, &b) == 1 && slab_loader_batch_labels(b) == NULL);
	}
	slab_loader_close(l);
	slab_plan_free(plan);
	slab_dataset_close(d);
	unlink("l.slab");
	labels_images();
}

/* A field no file has: the error lists the fields there are, cut short when they are many. */
static void test_field_list(void)
{
	int fd = open("f.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options wo = { .page_size = 4096 };
	struct slab_dataset *d = slab_dataset_new();
	const char *paths[] = { "f.slab" }, *nope[] = { "nope" };
	struct slab_writer_field f[60];
	char names[60][40];
	struct slab_plan *plan;
	struct slab_loader *l;
	const char *e;
	size_t len;

	CHECK(fd >= 0 && w && d);
	CHECK(slab_writer_open(w, fd, "f.slab", &wo) == 0);
	for (int i = 0; i < 60; i++) {
		snprintf(names[i], sizeof(names[i]), "a_field_with_a_rather_long_name_%02d", 59 - i);
		f[i] = (struct slab_writer_field){ .name = names[i], .data = "x", .size = 1 };
	}
	CHECK(slab_writer_add(w, "k0", 2, f, 60) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(close(fd) == 0);
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	plan = make_plan(d, 1);
	l = slab_loader_new();
	{
		struct slab_loader_options o = { .size = sizeof(o), .batch = 1, .fields = nope,
						 .nfields = 1 };

		CHECK(slab_loader_open(l, d, plan, &o) == SLAB_ERR_NOTFOUND);
	}
	e = slab_loader_error(l);
	len = strlen(e);
	CHECK(strncmp(e, "no file has a field 'nope' (fields: a_field_with_a_rather_long_name_00, "
		      "a_field_with_a_rather_long_name_01, ", 108) == 0);
	CHECK(len > 400 && len < 600);
	CHECK(strcmp(e + len - 6, ", ...)") == 0);
	slab_loader_close(l);
	slab_plan_free(plan);
	slab_dataset_close(d);
	unlink("f.slab");
}

/* A plan of other files: refused as a walk refuses it. One of as many samples passed the
 * range check, and the loader handed out the places of the plan's samples in these files. */
static void test_other_files(void)
{
	struct slab_dataset *d = slab_dataset_new(), *other = slab_dataset_new();
	struct slab_dataset *two = slab_dataset_new();
	const char *pa[] = { "a.slab" }, *po[] = { "o.slab" }, *pab[] = { "a.slab", "b.slab" };
	struct slab_loader_options o = { .size = sizeof(o), .batch = 4 };
	struct slab_plan *plan, *plan2;
	struct slab_loader *l;

	make_file("o.slab", "o", 120, "bin");
	CHECK(d && other && two);
	CHECK(slab_dataset_open(d, pa, 1) == 0 && slab_dataset_open(other, po, 1) == 0);
	CHECK(slab_dataset_open(two, pab, 2) == 0);
	CHECK(slab_dataset_count(d) == slab_dataset_count(other));
	plan = make_plan(d, 7);
	plan2 = make_plan(two, 7);
	l = slab_loader_new();
	CHECK(l && slab_loader_open(l, other, plan, &o) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "file 0 is not the one the plan was made for (content differs)");
	CHECK_STR(slab_plan_error(plan), "");
	slab_loader_close(l);
	l = slab_loader_new();
	CHECK(l && slab_loader_open(l, d, plan2, &o) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "the plan is for 2 files, 1 given");
	slab_loader_close(l);
	/* its own files: loaded */
	l = slab_loader_new();
	CHECK(l && slab_loader_open(l, d, plan, &o) == 0);
	CHECK(slab_loader_batches(l) == 30);
	slab_loader_close(l);
	slab_plan_free(plan);
	slab_plan_free(plan2);
	slab_dataset_close(two);
	slab_dataset_close(other);
	slab_dataset_close(d);
	unlink("o.slab");
}

int main(void)
{
	char dir[] = "/tmp/slab-loader-XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chdir(dir) == 0);
	make_file("a.slab", "k", 120, "bin");
	make_file("b.slab", "m", 80, "extra");
	test_matrix();
	test_ring();
	test_budget();
	test_fields();
	test_corrupt();
	test_transform();
	test_images();
	test_hardening();
	test_stop_midbatch();
	test_labels();
	test_field_list();
	test_other_files();
	unlink("a.slab");
	unlink("b.slab");
	unlink("c.slab");
	CHECK(chdir("/") == 0 && rmdir(dir) == 0);
	return UNIT_DONE();
}
