/* tarout.c: .slab -> tar through libarchive's writer, so the output is a tar any reader
 * (GNU tar, bsdtar, Python tarfile, WebDataset) takes. */
#include "tarout.h"
#include "slab.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members of one dataset. */
static int export_one(struct archive *a, struct archive_entry *e, struct slab *s, char *err,
		      size_t errlen)
{
	unsigned nf = slab_field_count(s);
	struct slab_field *fl = calloc(nf ? nf : 1, sizeof(*fl));
	unsigned *by_order = calloc(nf ? nf : 1, sizeof(*by_order));
	char *name = NULL;
	size_t name_cap = 0;
	int ret = -1;

	if (!fl || !by_order) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < slab_count(s); i++) {
		struct slab_sample smp;
		unsigned n = 0;

		if (slab_sample(s, i, &smp) < 0) {
			snprintf(err, errlen, "%s", slab_error(s));
			goto out;
		}
		/* Members go out in the order the fields had in the input tar. */
		for (unsigned f = 0; f < nf; f++) {
			int r = slab_get(s, i, f, &fl[f]);
			if (r < 0) {
				snprintf(err, errlen, "%s", slab_error(s));
				goto out;
			}
			if (r == 0)
				continue;
			unsigned k = n++;
			while (k > 0 && fl[by_order[k - 1]].order > fl[f].order) {
				by_order[k] = by_order[k - 1];
				k--;
			}
			by_order[k] = f;
		}
		for (unsigned k = 0; k < n; k++) {
			unsigned f = by_order[k];
			const char *field = slab_field_name(s, f);
			size_t need = smp.key_len + 1 + strlen(field) + 1;

			if (need > name_cap) {
				char *p = realloc(name, need);
				if (!p) {
					snprintf(err, errlen, "out of memory");
					goto out;
				}
				name = p;
				name_cap = need;
			}
			memcpy(name, smp.key, smp.key_len);
			name[smp.key_len] = '.';
			strcpy(name + smp.key_len + 1, field);

			archive_entry_clear(e);
			archive_entry_copy_pathname(e, name);
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_size(e, (la_int64_t)fl[f].size);
			archive_entry_set_mtime(e, 0, 0);
			if (archive_write_header(a, e) < ARCHIVE_WARN) {
				snprintf(err, errlen, "%s", archive_error_string(a));
				goto out;
			}
			for (uint64_t done = 0; done < fl[f].size;) {
				uint64_t chunk = fl[f].size - done;
				la_ssize_t w;
				if (chunk > (1u << 30))
					chunk = 1u << 30;
				w = archive_write_data(a, fl[f].data + done, (size_t)chunk);
				if (w <= 0) {
					snprintf(err, errlen, "%s", archive_error_string(a));
					goto out;
				}
				done += (uint64_t)w;
			}
		}
	}
	ret = 0;
out:
	free(fl);
	free(by_order);
	free(name);
	return ret;
}

int slab_tar_export(struct slab *const *sets, size_t n, int fd, char *err, size_t errlen)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	int ret = -1;

	if (!a || !e) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s", archive_error_string(a));
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		if (export_one(a, e, sets[k], err, errlen) < 0)
			goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s", archive_error_string(a));
		goto out;
	}
	ret = 0;
out:
	if (e)
		archive_entry_free(e);
	if (a)
		archive_write_free(a);
	return ret;
}
