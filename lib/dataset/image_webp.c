/* image_webp.c: WebP for the image pipeline (imgfmt.h), on libwebp's advanced decoding API so
 * that libwebp produces less: only the crop's region (use_cropping), scaled down to no more
 * than the output size needs (use_scaling). Lossy, lossless and alpha (dropped, as PIL's
 * convert("RGB") drops it); an animated WebP is a per-sample error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>

#include "error.h"
#include "imgfmt.h"
#include "scratch.h"
#include "slab.h"

/* libwebp keeps no state between images; the pipeline's state is the decode's configuration
 * (features, options, output) and the copy of the bytes it decodes (see decode()). */
struct wdec {
	WebPDecoderConfig cfg;
	struct slab_scratch bytes;
};

static int probe(const unsigned char *p, size_t len)
{
	return len >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0;
}

/* "RIFF", the RIFF size (any 4 bytes), "WEBP": as much of it as there is. */
static int cut_short(const unsigned char *p, size_t len)
{
	return len < 12 && memcmp(p, "RIFF", len < 4 ? len : 4) == 0 &&
	       (len <= 8 || memcmp(p + 8, "WEBP", len - 8) == 0);
}

static void *state_new(void)
{
	return calloc(1, sizeof(struct wdec));
}

static void state_free(void *st)
{
	struct wdec *wd = st;

	if (wd)
		slab_scratch_free(&wd->bytes);
	free(wd);
}

static const char *status_text(VP8StatusCode s)
{
	switch (s) {
	case VP8_STATUS_OK: return "ok";
	case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
	case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
	case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
	case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
	case VP8_STATUS_SUSPENDED: return "suspended";
	case VP8_STATUS_USER_ABORT: return "user abort";
	case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
	}
	return "unknown status";
}

static int webp_failed(VP8StatusCode s, struct slab_err *err)
{
	if (s == VP8_STATUS_OUT_OF_MEMORY)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a WebP");
	return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt WebP: %s", status_text(s));
}

/* The header (RIFF, VP8X, the VP8 or VP8L frame header: WebPGetFeatures reads no pixel data)
 * into *f, and the pixel limit on the canvas it declares. */
static int features(const struct slab_image_limits *lim, const unsigned char *data, size_t len,
		    WebPBitstreamFeatures *f, struct slab_err *err)
{
	VP8StatusCode s = WebPGetFeatures(data, len, f);

	if (s != VP8_STATUS_OK)
		return webp_failed(s, err);
	if (f->width <= 0 || f->height <= 0)
		return webp_failed(VP8_STATUS_BITSTREAM_ERROR, err);
	return slab_image_over_pixels("WebP", (uint32_t)f->width, (uint32_t)f->height, lim, err);
}

static int size(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		size_t len, uint32_t *w, uint32_t *h, struct slab_err *err)
{
	struct wdec *wd = st;
	int ret = features(lim, data, len, &wd->cfg.input, err);

	if (ret < 0)
		return ret;
	*w = (uint32_t)wd->cfg.input.width;
	*h = (uint32_t)wd->cfg.input.height;
	return 0;
}

/*
 * The decoded span [*lo, *hi) of the crop's [a, b) along a side of n pixels. Lossy WebP is
 * YUV 4:2:0: libwebp's cropping wants an even start (it snaps YUV output to one and its row
 * emitter assumes one for RGB too), and its fancy upsampler takes a pixel's chroma from both
 * neighbouring chroma samples, mirroring them at the region's edges: one pixel more on each
 * side (the start kept even) makes every pixel of [a, b) the full decode's, bit for bit.
 * Lossless is decoded in ARGB: the start is made even all the same, as the header's comment
 * says libwebp may snap it.
 */
static void span(uint32_t a, uint32_t b, uint32_t n, int lossy, uint32_t *lo, uint32_t *hi)
{
	*lo = lossy && a > 0 ? (a - 1) & ~1u : a & ~1u;
	*hi = lossy && b < n ? b + 1 : b;
}

/* The smallest side that keeps a crop of `crop` pixels, out of a decoded span of `in`, at
 * least `out` pixels: ceil(out * in / crop), never more than in (no upscaling). */
static uint32_t scaled_side(uint32_t out, uint32_t in, uint32_t crop)
{
	uint64_t v = ((uint64_t)out * in + crop - 1) / crop;

	return v < in ? (uint32_t)v : in;
}

/* 2, 4 or 8 when in is exactly that many times out, else 1 (the pipeline's stats count those
 * scales; decoded_w and decoded_h say what any scale saved). */
static unsigned pow2_denom(uint32_t in, uint32_t out)
{
	for (unsigned d = 2; d <= 8; d *= 2)
		if ((uint64_t)out * d == in)
			return d;
	return 1;
}

static int decode(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		  size_t len, const struct slab_image_spec *spec, const struct slab_image_params *p,
		  struct slab_scratch *pix, struct slab_image_region *r,
		  struct slab_image_stats *stats, struct slab_err *err)
{
	struct wdec *wd = st;
	WebPDecoderConfig *c = &wd->cfg;
	WebPDecoderOptions *o = &c->options;
	uint32_t W, H, x0, x1, y0, y1, cw, ch, sw, sh;
	unsigned dx, dy;
	int lossy, ret;
	size_t stride, need;
	VP8StatusCode s;

	if (!WebPInitDecoderConfig(c))
		return slab_fail(err, SLAB_ERR_INVAL, NULL, "libwebp's decoder ABI differs from "
				 "the one slab was built with");
	if ((ret = features(lim, data, len, &c->input, err)) < 0)
		return ret;
	if (c->input.has_animation)
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "animated WebP: not supported");
	W = (uint32_t)c->input.width;
	H = (uint32_t)c->input.height;
	if ((ret = slab_image_crop_check(p, W, H, err)) < 0)
		return ret;

	x0 = y0 = 0;
	x1 = sw = W;
	y1 = sh = H;
	if (!spec->exact) {
		/* format 2 is lossless; 1 lossy, 0 a mixture (animations, refused above). */
		lossy = c->input.format != 2;
		span(p->x, p->x + p->w, W, lossy, &x0, &x1);
		span(p->y, p->y + p->h, H, lossy, &y0, &y1);
		sw = scaled_side(spec->out_w, x1 - x0, p->w);
		sh = scaled_side(spec->out_h, y1 - y0, p->h);
		/* Cropped only, not scaled: for the nearest resize (one source pixel each); for
		 * lossless with alpha, whose rescaler premultiplies the colour by alpha and
		 * divides it out again, which changes (zeroes, under alpha 0) the colour that
		 * dropping alpha shows; and for any alpha the output uses (kept or composited),
		 * which lossy rescales apart from the colour, where the pipeline's own resize
		 * weighs the colour by it (or composites at full size first). */
		if (!slab_image_may_scale(spec) ||
		    (c->input.has_alpha && (!lossy || slab_image_wants_alpha(spec)))) {
			sw = x1 - x0;
			sh = y1 - y0;
		}
		/* libwebp (1.2.4) unfilters a compressed alpha plane coded with the horizontal
		 * filter wrongly where the crop starts below row 0 (its first row's start is
		 * predicted from nothing, not from the row above): lossy alpha that the output
		 * uses is cropped from row 0, which costs only the conversion of those rows (the
		 * decode reconstructs them anyway). */
		if (lossy && c->input.has_alpha && slab_image_wants_alpha(spec)) {
			sh = y1;
			y0 = 0;
		}
	}
	cw = x1 - x0;
	ch = y1 - y0;
	o->use_cropping = cw < W || ch < H;
	o->crop_left = (int)x0;
	o->crop_top = (int)y0;
	o->crop_width = (int)cw;
	o->crop_height = (int)ch;
	o->use_scaling = sw < cw || sh < ch;
	o->scaled_width = (int)sw;
	o->scaled_height = (int)sh;

	stride = (size_t)sw * 4;
	need = stride * sh;
	if (slab_scratch_reserve(pix, need) < 0)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a %ux%u WebP "
				 "region", sw, sh);
	/* Into the pipeline's buffer, 4 bytes a pixel: R, G, B and alpha not premultiplied
	 * (255 without alpha), which the resize ignores unless the spec wants it. */
	c->output.colorspace = MODE_RGBA;
	c->output.is_external_memory = 1;
	c->output.u.RGBA.rgba = pix->p;
	c->output.u.RGBA.stride = (int)stride;
	c->output.u.RGBA.size = need;
	/* libwebp makes its decoder inside WebPDecode() and frees it before returning: a fault
	 * reading a mapping there (the file truncated under the loader) would leave by the
	 * guard's jump and leak it. So it decodes a copy, made first, where a fault leaves
	 * nothing behind (about 0.2% of a decode's time). */
	if (slab_scratch_reserve(&wd->bytes, len) < 0)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory copying a WebP of %zu "
				 "bytes", len);
	memcpy(wd->bytes.p, data, len);
	s = WebPDecode(wd->bytes.p, len, c);
	slab_scratch_trim(&wd->bytes);
	WebPFreeDecBuffer(&c->output);
	if (s != VP8_STATUS_OK)
		return webp_failed(s, err);
	/* A lossless image whose header says it has no alpha still codes an alpha for each
	 * pixel, which libwebp hands out as coded (0 for an index past a palette's end): the
	 * image has none, so 255, as PIL (mode RGB) and the pipeline's other formats give. */
	if (!c->input.has_alpha && slab_image_wants_alpha(spec)) {
		unsigned char *a = (unsigned char *)pix->p + 3;

		for (size_t i = 0; i < (size_t)sw * sh; i++)
			a[4 * i] = 255;
	}

	/* The crop in the decoded image's coordinates: libwebp's rescaler maps the span's
	 * [0, cw) onto [0, sw), each output pixel the average of cw / sw input pixels. */
	r->px = pix->p;
	r->bw = sw;
	r->bh = sh;
	r->x0 = (double)(p->x - x0) * sw / cw;
	r->x1 = (double)(p->x + p->w - x0) * sw / cw;
	r->y0 = (double)(p->y - y0) * sh / ch;
	r->y1 = (double)(p->y + p->h - y0) * sh / ch;
	if (r->x1 > sw)
		r->x1 = sw;
	if (r->y1 > sh)
		r->y1 = sh;
	dx = pow2_denom(cw, sw);
	dy = pow2_denom(ch, sh);
	stats->scale_denom = dx == dy ? dx : 1;
	stats->region = o->use_cropping;
	stats->decoded_w = sw;
	stats->decoded_h = sh;
	return 0;
}

const struct slab_image_format slab_image_webp = {
	.name = "WebP",
	.probe = probe,
	.cut_short = cut_short,
	.state_new = state_new,
	.state_free = state_free,
	.size = size,
	.decode = decode,
};
