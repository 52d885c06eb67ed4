/* inspect: read a .slab file: summary, list, extract a field, verify every checksum, or
 * turn it back into a tar. */
#include "cli.h"
#include "errfmt.h"
#include "fault.h"
#include "format.h"
#include "io.h"
#include "json.h"
#include "reader.h"
#include "slab.h"
#include "tarout.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: inspect [OPTIONS] FILE...\n"
"       inspect --list [--json] FILE\n"
"       inspect --get KEY|#INDEX [--field NAME] FILE\n";

static const char help_text[] =
"Read .slab files. With no mode option, print a summary of each FILE.\n"
"\n"
"Modes:\n"
"      --list               one line per sample: index, key, page, and each field\n"
"                           as name:offset:size (images add :WIDTHxHEIGHT:FORMAT,\n"
"                           videos :WIDTHxHEIGHT:CODEC:FRAMESf:SECONDSs:FPSfps)\n"
"      --get KEY|#INDEX     write one field's exact bytes to standard output\n"
"      --field NAME         --get's field (needed when the sample has several)\n"
"      --verify             check every checksum and structural rule; exit 1 at\n"
"                           the first problem, naming the sample and the offset\n"
"      --tar                write the datasets as one tar to standard output,\n"
"                           members named KEY.FIELD with their original bytes\n"
"\n"
"Options:\n"
"      --json               summary or list as JSON\n"
"  -q, --quiet              --verify prints nothing when the file is intact\n"
"  -v, --verbose            --verify also says what it checked\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
CLI_REMOTE_HELP
"\n"
"Exit status: 0 success, 1 failure (unreadable or corrupt file, no such key or\n"
"field), 2 usage error. See inspect(1) and slab(5).\n";

enum {
	OPT_FIELD = CHAR_MAX + 1,
	OPT_GET,
	OPT_JSON,
	OPT_LIST,
	OPT_TAR,
	OPT_VERIFY,
};

static const struct option longopts[] = {
	{ "field",   required_argument, NULL, OPT_FIELD },
	{ "get",     required_argument, NULL, OPT_GET },
	{ "help",    no_argument,       NULL, 'h' },
	{ "json",    no_argument,       NULL, OPT_JSON },
	{ "list",    no_argument,       NULL, OPT_LIST },
	{ "quiet",   no_argument,       NULL, 'q' },
	{ "tar",     no_argument,       NULL, OPT_TAR },
	{ "verbose", no_argument,       NULL, 'v' },
	{ "verify",  no_argument,       NULL, OPT_VERIFY },
	{ "version", no_argument,       NULL, 'V' },
	CLI_REMOTE_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

enum mode { MODE_SUMMARY, MODE_LIST, MODE_GET, MODE_VERIFY, MODE_TAR };

static const char *const samp_names[] = { "4:4:4", "4:2:2", "4:2:0", "gray", "4:4:0", "4:1:1" };
static const char *const cs_names[] = { "rgb", "ycbcr", "gray", "cmyk", "ycck" };

static const char *samp_name(unsigned v)
{
	return v < sizeof(samp_names) / sizeof(samp_names[0]) ? samp_names[v] : "unknown";
}

static const char *cs_name(unsigned v)
{
	return v < sizeof(cs_names) / sizeof(cs_names[0]) ? cs_names[v] : "unknown";
}

/* The image formats (and videos) a field record can name: its flag, the name in --list and
 * the JSON keys, the name in the summary. */
static const struct image_kind {
	unsigned flag;
	const char *key, *title;
} image_kinds[] = {
	{ SLAB_FIELD_JPEG, "jpeg", "JPEG" },
	{ SLAB_FIELD_PNG, "png", "PNG" },
	{ SLAB_FIELD_WEBP, "webp", "WebP" },
	{ SLAB_FIELD_VIDEO, "video", "video" },
};
#define NKINDS (sizeof(image_kinds) / sizeof(image_kinds[0]))

/* The record's image format, or NULL. */
static const struct image_kind *image_kind(unsigned flags)
{
	for (size_t k = 0; k < NKINDS; k++)
		if (flags & image_kinds[k].flag)
			return &image_kinds[k];
	return NULL;
}

struct image_stats {
	uint64_t count;
	uint32_t wmin, wmax, hmin, hmax;
};

struct field_stats {
	uint64_t count, total, min, max;
	struct image_stats img[NKINDS];         /* by image_kinds[] */
};

struct stats {
	uint64_t data_bytes;
	struct field_stats *f;
};

static int gather(struct slab *s, struct stats *st)
{
	unsigned nf = slab_field_count(s);

	st->data_bytes = 0;
	st->f = calloc(nf ? nf : 1, sizeof(*st->f));
	if (!st->f) {
		cli_error("out of memory");
		return -1;
	}
	for (unsigned f = 0; f < nf; f++) {
		st->f[f].min = UINT64_MAX;
		for (size_t k = 0; k < NKINDS; k++)
			st->f[f].img[k].wmin = st->f[f].img[k].hmin = UINT32_MAX;
	}
	for (uint64_t i = 0; i < slab_count(s); i++) {
		for (unsigned f = 0; f < nf; f++) {
			struct slab_field fl;
			struct field_stats *fs = &st->f[f];
			int r = slab_get_record(s, i, f, &fl);
			if (r < 0) {
				cli_error("%s", slab_error(s));
				free(st->f);
				st->f = NULL;
				return -1;
			}
			if (!r)
				continue;
			fs->count++;
			fs->total += fl.size;
			st->data_bytes += fl.size;
			if (fl.size < fs->min)
				fs->min = fl.size;
			if (fl.size > fs->max)
				fs->max = fl.size;
			if (image_kind(fl.flags)) {
				struct image_stats *is = &fs->img[image_kind(fl.flags) - image_kinds];

				is->count++;
				if (fl.width < is->wmin) is->wmin = fl.width;
				if (fl.width > is->wmax) is->wmax = fl.width;
				if (fl.height < is->hmin) is->hmin = fl.height;
				if (fl.height > is->hmax) is->hmax = fl.height;
			}
		}
	}
	/* Fields that overlap (a table whose checksums match, made so: --verify finds it) can add
	 * up to more than the data area: the fill and padding figures would be nonsense. */
	if (st->data_bytes > slab_table_offset(s) - slab_data_offset(s)) {
		cli_error("'%s': the fields' sizes add up to %llu bytes, more than the data area's "
			  "%llu: fields overlap (inspect --verify says where)", slab_path(s),
			  (unsigned long long)st->data_bytes,
			  (unsigned long long)(slab_table_offset(s) - slab_data_offset(s)));
		free(st->f);
		st->f = NULL;
		return -1;
	}
	return 0;
}

static double fill_ratio(const struct slab *s, uint64_t data)
{
	uint64_t cap = slab_page_count(s) * slab_page_size(s);

	return cap ? (double)data / (double)cap : 0.0;
}

static uint64_t padding_bytes(const struct slab *s, uint64_t data)
{
	return slab_table_offset(s) - slab_data_offset(s) - data;
}

/* sep: summaries were printed before this one: an empty line first. */
static int summary_text(struct slab *s, const char *path, int sep)
{
	struct stats st;
	char a[32], b[32], c[32];
	unsigned nf = slab_field_count(s);
	const char *opt = slab_options(s);

	if (gather(s, &st) < 0)
		return -1;
	if (sep)
		putchar('\n');
	fputs("file:         ", stdout);
	cli_fputs_escaped(path, stdout);
	putchar('\n');
	printf("format:       slab %u.%u\n", slab_format_major(s), slab_format_minor(s));
	printf("file size:    %s (%llu bytes)\n", cli_human_size(slab_file_size(s), a, sizeof(a)),
	       (unsigned long long)slab_file_size(s));
	printf("page size:    %s (%llu bytes)\n", cli_human_size(slab_page_size(s), a, sizeof(a)),
	       (unsigned long long)slab_page_size(s));
	printf("samples:      %llu\n", (unsigned long long)slab_count(s));
	printf("pages:        %llu, fill %.1f%%, padding %s\n", (unsigned long long)slab_page_count(s),
	       100.0 * fill_ratio(s, st.data_bytes),
	       cli_human_size(padding_bytes(s, st.data_bytes), a, sizeof(a)));
	printf("data:         %s (%llu bytes)\n", cli_human_size(st.data_bytes, a, sizeof(a)),
	       (unsigned long long)st.data_bytes);
	printf("fields:       %u\n", nf);
	if (nf)
		printf("  %-16s %10s %12s %12s %12s\n", "name", "samples", "total", "min", "max");
	for (unsigned f = 0; f < nf; f++) {
		const struct field_stats *fs = &st.f[f];
		printf("  ");
		for (size_t w = cli_fputs_escaped(slab_field_name(s, f), stdout); w < 16; w++)
			putchar(' ');
		printf(" %10llu %12s %12s %12s",
		       (unsigned long long)fs->count, cli_human_size(fs->total, a, sizeof(a)),
		       cli_human_size(fs->count ? fs->min : 0, b, sizeof(b)),
		       cli_human_size(fs->max, c, sizeof(c)));
		for (size_t k = 0; k < NKINDS; k++)
			if (fs->img[k].count)
				printf("  %s %ux%u..%ux%u", image_kinds[k].title, fs->img[k].wmin,
				       fs->img[k].hmin, fs->img[k].wmax, fs->img[k].hmax);
		putchar('\n');
	}
	printf("packed with:\n");
	while (*opt) {
		const char *nl = strchr(opt, '\n');
		size_t len = nl ? (size_t)(nl - opt) : strlen(opt);
		fputs("  ", stdout);
		cli_fput_escaped(opt, len, stdout);
		putchar('\n');
		opt += len + (nl != NULL);
	}
	free(st.f);
	return 0;
}

static int summary_json(struct slab *s, const char *path, struct json *j)
{
	struct stats st;
	unsigned nf = slab_field_count(s);
	const char *opt = slab_options(s);

	if (gather(s, &st) < 0)
		return -1;
	json_object_begin(j, NULL);
	json_string(j, "file", path);
	json_u64(j, "version_major", slab_format_major(s));
	json_u64(j, "version_minor", slab_format_minor(s));
	json_u64(j, "file_size", slab_file_size(s));
	json_u64(j, "page_size", slab_page_size(s));
	json_u64(j, "samples", slab_count(s));
	json_u64(j, "pages", slab_page_count(s));
	json_double(j, "fill", fill_ratio(s, st.data_bytes));
	json_u64(j, "data_bytes", st.data_bytes);
	json_u64(j, "padding_bytes", padding_bytes(s, st.data_bytes));
	json_array_begin(j, "fields");
	for (unsigned f = 0; f < nf; f++) {
		const struct field_stats *fs = &st.f[f];
		json_object_begin(j, NULL);
		json_string(j, "name", slab_field_name(s, f));
		json_u64(j, "samples", fs->count);
		json_u64(j, "total_bytes", fs->total);
		json_u64(j, "min_bytes", fs->count ? fs->min : 0);
		json_u64(j, "max_bytes", fs->max);
		for (size_t k = 0; k < NKINDS; k++) {
			const struct image_stats *is = &fs->img[k];

			if (!is->count)
				continue;
			json_object_begin(j, image_kinds[k].key);
			json_u64(j, "count", is->count);
			json_u64(j, "min_width", is->wmin);
			json_u64(j, "max_width", is->wmax);
			json_u64(j, "min_height", is->hmin);
			json_u64(j, "max_height", is->hmax);
			json_object_end(j);
		}
		json_object_end(j);
	}
	json_array_end(j);
	json_object_begin(j, "options");
	while (*opt) {
		const char *nl = strchr(opt, '\n'), *eq;
		size_t len = nl ? (size_t)(nl - opt) : strlen(opt);
		char *line = strndup(opt, len);
		if (!line) {
			cli_error("out of memory");
			free(st.f);
			return -1;
		}
		if ((eq = strchr(line, '=')) != NULL) {
			line[eq - line] = '\0';
			json_string(j, line, eq + 1);
		}
		free(line);
		opt += len + (nl != NULL);
	}
	json_object_end(j);
	json_object_end(j);
	free(st.f);
	return 0;
}

/* A video's frame rate as --list shows it: "24", "29.97", or "?" when unknown. */
static void fps_text(char *buf, size_t len, const struct slab_video_info *v)
{
	if (!v->fps_den || !v->fps_num)
		snprintf(buf, len, "?");
	else if (v->fps_num % v->fps_den == 0)
		snprintf(buf, len, "%u", v->fps_num / v->fps_den);
	else
		snprintf(buf, len, "%.2f", (double)v->fps_num / v->fps_den);
}

/* A sample's field as --list shows it. */
struct list_field {
	struct slab_field fl;
	struct slab_video_info vi;
	int present, video;
};

/* Sample i's records, all of its fields', into lf[]: 0, or -1 said. */
static int list_records(struct slab *s, uint64_t i, struct list_field *lf)
{
	for (unsigned f = 0; f < slab_field_count(s); f++) {
		int r = slab_get_record(s, i, f, &lf[f].fl);

		lf[f].video = 0;
		if (r > 0 && (lf[f].fl.flags & SLAB_FIELD_VIDEO))
			r = lf[f].video = slab_field_video(s, i, f, &lf[f].vi);
		if (r < 0) {
			cli_error("%s", slab_error(s));
			return -1;
		}
		lf[f].present = r;
	}
	return 0;
}

static int list(struct slab *s, struct json *j)
{
	unsigned nf = slab_field_count(s);
	struct list_field *lf = calloc(nf ? nf : 1, sizeof(*lf));
	int ret = -1;

	if (!lf) {
		cli_error("out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < slab_count(s); i++) {
		struct slab_sample smp;

		/* A sample's records are all read before anything of it is written: one that
		 * fails leaves no half line, and no JSON object left open. */
		if (slab_sample(s, i, &smp) < 0) {
			cli_error("%s", slab_error(s));
			goto out;
		}
		if (list_records(s, i, lf) < 0)
			goto out;
		if (j) {
			json_object_begin(j, NULL);
			json_u64(j, "index", i);
			json_string_n(j, "key", smp.key, smp.key_len);
			json_u64(j, "page", smp.page);
			json_u64(j, "offset", smp.offset);
			json_u64(j, "size", smp.size);
			json_array_begin(j, "fields");
		} else {
			/* Escaped: a tab or a newline in a key must not make a column or a row. */
			printf("%llu\t", (unsigned long long)i);
			cli_fput_escaped(smp.key, smp.key_len, stdout);
			printf("\t%llu", (unsigned long long)smp.page);
		}
		for (unsigned f = 0; f < nf; f++) {
			const struct slab_field *fl = &lf[f].fl;
			const struct slab_video_info *vi = &lf[f].vi;
			const struct image_kind *kind;
			int video = lf[f].video;
			char crc[16], fps[32];

			if (!lf[f].present)
				continue;
			kind = image_kind(fl->flags);
			if (video)
				fps_text(fps, sizeof(fps), vi);
			if (j) {
				json_object_begin(j, NULL);
				json_string(j, "name", slab_field_name(s, f));
				json_u64(j, "offset", fl->offset);
				json_u64(j, "size", fl->size);
				snprintf(crc, sizeof(crc), "%08x", fl->crc);
				json_string(j, "crc32c", crc);
				if (kind) {
					json_string(j, "format", kind->key);
					json_u64(j, "width", fl->width);
					json_u64(j, "height", fl->height);
				}
				if (fl->flags & SLAB_FIELD_JPEG) {
					json_string(j, "subsampling", samp_name(fl->subsamp));
					json_string(j, "colorspace", cs_name(fl->colorspace));
				}
				if (video) {
					json_string(j, "codec", vi->codec);
					json_u64(j, "frames", vi->frames);
					json_double(j, "duration", vi->duration);
					json_u64(j, "fps_num", vi->fps_num);
					json_u64(j, "fps_den", vi->fps_den);
				}
				if (kind && !video)
					json_bool(j, "transcoded", !!(fl->flags & SLAB_FIELD_TRANSCODED));
				/* Its bytes are not the input's either, though it was not re-encoded. */
				if (fl->flags & SLAB_FIELD_JPEG)
					json_bool(j, "restart", !!(fl->flags & SLAB_FIELD_RESTART));
				json_object_end(j);
			} else {
				putchar('\t');
				cli_fputs_escaped(slab_field_name(s, f), stdout);
				printf(":%llu:%llu",
				       (unsigned long long)fl->offset, (unsigned long long)fl->size);
				if (video) {
					printf(":%ux%u:", fl->width, fl->height);
					cli_fputs_escaped(vi->codec, stdout);
					printf(":%lluf:%.2fs:%sfps", (unsigned long long)vi->frames,
					       vi->duration, fps);
				} else if (kind) {
					printf(":%ux%u:%s", fl->width, fl->height, kind->key);
				}
			}
		}
		if (j) {
			json_array_end(j);
			json_object_end(j);
		} else {
			putchar('\n');
		}
	}
	ret = 0;
out:
	free(lf);
	return ret;
}

static int get(struct slab *s, const char *path, const char *what, const char *field)
{
	uint64_t idx, done;
	struct slab_sample smp;
	struct slab_field fl;
	int f = -1, r;

	/* "#" and digits is an index; anything else, "#" included, is a key. */
	if (what[0] == '#' && what[1] && strspn(what + 1, "0123456789") == strlen(what + 1)) {
		if (cli_parse_u64(what + 1, 0, UINT64_MAX, &idx) < 0) {
			cli_error("'%s': invalid sample index '%s'", path, what);
			return -1;
		}
		if (idx >= slab_count(s)) {
			cli_error("'%s': no sample #%llu (%llu %s)", path, (unsigned long long)idx,
				  (unsigned long long)slab_count(s),
				  slab_plural(slab_count(s), "sample", "samples"));
			return -1;
		}
	} else if (slab_find(s, what, strlen(what), &idx) < 0) {
		cli_error("%s", slab_error(s));
		return -1;
	}
	if (slab_sample(s, idx, &smp) < 0) {
		cli_error("%s", slab_error(s));
		return -1;
	}
	if (field) {
		f = slab_field_lookup(s, field);
		if (f < 0) {
			cli_error("'%s': no field '%s' in this dataset", path, field);
			return -1;
		}
	} else {
		/* Without --field, a sample with one field gives that one. Its records say which
		 * fields it has: no field's bytes are read (or fetched, for a URL) to count them. */
		for (unsigned k = 0; k < slab_field_count(s); k++) {
			r = slab_get_record(s, idx, k, &fl);
			if (r < 0) {
				cli_error("%s", slab_error(s));
				return -1;
			}
			if (r == 1) {
				if (f >= 0) {
					cli_error("'%s': sample '%.*s' has several fields: choose one with --field",
						  path, slab_key_shown(smp.key_len), smp.key);
					return -2;
				}
				f = (int)k;
			}
		}
		if (f < 0) {
			cli_error("'%s': sample '%.*s' has no fields", path, slab_key_shown(smp.key_len), smp.key);
			return -1;
		}
	}
	r = slab_get(s, idx, (unsigned)f, &fl);
	if (r < 0) {
		cli_error("%s", slab_error(s));
		return -1;
	}
	if (r == 0) {
		cli_error("'%s': sample '%.*s' has no field '%s'", path, slab_key_shown(smp.key_len), smp.key,
			  slab_field_name(s, (unsigned)f));
		return -1;
	}
	/* The field's bytes, or nothing: a damaged one is not written as if it were the field. */
	if (slab_check_field(s, idx, (unsigned)f, &fl) < 0) {
		cli_error("%s", slab_error(s));
		return -1;
	}
	/* Written as they are, a field's bytes could drive the terminal (a crafted label's escape
	 * sequences) or garble it (a JPEG): on a terminal, only text that shows as it is. */
	if (isatty(STDOUT_FILENO) && !cli_text_shown_safely(fl.data, (size_t)fl.size)) {
		cli_error("'%s': sample '%.*s' field '%s' is not plain text: refusing to write it to "
			  "a terminal (redirect it)", path, slab_key_shown(smp.key_len), smp.key,
			  slab_field_name(s, (unsigned)f));
		return -2;
	}
	cli_flush_stdout();
	/* At most 1 GiB a call, as slab_write_full() writes. */
	if (slab_write_chunked(STDOUT_FILENO, fl.data, fl.size, 1u << 30, &done) != 0 &&
	    errno != EPIPE) {
		/* EFAULT: the field's bytes could not be read from the mapping (the file was
		 * truncated under it), which is the input's failure, not the output's. */
		if (errno == EFAULT) {
			struct slab_err e = { "" };

			slab_fault_fail(&e, slab_path(s), slab_base(s), slab_file_size(s),
					fl.data + done);
			cli_error("%s", e.text);
		} else {
			cli_write_error(NULL, errno);
		}
		return -1;
	}
	return 0;
}

static void verify_progress(uint64_t done, uint64_t total, void *arg)
{
	fprintf(stderr, "\r%s: '", cli_progname());
	cli_fputs_escaped((const char *)arg, stderr);
	fprintf(stderr, "': verified %3.0f%%",
		total ? 100.0 * (double)done / (double)total : 100.0);
	cli_progress_shown();
}

static int verify(struct slab *s, const char *path)
{
	int progress = cli_progress_wanted();
	int r = slab_verify(s, progress ? verify_progress : NULL, (void *)path);
	char a[32];

	if (progress)
		cli_progress_clear();
	if (r < 0) {
		cli_error("%s", slab_error(s));
		return -1;
	}
	if (cli_verbosity >= 1) {
		cli_fputs_escaped(path, stdout);
		printf(": ok, %llu %s, %s checked\n", (unsigned long long)slab_count(s),
		       slab_plural(slab_count(s), "sample", "samples"),
		       cli_human_size(slab_file_size(s), a, sizeof(a)));
	}
	if (cli_verbosity >= 2) {
		struct stats st;
		char b[32];
		uint64_t checksummed = 0;
		if (gather(s, &st) < 0)
			return -1;
		for (unsigned f = 0; f < slab_field_count(s); f++)
			checksummed += st.f[f].count;
		cli_fputs_escaped(path, stdout);
		printf(": %llu field %s over %s of data, %s of padding all zero, header, table and trailer checksums match\n",
		       (unsigned long long)checksummed, slab_plural(checksummed, "checksum", "checksums"),
		       cli_human_size(st.data_bytes, a, sizeof(a)),
		       cli_human_size(padding_bytes(s, st.data_bytes), b, sizeof(b)));
		free(st.f);
	}
	return 0;
}

/* All files into one tar stream: all of them must open, or nothing is written. */
static int tar_all(char **paths, int n)
{
	struct slab **sets = calloc((size_t)n, sizeof(*sets));
	struct slab_tarout *t = NULL;
	int ret = SLAB_EXIT_FAIL, i;

	if (!sets) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		sets[i] = slab_new();
		if (!sets[i]) {
			cli_error("out of memory");
			goto out;
		}
		if (slab_open_ex(sets[i], paths[i], &cli_remote) < 0 ||
		    slab_check_keys(sets[i]) < 0) {
			cli_error("%s", slab_error(sets[i]));
			goto out;
		}
		/* A URL's pages, all of them, in order, several requests at once. */
		slab_fetch_ahead(sets[i], 0, 0);
	}
	t = slab_tarout_new();
	if (!t) {
		cli_error("tar output: out of memory");
		goto out;
	}
	if (slab_tarout_export(t, STDOUT_FILENO, sets, (size_t)n) < 0) {
		/* A reader that stops early (SIGPIPE ignored: the write says EPIPE) is not an
		 * error, as with the other modes and prefetch --emit: we stop. */
		if (slab_tarout_errno(t) == EPIPE) {
			ret = SLAB_EXIT_OK;
			goto out;
		}
		/* The output's failures say so; the input's (a file truncated under the stream,
		 * a URL that fails) have no errno of the output's and name the file themselves. */
		if (slab_tarout_errno(t))
			cli_error("tar output: %s", slab_tarout_error(t));
		else
			cli_error("%s", slab_tarout_error(t));
		goto out;
	}
	ret = SLAB_EXIT_OK;
out:
	slab_tarout_free(t);
	for (i = 0; i < n; i++)
		slab_close(sets[i]);
	free(sets);
	return ret;
}

int main(int argc, char **argv)
{
	enum mode mode = MODE_SUMMARY;
	const char *get_what = NULL, *field = NULL;
	int json = 0, json_done = 0, clash = 0, c, ret = SLAB_EXIT_OK;  /* clash: two modes */
	int shown = 0;          /* text summaries printed */
	struct json j;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	while ((c = getopt_long(argc, argv, "hqvV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FIELD:
			field = optarg;
			break;
		case OPT_GET:
			clash += mode != MODE_SUMMARY && mode != MODE_GET;
			mode = MODE_GET;
			get_what = optarg;
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		case OPT_JSON:
			json = 1;
			break;
		case OPT_LIST:
			clash += mode != MODE_SUMMARY && mode != MODE_LIST;
			mode = MODE_LIST;
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case OPT_TAR:
			clash += mode != MODE_SUMMARY && mode != MODE_TAR;
			mode = MODE_TAR;
			break;
		case 'v':
			cli_verbosity = 2;
			break;
		case OPT_VERIFY:
			clash += mode != MODE_SUMMARY && mode != MODE_VERIFY;
			mode = MODE_VERIFY;
			break;
		case 'V':
			return cli_version();
		default:
			if ((ret = cli_remote_option(c, optarg)) == 1) {
				ret = SLAB_EXIT_OK;
				break;
			}
			return ret ? ret : cli_try_help();
		}
	}
	if (clash > 0)
		return cli_usage_error("--list, --get, --verify and --tar exclude each other");
	if (optind == argc)
		return cli_usage_error("no input file");
	if (field && mode != MODE_GET)
		return cli_usage_error("--field goes with --get");
	if (json && mode != MODE_SUMMARY && mode != MODE_LIST)
		return cli_usage_error("--json goes with the summary or --list");
	if ((mode == MODE_GET || mode == MODE_LIST) && argc - optind != 1)
		return cli_usage_error("--get and --list read exactly one file");
	if (mode == MODE_TAR && isatty(STDOUT_FILENO))
		return cli_usage_error("refusing to write a tar to a terminal (redirect it)");
	if (cli_check_mapped_inputs(argv + optind, argc - optind) < 0)
		return SLAB_EXIT_USAGE;
	if (cli_check_output(NULL, argv + optind, argc - optind) < 0)
		return SLAB_EXIT_FAIL;
	if (mode == MODE_TAR)
		return tar_all(argv + optind, argc - optind);

	if (json) {
		json_init(&j, stdout);
		/* An object for one file, an array of them for several; --list is one array, begun
		 * once the file opens: a file that fails prints no JSON at all, not an empty list. */
		if (argc - optind > 1)
			json_array_begin(&j, NULL);
	}
	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		struct slab *s = slab_new();
		int r = 0;

		if (!s) {
			cli_error("out of memory");
			return SLAB_EXIT_FAIL;
		}
		if (slab_open_ex(s, path, &cli_remote) < 0) {
			cli_error("%s", slab_error(s));
			slab_close(s);
			ret = SLAB_EXIT_FAIL;
			continue;       /* the other files still get their turn */
		}
		/* From here on the file is named as its reader names it: a URL without
		 * the credential it may carry. */
		path = cli_shown(path);
		switch (mode) {
		case MODE_SUMMARY:
			r = json ? summary_json(s, path, &j) : summary_text(s, path, shown);
			json_done |= json && r == 0;
			shown += !json && r == 0;
			break;
		case MODE_LIST:
			if (json)
				json_array_begin(&j, NULL);
			r = list(s, json ? &j : NULL);
			if (json)
				json_array_end(&j);
			json_done = json;
			break;
		case MODE_GET:
			r = get(s, path, get_what, field);
			break;
		case MODE_VERIFY:
			r = verify(s, path);
			break;
		case MODE_TAR:
			break;          /* tar_all() */
		}
		slab_close(s);
		if (r == -2)
			return SLAB_EXIT_USAGE;
		if (r < 0)
			ret = SLAB_EXIT_FAIL;
	}
	if (json && argc - optind > 1) {
		json_array_end(&j);
		json_done = 1;
	}
	if (json_done)
		json_finish(&j);
	if (cli_close_stdout() < 0)
		ret = SLAB_EXIT_FAIL;
	return ret;
}
