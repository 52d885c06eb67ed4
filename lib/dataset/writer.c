/* writer.c: writes a .slab file front to back (header, pages, table, trailer) so the output
 * may be a pipe; only the table grows with the data, one small record per sample and field. */
#include "slab.h"
#include "format.h"
#include "crc32c.h"
#include "io.h"
#include "error.h"
#include "errfmt.h"
#include "sized.h"
#include "keyset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/* The sizes of the first versions of the caller's structs (sized.h): all of them so far. */
#define WRITER_OPTIONS_FIRST SLAB_SIZED_END(struct slab_writer_options, writeback)
#define WRITER_STATS_FIRST SLAB_SIZED_END(struct slab_writer_stats, file_bytes)

/*
 * Output goes out a whole buffer at a time (but for the last), each at a file offset it
 * divides, in write(2)s of WRITE_CHUNK bytes, which the page cache takes in folios of that
 * size. Not larger: where a VM's balloon takes back the guest's free memory (free page
 * reporting), large folios come from blocks the host has to fault in again page by page
 * (measured in such a VM: writes of 1 MiB took 5 to 7 times the CPU of 128 KiB ones in most
 * runs, of 256 and 512 KiB in some). Smaller ones cost more per byte.
 */
#ifndef OUTBUF_SIZE
#define OUTBUF_SIZE (512u << 10)
#endif
#ifndef WRITE_CHUNK
#define WRITE_CHUNK (128u << 10)
#endif

/*
 * To a regular file, with writeback asked for, full buffers go to a thread of the writer's
 * own that writes them (and starts their writeback) while the caller prepares the next
 * ones: the kernel's work to take the bytes into the page cache, half the CPU of packing a
 * plain tar, runs beside the reading, the checksums and the caller's own work instead of
 * after them. A write that fails there is reported by the next call that hands a buffer
 * over, or by slab_writer_finish(), with the offset where it failed.
 * WB_BUFS buffers, the one being filled included: more were measured slower (their bytes
 * leave the CPU's caches before the thread copies them).
 */
#ifndef WB_BUFS
#define WB_BUFS 4
#endif

struct wbehind {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;              /* any change of head, tail, stop */
	unsigned char *bufs[WB_BUFS];
	size_t len[WB_BUFS];
	uint64_t head, tail;            /* buffers written (or dropped), buffers handed over */
	int stop;                       /* no more buffers will come */
	int drop;                       /* write no more: the writer is being freed */
	int err;                        /* errno of the write that failed, or 0 */
	uint64_t err_offset;            /* where */
};

struct wsample {
	uint64_t offset, size, key_off;
	uint32_t key_len, page;
	uint64_t first_field;   /* index into fields[] */
	uint32_t nfields;
};

struct wfield {
	uint64_t offset, size;
	uint32_t crc, width, height;
	uint32_t id;            /* id in order of first appearance; sorted at finish */
	uint32_t video;         /* with SLAB_FIELD_VIDEO: its video record */
	unsigned char flags, subsamp, colorspace, order;
};

/* A video record (slab(5)), as it will be written. */
struct wvideo {
	uint64_t duration_us, frames;
	uint32_t fps_num, fps_den;
	char codec[SLAB_VIDEO_CODEC];
};

struct slab_writer {
	int fd;
	char *name;
	struct slab_err err;
	int failed;             /* the code of the failure that ended it, or 0 */
	uint64_t page_size, data_offset;
	uint32_t header_crc;

	unsigned char *buf;     /* output buffer (with wb: the ring's slot being filled) */
	size_t buf_len;
	struct wbehind *wb;     /* the write thread, or NULL: the caller's thread writes */
	uint64_t pos;           /* bytes accepted so far (file offset of the next byte) */
	uint64_t written;       /* bytes handed to write(2) so far (with wb: the thread's) */
	uint64_t writeback, synced;     /* writeback interval; bytes whose writeback started */
	uint64_t pages;         /* pages started */
	int page_full;          /* the current page takes no more samples */

	struct wsample *samples;
	uint64_t nsamples, cap_samples;
	struct wfield *fields;
	uint64_t nfields, cap_fields;
	struct wvideo *videos;
	uint64_t nvideos, cap_videos;
	char *keys;
	uint64_t keys_len, keys_cap;
	struct slab_keyset keyset;      /* keys so far, by sample index: the duplicate check */
	uint64_t index_steps;   /* slots visited building the key index at finish */

	char **names;           /* field names by id */
	uint32_t nnames, cap_names;
	uint64_t data_bytes;

	uint32_t table_crc;
	int opened;             /* slab_writer_open() was called: a writer writes one file */
	int finished;
};

/* A failure that ends the writer (slab_fail, and no more samples): messages name the
 * output. */
static int writer_fail(struct slab_writer *w, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int writer_fail(struct slab_writer *w, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	slab_vfail(&w->err, code, w->name ? w->name : "(output)", fmt, ap);
	va_end(ap);
	w->failed = code;
	return code;
}

/* May a sample be added, or the file finished, now? 0, or why not. A writer not open yet is
 * refused and stays as it was, to be opened (that call is the caller's slip, not the
 * writer's end); one that failed gives its failure again, its text kept (the reason the
 * caller has to report, a write's errno, is not overwritten); one finished says so. */
static int writer_ready(struct slab_writer *w)
{
	if (!w->opened)
		return slab_fail(&w->err, SLAB_ERR_INVAL, w->name ? w->name : "(output)",
				 "writer is not open");
	if (w->failed)
		return w->failed;
	if (w->finished)
		return slab_fail(&w->err, SLAB_ERR_INVAL, w->name, "writer finished already");
	return 0;
}

/* Room for need elements in *p. 0 or SLAB_ERR_NOMEM. */
static int grow(void **p, uint64_t *cap, uint64_t need, size_t elem)
{
	uint64_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / elem)
		return SLAB_ERR_NOMEM;
	q = realloc(*p, (size_t)(n * elem));
	if (!q)
		return SLAB_ERR_NOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* ---- output ----------------------------------------------------------------------------- */

/* write(2) all len bytes, WRITE_CHUNK at a time: 0 or its errno (EPIPE for a pipe whose
 * reader went away, never SIGPIPE). *written counts what went. */
static int write_fd(int fd, const unsigned char *c, size_t len, uint64_t *written)
{
	uint64_t done;
	int e = slab_write_nosigpipe(fd, c, len, WRITE_CHUNK, &done);

	*written += done;
	return e;
}

/* Every w->writeback bytes, start the writeback of the last ones: the disk works while we
 * go on, and the caller's final fsync waits only for the tail. */
static void start_writeback(struct slab_writer *w)
{
	if (w->writeback && w->written - w->synced >= w->writeback) {
		sync_file_range(w->fd, (off64_t)w->synced, (off64_t)(w->written - w->synced),
				SYNC_FILE_RANGE_WRITE);
		w->synced = w->written;
	}
}

static int write_fail(struct slab_writer *w, int e, uint64_t offset)
{
	int r = writer_fail(w, SLAB_ERR_IO, "write failed at offset %llu: %s",
			    (unsigned long long)offset, strerror(e));

	errno = e;      /* slab.h: the write's (EPIPE: the reader went away) */
	return r;
}

/* Without a write thread. */
static int write_all(struct slab_writer *w, const void *p, size_t len)
{
	int e = write_fd(w->fd, p, len, &w->written);

	if (e)
		return write_fail(w, e, w->written);
	start_writeback(w);
	return 0;
}

/* The write thread: the ring's buffers in order; after a failure, or when told to drop them,
 * it only counts them off. w->written and w->synced are its own while it runs. */
static void *wb_main(void *arg)
{
	struct slab_writer *w = arg;
	struct wbehind *wb = w->wb;

	pthread_mutex_lock(&wb->mu);
	for (;;) {
		unsigned i;
		int e = 0;

		while (wb->head == wb->tail && !wb->stop)
			pthread_cond_wait(&wb->cv, &wb->mu);
		if (wb->head == wb->tail)
			break;
		i = (unsigned)(wb->head % WB_BUFS);
		if (!wb->err && !wb->drop) {
			pthread_mutex_unlock(&wb->mu);
			e = write_fd(w->fd, wb->bufs[i], wb->len[i], &w->written);
			if (!e)
				start_writeback(w);
			pthread_mutex_lock(&wb->mu);
			if (e) {
				wb->err = e;
				wb->err_offset = w->written;
			}
		}
		wb->head++;
		pthread_cond_broadcast(&wb->cv);
	}
	pthread_mutex_unlock(&wb->mu);
	return NULL;
}

/* Start the write thread when the output is a regular file and writeback was asked for. Out
 * of memory or threads, the writer does without. */
static void wb_start(struct slab_writer *w)
{
	struct wbehind *wb;
	sigset_t all, old;
	int r;

	if (!w->writeback)      /* set for regular files only */
		return;
	wb = calloc(1, sizeof(*wb));
	if (!wb)
		return;
	wb->bufs[0] = w->buf;
	for (unsigned i = 1; i < WB_BUFS; i++)
		if (posix_memalign((void **)&wb->bufs[i], 4096, OUTBUF_SIZE) != 0) {
			wb->bufs[i] = NULL;
			goto undo;
		}
	if (pthread_mutex_init(&wb->mu, NULL) != 0)
		goto undo;
	if (pthread_cond_init(&wb->cv, NULL) != 0) {
		pthread_mutex_destroy(&wb->mu);
		goto undo;
	}
	w->wb = wb;
	/* Signals are for the caller's threads: the write thread takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&wb->thread, NULL, wb_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		return;
	w->wb = NULL;
	pthread_cond_destroy(&wb->cv);
	pthread_mutex_destroy(&wb->mu);
undo:
	for (unsigned i = 1; i < WB_BUFS; i++)
		free(wb->bufs[i]);
	free(wb);
}

/* Wait for the write thread to write (or, with drop, to drop) what it has and end; the
 * writer goes on without it, in the buffer it was filling. 0, or SLAB_ERR_IO when a write
 * failed. */
static int wb_stop(struct slab_writer *w, int drop)
{
	struct wbehind *wb = w->wb;
	uint64_t offset;
	int e;

	if (!wb)
		return 0;
	pthread_mutex_lock(&wb->mu);
	wb->stop = 1;
	wb->drop |= drop;
	pthread_cond_broadcast(&wb->cv);
	pthread_mutex_unlock(&wb->mu);
	pthread_join(wb->thread, NULL);
	pthread_cond_destroy(&wb->cv);
	pthread_mutex_destroy(&wb->mu);
	w->wb = NULL;
	for (unsigned i = 0; i < WB_BUFS; i++)
		if (wb->bufs[i] != w->buf)
			free(wb->bufs[i]);
	e = wb->err;
	offset = wb->err_offset;
	free(wb);
	if (e && !drop)
		return write_fail(w, e, offset);
	return 0;
}

/* Hand the buffer being filled to the write thread and take the next free one. 0, or
 * SLAB_ERR_IO when a write has failed (found here, a few buffers after it). */
static int wb_handoff(struct slab_writer *w)
{
	struct wbehind *wb = w->wb;
	int e;

	pthread_mutex_lock(&wb->mu);
	wb->len[wb->tail % WB_BUFS] = w->buf_len;
	wb->tail++;
	pthread_cond_broadcast(&wb->cv);
	while (wb->tail - wb->head == WB_BUFS && !wb->err)
		pthread_cond_wait(&wb->cv, &wb->mu);
	e = wb->err;
	w->buf = wb->bufs[wb->tail % WB_BUFS];
	pthread_mutex_unlock(&wb->mu);
	return e ? wb_stop(w, 0) : 0;
}

/* The buffer's bytes: whole buffers until the last. */
static int flush(struct slab_writer *w)
{
	int r = 0;

	if (w->buf_len)
		r = w->wb ? wb_handoff(w) : write_all(w, w->buf, w->buf_len);
	w->buf_len = 0;
	return r;
}

/* Between calls the buffer is never full: a full one is written at once. */
static int put(struct slab_writer *w, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len) {
		size_t n;

		if (w->buf_len == 0 && len >= OUTBUF_SIZE && !w->wb) {
			/* Straight from the caller's memory: one copy less. (The write thread
			 * needs bytes of its own.) */
			n = len - len % OUTBUF_SIZE;
			if (write_all(w, c, n) < 0)
				return SLAB_ERR_IO;
		} else {
			n = OUTBUF_SIZE - w->buf_len;
			if (n > len)
				n = len;
			memcpy(w->buf + w->buf_len, c, n);
			w->buf_len += n;
			if (w->buf_len == OUTBUF_SIZE && flush(w) < 0)
				return SLAB_ERR_IO;
		}
		w->pos += n;
		c += n;
		len -= n;
	}
	return 0;
}

static int put_zeros(struct slab_writer *w, uint64_t len)
{
	while (len) {
		size_t n = OUTBUF_SIZE - w->buf_len;

		if (n > len)
			n = (size_t)len;
		memset(w->buf + w->buf_len, 0, n);
		w->buf_len += n;
		w->pos += n;
		len -= n;
		if (w->buf_len == OUTBUF_SIZE && flush(w) < 0)
			return SLAB_ERR_IO;
	}
	return 0;
}

/* ---- open ------------------------------------------------------------------------------- */

/* The key set's way back to the bytes of sample i's key. */
static const void *sample_key(void *ctx, uint64_t i, size_t *len)
{
	const struct slab_writer *w = ctx;

	*len = w->samples[i].key_len;
	return w->keys + w->samples[i].key_off;
}

struct slab_writer *slab_writer_new(void)
{
	struct slab_writer *w = calloc(1, sizeof(*w));

	if (w)
		w->fd = -1;
	return w;
}

const char *slab_writer_error(const struct slab_writer *w)
{
	return w->err.text;
}

int slab_writer_open(struct slab_writer *w, int fd, const char *name,
		     const struct slab_writer_options *o)
{
	unsigned char hdr[SLAB_HEADER_SIZE];
	struct slab_writer_options opt = { 0 };
	uint64_t ps;
	const char *opts;
	size_t optlen;

	/* A second open would start a second header in the middle of the first file. */
	if (w->opened)
		return slab_fail(&w->err, SLAB_ERR_INVAL, w->name ? w->name : "(output)",
				 "writer already open");
	/* Options refused before anything is written leave the writer as new: the caller may
	 * open it again with others (it said "writer already open" of a writer never open). */
	if (!name)
		name = "(output)";
	if (o && slab_sized_in(&opt, sizeof(opt), o, WRITER_OPTIONS_FIRST) < 0)
		return slab_fail(&w->err, SLAB_ERR_INVAL, name,
				 "options size %zu is that of no version", o->size);
	ps = opt.page_size ? opt.page_size : SLAB_DEFAULT_PAGE_SIZE;
	opts = opt.options ? opt.options : "";
	optlen = strlen(opts);
	if (ps < SLAB_MIN_PAGE_SIZE || ps > SLAB_MAX_PAGE_SIZE || (ps & (ps - 1)))
		return slab_fail(&w->err, SLAB_ERR_INVAL, name,
				 "page size %llu is not a power of two from 4 KiB to 1 GiB",
				 (unsigned long long)ps);
	if (optlen > SLAB_OPTIONS_MAX)
		return slab_fail(&w->err, SLAB_ERR_INVAL, name,
				 "options record is %zu bytes, more than %u", optlen, SLAB_OPTIONS_MAX);
	/* The header only goes into the buffer here: a descriptor that is closed, or open for
	 * reading alone, would fail at the first flush, after the caller gave samples (every
	 * one of them taken), or at the finish. It fails now, writing nothing. */
	{
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY
#ifdef O_PATH
		    || (fl & O_PATH)
#endif
		   ) {
			int e = fl < 0 ? errno : EBADF;

			slab_fail(&w->err, SLAB_ERR_IO, name, "file descriptor %d is not open for "
				  "writing: %s", fd, strerror(e));
			errno = e;
			return SLAB_ERR_IO;
		}
	}
	w->opened = 1;
	w->name = strdup(name);
	w->fd = fd;
	if (!w->name)
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
	/* Page-aligned: the kernel copies out of it at full speed. */
	if (posix_memalign((void **)&w->buf, 4096, OUTBUF_SIZE) != 0)
		w->buf = NULL;
	if (!w->buf || slab_keyset_init(&w->keyset, 512, sample_key, w) < 0)
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
	w->page_size = ps;
	w->data_offset = SLAB_HEADER_SIZE;
	{
		struct stat st;
		if (opt.writeback && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			w->writeback = opt.writeback;
	}
	wb_start(w);

	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, SLAB_MAGIC, 8);
	slab_put16(hdr + 8, SLAB_FORMAT_MAJOR);
	slab_put16(hdr + 10, SLAB_FORMAT_MINOR);
	slab_put32(hdr + 12, SLAB_HEADER_SIZE);
	slab_put64(hdr + 16, ps);
	slab_put64(hdr + 24, w->data_offset);
	memcpy(hdr + SLAB_OPTIONS_OFFSET, opts, optlen);
	w->header_crc = slab_crc32c(0, hdr, sizeof(hdr));
	slab_put32(hdr + 36, w->header_crc);
	return put(w, hdr, sizeof(hdr));
}

/* ---- samples ---------------------------------------------------------------------------- */

static int field_id(struct slab_writer *w, const char *name, uint32_t *id)
{
	uint64_t cap = w->cap_names;

	for (uint32_t i = 0; i < w->nnames; i++)
		if (strcmp(w->names[i], name) == 0) {
			*id = i;
			return 0;
		}
	if (w->nnames >= UINT16_MAX)
		return writer_fail(w, SLAB_ERR_INVAL, "more than %u distinct field names", UINT16_MAX);
	if (!*name)
		return writer_fail(w, SLAB_ERR_INVAL, "empty field name");
	/* slab(5): KEY.FIELD on export must not name a path into a folder of its own. */
	if (strchr(name, '/'))
		return writer_fail(w, SLAB_ERR_INVAL, "field name '%.200s' has a '/' in it", name);
	if (strlen(name) > UINT16_MAX)
		return writer_fail(w, SLAB_ERR_INVAL, "field name longer than %u bytes", UINT16_MAX);
	if (grow((void **)&w->names, &cap, (uint64_t)w->nnames + 1, sizeof(*w->names)) < 0 ||
	    !(w->names[w->nnames] = strdup(name)))
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
	w->cap_names = (uint32_t)cap;
	*id = w->nnames++;
	return 0;
}

/* Move to a fresh page: zero-fill to the next page boundary. */
static int new_page(struct slab_writer *w)
{
	uint64_t rel = w->pos - w->data_offset;
	uint64_t pad = (w->page_size - rel % w->page_size) % w->page_size;

	if (put_zeros(w, pad) < 0)
		return SLAB_ERR_IO;
	w->pages = (w->pos - w->data_offset) / w->page_size + 1;
	w->page_full = 0;
	return 0;
}

/* A video's info as its record holds it: the duration rounded to the microsecond (0 when
 * it is not a finite number of seconds from 0), the codec's first bytes. */
static void video_record(struct wvideo *v, const struct slab_video_info *in)
{
	double us = in->duration * 1e6;
	size_t n;

	memset(v, 0, sizeof(*v));
	/* Rounded in uint64_t: llround() has no answer past INT64_MAX (2^63 us, 292000
	 * years), which a video's header may claim, and gave 2^63 for every such length. */
	v->duration_us = isfinite(us) && us >= 0 ? (us < 1.8e19 ? (uint64_t)(us + 0.5) : UINT64_MAX) : 0;
	v->frames = in->frames;
	v->fps_num = in->fps_num;
	v->fps_den = in->fps_den;
	n = strnlen(in->codec, sizeof(in->codec));
	memcpy(v->codec, in->codec, n < sizeof(v->codec) ? n : sizeof(v->codec));
}

int slab_writer_add(struct slab_writer *w, const char *key, size_t key_len,
		    const struct slab_writer_field *fields, size_t nfields)
{
	return slab_writer_add_ex(w, key, key_len, fields, nfields, NULL);
}

int slab_writer_add_ex(struct slab_writer *w, const char *key, size_t key_len,
		       const struct slab_writer_field *fields, size_t nfields,
		       const struct slab_video_info *const *videos)
{
	uint64_t size = 0, used, hash, first, nv = 0;
	struct wsample *s;
	int ready = writer_ready(w);

	if (ready < 0)
		return ready;
	if (key_len > UINT32_MAX)
		return writer_fail(w, SLAB_ERR_INVAL, "key longer than 4 GiB");
	/* slab(5), and slab_verify(): a key is a safe member name once exported. */
	if (!slab_key_safe(key, key_len))
		return writer_fail(w, SLAB_ERR_INVAL,
				   "key '%.*s' is not a safe member name (absolute, with a '..' component or a NUL byte)",
				   slab_key_shown(key_len), key);
	if (nfields > 255)
		return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' has more than 255 fields",
			    slab_key_shown(key_len), key);
	for (size_t i = 0; i < nfields; i++) {
		unsigned image = fields[i].flags & SLAB_FIELD_IMAGE;

		if (!fields[i].name)
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field %zu: no name",
					   slab_key_shown(key_len), key, i);
		/* slab(5): the member name KEY.FIELD is safe on export too. */
		if (slab_member_dotdot(key, key_len, fields[i].name))
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '.': member name "
					   "'%.*s..' is not a safe member name (a '..' component)",
					   slab_key_shown(key_len), key, slab_key_shown(key_len), key);
		if (!fields[i].data && fields[i].size)
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': no data for %llu %s",
					   slab_key_shown(key_len), key, fields[i].name,
					   (unsigned long long)fields[i].size,
					   slab_plural(fields[i].size, "byte", "bytes"));
		/* slab(5): at most one image flag. */
		if (image & (image - 1))
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': more than one image flag",
					   slab_key_shown(key_len), key, fields[i].name);
		/* A flag this library does not know would be dropped, a value over a byte cut to
		 * its low bits (subsampling 256 stored as 4:4:4): both refused. */
		if (fields[i].flags & ~(unsigned)(SLAB_FIELD_IMAGE | SLAB_FIELD_TRANSCODED |
						  SLAB_FIELD_RESTART | SLAB_FIELD_VIDEO | SLAB_FIELD_PRESENT))
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': unknown flags 0x%x",
					   slab_key_shown(key_len), key, fields[i].name, fields[i].flags);
		if (image == SLAB_FIELD_JPEG && (fields[i].subsamp > 255 || fields[i].colorspace > 255))
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': subsampling %u or "
					   "colour space %u over 255", slab_key_shown(key_len), key,
					   fields[i].name, fields[i].subsamp, fields[i].colorspace);
		/* slab(5): RESTART says a JPEG was given restart markers; on other bytes it
		 * would tell a reader something false. */
		if ((fields[i].flags & SLAB_FIELD_RESTART) && image != SLAB_FIELD_JPEG)
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': RESTART without JPEG",
					   slab_key_shown(key_len), key, fields[i].name);
		for (size_t j = 0; j < i; j++)
			if (strcmp(fields[i].name, fields[j].name) == 0)
				return slab_fail(&w->err, SLAB_ERR_DUPFIELD, NULL, "sample '%.*s': field '%s' given twice",
					    slab_key_shown(key_len), key,
					    fields[i].name);
		size += fields[i].size;
		if (!(fields[i].flags & SLAB_FIELD_VIDEO))
			continue;
		if (fields[i].flags & SLAB_FIELD_IMAGE)
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': a video and an image",
					   slab_key_shown(key_len), key, fields[i].name);
		if (!videos || !videos[i])
			return writer_fail(w, SLAB_ERR_INVAL, "sample '%.*s' field '%s': a video without its info",
					   slab_key_shown(key_len), key, fields[i].name);
		nv++;
	}
	if (w->nvideos + nv > UINT32_MAX)
		return writer_fail(w, SLAB_ERR_INVAL, "more than %u videos", UINT32_MAX);
	/* Room first, so that adding the key once the sample is written cannot fail. */
	if (slab_keyset_reserve(&w->keyset, w->nsamples + 1) < 0)
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
	hash = slab_keyset_hash(&w->keyset, key, key_len);
	first = slab_keyset_find(&w->keyset, hash, key, key_len);
	if (first != SLAB_KEYSET_NONE) {
		return slab_fail(&w->err, SLAB_ERR_DUPKEY, NULL, "key '%.*s' appears again (first as sample %llu)",
			    slab_key_shown(key_len), key,
			    (unsigned long long)first);
	}

	/* Placement: a sample that does not fit in what is left of the page starts a new one;
	 * one larger than a page starts a page and takes whole pages. */
	used = w->pages ? (w->pos - w->data_offset) - (w->pages - 1) * w->page_size : 0;
	if (!w->pages || w->page_full || used >= w->page_size ||
	    (size <= w->page_size && used + size > w->page_size) ||
	    (size > w->page_size && used > 0)) {
		if (new_page(w) < 0)
			return SLAB_ERR_IO;
	}

	if (grow((void **)&w->samples, &w->cap_samples, w->nsamples + 1, sizeof(*w->samples)) < 0 ||
	    grow((void **)&w->fields, &w->cap_fields, w->nfields + nfields, sizeof(*w->fields)) < 0 ||
	    grow((void **)&w->keys, &w->keys_cap, w->keys_len + key_len + 1, 1) < 0 ||
	    grow((void **)&w->videos, &w->cap_videos, w->nvideos + nv, sizeof(*w->videos)) < 0)
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");

	if ((w->pos - w->data_offset) / w->page_size > UINT32_MAX)
		return writer_fail(w, SLAB_ERR_INVAL, "more than 2^32 pages: use a larger page size");
	s = &w->samples[w->nsamples];
	s->offset = w->pos;
	s->size = size;
	s->key_off = w->keys_len;
	s->key_len = (uint32_t)key_len;
	s->page = (uint32_t)((w->pos - w->data_offset) / w->page_size);
	s->first_field = w->nfields;
	s->nfields = (uint32_t)nfields;
	memcpy(w->keys + w->keys_len, key, key_len);
	w->keys_len += key_len;

	for (size_t i = 0; i < nfields; i++) {
		struct wfield *f = &w->fields[w->nfields + i];
		const struct slab_writer_field *in = &fields[i];
		int r = field_id(w, in->name, &f->id);

		if (r < 0)
			return r;       /* an empty or too long name is not out of memory */
		f->offset = w->pos;
		f->size = in->size;
		f->crc = slab_crc32c(0, in->data, (size_t)in->size);
		f->flags = (unsigned char)(SLAB_FIELD_PRESENT |
				(in->flags & (SLAB_FIELD_IMAGE | SLAB_FIELD_TRANSCODED |
					      SLAB_FIELD_RESTART | SLAB_FIELD_VIDEO)));
		/* slab(5): the image bytes are zero without an image flag, and a size the u16s
		 * cannot hold is recorded as 0 x 0, never cut to its low bits. */
		f->width = f->height = 0;
		f->subsamp = f->colorspace = 0;
		f->video = 0;
		if (in->flags & SLAB_FIELD_VIDEO) {
			f->video = (uint32_t)w->nvideos;
			video_record(&w->videos[w->nvideos++], videos[i]);
		}
		if ((in->flags & (SLAB_FIELD_IMAGE | SLAB_FIELD_VIDEO)) && in->width <= UINT16_MAX &&
		    in->height <= UINT16_MAX) {
			f->width = in->width;
			f->height = in->height;
		}
		if (in->flags & SLAB_FIELD_JPEG) {
			f->subsamp = (unsigned char)in->subsamp;
			f->colorspace = (unsigned char)in->colorspace;
		}
		f->order = (unsigned char)i;
		if (in->size && put(w, in->data, (size_t)in->size) < 0)
			return SLAB_ERR_IO;
	}
	w->nfields += nfields;
	w->data_bytes += size;
	if (slab_keyset_add(&w->keyset, hash, w->nsamples) < 0)
		return writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
	w->nsamples++;
	if (size > w->page_size) {
		w->pages = s->page + (size + w->page_size - 1) / w->page_size;
		w->page_full = 1;
	}
	return 0;
}

/* ---- finish ----------------------------------------------------------------------------- */

static int tout(struct slab_writer *w, const void *p, size_t len)
{
	if (!len)
		return 0;
	w->table_crc = slab_crc32c(w->table_crc, p, len);
	return put(w, p, len);
}

static int tzero(struct slab_writer *w, uint64_t len)
{
	static const unsigned char z[64];

	while (len) {
		size_t n = len < sizeof(z) ? (size_t)len : sizeof(z);
		if (tout(w, z, n) < 0)
			return SLAB_ERR_IO;
		len -= n;
	}
	return 0;
}

/* Field ids by their names (arg: the names), for qsort_r: no global, so two writers may
 * finish at once. */
static int by_name(const void *a, const void *b, void *arg)
{
	char *const *names = arg;

	return strcmp(names[*(const uint32_t *)a], names[*(const uint32_t *)b]);
}

static uint64_t pad8(uint64_t n)
{
	return (8 - n % 8) % 8;
}

int slab_writer_finish(struct slab_writer *w)
{
	unsigned char th[SLAB_TABLE_HEADER_SIZE], rec[SLAB_FIELD_RECORD], tr[SLAB_TRAILER_SIZE];
	uint32_t F = w->nnames, *order = NULL, *rank = NULL;
	uint64_t N = w->nsamples, B = 2, schema_size = 0, table_off, off;
	uint64_t *index = NULL, *next = NULL;
	unsigned char *row = NULL;
	int ret = SLAB_ERR_NOMEM;
	int ready = writer_ready(w);

	if (ready < 0)
		return ready;
	while (B < 2 * N)
		B *= 2;
	/* Nothing is added from here on: the key set's memory goes to the key index. */
	slab_keyset_free(&w->keyset);

	/* Field ids become ranks in byte order of the names: a stable, documented schema. */
	order = malloc((F ? F : 1) * sizeof(*order));
	rank = malloc((F ? F : 1) * sizeof(*rank));
	index = calloc(B, sizeof(*index));
	next = malloc(B * sizeof(*next));
	row = malloc((size_t)(F ? F : 1) * SLAB_FIELD_RECORD);
	if (!order || !rank || !index || !next || !row) {
		writer_fail(w, SLAB_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < F; i++)
		order[i] = i;
	qsort_r(order, F, sizeof(*order), by_name, w->names);
	for (uint32_t i = 0; i < F; i++) {
		rank[order[i]] = i;
		schema_size += 2 + strlen(w->names[i]);
	}

	/* The index man/slab.5 defines: samples inserted in order, each into the first empty slot
	 * from its home. Walking the cluster from the home slot would take quadratic time on keys
	 * that share a home, so next[] is a union-find of "the first empty slot at or after h,
	 * cyclically": an empty slot leads to itself, a filled one to a slot further on with only
	 * filled slots between, shortened while walked (path halving). B >= 2N leaves a slot
	 * empty, so every walk ends. */
	for (uint64_t h = 0; h < B; h++)
		next[h] = h;
	for (uint64_t i = 0; i < N; i++) {
		const struct wsample *s = &w->samples[i];
		uint64_t h = slab_key_hash(w->keys + s->key_off, s->key_len) & (B - 1);
		for (w->index_steps++; next[h] != h; w->index_steps++) {
			next[h] = next[next[h]];
			h = next[h];
		}
		index[h] = i + 1;
		next[h] = (h + 1) & (B - 1);
	}

	ret = SLAB_ERR_IO;
	if (put_zeros(w, (SLAB_ALIGN - w->pos % SLAB_ALIGN) % SLAB_ALIGN) < 0)
		goto out;
	table_off = w->pos;

	memset(th, 0, sizeof(th));
	memcpy(th, SLAB_TABLE_MAGIC, 8);
	slab_put64(th + 8, N);
	slab_put64(th + 16, w->pages);
	slab_put32(th + 24, F);
	off = SLAB_TABLE_HEADER_SIZE;
	slab_put64(th + 32, off);                       /* schema */
	slab_put64(th + 40, schema_size);
	off += schema_size + pad8(schema_size);
	slab_put64(th + 48, off);                       /* samples */
	off += N * SLAB_SAMPLE_RECORD;
	slab_put64(th + 56, off);                       /* fields */
	off += N * F * SLAB_FIELD_RECORD;
	slab_put64(th + 64, off);                       /* keys */
	slab_put64(th + 72, w->keys_len);
	off += w->keys_len + pad8(w->keys_len);
	slab_put64(th + 80, off);                       /* key index */
	slab_put64(th + 88, B);
	off += B * 8;
	if (w->nvideos) {                               /* video records (1.3) */
		slab_put64(th + 96, off);
		slab_put64(th + 104, w->nvideos);
		off += w->nvideos * SLAB_VIDEO_RECORD;
	}
	w->table_crc = 0;
	if (tout(w, th, sizeof(th)) < 0)
		goto out;

	for (uint32_t r = 0; r < F; r++) {
		const char *name = w->names[order[r]];
		size_t len = strlen(name);
		slab_put16(rec, (uint16_t)len);
		if (tout(w, rec, 2) < 0 || tout(w, name, len) < 0)
			goto out;
	}
	if (tzero(w, pad8(schema_size)) < 0)
		goto out;

	for (uint64_t i = 0; i < N; i++) {
		const struct wsample *s = &w->samples[i];
		memset(rec, 0, SLAB_SAMPLE_RECORD);
		slab_put64(rec, s->offset);
		slab_put64(rec + 8, s->size);
		slab_put64(rec + 16, s->key_off);
		slab_put32(rec + 24, s->key_len);
		slab_put32(rec + 28, s->page);
		if (tout(w, rec, SLAB_SAMPLE_RECORD) < 0)
			goto out;
	}

	for (uint64_t i = 0; i < N; i++) {
		const struct wsample *s = &w->samples[i];
		memset(row, 0, (size_t)F * SLAB_FIELD_RECORD);
		for (uint32_t k = 0; k < s->nfields; k++) {
			const struct wfield *f = &w->fields[s->first_field + k];
			unsigned char *p = row + (size_t)rank[f->id] * SLAB_FIELD_RECORD;
			slab_put64(p, f->offset);
			slab_put64(p + 8, f->size);
			slab_put32(p + 16, f->crc);
			slab_put16(p + 20, (uint16_t)f->width);
			slab_put16(p + 22, (uint16_t)f->height);
			p[24] = f->flags;
			p[25] = f->subsamp;
			p[26] = f->colorspace;
			p[27] = f->order;
			if (f->flags & SLAB_FIELD_VIDEO)
				slab_put32(p + 28, f->video);
		}
		if (F && tout(w, row, (size_t)F * SLAB_FIELD_RECORD) < 0)
			goto out;
	}

	if (tout(w, w->keys, (size_t)w->keys_len) < 0 || tzero(w, pad8(w->keys_len)) < 0)
		goto out;
	for (uint64_t i = 0; i < B; i++) {
		slab_put64(rec, index[i]);
		if (tout(w, rec, 8) < 0)
			goto out;
	}
	for (uint64_t k = 0; k < w->nvideos; k++) {
		const struct wvideo *v = &w->videos[k];

		memset(rec, 0, SLAB_VIDEO_RECORD);
		slab_put64(rec, v->duration_us);
		slab_put64(rec + 8, v->frames);
		slab_put32(rec + 16, v->fps_num);
		slab_put32(rec + 20, v->fps_den);
		memcpy(rec + 24, v->codec, SLAB_VIDEO_CODEC);
		if (tout(w, rec, SLAB_VIDEO_RECORD) < 0)
			goto out;
	}

	memset(tr, 0, sizeof(tr));
	memcpy(tr, SLAB_TRAILER_MAGIC, 8);
	slab_put64(tr + 8, table_off);
	slab_put64(tr + 16, w->pos - table_off);
	slab_put64(tr + 24, w->pos + SLAB_TRAILER_SIZE);
	slab_put64(tr + 32, N);
	slab_put32(tr + 40, w->table_crc);
	slab_put32(tr + 44, w->header_crc);
	slab_put32(tr + 60, slab_crc32c(0, tr, 60));
	if (put(w, tr, sizeof(tr)) < 0 || flush(w) < 0 || wb_stop(w, 0) < 0)
		goto out;
	w->finished = 1;
	ret = 0;
out:
	free(order);
	free(rank);
	free(index);
	free(next);
	free(row);
	return ret;
}

void slab_writer_stats(const struct slab_writer *w, struct slab_writer_stats *st)
{
	struct slab_writer_stats full = {
		.size = sizeof(full),
		.samples = w->nsamples,
		.fields = w->nnames,
		.pages = w->pages,
		.data_bytes = w->data_bytes,
		.file_bytes = w->pos,
	};

	slab_sized_out(st, &full, sizeof(full), WRITER_STATS_FIRST);
}

uint64_t slab_writer_key_steps(const struct slab_writer *w)
{
	return w->keyset.steps + w->index_steps;
}

void slab_writer_free(struct slab_writer *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	wb_stop(w, 1);
	free(w->name);
	free(w->buf);
	free(w->samples);
	free(w->fields);
	free(w->videos);
	free(w->keys);
	slab_keyset_free(&w->keyset);
	free(w);
}
