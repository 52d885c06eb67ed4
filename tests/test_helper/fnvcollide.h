/* fnvcollide.h: keys whose FNV-1a-64 hashes all agree in their low 32 bits, so they share a
 * home slot in any key index of up to 2^32 slots: the worst input for linear probing. Used by
 * scripts/mkcollide.c and the unit tests; deterministic.
 *
 * After each byte FNV-1a's low k bits depend only on the low k bits of the state before it
 * (the xor touches the low byte, and the low k bits of a product mod 2^64 depend only on the
 * low k bits of its factors). So block j is two strings that take the common state to states
 * equal in the low 32 bits (a birthday search, about 2^16 tries), and each of the 2^m
 * concatenations of one string per block hashes to the same low 32 bits. */
#ifndef SLAB_FNVCOLLIDE_H
#define SLAB_FNVCOLLIDE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FNVC_MAX_BLOCKS 40
#define FNVC_BLOCK      6               /* bytes of each block's strings */
#define FNVC_KEY_MAX     (FNVC_MAX_BLOCKS * FNVC_BLOCK + 1)
#define FNVC_TABLE      (1u << 20)      /* birthday table slots */
#define FNVC_TRIES      (1u << 19)      /* no collision in this many is a 1 in e^32 event */

struct fnv_collide {
	unsigned blocks;
	char pair[FNVC_MAX_BLOCKS][2][FNVC_BLOCK];
	uint32_t low;                   /* the low 32 bits every key hashes to */
};

/* Try t's string: every byte varies with t. (Counting through strings would vary only the
 * first few bytes, and FNV's small prime spreads a few bytes over too few bits to collide.) */
static inline void fnvc_string(uint32_t t, char *out)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	uint64_t x = t * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	for (int k = 0; k < FNVC_BLOCK; k++, x /= 36)
		out[k] = digits[x % 36];
}

static inline uint64_t fnvc_step(uint64_t h, const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		h ^= (unsigned char)s[k];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline size_t fnvc_key(const struct fnv_collide *c, uint64_t i, char *out);

/* Find the strings of m blocks (1 <= m <= FNVC_MAX_BLOCKS). 0, or -1 when out of memory or
 * (never seen) when a block's search fails. */
static inline int fnvc_init(struct fnv_collide *c, unsigned m)
{
	uint64_t *table = calloc(FNVC_TABLE, sizeof(*table));  /* low 32 << 32 | try + 1 */
	uint64_t h = 0xcbf29ce484222325ull;
	int ret = -1;

	if (!table || m < 1 || m > FNVC_MAX_BLOCKS)
		goto out;
	c->blocks = m;
	for (unsigned j = 0; j < m; j++) {
		uint32_t t, other = 0;
		char s[FNVC_BLOCK];

		if (j && j == m / 2)
			h = fnvc_step(h, "/", 1);       /* as fnvc_key() puts it */
		memset(table, 0, FNVC_TABLE * sizeof(*table));
		for (t = 0; t < FNVC_TRIES && !other; t++) {
			uint32_t low, slot;
			fnvc_string(t, s);
			low = (uint32_t)fnvc_step(h, s, FNVC_BLOCK);
			for (slot = (low * 2654435761u) >> 12; table[slot];
			     slot = (slot + 1) & (FNVC_TABLE - 1))
				if ((uint32_t)(table[slot] >> 32) == low)
					break;
			if (!table[slot]) {
				table[slot] = (uint64_t)low << 32 | (t + 1);
				continue;
			}
			/* Two tries may draw the same string: that is no collision. */
			fnvc_string((uint32_t)table[slot] - 1, c->pair[j][0]);
			if (memcmp(c->pair[j][0], s, FNVC_BLOCK) != 0)
				other = (uint32_t)table[slot];
		}
		if (!other)
			goto out;
		memcpy(c->pair[j][1], s, FNVC_BLOCK);
		h = fnvc_step(h, c->pair[j][0], FNVC_BLOCK);
	}
	{
		char key[FNVC_KEY_MAX];
		c->low = (uint32_t)fnvc_step(0xcbf29ce484222325ull, key, fnvc_key(c, 0, key));
	}
	ret = 0;
out:
	free(table);
	return ret;
}

/* The smallest m with 2^m >= n keys. */
static inline unsigned fnvc_blocks_for(uint64_t n)
{
	unsigned m = 1;

	while (m < FNVC_MAX_BLOCKS && (1ull << m) < n)
		m++;
	return m;
}

/* Key number i (< 2^m): bit j of i picks block j's string. A '/' after the first half of the
 * blocks (m >= 2) keeps a tar member name in ustar's 100 + 155 bytes. Writes FNVC_KEY_MAX bytes at most, no
 * terminator; returns the length. */
static inline size_t fnvc_key(const struct fnv_collide *c, uint64_t i, char *out)
{
	size_t n = 0;

	for (unsigned j = 0; j < c->blocks; j++) {
		if (j && j == c->blocks / 2)
			out[n++] = '/';
		memcpy(out + n, c->pair[j][(i >> j) & 1], FNVC_BLOCK);
		n += FNVC_BLOCK;
	}
	return n;
}

#endif
