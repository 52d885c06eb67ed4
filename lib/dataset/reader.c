/* reader.c: opens a .slab file read-only through mmap and answers lookups from its table in
 * O(1), never trusting a length or offset from the file before checking it. */
#include "slab.h"
#include "format.h"
#include "crc32c.h"
#include "fault.h"
#include "io.h"
#include "error.h"
#include "errfmt.h"
#include "keyset.h"
#include "reader.h"
#include "remote.h"
#include "net.h"
#include "sized.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct slab {
	char *name;
	struct slab_err err;    /* written only when a call fails */
	const unsigned char *base;
	size_t size;
	int mapped;
	dev_t dev;              /* the mapped file's identity */
	ino_t ino;

	unsigned major, minor;
	uint64_t page_size, data_offset, table_offset, table_size;
	uint64_t nsamples, npages;
	uint32_t nfields;
	const unsigned char *samples, *fields, *keys, *index;
	const unsigned char *videos;    /* the video records (1.3) */
	uint64_t keys_size, buckets, nvideos;
	uint32_t header_crc, table_crc;
	char **names;
	unsigned dot_field;     /* 1 + the id of a field named ".", or 0 (slab_member_dotdot) */
	char options[SLAB_HEADER_SIZE];
	uint64_t verify_key_steps;      /* hash table work of the last slab_verify */
	/* A URL's reader: the bytes come through the local cache, fetched before first use.
	 * Readers sharing another's mapping (slab_share_remote) do not own it. */
	struct slab_remote *remote;
	int remote_owned;
};

/* What messages name: the file, once there is one. */
static const char *who(const struct slab *s)
{
	return s->name ? s->name : "(slab)";
}

/* ret = call, its reads of s's mapping guarded: a fault there (the file truncated while in
 * use, or a device that failed the read) sets ret to the error naming the file, where it
 * would have been SIGBUS. The call holds no lock and allocates nothing that the fault would
 * leave behind; the handler is installed when the reader opens. Inside a guard already (a
 * loader's worker, a plan walk) the call runs under that one, whose error names the file. */
#define GUARDED(s, ret, call)							\
	do {									\
		struct slab_fault g_;						\
		if (slab_fault_guarded()) {					\
			(ret) = (call);						\
		} else if (sigsetjmp(g_.jump, 0)) {				\
			(ret) = slab_fault_files(&(s), 1, g_.addr, &(s)->err);	\
		} else {							\
			slab_fault_begin(&g_);					\
			(ret) = (call);						\
			slab_fault_end(&g_);					\
		}								\
	} while (0)

struct slab *slab_new(void)
{
	return calloc(1, sizeof(struct slab));
}

const char *slab_error(const struct slab *s)
{
	return s->err.text;
}

int slab_shrunk(const struct slab *s, uint64_t *now)
{
	struct stat st;

	if (!s->mapped || s->remote || stat(s->name, &st) != 0 || st.st_dev != s->dev || st.st_ino != s->ino ||
	    (uint64_t)st.st_size >= s->size)
		return 0;
	*now = (uint64_t)st.st_size;
	return 1;
}

int slab_same_file(const struct slab *s, int fd)
{
	struct stat st;

	if (!s->mapped)
		return 1;
	return fstat(fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

const char *slab_path(const struct slab *s)
{
	return who(s);
}

/* Is [off, off + len) inside [lo, hi)? Without overflow. */
static int inside(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
	return off >= lo && off <= hi && len <= hi - off;
}

static int parse(struct slab *s)
{
	const unsigned char *h = s->base, *t, *tr;
	uint64_t size = s->size, file_size, off, n, schema_off, schema_size;
	uint32_t crc;
	unsigned char hdr[SLAB_HEADER_SIZE];

	if (size < 8 || memcmp(h, SLAB_MAGIC, 8) != 0)
		return slab_fail(&s->err, SLAB_ERR_FORMAT, who(s), "not a slab file (bad magic number)");
	if (size < SLAB_HEADER_SIZE + SLAB_TRAILER_SIZE)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "truncated: %llu bytes, shorter than header and trailer",
			    (unsigned long long)size);
	s->major = slab_le16(h + 8);
	s->minor = slab_le16(h + 10);
	if (s->major != SLAB_FORMAT_MAJOR)
		return slab_fail(&s->err, SLAB_ERR_FORMAT, who(s), "format version %u.%u is not supported (this reader reads %u.x)",
			    s->major, s->minor, SLAB_FORMAT_MAJOR);
	memcpy(hdr, h, sizeof(hdr));
	memset(hdr + 36, 0, 4);
	crc = slab_crc32c(0, hdr, sizeof(hdr));
	if (crc != slab_le32(h + 36))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "header checksum mismatch at offset 0");
	if (slab_le32(h + 12) != SLAB_HEADER_SIZE)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "header size %u is not %u", slab_le32(h + 12),
			    SLAB_HEADER_SIZE);
	s->page_size = slab_le64(h + 16);
	s->data_offset = slab_le64(h + 24);
	if (s->page_size < SLAB_MIN_PAGE_SIZE || s->page_size > SLAB_MAX_PAGE_SIZE ||
	    (s->page_size & (s->page_size - 1)))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "bad page size %llu in header",
			    (unsigned long long)s->page_size);
	if (s->data_offset < SLAB_HEADER_SIZE || s->data_offset % SLAB_ALIGN ||
	    s->data_offset > size - SLAB_TRAILER_SIZE)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "bad data offset %llu in header",
			    (unsigned long long)s->data_offset);
	/* The options text ends at a NUL inside the header: at most 4031 bytes of text. */
	if (!memchr(h + SLAB_OPTIONS_OFFSET, '\0', SLAB_HEADER_SIZE - SLAB_OPTIONS_OFFSET))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "options text in the header has no NUL terminator");
	memcpy(s->options, h + SLAB_OPTIONS_OFFSET, SLAB_HEADER_SIZE - SLAB_OPTIONS_OFFSET);
	s->options[SLAB_HEADER_SIZE - SLAB_OPTIONS_OFFSET] = '\0';

	tr = h + size - SLAB_TRAILER_SIZE;
	if (memcmp(tr, SLAB_TRAILER_MAGIC, 8) != 0)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "truncated or damaged: no trailer at offset %llu",
			    (unsigned long long)(size - SLAB_TRAILER_SIZE));
	if (slab_crc32c(0, tr, 60) != slab_le32(tr + 60))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "trailer checksum mismatch at offset %llu",
			    (unsigned long long)(size - SLAB_TRAILER_SIZE));
	file_size = slab_le64(tr + 24);
	if (file_size != size)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "file is %llu bytes but its trailer says %llu (truncated or appended to)",
			    (unsigned long long)size, (unsigned long long)file_size);
	if (slab_le32(tr + 44) != crc)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "trailer does not belong to this header");
	s->table_offset = slab_le64(tr + 8);
	s->table_size = slab_le64(tr + 16);
	if (s->table_offset % SLAB_ALIGN || s->table_offset < s->data_offset ||
	    !inside(s->table_offset, s->table_size, 0, size - SLAB_TRAILER_SIZE) ||
	    s->table_offset + s->table_size != size - SLAB_TRAILER_SIZE ||
	    s->table_size < SLAB_TABLE_HEADER_SIZE)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "table offset %llu and size %llu do not fit the file",
			    (unsigned long long)s->table_offset, (unsigned long long)s->table_size);
	t = h + s->table_offset;
	if (s->mapped) {
		uintptr_t a = (uintptr_t)t & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
		madvise((void *)a, (size_t)((uintptr_t)t + s->table_size - a), MADV_SEQUENTIAL);
	}
	s->header_crc = crc;
	s->table_crc = slab_le32(tr + 40);
	if (slab_crc32c(0, t, (size_t)s->table_size) != s->table_crc)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "table checksum mismatch (table at offset %llu)",
			    (unsigned long long)s->table_offset);
	if (memcmp(t, SLAB_TABLE_MAGIC, 8) != 0)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "bad table magic at offset %llu",
			    (unsigned long long)s->table_offset);

	s->nsamples = slab_le64(t + 8);
	s->npages = slab_le64(t + 16);
	s->nfields = slab_le32(t + 24);
	if (s->nsamples != slab_le64(tr + 32))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "trailer and table disagree on the sample count");
	n = s->table_size;
	schema_off = slab_le64(t + 32);
	schema_size = slab_le64(t + 40);
	if (!inside(schema_off, schema_size, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema outside the table");
	off = slab_le64(t + 48);
	if (s->nsamples > n / SLAB_SAMPLE_RECORD || !inside(off, s->nsamples * SLAB_SAMPLE_RECORD, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample records outside the table");
	s->samples = t + off;
	off = slab_le64(t + 56);
	if (s->nfields && s->nsamples > n / SLAB_FIELD_RECORD / s->nfields)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "field records outside the table");
	if (!inside(off, s->nsamples * s->nfields * SLAB_FIELD_RECORD, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "field records outside the table");
	s->fields = t + off;
	off = slab_le64(t + 64);
	s->keys_size = slab_le64(t + 72);
	if (!inside(off, s->keys_size, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "keys outside the table");
	s->keys = t + off;
	off = slab_le64(t + 80);
	s->buckets = slab_le64(t + 88);
	if (s->buckets < 2 || (s->buckets & (s->buckets - 1)) || s->buckets / 2 < s->nsamples ||
	    s->buckets > n / 8 || !inside(off, s->buckets * 8, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "key index outside the table");
	s->index = t + off;
	/* 1.3's video records; zeros (none) before. */
	off = slab_le64(t + 96);
	s->nvideos = slab_le64(t + 104);
	if (s->nvideos > n / SLAB_VIDEO_RECORD || !inside(off, s->nvideos * SLAB_VIDEO_RECORD, 0, n))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "video records outside the table");
	s->videos = t + off;
	if (s->npages > (size - s->data_offset) / s->page_size + 1)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "page count %llu does not fit the file",
			    (unsigned long long)s->npages);

	/* The schema: F names, each a u16 length and the bytes. */
	if (s->nfields > schema_size / 2)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema too short for %u %s", s->nfields,
				 slab_plural(s->nfields, "field", "fields"));
	s->names = calloc(s->nfields ? s->nfields : 1, sizeof(*s->names));
	if (!s->names)
		return slab_fail(&s->err, SLAB_ERR_NOMEM, who(s), "out of memory");
	off = 0;
	for (uint32_t f = 0; f < s->nfields; f++) {
		const unsigned char *p = t + schema_off + off;
		uint16_t len;
		if (schema_size - off < 2)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema truncated at field %u", f);
		len = slab_le16(p);
		if (schema_size - off - 2 < len)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema truncated at field %u", f);
		s->names[f] = malloc((size_t)len + 1);
		if (!s->names[f])
			return slab_fail(&s->err, SLAB_ERR_NOMEM, who(s), "out of memory");
		memcpy(s->names[f], p + 2, len);
		s->names[f][len] = '\0';
		/* Sorted and unique: lookups and the field ids depend on it. */
		if (len == 0 || memchr(s->names[f], '\0', len) ||
		    (f > 0 && strcmp(s->names[f - 1], s->names[f]) >= 0))
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema field %u is empty, out of order or repeated", f);
		/* A '/' would make KEY.FIELD on export a path into a folder of its own. */
		if (memchr(s->names[f], '/', len))
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "schema field %u has a '/' in its name", f);
		if (len == 1 && s->names[f][0] == '.')
			s->dot_field = f + 1;
		off += 2 + (uint64_t)len;
	}
	return 0;
}

/* parse(), its reads guarded: the file truncated while it is opened (the table's checksum
 * reads all of it) is an error naming it, not SIGBUS. What parse() leaves half made (field
 * names) slab_close() frees. Installs the SIGBUS handler every later guard relies on. */
static int parse_guarded(struct slab *s)
{
	int ret;

	if ((ret = slab_fault_setup(&s->err)) < 0)
		return ret;
	GUARDED(s, ret, parse(s));
	return ret;
}

/* What an open reader holds: its remote, its mapping, its field names. */
static void release(struct slab *s)
{
	/* The remote first: its background fetchers check what they fetch against the
	 * table in this mapping, and must be done before it goes. */
	if (s->remote_owned)
		slab_remote_close(s->remote);
	if (s->mapped)
		munmap((void *)s->base, s->size);
	if (s->names)
		for (uint32_t f = 0; f < s->nfields; f++)
			free(s->names[f]);
	free(s->names);
}

/* A failed open leaves the reader as slab_new() made it but for its name and its error:
 * no later call reads what the checks stopped at (a count, a table, field names half
 * made), and it may be opened again. Returns ret. */
static int unopen(struct slab *s, int ret)
{
	struct slab_err err = s->err;
	char *name = s->name;

	release(s);
	memset(s, 0, sizeof(*s));
	s->err = err;
	s->name = name;
	return ret;
}

int slab_open_mem(struct slab *s, const void *buf, size_t len, const char *name)
{
	int ret;

	if (s->base)
		return slab_fail(&s->err, SLAB_ERR_INVAL, who(s), "already open");
	free(s->name);
	s->name = strdup(name ? name : "(memory)");
	if (!s->name) {
		return slab_fail(&s->err, SLAB_ERR_NOMEM, name ? name : "(memory)", "out of memory");
	}
	s->base = buf;
	s->size = len;
	/* The memory may be a file's mapping (Python's SlabFile maps the file it names): its
	 * reads are guarded as a mapped file's are. */
	ret = parse_guarded(s);
	return ret < 0 ? unopen(s, ret) : 0;
}

/* Map the local file path and check it; messages name s->name. */
static int map_open(struct slab *s, const char *path)
{
	struct stat st;
	void *p;
	int fd, ret;

	fd = slab_open_read(path, &st);
	if (fd < 0)
		return slab_fail(&s->err, SLAB_ERR_IO, who(s), "%s", strerror(errno));
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return slab_fail(&s->err, SLAB_ERR_IO, who(s), "not a regular file (a .slab is read through mmap)");
	}
	if (st.st_size < 8) {
		close(fd);
		return slab_fail(&s->err, SLAB_ERR_FORMAT, who(s), "not a slab file (%lld %s)", (long long)st.st_size,
				 slab_plural((uint64_t)st.st_size, "byte", "bytes"));
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return slab_fail(&s->err, SLAB_ERR_IO, who(s), "file too large to map");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return slab_fail(&s->err, SLAB_ERR_IO, who(s), "mmap: %s", strerror(errno));
	s->base = p;
	s->size = (size_t)st.st_size;
	s->mapped = 1;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	/* Opening reads the header, the trailer and the table: without this, read-around on
	 * those faults would pull megabytes of sample data into the page cache, and a cache
	 * just evicted by prefetch would not be cold any more. parse() asks for the table to be
	 * read ahead; afterwards the mapping goes back to normal. */
	madvise(p, s->size, MADV_RANDOM);
	ret = parse_guarded(s);
	madvise(p, s->size, MADV_NORMAL);
	return ret;
}

static int fetch(struct slab *s, uint64_t off, uint64_t len);

/* The first versions of struct slab_remote_options and slab_remote_stats: all of them so
 * far. */
#define REMOTE_OPTIONS_FIRST SLAB_SIZED_END(struct slab_remote_options, log_arg)
#define REMOTE_STATS_FIRST SLAB_SIZED_END(struct slab_remote_stats, retries)

int slab_is_url(const char *name)
{
	return slab_net_is_url(name);
}

/* The name messages give s, before it opens. */
static int set_name(struct slab *s, const char *name)
{
	if (s->base)
		return slab_fail(&s->err, SLAB_ERR_INVAL, who(s), "already open");
	free(s->name);
	s->name = strdup(name);
	if (!s->name)
		return slab_fail(&s->err, SLAB_ERR_NOMEM, name, "out of memory");
	return 0;
}

int slab_open_named(struct slab *s, const char *path, const char *name)
{
	int ret = set_name(s, name);

	if (ret < 0)
		return ret;
	ret = map_open(s, path);
	return ret < 0 ? unopen(s, ret) : 0;
}

static int remote_options_size(struct slab *s, const struct slab_remote_options *o)
{
	return slab_fail(&s->err, SLAB_ERR_INVAL, who(s), "remote options of %zu %s: no such version",
			 o->size, slab_plural(o->size, "byte", "bytes"));
}

int slab_open_ex(struct slab *s, const char *name, const struct slab_remote_options *o)
{
	struct slab_remote_options opt;
	struct slab_err e;
	const char *local;
	char *shown;
	size_t len;
	int ret;

	memset(&opt, 0, sizeof(opt));
	if (!slab_net_is_url(name)) {
		if ((ret = set_name(s, name)) < 0)
			return ret;
		/* Unused for a file, but checked as for a URL: a struct of no version is the
		 * caller's bug, found here rather than the day the path is a URL. */
		if (o && slab_sized_in(&opt, sizeof(opt), o, REMOTE_OPTIONS_FIRST) < 0)
			return remote_options_size(s, o);
		ret = map_open(s, name);
		return ret < 0 ? unopen(s, ret) : 0;
	}
	/* Every message of the reader names a URL as the transport's do: never with the
	 * credential it may carry. Masking adds at most three bytes a query parameter. */
	len = 4 * strlen(name) + 4;
	if (!(shown = malloc(len)))
		return slab_fail(&s->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	slab_net_mask(shown, len, name);
	ret = set_name(s, shown);
	free(shown);
	if (ret < 0)
		return ret;
	if (o && slab_sized_in(&opt, sizeof(opt), o, REMOTE_OPTIONS_FIRST) < 0)
		return remote_options_size(s, o);
	for (int fresh = 0;; fresh = 1) {
		ret = slab_remote_open(&s->remote, name, &opt, fresh, &local, &e);
		if (ret < 0)
			return slab_fail_from(&s->err, ret, e.text);
		s->remote_owned = 1;
		if ((ret = map_open(s, local)) == 0)
			break;
		/* Metadata found in the local cache that fails the checks it passed when it was
		 * fetched was damaged there since (by hand, a disk fault), not on the server:
		 * the cache is made again from the server, once. */
		if (fresh || (ret != SLAB_ERR_CORRUPT && ret != SLAB_ERR_FORMAT) ||
		    slab_remote_fetched_meta(s->remote))
			return unopen(s, ret);
		unopen(s, ret);
	}
	if ((ret = slab_remote_bind(s->remote, s, &e)) < 0)
		return unopen(s, slab_fail_from(&s->err, ret, e.text));
	return 0;
}

int slab_open(struct slab *s, const char *path)
{
	return slab_open_ex(s, path, NULL);
}

const char *slab_local_path(const struct slab *s)
{
	return s->remote ? slab_remote_local(s->remote) : who(s);
}

void slab_page_group(const struct slab *s, uint64_t page, uint64_t *first, uint64_t *end)
{
	if (s->remote) {
		slab_remote_group(s->remote, page, first, end);
	} else {
		*first = page;
		*end = page + 1;
	}
}

void slab_share_remote(struct slab *dst, const struct slab *src)
{
	dst->remote = src->remote;
	dst->remote_owned = 0;
}

void slab_cancel_fetches(const struct slab *s, int on)
{
	slab_remote_cancel(s->remote, on);
}

void slab_share_fetcher(struct slab *dst, const struct slab *src)
{
	if (dst->remote && src->remote)
		slab_remote_share_fetcher(dst->remote, src->remote);
}

int slab_remote_stats(const struct slab *s, struct slab_remote_stats *st)
{
	struct slab_remote_stats full;

	if (!s->remote)
		return 0;
	slab_remote_stats_of(s->remote, &full);
	slab_sized_out(st, &full, sizeof(full), REMOTE_STATS_FIRST);
	return 1;
}

/* len 0: to the end of the file. */
static uint64_t to_end(const struct slab *s, uint64_t off, uint64_t len)
{
	return len ? len : off < s->size ? s->size - off : 0;
}

int slab_fetch(struct slab *s, uint64_t off, uint64_t len)
{
	if (!s->remote)
		return 0;
	len = to_end(s, off, len);
	slab_remote_want(s->remote, off, len);
	return fetch(s, off, len);
}

void slab_fetch_ahead(struct slab *s, uint64_t off, uint64_t len)
{
	if (s->remote)
		slab_remote_want(s->remote, off, to_end(s, off, len));
}

int slab_fetched(const struct slab *s, uint64_t off, uint64_t len)
{
	return s->remote ? slab_remote_cached(s->remote, off, to_end(s, off, len)) : 1;
}

static int uncache(struct slab *s, uint64_t off, uint64_t len, int evict)
{
	struct slab_err e;
	int rc;

	if (!s->remote)
		return 0;
	rc = slab_remote_drop(s->remote, off, to_end(s, off, len), evict, &e);
	return rc < 0 ? slab_fail_from(&s->err, rc, e.text) : 0;
}

int slab_uncache(struct slab *s, uint64_t off, uint64_t len)
{
	return uncache(s, off, len, 1);
}

int slab_uncache_budget(struct slab *s, uint64_t off, uint64_t len)
{
	return uncache(s, off, len, 0);
}

void slab_close(struct slab *s)
{
	if (!s)
		return;
	release(s);
	free(s->name);
	free(s);
}

uint64_t slab_count(const struct slab *s) { return s->nsamples; }
uint64_t slab_page_size(const struct slab *s) { return s->page_size; }
uint64_t slab_page_count(const struct slab *s) { return s->npages; }
uint64_t slab_data_offset(const struct slab *s) { return s->data_offset; }
uint64_t slab_table_offset(const struct slab *s) { return s->table_offset; }
uint64_t slab_file_size(const struct slab *s) { return s->size; }
unsigned slab_format_major(const struct slab *s) { return s->major; }
unsigned slab_format_minor(const struct slab *s) { return s->minor; }
const char *slab_options(const struct slab *s) { return s->options; }
const unsigned char *slab_base(const struct slab *s) { return s->base; }
unsigned slab_field_count(const struct slab *s) { return s->nfields; }

void slab_file_identity(const struct slab *s, struct slab_file_id *id)
{
	id->file_size = s->size;
	id->samples = s->nsamples;
	id->header_crc = s->header_crc;
	id->table_crc = s->table_crc;
}

const char *slab_field_name(const struct slab *s, unsigned f)
{
	return f < s->nfields ? s->names[f] : NULL;
}

int slab_field_lookup(const struct slab *s, const char *name)
{
	for (uint32_t f = 0; f < s->nfields; f++)
		if (strcmp(s->names[f], name) == 0)
			return (int)f;
	return SLAB_ERR_NOTFOUND;
}

static int sample_at(struct slab *s, uint64_t i, struct slab_sample *out)
{
	const unsigned char *r;
	uint64_t key_off, key_len;

	if (i >= s->nsamples)
		return slab_fail(&s->err, SLAB_ERR_RANGE, who(s), "sample #%llu out of range (%llu %s)",
			    (unsigned long long)i, (unsigned long long)s->nsamples,
			    slab_plural(s->nsamples, "sample", "samples"));
	r = s->samples + i * SLAB_SAMPLE_RECORD;
	out->offset = slab_le64(r);
	out->size = slab_le64(r + 8);
	key_off = slab_le64(r + 16);
	key_len = slab_le32(r + 24);
	out->page = slab_le32(r + 28);
	if (!inside(key_off, key_len, 0, s->keys_size))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu: key outside the key area",
			    (unsigned long long)i);
	out->key = (const char *)s->keys + key_off;
	out->key_len = (size_t)key_len;
	/* The key is read where the caller reads it: every page of it once here, under the
	 * guard, so that a key cut off by a truncation is this call's error. */
	for (size_t k = 0; k < out->key_len; k += 4096)
		(void)*(volatile const char *)(out->key + k);
	if (out->key_len)
		(void)*(volatile const char *)(out->key + out->key_len - 1);
	if (!inside(out->offset, out->size, s->data_offset, s->table_offset))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': bytes at offset %llu, size %llu outside the data area",
			    (unsigned long long)i, slab_key_shown(key_len), out->key,
			    (unsigned long long)out->offset, (unsigned long long)out->size);
	return 0;
}

int slab_sample(struct slab *s, uint64_t i, struct slab_sample *out)
{
	int ret;

	GUARDED(s, ret, sample_at(s, i, out));
	return ret;
}

int slab_sample_span(struct slab *s, uint64_t i, uint64_t *off, uint64_t *size)
{
	struct slab_sample smp;
	int rc;

	if (i < s->nsamples) {
		const unsigned char *r = s->samples + i * SLAB_SAMPLE_RECORD;

		*off = slab_le64(r);
		*size = slab_le64(r + 8);
		if (inside(slab_le64(r + 16), slab_le32(r + 24), 0, s->keys_size) &&
		    inside(*off, *size, s->data_offset, s->table_offset))
			return 0;
	}
	/* A bad record: slab_sample() says why. */
	rc = slab_sample(s, i, &smp);
	if (rc == 0) {
		*off = smp.offset;
		*size = smp.size;
	}
	return rc;
}

/* A URL's bytes [off, off + len) into the cache before they are read. */
static int fetch(struct slab *s, uint64_t off, uint64_t len)
{
	struct slab_err e;
	int rc = slab_remote_ensure(s->remote, off, len, &e);

	return rc < 0 ? slab_fail_from(&s->err, rc, e.text) : 0;
}

static int get_record(struct slab *s, uint64_t i, unsigned f, struct slab_field *out)
{
	const unsigned char *r;

	if (i >= s->nsamples)
		return slab_fail(&s->err, SLAB_ERR_RANGE, who(s), "sample #%llu out of range (%llu %s)",
			    (unsigned long long)i, (unsigned long long)s->nsamples,
			    slab_plural(s->nsamples, "sample", "samples"));
	if (f >= s->nfields)
		return slab_fail(&s->err, SLAB_ERR_RANGE, who(s), "field %u out of range (%u %s)", f, s->nfields,
				 slab_plural(s->nfields, "field", "fields"));
	r = s->fields + (i * s->nfields + f) * SLAB_FIELD_RECORD;
	if (!(r[24] & SLAB_FIELD_PRESENT))
		return 0;
	out->offset = slab_le64(r);
	out->size = slab_le64(r + 8);
	out->crc = slab_le32(r + 16);
	out->width = slab_le16(r + 20);
	out->height = slab_le16(r + 22);
	out->flags = r[24];
	out->subsamp = r[25];
	out->colorspace = r[26];
	out->order = r[27];
	if (!inside(out->offset, out->size, s->data_offset, s->table_offset))
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu field '%s': offset %llu, size %llu outside the data area",
			    (unsigned long long)i, s->names[f], (unsigned long long)out->offset,
			    (unsigned long long)out->size);
	out->data = s->base + out->offset;
	return 1;
}

int slab_get_record(struct slab *s, uint64_t i, unsigned f, struct slab_field *out)
{
	int ret;

	GUARDED(s, ret, get_record(s, i, f, out));
	return ret;
}

int slab_get(struct slab *s, uint64_t i, unsigned f, struct slab_field *out)
{
	int rc = slab_get_record(s, i, f, out);

	if (rc > 0 && s->remote && out->size && (rc = fetch(s, out->offset, out->size)) == 0)
		rc = 1;
	return rc;
}

static int field_video(struct slab *s, uint64_t i, unsigned f, struct slab_video_info *info)
{
	struct slab_field fl;
	const unsigned char *v;
	uint32_t k;
	int rc = get_record(s, i, f, &fl);

	if (rc <= 0)
		return rc;
	if (!(fl.flags & SLAB_FIELD_VIDEO))
		return 0;
	k = slab_le32(s->fields + (i * s->nfields + f) * SLAB_FIELD_RECORD + 28);
	if (k >= s->nvideos)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu field '%s': video record %u, past the %llu %s",
				 (unsigned long long)i, s->names[f], k, (unsigned long long)s->nvideos,
				 slab_plural(s->nvideos, "record", "records"));
	v = s->videos + (uint64_t)k * SLAB_VIDEO_RECORD;
	memset(info, 0, sizeof(*info));
	info->width = fl.width;
	info->height = fl.height;
	info->duration = (double)slab_le64(v) / 1e6;
	info->frames = slab_le64(v + 8);
	info->fps_num = slab_le32(v + 16);
	info->fps_den = slab_le32(v + 20);
	memcpy(info->codec, v + 24, SLAB_VIDEO_CODEC);
	return 1;
}

int slab_field_video(struct slab *s, uint64_t i, unsigned f, struct slab_video_info *info)
{
	int ret;

	GUARDED(s, ret, field_video(s, i, f, info));
	return ret;
}

/* quiet: a key that is not there is SLAB_ERR_NOTFOUND without a text (a damaged index
 * still writes its reason). */
static int find_key(struct slab *s, const char *key, size_t key_len, uint64_t *index, int quiet)
{
	uint64_t mask = s->buckets - 1, h = slab_key_hash(key, key_len) & mask;

	/* At most every slot once: a damaged index with no empty slot must not loop forever. */
	for (uint64_t probes = 0; probes < s->buckets; probes++, h = (h + 1) & mask) {
		uint64_t v = slab_le64(s->index + h * 8);
		struct slab_sample smp;
		if (!v)
			break;
		if (v > s->nsamples)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "key index slot %llu points past the samples",
				    (unsigned long long)h);
		if (sample_at(s, v - 1, &smp) < 0)
			return SLAB_ERR_CORRUPT;
		if (smp.key_len == key_len && memcmp(smp.key, key, key_len) == 0) {
			*index = v - 1;
			return 0;
		}
	}
	if (quiet)
		return SLAB_ERR_NOTFOUND;
	return slab_fail(&s->err, SLAB_ERR_NOTFOUND, who(s), "no sample with key '%.*s'",
		    slab_key_shown(key_len), key);
}

int slab_find(struct slab *s, const char *key, size_t key_len, uint64_t *index)
{
	int ret;

	GUARDED(s, ret, find_key(s, key, key_len, index, 0));
	return ret;
}

int slab_find_quiet(struct slab *s, const char *key, size_t key_len, uint64_t *index)
{
	int ret;

	GUARDED(s, ret, find_key(s, key, key_len, index, 1));
	return ret;
}

int slab_key_safe(const char *key, size_t key_len)
{
	const char *p = key, *end = key + key_len;

	if (key_len && key[0] == '/')
		return 0;
	if (memchr(key, '\0', key_len))
		return 0;
	/* Each component, between slashes: none may be "..". */
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *stop = slash ? slash : end;

		if (stop - p == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p = stop + 1;
	}
	return 1;
}

/* Sample i's key must be safe to export. */
static int check_key(struct slab *s, uint64_t i, const struct slab_sample *smp)
{
	const char *nul = memchr(smp->key, '\0', smp->key_len);
	int kl = slab_key_shown(smp->key_len);

	if (slab_key_safe(smp->key, smp->key_len)) {
		struct slab_field fl;

		/* A safe key, but its field "." would be exported as KEY.. ("x/.."). */
		if (!s->dot_field || !slab_member_dotdot(smp->key, smp->key_len, ".") ||
		    slab_get_record(s, i, s->dot_field - 1, &fl) != 1)
			return 0;
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s),
			    "sample #%llu: key '%.*s' with its field '.' is not a safe member name "
			    "('%.*s..' has a '..' component)", (unsigned long long)i, kl, smp->key,
			    kl, smp->key);
	}
	if (nul)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s),
			    "sample #%llu: key '%.*s' has a NUL byte at position %zu: not a safe member name",
			    (unsigned long long)i, kl, smp->key, (size_t)(nul - smp->key));
	return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s),
		    "sample #%llu: key '%.*s' is not a safe member name (absolute, or with a '..' component)",
		    (unsigned long long)i, kl, smp->key);
}

int slab_fault_files(struct slab *const *files, uint32_t n, const void *addr,
		     struct slab_err *e)
{
	uintptr_t a = (uintptr_t)addr;

	for (uint32_t i = 0; i < n; i++) {
		uintptr_t base = (uintptr_t)files[i]->base;

		if (a >= base && a - base < files[i]->size)
			return slab_fault_fail(e, slab_local_path(files[i]), files[i]->base,
					       files[i]->size, addr);
	}
	return slab_fail(e, SLAB_ERR_IO, NULL, "cannot read a file's mapping (an I/O error, or a "
			 "file was truncated while in use)");
}

int slab_check_key(struct slab *s, uint64_t i)
{
	struct slab_sample smp;
	int r = slab_sample(s, i, &smp);

	return r < 0 ? r : check_key(s, i, &smp);
}

static int check_keys(struct slab *s)
{
	struct slab_sample smp;
	int r = 0;

	for (uint64_t i = 0; i < s->nsamples && r == 0; i++)
		if ((r = sample_at(s, i, &smp)) == 0)
			r = check_key(s, i, &smp);
	return r;
}

int slab_check_keys(struct slab *s)
{
	int ret;

	/* A walk of the whole table, before a stream starts: one guard for all of it. */
	GUARDED(s, ret, check_keys(s));
	return ret;
}

int slab_sample_fields(struct slab *s, uint64_t i, const unsigned char *bytes, unsigned *ids,
		       struct slab_field *fl)
{
	unsigned nf = slab_field_count(s), n = 0;
	struct slab_sample smp;
	int r = slab_sample(s, i, &smp);

	if (r < 0)
		return r;
	/* Whatever writes the sample out names it by its key: never a path outside the
	 * reader's folder. */
	if ((r = check_key(s, i, &smp)) < 0)
		return r;
	for (unsigned f = 0; f < nf; f++) {
		struct slab_field cur;
		unsigned k;

		r = slab_get(s, i, f, &cur);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (bytes) {
			/* The bytes cover the sample only: its fields must lie inside it. */
			if (cur.offset < smp.offset || cur.size > smp.size ||
			    cur.offset - smp.offset > smp.size - cur.size) {
				/* Without the file's name: the bytes came from elsewhere. */
				return slab_fail(&s->err, SLAB_ERR_CORRUPT, NULL,
						 "sample #%llu '%.*s' field '%s': offset %llu, size %llu outside the sample (offset %llu, size %llu)",
						 (unsigned long long)i,
						 slab_key_shown(smp.key_len), smp.key,
						 s->names[f], (unsigned long long)cur.offset,
						 (unsigned long long)cur.size, (unsigned long long)smp.offset,
						 (unsigned long long)smp.size);
			}
			cur.data = bytes + (cur.offset - smp.offset);
		}
		/* Insertion by the position the field had in the input tar (few fields). */
		for (k = n++; k > 0 && fl[k - 1].order > cur.order; k--) {
			fl[k] = fl[k - 1];
			ids[k] = ids[k - 1];
		}
		fl[k] = cur;
		ids[k] = f;
	}
	return (int)n;
}

/* Field f of sample i, whose record and bytes fl holds (slab_get()), has the CRC its record
 * gives. */
static int check_field(struct slab *s, uint64_t i, unsigned f, const struct slab_field *fl)
{
	struct slab_sample smp;
	int r;

	if (slab_crc32c(0, fl->data, (size_t)fl->size) == fl->crc)
		return 0;
	if ((r = sample_at(s, i, &smp)) < 0)
		return r;
	return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s': checksum mismatch (bytes at offset %llu, size %llu)",
			 (unsigned long long)i, slab_key_shown(smp.key_len), smp.key,
			 s->names[f], (unsigned long long)fl->offset, (unsigned long long)fl->size);
}

int slab_check_field(struct slab *s, uint64_t i, unsigned f, const struct slab_field *fl)
{
	int ret;

	if (i >= s->nsamples || f >= s->nfields)
		return slab_fail(&s->err, SLAB_ERR_RANGE, who(s), "sample #%llu field %u out of range",
				 (unsigned long long)i, f);
	GUARDED(s, ret, check_field(s, i, f, fl));
	return ret;
}

/* Bytes in [from, to) must all be zero: padding carries no data, so a flipped bit there is
 * damage too. */
static int check_zero(struct slab *s, uint64_t from, uint64_t to, uint64_t i)
{
	for (uint64_t o = from; o < to; o++)
		if (s->base[o])
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "non-zero padding byte at offset %llu (before sample #%llu)",
				    (unsigned long long)o, (unsigned long long)i);
	return 0;
}

struct span {
	uint64_t off, size;
	unsigned f, order;
	int video;              /* SLAB_FIELD_VIDEO: its record is vindex */
	uint32_t vindex;
};

/* By offset, and at one offset by input order: an empty field shares its offset with the
 * field after it. */
static int by_offset(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sample i's key, for the key set: slab_verify has checked every record by then. */
static const void *record_key(void *ctx, uint64_t i, size_t *len)
{
	const struct slab *s = ctx;
	const unsigned char *r = s->samples + i * SLAB_SAMPLE_RECORD;

	*len = slab_le32(r + 24);
	return s->keys + slab_le64(r + 16);
}

/* What slab_find needs of the key index, checked in time linear in its size whatever the keys
 * (a slab_find per sample walks a whole cluster each time: quadratic on keys that share a home
 * slot). Every sample's record has been checked; seen holds a bit per sample, all zero, and ks is
 * empty, made for them. */
static int verify_key_index(struct slab *s, unsigned char *seen, struct slab_keyset *ks)
{
	uint64_t B = s->buckets, mask = B - 1, N = s->nsamples, used = 0, empty = B;
	int ret = SLAB_ERR_CORRUPT;

	/* Every slot in use names a sample, and every sample is named once. */
	for (uint64_t h = 0; h < B; h++) {
		uint64_t v = slab_le64(s->index + h * 8);
		if (!v) {
			if (empty == B)
				empty = h;
			continue;
		}
		if (v > N) {
			slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "key index slot %llu points past the samples",
			     (unsigned long long)h);
			goto out;
		}
		seen[(v - 1) / 8] |= (unsigned char)(1u << ((v - 1) % 8));
		used++;
	}
	for (uint64_t i = 0; i < N; i++)
		if (!(seen[i / 8] & (1u << (i % 8)))) {
			size_t len;
			const char *key = record_key(s, i, &len);
			slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': key index does not lead to it",
			     (unsigned long long)i, slab_key_shown(len), key);
			goto out;
		}
	if (used != N) {
		slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "key index has %llu %s for %llu %s",
		     (unsigned long long)used, slab_plural(used, "entry", "entries"),
		     (unsigned long long)N, slab_plural(N, "sample", "samples"));
		goto out;
	}

	/* Keys are unique, or a lookup would find the first of two. */
	for (uint64_t i = 0; i < N; i++) {
		size_t len;
		const char *key = record_key(s, i, &len);
		uint64_t hash = slab_keyset_hash(ks, key, len);
		uint64_t first = slab_keyset_find(ks, hash, key, len);
		if (first != SLAB_KEYSET_NONE) {
			slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': same key as sample #%llu",
			     (unsigned long long)i, slab_key_shown(len), key,
			     (unsigned long long)first);
			goto out;
		}
		if (slab_keyset_add(ks, hash, i) < 0) {
			ret = slab_fail(&s->err, SLAB_ERR_NOMEM, who(s), "out of memory");
			goto out;
		}
	}

	/* A lookup probes from the key's home slot to the first empty slot, so it finds the
	 * sample in slot h when no empty slot lies between home and h. B >= 2N leaves a slot
	 * empty: walk once round from the one after it, a run of filled slots at a time, with t
	 * counting slots from there; a home must lie in the run before its slot. */
	if (empty == B) {
		slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "key index has no empty slot");
		goto out;
	}
	for (uint64_t t = 0, run = 0; t < B; t++) {
		uint64_t h = (empty + 1 + t) & mask, v = slab_le64(s->index + h * 8), home;
		const char *key;
		size_t len;

		ks->steps++;
		if (!v) {
			run = t + 1;
			continue;
		}
		key = record_key(s, v - 1, &len);
		home = (slab_key_hash(key, len) - (empty + 1)) & mask;
		if (home < run || home > t) {
			slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': key index does not lead to it",
			     (unsigned long long)(v - 1), slab_key_shown(len), key);
			goto out;
		}
	}
	ret = 0;
out:
	return ret;
}

uint64_t slab_verify_key_steps(const struct slab *s)
{
	return __atomic_load_n(&s->verify_key_steps, __ATOMIC_RELAXED);
}

/* What slab_verify carries from one sample to the next, and what it allocates: on the heap,
 * so that its fields are whole after a fault (the guarded calls change them). */
struct verify {
	uint64_t pos;           /* the end of the last sample: the gap to the next is padding */
	uint64_t min_next;      /* where the next sample may start (a large one's pages) */
	uint64_t pages_used;
	uint64_t next_video;    /* the video record the next video field must name */
	struct span *spans;     /* a sample's fields, nfields of them */
	unsigned char *seen;    /* verify_key_index's */
	struct slab_keyset ks;
};

/* The checks of sample i, whose bytes and the gap before them are present. */
static int verify_sample(struct slab *s, uint64_t i, const struct slab_sample *smp, struct verify *v)
{
	uint64_t ps = s->page_size, rel, end;
	struct span *spans = v->spans;
	struct slab_field fl;
	unsigned n = 0;
	int kl = slab_key_shown(smp->key_len);

	if (smp->offset < v->min_next)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' at offset %llu overlaps the sample before it or its pages",
				 (unsigned long long)i, kl, smp->key, (unsigned long long)smp->offset);
	rel = smp->offset - s->data_offset;
	if (smp->page != rel / ps)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': page %llu recorded, offset %llu is in page %llu",
				 (unsigned long long)i, kl, smp->key, (unsigned long long)smp->page,
				 (unsigned long long)smp->offset, (unsigned long long)(rel / ps));
	if (smp->size > ps ? rel % ps != 0 : rel % ps + smp->size > ps)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' at offset %llu, size %llu breaks the page rule",
				 (unsigned long long)i, kl, smp->key, (unsigned long long)smp->offset,
				 (unsigned long long)smp->size);
	if (check_zero(s, v->pos, smp->offset, i) < 0)
		return SLAB_ERR_CORRUPT;

	for (unsigned f = 0; f < s->nfields; f++) {
		int r = get_record(s, i, f, &fl);
		if (r < 0)
			return r;
		if (r == 0) {
			const unsigned char *rec = s->fields + (i * s->nfields + f) * SLAB_FIELD_RECORD;
			for (unsigned k = 0; k < SLAB_FIELD_RECORD; k++)
				if (rec[k])
					return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': record of absent field '%s' is not zero",
							 (unsigned long long)i, kl, smp->key, s->names[f]);
			continue;
		}
		if ((r = check_field(s, i, f, &fl)) < 0)
			return r;
		spans[n].off = fl.offset;
		spans[n].size = fl.size;
		spans[n].f = f;
		spans[n].order = fl.order;
		spans[n].video = !!(fl.flags & SLAB_FIELD_VIDEO);
		spans[n].vindex = slab_le32(s->fields + (i * s->nfields + f) * SLAB_FIELD_RECORD + 28);
		if (spans[n].video) {
			struct slab_video_info vi;

			if ((r = field_video(s, i, f, &vi)) < 0)
				return r;
		} else if (spans[n].vindex) {
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s': reserved record bytes are not zero",
					 (unsigned long long)i, kl, smp->key, s->names[f]);
		}
		/* At most one of the image flags, and none with VIDEO. */
		{
			unsigned kind = fl.flags & (SLAB_FIELD_IMAGE | SLAB_FIELD_VIDEO);

			if (kind & (kind - 1))
				return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s': flags 0x%02x: more than one of JPEG, PNG, WEBP and VIDEO",
						 (unsigned long long)i, kl, smp->key, s->names[f], fl.flags);
		}
		n++;
	}
	/* The fields tile the sample exactly, back to back. */
	qsort(spans, n, sizeof(*spans), by_offset);
	end = smp->offset;
	for (unsigned k = 0; k < n; k++) {
		if (spans[k].order != k)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s': order byte %u, expected %u",
					 (unsigned long long)i, kl, smp->key, s->names[spans[k].f],
					 spans[k].order, k);
		if (spans[k].off != end)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s' at offset %llu: fields do not tile the sample",
					 (unsigned long long)i, kl, smp->key, s->names[spans[k].f],
					 (unsigned long long)spans[k].off);
		/* The video records, one per video field, in the fields' order. */
		if (spans[k].video && spans[k].vindex != v->next_video++)
			return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s' field '%s': video record %u, expected %llu",
					 (unsigned long long)i, kl, smp->key, s->names[spans[k].f],
					 spans[k].vindex, (unsigned long long)(v->next_video - 1));
		end += spans[k].size;
	}
	if (end != smp->offset + smp->size)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "sample #%llu '%.*s': fields sum to %llu bytes, record says %llu",
				 (unsigned long long)i, kl, smp->key,
				 (unsigned long long)(end - smp->offset), (unsigned long long)smp->size);
	if (check_key(s, i, smp) < 0)
		return SLAB_ERR_CORRUPT;
	v->pos = v->min_next = smp->offset + smp->size;
	/* A large sample takes its pages whole: nothing may follow it in its last page. */
	end = smp->size > ps ? smp->page + (smp->size + ps - 1) / ps : rel / ps + 1;
	if (smp->size > ps)
		v->min_next = s->data_offset + end * ps;
	if (end > v->pages_used)
		v->pages_used = end;
	return 0;
}

/* The checks of what follows the last sample: padding to the table, the counts, the key
 * index. */
static int verify_end(struct slab *s, struct verify *v)
{
	int ret;

	if (check_zero(s, v->pos, s->table_offset, s->nsamples) < 0)
		return SLAB_ERR_CORRUPT;
	if (v->next_video != s->nvideos)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "table has %llu video %s, the fields use %llu",
				 (unsigned long long)s->nvideos, slab_plural(s->nvideos, "record", "records"), (unsigned long long)v->next_video);
	if (v->pages_used != s->npages)
		return slab_fail(&s->err, SLAB_ERR_CORRUPT, who(s), "table says %llu %s, the samples use %llu",
				 (unsigned long long)s->npages, slab_plural(s->npages, "page", "pages"), (unsigned long long)v->pages_used);
	v->seen = calloc((size_t)(s->nsamples / 8 + 1), 1);
	if (!v->seen || slab_keyset_init(&v->ks, s->nsamples, record_key, s) < 0)
		return slab_fail(&s->err, SLAB_ERR_NOMEM, who(s), "out of memory");
	ret = verify_key_index(s, v->seen, &v->ks);
	/* Two threads may verify one file at once: the counter is a plain statistic. */
	__atomic_store_n(&s->verify_key_steps, v->ks.steps, __ATOMIC_RELAXED);
	return ret;
}

/* verify_sample() and verify_end() under a guard, in frames of their own (the loop's
 * variables stay out of sigsetjmp's reach). */
static int verify_sample_guarded(struct slab *s, uint64_t i, const struct slab_sample *smp,
				 struct verify *v)
{
	int ret;

	GUARDED(s, ret, verify_sample(s, i, smp, v));
	return ret;
}

static int verify_end_guarded(struct slab *s, struct verify *v)
{
	int ret;

	GUARDED(s, ret, verify_end(s, v));
	return ret;
}

int slab_verify(struct slab *s, void (*progress)(uint64_t done, uint64_t total, void *arg),
		void *arg)
{
	uint64_t total = s->table_offset - s->data_offset, last_report = 0, now;
	struct verify *v = NULL;
	int ret = SLAB_ERR_NOMEM;

	/* Never opened, or its open failed (unopen()): nothing to call sound or corrupt. */
	if (!s->base)
		return slab_fail(&s->err, SLAB_ERR_INVAL, who(s), "reader not open");
	v = calloc(1, sizeof(*v));
	if (!v || !(v->spans = malloc((s->nfields ? s->nfields : 1) * sizeof(*v->spans)))) {
		ret = slab_fail(&s->err, SLAB_ERR_NOMEM, who(s), "out of memory");
		goto out;
	}
	v->pos = v->min_next = s->data_offset;
	/* A URL's pages are fetched in order, connections' worth at once, ahead of the checks;
	 * the checks wait for each sample's (and the gap before it) as they reach it. The
	 * checks read the mapping under a guard, the fetches (which take locks) outside it. */
	if (s->remote)
		slab_remote_want(s->remote, s->data_offset, total);
	for (uint64_t i = 0; i < s->nsamples; i++) {
		struct slab_sample smp;

		if ((ret = slab_sample(s, i, &smp)) < 0)
			goto out;
		if (s->remote && smp.offset >= v->pos &&
		    (ret = fetch(s, v->pos, smp.offset + smp.size - v->pos)) < 0)
			goto out;
		if ((ret = verify_sample_guarded(s, i, &smp, v)) < 0)
			goto out;
		if (progress && v->pos - last_report > (64u << 20)) {
			progress(v->pos - s->data_offset, total, arg);
			last_report = v->pos;
		}
	}
	if (s->remote && v->pos < s->table_offset &&
	    (ret = fetch(s, v->pos, s->table_offset - v->pos)) < 0)
		goto out;
	if ((ret = verify_end_guarded(s, v)) < 0)
		goto out;
	/* A file cut inside its last OS page reads as zeros there, not as a fault: its size
	 * now says whether what was checked is still the file. */
	if (slab_shrunk(s, &now)) {
		ret = slab_fail(&s->err, SLAB_ERR_IO, who(s), "the file is %llu bytes now, %llu when it was opened (truncated while in use)",
				(unsigned long long)now, (unsigned long long)s->size);
		goto out;
	}
	if (progress)
		progress(total, total, arg);
	ret = 0;
out:
	if (v) {
		slab_keyset_free(&v->ks);
		free(v->seen);
		free(v->spans);
		free(v);
	}
	return ret;
}
