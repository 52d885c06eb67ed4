/* jpeg.c: JPEG header parsing, full-decode checks and downscaling re-encode, on top of
 * TurboJPEG 2.1; the downscale decodes through the image pipeline (slab.h: its DCT-scaled JPEG
 * decode and its resize), CMYK through an area-averaging filter of its own. All state lives
 * in the context, so one context per thread is safe. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "error.h"
#include "format.h"
#include "jpeg.h"
#include "slab.h"
#include "scratch.h"

/* A growable scratch buffer, kept across calls so a busy thread stops allocating. */
/* Output pixel x of a resize takes source pixels first .. first + count - 1, whose weights
 * start at woff in the weight table. */
struct span {
	uint32_t first;
	uint32_t count;
	size_t woff;
};

struct slab_jpeg {
	tjhandle dec;
	tjhandle enc;           /* made by the first fit() that re-encodes */
	struct slab_image_decoder *img;  /* the pipeline's, made by the first fit() through it */
	struct slab_err err;
	uint64_t max_pixels;             /* UINT64_MAX: none */
	unsigned max_scans;              /* UINT_MAX: none */
	struct slab_scratch pix;         /* decoded pixels */
	struct slab_scratch small;       /* resized pixels */
	struct slab_scratch vrow;        /* uint32_t: decoded rows summed vertically for one output row */
	struct slab_scratch spans;       /* struct span: the x spans, then the y spans */
	struct slab_scratch weights;     /* uint32_t */
};

/* TurboJPEG's text for the last failure of handle h, without the trailing newline some
 * libjpeg messages carry. */
static const char *tj_message(tjhandle h, char *tmp, size_t len)
{
	const char *m = tjGetErrorStr2(h);
	size_t n;

	snprintf(tmp, len, "%s", m ? m : "unknown error");
	n = strlen(tmp);
	while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' '))
		tmp[--n] = '\0';
	return tmp;
}

/* TurboJPEG 2.1 has no error code for a failed allocation, only its text: libjpeg's
 * JERR_OUT_OF_MEMORY, "Insufficient memory (case N)", or TurboJPEG's own "tjX(): Memory
 * allocation failure". Out of memory says nothing about the JPEG: it must not be taken for a
 * corrupt one. */
static int tj_nomem(const char *msg)
{
	return strstr(msg, "Insufficient memory") || strstr(msg, "Memory allocation failure");
}

/* a * b * c, or 0 when it does not fit a size_t. */
static size_t mul3(size_t a, size_t b, size_t c)
{
	if (a == 0 || b == 0 || c == 0)
		return 0;
	if (a > SIZE_MAX / b || a * b > SIZE_MAX / c)
		return 0;
	return a * b * c;
}

struct slab_jpeg *slab_jpeg_new(void)
{
	struct slab_jpeg *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->dec = tjInitDecompress();
	if (!j->dec) {
		free(j);
		return NULL;
	}
	slab_jpeg_limits(j, 0, 0);
	return j;
}

void slab_jpeg_limits(struct slab_jpeg *j, uint64_t max_pixels, unsigned max_scans)
{
	j->max_pixels = max_pixels ? max_pixels : SLAB_IMAGE_MAX_PIXELS;
	j->max_scans = max_scans ? max_scans : SLAB_IMAGE_MAX_SCANS;
	if (j->img)
		slab_image_decoder_limits(j->img, j->max_pixels, j->max_scans);
}

void slab_jpeg_free(struct slab_jpeg *j)
{
	if (!j)
		return;
	if (j->dec)
		tjDestroy(j->dec);
	if (j->enc)
		tjDestroy(j->enc);
	slab_image_decoder_free(j->img);
	slab_scratch_free(&j->pix);
	slab_scratch_free(&j->small);
	slab_scratch_free(&j->vrow);
	slab_scratch_free(&j->spans);
	slab_scratch_free(&j->weights);
	free(j);
}

const char *slab_jpeg_error(const struct slab_jpeg *j)
{
	return j ? j->err.text : "no JPEG context";
}

/* The sample precision from the first SOF marker, or -1 when none is found. Only used to
 * explain a refusal: libjpeg-turbo 2.1 decodes 8-bit JPEGs only. */
static int sof_precision(const unsigned char *p, size_t len)
{
	size_t i = 2;

	while (i + 1 < len) {
		unsigned m;
		size_t seglen;

		if (p[i] != 0xFF)
			return -1;
		while (i < len && p[i] == 0xFF)
			i++;
		if (i >= len)
			return -1;
		m = p[i++];
		if (m == 0x01 || (m >= 0xD0 && m <= 0xD7))
			continue;
		if (m == 0xD9 || m == 0xDA || i + 2 > len)
			return -1;
		seglen = (size_t)p[i] << 8 | p[i + 1];
		if (seglen < 2)
			return -1;
		if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
			return i + 2 < len ? p[i + 2] : -1;
		i += seglen;
	}
	return -1;
}

/*
 * TurboJPEG 2.1 leaves its decompressor mid-header when libjpeg fails inside
 * tjDecompressHeader3(), and every later call on the handle then fails ("two SOI markers").
 * A new handle is the only way back. When even that fails, the calls that follow fail
 * cleanly on the NULL handle until one succeeds.
 */
static void reset_decoder(struct slab_jpeg *j)
{
	if (j->dec)
		tjDestroy(j->dec);
	j->dec = tjInitDecompress();
}

/*
 * The header into *info. TurboJPEG 2.1 fails a header it has read in full in two cases we
 * want to tell apart from real failures, and it fills in the values before failing:
 * libjpeg warned (e.g. stray bytes before a marker: *warned is set and the error text kept),
 * or the subsampling is none it has a name for (SLAB_SAMP_UNKNOWN). The values start as
 * impossible ones so a failure before they are written cannot pass for either.
 */
static int read_header(struct slab_jpeg *j, const void *buf, size_t len,
		       struct slab_jpeg_info *info, int *warned)
{
	const unsigned char *p = buf;
	int w = 0, h = 0, samp = INT_MIN, cs = INT_MIN, prec;
	char msg[256];

	*warned = 0;
	if (!j->dec && !(j->dec = tjInitDecompress())) {
		return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory making a JPEG decoder");
	}
	if (!buf || len == 0) {
		return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "not a JPEG: no data");
	}
	if (len > ULONG_MAX) {
		return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "JPEG too large: %zu bytes", len);
	}
	if (tjDecompressHeader3(j->dec, p, (unsigned long)len, &w, &h, &samp, &cs) != 0) {
		int filled = w >= 1 && h >= 1 && cs >= 0 && cs <= TJCS_YCCK &&
			     samp >= -1 && samp < TJ_NUMSAMP;

		if (!filled) {
			tj_message(j->dec, msg, sizeof(msg));
			reset_decoder(j);
			if (tj_nomem(msg))
				return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL,
						 "out of memory reading a JPEG header: %s", msg);
			if (len < 3 || p[0] != 0xFF || p[1] != 0xD8 || p[2] != 0xFF)
				return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "not a JPEG: %s", msg);
			if ((prec = sof_precision(p, len)) > 0 && prec != 8)
				return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL,
						 "unsupported JPEG: %d-bit samples, only 8-bit JPEGs "
						 "can be decoded", prec);
			return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "bad JPEG header: %s", msg);
		}
		if (tjGetErrorCode(j->dec) == TJERR_WARNING) {
			*warned = 1;
			slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s",
				  tj_message(j->dec, msg, sizeof(msg)));
		}
	}
	/* Cut before its frame header, a JPEG "succeeds" with no size: libjpeg reads an end
	 * where the data ends. */
	if (w < 1 || h < 1) {
		reset_decoder(j);
		return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "bad JPEG header: no frame "
				 "header (SOF) before the data ends");
	}
	/* Before anything is decoded, and before a warning's verdict: a bomb is a bomb. */
	if ((uint64_t)w * (uint64_t)h > j->max_pixels)
		return slab_fail(&j->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_PIXELS_TEXT, (unsigned)w,
				 (unsigned)h, (unsigned long long)w * (unsigned long long)h,
				 (unsigned long long)j->max_pixels);
	info->width = (uint32_t)w;
	info->height = (uint32_t)h;
	info->subsamp = samp >= 0 ? samp : SLAB_SAMP_UNKNOWN;
	info->colorspace = cs;
	return 0;
}

/*
 * The scans of a JPEG as a decoder meets them, counted up to enough + 1: marker segments
 * skipped by their length, everything else (entropy-coded data, stray bytes) up to the next
 * 0xFF that starts a marker (not 0xFF00, a stuffed byte; not RSTn, not fill bytes), an SOS
 * counted, EOI the end. Linear in the bytes, no allocation. A JPEG it cannot walk to the end
 * counts what it found: the decoder says what is wrong with it.
 */
static unsigned count_scans(const unsigned char *p, size_t len, unsigned enough)
{
	size_t i = 2;
	unsigned n = 0;

	while (i < len && n <= enough) {
		const unsigned char *ff = memchr(p + i, 0xFF, len - i);
		unsigned m;
		size_t seglen;

		if (!ff)
			break;
		i = (size_t)(ff - p);
		while (i < len && p[i] == 0xFF)
			i++;
		if (i >= len)
			break;
		m = p[i++];
		if (m == 0x00 || m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7))
			continue;
		if (m == 0xD9 || i + 2 > len)
			break;
		seglen = (size_t)p[i] << 8 | p[i + 1];
		if (seglen < 2)
			break;
		i += seglen;
		if (m == 0xDA)
			n++;
	}
	return n;
}

/* SLAB_ERR_LIMIT when the JPEG has more scans than the limit, else 0. */
static int over_scans(struct slab_jpeg *j, const void *buf, size_t len)
{
	if (j->max_scans == UINT_MAX || count_scans(buf, len, j->max_scans) <= j->max_scans)
		return 0;
	return slab_fail(&j->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_SCANS_TEXT, j->max_scans,
			 j->max_scans);
}

/* TurboJPEG's own scan limit, 500 in 2.1, as a second check behind over_scans(): only when it
 * cannot refuse what the context's limit allows. */
static int limitscans(const struct slab_jpeg *j)
{
	return j->max_scans <= 500 ? TJFLAG_LIMITSCANS : 0;
}

int slab_jpeg_header(struct slab_jpeg *j, const void *buf, size_t len, struct slab_jpeg_info *info)
{
	int warned;

	return read_header(j, buf, len, info, &warned);
}

static int pixel_format(const struct slab_jpeg_info *info)
{
	switch (info->colorspace) {
	case SLAB_CS_GRAY:
		return TJPF_GRAY;
	case SLAB_CS_CMYK:
	case SLAB_CS_YCCK:
		/* libjpeg has no conversion from these to RGB; keep the four channels. */
		return TJPF_CMYK;
	default:
		return TJPF_RGB;
	}
}

/* Decode into j->pix at w x h, which must be the size of one of TurboJPEG's scaling factors. */
static int decode(struct slab_jpeg *j, const void *buf, size_t len, int w, int h, int pf, int flags)
{
	size_t need = mul3((size_t)w, (size_t)h, (size_t)tjPixelSize[pf]);
	char msg[256];

	/* need is 0 for a 0x0 picture too: a JPEG at fault, not memory. */
	if (need == 0) {
		return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "cannot decode a %dx%d JPEG", w, h);
	}
	if (slab_scratch_reserve(&j->pix, need) < 0) {
		return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a %dx%d JPEG",
				 w, h);
	}
	if (tjDecompress2(j->dec, buf, (unsigned long)len, j->pix.p, w, 0, h, pf, flags) != 0) {
		tj_message(j->dec, msg, sizeof(msg));
		if (strstr(msg, "more than 500 scans"))
			return slab_fail(&j->err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_SCANS_TEXT,
					 j->max_scans, j->max_scans);
		if (tj_nomem(msg)) {
			return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a JPEG: %s",
					 msg);
		}
		return slab_fail(&j->err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s", msg);
	}
	return 0;
}

int slab_jpeg_check(struct slab_jpeg *j, const void *buf, size_t len)
{
	struct slab_jpeg_info info;
	int warned, ret;

	ret = read_header(j, buf, len, &info, &warned);
	if (ret < 0)
		return ret;
	if (warned)
		return SLAB_ERR_CORRUPT;       /* the text says why already */
	if ((ret = over_scans(j, buf, len)) < 0)
		return ret;
	/*
	 * libjpeg finds corruption only in the markers and the entropy-coded data, which it
	 * decodes in full, every coefficient of every block, at any output scale; the IDCT,
	 * upsampling and colour conversion never fail. So decoding at 1/8 scale, with the fast
	 * methods, gives the same verdict as a full-size decode for 1/64 of the pixel memory
	 * and less time. The scan limit (over_scans(), LIMITSCANS) refuses progressive JPEGs of
	 * too many scans, a known way to make a small file take minutes to decode.
	 */
	ret = decode(j, buf, len, (int)(info.width + 7) / 8, (int)(info.height + 7) / 8,
		     pixel_format(&info), TJFLAG_STOPONWARNING | limitscans(j) |
		     TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE);
	slab_scratch_trim(&j->pix);
	return ret;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* round(side * max_side / longer), at least 1. */
static uint32_t scaled_side(uint32_t side, uint32_t max_side, uint32_t longer)
{
	uint64_t v = ((uint64_t)side * max_side * 2 + longer) / ((uint64_t)longer * 2);

	return v ? (uint32_t)v : 1;
}

void slab_fit_size(uint32_t w, uint32_t h, unsigned max_side, uint32_t *tw, uint32_t *th)
{
	uint32_t longer = w > h ? w : h;

	*tw = scaled_side(w, max_side, longer);
	*th = scaled_side(h, max_side, longer);
}

/*
 * Weights of an exact area-averaging resize along one axis of `side` JPEG pixels, decoded at
 * scaling num/denom to n = ceil(side * num / denom) pixels, down to m pixels. Measured in
 * 1/(num * m) of a JPEG pixel, output pixel x covers [x * side * num, (x + 1) * side * num)
 * and decoded pixel i covers [i * denom * m, (i + 1) * denom * m). Coordinates are the
 * JPEG's, not the decoded image's: the last decoded pixel may stand for a block that is
 * mostly the encoder's padding, and so weighs only the part inside the picture. All whole
 * numbers: every output's weights add up to side * num, and the result is the same on any
 * machine. Writes m spans and at most n + m weights.
 */
static void make_spans(struct span *sp, uint32_t *wt, size_t *woff, uint32_t side,
		       tjscalingfactor f, uint32_t m)
{
	uint64_t out_unit = (uint64_t)side * (uint32_t)f.num;
	uint64_t in_unit = (uint64_t)(uint32_t)f.denom * m;
	size_t k = *woff;

	for (uint32_t x = 0; x < m; x++) {
		uint64_t lo = x * out_unit, hi = lo + out_unit;
		uint32_t i = (uint32_t)(lo / in_unit), last = (uint32_t)((hi - 1) / in_unit);

		sp[x].first = i;
		sp[x].count = last - i + 1;
		sp[x].woff = k;
		for (; i <= last; i++) {
			uint64_t a = i * in_unit, b = a + in_unit;

			if (a < lo)
				a = lo;
			if (b > hi)
				b = hi;
			wt[k++] = (uint32_t)(b - a);
		}
	}
	*woff = k;
}

/* (n + d / 2) / d, exactly, without a 64-bit division per sample: a floating-point
 * estimate, then whole-number corrections, so the result is exact whatever the rounding of
 * the estimate. n < 2^52 and d < 2^50 here, well inside a double's exact range. */
static unsigned char div_round(uint64_t n, uint64_t d, double inv)
{
	uint64_t q;

	n += d / 2;
	q = (uint64_t)((double)n * inv);
	while (q * d > n)
		q--;
	while ((q + 1) * d <= n)
		q++;
	return (unsigned char)q;
}

/* One output row from one row of vertical sums: the horizontal box filter. Inlined with c
 * a constant so the channel loops unroll. */
static inline void filter_row(unsigned char *dst, const uint32_t *vrow, const struct span *xs,
			      const uint32_t *wt, uint32_t tw, unsigned c, uint64_t total,
			      double inv)
{
	for (uint32_t x = 0; x < tw; x++) {
		const uint32_t *v = vrow + (size_t)xs[x].first * c;
		const uint32_t *w = wt + xs[x].woff;

		for (unsigned ch = 0; ch < c; ch++) {
			uint64_t sum = 0;

			for (uint32_t u = 0; u < xs[x].count; u++)
				sum += (uint64_t)w[u] * v[(size_t)u * c + ch];
			dst[(size_t)x * c + ch] = div_round(sum, total, inv);
		}
	}
}

/* Box-filter j->pix (sw x sh, c channels, the JPEG's w x h decoded at scaling f) down to
 * j->small (tw x th). */
static int resize(struct slab_jpeg *j, uint32_t w, uint32_t h, tjscalingfactor f, uint32_t sw,
		  uint32_t sh, uint32_t tw, uint32_t th, unsigned c)
{
	size_t srclen = (size_t)sw * c, rowlen = (size_t)tw * c;
	size_t nspans = (size_t)tw + th, nweights = (size_t)sw + tw + sh + th;
	size_t woff = 0;
	uint64_t total = (uint64_t)w * (uint32_t)f.num * h * (uint32_t)f.num;
	double inv = 1.0 / (double)total;
	struct span *xs, *ys;
	const uint32_t *wt;
	uint32_t *vrow;

	if (slab_scratch_reserve(&j->small, mul3(tw, th, c)) < 0 ||
	    slab_scratch_reserve(&j->vrow, mul3(srclen, sizeof(uint32_t), 1)) < 0 ||
	    slab_scratch_reserve(&j->spans, mul3(nspans, sizeof(struct span), 1)) < 0 ||
	    slab_scratch_reserve(&j->weights, mul3(nweights, sizeof(uint32_t), 1)) < 0) {
		return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing to %ux%u",
				 (unsigned)tw, (unsigned)th);
	}
	xs = j->spans.p;
	ys = xs + tw;
	make_spans(xs, j->weights.p, &woff, w, f, tw);
	make_spans(ys, j->weights.p, &woff, h, f, th);
	wt = j->weights.p;
	vrow = j->vrow.p;

	/*
	 * Vertical first: the bulk of the work is then a plain multiply-add along whole rows,
	 * and the horizontal pass runs once per output row. A vertical sum stays below
	 * 255 * 8 * 65535, a full one below 2^47.
	 */
	for (uint32_t y = 0; y < th; y++) {
		unsigned char *dst = (unsigned char *)j->small.p + (size_t)y * rowlen;

		for (uint32_t t = 0; t < ys[y].count; t++) {
			const unsigned char *src = (const unsigned char *)j->pix.p +
						   (size_t)(ys[y].first + t) * srclen;
			uint32_t wy = wt[ys[y].woff + t];

			if (t == 0) {
				for (size_t k = 0; k < srclen; k++)
					vrow[k] = wy * src[k];
			} else {
				for (size_t k = 0; k < srclen; k++)
					vrow[k] += wy * src[k];
			}
		}
		switch (c) {
		case 1:
			filter_row(dst, vrow, xs, wt, tw, 1, total, inv);
			break;
		case 3:
			filter_row(dst, vrow, xs, wt, tw, 3, total, inv);
			break;
		default:
			filter_row(dst, vrow, xs, wt, tw, c, total, inv);
			break;
		}
	}
	return 0;
}

/*
 * CMYK and YCCK (which the pipeline turns into RGB) into j->small at tw x th, kept in four
 * channels: the smallest IDCT scaling that leaves at least twice the target on both sides
 * (Pillow's "reducing gap"), so the scaled IDCT's softer filtering and its padded edge blocks
 * stay a small share of each output pixel; under two blocks on a side, the blocks' errors
 * have nothing to average out with: no scaling. The box filter does the rest.
 */
static int fit_box(struct slab_jpeg *j, const void *buf, size_t len,
		   const struct slab_jpeg_info *in, uint32_t tw, uint32_t th, int pf)
{
	const tjscalingfactor *sf;
	tjscalingfactor best = { 1, 1 };
	uint32_t sw, sh;
	int nsf, r;

	sf = tjGetScalingFactors(&nsf);
	for (int i = 0; sf && i < nsf && min_u32(in->width, in->height) >= 16; i++) {
		if (sf[i].num > sf[i].denom)
			continue;
		if ((uint32_t)TJSCALED((int)in->width, sf[i]) < min_u32(2 * tw, in->width) ||
		    (uint32_t)TJSCALED((int)in->height, sf[i]) < min_u32(2 * th, in->height))
			continue;
		if ((int64_t)sf[i].num * best.denom < (int64_t)best.num * sf[i].denom)
			best = sf[i];
	}
	sw = (uint32_t)TJSCALED((int)in->width, best);
	sh = (uint32_t)TJSCALED((int)in->height, best);
	if ((r = decode(j, buf, len, (int)sw, (int)sh, pf,
			TJFLAG_STOPONWARNING | limitscans(j) | TJFLAG_ACCURATEDCT)) < 0)
		return r;
	return resize(j, in->width, in->height, best, sw, sh, tw, th, (unsigned)tjPixelSize[pf]);
}

/*
 * Grey, YCbCr and RGB JPEGs into j->small at tw x th, c channels (1 or 3), through the image
 * pipeline, as the loader decodes: the largest DCT scaling (1/8, 1/4, 1/2; 1/4 at most for
 * 4:2:2 and 4:4:0) whose output is still at least tw x th, so the resize after it only
 * shrinks, then its resize (PIL's BILINEAR with reducing) over the whole picture. Most of the
 * work of a downscale is then the entropy decoding, which no scaling avoids. Not for a sliver
 * fitted to under 16 pixels on a side: there the last row (column) of a scaled decode, a block
 * that is mostly the encoder's padding, would weigh as a whole pixel among the few the output
 * pixel takes in (a 2000x20 JPEG at 1/8 is 3 rows, the last of them 4 real rows in 8); it is
 * decoded at full size instead (such slivers are rare).
 */
static int fit_pipeline(struct slab_jpeg *j, const void *buf, size_t len,
			const struct slab_jpeg_info *in, uint32_t tw, uint32_t th, unsigned c)
{
	struct slab_image_spec spec;
	struct slab_image_params p;
	int r;

	if (!j->img) {
		if (!(j->img = slab_image_decoder_new()))
			return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL,
					 "out of memory making an image decoder");
		slab_image_decoder_limits(j->img, j->max_pixels, j->max_scans);
	}
	slab_image_spec_init(&spec, tw, th);
	spec.crop = SLAB_IMAGE_CROP_NONE;
	spec.channels = c;
	spec.exact = tw < 16 || th < 16;
	if ((r = slab_image_params(&spec, in->width, in->height, 0, 0, 0, &p)) < 0)
		return slab_fail(&j->err, r, NULL, "cannot fit a %ux%u JPEG to %ux%u",
				 (unsigned)in->width, (unsigned)in->height, (unsigned)tw,
				 (unsigned)th);
	if (slab_scratch_reserve(&j->small, mul3(tw, th, c)) < 0)
		return slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing to %ux%u",
				 (unsigned)tw, (unsigned)th);
	if ((r = slab_image_decode(j->img, buf, len, &spec, &p, j->small.p, NULL)) < 0)
		return slab_fail_from(&j->err, r, slab_image_error(j->img));
	return 0;
}

int slab_jpeg_fit(struct slab_jpeg *j, const void *buf, size_t len, unsigned max_side,
		  int quality, void **out, size_t *outlen, struct slab_jpeg_info *info)
{
	struct slab_jpeg_info in;
	unsigned char *jbuf = NULL;
	unsigned long jsize = 0;
	uint32_t longer, tw, th;
	int warned, pf, samp, r, ret = SLAB_ERR_CORRUPT;
	char msg[256];

	*out = NULL;
	*outlen = 0;
	if (quality < 1 || quality > 100) {
		ret = slab_fail(&j->err, SLAB_ERR_INVAL, NULL, "JPEG quality %d out of range 1..100",
				quality);
		goto out;
	}
	if (max_side < 1) {
		ret = slab_fail(&j->err, SLAB_ERR_INVAL, NULL, "maximum side must be at least 1");
		goto out;
	}
	if ((r = read_header(j, buf, len, &in, &warned)) < 0) {
		ret = r;
		goto out;
	}
	longer = in.width > in.height ? in.width : in.height;
	if (longer <= max_side) {
		*info = in;
		ret = 0;
		goto out;
	}
	if (warned)
		goto out;
	if ((r = over_scans(j, buf, len)) < 0) {
		ret = r;
		goto out;
	}
	slab_fit_size(in.width, in.height, max_side, &tw, &th);

	pf = pixel_format(&in);
	r = pf == TJPF_CMYK ? fit_box(j, buf, len, &in, tw, th, pf) :
	    fit_pipeline(j, buf, len, &in, tw, th, (unsigned)tjPixelSize[pf]);
	if (r < 0) {
		ret = r;
		goto out;
	}

	if (pf == TJPF_GRAY)
		samp = TJSAMP_GRAY;
	else if (in.subsamp >= 0 && in.subsamp < TJ_NUMSAMP && in.subsamp != TJSAMP_GRAY)
		samp = in.subsamp;
	else
		samp = TJSAMP_420;
	if (!j->enc && !(j->enc = tjInitCompress())) {
		ret = slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory making a JPEG encoder");
		goto out;
	}
	if (tjCompress2(j->enc, j->small.p, (int)tw, 0, (int)th, pf, &jbuf, &jsize, samp, quality,
			TJFLAG_ACCURATEDCT) != 0) {
		tj_message(j->enc, msg, sizeof(msg));
		ret = slab_fail(&j->err, tj_nomem(msg) ? SLAB_ERR_NOMEM : SLAB_ERR_CORRUPT, NULL,
				"%s: %s", tj_nomem(msg) ? "out of memory encoding a JPEG" :
				"JPEG encoding failed", msg);
		goto out;
	}
	/* Copied so the caller can free() it: TurboJPEG's buffers belong to tjFree(). */
	*out = malloc(jsize);
	if (!*out) {
		ret = slab_fail(&j->err, SLAB_ERR_NOMEM, NULL, "out of memory for a %lu-byte JPEG",
				jsize);
		goto out;
	}
	memcpy(*out, jbuf, jsize);
	*outlen = jsize;
	info->width = tw;
	info->height = th;
	info->subsamp = samp;
	info->colorspace = pf == TJPF_GRAY ? SLAB_CS_GRAY :
			   pf == TJPF_CMYK ? SLAB_CS_YCCK : SLAB_CS_YCBCR;
	ret = 1;
out:
	if (jbuf)
		tjFree(jbuf);
	slab_scratch_trim(&j->pix);
	slab_scratch_trim(&j->small);
	slab_scratch_trim(&j->vrow);
	return ret;
}
