/* keyset.h: an in-memory set of sample keys under a keyed hash (SipHash-1-3, with a random key
 * per process), so that no choice of keys makes it slow: the writer's duplicate check and
 * slab_verify's. Internal to libslab, not part of slab.h; it never touches the file format. */
#ifndef SLAB_KEYSET_H
#define SLAB_KEYSET_H

#include <stddef.h>
#include <stdint.h>

struct slab;
struct slab_writer;
struct slab_keyset_slot;

/* The set keeps ids, not key bytes: it asks for the bytes of id back when a hash matches. */
typedef const void *(*slab_keyset_key_fn)(void *ctx, uint64_t id, size_t *len);

struct slab_keyset {
	struct slab_keyset_slot *slots;
	uint64_t size;                  /* slots: a power of two, at least twice count */
	uint64_t count;
	uint64_t k0, k1;                /* the hash key */
	slab_keyset_key_fn key;
	void *ctx;
	uint64_t steps;                 /* slots probed and keys compared, for tests */
};

#define SLAB_KEYSET_NONE UINT64_MAX

/* An empty set with room for expect ids, reading keys through key(ctx, ...); steps starts
 * at 0. 0 or SLAB_ERR_NOMEM. */
int slab_keyset_init(struct slab_keyset *ks, uint64_t expect, slab_keyset_key_fn key, void *ctx);

/* Frees the slots; steps is kept. A set that is all zero bytes may be freed too. */
void slab_keyset_free(struct slab_keyset *ks);

/* Make room for count ids in all, so that the adds up to there cannot fail. 0 or
 * SLAB_ERR_NOMEM. */
int slab_keyset_reserve(struct slab_keyset *ks, uint64_t count);

/* The set's hash of a key, for the two calls below. */
uint64_t slab_keyset_hash(const struct slab_keyset *ks, const void *key, size_t len);

/* The id stored with a key equal to this one, or SLAB_KEYSET_NONE. */
uint64_t slab_keyset_find(struct slab_keyset *ks, uint64_t hash, const void *key, size_t len);

/* Add id, whose key has this hash and is not in the set (the caller has looked). 0 or
 * SLAB_ERR_NOMEM (never after a reserve that covers it). */
int slab_keyset_add(struct slab_keyset *ks, uint64_t hash, uint64_t id);

/* SipHash-1-3 of data under the 128-bit key k0, k1 (little-endian halves), as described by
 * Aumasson and Bernstein, "SipHash: a fast short-input PRF", with 1 compression round and 3
 * finalisation rounds. */
uint64_t slab_siphash13(uint64_t k0, uint64_t k1, const void *data, size_t len);

/* Work counters, so tests can check that the cost stays linear in the number of keys on any
 * keys: hash table slots probed and keys compared by the writer so far (its duplicate check and
 * the key index it builds at finish), and by the last slab_verify (its key index check). */
uint64_t slab_writer_key_steps(const struct slab_writer *w);
uint64_t slab_verify_key_steps(const struct slab *s);

#endif
