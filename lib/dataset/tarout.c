/* tarout.c: .slab -> tar through libarchive's writer, so the output is a tar any reader
 * (GNU tar, bsdtar, Python tarfile, WebDataset) takes. One code path for the whole-dataset
 * export and for samples streamed in plan order. */
#include "tarout.h"
#include "error.h"
#include "fault.h"
#include "io.h"
#include "reader.h"
#include "slab.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct slab_tarout {
	struct archive *a;
	struct archive_entry *e;
	int opened;
	int fd;
	int write_errno;                /* the first write that failed: nothing is written after */
	const void *fault;              /* a write from the input failed with EFAULT: where */
	int input_fault;                /* the input could not be read: nothing is written after */
	int check;                      /* the fields' CRCs are checked first (a file's export) */
	unsigned nf_cap;                /* capacity of ids and fl */
	unsigned *ids;
	struct slab_field *fl;
	char *name;
	size_t name_cap;
	/* Splicing: libarchive unbuffered (bytes per block 0) hands every piece to out_write
	 * as it comes, the field's bytes where they are; out gathers the rest. */
	int want_splice, splice;
	uint64_t pipe_bytes;
	struct slab_outbuf out;
	int block;                      /* libarchive's block size, which it would pad to */
	int pad_last;                   /* ... on a pipe, as out_open chose */
	const unsigned char *src_p;     /* the field being written: its bytes, */
	uint64_t src_len, src_off;      /* its size and file offset, */
	int src_fd;                     /* and the file to splice them from, or -1 */
	locale_t utf8;                  /* C.UTF-8 for libarchive's name conversion, or 0 */
	struct slab_err err;
};

/* A libarchive failure: keep its text and the errno of the write behind it. A write that
 * failed is reported in libarchive's own words for it. */
static int archive_fail(struct slab_tarout *t)
{
	const char *msg = archive_error_string(t->a);
	int e = archive_errno(t->a);

	if (t->write_errno)
		return slab_fail(&t->err, SLAB_ERR_IO, NULL, "write error: %s",
				 strerror(t->write_errno));
	t->write_errno = e > 0 ? e : EIO;
	if (msg && e > 0 && strstr(msg, strerror(e)) == NULL)
		return slab_fail(&t->err, SLAB_ERR_IO, NULL, "%s: %s", msg, strerror(e));
	return slab_fail(&t->err, SLAB_ERR_IO, NULL, "%s", msg ? msg : "write error");
}

/*
 * libarchive's client callbacks, on our fd. A failed write (the reader went away, the disk is
 * full) is remembered and the write reported done: libarchive taken into its fatal state
 * would no longer close its output stage, and its buffers would outlive the archive. Every
 * call checks write_errno afterwards, so the failure is reported all the same, and nothing is
 * written after it.
 */
static int out_open(struct archive *a, void *arg)
{
	struct slab_tarout *t = arg;
	struct stat st;

	if (fstat(t->fd, &st) != 0) {
		archive_set_error(a, errno, "Couldn't stat fd %d", t->fd);
		return ARCHIVE_FATAL;
	}
	/* As libarchive's own fd writer does: pad the last block on devices, pipes and standard
	 * output, not in a regular file. */
	t->pad_last = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
		      t->fd == 1;
	archive_write_set_bytes_in_last_block(a, t->pad_last ? 0 : 1);
	return ARCHIVE_OK;
}

/* A failure of the spliced stream's writer, as out_write records a failed write(2). */
static void spliced_failed(struct slab_tarout *t)
{
	if (t->out.fault) {
		t->fault = t->out.fault;
		t->input_fault = 1;
		t->write_errno = EFAULT;
	} else {
		t->write_errno = t->out.write_errno ? t->out.write_errno : EIO;
	}
}

/* out_write when splicing: the field's bytes from its file, the rest through the buffer. */
static void spliced_write(struct slab_tarout *t, const void *buf, size_t len)
{
	uintptr_t b = (uintptr_t)buf, f = (uintptr_t)t->src_p;
	int rc;

	if (t->src_fd >= 0 && t->src_p && b >= f && b - f < t->src_len &&
	    len <= t->src_len - (b - f))
		rc = slab_outbuf_put_file(&t->out, buf, len, t->src_fd, t->src_off + (b - f),
					  &t->err);
	else
		rc = slab_outbuf_put(&t->out, buf, len, &t->err);
	if (rc < 0)
		spliced_failed(t);
}

static la_ssize_t out_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct slab_tarout *t = arg;
	uint64_t done;
	int e;

	(void)a;
	if (t->splice) {
		if (!t->write_errno)
			spliced_write(t, buf, len);
		return (la_ssize_t)len;
	}
	if (!t->write_errno && (e = slab_write_chunked(t->fd, buf, len, len, &done)) != 0) {
		if (e == EFAULT) {
			/* the input's bytes, not the output */
			t->fault = (const char *)buf + done;
			t->input_fault = 1;
		}
		t->write_errno = e;
	}
	return (la_ssize_t)len;
}

/* Check after each libarchive call: did a write fail under it? */
static int checked(struct slab_tarout *t, int ok)
{
	if (t->write_errno || !ok)
		return archive_fail(t);
	return 0;
}

struct slab_tarout *slab_tarout_new(void)
{
	struct slab_tarout *t = calloc(1, sizeof(struct slab_tarout));

	if (t)
		t->src_fd = -1;
	return t;
}

void slab_tarout_set_splice(struct slab_tarout *t, int on, uint64_t pipe_bytes)
{
	t->want_splice = on;
	t->pipe_bytes = pipe_bytes;
}

int slab_tarout_splicing(const struct slab_tarout *t)
{
	return t->splice;
}

uint64_t slab_tarout_sent(const struct slab_tarout *t)
{
	return t->out.sent;
}

int slab_tarout_open(struct slab_tarout *t, int fd)
{
	int rc;

	if (t->a)
		return slab_fail(&t->err, SLAB_ERR_INVAL, NULL, "tar writer already open");
	if ((rc = slab_fault_setup(&t->err)) < 0)
		return rc;
	t->a = archive_write_new();
	t->e = archive_entry_new();
	if (!t->a || !t->e)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	t->fd = fd;
	/* libarchive converts a name from the locale's character set to the UTF-8 of a pax
	 * header; in the C locale (the tools never set one) no name with a byte above 0x7F
	 * converts, and every such name went out with hdrcharset=BINARY, which GNU tar warns
	 * about ("Ignoring unknown extended header keyword") and readers in a non-UTF-8 locale
	 * take as raw bytes. Under C.UTF-8 a name that is UTF-8 is written as UTF-8, as GNU tar,
	 * bsdtar and Python write it, and only one that is not gets hdrcharset=BINARY: the same
	 * bytes either way, and the same output whatever the process's locale. Where there is
	 * no C.UTF-8, names are written as before; out of memory is an error, not another
	 * output. */
	if (!t->utf8) {
		errno = 0;
		t->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		if (!t->utf8 && errno == ENOMEM)
			return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	}
	t->block = archive_write_get_bytes_per_block(t->a);
	if (t->want_splice && !t->out.buf) {
		if (slab_outbuf_init(&t->out, 64u * 1024) < 0)
			return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		t->out.fd = fd;
		t->splice = slab_outbuf_splice(&t->out, t->pipe_bytes);
		if (!t->splice)
			slab_outbuf_release(&t->out);
		else if (archive_write_set_bytes_per_block(t->a, 0) != ARCHIVE_OK)
			return archive_fail(t);
	}
	if (archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_open(t->a, t, out_open, out_write, NULL) != ARCHIVE_OK)
		return archive_fail(t);
	t->opened = 1;
	return 0;
}

/* Room for the field arrays of s. */
static int reserve(struct slab_tarout *t, unsigned nf)
{
	unsigned *ids;
	struct slab_field *fl;

	if (nf <= t->nf_cap && t->ids)
		return 0;
	ids = realloc(t->ids, (nf ? nf : 1) * sizeof(*ids));
	if (ids)
		t->ids = ids;
	fl = realloc(t->fl, (nf ? nf : 1) * sizeof(*fl));
	if (fl)
		t->fl = fl;
	if (!ids || !fl)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	t->nf_cap = nf;
	return 0;
}

/* archive_write_header() under t->utf8 (on this thread only): where the name is converted.
 * ARCHIVE_WARN is a name that is not UTF-8, written with hdrcharset=BINARY. */
static int write_header(struct slab_tarout *t)
{
	locale_t old = t->utf8 ? uselocale(t->utf8) : (locale_t)0;
	int r = archive_write_header(t->a, t->e);

	if (t->utf8)
		uselocale(old);
	return r;
}

/* The input's error r (a damaged sample): as after a fault reading it, nothing more is
 * written, not even the end of the archive, so that what was written does not read as a whole
 * tar. Returns r. */
static int input_failed(struct slab_tarout *t, struct slab *s, int r)
{
	t->input_fault = 1;
	if (!t->write_errno)
		t->write_errno = EFAULT;
	return slab_fail_from(&t->err, r, slab_error(s));
}

static int tarout_sample(struct slab_tarout *t, struct slab *s, int src, uint64_t i,
			 const unsigned char *bytes)
{
	struct slab_sample smp;
	int n, r;

	if (!t->opened)
		return slab_fail(&t->err, SLAB_ERR_INVAL, NULL, "tar writer not open");
	if ((r = reserve(t, slab_field_count(s))) < 0)
		return r;
	n = slab_sample_fields(s, i, bytes, t->ids, t->fl);
	if (n < 0)
		return input_failed(t, s, n);
	if ((r = slab_sample(s, i, &smp)) < 0)
		return input_failed(t, s, r);
	/* An export: every field's bytes are the field's before any member of the sample is
	 * written; a damaged one ends the stream, never goes into it as if it were the input's.
	 * (A stream in plan order passes the bytes on as stored: prefetch(1).) */
	for (int k = 0; t->check && k < n; k++)
		if ((r = slab_check_field(s, i, t->ids[k], &t->fl[k])) < 0)
			return input_failed(t, s, r);
	for (int k = 0; k < n; k++) {
		const struct slab_field *f = &t->fl[k];
		const char *field = slab_field_name(s, t->ids[k]);
		size_t need = smp.key_len + 1 + strlen(field) + 1;

		if (need > t->name_cap) {
			char *p = realloc(t->name, need);
			if (!p)
				return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
			t->name = p;
			t->name_cap = need;
		}
		memcpy(t->name, smp.key, smp.key_len);
		t->name[smp.key_len] = '.';
		strcpy(t->name + smp.key_len + 1, field);

		archive_entry_clear(t->e);
		archive_entry_copy_pathname(t->e, t->name);
		archive_entry_set_filetype(t->e, AE_IFREG);
		archive_entry_set_perm(t->e, 0644);
		archive_entry_set_size(t->e, (la_int64_t)f->size);
		archive_entry_set_mtime(t->e, 0, 0);
		if ((r = checked(t, write_header(t) >= ARCHIVE_WARN)) < 0)
			return r;
		t->src_p = f->data;
		t->src_len = f->size;
		t->src_off = f->offset;
		t->src_fd = src;
		for (uint64_t done = 0; done < f->size;) {
			uint64_t chunk = f->size - done;
			la_ssize_t w;
			if (chunk > (1u << 30))
				chunk = 1u << 30;
			w = archive_write_data(t->a, f->data + done, (size_t)chunk);
			if ((r = checked(t, w > 0)) < 0)
				break;
			done += (uint64_t)w;
		}
		t->src_p = NULL;
		t->src_fd = -1;
		if (r < 0)
			return r;
	}
	return 0;
}

/* tarout_sample() with its reads of the mapping guarded (libarchive copies the bytes, or
 * writes them straight from the mapping): a file truncated under it is the input's error,
 * naming the file and the offset, and nothing more is written. libarchive, left in the middle
 * of a copy, is only freed after it. */
int slab_tarout_sample_from(struct slab_tarout *t, struct slab *s, int src, uint64_t i,
			    const unsigned char *bytes)
{
	struct slab_fault g;
	int rc;

	if (t->input_fault)
		return SLAB_ERR_IO;
	if (sigsetjmp(g.jump, 0)) {
		t->src_p = NULL;
		t->src_fd = -1;
		t->input_fault = 1;
		t->write_errno = EFAULT;
		return slab_fault_fail(&t->err, slab_path(s), slab_base(s), slab_file_size(s), g.addr);
	}
	slab_fault_begin(&g);
	rc = tarout_sample(t, s, src, i, bytes);
	slab_fault_end(&g);
	if (rc < 0 && t->fault)
		return slab_fault_fail(&t->err, slab_path(s), slab_base(s), slab_file_size(s), t->fault);
	return rc;
}

int slab_tarout_sample(struct slab_tarout *t, struct slab *s, uint64_t i,
		       const unsigned char *bytes)
{
	return slab_tarout_sample_from(t, s, -1, i, bytes);
}

int slab_tarout_finish(struct slab_tarout *t)
{
	static const unsigned char zeros[4096];
	int r;

	if (!t->opened)
		return slab_fail(&t->err, SLAB_ERR_INVAL, NULL, "tar writer not open");
	t->opened = 0;
	if ((r = checked(t, archive_write_close(t->a) == ARCHIVE_OK)) < 0 || !t->splice)
		return r;
	/* Unbuffered, libarchive pads nothing: pad the last block as it would have. */
	if (t->pad_last && t->block > 0) {
		uint64_t pad = (uint64_t)t->block - t->out.total % (uint64_t)t->block;

		for (pad %= (uint64_t)t->block; pad > 0 && !t->write_errno;) {
			uint64_t n = pad < sizeof(zeros) ? pad : sizeof(zeros);

			if (slab_outbuf_put(&t->out, zeros, n, &t->err) < 0)
				spliced_failed(t);
			pad -= n;
		}
	}
	if (!t->write_errno && slab_outbuf_flush(&t->out, &t->err) < 0)
		spliced_failed(t);
	return checked(t, 1);
}

const char *slab_tarout_error(const struct slab_tarout *t)
{
	return t->err.text;
}

int slab_tarout_errno(const struct slab_tarout *t)
{
	return t->input_fault ? 0 : t->write_errno;
}

void slab_tarout_free(struct slab_tarout *t)
{
	if (!t)
		return;
	if (t->e)
		archive_entry_free(t->e);
	if (t->a)
		archive_write_free(t->a);
	slab_outbuf_release(&t->out);
	if (t->utf8)
		freelocale(t->utf8);
	free(t->ids);
	free(t->fl);
	free(t->name);
	free(t);
}

int slab_tarout_export(struct slab_tarout *t, int fd, struct slab *const *sets, size_t n)
{
	int r = slab_tarout_open(t, fd);

	t->check = 1;
	for (size_t k = 0; k < n && r == 0; k++)
		for (uint64_t i = 0; i < slab_count(sets[k]) && r == 0; i++)
			r = slab_tarout_sample(t, sets[k], i, NULL);
	return r < 0 ? r : slab_tarout_finish(t);
}
