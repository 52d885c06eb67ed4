/* loader.c: a plan loaded in batches by worker threads into a ring of preallocated slots,
 * handed out in plan order. Workers claim batch numbers in order under one lock, each into
 * any free slot; the consumer waits for the next number. Raw mode is zero-copy (the batch
 * keeps pointers into the mappings, the worker has touched their pages). One more thread
 * walks the plan with a slab_follow to keep the page cache ahead of the workers and, with
 * release, to drop pages behind the consumer. */
#include "crc32c.h"
#include "deadline.h"
#include "error.h"
#include "errfmt.h"
#include "fault.h"
#include "follow.h"
#include "keyset.h"
#include "plan.h"
#include "reader.h"
#include "sized.h"
#include "slab.h"
#include "video.h"

#include <linux/mempolicy.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_THREADS 1024u
#define MAX_RING 4096u
#define MAX_FIELDS 65536u
#define HUGE_SIZE (2u << 20)
/* The transform's output of each sample starts on this boundary. */
#define OUT_ALIGN 64u
#define WHY_SIZE 256u

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_HELD };

struct fref {
	const unsigned char *data;      /* NULL: the sample lacks the field */
	uint64_t size;
};

struct slab_loader_batch {
	struct slab_loader *l;
	enum slot_state state;
	uint64_t number;
	size_t n, skipped;
	int rc;                 /* the batch failed (not skip): the first failure */
	struct slab_err err;    /* its text, or the first skipped sample's */
	void *mem;              /* one mapping: recs, frefs, then the output area */
	size_t memlen;
	struct slab_loader_sample *recs;
	struct fref *frefs;     /* [n][nf] */
	unsigned char *out;
	int64_t *labels;        /* [n], with label_field: on a page of its own after out */
	struct slab_loader_stats st;    /* what filling it took: samples, bytes, images */
};

struct worker {
	struct slab_loader *l;
	pthread_t tid;
	int started;
	/* Readers of their own over the dataset's mappings: a failing call writes its reader's
	 * error text, and these texts are the worker's alone. */
	struct slab **rd;
	struct slab_image_decoder *dec; /* with an image spec: the worker's own decoder */
	struct slab_video_decoder *vdec;        /* with a video spec: its own video decoder */
	unsigned char sink;     /* touched bytes go here */
	int no_populate;        /* MADV_POPULATE_READ failed once: touch pages from then on */
	/* The last sample's failure is not the sample's own (the machine's memory, a file that
	 * cannot be read): it fails the batch even with skip. */
	int fatal;
	int faulted;            /* a read of a mapping faulted: the loader fails */
};

struct slab_loader {
	pid_t pid;              /* the process that opened it: a forked child has no threads */
	int stopped;            /* slab_loader_stop(): threads joined, batches still readable */
	struct slab_dataset *d;
	const struct slab_plan *plan;
	struct slab_loader_options o;
	uint32_t nfiles;
	unsigned nf;
	char **names;
	int *fid;               /* [nfiles][nf]: field id in each file, -1 when it has none */
	int tf;                 /* the transform's field among the wanted ones, -1 for none */
	int lf;                 /* the label field among the wanted ones, -1 for none */
	struct slab_image_spec image;   /* o.image's copy */
	struct slab_video_spec video;   /* o.video's copy */
	size_t out_stride;
	uint64_t nbatches;

	pthread_mutex_t mu;
	pthread_cond_t work_cv;         /* a slot was freed, or stop */
	pthread_cond_t ready_cv;        /* a batch is ready */
	pthread_cond_t walk_cv;         /* the walker's gate moved, or stop */
	int sync_ok;
	int stop;               /* written under mu, atomically: fill() reads it without */
	uint64_t next_claim;    /* the next batch a worker takes */
	uint64_t next_out;      /* the next batch handed out */
	uint64_t released_upto; /* batches [0, released_upto) are all released */
	int failed;             /* sticky error of next() */
	/* A fault reading a file (truncated while mapped): batches filled before it point
	 * into pages that may be gone, so none is handed out after it. */
	int fault_rc;
	struct slab_err fault_err;
	uint64_t skipped;
	struct slab_loader_stats st;    /* of the batches handed out */

	struct slab_loader_batch *slots;
	uint32_t *free_ids, nfree;
	struct worker *w;

	struct slab_follow *walk;
	pthread_t walk_tid;
	int walk_started;
	uint64_t walk_pos;      /* the entry the walker hands out next */
	int walk_rc;
	struct slab_err walk_err;

	struct slab_err err;
};

/* The first version (0.1.0) ended with nnext: max_pixels, max_scans, label_field, disk, video
 * and max_frames came after it. Its stats ended with decoded_pixels. */
#define LOADER_OPTIONS_FIRST offsetof(struct slab_loader_options, max_pixels)
#define LOADER_STATS_FIRST offsetof(struct slab_loader_stats, clips)

struct slab_loader *slab_loader_new(void)
{
	return calloc(1, sizeof(struct slab_loader));
}

/* ---- filling a batch ---------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sample failure: "'path': sample #i 'key': why" into the batch. */
static int sample_fail(struct slab_loader_batch *b, int rc, const char *path, uint64_t index,
		       const struct slab_sample *smp, const char *why)
{
	return slab_fail(&b->err, rc, path, "sample #%llu '%.*s': %s", (unsigned long long)index,
			 slab_key_shown(smp->key_len), smp->key, why);
}

/* Map [p, p + n) of a file's mapping into the page tables in one call (MADV_POPULATE_READ,
 * Linux 5.14), reading what the cache lacks: far cheaper than a fault per page where faults
 * are dear (a virtual machine). 1 when done; 0 to touch the pages instead (an older kernel,
 * or an I/O error, which the touch then meets as the caller would). */
static int populate(struct worker *w, const unsigned char *p, uint64_t n)
{
#ifdef MADV_POPULATE_READ
	uintptr_t page = 4096, lo = (uintptr_t)p / page * page;
	uintptr_t hi = ((uintptr_t)p + (uintptr_t)n + page - 1) / page * page;

	if (!w->no_populate && madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0)
		return 1;
	w->no_populate = 1;
#else
	(void)w;
	(void)p;
	(void)n;
#endif
	return 0;
}

/* Text of a label for a message, quoted by the caller: at most 32 bytes, C-style escapes
 * for anything but printable ASCII (and for ' and \), "..." when cut. */
static void show_text(char *buf, size_t len, const unsigned char *p, uint64_t n)
{
	size_t o = 0;

	for (uint64_t i = 0; i < n && i < 32 && o + 8 < len; i++) {
		unsigned char c = p[i];

		if (c == '\n' || c == '\t' || c == '\r')
			o += (size_t)snprintf(buf + o, len - o, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
		else if (c == '\\' || c == '\'')
			o += (size_t)snprintf(buf + o, len - o, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	if (n > 32 && o + 4 <= len)
		memcpy(buf + o, "...", 4);
}

static int blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* An ASCII decimal integer with optional blanks around it and an optional sign: 0 and *v,
 * -1 when it is not one, -2 when it is out of int64's range. */
static int parse_label(const unsigned char *p, uint64_t n, int64_t *v)
{
	uint64_t i = 0, mag = 0, lim;
	int neg = 0, digits = 0;

	while (i < n && blank(p[i]))
		i++;
	if (i < n && (p[i] == '+' || p[i] == '-'))
		neg = p[i++] == '-';
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
		unsigned d = p[i] - '0';

		if (mag > (lim - d) / 10) {
			/* Out of range only if the rest is digits and blanks: else not a number. */
			while (i < n && p[i] >= '0' && p[i] <= '9')
				i++;
			while (i < n && blank(p[i]))
				i++;
			return i == n ? -2 : -1;
		}
		mag = mag * 10 + d;
	}
	while (i < n && blank(p[i]))
		i++;
	if (!digits || i != n)
		return -1;
	*v = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return 0;
}

/* Load entry e into position j of batch b: 0, or the sample's error in b->err. */
static int load_one(struct worker *w, struct slab_loader_batch *b, uint64_t e, size_t j)
{
	struct slab_loader *l = w->l;
	const struct slab_plan_entry *en = &l->plan->entries[e];
	struct slab *s = w->rd[en->file];
	const char *path = slab_path(slab_dataset_file(l->d, en->file));
	struct slab_loader_sample *r = &b->recs[j];
	struct fref *fr = &b->frefs[j * l->nf];
	struct slab_sample smp;
	char why[WHY_SIZE];
	int rc;

	w->fatal = 0;
	if ((rc = slab_sample(s, en->sample, &smp)) < 0)
		return slab_fail_from(&b->err, rc, slab_error(s));
	r->pos = l->plan->start + e;
	r->file = en->file;
	r->index = en->sample;
	r->key = smp.key;
	r->key_len = smp.key_len;
	for (unsigned f = 0; f < l->nf; f++) {
		int id = l->fid[(size_t)en->file * l->nf + f];
		struct slab_field fl;
		unsigned char x = 0;

		fr[f].data = NULL;
		fr[f].size = 0;
		if (id < 0)
			continue;
		rc = slab_get(s, en->sample, (unsigned)id, &fl);
		if (rc < 0)
			return slab_fail_from(&b->err, rc, slab_error(s));
		if (rc == 0)
			continue;
		if (l->o.verify) {
			uint32_t crc = slab_crc32c(0, fl.data, (size_t)fl.size);

			if (crc != fl.crc) {
				snprintf(why, sizeof(why), "field '%s': CRC32C %08x, recorded %08x",
					 l->names[f], crc, fl.crc);
				return sample_fail(b, SLAB_ERR_CORRUPT, path, en->sample, &smp, why);
			}
		} else if (fl.size && !populate(w, fl.data, fl.size)) {
			/* Fault the pages in here, not in the consumer. */
			for (uint64_t o = 0; o < fl.size; o += 4096)
				x ^= fl.data[o];
			x ^= fl.data[fl.size - 1];
			w->sink ^= x;
		}
		fr[f].data = fl.data;
		fr[f].size = fl.size;
	}
	/* The label first: a bad one spares the image's decode. */
	if (l->lf >= 0) {
		const struct fref *t = &fr[l->lf];
		char text[32 * 4 + 8];

		if (!t->data) {
			snprintf(why, sizeof(why), "no label field '%s'", l->names[l->lf]);
			return sample_fail(b, SLAB_ERR_CORRUPT, path, en->sample, &smp, why);
		}
		rc = parse_label(t->data, t->size, &b->labels[j]);
		if (rc < 0) {
			show_text(text, sizeof(text), t->data, t->size);
			snprintf(why, sizeof(why), "field '%s': %s: '%s'", l->names[l->lf],
				 rc == -2 ? "integer out of the int64 range" : "not an integer", text);
			return sample_fail(b, SLAB_ERR_CORRUPT, path, en->sample, &smp, why);
		}
	}
	/* The image pipeline, or the caller's per-sample transform. */
	if (l->o.image) {
		const struct fref *t = &fr[l->tf];
		struct slab_image_params ip;
		struct slab_image_stats is;
		uint32_t iw = 0, ih = 0;
		uint64_t g = 0;
		int crop = 0;

		if (!t->data) {
			snprintf(why, sizeof(why), "no image field '%s'", l->names[l->tf]);
			return sample_fail(b, SLAB_ERR_NOTFOUND, path, en->sample, &smp, why);
		}
		slab_dataset_global(l->d, en->file, en->sample, &g);
		/* Out of memory here is this image's demand (the pixel limit lets through what the
		 * machine may still not hold): the sample's failure, skipped with skip. */
		if ((rc = slab_image_size(w->dec, t->data, (size_t)t->size, &iw, &ih)) < 0 ||
		    (crop = 1, rc = slab_image_params(&l->image, iw, ih, l->o.seed, l->o.epoch, g,
						      &ip)) < 0 ||
		    (crop = 0, rc = slab_image_decode(w->dec, t->data, (size_t)t->size, &l->image,
						      &ip, b->out + j * l->out_stride, &is)) < 0) {
			/* The field, then the decoder's words (which name the format). */
			if (crop)
				snprintf(why, sizeof(why), "field '%s': no crop of a %ux%u image",
					 l->names[l->tf], iw, ih);
			else
				snprintf(why, sizeof(why), "field '%s': %s", l->names[l->tf],
					 slab_image_error(w->dec));
			return sample_fail(b, crop ? SLAB_ERR_CORRUPT : rc, path, en->sample, &smp,
					   why);
		}
		b->st.images++;
		b->st.scaled[is.scale_denom == 8 ? 3 : is.scale_denom == 4 ? 2 : is.scale_denom == 2]++;
		b->st.region += is.region != 0;
		b->st.decoded_pixels += (uint64_t)is.decoded_w * is.decoded_h;
	} else if (l->o.video) {
		const struct fref *t = &fr[l->tf];
		struct slab_video_info vi;
		struct slab_video_params vp;
		struct slab_video_stats vs = { 0 };
		uint64_t g = 0;

		if (!t->data) {
			snprintf(why, sizeof(why), "no video field '%s'", l->names[l->tf]);
			return sample_fail(b, SLAB_ERR_NOTFOUND, path, en->sample, &smp, why);
		}
		slab_dataset_global(l->d, en->file, en->sample, &g);
		/* As for an image: out of memory here is this video's demand. */
		rc = slab_video_info(w->vdec, t->data, (size_t)t->size, &vi);
		if (rc == 0 && (rc = slab_video_params(&l->video, &vi, l->o.seed, l->o.epoch, g, &vp)) < 0) {
			/* The pipeline's pure function has no words of its own: slab_video_decode()'s. */
			if (rc == SLAB_ERR_CORRUPT)
				snprintf(why, sizeof(why), "field '%s': video of %llu %s: the clip needs %llu",
					 l->names[l->tf], (unsigned long long)vi.frames,
					 slab_plural(vi.frames, "frame", "frames"),
					 (unsigned long long)slab_video_span(&l->video, &vi));
			else
				snprintf(why, sizeof(why), "field '%s': no clip of a %ux%u video of %llu %s",
					 l->names[l->tf], vi.width, vi.height, (unsigned long long)vi.frames,
					 slab_plural(vi.frames, "frame", "frames"));
			return sample_fail(b, SLAB_ERR_CORRUPT, path, en->sample, &smp, why);
		}
		if (rc == 0)
			rc = slab_video_decode(w->vdec, t->data, (size_t)t->size, &l->video, &vp,
					       b->out + j * l->out_stride, &vs);
		if (rc < 0) {
			snprintf(why, sizeof(why), "field '%s': %s", l->names[l->tf],
				 slab_video_error(w->vdec));
			return sample_fail(b, rc, path, en->sample, &smp, why);
		}
		b->st.clips++;
		b->st.video_decoded += vs.decoded;
		b->st.video_converted += vs.converted;
	} else if (l->o.transform) {
		const struct fref *t = l->tf >= 0 ? &fr[l->tf] : NULL;

		why[0] = '\0';
		rc = l->o.transform(l->o.transform_arg, r, t ? t->data : NULL, t ? t->size : 0,
				    b->out + j * l->out_stride, why, sizeof(why));
		if (rc < 0) {
			why[sizeof(why) - 1] = '\0';
			w->fatal = rc == SLAB_ERR_NOMEM;
			return sample_fail(b, rc, path, en->sample, &smp, why[0] ? why : "transform failed");
		}
	}
	return 0;
}

/* A worker's decoder, with the options' limits; NULL when out of memory. */
static struct slab_image_decoder *new_decoder(const struct slab_loader *l)
{
	struct slab_image_decoder *d = slab_image_decoder_new();

	if (d)
		slab_image_decoder_limits(d, l->o.max_pixels, l->o.max_scans);
	return d;
}

static struct slab_video_decoder *new_video_decoder(const struct slab_loader *l)
{
	struct slab_video_decoder *d = slab_video_decoder_new();

	if (d)
		slab_video_decoder_limits(d, l->o.max_pixels, l->o.max_frames);
	return d;
}

/* The file of the dataset whose mapping holds addr, or -1. */
static int file_at(const struct slab_loader *l, uint32_t hint, const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	for (uint32_t k = 0; k <= l->nfiles; k++) {
		uint32_t i = k == 0 ? hint : k - 1;
		const struct slab *s = slab_dataset_file(l->d, i);
		uintptr_t base = (uintptr_t)slab_base(s);

		if (a >= base && a - base < slab_file_size(s))
			return (int)i;
	}
	return -1;
}

/* load_one() with the reads of the mappings guarded: a file truncated under them (or a
 * page the device cannot read) is the batch's error, naming the file and the offset. The
 * decoder, left in the middle of an image, is made anew. */
static int load_guarded(struct worker *w, struct slab_loader_batch *b, uint64_t e, size_t j)
{
	struct slab_loader *l = w->l;
	struct slab_fault g;
	int rc, fi;

	if (sigsetjmp(g.jump, 0)) {
		uint32_t hint = l->plan->entries[e].file;

		w->fatal = w->faulted = 1;
		if (w->dec) {
			slab_image_decoder_free(w->dec);
			w->dec = new_decoder(l);
		}
		if (w->vdec) {
			slab_video_decoder_free(w->vdec);
			w->vdec = new_video_decoder(l);
		}
		fi = file_at(l, hint, g.addr);
		if (fi < 0)
			return slab_fail(&b->err, SLAB_ERR_IO, slab_path(slab_dataset_file(l->d, hint)),
					 "cannot read the file's mapping (an I/O error, or the file "
					 "was truncated while in use)");
		return slab_fault_fail(&b->err, slab_path(slab_dataset_file(l->d, (uint32_t)fi)),
				       slab_base(slab_dataset_file(l->d, (uint32_t)fi)),
				       slab_file_size(slab_dataset_file(l->d, (uint32_t)fi)), g.addr);
	}
	if ((l->o.image && !w->dec) || (l->o.video && !w->vdec)) {
		w->fatal = 1;
		return slab_fail(&b->err, SLAB_ERR_NOMEM, NULL, "out of memory making a decoder");
	}
	slab_fault_begin(&g);
	rc = load_one(w, b, e, j);
	slab_fault_end(&g);
	return rc;
}

static void fill(struct worker *w, struct slab_loader_batch *b)
{
	struct slab_loader *l = w->l;
	uint64_t lo = b->number * l->o.batch, hi = lo + l->o.batch;
	struct slab_err first;

	if (hi > l->plan->n)
		hi = l->plan->n;
	b->n = b->skipped = 0;
	b->rc = 0;
	memset(&b->st, 0, sizeof(b->st));
	b->err.text[0] = first.text[0] = '\0';
	/* The guards need the SIGBUS handler, which a handler installed since the opening
	 * (Python's faulthandler.enable() in a training script) has replaced: put back in
	 * front, chaining that one, once a batch. */
	if ((b->rc = slab_fault_setup(&b->err)) < 0)
		return;
	for (uint64_t e = lo; e < hi; e++) {
		int rc;

		/* Stopped: the batch is never handed out, and close() waits for no more of it
		 * (a batch of thousands of images, or of video clips, takes seconds). */
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
			b->rc = slab_fail(&b->err, SLAB_ERR_INVAL, NULL, "loader closed");
			return;
		}
		rc = load_guarded(w, b, e, b->n);

		if (rc == 0) {
			for (unsigned f = 0; f < l->nf; f++)
				b->st.bytes += b->frefs[b->n * l->nf + f].size;
			b->n++;
			continue;
		}
		if (!l->o.skip || w->fatal) {
			b->rc = rc;
			return;
		}
		if (b->skipped++ == 0)
			first = b->err;
	}
	b->err = first;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct slab_loader *l = w->l;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		struct slab_loader_batch *b;

		while (!l->stop && l->next_claim < l->nbatches && l->nfree == 0)
			pthread_cond_wait(&l->work_cv, &l->mu);
		if (l->stop || l->next_claim >= l->nbatches)
			break;
		b = &l->slots[l->free_ids[--l->nfree]];
		b->number = l->next_claim++;
		b->state = SLOT_FILLING;
		pthread_cond_broadcast(&l->walk_cv);
		pthread_mutex_unlock(&l->mu);
		fill(w, b);
		pthread_mutex_lock(&l->mu);
		if (w->faulted && !l->fault_rc) {
			l->fault_rc = b->rc;
			l->fault_err = b->err;
		}
		b->state = SLOT_READY;
		pthread_cond_broadcast(&l->ready_cv);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* ---- read-ahead and release --------------------------------------------------------------- */

/* The plan position batch k starts at (the plan's end for k past the last batch). */
static uint64_t batch_start(const struct slab_loader *l, uint64_t k)
{
	return k >= l->nbatches ? l->plan->n : k * l->o.batch;
}

/* How far the walk may go (it hands out entries below this): without release, up to the
 * first batch no worker has taken, so the window is the pages the next batches need; with
 * release or a memory budget, up to the first batch the consumer still holds, so a page is
 * dropped only once nothing handed out points into it (and not before a worker read it). */
static uint64_t walk_gate(const struct slab_loader *l)
{
	return batch_start(l, l->o.release || l->o.memory || l->o.disk ? l->released_upto
								       : l->next_claim);
}

static void *walker_main(void *arg)
{
	struct slab_loader *l = arg;
	struct slab_follow_item it;

	for (;;) {
		int rc;

		pthread_mutex_lock(&l->mu);
		while (!l->stop && l->walk_pos > walk_gate(l))
			pthread_cond_wait(&l->walk_cv, &l->mu);
		if (l->stop) {
			pthread_mutex_unlock(&l->mu);
			break;
		}
		pthread_mutex_unlock(&l->mu);
		/* The call handing out entry walk_pos leaves (and maybe releases) the one before;
		 * the last call, past the end, leaves the last entry. Its reads are guarded: the
		 * SIGBUS handler in front again first, as for a worker's batch. */
		if ((rc = slab_fault_setup(&l->walk_err)) < 0) {
			pthread_mutex_lock(&l->mu);
			l->walk_rc = rc;
			pthread_mutex_unlock(&l->mu);
			break;
		}
		rc = slab_follow_next(l->walk, &it);
		if (rc <= 0) {
			pthread_mutex_lock(&l->mu);
			if (rc < 0) {
				l->walk_rc = rc;
				slab_fail_from(&l->walk_err, rc, slab_follow_error(l->walk));
			}
			pthread_mutex_unlock(&l->mu);
			break;
		}
		l->walk_pos++;
	}
	return NULL;
}

/* ---- open, next, release, close ---------------------------------------------------------- */

static int nomem(struct slab_loader *l)
{
	return slab_fail(&l->err, SLAB_ERR_NOMEM, NULL, "out of memory");
}

static const void *name_key(void *ctx, uint64_t id, size_t *len)
{
	const char *name = ((char *const *)ctx)[id];

	*len = strlen(name);
	return name;
}

/* The first name of names[0 .. n) given twice, or NULL: one pass over a hash set. -1 when out
 * of memory. */
static int find_twice(char *const *names, size_t n, const char **twice)
{
	struct slab_keyset ks;

	*twice = NULL;
	if (slab_keyset_init(&ks, n, name_key, (void *)names) < 0)
		return -1;
	for (size_t i = 0; i < n && !*twice; i++) {
		size_t len = strlen(names[i]);
		uint64_t h = slab_keyset_hash(&ks, names[i], len);

		if (slab_keyset_find(&ks, h, names[i], len) != SLAB_KEYSET_NONE)
			*twice = names[i];
		else if (slab_keyset_add(&ks, h, i) < 0) {
			slab_keyset_free(&ks);
			return -1;
		}
	}
	slab_keyset_free(&ks);
	return 0;
}

/* The place among the n wanted fields of the field an option names (what: "transform",
 * "label"): 0 and *at, or the error: no file has it where the wanted fields are the files'
 * own, else it is not one of those named. */
static int option_field(struct slab_loader *l, size_t n, const char *name, const char *what,
			int *at)
{
	for (size_t f = 0; f < n; f++)
		if (strcmp(l->names[f], name) == 0)
			*at = (int)f;
	if (*at >= 0)
		return 0;
	if (!l->o.nfields)
		return slab_no_field(l->d, name, &l->err);
	return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "%s field '%s' is not one of the wanted "
			 "fields", what, name);
}

/* The wanted field names, sorted union of every file's when none are given. At most
 * MAX_FIELDS distinct names (files that share names count each once). */
static int resolve_fields(struct slab_loader *l)
{
	size_t cap = 0, n = 0;
	const char *twice;
	int ret;

	if (l->o.nfields) {
		cap = l->o.nfields;
		if (cap > MAX_FIELDS)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "%zu fields wanted: at most %u",
					 cap, MAX_FIELDS);
	} else {
		for (uint32_t i = 0; i < l->nfiles; i++)
			cap += slab_field_count(slab_dataset_file(l->d, i));
	}
	l->names = calloc(cap ? cap : 1, sizeof(*l->names));
	if (!l->names)
		return nomem(l);
	if (l->o.nfields) {
		for (size_t f = 0; f < cap; f++) {
			if (!l->o.fields[f] || !l->o.fields[f][0])
				return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "wanted field %zu has no name", f);
			if (!(l->names[n++] = strdup(l->o.fields[f])))
				return nomem(l);
			l->nf = (unsigned)n;    /* what loader_clear() frees */
		}
		if (find_twice(l->names, n, &twice) < 0)
			return nomem(l);
		if (twice)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "field '%s' wanted twice", twice);
	} else {
		for (uint32_t i = 0; i < l->nfiles; i++) {
			struct slab *s = slab_dataset_file(l->d, i);

			for (unsigned f = 0; f < slab_field_count(s); f++) {
				if (!(l->names[n++] = strdup(slab_field_name(s, f))))
					return nomem(l);
				l->nf = (unsigned)n;
			}
		}
		qsort(l->names, n, sizeof(*l->names), name_cmp);
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (m && strcmp(l->names[m - 1], l->names[i]) == 0)
				free(l->names[i]);
			else
				l->names[m++] = l->names[i];
			if (i >= m)
				l->names[i] = NULL;
		}
		n = m;
		l->nf = (unsigned)n;
		if (n > MAX_FIELDS)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					 "the files have %zu distinct fields: at most %u can be loaded "
					 "(name the wanted ones)", n, MAX_FIELDS);
	}
	l->fid = malloc(((size_t)l->nfiles * n + 1) * sizeof(*l->fid));
	if (!l->fid)
		return nomem(l);
	for (size_t f = 0; f < n; f++) {
		int somewhere = 0;

		for (uint32_t i = 0; i < l->nfiles; i++) {
			int id = slab_field_lookup(slab_dataset_file(l->d, i), l->names[f]);

			l->fid[(size_t)i * n + f] = id < 0 ? -1 : id;
			somewhere |= id >= 0;
		}
		if (!somewhere)
			return slab_no_field(l->d, l->names[f], &l->err);
	}
	l->tf = -1;
	if ((l->o.transform || l->o.image || l->o.video) && l->o.transform_field &&
	    (ret = option_field(l, n, l->o.transform_field, "transform", &l->tf)) < 0)
		return ret;
	l->lf = -1;
	if (l->o.label_field && (ret = option_field(l, n, l->o.label_field, "label", &l->lf)) < 0)
		return ret;
	return 0;
}

/* One slot's memory: page aligned, and when it is large 2 MiB aligned with MADV_HUGEPAGE
 * (the kernel backs it with huge pages where it can); preferably on NUMA node `node` (the
 * caller's: the consumer reads every byte, the workers write them once), or where the
 * kernel puts it when node < 0 or the kernel has no NUMA policy. NULL when out of memory. */
static void *slot_map(size_t len, int node)
{
	size_t extra = len >= HUGE_SIZE ? HUGE_SIZE : 0, head;
	unsigned char *raw = mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (raw == MAP_FAILED)
		return NULL;
	head = extra ? (HUGE_SIZE - (uintptr_t)raw % HUGE_SIZE) % HUGE_SIZE : 0;
	if (head)
		munmap(raw, head);
	if (extra - head)
		munmap(raw + head + len, extra - head);
	raw += head;
	if (extra)
		(void)madvise(raw, len, MADV_HUGEPAGE);
	if (node >= 0 && node < 1024) {
		unsigned long mask[1024 / (8 * sizeof(unsigned long))] = { 0 };

		mask[node / (8 * sizeof(long))] = 1ul << (node % (8 * sizeof(long)));
		/* A preference, not a binding: a full node spills over instead of failing. */
		(void)syscall(SYS_mbind, raw, len, MPOL_PREFERRED, mask, 1024ul + 1, 0u);
	}
	return raw;
}

/* The ring: one mapping per slot (slot_map()). */
static int make_ring(struct slab_loader *l)
{
	/* No batch holds more than the plan: batch sizes past it cost nothing. */
	size_t B = l->plan->n < l->o.batch ? (l->plan->n ? (size_t)l->plan->n : 1) : l->o.batch;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t index, outlen, len;
	unsigned cpu, node;

	/* Images (or clips) back to back, one array; a transform's outputs each on OUT_ALIGN. */
	if (l->o.image || l->o.video)
		l->out_stride = l->o.out_size;
	else if (l->o.transform) {
		/* Rounded up past SIZE_MAX, the stride would wrap to a few bytes, or to none (and
		 * the transform be handed no output to write its out_size bytes to). */
		if (l->o.out_size > SIZE_MAX / 4)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					 "transform output of %zu bytes a sample: too large",
					 l->o.out_size);
		l->out_stride = (l->o.out_size + OUT_ALIGN - 1) / OUT_ALIGN * OUT_ALIGN;
	}
	if (B > SIZE_MAX / 4 / (sizeof(struct slab_loader_sample) + (size_t)l->nf * sizeof(struct fref) +
				l->out_stride + sizeof(int64_t)))
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "batch of %zu %s: too large", B,
				 slab_plural(B, "sample", "samples"));
	index = (B * (sizeof(struct slab_loader_sample) + (size_t)l->nf * sizeof(struct fref)) + page - 1) /
		page * page;
	outlen = (B * l->out_stride + page - 1) / page * page;
	len = index + outlen + (l->lf >= 0 ? (B * sizeof(int64_t) + page - 1) / page * page : 0);
	l->slots = calloc(l->o.ring, sizeof(*l->slots));
	l->free_ids = calloc(l->o.ring, sizeof(*l->free_ids));
	if (!l->slots || !l->free_ids)
		return nomem(l);
	if (getcpu(&cpu, &node) != 0)
		node = UINT_MAX;
	for (unsigned i = 0; i < l->o.ring; i++) {
		struct slab_loader_batch *b = &l->slots[i];
		void *p = slot_map(len, node == UINT_MAX ? -1 : (int)node);

		/* Say how much: a batch size or an output size mistyped asks for terabytes. */
		if (!p)
			return slab_fail(&l->err, SLAB_ERR_NOMEM, NULL,
					 "out of memory for the ring: %u batches of %zu bytes each",
					 l->o.ring, len);
		b->l = l;
		b->mem = p;
		b->memlen = len;
		b->recs = p;
		b->frefs = (struct fref *)(b->recs + B);
		b->out = l->out_stride ? (unsigned char *)p + index : NULL;
		b->labels = l->lf >= 0 ? (int64_t *)((unsigned char *)p + index + outlen) : NULL;
		/* Handed out from slot 0 on. */
		l->free_ids[l->nfree++] = l->o.ring - 1 - i;
	}
	return 0;
}

/* The read-ahead window in pages. Without release or a budget the walker runs ahead of the
 * workers and `ahead` pages is the look-ahead. With either, it waits at the first batch the
 * consumer holds (so nothing is dropped under a worker), and the window has to reach over the
 * batches the workers fill meanwhile, the ring's, too: that many more pages, estimated from
 * the dataset's average sample. */
static uint64_t window_pages(const struct slab_loader *l)
{
	uint64_t data = 0, samples = 0, page = 4096, per;

	if (!l->o.release && !l->o.memory && !l->o.disk)
		return l->o.ahead;
	for (uint32_t i = 0; i < l->nfiles; i++) {
		const struct slab *s = slab_dataset_file(l->d, i);

		data += slab_table_offset(s) - slab_data_offset(s);
		samples += slab_count(s);
		if (slab_page_size(s) > page)
			page = slab_page_size(s);
	}
	if (samples == 0)
		return l->o.ahead;
	/* pages a batch spans, plus one it may straddle */
	per = ((double)data / (double)samples * (double)l->o.batch) / (double)page + 2;
	return l->o.ahead + (uint64_t)l->o.ring * per;
}

static int start_threads(struct slab_loader *l)
{
	for (unsigned t = 0; t < l->o.threads; t++) {
		struct worker *w = &l->w[t];

		w->l = l;
		w->rd = calloc(l->nfiles, sizeof(*w->rd));
		if (!w->rd)
			return nomem(l);
		if (l->o.image && !(w->dec = new_decoder(l)))
			return nomem(l);
		if (l->o.video && !(w->vdec = new_video_decoder(l)))
			return nomem(l);
		for (uint32_t i = 0; i < l->nfiles; i++) {
			struct slab *s = slab_dataset_file(l->d, i);
			int rc;

			if (!(w->rd[i] = slab_new()))
				return nomem(l);
			rc = slab_open_mem(w->rd[i], slab_base(s), (size_t)slab_file_size(s),
					   slab_path(slab_dataset_file(l->d, i)));
			if (rc < 0)
				return slab_fail_from(&l->err, rc, slab_error(w->rd[i]));
			slab_share_remote(w->rd[i], s);
		}
	}
	for (unsigned t = 0; t < l->o.threads; t++) {
		if (pthread_create(&l->w[t].tid, NULL, worker_main, &l->w[t]) != 0)
			return slab_fail(&l->err, SLAB_ERR_NOMEM, NULL, "cannot start worker thread %u", t);
		l->w[t].started = 1;
	}
	if (l->walk) {
		if (pthread_create(&l->walk_tid, NULL, walker_main, l) != 0)
			return slab_fail(&l->err, SLAB_ERR_NOMEM, NULL, "cannot start the read-ahead thread");
		l->walk_started = 1;
	}
	return 0;
}

/* A call from another process than the one that opened the loader: a fork() child, which
 * has the memory but none of the threads (and maybe a lock one of them held). */
static int forked(const struct slab_loader *l)
{
	return l->pid != getpid();
}

/* The dataset's URLs: their fetches cut off (on) or not. */
static void cancel_fetches(struct slab_loader *l, int on)
{
	for (uint32_t i = 0; l->d && i < l->nfiles; i++)
		slab_cancel_fetches(slab_dataset_file(l->d, i), on);
}

/* Stop and join the threads, and free what only they use: the read-ahead walk (and the
 * descriptors it holds), the workers' readers and decoders. The ring stays. In a fork()
 * child there is nothing to join or signal: their memory is freed only. */
static void stop_threads(struct slab_loader *l)
{
	int child = forked(l);

	if (l->sync_ok && !child) {
		pthread_mutex_lock(&l->mu);
		__atomic_store_n(&l->stop, 1, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&l->work_cv);
		pthread_cond_broadcast(&l->walk_cv);
		pthread_cond_broadcast(&l->ready_cv);
		pthread_mutex_unlock(&l->mu);
		/* A URL's fetch in progress (a worker's, the walk's, a background fetcher's) is
		 * cut off rather than waited for: stalled, it is retried up to the --timeout. */
		cancel_fetches(l, 1);
	}
	if (l->w) {
		for (unsigned t = 0; t < l->o.threads; t++) {
			if (l->w[t].started && !child)
				pthread_join(l->w[t].tid, NULL);
			for (uint32_t i = 0; l->w[t].rd && i < l->nfiles; i++)
				slab_close(l->w[t].rd[i]);
			free(l->w[t].rd);
			slab_image_decoder_free(l->w[t].dec);
			slab_video_decoder_free(l->w[t].vdec);
		}
		free(l->w);
		l->w = NULL;
	}
	if (l->walk_started && !child)
		pthread_join(l->walk_tid, NULL);
	l->walk_started = 0;
	if (l->sync_ok && !child)
		cancel_fetches(l, 0);
	/* Closed early with release: the pages the workers read for batches not handed out go
	 * with the walk's window (not in a child, whose parent still reads them). */
	if (l->plan && !child)
		slab_follow_drop_ahead(l->walk, batch_start(l, l->next_claim));
	slab_follow_close(l->walk);
	l->walk = NULL;
}

static void loader_clear(struct slab_loader *l)
{
	int child = forked(l);

	stop_threads(l);
	for (unsigned i = 0; l->slots && i < l->o.ring; i++)
		if (l->slots[i].mem)
			munmap(l->slots[i].mem, l->slots[i].memlen);
	free(l->slots);
	free(l->free_ids);
	for (unsigned f = 0; l->names && f < l->nf; f++)
		free(l->names[f]);
	free(l->names);
	free(l->fid);
	if (l->sync_ok && !child) {
		pthread_cond_destroy(&l->walk_cv);
		pthread_cond_destroy(&l->ready_cv);
		pthread_cond_destroy(&l->work_cv);
		pthread_mutex_destroy(&l->mu);
	}
	/* Back to a loader not yet open; the error stays. */
	{
		struct slab_err e = l->err;

		memset(l, 0, sizeof(*l));
		l->err = e;
	}
}

/* The crop's ranges, checked once here rather than failing every sample (the image spec's,
 * or the video spec's image). */
static int check_spec(struct slab_loader *l, const struct slab_image_spec *sp)
{
	struct slab_image_params p;

	if (sp->crop != SLAB_IMAGE_CROP_NONE && sp->crop != SLAB_IMAGE_CROP_CENTER &&
	    sp->crop != SLAB_IMAGE_CROP_RANDOM_RESIZED)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "image crop %d: no such crop", sp->crop);
	if (sp->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED &&
	    !(sp->scale_min > 0 && sp->scale_min <= sp->scale_max && sp->scale_max <= 1))
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image scale (%g, %g): wanted 0 < min <= max <= 1", sp->scale_min,
				 sp->scale_max);
	if (sp->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED &&
	    !(sp->ratio_min > 0 && sp->ratio_min <= sp->ratio_max && isfinite(sp->ratio_max)))
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image ratio (%g, %g): wanted 0 < min <= max, both finite",
				 sp->ratio_min, sp->ratio_max);
	if (sp->crop == SLAB_IMAGE_CROP_CENTER && sp->center_ratio != 0 &&
	    !(sp->center_ratio > 0 && sp->center_ratio <= 1))
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image center ratio %g: wanted 0 < ratio <= 1", sp->center_ratio);
	if (sp->channels != 0 && sp->channels != 1 && sp->channels != 3 && sp->channels != 4)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image channels %u: wanted 1 (grey), 3 (RGB) or 4 (RGBA)", sp->channels);
	if (sp->alpha != SLAB_IMAGE_ALPHA_DROP && sp->alpha != SLAB_IMAGE_ALPHA_COMPOSITE)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image alpha %d: wanted 0 (drop) or 1 (composite)", sp->alpha);
	if (sp->alpha == SLAB_IMAGE_ALPHA_COMPOSITE && sp->channels == 4)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image alpha composite with 4 channels: RGBA keeps the alpha");
	if (sp->resize != SLAB_IMAGE_RESIZE_BILINEAR && sp->resize != SLAB_IMAGE_RESIZE_NEAREST)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "image resize %d: wanted 0 (bilinear) or 1 (nearest)", sp->resize);
	/* Anything else the pipeline would refuse for every image. */
	if (slab_image_params(sp, 1, 1, 0, 0, 0, &p) < 0)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "image spec refused by the pipeline");
	return 0;
}

/* The video spec: copied, checked (by the pipeline's own check, then its image spec as an
 * image spec is), the output's size set. */
static int open_video(struct slab_loader *l)
{
	struct slab_video_spec *v = &l->video;
	int rc;

	if (l->o.image || l->o.transform)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "a video spec and %s: one or the other",
				 l->o.image ? "an image spec" : "a transform");
	if (!l->o.transform_field)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "a video spec needs the video field (transform_field)");
	if (slab_sized_in(v, sizeof(*v), l->o.video, SLAB_VIDEO_SPEC_FIRST) < 0)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "video spec of %zu %s: no such version", l->o.video->size,
				 slab_plural(l->o.video->size, "byte", "bytes"));
	l->o.video = v;
	if ((rc = slab_video_spec_check(v, &l->err)) < 0 ||
	    (rc = check_spec(l, &v->image)) < 0)
		return rc;
	/* Without FFmpeg's libraries every clip would fail: say so once, here. */
	if (slab_video_ready(&l->err) < 0)
		return SLAB_ERR_INVAL;
	/* Each side at most 65535 and at most 65535 frames: no overflow in 64 bits. */
	l->o.out_size = (size_t)v->frames * v->image.out_h * v->image.out_w * 3;
	return 0;
}

int slab_loader_open(struct slab_loader *l, struct slab_dataset *d, const struct slab_plan *plan,
		     const struct slab_loader_options *opt)
{
	int rc;

	if (l->plan)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "loader already open");
	l->err.text[0] = '\0';
	if (slab_sized_in(&l->o, sizeof(l->o), opt, LOADER_OPTIONS_FIRST) < 0)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "loader options of %zu %s: no such version", opt->size,
				 slab_plural(opt->size, "byte", "bytes"));
	if (l->o.batch == 0)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "batch size 0");
	if (l->o.threads == 0)
		l->o.threads = 1;
	if (l->o.threads > MAX_THREADS)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "%u threads: at most %u",
				 l->o.threads, MAX_THREADS);
	if (l->o.ring == 0)
		l->o.ring = 2 * l->o.threads;
	if (l->o.ring > MAX_RING)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "ring of %u batches: at most %u",
				 l->o.ring, MAX_RING);
	if ((l->o.release || l->o.memory || l->o.disk) && l->o.ahead == 0)
		l->o.ahead = 1;
	if (l->o.nnext && !l->o.next_plans)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "%zu next plans, none given", l->o.nnext);
	if (l->o.image) {
		if (l->o.transform)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					 "an image spec and a transform: one or the other");
		if (!l->o.transform_field)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					 "an image spec needs the image field (transform_field)");
		if (l->o.image->out_w == 0 || l->o.image->out_h == 0 ||
		    l->o.image->out_w > 65535 || l->o.image->out_h > 65535)
			return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "image size %ux%u",
					 l->o.image->out_w, l->o.image->out_h);
		l->image = *l->o.image;
		l->o.image = &l->image;
		l->o.out_size = (size_t)l->image.out_w * l->image.out_h *
				(l->image.channels ? l->image.channels : 3);
		if ((rc = check_spec(l, &l->image)) < 0)
			return rc;
	}
	if (l->o.video && (rc = open_video(l)) < 0)
		return rc;
	if ((rc = slab_fault_setup(&l->err)) < 0)
		return rc;
	if (slab_dataset_files(d) == 0)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "dataset not open");
	l->d = d;
	l->plan = plan;
	l->pid = getpid();
	l->nfiles = (uint32_t)slab_dataset_files(d);
	/* A plan of other files of the same shape passes the range check below, and the
	 * loader would hand out their samples' places in these files: the identities are
	 * checked, as a walk checks them (without writing the plan, which is const). */
	{
		struct slab **files = malloc((size_t)l->nfiles * sizeof(*files));

		if (!files) {
			rc = nomem(l);
			goto fail;
		}
		for (uint32_t i = 0; i < l->nfiles; i++)
			files[i] = slab_dataset_file(d, i);
		rc = slab_plan_match_err(plan, files, l->nfiles, &l->err);
		free(files);
		if (rc < 0)
			goto fail;
	}
	for (uint64_t e = 0; e < plan->n; e++) {
		const struct slab_plan_entry *en = &plan->entries[e];

		if (en->file >= l->nfiles || en->sample >= slab_count(slab_dataset_file(d, en->file))) {
			rc = slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				       "plan entry %llu (file %u, sample %u) is not in the dataset",
				       (unsigned long long)e, en->file, en->sample);
			goto fail;
		}
	}
	l->nbatches = l->o.drop_last ? plan->n / l->o.batch
				     : plan->n / l->o.batch + (plan->n % l->o.batch != 0);
	if ((rc = resolve_fields(l)) < 0 || (rc = make_ring(l)) < 0)
		goto fail;
	if (l->o.ahead) {
		struct slab_follow_options fo = { .size = sizeof(fo), .ahead = window_pages(l),
						  .release = l->o.release, .memory = l->o.memory, .disk = l->o.disk,
						  .policy = l->o.cache_policy, .walked = 1 };
		const struct slab_plan **plans = calloc(l->o.nnext + 1, sizeof(*plans));

		if (!plans) {
			rc = nomem(l);
			goto fail;
		}
		/* This epoch is walked; the next ones are the future the budget looks at. */
		plans[0] = plan;
		for (size_t k = 0; k < l->o.nnext; k++)
			plans[k + 1] = l->o.next_plans[k];
		rc = slab_dataset_follow_plans(d, plans, l->o.nnext + 1, &fo, &l->walk);
		free(plans);
		if (rc < 0) {
			slab_fail_from(&l->err, rc, slab_dataset_error(d));
			l->walk = NULL;
			goto fail;
		}
	}
	l->w = calloc(l->o.threads, sizeof(*l->w));
	if (!l->w) {
		rc = nomem(l);
		goto fail;
	}
	if (pthread_mutex_init(&l->mu, NULL) != 0) {
		rc = nomem(l);
		goto fail;
	}
	if (pthread_cond_init(&l->work_cv, NULL) != 0) {
		pthread_mutex_destroy(&l->mu);
		rc = nomem(l);
		goto fail;
	}
	/* (on the monotonic clock: slab_loader_next_timed()'s deadline) */
	{
		pthread_condattr_t ca;
		int e = pthread_condattr_init(&ca);

		if (e == 0) {
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
			e = pthread_cond_init(&l->ready_cv, &ca);
			pthread_condattr_destroy(&ca);
		}
		if (e != 0) {
			pthread_cond_destroy(&l->work_cv);
			pthread_mutex_destroy(&l->mu);
			rc = nomem(l);
			goto fail;
		}
	}
	if (pthread_cond_init(&l->walk_cv, NULL) != 0) {
		pthread_cond_destroy(&l->ready_cv);
		pthread_cond_destroy(&l->work_cv);
		pthread_mutex_destroy(&l->mu);
		rc = nomem(l);
		goto fail;
	}
	l->sync_ok = 1;
	if ((rc = start_threads(l)) < 0)
		goto fail;
	return 0;
fail:
	loader_clear(l);
	return rc;
}

uint64_t slab_loader_batches(const struct slab_loader *l)
{
	return l->nbatches;
}

unsigned slab_loader_field_count(const struct slab_loader *l)
{
	return l->nf;
}

const char *slab_loader_field_name(const struct slab_loader *l, unsigned f)
{
	return f < l->nf ? l->names[f] : NULL;
}

/* 0 when the loader can hand out and take back batches in this process, else the error. */
static int usable(struct slab_loader *l)
{
	if (!l->plan)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "loader not open");
	if (forked(l))
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
				 "loader opened in process %ld, used in process %ld: a fork() child "
				 "has none of its threads; open a new loader there",
				 (long)l->pid, (long)getpid());
	if (l->stopped)
		return slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "loader closed");
	return 0;
}

/* Under the lock: slot b back to the ring, and the release mark moved past every batch
 * released in order. */
static void release_locked(struct slab_loader *l, struct slab_loader_batch *b)
{
	b->state = SLOT_FREE;
	l->free_ids[l->nfree++] = (uint32_t)(b - l->slots);
	/* The first batch still held, or not yet handed out. */
	for (;;) {
		int held = 0;

		for (unsigned i = 0; i < l->o.ring; i++)
			held |= l->slots[i].state == SLOT_HELD &&
				l->slots[i].number == l->released_upto;
		if (held || l->released_upto >= l->next_out)
			break;
		l->released_upto++;
	}
	pthread_cond_broadcast(&l->work_cv);
	pthread_cond_broadcast(&l->walk_cv);
}

/* Under the lock: batch b taken out of the ring's order and counted. */
static void account(struct slab_loader *l, struct slab_loader_batch *b)
{
	b->state = SLOT_HELD;
	l->next_out++;
	l->st.samples += b->n;
	l->st.skipped += b->skipped;
	l->st.bytes += b->st.bytes;
	l->st.images += b->st.images;
	for (int k = 0; k < 4; k++)
		l->st.scaled[k] += b->st.scaled[k];
	l->st.region += b->st.region;
	l->st.decoded_pixels += b->st.decoded_pixels;
	l->st.clips += b->st.clips;
	l->st.video_decoded += b->st.video_decoded;
	l->st.video_converted += b->st.video_converted;
	if (b->skipped) {
		if (l->skipped == 0)
			slab_fail_from(&l->err, SLAB_ERR_CORRUPT, b->err.text);
		l->skipped += b->skipped;
	}
}

/* Under the lock, before a batch is handed out: are its files still as long as their
 * mappings? A file truncated after the workers filled the batch (they read under a guard,
 * the caller will not) would fault in the caller's hands. One stat(2) per file the batch
 * reads from (per run of samples from one file). 0, or the error in fault_err. */
static int check_files(struct slab_loader *l, struct slab_loader_batch *b)
{
	uint32_t last = UINT32_MAX;
	uint64_t now;

	for (size_t j = 0; j < b->n; j++) {
		uint32_t f = b->recs[j].file;
		const struct slab *s = slab_dataset_file(l->d, f);

		if (f == last)
			continue;
		last = f;
		if (slab_shrunk(s, &now)) {
			slab_fail(&l->fault_err, SLAB_ERR_IO, slab_path(slab_dataset_file(l->d, f)),
				  "the file is %llu bytes now, %llu when it was opened (truncated "
				  "while in use)", (unsigned long long)now,
				  (unsigned long long)slab_file_size(s));
			return SLAB_ERR_IO;
		}
	}
	return 0;
}

/* slab_loader_next(), waiting until deadline (CLOCK_MONOTONIC) at most when not NULL. */
static int next_until(struct slab_loader *l, struct slab_loader_batch **out,
		      const struct timespec *deadline)
{
	int rc = 0;

	if ((rc = usable(l)) < 0)
		return rc;
	pthread_mutex_lock(&l->mu);
	for (;;) {
		struct slab_loader_batch *b = NULL;
		int pending = 0;

		if (l->failed) {
			rc = l->failed;
			break;
		}
		/* slab_loader_stop() from another thread while this one waited. */
		if (l->stop) {
			rc = slab_fail(&l->err, SLAB_ERR_INVAL, NULL, "loader closed");
			break;
		}
		if (l->fault_rc) {
			rc = l->failed = slab_fail_from(&l->err, l->fault_rc, l->fault_err.text);
			break;
		}
		if (l->walk_rc) {
			rc = l->failed = slab_fail_from(&l->err, l->walk_rc, l->walk_err.text);
			break;
		}
		if (l->next_out >= l->nbatches) {
			rc = 0;
			break;
		}
		for (unsigned i = 0; i < l->o.ring; i++) {
			struct slab_loader_batch *s = &l->slots[i];

			if ((s->state == SLOT_FILLING || s->state == SLOT_READY) &&
			    s->number == l->next_out) {
				pending = 1;
				if (s->state == SLOT_READY)
					b = s;
			}
		}
		if (b && b->rc < 0) {
			rc = l->failed = slab_fail_from(&l->err, b->rc, b->err.text);
			break;
		}
		/* A batch whose every sample was skipped is not handed out: counted, its slot
		 * given back, and the next one waited for. */
		if (b && b->n == 0) {
			account(l, b);
			release_locked(l, b);
			continue;
		}
		if (b) {
			if ((rc = check_files(l, b)) < 0) {
				l->fault_rc = rc;
				rc = l->failed = slab_fail_from(&l->err, rc, l->fault_err.text);
				break;
			}
			account(l, b);
			l->st.batches++;
			*out = b;
			rc = 1;
			break;
		}
		/* Not taken by a worker and no slot free: the consumer holds them all. */
		if (!pending && l->nfree == 0) {
			if (l->o.ring == 1)
				rc = slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					       "the ring's one batch is held: release it first");
			else
				rc = slab_fail(&l->err, SLAB_ERR_INVAL, NULL,
					       "all %u batches of the ring are held: release one first",
					       l->o.ring);
			break;
		}
		if (!deadline) {
			pthread_cond_wait(&l->ready_cv, &l->mu);
		} else if (pthread_cond_timedwait(&l->ready_cv, &l->mu, deadline) == ETIMEDOUT) {
			rc = SLAB_LOADER_WAITING;
			break;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

int slab_loader_next(struct slab_loader *l, struct slab_loader_batch **out)
{
	return next_until(l, out, NULL);
}

int slab_loader_next_timed(struct slab_loader *l, struct slab_loader_batch **out, unsigned ms)
{
	struct timespec t;

	slab_deadline(&t, ms / 1000.0);
	return next_until(l, out, &t);
}

void slab_loader_release(struct slab_loader *l, struct slab_loader_batch *b)
{
	if (!l->plan || !b || b->l != l || forked(l) || l->stopped)
		return;
	pthread_mutex_lock(&l->mu);
	if (b->state == SLOT_HELD)
		release_locked(l, b);
	pthread_mutex_unlock(&l->mu);
}

uint64_t slab_loader_skipped(const struct slab_loader *l)
{
	return l->skipped;
}

const char *slab_loader_error(const struct slab_loader *l)
{
	return l->err.text;
}

void slab_loader_stop(struct slab_loader *l)
{
	if (!l || !l->plan || l->stopped)
		return;
	stop_threads(l);
	l->stopped = 1;
}

void slab_loader_close(struct slab_loader *l)
{
	if (!l)
		return;
	loader_clear(l);
	free(l);
}

uint64_t slab_loader_batch_number(const struct slab_loader_batch *b)
{
	return b->number;
}

size_t slab_loader_batch_count(const struct slab_loader_batch *b)
{
	return b->n;
}

size_t slab_loader_batch_skipped(const struct slab_loader_batch *b)
{
	return b->skipped;
}

int slab_loader_batch_sample(const struct slab_loader_batch *b, size_t j,
			     struct slab_loader_sample *out)
{
	if (j >= b->n)
		return SLAB_ERR_RANGE;
	*out = b->recs[j];
	return 0;
}

int slab_loader_batch_field(const struct slab_loader_batch *b, size_t j, unsigned f,
			    const unsigned char **data, uint64_t *size)
{
	const struct fref *fr;

	if (j >= b->n || f >= b->l->nf)
		return SLAB_ERR_RANGE;
	fr = &b->frefs[j * b->l->nf + f];
	*data = fr->data;
	*size = fr->size;
	return fr->data != NULL;
}

unsigned char *slab_loader_batch_out(const struct slab_loader_batch *b, size_t j)
{
	return b->out && j < b->n ? b->out + j * b->l->out_stride : NULL;
}

const int64_t *slab_loader_batch_labels(const struct slab_loader_batch *b)
{
	return b->labels;
}

const struct slab_loader_sample *slab_loader_batch_samples(const struct slab_loader_batch *b)
{
	return b->recs;
}

int slab_loader_batch_column(const struct slab_loader_batch *b, unsigned f,
			     const unsigned char **data, uint64_t *size)
{
	unsigned nf = b->l->nf;

	if (f >= nf)
		return SLAB_ERR_RANGE;
	for (size_t j = 0; j < b->n; j++) {
		data[j] = b->frefs[j * nf + f].data;
		size[j] = b->frefs[j * nf + f].size;
	}
	return 0;
}

void slab_loader_stats(struct slab_loader *l, struct slab_loader_stats *st)
{
	struct slab_loader_stats full;

	/* A fork() child may have the lock as a parent's thread held it: no lock there (no
	 * thread writes the counters either). */
	int locked = l->sync_ok && !forked(l);

	if (locked)
		pthread_mutex_lock(&l->mu);
	full = l->st;
	if (locked)
		pthread_mutex_unlock(&l->mu);
	full.size = sizeof(full);
	slab_sized_out(st, &full, sizeof(full), LOADER_STATS_FIRST);
}
