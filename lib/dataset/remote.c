/* remote.c: a .slab at a URL, mirrored into a sparse local file page group by page group
 * (remote.h says what the cache holds and why a group is the unit). */
#include "remote.h"
#include "crc32c.h"
#include "format.h"
#include "net.h"
#include "reader.h"
#include "errfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The state file: a header, then one byte per .slab page. */
#define STATE_MAGIC     "SLABCST1"
#define STATE_HEADER    4096u
/* Header fields (little-endian): magic[8], u64 object size, u64 page size, u64 data offset,
 * u64 table offset, u64 pages, u32 meta present, u32 etag length, etag[] (at 56), and at
 * ST_URL the URL the requests go to (the one the files are named by), credentials masked
 * (state_url()), NUL-terminated. */
#define ST_SIZE         8
#define ST_PAGE         16
#define ST_DATA         24
#define ST_TABLE        32
#define ST_PAGES        40
#define ST_META         48
#define ST_ETAGLEN      52
#define ST_ETAG         56      /* to 56 + SLAB_NET_ETAG_MAX + 1 */
#define ST_URL          (ST_ETAG + SLAB_NET_ETAG_MAX + 8)

/* The tail fetched first on open: the trailer and, for most files, the whole table. */
#define TAIL_FIRST      (1u << 20)

/* Background fetchers: threads taking (remote, group) jobs in the order asked, shared by the
 * remote files of a dataset. */
struct job {
	struct slab_remote *r;
	uint64_t group;
};

struct slab_fetcher {
	pthread_mutex_t mu;
	pthread_cond_t cv, idle;
	struct job *q;
	size_t cap, head, n;
	unsigned nthreads, want_threads, busy;
	pthread_t *tids;
	int stop;
	unsigned refs;
};

struct slab_remote {
	struct slab_net_object *net;
	struct slab_remote_options o;
	char *dir, *data_path, *state_path, *lock_path;
	int data_fd, state_fd;
	const unsigned char *state;     /* the state file, mapped shared */
	size_t state_len;
	char etag[SLAB_NET_ETAG_MAX + 1];
	uint64_t size;
	int attempts;                   /* fetches of a group that fails its CRCs */
	uint64_t tail;                  /* the tail fetched with the table when this process
					 * fetched it (a small file's data pages too), else 0 */

	/* From the table (slab_remote_bind). */
	struct slab *s;
	uint64_t page_size, data_offset, table_offset, npages;
	uint64_t *gfirst;               /* each page's group: its first page */
	uint64_t *gend;                 /* at a group's first page: the page after its last */
	uint64_t *s0, *s1;              /* at a group's first page: samples [s0, s1) on it */

	pthread_mutex_t mu;             /* busy, queued, inflight */
	pthread_cond_t cv;
	unsigned char *busy;            /* a thread of ours is fetching or dropping the group */
	unsigned char *queued;          /* the group waits for a background fetcher */
	unsigned inflight;              /* background jobs of ours running */
	struct slab_fetcher *fe;
	/* The group whose fetch failed last (UINT64_MAX: none since), with its error: a
	 * thread that waited for that fetch takes its failure, rather than starting the
	 * request over with a budget of its own (--timeout twice over, CRC retries doubled). */
	uint64_t failed;
	int failed_rc;
	struct slab_err failed_err;

	pthread_mutex_t stat_mu;
	uint64_t fetched_bytes, fetches, refetches, dropped;
	pid_t pid;                      /* the process whose threads and locks these are */
	int child;                      /* this is a fork() child's copy: no fetchers */
};

/* Every process that has the object open holds a read lock (an open file description
 * lock, released by a kill as by a close) on the state file's header, which no page lock
 * covers: an eviction of the whole object takes the write lock there, and so never drops
 * pages that another process may be reading, nor waits while one does. A process opening the
 * object while an eviction runs waits for it. */
static int hold_open(int fd)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0,
			    .l_len = STATE_HEADER };
	int rc;

	while ((rc = fcntl(fd, F_OFD_SETLKW, &fl)) < 0 && errno == EINTR)
		;
	return rc;
}

/* In a fork() child (a DataLoader's worker over a dataset opened before the fork) the
 * background fetchers do not exist, a lock may be held by a thread that does not either,
 * and the state file's description, whose OFD locks keep other processes out, is shared
 * with the parent: the child takes a description of its own (its fetches then exclude the
 * parent's as another process's do), fresh locks, nothing busy, and no fetchers (it asks
 * for nothing ahead: each sample is fetched when read). */
static void after_fork(struct slab_remote *r)
{
	int fd;

	if (r->pid == getpid())
		return;
	r->pid = getpid();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_mutex_init(&r->stat_mu, NULL);
	if (r->busy)
		memset(r->busy, 0, r->npages ? (size_t)r->npages : 1);
	if (r->queued)
		memset(r->queued, 0, r->npages ? (size_t)r->npages : 1);
	r->inflight = 0;
	r->fe = NULL;           /* the parent's, whose threads are not here */
	r->child = 1;
	fd = open(r->state_path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(r->state_fd);
		r->state_fd = fd;
		(void)hold_open(fd);    /* the child reads the object too */
	}
}

/* ---- little-endian helpers for the state header --------------------------------------------- */

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- naming the cache ------------------------------------------------------------------------ */

/* FNV-1a: a name for the URL's files, not a checksum of anything. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Copy at most n characters of s into out as a safe file name part. */
static void safe_part(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && s[i] && o + 1 < cap; i++) {
		char c = s[i];
		out[o++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ? c : '_';
	}
	out[o] = '\0';
	if (o == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		snprintf(out, cap, "_");
}

/* The folders missing on the way to path, made the user's alone (0700, as the XDG Base
 * Directory spec asks of ~/.cache): what the cache holds was read with the user's
 * credentials, from private buckets too. Folders already there are left as they are. */
static int mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

/* The cache folder for url: <cache>/<host or s3 bucket>/ and the files' common stem, named
 * by a hash of where the requests go (an S3 key at two endpoints is two objects). */
static int cache_names(struct slab_remote *r, const char *url, struct slab_err *err)
{
	const char *base = r->o.cache_dir, *env, *p, *host, *slash, *name, *end;
	char root[4096], part[128], leaf[128], stem[8192];
	size_t hl;
	int n;

	if (!base || !*base) {
		if ((env = getenv("SLAB_CACHE_DIR")) && *env)
			snprintf(root, sizeof(root), "%s", env);
		/* The XDG Base Directory spec: a relative path there is invalid and ignored (it
		 * would put the cache wherever the process happens to run). */
		else if ((env = getenv("XDG_CACHE_HOME")) && *env == '/')
			snprintf(root, sizeof(root), "%s/slab", env);
		else if ((env = getenv("HOME")) && *env)
			snprintf(root, sizeof(root), "%s/.cache/slab", env);
		else
			return slab_fail(err, SLAB_ERR_INVAL, url,
					 "no cache folder: set SLAB_CACHE_DIR or give one");
	} else {
		snprintf(root, sizeof(root), "%s", base);
	}
	p = strstr(url, "://");
	host = p ? p + 3 : url;
	if (strchr(host, '@') && strchr(host, '@') < (strchr(host, '/') ? strchr(host, '/') : host + strlen(host)))
		host = strchr(host, '@') + 1;       /* never a credential in a file name */
	slash = strchr(host, '/');
	hl = slash ? (size_t)(slash - host) : strlen(host);
	safe_part(part, sizeof(part), host, hl);
	/* The leaf is the path's last part: an http(s) URL's query (a presigned URL's is
	 * mostly its signature) names nothing a reader would look for. An S3 key is the
	 * whole rest, '?' and all. */
	end = strncmp(url, "s3://", 5) == 0 ? host + strlen(host) : host + strcspn(host, "?#");
	for (name = end; name > host && name[-1] != '/'; name--)
		;
	safe_part(leaf, sizeof(leaf), name, (size_t)(end - name) < 64 ? (size_t)(end - name) : 64);
	n = snprintf(stem, sizeof(stem), "%s/%s%s", root, strncmp(url, "s3://", 5) ? "" : "s3-", part);
	if (n < 0 || (size_t)n >= sizeof(stem))
		return slab_fail(err, SLAB_ERR_INVAL, url, "cache folder name too long");
	r->dir = strdup(stem);
	n = snprintf(stem + n, sizeof(stem) - (size_t)n, "/%016llx-%s",
		     (unsigned long long)name_hash(slab_net_request_url(r->net)), leaf);
	if (!r->dir || n < 0)
		return slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
	if (asprintf(&r->data_path, "%s", stem) < 0 ||
	    asprintf(&r->state_path, "%s.state", stem) < 0 ||
	    asprintf(&r->lock_path, "%s.lock", stem) < 0) {
		r->data_path = r->state_path = r->lock_path = NULL;
		return slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
	}
	if (mkdirs(r->dir) < 0)
		return slab_fail(err, SLAB_ERR_IO, url, "cache folder '%s': %s", r->dir,
				 strerror(errno));
	return 0;
}

/* ---- the state file ------------------------------------------------------------------------------ */

static uint64_t state_get64(const unsigned char *h, unsigned off)
{
	return slab_le64(h + off);
}

/* The state header's URL field: the URL the requests go to (what the files are named by a
 * hash of: the endpoint's too for s3://), credentials masked, cut to fit. */
static void state_url(const struct slab_remote *r, char url[STATE_HEADER - ST_URL])
{
	slab_net_mask(url, STATE_HEADER - ST_URL, slab_net_request_url(r->net));
}

/* Is this state file's header for our object: its URL (two URLs whose names hash alike are
 * two objects, however alike their sizes and ETags), its size and its ETag? */
static int state_matches(struct slab_remote *r, const unsigned char *h)
{
	uint32_t el = slab_le32(h + ST_ETAGLEN);
	char url[STATE_HEADER - ST_URL];

	state_url(r, url);
	return memcmp(h, STATE_MAGIC, 8) == 0 && state_get64(h, ST_SIZE) == r->size &&
	       el == strlen(r->etag) && el <= SLAB_NET_ETAG_MAX &&
	       memcmp(h + ST_ETAG, r->etag, el) == 0 &&
	       memcmp(h + ST_URL, url, strlen(url) + 1) == 0;
}

/* A new, empty cache for the object: the data file (sparse, its size) and a state file
 * saying nothing is present, each written under a temporary name and renamed in, the state
 * last (an old state file is removed first, so no state ever describes another data file). */
static int cache_create(struct slab_remote *r, const char *url, struct slab_err *err)
{
	unsigned char h[STATE_HEADER];
	char *tmp = NULL;
	int fd = -1, rc = SLAB_ERR_IO;

	(void)unlink(r->state_path);
	if (asprintf(&tmp, "%s.new.%ld", r->data_path, (long)getpid()) < 0)
		return slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)r->size) < 0 || rename(tmp, r->data_path) < 0) {
		slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->data_path, strerror(errno));
		goto out;
	}
	close(fd);
	memset(h, 0, sizeof(h));
	memcpy(h, STATE_MAGIC, 8);
	put64(h + ST_SIZE, r->size);
	put32(h + ST_ETAGLEN, (uint32_t)strlen(r->etag));
	memcpy(h + ST_ETAG, r->etag, strlen(r->etag));
	state_url(r, (char *)h + ST_URL);
	free(tmp);
	tmp = NULL;
	if (asprintf(&tmp, "%s.new.%ld", r->state_path, (long)getpid()) < 0) {
		rc = slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
		fd = -1;
		goto out;
	}
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || pwrite(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    rename(tmp, r->state_path) < 0) {
		slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->state_path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp && rc < 0)
		(void)unlink(tmp);
	free(tmp);
	return rc;
}

/* Fetch [off, off + len) into the data file (metadata: checked by the caller). */
static int fetch_into(struct slab_remote *r, uint64_t off, uint64_t len, unsigned char *buf,
		      struct slab_err *err)
{
	int rc = slab_net_read(r->net, off, len, buf, r->etag, err);

	if (rc < 0)
		return rc;
	if (pwrite(r->data_fd, buf, (size_t)len, (off_t)off) != (ssize_t)len)
		return slab_fail(err, SLAB_ERR_IO, slab_net_url(r->net), "cache file '%s': %s",
				 r->data_path, strerror(errno ? errno : ENOSPC));
	return 0;
}

/* The header, the trailer and the table, fetched into the data file and checked the way
 * slab_open() checks them (it runs on the result: a wrong byte in transit shows there as a
 * checksum mismatch, and the caller fetches again). */
static int fetch_meta(struct slab_remote *r, struct slab_err *err)
{
	const char *url = slab_net_url(r->net);
	uint64_t tail = r->size < TAIL_FIRST ? r->size : TAIL_FIRST, toff, tsize, tstart;
	unsigned char *buf, *tr;
	int rc;

	if (r->size < SLAB_HEADER_SIZE + SLAB_TRAILER_SIZE)
		return slab_fail(err, SLAB_ERR_FORMAT, url, "not a slab file (%llu %s)",
				 (unsigned long long)r->size, slab_plural(r->size, "byte", "bytes"));
	buf = malloc(tail > SLAB_HEADER_SIZE ? tail : SLAB_HEADER_SIZE);
	if (!buf)
		return slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
	if ((rc = fetch_into(r, 0, SLAB_HEADER_SIZE, buf, err)) < 0)
		goto out;
	if (memcmp(buf, SLAB_MAGIC, 8) != 0) {
		rc = slab_fail(err, SLAB_ERR_FORMAT, url, "not a slab file (bad magic number)");
		goto out;
	}
	tstart = r->size - tail;
	if ((rc = fetch_into(r, tstart, tail, buf, err)) < 0)
		goto out;
	r->tail = tail;
	tr = buf + tail - SLAB_TRAILER_SIZE;
	toff = slab_le64(tr + 8);
	tsize = slab_le64(tr + 16);
	/* A damaged trailer is slab_open's to report; fetch the table only when it is sane. */
	if (memcmp(tr, SLAB_TRAILER_MAGIC, 8) == 0 && toff < tstart &&
	    toff + tsize == r->size - SLAB_TRAILER_SIZE && toff >= SLAB_HEADER_SIZE) {
		uint64_t n = tstart - toff;
		unsigned char *t = malloc(n);

		if (!t) {
			rc = slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
			goto out;
		}
		rc = fetch_into(r, toff, n, t, err);
		free(t);
	}
out:
	free(buf);
	return rc;
}

/* Map the state file (header and the page bytes). */
static int state_map(struct slab_remote *r, struct slab_err *err)
{
	void *p;

	r->state_len = STATE_HEADER + (size_t)r->npages;
	p = mmap(NULL, r->state_len, PROT_READ, MAP_SHARED, r->state_fd, 0);
	if (p == MAP_FAILED)
		return slab_fail(err, SLAB_ERR_IO, slab_net_url(r->net), "cache file '%s': mmap: %s",
				 r->state_path, strerror(errno));
	r->state = p;
	return 0;
}

/* Record the file's geometry and that its metadata is there: the page bytes follow. */
static int state_meta(struct slab_remote *r, struct slab_err *err)
{
	unsigned char h[ST_META + 4];
	const char *url = slab_net_url(r->net);

	if (pread(r->state_fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': short read", r->state_path);
	put64(h + ST_PAGE, r->page_size);
	put64(h + ST_DATA, r->data_offset);
	put64(h + ST_TABLE, r->table_offset);
	put64(h + ST_PAGES, r->npages);
	put32(h + ST_META, 1);
	if (ftruncate(r->state_fd, (off_t)(STATE_HEADER + r->npages)) < 0 ||
	    pwrite(r->state_fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->state_path,
				 strerror(errno));
	return 0;
}

/* Geometry from the header and the trailer now in the data file. */
static void geometry(struct slab_remote *r, const unsigned char *head, const unsigned char *tr)
{
	r->page_size = slab_le64(head + 16);
	r->data_offset = slab_le64(head + 24);
	r->table_offset = slab_le64(tr + 8);
	r->npages = r->table_offset > r->data_offset && r->page_size ?
		    (r->table_offset - r->data_offset + r->page_size - 1) / r->page_size : 0;
}

/* Does a state file that says the metadata is there agree with the header and trailer in
 * the data file, and hold a byte for each page? One damaged or cut short (by hand, a full
 * disk, a disk fault) would have every reader divide by a page size of 0 or fault on the page
 * bytes past its end: such a cache is not used but made again. 1 when it can be used. */
static int state_sane(struct slab_remote *r, const unsigned char *h)
{
	unsigned char head[32], tr[SLAB_TRAILER_SIZE];
	struct stat st;

	if (r->size < SLAB_HEADER_SIZE + SLAB_TRAILER_SIZE ||
	    pread(r->data_fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    pread(r->data_fd, tr, sizeof(tr), (off_t)(r->size - sizeof(tr))) != (ssize_t)sizeof(tr))
		return 0;
	geometry(r, head, tr);
	if (state_get64(h, ST_PAGE) != r->page_size || state_get64(h, ST_DATA) != r->data_offset ||
	    state_get64(h, ST_TABLE) != r->table_offset || state_get64(h, ST_PAGES) != r->npages ||
	    r->table_offset > r->size - SLAB_TRAILER_SIZE || r->data_offset > r->table_offset)
		return 0;
	return fstat(r->state_fd, &st) == 0 && (uint64_t)st.st_size >= STATE_HEADER + r->npages;
}

/* Check the metadata in the data file with the reader's own checks. 0, or its error. */
static int check_meta(struct slab_remote *r, struct slab_err *err)
{
	struct slab *s = slab_new();
	unsigned char head[32], tr[SLAB_TRAILER_SIZE];
	int rc;

	if (!s)
		return slab_fail(err, SLAB_ERR_NOMEM, slab_net_url(r->net), "out of memory");
	/* Opened under the URL's name: a damaged object is the URL's, not the cache file's. */
	rc = slab_open_named(s, r->data_path, slab_net_url(r->net));
	if (rc < 0) {
		slab_fail_from(err, rc, slab_error(s));
	} else {
		memcpy(head, slab_base(s), sizeof(head));
		memcpy(tr, slab_base(s) + r->size - SLAB_TRAILER_SIZE, sizeof(tr));
		geometry(r, head, tr);
		if (slab_page_count(s) > r->npages)
			rc = slab_fail(err, SLAB_ERR_CORRUPT, slab_net_url(r->net),
				       "page count does not fit the file");
	}
	slab_close(s);
	return rc;
}

void slab_remote_net_config(const struct slab_remote_options *o, struct slab_net_config *c)
{
	memset(c, 0, sizeof(*c));
	c->s3_endpoint = o->s3_endpoint;
	c->profile = o->profile;
	c->region = o->region;
	c->addressing = o->addressing;
	c->anonymous = o->anonymous;
	c->connections = o->connections ? o->connections : 16;
	/* slab.h: 0 the default, negative none; the transport: negative the default. */
	c->retries = o->retries == 0 ? -1 : o->retries < 0 ? 0 : o->retries;
	c->timeout = o->timeout;
	c->log = o->log;
	c->log_arg = o->log_arg;
}

int slab_remote_open(struct slab_remote **out, const char *url,
		     const struct slab_remote_options *o, int fresh, const char **data_path,
		     struct slab_err *err)
{
	struct slab_net_config c;
	struct slab_remote *r = calloc(1, sizeof(*r));
	unsigned char h[STATE_HEADER];
	int lock = -1, rc;

	if (!r)
		return slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
	r->data_fd = r->state_fd = -1;
	r->pid = getpid();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	pthread_mutex_init(&r->stat_mu, NULL);
	if (o)
		r->o = *o;
	slab_remote_net_config(&r->o, &c);
	r->o.connections = c.connections;
	r->attempts = 1 + (c.retries < 0 ? 8 : c.retries);
	if ((rc = slab_net_open(&r->net, url, &c, err)) < 0)
		goto fail;
	url = slab_net_url(r->net);
	/* The object first: a URL that does not answer leaves nothing in the cache folder. */
	if ((rc = slab_net_stat(r->net, &r->size, r->etag, err)) < 0)
		goto fail;
	if ((rc = cache_names(r, url, err)) < 0)
		goto fail;
	/* One process at a time sets a cache up; the others find it ready. */
	lock = open(r->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		rc = slab_fail(err, SLAB_ERR_IO, url, "cache lock '%s': %s", r->lock_path,
			       strerror(errno));
		goto fail;
	}
	r->state_fd = open(r->state_path, O_RDWR | O_CLOEXEC);
	if (r->state_fd >= 0 && (fresh || pread(r->state_fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
				 !state_matches(r, h))) {
		close(r->state_fd);
		r->state_fd = -1;
	}
	if (r->state_fd >= 0) {
		struct stat st;

		r->data_fd = open(r->data_path, O_RDWR | O_CLOEXEC);
		if (r->data_fd < 0 || fstat(r->data_fd, &st) < 0 || (uint64_t)st.st_size != r->size ||
		    (slab_le32(h + ST_META) && !state_sane(r, h))) {
			if (r->data_fd >= 0)
				close(r->data_fd);
			close(r->state_fd);
			r->data_fd = r->state_fd = -1;
		}
	}
	if (r->state_fd < 0) {
		if ((rc = cache_create(r, url, err)) < 0)
			goto fail;
		r->state_fd = open(r->state_path, O_RDWR | O_CLOEXEC);
		r->data_fd = open(r->data_path, O_RDWR | O_CLOEXEC);
		if (r->state_fd < 0 || r->data_fd < 0 ||
		    pread(r->state_fd, h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			rc = slab_fail(err, SLAB_ERR_IO, url, "cache '%s': %s", r->data_path,
				       strerror(errno));
			goto fail;
		}
	}
	if (!slab_le32(h + ST_META)) {
		/* Fetched until the reader's checks pass: a byte flipped in transit is a checksum
		 * mismatch, fetched again; a file that is damaged on the server stays so. */
		for (int a = 0;; a++) {
			if ((rc = fetch_meta(r, err)) < 0)
				goto fail;
			if ((rc = check_meta(r, err)) == 0)
				break;
			if (rc != SLAB_ERR_CORRUPT || a + 1 >= r->attempts)
				goto fail;
		}
		if ((rc = state_meta(r, err)) < 0)
			goto fail;
	} else {
		r->page_size = state_get64(h, ST_PAGE);
		r->data_offset = state_get64(h, ST_DATA);
		r->table_offset = state_get64(h, ST_TABLE);
		r->npages = state_get64(h, ST_PAGES);
	}
	if ((rc = state_map(r, err)) < 0)
		goto fail;
	if (hold_open(r->state_fd) < 0) {
		rc = slab_fail(err, SLAB_ERR_IO, url, "cache lock '%s': %s", r->state_path,
			       strerror(errno));
		goto fail;
	}
	close(lock);
	*out = r;
	*data_path = r->data_path;
	return 0;
fail:
	if (lock >= 0)
		close(lock);
	slab_remote_close(r);
	return rc;
}

/* ---- page groups ------------------------------------------------------------------------------ */

static uint64_t page_of(const struct slab_remote *r, uint64_t off)
{
	return (off - r->data_offset) / r->page_size;
}

static void page_span(const struct slab_remote *r, uint64_t p0, uint64_t p1, uint64_t *lo,
		      uint64_t *hi)
{
	*lo = r->data_offset + p0 * r->page_size;
	*hi = r->data_offset + p1 * r->page_size;
	if (*hi > r->table_offset)
		*hi = r->table_offset;
}

static int check_group(struct slab_remote *r, uint64_t g, const unsigned char *buf, uint64_t lo,
		       uint64_t hi, struct slab_err *err);
static int set_state(struct slab_remote *r, uint64_t p0, uint64_t p1, unsigned char v);
static int lock_pages(struct slab_remote *r, uint64_t p0, uint64_t p1, short type);
static int group_present(const struct slab_remote *r, uint64_t g);

/* The data pages that came with the table (a file smaller than the first tail fetch): in
 * the file already; marked present once they pass the checks a fetched group passes. Under
 * the same locks as a fetch. 0 always: a page that fails is fetched later. */
static int adopt_tail(struct slab_remote *r)
{
	uint64_t lo, hi, from = r->size - r->tail;
	struct slab_err e;
	unsigned char *buf;

	if (!r->tail || from >= r->table_offset)
		return 0;
	for (uint64_t g = 0; g < r->npages; g = r->gend[g]) {
		page_span(r, g, r->gend[g], &lo, &hi);
		if (lo < from || group_present(r, g) || lock_pages(r, g, r->gend[g], F_WRLCK) < 0)
			continue;
		buf = malloc(hi - lo ? (size_t)(hi - lo) : 1);
		if (buf && pread(r->data_fd, buf, (size_t)(hi - lo), (off_t)lo) == (ssize_t)(hi - lo) &&
		    check_group(r, g, buf, lo, hi, &e) == 0)
			(void)set_state(r, g, r->gend[g], 1);
		free(buf);
		lock_pages(r, g, r->gend[g], F_UNLCK);
	}
	return 0;
}

int slab_remote_bind(struct slab_remote *r, struct slab *s, struct slab_err *err)
{
	uint64_t n = slab_count(s), np = r->npages ? r->npages : 1;

	r->s = s;
	r->gfirst = malloc(np * sizeof(*r->gfirst));
	r->gend = calloc(np, sizeof(*r->gend));
	r->s0 = malloc(np * sizeof(*r->s0));
	r->s1 = calloc(np, sizeof(*r->s1));
	r->busy = calloc(np, 1);
	r->queued = calloc(np, 1);
	r->failed = UINT64_MAX;
	if (!r->gfirst || !r->gend || !r->s0 || !r->s1 || !r->busy || !r->queued)
		return slab_fail(err, SLAB_ERR_NOMEM, slab_net_url(r->net), "out of memory");
	for (uint64_t p = 0; p < r->npages; p++) {
		r->gfirst[p] = p;
		r->s0[p] = UINT64_MAX;
	}
	/* A sample spanning pages a..b joins them into one group (union of intervals: the
	 * samples lie in offset order, but a table need not be trusted for that). */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off, size, a, b;

		if (slab_sample_span(s, i, &off, &size) < 0 || size == 0)
			continue;
		a = page_of(r, off);
		b = page_of(r, off + size - 1);
		for (uint64_t p = a + 1; p <= b && p < r->npages; p++)
			r->gend[p] = 1;     /* joins the page before it */
	}
	for (uint64_t p = 0; p < r->npages; p++)
		if (p > 0 && r->gend[p])
			r->gfirst[p] = r->gfirst[p - 1];
	memset(r->gend, 0, np * sizeof(*r->gend));
	for (uint64_t p = 0; p < r->npages; p++)
		r->gend[r->gfirst[p]] = p + 1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off, size, g;

		if (slab_sample_span(s, i, &off, &size) < 0 || size == 0)
			continue;
		g = r->gfirst[page_of(r, off)];
		if (r->s0[g] == UINT64_MAX || i < r->s0[g])
			r->s0[g] = i;
		if (i + 1 > r->s1[g])
			r->s1[g] = i + 1;
	}
	return adopt_tail(r);
}

static int present(const struct slab_remote *r, uint64_t p)
{
	return __atomic_load_n(&r->state[STATE_HEADER + p], __ATOMIC_ACQUIRE) == 1;
}

static int group_present(const struct slab_remote *r, uint64_t g)
{
	for (uint64_t p = g; p < r->gend[g]; p++)
		if (!present(r, p))
			return 0;
	return 1;
}

struct span {
	uint64_t off, size;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int all_zero(const unsigned char *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Are the group's bytes in buf ([lo, hi) of the file) what the table says: every field's
 * CRC-32C, and zero between them? 0, or SLAB_ERR_CORRUPT with the first bad place. */
static int check_group(struct slab_remote *r, uint64_t g, const unsigned char *buf, uint64_t lo,
		       uint64_t hi, struct slab_err *err)
{
	unsigned nf = slab_field_count(r->s);
	struct span *sp = NULL;
	size_t n = 0, cap = 0;
	uint64_t at = lo;
	int rc = 0;

	for (uint64_t i = r->s0[g]; r->s0[g] != UINT64_MAX && i < r->s1[g]; i++) {
		for (unsigned f = 0; f < nf; f++) {
			struct slab_field fl;

			if (slab_get_record(r->s, i, f, &fl) <= 0 || fl.size == 0)
				continue;
			if (fl.offset < lo || fl.offset + fl.size > hi)
				continue;       /* not on these pages: a table out of order */
			if (slab_crc32c(0, buf + (fl.offset - lo), (size_t)fl.size) != fl.crc) {
				rc = slab_fail(err, SLAB_ERR_CORRUPT, slab_net_url(r->net),
					       "bytes %llu-%llu: field '%s' of sample #%llu failed its CRC-32C",
					       (unsigned long long)lo, (unsigned long long)(hi - 1),
					       slab_field_name(r->s, f), (unsigned long long)i);
				goto out;
			}
			if (n == cap) {
				struct span *m = realloc(sp, (cap = cap ? 2 * cap : 64) * sizeof(*sp));

				if (!m) {
					rc = slab_fail(err, SLAB_ERR_NOMEM, slab_net_url(r->net), "out of memory");
					goto out;
				}
				sp = m;
			}
			sp[n].off = fl.offset;
			sp[n++].size = fl.size;
		}
	}
	if (n)
		qsort(sp, n, sizeof(*sp), span_cmp);
	for (size_t k = 0; k <= n; k++) {
		uint64_t end = k < n ? sp[k].off : hi;

		if (end > at && !all_zero(buf + (at - lo), end - at)) {
			rc = slab_fail(err, SLAB_ERR_CORRUPT, slab_net_url(r->net),
				       "bytes %llu-%llu: a byte between fields is not zero",
				       (unsigned long long)lo, (unsigned long long)(hi - 1));
			goto out;
		}
		if (k < n && sp[k].off + sp[k].size > at)
			at = sp[k].off + sp[k].size;
	}
out:
	free(sp);
	return rc;
}

/* Lock (type F_WRLCK) or unlock (F_UNLCK) the state bytes of pages [p0, p1) against other
 * processes: an open file description lock, so that a kill releases it. */
static int lock_pages(struct slab_remote *r, uint64_t p0, uint64_t p1, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = (off_t)(STATE_HEADER + p0), .l_len = (off_t)(p1 - p0) };
	int rc;

	while ((rc = fcntl(r->state_fd, type == F_UNLCK ? F_OFD_SETLK : F_OFD_SETLKW, &fl)) < 0 &&
	       errno == EINTR)
		;
	return rc;
}

static int set_state(struct slab_remote *r, uint64_t p0, uint64_t p1, unsigned char v)
{
	unsigned char buf[4096];

	memset(buf, v, sizeof(buf));
	for (uint64_t p = p0; p < p1;) {
		size_t n = p1 - p < sizeof(buf) ? (size_t)(p1 - p) : sizeof(buf);

		if (pwrite(r->state_fd, buf, n, (off_t)(STATE_HEADER + p)) != (ssize_t)n)
			return -1;
		p += n;
	}
	return 0;
}

/* Take the group for this thread to fetch: wait while another of ours has it. 0 when
 * taken, 1 when it is present by then; the error of the fetch it waited for, when that
 * failed. */
static int take(struct slab_remote *r, uint64_t g, struct slab_err *err)
{
	int waited = 0, rc = 0;

	pthread_mutex_lock(&r->mu);
	while (r->busy[g]) {
		waited = 1;
		pthread_cond_wait(&r->cv, &r->mu);
	}
	if (group_present(r, g)) {
		rc = 1;
	} else if (waited && r->failed == g) {
		rc = r->failed_rc;
		*err = r->failed_err;
	} else {
		r->busy[g] = 1;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* Give the group back, with the outcome of what this thread did with it (rc < 0: its fetch
 * failed, with err). */
static void give(struct slab_remote *r, uint64_t g, int rc, const struct slab_err *err)
{
	pthread_mutex_lock(&r->mu);
	r->busy[g] = 0;
	if (rc < 0) {
		r->failed = g;
		r->failed_rc = rc;
		r->failed_err = *err;
	} else if (r->failed == g) {
		r->failed = UINT64_MAX;
	}
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Fetch group g unless it is there: this thread's, or waiting for whoever fetches it. */
static int fetch_taken(struct slab_remote *r, uint64_t g, struct slab_err *err);

static int fetch_group(struct slab_remote *r, uint64_t g, struct slab_err *err)
{
	int rc;

	if (group_present(r, g))
		return 0;
	if ((rc = take(r, g, err)) != 0)
		return rc < 0 ? rc : 0;
	return fetch_taken(r, g, err);
}

/* Fetch group g, taken by this thread (busy): whatever happens, it is given back. */
static int fetch_taken(struct slab_remote *r, uint64_t g, struct slab_err *err)
{
	const char *url = slab_net_url(r->net);
	uint64_t lo, hi, p1 = r->gend[g];
	unsigned char *buf = NULL;
	int rc = 0;

	if (lock_pages(r, g, p1, F_WRLCK) < 0) {
		rc = slab_fail(err, SLAB_ERR_IO, url, "cache lock '%s': %s", r->state_path,
			       strerror(errno));
		goto out;
	}
	if (group_present(r, g))
		goto unlock;            /* another process fetched it meanwhile */
	page_span(r, g, p1, &lo, &hi);
	buf = malloc(hi - lo ? (size_t)(hi - lo) : 1);
	if (!buf) {
		rc = slab_fail(err, SLAB_ERR_NOMEM, url, "out of memory");
		goto unlock;
	}
	for (int a = 0;; a++) {
		if ((rc = slab_net_read(r->net, lo, hi - lo, buf, r->etag, err)) < 0)
			goto unlock;
		if ((rc = check_group(r, g, buf, lo, hi, err)) == 0)
			break;
		if (rc != SLAB_ERR_CORRUPT)
			goto unlock;
		pthread_mutex_lock(&r->stat_mu);
		r->refetches++;
		pthread_mutex_unlock(&r->stat_mu);
		if (a + 1 >= r->attempts) {
			char why[SLAB_ERR_TEXT];

			snprintf(why, sizeof(why), "%s", err->text);
			rc = slab_fail(err, SLAB_ERR_CORRUPT, NULL, "%s (in %d %s: damaged on the server?)",
				       why, a + 1, slab_plural((uint64_t)a + 1, "fetch", "fetches"));
			goto unlock;
		}
	}
	if (pwrite(r->data_fd, buf, (size_t)(hi - lo), (off_t)lo) != (ssize_t)(hi - lo)) {
		rc = slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->data_path,
			       strerror(errno ? errno : ENOSPC));
		goto unlock;
	}
	/* The bytes are in the file before the state says so. */
	if (set_state(r, g, p1, 1) < 0) {
		rc = slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->state_path,
			       strerror(errno));
		goto unlock;
	}
	pthread_mutex_lock(&r->stat_mu);
	r->fetched_bytes += hi - lo;
	r->fetches++;
	pthread_mutex_unlock(&r->stat_mu);
unlock:
	lock_pages(r, g, p1, F_UNLCK);
out:
	free(buf);
	give(r, g, rc, err);
	return rc;
}

/* The groups touching [off, off + len), clipped to the data area: [*g0, *g1) of pages. */
static int groups_of(const struct slab_remote *r, uint64_t off, uint64_t len, uint64_t *p0,
		     uint64_t *p1)
{
	uint64_t lo = off, hi = off + len < off ? UINT64_MAX : off + len;

	if (!r->gfirst || r->npages == 0 || len == 0)
		return 0;
	if (lo < r->data_offset)
		lo = r->data_offset;
	if (hi > r->table_offset)
		hi = r->table_offset;
	if (lo >= hi)
		return 0;
	*p0 = r->gfirst[page_of(r, lo)];
	*p1 = page_of(r, hi - 1) + 1;
	return 1;
}

int slab_remote_ensure(struct slab_remote *r, uint64_t off, uint64_t len, struct slab_err *err)
{
	uint64_t p0, p1;

	after_fork(r);
	if (!groups_of(r, off, len, &p0, &p1))
		return 0;
	for (uint64_t g = p0; g < p1; g = r->gend[g]) {
		int rc = fetch_group(r, g, err);

		if (rc < 0)
			return rc;
	}
	return 0;
}

int slab_remote_cached(const struct slab_remote *r, uint64_t off, uint64_t len)
{
	uint64_t p0, p1;

	if (!groups_of(r, off, len, &p0, &p1))
		return 1;
	for (uint64_t p = p0; p < p1; p++)
		if (!present(r, p))
			return 0;
	return 1;
}

static int drop_pages(struct slab_remote *r, uint64_t off, uint64_t end, struct slab_err *err);

int slab_remote_drop(struct slab_remote *r, uint64_t off, uint64_t len, int evict,
		     struct slab_err *err)
{
	const char *url = slab_net_url(r->net);
	uint64_t end = off + len < off ? UINT64_MAX : off + len;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0,
			    .l_len = STATE_HEADER };
	int rc;

	after_fork(r);
	if (!r->gfirst || r->npages == 0 || len == 0 || end <= r->data_offset)
		return 0;
	if (!evict)
		return drop_pages(r, off, end, err);
	/* Another process reading the object would read the holes as its bytes. */
	if (fcntl(r->state_fd, F_OFD_SETLK, &fl) < 0) {
		if (errno == EAGAIN || errno == EACCES)
			return slab_fail(err, SLAB_ERR_IO, url,
					 "not evicted: another process is reading it from the local cache");
		return slab_fail(err, SLAB_ERR_IO, url, "cache lock '%s': %s", r->state_path,
				 strerror(errno));
	}
	rc = drop_pages(r, off, end, err);
	fl.l_type = F_RDLCK;
	(void)fcntl(r->state_fd, F_OFD_SETLK, &fl);
	return rc;
}

static int drop_pages(struct slab_remote *r, uint64_t off, uint64_t end, struct slab_err *err)
{
	const char *url = slab_net_url(r->net);
	uint64_t p0, p1;

	if (off < r->data_offset)
		off = r->data_offset;
	/* Whole pages only: the first page starting at or after off, up to the last ending at
	 * or before end (the last page of the data ends at the table). */
	p0 = (off - r->data_offset + r->page_size - 1) / r->page_size;
	p1 = end >= r->table_offset ? r->npages : (end - r->data_offset) / r->page_size;
	for (uint64_t p = p0; p < p1; p++) {
		uint64_t g = r->gfirst[p], lo, hi;
		int rc = 0, here;

		pthread_mutex_lock(&r->mu);
		r->queued[g] = 0;       /* asked for and not begun: not wanted now */
		while (r->busy[g])
			pthread_cond_wait(&r->cv, &r->mu);
		here = present(r, p);
		r->busy[g] = (unsigned char)here;
		pthread_mutex_unlock(&r->mu);
		if (!here)
			continue;
		if (lock_pages(r, p, p + 1, F_WRLCK) < 0) {
			give(r, g, 0, NULL);
			return slab_fail(err, SLAB_ERR_IO, url, "cache lock '%s': %s", r->state_path,
					 strerror(errno));
		}
		page_span(r, p, p + 1, &lo, &hi);
		/* Absent first: a reader never sees a hole marked present. */
		if (set_state(r, p, p + 1, 0) < 0 ||
		    fallocate(r->data_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
			      (off_t)(hi - lo)) < 0) {
			rc = slab_fail(err, SLAB_ERR_IO, url, "cache file '%s': %s", r->data_path,
				       strerror(errno));
		} else {
			pthread_mutex_lock(&r->stat_mu);
			r->dropped++;
			pthread_mutex_unlock(&r->stat_mu);
		}
		lock_pages(r, p, p + 1, F_UNLCK);
		give(r, g, 0, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void slab_remote_group(const struct slab_remote *r, uint64_t page, uint64_t *first,
		       uint64_t *end)
{
	if (r->gfirst && page < r->npages) {
		*first = r->gfirst[page];
		*end = r->gend[*first];
	} else {
		*first = page;
		*end = page + 1;
	}
}

/* ---- background fetchers ------------------------------------------------------------------------ */

static void *fetcher_main(void *arg)
{
	struct slab_fetcher *fe = arg;

	pthread_mutex_lock(&fe->mu);
	for (;;) {
		struct job j;
		struct slab_err err;
		int run;

		while (!fe->stop && fe->n == 0)
			pthread_cond_wait(&fe->cv, &fe->mu);
		if (fe->stop)
			break;
		j = fe->q[fe->head];
		fe->head = (fe->head + 1) % fe->cap;
		fe->n--;
		fe->busy++;
		pthread_mutex_lock(&j.r->mu);
		/* Taken here, under the lock a drop takes too: not queued any more means dropped
		 * meanwhile (a budget let it go before it came), busy means another thread of
		 * ours has it. */
		run = j.r->queued[j.group] && !j.r->busy[j.group] && !group_present(j.r, j.group);
		j.r->queued[j.group] = 0;
		if (run)
			j.r->busy[j.group] = 1;
		j.r->inflight++;
		pthread_mutex_unlock(&j.r->mu);
		pthread_mutex_unlock(&fe->mu);
		/* A failure is reported by whoever needs the bytes: a thread that waited for this
		 * fetch takes its error (give()), one that comes later tries again. */
		if (run)
			(void)fetch_taken(j.r, j.group, &err);
		pthread_mutex_lock(&j.r->mu);
		j.r->inflight--;
		pthread_cond_broadcast(&j.r->cv);
		pthread_mutex_unlock(&j.r->mu);
		pthread_mutex_lock(&fe->mu);
		fe->busy--;
	}
	pthread_mutex_unlock(&fe->mu);
	return NULL;
}

static struct slab_fetcher *fetcher_new(unsigned threads)
{
	struct slab_fetcher *fe = calloc(1, sizeof(*fe));

	if (!fe)
		return NULL;
	fe->tids = calloc(threads, sizeof(*fe->tids));
	if (!fe->tids) {
		free(fe);
		return NULL;
	}
	pthread_mutex_init(&fe->mu, NULL);
	pthread_cond_init(&fe->cv, NULL);
	pthread_cond_init(&fe->idle, NULL);
	fe->want_threads = threads;
	fe->refs = 1;
	return fe;
}

static void fetcher_put(struct slab_fetcher *fe)
{
	int last;

	if (!fe)
		return;
	pthread_mutex_lock(&fe->mu);
	last = --fe->refs == 0;
	if (last) {
		fe->stop = 1;
		pthread_cond_broadcast(&fe->cv);
	}
	pthread_mutex_unlock(&fe->mu);
	if (!last)
		return;
	for (unsigned t = 0; t < fe->nthreads; t++)
		pthread_join(fe->tids[t], NULL);
	pthread_mutex_destroy(&fe->mu);
	pthread_cond_destroy(&fe->cv);
	pthread_cond_destroy(&fe->idle);
	free(fe->q);
	free(fe->tids);
	free(fe);
}

/* Queue group g of r (fe->mu held). 0, or -1 when out of memory (the job is skipped: the
 * bytes are fetched when needed). */
static int push(struct slab_fetcher *fe, struct slab_remote *r, uint64_t g)
{
	if (fe->n == fe->cap) {
		size_t cap = fe->cap ? 2 * fe->cap : 256;
		struct job *q = malloc(cap * sizeof(*q));

		if (!q)
			return -1;
		for (size_t i = 0; i < fe->n; i++)
			q[i] = fe->q[(fe->head + i) % fe->cap];
		free(fe->q);
		fe->q = q;
		fe->cap = cap;
		fe->head = 0;
	}
	fe->q[(fe->head + fe->n) % fe->cap] = (struct job){ r, g };
	fe->n++;
	while (fe->nthreads < fe->want_threads && fe->nthreads < fe->busy + fe->n) {
		if (pthread_create(&fe->tids[fe->nthreads], NULL, fetcher_main, fe) != 0)
			break;
		fe->nthreads++;
	}
	pthread_cond_signal(&fe->cv);
	return 0;
}

void slab_remote_want(struct slab_remote *r, uint64_t off, uint64_t len)
{
	uint64_t p0, p1;

	after_fork(r);
	if (r->child)
		return;
	if (!groups_of(r, off, len, &p0, &p1))
		return;
	if (!r->fe && !(r->fe = fetcher_new(r->o.connections)))
		return;
	pthread_mutex_lock(&r->fe->mu);
	for (uint64_t g = p0; g < p1; g = r->gend[g]) {
		int q;

		if (group_present(r, g))
			continue;
		pthread_mutex_lock(&r->mu);
		q = r->queued[g] || r->busy[g];
		if (!q)
			r->queued[g] = 1;
		pthread_mutex_unlock(&r->mu);
		if (!q && push(r->fe, r, g) < 0) {
			pthread_mutex_lock(&r->mu);
			r->queued[g] = 0;
			pthread_mutex_unlock(&r->mu);
			break;
		}
	}
	pthread_mutex_unlock(&r->fe->mu);
}

void slab_remote_share_fetcher(struct slab_remote *r, const struct slab_remote *from)
{
	struct slab_fetcher *fe = from->fe;

	if (r->fe || !from || r->child || from->child)
		return;
	if (!fe) {
		/* The first file makes the pool the others share. */
		struct slab_remote *f = (struct slab_remote *)from;

		if (!(f->fe = fetcher_new(f->o.connections)))
			return;
		fe = f->fe;
	}
	pthread_mutex_lock(&fe->mu);
	fe->refs++;
	pthread_mutex_unlock(&fe->mu);
	r->fe = fe;
}

/* Take this remote's jobs off the shared queue and wait for those running. */
static void fetcher_forget(struct slab_remote *r)
{
	struct slab_fetcher *fe = r->fe;
	size_t k = 0;

	if (!fe)
		return;
	pthread_mutex_lock(&fe->mu);
	for (size_t i = 0; i < fe->n; i++) {
		struct job j = fe->q[(fe->head + i) % fe->cap];

		if (j.r != r)
			fe->q[(fe->head + k++) % fe->cap] = j;
	}
	fe->n = k;
	pthread_mutex_unlock(&fe->mu);
	pthread_mutex_lock(&r->mu);
	while (r->inflight)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

/* ---- the rest ---------------------------------------------------------------------------------- */

void slab_remote_stats_of(const struct slab_remote *r, struct slab_remote_stats *st)
{
	struct slab_net_stats ns;
	struct slab_remote *m = (struct slab_remote *)r;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->pages = r->npages;
	for (uint64_t p = 0; p < r->npages; p++) {
		if (present(r, p)) {
			uint64_t lo, hi;

			page_span(r, p, p + 1, &lo, &hi);
			st->pages_cached++;
			st->bytes_cached += hi - lo;
		}
	}
	pthread_mutex_lock(&m->stat_mu);
	st->fetched_bytes = r->fetched_bytes;
	st->fetches = r->fetches;
	st->refetches = r->refetches;
	st->dropped = r->dropped;
	pthread_mutex_unlock(&m->stat_mu);
	slab_net_stats(r->net, &ns);
	st->requests = ns.requests;
	st->retries = ns.retries;
}

int slab_remote_fetched_meta(const struct slab_remote *r)
{
	return r->tail != 0;
}

const char *slab_remote_local(const struct slab_remote *r)
{
	return r->data_path;
}

void slab_remote_cancel(struct slab_remote *r, int on)
{
	if (r && r->net)
		slab_net_cancel(r->net, on);
}

void slab_remote_close(struct slab_remote *r)
{
	if (!r)
		return;
	after_fork(r);          /* a child's: the parent's fetchers are not its to stop */
	/* Fetches of its groups in progress are cut off rather than waited for (stalled, one
	 * is retried until the timeout): nothing reads them any more. */
	if (r->net)
		slab_net_cancel(r->net, 1);
	fetcher_forget(r);
	fetcher_put(r->fe);
	if (r->state)
		munmap((void *)r->state, r->state_len);
	if (r->data_fd >= 0)
		close(r->data_fd);
	if (r->state_fd >= 0)
		close(r->state_fd);
	slab_net_close(r->net);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->stat_mu);
	free(r->gfirst);
	free(r->gend);
	free(r->s0);
	free(r->s1);
	free(r->busy);
	free(r->queued);
	free(r->dir);
	free(r->data_path);
	free(r->state_path);
	free(r->lock_path);
	free(r);
}
