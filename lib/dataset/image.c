/* image.c: one image to a fixed-size uint8 crop (RGB, grey or RGBA): the crop parameters, the
 * format found by the image's first bytes and its decoder (imgfmt.h: image_jpeg.c, ...) asked
 * for only what the crop needs, alpha composited or the pixels made grey as the spec says,
 * then the resize: PIL's BILINEAR resample with reducing (a triangle filter widened by the
 * downscale factor, separable, 22-bit fixed-point weights), or PIL's NEAREST. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#if defined(__SSE2__) && !defined(SLAB_NO_SSE2)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

#include "errfmt.h"
#include "error.h"
#include "imgfmt.h"
#include "slab.h"
#include "scratch.h"

/* ---- crop parameters ------------------------------------------------------------------ */

/*
 * The random generator: counter-based, so a draw depends only on (seed, epoch, index, n) and
 * never on which thread asks or what it asked before. The key is SplitMix64's finaliser
 * chained over the three inputs, key = mix(mix(mix(seed) ^ epoch) ^ index); draw n is
 * SplitMix64's n-th output from that key, mix(key + (n + 1) * golden) with mix the finaliser
 * (Stafford's variant 13). Draw 0 decides the flip; the crop takes draws 1, 2, ...
 */
#define GOLDEN 0x9e3779b97f4a7c15ULL

static uint64_t fmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t draw(uint64_t key, uint64_t n)
{
	return fmix(key + (n + 1) * GOLDEN);
}

/* Uniform in [0, 1), 53 bits. */
static double unit(uint64_t x)
{
	return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n >= 1. */
static uint32_t below(uint64_t x, uint32_t n)
{
	uint64_t v = (uint64_t)(unit(x) * n);

	return v < n ? (uint32_t)v : n - 1;
}

/* The generator for the video pipeline's draws (imgfmt.h), the same functions. */
uint64_t slab_image_key(uint64_t seed, uint64_t epoch, uint64_t index)
{
	return fmix(fmix(fmix(seed) ^ epoch) ^ index);
}

uint64_t slab_image_draw(uint64_t key, uint64_t n)
{
	return draw(key, n);
}

double slab_image_unit(uint64_t x)
{
	return unit(x);
}

void slab_image_spec_init(struct slab_image_spec *spec, uint32_t out_w, uint32_t out_h)
{
	memset(spec, 0, sizeof(*spec));
	spec->out_w = out_w;
	spec->out_h = out_h;
	spec->crop = SLAB_IMAGE_CROP_CENTER;
	spec->scale_min = 0.08;
	spec->scale_max = 1.0;
	spec->ratio_min = 3.0 / 4.0;
	spec->ratio_max = 4.0 / 3.0;
	spec->center_ratio = 1.0;
	spec->background[0] = spec->background[1] = spec->background[2] = 255;
}

/* The output's channels: 3 for 0. */
static unsigned out_channels(const struct slab_image_spec *s)
{
	return s->channels == 0 ? 3 : s->channels;
}

static int spec_ok(const struct slab_image_spec *s)
{
	if (s->out_w < 1 || s->out_w > 65535 || s->out_h < 1 || s->out_h > 65535)
		return 0;
	if (s->channels != 0 && s->channels != 1 && s->channels != 3 && s->channels != 4)
		return 0;
	if (s->alpha != SLAB_IMAGE_ALPHA_DROP && s->alpha != SLAB_IMAGE_ALPHA_COMPOSITE)
		return 0;
	if (s->alpha == SLAB_IMAGE_ALPHA_COMPOSITE && s->channels == 4)
		return 0;
	if (s->resize != SLAB_IMAGE_RESIZE_BILINEAR && s->resize != SLAB_IMAGE_RESIZE_NEAREST)
		return 0;
	if (s->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED) {
		if (!(s->scale_min > 0 && s->scale_min <= s->scale_max && s->scale_max <= 1.0))
			return 0;
		if (!(s->ratio_min > 0 && s->ratio_min <= s->ratio_max && isfinite(s->ratio_max)))
			return 0;
	}
	if (s->crop == SLAB_IMAGE_CROP_CENTER && s->center_ratio != 0 &&
	    !(s->center_ratio > 0 && s->center_ratio <= 1.0))
		return 0;
	return s->crop == SLAB_IMAGE_CROP_NONE || s->crop == SLAB_IMAGE_CROP_CENTER ||
	       s->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED;
}

int slab_image_spec_ok(const struct slab_image_spec *spec)
{
	return spec_ok(spec);
}

/* a * b / c rounded to nearest, at least 1 and at most max. */
static uint32_t scaled(uint32_t a, uint32_t b, uint32_t c, uint32_t max)
{
	uint64_t v = ((uint64_t)a * b * 2 + c) / ((uint64_t)c * 2);

	if (v < 1)
		v = 1;
	return v > max ? max : (uint32_t)v;
}

/* side * r rounded half up, as scaled() rounds, at least 1; r in (0, 1], 0 taken as 1. */
static uint32_t ratio_side(uint32_t side, double r)
{
	double v;

	if (r == 0 || r == 1)
		return side;
	v = floor((double)side * r + 0.5);
	return v < 1 ? 1 : v > side ? side : (uint32_t)v;
}

/* torchvision's RandomResizedCrop.get_params, draw for draw: up to 10 tries of an area
 * fraction uniform in the scale range and an aspect ratio log-uniform in the ratio range;
 * then the whole image clamped to the ratio range, centred. Python's round() is
 * round-half-even, as nearbyint() in the default rounding mode. */
static void random_resized(const struct slab_image_spec *s, uint32_t W, uint32_t H,
			   uint64_t key, struct slab_image_params *p)
{
	double area = (double)W * H, lr0 = log(s->ratio_min), lr1 = log(s->ratio_max);
	double in_ratio = (double)W / H;
	uint64_t n = 1;

	for (int attempt = 0; attempt < 10; attempt++) {
		double target = area * (s->scale_min + (s->scale_max - s->scale_min) *
					unit(draw(key, n++)));
		double ar = exp(lr0 + (lr1 - lr0) * unit(draw(key, n++)));
		double w = nearbyint(sqrt(target * ar)), h = nearbyint(sqrt(target / ar));

		if (w > 0 && w <= W && h > 0 && h <= H) {
			p->w = (uint32_t)w;
			p->h = (uint32_t)h;
			p->y = below(draw(key, n++), H - p->h + 1);
			p->x = below(draw(key, n++), W - p->w + 1);
			p->fallback = 0;
			return;
		}
	}
	if (in_ratio < s->ratio_min) {
		p->w = W;
		p->h = (uint32_t)nearbyint(W / s->ratio_min);
	} else if (in_ratio > s->ratio_max) {
		p->h = H;
		p->w = (uint32_t)nearbyint(H * s->ratio_max);
	} else {
		p->w = W;
		p->h = H;
	}
	p->w = p->w < 1 ? 1 : p->w > W ? W : p->w;
	p->h = p->h < 1 ? 1 : p->h > H ? H : p->h;
	p->x = (W - p->w) / 2;
	p->y = (H - p->h) / 2;
	p->fallback = 1;
}

int slab_image_params(const struct slab_image_spec *spec, uint32_t src_w, uint32_t src_h,
		      uint64_t seed, uint64_t epoch, uint64_t index, struct slab_image_params *p)
{
	uint64_t key = fmix(fmix(fmix(seed) ^ epoch) ^ index);

	memset(p, 0, sizeof(*p));
	if (!spec_ok(spec) || src_w == 0 || src_h == 0)
		return SLAB_ERR_INVAL;
	switch (spec->crop) {
	case SLAB_IMAGE_CROP_NONE:
		p->w = src_w;
		p->h = src_h;
		break;
	case SLAB_IMAGE_CROP_CENTER:
		/* Floor of half the margin, as PIL's ImageOps.fit with centring 0.5 would not
		 * promise and torchvision's CenterCrop rounds: documented, tested, stable. The
		 * limiting side times center_ratio, the other from the output's aspect. */
		if ((uint64_t)src_w * spec->out_h > (uint64_t)src_h * spec->out_w) {
			p->h = ratio_side(src_h, spec->center_ratio);
			p->w = scaled(p->h, spec->out_w, spec->out_h, src_w);
		} else {
			p->w = ratio_side(src_w, spec->center_ratio);
			p->h = scaled(p->w, spec->out_h, spec->out_w, src_h);
		}
		p->x = (src_w - p->w) / 2;
		p->y = (src_h - p->h) / 2;
		break;
	default:
		random_resized(spec, src_w, src_h, key, p);
		break;
	}
	p->flip = spec->flip ? (int)(draw(key, 0) >> 63) : 0;
	return 0;
}

/* ---- decoder --------------------------------------------------------------------------- */

/* The formats, tried in this order on an image's first bytes. */
static const struct slab_image_format *const formats[] = {
	&slab_image_jpeg,
	&slab_image_png,
	&slab_image_webp,
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct slab_image_decoder {
	void *state[NFORMATS];           /* each format's, made when first met */
	struct slab_image_limits lim;
	struct slab_err err;
	struct slab_scratch pix;         /* decoded region, 4 bytes a pixel */
	struct slab_scratch tmp;         /* horizontally resized rows */
	struct slab_scratch xb, yb;      /* int32_t [2] per output pixel: first source pixel, count */
	struct slab_scratch xk, yk;      /* int32_t weights, ksize per output pixel */
	struct slab_scratch acc;         /* int32_t sums of one output row, vertical pass */
	struct slab_scratch xk16, yk16;  /* the weights as int16 pairs (SSE2) */
	struct slab_scratch line;        /* one output row before flip or reordering */
	struct slab_scratch nx;          /* nearest: each output column's source byte offset */
};

struct slab_image_decoder *slab_image_decoder_new(void)
{
	struct slab_image_decoder *d = calloc(1, sizeof(*d));

	if (d)
		slab_image_decoder_limits(d, 0, 0);
	return d;
}

void slab_image_decoder_limits(struct slab_image_decoder *d, uint64_t max_pixels,
			       unsigned max_scans)
{
	d->lim.max_pixels = max_pixels ? max_pixels : SLAB_IMAGE_MAX_PIXELS;
	d->lim.max_scans = max_scans ? max_scans : SLAB_IMAGE_MAX_SCANS;
}

void slab_image_decoder_free(struct slab_image_decoder *d)
{
	if (!d)
		return;
	for (size_t k = 0; k < NFORMATS; k++)
		formats[k]->state_free(d->state[k]);
	slab_scratch_free(&d->pix);
	slab_scratch_free(&d->tmp);
	slab_scratch_free(&d->xb);
	slab_scratch_free(&d->yb);
	slab_scratch_free(&d->xk);
	slab_scratch_free(&d->yk);
	slab_scratch_free(&d->acc);
	slab_scratch_free(&d->xk16);
	slab_scratch_free(&d->yk16);
	slab_scratch_free(&d->line);
	slab_scratch_free(&d->nx);
	free(d);
}

const char *slab_image_error(const struct slab_image_decoder *d)
{
	return d->err.text;
}

/*
 * The resize's weight tables cost about 24 bytes a pixel of each side (coeffs(): a tap of 4
 * bytes and its 16-bit vector, two taps a source pixel), the memory of 6 pixels of 4 bytes:
 * next to a picture's own pixels nothing, but a strip of 40000000x1 (a PNG of 39 KB) took
 * 0.9 GB to resize and one of the limit's length would have taken 4 GB. Such a strip is over
 * the limit when its tables alone are: its resize never needs more than the largest picture
 * the limit lets in. Tables under 16 MB are always let through, whatever the limit.
 */
#define SIDE_PIXELS 6u
#define SIDE_FREE (4ull << 20)

int slab_image_over_pixels(const char *name, uint32_t w, uint32_t h,
			   const struct slab_image_limits *lim, struct slab_err *err)
{
	uint64_t n = (uint64_t)w * h, side = SIDE_PIXELS * ((uint64_t)w + h);

	if (n > lim->max_pixels)
		return slab_fail(err, SLAB_ERR_LIMIT, NULL, "%s of %ux%u pixels (%llu): over the "
				 "limit of %llu pixels", name, w, h, (unsigned long long)n,
				 (unsigned long long)lim->max_pixels);
	if (side > lim->max_pixels && side > SIDE_FREE)
		return slab_fail(err, SLAB_ERR_LIMIT, NULL, "%s of %ux%u pixels: resizing it takes "
				 "the memory of %llu pixels, over the limit of %llu pixels", name,
				 w, h, (unsigned long long)side, (unsigned long long)lim->max_pixels);
	return 0;
}

int slab_image_crop_check(const struct slab_image_params *p, uint32_t w, uint32_t h,
			  struct slab_err *err)
{
	if ((uint64_t)p->x + p->w > w || (uint64_t)p->y + p->h > h || p->w == 0 || p->h == 0)
		return slab_fail(err, SLAB_ERR_INVAL, NULL, "crop %ux%u+%u+%u outside a %ux%u image",
				 p->w, p->h, p->x, p->y, w, h);
	return 0;
}

void slab_image_box(const struct slab_image_params *p, unsigned denom, uint32_t ow, uint32_t oh,
		    int exact, struct slab_image_region *r, uint32_t *ix0, uint32_t *ix1,
		    uint32_t *iy0, uint32_t *iy1)
{
	/* Each scaled pixel is denom x denom source pixels. */
	r->x0 = (double)p->x / denom;
	r->x1 = fmin((double)(p->x + p->w) / denom, ow);
	r->y0 = (double)p->y / denom;
	r->y1 = fmin((double)(p->y + p->h) / denom, oh);
	*ix0 = (uint32_t)floor(r->x0);
	*ix1 = (uint32_t)fmin(ceil(r->x1), ow);
	*iy0 = (uint32_t)floor(r->y0);
	*iy1 = (uint32_t)fmin(ceil(r->y1), oh);
	if (exact) {
		*ix0 = *iy0 = 0;
		*ix1 = ow;
		*iy1 = oh;
	}
}

/* The format of an image's bytes, with its state made: 0 and *k, or the error, which names
 * the format whose signature the bytes are the start of (a file cut short), else the formats
 * known and the first bytes. */
static int find_format(struct slab_image_decoder *d, const unsigned char *p, size_t len,
		       size_t *k)
{
	char known[64] = "", first[32] = "";

	if (!p || len == 0)
		return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "not an image: no bytes");
	for (*k = 0; *k < NFORMATS; (*k)++) {
		if (!formats[*k]->probe(p, len))
			continue;
		if (!d->state[*k] && !(d->state[*k] = formats[*k]->state_new()))
			return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory making a %s "
					 "decoder", formats[*k]->name);
		return 0;
	}
	for (size_t f = 0; f < NFORMATS; f++)
		if (formats[f]->cut_short(p, len))
			return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt %s: the data "
					 "ends after %zu %s, inside its signature",
					 formats[f]->name, len, slab_plural(len, "byte", "bytes"));
	for (size_t f = 0; f < NFORMATS; f++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 f == 0 ? "" : f + 1 == NFORMATS ? " or " : ", ", formats[f]->name);
	for (size_t i = 0; i < len && i < 4; i++)
		snprintf(first + strlen(first), sizeof(first) - strlen(first), "%s0x%02x",
			 i ? " " : "", p[i]);
	return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "not a %s image: starts with %s", known,
			 first);
}

int slab_image_size(struct slab_image_decoder *d, const void *data, size_t len,
		    uint32_t *w, uint32_t *h)
{
	size_t k;
	int ret = find_format(d, data, len, &k);

	if (ret == 0)
		ret = formats[k]->size(d->state[k], &d->lim, data, len, w, h, &d->err);
	return ret;
}

/* ---- resize ---------------------------------------------------------------------------- */

#define PRECISION_BITS (32 - 8 - 2)

static double triangle(double x)
{
	if (x < 0)
		x = -x;
	return x < 1.0 ? 1.0 - x : 0.0;
}

/* PIL's precompute_coeffs for the BILINEAR filter, over the box [in0, in1) of a line of
 * pixels, the support clamped to [floor(in0), ceil(in1)) so that nothing outside the crop
 * weighs in (as when the crop is cut out first), then 22-bit fixed point. Fills bounds
 * (first, count per output pixel) and weights (ksize per output pixel); returns ksize. */
static int coeffs(struct slab_scratch *bounds, struct slab_scratch *weights, double in0, double in1,
		  uint32_t insize, uint32_t outsize)
{
	double scale = (in1 - in0) / outsize, fscale = scale < 1.0 ? 1.0 : scale;
	double support = fscale, ss = 1.0 / fscale;
	int ksize = (int)ceil(support) * 2 + 1;
	double lo = floor(in0), hi = fmin(ceil(in1), insize);
	int32_t *b, *k;

	if (slab_scratch_reserve(bounds, (size_t)outsize * 2 * sizeof(int32_t)) < 0 ||
	    slab_scratch_reserve(weights, (size_t)outsize * (size_t)ksize * sizeof(int32_t)) < 0)
		return SLAB_ERR_NOMEM;
	b = bounds->p;
	k = weights->p;
	for (uint32_t xx = 0; xx < outsize; xx++) {
		double center = in0 + (xx + 0.5) * scale, ww = 0.0;
		double xmin = floor(center - support + 0.5), xmax = floor(center + support + 0.5);
		int n;
		int32_t *kx = k + (size_t)xx * ksize;
		double tmp[64];
		double *kd = ksize <= 64 ? tmp : NULL;

		if (xmin < lo)
			xmin = lo;
		if (xmax > hi)
			xmax = hi;
		n = (int)(xmax - xmin);
		if (n > ksize)
			n = ksize;
		if (n < 1) {
			/* A box thinner than a pixel at an edge: take the nearest pixel. */
			xmin = fmin(fmax(floor(center), lo), hi - 1);
			n = 1;
		}
		for (int x = 0; x < n; x++) {
			double f = triangle((x + xmin - center + 0.5) * ss);

			if (kd)
				kd[x] = f;
			ww += f;
		}
		for (int x = 0; x < n; x++) {
			double f = kd ? kd[x] : triangle((x + xmin - center + 0.5) * ss);
			double v = ww != 0.0 ? f / ww : (n == 1 ? 1.0 : 0.0);

			kx[x] = (int32_t)(v < 0 ? -0.5 + v * (1 << PRECISION_BITS) :
					  0.5 + v * (1 << PRECISION_BITS));
		}
		b[2 * xx] = (int32_t)xmin;
		b[2 * xx + 1] = n;
	}
	return ksize;
}

/* The horizontal pass over one row of 4-byte pixels s into W RGB pixels t (3 W bytes, and
 * one byte after them may be written: the caller leaves room). */
#ifdef HAVE_SSE2
/* Weights in H16_BITS fixed point, two taps a step: pmaddwd multiplies the pair of pixels
 * (r0 r1 g0 g1 b0 b1 x0 x1, 16 bits each) by (k0 k1) x 4 and adds each channel's two products. */
#define H16_BITS 14

/* A running sum of PRECISION_BITS weights in H16_BITS, rounded. */
static int32_t r16(int32_t sum)
{
	return (sum + (1 << (PRECISION_BITS - H16_BITS - 1))) >> (PRECISION_BITS - H16_BITS);
}

/*
 * Tap i's weight in H16_BITS, given the PRECISION_BITS weights' running sums before it
 * (before) and with it (upto): the difference of the rounded sums. Rounding each weight on
 * its own would add up its error over the taps: PIL's weights are often ties at this
 * precision (a downscale by 128 gives 127.5, 126.5, ...), all rounded up, so that a row of
 * white came out 257/256 bright (clipped to 255, and greys a level or two too light); and
 * at a downscale by thousands, weights under one unit rounded to 0 or 1 made a flat colour
 * dozens of levels off. Rounded as running sums, the weights of an output pixel add up to
 * its PRECISION_BITS weights' sum rounded, and each tap is within one unit of its own.
 */
static short w16(int32_t before, int32_t upto)
{
	return (short)(r16(upto) - r16(before));
}

static __m128i *aligned16(void *p)
{
	return (__m128i *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
}

/* The weights xk (ksize per output pixel, PRECISION_BITS; the first xb[2 x + 1] of output
 * pixel x's in use) as the (k0 k1 k0 k1 ...) vectors of each tap pair: pairs of them per
 * output pixel, the taps past those in use 0. */
static int coeffs16(struct slab_scratch *k16, const int32_t *xb, const int32_t *xk, int ksize,
		    uint32_t W)
{
	int pairs = (ksize + 1) / 2;
	__m128i *v;

	if (slab_scratch_reserve(k16, (size_t)W * (size_t)pairs * sizeof(__m128i) + 16) < 0)
		return SLAB_ERR_NOMEM;
	v = aligned16(k16->p);
	for (uint32_t x = 0; x < W; x++) {
		const int32_t *k = xk + (size_t)x * ksize;
		int n = xb[2 * x + 1];
		int32_t sum = 0, before;

		for (int p = 0; p < pairs; p++) {
			short k0 = 0, k1 = 0;

			if (2 * p < n) {
				before = sum;
				sum += k[2 * p];
				k0 = w16(before, sum);
			}
			if (2 * p + 1 < n) {
				before = sum;
				sum += k[2 * p + 1];
				k1 = w16(before, sum);
			}
			v[(size_t)x * pairs + p] = _mm_set_epi16(k1, k0, k1, k0, k1, k0, k1, k0);
		}
	}
	return pairs;
}

/* One output row of the vertical pass: the n rows from t (row bytes apart) weighed by kv's
 * pairs (k, the same weights in PRECISION_BITS, for the tail), into dst; 16 bytes a step,
 * two rows a multiply-add. */
static void vpass(const unsigned char *t, size_t row, int n, const __m128i *kv,
		  const int32_t *k, unsigned char *dst)
{
	const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(1 << (H16_BITS - 1));
	size_t j = 0;

	for (; j + 16 <= row; j += 16) {
		__m128i a0 = half, a1 = half, a2 = half, a3 = half;
		const unsigned char *tp = t + j;

		for (int i = 0; i < n; i += 2, tp += 2 * row) {
			__m128i r0 = _mm_loadu_si128((const __m128i *)(const void *)tp);
			__m128i r1 = i + 1 < n ? _mm_loadu_si128((const __m128i *)(const void *)(tp + row))
					       : zero;
			__m128i lo = _mm_unpacklo_epi8(r0, r1), hi = _mm_unpackhi_epi8(r0, r1);
			__m128i kk = _mm_load_si128(kv + i / 2);

			a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), kk));
			a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), kk));
			a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), kk));
			a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), kk));
		}
		a0 = _mm_packs_epi32(_mm_srai_epi32(a0, H16_BITS), _mm_srai_epi32(a1, H16_BITS));
		a2 = _mm_packs_epi32(_mm_srai_epi32(a2, H16_BITS), _mm_srai_epi32(a3, H16_BITS));
		_mm_storeu_si128((__m128i *)(void *)(dst + j), _mm_packus_epi16(a0, a2));
	}
	for (; j < row; j++) {
		int32_t sum = 1 << (H16_BITS - 1), upto = 0, before;

		for (int i = 0; i < n; i++) {
			before = upto;
			upto += k[i];
			sum += t[(size_t)i * row + j] * w16(before, upto);
		}
		sum >>= H16_BITS;
		dst[j] = (unsigned char)(sum < 0 ? 0 : sum > 255 ? 255 : sum);
	}
}

/* The horizontal pass of one row: each output pixel's four channels summed with its
 * weights, bpp bytes of it kept (3: RGB, 4: RGBA; with 3, the fourth byte written is
 * overwritten by the next pixel, hence the byte of room after a row). Always inlined with bpp
 * a constant, so each caller's loop is as if written for its bpp alone. */
static inline __attribute__((always_inline)) void
hpass_bpp(const unsigned char *s, unsigned char *t, uint32_t W, const int32_t *xb,
	  const __m128i *kv, int pairs, size_t bpp)
{
	const __m128i zero = _mm_setzero_si128(), half = _mm_set1_epi32(1 << (H16_BITS - 1));

	for (uint32_t x = 0; x < W; x++, kv += pairs) {
		const unsigned char *sp = s + (size_t)xb[2 * x] * 4;
		int n = xb[2 * x + 1], i = 0;
		__m128i acc = half, p;
		uint32_t px;

		for (; i + 1 < n; i += 2, sp += 8) {
			p = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)sp), zero);
			p = _mm_unpacklo_epi16(p, _mm_srli_si128(p, 8));
			acc = _mm_add_epi32(acc, _mm_madd_epi16(p, _mm_load_si128(kv + i / 2)));
		}
		if (i < n) {
			memcpy(&px, sp, 4);
			p = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)px), zero);
			p = _mm_unpacklo_epi16(p, zero);
			acc = _mm_add_epi32(acc, _mm_madd_epi16(p, _mm_load_si128(kv + i / 2)));
		}
		acc = _mm_srai_epi32(acc, H16_BITS);
		acc = _mm_packus_epi16(_mm_packs_epi32(acc, acc), acc);
		px = (uint32_t)_mm_cvtsi128_si32(acc);
		memcpy(t + bpp * x, &px, 4);
	}
}
#endif

/* Sums fit in 32 bits: the weights of one output pixel add up to 1 << PRECISION_BITS and are
 * never negative (a triangle), so a sum is at most 255 << 22 plus the rounding half. */
static unsigned char clip8(int32_t v)
{
	v >>= PRECISION_BITS;
	return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v;
}

/* The horizontal pass for one channel (grey, or a palette PNG's indices): W bytes out. */
static void hpass1(const unsigned char *s, unsigned char *t, uint32_t W, const int32_t *xb,
		   const int32_t *xk, int kx)
{
	for (uint32_t x = 0; x < W; x++) {
		const int32_t *k = xk + (size_t)x * kx;
		const unsigned char *sp = s + xb[2 * x];
		int32_t s0 = 1 << (PRECISION_BITS - 1);
		int n = xb[2 * x + 1];

		for (int i = 0; i < n; i++)
			s0 += sp[i] * k[i];
		t[x] = clip8(s0);
	}
}

#ifndef HAVE_SSE2
/* acc[j] += t[j] * w: the vertical pass's inner loop without SSE2 (the Makefile builds this
 * file with the vectoriser's dynamic cost model, and restrict tells it acc and t never
 * overlap). */
static void add_row(int32_t *restrict acc, const unsigned char *restrict t, size_t n, int32_t w)
{
	for (size_t j = 0; j < n; j++)
		acc[j] += t[j] * w;
}

/* The horizontal pass of one row without SSE2: bpp channels (3 or 4) of each 4-byte pixel,
 * always inlined with bpp a constant (with 3 the fourth sum is never made). */
static inline __attribute__((always_inline)) void
hpass_bpp(const unsigned char *s, unsigned char *t, uint32_t W, const int32_t *xb,
	  const int32_t *xk, int kx, size_t bpp)
{
	for (uint32_t x = 0; x < W; x++) {
		const int32_t *k = xk + (size_t)x * kx;
		const unsigned char *sp = s + (size_t)xb[2 * x] * 4;
		int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0, s3 = s0;
		int n = xb[2 * x + 1];

		for (int i = 0; i < n; i++, sp += 4) {
			s0 += sp[0] * k[i];
			s1 += sp[1] * k[i];
			s2 += sp[2] * k[i];
			if (bpp == 4)
				s3 += sp[3] * k[i];
		}
		t[bpp * x] = clip8(s0);
		t[bpp * x + 1] = clip8(s1);
		t[bpp * x + 2] = clip8(s2);
		if (bpp == 4)
			t[bpp * x + 3] = clip8(s3);
	}
}
#endif

/* ---- channels: alpha, grey ------------------------------------------------------------ */

/* (((a >> 8) + a) >> 8): a / 255 for the sums below, as PIL's SHIFTFORDIV255. */
static uint32_t div255(uint32_t a)
{
	return ((a >> 8) + a) >> 8;
}

/* n RGBA pixels over an opaque background bg, in place, alpha made 255: PIL's
 * alpha_composite(background, image) to the bit (its 7-bit fixed point, which for an opaque
 * background is colour = (128 (c a + bg (255 - a)) + 0x4000) / 255 >> 7, div255() for
 * the / 255). Alpha 0 is bg, 255 the colour itself. */
static void composite(unsigned char *px, size_t n, const uint8_t bg[3])
{
	for (size_t i = 0; i < n; i++, px += 4) {
		uint32_t a = px[3];

		if (a == 255)
			continue;
		for (int c = 0; c < 3; c++) {
			uint32_t t = 128 * (px[c] * a + bg[c] * (255 - a)) + (0x80 << 7);

			px[c] = (unsigned char)(div255(t) >> 7);
		}
		px[3] = 255;
	}
}

/* n RGBA pixels to grey, one byte each, in place from the front: PIL's convert("L"),
 * (R 19595 + G 38470 + B 7471 + 0x8000) >> 16 (ITU-R 601-2 luma), which gives a grey pixel
 * (R = G = B) back unchanged since the weights add up to 65536. */
static void to_grey(unsigned char *px, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = px + 4 * i;

		px[i] = (unsigned char)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
	}
}

/* RGBA to colour premultiplied by alpha, in place, as PIL's RGBA -> RGBa (which its resize of
 * RGBA goes through): c a / 255 rounded, as MULDIV255. */
static void premultiply(unsigned char *px, size_t n)
{
	for (size_t i = 0; i < n; i++, px += 4) {
		uint32_t a = px[3];

		if (a == 255)
			continue;
		for (int c = 0; c < 3; c++)
			px[c] = (unsigned char)div255(px[c] * a + 128);
	}
}

/* And back, as PIL's RGBa -> RGBA: 255 c / a, floored and clipped; alpha 0 and 255 as they
 * are. */
static void unpremultiply(unsigned char *px, size_t n)
{
	for (size_t i = 0; i < n; i++, px += 4) {
		uint32_t a = px[3];

		if (a == 255 || a == 0)
			continue;
		for (int c = 0; c < 3; c++) {
			uint32_t v = 255u * px[c] / a;

			px[c] = (unsigned char)(v > 255 ? 255 : v);
		}
	}
}

/* Whether the crop box is whole pixels of the region and the output's size: the bilinear
 * resize is then a copy (its one tap weighs 1), as PIL's resize to an image's own size is. */
static int identity(const struct slab_image_region *r, const struct slab_image_spec *spec)
{
	return r->x1 - r->x0 == spec->out_w && r->y1 - r->y0 == spec->out_h &&
	       r->x0 == floor(r->x0) && r->y0 == floor(r->y0);
}

/* The decoded region as the resize takes it: composited over the background, or made grey
 * (one byte a pixel), or premultiplied for the bilinear resize of RGBA (1 then: the resize
 * divides it out again), unless that resize is a copy (PIL copies too, and the round trip
 * would lose colour under low alpha). In place: the region's buffer is the decoder's
 * scratch. */
static int prepare(struct slab_image_region *r, const struct slab_image_spec *spec)
{
	size_t n = (size_t)r->bw * r->bh;
	unsigned C = out_channels(spec);

	if (r->pixel != 4)
		return 0;
	if (spec->alpha == SLAB_IMAGE_ALPHA_COMPOSITE && C != 4)
		composite(r->px, n, spec->background);
	if (C == 1) {
		to_grey(r->px, n);
		r->pixel = 1;
	} else if (C == 4 && spec->resize == SLAB_IMAGE_RESIZE_BILINEAR && !identity(r, spec)) {
		premultiply(r->px, n);
		return 1;
	}
	return 0;
}

/* One output row ln of W pixels of C bytes to its place in out: row y, mirrored with flip,
 * planar with chw. */
static void put_row(unsigned char *out, const unsigned char *ln, uint32_t W, uint32_t H,
		    uint32_t y, unsigned C, int flip, int chw)
{
	size_t plane = (size_t)W * H;
	unsigned char *o = out + (size_t)y * W * C;

	if (chw && C == 3) {
		for (uint32_t x = 0; x < W; x++) {
			size_t to = (size_t)y * W + (flip ? W - 1 - x : x);

			out[to] = ln[3 * x];
			out[plane + to] = ln[3 * x + 1];
			out[2 * plane + to] = ln[3 * x + 2];
		}
	} else if (chw && C > 1) {
		for (uint32_t x = 0; x < W; x++) {
			size_t to = (size_t)y * W + (flip ? W - 1 - x : x);

			for (unsigned c = 0; c < C; c++)
				out[c * plane + to] = ln[C * x + c];
		}
	} else if (flip && C == 3) {
		for (uint32_t x = 0; x < W; x++) {
			size_t to = (size_t)(W - 1 - x) * 3;

			o[to] = ln[3 * x];
			o[to + 1] = ln[3 * x + 1];
			o[to + 2] = ln[3 * x + 2];
		}
	} else if (flip) {
		for (uint32_t x = 0; x < W; x++) {
			size_t to = (size_t)(W - 1 - x) * C;

			for (unsigned c = 0; c < C; c++)
				o[to + c] = ln[C * x + c];
		}
	} else if (ln != o) {
		memcpy(o, ln, (size_t)W * C);
	}
}

/* r->px (r->bw x r->bh pixels of r->pixel bytes: 4, or 1 for grey) -> out, C channels,
 * through d->tmp; premultiplied: RGBA whose colour prepare() multiplied by alpha, divided out
 * of each output row. Always inlined with C a constant, so that the RGB path (the default,
 * benchmarked one) is compiled for 3 channels alone and the others cost it nothing. */
static inline __attribute__((always_inline)) int
resize_n(struct slab_image_decoder *d, const struct slab_image_region *r,
	 const struct slab_image_spec *spec, int flip, int premultiplied, unsigned char *out,
	 unsigned C)
{
	uint32_t W = spec->out_w, H = spec->out_h;
	int kx = coeffs(&d->xb, &d->xk, r->x0, r->x1, r->bw, W);
	int ky = coeffs(&d->yb, &d->yk, r->y0, r->y1, r->bh, H);
	const int32_t *xb, *xk, *yb, *yk;
	const unsigned char *src = r->px;
	unsigned char *tmp, *line;
	uint32_t ylo, yhi;
	size_t row = (size_t)W * C, srow = (size_t)r->bw * r->pixel;

	if (kx < 0 || ky < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	xb = d->xb.p;
	xk = d->xk.p;
	yb = d->yb.p;
	yk = d->yk.p;
	ylo = (uint32_t)yb[0];
	yhi = (uint32_t)(yb[2 * (H - 1)] + yb[2 * (H - 1) + 1]);
	/* One byte of room after the last row: hpass_bpp() stores RGB pixels as 32-bit words. */
	if (slab_scratch_reserve(&d->tmp, (size_t)(yhi - ylo) * row + 1) < 0 ||
	    slab_scratch_reserve(&d->line, row) < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	tmp = d->tmp.p;
	line = d->line.p;
#ifdef HAVE_SSE2
	/* One channel's horizontal pass is scalar, on the 22-bit weights: no pairs for it. */
	int pairs = C == 1 ? 0 : coeffs16(&d->xk16, xb, xk, kx, W);
	int ypairs = coeffs16(&d->yk16, yb, yk, ky, H);
	const __m128i *kv = aligned16(d->xk16.p), *yv = aligned16(d->yk16.p);

	if (pairs < 0 || ypairs < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
#else
	int32_t *acc;

	if (slab_scratch_reserve(&d->acc, row * sizeof(int32_t)) < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	acc = d->acc.p;
#endif

	/* Horizontal pass, rows ylo .. yhi - 1 only, rounded to 8 bits as PIL does. */
	for (uint32_t y = ylo; y < yhi; y++) {
		const unsigned char *s = src + (size_t)y * srow;
		unsigned char *t = tmp + (size_t)(y - ylo) * row;

		if (C == 1)
			hpass1(s, t, W, xb, xk, kx);
		else
#ifdef HAVE_SSE2
			hpass_bpp(s, t, W, xb, kv, pairs, C);
#else
			hpass_bpp(s, t, W, xb, xk, kx, C);
#endif
	}
	/* Vertical pass, one output row at a time into line (the output row itself when it
	 * needs no flip or reordering), then flip and layout on the way out. */
	for (uint32_t y = 0; y < H; y++) {
		const unsigned char *t = tmp + (size_t)(yb[2 * y] - ylo) * row;
		int n = yb[2 * y + 1];
		unsigned char *o = out + (size_t)y * row;
		unsigned char *ln = flip || spec->chw ? line : o;

#ifdef HAVE_SSE2
		vpass(t, row, n, yv + (size_t)y * ypairs, yk + (size_t)y * ky, ln);
#else
		const int32_t *k = yk + (size_t)y * ky;

		for (size_t j = 0; j < row; j++)
			acc[j] = 1 << (PRECISION_BITS - 1);
		for (int i = 0; i < n; i++, t += row)
			add_row(acc, t, row, k[i]);
		for (size_t j = 0; j < row; j++)
			ln[j] = clip8(acc[j]);
#endif
		if (premultiplied)
			unpremultiply(ln, W);
		put_row(out, ln, W, H, y, C, flip, spec->chw);
	}
	return 0;
}

static int resize(struct slab_image_decoder *d, const struct slab_image_region *r,
		  const struct slab_image_spec *spec, int flip, unsigned char *out)
{
	return resize_n(d, r, spec, flip, 0, out, 3);
}

/* The same for 1 and 4 channels. */
static int resize_c(struct slab_image_decoder *d, const struct slab_image_region *r,
		    const struct slab_image_spec *spec, int flip, int premultiplied,
		    unsigned char *out)
{
	if (out_channels(spec) == 1)
		return resize_n(d, r, spec, flip, premultiplied, out, 1);
	return resize_n(d, r, spec, flip, premultiplied, out, 4);
}

/*
 * PIL's NEAREST resize of the crop, as crop(box).resize((W, H), NEAREST) computes it
 * (ImagingScaleAffine): output column x takes crop column (int)(a/2 + x a) with a = crop
 * width / W, the sum built up one a at a time as PIL adds it (so that the float rounding is
 * PIL's too), rows alike; clamped to the crop (PIL would leave a pixel that rounding put
 * past it black; it never does for sizes up to 65535). The decoders decode at full scale
 * for it, so the crop box is whole pixels of the region. C bytes of each source pixel.
 */
static int nearest(struct slab_image_decoder *d, const struct slab_image_region *r,
		   const struct slab_image_spec *spec, int flip, unsigned char *out)
{
	uint32_t W = spec->out_w, H = spec->out_h;
	unsigned C = out_channels(spec), ps = r->pixel;
	uint32_t bx = (uint32_t)floor(r->x0), by = (uint32_t)floor(r->y0);
	uint32_t cw = (uint32_t)(r->x1 - r->x0), ch = (uint32_t)(r->y1 - r->y0);
	double ax = (r->x1 - r->x0) / W, ay = (r->y1 - r->y0) / H, xo = ax * 0.5, yo = ay * 0.5;
	size_t *nx;
	unsigned char *line;

	if (slab_scratch_reserve(&d->nx, (size_t)W * sizeof(size_t)) < 0 ||
	    slab_scratch_reserve(&d->line, (size_t)W * C) < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	nx = d->nx.p;
	line = d->line.p;
	if (cw < 1)
		cw = 1;
	if (ch < 1)
		ch = 1;
	for (uint32_t x = 0; x < W; x++, xo += ax) {
		uint32_t xi = (uint32_t)xo;

		xi = bx + (xi < cw ? xi : cw - 1);
		nx[x] = (size_t)(xi < r->bw ? xi : r->bw - 1) * ps;
	}
	for (uint32_t y = 0; y < H; y++, yo += ay) {
		uint32_t yi = (uint32_t)yo;
		const unsigned char *s;
		unsigned char *ln = flip || spec->chw ? line : out + (size_t)y * W * C;

		yi = by + (yi < ch ? yi : ch - 1);
		s = r->px + (size_t)(yi < r->bh ? yi : r->bh - 1) * r->bw * ps;
		if (C == 1) {
			for (uint32_t x = 0; x < W; x++)
				ln[x] = s[nx[x]];
		} else {
			for (uint32_t x = 0; x < W; x++)
				memcpy(ln + (size_t)x * C, s + nx[x], C);
		}
		put_row(out, ln, W, H, y, C, flip, spec->chw);
	}
	return 0;
}

/* A decoded region to the output: alpha, grey, the resize, flip and layout. Always inlined
 * into slab_image_decode(), so the image path compiles as before. */
static inline __attribute__((always_inline)) int
finish(struct slab_image_decoder *d, struct slab_image_region *r,
       const struct slab_image_spec *spec, int flip, void *out)
{
	int premultiplied = prepare(r, spec);

	if (spec->resize == SLAB_IMAGE_RESIZE_NEAREST)
		return nearest(d, r, spec, flip, out);
	if (out_channels(spec) == 3)
		return resize(d, r, spec, flip, out);
	return resize_c(d, r, spec, flip, premultiplied, out);
}

int slab_image_finish(struct slab_image_decoder *d, struct slab_image_region *r,
		      const struct slab_image_spec *spec, int flip, void *out)
{
	if (!spec_ok(spec))
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL, "bad image spec or parameters");
	return finish(d, r, spec, flip, out);
}

int slab_image_decode(struct slab_image_decoder *d, const void *data, size_t len,
		      const struct slab_image_spec *spec, const struct slab_image_params *p,
		      void *out, struct slab_image_stats *stats)
{
	struct slab_image_stats st = { 0 };
	struct slab_image_region r;
	size_t k;
	int ret;

	if (stats)
		*stats = st;
	if (!spec_ok(spec) || !p || !out)
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL, "bad image spec or parameters");
	if ((ret = find_format(d, data, len, &k)) < 0)
		return ret;
	st.scale_denom = 1;
	memset(&r, 0, sizeof(r));
	r.pixel = 4;
	ret = formats[k]->decode(d->state[k], &d->lim, data, len, spec, p, &d->pix, &r, &st,
				 &d->err);
	if (ret == 0)
		ret = finish(d, &r, spec, p->flip, out);
	slab_scratch_trim(&d->pix);
	slab_scratch_trim(&d->tmp);
	if (stats)
		*stats = st;
	return ret;
}
