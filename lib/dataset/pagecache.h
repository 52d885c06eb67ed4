/* pagecache.h: one file's pages in the kernel page cache: how many are resident, warming,
 * eviction, advice on byte ranges, and reads that bypass the cache (O_DIRECT). Any regular
 * file, .slab or not. Never prints. */
#ifndef SLAB_PAGECACHE_H
#define SLAB_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

/* O_DIRECT offsets, lengths and buffers are multiples of this. */
#define SLAB_PAGECACHE_ALIGN 4096u

struct slab_pagecache;

/* How slab_pagecache_residency() counts. */
enum slab_pagecache_method {
	SLAB_PAGECACHE_AUTO,           /* cachestat(2) where the kernel has it (Linux 6.5), else mincore */
	SLAB_PAGECACHE_MINCORE,        /* mincore(2) over a temporary mapping, window by window */
};

struct slab_pagecache_residency {
	uint64_t pages;         /* OS pages the range spans (the last one may be partial) */
	uint64_t resident;      /* of which in the page cache */
	uint64_t dirty;         /* of which dirty; UINT64_MAX when unknown (mincore) */
	enum slab_pagecache_method method;     /* the one used */
};

/* A new, unopened context; NULL only when out of memory. Free with slab_pagecache_close(). */
struct slab_pagecache *slab_pagecache_new(void);

/* Open a regular file read-only. 0, or SLAB_ERR_IO with the reason (naming the file) in
 * slab_pagecache_error(). */
int slab_pagecache_open(struct slab_pagecache *p, const char *path);

/* Closes both descriptors and frees; accepts NULL. */
void slab_pagecache_close(struct slab_pagecache *p);

const char *slab_pagecache_error(const struct slab_pagecache *p);
uint64_t slab_pagecache_size(const struct slab_pagecache *p);
/* The path it was opened with. */
const char *slab_pagecache_name(const struct slab_pagecache *p);
/* The descriptor, for callers that read through it; and the O_DIRECT one, or -1. */
int slab_pagecache_fd(const struct slab_pagecache *p);
int slab_pagecache_direct_fd(const struct slab_pagecache *p);

/* The unit residency is counted in: the OS page size (4 KiB on x86-64). */
uint64_t slab_pagecache_os_page(void);

/* Resident pages of [off, off + len), clipped to the file; len 0 means to the end. A 0-byte
 * file has 0 pages. Since Linux 5.2 mincore sees the page cache only of files the caller
 * owns or may write (otherwise only the pages this process maps, i.e. none); where
 * cachestat is refused (ENOSYS, EPERM) AUTO falls back to mincore. 0 or SLAB_ERR_IO. */
int slab_pagecache_residency(struct slab_pagecache *p, uint64_t off, uint64_t len, enum slab_pagecache_method how,
		      struct slab_pagecache_residency *out);

enum slab_pagecache_advice {
	SLAB_PAGECACHE_WILLNEED,       /* start reading the range in, do not wait */
	SLAB_PAGECACHE_DONTNEED,       /* drop its clean, unmapped pages from the cache */
	SLAB_PAGECACHE_SEQUENTIAL,     /* larger readahead for the whole file */
};

/* posix_fadvise over [off, off + len) (len 0: to the end). DONTNEED drops only clean pages
 * that no process maps: dirty pages are written back first (it starts that, it does not wait)
 * and stay until a later call, and pages mapped anywhere stay. No privilege needed.
 * 0 or SLAB_ERR_IO. */
int slab_pagecache_advise(struct slab_pagecache *p, uint64_t off, uint64_t len, enum slab_pagecache_advice advice);

/* Read the whole file through the cache, sequentially, in chunks of chunk bytes (0: 4 MiB)
 * with the next chunk advised WILLNEED while this one is read. progress, when not NULL, is
 * called after each chunk. *bytes gets the bytes read (also on failure). 0 or SLAB_ERR_IO
 * (a read error, or the file shrank under us). */
int slab_pagecache_warm(struct slab_pagecache *p, uint64_t chunk,
		 void (*progress)(uint64_t done, uint64_t total, void *arg), void *arg,
		 uint64_t *bytes);

/* Open a second descriptor with O_DIRECT for slab_pagecache_direct_read(). 0, or SLAB_ERR_INVAL
 * when the filesystem does not do O_DIRECT (message says so), or SLAB_ERR_IO. */
int slab_pagecache_direct_open(struct slab_pagecache *p);

/* Read [off, off + len) with O_DIRECT: the aligned span around it (off rounded down, the end
 * rounded up to SLAB_PAGECACHE_ALIGN, at most to the file's end rounded up) into buf, which is
 * SLAB_PAGECACHE_ALIGN-aligned and holds cap bytes. *data gets the byte at off. 0, SLAB_ERR_RANGE
 * (the range is not inside the file, or the span exceeds cap), SLAB_ERR_INVAL (the
 * filesystem refused the direct read), SLAB_ERR_IO. */
int slab_pagecache_direct_read(struct slab_pagecache *p, uint64_t off, uint64_t len, unsigned char *buf,
			size_t cap, const unsigned char **data);

/* The buffer size slab_pagecache_direct_read() needs for len bytes at any offset. */
size_t slab_pagecache_direct_span(uint64_t len);

/* A SLAB_PAGECACHE_ALIGN-aligned buffer of n bytes (free with free()), or NULL. */
void *slab_pagecache_alloc(size_t n);

#endif
