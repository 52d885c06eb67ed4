/* prefetch: the page cache of .slab files (and any files): report how much of each is
 * resident, warm or evict them, or follow a plan: keep its next pages on their way into the
 * cache, drop those behind, and stream its samples in plan order to standard output. */
#include "cli.h"
#include "errfmt.h"
#include "fault.h"
#include "frameout.h"
#include "io.h"
#include "json.h"
#include "pagecache.h"
#include "rawout.h"
#include "reader.h"
#include "slab.h"
#include "tarout.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: prefetch [OPTIONS] FILE...\n"
"       prefetch [--status] [--json] FILE...\n"
"       prefetch --warm|--evict FILE...\n"
"       prefetch --plan PLAN [--ahead N] [--release] [--direct] FILE...\n"
"       prefetch --plan PLAN --plan PLAN... [--memory SIZE]\n"
"                [OPTIONS] FILE...\n"
"       prefetch --plan PLAN --emit [--emit-format tar|raw]\n"
"                [OPTIONS] FILE...\n"
"       prefetch --plan PLAN --emit --emit-format frames --image FIELD\n"
"                [OPTIONS] FILE...\n"
"       prefetch --plan PLAN --emit --emit-format frames --video FIELD\n"
"                [OPTIONS] FILE...\n";

static const char help_text[] =
"Report, warm or evict the page cache of files, or walk a plan over .slab files.\n"
"\n"
"Modes:\n"
"      --status             how much of each FILE is in the page cache (default);\n"
"                           of a URL, how much is in the local cache\n"
"      --warm               read each FILE into the page cache; fetch a URL whole\n"
"                           into the local cache\n"
"      --evict              drop each FILE's clean pages from the page cache; a\n"
"                           URL's pages from the local cache\n"
"      --plan PLAN          walk the plan over the .slab FILEs (the dataset, in\n"
"                           the order the plan was made for), reading each\n"
"                           sample; given again, the plans are consecutive epochs\n"
"\n"
"Options:\n"
"      --ahead N            keep the next N pages of the plan coming (default 16;\n"
"                           for URLs 4 x --connections, 64)\n"
"      --release            drop each page once the plan is past its last use\n"
"      --memory SIZE        keep at most SIZE of the dataset in the page cache,\n"
"                           choosing what stays from the plans' known future\n"
"      --disk SIZE          files at URLs: keep at most SIZE of them in the local\n"
"                           cache, choosing what stays as --memory does\n"
"      --cache-policy P     belady (default): keep the pages needed soonest;\n"
"                           fixed: keep the first pages that fit, for good\n"
"      --emit               write the samples in plan order to standard output\n"
"      --emit-format FMT    tar (default): a tar of KEY.FIELD members;\n"
"                           raw: length-prefixed records, see prefetch(1);\n"
"                           frames: decoded, cropped, resized images in\n"
"                           fixed-size records, see prefetch(1)\n"
"      --direct             read with O_DIRECT, bypassing the page cache\n"
"      --json               --status as JSON\n"
"  -q, --quiet              no summary, no progress\n"
"  -v, --verbose            say more: a line per file, the window and its pages\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
CLI_REMOTE_HELP"\n"
"With --emit-format frames:\n"
"      --image FIELD        the image field to decode (required), e.g. jpg: JPEG,\n"
"                           PNG or WebP, found by its bytes\n"
"      --size WxH           output width and height (default 224x224)\n"
"      --crop MODE          random-resized (default), center or none\n"
"      --center-ratio R     --crop center: the largest centred region, each side\n"
"                           times R, 0 < R <= 1 (default 1; 0.875: 224/256)\n"
"      --flip               flip horizontally, each image with probability 1/2\n"
"      --seed N             seed of the crops and flips (default: the plan's)\n"
"      --epoch N            epoch of the crops and flips (default: the plan's)\n"
"      --chw                planar pixels (C x H x W), not H x W x C\n"
"      --channels N         3: RGB (default); 1: grey (a palette PNG's indices);\n"
"                           4: RGBA\n"
"      --alpha MODE         drop (default): the colour as stored; composite: over\n"
"                           --background; keep: RGBA (--channels 4)\n"
"      --background R,G,B   what --alpha composite puts under the image (default\n"
"                           255,255,255)\n"
"      --resize MODE        bilinear (default), or nearest (label masks: values\n"
"                           kept exact)\n"
"      --fields LIST        the other fields each record carries, comma-separated\n"
"                           (default: every field but the image)\n"
"      --video FIELD        a video field (MP4, WebM, ..., found by its bytes)\n"
"                           made into clips instead of images: each record T\n"
"                           frames, each cropped, flipped and resized alike (RGB)\n"
"      --frames T           frames of each clip, 1 to 65535 (default 16)\n"
"      --stride S           every S-th frame, 1 to 65535 (default 1)\n"
"      --fps F              frames 1/F seconds apart by their timestamps,\n"
"                           instead of --stride (0.000001 to 1000000)\n"
"      --clip-start MODE    random (default), center or begin: where clips start\n"
"      --on-short MODE      pad (default), loop or error: a video shorter than\n"
"                           the clip ends with its last frame repeated, goes\n"
"                           on from its first frame again, or is a bad sample\n"
"                           (--on-error)\n"
"  -j, --threads N          decoding threads, 1 to 1024 (default 2)\n"
"      --on-error MODE      fail (default): an image or a video that does not\n"
"                           decode stops the stream; skip: leave it out and\n"
"                           count it\n"
"      --max-pixels N       an image of more than N pixels (width x height) is\n"
"                           one that does not decode (default 178956970;\n"
"                           none: no limit)\n"
"\n"
"Exit status: 0 success (also when the reader of --emit stops early), 1 failure\n"
"(unreadable file, bad or foreign plan, read or write error, an image that does\n"
"not decode), 2 usage error.\n"
"See prefetch(1), slab(5) and slab-plan(5).\n";

enum {
	OPT_AHEAD = CHAR_MAX + 1,
	OPT_ALPHA,
	OPT_BACKGROUND,
	OPT_CACHE_POLICY,
	OPT_CENTER_RATIO,
	OPT_CHANNELS,
	OPT_CHW,
	OPT_CLIP_START,
	OPT_CROP,
	OPT_DIRECT,
	OPT_EMIT,
	OPT_EMIT_FORMAT,
	OPT_EPOCH,
	OPT_EVICT,
	OPT_FIELDS,
	OPT_FLIP,
	OPT_FPS,
	OPT_FRAMES,
	OPT_IMAGE,
	OPT_JSON,
	OPT_MAX_PIXELS,
	OPT_MEMORY,
	OPT_DISK,
	OPT_ON_ERROR,
	OPT_ON_SHORT,
	OPT_PLAN,
	OPT_RELEASE,
	OPT_RESIZE,
	OPT_SEED,
	OPT_SIZE,
	OPT_STATUS,
	OPT_STRIDE,
	OPT_VIDEO,
	OPT_WARM,
};

static const struct option longopts[] = {
	{ "ahead",       required_argument, NULL, OPT_AHEAD },
	{ "alpha",       required_argument, NULL, OPT_ALPHA },
	{ "background",  required_argument, NULL, OPT_BACKGROUND },
	{ "cache-policy", required_argument, NULL, OPT_CACHE_POLICY },
	{ "center-ratio", required_argument, NULL, OPT_CENTER_RATIO },
	{ "channels",    required_argument, NULL, OPT_CHANNELS },
	{ "chw",         no_argument,       NULL, OPT_CHW },
	{ "clip-start",  required_argument, NULL, OPT_CLIP_START },
	{ "crop",        required_argument, NULL, OPT_CROP },
	{ "direct",      no_argument,       NULL, OPT_DIRECT },
	{ "emit",        no_argument,       NULL, OPT_EMIT },
	{ "emit-format", required_argument, NULL, OPT_EMIT_FORMAT },
	{ "epoch",       required_argument, NULL, OPT_EPOCH },
	{ "evict",       no_argument,       NULL, OPT_EVICT },
	{ "fields",      required_argument, NULL, OPT_FIELDS },
	{ "flip",        no_argument,       NULL, OPT_FLIP },
	{ "fps",         required_argument, NULL, OPT_FPS },
	{ "frames",      required_argument, NULL, OPT_FRAMES },
	{ "help",        no_argument,       NULL, 'h' },
	{ "image",       required_argument, NULL, OPT_IMAGE },
	{ "json",        no_argument,       NULL, OPT_JSON },
	{ "max-pixels",  required_argument, NULL, OPT_MAX_PIXELS },
	{ "memory",      required_argument, NULL, OPT_MEMORY },
	{ "disk",        required_argument, NULL, OPT_DISK },
	{ "on-error",    required_argument, NULL, OPT_ON_ERROR },
	{ "on-short",    required_argument, NULL, OPT_ON_SHORT },
	{ "plan",        required_argument, NULL, OPT_PLAN },
	{ "quiet",       no_argument,       NULL, 'q' },
	{ "release",     no_argument,       NULL, OPT_RELEASE },
	{ "resize",      required_argument, NULL, OPT_RESIZE },
	{ "seed",        required_argument, NULL, OPT_SEED },
	{ "size",        required_argument, NULL, OPT_SIZE },
	{ "status",      no_argument,       NULL, OPT_STATUS },
	{ "stride",      required_argument, NULL, OPT_STRIDE },
	{ "threads",     required_argument, NULL, 'j' },
	{ "verbose",     no_argument,       NULL, 'v' },
	{ "version",     no_argument,       NULL, 'V' },
	{ "video",       required_argument, NULL, OPT_VIDEO },
	CLI_REMOTE_LONGOPTS,
	{ "warm",        no_argument,       NULL, OPT_WARM },
	{ NULL, 0, NULL, 0 }
};

enum mode { MODE_STATUS, MODE_WARM, MODE_EVICT, MODE_PLAN };
enum emit { EMIT_NONE, EMIT_TAR, EMIT_RAW, EMIT_FRAMES };

#define DEFAULT_AHEAD 16
#define DEFAULT_THREADS 2
#define MAX_THREADS 1024
/* Frames: the samples a worker decodes at a time, about this many bytes of pixels. */
#define FRAME_BATCH_BYTES (2u << 20)
#define FRAME_BATCH_MAX 32u

static double rate(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / 1e6 / secs : 0.0;
}

static double percent(uint64_t part, uint64_t whole)
{
	/* An empty file has nothing missing. */
	return whole ? 100.0 * (double)part / (double)whole : 100.0;
}

/* ---- --status ----------------------------------------------------------------------------- */

struct res_total {
	uint64_t size, pages, resident, bytes;
};

/* A row of the --status table; the header goes before the first, so that a run where no
 * file could be read prints only why. */
static void status_row(const char *res, uint64_t pages, const char *size, double pct,
		       const char *name)
{
	static int header_done;

	if (!header_done) {
		printf("%10s %10s %10s %8s %s\n", "RES", "PAGES", "SIZE", "PERCENT", "FILE");
		header_done = 1;
	}
	printf("%10s %10llu %10s %7.1f%% ", res, (unsigned long long)pages, size, pct);
	cli_fputs_escaped(name, stdout);
	putchar('\n');
}

/* A URL and its local cache: NULL after saying why. */
static struct slab *open_url(const char *url)
{
	struct slab *s = slab_new();

	if (!s) {
		cli_error("out of memory");
		return NULL;
	}
	if (slab_open_ex(s, url, &cli_remote) < 0) {
		cli_error("%s", slab_error(s));
		slab_close(s);
		return NULL;
	}
	return s;
}

/* --status of a URL: its local cache, counted in .slab pages of the data. */
static int status_url(const char *url, struct json *j, struct res_total *tot)
{
	struct slab_remote_stats st = { .size = sizeof(st) };
	struct slab *s = open_url(url);
	char a[32], b[32];

	if (!s)
		return -1;
	slab_remote_stats(s, &st);
	tot->size += slab_file_size(s);
	tot->pages += st.pages;
	tot->resident += st.pages_cached;
	tot->bytes += st.bytes_cached;
	if (j) {
		json_object_begin(j, NULL);
		json_string(j, "file", cli_shown(url));
		json_string(j, "cache", slab_local_path(s));
		json_u64(j, "size", slab_file_size(s));
		json_u64(j, "pages", st.pages);
		json_u64(j, "page_size", slab_page_size(s));
		json_u64(j, "resident_pages", st.pages_cached);
		json_u64(j, "resident_bytes", st.bytes_cached);
		json_null(j, "dirty_pages");
		json_double(j, "percent", percent(st.pages_cached, st.pages));
		json_string(j, "method", "local cache");
		json_object_end(j);
	} else {
		status_row(cli_human_size(st.bytes_cached, a, sizeof(a)), st.pages_cached,
			   cli_human_size(slab_file_size(s), b, sizeof(b)),
			   percent(st.pages_cached, st.pages), cli_shown(url));
		cli_info("'%s': cached in '%s', in pages of %llu bytes", cli_shown(url), slab_local_path(s),
			 (unsigned long long)slab_page_size(s));
	}
	slab_close(s);
	return 0;
}

static int status(char **paths, int n, int json)
{
	uint64_t os = slab_pagecache_os_page();
	struct res_total tot = { 0, 0, 0, 0 };
	int ret = SLAB_EXIT_OK, shown = 0;
	struct json j;
	char a[32], b[32];

	if (json) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_u64(&j, "page_size", os);
		json_array_begin(&j, "files");
	}
	for (int i = 0; i < n; i++) {
		struct slab_pagecache *pc;
		struct slab_pagecache_residency r;
		uint64_t bytes;

		if (slab_is_url(paths[i])) {
			if (status_url(paths[i], json ? &j : NULL, &tot) < 0)
				ret = SLAB_EXIT_FAIL;
			else
				shown++;
			continue;
		}
		if (!(pc = slab_pagecache_new())) {
			cli_error("out of memory");
			return SLAB_EXIT_FAIL;
		}
		if (slab_pagecache_open(pc, paths[i]) < 0 ||
		    slab_pagecache_residency(pc, 0, 0, SLAB_PAGECACHE_AUTO, &r) < 0) {
			cli_error("%s", slab_pagecache_error(pc));
			slab_pagecache_close(pc);
			ret = SLAB_EXIT_FAIL;
			continue;       /* the other files still get their turn */
		}
		/* The last page may be partial: never more than the file. */
		bytes = r.resident * os;
		if (bytes > slab_pagecache_size(pc))
			bytes = slab_pagecache_size(pc);
		tot.size += slab_pagecache_size(pc);
		tot.pages += r.pages;
		tot.resident += r.resident;
		tot.bytes += bytes;
		shown++;
		if (json) {
			json_object_begin(&j, NULL);
			json_string(&j, "file", cli_shown(paths[i]));
			json_u64(&j, "size", slab_pagecache_size(pc));
			json_u64(&j, "pages", r.pages);
			json_u64(&j, "resident_pages", r.resident);
			json_u64(&j, "resident_bytes", bytes);
			if (r.dirty == UINT64_MAX)
				json_null(&j, "dirty_pages");
			else
				json_u64(&j, "dirty_pages", r.dirty);
			json_double(&j, "percent", percent(r.resident, r.pages));
			json_string(&j, "method", r.method == SLAB_PAGECACHE_MINCORE ? "mincore" : "cachestat");
			json_object_end(&j);
		} else {
			status_row(cli_human_size(bytes, a, sizeof(a)), r.resident,
				   cli_human_size(slab_pagecache_size(pc), b, sizeof(b)),
				   percent(r.resident, r.pages), cli_shown(paths[i]));
			if (r.dirty != UINT64_MAX && r.dirty > 0)
				cli_info("'%s': %llu dirty %s", cli_shown(paths[i]), (unsigned long long)r.dirty,
					 slab_plural(r.dirty, "page", "pages"));
		}
		slab_pagecache_close(pc);
	}
	if (json) {
		json_array_end(&j);
		json_object_begin(&j, "total");
		json_u64(&j, "size", tot.size);
		json_u64(&j, "pages", tot.pages);
		json_u64(&j, "resident_pages", tot.resident);
		json_u64(&j, "resident_bytes", tot.bytes);
		json_double(&j, "percent", percent(tot.resident, tot.pages));
		json_object_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else if (n > 1 && shown) {
		status_row(cli_human_size(tot.bytes, a, sizeof(a)), tot.resident,
			   cli_human_size(tot.size, b, sizeof(b)), percent(tot.resident, tot.pages),
			   "total");
	}
	return ret;
}

/* ---- --warm, --evict ---------------------------------------------------------------------- */

struct warm_progress {
	const char *name;
	double start, last;
	uint64_t before;        /* bytes of earlier files */
};

static void warm_progress(uint64_t done, uint64_t total, void *arg)
{
	struct warm_progress *w = arg;
	double now = cli_now();
	char a[32], b[32];

	if (now - w->last < 0.25 && done < total)
		return;
	w->last = now;
	fprintf(stderr, "\r%s: '", cli_progname());
	cli_fputs_escaped(w->name, stderr);
	fprintf(stderr, "': %3.0f%% %s of %s, %.1f MB/s\033[K",
		percent(done, total), cli_human_size(done, a, sizeof(a)),
		cli_human_size(total, b, sizeof(b)), rate(w->before + done, now - w->start));
	cli_progress_shown();
}

/* --warm of a URL: every page into the local cache, several requests at once. *bytes: what
 * the cache holds then, as a local file counts what it read into the page cache (pages that
 * opening fetched, or an earlier run, included). */
static int warm_url(const char *url, int progress, struct warm_progress *w, uint64_t *bytes)
{
	struct slab_remote_stats st = { .size = sizeof(st) };
	struct slab *s = open_url(url);
	uint64_t lo, hi, step = 64u << 20;

	*bytes = 0;
	if (!s)
		return -1;
	lo = slab_data_offset(s);
	hi = slab_table_offset(s);
	slab_fetch_ahead(s, lo, hi - lo);
	for (uint64_t o = lo; o < hi; o += step) {
		uint64_t n = hi - o < step ? hi - o : step;

		if (slab_fetch(s, o, n) < 0) {
			if (progress)
				cli_progress_clear();
			cli_error("%s", slab_error(s));
			slab_close(s);
			return -1;
		}
		if (progress)
			warm_progress(o + n - lo, hi - lo, w);
	}
	slab_remote_stats(s, &st);
	*bytes = st.bytes_cached;
	slab_close(s);
	return 0;
}

static int warm(char **paths, int n)
{
	struct warm_progress w = { NULL, cli_now(), 0, 0 };
	int progress = cli_progress_wanted(), ret = SLAB_EXIT_OK, warmed = 0;
	char a[32];

	for (int i = 0; i < n; i++) {
		struct slab_pagecache *pc = slab_pagecache_new();
		uint64_t bytes = 0;
		double t0 = cli_now();
		int r;

		if (!pc) {
			cli_error("out of memory");
			return SLAB_EXIT_FAIL;
		}
		w.name = cli_shown(paths[i]);
		if (slab_is_url(paths[i])) {
			r = warm_url(paths[i], progress, &w, &bytes);
		} else {
			r = slab_pagecache_open(pc, paths[i]);
			if (r == 0)
				r = slab_pagecache_warm(pc, 0, progress ? warm_progress : NULL, &w,
							&bytes);
			if (r < 0)
				cli_error("%s", slab_pagecache_error(pc));
		}
		if (progress)
			cli_progress_clear();
		w.before += bytes;
		if (r < 0) {
			ret = SLAB_EXIT_FAIL;
		} else {
			warmed++;
			cli_info("'%s': %s in %.2f s, %.1f MB/s", cli_shown(paths[i]),
				 cli_human_size(bytes, a, sizeof(a)), cli_now() - t0,
				 rate(bytes, cli_now() - t0));
		}
		slab_pagecache_close(pc);
	}
	if (cli_verbosity >= 1 && warmed) {
		double secs = cli_now() - w.start;
		cli_error("warmed %d file%s, %s in %.2f s, %.1f MB/s", warmed, warmed == 1 ? "" : "s",
			  cli_human_size(w.before, a, sizeof(a)), secs, rate(w.before, secs));
	}
	return ret;
}

static int evict(char **paths, int n)
{
	int ret = SLAB_EXIT_OK;

	for (int i = 0; i < n; i++) {
		struct slab_pagecache *pc;
		struct slab_pagecache_residency r;

		if (slab_is_url(paths[i])) {
			struct slab_remote_stats st = { .size = sizeof(st) };
			struct slab *s = open_url(paths[i]);

			if (!s || slab_uncache(s, 0, 0) < 0) {
				if (s)
					cli_error("%s", slab_error(s));
				ret = SLAB_EXIT_FAIL;
			} else if (cli_verbosity >= 2) {
				slab_remote_stats(s, &st);
				cli_info("'%s': evicted, %llu of %llu %s still in the local cache",
					 cli_shown(paths[i]), (unsigned long long)st.pages_cached,
					 (unsigned long long)st.pages, slab_plural(st.pages, "page", "pages"));
			}
			slab_close(s);
			continue;
		}
		if (!(pc = slab_pagecache_new())) {
			cli_error("out of memory");
			return SLAB_EXIT_FAIL;
		}
		if (slab_pagecache_open(pc, paths[i]) < 0 ||
		    slab_pagecache_advise(pc, 0, 0, SLAB_PAGECACHE_DONTNEED) < 0) {
			cli_error("%s", slab_pagecache_error(pc));
			ret = SLAB_EXIT_FAIL;
		} else if (cli_verbosity >= 2 &&
			   slab_pagecache_residency(pc, 0, 0, SLAB_PAGECACHE_AUTO, &r) == 0) {
			if (r.dirty != UINT64_MAX && r.dirty > 0)
				cli_info("'%s': evicted, %llu of %llu %s still resident (%llu dirty: written back first, drop them with a second --evict)",
					 paths[i], (unsigned long long)r.resident,
					 (unsigned long long)r.pages, slab_plural(r.pages, "page", "pages"),
					 (unsigned long long)r.dirty);
			else
				cli_info("'%s': evicted, %llu of %llu %s still resident", paths[i],
					 (unsigned long long)r.resident, (unsigned long long)r.pages,
					 slab_plural(r.pages, "page", "pages"));
		}
		slab_pagecache_close(pc);
	}
	return ret;
}

/* ---- --plan ------------------------------------------------------------------------------- */

/* --emit-format frames: what each image (or video) becomes, and the other fields carried. */
struct frame_opts {
	const char *image;              /* the image field (or the video field) */
	int video;                      /* --video: clips as vspec says (its image: spec) */
	struct slab_video_spec vspec;
	char **fields;                  /* --fields; NULL: every field but the image */
	size_t nfields;
	struct slab_image_spec spec;
	uint64_t seed, epoch;
	int seed_set, epoch_set;        /* else the plan's */
	unsigned threads;
	int skip;                       /* --on-error skip */
	uint64_t max_pixels;            /* slab_loader_options.max_pixels: 0 the default,
					 * UINT64_MAX none */
};

#define MAX_PLANS 1024

struct plan_opts {
	const char *plan_paths[MAX_PLANS];     /* --plan, in order: consecutive epochs */
	size_t nplans;
	enum emit emit;
	struct slab_follow_options fo;
	struct frame_opts fr;
};

/* A page the walk released while the pipe still referenced some of it (the walk's fadvise
 * cannot drop those): dropped again once the reader has read the stream up to end. */
struct late_drop {
	uint32_t file;
	uint64_t lo, hi;        /* the page's bytes in the file */
	uint64_t end;           /* stream bytes sent when its last sample had been */
};

struct emitter {
	enum emit kind;
	struct slab_tarout *tar;
	struct slab_rawout *raw;
	int *src;               /* per file: a descriptor on the file its mapping reads, for
				 * splice(2), -1 (its bytes are copied), or SRC_LATER */
	int nsrc;
	int open_src, max_src;  /* descriptors opened, and the most that may be */
	/* --release while splicing: per file, each page's last use (entry of the plans walked
	 * one after another), and the pages waiting for the reader, oldest first. */
	uint64_t **last;
	uint64_t entry;         /* entries handed out so far */
	struct late_drop *late;
	size_t late_head, late_n, late_cap;
};

/* A file's descriptor to splice from is opened when its first sample is emitted. */
#define SRC_LATER (-2)

/* SLAB_NO_SPLICE=1 (a debugging aid, prefetch(1)): copy every byte, as before splice. */
static int splice_wanted(void)
{
	const char *v = getenv("SLAB_NO_SPLICE");

	return !(v && *v && strcmp(v, "0") != 0);
}

/* A descriptor on the file s maps, to splice its bytes from, or -1 to copy them instead.
 * Opened by name, so checked to be the file the mapping reads still, not another put in its
 * place: the same size, the same header and trailer (the trailer holds the CRC of the table,
 * which holds every field's). */
static int splice_source(struct slab *s)
{
	const char *path = slab_local_path(s);
	const unsigned char *base = slab_base(s);
	uint64_t size = slab_file_size(s);
	unsigned char head[4096], tail[64];
	volatile int same = 0;
	struct slab_fault g;
	struct stat st;
	int fd;

	if (!path || size < sizeof(head) + sizeof(tail))
		return -1;
	if ((fd = slab_open_read(path, &st)) < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != size ||
	    pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    pread(fd, tail, sizeof(tail), (off_t)(size - sizeof(tail))) != (ssize_t)sizeof(tail)) {
		close(fd);
		return -1;
	}
	/* The mapping's own bytes: guarded, a file truncated since gives a fault here. */
	if (sigsetjmp(g.jump, 0) == 0) {
		slab_fault_begin(&g);
		same = memcmp(head, base, sizeof(head)) == 0 &&
		       memcmp(tail, base + size - sizeof(tail), sizeof(tail)) == 0;
		slab_fault_end(&g);
	}
	if (!same) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The pages [*g, *g + *k) of file s that sample smp lies on (none when it is empty), as the
 * walk counts them. */
static void sample_pages(struct slab *s, const struct slab_sample *smp, uint64_t *g,
			 uint64_t *k)
{
	uint64_t ps = slab_page_size(s), d = slab_data_offset(s);

	*g = (smp->offset - d) / ps;
	*k = smp->size ? (smp->offset + smp->size - 1 - d) / ps + 1 - *g : 0;
}

/* The pages of file s's data, up to its table. */
static uint64_t file_pages(struct slab *s)
{
	uint64_t ps = slab_page_size(s), d = slab_data_offset(s), t = slab_table_offset(s);

	return t > d ? (t - d + ps - 1) / ps : 0;
}

/* --release while splicing: each page's last use in the plans, as the walk finds it (it
 * releases a page when the sample after its last use is asked for). 0, or -1 (said). */
static int late_open(struct emitter *e, struct slab **files, int n,
		     struct slab_plan *const *plans, size_t nplans)
{
	uint64_t base = 0;

	if (!(e->last = calloc((size_t)n, sizeof(*e->last))))
		goto nomem;
	for (int i = 0; i < n; i++) {
		uint64_t pages = file_pages(files[i]);

		if (!(e->last[i] = malloc((pages ? pages : 1) * sizeof(**e->last))))
			goto nomem;
		for (uint64_t p = 0; p < pages; p++)
			e->last[i][p] = UINT64_MAX;
	}
	for (size_t k = 0; k < nplans; k++) {
		const struct slab_plan_entry *en = slab_plan_entries(plans[k]);
		uint64_t count = slab_plan_count(plans[k]);

		for (uint64_t j = 0; j < count; j++) {
			struct slab_sample smp;
			uint64_t g, np;

			/* The walk checked the plan: an entry it cannot place fails it there. */
			if ((int)en[j].file >= n || slab_sample(files[en[j].file], en[j].sample, &smp) < 0)
				continue;
			sample_pages(files[en[j].file], &smp, &g, &np);
			/* A sample is inside the data; a damaged table is the walk's to report. */
			for (uint64_t p = g; p < g + np && p < file_pages(files[en[j].file]); p++)
				e->last[en[j].file][p] = base + j;
		}
		base += count;
	}
	return 0;
nomem:
	cli_error("out of memory");
	return -1;
}

/* The bytes the reader has read so far: sent, less what is still in the pipe. */
static uint64_t late_read(const struct emitter *e)
{
	uint64_t sent = e->kind == EMIT_TAR ? slab_tarout_sent(e->tar) : slab_rawout_sent(e->raw);
	int queued = 0;

	if (ioctl(STDOUT_FILENO, FIONREAD, &queued) != 0 || queued < 0)
		return 0;
	return sent - (uint64_t)queued;
}

/* Drop the waiting pages the reader has read (all of them with all set: the pipe is gone). */
static void late_drop(struct emitter *e, int all)
{
	uint64_t read;

	if (e->late_head == e->late_n)
		return;
	read = all ? UINT64_MAX : late_read(e);
	while (e->late_head < e->late_n && e->late[e->late_head].end <= read) {
		const struct late_drop *d = &e->late[e->late_head++];

		(void)posix_fadvise(e->src[d->file], (off_t)d->lo, (off_t)(d->hi - d->lo),
				    POSIX_FADV_DONTNEED);
	}
	if (e->late_head == e->late_n)
		e->late_head = e->late_n = 0;
}

/* Out of memory for the list: the pages the pipe holds are left to the kernel's reclaim. */
static void late_stop(struct emitter *e)
{
	for (int i = 0; i < e->nsrc; i++)
		free(e->last[i]);
	free(e->last);
	free(e->late);
	e->last = NULL;
	e->late = NULL;
	e->late_head = e->late_n = e->late_cap = 0;
}

/* After a spliced sample: the pages it used last wait for the reader. */
static void late_add(struct emitter *e, struct slab *s, const struct slab_follow_item *it)
{
	uint64_t ps = slab_page_size(s), d = slab_data_offset(s), g, k;
	uint64_t sent = e->kind == EMIT_TAR ? slab_tarout_sent(e->tar) : slab_rawout_sent(e->raw);

	sample_pages(s, &it->sample, &g, &k);
	for (uint64_t p = g; p < g + k && p < file_pages(s); p++) {
		if (e->last[it->file][p] != e->entry)
			continue;
		if (e->late_n == e->late_cap) {
			size_t cap = e->late_cap ? 2 * e->late_cap : 64;
			struct late_drop *l;

			/* Moved down first: the queue holds about a pipe's worth of pages. */
			if (e->late_head) {
				memmove(e->late, e->late + e->late_head,
					(e->late_n - e->late_head) * sizeof(*e->late));
				e->late_n -= e->late_head;
				e->late_head = 0;
			}
			if (e->late_n == e->late_cap) {
				if (!(l = realloc(e->late, cap * sizeof(*l)))) {
					late_stop(e);
					return;
				}
				e->late = l;
				e->late_cap = cap;
			}
		}
		e->late[e->late_n].file = it->file;
		e->late[e->late_n].lo = d + p * ps;
		e->late[e->late_n].hi = d + (p + 1) * ps < slab_table_offset(s) ?
					d + (p + 1) * ps : slab_table_offset(s);
		e->late[e->late_n].end = sent;
		e->late_n++;
	}
}

/* At the end of a spliced stream: wait for the reader to read what the pipe holds (as a
 * write into a full pipe would), or to go away. 0, or 1 when it has gone. */
static int wait_drained(void)
{
	for (;;) {
		struct pollfd pfd = { STDOUT_FILENO, POLLOUT, 0 };
		int queued = 0;

		if (ioctl(STDOUT_FILENO, FIONREAD, &queued) != 0 || queued <= 0)
			return 0;
		/* POLLERR: the reader has gone. */
		if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLERR))
			return 1;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/* At the end of the stream, with pages waiting: once the reader has what the pipe holds, or
 * has gone, drop them. */
static void late_finish(struct emitter *e, int reader_gone)
{
	if (e->late_head == e->late_n)
		return;
	if (reader_gone || wait_drained()) {
		/* The pipe keeps its pages until its last writer closes it: this one. */
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			(void)dup2(fd, STDOUT_FILENO);
			close(fd);
		}
	}
	late_drop(e, 1);
}

/* The writer for kind on standard output; with splice (a pipe, not SLAB_NO_SPLICE, not
 * --direct nor --memory: a budget is kept by dropping pages, which the pipe may hold), the
 * files' descriptors to splice from: every file's but those at a URL under a --disk budget
 * (their cache's pages are punched out after use, which would change bytes the pipe holds and
 * its reader has not read yet). page: the largest page size of the files, what the pipe is
 * grown to. */
static int emitter_open(struct emitter *e, enum emit kind, uint64_t count, struct slab **files,
			char **paths, int n, struct slab_plan *const *plans, const struct plan_opts *po,
			uint64_t page)
{
	int on = splice_wanted() && !po->fo.direct && !po->fo.memory, splicing = 0;
	struct rlimit rl;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (kind == EMIT_TAR) {
		e->tar = slab_tarout_new();
		if (!e->tar) {
			cli_error("out of memory");
			return -1;
		}
		slab_tarout_set_splice(e->tar, on, page);
		if (slab_tarout_open(e->tar, STDOUT_FILENO) < 0) {
			cli_error("tar output: %s", slab_tarout_error(e->tar));
			return -1;
		}
		splicing = slab_tarout_splicing(e->tar);
	} else if (kind == EMIT_RAW) {
		e->raw = slab_rawout_new();
		if (!e->raw) {
			cli_error("out of memory");
			return -1;
		}
		slab_rawout_set_splice(e->raw, on, page);
		if (slab_rawout_open(e->raw, STDOUT_FILENO, count) < 0) {
			cli_error("raw output: %s", slab_rawout_error(e->raw));
			return -1;
		}
		splicing = slab_rawout_splicing(e->raw);
	}
	if (!splicing)
		return 0;
	if (!(e->src = malloc((size_t)n * sizeof(*e->src)))) {
		cli_error("out of memory");
		return -1;
	}
	for (e->nsrc = 0; e->nsrc < n; e->nsrc++) {
		int remote = slab_is_url(paths[e->nsrc]);

		e->src[e->nsrc] = remote && po->fo.disk ? -1 : SRC_LATER;
	}
	/* A descriptor more per file, kept to the end: at most a quarter of the process's limit,
	 * which the walk's own descriptors and a URL's connections need too; the files past it
	 * are copied. */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 > (rlim_t)n)
		e->max_src = n;
	else
		e->max_src = (int)(rl.rlim_cur / 4);
	return po->fo.release ? late_open(e, files, n, plans, po->nplans) : 0;
}

/* 0, 1 when the reader has gone (EPIPE: stop quietly), or -1 (emitter_error() says why). */
static int emitter_result(const struct emitter *e, int r)
{
	int err = e->kind == EMIT_TAR ? slab_tarout_errno(e->tar) : slab_rawout_errno(e->raw);

	if (r >= 0)
		return 0;
	return r == SLAB_ERR_IO && err == EPIPE ? 1 : -1;
}

static void emitter_error(const struct emitter *e)
{
	int tar = e->kind == EMIT_TAR;
	int err = tar ? slab_tarout_errno(e->tar) : slab_rawout_errno(e->raw);
	const char *msg = tar ? slab_tarout_error(e->tar) : slab_rawout_error(e->raw);

	/* The output's failures say so; the input's (a file truncated under the stream) have
	 * no errno of the output's and name the file themselves. */
	if (err)
		cli_error("%s output: %s", tar ? "tar" : "raw", msg);
	else
		cli_error("%s", msg);
}

/* The descriptor to splice sample it from, or -1. */
static int emitter_source(struct emitter *e, struct slab *s, const struct slab_follow_item *it)
{
	int *src;

	if (!e->src || it->direct || it->file >= (uint32_t)e->nsrc)
		return -1;
	src = &e->src[it->file];
	if (*src == SRC_LATER) {
		*src = e->open_src < e->max_src ? splice_source(s) : -1;
		if (*src >= 0)
			e->open_src++;
	}
	return *src;
}

static int emitter_sample(struct emitter *e, struct slab *s, const struct slab_follow_item *it)
{
	const unsigned char *bytes = it->direct ? it->bytes : NULL;
	/* The walk fetched a file at a URL's bytes into its cache before handing them out. */
	int src = emitter_source(e, s, it);
	int r = 0;

	if (e->kind == EMIT_TAR)
		r = slab_tarout_sample_from(e->tar, s, src, it->index, bytes);
	else if (e->kind == EMIT_RAW)
		r = slab_rawout_sample_from(e->raw, s, src, it->file, it->index, it->pos, bytes);
	if (r >= 0 && e->last && src >= 0)
		late_add(e, s, it);
	if (r >= 0 && e->last)
		late_drop(e, 0);
	e->entry++;
	return emitter_result(e, r);
}

static int emitter_finish(struct emitter *e)
{
	int r = 0;

	if (e->kind == EMIT_TAR)
		r = slab_tarout_finish(e->tar);
	else if (e->kind == EMIT_RAW)
		r = slab_rawout_finish(e->raw);
	return emitter_result(e, r);
}

/* The end of the stream, finished or not (w: what emitter_sample or emitter_finish said):
 * pages waiting for the reader are dropped once it has them. */
static void emitter_end(struct emitter *e, int w)
{
	if (e->last)
		late_finish(e, w == 1);
}

/* After a stream finished that spliced from files: once the reader has read all the pipe
 * holds, each of them still the size it had. The pipe holds the pages, not their bytes: a
 * file truncated before they are read gives the reader zeros in their place. 0, or -1 after
 * the error. */
static int emitter_check_spliced(struct emitter *e, struct slab *const *files,
				 const char *const *paths)
{
	int any = 0;

	for (int i = 0; e->src && i < e->nsrc; i++)
		any |= e->src[i] >= 0;
	if (!any || wait_drained())
		return 0;
	for (int i = 0; i < e->nsrc; i++) {
		struct stat st;

		if (e->src[i] >= 0 && fstat(e->src[i], &st) == 0 &&
		    (uint64_t)st.st_size < slab_file_size(files[i])) {
			cli_error("'%s': the file is %llu bytes now, %llu when it was opened "
				  "(truncated while in use): bytes of it in the pipe may have "
				  "reached the reader as zeros", cli_shown(paths[i]),
				  (unsigned long long)st.st_size,
				  (unsigned long long)slab_file_size(files[i]));
			return -1;
		}
	}
	return 0;
}

static void emitter_free(struct emitter *e)
{
	slab_tarout_free(e->tar);
	slab_rawout_free(e->raw);
	for (int i = 0; i < e->nsrc; i++)
		if (e->src[i] >= 0)
			close(e->src[i]);
	free(e->src);
	if (e->last)
		late_stop(e);
	free(e->late);
}

static void plan_progress(const struct slab_follow_stats *st, uint64_t n, double secs)
{
	char a[32];

	fprintf(stderr, "\r%s: %3.0f%% %llu/%llu %s, %s, %.1f MB/s\033[K", cli_progname(),
		percent(st->samples, n), (unsigned long long)st->samples, (unsigned long long)n,
		slab_plural(n, "sample", "samples"), cli_human_size(st->bytes, a, sizeof(a)), rate(st->bytes, secs));
	cli_progress_shown();
}

/* Bytes this process has had read from storage so far (/proc/self/io read_bytes: its own
 * reads, faults and read-ahead it set off), or UINT64_MAX where the kernel does not say. */
static uint64_t storage_read(void)
{
	FILE *fp = fopen("/proc/self/io", "re");
	unsigned long long v = 0;
	char line[128];
	int found = 0;

	if (!fp)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "read_bytes: %llu", &v) == 1)
			found = 1;
	fclose(fp);
	return found ? (uint64_t)v : UINT64_MAX;
}

/* What one epoch (plan) took, when there are several or a budget: one line each. */
struct epoch_mark {
	uint64_t samples, bytes, read;
	double t;
	uint64_t fetched;       /* bytes fetched from the files' URLs, UINT64_MAX: no URL */
};

/* Bytes fetched so far for the files at URLs (into their local caches), UINT64_MAX when
 * none is at a URL: of files[0 .. n), or of the dataset d's files when files is NULL. */
static uint64_t fetched(struct slab *const *files, const struct slab_dataset *d, int n)
{
	uint64_t sum = 0;
	int any = 0;

	for (int i = 0; i < n; i++) {
		struct slab_remote_stats st = { .size = sizeof(st) };

		if (slab_remote_stats(files ? files[i] : slab_dataset_file(d, (size_t)i), &st)) {
			sum += st.fetched_bytes;
			any = 1;
		}
	}
	return any ? sum : UINT64_MAX;
}

static void epoch_line(const struct plan_opts *po, size_t k, const struct epoch_mark *m0,
		       const struct epoch_mark *m1, uint64_t dataset)
{
	double secs = m1->t - m0->t;
	char a[32], b[32], c[80] = "";

	if (m1->fetched != UINT64_MAX)
		snprintf(c, sizeof(c), ", fetched %s (%.2fx the dataset)",
			 cli_human_size(m1->fetched - m0->fetched, a, sizeof(a)),
			 dataset ? (double)(m1->fetched - m0->fetched) / (double)dataset : 0.0);
	if (m0->read == UINT64_MAX || m1->read == UINT64_MAX)
		snprintf(b, sizeof(b), "unknown");
	else
		snprintf(b, sizeof(b), "%s (%.2fx the dataset)",
			 cli_human_size(m1->read - m0->read, a, sizeof(a)),
			 dataset ? (double)(m1->read - m0->read) / (double)dataset : 0.0);
	if (cli_verbosity < 1)
		return;
	cli_error("'%s': epoch %zu of %zu: %llu %s, %s in %.2f s, %.0f samples/s, read from storage %s%s",
		 slab_input_shown(po->plan_paths[k]), k + 1, po->nplans, (unsigned long long)(m1->samples - m0->samples),
		 slab_plural(m1->samples - m0->samples, "sample", "samples"), cli_human_size(m1->bytes - m0->bytes, a, sizeof(a)), secs,
		 secs > 0 ? (double)(m1->samples - m0->samples) / secs : 0.0, b, c);
}

/* What the summary lines of a walk name: its plan, or how many plans it walked (each has
 * its own epoch line). */
static const char *walk_label(const struct plan_opts *po, char *buf, size_t len)
{
	if (po->nplans == 1)
		snprintf(buf, len, "'%s'", slab_input_shown(po->plan_paths[0]));
	else
		snprintf(buf, len, "%zu plans", po->nplans);
	return buf;
}

static int follow_plan(char **paths, int n, const struct plan_opts *po)
{
	struct slab_plan **plans = calloc(po->nplans, sizeof(*plans));
	struct slab **files = calloc((size_t)n, sizeof(*files));
	struct slab_follow *f = NULL;
	struct slab_follow_item it;
	struct slab_follow_stats st = { .size = sizeof(st) };
	struct emitter em = { .kind = EMIT_NONE };
	int progress = cli_progress_wanted(), ret = SLAB_EXIT_FAIL, r, w = 0;
	int per_epoch = po->nplans > 1 || po->fo.memory || po->fo.disk;
	uint64_t written = 0, written_bytes = 0, count = 0, dataset = 0, page = 0, budget;
	struct epoch_mark mark, now;
	size_t epoch = 0;
	double start, last = 0;
	char label[PATH_MAX + 8];
	const char *name = walk_label(po, label, sizeof(label));
	char a[32];

	if (!files || !plans || !(f = slab_follow_new())) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t k = 0; k < po->nplans; k++) {
		if (!(plans[k] = slab_plan_new())) {
			cli_error("out of memory");
			goto out;
		}
		if (slab_plan_read(plans[k], po->plan_paths[k]) < 0) {
			cli_error("%s", slab_plan_error(plans[k]));
			goto out;
		}
		count += slab_plan_count(plans[k]);
	}
	/* Every file must open before anything is read or written. */
	for (int i = 0; i < n; i++) {
		files[i] = slab_new();
		if (!files[i]) {
			cli_error("out of memory");
			goto out;
		}
		/* What is emitted is named by its keys: all must be safe before anything is. */
		if (slab_open_ex(files[i], paths[i], &cli_remote) < 0 ||
		    (po->emit != EMIT_NONE && slab_check_keys(files[i]) < 0)) {
			cli_error("%s", slab_error(files[i]));
			goto out;
		}
		dataset += slab_file_size(files[i]);
		if (slab_page_size(files[i]) > page)
			page = slab_page_size(files[i]);
	}
	/* A budget is kept with the window in it: one smaller than the window holds the window
	 * and nothing more, which a user asking for it should know. */
	budget = po->fo.disk ? po->fo.disk : po->fo.memory;
	if (budget && po->fo.ahead * page > budget) {
		char hb[32], hp[32];

		cli_warn("--%s %s is less than the look-ahead window (--ahead %llu %s of %s): the "
			 "cache holds the window whatever the budget, and keeps nothing for later",
			 po->fo.disk ? "disk" : "memory", cli_human_size(budget, hb, sizeof(hb)),
			 (unsigned long long)po->fo.ahead, slab_plural(po->fo.ahead, "page", "pages"),
			 cli_human_size(page, hp, sizeof(hp)));
	}
	for (size_t k = 0; k < po->nplans; k++) {
		if (slab_plan_match(plans[k], files, (uint32_t)n) < 0) {
			cli_error("'%s': plan does not belong to these files: %s",
				  slab_input_shown(po->plan_paths[k]),
				  slab_plan_error(plans[k]));
			goto out;
		}
	}
	if (slab_follow_open_plans(f, files, (const char *const *)paths, (uint32_t)n,
				   (const struct slab_plan *const *)plans, po->nplans, &po->fo) < 0) {
		cli_error("%s", slab_follow_error(f));
		goto out;
	}
	if (po->emit != EMIT_NONE) {
		/* A reader that stops early is not an error: the write says EPIPE, we stop. */
		signal(SIGPIPE, SIG_IGN);
		if (emitter_open(&em, po->emit, count, files, paths, n, plans, po, page) < 0)
			goto out;
	}
	start = cli_now();
	mark = (struct epoch_mark){ 0, 0, per_epoch ? storage_read() : 0, start,
				    fetched(files, NULL, n) };
	while ((r = slab_follow_next(f, &it)) == 1) {
		if (per_epoch && slab_follow_epoch(f) != epoch) {
			now = (struct epoch_mark){ written, written_bytes, storage_read(), cli_now(),
						   fetched(files, NULL, n) };
			if (progress)
				cli_progress_clear();
			epoch_line(po, epoch, &mark, &now, dataset);
			mark = now;
			/* A plan with no entries hands out no sample to mark its turn: its line
			 * (nothing read) comes as the walk passes it. */
			while (++epoch < slab_follow_epoch(f))
				epoch_line(po, epoch, &mark, &now, dataset);
		}
		if (po->emit == EMIT_NONE) {
			if (slab_follow_touch(&it) < 0) {
				/* The sample's pages are gone (the file truncated under the walk). */
				struct slab_err e;

				if (progress)
					cli_progress_clear();
				slab_fault_fail(&e, cli_shown(paths[it.file]), slab_base(files[it.file]),
						slab_file_size(files[it.file]), it.bytes);
				cli_error("%s", e.text);
				goto out;
			}
		} else if ((w = emitter_sample(&em, files[it.file], &it)) != 0) {
			break;
		}
		written++;
		written_bytes += it.sample.size;
		if (progress && cli_now() - last >= 0.25) {
			last = cli_now();
			slab_follow_stats(f, &st);
			plan_progress(&st, count, last - start);
		}
	}
	if (r == 0 && po->emit != EMIT_NONE)
		w = emitter_finish(&em);
	if (po->emit != EMIT_NONE)
		emitter_end(&em, w);
	if (progress)
		cli_progress_clear();
	if (r < 0) {
		cli_error("%s", slab_follow_error(f));
		goto out;
	}
	if (w < 0) {
		emitter_error(&em);
		goto out;
	}
	if (r == 0 && w == 0 && po->emit != EMIT_NONE &&
	    emitter_check_spliced(&em, files, (const char *const *)paths) < 0)
		goto out;
	if (per_epoch && w == 0) {
		now = (struct epoch_mark){ written, written_bytes, storage_read(), cli_now(),
					   fetched(files, NULL, n) };
		epoch_line(po, epoch, &mark, &now, dataset);
		/* and the empty plans after the last sample */
		while (++epoch < po->nplans)
			epoch_line(po, epoch, &now, &now, dataset);
	}
	slab_follow_stats(f, &st);
	if (w == 1)
		cli_info("%s: the reader closed the pipe after %llu of %llu %s", name,
			 (unsigned long long)written, (unsigned long long)count,
			 slab_plural(count, "sample", "samples"));
	if (po->emit != EMIT_NONE) {
		/* What reached the reader: not the sample being written when it went away, nor
		 * what the walk had read ahead. */
		st.samples = written;
		st.bytes = written_bytes;
	}
	if (cli_verbosity >= 1) {
		double secs = cli_now() - start;
		cli_error("%s: %llu %s, %s in %.2f s, %.1f MB/s", name,
			  (unsigned long long)st.samples, slab_plural(st.samples, "sample", "samples"),
			  cli_human_size(st.bytes, a, sizeof(a)), secs,
			  rate(st.bytes, secs));
	}
	cli_info("%s: %llu distinct %s, %llu WILLNEED %s, %llu %s released, window of at most %llu %s",
		 name, (unsigned long long)st.distinct_pages,
		 slab_plural(st.distinct_pages, "page", "pages"), (unsigned long long)st.advised,
		 slab_plural(st.advised, "call", "calls"), (unsigned long long)st.released,
		 slab_plural(st.released, "page", "pages"), (unsigned long long)st.max_window,
		 slab_plural(st.max_window, "page", "pages"));
	if (po->fo.memory) {
		char b[32];
		cli_info("%s: cache budget %s (%s): %llu %s cached at the start, %llu kept, %llu evicted, %llu %s, %llu %s, at most %s cached",
			 name, cli_human_size(po->fo.memory, a, sizeof(a)),
			 po->fo.policy == SLAB_CACHE_FIXED ? "fixed" : "belady",
			 (unsigned long long)st.adopted, slab_plural(st.adopted, "page", "pages"),
			 (unsigned long long)st.kept, (unsigned long long)st.evicted,
			 (unsigned long long)st.hits, slab_plural(st.hits, "hit", "hits"),
			 (unsigned long long)st.misses, slab_plural(st.misses, "miss", "misses"),
			 cli_human_size(st.max_cached, b, sizeof(b)));
	}
	if (po->fo.direct) {
		char b[32];
		cli_info("%s: %s read with O_DIRECT in %llu %s (%s), at most %s in buffers",
			 name, cli_human_size(st.direct_bytes, a, sizeof(a)),
			 (unsigned long long)st.direct_reads, slab_plural(st.direct_reads, "read", "reads"),
			 st.async ? "asynchronous" : "one at a time",
			 cli_human_size(st.max_buffered, b, sizeof(b)));
	}
	ret = SLAB_EXIT_OK;
out:
	emitter_free(&em);
	slab_follow_close(f);
	for (int i = 0; files && i < n; i++)
		slab_close(files[i]);
	free(files);
	for (size_t k = 0; plans && k < po->nplans; k++)
		slab_plan_free(plans[k]);
	free(plans);
	return ret;
}

/* ---- --emit-format frames ----------------------------------------------------------------- */

static void frames_progress(uint64_t done, uint64_t n, uint64_t bytes, double secs)
{
	char a[32];

	fprintf(stderr, "\r%s: %3.0f%% %llu/%llu %s, %s, %.1f MB/s\033[K", cli_progname(),
		percent(done, n), (unsigned long long)done, (unsigned long long)n,
		slab_plural(n, "sample", "samples"), cli_human_size(bytes, a, sizeof(a)), rate(bytes, secs));
	cli_progress_shown();
}

static int dataset_has_field(const struct slab_dataset *d, const char *name)
{
	for (size_t i = 0; i < slab_dataset_files(d); i++)
		if (slab_field_lookup(slab_dataset_file(d, i), name) >= 0)
			return 1;
	return 0;
}

/* A frame stream being written: the writer, what the records carry, what was written. */
struct frames_run {
	struct slab_dataset *d;
	struct slab_frameout *w;
	unsigned *other;                /* the loader's number of each field a record carries */
	unsigned nother;
	struct slab_frameout_field *ff;
	uint64_t written, skipped, count;       /* records; skipped by the loaders before */
	int warned;
	double start, last;
};

/* The batches of one epoch's loader into the stream: 0, 1 when the writer failed (wr), or -1
 * when the loader failed (said). */
static int frames_epoch(struct slab_loader *l, struct frames_run *run)
{
	struct slab_loader_batch *b;
	int progress = cli_progress_wanted(), r;

	while ((r = slab_loader_next(l, &b)) == 1) {
		size_t cnt = slab_loader_batch_count(b);
		int wr = 0;

		if (!run->warned && slab_loader_skipped(l)) {
			cli_warn("%s (skipped)", slab_loader_error(l));
			run->warned = 1;
		}
		for (size_t j = 0; j < cnt && wr == 0; j++) {
			struct slab_loader_sample smp;

			slab_loader_batch_sample(b, j, &smp);
			for (unsigned k = 0; k < run->nother; k++)
				slab_loader_batch_field(b, j, run->other[k], &run->ff[k].data,
							&run->ff[k].size);
			if (slab_frameout_sample(run->w, slab_dataset_file(run->d, smp.file), smp.file,
						 smp.index, smp.pos, smp.key, smp.key_len,
						 slab_loader_batch_out(b, j), run->ff) < 0)
				wr = 1;
			else
				run->written++;
		}
		slab_loader_release(l, b);
		if (wr)
			return 1;
		if (progress && cli_now() - run->last >= 0.25) {
			run->last = cli_now();
			frames_progress(run->written, run->count, slab_frameout_bytes(run->w),
					run->last - run->start);
		}
	}
	if (r < 0) {
		if (progress)
			cli_progress_clear();
		cli_error("%s", slab_loader_error(l));
		return -1;
	}
	/* (the skipped samples of the last batches may have left no batch to hand out) */
	if (!run->warned && slab_loader_skipped(l)) {
		if (progress)
			cli_progress_clear();
		cli_warn("%s (skipped)", slab_loader_error(l));
		run->warned = 1;
	}
	return 0;
}

/*
 * The samples of the plans through the loader's image pipeline, written as frame records
 * (frameout.h). Skipped samples leave no record: the end record counts them. Several plans
 * are consecutive epochs, one loader each, with the plans after it as the future its page
 * cache budget looks at; as in a raw stream, one header (count: all the plans' entries; seed
 * and epoch: the first plan's) and one end record frame them all, and each record keeps its
 * position in its own plan.
 */
static int emit_frames(char **paths, int n, const struct plan_opts *po)
{
	const struct frame_opts *fr = &po->fr;
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan **plans = calloc(po->nplans, sizeof(*plans));
	struct slab_loader *l = NULL;
	struct slab_loader_options lo = { .size = sizeof(lo) };
	struct slab_frameout_params fp = { 0 };
	struct frames_run run = { 0 };
	const char **want = NULL;       /* the loader's fields, when --fields is given */
	const char **names = NULL;      /* the name of each field a record carries */
	unsigned nf;
	uint64_t image_bytes = (uint64_t)fr->spec.out_w * fr->spec.out_h *
			       (fr->spec.channels ? fr->spec.channels : 3) *
			       (fr->video ? fr->vspec.frames : 1), dataset = 0;
	int progress = cli_progress_wanted(), ret = SLAB_EXIT_FAIL, wr = 0;
	int per_epoch = po->nplans > 1 || po->fo.memory || po->fo.disk;
	struct epoch_mark mark, now;
	char label[PATH_MAX + 8];
	const char *name = walk_label(po, label, sizeof(label));
	size_t k;
	char a[32];

	run.d = d;
	if (!d || !plans || !(run.w = slab_frameout_new())) {
		cli_error("out of memory");
		goto out;
	}
	if (slab_dataset_open_ex(d, (const char *const *)paths, (size_t)n, &cli_remote) < 0) {
		cli_error("%s", slab_dataset_error(d));
		goto out;
	}
	/* What is emitted is named by its keys: all must be safe before anything is. */
	for (int i = 0; i < n; i++) {
		if (slab_check_keys(slab_dataset_file(d, (size_t)i)) < 0) {
			cli_error("%s", slab_error(slab_dataset_file(d, (size_t)i)));
			goto out;
		}
		dataset += slab_file_size(slab_dataset_file(d, (size_t)i));
	}
	for (k = 0; k < po->nplans; k++) {
		if (slab_dataset_plan_read(d, po->plan_paths[k], &plans[k]) < 0) {
			cli_error("%s", slab_dataset_error(d));
			goto out;
		}
		run.count += slab_plan_count(plans[k]);
	}
	if (!dataset_has_field(d, fr->image)) {
		struct slab_err e = { "" };

		slab_no_field(d, fr->image, &e);
		cli_error("%s", e.text);
		goto out;
	}
	if (fr->fields) {
		/* The fields asked for, then the image unless it is one of them. */
		int has_image = 0;

		if (!(want = calloc(fr->nfields + 1, sizeof(*want)))) {
			cli_error("out of memory");
			goto out;
		}
		for (size_t f = 0; f < fr->nfields; f++) {
			want[f] = fr->fields[f];
			has_image |= strcmp(want[f], fr->image) == 0;
		}
		lo.nfields = fr->nfields;
		if (!has_image)
			want[lo.nfields++] = fr->image;
		lo.fields = want;
	}
	lo.batch = image_bytes >= FRAME_BATCH_BYTES ? 1 : FRAME_BATCH_BYTES / image_bytes;
	if (lo.batch > FRAME_BATCH_MAX)
		lo.batch = FRAME_BATCH_MAX;
	lo.threads = fr->threads;
	lo.ahead = po->fo.ahead;
	lo.release = po->fo.release;
	lo.memory = po->fo.memory;
	lo.disk = po->fo.disk;
	lo.cache_policy = (int)po->fo.policy;
	lo.skip = fr->skip;
	if (fr->video)
		lo.video = &fr->vspec;
	else
		lo.image = &fr->spec;
	lo.transform_field = fr->image;
	lo.max_pixels = fr->max_pixels;
	/* A reader that stops early is not an error: the write says EPIPE, we stop. */
	signal(SIGPIPE, SIG_IGN);
	run.start = cli_now();
	mark = (struct epoch_mark){ 0, 0, per_epoch ? storage_read() : 0, run.start,
				    fetched(NULL, d, n) };
	for (k = 0; k < po->nplans && wr == 0; k++) {
		int r;

		lo.seed = fr->seed_set ? fr->seed : slab_plan_params(plans[k])->seed;
		lo.epoch = fr->epoch_set ? fr->epoch : slab_plan_params(plans[k])->epoch;
		lo.next_plans = (const struct slab_plan *const *)plans + k + 1;
		lo.nnext = po->nplans - k - 1;
		if (!(l = slab_loader_new())) {
			cli_error("out of memory");
			goto out;
		}
		if (slab_loader_open(l, d, plans[k], &lo) < 0) {
			cli_error("%s", slab_loader_error(l));
			goto out;
		}
		if (k == 0) {
			/* The fields a record carries: those asked for, in their order, or every
			 * field of the loader (sorted) but the image; the same for every epoch. */
			nf = slab_loader_field_count(l);
			run.other = calloc(nf, sizeof(*run.other));
			names = calloc(nf, sizeof(*names));
			run.ff = calloc(nf, sizeof(*run.ff));
			if (!run.other || !names || !run.ff) {
				cli_error("out of memory");
				goto out;
			}
			for (unsigned f = 0; f < nf; f++) {
				const char *fname = slab_loader_field_name(l, f);

				if (fr->fields ? f < fr->nfields : strcmp(fname, fr->image) != 0) {
					run.other[run.nother] = f;
					names[run.nother++] = fname;
				}
			}
			fp.count = run.count;
			fp.width = fr->spec.out_w;
			fp.height = fr->spec.out_h;
			fp.chw = fr->spec.chw;
			fp.channels = fr->spec.channels ? fr->spec.channels : 3;
			fp.frames = fr->video ? fr->vspec.frames : 0;
			fp.crop = fr->spec.crop;
			fp.flip = fr->spec.flip;
			fp.seed = lo.seed;
			fp.epoch = lo.epoch;
			fp.fields = names;
			fp.nfields = run.nother;
			if (slab_frameout_open(run.w, STDOUT_FILENO, &fp) < 0) {
				wr = 1;
				break;
			}
		}
		r = frames_epoch(l, &run);
		if (r < 0)
			goto out;
		wr = r;
		run.skipped += slab_loader_skipped(l);
		if (per_epoch && wr == 0) {
			now = (struct epoch_mark){ run.written, slab_frameout_bytes(run.w), storage_read(),
						   cli_now(), fetched(NULL, d, n) };
			if (progress)
				cli_progress_clear();
			epoch_line(po, k, &mark, &now, dataset);
			mark = now;
		}
		if (k + 1 < po->nplans) {
			/* The loader before what it reads; the last one stays for its numbers. */
			slab_loader_close(l);
			l = NULL;
		}
	}
	if (progress)
		cli_progress_clear();
	if (wr == 0 && slab_frameout_finish(run.w, run.skipped) < 0)
		wr = 1;
	if (wr && slab_frameout_errno(run.w) != EPIPE) {
		/* Not the output's failure (errno 0): an input that could not be read, named. */
		if (slab_frameout_errno(run.w) == 0)
			cli_error("%s", slab_frameout_error(run.w));
		else
			cli_error("frames output: %s", slab_frameout_error(run.w));
		goto out;
	}
	if (wr)
		cli_info("%s: the reader closed the pipe after %llu of %llu %s", name,
			 (unsigned long long)run.written, (unsigned long long)run.count,
			 slab_plural(run.count, "sample", "samples"));
	if (cli_verbosity >= 1) {
		double secs = cli_now() - run.start;
		char skipped[64] = "";

		if (fr->skip)
			snprintf(skipped, sizeof(skipped), ", %llu skipped",
				 (unsigned long long)run.skipped);
		cli_error("%s: %llu %s, %s in %.2f s, %.1f MB/s%s", name,
			  (unsigned long long)run.written, slab_plural(run.written, "sample", "samples"),
			  cli_human_size(slab_frameout_bytes(run.w), a, sizeof(a)), secs,
			  rate(slab_frameout_bytes(run.w), secs), skipped);
	}
	cli_info("%s: %u %s, %zu %s a batch, %s a frame, seed %llu, epoch %llu",
		 name, fr->threads, slab_plural(fr->threads, "thread", "threads"), lo.batch,
		 slab_plural(lo.batch, "sample", "samples"), cli_human_size(image_bytes, a, sizeof(a)),
		 (unsigned long long)fp.seed, (unsigned long long)fp.epoch);
	ret = SLAB_EXIT_OK;
out:
	/* The loader before what it reads. */
	slab_loader_close(l);
	slab_frameout_free(run.w);
	free(want);
	free(run.other);
	free(names);
	free(run.ff);
	for (k = 0; plans && k < po->nplans; k++)
		slab_plan_free(plans[k]);
	free(plans);
	slab_dataset_close(d);
	return ret;
}

/* The name of an option that goes with --emit-format frames alone, else NULL. */
static const char *frames_option(int c)
{
	switch (c) {
	case OPT_ALPHA:         return "--alpha";
	case OPT_BACKGROUND:    return "--background";
	case OPT_CENTER_RATIO:  return "--center-ratio";
	case OPT_CHANNELS:      return "--channels";
	case OPT_CHW:           return "--chw";
	case OPT_CLIP_START:    return "--clip-start";
	case OPT_CROP:          return "--crop";
	case OPT_EPOCH:         return "--epoch";
	case OPT_FIELDS:        return "--fields";
	case OPT_FLIP:          return "--flip";
	case OPT_FPS:           return "--fps";
	case OPT_FRAMES:        return "--frames";
	case OPT_IMAGE:         return "--image";
	case OPT_MAX_PIXELS:    return "--max-pixels";
	case 'j':               return "--threads";
	case OPT_ON_ERROR:      return "--on-error";
	case OPT_ON_SHORT:      return "--on-short";
	case OPT_RESIZE:        return "--resize";
	case OPT_SEED:          return "--seed";
	case OPT_SIZE:          return "--size";
	case OPT_STRIDE:        return "--stride";
	case OPT_VIDEO:         return "--video";
	default:                return NULL;
	}
}

/* --alpha keep: RGBA, --channels 4 (the spec has no such alpha value: 4 channels keep it). */
#define ALPHA_KEEP 2

/* --channels, --alpha (-1 not given; its argument as given) and --background together into
 * spec: 0, or the usage error's exit status. keep means 4 channels; 4 channels keep the alpha,
 * so drop and composite do not go with them; a background is for composite alone. */
static int image_channels(struct slab_image_spec *spec, int alpha, const char *alpha_arg,
			  int background_set)
{
	if (alpha == ALPHA_KEEP) {
		if (spec->channels != 0 && spec->channels != 4)
			return cli_usage_error("--alpha keep goes with --channels 4, not %u",
					       spec->channels);
		spec->channels = 4;
	} else if (alpha >= 0 && spec->channels == 4) {
		return cli_usage_error("--alpha %s does not go with --channels 4 (RGBA keeps the "
				       "alpha)", alpha_arg);
	} else if (alpha >= 0) {
		spec->alpha = alpha;
	}
	if (background_set && spec->alpha != SLAB_IMAGE_ALPHA_COMPOSITE)
		return cli_usage_error("--background goes with --alpha composite");
	return 0;
}

/* The name of an option that goes with --video alone, else NULL. */
static const char *video_option(int c)
{
	switch (c) {
	case OPT_CLIP_START:    return "--clip-start";
	case OPT_FPS:           return "--fps";
	case OPT_FRAMES:        return "--frames";
	case OPT_ON_SHORT:      return "--on-short";
	case OPT_STRIDE:        return "--stride";
	default:                return NULL;
	}
}

/* The name of an option that goes with --image alone (clips are RGB), else NULL. */
static const char *image_option(int c)
{
	switch (c) {
	case OPT_ALPHA:         return "--alpha";
	case OPT_BACKGROUND:    return "--background";
	case OPT_CHANNELS:      return "--channels";
	default:                return NULL;
	}
}

/* A frame rate: a decimal number from 0.000001 (a frame every 11.6 days: its period, and
 * the times taken from it, stay finite) to 1000000: 0, or -1. */
static int parse_fps(const char *s, double *r)
{
	return cli_parse_decimal(s, SLAB_VIDEO_MIN_FPS, SLAB_VIDEO_MAX_FPS, r);
}

/* A number in (0, 1], in decimal: 0, or -1. */
static int parse_ratio(const char *s, double *r)
{
	return cli_parse_decimal(s, 0, 1, r);
}

/* "WxH", each from 1 to 65535: 0, or -1. */
static int parse_size(const char *s, uint32_t *w, uint32_t *h)
{
	const char *x = strchr(s, 'x');
	char width[16];
	uint64_t a, b;

	if (!x || (size_t)(x - s) >= sizeof(width))
		return -1;
	memcpy(width, s, (size_t)(x - s));
	width[x - s] = '\0';
	if (cli_parse_u64(width, 1, 65535, &a) < 0 || cli_parse_u64(x + 1, 1, 65535, &b) < 0)
		return -1;
	*w = (uint32_t)a;
	*h = (uint32_t)b;
	return 0;
}

int main(int argc, char **argv)
{
	enum mode mode = MODE_STATUS;
	/* Static: the --fields list stays reachable when a usage error returns early. */
	static struct plan_opts po = {
		.fo = { .size = sizeof(po.fo), .ahead = DEFAULT_AHEAD },
		.fr = { .threads = DEFAULT_THREADS },
	};
	const char *emit_format = NULL, *frames_opt = NULL, *video_opt = NULL, *image_opt = NULL;
	int stride_set = 0, fps_set = 0, any_url = 0;
	int json = 0, emit = 0, ahead_set = 0, policy_set = 0, ratio_set = 0, c, ret;
	/* The modes given, one bit each: one given twice is still one mode. */
	unsigned modes = 0;
	/* --alpha: -1 not given, else enum slab_image_alpha, or ALPHA_KEEP */
	int alpha = -1, background_set = 0;
	const char *alpha_arg = NULL;
	uint64_t v;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	slab_image_spec_init(&po.fr.spec, 224, 224);
	po.fr.spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	slab_video_spec_init(&po.fr.vspec, 224, 224, 16);
	while ((c = getopt_long(argc, argv, "hj:qvV", longopts, NULL)) != -1) {
		if (!frames_opt)
			frames_opt = frames_option(c);
		if (!video_opt)
			video_opt = video_option(c);
		if (!image_opt)
			image_opt = image_option(c);
		switch (c) {
		case OPT_AHEAD:
			if (cli_parse_u64(optarg, 1, UINT32_MAX, &v) < 0)
				return cli_usage_error("invalid --ahead '%s' (a number of pages, 1 to 4294967295)",
						       optarg);
			po.fo.ahead = v;
			ahead_set = 1;
			break;
		case OPT_ALPHA:
			if (strcmp(optarg, "drop") == 0)
				alpha = SLAB_IMAGE_ALPHA_DROP;
			else if (strcmp(optarg, "composite") == 0)
				alpha = SLAB_IMAGE_ALPHA_COMPOSITE;
			else if (strcmp(optarg, "keep") == 0)
				alpha = ALPHA_KEEP;
			else
				return cli_usage_error("invalid --alpha '%s' (drop, composite or keep)",
						       optarg);
			alpha_arg = optarg;
			break;
		case OPT_BACKGROUND:
			if (cli_parse_rgb(optarg, po.fr.spec.background) < 0)
				return cli_usage_error("invalid --background '%s' (R,G,B, each from 0 to 255)",
						       optarg);
			background_set = 1;
			break;
		case OPT_CENTER_RATIO:
			if (parse_ratio(optarg, &po.fr.spec.center_ratio) < 0)
				return cli_usage_error("invalid --center-ratio '%s' (a number, 0 < R <= 1)",
						       optarg);
			ratio_set = 1;
			break;
		case OPT_CHANNELS:
			if (strcmp(optarg, "1") && strcmp(optarg, "3") && strcmp(optarg, "4"))
				return cli_usage_error("invalid --channels '%s' (1 grey, 3 RGB or 4 RGBA)",
						       optarg);
			po.fr.spec.channels = (unsigned)(*optarg - '0');
			break;
		case OPT_CHW:
			po.fr.spec.chw = 1;
			break;
		case OPT_CLIP_START:
			if (strcmp(optarg, "random") == 0)
				po.fr.vspec.start = SLAB_VIDEO_START_RANDOM;
			else if (strcmp(optarg, "center") == 0)
				po.fr.vspec.start = SLAB_VIDEO_START_CENTER;
			else if (strcmp(optarg, "begin") == 0)
				po.fr.vspec.start = SLAB_VIDEO_START_BEGIN;
			else
				return cli_usage_error("invalid --clip-start '%s' (random, center or begin)",
						       optarg);
			break;
		case OPT_CROP:
			if (strcmp(optarg, "random-resized") == 0)
				po.fr.spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
			else if (strcmp(optarg, "center") == 0)
				po.fr.spec.crop = SLAB_IMAGE_CROP_CENTER;
			else if (strcmp(optarg, "none") == 0)
				po.fr.spec.crop = SLAB_IMAGE_CROP_NONE;
			else
				return cli_usage_error("invalid --crop '%s' (random-resized, center or none)",
						       optarg);
			break;
		case OPT_DIRECT:
			po.fo.direct = 1;
			break;
		case OPT_EMIT:
			emit = 1;
			break;
		case OPT_EMIT_FORMAT:
			if (strcmp(optarg, "tar") && strcmp(optarg, "raw") && strcmp(optarg, "frames"))
				return cli_usage_error("invalid --emit-format '%s' (tar, raw or frames)", optarg);
			emit_format = optarg;
			break;
		case OPT_EPOCH:
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &po.fr.epoch) < 0)
				return cli_usage_error("invalid --epoch '%s' (a number from 0)", optarg);
			po.fr.epoch_set = 1;
			break;
		case OPT_EVICT:
			mode = MODE_EVICT;
			modes |= 1u << MODE_EVICT;
			break;
		case OPT_FIELDS:
			if ((c = cli_fields_option(optarg, &po.fr.fields, &po.fr.nfields)) != 0)
				return c;
			break;
		case OPT_FLIP:
			po.fr.spec.flip = 1;
			break;
		case OPT_FPS:
			if (parse_fps(optarg, &po.fr.vspec.fps) < 0)
				return cli_usage_error("invalid --fps '%s' (a number, 0.000001 <= F <= 1000000)", optarg);
			fps_set = 1;
			break;
		case OPT_FRAMES:
			if (cli_parse_u64(optarg, 1, 65535, &v) < 0)
				return cli_usage_error("invalid --frames '%s' (a number from 1 to 65535)", optarg);
			po.fr.vspec.frames = (unsigned)v;
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		case OPT_IMAGE:
			if (!*optarg)
				return cli_usage_error("invalid --image '' (the name of an image field, such as jpg)");
			if (po.fr.video)
				return cli_usage_error("--image and --video exclude each other");
			po.fr.image = optarg;
			break;
		case OPT_VIDEO:
			if (!*optarg)
				return cli_usage_error("invalid --video '' (the name of a video field, such as mp4)");
			if (po.fr.image && !po.fr.video)
				return cli_usage_error("--image and --video exclude each other");
			po.fr.image = optarg;
			po.fr.video = 1;
			break;
		case 'j':
			if (cli_parse_u64(optarg, 1, MAX_THREADS, &v) < 0)
				return cli_usage_error("invalid --threads '%s' (a number from 1 to %d)", optarg,
						       MAX_THREADS);
			po.fr.threads = (unsigned)v;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_MAX_PIXELS:
			/* pack's spelling; 0 in the loader's options is the default */
			if (strcmp(optarg, "none") == 0)
				po.fr.max_pixels = UINT64_MAX;
			else if (cli_parse_u64(optarg, 1, UINT64_MAX - 1, &po.fr.max_pixels) < 0)
				return cli_usage_error("invalid --max-pixels '%s' (a number from 1, or none)", optarg);
			break;
		case OPT_ON_ERROR:
			if (strcmp(optarg, "skip") == 0)
				po.fr.skip = 1;
			else if (strcmp(optarg, "fail") == 0)
				po.fr.skip = 0;
			else
				return cli_usage_error("invalid --on-error '%s' (fail or skip)", optarg);
			break;
		case OPT_ON_SHORT:
			if (strcmp(optarg, "pad") == 0)
				po.fr.vspec.on_short = SLAB_VIDEO_SHORT_PAD;
			else if (strcmp(optarg, "loop") == 0)
				po.fr.vspec.on_short = SLAB_VIDEO_SHORT_LOOP;
			else if (strcmp(optarg, "error") == 0)
				po.fr.vspec.on_short = SLAB_VIDEO_SHORT_ERROR;
			else
				return cli_usage_error("invalid --on-short '%s' (pad, loop or error)", optarg);
			break;
		case OPT_PLAN:
			if (po.nplans == MAX_PLANS)
				return cli_usage_error("more than %d --plan", MAX_PLANS);
			po.nplans++;
			mode = MODE_PLAN;
			modes |= 1u << MODE_PLAN;
			po.plan_paths[po.nplans - 1] = optarg;
			break;
		case OPT_MEMORY:
			if (cli_parse_size(optarg, &po.fo.memory) < 0 || po.fo.memory == 0)
				return cli_usage_error("invalid --memory '%s' (a size such as 4G, more than 0)",
						       optarg);
			break;
		case OPT_DISK:
			if (cli_parse_size(optarg, &po.fo.disk) < 0 || po.fo.disk == 0)
				return cli_usage_error("invalid --disk '%s' (a size such as 40G, more than 0)",
						       optarg);
			break;
		case OPT_CACHE_POLICY:
			if (strcmp(optarg, "belady") == 0)
				po.fo.policy = SLAB_CACHE_BELADY;
			else if (strcmp(optarg, "fixed") == 0)
				po.fo.policy = SLAB_CACHE_FIXED;
			else
				return cli_usage_error("invalid --cache-policy '%s' (belady or fixed)", optarg);
			policy_set = 1;
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case OPT_RELEASE:
			po.fo.release = 1;
			break;
		case OPT_RESIZE:
			if (strcmp(optarg, "bilinear") == 0)
				po.fr.spec.resize = SLAB_IMAGE_RESIZE_BILINEAR;
			else if (strcmp(optarg, "nearest") == 0)
				po.fr.spec.resize = SLAB_IMAGE_RESIZE_NEAREST;
			else
				return cli_usage_error("invalid --resize '%s' (bilinear or nearest)", optarg);
			break;
		case OPT_SEED:
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &po.fr.seed) < 0)
				return cli_usage_error("invalid --seed '%s' (a number from 0)", optarg);
			po.fr.seed_set = 1;
			break;
		case OPT_SIZE:
			if (parse_size(optarg, &po.fr.spec.out_w, &po.fr.spec.out_h) < 0)
				return cli_usage_error("invalid --size '%s' (WxH, each from 1 to 65535)", optarg);
			break;
		case OPT_STATUS:
			mode = MODE_STATUS;
			modes |= 1u << MODE_STATUS;
			break;
		case OPT_STRIDE:
			if (cli_parse_u64(optarg, 1, 65535, &v) < 0)
				return cli_usage_error("invalid --stride '%s' (a number from 1 to 65535)", optarg);
			po.fr.vspec.stride = (unsigned)v;
			stride_set = 1;
			break;
		case 'v':
			cli_verbosity = 2;
			break;
		case 'V':
			return cli_version();
		case OPT_WARM:
			mode = MODE_WARM;
			modes |= 1u << MODE_WARM;
			break;
		default:
			if ((c = cli_remote_option(c, optarg)) == 1)
				break;
			return c ? c : cli_try_help();
		}
	}
	if (modes & (modes - 1))
		return cli_usage_error("--status, --warm, --evict and --plan exclude each other");
	if (optind == argc)
		return cli_usage_error("no input file");
	if (emit && mode != MODE_PLAN)
		return cli_usage_error("--emit goes with --plan");
	if (emit_format && !emit)
		return cli_usage_error("--emit-format goes with --emit");
	if (emit_format && strcmp(emit_format, "frames") == 0) {
		if (!po.fr.image)
			return cli_usage_error("--emit-format frames needs --image FIELD (the image field, such as jpg) or --video FIELD");
		if (video_opt && !po.fr.video)
			return cli_usage_error("%s goes with --video", video_opt);
		if (image_opt && po.fr.video)
			return cli_usage_error("%s goes with --image (clips are RGB)", image_opt);
		if (stride_set && fps_set)
			return cli_usage_error("--stride and --fps exclude each other");
		if (po.fo.direct)
			return cli_usage_error("--direct does not go with --emit-format frames");
		if (ratio_set && po.fr.spec.crop != SLAB_IMAGE_CROP_CENTER)
			return cli_usage_error("--center-ratio goes with --crop center");
		if ((c = image_channels(&po.fr.spec, alpha, alpha_arg, background_set)) != 0)
			return c;
		po.fr.vspec.image = po.fr.spec;
		for (size_t a = 0; a < po.fr.nfields; a++)
			for (size_t b = a + 1; b < po.fr.nfields; b++)
				if (strcmp(po.fr.fields[a], po.fr.fields[b]) == 0)
					return cli_usage_error("invalid --fields list: '%s' given twice",
							       po.fr.fields[a]);
	} else if (frames_opt) {
		return cli_usage_error("%s goes with --emit-format frames", frames_opt);
	}
	if (po.fo.direct && mode != MODE_PLAN)
		return cli_usage_error("--direct goes with --plan");
	for (int i = optind; i < argc && !any_url; i++)
		any_url = slab_is_url(argv[i]);
	/* Over a network the window is the requests in flight: several per connection keep
	 * the link busy while the answers to the last ones cross it (16 pages on 16
	 * connections left it idle a round trip in every burst: 0.85x of a 50 ms link's rate,
	 * 64 pages 0.97x; scripts/bench/remote). */
	if (!ahead_set && any_url)
		po.fo.ahead = 4u * (cli_remote.connections ? cli_remote.connections : 16u);
	if ((ahead_set || po.fo.release) && mode != MODE_PLAN)
		return cli_usage_error("--ahead and --release go with --plan");
	if (json && mode != MODE_STATUS)
		return cli_usage_error("--json goes with --status");
	if (emit && isatty(STDOUT_FILENO))
		return cli_usage_error("refusing to write samples to a terminal (redirect it)");
	if (policy_set && !po.fo.memory && !po.fo.disk)
		return cli_usage_error("--cache-policy goes with --memory or --disk");
	if (po.fo.memory && mode != MODE_PLAN)
		return cli_usage_error("--memory goes with --plan");
	if (po.fo.disk && mode != MODE_PLAN)
		return cli_usage_error("--disk goes with --plan");
	if (po.fo.disk && po.fo.memory)
		return cli_usage_error("--disk and --memory exclude each other");
	/* It budgets the local cache of files at URLs: over local files alone it would keep
	 * nothing within anything, and say it did. */
	if (po.fo.disk && !any_url)
		return cli_usage_error("--disk goes with files at URLs (it budgets their local cache)");
	if (po.fo.memory && po.fo.direct)
		return cli_usage_error("--memory does not go with --direct (which bypasses the page cache)");
	if (po.nplans > 1 && po.fo.direct)
		return cli_usage_error("--direct takes one --plan");
	for (size_t k = 0; k < po.nplans; k++) {
		if (strcmp(po.plan_paths[k], "-") == 0 && po.nplans > 1)
			return cli_usage_error("--plan - (standard input) goes alone");
		if (strcmp(po.plan_paths[k], "-") == 0 && isatty(STDIN_FILENO))
			return cli_usage_error("--plan - reads the plan from standard input, which is a terminal");
	}
	if (mode == MODE_PLAN && (uint64_t)(argc - optind) > UINT32_MAX)
		return cli_usage_error("too many files");
	if (cli_check_mapped_inputs(argv + optind, argc - optind) < 0)
		return SLAB_EXIT_USAGE;
	if (cli_check_output(NULL, argv + optind, argc - optind) < 0 ||
	    (mode == MODE_PLAN && cli_check_output(NULL, (char **)po.plan_paths, (int)po.nplans) < 0))
		return SLAB_EXIT_FAIL;
	if (emit && emit_format && strcmp(emit_format, "raw") == 0)
		po.emit = EMIT_RAW;
	else if (emit && emit_format && strcmp(emit_format, "frames") == 0)
		po.emit = EMIT_FRAMES;
	else if (emit)
		po.emit = EMIT_TAR;

	switch (mode) {
	case MODE_WARM:
		ret = warm(argv + optind, argc - optind);
		break;
	case MODE_EVICT:
		ret = evict(argv + optind, argc - optind);
		break;
	case MODE_PLAN:
		if (po.emit == EMIT_FRAMES)
			ret = emit_frames(argv + optind, argc - optind, &po);
		else
			ret = follow_plan(argv + optind, argc - optind, &po);
		break;
	case MODE_STATUS:
	default:
		ret = status(argv + optind, argc - optind, json);
		break;
	}
	if (cli_close_stdout() < 0)
		ret = SLAB_EXIT_FAIL;
	for (size_t k = 0; k < po.fr.nfields; k++)
		free(po.fr.fields[k]);
	free(po.fr.fields);
	return ret;
}
