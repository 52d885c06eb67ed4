/* slab.h: the libslab API: read a .slab file through mmap (zero copy) and write one.
 * The layout is in man/slab.5, the API in man/libslab.3. The library never prints and never
 * exits: every call that can fail returns 0 (or a count) or a negative SLAB_ERR_*, and the
 * detail (file, offset, key, the system's reason) is on the handle, read with its *_error().
 * This header stands alone: a program includes it and links with `pkg-config --libs slab`. */
#ifndef SLAB_H
#define SLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version: these macros are the header's, slab_version() the one linked. */
#define SLAB_VERSION_MAJOR      0
#define SLAB_VERSION_MINOR      1
#define SLAB_VERSION_PATCH      0
#define SLAB_VERSION_NUMBER \
	(SLAB_VERSION_MAJOR * 10000 + SLAB_VERSION_MINOR * 100 + SLAB_VERSION_PATCH)
#define SLAB_QUOTE_(x)          #x
#define SLAB_QUOTE(x)           SLAB_QUOTE_(x)
#define SLAB_VERSION_STRING \
	SLAB_QUOTE(SLAB_VERSION_MAJOR) "." SLAB_QUOTE(SLAB_VERSION_MINOR) "." \
	SLAB_QUOTE(SLAB_VERSION_PATCH)

/* What the shared library exports (the rest of its symbols are hidden). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define SLAB_API __attribute__((visibility("default")))
#else
#define SLAB_API
#endif

/* The linked library's SLAB_VERSION_NUMBER, and its SLAB_VERSION_STRING. */
SLAB_API unsigned slab_version(void);
SLAB_API const char *slab_version_string(void);

/* Return codes: 0 is success, errors are negative; the text is on the context. */
enum {
	SLAB_OK = 0,
	SLAB_ERR_IO = -1,        /* open, read, map or write failed (the message has strerror) */
	SLAB_ERR_FORMAT = -2,    /* not a .slab file, or a version this library does not read */
	SLAB_ERR_CORRUPT = -3,   /* a checksum or a structural invariant does not hold */
	SLAB_ERR_NOMEM = -4,
	SLAB_ERR_NOTFOUND = -5,  /* no such key or field */
	SLAB_ERR_RANGE = -6,     /* index out of range */
	SLAB_ERR_INVAL = -7,     /* bad argument (page size, options text too long, ...) */
	SLAB_ERR_DUPKEY = -8,    /* writer: the key is in the dataset already */
	SLAB_ERR_DUPFIELD = -9,  /* writer: a field name given twice for one sample */
};

/* ---- Reading ---------------------------------------------------------------------------- */

struct slab;

/* One field of one sample. data points into the read-only mapping and lives until
 * slab_close(); nothing is copied. */
struct slab_field {
	const unsigned char *data;
	uint64_t offset;        /* file offset of data */
	uint64_t size;
	uint32_t crc;           /* stored CRC32C */
	uint32_t width, height; /* JPEG dimensions when flags & SLAB_FIELD_JPEG */
	unsigned flags;         /* SLAB_FIELD_* from format.h */
	unsigned subsamp, colorspace;
	unsigned order;         /* position of the field in its sample in the source tar */
};

struct slab_sample {
	const char *key;        /* into the mapping, NOT NUL-terminated */
	size_t key_len;
	uint64_t offset;        /* file offset of the sample's first byte */
	uint64_t size;          /* bytes of all its fields together */
	uint64_t page;          /* page of its first byte */
};

/* A new, unopened reader; NULL only when out of memory. Free with slab_close(). */
SLAB_API struct slab *slab_new(void);

/* Map and check a file: header, trailer, table checksum and table layout. Per-sample bounds
 * are checked on each access, and fully by slab_verify(). On failure slab_error() says why,
 * naming the file and the offset where it helps. A reader opens one file, once. */
SLAB_API int slab_open(struct slab *s, const char *path);
/* The same over a buffer the caller keeps alive (fuzzing, embedded use). */
SLAB_API int slab_open_mem(struct slab *s, const void *buf, size_t len, const char *name);

/* Unmaps and frees; accepts NULL. */
SLAB_API void slab_close(struct slab *s);

/* The last error's text ("" when none). */
SLAB_API const char *slab_error(const struct slab *s);

SLAB_API uint64_t slab_count(const struct slab *s);
SLAB_API uint64_t slab_page_size(const struct slab *s);
SLAB_API uint64_t slab_page_count(const struct slab *s);
SLAB_API uint64_t slab_data_offset(const struct slab *s);
SLAB_API uint64_t slab_table_offset(const struct slab *s);
SLAB_API uint64_t slab_file_size(const struct slab *s);
/* The file's format version (slab(5), e.g. 1.0); not the library's version. */
SLAB_API unsigned slab_format_major(const struct slab *s);
SLAB_API unsigned slab_format_minor(const struct slab *s);
/* The options text recorded by the writer ("key=value\n" lines), NUL-terminated. */
SLAB_API const char *slab_options(const struct slab *s);
/* The whole mapping, for tools that read pages directly. */
SLAB_API const unsigned char *slab_base(const struct slab *s);

/* The schema: field names, sorted, NUL-terminated. */
SLAB_API unsigned slab_field_count(const struct slab *s);
SLAB_API const char *slab_field_name(const struct slab *s, unsigned f);
/* The field id of a name, or -1. */
SLAB_API int slab_field_lookup(const struct slab *s, const char *name);

/* Sample i's key, place and size. 0, SLAB_ERR_RANGE or SLAB_ERR_CORRUPT. */
SLAB_API int slab_sample(struct slab *s, uint64_t i, struct slab_sample *out);

/* Field f of sample i: 1 when present (*out filled), 0 when the sample lacks it, or a
 * negative error (SLAB_ERR_RANGE, SLAB_ERR_CORRUPT when the record points outside the data). */
SLAB_API int slab_get(struct slab *s, uint64_t i, unsigned f, struct slab_field *out);

/* The index of the sample with this key through the stored hash index: 0 and *index, or
 * SLAB_ERR_NOTFOUND. */
SLAB_API int slab_find(struct slab *s, const char *key, size_t key_len, uint64_t *index);

/* Is a key safe as the start of a member name on export: not absolute, no ".." component,
 * no NUL byte? pack refuses other keys, inspect --tar and prefetch --emit never write them. */
SLAB_API int slab_key_safe(const char *key, size_t key_len);

/* Sample i's key is safe (slab_key_safe): 0, or SLAB_ERR_CORRUPT with the reason, naming the
 * sample and the key, in slab_error() (or the error of slab_sample()). */
SLAB_API int slab_check_key(struct slab *s, uint64_t i);
/* The same for every sample: 0, or the error for the first one that is not. */
SLAB_API int slab_check_keys(struct slab *s);

/* Check everything: every field's CRC32C, that every byte between fields is zero, the page
 * rules (no straddling, large samples start a page), that records lie in the data area in
 * order, and that the key index finds every key. 0, or SLAB_ERR_CORRUPT with the first
 * problem (sample index, key, offset) in slab_error(). progress, when not NULL, is called
 * now and then with the bytes checked so far. */
SLAB_API int slab_verify(struct slab *s, void (*progress)(uint64_t done, uint64_t total, void *arg),
		void *arg);

/* ---- Writing ---------------------------------------------------------------------------- */

struct slab_writer;

struct slab_writer_options {
	uint64_t page_size;     /* power of two in [4096, 1 GiB]; 0 means the default 2 MiB */
	const char *options;    /* "key=value\n" text recorded in the header; may be NULL */
	uint64_t writeback;     /* when fd is a file: start writeback every this many bytes
				 * (sync_file_range), so a final fsync waits only for the tail;
				 * 0: never */
};

/* One field handed to slab_writer_add(). */
struct slab_field_in {
	const char *name;
	const void *data;
	uint64_t size;
	unsigned flags;         /* SLAB_FIELD_JPEG / SLAB_FIELD_TRANSCODED; PRESENT is implied */
	uint32_t width, height;
	unsigned subsamp, colorspace;
};

struct slab_writer_stats {
	uint64_t samples;
	uint64_t fields;        /* distinct field names */
	uint64_t pages;
	uint64_t data_bytes;    /* bytes of field data */
	uint64_t file_bytes;    /* bytes written so far */
};

/* A new writer; NULL when out of memory. Free with slab_writer_free(). */
SLAB_API struct slab_writer *slab_writer_new(void);

/* Start writing to fd (a file or a pipe: the writer never seeks). name is used in messages.
 * Writes the header. */
SLAB_API int slab_writer_open(struct slab_writer *w, int fd, const char *name,
		     const struct slab_writer_options *o);

/* Append one sample. Its fields are laid back to back in the order given. Refused without
 * writing anything with SLAB_ERR_DUPKEY (key seen before) or SLAB_ERR_DUPFIELD (a name
 * twice), so the caller may skip the sample and go on. Other errors are final. */
SLAB_API int slab_writer_add(struct slab_writer *w, const char *key, size_t key_len,
		    const struct slab_field_in *fields, size_t nfields);

/* Write the table and the trailer. The fd is left open (the caller fsyncs and closes). */
SLAB_API int slab_writer_finish(struct slab_writer *w);

SLAB_API void slab_writer_stats(const struct slab_writer *w, struct slab_writer_stats *st);
SLAB_API const char *slab_writer_error(const struct slab_writer *w);
SLAB_API void slab_writer_free(struct slab_writer *w);

/* ---- A dataset: several files as one ------------------------------------------------- */

/* Files read as one dataset, numbered in the order given, as the tools and plans number them:
 * a sample is (file, index) or a global index (file 0's samples first). */
struct slab_dataset;
struct slab_plan;
struct slab_plan_params;
struct slab_follow;
struct slab_follow_options;

/* A new, empty dataset; NULL only when out of memory. Free with slab_dataset_close(). */
SLAB_API struct slab_dataset *slab_dataset_new(void);
/* Open paths[0 .. n) (n >= 1), each as slab_open() does. On failure nothing stays open and
 * slab_dataset_error() says why, naming the file. */
SLAB_API int slab_dataset_open(struct slab_dataset *d, const char *const *paths, size_t n);
/* Closes every file and frees; accepts NULL. */
SLAB_API void slab_dataset_close(struct slab_dataset *d);
/* The last error's text ("" when none). */
SLAB_API const char *slab_dataset_error(const struct slab_dataset *d);

SLAB_API size_t slab_dataset_files(const struct slab_dataset *d);
/* File f's reader (for slab_sample(), slab_get(), its schema) and path; NULL past the end.
 * The dataset owns them. */
SLAB_API struct slab *slab_dataset_file(const struct slab_dataset *d, size_t file);
SLAB_API const char *slab_dataset_path(const struct slab_dataset *d, size_t file);
/* Samples in all files. */
SLAB_API uint64_t slab_dataset_count(const struct slab_dataset *d);
/* Global index -> (file, index), and back: 0, or SLAB_ERR_RANGE. */
SLAB_API int slab_dataset_locate(const struct slab_dataset *d, uint64_t global, size_t *file,
				 uint64_t *index);
SLAB_API int slab_dataset_global(const struct slab_dataset *d, size_t file, uint64_t index,
				 uint64_t *global);
/* The sample with this key, through each file's hash index in file order (the first file
 * holding it wins): 0 and (*file, *index), or SLAB_ERR_NOTFOUND. */
SLAB_API int slab_dataset_find(const struct slab_dataset *d, const char *key, size_t key_len,
			       size_t *file, uint64_t *index);

/* A plan over the dataset: made here (the function shuffle-plan uses, same parameters, same
 * result), or read from a plan file and checked to belong to these files. Free with
 * slab_plan_free(). */
SLAB_API int slab_dataset_plan_make(struct slab_dataset *d, const struct slab_plan_params *p,
				    uint64_t start, struct slab_plan **out);
SLAB_API int slab_dataset_plan_read(struct slab_dataset *d, const char *path,
				    struct slab_plan **out);
/* The plan's entries held (from its start position), and entry i as (file, index). */
SLAB_API uint64_t slab_plan_count(const struct slab_plan *plan);
SLAB_API int slab_plan_get(const struct slab_plan *plan, uint64_t i, size_t *file,
			   uint64_t *index);
/* Accepts NULL. */
SLAB_API void slab_plan_free(struct slab_plan *plan);
/* Walk a plan of this dataset with read-ahead (and release, or O_DIRECT) as prefetch --plan
 * does: slab_follow_next() hands out each sample in plan order. */
SLAB_API int slab_dataset_follow(struct slab_dataset *d, const struct slab_plan *plan,
				 const struct slab_follow_options *o, struct slab_follow **out);

#ifdef __cplusplus
}
#endif

#endif
