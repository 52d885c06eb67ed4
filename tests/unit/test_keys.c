/* test_keys.c: keys chosen to collide under FNV-1a: the writer's duplicate check and key index
 * and slab_verify's key index check stay linear in the number of keys (counted, not timed);
 * the index is the one sequential insertion gives; verify finds every way the index can
 * mislead a lookup. */
#include "crc32c.h"
#include "format.h"
#include "keyset.h"
#include "slab.h"
#include "unit.h"
#include "../test_helper/fnvcollide.h"

#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define STEPS_PER_KEY 16        /* the bound checked; quadratic work would be ~N/2 per key */

struct keys {
	char **key;
	size_t *len;
	size_t n;
};

static void keys_free(struct keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->key[i]);
	free(k->key);
	free(k->len);
	k->n = 0;
}

static void keys_alloc(struct keys *k, size_t n)
{
	k->key = calloc(n ? n : 1, sizeof(*k->key));
	k->len = calloc(n ? n : 1, sizeof(*k->len));
	k->n = n;
}

/* n <= 2^16 keys hashing to the same low 32 bits, *low. */
static void colliding_keys(struct keys *k, size_t n, uint32_t *low)
{
	static struct fnv_collide fc;

	if (!fc.blocks)
		CHECK(fnvc_init(&fc, 16) == 0);
	CHECK(n <= 1u << 16);
	*low = fc.low;
	keys_alloc(k, n);
	for (size_t i = 0; i < n; i++) {
		k->key[i] = malloc(FNVC_KEY_MAX);
		k->len[i] = fnvc_key(&fc, i, k->key[i]);
	}
}

static uint64_t rnd_state = 1;

static uint64_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return rnd_state >> 33;
}

/* Distinct random keys of 1 to 12 bytes. */
static void random_keys(struct keys *k, size_t n)
{
	keys_alloc(k, n);
	for (size_t i = 0; i < n; i++) {
		size_t len = 1 + rnd() % 12;
		k->key[i] = malloc(len + 16);
		k->len[i] = (size_t)snprintf(k->key[i], len + 16, "%zu_", i);
		for (size_t j = 0; j < len; j++)
			k->key[i][k->len[i]++] = (char)('a' + rnd() % 26);
	}
}

/* Distinct keys whose home slots in a table of B slots are B - 2 and B - 1: their clusters
 * wrap round the end of the table. */
static void wrapping_keys(struct keys *k, size_t n, uint64_t B)
{
	keys_alloc(k, n);
	for (size_t i = 0; i < n; i++) {
		k->key[i] = malloc(32);
		do
			k->len[i] = (size_t)snprintf(k->key[i], 32, "w%zu_%" PRIu64, i, rnd());
		while ((slab_key_hash(k->key[i], k->len[i]) & (B - 1)) < B - 2);
	}
}

/* Pack the keys, field txt "sample i\n", into memory; steps gets the writer's work count. */
static unsigned char *pack(const struct keys *k, size_t *size, uint64_t *steps)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };
	unsigned char *buf;
	off_t end;

	CHECK(fd >= 0 && w);
	CHECK(slab_writer_open(w, fd, "mem", &o) == 0);
	for (size_t i = 0; i < k->n; i++) {
		char text[32];
		struct slab_writer_field f = { .name = "txt", .data = text };
		f.size = (uint64_t)snprintf(text, sizeof(text), "sample %zu\n", i);
		CHECK(slab_writer_add(w, k->key[i], k->len[i], &f, 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	*steps = slab_writer_key_steps(w);
	slab_writer_free(w);
	end = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)end);
	CHECK(pread(fd, buf, (size_t)end, 0) == end);
	close(fd);
	*size = (size_t)end;
	return buf;
}

static unsigned char *table(unsigned char *b, size_t size)
{
	return b + slab_le64(b + size - SLAB_TRAILER_SIZE + 8);
}

static unsigned char *index_slot(unsigned char *b, size_t size, uint64_t h)
{
	unsigned char *t = table(b, size);

	return t + slab_le64(t + 80) + h * 8;
}

static uint64_t buckets(unsigned char *b, size_t size)
{
	return slab_le64(table(b, size) + 88);
}

/* After editing the table: its CRC in the trailer, and the trailer's own. */
static void fix_crcs(unsigned char *b, size_t size)
{
	unsigned char *tr = b + size - SLAB_TRAILER_SIZE;

	slab_put32(tr + 40, slab_crc32c(0, table(b, size), (size_t)slab_le64(tr + 16)));
	slab_put32(tr + 60, slab_crc32c(0, tr, 60));
}

/* The index as man/slab.5 defines it: each key in turn into the first empty slot from its
 * home, walking the cluster. */
static uint64_t *reference_index(const struct keys *k, uint64_t B)
{
	uint64_t *index = calloc(B, sizeof(*index));

	for (size_t i = 0; i < k->n; i++) {
		uint64_t h = slab_key_hash(k->key[i], k->len[i]) & (B - 1);
		while (index[h])
			h = (h + 1) & (B - 1);
		index[h] = i + 1;
	}
	return index;
}

/* slab_verify of a buffer: its return code and message. */
static int verify(unsigned char *b, size_t size, char *msg, size_t msglen, uint64_t *steps)
{
	struct slab *s = slab_new();
	int r;

	CHECK(s != NULL);
	r = slab_open_mem(s, b, size, "mem");
	if (r == 0)
		r = slab_verify(s, NULL, NULL);
	snprintf(msg, msglen, "%s", slab_error(s));
	if (steps)
		*steps = slab_verify_key_steps(s);
	slab_close(s);
	return r;
}

static void test_siphash(void)
{
	/* SipHash-1-3 under the zero key, as CPython hashes bytes with PYTHONHASHSEED=0:
	 * hash(bytes(range(n))) & (2**64 - 1). */
	static const struct { size_t n; uint64_t h; } v[] = {
		{ 1, 0x68a914128e01e473ull }, { 7, 0x2f098ab0c751325aull },
		{ 8, 0xead411e67ebe2eeaull }, { 9, 0x75927f9d95124362ull },
		{ 15, 0xf30eb725bb91c9eaull }, { 16, 0x8972188433a5c5b7ull },
		{ 63, 0x385d3e39e5f37359ull },
	};
	unsigned char b[64];

	for (int i = 0; i < 64; i++)
		b[i] = (unsigned char)i;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(slab_siphash13(0, 0, b, v[i].n) == v[i].h);
	CHECK(slab_siphash13(1, 0, b, 8) != slab_siphash13(0, 0, b, 8));
	CHECK(slab_siphash13(0, 1, b, 8) != slab_siphash13(0, 0, b, 8));
}

static const void *keys_key(void *ctx, uint64_t id, size_t *len)
{
	const struct keys *k = ctx;

	*len = k->len[id];
	return k->key[id];
}

static void test_keyset(void)
{
	struct keys k = { 0 };
	struct slab_keyset ks;
	uint32_t low;

	/* Colliding and ordinary keys alike: a few steps a key, growing from a small start. */
	for (int round = 0; round < 2; round++) {
		if (round == 0)
			colliding_keys(&k, 40000, &low);
		else
			random_keys(&k, 40000);
		CHECK(slab_keyset_init(&ks, 1, keys_key, &k) == 0);
		for (size_t i = 0; i < k.n; i++) {
			uint64_t h = slab_keyset_hash(&ks, k.key[i], k.len[i]);
			CHECK(slab_keyset_find(&ks, h, k.key[i], k.len[i]) == SLAB_KEYSET_NONE);
			CHECK(slab_keyset_add(&ks, h, i) == 0);
		}
		CHECK(ks.count == k.n);
		for (size_t i = 0; i < k.n; i += 7) {
			uint64_t h = slab_keyset_hash(&ks, k.key[i], k.len[i]);
			CHECK(slab_keyset_find(&ks, h, k.key[i], k.len[i]) == i);
		}
		CHECK(slab_keyset_find(&ks, slab_keyset_hash(&ks, "", 0), "", 0) == SLAB_KEYSET_NONE);
		CHECK(ks.steps < STEPS_PER_KEY * k.n);
		slab_keyset_free(&ks);
		slab_keyset_free(&ks);         /* twice is harmless */
		keys_free(&k);
	}
}

/* 50,000 keys sharing the low 32 bits of their FNV-1a hash: one home slot for all. */
static void test_colliding(void)
{
	struct keys k = { 0 };
	size_t n = 50000, size;
	uint64_t wsteps, vsteps, B, home;
	unsigned char *b;
	uint32_t low;
	char msg[512];

	colliding_keys(&k, n, &low);
	for (size_t i = 0; i < n; i++)
		CHECK((uint32_t)slab_key_hash(k.key[i], k.len[i]) == low);
	b = pack(&k, &size, &wsteps);
	fprintf(stderr, "test_keys: %zu colliding keys: writer %" PRIu64 " steps", n, wsteps);
	CHECK(wsteps < STEPS_PER_KEY * n);

	/* Sequential insertion puts sample i at home + i. */
	B = buckets(b, size);
	home = low & (B - 1);
	for (uint64_t i = 0; i < n; i++)
		CHECK(slab_le64(index_slot(b, size, (home + i) & (B - 1))) == i + 1);

	CHECK(verify(b, size, msg, sizeof(msg), &vsteps) == 0);
	CHECK_STR(msg, "");
	fprintf(stderr, ", verify %" PRIu64 " steps\n", vsteps);
	CHECK(vsteps < STEPS_PER_KEY * n);

	{
		struct slab *s = slab_new();
		struct slab_field fl;
		uint64_t idx;
		CHECK(slab_open_mem(s, b, size, "mem") == 0);
		for (size_t i = 0; i < n; i += 9999) {
			char text[32];
			int len = snprintf(text, sizeof(text), "sample %zu\n", i);
			CHECK(slab_find(s, k.key[i], k.len[i], &idx) == 0 && idx == i);
			CHECK(slab_get(s, idx, 0, &fl) == 1 && fl.size == (uint64_t)len &&
			      memcmp(fl.data, text, (size_t)len) == 0);
		}
		CHECK(slab_find(s, k.key[0], k.len[0] - 1, &idx) == SLAB_ERR_NOTFOUND);
		slab_close(s);
	}
	free(b);

	/* A repeated key among them is still refused, naming the first. */
	{
		int fd = memfd_create("slab", 0);
		struct slab_writer *w = slab_writer_new();
		struct slab_writer_field f = { .name = "txt", .data = "x", .size = 1 };
		char want[512];
		CHECK(slab_writer_open(w, fd, "mem", NULL) == 0);
		for (size_t i = 0; i < 1000; i++)
			CHECK(slab_writer_add(w, k.key[i], k.len[i], &f, 1) == 0);
		CHECK(slab_writer_add(w, k.key[700], k.len[700], &f, 1) == SLAB_ERR_DUPKEY);
		snprintf(want, sizeof(want), "key '%.*s' appears again (first as sample 700)",
			 (int)k.len[700], k.key[700]);
		CHECK_STR(slab_writer_error(w), want);
		CHECK(slab_writer_add(w, k.key[1000], k.len[1000], &f, 1) == 0);
		CHECK(slab_writer_finish(w) == 0);
		slab_writer_free(w);
		close(fd);
	}
	keys_free(&k);
}

/* The writer's index is the sequential one on keys of every kind, and verify accepts it. */
static void test_same_index(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 5, 8, 17, 100, 1000, 5000 };
	struct keys k = { 0 };
	uint32_t low;
	char msg[512];

	for (int kind = 0; kind < 3; kind++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t n = sizes[si], size;
			uint64_t steps, B = 2, *ref;
			unsigned char *b;

			while (B < 2 * n)
				B *= 2;
			if (kind == 2 && n > 100)
				continue;       /* finding them takes B / 2 tries a key */
			if (kind == 0)
				random_keys(&k, n);
			else if (kind == 1)
				colliding_keys(&k, n, &low);
			else
				wrapping_keys(&k, n, B);
			b = pack(&k, &size, &steps);
			CHECK(buckets(b, size) == B);
			ref = reference_index(&k, B);
			for (uint64_t h = 0; h < B; h++)
				CHECK(slab_le64(index_slot(b, size, h)) == ref[h]);
			CHECK(verify(b, size, msg, sizeof(msg), NULL) == 0);
			CHECK_STR(msg, "");
			free(ref);
			free(b);
			keys_free(&k);
		}
}

/* A damaged index, with its checksums made right: verify names the sample a lookup would
 * miss. 16 colliding keys in 32 slots fill home .. home + 15. */
static void test_damage(void)
{
	struct keys k = { 0 };
	uint64_t steps, B, home;
	size_t size;
	unsigned char *orig, *b;
	uint32_t low;
	char msg[512], want[512];

	colliding_keys(&k, 16, &low);
	orig = pack(&k, &size, &steps);
	b = malloc(size);
	B = buckets(orig, size);
	CHECK(B == 32);
	home = low & (B - 1);
#define SLOT(d) index_slot(b, size, (home + (d)) & (B - 1))
#define RESET() memcpy(b, orig, size)
#define LOST(i) snprintf(want, sizeof(want), \
		"'mem': sample #%d '%.*s': key index does not lead to it", \
		(i), (int)k.len[i], k.key[i])

	/* The last of the run moved one slot on, past an empty slot. */
	RESET();
	memset(SLOT(15), 0, 8);
	slab_put64(SLOT(17), 16);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	LOST(15);
	CHECK_STR(msg, want);

	/* Moved to the slot before its home: a lookup would go the other way round. */
	RESET();
	memset(SLOT(15), 0, 8);
	slab_put64(SLOT(-1), 16);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(msg, want);

	/* A slot in the middle emptied: that sample is lost, and the run is cut. */
	RESET();
	memset(SLOT(3), 0, 8);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	LOST(3);
	CHECK_STR(msg, want);

	/* A slot in the middle moved past the end of the run. */
	RESET();
	memset(SLOT(3), 0, 8);
	slab_put64(SLOT(16), 4);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	LOST(4);
	CHECK_STR(msg, want);

	/* Two samples swapped within the run: lookups still find both. */
	RESET();
	slab_put64(SLOT(2), 6);
	slab_put64(SLOT(5), 3);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == 0);

	/* A sample named twice. */
	RESET();
	slab_put64(SLOT(20), 6);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(msg, "'mem': key index has 17 entries for 16 samples");

	/* A slot past the samples. */
	RESET();
	slab_put64(SLOT(20), 17);
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	snprintf(want, sizeof(want), "'mem': key index slot %d points past the samples",
		 (int)((home + 20) & (B - 1)));
	CHECK_STR(msg, want);

	/* Sample 9's key made sample 2's: every slot is where a lookup of its home reaches, but a
	 * lookup of that key finds sample 2 only. */
	RESET();
	{
		unsigned char *t = table(b, size), *keys = t + slab_le64(t + 64);
		unsigned char *samples = t + slab_le64(t + 48);
		memcpy(keys + slab_le64(samples + 9 * SLAB_SAMPLE_RECORD + 16),
		       keys + slab_le64(samples + 2 * SLAB_SAMPLE_RECORD + 16), k.len[2]);
	}
	fix_crcs(b, size);
	CHECK(verify(b, size, msg, sizeof(msg), NULL) == SLAB_ERR_CORRUPT);
	snprintf(want, sizeof(want), "'mem': sample #9 '%.*s': same key as sample #2",
		 (int)k.len[2], k.key[2]);
	CHECK_STR(msg, want);

	free(b);
	free(orig);
	keys_free(&k);
}

int main(void)
{
	test_siphash();
	test_keyset();
	test_colliding();
	test_same_index();
	test_damage();
	return UNIT_DONE();
}
