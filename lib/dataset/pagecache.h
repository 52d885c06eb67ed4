/* pagecache.h: one file's pages in the kernel page cache: how many are resident, warming,
 * eviction, advice on byte ranges, and reads that bypass the cache (O_DIRECT). Any regular
 * file, .slab or not. Never prints. */
#ifndef SLAB_PAGECACHE_H
#define SLAB_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

/* O_DIRECT offsets, lengths and buffers are multiples of this. */
#define SLAB_PC_ALIGN 4096u

struct slab_pc;

/* How slab_pc_residency() counts. */
enum slab_pc_method {
	SLAB_PC_AUTO,           /* cachestat(2) where the kernel has it (Linux 6.5), else mincore */
	SLAB_PC_MINCORE,        /* mincore(2) over a temporary mapping, window by window */
};

struct slab_pc_residency {
	uint64_t pages;         /* OS pages the range spans (the last one may be partial) */
	uint64_t resident;      /* of which in the page cache */
	uint64_t dirty;         /* of which dirty; UINT64_MAX when unknown (mincore) */
	enum slab_pc_method method;     /* the one used */
};

/* A new, unopened context; NULL only when out of memory. Free with slab_pc_close(). */
struct slab_pc *slab_pc_new(void);

/* Open a regular file read-only. 0, or SLAB_ERR_IO with the reason (naming the file) in
 * slab_pc_error(). */
int slab_pc_open(struct slab_pc *p, const char *path);

/* Closes both descriptors and frees; accepts NULL. */
void slab_pc_close(struct slab_pc *p);

const char *slab_pc_error(const struct slab_pc *p);
uint64_t slab_pc_size(const struct slab_pc *p);
/* The path it was opened with. */
const char *slab_pc_name(const struct slab_pc *p);
/* The descriptor, for callers that read through it; and the O_DIRECT one, or -1. */
int slab_pc_fd(const struct slab_pc *p);
int slab_pc_direct_fd(const struct slab_pc *p);

/* The unit residency is counted in: the OS page size (4 KiB on x86-64). */
uint64_t slab_pc_os_page(void);

/* Resident pages of [off, off + len), clipped to the file; len 0 means to the end. A 0-byte
 * file has 0 pages. Since Linux 5.2 mincore sees the page cache only of files the caller
 * owns or may write (otherwise only the pages this process maps, i.e. none); where
 * cachestat is refused (ENOSYS, EPERM) AUTO falls back to mincore. 0 or SLAB_ERR_IO. */
int slab_pc_residency(struct slab_pc *p, uint64_t off, uint64_t len, enum slab_pc_method how,
		      struct slab_pc_residency *out);

enum slab_pc_advice {
	SLAB_PC_WILLNEED,       /* start reading the range in, do not wait */
	SLAB_PC_DONTNEED,       /* drop its clean, unmapped pages from the cache */
	SLAB_PC_SEQUENTIAL,     /* larger readahead for the whole file */
};

/* posix_fadvise over [off, off + len) (len 0: to the end). DONTNEED drops only clean pages
 * that no process maps: dirty pages are written back first (it starts that, it does not wait)
 * and stay until a later call, and pages mapped anywhere stay. No privilege needed.
 * 0 or SLAB_ERR_IO. */
int slab_pc_advise(struct slab_pc *p, uint64_t off, uint64_t len, enum slab_pc_advice advice);

/* Read the whole file through the cache, sequentially, in chunks of chunk bytes (0: 4 MiB)
 * with the next chunk advised WILLNEED while this one is read. progress, when not NULL, is
 * called after each chunk. *bytes gets the bytes read (also on failure). 0 or SLAB_ERR_IO
 * (a read error, or the file shrank under us). */
int slab_pc_warm(struct slab_pc *p, uint64_t chunk,
		 void (*progress)(uint64_t done, uint64_t total, void *arg), void *arg,
		 uint64_t *bytes);

/* Open a second descriptor with O_DIRECT for slab_pc_direct_read(). 0, or SLAB_ERR_INVAL
 * when the filesystem does not do O_DIRECT (message says so), or SLAB_ERR_IO. */
int slab_pc_direct_open(struct slab_pc *p);

/* Read [off, off + len) with O_DIRECT: the aligned span around it (off rounded down, the end
 * rounded up to SLAB_PC_ALIGN, at most to the file's end rounded up) into buf, which is
 * SLAB_PC_ALIGN-aligned and holds cap bytes. *data gets the byte at off. 0, SLAB_ERR_RANGE
 * (the range is not inside the file, or the span exceeds cap), SLAB_ERR_INVAL (the
 * filesystem refused the direct read), SLAB_ERR_IO. */
int slab_pc_direct_read(struct slab_pc *p, uint64_t off, uint64_t len, unsigned char *buf,
			size_t cap, const unsigned char **data);

/* The buffer size slab_pc_direct_read() needs for len bytes at any offset. */
size_t slab_pc_direct_span(uint64_t len);

/* A SLAB_PC_ALIGN-aligned buffer of n bytes (free with free()), or NULL. */
void *slab_pc_alloc(size_t n);

#endif
