/* remote.h: a .slab at a URL, mirrored into a sparse local file at the same offsets, page
 * group by page group, so that the reader's mmap path reads it as it reads a local file.
 *
 * The cache of one object is three files under the cache folder: the data (sparse, the
 * object's size), a state file (a header naming the object, its size and ETag, then one
 * byte per .slab page: 1 when the page is there and checked) and a lock file. A page group
 * is the pages the samples on them span together (one page, or the pages of a sample larger
 * than a page and of those sharing its last page): the unit fetched and checked, since a
 * field's CRC-32C can be checked only when all its bytes are there. A group is marked present
 * only after its bytes arrived whole, every field in them matched its CRC-32C and every byte
 * between fields was zero; until then nothing reads it. Processes sharing the cache take an
 * open-file-description lock on a group's state bytes while they fetch it, so a group is
 * fetched once per node; threads of one process wait for each other in memory. A killed
 * fetch leaves its group absent: the next reader fetches it again. */
#ifndef SLAB_REMOTE_H
#define SLAB_REMOTE_H

#include "slab.h"
#include "error.h"

#include <stdint.h>

struct slab_remote;
struct slab_fetcher;

/* Resolve url, open (or make) its cache, and fetch and check the header, the table and the
 * trailer into it unless they are there for the same object (URL, size and ETag) already; a
 * cache of another version of the object is discarded first (renamed away: a process still
 * reading it keeps its files), and so is the cache whatever it holds when fresh is set.
 * *data_path: the local file to map (owned by the handle). 0, or an error with *err naming
 * the URL. */
int slab_remote_open(struct slab_remote **out, const char *url,
		     const struct slab_remote_options *o, int fresh, const char **data_path,
		     struct slab_err *err);

/* Did this open fetch the header, the table and the trailer (1), or find them in the cache
 * (0)? */
int slab_remote_fetched_meta(const struct slab_remote *r);

/* Learn the page groups from the opened reader's table (s maps data_path). 0 or
 * SLAB_ERR_NOMEM. */
int slab_remote_bind(struct slab_remote *r, struct slab *s, struct slab_err *err);

/* Make bytes [off, off + len) of the object present in the cache, fetching the groups that
 * are not (in this thread, waiting for any other thread or process fetching them). 0 or an
 * error with *err naming the URL and the byte range. Thread safe. */
int slab_remote_ensure(struct slab_remote *r, uint64_t off, uint64_t len, struct slab_err *err);

/* Ask the background fetchers for the groups of [off, off + len) that are not present, in
 * the order asked. Returns at once; a failure shows when the bytes are ensured. */
void slab_remote_want(struct slab_remote *r, uint64_t off, uint64_t len);

/* Is every page of [off, off + len) present? */
int slab_remote_cached(const struct slab_remote *r, uint64_t off, uint64_t len);

/* Drop the whole pages in [off, off + len) from the cache (state first, then the bytes, with
 * fallocate(PUNCH_HOLE)): 0 or an error. evict: refused (SLAB_ERR_IO, nothing dropped) while
 * another process has the object open, which would read the holes as its bytes; else (a
 * budget's own drops: its caveat in prefetch(1)) dropped whoever reads them. */
int slab_remote_drop(struct slab_remote *r, uint64_t off, uint64_t len, int evict,
		     struct slab_err *err);

/* The page group of a page of the data: pages [*first, *end). */
void slab_remote_group(const struct slab_remote *r, uint64_t page, uint64_t *first,
		       uint64_t *end);

/* Share the background fetchers of another remote (of the same dataset), so a dataset of
 * many files has one pool of connections' worth of threads, not one per file. */
void slab_remote_share_fetcher(struct slab_remote *r, const struct slab_remote *from);

void slab_remote_stats_of(const struct slab_remote *r, struct slab_remote_stats *st);
/* The local data file. */
const char *slab_remote_local(const struct slab_remote *r);

/* The transport's configuration for these options (retries and connections as they are
 * documented in slab.h, made the transport's). */
struct slab_net_config;
void slab_remote_net_config(const struct slab_remote_options *o, struct slab_net_config *c);

/* Accepts NULL: stops this handle's background work, unmaps and closes. */
/* slab_net_cancel() of the object's reads (the background fetchers' too). Any thread. */
void slab_remote_cancel(struct slab_remote *r, int on);

void slab_remote_close(struct slab_remote *r);

#endif
