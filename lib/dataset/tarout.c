/* tarout.c: .slab -> tar through libarchive's writer, so the output is a tar any reader
 * (GNU tar, bsdtar, Python tarfile, WebDataset) takes. One code path for the whole-dataset
 * export and for samples streamed in plan order. */
#include "tarout.h"
#include "slab.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slab_tarout {
	struct archive *a;
	struct archive_entry *e;
	int opened;
	int write_errno;
	unsigned nf_cap;                /* capacity of ids and fl */
	unsigned *ids;
	struct slab_field *fl;
	char *name;
	size_t name_cap;
	char err[1024];
};

static int fail(struct slab_tarout *t, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct slab_tarout *t, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return code;
}

/* A libarchive failure: keep its text and the errno of the write behind it. */
static int archive_fail(struct slab_tarout *t)
{
	const char *msg = archive_error_string(t->a);
	int e = archive_errno(t->a);

	t->write_errno = e > 0 ? e : EIO;
	if (msg && e > 0 && strstr(msg, strerror(e)) == NULL)
		return fail(t, SLAB_ERR_IO, "%s: %s", msg, strerror(e));
	return fail(t, SLAB_ERR_IO, "%s", msg ? msg : "write error");
}

int slab_sample_fields(struct slab *s, uint64_t i, const unsigned char *bytes, unsigned *ids,
		       struct slab_field *fl, char *err, size_t errlen)
{
	unsigned nf = slab_field_count(s), n = 0;
	struct slab_sample smp;

	if (slab_sample(s, i, &smp) < 0) {
		snprintf(err, errlen, "%s", slab_error(s));
		return SLAB_ERR_CORRUPT;
	}
	/* Whatever writes the sample out names it by its key: never a path outside the
	 * reader's folder. */
	if (slab_check_key(s, i) < 0) {
		snprintf(err, errlen, "%s", slab_error(s));
		return SLAB_ERR_CORRUPT;
	}
	for (unsigned f = 0; f < nf; f++) {
		struct slab_field cur;
		int r = slab_get(s, i, f, &cur);
		unsigned k;

		if (r < 0) {
			snprintf(err, errlen, "%s", slab_error(s));
			return r;
		}
		if (r == 0)
			continue;
		if (bytes) {
			/* The bytes cover the sample only: its fields must lie inside it. */
			if (cur.offset < smp.offset || cur.size > smp.size ||
			    cur.offset - smp.offset > smp.size - cur.size) {
				snprintf(err, errlen,
					 "sample #%llu '%.*s' field '%s': offset %llu, size %llu outside the sample (offset %llu, size %llu)",
					 (unsigned long long)i, (int)(smp.key_len > 200 ? 200 : smp.key_len),
					 smp.key, slab_field_name(s, f), (unsigned long long)cur.offset,
					 (unsigned long long)cur.size, (unsigned long long)smp.offset,
					 (unsigned long long)smp.size);
				return SLAB_ERR_CORRUPT;
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

struct slab_tarout *slab_tarout_new(void)
{
	return calloc(1, sizeof(struct slab_tarout));
}

int slab_tarout_open(struct slab_tarout *t, int fd)
{
	if (t->a)
		return fail(t, SLAB_ERR_INVAL, "tar writer already open");
	t->a = archive_write_new();
	t->e = archive_entry_new();
	if (!t->a || !t->e)
		return fail(t, SLAB_ERR_NOMEM, "out of memory");
	if (archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_open_fd(t->a, fd) != ARCHIVE_OK)
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
		return fail(t, SLAB_ERR_NOMEM, "out of memory");
	t->nf_cap = nf;
	return 0;
}

int slab_tarout_sample(struct slab_tarout *t, struct slab *s, uint64_t i,
		       const unsigned char *bytes)
{
	struct slab_sample smp;
	int n, r;

	if (!t->opened)
		return fail(t, SLAB_ERR_INVAL, "tar writer not open");
	if ((r = reserve(t, slab_field_count(s))) < 0)
		return r;
	n = slab_sample_fields(s, i, bytes, t->ids, t->fl, t->err, sizeof(t->err));
	if (n < 0)
		return n;
	if (slab_sample(s, i, &smp) < 0)
		return fail(t, SLAB_ERR_CORRUPT, "%s", slab_error(s));
	for (int k = 0; k < n; k++) {
		const struct slab_field *f = &t->fl[k];
		const char *field = slab_field_name(s, t->ids[k]);
		size_t need = smp.key_len + 1 + strlen(field) + 1;

		if (need > t->name_cap) {
			char *p = realloc(t->name, need);
			if (!p)
				return fail(t, SLAB_ERR_NOMEM, "out of memory");
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
		if (archive_write_header(t->a, t->e) < ARCHIVE_WARN)
			return archive_fail(t);
		for (uint64_t done = 0; done < f->size;) {
			uint64_t chunk = f->size - done;
			la_ssize_t w;
			if (chunk > (1u << 30))
				chunk = 1u << 30;
			w = archive_write_data(t->a, f->data + done, (size_t)chunk);
			if (w <= 0)
				return archive_fail(t);
			done += (uint64_t)w;
		}
	}
	return 0;
}

int slab_tarout_finish(struct slab_tarout *t)
{
	if (!t->opened)
		return fail(t, SLAB_ERR_INVAL, "tar writer not open");
	t->opened = 0;
	if (archive_write_close(t->a) != ARCHIVE_OK)
		return archive_fail(t);
	return 0;
}

const char *slab_tarout_error(const struct slab_tarout *t)
{
	return t->err;
}

int slab_tarout_errno(const struct slab_tarout *t)
{
	return t->write_errno;
}

void slab_tarout_free(struct slab_tarout *t)
{
	if (!t)
		return;
	if (t->e)
		archive_entry_free(t->e);
	if (t->a)
		archive_write_free(t->a);
	free(t->ids);
	free(t->fl);
	free(t->name);
	free(t);
}

int slab_tar_export(struct slab *const *sets, size_t n, int fd, char *err, size_t errlen)
{
	struct slab_tarout *t = slab_tarout_new();
	int ret = -1;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (slab_tarout_open(t, fd) < 0)
		goto out;
	for (size_t k = 0; k < n; k++)
		for (uint64_t i = 0; i < slab_count(sets[k]); i++)
			if (slab_tarout_sample(t, sets[k], i, NULL) < 0)
				goto out;
	if (slab_tarout_finish(t) < 0)
		goto out;
	ret = 0;
out:
	if (ret < 0)
		snprintf(err, errlen, "%s", slab_tarout_error(t));
	slab_tarout_free(t);
	return ret;
}
