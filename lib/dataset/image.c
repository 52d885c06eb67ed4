/* image.c: one JPEG to a fixed-size uint8 RGB crop (image.h), on libjpeg-turbo's libjpeg API
 * so that the decoder can be told to produce less: a DCT-scaled image, only the crop's
 * columns, only its rows. The resize is PIL's BILINEAR resample with reducing (a triangle
 * filter widened by the downscale factor, separable, 22-bit fixed-point weights). */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#if defined(__SSE2__) && !defined(SLAB_NO_SSE2)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

#include "error.h"
#include "jpeg.h"
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
}

static int spec_ok(const struct slab_image_spec *s)
{
	if (s->out_w < 1 || s->out_w > 65535 || s->out_h < 1 || s->out_h > 65535)
		return 0;
	if (s->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED) {
		if (!(s->scale_min > 0 && s->scale_min <= s->scale_max && s->scale_max <= 1.0))
			return 0;
		if (!(s->ratio_min > 0 && s->ratio_min <= s->ratio_max && isfinite(s->ratio_max)))
			return 0;
	}
	return s->crop == SLAB_IMAGE_CROP_NONE || s->crop == SLAB_IMAGE_CROP_CENTER ||
	       s->crop == SLAB_IMAGE_CROP_RANDOM_RESIZED;
}

/* a * b / c rounded to nearest, at least 1 and at most max. */
static uint32_t scaled(uint32_t a, uint32_t b, uint32_t c, uint32_t max)
{
	uint64_t v = ((uint64_t)a * b * 2 + c) / ((uint64_t)c * 2);

	if (v < 1)
		v = 1;
	return v > max ? max : (uint32_t)v;
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
		 * promise and torchvision's CenterCrop rounds: documented, tested, stable. */
		if ((uint64_t)src_w * spec->out_h > (uint64_t)src_h * spec->out_w) {
			p->h = src_h;
			p->w = scaled(src_h, spec->out_w, spec->out_h, src_w);
		} else {
			p->w = src_w;
			p->h = scaled(src_w, spec->out_h, spec->out_w, src_h);
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

/* libjpeg's error manager, made to return: error_exit jumps back to the call that entered
 * libjpeg; warnings are counted (the first one's text kept) and nothing is ever printed. The
 * scan limit's progress monitor jumps back the same way, with scan_limit set. */
struct errmgr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
	char warning[JMSG_LENGTH_MAX];
	int scan_limit;
};

/* libjpeg calls the progress monitor before it takes in each row of blocks (and in
 * jpeg_read_scanlines, jpeg_skip_scanlines): in jpeg_start_decompress it takes in every scan
 * of a multi-scan JPEG, so the monitor sees each new scan as soon as its SOS marker is read. */
struct scanmon {
	struct jpeg_progress_mgr pub;
	unsigned max_scans;
};

struct slab_image_decoder {
	struct jpeg_decompress_struct cinfo;
	struct errmgr jerr;
	struct scanmon scans;
	uint64_t max_pixels;             /* UINT64_MAX: none */
	struct slab_err err;
	struct slab_scratch pix;         /* decoded region, 3 or 4 bytes a pixel */
	struct slab_scratch tmp;         /* horizontally resized rows */
	struct slab_scratch xb, yb;      /* int32_t [2] per output pixel: first source pixel, count */
	struct slab_scratch xk, yk;      /* int32_t weights, ksize per output pixel */
	struct slab_scratch acc;         /* int32_t sums of one output row, vertical pass */
	struct slab_scratch xk16, yk16;  /* the weights as int16 pairs (SSE2) */
	struct slab_scratch line;        /* one output row before flip or reordering */
};

/* The region decode_region() produced: a bw x bh buffer whose pixel (0, 0) is the scaled
 * image's (bx, by); the crop box in that buffer's coordinates (fractional when scaled). */
struct region {
	uint32_t bw, bh;
	double x0, y0, x1, y1;
};

static void on_error(j_common_ptr c)
{
	longjmp(((struct errmgr *)c->err)->jump, 1);
}

static void on_message(j_common_ptr c, int level)
{
	struct errmgr *e = (struct errmgr *)c->err;

	if (level < 0) {
		if (e->warnings++ == 0)
			c->err->format_message(c, e->warning);
		c->err->num_warnings++;
	}
}

static void on_output(j_common_ptr c)
{
	(void)c;
}

/* Every scan counts, progressive or not, as TurboJPEG's TJFLAG_LIMITSCANS counts them: a
 * sequential JPEG has at most one scan per component, so only a crafted file meets the
 * limit. */
static void on_progress(j_common_ptr c)
{
	const struct scanmon *m = (const struct scanmon *)c->progress;
	int scan = ((j_decompress_ptr)c)->input_scan_number;

	if (scan > 0 && (unsigned)scan > m->max_scans) {
		((struct errmgr *)c->err)->scan_limit = 1;
		longjmp(((struct errmgr *)c->err)->jump, 1);
	}
}

/*
 * A bound for libjpeg's whole-image buffers from the pixel limit, so that were an image to
 * get past the pixel check, its buffers would fail rather than grow without end. In
 * libjpeg-turbo 2.1 max_memory_to_use bounds only those (the coefficients of a progressive or
 * multi-scan JPEG: 2 bytes a pixel a component, at most 4 components reach them, plus each
 * component's padding to whole blocks, under 9 MB for sides of at most 65500, and the other
 * buffers): more makes it ask for a backing store, which it refuses with
 * JERR_NO_BACKING_STORE before allocating. 0: no bound.
 */
static long mem_bound(uint64_t max_pixels)
{
	const uint64_t slack = 64ull << 20;

	if (max_pixels > ((uint64_t)LONG_MAX - slack) / 8)
		return 0;
	return (long)(max_pixels * 8 + slack);
}

/* jpeg_create_decompress can only fail to allocate: 0, or SLAB_ERR_NOMEM. */
static int create(struct slab_image_decoder *d)
{
	if (setjmp(d->jerr.jump))
		return SLAB_ERR_NOMEM;
	jpeg_create_decompress(&d->cinfo);
	return 0;
}

struct slab_image_decoder *slab_image_decoder_new(void)
{
	struct slab_image_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cinfo.err = jpeg_std_error(&d->jerr.pub);
	d->jerr.pub.error_exit = on_error;
	d->jerr.pub.emit_message = on_message;
	d->jerr.pub.output_message = on_output;
	if (create(d) < 0) {
		jpeg_destroy_decompress(&d->cinfo);
		free(d);
		return NULL;
	}
	d->scans.pub.progress_monitor = on_progress;
	slab_image_decoder_limits(d, 0, 0);
	return d;
}

void slab_image_decoder_limits(struct slab_image_decoder *d, uint64_t max_pixels,
			       unsigned max_scans)
{
	d->max_pixels = max_pixels ? max_pixels : SLAB_IMAGE_MAX_PIXELS;
	d->scans.max_scans = max_scans ? max_scans : SLAB_IMAGE_MAX_SCANS;
	d->cinfo.progress = d->scans.max_scans == UINT_MAX ? NULL : &d->scans.pub;
	d->cinfo.mem->max_memory_to_use = mem_bound(d->max_pixels);
}

void slab_image_decoder_free(struct slab_image_decoder *d)
{
	if (!d)
		return;
	jpeg_destroy_decompress(&d->cinfo);
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
	free(d);
}

const char *slab_image_error(const struct slab_image_decoder *d)
{
	return d->err.text;
}

/* After libjpeg (or the scan limit) jumped out: why, into the handle; the decompressor
 * reset. */
static int jpeg_failed(struct slab_image_decoder *d)
{
	char msg[JMSG_LENGTH_MAX];
	int code = d->jerr.pub.msg_code;
	uint32_t w = d->cinfo.image_width, h = d->cinfo.image_height;

	d->jerr.pub.format_message((j_common_ptr)&d->cinfo, msg);
	jpeg_abort_decompress(&d->cinfo);
	if (d->jerr.scan_limit)
		return slab_fail(&d->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_SCANS_TEXT,
				 d->scans.max_scans, d->scans.max_scans);
	if (code == JERR_NO_BACKING_STORE)
		return slab_fail(&d->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_MEMORY_TEXT, w, h,
				 (long long)d->cinfo.mem->max_memory_to_use);
	if (code == JERR_OUT_OF_MEMORY)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a JPEG: %s", msg);
	return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s", msg);
}

static void start(struct slab_image_decoder *d, const void *jpeg, size_t len)
{
	d->jerr.warnings = 0;
	d->jerr.warning[0] = '\0';
	d->jerr.pub.num_warnings = 0;
	d->jerr.scan_limit = 0;
	jpeg_mem_src(&d->cinfo, (const unsigned char *)jpeg, (unsigned long)len);
	jpeg_read_header(&d->cinfo, TRUE);
}

/* After the header: SLAB_ERR_LIMIT (decompressor reset) when the image has more pixels than
 * the limit, before jpeg_start_decompress allocates anything the size of the image. */
static int over_pixels(struct slab_image_decoder *d)
{
	uint64_t w = d->cinfo.image_width, h = d->cinfo.image_height;

	if (w * h <= d->max_pixels)
		return 0;
	jpeg_abort_decompress(&d->cinfo);
	return slab_fail(&d->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_PIXELS_TEXT, (unsigned)w,
			 (unsigned)h, (unsigned long long)(w * h), (unsigned long long)d->max_pixels);
}

static int read_size(struct slab_image_decoder *d, const void *jpeg, size_t len,
		     uint32_t *w, uint32_t *h)
{
	int ret;

	if (setjmp(d->jerr.jump))
		return jpeg_failed(d);
	start(d, jpeg, len);
	if ((ret = over_pixels(d)) < 0)
		return ret;
	*w = d->cinfo.image_width;
	*h = d->cinfo.image_height;
	jpeg_abort_decompress(&d->cinfo);
	return 0;
}

int slab_image_size(struct slab_image_decoder *d, const void *jpeg, size_t len,
		    uint32_t *w, uint32_t *h)
{
	if (!jpeg || len == 0)
		return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: empty input");
	return read_size(d, jpeg, len, w, h);
}

/* The largest DCT scaling denominator worth taking for this JPEG: 8, or 4 when its chroma is
 * subsampled in one direction only (4:2:2, 4:4:0). Measured in test_image.c (mean absolute
 * error per channel of the crop against a full decode): such JPEGs came out 5.6 at 1/8 and 3.4
 * at 1/4, against 2.3 for 4:2:0 at 1/8. */
static unsigned max_scale(const struct jpeg_decompress_struct *c)
{
	return c->num_components == 3 && c->max_h_samp_factor != c->max_v_samp_factor ? 4 : 8;
}

/* Decode the part of the image the crop needs into d->pix as RGB: the largest DCT scaling
 * that keeps the crop at least the output size, the crop's columns (widened by libjpeg to an
 * iMCU boundary), its rows, nothing after them. Calls libjpeg, which may jump to the caller's
 * setjmp. */
static int decode_region(struct slab_image_decoder *d, const void *jpeg, size_t len,
			 const struct slab_image_spec *spec, const struct slab_image_params *p,
			 struct region *r, struct slab_image_stats *st)
{
	struct jpeg_decompress_struct *c = &d->cinfo;
	unsigned denom = 1;
	uint32_t ow, oh, ix0, ix1, iy0, iy1;
	JDIMENSION xoff, cw;
	size_t stride, need;
	unsigned char *row;
	int ret;

	start(d, jpeg, len);
	if ((ret = over_pixels(d)) < 0)
		return ret;
	if ((uint64_t)p->x + p->w > c->image_width || (uint64_t)p->y + p->h > c->image_height ||
	    p->w == 0 || p->h == 0) {
		jpeg_abort_decompress(c);
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL,
				 "crop %ux%u+%u+%u outside a %ux%u image", p->w, p->h, p->x, p->y,
				 c->image_width, c->image_height);
	}
	for (unsigned s = max_scale(c); s > 1 && !spec->exact; s /= 2) {
		if (p->w >= (uint64_t)spec->out_w * s && p->h >= (uint64_t)spec->out_h * s) {
			denom = s;
			break;
		}
	}
	c->scale_num = 1;
	c->scale_denom = denom;
	/* Four bytes a pixel whatever the source (RGBX, or CMYK converted in place below), so
	 * that the horizontal pass reads whole pixels as 32-bit words. */
	c->out_color_space = c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK ?
			     JCS_CMYK : JCS_EXT_RGBX;
	jpeg_start_decompress(c);
	ow = c->output_width;
	oh = c->output_height;

	/* The crop in the scaled image: each scaled pixel is denom x denom source pixels. */
	r->x0 = (double)p->x / denom;
	r->x1 = fmin((double)(p->x + p->w) / denom, ow);
	r->y0 = (double)p->y / denom;
	r->y1 = fmin((double)(p->y + p->h) / denom, oh);
	ix0 = (uint32_t)floor(r->x0);
	ix1 = (uint32_t)fmin(ceil(r->x1), ow);
	iy0 = (uint32_t)floor(r->y0);
	iy1 = (uint32_t)fmin(ceil(r->y1), oh);
	if (spec->exact) {
		ix0 = iy0 = 0;
		ix1 = ow;
		iy1 = oh;
	}

	xoff = 0;
	if (ix0 > 0 || ix1 < ow) {
		xoff = ix0;
		cw = ix1 - ix0;
		jpeg_crop_scanline(c, &xoff, &cw);
	}
	if (iy0 > 0 && jpeg_skip_scanlines(c, iy0) != iy0) {
		jpeg_abort_decompress(c);
		return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: cannot skip %u rows",
				 iy0);
	}
	stride = (size_t)c->output_width * (size_t)c->output_components;
	need = stride * (iy1 - iy0);
	if (slab_scratch_reserve(&d->pix, need) < 0) {
		jpeg_abort_decompress(c);
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL,
				 "out of memory decoding a %ux%u JPEG region", c->output_width,
				 iy1 - iy0);
	}
	row = d->pix.p;
	for (uint32_t y = iy0; y < iy1; y++, row += stride) {
		JSAMPROW rp = row;

		if (jpeg_read_scanlines(c, &rp, 1) != 1) {
			jpeg_abort_decompress(c);
			return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL,
					 "corrupt JPEG: row %u did not decode", y);
		}
	}

	/* CMYK as libjpeg gives it (Adobe's inverted form when the Adobe marker says so) to RGB,
	 * in place (the fourth byte left as it is), as PIL does: R = (255 - C)(255 - K) / 255. */
	if (c->out_color_space == JCS_CMYK) {
		unsigned char *px = d->pix.p;
		size_t n = (size_t)c->output_width * (iy1 - iy0);
		int inv = c->saw_Adobe_marker;

		for (size_t i = 0; i < n; i++) {
			unsigned k = inv ? px[4 * i + 3] : 255u - px[4 * i + 3];

			for (int ch = 0; ch < 3; ch++) {
				unsigned v = inv ? px[4 * i + ch] : 255u - px[4 * i + ch];
				unsigned t = v * k + 128;

				px[4 * i + ch] = (unsigned char)((t + (t >> 8)) >> 8);
			}
		}
	}

	st->scale_denom = denom;
	st->region = xoff > 0 || c->output_width < ow || iy0 > 0 || iy1 < oh;
	st->decoded_w = c->output_width;
	st->decoded_h = iy1 - iy0;
	r->bw = c->output_width;
	r->bh = iy1 - iy0;
	r->x0 -= xoff;
	r->x1 -= xoff;
	r->y0 -= iy0;
	r->y1 -= iy0;

	if (c->output_scanline == c->output_height)
		jpeg_finish_decompress(c);
	else
		jpeg_abort_decompress(c);
	if (d->jerr.warnings) {
		return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s",
				 d->jerr.warning);
	}
	return 0;
}

static int guarded_decode(struct slab_image_decoder *d, const void *jpeg, size_t len,
			  const struct slab_image_spec *spec, const struct slab_image_params *p,
			  struct region *r, struct slab_image_stats *st)
{
	if (setjmp(d->jerr.jump))
		return jpeg_failed(d);
	return decode_region(d, jpeg, len, spec, p, r, st);
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

/* A PRECISION_BITS weight in H16_BITS. */
static short w16(int32_t k)
{
	return (short)((k + (1 << (PRECISION_BITS - H16_BITS - 1))) >> (PRECISION_BITS - H16_BITS));
}

static __m128i *aligned16(void *p)
{
	return (__m128i *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
}

/* The weights xk (ksize per output pixel, PRECISION_BITS) as the (k0 k1 k0 k1 ...) vectors of
 * each tap pair: pairs of them per output pixel, the last one's k1 0 for an odd ksize. */
static int coeffs16(struct slab_scratch *k16, const int32_t *xk, int ksize, uint32_t W)
{
	int pairs = (ksize + 1) / 2;
	__m128i *v;

	if (slab_scratch_reserve(k16, (size_t)W * (size_t)pairs * sizeof(__m128i) + 16) < 0)
		return SLAB_ERR_NOMEM;
	v = aligned16(k16->p);
	for (uint32_t x = 0; x < W; x++) {
		const int32_t *k = xk + (size_t)x * ksize;

		for (int p = 0; p < pairs; p++) {
			short k0 = w16(k[2 * p]), k1 = 2 * p + 1 < ksize ? w16(k[2 * p + 1]) : 0;

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
		int32_t sum = 1 << (H16_BITS - 1);

		for (int i = 0; i < n; i++)
			sum += t[(size_t)i * row + j] * w16(k[i]);
		sum >>= H16_BITS;
		dst[j] = (unsigned char)(sum < 0 ? 0 : sum > 255 ? 255 : sum);
	}
}

static void hpass(const unsigned char *s, unsigned char *t, uint32_t W, const int32_t *xb,
		  const __m128i *kv, int pairs)
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
		memcpy(t + 3 * (size_t)x, &px, 4);
	}
}
#else
/* Sums fit in 32 bits: the weights of one output pixel add up to 1 << PRECISION_BITS and are
 * never negative (a triangle), so a sum is at most 255 << 22 plus the rounding half. */
static unsigned char clip8(int32_t v)
{
	v >>= PRECISION_BITS;
	return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v;
}

/* acc[j] += t[j] * w: the vertical pass's inner loop without SSE2 (the Makefile builds this
 * file with the vectoriser's dynamic cost model, and restrict tells it acc and t never
 * overlap). */
static void add_row(int32_t *restrict acc, const unsigned char *restrict t, size_t n, int32_t w)
{
	for (size_t j = 0; j < n; j++)
		acc[j] += t[j] * w;
}

static void hpass(const unsigned char *s, unsigned char *t, uint32_t W, const int32_t *xb,
		  const int32_t *xk, int kx)
{
	for (uint32_t x = 0; x < W; x++) {
		const int32_t *k = xk + (size_t)x * kx;
		const unsigned char *sp = s + (size_t)xb[2 * x] * 4;
		int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
		int n = xb[2 * x + 1];

		for (int i = 0; i < n; i++, sp += 4) {
			s0 += sp[0] * k[i];
			s1 += sp[1] * k[i];
			s2 += sp[2] * k[i];
		}
		t[3 * x] = clip8(s0);
		t[3 * x + 1] = clip8(s1);
		t[3 * x + 2] = clip8(s2);
	}
}
#endif

/* d->pix (r->bw x r->bh pixels of 4 bytes, RGB first) -> out, through d->tmp. */
static int resize(struct slab_image_decoder *d, const struct region *r,
		  const struct slab_image_spec *spec, int flip, unsigned char *out)
{
	uint32_t W = spec->out_w, H = spec->out_h;
	int kx = coeffs(&d->xb, &d->xk, r->x0, r->x1, r->bw, W);
	int ky = coeffs(&d->yb, &d->yk, r->y0, r->y1, r->bh, H);
	const int32_t *xb, *xk, *yb, *yk;
	const unsigned char *src = d->pix.p;
	unsigned char *tmp, *line;
	uint32_t ylo, yhi;
	size_t plane = (size_t)W * H, row = (size_t)W * 3;

	if (kx < 0 || ky < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	xb = d->xb.p;
	xk = d->xk.p;
	yb = d->yb.p;
	yk = d->yk.p;
	ylo = (uint32_t)yb[0];
	yhi = (uint32_t)(yb[2 * (H - 1)] + yb[2 * (H - 1) + 1]);
	/* One byte of room after the last row: hpass() stores pixels as 32-bit words. */
	if (slab_scratch_reserve(&d->tmp, (size_t)(yhi - ylo) * row + 1) < 0 ||
	    slab_scratch_reserve(&d->line, row) < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing");
	tmp = d->tmp.p;
	line = d->line.p;
#ifdef HAVE_SSE2
	int pairs = coeffs16(&d->xk16, xk, kx, W), ypairs = coeffs16(&d->yk16, yk, ky, H);
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
		const unsigned char *s = src + (size_t)y * r->bw * 4;
		unsigned char *t = tmp + (size_t)(y - ylo) * row;

#ifdef HAVE_SSE2
		hpass(s, t, W, xb, kv, pairs);
#else
		hpass(s, t, W, xb, xk, kx);
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
		if (spec->chw) {
			for (uint32_t x = 0; x < W; x++) {
				size_t to = (size_t)y * W + (flip ? W - 1 - x : x);

				out[to] = ln[3 * x];
				out[plane + to] = ln[3 * x + 1];
				out[2 * plane + to] = ln[3 * x + 2];
			}
		} else if (flip) {
			for (uint32_t x = 0; x < W; x++) {
				size_t to = (size_t)(W - 1 - x) * 3;

				o[to] = ln[3 * x];
				o[to + 1] = ln[3 * x + 1];
				o[to + 2] = ln[3 * x + 2];
			}
		}
	}
	return 0;
}

int slab_image_decode(struct slab_image_decoder *d, const void *jpeg, size_t len,
		      const struct slab_image_spec *spec, const struct slab_image_params *p,
		      void *out, struct slab_image_stats *stats)
{
	struct slab_image_stats st = { 0 };
	struct region r;
	int ret;

	if (stats)
		*stats = st;
	if (!spec_ok(spec) || !p || !out)
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL, "bad image spec or parameters");
	if (!jpeg || len == 0)
		return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: empty input");
	ret = guarded_decode(d, jpeg, len, spec, p, &r, &st);
	if (ret == 0)
		ret = resize(d, &r, spec, p->flip, out);
	slab_scratch_trim(&d->pix);
	slab_scratch_trim(&d->tmp);
	if (stats)
		*stats = st;
	return ret;
}
