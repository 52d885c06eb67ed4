/* pack: tar / WebDataset shards (plain or compressed, files or a pipe) -> one .slab file.
 * Reads samples in order, records what their videos hold, records, checks or re-encodes
 * their images (JPEG, PNG, WebP) on
 * --jobs threads, and writes them in input order so the output is the same whatever the
 * thread count. */
#include "cli.h"
#include "errfmt.h"
#include "format.h"
#include "imgpack.h"
#include "slab.h"
#include "tarin.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: pack [OPTIONS] -o OUTPUT [INPUT...]\n";

static const char help_text[] =
"Pack tar / WebDataset shards into one page-aligned .slab file.\n"
"\n"
"INPUT is a tar archive, plain or compressed with gzip, bzip2, xz, zstd or lz4\n"
"(detected from its bytes); '-' or no INPUT reads standard input. Several inputs\n"
"make one dataset, in the order given. OUTPUT '-' writes to standard output.\n"
"\n"
"Options:\n"
"  -o, --output FILE          write the .slab here (required); a file appears\n"
"                             only when complete; a URL (s3://BUCKET/KEY,\n"
"                             http(s)://...) is uploaded as it is written, the\n"
"                             object appearing only when complete\n"
"      --page-size SIZE       a power of two from 4K to 1G (default 2M)\n"
"      --fields LIST          keep only these fields\n"
"                             (comma-separated, e.g. jpg,cls)\n"
"      --max-sample-size SIZE refuse samples larger than SIZE (default 1G)\n"
"      --on-error=MODE        fail (default): a bad sample stops the pack;\n"
"                             skip: warn, drop the sample and go on\n"
"      --image-check          decode every image (JPEG, PNG, WebP) fully, and\n"
"                             every frame of every video; a corrupt one is a\n"
"                             bad sample (alias: --jpeg-check)\n"
"      --image-max-side N     re-encode images whose longer side exceeds N\n"
"                             pixels, each in its own format\n"
"                             (alias: --jpeg-max-side)\n"
"      --jpeg-quality Q       quality of re-encoded JPEGs, 1-100 (default 90)\n"
"      --webp-quality Q       quality of re-encoded lossy WebPs, 1-100\n"
"                             (default 90)\n"
"      --jpeg-restart[=N]     give JPEGs restart markers without loss, at most N\n"
"                             MCUs apart (default 4; the intervals tiling each\n"
"                             row), or =rows: every MCU row, so that a crop\n"
"                             decodes only its part\n"
"      --max-pixels N         an image of more than N pixels (width x height) is\n"
"                             a bad sample (default 178956970; none: no limit)\n"
"  -j, --jobs N               threads for image work (default: online CPUs)\n"
"      --memory SIZE          bytes of samples in flight at once (default 1G); a\n"
"                             larger sample goes through alone\n"
"  -q, --quiet                no summary, only errors\n"
"  -v, --verbose              say more (a line per input, the bytes in flight)\n"
"  -h, --help                 show this help and exit\n"
"  -V, --version              show the version and exit\n"
CLI_REMOTE_HELP"\n"
"SIZE takes K, M, G suffixes (binary). Exit status: 0 packed, 1 failed (nothing\n"
"is left under OUTPUT), 2 usage error. See pack(1) and slab(5).\n";

/* --jpeg-restart alone: intervals of at most 4 MCUs tiling each row. A marker every row
 * saves only the rows above a crop (1.11x images/s in scripts/bench/limit-restart); 4 also
 * saves the columns beside it (1.42x) for 2.6% more bytes. */
#define JPEG_RESTART_DEFAULT 4u

enum {
	OPT_PAGE_SIZE = CHAR_MAX + 1,
	OPT_FIELDS,
	OPT_MAX_SAMPLE,
	OPT_ON_ERROR,
	OPT_IMAGE_CHECK,
	OPT_IMAGE_MAX_SIDE,
	OPT_JPEG_MAX_SIDE,
	OPT_JPEG_QUALITY,
	OPT_JPEG_RESTART,
	OPT_MAX_PIXELS,
	OPT_MEMORY,
	OPT_WEBP_QUALITY,
};

static const struct option longopts[] = {
	{ "fields",          required_argument, NULL, OPT_FIELDS },
	{ "help",            no_argument,       NULL, 'h' },
	{ "image-check",     no_argument,       NULL, OPT_IMAGE_CHECK },
	{ "image-max-side",  required_argument, NULL, OPT_IMAGE_MAX_SIDE },
	{ "jobs",            required_argument, NULL, 'j' },
	{ "jpeg-check",      no_argument,       NULL, OPT_IMAGE_CHECK },      /* aliases */
	{ "jpeg-max-side",   required_argument, NULL, OPT_JPEG_MAX_SIDE },
	{ "jpeg-quality",    required_argument, NULL, OPT_JPEG_QUALITY },
	{ "jpeg-restart",    optional_argument, NULL, OPT_JPEG_RESTART },
	{ "max-pixels",      required_argument, NULL, OPT_MAX_PIXELS },
	{ "max-sample-size", required_argument, NULL, OPT_MAX_SAMPLE },
	{ "memory",          required_argument, NULL, OPT_MEMORY },
	{ "on-error",        required_argument, NULL, OPT_ON_ERROR },
	{ "output",          required_argument, NULL, 'o' },
	{ "page-size",       required_argument, NULL, OPT_PAGE_SIZE },
	{ "quiet",           no_argument,       NULL, 'q' },
	{ "verbose",         no_argument,       NULL, 'v' },
	{ "version",         no_argument,       NULL, 'V' },
	CLI_REMOTE_LONGOPTS,
	{ "webp-quality",    required_argument, NULL, OPT_WEBP_QUALITY },
	{ NULL, 0, NULL, 0 }
};

struct opts {
	const char *output;
	uint64_t page_size, max_sample;
	char **keep;
	size_t nkeep;
	int skip_bad, image_check, jpeg_quality, jpeg_quality_set, webp_quality, webp_quality_set;
	unsigned image_max_side;
	int jpeg_restart;
	unsigned jpeg_restart_most;     /* 0: every MCU row */
	uint64_t max_pixels;            /* UINT64_MAX: none */
	unsigned jobs;
	uint64_t memory;                /* bytes of samples in flight; not recorded: no effect
					 * on the output */
};

/* ---- per-sample work: image checks and re-encoding, on worker threads -------------------- */

struct job {
	struct slab_tarin_sample *s;
	const char *input;
	struct slab_writer_field *fin;
	struct slab_video_info *video;  /* per field: what a video field holds */
	const struct slab_video_info **vptr;    /* per field: &video[i] for a video, else NULL */
	void **owned;                   /* re-encoded buffers */
	int bad;
	char reason[512];
	int done;
	uint64_t bytes;                 /* counted in flight: the sample's buffer, then also... */
	uint64_t made;                  /* ...the re-encoded images process() made */
	char *note;                     /* not a sample: a message about an input, said in its
					 * turn (say()) */
};

static void job_clear(struct job *jb)
{
	if (jb->s && jb->owned)
		for (size_t i = 0; i < jb->s->nfields; i++)
			free(jb->owned[i]);
	free(jb->owned);
	free(jb->fin);
	free(jb->video);
	free(jb->vptr);
	free(jb->note);
	slab_tarin_sample_free(jb->s);
	memset(jb, 0, sizeof(*jb));
}

static void process(struct job *jb, struct slab_imgpack *ip)
{
	struct slab_tarin_sample *s = jb->s;

	if (s->bad) {
		jb->bad = 1;
		snprintf(jb->reason, sizeof(jb->reason), "%s", slab_tarin_sample_error(s));
		return;
	}
	jb->fin = calloc(s->nfields ? s->nfields : 1, sizeof(*jb->fin));
	jb->owned = calloc(s->nfields ? s->nfields : 1, sizeof(*jb->owned));
	jb->video = calloc(s->nfields ? s->nfields : 1, sizeof(*jb->video));
	jb->vptr = calloc(s->nfields ? s->nfields : 1, sizeof(*jb->vptr));
	if (!jb->fin || !jb->owned || !jb->video || !jb->vptr) {
		jb->bad = -1;
		snprintf(jb->reason, sizeof(jb->reason), "out of memory");
		return;
	}
	for (size_t i = 0; i < s->nfields; i++) {
		struct slab_writer_field *f = &jb->fin[i];
		struct slab_imgpack_result res;
		int r;

		f->name = s->fields[i].name;
		f->data = s->data + s->fields[i].offset;
		f->size = s->fields[i].size;
		r = slab_imgpack_field(ip, f->name, f->data, (size_t)f->size, &res);
		if (r < 0) {
			/* Out of memory is not the sample's fault: never a bad sample, which
			 * --on-error=skip would drop. */
			jb->bad = r == SLAB_ERR_NOMEM ? -1 : 1;
			snprintf(jb->reason, sizeof(jb->reason), "sample '%.200s' field '%.100s': %s",
				 s->key, f->name, slab_imgpack_error(ip));
			return;
		}
		if (res.flags & (SLAB_FIELD_TRANSCODED | SLAB_FIELD_RESTART)) {
			jb->owned[i] = res.data;
			jb->made += res.size;
			f->data = res.data;
			f->size = res.size;
		}
		f->flags = res.flags;
		f->width = res.width;
		f->height = res.height;
		f->subsamp = res.subsamp;
		f->colorspace = res.colorspace;
		if (res.flags & SLAB_FIELD_VIDEO) {
			jb->video[i] = res.video;
			jb->vptr[i] = &jb->video[i];
		}
	}
}

/*
 * Bytes in flight: the buffers of the samples read and not yet written (the one being read
 * included) and the images re-encoded for them. Before the sample being read grows, the
 * reader writes finished samples, oldest first, until the total fits the --memory budget or
 * nothing else is in flight: so the total stays within the budget, or within the one sample
 * larger than it. Re-encoded images count once made, which can pass the budget by those of
 * the samples in flight. Decoders' scratch memory is per thread and not counted.
 */
struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int threaded;                           /* mu and the conditions are in use */
	struct job *ring;
	uint64_t cap, head, claim, tail;        /* head <= claim <= tail */
	int stop;
	const struct opts *o;
	struct run *run;
	uint64_t budget;                        /* --memory */
	uint64_t bytes;                         /* of the jobs in the ring */
	uint64_t reading;                       /* of the sample being read */
	uint64_t peak;                          /* the most bytes + reading has been */
};

static void note_peak(struct pool *p)
{
	if (p->bytes + p->reading > p->peak)
		p->peak = p->bytes + p->reading;
}

/* An image context with the pack's options, or NULL when out of memory. */
static struct slab_imgpack *new_imgpack(const struct opts *o)
{
	struct slab_imgpack_options io = {
		.max_pixels = o->max_pixels,
		.check = o->image_check,
		.max_side = o->image_max_side,
		.jpeg_quality = o->jpeg_quality,
		.webp_quality = o->webp_quality,
		.jpeg_restart = o->jpeg_restart,
		.jpeg_restart_most = o->jpeg_restart_most,
	};

	return slab_imgpack_new(&io);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct slab_imgpack *ip = new_imgpack(p->o);

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct job *jb;
		while (p->claim == p->tail && !p->stop)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->claim == p->tail)
			break;
		jb = &p->ring[p->claim++ % p->cap];
		pthread_mutex_unlock(&p->mu);
		if (jb->note) {
			/* Nothing to do but be said in turn. */
		} else if (ip) {
			process(jb, ip);
		} else {
			jb->bad = -1;
			snprintf(jb->reason, sizeof(jb->reason), "out of memory");
		}
		pthread_mutex_lock(&p->mu);
		jb->done = 1;
		jb->bytes += jb->made;
		p->bytes += jb->made;
		note_peak(p);
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	slab_imgpack_free(ip);
	return NULL;
}

/* ---- the pack itself -------------------------------------------------------------------- */

struct run {
	const struct opts *o;
	struct slab_writer *w;
	const char *outname;
	uint64_t bad_samples;
	uint64_t data_in;
	unsigned char *kept;            /* per --fields name: some sample written has it */
	double start, last_progress;
	int progress;
};

static void show_progress(struct run *r, int force)
{
	struct slab_writer_stats st;
	double now = cli_now(), secs;
	char hs[32];

	if (!r->progress || (!force && now - r->last_progress < 0.25))
		return;
	r->last_progress = now;
	slab_writer_stats(r->w, &st);
	secs = now - r->start;
	fprintf(stderr, "\r%s: %llu %s, %s, %.1f MB/s   ", cli_progname(),
		(unsigned long long)st.samples, slab_plural(st.samples, "sample", "samples"),
		cli_human_size(st.data_bytes, hs, sizeof(hs)),
		secs > 0 ? (double)st.data_bytes / 1e6 / secs : 0.0);
	cli_progress_shown();
}
/* A failed call of the writer (errno as it left it): said, unless the reader of -o - has
 * gone away (EPIPE): then pack ends as it did when the write itself raised SIGPIPE, quietly,
 * by that signal (unless SIGPIPE is ignored: then it is the error it says). */
static void writer_failed(struct slab_writer *w)
{
	if (errno == EPIPE)
		raise(SIGPIPE);
	cli_error("%s", slab_writer_error(w));
}


/* Write a processed sample. 0, or -1 when the pack must stop. */
static int emit(struct run *r, struct job *jb)
{
	struct slab_tarin_sample *s = jb->s;
	int rc;

	if (jb->note) {
		cli_error("%s", jb->note);
		return 0;
	}
	if (jb->bad < 0) {
		cli_error("'%s': %s", jb->input, jb->reason);
		return -1;
	}
	if (jb->bad) {
		if (!r->o->skip_bad) {
			cli_error("'%s': %s", jb->input, jb->reason);
			return -1;
		}
		cli_warn("'%s': skipping: %s", jb->input, jb->reason);
		r->bad_samples++;
		return 0;
	}
	rc = slab_writer_add_ex(r->w, s->key, s->key_len, jb->fin, s->nfields, jb->vptr);
	if (rc == SLAB_ERR_DUPKEY || rc == SLAB_ERR_DUPFIELD) {
		if (!r->o->skip_bad) {
			cli_error("'%s': %s", jb->input, slab_writer_error(r->w));
			return -1;
		}
		cli_warn("'%s': skipping: %s", jb->input, slab_writer_error(r->w));
		r->bad_samples++;
		return 0;
	}
	if (rc < 0) {
		writer_failed(r->w);
		return -1;
	}
	for (size_t k = 0; k < r->o->nkeep; k++)
		for (size_t i = 0; !r->kept[k] && i < s->nfields; i++)
			r->kept[k] = strcmp(jb->fin[i].name, r->o->keep[k]) == 0;
	show_progress(r, 0);
	return 0;
}

/* With p->mu held: wait for the oldest job, write it, free its slot. */
static int write_head(struct pool *p, struct run *r)
{
	struct job *jb = &p->ring[p->head % p->cap];
	uint64_t bytes;
	int rc;

	while (!jb->done)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
	rc = emit(r, jb);
	bytes = jb->bytes;
	job_clear(jb);
	pthread_mutex_lock(&p->mu);
	p->bytes -= bytes;
	p->head++;
	return rc;
}

/* tarin's grow hook, on the reading thread: the sample being read holds `held` bytes and
 * wants `more`. See struct pool. 0, or -1 when writing a sample failed (emit() said why). */
static int make_room(uint64_t held, uint64_t more, void *arg)
{
	struct pool *p = arg;
	int rc = 0;

	if (p->threaded)
		pthread_mutex_lock(&p->mu);
	while (p->bytes + held + more > p->budget && p->head < p->tail)
		if ((rc = write_head(p, p->run)) < 0)
			break;
	if (rc == 0) {
		p->reading = held + more;
		note_peak(p);
	}
	if (p->threaded)
		pthread_mutex_unlock(&p->mu);
	return rc < 0 ? -1 : 0;
}

/* Write what is still in flight, in order. 0, or -1 when writing a sample failed (emit()
 * said why). Before a reader's error too: without threads every sample read before it was
 * written first, and a bad one among them stopped the pack with its own message (or, skipped,
 * was warned of); the read-ahead must not make the messages depend on the threads' timing. */
static int drain(struct pool *p, struct run *r)
{
	int rc = 0;

	if (!p->threaded)
		return 0;
	pthread_mutex_lock(&p->mu);
	while (p->head < p->tail)
		if ((rc = write_head(p, r)) < 0)
			break;
	pthread_mutex_unlock(&p->mu);
	return rc < 0 ? -1 : 0;
}

/* With p->mu held: a free slot at the tail of the ring, once the finished jobs at its head
 * are written (all of them, so that the writing keeps up). NULL when writing one failed. */
static struct job *next_slot(struct pool *p, struct run *r)
{
	while (p->tail - p->head == p->cap || (p->head < p->tail && p->ring[p->head % p->cap].done))
		if (write_head(p, r) < 0)
			return NULL;
	return &p->ring[p->tail % p->cap];
}

/* A message about an input (a warning, a -v line): said after the samples read before it,
 * as without threads, so that the messages come in the same order whatever -j. 0, or -1
 * when writing a sample failed (emit() said why). */
static int say(struct pool *p, struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int say(struct pool *p, struct run *r, const char *fmt, ...)
{
	struct job *jb;
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		cli_error("out of memory");
		return -1;
	}
	if (!p->threaded) {
		cli_error("%s", text);
		free(text);
		return 0;
	}
	pthread_mutex_lock(&p->mu);
	jb = next_slot(p, r);
	if (jb) {
		jb->note = text;
		p->tail++;
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
	if (!jb)
		free(text);
	return jb ? 0 : -1;
}

/* Decoding or encoding to do: worth threads. (Without, each image's header is read on the
 * reading thread, as cheap as the copy.) */
static int image_work(const struct opts *o)
{
	return o->image_check || o->image_max_side || o->jpeg_restart;
}

/* Read every input, process and write. 0 or -1. */
static int pack_inputs(struct run *r, char **inputs, int ninputs, struct slab_tarin_stats *tot)
{
	const struct opts *o = r->o;
	struct pool p;
	pthread_t *threads = NULL;
	unsigned nthreads = image_work(o) && o->jobs > 1 ? o->jobs : 0, started = 0;
	struct slab_imgpack *ip = NULL;
	int ret = -1, e;
	struct slab_tarin_options to = {
		.max_sample_size = o->max_sample,
		.keep = (const char *const *)o->keep,
		.nkeep = o->nkeep,
		.grow = make_room,
		.grow_arg = &p,
	};
	char h1[32], h2[32];

	memset(&p, 0, sizeof(p));
	memset(tot, 0, sizeof(*tot));
	p.o = o;
	p.run = r;
	p.budget = o->memory;
	p.cap = nthreads ? 4 * (uint64_t)nthreads : 1;
	p.ring = calloc(p.cap, sizeof(*p.ring));
	ip = new_imgpack(o);
	if (!p.ring || !ip) {
		cli_error("out of memory");
		goto out;
	}
	/* The lock and the threads only with threads; the out: path undoes just what was
	 * done. */
	if (nthreads) {
		threads = calloc(nthreads, sizeof(*threads));
		if (!threads) {
			cli_error("out of memory");
			goto out;
		}
		pthread_mutex_init(&p.mu, NULL);
		pthread_cond_init(&p.work, NULL);
		pthread_cond_init(&p.done, NULL);
		p.threaded = 1;
		for (; started < nthreads; started++)
			if ((e = pthread_create(&threads[started], NULL, worker, &p)) != 0) {
				cli_error("cannot start a thread: %s", strerror(e));
				goto out;
			}
	}

	for (int k = 0; k < (ninputs ? ninputs : 1); k++) {
		const char *path = ninputs ? inputs[k] : "-";
		const char *label = slab_input_shown(path);
		struct slab_tarin *t = slab_tarin_new();
		struct slab_tarin_stats st;
		int rc;

		if (!t) {
			cli_error("out of memory");
			goto out;
		}
		if (cli_verbosity >= 2 && say(&p, r, "reading '%s'", label) < 0) {
			slab_tarin_free(t);
			goto out;
		}
		if (slab_tarin_open(t, path, &to) < 0) {
			if (drain(&p, r) == 0)
				cli_error("%s", slab_tarin_error(t));
			slab_tarin_free(t);
			goto out;
		}
		for (;;) {
			struct slab_tarin_sample *s;
			struct job *jb;

			rc = slab_tarin_next(t, &s);
			if (rc <= 0)
				break;
			if (!nthreads) {
				struct job one = { .s = s, .input = label };
				process(&one, ip);
				p.reading = 0;
				p.bytes = s->alloc + one.made;
				note_peak(&p);
				rc = emit(r, &one);
				job_clear(&one);
				p.bytes = 0;
				if (rc < 0)
					break;
				continue;
			}
			pthread_mutex_lock(&p.mu);
			/* Full ring: write finished jobs from the head, in order. */
			if (!(jb = next_slot(&p, r))) {
				pthread_mutex_unlock(&p.mu);
				slab_tarin_sample_free(s);
				rc = -1;
				break;
			}
			jb->s = s;
			jb->input = label;
			jb->bytes = s->alloc;
			p.bytes += s->alloc;
			p.reading = 0;
			p.tail++;
			pthread_cond_signal(&p.work);
			pthread_mutex_unlock(&p.mu);
		}
		if (rc < 0) {
			/* Else emit() said it already. */
			if (*slab_tarin_error(t) && drain(&p, r) == 0)
				cli_error("%s", slab_tarin_error(t));
			slab_tarin_free(t);
			goto out;
		}
		slab_tarin_stats(t, &st);
		if ((*slab_tarin_warning(t) && say(&p, r, "warning: %s", slab_tarin_warning(t)) < 0) ||
		    (cli_verbosity >= 2 &&
		     say(&p, r, "'%s': %llu %s, %s of member data, %s read", label,
			 (unsigned long long)st.members, slab_plural(st.members, "member", "members"),
			 cli_human_size(st.data_bytes, h1, sizeof(h1)),
			 cli_human_size(st.raw_bytes, h2, sizeof(h2))) < 0)) {
			slab_tarin_free(t);
			goto out;
		}
		tot->members += st.members;
		tot->skipped_special += st.skipped_special;
		tot->skipped_names += st.skipped_names;
		tot->skipped_fields += st.skipped_fields;
		tot->raw_bytes += st.raw_bytes;
		tot->data_bytes += st.data_bytes;
		slab_tarin_free(t);
	}

	if (drain(&p, r) < 0)
		goto out;
	cli_info("bytes in flight: at most %llu (%s), --memory %s", (unsigned long long)p.peak,
		 cli_human_size(p.peak, h1, sizeof(h1)), cli_human_size(p.budget, h2, sizeof(h2)));
	ret = 0;
out:
	if (started) {
		pthread_mutex_lock(&p.mu);
		p.stop = 1;
		pthread_cond_broadcast(&p.work);
		pthread_mutex_unlock(&p.mu);
		for (unsigned i = 0; i < started; i++)
			pthread_join(threads[i], NULL);
	}
	if (p.threaded) {
		pthread_mutex_destroy(&p.mu);
		pthread_cond_destroy(&p.work);
		pthread_cond_destroy(&p.done);
	}
	if (p.ring)
		for (uint64_t i = 0; i < p.cap; i++)
			job_clear(&p.ring[i]);
	free(p.ring);
	free(threads);
	slab_imgpack_free(ip);
	return ret;
}

static char *options_text(const struct opts *o)
{
	char *text = NULL, *fields = NULL, pixels[32] = "none", restart[16] = "0";
	size_t len = 0;
	FILE *f = open_memstream(&fields, &len);
	int bad;

	if (!f)
		return NULL;
	for (size_t i = 0; i < o->nkeep; i++)
		fprintf(f, "%s%s", i ? "," : "", o->keep[i]);
	/* A stream that could not grow holds part of the list: no text rather than a wrong one. */
	bad = ferror(f);
	if (fclose(f) != 0 || bad || !fields) {
		free(fields);
		return NULL;
	}
	if (o->max_pixels != UINT64_MAX)
		snprintf(pixels, sizeof(pixels), "%llu", (unsigned long long)o->max_pixels);
	if (o->jpeg_restart && o->jpeg_restart_most)
		snprintf(restart, sizeof(restart), "%u", o->jpeg_restart_most);
	else if (o->jpeg_restart)
		snprintf(restart, sizeof(restart), "rows");
	if (asprintf(&text,
		     "tool=pack %s\n"
		     "page-size=%llu\n"
		     "fields=%s\n"
		     "max-sample-size=%llu\n"
		     "on-error=%s\n"
		     "image-check=%d\n"
		     "image-max-side=%u\n"
		     "jpeg-quality=%d\n"
		     "webp-quality=%d\n"
		     "max-pixels=%s\n"
		     "jpeg-restart=%s\n",
		     SLAB_VERSION_STRING, (unsigned long long)o->page_size, o->nkeep ? fields : "*",
		     (unsigned long long)o->max_sample, o->skip_bad ? "skip" : "fail",
		     o->image_check, o->image_max_side, o->image_max_side ? o->jpeg_quality : 0,
		     o->image_max_side ? o->webp_quality : 0, pixels, restart) < 0)
		text = NULL;
	free(fields);
	return text;
}

static void summary(const struct run *r, const struct slab_tarin_stats *in, double secs)
{
	struct slab_writer_stats st;
	char hd[32], hf[32], hp[32], skip[256] = "";
	double fill;
	int n = 0;

	slab_writer_stats(r->w, &st);
	fill = st.pages ? 100.0 * (double)st.data_bytes / ((double)st.pages * (double)r->o->page_size) : 0;
	if (in->skipped_special)
		n += snprintf(skip + n, sizeof(skip) - (size_t)n, "%s%llu non-file %s", n ? ", " : "",
			      (unsigned long long)in->skipped_special,
			      slab_plural(in->skipped_special, "member", "members"));
	if (in->skipped_names)
		n += snprintf(skip + n, sizeof(skip) - (size_t)n, "%s%llu %s without extension", n ? ", " : "",
			      (unsigned long long)in->skipped_names,
			      slab_plural(in->skipped_names, "name", "names"));
	if (in->skipped_fields)
		n += snprintf(skip + n, sizeof(skip) - (size_t)n, "%s%llu %s of other fields", n ? ", " : "",
			      (unsigned long long)in->skipped_fields,
			      slab_plural(in->skipped_fields, "member", "members"));
	if (r->bad_samples)
		n += snprintf(skip + n, sizeof(skip) - (size_t)n, "%s%llu bad %s", n ? ", " : "",
			      (unsigned long long)r->bad_samples,
			      slab_plural(r->bad_samples, "sample", "samples"));
	cli_error("'%s': %llu %s, %llu %s, %llu %s of %s, fill %.1f%%, %s data, %s file, %.1f MB/s%s%s",
		  r->outname, (unsigned long long)st.samples, slab_plural(st.samples, "sample", "samples"),
		  (unsigned long long)st.fields, slab_plural(st.fields, "field", "fields"),
		  (unsigned long long)st.pages, slab_plural(st.pages, "page", "pages"),
		  cli_human_size(r->o->page_size, hp, sizeof(hp)), fill,
		  cli_human_size(st.data_bytes, hd, sizeof(hd)),
		  cli_human_size(st.file_bytes, hf, sizeof(hf)),
		  secs > 0 ? (double)in->data_bytes / 1e6 / secs : 0.0, n ? "; skipped " : "", skip);
}

int main(int argc, char **argv)
{
	/* Static: the --fields list stays reachable when a usage error returns early. */
	static struct opts o = {
		.page_size = SLAB_DEFAULT_PAGE_SIZE,
		.max_sample = 1ull << 30,
		.memory = 1ull << 30,
		.jpeg_quality = 90,
		.webp_quality = 90,
		.max_pixels = SLAB_IMAGE_MAX_PIXELS,
	};
	struct slab_writer_options wo = { .size = sizeof(wo) };
	struct slab_tarin_stats in;
	struct run r;
	char *opt_text = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct cli_output output = { .fd = -1 };
	int c, ret = SLAB_EXIT_FAIL;
	uint64_t v;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	o.jobs = ncpu > 0 ? (unsigned)ncpu : 1;
	while ((c = getopt_long(argc, argv, "hj:o:qvV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FIELDS:
			if ((c = cli_fields_option(optarg, &o.keep, &o.nkeep)) != 0)
				return c;
			/* The list is recorded as the header's fields= line: a line break in it
			 * would start lines of options that were never given. */
			for (size_t i = 0; i < o.nkeep; i++)
				if (strchr(o.keep[i], '\n'))
					return cli_usage_error("invalid --fields list '%s' (a name with a line break cannot be recorded)",
							       optarg);
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		case 'j':
			if (cli_parse_u64(optarg, 1, 1024, &v) < 0)
				return cli_usage_error("invalid --jobs '%s' (a number from 1 to 1024)", optarg);
			o.jobs = (unsigned)v;
			break;
		case OPT_IMAGE_CHECK:
			o.image_check = 1;
			break;
		case OPT_IMAGE_MAX_SIDE:
		case OPT_JPEG_MAX_SIDE:         /* the alias, named as given */
			if (cli_parse_u64(optarg, 1, 65535, &v) < 0)
				return cli_usage_error("invalid --%s-max-side '%s' (a number from 1 to 65535)",
						       c == OPT_JPEG_MAX_SIDE ? "jpeg" : "image", optarg);
			o.image_max_side = (unsigned)v;
			break;
		case OPT_JPEG_QUALITY:
			if (cli_parse_u64(optarg, 1, 100, &v) < 0)
				return cli_usage_error("invalid --jpeg-quality '%s' (a number from 1 to 100)", optarg);
			o.jpeg_quality = (int)v;
			o.jpeg_quality_set = 1;
			break;
		case OPT_JPEG_RESTART:
			o.jpeg_restart = 1;
			o.jpeg_restart_most = JPEG_RESTART_DEFAULT;
			if (optarg && strcmp(optarg, "rows") == 0)
				o.jpeg_restart_most = 0;
			else if (optarg && cli_parse_u64(optarg, 1, 65535, &v) < 0)
				return cli_usage_error("invalid --jpeg-restart '%s' (rows, or a number from 1 to 65535)",
						       optarg);
			else if (optarg)
				o.jpeg_restart_most = (unsigned)v;
			break;
		case OPT_MEMORY:
			if (cli_parse_size(optarg, &o.memory) < 0 || o.memory == 0)
				return cli_usage_error("invalid --memory '%s' (a size such as 512M, more than 0)", optarg);
			break;
		case OPT_MAX_PIXELS:
			if (strcmp(optarg, "none") == 0)
				o.max_pixels = UINT64_MAX;
			else if (cli_parse_u64(optarg, 1, UINT64_MAX - 1, &o.max_pixels) < 0)
				return cli_usage_error("invalid --max-pixels '%s' (a number from 1, or none)", optarg);
			break;
		case OPT_MAX_SAMPLE:
			if (cli_parse_size(optarg, &o.max_sample) < 0 || o.max_sample == 0)
				return cli_usage_error("invalid --max-sample-size '%s' (a size such as 64M, more than 0)",
						       optarg);
			break;
		case OPT_ON_ERROR:
			if (strcmp(optarg, "skip") == 0)
				o.skip_bad = 1;
			else if (strcmp(optarg, "fail") == 0)
				o.skip_bad = 0;
			else
				return cli_usage_error("invalid --on-error '%s' (fail or skip)", optarg);
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_PAGE_SIZE:
			if (cli_parse_size(optarg, &o.page_size) < 0 || o.page_size < SLAB_MIN_PAGE_SIZE ||
			    o.page_size > SLAB_MAX_PAGE_SIZE || (o.page_size & (o.page_size - 1)))
				return cli_usage_error("invalid --page-size '%s' (a power of two from 4K to 1G)", optarg);
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case 'v':
			cli_verbosity = 2;
			break;
		case 'V':
			return cli_version();
		case OPT_WEBP_QUALITY:
			if (cli_parse_u64(optarg, 1, 100, &v) < 0)
				return cli_usage_error("invalid --webp-quality '%s' (a number from 1 to 100)", optarg);
			o.webp_quality = (int)v;
			o.webp_quality_set = 1;
			break;
		default:
			if ((c = cli_remote_option(c, optarg)) == 1)
				break;
			return c ? c : cli_try_help();
		}
	}
	if (!o.output)
		return cli_usage_error("no output given (use -o FILE, or -o - for standard output)");
	if (!*o.output)
		return cli_usage_error("empty output name (use -o FILE, or -o - for standard output)");
	if (o.jpeg_quality_set && !o.image_max_side)
		return cli_usage_error("--jpeg-quality only applies with --image-max-side");
	if (o.webp_quality_set && !o.image_max_side)
		return cli_usage_error("--webp-quality only applies with --image-max-side");
	if (cli_output_is_terminal(o.output))
		return cli_usage_error("refusing to write a .slab to a terminal (redirect it, or use -o FILE)");
	if (optind == argc && isatty(STDIN_FILENO))
		return cli_usage_error("no input given and standard input is a terminal");
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (strcmp(argv[i], "-") && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			cli_error("'%s': is a directory", argv[i]);
			return SLAB_EXIT_FAIL;
		}
	}
	{
		char *std_in[] = { (char *)"-" };
		if (cli_check_output(o.output, optind < argc ? argv + optind : std_in,
				     optind < argc ? argc - optind : 1) < 0)
			return SLAB_EXIT_FAIL;
	}

	/* TurboJPEG reads these when encoding: the same options must give the same bytes. */
	unsetenv("TJ_OPTIMIZE");
	unsetenv("TJ_ARITHMETIC");
	unsetenv("TJ_RESTART");
	unsetenv("TJ_PROGRESSIVE");
	opt_text = options_text(&o);
	/* Found now rather than when the writer opens the output. */
	if (opt_text && strlen(opt_text) > SLAB_OPTIONS_MAX) {
		ret = cli_usage_error("--fields list too long to record (the options take %zu bytes, the header holds %u)",
				      strlen(opt_text), (unsigned)SLAB_OPTIONS_MAX);
		free(opt_text);
		return ret;
	}
	memset(&r, 0, sizeof(r));
	r.o = &o;
	r.outname = strcmp(o.output, "-") ? cli_shown(o.output) : "(stdout)";
	r.w = slab_writer_new();
	r.kept = calloc(o.nkeep ? o.nkeep : 1, 1);
	if (!opt_text || !r.w || !r.kept) {
		cli_error("out of memory");
		goto out;
	}
	if (cli_output_open(&output, o.output) < 0)
		goto out;
	wo.page_size = o.page_size;
	wo.options = opt_text;
	wo.writeback = 32u << 20;
	if (slab_writer_open(r.w, output.fd, r.outname, &wo) < 0) {
		cli_error("%s", slab_writer_error(r.w));
		goto out;
	}
	r.start = r.last_progress = cli_now();
	r.progress = cli_progress_wanted();
	if (pack_inputs(&r, argv + optind, argc - optind, &in) < 0)
		goto out;
	if (slab_writer_finish(r.w) < 0) {
		writer_failed(r.w);
		goto out;
	}
	if (cli_output_commit(&output) < 0)
		goto out;
	cli_progress_clear();
	/* A name of --fields that no sample had is most likely a typo (jgp for jpg): the
	 * file is right, but not what was meant. */
	for (size_t k = 0; k < o.nkeep; k++)
		if (!r.kept[k])
			cli_warn("warning: --fields '%s': no sample has that field", o.keep[k]);
	if (cli_verbosity >= 1)
		summary(&r, &in, cli_now() - r.start);
	ret = SLAB_EXIT_OK;
out:
	cli_progress_clear();
	cli_output_abort(&output);
	slab_writer_free(r.w);
	free(r.kept);
	free(opt_text);
	for (size_t i = 0; i < o.nkeep; i++)
		free(o.keep[i]);
	free(o.keep);
	return ret;
}
