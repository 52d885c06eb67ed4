/* tarin.h: reads a tar / WebDataset stream (compression detected by libarchive) and groups
 * consecutive members into samples by WebDataset's key rule. */
#ifndef SLAB_TARIN_H
#define SLAB_TARIN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct slab_tarin;

struct slab_tarin_options {
	uint64_t max_sample_size;       /* 0: no limit */
	const char *const *keep;        /* keep only these field names; NULL: all */
	size_t nkeep;
	/* When not NULL, asked before the buffer of the sample being read grows: it holds
	 * `held` bytes and is about to allocate `more`. 0 lets it grow; a negative SLAB_ERR_*
	 * ends slab_tarin_next() with that value and an empty error text (the hook's owner
	 * has said why). For callers that bound the bytes of samples in flight (pack --memory). */
	int (*grow)(uint64_t held, uint64_t more, void *arg);
	void *grow_arg;
};

/* One member of a sample read from the tar: its field name (the part of the member name
 * after the key) and where its bytes are in the sample's data. */
struct slab_tarin_field {
	char *name;
	uint64_t offset;                /* into the sample's data */
	uint64_t size;
};

/* Why a sample cannot be packed as it is. */
enum { SLAB_TARIN_OK, SLAB_TARIN_DUPFIELD, SLAB_TARIN_TOOBIG, SLAB_TARIN_TOOMANY,
       SLAB_TARIN_UNSAFE, SLAB_TARIN_LONGNAME };
#define SLAB_TARIN_MAX_NAME 65535  /* the format stores a field name's length in a u16 */
#define SLAB_TARIN_MAX_FIELDS 255  /* the format numbers a sample's fields in one byte */

/* One sample: the members with one key, in a row. */
struct slab_tarin_sample {
	char *key;                      /* NUL-terminated; key_len excludes the NUL */
	size_t key_len;
	unsigned char *data;            /* the fields back to back */
	uint64_t size;
	uint64_t alloc;                 /* bytes allocated for data: its capacity, >= size */
	struct slab_tarin_field *fields;
	size_t nfields;
	int bad;                        /* SLAB_TARIN_*: why it cannot be packed, or 0 */
	struct slab_err problem;        /* a bad sample's why: slab_tarin_sample_error() */
	uint64_t offset;                /* input offset of its first member's header */
};

struct slab_tarin_stats {
	uint64_t members;               /* entries read, of every kind */
	uint64_t skipped_special;       /* directories, links, devices, fifos */
	uint64_t skipped_names;         /* names without a key and an extension */
	uint64_t skipped_fields;        /* members whose field --fields did not keep */
	uint64_t raw_bytes;             /* bytes consumed from the input (compressed) */
	uint64_t data_bytes;            /* member bytes, uncompressed */
};

/* NULL only when out of memory. */
struct slab_tarin *slab_tarin_new(void);

/* Open path ("-" or NULL: standard input, called "(stdin)" in messages). 0, or
 * SLAB_ERR_IO, SLAB_ERR_FORMAT (not a tar), SLAB_ERR_CORRUPT (damaged compression) or
 * SLAB_ERR_NOMEM. One reader per thread. */
int slab_tarin_open(struct slab_tarin *t, const char *path, const struct slab_tarin_options *o);
/* The same over a buffer the caller keeps alive until slab_tarin_free() (fuzzing, tests).
 * name is used in messages; NULL: "(memory)". */
int slab_tarin_open_memory(struct slab_tarin *t, const void *buf, size_t len, const char *name,
			   const struct slab_tarin_options *o);

/* The next sample: 1 and *out (the caller frees it with slab_tarin_sample_free), 0 at the
 * end, or a negative error whose text (slab_tarin_error) names the input: SLAB_ERR_CORRUPT
 * (truncated or corrupt input, with the offset of the last good member), SLAB_ERR_FORMAT (not
 * a tar), SLAB_ERR_IO, SLAB_ERR_NOMEM (out of memory, the input may be fine), or the grow
 * hook's value. A sample may come back with bad set and the reason in
 * slab_tarin_sample_error(): the caller decides. The sample is the caller's: it may go to
 * another thread while this one reads on. */
int slab_tarin_next(struct slab_tarin *t, struct slab_tarin_sample **out);

void slab_tarin_stats(const struct slab_tarin *t, struct slab_tarin_stats *st);
const char *slab_tarin_error(const struct slab_tarin *t);
/* After the end: what the caller may want to say of an input read whole ("" when nothing),
 * naming it: a tar that ends at a member boundary with no end-of-archive blocks (written
 * without them, or cut short there). */
const char *slab_tarin_warning(const struct slab_tarin *t);
/* Closes the input; accepts NULL. */
void slab_tarin_free(struct slab_tarin *t);

/* Why a sample came back bad ("" when it is not). */
const char *slab_tarin_sample_error(const struct slab_tarin_sample *s);
/* Accepts NULL. */
void slab_tarin_sample_free(struct slab_tarin_sample *s);

/* WebDataset's rule on one member name: key = directory part + base name up to its first dot,
 * field = the rest. 0 with *key_len and *field (pointing into name), or SLAB_ERR_INVAL when
 * the name has no such split (no dot, nothing before it, nothing after it). */
int slab_split_name(const char *name, size_t *key_len, const char **field);

#endif
