/* keyset.c: a set of keys in open addressing under SipHash-1-3 with a key drawn once per
 * process, so that keys chosen to collide under the file's FNV-1a cannot slow it down. */
#include "keyset.h"
#include "format.h"
#include "slab.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct slab_keyset_slot {
	uint64_t hash;
	uint64_t id;                    /* id + 1; 0: empty */
};

/* ---- SipHash-1-3 ------------------------------------------------------------------------ */

static inline uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND do { \
	v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
	v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
} while (0)

uint64_t slab_siphash13(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	uint64_t m;
	size_t whole = len & ~(size_t)7;

	for (size_t i = 0; i < whole; i += 8) {
		m = slab_le64(p + i);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	/* The last word: the bytes left over, and the length's low byte on top. */
	m = (uint64_t)len << 56;
	for (size_t k = 0; k < (len & 7); k++)
		m |= (uint64_t)p[whole + k] << (8 * k);
	v3 ^= m;
	SIPROUND;
	v0 ^= m;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- the process's hash key ------------------------------------------------------------- */

static uint64_t process_key[2];
static pthread_once_t process_key_once = PTHREAD_ONCE_INIT;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void draw_process_key(void)
{
	struct timespec rt, mt;
	uint64_t x;

	if (getrandom(process_key, sizeof(process_key), GRND_NONBLOCK) == sizeof(process_key))
		return;
	/* No entropy yet (early boot) or no getrandom: weaker, but still unknown from outside. */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	x = mix((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
	x = mix(x ^ ((uint64_t)mt.tv_sec * 1000000000u + (uint64_t)mt.tv_nsec));
	x = mix(x ^ (uint64_t)getpid());
	process_key[0] = x = mix(x ^ (uint64_t)(uintptr_t)&x);
	process_key[1] = mix(x ^ (uint64_t)(uintptr_t)&process_key);
}

/* ---- the set ---------------------------------------------------------------------------- */

static uint64_t size_for(uint64_t count)
{
	uint64_t n = 16;

	while (n / 2 < count)
		n *= 2;
	return n;
}

int slab_keyset_init(struct slab_keyset *ks, uint64_t expect, slab_keyset_key_fn key, void *ctx)
{
	pthread_once(&process_key_once, draw_process_key);
	memset(ks, 0, sizeof(*ks));
	ks->k0 = process_key[0];
	ks->k1 = process_key[1];
	ks->key = key;
	ks->ctx = ctx;
	if (expect > SIZE_MAX / 2 / sizeof(*ks->slots))
		return SLAB_ERR_NOMEM;
	ks->size = size_for(expect);
	ks->slots = calloc((size_t)ks->size, sizeof(*ks->slots));
	if (!ks->slots) {
		ks->size = 0;
		return SLAB_ERR_NOMEM;
	}
	return 0;
}

void slab_keyset_free(struct slab_keyset *ks)
{
	free(ks->slots);
	ks->slots = NULL;
	ks->size = ks->count = 0;
}

uint64_t slab_keyset_hash(const struct slab_keyset *ks, const void *key, size_t len)
{
	return slab_siphash13(ks->k0, ks->k1, key, len);
}

/* The empty slot where hash goes. */
static uint64_t free_slot(struct slab_keyset *ks, uint64_t hash)
{
	uint64_t mask = ks->size - 1, h = hash & mask;

	for (ks->steps++; ks->slots[h].id; ks->steps++)
		h = (h + 1) & mask;
	return h;
}

int slab_keyset_reserve(struct slab_keyset *ks, uint64_t count)
{
	struct slab_keyset_slot *old = ks->slots;
	uint64_t n = ks->size, size;

	if (count <= ks->size / 2)
		return 0;
	if (count > SIZE_MAX / 2 / sizeof(*ks->slots))
		return SLAB_ERR_NOMEM;
	size = size_for(count);
	ks->slots = calloc((size_t)size, sizeof(*ks->slots));
	if (!ks->slots) {
		ks->slots = old;
		return SLAB_ERR_NOMEM;
	}
	ks->size = size;
	for (uint64_t i = 0; i < n; i++)
		if (old[i].id)
			ks->slots[free_slot(ks, old[i].hash)] = old[i];
	free(old);
	return 0;
}

uint64_t slab_keyset_find(struct slab_keyset *ks, uint64_t hash, const void *key, size_t len)
{
	uint64_t mask = ks->size - 1;

	if (!ks->size)
		return SLAB_KEYSET_NONE;
	for (uint64_t h = hash & mask; ks->slots[h].id; h = (h + 1) & mask) {
		const struct slab_keyset_slot *sl = &ks->slots[h];
		ks->steps++;
		if (sl->hash == hash) {
			size_t n;
			const void *k = ks->key(ks->ctx, sl->id - 1, &n);
			ks->steps++;
			if (n == len && memcmp(k, key, len) == 0)
				return sl->id - 1;
		}
	}
	ks->steps++;
	return SLAB_KEYSET_NONE;
}

int slab_keyset_add(struct slab_keyset *ks, uint64_t hash, uint64_t id)
{
	uint64_t h;

	if (slab_keyset_reserve(ks, ks->count + 1) < 0)
		return SLAB_ERR_NOMEM;
	h = free_slot(ks, hash);
	ks->slots[h].hash = hash;
	ks->slots[h].id = id + 1;
	ks->count++;
	return 0;
}
