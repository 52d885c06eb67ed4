/* mkwds.c: writes sample WebDataset tars of synthetic JPEGs (fields jpg, cls, json) for the
 * tests, the demo and the benchmarks. Deterministic: the same arguments give the same bytes. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#define DEFAULT_COUNT   100
#define DEFAULT_QUALITY 90
#define DEFAULT_CLASSES 10
#define DEFAULT_WIDTH   256     /* give or take an eighth, per sample */
#define DEFAULT_HEIGHT  192
#define MIN_SIDE        16
#define MAX_SIDE        8192    /* keeps a picture under 200 MB of pixels */
#define MAX_JPEG_BYTES  (64ull << 20)
#define NOISE           24      /* texture amplitude: what makes the JPEGs photo-sized */
#define JPEG_OVERHEAD   600     /* about what TurboJPEG's headers and tables take */

static const char usage_text[] =
	"Usage: mkwds [--count N] [--seed S] [--width W --height H | --jpeg-bytes MIN:MAX]\n"
	"             [--quality Q] [--classes C] [--prefix P] [-o OUT.tar]\n"
	"\n"
	"Write a WebDataset tar of N synthetic samples to OUT.tar or standard output. Sample i\n"
	"has the key PREFIX followed by i in six digits and three fields: jpg, a JPEG of\n"
	"gradients, shapes and noise; cls, its class id as decimal text; json, {\"index\": i,\n"
	"\"class\": c, \"width\": w, \"height\": h}. The same arguments give the same bytes,\n"
	"however many CPUs make them.\n"
	"\n"
	"Options:\n"
	"      --count N             samples to write (default 100; 0 gives an empty tar)\n"
	"      --seed S              seed of the pseudo-random choices (default 1)\n"
	"      --width W             picture width, exactly; needs --height\n"
	"      --height H            picture height, exactly; needs --width\n"
	"                            (default: about 256x192, varying a little per sample)\n"
	"      --jpeg-bytes MIN:MAX  size each picture so its JPEG is roughly a byte count drawn\n"
	"                            from MIN..MAX (suffixes K, M: e.g. 100K:200K)\n"
	"      --quality Q           JPEG quality, 1..100 (default 90)\n"
	"      --classes C           class ids are 0..C-1 (default 10)\n"
	"      --prefix P            key prefix (default \"sample\")\n"
	"  -o, --output FILE         write to FILE ('-': standard output, the default)\n"
	"  -h, --help                show this help and exit\n";

enum {
	OPT_CLASSES = CHAR_MAX + 1,
	OPT_COUNT,
	OPT_HEIGHT,
	OPT_JPEG_BYTES,
	OPT_PREFIX,
	OPT_QUALITY,
	OPT_SEED,
	OPT_WIDTH,
};

static const struct option longopts[] = {
	{ "classes",    required_argument, NULL, OPT_CLASSES },
	{ "count",      required_argument, NULL, OPT_COUNT },
	{ "height",     required_argument, NULL, OPT_HEIGHT },
	{ "help",       no_argument,       NULL, 'h' },
	{ "jpeg-bytes", required_argument, NULL, OPT_JPEG_BYTES },
	{ "output",     required_argument, NULL, 'o' },
	{ "prefix",     required_argument, NULL, OPT_PREFIX },
	{ "quality",    required_argument, NULL, OPT_QUALITY },
	{ "seed",       required_argument, NULL, OPT_SEED },
	{ "width",      required_argument, NULL, OPT_WIDTH },
	{ NULL, 0, NULL, 0 }
};

struct opts {
	uint64_t count;
	uint64_t seed;
	uint64_t width, height;         /* 0: the default, varying size */
	uint64_t min_bytes, max_bytes;  /* 0: no size target */
	uint64_t quality;
	uint64_t classes;
	const char *prefix;
	const char *output;             /* NULL or "-": standard output */
};

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void error(const char *fmt, ...)
{
	va_list ap;

	/* Workers report too: keep each message whole. */
	flockfile(stderr);
	fputs("mkwds: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mkwds: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'mkwds --help' for more information.\n", stderr);
	return 2;
}

/* Decimal digits only: strtoull alone would take signs, spaces and "0x". */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "1048576", "64K", "2M", "1G", binary multiples, with an optional "B" or "iB". */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (shift && *end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v > UINT64_MAX >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	const char *colon = strchr(s, ':');
	char first[64];

	if (!colon || (size_t)(colon - s) >= sizeof(first))
		return -1;
	memcpy(first, s, (size_t)(colon - s));
	first[colon - s] = '\0';
	return parse_size(first, lo) == 0 && parse_size(colon + 1, hi) == 0 ? 0 : -1;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. The modulo bias is far below anything a test could see. */
static uint64_t below(uint64_t *state, uint64_t n)
{
	return splitmix64(state) % n;
}

static uint32_t isqrt(uint64_t n)
{
	/* sqrt() is exact-rounded, so this is the same everywhere; the loops fix its last bit. */
	uint64_t r = (uint64_t)sqrt((double)n);

	while (r * r > n)
		r--;
	while ((r + 1) * (r + 1) <= n)
		r++;
	return (uint32_t)r;
}

/*
 * Texture made once per run: random luma and chroma offsets already scaled to the noise
 * amplitude. A row reads NOISE_PERIOD + w values from a random start, so the lookups are
 * sequential and the tables stay in the L1 cache.
 */
#define NOISE_PERIOD 4096u
#define NOISE_LEN    (NOISE_PERIOD + MAX_SIDE)
struct tables {
	int8_t luma[NOISE_LEN];
	int8_t chroma[NOISE_LEN];
};

static void make_tables(struct tables *t, uint64_t seed)
{
	uint64_t st = seed ^ 0x6D6B7764735F6E73ull;     /* its own stream */

	for (uint32_t i = 0; i < NOISE_PERIOD; i++) {
		uint64_t r = splitmix64(&st);

		t->luma[i] = (int8_t)(((int)(r & 0xFF) - 128) * NOISE / 128);
		t->chroma[i] = (int8_t)(((int)(r >> 8 & 0xFF) - 128) * NOISE / 512);
	}
	for (uint32_t i = NOISE_PERIOD; i < NOISE_LEN; i++) {
		t->luma[i] = t->luma[i - NOISE_PERIOD];
		t->chroma[i] = t->chroma[i - NOISE_PERIOD];
	}
}

/*
 * A w x h RGB picture from seed: a two-colour linear gradient, a few flat discs and boxes,
 * then the noise texture over everything. The noise is what gives the JPEG a photo-like
 * number of bytes per pixel; the shapes give it edges. Integer arithmetic only, built a row
 * at a time in a small buffer: painting must not cost more than encoding. Colours keep
 * NOISE_MAX away from 0 and 255, so adding the noise needs no clamping.
 */
#define MAX_SHAPES 8
#define NOISE_MAX  (NOISE + NOISE / 4 + 1)
struct shape {
	uint32_t cx, cy, r;
	int disc;
	unsigned char col[3];
};

static unsigned char colour(uint64_t *st)
{
	return (unsigned char)(NOISE_MAX + below(st, 256 - 2 * NOISE_MAX));
}

static void paint(const struct tables *tab, unsigned char *restrict pix,
		  unsigned char *restrict row, uint32_t w, uint32_t h, uint64_t seed)
{
	uint64_t st = seed;
	int c0[3], c1[3];
	uint32_t ax = 1 + (uint32_t)below(&st, 255), ay = (uint32_t)below(&st, 256);
	uint64_t span = (uint64_t)(w - 1) * ax + (uint64_t)(h - 1) * ay + 1;
	uint64_t inv = (256ull << 24) / span;
	unsigned nshapes = 3 + (unsigned)below(&st, MAX_SHAPES - 2);
	unsigned char ramp[257][3];
	struct shape sh[MAX_SHAPES];

	for (int k = 0; k < 3; k++) {
		c0[k] = colour(&st);
		c1[k] = colour(&st);
	}
	for (int t = 0; t <= 256; t++)
		for (int k = 0; k < 3; k++)
			ramp[t][k] = (unsigned char)(c0[k] + ((c1[k] - c0[k]) * t) / 256);
	for (unsigned s = 0; s < nshapes; s++) {
		sh[s].cx = (uint32_t)below(&st, w);
		sh[s].cy = (uint32_t)below(&st, h);
		sh[s].r = 1 + (uint32_t)below(&st, (w < h ? w : h) / 3 + 1);
		sh[s].disc = (int)below(&st, 2);
		for (int k = 0; k < 3; k++)
			sh[s].col[k] = colour(&st);
	}

	for (uint32_t y = 0; y < h; y++) {
		/* Position along the gradient, 0..256 in 24-bit fixed point, stepped along x. */
		uint64_t pos = (uint64_t)y * ay * inv, step = ax * inv, r = splitmix64(&st);
		const int8_t *restrict nl = tab->luma + (r & (NOISE_PERIOD - 1));
		const int8_t *restrict nb = tab->chroma + (r >> 16 & (NOISE_PERIOD - 1));
		const int8_t *restrict nr = tab->chroma + (r >> 32 & (NOISE_PERIOD - 1));
		unsigned char *restrict p = pix + (size_t)y * w * 3;

		for (uint32_t x = 0; x < w; x++, pos += step)
			memcpy(row + (size_t)x * 3, ramp[pos >> 24], 3);
		for (unsigned s = 0; s < nshapes; s++) {
			uint64_t dy = y > sh[s].cy ? y - sh[s].cy : sh[s].cy - y;
			uint32_t half = sh[s].r, lo, hi;

			if (dy > sh[s].r)
				continue;
			/* A disc's chord on this row; a box is its bounding square. */
			if (sh[s].disc)
				half = isqrt((uint64_t)sh[s].r * sh[s].r - dy * dy);
			lo = sh[s].cx > half ? sh[s].cx - half : 0;
			hi = sh[s].cx + half < w ? sh[s].cx + half : w - 1;
			for (uint32_t x = lo; x <= hi; x++)
				memcpy(row + (size_t)x * 3, sh[s].col, 3);
		}
		for (uint32_t x = 0; x < w; x++) {
			p[x * 3] = (unsigned char)(row[x * 3] + nl[x] + nr[x]);
			p[x * 3 + 1] = (unsigned char)(row[x * 3 + 1] + nl[x]);
			p[x * 3 + 2] = (unsigned char)(row[x * 3 + 2] + nl[x] + nb[x]);
		}
	}
}

/* One sample: made by a worker, written by the main thread. */
enum { SLOT_FREE, SLOT_DONE, SLOT_FAILED };
struct sample {
	unsigned char *jpeg;
	size_t cap;
	size_t size;
	uint32_t w, h;
	uint64_t cls;
	int state;
};

/*
 * Shared by the workers and the writer: samples are claimed in order, made on any thread,
 * written in order. Sample i lives in slot i % nslots. Each sample depends only on the
 * options and its index, never on the others, so the thread count cannot change a byte.
 */
struct pool {
	const struct opts *o;
	struct tables tab;
	uint64_t milli_bpp;     /* JPEG bytes per 1000 pixels, from the calibration */
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* broadcast on any change: a slot done or freed, a stop */
	uint64_t next;          /* the next sample to claim */
	uint64_t written;       /* samples written so far */
	int stop;
	size_t nslots;
	struct sample *slot;
};

/* What one worker thread owns. */
struct worker {
	struct pool *pool;
	tjhandle tj;
	unsigned char *pix;     /* the picture, then one row of scratch */
	size_t pixcap;
	unsigned char *jpeg;    /* room for the worst case, as TJFLAG_NOREALLOC needs */
	size_t jpegcap;
	pthread_t thread;
	int started;
};

/* Paint and encode one w x h picture into wk->jpeg; its size, or 0 on failure. */
static size_t make_jpeg(struct worker *wk, uint32_t w, uint32_t h, uint64_t seed)
{
	size_t need = (size_t)w * h * 3 + (size_t)w * 3;
	unsigned long bound = tjBufSize((int)w, (int)h, TJSAMP_420), size;

	if (need > wk->pixcap) {
		free(wk->pix);
		wk->pix = malloc(need);
		wk->pixcap = wk->pix ? need : 0;
	}
	if (bound != (unsigned long)-1 && bound > wk->jpegcap) {
		free(wk->jpeg);
		wk->jpeg = malloc(bound);
		wk->jpegcap = wk->jpeg ? bound : 0;
	}
	if (!wk->pix || !wk->jpeg || bound == (unsigned long)-1) {
		error("out of memory for a %ux%u picture", (unsigned)w, (unsigned)h);
		return 0;
	}
	paint(&wk->pool->tab, wk->pix, wk->pix + (size_t)w * h * 3, w, h, seed);
	size = wk->jpegcap;
	if (tjCompress2(wk->tj, wk->pix, (int)w, 0, (int)h, TJPF_RGB, &wk->jpeg, &size,
			TJSAMP_420, (int)wk->pool->o->quality, TJFLAG_NOREALLOC) != 0) {
		error("JPEG encoding failed: %s", tjGetErrorStr2(wk->tj));
		return 0;
	}
	return size;
}

static uint32_t clamp_side(uint64_t v)
{
	return (uint32_t)(v < MIN_SIDE ? MIN_SIDE : v > MAX_SIDE ? MAX_SIDE : v);
}

/*
 * A picture whose JPEG is roughly target bytes. Past the headers, the bytes per pixel of
 * this generator hardly depend on the picture, so the calibration gives the pixel count; a
 * miss is tried again with this picture's own ratio.
 */
static size_t make_sized_jpeg(struct worker *wk, uint64_t target, uint64_t aspect_num,
			      uint64_t aspect_den, uint64_t seed, uint32_t *w, uint32_t *h)
{
	const struct opts *o = wk->pool->o;
	uint64_t pixels = (target - JPEG_OVERHEAD) * 1000 / wk->pool->milli_bpp;
	uint64_t best_miss = UINT64_MAX;
	uint32_t best_w = 0, best_h = 0;
	size_t size = 0;

	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t got, miss;

		*w = clamp_side(isqrt(pixels * aspect_num / aspect_den));
		*h = clamp_side(pixels / *w);
		size = make_jpeg(wk, *w, *h, seed);
		if (!size)
			return 0;
		got = (uint64_t)*w * *h;
		miss = size > target ? size - target : target - size;
		if (size < o->min_bytes || size > o->max_bytes)
			miss += UINT32_MAX;     /* out of range: worse than any miss in range */
		if (miss < best_miss) {
			best_miss = miss;
			best_w = *w;
			best_h = *h;
		}
		if (size >= o->min_bytes && size <= o->max_bytes &&
		    size * 10 >= target * 9 && size * 10 <= target * 11)
			return size;
		if ((*w == MIN_SIDE || *h == MIN_SIDE) && size > target)
			break;
		if ((*w == MAX_SIDE || *h == MAX_SIDE) && size < target)
			break;
		pixels = size > JPEG_OVERHEAD + 64 ?
			 got * (target - JPEG_OVERHEAD) / (size - JPEG_OVERHEAD) : got * 2;
	}
	/* Small pictures do not scale smoothly (whole MCUs, shapes of a few pixels): settle
	 * for the closest try. */
	if (*w != best_w || *h != best_h) {
		*w = best_w;
		*h = best_h;
		size = make_jpeg(wk, *w, *h, seed);
	}
	return size;
}

/* Bytes per pixel of a few pictures, for a first guess at the size of each sample. */
static int calibrate(struct worker *wk)
{
	uint64_t st = wk->pool->o->seed ^ 0x63616C6962726174ull, bytes = 0, pixels = 0;

	for (int k = 0; k < 4; k++) {
		size_t size = make_jpeg(wk, 400, 300, splitmix64(&st));

		if (!size)
			return -1;
		bytes += size - (size > JPEG_OVERHEAD ? JPEG_OVERHEAD : 0);
		pixels += 400 * 300;
	}
	wk->pool->milli_bpp = bytes * 1000 / pixels ? bytes * 1000 / pixels : 1;
	return 0;
}

static int make_sample(struct worker *wk, uint64_t i, struct sample *s)
{
	const struct opts *o = wk->pool->o;
	/* The i-th draw of a splitmix64 stream, reached directly: the seed of sample i. */
	uint64_t st = o->seed + i * 0x9E3779B97F4A7C15ull, pic_seed;
	size_t size;

	st = splitmix64(&st);
	pic_seed = splitmix64(&st);
	s->cls = below(&st, o->classes);
	if (o->max_bytes) {
		static const uint64_t aspects[][2] = {
			{ 4, 3 }, { 3, 2 }, { 1, 1 }, { 3, 4 }, { 16, 9 }, { 2, 3 }, { 5, 4 },
		};
		uint64_t target = o->min_bytes + below(&st, o->max_bytes - o->min_bytes + 1);
		const uint64_t *asp = aspects[below(&st, sizeof(aspects) / sizeof(aspects[0]))];

		size = make_sized_jpeg(wk, target, asp[0], asp[1], pic_seed, &s->w, &s->h);
	} else {
		if (o->width) {
			s->w = (uint32_t)o->width;
			s->h = (uint32_t)o->height;
		} else {
			s->w = DEFAULT_WIDTH - DEFAULT_WIDTH / 8 +
			       (uint32_t)below(&st, DEFAULT_WIDTH / 4 + 1);
			s->h = DEFAULT_HEIGHT - DEFAULT_HEIGHT / 8 +
			       (uint32_t)below(&st, DEFAULT_HEIGHT / 4 + 1);
		}
		size = make_jpeg(wk, s->w, s->h, pic_seed);
	}
	if (!size)
		return -1;
	if (size > s->cap) {
		free(s->jpeg);
		s->jpeg = malloc(size);
		s->cap = s->jpeg ? size : 0;
		if (!s->jpeg) {
			error("out of memory");
			return -1;
		}
	}
	memcpy(s->jpeg, wk->jpeg, size);
	s->size = size;
	return 0;
}

static void *work(void *arg)
{
	struct worker *wk = arg;
	struct pool *p = wk->pool;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct sample *s;
		uint64_t i;
		int ok;

		while (!p->stop && p->next < p->o->count && p->next - p->written >= p->nslots)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop || p->next >= p->o->count)
			break;
		i = p->next++;
		s = &p->slot[i % p->nslots];
		pthread_mutex_unlock(&p->mu);
		ok = make_sample(wk, i, s) == 0;
		pthread_mutex_lock(&p->mu);
		s->state = ok ? SLOT_DONE : SLOT_FAILED;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static unsigned cpu_count(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

/* libarchive's text, and the system's when it has an errno it did not spell out. Only the
 * writing thread calls this. */
static const char *archive_message(struct archive *a)
{
	static char buf[512];
	const char *m = archive_error_string(a);
	int err = archive_errno(a);

	if (!m)
		m = "unknown libarchive error";
	if (err > 0 && !strstr(m, strerror(err)))
		snprintf(buf, sizeof(buf), "%s: %s", m, strerror(err));
	else
		snprintf(buf, sizeof(buf), "%s", m);
	return buf;
}

static int add_file(struct archive *a, struct archive_entry *e, const char *name, const void *data,
		    size_t len)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    (len && archive_write_data(a, data, len) != (la_ssize_t)len)) {
		error("writing '%s': %s", name, archive_message(a));
		return -1;
	}
	return 0;
}

static int generate(const struct opts *o, int fd)
{
	struct pool *p = calloc(1, sizeof(*p));
	struct worker *wk = NULL;
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	size_t namecap = strlen(o->prefix) + 32;
	char *name = malloc(namecap), text[160];
	unsigned nworkers = cpu_count(), running = 0;
	int ret = -1, sync_ok = 0;

	if (!p || !a || !e || !name)
		goto nomem;
	p->o = o;
	p->nslots = 2 * (size_t)nworkers;
	p->slot = calloc(p->nslots, sizeof(*p->slot));
	wk = calloc(nworkers, sizeof(*wk));
	if (!p->slot || !wk)
		goto nomem;
	if (pthread_mutex_init(&p->mu, NULL) != 0)
		goto nomem;
	if (pthread_cond_init(&p->cv, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		goto nomem;
	}
	sync_ok = 1;
	make_tables(&p->tab, o->seed);
	for (unsigned k = 0; k < nworkers; k++) {
		wk[k].pool = p;
		if (!(wk[k].tj = tjInitCompress()))
			goto nomem;
	}
	if (o->max_bytes && calibrate(&wk[0]) < 0)
		goto out;

	/* No padding after the end-of-archive blocks, wherever the output goes: libarchive
	 * would otherwise pad pipes and devices to a 10240-byte block but not files. */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 65536) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		error("%s", archive_message(a));
		goto out;
	}
	for (unsigned k = 0; k < nworkers && o->count; k++) {
		if (pthread_create(&wk[k].thread, NULL, work, &wk[k]) != 0)
			break;
		wk[k].started = 1;
		running++;
	}
	if (o->count && !running) {
		error("cannot start a thread");
		goto out;
	}

	for (uint64_t i = 0; i < o->count; i++) {
		struct sample *s = &p->slot[i % p->nslots];
		int state;

		pthread_mutex_lock(&p->mu);
		while (s->state == SLOT_FREE)
			pthread_cond_wait(&p->cv, &p->mu);
		state = s->state;
		pthread_mutex_unlock(&p->mu);
		if (state == SLOT_FAILED)
			goto out;

		snprintf(name, namecap, "%s%06llu.jpg", o->prefix, (unsigned long long)i);
		if (add_file(a, e, name, s->jpeg, s->size) < 0)
			goto out;
		snprintf(name, namecap, "%s%06llu.cls", o->prefix, (unsigned long long)i);
		snprintf(text, sizeof(text), "%llu", (unsigned long long)s->cls);
		if (add_file(a, e, name, text, strlen(text)) < 0)
			goto out;
		snprintf(name, namecap, "%s%06llu.json", o->prefix, (unsigned long long)i);
		snprintf(text, sizeof(text), "{\"index\": %llu, \"class\": %llu, \"width\": %u, "
			 "\"height\": %u}", (unsigned long long)i, (unsigned long long)s->cls,
			 (unsigned)s->w, (unsigned)s->h);
		if (add_file(a, e, name, text, strlen(text)) < 0)
			goto out;

		pthread_mutex_lock(&p->mu);
		s->state = SLOT_FREE;
		p->written++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		error("%s", archive_message(a));
		goto out;
	}
	ret = 0;
	goto out;
nomem:
	error("out of memory");
out:
	if (sync_ok) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	for (unsigned k = 0; wk && k < nworkers; k++) {
		if (wk[k].started)
			pthread_join(wk[k].thread, NULL);
		if (wk[k].tj)
			tjDestroy(wk[k].tj);
		free(wk[k].pix);
		free(wk[k].jpeg);
	}
	if (sync_ok) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
	}
	for (size_t k = 0; p && p->slot && k < p->nslots; k++)
		free(p->slot[k].jpeg);
	if (p)
		free(p->slot);
	free(p);
	free(wk);
	free(name);
	archive_entry_free(e);
	archive_write_free(a);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.count = DEFAULT_COUNT, .seed = 1, .quality = DEFAULT_QUALITY,
		.classes = DEFAULT_CLASSES, .prefix = "sample",
	};
	struct stat st;
	int c, fd = STDOUT_FILENO, regular = 0;

	opterr = 0;     /* getopt's messages would start with argv[0], not "mkwds" */
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CLASSES:
			if (parse_u64(optarg, 1, UINT32_MAX, &o.classes) < 0)
				return usage_error("bad class count '%s' (1..%u)", optarg,
						   UINT32_MAX);
			break;
		case OPT_COUNT:
			if (parse_u64(optarg, 0, 100000000, &o.count) < 0)
				return usage_error("bad sample count '%s' (0..100000000)", optarg);
			break;
		case OPT_HEIGHT:
			if (parse_u64(optarg, 1, MAX_SIDE, &o.height) < 0)
				return usage_error("bad height '%s' (1..%d)", optarg, MAX_SIDE);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : 1;
		case OPT_JPEG_BYTES:
			if (parse_range(optarg, &o.min_bytes, &o.max_bytes) < 0 ||
			    o.min_bytes < 1024 || o.min_bytes > o.max_bytes ||
			    o.max_bytes > MAX_JPEG_BYTES)
				return usage_error("bad JPEG size range '%s' (MIN:MAX, 1K <= MIN "
						   "<= MAX <= 64M)", optarg);
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_PREFIX:
			if (!*optarg || strchr(optarg, '.') || strlen(optarg) > 200)
				return usage_error("bad prefix '%s' (1 to 200 bytes, no '.')",
						   optarg);
			o.prefix = optarg;
			break;
		case OPT_QUALITY:
			if (parse_u64(optarg, 1, 100, &o.quality) < 0)
				return usage_error("bad quality '%s' (1..100)", optarg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &o.seed) < 0)
				return usage_error("bad seed '%s'", optarg);
			break;
		case OPT_WIDTH:
			if (parse_u64(optarg, 1, MAX_SIDE, &o.width) < 0)
				return usage_error("bad width '%s' (1..%d)", optarg, MAX_SIDE);
			break;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			/* optopt names a short option only when the word is not a long one. */
			if (strncmp(argv[optind - 1], "--", 2) == 0)
				return usage_error("bad option '%s'", argv[optind - 1]);
			return usage_error("unknown option '-%c'", optopt);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.width != !o.height)
		return usage_error("--width and --height go together");
	if (o.width && o.max_bytes)
		return usage_error("--width/--height and --jpeg-bytes exclude each other");

	if (o.output && strcmp(o.output, "-") != 0) {
		fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			error("'%s': %s", o.output, strerror(errno));
			return 1;
		}
		/* After a failure, remove what we wrote, but never a device or a FIFO. */
		regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	}
	if (isatty(fd)) {
		if (fd != STDOUT_FILENO)
			close(fd);
		return usage_error("refusing to write a tar to a terminal; use -o or a pipe");
	}
	if (generate(&o, fd) < 0)
		goto fail;
	if (fd != STDOUT_FILENO && close(fd) != 0) {
		fd = -1;
		error("'%s': %s", o.output, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0 && fd != STDOUT_FILENO)
		close(fd);
	if (regular)
		unlink(o.output);
	return 1;
}
