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

/*
 * Errors. Every call that can fail returns 0 (or a count, or 1 for "present", where its
 * contract says so) or one of the negative codes below. The detail (the file, the offset, the
 * key, the system's reason) is kept on the handle the call was made on and read with that
 * handle's *_error() accessor: slab_error(), slab_writer_error(), slab_plan_error(),
 * slab_follow_error(). The text is "" until a call fails; a call that succeeds leaves it
 * as it was. Messages name their subject first, "'shard-007.slab': ...". The exceptions
 * are the lookups on a const dataset or plan, which write nothing in it (so that many
 * threads may make them at once): slab_dataset_locate(), slab_dataset_global() and
 * slab_plan_get() fail with SLAB_ERR_RANGE alone, slab_dataset_find() with
 * SLAB_ERR_NOTFOUND alone, or with the error of a file's reader, whose slab_error() has
 * its text (*file names the file).
 *
 * Structs the caller allocates and the library reads or fills (options, statistics) may grow
 * in later versions: their first member is `size_t size`, to be set to sizeof the struct (0
 * stands for the first version's size, so `= { 0 }` with the fields wanted keeps working).
 * The library reads only the fields the caller's version has, and fills only those. Where a
 * call reads such a struct, NULL stands for one of zeros: the defaults, or SLAB_ERR_INVAL
 * where zero is not a value (a plan's world size, a loader's batch).
 *
 * Threads. The library keeps no global mutable state (past a hash key drawn once, under
 * pthread_once), so different handles are independent. On one open reader (struct slab) every
 * call that only reads (slab_count ... slab_base, slab_field_*, slab_sample, slab_get,
 * slab_find, slab_key_safe, slab_check_key(s), slab_sample_fields, slab_file_identity, and
 * slab_verify) may run from many threads at once: the success path writes nothing in the
 * handle, and the mapping is read-only. A failing call writes the handle's error text, so
 * when calls fail in several threads at once, slab_error() returns the text of one of them,
 * possibly garbled: the return code is always exact, and a thread that needs the text of its
 * own failure uses a reader of its own (opening a file twice maps it twice, sharing the page
 * cache). slab_open*() and slab_close() must not overlap any other call on that reader.
 * Writers, plans being made, read, matched or measured, and plan walks (struct slab_follow)
 * are used by one thread at a time each: one handle per thread, or a lock around each call.
 * A plan once made or read may be read through its accessors (slab_plan_params ...
 * slab_plan_file_ids) and walked by many walks in many threads at once, as may the readers
 * the walks use.
 */

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
	SLAB_ERR_LIMIT = -10,    /* an input asks for more than a set limit allows (an image's
				  * pixels or progressive scans): refused before allocating */
	SLAB_ERR_CHANGED = -11,  /* a remote object changed (another ETag or size) while in use,
				  * or since its local cache was filled */
};

/* ---- Reading ---------------------------------------------------------------------------- */

struct slab;

/* The flags of a field (struct slab_field, struct slab_writer_field). */
#define SLAB_FIELD_PRESENT      0x01u
#define SLAB_FIELD_JPEG         0x02u   /* width, height, subsampling, colour space are valid */
#define SLAB_FIELD_TRANSCODED   0x04u   /* bytes were re-encoded by pack --image-max-side */
#define SLAB_FIELD_PNG          0x08u   /* a PNG: width and height are valid (format 1.1) */
#define SLAB_FIELD_WEBP         0x10u   /* a WebP: width and height are valid (format 1.1) */
#define SLAB_FIELD_RESTART      0x20u   /* a JPEG given restart markers by pack --jpeg-restart:
					 * other bytes, the same pixels (format 1.2) */
#define SLAB_FIELD_VIDEO        0x40u   /* a video: width and height are valid, the rest in
					 * slab_field_video() (format 1.3) */
/* The image flags: at most one is set. Width and height 0 with one of them: a side is over
 * 65535 pixels (only a PNG can be), too large for the record. */
#define SLAB_FIELD_IMAGE        (SLAB_FIELD_JPEG | SLAB_FIELD_PNG | SLAB_FIELD_WEBP)

/* A JPEG field's chroma subsampling and colour space, numbered as TurboJPEG's TJSAMP_* and
 * TJCS_*. */
enum { SLAB_SAMP_444, SLAB_SAMP_422, SLAB_SAMP_420, SLAB_SAMP_GRAY, SLAB_SAMP_440,
       SLAB_SAMP_411, SLAB_SAMP_UNKNOWN = 255 };
enum { SLAB_CS_RGB, SLAB_CS_YCBCR, SLAB_CS_GRAY, SLAB_CS_CMYK, SLAB_CS_YCCK,
       SLAB_CS_UNKNOWN = 255 };

/* One field of one sample. data points into the read-only mapping and lives until
 * slab_close(); nothing is copied. */
struct slab_field {
	const unsigned char *data;
	uint64_t offset;        /* file offset of data */
	uint64_t size;
	uint32_t crc;           /* stored CRC32C */
	uint32_t width, height; /* image dimensions when flags & SLAB_FIELD_IMAGE */
	unsigned flags;         /* SLAB_FIELD_* */
	unsigned subsamp, colorspace;   /* SLAB_SAMP_*, SLAB_CS_* */
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
 * naming the file and the offset where it helps, and the reader is left as slab_new() made
 * it (no samples, no fields, nothing mapped; slab_verify() is SLAB_ERR_INVAL), to be opened
 * again or closed. A reader opens one file, once. */
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
/* The path the reader was opened from (slab_open_mem()'s name), as its messages name it: a
 * URL with what carries a credential masked (its user:password@ as ***@, a presigned
 * query's signature, key id and token as ***), what a program's own messages should say. */
SLAB_API const char *slab_path(const struct slab *s);

/* The field id of a name, or SLAB_ERR_NOTFOUND (negative). */
SLAB_API int slab_field_lookup(const struct slab *s, const char *name);

/* The calls from here to slab_sample_fields() read the file's table through the mapping
 * under a SIGBUS guard: a file truncated while in use, or a device that fails the read, is
 * SLAB_ERR_IO naming the file ("cannot read offset N: the file is M bytes now, ... (truncated
 * while in use)"), never a SIGBUS. The bytes they point to are read by the caller: a key
 * slab_sample() hands out was readable when it returned; field bytes a truncation cuts off
 * fault where the caller reads them, unless it guards them (slab_follow_touch(), the loader). */

/* Sample i's key, place and size. 0, SLAB_ERR_RANGE or SLAB_ERR_CORRUPT. */
SLAB_API int slab_sample(struct slab *s, uint64_t i, struct slab_sample *out);

/* Field f of sample i: 1 when present (*out filled), 0 when the sample lacks it, or a
 * negative error (SLAB_ERR_RANGE, SLAB_ERR_CORRUPT when the record points outside the data). */
SLAB_API int slab_get(struct slab *s, uint64_t i, unsigned f, struct slab_field *out);

/* slab_get() without the bytes: the record (offset, size, CRC, image size, flags) only.
 * For a file at a URL nothing is fetched, and data points into the mapping where the bytes
 * may not be yet: read them through slab_get(). For a local file the same as slab_get(). */
SLAB_API int slab_get_record(struct slab *s, uint64_t i, unsigned f, struct slab_field *out);

struct slab_video_info;

/* What pack recorded of a video field (SLAB_FIELD_VIDEO, format 1.3): field f of sample i as
 * slab_video_info() found it, from the table alone (nothing is fetched or decoded): width
 * and height from the field record (0 x 0 for a side over 65535), frames, duration (to the
 * microsecond), rate and codec (its first 8 bytes) from the field's video record. 1 and
 * *info; 0 when the sample lacks the field or it is not a video; SLAB_ERR_RANGE;
 * SLAB_ERR_CORRUPT (a record outside the table's video records). */
SLAB_API int slab_field_video(struct slab *s, uint64_t i, unsigned f,
			      struct slab_video_info *info);

/* The index of the sample with this key through the stored hash index: 0 and *index, or
 * SLAB_ERR_NOTFOUND. */
SLAB_API int slab_find(struct slab *s, const char *key, size_t key_len, uint64_t *index);

/* Is a key safe as the start of a member name on export: not absolute, no ".." component,
 * no NUL byte? The writer (and so pack) refuses other keys, inspect --tar and prefetch --emit
 * never write them. */
SLAB_API int slab_key_safe(const char *key, size_t key_len);

/* Sample i's key is safe (slab_key_safe), and so is each KEY.FIELD it is exported as (a key
 * whose last component is empty, "" or "x/", has no field named ".": "x/.."): 0, or
 * SLAB_ERR_CORRUPT with the reason, naming the sample and the key, in slab_error() (or the
 * error of slab_sample()). */
SLAB_API int slab_check_key(struct slab *s, uint64_t i);
/* The same for every sample: 0, or the error for the first one that is not. */
SLAB_API int slab_check_keys(struct slab *s);

/* Check everything: every field's CRC32C and flags, that every byte between fields is zero,
 * the page rules (no straddling, large samples start a page), that records lie in the data
 * area in order, and that the key index finds every key. 0, or SLAB_ERR_CORRUPT with the first
 * problem (sample index, key, offset) in slab_error(); SLAB_ERR_IO when the file was
 * truncated while it was checked (a cut inside its last OS page reads as zeros: the file's
 * size at the end is compared with its size at open). progress, when not NULL, is called
 * now and then with the bytes checked so far. */
SLAB_API int slab_verify(struct slab *s, void (*progress)(uint64_t done, uint64_t total, void *arg),
		void *arg);

/* The fields sample i has, in the order they had in the packed input: ids[k] the field id and
 * fl[k] the field, for k below the count returned; both arrays hold slab_field_count(s)
 * entries. bytes, when not NULL, holds the sample's bytes as read elsewhere (e.g. with
 * O_DIRECT: the slab_sample() size bytes from its offset), and each fl[k].data then points
 * into it; a field outside the sample's range is SLAB_ERR_CORRUPT. NULL: the mapping. Checks
 * the key too (slab_check_key), since whatever writes the sample out names it by its key.
 * The count, or a negative error in slab_error(). */
SLAB_API int slab_sample_fields(struct slab *s, uint64_t i, const unsigned char *bytes,
				unsigned *ids, struct slab_field *fl);

/* ---- Remote files: .slab files at a URL, read through a local cache ------------------------
 *
 * Every call that takes a .slab path takes a URL as well: http://host/path, https://...,
 * s3://bucket/key. The file is mirrored into a sparse local file at the same offsets (the
 * cache, see remote(7) in slab(5)'s "REMOTE FILES"): the header, the table and the trailer
 * are fetched when it opens, a sample's pages when a call first needs its bytes (slab_get,
 * slab_sample_fields, slab_verify, plan walks, loaders), and a plan walk asks for the pages
 * of its window ahead of use. A page is used only after its bytes arrived whole and matched
 * their CRC-32C. The mapping is the cache file's, so pointers into it (struct slab_field)
 * behave as for a local file. Messages name the URL.
 */

/* The longest timeout a remote request takes (a week, in seconds). */
#define SLAB_NET_MAX_TIMEOUT 604800.0

/* How URLs are reached. Zero fields are the defaults: the environment (SLAB_CACHE_DIR,
 * XDG_CACHE_HOME; AWS_ENDPOINT_URL, AWS_PROFILE, AWS_REGION, AWS_ACCESS_KEY_ID, ...) and
 * ~/.aws/credentials, ~/.aws/config. */
struct slab_remote_options {
	size_t size;            /* sizeof(struct slab_remote_options), or 0 */
	const char *cache_dir;  /* NULL: $SLAB_CACHE_DIR, else $XDG_CACHE_HOME/slab (when
				 * absolute), else ~/.cache/slab */
	const char *s3_endpoint;        /* NULL: $AWS_ENDPOINT_URL, else AWS's */
	const char *profile;    /* NULL: $AWS_PROFILE, else "default" */
	const char *region;     /* NULL: $AWS_REGION, the profile's, else us-east-1 */
	int addressing;         /* 0 auto (virtual-host on AWS, path-style elsewhere), 1 path,
				 * 2 virtual-host */
	int anonymous;          /* send requests unsigned (public buckets) */
	unsigned connections;   /* requests in flight per dataset; 0: 16 */
	int retries;            /* retries of a failed request; 0: 8, negative: none */
	double timeout;         /* seconds a request may take, retries included; 0: 300;
				 * over SLAB_NET_MAX_TIMEOUT (a week): a week */
	/* One line per request (never a credential), from any thread; NULL: none. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* Is name a URL (http://, https://, s3://) rather than a path? */
SLAB_API int slab_is_url(const char *name);

/* slab_open() of a path or a URL, with these options (NULL: the defaults). A path makes no
 * use of them, but options of a size no version has are SLAB_ERR_INVAL for it too. */
SLAB_API int slab_open_ex(struct slab *s, const char *name, const struct slab_remote_options *o);

/* The local file whose mapping a reader reads: the cache file for a URL, the path itself
 * otherwise. */
SLAB_API const char *slab_local_path(const struct slab *s);

struct slab_remote_stats {
	size_t size;            /* sizeof(struct slab_remote_stats), or 0 */
	uint64_t pages;         /* .slab pages of the file */
	uint64_t pages_cached;  /* of which in the local cache now */
	uint64_t bytes_cached;  /* their bytes */
	uint64_t fetched_bytes; /* sample bytes this reader fetched (its own and its fetchers') */
	uint64_t fetches;       /* page groups it fetched */
	uint64_t refetches;     /* groups fetched again: their bytes failed their CRC-32C */
	uint64_t dropped;       /* pages it dropped from the cache */
	uint64_t requests;      /* HTTP requests, retries included */
	uint64_t retries;
};

/* 1 and *st for a reader of a URL; 0 for a local file (st untouched). */
SLAB_API int slab_remote_stats(const struct slab *s, struct slab_remote_stats *st);

/* Make bytes [off, off + len) of the file present in the local cache (len 0: to the end):
 * fetched and checked where they are not. 0 at once for a local file; or an error. */
SLAB_API int slab_fetch(struct slab *s, uint64_t off, uint64_t len);
/* Ask for them in the background and return at once (nothing for a local file). */
SLAB_API void slab_fetch_ahead(struct slab *s, uint64_t off, uint64_t len);
/* Are they all present? 1 for a local file. */
SLAB_API int slab_fetched(const struct slab *s, uint64_t off, uint64_t len);
/* Drop the whole .slab pages inside [off, off + len) from the local cache (len 0: to the
 * end); 0 for a local file. Bytes of those pages handed out before must not be read after.
 * Refused (SLAB_ERR_IO, nothing dropped) while another process has the URL open: it would
 * read the dropped pages as zeros. */
SLAB_API int slab_uncache(struct slab *s, uint64_t off, uint64_t len);

/* What ties a plan to its files: their content, not their names. */
struct slab_file_id {
	uint64_t file_size;
	uint64_t samples;
	uint32_t header_crc;
	uint32_t table_crc;
};

/* The identity of an open file. */
SLAB_API void slab_file_identity(const struct slab *s, struct slab_file_id *id);

/* ---- Plans: epoch orderings over a dataset of .slab files ------------------------------- */

/*
 * A plan is the order one rank reads a dataset of one or more .slab files in, for one epoch:
 * (file, sample) entries, files numbered in the order given. shuffle-plan(1) makes and
 * writes them, prefetch(1) follows them; the algorithm is in shuffle-plan(1), the file in
 * slab-plan(5). A plan handle holds one plan, made or read, and the error of its last
 * failed call.
 */
struct slab_plan;

enum slab_plan_mode { SLAB_PLAN_SEQUENTIAL, SLAB_PLAN_RANDOM, SLAB_PLAN_QUASI };

#define SLAB_PLAN_PAD     0x1u  /* ranks are filled up by repeating samples (else drop-last) */
#define SLAB_PLAN_MEMORY  0x2u  /* window is a budget in bytes, not in pages */
#define SLAB_PLAN_SUBSET  0x4u  /* over a subset of the samples: set by slab_plan_make_subset()
				 * and in the plans it makes, never by the caller */

/* One step of a plan: sample `sample` of file `file` (indexes from 0). */
struct slab_plan_entry {
	uint32_t file;
	uint32_t sample;
};

struct slab_plan_params {
	size_t size;            /* sizeof(struct slab_plan_params), or 0 */
	enum slab_plan_mode mode;
	uint64_t seed;
	uint64_t epoch;
	uint32_t rank;          /* < world */
	uint32_t world;         /* >= 1 */
	uint64_t window;        /* quasi: live pages (or bytes with SLAB_PLAN_MEMORY), >= 1;
				 * recorded but unused by the other modes */
	unsigned flags;         /* SLAB_PLAN_* */
};

/* A new, empty plan handle; NULL only when out of memory. Free with slab_plan_free(). */
SLAB_API struct slab_plan *slab_plan_new(void);

/* Compute the plan of rank p->rank over the files, from position start on (start may equal
 * the plan's length: no entries), into plan, replacing what it held (kept on failure). A
 * pure function of the files' identities and the parameters. The dataset may hold at most
 * 2^32 - 1 samples. 0, or SLAB_ERR_INVAL (parameters out of range, a reader not open:
 * never opened, or its open failed), SLAB_ERR_RANGE (start
 * past the end), SLAB_ERR_CORRUPT (a file's table), SLAB_ERR_NOMEM; slab_plan_error() says
 * why. */
SLAB_API int slab_plan_make(struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
			    const struct slab_plan_params *p, uint64_t start);

/* The same over a subset of the samples (FFCV's indices=): subset[0 .. n) are global indexes
 * (file order, then index in the file; slab_dataset_global()), in any order, each at most
 * once; the plan is as slab_plan_make() would make it over a dataset of those samples alone,
 * in file order (shuffle-plan(1), ALGORITHM): quasi shuffles and windows only the pages that
 * hold some of them. Ranks share the S = n samples; the plan records S and a CRC of the set
 * (slab-plan(5)). n may be 0 (an empty plan). SLAB_PLAN_SUBSET in p->flags is allowed and
 * implied. 0, or as slab_plan_make(), and SLAB_ERR_RANGE (an index past the dataset:
 * "subset entry 3: sample 520 is out of range (the dataset has 520 samples)"), SLAB_ERR_INVAL
 * (one given twice: "subset entry 7: sample 12 is already entry 2"). */
SLAB_API int slab_plan_make_subset(struct slab_plan *plan, struct slab *const *files,
				   uint32_t nfiles, const struct slab_plan_params *p,
				   const uint64_t *subset, size_t n, uint64_t start);

/* Read and check a plan file, "-" for standard input (checksums, sizes, header consistency,
 * entry ranges against its own identities) into plan, replacing what it held (kept on
 * failure). 0, or SLAB_ERR_IO, SLAB_ERR_FORMAT, SLAB_ERR_CORRUPT, SLAB_ERR_NOMEM with the
 * reason, naming the path, in slab_plan_error(). */
SLAB_API int slab_plan_read(struct slab_plan *plan, const char *path);

/* Write the plan file to fd (a file or a pipe: it never seeks). 0, or SLAB_ERR_IO (errno
 * is the write's, EPIPE when the reader went away: never SIGPIPE), SLAB_ERR_NOMEM, or
 * SLAB_ERR_INVAL for a handle no plan was made or read into (nothing is written). */
SLAB_API int slab_plan_write(struct slab_plan *plan, int fd);

/* Does the plan belong to these files (same count, same identities)? 0, or SLAB_ERR_INVAL
 * with the first difference in slab_plan_error(). */
SLAB_API int slab_plan_match(struct slab_plan *plan, struct slab *const *files, uint32_t nfiles);

/* Its parameters (the ones it was made with, or read from its file); size is set. */
SLAB_API const struct slab_plan_params *slab_plan_params(const struct slab_plan *plan);
/* The entries it holds: slab_plan_count() of them, positions slab_plan_start() on of the
 * rank's whole plan of slab_plan_length() entries; they live until the plan is made, read
 * or freed again. */
SLAB_API const struct slab_plan_entry *slab_plan_entries(const struct slab_plan *plan);
SLAB_API uint64_t slab_plan_count(const struct slab_plan *plan);
SLAB_API uint64_t slab_plan_start(const struct slab_plan *plan);
SLAB_API uint64_t slab_plan_length(const struct slab_plan *plan);
/* Samples in the dataset (all files), all ranks together. */
SLAB_API uint64_t slab_plan_total(const struct slab_plan *plan);
/* The samples the ranks share: the subset's size S with SLAB_PLAN_SUBSET, else
 * slab_plan_total(); and the subset's CRC-32C as slab-plan(5) has it (0 without a subset). */
SLAB_API uint64_t slab_plan_subset_count(const struct slab_plan *plan);
SLAB_API uint32_t slab_plan_subset_crc(const struct slab_plan *plan);
/* The files it is for: slab_plan_file_count() identities. */
SLAB_API uint32_t slab_plan_file_count(const struct slab_plan *plan);
SLAB_API const struct slab_file_id *slab_plan_file_ids(const struct slab_plan *plan);

/* Measures of a plan's entries over its files (shuffle-plan --stats; shuffle-plan(1),
 * STATISTICS). A sample's page is the one holding its first byte; a sample larger than a page
 * counts all its pages. */
struct slab_plan_stats {
	size_t size;                    /* sizeof(struct slab_plan_stats), or 0 */
	uint64_t samples;
	uint64_t distinct_pages;
	uint64_t page_switches;         /* consecutive entries on different pages */
	double mean_run;                /* samples / (page_switches + 1) */
	uint64_t max_live_pages;        /* most pages between their first and last use at once */
	uint64_t max_live_bytes;
	double displacement;            /* mean |i / (length-1) - g / (total-1)| over the entries:
					 * i the position in the rank's plan, g the sample's index
					 * in file order; 0 for sequential, ~1/3 for random.
					 * A subset plan made here counts g and total in its
					 * subset; one read from a file (which does not list
					 * its subset) in the whole dataset */
	double same_page_neighbours;    /* fraction of consecutive pairs on one page */
};

/* 0 and *st, or a negative error in slab_plan_error(). The files must be the plan's:
 * others are SLAB_ERR_INVAL with slab_plan_match()'s message. */
SLAB_API int slab_plan_stats(struct slab_plan *plan, struct slab *const *files, uint32_t nfiles,
			     struct slab_plan_stats *st);

/* The entries of plans[0 .. n) one after another into out (consecutive epochs walked as
 * one), replacing what it held (kept on failure); out is none of them. They must be over the
 * same files. out has plans[0]'s parameters, starts at 0 and is as long as its entries.
 * 0, or SLAB_ERR_INVAL (no plans, other files), SLAB_ERR_NOMEM; the reason in out's error. */
SLAB_API int slab_plan_concat(struct slab_plan *out, const struct slab_plan *const *plans,
			      size_t n);

SLAB_API const char *slab_plan_error(const struct slab_plan *plan);
/* Accepts NULL. */
SLAB_API void slab_plan_free(struct slab_plan *plan);

/* ---- Following a plan: read-ahead and release -------------------------------------------- */

/*
 * A walk of a plan over its .slab files, sample by sample, keeping the next pages of the plan
 * on their way into the page cache (WILLNEED) and, on request, dropping each page once its
 * last use in the plan has passed, so a dataset larger than memory streams through a bounded
 * amount of it. Or read with O_DIRECT, several reads in flight through Linux AIO, and keep
 * the cache out of it. What prefetch(1) does, for any program.
 */
struct slab_follow;

/* What a walk with a memory budget keeps in the page cache once the window has passed a
 * page (slab_follow_options.memory). */
enum slab_cache_policy {
	SLAB_CACHE_BELADY = 0,  /* the pages whose next use in the plans is soonest (Belady's
				 * MIN: the future is known); a page needed sooner than the
				 * latest kept one takes its place */
	SLAB_CACHE_FIXED = 1,   /* the first pages that fit, for good (a MinIO cache) */
};

struct slab_follow_options {
	size_t size;            /* sizeof(struct slab_follow_options), or 0 */
	uint64_t ahead;         /* .slab pages of look-ahead, >= 1 (0 is taken as 1) */
	int release;            /* drop each page after its last use in the plan, and at
				 * slab_follow_close() before the end the pages read ahead
				 * (not with a local cache budget; not in a forked child) */
	int direct;             /* O_DIRECT into aligned buffers instead of the mapping */
	int direct_sync;        /* direct reads one at a time, without AIO (tests, comparison) */
	/* A page cache budget: bytes of the dataset the walk lets the cache hold, the window
	 * included. Each page the window leaves is kept or dropped (POSIX_FADV_DONTNEED) as
	 * the policy says, so the kernel never has to guess; a page no plan uses again is kept
	 * last of all, while there is room. Pages cached at the start (an earlier walk kept
	 * them) count as kept. 0: no budget (release, or the kernel's own choice). Not with
	 * direct. */
	uint64_t memory;
	int policy;             /* enum slab_cache_policy */
	/* With slab_follow_open_plans(): hand out the entries of the first `walked` plans
	 * only; the later ones are the known future the policy and the window look at. 0: all. */
	size_t walked;
	/* A local cache budget for files at a URL (slab_open_ex): bytes of them the local cache
	 * may hold, the window included, kept and dropped by `policy` as `memory` does for the
	 * page cache (a dropped page leaves the cache file: fallocate(PUNCH_HOLE)). Not with
	 * memory. 0: none (the cache keeps every page fetched). */
	uint64_t disk;
};

/* One step of the walk. */
struct slab_follow_item {
	uint64_t pos;           /* position in the plan (slab_plan_start() + entry index) */
	uint32_t file;
	uint64_t index;         /* sample index in its file */
	struct slab_sample sample;
	/* The sample's sample.size bytes (from sample.offset): into the mapping, or into a
	 * buffer with direct. Valid until the next slab_follow_next() or slab_follow_close(). */
	const unsigned char *bytes;
	int direct;             /* bytes are a copy, not the mapping */
};

struct slab_follow_stats {
	size_t size;            /* sizeof(struct slab_follow_stats), or 0 */
	uint64_t samples;       /* steps taken */
	uint64_t bytes;         /* sample bytes handed out */
	uint64_t distinct_pages;        /* .slab pages the plan touches */
	uint64_t advised;       /* WILLNEED calls (runs of samples, or whole pages) */
	uint64_t whole_pages;   /* pages read whole: all their uses were near (quasi order) */
	uint64_t released;      /* pages dropped after their last use */
	uint64_t max_window;    /* most distinct pages in the window at once */
	uint64_t direct_reads;  /* O_DIRECT reads (each a run of adjacent samples) */
	uint64_t direct_bytes;  /* bytes they read */
	uint64_t max_buffered;  /* most bytes held in read buffers at once: at most ahead x
				 * the largest page size, or one larger sample alone */
	int async;              /* direct reads went through Linux AIO, several in flight */
	/* With a memory budget: */
	uint64_t kept;          /* pages the window left that stayed in the cache */
	uint64_t evicted;       /* kept pages dropped later for pages needed sooner */
	uint64_t hits;          /* pages coming into the window that were kept */
	uint64_t misses;        /* pages coming into the window that were not (read from
				 * storage, unless the kernel had them still) */
	uint64_t max_cached;    /* most bytes kept and in the window at once */
	uint64_t adopted;       /* pages found in the cache at the start (an earlier walk's),
				 * taken as kept */
};

/* A new walk, not yet open; NULL only when out of memory. Free with slab_follow_close(). */
SLAB_API struct slab_follow *slab_follow_new(void);

/* Prepare a walk of plan over files[0..nfiles) (paths[] are their names in messages; each
 * reader's file is opened again by its name for advice and O_DIRECT, and one the name no
 * longer leads to, another file of the same size even, is SLAB_ERR_IO, "the file changed
 * while it was being opened"). The plan must match the files: one that does not is SLAB_ERR_INVAL
 * with slab_plan_match()'s message in slab_follow_error() (the plan's error untouched). The
 * files, paths and plan must outlive the walk. One pass over the plan finds each page's last
 * use. 0, or a negative error with the reason (naming the file where it helps) in
 * slab_follow_error(). */
SLAB_API int slab_follow_open(struct slab_follow *f, struct slab *const *files,
			      const char *const *paths, uint32_t nfiles,
			      const struct slab_plan *plan, const struct slab_follow_options *o);

/* The same over several plans walked one after another as consecutive epochs (n >= 1, all
 * over these files: slab_plan_concat()); an item's pos is its position in its own plan, and
 * slab_follow_epoch() says which plan it is from. */
SLAB_API int slab_follow_open_plans(struct slab_follow *f, struct slab *const *files,
				    const char *const *paths, uint32_t nfiles,
				    const struct slab_plan *const *plans, size_t n,
				    const struct slab_follow_options *o);

/* The plan (0 .. n - 1) of the item slab_follow_next() handed out last. */
SLAB_API size_t slab_follow_epoch(const struct slab_follow *f);

/* The next sample: releases what the previous one used last, moves the look-ahead window,
 * reads the sample (direct) or hands out its place in the mapping. 1 and *it, 0 at the
 * end, or a negative error with the reason in slab_follow_error(): SLAB_ERR_INVAL ("plan
 * walk not open") before an open that succeeded. */
SLAB_API int slab_follow_next(struct slab_follow *f, struct slab_follow_item *it);

/* Make sure the sample's bytes are in memory: one byte per OS page is read through the
 * mapping (direct items are read already). 0, or SLAB_ERR_IO when a page cannot be read
 * (the file was truncated while in use, or the device failed: caught, not a SIGBUS). */
SLAB_API int slab_follow_touch(const struct slab_follow_item *it);

SLAB_API void slab_follow_stats(const struct slab_follow *f, struct slab_follow_stats *st);
SLAB_API const char *slab_follow_error(const struct slab_follow *f);
/* Accepts NULL. Does not close the files. */
SLAB_API void slab_follow_close(struct slab_follow *f);

/* ---- Writing ---------------------------------------------------------------------------- */

struct slab_writer;

struct slab_writer_options {
	size_t size;            /* sizeof(struct slab_writer_options), or 0 */
	uint64_t page_size;     /* power of two in [4096, 1 GiB]; 0 means the default 2 MiB */
	const char *options;    /* "key=value\n" text recorded in the header; may be NULL */
	uint64_t writeback;     /* when fd is a file: start writeback every this many bytes
				 * (sync_file_range), so a final fsync waits only for the tail;
				 * 0: never */
};

/* One field handed to slab_writer_add(). */
struct slab_writer_field {
	const char *name;
	const void *data;
	uint64_t size;
	unsigned flags;         /* one of SLAB_FIELD_IMAGE, SLAB_FIELD_TRANSCODED,
				 * SLAB_FIELD_RESTART; or SLAB_FIELD_VIDEO (slab_writer_add_ex());
				 * PRESENT is implied */
	uint32_t width, height; /* with an image flag or SLAB_FIELD_VIDEO; a side over 65535
				 * records both as 0 */
	unsigned subsamp, colorspace;   /* with SLAB_FIELD_JPEG */
};

struct slab_writer_stats {
	size_t size;            /* sizeof(struct slab_writer_stats), or 0 */
	uint64_t samples;
	uint64_t fields;        /* distinct field names */
	uint64_t pages;
	uint64_t data_bytes;    /* bytes of field data */
	uint64_t file_bytes;    /* bytes written so far */
};

/* A new writer; NULL when out of memory. Free with slab_writer_free(). */
SLAB_API struct slab_writer *slab_writer_new(void);

/* Start writing to fd (a file or a pipe: the writer never seeks; a pipe whose reader went
 * away is SLAB_ERR_IO with errno EPIPE, never SIGPIPE). name is used in messages;
 * o may be NULL (the defaults). Writes the header. 0, SLAB_ERR_INVAL (page size, options
 * text; a writer opened before: a writer writes one file), SLAB_ERR_NOMEM or SLAB_ERR_IO
 * (fd not open for writing: closed, or read-only; errno EBADF).
 * Options or a descriptor refused leave the writer as new, nothing written, to be opened
 * again.
 * Samples are added and the file finished only after an open that succeeded. */
SLAB_API int slab_writer_open(struct slab_writer *w, int fd, const char *name,
		     const struct slab_writer_options *o);

/* Append one sample. Its fields are laid back to back in the order given. Refused without
 * writing anything with SLAB_ERR_DUPKEY (key seen before) or SLAB_ERR_DUPFIELD (a name
 * twice), so the caller may skip the sample and go on; their text names the sample, not the
 * output. Other errors are final: SLAB_ERR_INVAL (a NULL or empty field name, one with a '/'
 * or longer than 65535 bytes, NULL data with a size above 0, more than one image flag on a
 * field or one with SLAB_FIELD_VIDEO, SLAB_FIELD_RESTART without SLAB_FIELD_JPEG, a flag not
 * SLAB_FIELD_*, a JPEG's subsamp or colorspace over 255, more than
 * 255 fields, a key that is not slab_key_safe(), a field "." of a key "" or ending in '/'
 * (exported as "x/.."), the writer not open, ...), SLAB_ERR_NOMEM,
 * SLAB_ERR_IO: every later add
 * and finish returns the same code, the text left as it was. A call before the open that
 * succeeded (or after the finish) is SLAB_ERR_INVAL and changes nothing else. */
SLAB_API int slab_writer_add(struct slab_writer *w, const char *key, size_t key_len,
		    const struct slab_writer_field *fields, size_t nfields);

/* slab_writer_add() with videos: videos[k] (videos may be NULL: none) describes fields[k]
 * when its flags have SLAB_FIELD_VIDEO (else it is not read, and may be NULL), recorded in
 * the field's video record (slab(5); read back by slab_field_video()): its frames, duration
 * (to the microsecond), rate and codec (the first 8 bytes of the name); width and height
 * come from fields[k]. A video flag without its info is SLAB_ERR_INVAL, as are more than
 * 2^32 - 1 videos in a file. */
SLAB_API int slab_writer_add_ex(struct slab_writer *w, const char *key, size_t key_len,
				const struct slab_writer_field *fields, size_t nfields,
				const struct slab_video_info *const *videos);

/* Write the table and the trailer. The fd is left open (the caller fsyncs and closes). */
SLAB_API int slab_writer_finish(struct slab_writer *w);

SLAB_API void slab_writer_stats(const struct slab_writer *w, struct slab_writer_stats *st);
SLAB_API const char *slab_writer_error(const struct slab_writer *w);
SLAB_API void slab_writer_free(struct slab_writer *w);

/* ---- Images: one image to a fixed-size crop ------------------------------------------- */

/* The image pipeline for training samples: one image in (JPEG, PNG or WebP, found by its
 * first bytes), a crop of it resized to a fixed H x W out as uint8 RGB (or grey, or RGBA:
 * spec channels), HWC or CHW, decoding
 * no more of the image than the crop needs (JPEG: libjpeg-turbo's DCT-domain scaling, column
 * cropping, row skipping; WebP: libwebp's cropping and scaling; PNG: rows up to the crop's
 * last).
 * slab_image_params() is a pure function. A decoder is one thread's: make one per thread; it
 * keeps its scratch buffers between images. */
enum slab_image_crop {
	SLAB_IMAGE_CROP_NONE = 0,       /* resize the whole image (aspect not kept) */
	SLAB_IMAGE_CROP_CENTER = 1,     /* the largest centred region with the output's aspect,
					 * times center_ratio */
	SLAB_IMAGE_CROP_RANDOM_RESIZED = 2, /* torchvision's RandomResizedCrop.get_params */
};

/* What to make of each image. slab_image_spec_init() fills torchvision's defaults. */
struct slab_image_spec {
	uint32_t out_w, out_h;          /* output size, each 1 .. 65535 */
	int crop;                       /* enum slab_image_crop */
	double scale_min, scale_max;    /* random-resized: area fraction, default 0.08 .. 1 */
	double ratio_min, ratio_max;    /* random-resized: w/h, default 3/4 .. 4/3 */
	int flip;                       /* nonzero: horizontal flip with probability 1/2 */
	int chw;                        /* nonzero: planar output (C x H x W), else H x W x C */
	int exact;                      /* nonzero: decode the whole image at full size, then
					 * crop (the reference the faster paths are held to) */
	/* center: the largest centred box of the output's aspect, each side scaled by this,
	 * 0 < center_ratio <= 1 (0 is taken as 1, the whole short side; ImageNet evaluation's
	 * Resize(256) + CenterCrop(224) is 224/256). The crop's side along the image's limiting
	 * dimension is floor(side * ratio + 1/2), the other side follows from the output's
	 * aspect as at ratio 1; centred at the floor of half the margin. Default 1. */
	double center_ratio;
	/* The members below were added after center_ratio; each is 0 for the behaviour before
	 * them (RGB, alpha dropped, bilinear). */
	/* Output channels: 0 or 3 RGB; 1 grey; 4 RGBA. Grey is PIL's convert("L") of the RGB,
	 * L = (R 19595 + G 38470 + B 7471 + 32768) >> 16, so a grey image's values come
	 * through unchanged; a palette PNG gives its palette indices instead (what
	 * numpy.array(Image.open(f)) gives for PIL's mode "P": a segmentation mask's labels).
	 * RGBA keeps the alpha channel as decoded (255 where the format has none). */
	unsigned channels;
	int alpha;                      /* enum slab_image_alpha: with 1 or 3 channels */
	uint8_t background[3];          /* RGB under SLAB_IMAGE_ALPHA_COMPOSITE:
					 * slab_image_spec_init() sets white (255, 255, 255),
					 * a spec zeroed by hand has black */
	int resize;                     /* enum slab_image_resize */
};

/* What becomes of an image's alpha channel with 1 or 3 output channels (4 keep it). */
enum slab_image_alpha {
	SLAB_IMAGE_ALPHA_DROP = 0,      /* the colour as stored, as PIL's convert("RGB") */
	SLAB_IMAGE_ALPHA_COMPOSITE = 1, /* over background, as PIL's alpha_composite() onto
					 * an opaque background, at full size, before the
					 * resize (and before grey) */
};

/* How the crop is brought to out_w x out_h. */
enum slab_image_resize {
	SLAB_IMAGE_RESIZE_BILINEAR = 0, /* PIL's BILINEAR with reducing (antialiased); 4
					 * channels premultiplied by alpha, as PIL resizes RGBA */
	SLAB_IMAGE_RESIZE_NEAREST = 1,  /* PIL's NEAREST: output pixel x of a crop w wide takes
					 * source column floor((x + 1/2) w / out_w) (rows alike),
					 * so label values stay exact; no decoder scaling */
};

/* One image's crop rectangle, in source pixels, and whether it is flipped. */
struct slab_image_params {
	uint32_t x, y, w, h;
	int flip;
	int fallback;                   /* random-resized: the 10 attempts failed, centre crop */
};

/* What one decode did: the DCT scaling taken (1, 2, 4 or 8: the image was decoded at
 * 1/scale_denom size) and whether only part of it was decoded. */
struct slab_image_stats {
	unsigned scale_denom;
	int region;                     /* columns cropped or rows skipped or the tail unread */
	uint32_t decoded_w, decoded_h;  /* pixels actually produced by libjpeg */
};

struct slab_image_decoder;

/* Fill *spec: out_w x out_h, centre crop (center_ratio 1), scale 0.08 .. 1, ratio 3/4 .. 4/3,
 * no flip, HWC, RGB (alpha dropped), background white, bilinear. */
SLAB_API void slab_image_spec_init(struct slab_image_spec *spec, uint32_t out_w,
				   uint32_t out_h);

/* The crop and flip of sample `index` of epoch `epoch` under `seed`, for a src_w x src_h
 * image. The result depends on these arguments only (never on the thread or on earlier
 * calls). 0, or SLAB_ERR_INVAL (an empty image or output, bad ranges). */
SLAB_API int slab_image_params(const struct slab_image_spec *spec, uint32_t src_w,
			       uint32_t src_h, uint64_t seed, uint64_t epoch, uint64_t index,
			       struct slab_image_params *p);

/* A decoder, or NULL when out of memory. free accepts NULL. */
SLAB_API struct slab_image_decoder *slab_image_decoder_new(void);
SLAB_API void slab_image_decoder_free(struct slab_image_decoder *d);

/* Text of the decoder's last failure. */
SLAB_API const char *slab_image_error(const struct slab_image_decoder *d);

/* Decompression bombs: the most pixels (width x height, as declared by the image's header)
 * and the most scans (progressive ones; every scan counts, and a sequential JPEG has at most
 * one a component) a decoder accepts. An image over either is refused with SLAB_ERR_LIMIT,
 * the pixels before any pixel memory is allocated, the scans as the next one is reached.
 * 0 takes the default for each (SLAB_IMAGE_MAX_PIXELS, PIL's limit; SLAB_IMAGE_MAX_SCANS);
 * UINT64_MAX / UINT_MAX: none. A new decoder has the defaults. */
#define SLAB_IMAGE_MAX_PIXELS 178956970ull
#define SLAB_IMAGE_MAX_SCANS 500u
SLAB_API void slab_image_decoder_limits(struct slab_image_decoder *d, uint64_t max_pixels,
					unsigned max_scans);

/* An image's width and height from its header. 0, SLAB_ERR_CORRUPT (also bytes of no format
 * the pipeline knows), SLAB_ERR_NOMEM, SLAB_ERR_LIMIT (more pixels than the decoder's
 * limit). */
SLAB_API int slab_image_size(struct slab_image_decoder *d, const void *jpeg, size_t len,
			     uint32_t *w, uint32_t *h);

/* Decode the image, crop p's rectangle, flip if p says so, resize to spec's out_w x out_h
 * with an antialiased bilinear filter (PIL's BILINEAR resample; or PIL's NEAREST with
 * SLAB_IMAGE_RESIZE_NEAREST), and write exactly out_h * out_w * C bytes to out, C the spec's
 * channels (3 when 0; CHW: C planes). p must have been made for this image's size (a
 * rectangle outside the image is SLAB_ERR_INVAL). Grey, YCbCr, RGB, CMYK and YCCK JPEGs,
 * every PNG colour type and bit depth, and WebP come out RGB (alpha dropped, as PIL's
 * convert("RGB"), or composited as spec->alpha says), grey or RGBA as spec->channels says.
 * A spec the pipeline refuses (channels other than 0, 1, 3, 4; alpha or resize out of their
 * enums; SLAB_IMAGE_ALPHA_COMPOSITE with 4 channels) is SLAB_ERR_INVAL.
 * stats may be NULL. 0, or SLAB_ERR_CORRUPT (corrupt, truncated or unsupported image: "corrupt
 * JPEG: ...", "corrupt PNG: ...", "corrupt WebP: ..."; libjpeg's warnings count too),
 * SLAB_ERR_NOMEM, SLAB_ERR_INVAL,
 * SLAB_ERR_LIMIT (over the decoder's pixel or scan limit). The decoder stays usable after any
 * failure. */
SLAB_API int slab_image_decode(struct slab_image_decoder *d, const void *jpeg, size_t len,
			       const struct slab_image_spec *spec,
			       const struct slab_image_params *p, void *out,
			       struct slab_image_stats *stats);

/* ---- Video: clips of frames --------------------------------------------------------------- */

/* The video pipeline, the image pipeline's sibling for video fields (MP4, WebM/Matroska, and
 * the other containers and codecs FFmpeg's libavformat and libavcodec read), demuxed from
 * memory (no temporary file): for each sample a clip of `frames` frames, `stride` frames
 * apart (or sampled at `fps` frames a second by their timestamps), starting at a position
 * drawn from (seed, epoch, index), or the centre, each frame cropped with the same crop and
 * flip (the image spec's, drawn once per clip) and resized to out_h x out_w, uint8 RGB.
 * Frame k is the one shown nearest to the time k stride / rate (or k / fps) seconds after
 * the first's, the earlier of two as near: frame first + k stride where the rate (the
 * average, slab_video_info's) is constant. Only what the clip needs is decoded: from the
 * keyframe before its first frame to its last, the frames between sampled ones decoded but
 * never converted. slab_video_params() is a pure
 * function; a decoder is one thread's, as an image decoder is. */
enum slab_video_start {
	SLAB_VIDEO_START_RANDOM = 0,    /* uniform over the starts where the clip fits */
	SLAB_VIDEO_START_CENTER = 1,    /* the clip centred in the video (evaluation) */
	SLAB_VIDEO_START_BEGIN = 2,     /* the first frame */
};

/* The frame rates a spec may ask for: a frame every 11.6 days (so that its period, and the
 * times taken from it, stay finite) to a million a second. */
#define SLAB_VIDEO_MIN_FPS 1e-6
#define SLAB_VIDEO_MAX_FPS 1e6

/* A video with fewer frames than the clip spans. */
enum slab_video_short {
	SLAB_VIDEO_SHORT_PAD = 0,       /* the clip from the first frame, the last frame
					 * repeated to fill it */
	SLAB_VIDEO_SHORT_LOOP = 1,      /* from the first frame, going on from the first frame
					 * again after the last */
	SLAB_VIDEO_SHORT_ERROR = 2,     /* a bad sample (SLAB_ERR_CORRUPT, "... frames: the clip
					 * needs N") */
};

struct slab_video_spec {
	size_t size;                    /* sizeof(struct slab_video_spec), or 0 */
	/* Each frame: out_w x out_h, crop (center, random-resized with its scale and ratio,
	 * or none), flip, 3 channels (RGB; channels 0 or 3), bilinear or nearest. chw here
	 * means the clip is C x T x H x W (planar), else T x H x W x C. */
	struct slab_image_spec image;
	unsigned frames;                /* T, 1 .. 65535 */
	unsigned stride;                /* 1 .. 65535: every stride-th frame, without fps */
	double fps;                     /* SLAB_VIDEO_MIN_FPS .. SLAB_VIDEO_MAX_FPS: frames 1/fps
					 * seconds apart by their timestamps (stride
					 * unused); 0: by stride */
	int start;                      /* enum slab_video_start */
	int on_short;                   /* enum slab_video_short */
	unsigned codec_threads;         /* threads inside the codec: 0 or 1 none (the loader's
					 * workers are the parallelism) */
};

/* What a video field holds (the container's and the stream's headers; frames counted by
 * demuxing when neither says, and in an AVI whose packets do not all carry a presentation
 * time, whose header counts the empty chunks of the frames an encoder held back too, as in
 * Xvid's packed B-frames: there the frames a decode gives, and the duration frames / rate). */
struct slab_video_info {
	uint32_t width, height;
	uint64_t frames;                /* video frames in the stream */
	double duration;                /* seconds */
	uint32_t fps_num, fps_den;      /* the average frame rate, fps_num / fps_den */
	char codec[16];                 /* FFmpeg's codec name: "h264", "vp9", "mpeg4", ... */
};

/* Where one clip is: its first frame's number and time, the step between frames, and the
 * crop and flip of all its frames. */
struct slab_video_params {
	uint64_t first;                 /* the frame number of the clip's first frame */
	double t0, step;                /* its time and the time between frames, in seconds
					 * from the stream's first frame */
	struct slab_image_params crop;
};

/* What one clip took. */
struct slab_video_stats {
	uint64_t decoded;               /* frames decoded (sampled or not) */
	uint64_t converted;             /* frames converted to RGB (at most the clip's) */
	uint64_t seeks;                 /* seeks made */
	/* A clip decoded again (libslab(3), SLAB_VIDEO_SKIP; a video whose times are sure only
	 * from its start) counts the frames decoded and the seeks of every pass, the frames
	 * converted of the last. */
};

struct slab_video_decoder;

/* Fill *spec: out_w x out_h, T frames, stride 1, the image spec's defaults (centre crop),
 * random start, short videos padded, no codec threads. */
SLAB_API void slab_video_spec_init(struct slab_video_spec *spec, uint32_t out_w, uint32_t out_h,
				   unsigned frames);

/* A decoder, or NULL when out of memory. free accepts NULL. */
SLAB_API struct slab_video_decoder *slab_video_decoder_new(void);
SLAB_API void slab_video_decoder_free(struct slab_video_decoder *d);
/* Text of the decoder's last failure. */
SLAB_API const char *slab_video_error(const struct slab_video_decoder *d);

/* Bombs: the most pixels a frame may declare (width x height) and the most frames a stream
 * may declare or hold; over either, SLAB_ERR_LIMIT before anything is allocated for it.
 * 0: the defaults (SLAB_IMAGE_MAX_PIXELS, SLAB_VIDEO_MAX_FRAMES). */
#define SLAB_VIDEO_MAX_FRAMES 10000000ull
SLAB_API void slab_video_decoder_limits(struct slab_video_decoder *d, uint64_t max_pixels,
					uint64_t max_frames);

/* 1 when the bytes start as a container the pipeline reads (MP4/MOV, Matroska/WebM, AVI,
 * MPEG-TS of 188-, 192- (M2TS) or 204-byte packets, MPEG-PS, FLV, animated GIF), else 0.
 * Cheap: magic bytes only. */
SLAB_API int slab_video_probe(const void *data, size_t len);

/* The video stream's size, frames, duration, rate and codec. 0, SLAB_ERR_CORRUPT (not a
 * video, no video stream, a stream that cannot be read: "corrupt video: ..."),
 * SLAB_ERR_NOMEM, SLAB_ERR_LIMIT. */
SLAB_API int slab_video_info(struct slab_video_decoder *d, const void *data, size_t len,
			     struct slab_video_info *info);

/* The clip of sample `index` of epoch `epoch` under `seed` in a video described by *info:
 * depends on these arguments only. 0, SLAB_ERR_INVAL (a spec the pipeline refuses, an empty
 * video), SLAB_ERR_CORRUPT (too short under SLAB_VIDEO_SHORT_ERROR). */
SLAB_API int slab_video_params(const struct slab_video_spec *spec,
			       const struct slab_video_info *info, uint64_t seed, uint64_t epoch,
			       uint64_t index, struct slab_video_params *p);

/* Decode the clip p (made for this video by slab_video_params()) into out: exactly
 * frames x out_h x out_w x 3 bytes (T x H x W x C, or C x T x H x W with image.chw); frame n
 * is the one shown n / rate seconds after the first (rate: slab_video_info's average), the
 * n-th a decode from the start gives where the rate is constant. From the keyframe before
 * the clip; a video whose packets do not all carry a presentation time (AVI with B-frames)
 * has its frames numbered as a decode from the start hands them out (an AVI's by the chunk
 * each comes out at, among its chunks with bytes), from a decode of its first frames, then
 * seeks where its AVI index has a keyframe (else from the start). stats may be NULL.
 * 0, SLAB_ERR_CORRUPT ("corrupt video: ..." with FFmpeg's reason; a truncated stream, a
 * frame that does not decode), SLAB_ERR_NOMEM, SLAB_ERR_INVAL, SLAB_ERR_LIMIT. The decoder
 * stays usable after any failure. */
SLAB_API int slab_video_decode(struct slab_video_decoder *d, const void *data, size_t len,
			       const struct slab_video_spec *spec,
			       const struct slab_video_params *p, void *out,
			       struct slab_video_stats *stats);

/* ---- A dataset: several files as one ------------------------------------------------- */

/* Files read as one dataset, numbered in the order given, as the tools and plans number them:
 * a sample is (file, index) or a global index (file 0's samples first). */
struct slab_dataset;

/* A new, empty dataset; NULL only when out of memory. Free with slab_dataset_close(). */
SLAB_API struct slab_dataset *slab_dataset_new(void);
/* Open paths[0 .. n) (n >= 1), each as slab_open() does. On failure nothing stays open and
 * slab_dataset_error() says why, naming the file. A dataset opens once: on one open already,
 * SLAB_ERR_INVAL ("dataset already open") and its files stay as they were. */
SLAB_API int slab_dataset_open(struct slab_dataset *d, const char *const *paths, size_t n);
/* The same with URLs among the paths, reached with these options (NULL: the defaults); the
 * dataset's remote files share one pool of background fetchers. */
SLAB_API int slab_dataset_open_ex(struct slab_dataset *d, const char *const *paths, size_t n,
				  const struct slab_remote_options *o);
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
/* Global index -> (file, index), and back: 0, or SLAB_ERR_RANGE (no text: the dataset is
 * not written). */
SLAB_API int slab_dataset_locate(const struct slab_dataset *d, uint64_t global, size_t *file,
				 uint64_t *index);
SLAB_API int slab_dataset_global(const struct slab_dataset *d, size_t file, uint64_t index,
				 uint64_t *global);
/* The sample with this key, through each file's hash index in file order (the first file
 * holding it wins): 0 and (*file, *index), or SLAB_ERR_NOTFOUND; or the error of file
 * *file's slab_find() (SLAB_ERR_CORRUPT: its key index is damaged; SLAB_ERR_IO), its text
 * in that reader's slab_error(). The dataset's error text is not written, nor, for a key no
 * file has, its readers'. */
SLAB_API int slab_dataset_find(const struct slab_dataset *d, const char *key, size_t key_len,
			       size_t *file, uint64_t *index);

/* A new plan over the dataset in *out: made (slab_plan_make(), what shuffle-plan uses: same
 * parameters, same result), or read from a plan file and checked to belong to these files
 * (slab_plan_read() and slab_plan_match()). Free with slab_plan_free(). On failure the plan's
 * error is the dataset's. */
SLAB_API int slab_dataset_plan_make(struct slab_dataset *d, const struct slab_plan_params *p,
				    uint64_t start, struct slab_plan **out);
/* The same over a subset of its samples, by global index (slab_plan_make_subset()). */
SLAB_API int slab_dataset_plan_make_subset(struct slab_dataset *d, const struct slab_plan_params *p,
					   const uint64_t *subset, size_t n, uint64_t start,
					   struct slab_plan **out);
SLAB_API int slab_dataset_plan_read(struct slab_dataset *d, const char *path,
				    struct slab_plan **out);
/* Entry i of those the plan holds (i < slab_plan_count()) as (file, index): 0, or
 * SLAB_ERR_RANGE (no text: the plan is not written). */
SLAB_API int slab_plan_get(const struct slab_plan *plan, uint64_t i, size_t *file,
			   uint64_t *index);
/* A new walk of a plan of this dataset in *out (slab_follow_new() and slab_follow_open() over
 * the dataset's files): slab_follow_next() hands out each sample in plan order, with
 * read-ahead (and release, or O_DIRECT) as prefetch --plan does. Close it with
 * slab_follow_close() before the dataset. */
SLAB_API int slab_dataset_follow(struct slab_dataset *d, const struct slab_plan *plan,
				 const struct slab_follow_options *o, struct slab_follow **out);
/* The same over several plans of this dataset as consecutive epochs
 * (slab_follow_open_plans()). */
SLAB_API int slab_dataset_follow_plans(struct slab_dataset *d, const struct slab_plan *const *plans,
				       size_t n, const struct slab_follow_options *o,
				       struct slab_follow **out);

/* ---- Loading batches: worker threads, a ring, plan order -------------------------------- */

/*
 * A loader walks a plan of a dataset in batches: batch k is the plan's entries [k*B, (k+1)*B)
 * (B the batch size), filled by worker threads into a ring of preallocated, page-aligned
 * slots and handed out in plan order whatever the number of threads. Raw mode hands out each
 * sample's fields zero-copy: pointers into the files' read-only mappings, valid until the
 * batch is released (the workers have touched their pages, so reading them costs no fault,
 * and with verify checked their CRC32C). A per-sample transform (the hook an image pipeline
 * plugs into) writes a fixed number of bytes per sample into the batch's own output area.
 *
 * Threads: one consumer thread calls slab_loader_next(), slab_loader_release() and the batch
 * accessors (or a lock around each call); the workers, and the read-ahead walker, are the
 * loader's own. slab_loader_close() stops and joins them, at any time: mid-epoch, batches
 * still held (they are freed with it). The dataset and the plan must outlive the loader, and
 * while it is open the caller uses only their read-only calls (slab.h's thread contract).
 */
struct slab_loader;
struct slab_loader_batch;

/* One sample of a batch. */
struct slab_loader_sample {
	uint64_t pos;           /* position in the rank's plan (slab_plan_start() + entry) */
	uint32_t file;          /* file of the dataset */
	uint64_t index;         /* sample index in that file */
	const char *key;        /* into the mapping, NOT NUL-terminated */
	size_t key_len;
};

/* The transform hook: called by a worker for each sample of a batch with the bytes of the
 * options' transform_field (NULL and 0 when the sample lacks it), to write out_size bytes at
 * out (the sample's slot in the batch's output area, 64-byte aligned, not zeroed). 0, or a
 * negative SLAB_ERR_* with a reason in why (why_size bytes, NUL-terminated): the sample's
 * error, under the loader's policy. Called from several threads at once. */
typedef int (*slab_loader_transform_fn)(void *arg, const struct slab_loader_sample *smp,
					const unsigned char *bytes, uint64_t size,
					unsigned char *out, char *why, size_t why_size);

struct slab_loader_options {
	size_t size;            /* sizeof(struct slab_loader_options), or 0 */
	size_t batch;           /* samples per batch, >= 1 */
	unsigned threads;       /* worker threads, 1 ... 1024 (0 is taken as 1) */
	const char *const *fields;      /* the fields wanted, by name, nfields of them; */
	size_t nfields;         /* 0: every field of any file, sorted by name */
	int drop_last;          /* no short last batch: the plan's tail of fewer than batch
				 * entries is not loaded */
	unsigned ring;          /* batches in flight (filling, ready or held), 1 ... 4096;
				 * 0: 2 x threads */
	uint64_t ahead;         /* pages of read-ahead kept ahead of the workers, as prefetch
				 * --plan --ahead does; 0: none (unless release) */
	int release;            /* drop each page from the cache once every batch using it
				 * is released (implies ahead >= 1); closed before the end,
				 * the pages read ahead too */
	int verify;             /* check each wanted field's CRC32C as it is loaded */
	int skip;               /* a sample that fails is left out of its batch and counted
				 * (slab_loader_batch_skipped()), the first such error kept in
				 * slab_loader_error(); 0: it fails its batch. An image the
				 * decoder has no memory for is the sample's failure; any other
				 * running out of memory, or a file that cannot be read (SLAB_ERR_IO),
				 * fails the batch either way */
	slab_loader_transform_fn transform;     /* NULL: none */
	void *transform_arg;
	const char *transform_field;    /* the field it reads: one of the wanted ones */
	size_t out_size;        /* bytes it writes per sample (over SIZE_MAX / 4:
				 * SLAB_ERR_INVAL) */
	/* The image pipeline, run by the workers instead of a transform: each sample's
	 * transform_field (a JPEG, PNG or WebP) cropped, flipped and resized as *image says
	 * (copied at open) into its output, image->out_h x out_w x C bytes, C its channels
	 * (3 for 0; out_size is set so); crop
	 * and flip from (seed, epoch, the sample's global index in the dataset) only, so the
	 * same plan, seed and epoch give the same bytes with any number of threads, and a
	 * plan resumed with --start gives the same tail. A JPEG that does not decode is a bad
	 * sample (fail or skip, as above). NULL: none. */
	const struct slab_image_spec *image;
	uint64_t seed, epoch;
	/* A page cache budget for datasets larger than memory, as slab_follow_options has it:
	 * the read-ahead walker keeps at most `memory` bytes of the dataset cached, choosing by
	 * cache_policy what stays from this plan and the plans of the epochs that follow it,
	 * next_plans[0 .. nnext) (plans of the same dataset, known, not loaded). 0: none. */
	uint64_t memory;
	int cache_policy;       /* enum slab_cache_policy */
	const struct slab_plan *const *next_plans;
	size_t nnext;
	/* The image pipeline's limits (slab_image_decoder_limits()): an image over them is a
	 * bad sample (SLAB_ERR_LIMIT; fail or skip). 0: the defaults. */
	uint64_t max_pixels;
	unsigned max_scans;
	/* Labels as numbers: this field (one of the wanted ones) of each sample parsed by the
	 * workers as an ASCII decimal integer (optional blanks " \t\n\v\f\r" before and after,
	 * an optional sign, digits, within int64), one int64 per sample in the batch's
	 * slab_loader_batch_labels(). A sample that lacks the field, or whose field is anything
	 * else (empty, junk, out of range), is a bad sample (SLAB_ERR_CORRUPT; fail or skip),
	 * its error naming the field and the text: "field 'cls': not an integer: 'abc'". In raw
	 * and image mode alike. NULL: none. */
	const char *label_field;
	/* The local cache budget of a dataset at URLs (slab_follow_options.disk), used as
	 * memory is; not with memory. 0: none. */
	uint64_t disk;
	/* The video pipeline, run by the workers instead of a transform or the image pipeline:
	 * each sample's transform_field (a video) made a clip as *video says (copied at open)
	 * into its output, frames x out_h x out_w x 3 bytes (out_size is set so), with the
	 * clip's start, crop and flip from (seed, epoch, the sample's global index) only. A
	 * video that does not decode is a bad sample. max_pixels limits each frame; NULL: none. */
	const struct slab_video_spec *video;
	uint64_t max_frames;            /* slab_video_decoder_limits(); 0: the default */
};

/* A new loader, not yet open; NULL only when out of memory. Free with slab_loader_close(). */
SLAB_API struct slab_loader *slab_loader_new(void);

/* Load plan (made or read over d: slab_dataset_plan_make(), slab_dataset_plan_read()) in
 * batches: allocates the ring, resolves the fields in every file, starts the threads. 0, or
 * SLAB_ERR_INVAL (options: batch 0, too many threads, a field named twice, a transform field
 * not among the wanted ones; a plan of other files, with slab_plan_match()'s message, the
 * plan's error untouched; a plan entry outside the dataset), SLAB_ERR_NOTFOUND (a field no
 * file has), SLAB_ERR_NOMEM, SLAB_ERR_IO, SLAB_ERR_CORRUPT (with ahead or release the plan's
 * samples are all located first), with the reason in slab_loader_error(). */
SLAB_API int slab_loader_open(struct slab_loader *l, struct slab_dataset *d,
			      const struct slab_plan *plan, const struct slab_loader_options *o);

/* Batches the epoch has: ceil(entries / batch), or floor with drop_last. */
SLAB_API uint64_t slab_loader_batches(const struct slab_loader *l);
/* The wanted fields, numbered as slab_loader_batch_field() numbers them. */
SLAB_API unsigned slab_loader_field_count(const struct slab_loader *l);
SLAB_API const char *slab_loader_field_name(const struct slab_loader *l, unsigned f);

/* The next batch in plan order, waiting until a worker has filled it: 1 and *b, 0 after the
 * last one, or a negative error. A sample that failed fails its batch (unless skip): the
 * error, naming the file, the sample and its key (an image's or a video's, the field too), is in
 * slab_loader_error(), and every later call returns it again. With skip, a batch whose every
 * sample was skipped is not handed out (its samples count in slab_loader_skipped()), so an
 * epoch may have fewer batches than slab_loader_batches(). SLAB_ERR_IO when a file could not be read through its mapping (it
 * was truncated while in use, or the device failed): the workers read under a SIGBUS guard
 * (the loader installs a SIGBUS handler at open, chaining the one in place, and puts it back
 * in front before each batch if another has taken its place since), the error names
 * the file and the offset, and no batch is handed out after it, since batches filled before
 * may point into pages that are gone. A batch's raw fields are read by the caller, outside
 * the guard: a file truncated after its batch was handed out still faults there.
 * SLAB_ERR_INVAL without waiting when the consumer holds every slot of the ring (waiting
 * would never end): release a batch first; after slab_loader_stop(); or in a fork() child
 * of the process that opened the loader (the child has none of its threads: open a new
 * loader there; slab_loader_close() in the child frees the memory only). */
SLAB_API int slab_loader_next(struct slab_loader *l, struct slab_loader_batch **b);

/* slab_loader_next() waiting ms milliseconds at most: SLAB_LOADER_WAITING when no batch was
 * ready by then (call again; nothing is lost). For a consumer that must act between waits, as
 * a Python binding delivering a Ctrl-C does while a batch is slow to come (a URL's fetch
 * stalled, retried up to its --timeout). */
#define SLAB_LOADER_WAITING 2
SLAB_API int slab_loader_next_timed(struct slab_loader *l, struct slab_loader_batch **b,
				    unsigned ms);

/* Give a batch's slot back to the ring, in any order; its pointers are not to be used after.
 * A batch not handed out (or released already) is ignored. */
SLAB_API void slab_loader_release(struct slab_loader *l, struct slab_loader_batch *b);

/* Samples skipped in the batches handed out so far (skip). */
SLAB_API uint64_t slab_loader_skipped(const struct slab_loader *l);
/* The error of the last failed call, or with skip the first skipped sample's ("" when
 * none). */
SLAB_API const char *slab_loader_error(const struct slab_loader *l);
/* Stops and joins the threads at once (a worker in the middle of a batch stops after the
 * sample in hand) and frees what only they use (the read-ahead walk and its file
 * descriptors, the workers' decoders); batches handed out stay readable (their samples,
 * fields and output) until slab_loader_close(). slab_loader_next() then fails with "loader
 * closed". For bindings whose batches may outlive the loader's use. */
SLAB_API void slab_loader_stop(struct slab_loader *l);
/* Stops and joins the threads, frees the ring (batches held too); accepts NULL. Does not
 * close the dataset or free the plan. */
SLAB_API void slab_loader_close(struct slab_loader *l);

/* Batch k of the epoch (its number), its samples (batch entries less those skipped) and
 * those skipped. */
SLAB_API uint64_t slab_loader_batch_number(const struct slab_loader_batch *b);
SLAB_API size_t slab_loader_batch_count(const struct slab_loader_batch *b);
SLAB_API size_t slab_loader_batch_skipped(const struct slab_loader_batch *b);
/* Sample j (< count): 0 and *out, or SLAB_ERR_RANGE. */
SLAB_API int slab_loader_batch_sample(const struct slab_loader_batch *b, size_t j,
				      struct slab_loader_sample *out);
/* Wanted field f of sample j: 1 and its bytes (into the mapping) and size, 0 (NULL, 0) when
 * the sample lacks it, or SLAB_ERR_RANGE. */
SLAB_API int slab_loader_batch_field(const struct slab_loader_batch *b, size_t j, unsigned f,
				     const unsigned char **data, uint64_t *size);
/* Sample j's out_size bytes of transform output; NULL without a transform or past count.
 * With the image pipeline the images are back to back (no padding between them), so
 * slab_loader_batch_out(b, 0) is one count x H x W x C array (count x C x H x W with chw);
 * with the video pipeline the clips, count x T x H x W x 3 (count x 3 x T x H x W). */
SLAB_API unsigned char *slab_loader_batch_out(const struct slab_loader_batch *b, size_t j);
/* With label_field: the batch's count labels, one int64 per sample in sample order, in the
 * ring's memory (page aligned, valid until the batch is released); NULL without labels. */
SLAB_API const int64_t *slab_loader_batch_labels(const struct slab_loader_batch *b);

/* The whole batch at once, for bindings that would pay per call: its count samples as one
 * array (valid until the batch is released), and wanted field f of every sample, data[j] and
 * size[j] for j < count (NULL and 0 where a sample lacks it): 0, or SLAB_ERR_RANGE. */
SLAB_API const struct slab_loader_sample *slab_loader_batch_samples(const struct slab_loader_batch *b);
SLAB_API int slab_loader_batch_column(const struct slab_loader_batch *b, unsigned f,
				      const unsigned char **data, uint64_t *size);

/* What the batches handed out so far held. */
struct slab_loader_stats {
	size_t size;            /* sizeof(struct slab_loader_stats), or 0 */
	uint64_t batches;       /* handed out by slab_loader_next() */
	uint64_t samples;       /* in them */
	uint64_t skipped;       /* left out of them (skip) */
	uint64_t bytes;         /* bytes of the wanted fields of those samples */
	/* The image pipeline: images made; how many were decoded at each DCT scale, full size
	 * (scaled[0]), 1/2, 1/4 and 1/8 (scaled[3]); how many decoded only the crop's region
	 * (columns cropped, rows skipped or the tail left unread); and the pixels libjpeg
	 * produced for them all. */
	uint64_t images;
	uint64_t scaled[4];
	uint64_t region;
	uint64_t decoded_pixels;
	/* The video pipeline: clips made, frames decoded for them (sampled or not) and frames
	 * converted (sampled). */
	uint64_t clips;
	uint64_t video_decoded;
	uint64_t video_converted;
};

/* Fill *st (its size says how much; 0: the first version). Any time while open. */
SLAB_API void slab_loader_stats(struct slab_loader *l, struct slab_loader_stats *st);

#ifdef __cplusplus
}
#endif

#endif
