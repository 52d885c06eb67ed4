/* reader.h: what the library's own code asks of an open reader beyond slab.h. */
#ifndef SLAB_READER_H
#define SLAB_READER_H

#include <stdint.h>

struct slab;

/* Is the file a reader mapped (slab_open()) shorter now than its mapping: truncated in place
 * while in use, so that some of the mapping's pages are gone? 1 and its size now in *now;
 * 0 when it is not, when the path names another file now (replaced by a rename: the mapping
 * is intact), or for a reader of memory. One stat(2) of the path. */
int slab_shrunk(const struct slab *s, uint64_t *now);

struct slab_err;

/* slab_open() of the local file at path, its messages naming it as name (a URL's cache
 * file under the URL). */
int slab_open_named(struct slab *s, const char *path, const char *name);

/* After a fault at addr reading the mapping of one of files[0 .. n): the error in *e naming
 * the file (slab_fault_fail(): truncated while in use, or an I/O error), or a general one
 * when addr is in none of them. Returns SLAB_ERR_IO. */
int slab_fault_files(struct slab *const *files, uint32_t n, const void *addr,
		     struct slab_err *e);

struct slab_dataset;

/* No file of d has a field called name: that error in *e, with the fields the files have
 * ("no file has a field 'jpg' (fields: cls, png)": each name once, in byte order, cut short
 * with "..." where the text would be too long). Returns SLAB_ERR_NOTFOUND. */
int slab_no_field(const struct slab_dataset *d, const char *name, struct slab_err *e);

/* dst (opened with slab_open_mem() over src's mapping) fetches through src's cache, which
 * src keeps: dst must be closed first. */
void slab_share_remote(struct slab *dst, const struct slab *src);
/* dst's background fetches go to src's pool (both URLs' readers of one dataset). */
void slab_share_fetcher(struct slab *dst, const struct slab *src);
/* A URL's reader: its fetches cut off and failing (on), or not (slab_remote_cancel()); every
 * reader sharing its remote with it alike. Nothing for a local file. */
void slab_cancel_fetches(const struct slab *s, int on);

/* Sample i's bytes, [*off, *off + *size), with slab_sample()'s checks and its error, without
 * the rest of the record: for loops over every sample of a file (plans, the cache's page
 * groups), where slab_sample()'s copy of the key costs as much as the loop's own work. */
int slab_sample_span(struct slab *s, uint64_t i, uint64_t *off, uint64_t *size);

/* Is fd open on the file the reader mapped (its device and inode)? 1 for a reader of a
 * buffer (slab_open_mem), which has no file. For what opens the reader's path again (a walk's
 * advice and O_DIRECT reads): the name may have been given another file since, of the same
 * size even. */
int slab_same_file(const struct slab *s, int fd);

/* slab_find() that writes no text for a key that is not there (SLAB_ERR_NOTFOUND alone): the
 * lookup of a const dataset, which many threads may make at once over the same readers. A
 * damaged index or a read that faults is its error with its text, as slab_find() has it. */
int slab_find_quiet(struct slab *s, const char *key, size_t key_len, uint64_t *index);

struct slab_field;

/* Field f of sample i, as slab_get() gave it in *fl: 0 when its bytes have the CRC-32C its
 * record gives; else SLAB_ERR_CORRUPT, the error naming the sample, its key, the field and
 * the offset as slab_verify() does (SLAB_ERR_IO when the bytes cannot be read: the file
 * truncated while in use). What hands a field's bytes on as they are (inspect --get, a tar
 * export) checks them first: a damaged file must not give wrong bytes as if they were the
 * field's. */
int slab_check_field(struct slab *s, uint64_t i, unsigned f, const struct slab_field *fl);

/* The pages fetched together with data page `page` (a URL's page group, remote.h): pages
 * [*first, *end) of the data; [page, page + 1) for a local file. */
void slab_page_group(const struct slab *s, uint64_t page, uint64_t *first, uint64_t *end);
/* slab_uncache() for a local cache budget's own drops (follow.c): not refused while other
 * processes read the object (the budget's caveat, prefetch(1) --disk). */
int slab_uncache_budget(struct slab *s, uint64_t off, uint64_t len);

#endif
