/* pagecache.c: page-cache mechanics for one file: residency through cachestat(2) or
 * mincore(2), posix_fadvise advice, sequential warming, and O_DIRECT reads. */
#include "pagecache.h"
#include "slab.h"
#include "error.h"
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* cachestat(2) came with Linux 6.5, number 451 on every architecture but alpha; the C
 * library headers may predate it. */
#if !defined(__NR_cachestat) && !defined(__alpha__)
#define __NR_cachestat 451
#endif

struct cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* mincore looks at this much of the file per mapping: a bounded vector, a bounded mapping. */
#define MINCORE_WINDOW (1ull << 30)

struct slab_pagecache {
	char *name;
	int fd;
	int dfd;                /* O_DIRECT, or -1 */
	uint64_t size;
	struct slab_err err;
};

/* What messages name: the file, once there is one. */
static const char *who(const struct slab_pagecache *p)
{
	return p->name ? p->name : "(file)";
}

uint64_t slab_pagecache_os_page(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uint64_t)ps : 4096;
}

struct slab_pagecache *slab_pagecache_new(void)
{
	struct slab_pagecache *p = calloc(1, sizeof(*p));

	if (p)
		p->fd = p->dfd = -1;
	return p;
}

int slab_pagecache_open(struct slab_pagecache *p, const char *path)
{
	struct stat st;

	if (p->fd >= 0)
		return slab_fail(&p->err, SLAB_ERR_INVAL, who(p), "already open");
	free(p->name);
	p->name = strdup(path);
	if (!p->name) {
		return slab_fail(&p->err, SLAB_ERR_NOMEM, path, "out of memory");
	}
	p->fd = slab_open_read(path, &st);
	if (p->fd < 0)
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "is a directory");
	if (!S_ISREG(st.st_mode))
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "not a regular file");
	p->size = (uint64_t)st.st_size;
	return 0;
}

void slab_pagecache_close(struct slab_pagecache *p)
{
	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	if (p->dfd >= 0)
		close(p->dfd);
	free(p->name);
	free(p);
}

const char *slab_pagecache_error(const struct slab_pagecache *p)
{
	return p->err.text;
}

uint64_t slab_pagecache_size(const struct slab_pagecache *p)
{
	return p->size;
}

int slab_pagecache_fd(const struct slab_pagecache *p)
{
	return p->fd;
}

int slab_pagecache_direct_fd(const struct slab_pagecache *p)
{
	return p->dfd;
}

const char *slab_pagecache_name(const struct slab_pagecache *p)
{
	return p->name ? p->name : "";
}

/* [off, off + len) clipped to the file, len 0 meaning to the end; 0 when empty. */
static uint64_t clip(const struct slab_pagecache *p, uint64_t off, uint64_t len)
{
	if (off >= p->size)
		return 0;
	if (len == 0 || len > p->size - off)
		len = p->size - off;
	return len;
}

static int residency_mincore(struct slab_pagecache *p, uint64_t lo, uint64_t hi,
			     struct slab_pagecache_residency *out)
{
	uint64_t ps = slab_pagecache_os_page();
	unsigned char *vec = malloc((size_t)(MINCORE_WINDOW / ps));

	if (!vec)
		return slab_fail(&p->err, SLAB_ERR_NOMEM, who(p), "out of memory");
	for (uint64_t w = lo; w < hi; w += MINCORE_WINDOW) {
		size_t len = (size_t)(hi - w < MINCORE_WINDOW ? hi - w : MINCORE_WINDOW);
		void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, p->fd, (off_t)w);

		if (m == MAP_FAILED) {
			free(vec);
			return slab_fail(&p->err, SLAB_ERR_IO, who(p), "mmap: %s", strerror(errno));
		}
		if (mincore(m, len, vec) < 0) {
			int e = errno;
			munmap(m, len);
			free(vec);
			return slab_fail(&p->err, SLAB_ERR_IO, who(p), "mincore: %s", strerror(e));
		}
		for (size_t i = 0; i < (len + ps - 1) / ps; i++)
			out->resident += vec[i] & 1;
		munmap(m, len);
	}
	free(vec);
	out->dirty = UINT64_MAX;
	out->method = SLAB_PAGECACHE_MINCORE;
	return 0;
}

int slab_pagecache_residency(struct slab_pagecache *p, uint64_t off, uint64_t len, enum slab_pagecache_method how,
		      struct slab_pagecache_residency *out)
{
	uint64_t ps = slab_pagecache_os_page(), lo, hi;

	memset(out, 0, sizeof(*out));
	out->method = how;
	len = clip(p, off, len);
	if (len == 0)
		return 0;
	/* Whole OS pages: the first and last may hold bytes outside the range. */
	lo = off / ps * ps;
	hi = (off + len + ps - 1) / ps * ps;
	out->pages = (hi - lo) / ps;
#ifdef __NR_cachestat
	if (how == SLAB_PAGECACHE_AUTO) {
		struct cachestat_range r = { lo, hi - lo };
		struct cachestat cs;

		memset(&cs, 0, sizeof(cs));
		if (syscall(__NR_cachestat, p->fd, &r, &cs, 0u) == 0) {
			out->resident = cs.nr_cache < out->pages ? cs.nr_cache : out->pages;
			out->dirty = cs.nr_dirty;
			return 0;
		}
		if (errno != ENOSYS && errno != EPERM && errno != EOPNOTSUPP)
			return slab_fail(&p->err, SLAB_ERR_IO, who(p), "cachestat: %s", strerror(errno));
	}
#endif
	return residency_mincore(p, lo, hi, out);
}

int slab_pagecache_advise(struct slab_pagecache *p, uint64_t off, uint64_t len, enum slab_pagecache_advice advice)
{
	int a, r;

	switch (advice) {
	case SLAB_PAGECACHE_WILLNEED:   a = POSIX_FADV_WILLNEED; break;
	case SLAB_PAGECACHE_DONTNEED:   a = POSIX_FADV_DONTNEED; break;
	case SLAB_PAGECACHE_SEQUENTIAL: a = POSIX_FADV_SEQUENTIAL; break;
	default:
		return slab_fail(&p->err, SLAB_ERR_INVAL, who(p), "unknown advice %d", (int)advice);
	}
	/* posix_fadvise returns the error instead of setting errno. */
	r = posix_fadvise(p->fd, (off_t)off, (off_t)len, a);
	if (r != 0)
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "posix_fadvise: %s", strerror(r));
	return 0;
}

int slab_pagecache_warm(struct slab_pagecache *p, uint64_t chunk,
		 void (*progress)(uint64_t done, uint64_t total, void *arg), void *arg,
		 uint64_t *bytes)
{
	unsigned char *buf;
	uint64_t done = 0, total = p->size;
	int ret = 0;

	*bytes = 0;
	if (chunk == 0)
		chunk = 4ull << 20;
	buf = malloc((size_t)chunk);
	if (!buf)
		return slab_fail(&p->err, SLAB_ERR_NOMEM, who(p), "out of memory");
	/* Advice only: a filesystem that ignores it is still read. */
	(void)posix_fadvise(p->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	while (done < total) {
		size_t want = (size_t)(total - done < chunk ? total - done : chunk);
		ssize_t n;

		/* The next chunk is on its way while this one is copied out. */
		if (done + want < total)
			(void)posix_fadvise(p->fd, (off_t)(done + want), (off_t)chunk,
					    POSIX_FADV_WILLNEED);
		n = pread(p->fd, buf, want, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = slab_fail(&p->err, SLAB_ERR_IO, who(p), "read error at offset %llu: %s",
				   (unsigned long long)done, strerror(errno));
			break;
		}
		if (n == 0)
			break;  /* the file shrank since it was opened: what is there is warm */
		done += (uint64_t)n;
		*bytes = done;
		if (progress)
			progress(done, total, arg);
	}
	free(buf);
	return ret;
}

int slab_pagecache_direct_open(struct slab_pagecache *p)
{
	if (p->dfd >= 0)
		return 0;
	if (!p->name)
		return slab_fail(&p->err, SLAB_ERR_INVAL, who(p), "not open");
	p->dfd = open(p->name, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (p->dfd < 0 && errno == EINVAL)
		return slab_fail(&p->err, SLAB_ERR_INVAL, who(p), "the filesystem does not support O_DIRECT");
	if (p->dfd < 0)
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "%s", strerror(errno));
	return 0;
}

size_t slab_pagecache_direct_span(uint64_t len)
{
	return (size_t)((len + 2 * SLAB_PAGECACHE_ALIGN - 2) / SLAB_PAGECACHE_ALIGN * SLAB_PAGECACHE_ALIGN);
}

void *slab_pagecache_alloc(size_t n)
{
	void *m = NULL;

	if (posix_memalign(&m, SLAB_PAGECACHE_ALIGN, n ? n : SLAB_PAGECACHE_ALIGN) != 0)
		return NULL;
	return m;
}

int slab_pagecache_direct_read(struct slab_pagecache *p, uint64_t off, uint64_t len, unsigned char *buf,
			size_t cap, const unsigned char **data)
{
	uint64_t start, end, span, done = 0;

	if (p->dfd < 0)
		return slab_fail(&p->err, SLAB_ERR_INVAL, who(p), "not open for O_DIRECT");
	if (off > p->size || len > p->size - off)
		return slab_fail(&p->err, SLAB_ERR_RANGE, who(p), "%llu bytes at offset %llu are past the end of the file",
			    (unsigned long long)len, (unsigned long long)off);
	*data = buf + off % SLAB_PAGECACHE_ALIGN;
	if (len == 0)
		return 0;
	start = off / SLAB_PAGECACHE_ALIGN * SLAB_PAGECACHE_ALIGN;
	end = (off + len + SLAB_PAGECACHE_ALIGN - 1) / SLAB_PAGECACHE_ALIGN * SLAB_PAGECACHE_ALIGN;
	span = end - start;
	if (span > cap || ((uintptr_t)buf % SLAB_PAGECACHE_ALIGN) != 0)
		return slab_fail(&p->err, SLAB_ERR_RANGE, who(p), "direct read of %llu bytes does not fit its buffer",
			    (unsigned long long)span);
	while (done < span) {
		ssize_t n = pread(p->dfd, buf + done, (size_t)(span - done), (off_t)(start + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EINVAL)
			return slab_fail(&p->err, SLAB_ERR_INVAL, who(p),
				    "the filesystem refused an O_DIRECT read at offset %llu",
				    (unsigned long long)(start + done));
		if (n < 0)
			return slab_fail(&p->err, SLAB_ERR_IO, who(p), "read error at offset %llu: %s",
				    (unsigned long long)(start + done), strerror(errno));
		if (n == 0)
			break;
		done += (uint64_t)n;
		/* Only the file's end gives a read that stops inside a block. */
		if ((uint64_t)n % SLAB_PAGECACHE_ALIGN)
			break;
	}
	if (start + done < off + len)
		return slab_fail(&p->err, SLAB_ERR_IO, who(p), "short read at offset %llu (the file shrank?)",
			    (unsigned long long)(start + done));
	return 0;
}
