/* tarin.c: tar / WebDataset ingestion through libarchive: members in, samples out, with
 * bounded memory (one sample at a time, capped by max_sample_size). */
#include "tarin.h"
#include "slab.h"
#include "errfmt.h"
#include "error.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define READ_BLOCK (1u << 20)
#define ZBUF_SIZE READ_BLOCK    /* a gzip input's compressed bytes: takes the first read whole */
_Static_assert(ZBUF_SIZE >= READ_BLOCK, "gz_start() copies a first read of up to READ_BLOCK");
#define GZ_STEP (64u << 10)      /* inflated bytes per call of inflate() */

struct input;

struct slab_tarin {
	struct archive *a;
	struct input *in;               /* our input callback's state, once open; NULL in memory */
	struct archive_entry *entry;    /* ours: libarchive does not check the one it makes */
	char *name;
	struct slab_err err;
	struct slab_tarin_options o;

	struct archive_entry *pending;  /* header read, data not yet: starts the next sample */
	uint64_t pending_offset;
	char *pending_name;
	int eof;
	int input_ended;                /* read(2) of the input gave 0: it has no more bytes */
	int in_data;                    /* libarchive is in an entry's data (not yet skipped) */

	char *last_good;                /* last member read whole */
	uint64_t last_good_offset;
	struct slab_tarin_stats st;
	struct slab_err warning;        /* slab_tarin_warning(): "" when none */
};

/* What messages name: the input. */
static const char *who(const struct slab_tarin *t)
{
	return t->name ? t->name : "(stdin)";
}

/* A failure libarchive gives no errno nor text for, after the input's last byte: its gzip
 * reader's, on a stream cut inside its 8-byte trailer (gzip files are now inflated by struct
 * gz below, which says so itself; this stays for any other reader that fails so). */
static int silent_end(const struct slab_tarin *t)
{
	return archive_errno(t->a) == 0 && !archive_error_string(t->a) && t->input_ended;
}

/* libarchive sets ENOMEM when an allocation fails; a few of its allocations return
 * ARCHIVE_FATAL without setting any error at all (archive_read_open1, choose_filters): a
 * failure without errno and text is one of those, but at the input's end (silent_end). */
static int archive_nomem(const struct slab_tarin *t)
{
	return archive_errno(t->a) == ENOMEM ||
	       (archive_errno(t->a) == 0 && !archive_error_string(t->a) && !t->input_ended);
}

/* The libarchive failure with where the input was last good. Out of memory is no fault of
 * the input: SLAB_ERR_NOMEM, so no one calls the input corrupt; a failed read(2) (our input
 * callback sets its errno) is SLAB_ERR_IO; anything else is code. */
static int fail_archive(struct slab_tarin *t, int code, const char *what)
{
	const char *msg = archive_error_string(t->a);
	int e = archive_errno(t->a);

	if (silent_end(t)) {
		code = SLAB_ERR_CORRUPT;
		msg = "the input ends before its compressed stream does";
	}
	if (archive_nomem(t))
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory (%s)",
				 msg ? msg : "libarchive failed without a message");
	if (e > 0 && e != EILSEQ && e != EINVAL)     /* not libarchive's format or usage errno */
		code = SLAB_ERR_IO;
	if (t->last_good)
		return slab_fail(&t->err, code, who(t), "%s: %s (last good member '%s' at offset %llu)",
				 what, msg ? msg : "unknown error", t->last_good,
				 (unsigned long long)t->last_good_offset);
	return slab_fail(&t->err, code, who(t), "%s: %s (no good member before it)", what,
			 msg ? msg : "unknown error");
}

struct slab_tarin *slab_tarin_new(void)
{
	return calloc(1, sizeof(struct slab_tarin));
}

const char *slab_tarin_error(const struct slab_tarin *t)
{
	return t->err.text;
}

const char *slab_tarin_warning(const struct slab_tarin *t)
{
	return t->warning.text;
}

static uint64_t raw_bytes(const struct slab_tarin *t);

void slab_tarin_stats(const struct slab_tarin *t, struct slab_tarin_stats *st)
{
	*st = t->st;
	if (t->a)
		st->raw_bytes = raw_bytes(t);
}

/* What every input shares: the name for messages, the options and a reader that takes any
 * compression and tar dialect. 0 or an error. */
static int setup(struct slab_tarin *t, const char *name, const struct slab_tarin_options *o)
{
	if (o)
		t->o = *o;
	t->name = strdup(name);
	t->a = archive_read_new();
	t->entry = archive_entry_new();
	if (!t->name)   /* not under "(stdin)", the name who() gives a missing one */
		return slab_fail(&t->err, SLAB_ERR_NOMEM, name, "out of memory");
	if (!t->a || !t->entry)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
	/* The compressions pack(1) names, not archive_read_support_filter_all(): that one
	 * also takes lrzip, lzop and grzip through an external program found on PATH, so an
	 * input's first bytes chose a program to run. A filter that could not be registered
	 * (ARCHIVE_WARN: its library is missing and its program is used instead) only fails
	 * the inputs compressed with it, with a message of its own. */
	archive_read_support_filter_gzip(t->a);
	archive_read_support_filter_bzip2(t->a);
	archive_read_support_filter_xz(t->a);
	archive_read_support_filter_zstd(t->a);
	archive_read_support_filter_lz4(t->a);
	/* These fail only when out of memory; unchecked, the input would read as "not a tar
	 * archive". */
	if (archive_read_support_format_tar(t->a) != ARCHIVE_OK ||
	    archive_read_support_format_gnutar(t->a) != ARCHIVE_OK ||
	    archive_read_support_format_empty(t->a) != ARCHIVE_OK ||
	    /* `cat a.tar b.tar` is a common way to join shards: read past end-of-archive
	     * blocks. */
	    archive_read_set_format_option(t->a, "tar", "read_concatenated_archives", "1") !=
	    ARCHIVE_OK)
		return fail_archive(t, SLAB_ERR_NOMEM, "cannot set up the tar reader");
	return 0;
}

/* The result of archive_read_open_*() as our error. */
static int open_result(struct slab_tarin *t, int r)
{
	if (r != ARCHIVE_OK) {
		int e = archive_errno(t->a);
		const char *msg = archive_error_string(t->a);
		if (archive_nomem(t))
			return fail_archive(t, SLAB_ERR_NOMEM, "out of memory");
		if (e == EILSEQ)        /* libarchive's "file format" errno */
			return slab_fail(&t->err, SLAB_ERR_FORMAT, who(t), "not a tar archive: %s",
					 msg ? msg : "unknown format");
		if (e > 0 && e != EINVAL)
			return slab_fail(&t->err, SLAB_ERR_IO, who(t), "%s", strerror(e));
		/* Detection reads ahead: a damaged compressed stream shows up already here. */
		return fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
	}
	return 0;
}

static const unsigned char *nonzero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return p + i;
	return NULL;
}

/*
 * Our own input rather than archive_read_open_filename(): libarchive's buffer comes from
 * malloc, 16 bytes past a page boundary, and the kernel's copy into a buffer that is not
 * 64-byte aligned runs several times slower on common x86 CPUs (measured: 0.6 s against 0.12 s
 * to read 1.1 GB from the page cache). A page-aligned buffer reads at memory speed.
 */
struct input {
	struct slab_tarin *t;
	int fd;
	int seekable;
	uint64_t size, pos;
	uint64_t start;                 /* pos at the open: standard input may be a file read part way */
	void *buf;                      /* two halves of READ_BLOCK, used in turn, so the block before */
	unsigned half;                  /* the last one stays readable (trailing_data()) */
	size_t last_n, prev_n;          /* bytes in the last block read and in the one before */
	int looked;                     /* the first bytes have been seen: gz says what they were */
	struct gz *gz;                  /* a gzip input's inflater; NULL for any other */
};

/*
 * A gzip input is inflated here, and libarchive reads the plain tar: its gzip reader checks
 * neither the CRC-32 nor the length (ISIZE) in a member's trailer, so flipped bits in the
 * compressed data were packed as good data, and the .slab file's own CRCs then vouched for
 * them. zlib checks both (windowBits 15 + 16). Members follow one another as one stream
 * (`cat a.tar.gz b.tar.gz`); after the last only zeros may follow (tape padding, as gzip -d
 * takes it), which this layer checks itself, as trailing_data() does for the other
 * compressions.
 */
/* A gzip member's first bytes: its magic and the deflate method. */
static const unsigned char gz_magic[3] = { 0x1f, 0x8b, 0x08 };

struct gz {
	z_stream z;
	unsigned char *buf;             /* ZBUF_SIZE compressed bytes, page aligned */
	int raw_eof;                    /* read(2) gave 0 */
	int between;                    /* a member ended: what follows is not yet known */
	int padding;                    /* zeros after the last member: only zeros may follow */
	int eof;                        /* the whole input is read and checked */
	int err;                        /* an error found after bytes still to give: next call's */
	char msg[160];
};

/* The input offset of the next compressed byte inflate has not taken. */
static uint64_t gz_offset(const struct input *in)
{
	return in->pos - in->gz->z.avail_in;
}

/* The input's damage as an errno for archive_set_error: libarchive's ARCHIVE_ERRNO_MISC
 * (archive_platform.h, not installed), which fail_archive() calls corrupt. */
#define GZ_DAMAGE (-1)

/* An error of the gzip layer, given at the next read (or now, if nothing is to be given
 * before it). err: an errno, or GZ_DAMAGE. Returns -1. */
static int gz_error(struct input *in, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int gz_error(struct input *in, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->gz->msg, sizeof(in->gz->msg), fmt, ap);
	va_end(ap);
	in->gz->err = err;
	return -1;
}

/* read(2) of up to len bytes of the input, again when interrupted, its end (input_ended) and
 * offset (pos) kept. Bytes read, or -1 (errno). */
static ssize_t read_input(struct input *in, void *b, size_t len)
{
	ssize_t n;

	do
		n = read(in->fd, b, len);
	while (n < 0 && errno == EINTR);
	if (n >= 0) {
		in->t->input_ended |= n == 0;
		in->pos += (uint64_t)n;
	}
	return n;
}

/* More compressed bytes after those inflate has not taken yet (moved to the buffer's
 * start). 0 (raw_eof set at the end) or -1 (gz_error). */
static int gz_refill(struct input *in)
{
	struct gz *g = in->gz;
	size_t have = g->z.avail_in;
	ssize_t n;

	if (have && g->z.next_in != g->buf)
		memmove(g->buf, g->z.next_in, have);
	g->z.next_in = g->buf;
	n = read_input(in, g->buf + have, ZBUF_SIZE - have);
	if (n < 0)
		return gz_error(in, errno, "read error at offset %llu: %s",
				(unsigned long long)in->pos, strerror(errno));
	g->raw_eof |= n == 0;
	g->z.avail_in = (uInt)(have + (size_t)n);
	return 0;
}

/* After a member's end: another member (reset the inflater, 1), zeros to the end (0, eof
 * set when all are read) or other data (-1, the error trailing_data() gives, in its words). */
static int gz_next_member(struct input *in)
{
	struct gz *g = in->gz;
	const unsigned char *bad;

	while (g->z.avail_in < sizeof(gz_magic) && !g->raw_eof && !g->padding)
		if (gz_refill(in) < 0)
			return -1;
	if (!g->padding && g->z.avail_in >= sizeof(gz_magic) &&
	    memcmp(g->z.next_in, gz_magic, sizeof(gz_magic)) == 0) {
		g->between = 0;
		return inflateReset(&g->z) == Z_OK ? 1 :
		       gz_error(in, GZ_DAMAGE, "cannot restart the gzip inflater");
	}
	for (;;) {
		if ((bad = nonzero(g->z.next_in, g->z.avail_in)) != NULL) {
			g->z.avail_in -= (uInt)(bad - g->z.next_in);
			g->z.next_in = (unsigned char *)bad;
			if (in->seekable)
				return gz_error(in, GZ_DAMAGE, "data after the end of its last gzip stream at offset %llu, not read",
						(unsigned long long)gz_offset(in));
			return gz_error(in, GZ_DAMAGE, "data after the end of its last gzip stream, near offset %llu, not read",
					(unsigned long long)gz_offset(in));
		}
		g->padding = 1;
		g->z.avail_in = 0;
		if (g->raw_eof) {
			g->eof = 1;
			return 0;
		}
		if (gz_refill(in) < 0)
			return -1;
	}
}

/* Up to READ_BLOCK inflated bytes into b: their count, 0 at the (checked) end, or -1 with
 * the error in in->gz. An error found after some bytes waits for the next call, so that
 * libarchive reads the members before it and the message names the last good one. */
static ssize_t gz_read(struct input *in, unsigned char *b)
{
	struct gz *g = in->gz;
	unsigned char *end = b + READ_BLOCK;
	int r;

	if (g->err)
		return -1;
	g->z.next_out = b;
	while (g->z.next_out < end && !g->eof) {
		if (g->between) {
			if (gz_next_member(in) < 0)
				break;
			continue;
		}
		if (!g->z.avail_in && !g->raw_eof && gz_refill(in) < 0)
			break;
		/* A step at a time: zlib's CRC-32 of each step's output then reads it from the
		 * cache that inflate just wrote it to. */
		g->z.avail_out = (uInt)(end - g->z.next_out < GZ_STEP ? end - g->z.next_out : GZ_STEP);
		r = inflate(&g->z, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			g->between = 1;
		} else if (r == Z_MEM_ERROR) {
			gz_error(in, ENOMEM, "out of memory (inflate)");
			break;
		} else if (r == Z_BUF_ERROR && !g->z.avail_in && g->raw_eof) {
			/* pack(1)'s words for a stream cut short in every compression */
			gz_error(in, GZ_DAMAGE, "the input ends before its compressed stream does");
			break;
		} else if (r != Z_OK && r != Z_BUF_ERROR) {
			gz_error(in, GZ_DAMAGE, "gzip stream: %s at compressed offset %llu",
				 g->z.msg ? g->z.msg : "corrupt data", (unsigned long long)gz_offset(in));
			break;
		}
	}
	if (g->z.next_out > b)
		return (ssize_t)(g->z.next_out - b);
	return g->err ? -1 : 0;
}

/* The first bytes, n of them at b, start a gzip member: take them as the inflater's first
 * input. 0, or -1 with the error in in->gz (when out of memory, none). */
static int gz_start(struct input *in, const unsigned char *b, size_t n)
{
	struct gz *g = calloc(1, sizeof(*g));

	if (!g)
		return -1;
	in->gz = g;
	if (posix_memalign((void **)&g->buf, 4096, ZBUF_SIZE) != 0)
		return gz_error(in, ENOMEM, "out of memory");
	if (inflateInit2(&g->z, 15 + 16) != Z_OK)   /* leaves z.state NULL */
		return gz_error(in, ENOMEM, "out of memory (inflateInit2)");
	memcpy(g->buf, b, n);
	g->z.next_in = g->buf;
	g->z.avail_in = (uInt)n;
	return 0;
}

static void gz_free(struct gz *g)
{
	if (!g)
		return;
	if (g->z.state)
		inflateEnd(&g->z);
	free(g->buf);
	free(g);
}

/* read(2) into b until at least want bytes are there or the input ends: the first bytes of a
 * pipe written a byte at a time still show a gzip magic. Bytes read, or -1 (errno). */
static ssize_t read_at_least(struct input *in, unsigned char *b, size_t want)
{
	size_t have = 0;

	while (have < want) {
		ssize_t n = read_input(in, b + have, READ_BLOCK - have);
		if (n <= 0) {
			if (n < 0)
				return -1;
			break;
		}
		have += (size_t)n;
	}
	return (ssize_t)have;
}

static la_ssize_t input_read(struct archive *a, void *data, const void **out)
{
	struct input *in = data;

	for (;;) {
		unsigned char *b = (unsigned char *)in->buf + (size_t)(in->half ^ 1) * READ_BLOCK;
		ssize_t n;

		if (in->gz) {
			*out = b;
			in->half ^= 1;
			if ((n = gz_read(in, b)) < 0)
				archive_set_error(a, in->gz->err, "%s", in->gz->msg);
			return n;
		}
		if (!in->looked) {
			in->looked = 1;
			n = read_at_least(in, b, sizeof(gz_magic));
			if (n >= (ssize_t)sizeof(gz_magic) && memcmp(b, gz_magic, sizeof(gz_magic)) == 0) {
				if (gz_start(in, b, (size_t)n) < 0) {
					archive_set_error(a, ENOMEM, "%s", in->gz ? in->gz->msg : "out of memory");
					return -1;
				}
				continue;
			}
		} else {
			n = read_input(in, b, READ_BLOCK);
		}
		if (n < 0) {
			archive_set_error(a, errno, "read error at offset %llu: %s",
					  (unsigned long long)in->pos, strerror(errno));
			return -1;
		}
		if (n > 0) {
			in->half ^= 1;
			in->prev_n = in->last_n;
			in->last_n = (size_t)n;
		}
		*out = b;
		return n;
	}
}

/* Seek over data nobody wants (fields --fields drops, bad samples); never past the end, so a
 * truncated file still reads as truncated. */
static la_int64_t input_skip(struct archive *a, void *data, la_int64_t request)
{
	struct input *in = data;
	uint64_t n = (uint64_t)request;

	(void)a;
	/* A gzip input's offsets are the inflated tar's: it is read through instead. */
	if (!in->seekable || in->gz || request <= 0)
		return 0;
	if (n > in->size - in->pos)
		n = in->size - in->pos;
	n -= n % 4096;          /* whole blocks keep the reads aligned with the file */
	if (!n || lseek(in->fd, (off_t)n, SEEK_CUR) < 0)
		return 0;
	in->pos += n;
	return (la_int64_t)n;
}

static int input_close(struct archive *a, void *data)
{
	struct input *in = data;

	(void)a;
	if (in->fd > 0)
		close(in->fd);
	gz_free(in->gz);
	free(in->buf);
	free(in);
	return ARCHIVE_OK;
}

int slab_tarin_open(struct slab_tarin *t, const char *path, const struct slab_tarin_options *o)
{
	int std = !path || strcmp(path, "-") == 0;
	int r = setup(t, slab_input_shown(path), o);
	struct input *in;
	struct stat st;

	if (r < 0)
		return r;
	in = calloc(1, sizeof(*in));
	if (!in || posix_memalign(&in->buf, 4096, 2 * (size_t)READ_BLOCK) != 0) {
		free(in);
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
	}
	in->t = t;
	t->input_ended = 0;
	in->fd = std ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		r = errno;
		free(in->buf);
		free(in);
		return slab_fail(&t->err, r == ENOMEM ? SLAB_ERR_NOMEM : SLAB_ERR_IO, who(t), "%s",
				 strerror(r));
	}
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->seekable = 1;
		in->size = (uint64_t)st.st_size;
		in->pos = (uint64_t)lseek(in->fd, 0, SEEK_CUR);
		in->start = in->pos;
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	/* What archive_read_open2() does, but checked: it ignores the failure to allocate the
	 * callback data and goes on to use it. */
	if (archive_read_set_read_callback(t->a, input_read) != ARCHIVE_OK ||
	    archive_read_set_skip_callback(t->a, input_skip) != ARCHIVE_OK ||
	    archive_read_set_close_callback(t->a, input_close) != ARCHIVE_OK ||
	    archive_read_set_callback_data(t->a, in) != ARCHIVE_OK) {
		input_close(t->a, in);
		return fail_archive(t, SLAB_ERR_NOMEM, "cannot set up the input");
	}
	/* archive_read_open1 calls input_close when opening fails, but for one allocation:
	 * then `in` leaks, as nothing says whether it was freed. */
	r = open_result(t, archive_read_open1(t->a));
	if (r == 0)
		t->in = in;
	return r;
}

/* The input from *at to its end (pread for a file, read for a pipe): 0 when every byte is
 * zero, 1 at the first that is not (*at its offset), or an error. */
static int zeros_to_end(struct slab_tarin *t, uint64_t *at)
{
	struct input *in = t->in;

	for (;;) {
		size_t want = READ_BLOCK;
		const unsigned char *bad;
		ssize_t n;

		if (in->seekable) {
			if (*at >= in->size)
				return 0;
			if (in->size - *at < want)
				want = (size_t)(in->size - *at);
			n = pread(in->fd, in->buf, want, (off_t)*at);
		} else {
			n = read(in->fd, in->buf, want);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return slab_fail(&t->err, SLAB_ERR_IO, who(t), "read error at offset %llu: %s",
					 (unsigned long long)*at, strerror(errno));
		if (n == 0)
			return 0;
		if ((bad = nonzero(in->buf, (size_t)n)) != NULL) {
			*at += (uint64_t)(bad - (const unsigned char *)in->buf);
			return 1;
		}
		*at += (uint64_t)n;
	}
}

/* The compressed bytes read: what the progress line counts. libarchive counts what our
 * input gives it, inflated for a gzip input. */
static uint64_t raw_bytes(const struct slab_tarin *t)
{
	if (t->in && t->in->gz)
		return t->in->pos - t->in->start;
	return (uint64_t)archive_filter_bytes(t->a, -1);
}

/* trailing_data() for a gzip input: the gzip layer checks what follows its last member
 * itself, when it is read to the end, as libarchive reads a tar's concatenated archives. In
 * case libarchive stopped short of that, the rest is read here: the inflated bytes must be
 * zeros (the tar's end blocks), and every member's checks still hold. 0 or an error. */
static int gz_drain(struct slab_tarin *t)
{
	struct input *in = t->in;
	ssize_t n;

	while ((n = gz_read(in, in->buf)) > 0)
		if (nonzero(in->buf, (size_t)n))
			return slab_fail(&t->err, SLAB_ERR_CORRUPT, who(t),
					 "truncated or corrupt archive: data after the end of its tar archive, not read");
	if (n < 0) {
		archive_set_error(t->a, in->gz->err, "%s", in->gz->msg);
		return fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
	}
	return 0;
}

/*
 * At the archive's end: the input must hold nothing more than zeros (tape padding, which
 * gzip -d accepts too). libarchive's gzip, bzip2 and lz4 readers end their stream at the first
 * bytes that do not start another member of their format and leave them unread (gzip is now
 * inflated by struct gz, which makes this check itself: gz_drain()), so without
 * this `cat a.tar.gz b.tar` packed a.tar alone, and a concatenation of .tar.gz shards whose
 * second member header is damaged packed the first shard alone, both with exit status 0.
 * 0 or an error.
 */
static int trailing_data(struct slab_tarin *t)
{
	struct input *in = t->in;
	uint64_t end, at, left;
	const unsigned char *last, *prev;
	int r;

	if (!in)
		return 0;
	if (in->gz)
		return gz_drain(t);
	/* Where libarchive stopped reading the input; at: where the check is. */
	at = end = in->start + (uint64_t)archive_filter_bytes(t->a, -1);
	if (!in->seekable) {
		/* A pipe: the bytes read and not consumed are the end of the last two blocks. */
		last = (const unsigned char *)in->buf + (size_t)in->half * READ_BLOCK;
		prev = (const unsigned char *)in->buf + (size_t)(in->half ^ 1) * READ_BLOCK;
		left = end < in->pos ? in->pos - end : 0;
		/* More than two blocks unconsumed: libarchive peeked through reads of a few bytes
		 * each (a pipe written a little at a time). Only its last two can be seen; the
		 * rest of the input is read below. */
		if (left > (uint64_t)in->last_n + in->prev_n)
			left = (uint64_t)in->last_n + in->prev_n;
		if (left > in->last_n && nonzero(prev + in->prev_n - (left - in->last_n), (size_t)(left - in->last_n)))
			goto fail;
		if (left && nonzero(last + (left > in->last_n ? 0 : in->last_n - left),
				    left > in->last_n ? in->last_n : (size_t)left))
			goto fail;
		at = in->pos;
	}
	if ((r = zeros_to_end(t, &at)) <= 0)
		return r;
fail:
	if (t->last_good)
		return slab_fail(&t->err, SLAB_ERR_CORRUPT, who(t),
				 "truncated or corrupt archive: data after the end of its last %s stream%s%llu, not read (last good member '%s' at offset %llu)",
				 archive_filter_name(t->a, 0), in->seekable ? " at offset " : ", near offset ",
				 (unsigned long long)(in->seekable ? at : end),
				 t->last_good, (unsigned long long)t->last_good_offset);
	return slab_fail(&t->err, SLAB_ERR_CORRUPT, who(t),
			 "truncated or corrupt archive: data after the end of its last %s stream, not read (no good member before it)",
			 archive_filter_name(t->a, 0));
}

int slab_split_name(const char *name, size_t *key_len, const char **field)
{
	const char *base = strrchr(name, '/'), *dot;

	base = base ? base + 1 : name;
	dot = strchr(base, '.');
	if (!dot || dot == base || dot[1] == '\0')
		return SLAB_ERR_INVAL;
	*key_len = (size_t)(dot - name);
	*field = dot + 1;
	return 0;
}

const char *slab_tarin_sample_error(const struct slab_tarin_sample *s)
{
	return s->problem.text;
}

void slab_tarin_sample_free(struct slab_tarin_sample *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfields; i++)
		free(s->fields[i].name);
	free(s->fields);
	free(s->data);
	free(s->key);
	free(s);
}

static int keep_field(const struct slab_tarin *t, const char *field)
{
	if (!t->o.keep)
		return 1;
	for (size_t i = 0; i < t->o.nkeep; i++)
		if (strcmp(t->o.keep[i], field) == 0)
			return 1;
	return 0;
}

/* Room for need bytes in s->data, growing it by doubling from 64 KiB; the caller's grow hook
 * has its say first. total is the sample's size so far, for the message. 0 or an error. */
static int reserve(struct slab_tarin *t, struct slab_tarin_sample *s, uint64_t need, uint64_t total)
{
	uint64_t n = s->alloc ? s->alloc : 65536;
	unsigned char *p;
	int r;

	/* Allocate even for need == 0: a sample of empty members still gets a buffer, so no
	 * pointer arithmetic or memset/memcpy ever sees NULL. */
	if (need <= s->alloc && s->data)
		return 0;
	while (n < need && n <= UINT64_MAX / 2)
		n *= 2;
	if (n < need || n > SIZE_MAX)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory for a sample of %llu bytes", (unsigned long long)total);
	if (t->o.grow && (r = t->o.grow(s->alloc, n - s->alloc, t->o.grow_arg)) < 0) {
		return slab_fail_silent(&t->err, r);    /* the hook's owner has said why */
	}
	p = realloc(s->data, (size_t)n);
	if (!p)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory for a sample of %llu bytes", (unsigned long long)total);
	s->data = p;
	s->alloc = n;
	return 0;
}

/* Append the current member's data to s as field `field`. Holes of sparse members are
 * zeros. */
static int read_member(struct slab_tarin *t, struct slab_tarin_sample *s, const char *field,
		       uint64_t size)
{
	uint64_t start = s->size, filled = 0;
	struct slab_tarin_field *nf;
	int r;

	nf = realloc(s->fields, (s->nfields + 1) * sizeof(*s->fields));
	if (!nf)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
	s->fields = nf;
	nf = &s->fields[s->nfields];
	nf->name = strdup(field);
	if (!nf->name)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
	nf->offset = start;
	nf->size = size;
	s->nfields++;

	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;

		r = archive_read_data_block(t->a, &buf, &len, &off);

		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_RETRY || r < ARCHIVE_WARN)
			return fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
		if (off < 0 || (uint64_t)off < filled || (uint64_t)off > size || len > size - (uint64_t)off)
			return slab_fail(&t->err, SLAB_ERR_CORRUPT, who(t), "member data of '%s' runs past its size %llu", s->key,
				    (unsigned long long)size);
		if ((r = reserve(t, s, start + (uint64_t)off + len, start + size)) < 0)
			return r;
		memset(s->data + start + filled, 0, (size_t)((uint64_t)off - filled));
		memcpy(s->data + start + off, buf, len);
		filled = (uint64_t)off + len;
	}
	if ((r = reserve(t, s, start + size, start + size)) < 0)
		return r;
	memset(s->data + start + filled, 0, (size_t)(size - filled));
	s->size = start + size;
	t->st.data_bytes += size;
	return 0;
}

/* Read headers until one that belongs to a sample (a regular member with a key and a
 * field). 1 with t->pending set, 0 at the end, or an error. */
static int next_member(struct slab_tarin *t)
{
	for (;;) {
		struct archive_entry *e = t->entry;
		const char *name, *field;
		size_t key_len;
		int64_t before;
		int r;

		/* What is left of the member before (data not read, and its padding) is taken
		 * first, so that the header read below is all the input it consumes. */
		if (t->in_data && archive_read_data_skip(t->a) < ARCHIVE_WARN)
			return fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
		t->in_data = 0;
		before = archive_filter_bytes(t->a, 0);
		r = archive_read_next_header2(t->a, t->entry);
		t->in_data = r == ARCHIVE_OK || r == ARCHIVE_WARN;
		if (r == ARCHIVE_EOF) {
			if ((r = trailing_data(t)) < 0)
				return r;
			t->eof = 1;
			/* libarchive ends a tar at a header boundary without its end-of-archive
			 * blocks ("some writers omit them"), where a cut input ends too: say so. */
			/* Not a byte: a producer upstream that failed (curl -f) looks the same. */
			if (!t->st.members && raw_bytes(t) == 0)
				slab_fail(&t->warning, 0, who(t), "the input is empty (0 bytes): it adds no samples");
			if (t->st.members && archive_filter_bytes(t->a, 0) - before < 512) {
				if (t->last_good)
					slab_fail(&t->warning, 0, who(t), "no end-of-archive blocks after member '%s' (its header at offset %llu): the input may have been cut short there",
						  t->last_good, (unsigned long long)t->last_good_offset);
				else
					slab_fail(&t->warning, 0, who(t), "no end-of-archive blocks after its last member: the input may have been cut short there");
			}
			return 0;
		}
		/* RETRY is a damaged header libarchive would skip to resync: a member lost. */
		if (r == ARCHIVE_RETRY || r < ARCHIVE_WARN)
			return fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
		t->st.members++;
		t->pending_offset = (uint64_t)archive_read_header_position(t->a);
		name = archive_entry_pathname(e);
		if (!name)
			name = archive_entry_pathname_utf8(e);
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) ||
		    archive_entry_symlink(e)) {
			t->st.skipped_special++;
			continue;
		}
		if (!name || slab_split_name(name, &key_len, &field) < 0) {
			t->st.skipped_names++;
			continue;
		}
		if (!keep_field(t, field)) {
			t->st.skipped_fields++;
			continue;
		}
		/* libarchive passes a negative size from a GNU sparse header through: as a size it
		 * would wrap every bound below. */
		if (archive_entry_size(e) < 0)
			return slab_fail(&t->err, SLAB_ERR_CORRUPT, who(t), "member '%s' at offset %llu has a negative size", name,
				    (unsigned long long)t->pending_offset);
		free(t->pending_name);
		t->pending_name = strdup(name);
		if (!t->pending_name)
			return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
		t->pending = e;
		return 1;
	}
}

int slab_tarin_next(struct slab_tarin *t, struct slab_tarin_sample **out)
{
	struct slab_tarin_sample *s = NULL;
	int r;

	*out = NULL;
	if (t->eof)
		return 0;
	if (!t->pending) {
		r = next_member(t);
		if (r <= 0)
			return r;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
	{
		const char *field;
		size_t key_len;
		slab_split_name(t->pending_name, &key_len, &field);
		s->key = strndup(t->pending_name, key_len);
		s->key_len = key_len;
		s->offset = t->pending_offset;
		if (!s->key) {
			r = slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
			goto abandon;
		}
	}

	/* A name that would be written outside the folder it is extracted in, once exported
	 * again, is refused here, as GNU tar refuses to extract it. */
	if (!slab_key_safe(s->key, s->key_len)) {
		s->bad = SLAB_TARIN_UNSAFE;
		slab_fail(&s->problem, SLAB_ERR_INVAL, NULL,
			 "member '%.300s' at offset %llu: not a safe member name (absolute, or with a '..' component)",
			 t->pending_name, (unsigned long long)t->pending_offset);
	}

	/* Members with the key of the first one form the sample. */
	while (t->pending) {
		const char *field;
		size_t key_len;
		uint64_t size = (uint64_t)archive_entry_size(t->pending);
		int dup = 0;

		slab_split_name(t->pending_name, &key_len, &field);
		if (key_len != s->key_len || memcmp(t->pending_name, s->key, key_len) != 0)
			break;          /* the next sample starts here: keep it pending */
		t->pending = NULL;
		for (size_t i = 0; i < s->nfields; i++)
			if (strcmp(s->fields[i].name, field) == 0)
				dup = 1;
		if (dup && !s->bad) {
			s->bad = SLAB_TARIN_DUPFIELD;
			slab_fail(&s->problem, SLAB_ERR_INVAL, NULL, "field '%s' appears twice in sample '%.150s'",
				 field, s->key);
		}
		if (!s->bad && strlen(field) > SLAB_TARIN_MAX_NAME) {
			s->bad = SLAB_TARIN_LONGNAME;
			slab_fail(&s->problem, SLAB_ERR_INVAL, NULL,
				 "sample '%.150s': field name '%.40s...' is longer than %d bytes",
				 s->key, field, SLAB_TARIN_MAX_NAME);
		}
		if (!s->bad && s->nfields == SLAB_TARIN_MAX_FIELDS) {
			s->bad = SLAB_TARIN_TOOMANY;
			slab_fail(&s->problem, SLAB_ERR_INVAL, NULL, "sample '%.150s' has more than %d fields",
				 s->key, SLAB_TARIN_MAX_FIELDS);
		}
		if (!s->bad && t->o.max_sample_size && size > t->o.max_sample_size - s->size) {
			s->bad = SLAB_TARIN_TOOBIG;
			slab_fail(&s->problem, SLAB_ERR_INVAL, NULL,
				 "sample '%.150s' is larger than the maximum sample size %llu bytes",
				 s->key, (unsigned long long)t->o.max_sample_size);
		}
		if (s->bad) {
			/* Keep reading past it, but never hold its bytes. */
			t->in_data = 0;
			if (archive_read_data_skip(t->a) < ARCHIVE_WARN) {
				r = fail_archive(t, SLAB_ERR_CORRUPT, "truncated or corrupt archive");
				goto abandon;
			}
		} else if ((r = read_member(t, s, field, size)) < 0) {
			goto abandon;
		}
		free(t->last_good);
		t->last_good = strdup(t->pending_name);
		t->last_good_offset = t->pending_offset;
		if (!t->last_good) {
			r = slab_fail(&t->err, SLAB_ERR_NOMEM, who(t), "out of memory");
			goto abandon;
		}
		r = next_member(t);
		if (r < 0)
			goto abandon;
	}
	*out = s;
	return 1;
abandon:
	slab_tarin_sample_free(s);
	return r;
}

void slab_tarin_free(struct slab_tarin *t)
{
	if (!t)
		return;
	if (t->a)
		archive_read_free(t->a);
	archive_entry_free(t->entry);
	free(t->pending_name);
	free(t->last_good);
	free(t->name);
	free(t);
}

int slab_tarin_open_memory(struct slab_tarin *t, const void *buf, size_t len, const char *name,
			   const struct slab_tarin_options *o)
{
	int r = setup(t, name ? name : "(memory)", o);

	if (r < 0)
		return r;
	return open_result(t, archive_read_open_memory(t->a, buf, len));
}
