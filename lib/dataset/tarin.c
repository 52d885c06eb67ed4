/* tarin.c: tar / WebDataset ingestion through libarchive: members in, samples out, with
 * bounded memory (one sample at a time, capped by max_sample_size). */
#include "tarin.h"
#include "slab.h"
#include "error.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_BLOCK (1u << 20)

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
 * reader's, on a stream cut inside its 8-byte trailer. */
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

void slab_tarin_stats(const struct slab_tarin *t, struct slab_tarin_stats *st)
{
	*st = t->st;
	if (t->a)
		st->raw_bytes = (uint64_t)archive_filter_bytes(t->a, -1);
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
};

static la_ssize_t input_read(struct archive *a, void *data, const void **out)
{
	struct input *in = data;

	for (;;) {
		unsigned char *b = (unsigned char *)in->buf + (size_t)(in->half ^ 1) * READ_BLOCK;
		ssize_t n = read(in->fd, b, READ_BLOCK);
		if (n >= 0) {
			in->t->input_ended |= n == 0;
			in->pos += (uint64_t)n;
			if (n > 0) {
				in->half ^= 1;
				in->prev_n = in->last_n;
				in->last_n = (size_t)n;
			}
			*out = b;
			return n;
		}
		if (errno != EINTR) {
			archive_set_error(a, errno, "read error at offset %llu: %s",
					  (unsigned long long)in->pos, strerror(errno));
			return -1;
		}
	}
}

/* Seek over data nobody wants (fields --fields drops, bad samples); never past the end, so a
 * truncated file still reads as truncated. */
static la_int64_t input_skip(struct archive *a, void *data, la_int64_t request)
{
	struct input *in = data;
	uint64_t n = (uint64_t)request;

	(void)a;
	if (!in->seekable || request <= 0)
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
	free(in->buf);
	free(in);
	return ARCHIVE_OK;
}

int slab_tarin_open(struct slab_tarin *t, const char *path, const struct slab_tarin_options *o)
{
	int std = !path || strcmp(path, "-") == 0;
	int r = setup(t, std ? "(stdin)" : path, o);
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

static const unsigned char *nonzero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return p + i;
	return NULL;
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

/*
 * At the archive's end: the input must hold nothing more than zeros (tape padding, which
 * gzip -d accepts too). libarchive's gzip, bzip2 and lz4 readers end their stream at the first
 * bytes that do not start another member of their format and leave them unread, so without
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
			if (!t->st.members && archive_filter_bytes(t->a, -1) == 0)
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
