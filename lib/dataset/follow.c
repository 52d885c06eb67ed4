/* follow.c: a plan walked over its .slab files with a look-ahead window of pages. The window
 * holds the entries from the consumer's position on, as many as fit in `ahead` distinct
 * pages (and any further ones on pages it holds already). As entries enter, runs of samples
 * adjacent in the file are gathered, and each run is either advised WILLNEED (the kernel
 * reads it into the page cache while the consumer works) or, with direct, read with
 * O_DIRECT into a buffer of its own, several runs in flight through Linux AIO; an entry whose
 * bytes a buffer holds already shares it, and the buffers stay within ahead pages. A page is
 * dropped once the consumer is past its last use, found in one pass over the plan beforehand
 * (a quasi-random plan comes back to a page several times). */
#include "error.h"
#include "errfmt.h"
#include "fault.h"
#include "follow.h"
#include "pagecache.h"
#include "plan.h"
#include "reader.h"
#include "sized.h"
#include "slab.h"

#include <errno.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NONE UINT64_MAX
#define NO_EXTENT UINT32_MAX
/* A page whose remaining uses all fall within this many entries (times --ahead) of the one
 * bringing it into the window is read whole, in one request: a quasi-random plan uses all of
 * a live page within about window x samples-per-page entries, a random plan almost never. */
#define WHOLE_HORIZON 64u
/* A WILLNEED run is advised once it is this long. */
#define RUN_MAX (1ull << 20)
/* A direct read covers at most this much, unless one sample is larger... */
#define DIRECT_RUN_MAX (2ull << 20)
/* ...and skips a gap (padding before a page boundary) up to this size rather than split. */
#define DIRECT_GAP (64u << 10)
/* Direct reads in flight at once. */
#define AIO_DEPTH 32

enum ext_state { EXT_FREE, EXT_LAZY, EXT_QUEUED, EXT_INFLIGHT, EXT_READY };

/* One direct read: a run of adjacent samples, aligned for O_DIRECT. */
struct extent {
	enum ext_state state;
	uint32_t file;
	uint64_t lo, hi;
	unsigned char *buf;
	size_t cap;
	uint32_t refs;          /* window entries still to use it */
	uint32_t qnext;         /* submission queue link */
};

struct slab_follow {
	struct slab *const *files;
	struct slab_pagecache **pcs;
	uint32_t nfiles;
	const struct slab_plan *plan;
	struct slab_follow_options o;

	uint64_t *page_base;    /* first global page of each file, [nfiles + 1] */
	uint64_t npages;
	uint64_t *last;         /* entry index of each page's last use, NONE if unused */
	uint32_t *count;        /* entries in the window on each page */
	unsigned char *whole;   /* page advised whole already */
	unsigned char *counted; /* page counts toward the window (it was not on its way yet) */

	uint64_t cur;           /* the next entry to hand out */
	uint64_t head;          /* the first entry not yet in the window */
	uint64_t window;        /* distinct pages in the window */

	/* The run being gathered: entries [run_first, run_end) with bytes [run_lo, run_hi) of
	 * file run_file; it is closed at the latest when the consumer reaches run_first. */
	int run_open;
	uint32_t run_file, run_refs;
	uint64_t run_lo, run_hi, run_first, run_end;

	/* direct */
	uint32_t *ext_of;       /* extent of each entry, NO_EXTENT for an empty sample */
	uint32_t *ext2_of;      /* the second extent of an entry two hold between them, or NO_EXTENT */
	unsigned char *bounce;  /* such an entry's bytes, put together */
	size_t bounce_cap;
	struct extent *ext;
	uint32_t next, slots, *free_ids, nfree;
	uint32_t q_head, q_tail;
	/* The live extent holding each 4 KiB block of a page, NO_EXTENT for none: an array per
	 * page, there only while the page has such blocks (nheld of them). A sample whose
	 * bytes an extent holds already shares it: many samples on few pages cost a page's
	 * bytes, not a read and a buffer each. */
	uint32_t **holder;
	uint32_t *nheld;
	uint64_t buffered;
	uint64_t budget;        /* most bytes in buffers: ahead x the largest page size */
	uint64_t spare;         /* bytes of the buffers free extents keep for reuse */
	int faulted;            /* a read of a mapping faulted: the error, returned again */
	aio_context_t ctx;
	int ctx_ok;             /* ctx set up: destroy it at the end */
	int aio;                /* new reads go through ctx */
	uint32_t inflight;

	/* Several plans: put together in own, entries [ends[k-1], ends[k]) from plan k, whose
	 * first entry is at position starts[k] of its own plan. Entries below stop are handed
	 * out. */
	struct slab_plan *own;
	uint64_t *ends, *starts;
	size_t nplans;
	size_t epoch;           /* plan of the entry at cur - 1 */
	size_t head_epoch;      /* plan of the entry at head */
	uint64_t stop;

	/* Each page's uses, in order (uses[use_off[g] .. use_off[g + 1])), and where the walk
	 * is in them (use_cur): with several plans or a memory budget. */
	uint32_t *uses;
	uint64_t *use_off, *use_cur;
	/* The memory budget: the kept pages (out of the window, in the cache) as a max-heap
	 * on their next use; hpos[g] is g's place in it plus one, 0 when not kept. */
	uint64_t *heap, *hpos, *hkey, nheap;
	uint64_t kept_bytes, win_bytes, fixed_bytes, fixed_cap;
	unsigned char *fixed;   /* SLAB_CACHE_FIXED: the page is one of the set */
	unsigned char *quasi;   /* plan k is quasi: the set's room counts its live pages */

	/* URLs: remote[i] when file i is read through the local cache; punch: the budget is
	 * the local cache's (options.disk), and a page dropped leaves it. */
	unsigned char *remote;
	int punch;

	pid_t pid;              /* the process that opened the walk */

	struct slab_follow_stats st;
	struct slab_err err;
};

/* The sizes of the first versions of the caller's structs (sized.h). */
#define FOLLOW_OPTIONS_FIRST offsetof(struct slab_follow_options, disk)
#define FOLLOW_STATS_FIRST SLAB_SIZED_END(struct slab_follow_stats, adopted)

/* Where entry e is: its sample, and the global pages [*g, *g + *k) its bytes lie in (none
 * for an empty sample). */
static int locate(struct slab_follow *f, uint64_t e, struct slab_sample *smp, uint64_t *g,
		  uint64_t *k)
{
	const struct slab_plan_entry *en = &f->plan->entries[e];
	struct slab *s;
	uint64_t ps, d;

	if (en->file >= f->nfiles)
		return slab_fail(&f->err, SLAB_ERR_RANGE, NULL, "plan entry %llu names file %u of %u",
			    (unsigned long long)e, en->file, f->nfiles);
	s = f->files[en->file];
	if (slab_sample(s, en->sample, smp) < 0)
		return slab_fail_from(&f->err, SLAB_ERR_CORRUPT, slab_error(s));
	ps = slab_page_size(s);
	d = slab_data_offset(s);
	*g = f->page_base[en->file] + (smp->offset - d) / ps;
	*k = smp->size ? (smp->offset + smp->size - 1 - d) / ps + 1 - (smp->offset - d) / ps : 0;
	if (smp->size && f->remote[en->file]) {
		/* A URL's pages come in page groups: a sample holds its whole group in the
		 * window (and the budget counts all of it), so no page fetched with it is
		 * left in the cache uncounted. */
		uint64_t first, end;

		slab_page_group(s, (smp->offset - d) / ps, &first, &end);
		*g = f->page_base[en->file] + first;
		*k = end - first;
	}
	return 0;
}

/* ---- direct reads: extents, Linux AIO, and the synchronous fallback ---------------------- */

static long sys_io_setup(unsigned n, aio_context_t *ctx)
{
	return syscall(__NR_io_setup, n, ctx);
}

static long sys_io_destroy(aio_context_t ctx)
{
	return syscall(__NR_io_destroy, ctx);
}

static long sys_io_submit(aio_context_t ctx, long n, struct iocb **cbs)
{
	return syscall(__NR_io_submit, ctx, n, cbs);
}

static long sys_io_getevents(aio_context_t ctx, long min, long max, struct io_event *ev)
{
#ifdef __NR_io_getevents
	return syscall(__NR_io_getevents, ctx, min, max, ev, NULL);
#else
	return syscall(__NR_io_pgetevents, ctx, min, max, ev, NULL, NULL);
#endif
}

static void queue_push(struct slab_follow *f, uint32_t id)
{
	f->ext[id].qnext = NO_EXTENT;
	if (f->q_tail == NO_EXTENT)
		f->q_head = id;
	else
		f->ext[f->q_tail].qnext = id;
	f->q_tail = id;
}

/* AIO gave up: what is queued is read when it is needed. */
static void aio_off(struct slab_follow *f)
{
	f->aio = 0;
	for (uint32_t id = f->q_head; id != NO_EXTENT; id = f->ext[id].qnext)
		f->ext[id].state = EXT_LAZY;
	f->q_head = f->q_tail = NO_EXTENT;
}

static int direct_error(struct slab_follow *f, const struct extent *x, int e)
{
	const char *name = slab_pagecache_name(f->pcs[x->file]);

	if (e == EINVAL)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "'%s': the filesystem refused an O_DIRECT read at offset %llu",
			    name, (unsigned long long)x->lo);
	return slab_fail(&f->err, SLAB_ERR_IO, NULL, "'%s': read error at offset %llu: %s", name,
		    (unsigned long long)x->lo, strerror(e));
}

/* Submit what is queued, as far as the depth allows. */
static int pump(struct slab_follow *f)
{
	struct iocb cbs[AIO_DEPTH], *ptrs[AIO_DEPTH];
	uint32_t ids[AIO_DEPTH];
	long n = 0, done;

	while (f->aio && f->q_head != NO_EXTENT && f->inflight + (uint32_t)n < AIO_DEPTH) {
		uint32_t id = f->q_head;
		struct extent *x = &f->ext[id];

		f->q_head = x->qnext;
		if (f->q_head == NO_EXTENT)
			f->q_tail = NO_EXTENT;
		memset(&cbs[n], 0, sizeof(cbs[n]));
		cbs[n].aio_data = id;
		cbs[n].aio_lio_opcode = IOCB_CMD_PREAD;
		cbs[n].aio_fildes = (uint32_t)slab_pagecache_direct_fd(f->pcs[x->file]);
		cbs[n].aio_buf = (uint64_t)(uintptr_t)x->buf;
		cbs[n].aio_nbytes = x->hi - x->lo;
		cbs[n].aio_offset = (int64_t)x->lo;
		ptrs[n] = &cbs[n];
		ids[n] = id;
		n++;
	}
	if (n == 0)
		return 0;
	done = sys_io_submit(f->ctx, n, ptrs);
	if (done < 0)
		done = 0;
	for (long i = 0; i < n; i++)
		f->ext[ids[i]].state = i < done ? EXT_INFLIGHT : EXT_LAZY;
	f->inflight += (uint32_t)done;
	/* Not all taken (the kernel is out of AIO slots, or refuses AIO on this file): the rest,
	 * and all later reads, go the synchronous way. */
	if (done < n)
		aio_off(f);
	return 0;
}

/* Synchronous read of extent id. */
static int read_now(struct slab_follow *f, uint32_t id)
{
	struct extent *x = &f->ext[id];
	const unsigned char *data;
	int r = slab_pagecache_direct_read(f->pcs[x->file], x->lo, x->hi - x->lo, x->buf, x->cap, &data);

	if (r < 0)
		return slab_fail_from(&f->err, r, slab_pagecache_error(f->pcs[x->file]));
	x->state = EXT_READY;
	return 0;
}

/* Wait for at least one read in flight. */
static int reap(struct slab_follow *f)
{
	struct io_event ev[AIO_DEPTH];
	long n;

	do
		n = sys_io_getevents(f->ctx, 1, AIO_DEPTH, ev);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return slab_fail(&f->err, SLAB_ERR_IO, NULL, "io_getevents: %s", strerror(errno));
	for (long i = 0; i < n; i++) {
		uint32_t id = (uint32_t)ev[i].data;
		struct extent *x = &f->ext[id];

		f->inflight--;
		if (ev[i].res < 0)
			return direct_error(f, x, (int)-ev[i].res);
		x->state = EXT_READY;
		/* Short only at the end of a file that shrank: let the plain read say so. */
		if ((uint64_t)ev[i].res < x->hi - x->lo && read_now(f, id) < 0)
			return SLAB_ERR_IO;
	}
	return 0;
}

static int wait_ready(struct slab_follow *f, uint32_t id)
{
	int r;

	while (f->ext[id].state != EXT_READY) {
		if (f->ext[id].state == EXT_LAZY)
			return read_now(f, id);
		if ((r = pump(f)) < 0)
			return r;
		if (f->ext[id].state == EXT_INFLIGHT && (r = reap(f)) < 0)
			return r;
	}
	return pump(f);
}

/* The holder slot of the 4 KiB block at off (a multiple of 4 KiB in the data) of file, with
 * its page's array made when make is set; NULL when there is none (or no memory). */
static uint32_t *holder_slot(struct slab_follow *f, uint32_t file, uint64_t off, int make)
{
	struct slab *s = f->files[file];
	uint64_t ps = slab_page_size(s), d = off - slab_data_offset(s);
	uint64_t g = f->page_base[file] + d / ps;

	if (off < slab_data_offset(s) || g >= f->page_base[file + 1])
		return NULL;
	if (!f->holder[g]) {
		if (!make)
			return NULL;
		f->holder[g] = malloc((size_t)(ps / SLAB_PAGECACHE_ALIGN) * sizeof(**f->holder));
		if (!f->holder[g])
			return NULL;
		memset(f->holder[g], 0xff, (size_t)(ps / SLAB_PAGECACHE_ALIGN) * sizeof(**f->holder));
	}
	return &f->holder[g][d % ps / SLAB_PAGECACHE_ALIGN];
}

static uint32_t holder_of(struct slab_follow *f, uint32_t file, uint64_t off)
{
	const uint32_t *h = holder_slot(f, file, off, 0);

	return h ? *h : NO_EXTENT;
}

/* Extent id holds its blocks from now on (the newest extent is the one kept longest). */
static int hold(struct slab_follow *f, uint32_t id)
{
	const struct extent *x = &f->ext[id];

	for (uint64_t b = x->lo; b < x->hi; b += SLAB_PAGECACHE_ALIGN) {
		struct slab *s = f->files[x->file];
		uint32_t *h = holder_slot(f, x->file, b, 1);

		if (!h)
			return b < slab_table_offset(s) ? SLAB_ERR_NOMEM : 0;
		if (*h == NO_EXTENT)
			f->nheld[f->page_base[x->file] + (b - slab_data_offset(s)) / slab_page_size(s)]++;
		*h = id;
	}
	return 0;
}

static void unhold(struct slab_follow *f, uint32_t id)
{
	const struct extent *x = &f->ext[id];

	for (uint64_t b = x->lo; b < x->hi; b += SLAB_PAGECACHE_ALIGN) {
		struct slab *s = f->files[x->file];
		uint32_t *h = holder_slot(f, x->file, b, 0);
		uint64_t g;

		if (!h || *h != id)
			continue;
		*h = NO_EXTENT;
		g = f->page_base[x->file] + (b - slab_data_offset(s)) / slab_page_size(s);
		if (--f->nheld[g] == 0) {
			free(f->holder[g]);
			f->holder[g] = NULL;
		}
	}
}

/* A live extent holding all of [lo, hi) of file, or NO_EXTENT. */
static uint32_t covering(struct slab_follow *f, uint32_t file, uint64_t lo, uint64_t hi)
{
	uint32_t id[2] = { holder_of(f, file, lo), holder_of(f, file, hi - SLAB_PAGECACHE_ALIGN) };

	for (int i = 0; i < 2; i++)
		if (id[i] != NO_EXTENT && f->ext[id[i]].lo <= lo && hi <= f->ext[id[i]].hi)
			return id[i];
	return NO_EXTENT;
}

/* Two live extents, back to back or overlapping, holding [lo, hi) of file between them: 1 and
 * *a (from lo) and *b (to hi), else 0. A sample across the boundary of two reads (and there
 * is one at nearly every block boundary when samples are small) is put together from them
 * rather than read a third time. */
static int covering2(struct slab_follow *f, uint32_t file, uint64_t lo, uint64_t hi,
		     uint32_t *a, uint32_t *b)
{
	uint32_t x = holder_of(f, file, lo), y = holder_of(f, file, hi - SLAB_PAGECACHE_ALIGN);

	if (x == NO_EXTENT || y == NO_EXTENT || x == y || f->ext[x].hi < f->ext[y].lo)
		return 0;
	*a = x;
	*b = y;
	return 1;
}

/* A new extent for the run just closed; queued (or left for later without AIO). */
static int extent_new(struct slab_follow *f)
{
	uint64_t len = f->run_hi - f->run_lo;
	struct extent *x;
	uint32_t id;

	if (f->nfree) {
		id = f->free_ids[--f->nfree];
	} else {
		if (f->next == f->slots) {
			uint32_t slots = f->slots ? 2 * f->slots : 64;
			struct extent *n = realloc(f->ext, (size_t)slots * sizeof(*n));
			uint32_t *ids;

			if (!n)
				return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
			f->ext = n;
			ids = realloc(f->free_ids, (size_t)slots * sizeof(*ids));
			if (!ids)
				return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
			f->free_ids = ids;
			f->slots = slots;
		}
		id = f->next++;
		memset(&f->ext[id], 0, sizeof(f->ext[id]));
	}
	x = &f->ext[id];
	f->spare -= x->cap;
	/* A kept buffer is used again when it fits and is not more than twice the size. */
	if (x->cap < len || x->cap / 2 > len) {
		free(x->buf);
		x->buf = slab_pagecache_alloc((size_t)len);
		x->cap = x->buf ? (size_t)len : 0;
		if (!x->buf) {
			f->free_ids[f->nfree++] = id;
			return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		}
	}
	x->file = f->run_file;
	x->lo = f->run_lo;
	x->hi = f->run_hi;
	x->refs = f->run_refs;
	if (hold(f, id) < 0) {
		unhold(f, id);
		free(x->buf);
		x->buf = NULL;
		x->cap = 0;
		f->free_ids[f->nfree++] = id;
		return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	}
	for (uint64_t e = f->run_first; e < f->run_end; e++)
		if (f->ext_of[e] == NO_EXTENT - 1)
			f->ext_of[e] = id;
	f->st.direct_reads++;
	f->st.direct_bytes += len;
	f->buffered += len;
	if (f->buffered > f->st.max_buffered)
		f->st.max_buffered = f->buffered;
	if (f->aio) {
		x->state = EXT_QUEUED;
		queue_push(f, id);
		return pump(f);
	}
	x->state = EXT_LAZY;
	return 0;
}

static void extent_put(struct slab_follow *f, uint32_t id)
{
	struct extent *x = &f->ext[id];

	if (--x->refs > 0)
		return;
	unhold(f, id);
	/* Its buffer is kept for the next extent, as long as those kept add up to no more than
	 * the budget. */
	if (f->spare + x->cap <= f->budget) {
		f->spare += x->cap;
	} else {
		free(x->buf);
		x->buf = NULL;
		x->cap = 0;
	}
	x->state = EXT_FREE;
	f->buffered -= x->hi - x->lo;
	f->free_ids[f->nfree++] = id;
}

/* ---- the window ---------------------------------------------------------------------------- */

/* The bytes of global page g: [*lo, *hi) in file *file. */
static void page_range(const struct slab_follow *f, uint64_t g, uint32_t *file, uint64_t *lo,
		       uint64_t *hi)
{
	uint32_t fi = 0;
	struct slab *s;

	/* Few files: a linear search is fine, and runs only on release. */
	while (fi + 1 < f->nfiles && g >= f->page_base[fi + 1])
		fi++;
	s = f->files[fi];
	*file = fi;
	*lo = slab_data_offset(s) + (g - f->page_base[fi]) * slab_page_size(s);
	*hi = *lo + slab_page_size(s);
	if (*hi > slab_table_offset(s))
		*hi = slab_table_offset(s);
}

static int close_run(struct slab_follow *f)
{
	struct slab_pagecache *pc;

	if (!f->run_open)
		return 0;
	f->run_open = 0;
	if (f->o.direct)
		return extent_new(f);
	pc = f->pcs[f->run_file];
	f->st.advised++;
	if (f->remote[f->run_file]) {
		slab_fetch_ahead(f->files[f->run_file], f->run_lo, f->run_hi - f->run_lo);
		return 0;
	}
	if (slab_pagecache_advise(pc, f->run_lo, f->run_hi - f->run_lo, SLAB_PAGECACHE_WILLNEED) < 0)
		return slab_fail_from(&f->err, SLAB_ERR_IO, slab_pagecache_error(pc));
	return 0;
}

/* The 4 KiB blocks [*lo, *hi) holding a sample. */
static void blocks(const struct slab_sample *smp, uint64_t *lo, uint64_t *hi)
{
	*lo = smp->offset / SLAB_PAGECACHE_ALIGN * SLAB_PAGECACHE_ALIGN;
	*hi = (smp->offset + smp->size + SLAB_PAGECACHE_ALIGN - 1) / SLAB_PAGECACHE_ALIGN * SLAB_PAGECACHE_ALIGN;
}

/* Can the blocks [lo, hi) of file join the run being gathered? */
static int joins_run(struct slab_follow *f, uint32_t file, uint64_t lo, uint64_t hi)
{
	uint64_t gap = f->o.direct ? DIRECT_GAP : SLAB_PAGECACHE_ALIGN;
	uint64_t max = f->o.direct ? DIRECT_RUN_MAX : UINT64_MAX;

	if (!f->run_open || file != f->run_file || lo < f->run_lo || lo > f->run_hi + gap ||
	    (hi > f->run_hi ? hi : f->run_hi) - f->run_lo > max)
		return 0;
	/* Not across blocks a live extent holds: they would be read and buffered twice. */
	if (f->o.direct)
		for (uint64_t b = f->run_hi; b < lo; b += SLAB_PAGECACHE_ALIGN)
			if (holder_of(f, file, b) != NO_EXTENT)
				return 0;
	return 1;
}

/* With direct, would entry e keep the buffers within the budget? Counts the run being
 * gathered as buffered already, and what e adds to it or starts anew: nothing when an
 * extent holds its blocks already. */
static int direct_room(struct slab_follow *f, uint64_t e)
{
	struct slab_sample smp;
	uint64_t g, k, lo, hi, add;
	uint32_t file = f->plan->entries[e].file, a, b;

	if (locate(f, e, &smp, &g, &k) < 0 || smp.size == 0)
		return 1;       /* enter() reports the error */
	blocks(&smp, &lo, &hi);
	if (covering(f, file, lo, hi) != NO_EXTENT || covering2(f, file, lo, hi, &a, &b))
		add = 0;
	else if (joins_run(f, file, lo, hi))
		add = hi > f->run_hi ? hi - f->run_hi : 0;
	else
		add = hi - lo;
	return f->buffered + (f->run_open ? f->run_hi - f->run_lo : 0) + add <= f->budget;
}

/* Drop page g from the cache: first from this process's page tables (the kernel keeps
 * mapped pages whatever fadvise says), then from the cache. */
static int release(struct slab_follow *f, uint64_t g)
{
	uint64_t lo, hi, os = slab_pagecache_os_page(), alo, ahi;
	uint32_t file;
	struct slab_pagecache *pc;

	page_range(f, g, &file, &lo, &hi);
	pc = f->pcs[file];
	alo = (lo + os - 1) / os * os;
	ahi = hi / os * os;
	if (!f->o.direct && ahi > alo)
		(void)madvise((void *)(uintptr_t)(slab_base(f->files[file]) + alo),
			      (size_t)(ahi - alo), MADV_DONTNEED);
	if (slab_pagecache_advise(pc, lo, hi - lo, SLAB_PAGECACHE_DONTNEED) < 0)
		return slab_fail_from(&f->err, SLAB_ERR_IO, slab_pagecache_error(pc));
	if (f->punch && f->remote[file] && slab_uncache_budget(f->files[file], lo, hi - lo) < 0)
		return slab_fail_from(&f->err, SLAB_ERR_IO, slab_error(f->files[file]));
	f->whole[g] = 0;        /* read whole again when it comes back */
	f->st.released++;
	return 0;
}

/* ---- the memory budget --------------------------------------------------------------------- */

static uint64_t page_bytes(const struct slab_follow *f, uint64_t g)
{
	uint64_t lo, hi;
	uint32_t file;

	page_range(f, g, &file, &lo, &hi);
	return hi - lo;
}

static void heap_set(struct slab_follow *f, uint64_t i, uint64_t g)
{
	f->heap[i] = g;
	f->hpos[g] = i + 1;
}

static void heap_up(struct slab_follow *f, uint64_t i)
{
	uint64_t g = f->heap[i];

	while (i > 0 && f->hkey[f->heap[(i - 1) / 2]] < f->hkey[g]) {
		heap_set(f, i, f->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(f, i, g);
}

static void heap_down(struct slab_follow *f, uint64_t i)
{
	uint64_t g = f->heap[i];

	for (;;) {
		uint64_t c = 2 * i + 1;

		if (c >= f->nheap)
			break;
		if (c + 1 < f->nheap && f->hkey[f->heap[c + 1]] > f->hkey[f->heap[c]])
			c++;
		if (f->hkey[f->heap[c]] <= f->hkey[g])
			break;
		heap_set(f, i, f->heap[c]);
		i = c;
	}
	heap_set(f, i, g);
}

static void heap_push(struct slab_follow *f, uint64_t g, uint64_t key)
{
	f->hkey[g] = key;
	f->heap[f->nheap++] = g;
	heap_up(f, f->nheap - 1);
}

static void heap_remove(struct slab_follow *f, uint64_t g)
{
	uint64_t i = f->hpos[g] - 1, last = f->heap[--f->nheap];

	f->hpos[g] = 0;
	if (i == f->nheap)
		return;
	heap_set(f, i, last);
	heap_up(f, i);
	heap_down(f, f->hpos[last] - 1);
}

/* The first use of page g after entry e, or NONE. */
static uint64_t next_use(struct slab_follow *f, uint64_t g, uint64_t e)
{
	uint64_t end = f->use_off[g + 1];

	while (f->use_cur[g] < end && f->uses[f->use_cur[g]] <= e)
		f->use_cur[g]++;
	return f->use_cur[g] < end ? f->uses[f->use_cur[g]] : NONE;
}

static void note_cached(struct slab_follow *f)
{
	if (f->kept_bytes + f->win_bytes > f->st.max_cached)
		f->st.max_cached = f->kept_bytes + f->win_bytes;
}

/* Drop kept pages, the one needed latest first, while the cache with `extra` more bytes
 * would be over budget and that page is needed later than entry `after`. */
static int evict(struct slab_follow *f, uint64_t extra, uint64_t after)
{
	int r;

	while (f->kept_bytes + f->win_bytes + extra > f->o.memory && f->nheap &&
	       f->hkey[f->heap[0]] > after) {
		uint64_t q = f->heap[0];

		heap_remove(f, q);
		f->kept_bytes -= page_bytes(f, q);
		f->st.evicted++;
		if ((r = release(f, q)) < 0)
			return r;
	}
	return 0;
}

/* Page g comes into the window. Belady: drop kept pages, the latest needed first, while the
 * cache is over budget. */
static int budget_in(struct slab_follow *f, uint64_t g)
{
	uint64_t b = page_bytes(f, g);
	int r;

	if (f->hpos[g]) {
		heap_remove(f, g);
		f->kept_bytes -= b;
		f->st.hits++;
	} else {
		f->st.misses++;
	}
	f->win_bytes += b;
	if (f->o.policy == SLAB_CACHE_BELADY && (r = evict(f, 0, 0)) < 0)
		return r;
	note_cached(f);
	return 0;
}

/* The largest page size of the files (0 for none). */
static uint64_t max_page_size(struct slab *const *files, uint32_t nfiles)
{
	uint64_t ps = 0;

	for (uint32_t i = 0; i < nfiles; i++)
		if (slab_page_size(files[i]) > ps)
			ps = slab_page_size(files[i]);
	return ps;
}

/* n pages of ps bytes, in bytes: UINT64_MAX where that does not fit. */
static uint64_t pages_bytes(uint64_t n, uint64_t ps)
{
	return ps && n > UINT64_MAX / ps ? UINT64_MAX : n * ps;
}

/* SLAB_CACHE_FIXED: page g (b bytes) joins the set if there is room; whether it is in it. */
static int fixed_take(struct slab_follow *f, uint64_t g, uint64_t b)
{
	if (!f->fixed[g] && f->fixed_bytes + b <= f->fixed_cap) {
		f->fixed[g] = 1;
		f->fixed_bytes += b;
	}
	return f->fixed[g];
}

/* Page g leaves the window after entry e: kept, or dropped. */
static int budget_out(struct slab_follow *f, uint64_t g, uint64_t e)
{
	uint64_t b = page_bytes(f, g), next = next_use(f, g, e);
	int r;

	f->win_bytes -= b;
	/* No plan uses it again: with release it goes (the cache is to hold no more of the
	 * files afterwards than before); else what comes after the plans is unknown, so it is
	 * kept last of all, while there is room (for whoever reads the files next). */
	if (next == NONE && f->o.release)
		return release(f, g);
	if (next == NONE)
		next = NONE - 1;
	if (f->o.policy == SLAB_CACHE_FIXED) {
		/* Any other page of a quasi plan stays until its last use in this epoch (the
		 * plan comes back to its live pages, which the set leaves room for), as
		 * release would keep it; of another plan it goes (kept until its last use, a
		 * random plan's would be the whole file). */
		if (!fixed_take(f, g, b))
			return next < f->ends[f->epoch] && f->quasi[f->epoch] ? 0 : release(f, g);
	} else {
		/* Room is made by dropping the kept pages needed latest, while they are needed
		 * later than g; if g is needed latest, g goes. */
		if ((r = evict(f, b, next)) < 0)
			return r;
		if (f->kept_bytes + f->win_bytes + b > f->o.memory)
			return release(f, g);
	}
	heap_push(f, g, next);
	f->kept_bytes += b;
	f->st.kept++;
	note_cached(f);
	return 0;
}

/* The last use of page g in the plan of the entry at head (at or after it). */
static uint64_t last_in_epoch(const struct slab_follow *f, uint64_t g)
{
	uint64_t lo, hi, end;

	if (!f->uses)
		return f->last[g];
	/* The first use at or past the end of the epoch; the one before it. */
	end = f->ends[f->head_epoch];
	lo = f->use_cur[g];
	hi = f->use_off[g + 1];
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (f->uses[mid] < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > f->use_off[g] ? f->uses[lo - 1] : f->last[g];
}

/* Entry e joins the window. */
static int enter(struct slab_follow *f, uint64_t e)
{
	struct slab_sample smp;
	uint64_t g, k, lo, hi;
	uint32_t file = f->plan->entries[e].file, id, id2;
	int r = locate(f, e, &smp, &g, &k);

	if (r < 0)
		return r;
	/* A page read whole earlier is in memory or on its way: coming back to it (as a quasi
	 * plan does, every window-many steps) costs no look-ahead. So the look-ahead reaches
	 * --ahead pages that still have to be read, however many live ones lie between. */
	while (f->head_epoch + 1 < f->nplans && e >= f->ends[f->head_epoch])
		f->head_epoch++;
	for (uint64_t p = g; p < g + k; p++) {
		if (f->count[p] == 0 && f->o.memory && (r = budget_in(f, p)) < 0)
			return r;
		if (f->count[p]++ == 0 && !f->whole[p]) {
			f->counted[p] = 1;
			f->window++;
		}
	}
	if (f->window > f->st.max_window)
		f->st.max_window = f->window;
	if (smp.size == 0)
		return 0;       /* nothing to read; ext_of stays NO_EXTENT */
	if (!f->o.direct && k == 1) {
		if (!f->whole[g] && last_in_epoch(f, g) - e <= WHOLE_HORIZON * f->o.ahead) {
			uint64_t plo, phi;
			uint32_t pf;
			page_range(f, g, &pf, &plo, &phi);
			f->whole[g] = 1;
			f->st.advised++;
			f->st.whole_pages++;
			if (f->remote[pf])
				slab_fetch_ahead(f->files[pf], plo, phi - plo);
			else if (slab_pagecache_advise(f->pcs[pf], plo, phi - plo, SLAB_PAGECACHE_WILLNEED) < 0)
				return slab_fail_from(&f->err, SLAB_ERR_IO, slab_pagecache_error(f->pcs[pf]));
		}
		if (f->whole[g])
			return 0;       /* on its way with its page */
	}
	/* Only the sample's bytes, in whole 4 KiB blocks: in a random plan the rest of its page
	 * may not be wanted for a long time. */
	blocks(&smp, &lo, &hi);
	if (f->o.direct && (id = covering(f, file, lo, hi)) != NO_EXTENT) {
		f->ext[id].refs++;
		f->ext_of[e] = id;
		return 0;
	}
	if (f->o.direct && covering2(f, file, lo, hi, &id, &id2)) {
		f->ext[id].refs++;
		f->ext[id2].refs++;
		f->ext_of[e] = id;
		f->ext2_of[e] = id2;
		return 0;
	}
	if (joins_run(f, file, lo, hi)) {
		if (hi > f->run_hi)
			f->run_hi = hi;
		f->run_refs++;
	} else {
		if ((r = close_run(f)) < 0)
			return r;
		f->run_open = 1;
		f->run_file = file;
		f->run_lo = lo;
		f->run_hi = hi;
		f->run_first = e;
		f->run_refs = 1;
	}
	f->run_end = e + 1;
	if (f->o.direct)
		f->ext_of[e] = NO_EXTENT - 1;   /* the run's extent, once the run is closed */
	return !f->o.direct && f->run_hi - f->run_lo >= RUN_MAX ? close_run(f) : 0;
}

/* Would entry e join the window without adding a page to it? */
static int inside_window(struct slab_follow *f, uint64_t e)
{
	struct slab_sample smp;
	uint64_t g, k;

	if (locate(f, e, &smp, &g, &k) < 0)
		return 0;
	for (uint64_t p = g; p < g + k; p++)
		if (f->count[p] == 0 && !f->whole[p])
			return 0;
	return 1;
}

/* Entry e, done with, leaves the window. */
static int leave(struct slab_follow *f, uint64_t e)
{
	struct slab_sample smp;
	uint64_t g, k;
	int r = locate(f, e, &smp, &g, &k);

	if (r < 0)
		return r;
	if (f->o.direct && f->ext_of[e] < NO_EXTENT - 1)
		extent_put(f, f->ext_of[e]);
	if (f->o.direct && f->ext2_of[e] != NO_EXTENT)
		extent_put(f, f->ext2_of[e]);
	for (uint64_t p = g; p < g + k; p++) {
		if (--f->count[p] == 0 && f->counted[p]) {
			f->counted[p] = 0;
			f->window--;
		}
		if (f->o.memory) {
			if (f->count[p] == 0 && (r = budget_out(f, p, e)) < 0)
				return r;
		} else if (f->o.release && f->last[p] == e && (r = release(f, p)) < 0) {
			return r;
		}
	}
	return 0;
}

static void follow_clear(struct slab_follow *f);

struct slab_follow *slab_follow_new(void)
{
	struct slab_follow *f = calloc(1, sizeof(*f));

	if (f)
		f->q_head = f->q_tail = NO_EXTENT;
	return f;
}

int slab_follow_open(struct slab_follow *f, struct slab *const *files,
		     const char *const *paths, uint32_t nfiles, const struct slab_plan *plan,
		     const struct slab_follow_options *opt)
{
	return slab_follow_open_plans(f, files, paths, nfiles, &plan, 1, opt);
}

/* Pages the cache holds already (an earlier epoch's walk kept them: a loader per epoch, or
 * prefetch run once per epoch) count against the budget as kept ones: more than half their
 * bytes resident, needed again. Belady then drops those needed latest until the budget
 * holds; a fixed set takes them first. */
static int adopt_resident(struct slab_follow *f)
{
	for (uint64_t g = 0; g < f->npages; g++) {
		struct slab_pagecache_residency res;
		int unused = f->use_off[g + 1] == f->use_off[g];
		uint64_t lo, hi, b;
		uint32_t file;

		page_range(f, g, &file, &lo, &hi);
		if (f->punch && f->remote[file]) {
			/* The local cache's budget: what the cache holds, the pages no plan uses
			 * included (another rank's plan or a --warm left them there): the budget is
			 * the disk's, which they fill as much as any. Kept last of all, as pages
			 * no plan uses again are; a fixed set has no room for them (below). */
			if (unused && f->o.policy == SLAB_CACHE_FIXED)
				continue;
			if (!slab_fetched(f->files[file], lo, hi - lo))
				continue;
			if (unused) {
				heap_push(f, g, NONE - 1);
				f->kept_bytes += hi - lo;
				f->st.adopted++;
				continue;
			}
		} else {
			if (unused)
				continue;
			if (slab_pagecache_residency(f->pcs[file], lo, hi - lo, SLAB_PAGECACHE_AUTO,
						     &res) < 0)
				return slab_fail_from(&f->err, SLAB_ERR_IO,
						      slab_pagecache_error(f->pcs[file]));
			if (res.pages == 0 || res.resident * 2 < res.pages)
				continue;
		}
		b = hi - lo;
		if (f->o.policy == SLAB_CACHE_FIXED && !fixed_take(f, g, b))
			continue;
		heap_push(f, g, f->uses[f->use_off[g]]);
		f->kept_bytes += b;
		f->st.adopted++;
	}
	if (f->o.policy == SLAB_CACHE_BELADY)
		return evict(f, 0, 0);
	/* A fixed set's: dropped now, the last page first (slab_fetched() of a page asks for
	 * its group's pages from the first, which must still be there). */
	for (uint64_t g = f->npages; g-- > 0;) {
		uint64_t lo, hi;
		uint32_t file;
		int r;

		page_range(f, g, &file, &lo, &hi);
		if (f->use_off[g + 1] == f->use_off[g] && f->punch && f->remote[file] &&
		    slab_fetched(f->files[file], lo, hi - lo) && (r = release(f, g)) < 0)
			return r;
	}
	return 0;
}

/* Room for the index of each page's uses, counted by the caller's walk over the plan
 * (use_off[g + 1]: the uses of page g) before index_uses() fills it. */
static int index_start(struct slab_follow *f)
{
	if (f->plan->n > UINT32_MAX)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL,
				 "%llu plan entries: at most %u with several plans or a memory budget",
				 (unsigned long long)f->plan->n, UINT32_MAX);
	f->use_off = calloc(f->npages + 1, sizeof(*f->use_off));
	f->use_cur = calloc(f->npages + 1, sizeof(*f->use_cur));
	if (!f->use_off || !f->use_cur)
		return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	return 0;
}

/* Each page's uses in order, for next_use() and last_in_epoch(), from the counts. */
static int index_uses(struct slab_follow *f)
{
	const struct slab_plan *plan = f->plan;
	uint64_t total;
	int ret;

	for (uint64_t g = 0; g < f->npages; g++)
		f->use_off[g + 1] += f->use_off[g];
	total = f->use_off[f->npages];
	f->uses = malloc((total ? total : 1) * sizeof(*f->uses));
	if (!f->uses)
		return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	memcpy(f->use_cur, f->use_off, f->npages * sizeof(*f->use_cur));
	for (uint64_t e = 0; e < plan->n; e++) {
		struct slab_sample smp;
		uint64_t g, k;

		if ((ret = locate(f, e, &smp, &g, &k)) < 0)
			return ret;
		for (uint64_t p = g; p < g + k; p++)
			f->uses[f->use_cur[p]++] = (uint32_t)e;
	}
	memcpy(f->use_cur, f->use_off, f->npages * sizeof(*f->use_cur));
	return 0;
}

static int follow_fault(struct slab_follow *f, const void *addr);

static int follow_open_plans(struct slab_follow *f, struct slab *const *files,
			     const char *const *paths, uint32_t nfiles,
			     const struct slab_plan *const *plans, size_t nplans,
			     const struct slab_follow_options *opt)
{
	const struct slab_follow_options *o = &f->o;
	const struct slab_plan *plan;
	int ret, indexed;

	if (f->plan)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "plan walk already open");
	f->pid = getpid();
	if (slab_sized_in(&f->o, sizeof(f->o), opt, FOLLOW_OPTIONS_FIRST) < 0)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL,
				 "walk options of %zu %s: no such version", opt->size,
				 slab_plural(opt->size, "byte", "bytes"));
	if (nplans == 0)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "no plan to walk");
	if (f->o.memory && f->o.disk)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL,
				 "a page cache budget and a local cache budget together: give one");
	/* The local cache's budget works as the page cache's does, pages dropped leaving the
	 * local cache too (and only files at a URL have one). */
	if (f->o.disk)
		f->o.memory = f->o.disk;
	if (f->o.memory && f->o.direct)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL,
				 "a page cache budget with O_DIRECT, which does not use the cache");
	if (f->o.policy != SLAB_CACHE_BELADY && f->o.policy != SLAB_CACHE_FIXED)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "no cache policy %d", f->o.policy);
	if (f->o.walked > nplans)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "%zu %s to walk of %zu",
				 f->o.walked, slab_plural(f->o.walked, "plan", "plans"), nplans);
	/* A plan of other files would fail part way, at an entry past its file's samples; the
	 * plans after the first are checked against it (slab_plan_concat()). */
	if ((ret = slab_plan_match_err(plans[0], files, nfiles, &f->err)) < 0)
		return ret;
	if ((ret = slab_fault_setup(&f->err)) < 0)
		return ret;
	f->ends = calloc(nplans, sizeof(*f->ends));
	f->starts = calloc(nplans, sizeof(*f->starts));
	f->quasi = calloc(nplans, 1);
	if (!f->ends || !f->starts || !f->quasi)
		goto nomem;
	f->nplans = nplans;
	for (size_t k = 0; k < nplans; k++) {
		f->ends[k] = (k ? f->ends[k - 1] : 0) + plans[k]->n;
		f->starts[k] = plans[k]->start;
		f->quasi[k] = slab_plan_params(plans[k])->mode == SLAB_PLAN_QUASI;
	}
	if (nplans == 1) {
		plan = plans[0];
	} else {
		if (!(f->own = slab_plan_new()))
			goto nomem;
		if ((ret = slab_plan_concat(f->own, plans, nplans)) < 0) {
			slab_fail_from(&f->err, ret, slab_plan_error(f->own));
			goto out;
		}
		plan = f->own;
	}
	f->files = files;
	f->nfiles = nfiles;
	f->plan = plan;
	f->stop = f->o.walked ? f->ends[f->o.walked - 1] : plan->n;
	if (f->o.ahead == 0)
		f->o.ahead = 1;
	f->pcs = calloc(nfiles ? nfiles : 1, sizeof(*f->pcs));
	f->page_base = calloc((size_t)nfiles + 1, sizeof(*f->page_base));
	f->remote = calloc(nfiles ? nfiles : 1, 1);
	if (!f->pcs || !f->page_base || !f->remote)
		goto nomem;
	for (uint32_t i = 0; i < nfiles; i++) {
		struct slab *s = files[i];
		uint64_t data = slab_table_offset(s) - slab_data_offset(s);

		f->pcs[i] = slab_pagecache_new();
		if (!f->pcs[i])
			goto nomem;
		/* A URL's pages are in its local cache file: advice and residency go there. */
		f->remote[i] = (unsigned char)slab_is_url(slab_path(s));
		if (f->remote[i] && o->direct) {
			ret = slab_fail(&f->err, SLAB_ERR_INVAL, paths[i],
					"O_DIRECT reads of a URL: its pages come through the local cache");
			goto out;
		}
		if (f->remote[i])
			f->punch = o->disk != 0;
		if ((ret = slab_pagecache_open(f->pcs[i], slab_local_path(s))) < 0) {
			slab_fail_from(&f->err, ret, slab_pagecache_error(f->pcs[i]));
			goto out;
		}
		if (o->direct && (ret = slab_pagecache_direct_open(f->pcs[i])) < 0) {
			slab_fail_from(&f->err, ret, slab_pagecache_error(f->pcs[i]));
			goto out;
		}
		/* The name may have been given a new file since slab_open mapped the old one,
		 * of the same size even: O_DIRECT would hand out its bytes as the samples, and
		 * advice and release would go to it. The mapped file's device and inode. */
		if (slab_pagecache_size(f->pcs[i]) != slab_file_size(s) ||
		    !slab_same_file(s, slab_pagecache_fd(f->pcs[i])) ||
		    (o->direct && !slab_same_file(s, slab_pagecache_direct_fd(f->pcs[i])))) {
			ret = slab_fail(&f->err, SLAB_ERR_IO, paths[i],
					"the file changed while it was being opened");
			goto out;
		}
		/* Faults then read only the page they need: read-around would bring back pages
		 * released a moment ago, or far ahead of the window. The window's WILLNEED
		 * advice does the reading ahead. */
		if (!o->direct)
			(void)madvise((void *)(uintptr_t)slab_base(s), (size_t)slab_file_size(s),
				      MADV_RANDOM);
		f->page_base[i + 1] = f->page_base[i] +
				      (data + slab_page_size(s) - 1) / slab_page_size(s);
	}
	f->npages = f->page_base[nfiles];
	f->last = malloc((f->npages ? f->npages : 1) * sizeof(*f->last));
	f->count = calloc(f->npages ? f->npages : 1, sizeof(*f->count));
	f->whole = calloc(f->npages ? f->npages : 1, 1);
	f->counted = calloc(f->npages ? f->npages : 1, 1);
	if (!f->last || !f->count || !f->whole || !f->counted)
		goto nomem;
	for (uint64_t g = 0; g < f->npages; g++)
		f->last[g] = NONE;
	indexed = nplans > 1 || o->memory;
	if (indexed && (ret = index_start(f)) < 0)
		goto out;
	for (uint64_t e = 0; e < plan->n; e++) {
		struct slab_sample smp;
		uint64_t g, k;
		if ((ret = locate(f, e, &smp, &g, &k)) < 0)
			goto out;
		for (uint64_t p = g; p < g + k; p++) {
			if (f->last[p] == NONE)
				f->st.distinct_pages++;
			f->last[p] = e;
			if (indexed)
				f->use_off[p + 1]++;
		}
	}
	if (indexed && (ret = index_uses(f)) < 0)
		goto out;
	if (o->memory) {
		uint64_t ps = max_page_size(files, nfiles);

		f->heap = malloc((f->npages ? f->npages : 1) * sizeof(*f->heap));
		f->hpos = calloc(f->npages ? f->npages : 1, sizeof(*f->hpos));
		f->hkey = malloc((f->npages ? f->npages : 1) * sizeof(*f->hkey));
		f->fixed = calloc(f->npages ? f->npages : 1, 1);
		if (!f->heap || !f->hpos || !f->hkey || !f->fixed)
			goto nomem;
		/* The fixed set leaves room for the pages in use: the window, or a quasi plan's
		 * live pages if more (its window in pages, or in bytes: shuffle-plan --memory). */
		uint64_t live;

		if (!ps)
			ps = 1;
		live = pages_bytes(o->ahead, ps);
		for (size_t k = 0; k < nplans; k++) {
			const struct slab_plan_params *pp = slab_plan_params(plans[k]);
			uint64_t w;

			if (pp->mode != SLAB_PLAN_QUASI)
				continue;
			if (pp->flags & SLAB_PLAN_MEMORY)
				w = pp->window;
			else
				w = pages_bytes(pp->window, ps);
			if (w > live)
				live = w;
		}
		f->fixed_cap = live > o->memory ? 0 : o->memory - live;
		if ((ret = adopt_resident(f)) < 0)
			goto out;
	}
	if (o->direct) {
		f->ext_of = malloc((plan->n ? plan->n : 1) * sizeof(*f->ext_of));
		f->ext2_of = malloc((plan->n ? plan->n : 1) * sizeof(*f->ext2_of));
		f->holder = calloc(f->npages ? f->npages : 1, sizeof(*f->holder));
		f->nheld = calloc(f->npages ? f->npages : 1, sizeof(*f->nheld));
		if (!f->ext_of || !f->ext2_of || !f->holder || !f->nheld)
			goto nomem;
		f->budget = pages_bytes(f->o.ahead, max_page_size(files, nfiles));
		for (uint64_t e = 0; e < plan->n; e++)
			f->ext_of[e] = f->ext2_of[e] = NO_EXTENT;
		/* Without AIO (ENOSYS, or the system's aio-max-nr is used up) every read waits. */
		f->ctx_ok = f->aio = !o->direct_sync && sys_io_setup(AIO_DEPTH, &f->ctx) == 0;
		f->st.async = f->aio;
	}
	return 0;
nomem:
	ret = slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
out:
	/* Back to a walk not yet open: what was made is freed, the error stays. */
	follow_clear(f);
	return ret;
}

/* The bytes of smp, which x holds from its start and y up to its end, into the bounce buffer. */
static int put_together(struct slab_follow *f, const struct extent *x, const struct extent *y,
			const struct slab_sample *smp)
{
	uint64_t s = smp->offset, t = s + smp->size, mid = x->hi < t ? x->hi : t;

	if (f->bounce_cap < smp->size) {
		unsigned char *b = realloc(f->bounce, (size_t)smp->size);
		if (!b)
			return slab_fail(&f->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		f->bounce = b;
		f->bounce_cap = (size_t)smp->size;
	}
	memcpy(f->bounce, x->buf + (s - x->lo), (size_t)(mid - s));
	memcpy(f->bounce + (mid - s), y->buf + (mid - y->lo), (size_t)(t - mid));
	return 0;
}

static int follow_next(struct slab_follow *f, struct slab_follow_item *it)
{
	const struct slab_plan_entry *en;
	uint64_t g, k;
	int r;

	if (f->cur > 0 && f->cur <= f->stop && (r = leave(f, f->cur - 1)) < 0)
		return r;
	if (f->cur >= f->stop) {
		f->cur = f->stop + 1;   /* left already */
		return 0;
	}
	while (f->epoch + 1 < f->nplans && f->cur >= f->ends[f->epoch])
		f->epoch++;
	/* Entries on pages the window holds already cost nothing: they come in too. */
	while (f->head < f->plan->n) {
		if (f->head > f->cur && f->window >= f->o.ahead && !inside_window(f, f->head))
			break;
		/* Many samples on the window's pages must not take more than that to buffer. */
		if (f->head > f->cur && f->o.direct && !direct_room(f, f->head))
			break;
		if ((r = enter(f, f->head++)) < 0)
			return r;
	}
	if (f->run_open && (f->run_first <= f->cur || f->head >= f->plan->n) &&
	    (r = close_run(f)) < 0)
		return r;
	en = &f->plan->entries[f->cur];
	memset(it, 0, sizeof(*it));
	it->pos = f->starts[f->epoch] + f->cur - (f->epoch ? f->ends[f->epoch - 1] : 0);
	it->file = en->file;
	it->index = en->sample;
	if ((r = locate(f, f->cur, &it->sample, &g, &k)) < 0)
		return r;
	if (!f->o.direct) {
		struct slab *s = f->files[en->file];

		if (f->remote[en->file] && (r = slab_fetch(s, it->sample.offset, it->sample.size)) < 0)
			return slab_fail_from(&f->err, r, slab_error(s));
		it->bytes = slab_base(s) + it->sample.offset;
	} else if (f->ext_of[f->cur] == NO_EXTENT) {
		static const unsigned char empty[1];
		it->bytes = empty;
		it->direct = 1;
	} else {
		uint32_t id = f->ext_of[f->cur], id2 = f->ext2_of[f->cur];
		if ((r = wait_ready(f, id)) < 0 ||
		    (id2 != NO_EXTENT && (r = wait_ready(f, id2)) < 0))
			return r;
		if (id2 == NO_EXTENT)
			it->bytes = f->ext[id].buf + (it->sample.offset - f->ext[id].lo);
		else if ((r = put_together(f, &f->ext[id], &f->ext[id2], &it->sample)) < 0)
			return r;
		else
			it->bytes = f->bounce;
		it->direct = 1;
	}
	f->st.samples++;
	f->st.bytes += it->sample.size;
	f->cur++;
	return 1;
}

/* After a fault at addr reading one of the files' mappings: the error, naming the file. */
static int follow_fault(struct slab_follow *f, const void *addr)
{
	return f->faulted = slab_fault_files(f->files, f->nfiles, addr, &f->err);
}

/* follow_open_plans() with its reads of the mappings guarded (the pass over the plans that
 * finds each entry's pages reads the files' tables): a file truncated since it was opened is
 * an error naming it, as in the walk. What the open made, slab_follow_close() frees. */
int slab_follow_open_plans(struct slab_follow *f, struct slab *const *files,
			   const char *const *paths, uint32_t nfiles,
			   const struct slab_plan *const *plans, size_t nplans,
			   const struct slab_follow_options *opt)
{
	struct slab_fault g;
	int r;

	if (sigsetjmp(g.jump, 0))
		return follow_fault(f, g.addr);
	slab_fault_begin(&g);
	r = follow_open_plans(f, files, paths, nfiles, plans, nplans, opt);
	slab_fault_end(&g);
	return r;
}

/* follow_next() with its reads of the mappings (the files' tables, the pages it advises)
 * guarded: a file truncated under the walk is an error naming it, every call after it too
 * (the walk's state is left as the fault found it). */
int slab_follow_next(struct slab_follow *f, struct slab_follow_item *it)
{
	struct slab_fault g;
	int r;

	if (f->faulted)
		return f->faulted;
	/* Not "the end": that would be taken for an empty plan, and moved the walk past its
	 * first entry once it was opened. */
	if (!f->plan)
		return slab_fail(&f->err, SLAB_ERR_INVAL, NULL, "plan walk not open");
	if (sigsetjmp(g.jump, 0))
		return follow_fault(f, g.addr);
	slab_fault_begin(&g);
	r = follow_next(f, it);
	slab_fault_end(&g);
	return r;
}

/* Where touched bytes go, so the compiler cannot skip the reads. */
static volatile unsigned char touch_sink;

static void touch(const struct slab_follow_item *it)
{
	unsigned char x = 0;

	for (uint64_t o = 0; o < it->sample.size; o += SLAB_PAGECACHE_ALIGN)
		x ^= it->bytes[o];
	if (it->sample.size)
		x ^= it->bytes[it->sample.size - 1];
	/* Many threads may touch at once: the store is atomic, and its value is never read. */
	__atomic_store_n(&touch_sink, x, __ATOMIC_RELAXED);
}

int slab_follow_touch(const struct slab_follow_item *it)
{
	struct slab_fault g;

	if (it->direct)
		return 0;
	if (sigsetjmp(g.jump, 0))
		return SLAB_ERR_IO;
	slab_fault_begin(&g);
	touch(it);
	slab_fault_end(&g);
	return 0;
}

size_t slab_follow_epoch(const struct slab_follow *f)
{
	return f->epoch;
}

void slab_follow_stats(const struct slab_follow *f, struct slab_follow_stats *st)
{
	struct slab_follow_stats full = f->st;

	full.size = sizeof(full);
	slab_sized_out(st, &full, sizeof(full), FOLLOW_STATS_FIRST);
}

const char *slab_follow_error(const struct slab_follow *f)
{
	return f->err.text;
}

/* Free all a walk holds but its error text, and make it a walk not yet open. */
static void follow_clear(struct slab_follow *f)
{
	/* The kernel may still be writing into the buffers: it waits for them here. */
	if (f->ctx_ok)
		sys_io_destroy(f->ctx);
	if (f->pcs)
		for (uint32_t i = 0; i < f->nfiles; i++)
			slab_pagecache_close(f->pcs[i]);
	for (uint32_t i = 0; i < f->next; i++)
		free(f->ext[i].buf);
	free(f->ext);
	free(f->free_ids);
	free(f->ext_of);
	free(f->ext2_of);
	free(f->bounce);
	if (f->holder)
		for (uint64_t g = 0; g < f->npages; g++)
			free(f->holder[g]);
	free(f->holder);
	free(f->nheld);
	free(f->pcs);
	free(f->page_base);
	free(f->remote);
	free(f->last);
	free(f->count);
	free(f->whole);
	free(f->counted);
	slab_plan_free(f->own);
	free(f->ends);
	free(f->starts);
	free(f->uses);
	free(f->use_off);
	free(f->use_cur);
	free(f->heap);
	free(f->hpos);
	free(f->hkey);
	free(f->fixed);
	free(f->quasi);
	{
		struct slab_err keep = f->err;

		memset(f, 0, sizeof(*f));
		f->err = keep;
		f->q_head = f->q_tail = NO_EXTENT;
	}
}

/* A walk with release closed before its end: the pages its window read ahead, which no entry
 * is done with, and those of entries [head, end) that others read ahead of the window (a
 * loader's workers), are dropped from the page cache too, so that it holds no more after the
 * walk than before, however early the consumer stopped. The bytes of items handed out stay
 * readable (a page dropped from the mapping is read from the file again on its next touch);
 * not so a page punched out of a URL's local cache, so a walk with a local cache budget keeps
 * them there (the budget bounds them). Only by the process that opened the walk: a forked
 * child closing its copy must not drop the pages its parent reads. */
void slab_follow_drop_ahead(struct slab_follow *f, uint64_t end)
{
	if (!f || !f->o.release || f->o.memory || f->punch || !f->count || f->pid != getpid())
		return;
	if (end > slab_plan_count(f->plan))
		end = slab_plan_count(f->plan);
	for (uint64_t e = f->head; e < end; e++) {
		struct slab_sample smp;
		uint64_t g, k;

		if (locate(f, e, &smp, &g, &k) < 0)
			break;
		for (uint64_t p = g; p < g + k; p++)
			if (!f->count[p])
				f->count[p] = 1;
	}
	/* A page the window advised a moment ago may still be on its way in: the cache keeps a
	 * page under read whatever DONTNEED says, and it lands after. Such pages are dropped
	 * again once their reads are done (a few milliseconds; at most about 0.1 s). */
	for (int round = 0; round < 50; round++) {
		int again = 0;

		for (uint64_t g = 0; g < f->npages; g++) {
			struct slab_pagecache_residency res;
			uint64_t lo, hi;
			uint32_t file;

			if (!f->count[g])
				continue;
			if (round > 0) {
				page_range(f, g, &file, &lo, &hi);
				if (slab_pagecache_residency(f->pcs[file], lo, hi - lo,
							     SLAB_PAGECACHE_AUTO, &res) < 0 ||
				    res.resident == 0) {
					f->count[g] = 0;
					continue;
				}
			}
			(void)release(f, g);
			again = 1;
		}
		if (!again)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
}

void slab_follow_close(struct slab_follow *f)
{
	if (!f)
		return;
	slab_follow_drop_ahead(f, 0);
	follow_clear(f);
	free(f);
}
