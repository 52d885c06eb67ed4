/* tarout.c: .slab -> tar through libarchive's writer, so the output is a tar any reader
 * (GNU tar, bsdtar, Python tarfile, WebDataset) takes. One code path for the whole-dataset
 * export and for samples streamed in plan order. */
#include "tarout.h"
#include "error.h"
#include "slab.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
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
	struct slab_err err;
};

/* A libarchive failure: keep its text and the errno of the write behind it. */
static int archive_fail(struct slab_tarout *t)
{
	const char *msg = archive_error_string(t->a);
	int e = archive_errno(t->a);

	t->write_errno = e > 0 ? e : EIO;
	if (msg && e > 0 && strstr(msg, strerror(e)) == NULL)
		return slab_fail(&t->err, SLAB_ERR_IO, NULL, "%s: %s", msg, strerror(e));
	return slab_fail(&t->err, SLAB_ERR_IO, NULL, "%s", msg ? msg : "write error");
}

struct slab_tarout *slab_tarout_new(void)
{
	return calloc(1, sizeof(struct slab_tarout));
}

int slab_tarout_open(struct slab_tarout *t, int fd)
{
	if (t->a)
		return slab_fail(&t->err, SLAB_ERR_INVAL, NULL, "tar writer already open");
	t->a = archive_write_new();
	t->e = archive_entry_new();
	if (!t->a || !t->e)
		return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
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
		return slab_fail(&t->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	t->nf_cap = nf;
	return 0;
}

int slab_tarout_sample(struct slab_tarout *t, struct slab *s, uint64_t i,
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
		return slab_fail_from(&t->err, n, slab_error(s));
	if ((r = slab_sample(s, i, &smp)) < 0)
		return slab_fail_from(&t->err, r, slab_error(s));
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
		return slab_fail(&t->err, SLAB_ERR_INVAL, NULL, "tar writer not open");
	t->opened = 0;
	if (archive_write_close(t->a) != ARCHIVE_OK)
		return archive_fail(t);
	return 0;
}

const char *slab_tarout_error(const struct slab_tarout *t)
{
	return t->err.text;
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

int slab_tarout_export(struct slab_tarout *t, int fd, struct slab *const *sets, size_t n)
{
	int r = slab_tarout_open(t, fd);

	for (size_t k = 0; k < n && r == 0; k++)
		for (uint64_t i = 0; i < slab_count(sets[k]) && r == 0; i++)
			r = slab_tarout_sample(t, sets[k], i, NULL);
	return r < 0 ? r : slab_tarout_finish(t);
}
