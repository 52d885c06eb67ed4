/* test_image.c: unit tests of lib/dataset/image.c: crop parameters, the decode paths held to
 * the full decode, an independent PIL-style reference resize, colour spaces, corrupt input,
 * on JPEGs made in memory with TurboJPEG and on the corpus JPEGs in $SLAB_CORPUS/jpeg/.
 *
 * Tolerances (largest per-channel mean absolute error, 0..255 scale), checked below, with what
 * was measured when they were written:
 * - DCT-scaled paths vs full decode + crop + resize: <= 2.5 on smooth content in 4:4:4, 4:2:0
 *   and grey, and on the corpus photographs (measured 2.31, at 1/8); <= 4.0 for 4:2:2 and
 *   4:4:0, which are never decoded at 1/8 (measured 3.39 at 1/4; at 1/8 they were 5.57);
 *   <= 4.5 with hard-edged 24-pixel squares (measured 3.96; 6.08 with 4:2:2 at 1/8). The
 *   decoder's own downscaling is not PIL's triangle filter; that is the price of decoding 4 to
 *   64 times fewer pixels.
 * - region-only paths (scale 1, columns cropped, rows skipped) vs full decode: <= 0.5
 *   (measured 0.010).
 * - the full path vs an independent double-precision reference of PIL's BILINEAR resample:
 *   <= 0.5 (measured 0.036). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <spng.h>
#include <turbojpeg.h>
#include <webp/encode.h>

#include "jpegbomb.h"
#include "slab.h"
#include "unit.h"

struct blob {
	unsigned char *p;
	size_t len;
};

/* A picture with smooth ramps and a soft ring pattern, like a photograph's content; with
 * hard set, a hard-edged checkerboard of 24-pixel squares on top, the worst case for the
 * DCT-scaled paths. For TJPF_CMYK the four channels carry the same kinds of pattern. */
static int hard;

/* The scaled paths' tolerance for the picture at hand (see the top of the file). */
static double tol_scaled = 2.5;

static unsigned char *make_pixels(int w, int h, int pf)
{
	int ps = tjPixelSize[pf];
	unsigned char *pix = malloc((size_t)w * h * ps);

	if (!pix)
		abort();
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			unsigned char *p = pix + ((size_t)y * w + x) * ps;
			int r = x * 255 / (w > 1 ? w - 1 : 1);
			int g = y * 255 / (h > 1 ? h - 1 : 1);
			double d = sqrt((double)(x - w / 3) * (x - w / 3) + (double)(y - h / 2) * (y - h / 2));
			int b = (int)(128 + 90 * sin(d / 9.0)) + (hard ? (((x / 24 + y / 24) & 1) ? 30 : -30) : 0);

			b = b < 0 ? 0 : b > 255 ? 255 : b;
			if (pf == TJPF_GRAY) {
				p[0] = (unsigned char)((r + g + b) / 3);
			} else {
				p[0] = (unsigned char)r;
				p[1] = (unsigned char)g;
				p[2] = (unsigned char)b;
				if (ps == 4)
					p[3] = (unsigned char)(255 - (r + g) / 4);
			}
		}
	}
	return pix;
}

static struct blob encode(int w, int h, int pf, int samp)
{
	tjhandle tj = tjInitCompress();
	unsigned char *pix = make_pixels(w, h, pf), *jbuf = NULL;
	unsigned long jsize = 0;
	struct blob b = { NULL, 0 };

	if (!tj || tjCompress2(tj, pix, w, 0, h, pf, &jbuf, &jsize, samp, 90, 0) != 0) {
		fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(tj));
		abort();
	}
	b.p = malloc(jsize);
	if (!b.p)
		abort();
	memcpy(b.p, jbuf, jsize);
	b.len = jsize;
	tjFree(jbuf);
	tjDestroy(tj);
	free(pix);
	return b;
}

/* Full decode to RGB with TurboJPEG (CMYK converted here as PIL does with Adobe's inverted
 * CMYK, which TurboJPEG writes and reads). malloc'd, NULL on failure. */
static unsigned char *tj_rgb(const struct blob *b, int *w, int *h)
{
	tjhandle tj = tjInitDecompress();
	int samp, cs;
	unsigned char *pix = NULL;

	if (!tj || tjDecompressHeader3(tj, b->p, b->len, w, h, &samp, &cs) != 0)
		goto out;
	if (cs == TJCS_CMYK || cs == TJCS_YCCK) {
		unsigned char *c = malloc((size_t)*w * *h * 4);

		pix = malloc((size_t)*w * *h * 3);
		if (!c || !pix || tjDecompress2(tj, b->p, b->len, c, *w, 0, *h, TJPF_CMYK, 0) != 0)
			abort();
		for (size_t i = 0; i < (size_t)*w * *h; i++)
			for (int ch = 0; ch < 3; ch++)
				pix[3 * i + ch] = (unsigned char)lround(c[4 * i + ch] * c[4 * i + 3] / 255.0);
		free(c);
	} else {
		pix = malloc((size_t)*w * *h * 3);
		if (!pix || tjDecompress2(tj, b->p, b->len, pix, *w, 0, *h, TJPF_RGB, 0) != 0) {
			free(pix);
			pix = NULL;
		}
	}
out:
	if (tj)
		tjDestroy(tj);
	return pix;
}

/* PIL's BILINEAR resample (support widened by the reduction, horizontal pass rounded to
 * 8 bits, then vertical) written plainly in doubles, of the crop (x, y, cw, ch) of an RGB
 * picture of width sw. */
static void ref_resize(const unsigned char *src, int sw, int x0, int y0, int cw, int ch,
		       int ow, int oh, unsigned char *out)
{
	unsigned char *tmp = malloc((size_t)ch * ow * 3);

	if (!tmp)
		abort();
	for (int pass = 0; pass < 2; pass++) {
		int insz = pass ? ch : cw, outsz = pass ? oh : ow, lines = pass ? ow : ch;
		double scale = (double)insz / outsz, fs = scale < 1 ? 1 : scale;

		for (int o = 0; o < outsz; o++) {
			double c = (o + 0.5) * scale, sum = 0, wts[4096];
			int lo = (int)floor(c - fs + 0.5), hi = (int)floor(c + fs + 0.5);

			lo = lo < 0 ? 0 : lo;
			hi = hi > insz ? insz : hi;
			for (int i = lo; i < hi; i++) {
				double t = fabs((i - c + 0.5) / fs);

				wts[i - lo] = t < 1 ? 1 - t : 0;
				sum += wts[i - lo];
			}
			for (int l = 0; l < lines; l++) {
				for (int k = 0; k < 3; k++) {
					double v = 0;

					for (int i = lo; i < hi; i++) {
						double s = pass ? tmp[((size_t)i * ow + l) * 3 + k] :
							   src[((size_t)(y0 + l) * sw + x0 + i) * 3 + k];
						v += s * wts[i - lo] / sum;
					}
					v = floor(v + 0.5);
					v = v < 0 ? 0 : v > 255 ? 255 : v;
					if (pass)
						out[((size_t)o * ow + l) * 3 + k] = (unsigned char)v;
					else
						tmp[((size_t)l * ow + o) * 3 + k] = (unsigned char)v;
				}
			}
		}
	}
	free(tmp);
}

/* Largest per-channel mean absolute error between two HWC RGB pictures of n pixels. */
static double mae(const unsigned char *a, const unsigned char *b, size_t n)
{
	double s[3] = { 0, 0, 0 }, m = 0;

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			s[k] += abs((int)a[3 * i + k] - (int)b[3 * i + k]);
	for (int k = 0; k < 3; k++)
		m = fmax(m, s[k] / (double)n);
	return m;
}

static double worst_scaled, worst_region, worst_ref, worst_hard;

/* Decode b with spec and the parameters of (seed 7, epoch 0, index), fast and exact paths;
 * check the fast one against the exact one and the exact one against ref_resize. Returns the
 * fast path's stats. */
static struct slab_image_stats compare(struct slab_image_decoder *d, const struct blob *b,
				       struct slab_image_spec spec, uint64_t index)
{
	struct slab_image_params p;
	struct slab_image_stats st, st_exact;
	size_t n = (size_t)spec.out_w * spec.out_h;
	unsigned char *fast = malloc(n * 3), *exact = malloc(n * 3), *ref = malloc(n * 3), *full;
	uint32_t w = 0, h = 0;
	int fw, fh;
	double e;

	if (!fast || !exact || !ref)
		abort();
	CHECK(slab_image_size(d, b->p, b->len, &w, &h) == 0);
	CHECK(slab_image_params(&spec, w, h, 7, 0, index, &p) == 0);
	CHECK(slab_image_decode(d, b->p, b->len, &spec, &p, fast, &st) == 0);
	spec.exact = 1;
	CHECK(slab_image_decode(d, b->p, b->len, &spec, &p, exact, &st_exact) == 0);
	CHECK(st_exact.scale_denom == 1 && !st_exact.region);
	CHECK(st_exact.decoded_w == w && st_exact.decoded_h == h);
	e = mae(fast, exact, n);
	if (st.scale_denom > 1) {
		CHECK(e <= tol_scaled);
		if (hard)
			worst_hard = fmax(worst_hard, e);
		else
			worst_scaled = fmax(worst_scaled, e);
	} else {
		CHECK(e <= 0.5);
		worst_region = fmax(worst_region, e);
	}
	if (e > (st.scale_denom > 1 ? tol_scaled : 0.5))
		fprintf(stderr, "  %ux%u crop %ux%u+%u+%u -> %ux%u scale 1/%u region %d: MAE %.3f\n",
			w, h, p.w, p.h, p.x, p.y, spec.out_w, spec.out_h, st.scale_denom, st.region, e);
	full = tj_rgb(b, &fw, &fh);
	CHECK(full != NULL);
	if (full) {
		CHECK((uint32_t)fw == w && (uint32_t)fh == h);
		if (p.flip) {
			/* The reference has no flip: mirror our output back. */
			for (uint32_t y = 0; y < spec.out_h; y++)
				for (uint32_t x = 0; x < spec.out_w / 2; x++)
					for (int k = 0; k < 3; k++) {
						unsigned char *l = exact + ((size_t)y * spec.out_w + x) * 3 + k;
						unsigned char *r = exact + ((size_t)y * spec.out_w +
									    spec.out_w - 1 - x) * 3 + k;
						unsigned char t = *l;

						*l = *r;
						*r = t;
					}
		}
		ref_resize(full, fw, (int)p.x, (int)p.y, (int)p.w, (int)p.h, (int)spec.out_w,
			   (int)spec.out_h, ref);
		e = mae(exact, ref, n);
		CHECK(e <= 0.5);
		worst_ref = fmax(worst_ref, e);
		free(full);
	}
	free(fast);
	free(exact);
	free(ref);
	return st;
}

static void test_center_params(void)
{
	struct slab_image_spec s;
	struct slab_image_params p;

	slab_image_spec_init(&s, 224, 224);
	CHECK(slab_image_params(&s, 640, 480, 1, 2, 3, &p) == 0);
	CHECK(p.x == 80 && p.y == 0 && p.w == 480 && p.h == 480 && !p.flip);
	CHECK(slab_image_params(&s, 480, 640, 1, 2, 3, &p) == 0);
	CHECK(p.x == 0 && p.y == 80 && p.w == 480 && p.h == 480);
	CHECK(slab_image_params(&s, 3, 1000, 1, 2, 3, &p) == 0);
	CHECK(p.x == 0 && p.y == 498 && p.w == 3 && p.h == 3);
	slab_image_spec_init(&s, 10, 10);
	CHECK(slab_image_params(&s, 301, 200, 0, 0, 0, &p) == 0);
	CHECK(p.x == 50 && p.y == 0 && p.w == 200 && p.h == 200);
	slab_image_spec_init(&s, 100, 50);
	CHECK(slab_image_params(&s, 500, 300, 0, 0, 0, &p) == 0);
	CHECK(p.x == 0 && p.y == 25 && p.w == 500 && p.h == 250);
	/* 2:3 output of a 100x100: 67x100 (66.67 rounded), x = 16. */
	slab_image_spec_init(&s, 2, 3);
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == 0);
	CHECK(p.x == 16 && p.y == 0 && p.w == 67 && p.h == 100);
	s.crop = SLAB_IMAGE_CROP_NONE;
	CHECK(slab_image_params(&s, 123, 45, 0, 0, 0, &p) == 0);
	CHECK(p.x == 0 && p.y == 0 && p.w == 123 && p.h == 45);
	CHECK(slab_image_params(&s, 0, 45, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	s.out_w = 0;
	CHECK(slab_image_params(&s, 10, 45, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	slab_image_spec_init(&s, 8, 8);
	s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	s.scale_min = 0.9;
	s.scale_max = 0.5;
	CHECK(slab_image_params(&s, 10, 45, 0, 0, 0, &p) == SLAB_ERR_INVAL);
}

static void test_random_params(void)
{
	struct slab_image_spec s;
	struct slab_image_params p, q, first[200];
	const uint32_t W = 640, H = 480;
	int flips = 0, fallbacks = 0, same_index = 0, same_epoch = 0;

	slab_image_spec_init(&s, 224, 224);
	s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	s.flip = 1;
	for (uint64_t i = 0; i < 2000; i++) {
		CHECK(slab_image_params(&s, W, H, 42, 3, i, &p) == 0);
		CHECK(slab_image_params(&s, W, H, 42, 3, i, &q) == 0);
		CHECK(memcmp(&p, &q, sizeof(p)) == 0);
		CHECK(p.w >= 1 && p.h >= 1 && p.x + p.w <= W && p.y + p.h <= H);
		if (!p.fallback) {
			/* torchvision bounds hold before rounding w and h: allow half a pixel. */
			CHECK((p.w + 0.5) * (p.h + 0.5) >= 0.08 * W * H);
			CHECK((p.w - 0.5) * (p.h - 0.5) <= (double)W * H);
			CHECK((p.w + 0.5) / (p.h - 0.5) >= 3.0 / 4.0);
			CHECK((p.w - 0.5) / (p.h + 0.5) <= 4.0 / 3.0);
		}
		fallbacks += p.fallback;
		flips += p.flip;
		if (i < 200) {
			first[i] = p;
			CHECK(slab_image_params(&s, W, H, 42, 4, i, &q) == 0);
			same_epoch += memcmp(&p, &q, sizeof(p)) == 0;
			CHECK(slab_image_params(&s, W, H, 43, 3, i, &q) == 0);
			same_epoch += memcmp(&p, &q, sizeof(p)) == 0;
		}
	}
	for (int i = 0; i < 200; i++)
		for (int j = 0; j < i; j++)
			same_index += first[i].x == first[j].x && first[i].y == first[j].y &&
				      first[i].w == first[j].w && first[i].h == first[j].h;
	CHECK(same_index <= 2);
	CHECK(same_epoch <= 4);
	CHECK(flips > 850 && flips < 1150);
	/* On a 4:3 picture the first attempt succeeds most of the time. */
	CHECK(fallbacks < 20);

	/* No attempt can fit a 10000x10 strip: the fallback, clamped to ratio 4/3: 13x10. */
	CHECK(slab_image_params(&s, 10000, 10, 1, 1, 1, &p) == 0);
	CHECK(p.fallback && p.w == 13 && p.h == 10 && p.x == 4993 && p.y == 0);
	CHECK(slab_image_params(&s, 10, 10000, 1, 1, 1, &p) == 0);
	CHECK(p.fallback && p.w == 10 && p.h == 13 && p.x == 0 && p.y == 4993);
	/* Flip off: never flipped. */
	s.flip = 0;
	for (uint64_t i = 0; i < 100; i++) {
		CHECK(slab_image_params(&s, W, H, 42, 3, i, &p) == 0);
		CHECK(!p.flip);
	}
}

static void test_paths(struct slab_image_decoder *d)
{
	static const int samps[] = { TJSAMP_444, TJSAMP_420, TJSAMP_422, TJSAMP_440, TJSAMP_GRAY };
	struct slab_image_spec s;
	struct slab_image_stats st;
	int seen[9] = { 0 }, seen_region = 0, seen_whole = 0;

	for (size_t k = 0; k < sizeof(samps) / sizeof(samps[0]); k++) {
		struct blob b = encode(643, 481, samps[k] == TJSAMP_GRAY ? TJPF_GRAY : TJPF_RGB,
				       samps[k]);
		int odd = samps[k] == TJSAMP_422 || samps[k] == TJSAMP_440;

		/* Centre crop 481x481+81+0: 32 -> 1/8 (1/4 when the chroma is subsampled in one
		 * direction only), 64 -> 1/4, 200 -> 1/2, 300 -> 1. */
		static const unsigned outs[] = { 32, 64, 200, 300 }, denoms[] = { 8, 4, 2, 1 };

		tol_scaled = hard ? 4.5 : odd ? 4.0 : 2.5;

		for (int o = 0; o < 4; o++) {
			unsigned want = odd && denoms[o] == 8 ? 4 : denoms[o];

			slab_image_spec_init(&s, outs[o], outs[o]);
			st = compare(d, &b, s, 0);
			CHECK(st.scale_denom == want);
			CHECK(st.region);
			CHECK(st.decoded_w < (643 + want - 1) / want);
			seen[st.scale_denom] = 1;
		}
		/* The whole picture: no region. */
		slab_image_spec_init(&s, 100, 90);
		s.crop = SLAB_IMAGE_CROP_NONE;
		st = compare(d, &b, s, 0);
		CHECK(st.scale_denom == 4 && !st.region);
		seen_whole += !st.region;
		/* Random crops, flipped half the time, at a size that scales some and not others. */
		slab_image_spec_init(&s, 96, 80);
		s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
		s.flip = 1;
		for (uint64_t i = 0; i < 12; i++) {
			st = compare(d, &b, s, i);
			seen_region += st.region;
			seen[st.scale_denom] = 1;
		}
		free(b.p);
	}
	tol_scaled = 2.5;
	CHECK(seen[1] && seen[2] && seen[4] && seen[8] && seen_region && seen_whole);
	printf("MAE: scaled vs full <= %.3f (hard edges %.3f), region-only vs full <= %.3f, "
	       "full vs reference <= %.3f\n", worst_scaled, worst_hard, worst_region, worst_ref);
}

static void test_cmyk(struct slab_image_decoder *d)
{
	struct blob b = encode(400, 300, TJPF_CMYK, TJSAMP_420);
	struct slab_image_spec s;
	struct slab_image_stats st;

	slab_image_spec_init(&s, 64, 48);
	st = compare(d, &b, s, 0);
	CHECK(st.scale_denom == 4);
	slab_image_spec_init(&s, 300, 200);
	st = compare(d, &b, s, 0);
	CHECK(st.scale_denom == 1 && st.region);
	free(b.p);
}

/* Flip mirrors; CHW is the transpose of HWC; both exactly. */
static void test_flip_chw(struct slab_image_decoder *d)
{
	struct blob b = encode(320, 240, TJPF_RGB, TJSAMP_420);
	struct slab_image_spec s;
	struct slab_image_params p;
	unsigned char a[40 * 30 * 3], f[40 * 30 * 3], c[40 * 30 * 3];

	slab_image_spec_init(&s, 40, 30);
	CHECK(slab_image_params(&s, 320, 240, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, a, NULL) == 0);
	p.flip = 1;
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, f, NULL) == 0);
	p.flip = 0;
	s.chw = 1;
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, c, NULL) == 0);
	for (int y = 0; y < 30; y++)
		for (int x = 0; x < 40; x++)
			for (int k = 0; k < 3; k++) {
				CHECK(a[(y * 40 + x) * 3 + k] == f[(y * 40 + 39 - x) * 3 + k]);
				CHECK(a[(y * 40 + x) * 3 + k] == c[k * 1200 + y * 40 + x]);
			}
	/* A rectangle outside the picture is the caller's error. */
	p.x = 300;
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, a, NULL) == SLAB_ERR_INVAL);
	CHECK(strstr(slab_image_error(d), "outside a 320x240 image") != NULL);
	free(b.p);
}

static void test_corrupt(struct slab_image_decoder *d)
{
	struct blob b = encode(320, 240, TJPF_RGB, TJSAMP_420);
	struct slab_image_spec s;
	struct slab_image_params p;
	unsigned char good[32 * 32 * 3], again[32 * 32 * 3];
	static const unsigned char gif[] = { 'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0 };
	uint32_t w, h;

	slab_image_spec_init(&s, 32, 32);
	s.crop = SLAB_IMAGE_CROP_NONE;
	CHECK(slab_image_params(&s, 320, 240, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, good, NULL) == 0);

	/* A format the pipeline does not know: found by its bytes, refused naming them. */
	CHECK(slab_image_size(d, gif, sizeof(gif), &w, &h) == SLAB_ERR_CORRUPT);
	CHECK(strncmp(slab_image_error(d), "not a JPEG", 10) == 0);
	CHECK(strstr(slab_image_error(d), " image: starts with 0x47 0x49 0x46 0x38") != NULL);
	CHECK(slab_image_decode(d, gif, sizeof(gif), &s, &p, again, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strstr(slab_image_error(d), " image: starts with 0x47 0x49 0x46 0x38") != NULL);
	CHECK(slab_image_size(d, gif, 0, &w, &h) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_image_error(d), "not an image: no bytes");
	/* Cut in the scan data: libjpeg's "Premature end" warning counts. */
	CHECK(slab_image_decode(d, b.p, b.len / 2, &s, &p, again, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strstr(slab_image_error(d), "Premature end of JPEG file") != NULL);
	/* Cut in the header. */
	CHECK(slab_image_decode(d, b.p, 40, &s, &p, again, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strncmp(slab_image_error(d), "corrupt JPEG: ", 14) == 0);
	CHECK(slab_image_size(d, b.p, 40, &w, &h) == SLAB_ERR_CORRUPT);
	CHECK(slab_image_decode(d, b.p, 0, &s, &p, again, NULL) == SLAB_ERR_CORRUPT);
	/* Scan data overwritten: an error or a warning, either way corrupt. */
	{
		unsigned char *x = malloc(b.len);

		memcpy(x, b.p, b.len);
		for (size_t i = b.len / 3; i < b.len / 3 + 64; i++)
			x[i] = 0xff;
		CHECK(slab_image_decode(d, x, b.len, &s, &p, again, NULL) == SLAB_ERR_CORRUPT);
		CHECK(strlen(slab_image_error(d)) > strlen("corrupt JPEG: "));
		free(x);
	}
	/* The decoder still works, and gives the same bytes. */
	CHECK(slab_image_size(d, b.p, b.len, &w, &h) == 0 && w == 320 && h == 240);
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, again, NULL) == 0);
	CHECK(memcmp(good, again, sizeof(good)) == 0);
	free(b.p);
}

/* slab_image_size() giving want_size, then slab_image_decode() with a centre crop for the
 * size the JPEG declares (w x h: the size call may refuse it) giving want; the decoder's text
 * after the decode. */
static const char *size_and_decode(struct slab_image_decoder *d, const struct bomb *b,
				   unsigned w, unsigned h, int want_size, int want)
{
	struct slab_image_spec s;
	struct slab_image_params p;
	unsigned char out[16 * 16 * 3];
	uint32_t gw, gh;

	CHECK(slab_image_size(d, b->p, b->len, &gw, &gh) == want_size);
	slab_image_spec_init(&s, 16, 16);
	CHECK(slab_image_params(&s, w, h, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, b->p, b->len, &s, &p, out, NULL) == want);
	return slab_image_error(d);
}

/* Decompression bombs: refused by their header (pixels) or as the scans come (scans), with
 * SLAB_ERR_LIMIT and the documented texts, before libjpeg allocates for them; the limits
 * move both ways; the decoder goes on working. Run first: the peak RSS is checked after. */
static void test_bombs(void)
{
	struct slab_image_decoder *d = slab_image_decoder_new();
	struct bomb pix = bomb_pixels(40000, 40000), hdr = bomb_header(65500, 65500);
	struct bomb scans = bomb_scans(1024, 1024, 2000), fine = bomb_scans(256, 256, 883);
	struct bomb flat = bomb_flat(2000, 1000);
	struct blob good = encode(320, 240, TJPF_RGB, TJSAMP_420);
	struct slab_image_spec s;
	struct slab_image_params p;
	unsigned char out[16 * 16 * 3];
	uint32_t w, h;
	struct rusage ru;

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK_STR(slab_image_error(d), "");
	CHECK(pix.len < 1000 && hdr.len < 1000);

	/* Pixels: by slab_image_size() and by slab_image_decode() (which does not trust that
	 * the caller asked the size first). */
	CHECK(slab_image_size(d, pix.p, pix.len, &w, &h) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_image_error(d), "JPEG of 40000x40000 pixels (1600000000): over the limit of "
		  "178956970 pixels");
	CHECK_STR(size_and_decode(d, &pix, 40000, 40000, SLAB_ERR_LIMIT, SLAB_ERR_LIMIT),
		  "JPEG of 40000x40000 pixels (1600000000): over the limit of 178956970 pixels");
	CHECK_STR(size_and_decode(d, &hdr, 65500, 65500, SLAB_ERR_LIMIT, SLAB_ERR_LIMIT),
		  "JPEG of 65500x65500 pixels (4290250000): over the limit of 178956970 pixels");

	/* Scans: 1024 x 1024 is within the pixel limit; scan 501 stops the decode. */
	CHECK(slab_image_size(d, scans.p, scans.len, &w, &h) == 0 && w == 1024 && h == 1024);
	CHECK_STR(size_and_decode(d, &scans, 1024, 1024, 0, SLAB_ERR_LIMIT),
		  "JPEG of more than 500 scans: over the limit of 500 scans");

	/* 883 scans, none warned about: over the default, within a limit of 883, not 882. */
	CHECK_STR(size_and_decode(d, &fine, 256, 256, 0, SLAB_ERR_LIMIT),
		  "JPEG of more than 500 scans: over the limit of 500 scans");
	slab_image_decoder_limits(d, 0, 883);
	size_and_decode(d, &fine, 256, 256, 0, 0);
	slab_image_decoder_limits(d, 0, 882);
	CHECK_STR(size_and_decode(d, &fine, 256, 256, 0, SLAB_ERR_LIMIT),
		  "JPEG of more than 882 scans: over the limit of 882 scans");
	/* No scan limit: all 2000 scans are taken in, and libjpeg's warnings about the ones
	 * past 883 make it corrupt. */
	slab_image_decoder_limits(d, 0, UINT_MAX);
	CHECK(strstr(size_and_decode(d, &scans, 1024, 1024, 0, SLAB_ERR_CORRUPT),
		     "Inconsistent progression sequence") != NULL);

	/* A lower pixel limit refuses an ordinary JPEG, exactly at the limit; a higher one lets a
	 * large cheap one through; 0 is the default again. */
	slab_image_decoder_limits(d, 320 * 240 - 1, 0);
	CHECK(slab_image_size(d, good.p, good.len, &w, &h) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_image_error(d), "JPEG of 320x240 pixels (76800): over the limit of 76799 pixels");
	slab_image_spec_init(&s, 16, 16);
	CHECK(slab_image_params(&s, 320, 240, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, good.p, good.len, &s, &p, out, NULL) == SLAB_ERR_LIMIT);
	slab_image_decoder_limits(d, 320 * 240, 0);
	CHECK(slab_image_size(d, good.p, good.len, &w, &h) == 0);
	CHECK(slab_image_decode(d, good.p, good.len, &s, &p, out, NULL) == 0);
	slab_image_decoder_limits(d, 1999999, 0);
	CHECK_STR(size_and_decode(d, &flat, 2000, 1000, SLAB_ERR_LIMIT, SLAB_ERR_LIMIT),
		  "JPEG of 2000x1000 pixels (2000000): over the limit of 1999999 pixels");
	slab_image_decoder_limits(d, 2000000, 0);
	size_and_decode(d, &flat, 2000, 1000, 0, 0);
	slab_image_decoder_limits(d, UINT64_MAX, 0);
	size_and_decode(d, &flat, 2000, 1000, 0, 0);
	slab_image_decoder_limits(d, 0, 0);
	CHECK_STR(size_and_decode(d, &pix, 40000, 40000, SLAB_ERR_LIMIT, SLAB_ERR_LIMIT),
		  "JPEG of 40000x40000 pixels (1600000000): over the limit of 178956970 pixels");
	CHECK_STR(size_and_decode(d, &scans, 1024, 1024, 0, SLAB_ERR_LIMIT),
		  "JPEG of more than 500 scans: over the limit of 500 scans");

	/* Never a text that says nothing. */
	CHECK(strstr(slab_image_error(d), "no error") == NULL);
	/* Still a working decoder. */
	CHECK(slab_image_decode(d, good.p, good.len, &s, &p, out, NULL) == 0);

	/* Nothing the size of a bomb was ever allocated (a 40000 x 40000 one alone would take
	 * 3.2 GB): the peak RSS of the whole test so far. */
	CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
	if (ru.ru_maxrss > 200 * 1024)
		fprintf(stderr, "peak RSS %ld KiB after the bombs\n", ru.ru_maxrss);
	CHECK(ru.ru_maxrss <= 200 * 1024);

	free(pix.p);
	free(hdr.p);
	free(scans.p);
	free(fine.p);
	free(flat.p);
	free(good.p);
	slab_image_decoder_free(d);
}

static int read_file(const char *path, struct blob *b)
{
	FILE *f = fopen(path, "rb");
	long n;

	b->p = NULL;
	b->len = 0;
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b->p = malloc((size_t)n);
	b->len = b->p && fread(b->p, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
	fclose(f);
	return b->len ? 0 : -1;
}

static void test_corpus(struct slab_image_decoder *d)
{
	static const char *names[] = { "testorig.jpg", "testimgint.jpg", "testimgari.jpg" };
	const char *dir = getenv("SLAB_CORPUS");
	char path[4096];
	struct blob b;
	struct slab_image_spec s;
	struct slab_image_params p;
	unsigned char out[16 * 16 * 3];

	if (!dir || !*dir) {
		printf("skip: corpus tests: SLAB_CORPUS is not set\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/jpeg/testorig.jpg", dir);
	if (read_file(path, &b) < 0) {
		printf("skip: corpus tests: cannot read %s\n", path);
		free(b.p);
		return;
	}
	free(b.p);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/jpeg/%s", dir, names[i]);
		CHECK(read_file(path, &b) == 0);
		slab_image_spec_init(&s, 64, 64);
		compare(d, &b, s, 0);           /* 149x149 crop: 1/2 */
		slab_image_spec_init(&s, 100, 80);
		compare(d, &b, s, 0);           /* scale 1, region */
		slab_image_spec_init(&s, 24, 24);
		s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
		s.flip = 1;
		for (uint64_t k = 0; k < 4; k++)
			compare(d, &b, s, k);
		free(b.p);
	}
	/* 12-bit samples: refused as a corrupt sample, saying so. */
	snprintf(path, sizeof(path), "%s/jpeg/monkey12.jpg", dir);
	CHECK(read_file(path, &b) == 0);
	slab_image_spec_init(&s, 16, 16);
	p = (struct slab_image_params){ 0, 0, 16, 16, 0, 0 };
	CHECK(slab_image_decode(d, b.p, b.len, &s, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_image_error(d), "unsupported JPEG: 12-bit samples, only 8-bit JPEGs can be decoded");
	free(b.p);
}

/* center_ratio: the centre crop scaled on each side, rounded half up, centred at the floor of
 * half the margin; 0 (a zeroed spec) and 1 keep the whole short side. Boxes exact, and
 * against torchvision's Resize(256) + CenterCrop(224) mapped back to the source: within 0.75
 * source pixel on the short side, and that plus one resized pixel on the long side. */
static void test_center_ratio(void)
{
	struct slab_image_spec s, z;
	struct slab_image_params p, q;
	const double r = 224.0 / 256.0;

	slab_image_spec_init(&s, 224, 224);
	CHECK(s.center_ratio == 1.0);
	z = s;
	z.center_ratio = 0;
	CHECK(slab_image_params(&s, 641, 479, 0, 0, 0, &p) == 0);
	CHECK(slab_image_params(&z, 641, 479, 0, 0, 0, &q) == 0);
	CHECK(memcmp(&p, &q, sizeof(p)) == 0 && p.w == 479 && p.h == 479 && p.x == 81);
	s.center_ratio = r;
	CHECK(slab_image_params(&s, 500, 375, 0, 0, 0, &p) == 0);       /* 328.125 */
	CHECK(p.w == 328 && p.h == 328 && p.x == 86 && p.y == 23);
	CHECK(slab_image_params(&s, 640, 480, 0, 0, 0, &p) == 0);       /* 420 */
	CHECK(p.w == 420 && p.h == 420 && p.x == 110 && p.y == 30);
	CHECK(slab_image_params(&s, 256, 256, 0, 0, 0, &p) == 0);       /* torchvision's own */
	CHECK(p.w == 224 && p.h == 224 && p.x == 16 && p.y == 16);
	CHECK(slab_image_params(&s, 333, 500, 0, 0, 0, &p) == 0);       /* 291.375 */
	CHECK(p.w == 291 && p.h == 291 && p.x == 21 && p.y == 104);
	CHECK(slab_image_params(&s, 1, 1, 0, 0, 0, &p) == 0);
	CHECK(p.w == 1 && p.h == 1 && p.x == 0 && p.y == 0);
	/* Half up: 4 x 0.625 = 2.5 gives 3. */
	slab_image_spec_init(&s, 8, 8);
	s.center_ratio = 0.625;
	CHECK(slab_image_params(&s, 100, 4, 0, 0, 0, &p) == 0);
	CHECK(p.w == 3 && p.h == 3 && p.x == 48 && p.y == 0);
	s.center_ratio = 1e-9;
	CHECK(slab_image_params(&s, 100, 40, 0, 0, 0, &p) == 0);
	CHECK(p.w == 1 && p.h == 1 && p.x == 49 && p.y == 19);
	/* Not square: the limiting side scaled, the other from the output's aspect. 100x50 of
	 * 500x300: the width limits, 250, then 125; 2:3 of 100x100: the height, 50, then 33. */
	slab_image_spec_init(&s, 100, 50);
	s.center_ratio = 0.5;
	CHECK(slab_image_params(&s, 500, 300, 0, 0, 0, &p) == 0);
	CHECK(p.w == 250 && p.h == 125 && p.x == 125 && p.y == 87);
	slab_image_spec_init(&s, 2, 3);
	s.center_ratio = 0.5;
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == 0);
	CHECK(p.w == 33 && p.h == 50 && p.x == 33 && p.y == 25);
	/* Out of range: refused with a centre crop, ignored by the others. */
	s.center_ratio = 1.5;
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	s.center_ratio = -0.5;
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	s.center_ratio = NAN;
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	CHECK(slab_image_params(&s, 100, 100, 0, 0, 0, &p) == 0);
	/* Every size up to 1200 x 1200 in steps: the exact box, and torchvision's. */
	slab_image_spec_init(&s, 224, 224);
	s.center_ratio = r;
	for (uint32_t W = 1; W < 1200; W += 7) {
		for (uint32_t H = 1; H < 1200; H += 5) {
			uint32_t m = W < H ? W : H, side = (uint32_t)floor(m * r + 0.5);
			/* torchvision: the short side to 256, the long one int(256 * long / short);
			 * CenterCrop's offsets int(round((size - 224) / 2.0)), half to even. */
			double nw = W <= H ? 256 : floor(256.0 * W / H);
			double nh = W <= H ? floor(256.0 * H / W) : 256;
			double sx = W / nw, sy = H / nh;
			double x0 = nearbyint((nw - 224) / 2) * sx, y0 = nearbyint((nh - 224) / 2) * sy;
			double slack_x = W <= H ? 0 : sx, slack_y = W <= H ? sy : 0;

			if (side < 1)
				side = 1;
			CHECK(slab_image_params(&s, W, H, 0, 0, 0, &p) == 0);
			CHECK(p.w == side && p.h == side && p.x == (W - side) / 2 && p.y == (H - side) / 2);
			CHECK(fabs(p.w - 224 * sx) <= 0.5 + slack_x && fabs(p.h - 224 * sy) <= 0.5 + slack_y);
			CHECK(fabs(p.x - x0) <= 0.75 + slack_x && fabs(p.y - y0) <= 0.75 + slack_y);
		}
	}
}

/* PNG (image_png.c): every colour type and bit depth, Adam7, made in memory with libspng's
 * encoder; at full size exactly the samples (1, 2, 4-bit grey widened by repeating the bits,
 * 16-bit rounded as (v * 255 + 32767) / 65535, palette entries, alpha dropped); any crop's
 * rows-only path byte for byte the --exact path's, with the stats saying what was decoded
 * (whole rows up to the crop's last; Adam7 whole); a cut PNG corrupt, the decoder usable
 * after it. */
static uint16_t png_sample(int depth, uint32_t x, uint32_t y, int k)
{
	uint32_t v = x * 37 + y * 101 + (uint32_t)k * 53 + x * y;

	return (uint16_t)(depth == 16 ? v * 2459u % 65536 : v % (1u << depth));
}

/* A w x h PNG of png_sample()'s samples (palette: index png_sample(depth, x, y, 0) into a
 * palette of 2^depth entries), in *b; its RGB, as the pipeline must give it, in rgb. */
static void png_make(struct blob *b, unsigned char *rgb, uint32_t w, uint32_t h, int ctype,
		     int depth, int interlace)
{
	static const int channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
	int ch = channels[ctype], err = 0;
	size_t stride = ((size_t)w * ch * depth + 7) / 8;
	unsigned char *raw = calloc(stride, h);
	struct spng_ihdr ih = { .width = w, .height = h, .bit_depth = (uint8_t)depth,
				.color_type = (uint8_t)ctype, .interlace_method = (uint8_t)interlace };
	struct spng_plte pl = { .n_entries = ctype == 3 ? 1u << depth : 0 };
	spng_ctx *c = spng_ctx_new(SPNG_CTX_ENCODER);

	CHECK(raw && c);
	for (uint32_t i = 0; i < pl.n_entries; i++) {
		pl.entries[i].red = (uint8_t)(i * 73);
		pl.entries[i].green = (uint8_t)(i * 91 + 5);
		pl.entries[i].blue = (uint8_t)(255 - i);
	}
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++) {
			unsigned char *o = rgb + ((size_t)y * w + x) * 3;

			for (int k = 0; k < ch; k++) {
				uint16_t v = png_sample(depth, x, y, k);
				size_t bit = ((size_t)x * ch + k) * depth;
				unsigned char *r = raw + (size_t)y * stride;

				if (depth == 16)
					memcpy(r + bit / 8, &v, 2);     /* SPNG_FMT_PNG: host order */
				else
					r[bit / 8] |= (unsigned char)(v << (8 - depth - bit % 8));
				if (ctype == 3) {
					o[0] = pl.entries[v].red;
					o[1] = pl.entries[v].green;
					o[2] = pl.entries[v].blue;
				} else if (k < 3 && (ctype == 2 || ctype == 6 || k == 0)) {
					unsigned v8 = depth == 16 ? ((uint32_t)v * 255 + 32767) / 65535 :
						      v * 255u / ((1u << depth) - 1);

					memset(o + k, (int)v8, ctype == 2 || ctype == 6 ? 1 : 3);
				}
			}
		}
	}
	CHECK(spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1) == 0);
	CHECK(spng_set_ihdr(c, &ih) == 0);
	if (ctype == 3)
		CHECK(spng_set_plte(c, &pl) == 0);
	CHECK(spng_encode_image(c, raw, stride * h, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE) == 0);
	b->p = spng_get_png_buffer(c, &b->len, &err);
	CHECK(b->p && err == 0);
	spng_ctx_free(c);
	free(raw);
}

static void test_png(struct slab_image_decoder *d)
{
	static const int kinds[][2] = { { 0, 1 }, { 0, 2 }, { 0, 4 }, { 0, 8 }, { 0, 16 },
					{ 2, 8 }, { 2, 16 }, { 3, 1 }, { 3, 2 }, { 3, 4 },
					{ 3, 8 }, { 4, 8 }, { 4, 16 }, { 6, 8 }, { 6, 16 } };
	const uint32_t w = 45, h = 37;
	unsigned char *want = malloc((size_t)w * h * 3), *got = malloc((size_t)w * h * 3);
	unsigned char fast[24 * 16 * 3], exact[24 * 16 * 3];
	struct slab_image_spec s, x;
	struct slab_image_params p;
	struct slab_image_stats st;
	uint32_t gw, gh;

	CHECK(want && got);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (int il = 0; il < 2; il++) {
			struct blob b;

			png_make(&b, want, w, h, kinds[k][0], kinds[k][1], il);
			CHECK(slab_image_size(d, b.p, b.len, &gw, &gh) == 0 && gw == w && gh == h);
			slab_image_spec_init(&s, w, h);
			s.crop = SLAB_IMAGE_CROP_NONE;
			CHECK(slab_image_params(&s, w, h, 0, 0, 0, &p) == 0);
			CHECK(slab_image_decode(d, b.p, b.len, &s, &p, got, &st) == 0);
			CHECK(memcmp(got, want, (size_t)w * h * 3) == 0);
			CHECK(st.scale_denom == 1 && !st.region && st.decoded_w == w && st.decoded_h == h);
			slab_image_spec_init(&s, 24, 16);
			s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
			s.flip = 1;
			x = s;
			x.exact = 1;
			for (uint64_t i = 0; i < 12; i++) {
				CHECK(slab_image_params(&s, w, h, 7, 1, i, &p) == 0);
				CHECK(slab_image_decode(d, b.p, b.len, &s, &p, fast, &st) == 0);
				CHECK(slab_image_decode(d, b.p, b.len, &x, &p, exact, NULL) == 0);
				CHECK(memcmp(fast, exact, sizeof(fast)) == 0);
				CHECK(st.scale_denom == 1 && st.decoded_w == w);
				CHECK(st.decoded_h == (il ? h : p.y + p.h));
				CHECK(st.region == (!il && p.y + p.h < h));
			}
			/* Cut short: corrupt, and the decoder decodes the whole one again. */
			CHECK(slab_image_decode(d, b.p, b.len - 20, &x, &p, exact, NULL) ==
			      SLAB_ERR_CORRUPT);
			CHECK(strncmp(slab_image_error(d), "corrupt PNG: ", 13) == 0);
			CHECK(slab_image_decode(d, b.p, b.len, &s, &p, exact, NULL) == 0);
			CHECK(memcmp(fast, exact, sizeof(fast)) == 0);
			free(b.p);
		}
	}
	free(want);
	free(got);
}

/* WebP (image_webp.c), made in memory with libwebp's encoder: the decoded region and scale the
 * stats report (a crop from an even column and row, lossy one pixel wider on each side;
 * scaled to the smallest size that keeps the crop at least the output), the scaled path
 * within 2.5 of the exact one, a crop outside the image, bare VP8X headers (animated: an
 * error; over the pixel limit: refused by size()), a cut file; the decoder usable after. */
static void webp_le(unsigned char *b, uint32_t v, int n)
{
	for (int k = 0; k < n; k++)
		b[k] = (unsigned char)(v >> (8 * k));
}

/* A bare VP8X header (30 bytes): a w x h canvas with flags (0x02: an animation). */
static void webp_vp8x(unsigned char b[30], uint32_t w, uint32_t h, unsigned flags)
{
	memcpy(b, "RIFF", 4);
	webp_le(b + 4, 22, 4);
	memcpy(b + 8, "WEBPVP8X", 8);
	webp_le(b + 16, 10, 4);
	webp_le(b + 20, flags, 4);
	webp_le(b + 24, w - 1, 3);
	webp_le(b + 27, h - 1, 3);
}

static void test_webp(struct slab_image_decoder *d)
{
	unsigned char *px = make_pixels(256, 192, TJPF_RGB), b[30];
	unsigned char out[64 * 48 * 3], ref[64 * 48 * 3];
	uint8_t *lossy = NULL, *lossless = NULL;
	size_t nlossy = WebPEncodeRGB(px, 256, 192, 256 * 3, 90, &lossy);
	size_t nll = WebPEncodeLosslessRGB(px, 256, 192, 256 * 3, &lossless);
	struct slab_image_spec s;
	struct slab_image_params p;
	struct slab_image_stats st;
	uint32_t w = 0, h = 0;

	CHECK(nlossy > 0 && nll > 0);
	CHECK(slab_image_size(d, lossy, nlossy, &w, &h) == 0 && w == 256 && h == 192);
	CHECK(slab_image_size(d, lossless, nll, &w, &h) == 0 && w == 256 && h == 192);

	/* The whole image to a quarter: libwebp scales by exactly 4. */
	slab_image_spec_init(&s, 64, 48);
	s.crop = SLAB_IMAGE_CROP_NONE;
	CHECK(slab_image_params(&s, 256, 192, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, out, &st) == 0);
	CHECK(st.scale_denom == 4 && !st.region && st.decoded_w == 64 && st.decoded_h == 48);
	s.exact = 1;
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, ref, &st) == 0);
	CHECK(st.scale_denom == 1 && !st.region && st.decoded_w == 256 && st.decoded_h == 192);
	CHECK(mae(out, ref, 64 * 48) <= 2.5);
	s.exact = 0;

	/* 128x96 at (11, 9) to 32x24. Lossy: columns 10 .. 139, rows 8 .. 105, scaled to
	 * ceil(32 * 130 / 128) x ceil(24 * 98 / 96) = 33x25. Lossless from (10, 8) to the crop's
	 * end: 129x97, 33x25 too; at (12, 8) exactly the crop, scaled by 4. */
	slab_image_spec_init(&s, 32, 24);
	p = (struct slab_image_params){ .x = 11, .y = 9, .w = 128, .h = 96 };
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, out, &st) == 0);
	CHECK(st.scale_denom == 1 && st.region && st.decoded_w == 33 && st.decoded_h == 25);
	s.exact = 1;
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, ref, NULL) == 0);
	CHECK(mae(out, ref, 32 * 24) <= 2.5);
	s.exact = 0;
	CHECK(slab_image_decode(d, lossless, nll, &s, &p, out, &st) == 0);
	CHECK(st.scale_denom == 1 && st.region && st.decoded_w == 33 && st.decoded_h == 25);
	p.x = 12;
	p.y = 8;
	CHECK(slab_image_decode(d, lossless, nll, &s, &p, out, &st) == 0);
	CHECK(st.scale_denom == 4 && st.region && st.decoded_w == 32 && st.decoded_h == 24);

	/* A crop outside the image. */
	p = (struct slab_image_params){ .x = 200, .y = 0, .w = 100, .h = 100 };
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, out, NULL) == SLAB_ERR_INVAL);
	CHECK_STR(slab_image_error(d), "crop 100x100+200+0 outside a 256x192 image");

	/* Bare VP8X headers: an animation's canvas is its size, but it is not decoded; a canvas
	 * over the pixel limit is refused; without a frame there is nothing to decode. */
	webp_vp8x(b, 40, 30, 0x02);
	CHECK(slab_image_size(d, b, sizeof(b), &w, &h) == 0 && w == 40 && h == 30);
	p = (struct slab_image_params){ .x = 0, .y = 0, .w = 40, .h = 30 };
	CHECK(slab_image_decode(d, b, sizeof(b), &s, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_image_error(d), "animated WebP: not supported");
	webp_vp8x(b, 40, 30, 0);
	CHECK(slab_image_decode(d, b, sizeof(b), &s, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_image_error(d), "corrupt WebP: not enough data");
	webp_vp8x(b, 16383, 16383, 0);
	CHECK(slab_image_size(d, b, sizeof(b), &w, &h) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_image_error(d), "WebP of 16383x16383 pixels (268402689): over the limit of "
		  "178956970 pixels");

	/* Cut short, then whole again. */
	p = (struct slab_image_params){ .x = 0, .y = 0, .w = 256, .h = 192 };
	CHECK(slab_image_decode(d, lossy, nlossy / 2, &s, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_image_error(d), "corrupt WebP: not enough data");
	CHECK(slab_image_decode(d, lossy, nlossy, &s, &p, out, NULL) == 0);
	WebPFree(lossy);
	WebPFree(lossless);
	free(px);
}

/* An 8-bit RGBA PNG of the w x h pixels rgba, in *b (spng's buffer: free()). */
static void png_rgba(struct blob *b, const unsigned char *rgba, uint32_t w, uint32_t h)
{
	struct spng_ihdr ih = { .width = w, .height = h, .bit_depth = 8, .color_type = 6 };
	spng_ctx *c = spng_ctx_new(SPNG_CTX_ENCODER);
	int err = 0;

	CHECK(c != NULL);
	CHECK(spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1) == 0);
	CHECK(spng_set_ihdr(c, &ih) == 0);
	CHECK(spng_encode_image(c, rgba, (size_t)w * h * 4, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE) == 0);
	b->p = spng_get_png_buffer(c, &b->len, &err);
	CHECK(b->p && err == 0);
	spng_ctx_free(c);
}

/* Decode all of b (w x h) to w x h with spec s as given (crop none). */
static int decode_whole(struct slab_image_decoder *d, const struct blob *b, uint32_t w, uint32_t h,
			struct slab_image_spec s, unsigned char *out)
{
	struct slab_image_params p;

	s.crop = SLAB_IMAGE_CROP_NONE;
	if (slab_image_params(&s, w, h, 0, 0, 0, &p) < 0)
		return SLAB_ERR_INVAL;
	return slab_image_decode(d, b->p, b->len, &s, &p, out, NULL);
}

/* The spec's channels, alpha, background and resize (image.c): the checks; a palette PNG's
 * indices with one channel at every bit depth, interlaced or not, and the row path equal to
 * the exact one; grey from RGB by PIL's formula and grey PNGs unchanged; JPEG's alpha 255
 * (RGB, grey, CMYK); the composite's ends (alpha 0: the background, 255: the colour);
 * RGBA resized premultiplied (colour under alpha 0 does not bleed); the nearest resize picks
 * source pixels, and flip and CHW for 1 and 4 channels are the mirror and the transpose. */
static void test_channels(struct slab_image_decoder *d)
{
	const uint32_t w = 45, h = 37;
	struct slab_image_spec s, x;
	struct slab_image_params p;
	unsigned char *want = malloc((size_t)w * h * 3), *got = malloc((size_t)w * h * 4);
	unsigned char *px = malloc((size_t)w * h * 4);
	unsigned char a[24 * 16 * 4], f[24 * 16 * 4], c[24 * 16 * 4];
	struct blob b;

	CHECK(want && got && px);
	if (!want || !got || !px)
		return;

	/* The checks, and what slab_image_spec_init() sets. */
	slab_image_spec_init(&s, 24, 16);
	CHECK(s.channels == 0 && s.alpha == SLAB_IMAGE_ALPHA_DROP &&
	      s.resize == SLAB_IMAGE_RESIZE_BILINEAR);
	CHECK(s.background[0] == 255 && s.background[1] == 255 && s.background[2] == 255);
	x = s;
	x.channels = 2;
	CHECK(slab_image_params(&x, w, h, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	x = s;
	x.alpha = 2;
	CHECK(slab_image_params(&x, w, h, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	x = s;
	x.resize = -1;
	CHECK(slab_image_params(&x, w, h, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	x = s;
	x.channels = 4;
	x.alpha = SLAB_IMAGE_ALPHA_COMPOSITE;
	CHECK(slab_image_params(&x, w, h, 0, 0, 0, &p) == SLAB_ERR_INVAL);
	png_make(&b, want, w, h, 2, 8, 0);
	CHECK(slab_image_params(&s, w, h, 0, 0, 0, &p) == 0);
	CHECK(slab_image_decode(d, b.p, b.len, &x, &p, got, NULL) == SLAB_ERR_INVAL);
	CHECK_STR(slab_image_error(d), "bad image spec or parameters");

	/* Grey from RGB: PIL's convert("L"), exactly. */
	slab_image_spec_init(&s, w, h);
	s.channels = 1;
	CHECK(decode_whole(d, &b, w, h, s, got) == 0);
	for (size_t i = 0; i < (size_t)w * h; i++) {
		const unsigned char *q = want + 3 * i;

		CHECK(got[i] == (q[0] * 19595u + q[1] * 38470u + q[2] * 7471u + 0x8000u) >> 16);
	}
	free(b.p);
	/* A grey PNG unchanged. */
	png_make(&b, want, w, h, 0, 8, 1);
	CHECK(decode_whole(d, &b, w, h, s, got) == 0);
	for (size_t i = 0; i < (size_t)w * h; i++)
		CHECK(got[i] == want[3 * i]);
	free(b.p);

	/* A palette PNG's indices, at each depth, interlaced or not; the crops of the row path
	 * (nearest and bilinear) those of the exact path, and nearest gives indices only. */
	for (int depth = 1; depth <= 8; depth *= 2) {
		for (int il = 0; il < 2; il++) {
			png_make(&b, want, w, h, 3, depth, il);
			slab_image_spec_init(&s, w, h);
			s.channels = 1;
			CHECK(decode_whole(d, &b, w, h, s, got) == 0);
			for (uint32_t y = 0; y < h; y++)
				for (uint32_t xx = 0; xx < w; xx++)
					CHECK(got[y * w + xx] == png_sample(depth, xx, y, 0));
			slab_image_spec_init(&s, 24, 16);
			s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
			s.flip = 1;
			s.channels = 1;
			for (int r = 0; r < 2; r++) {
				s.resize = r;
				x = s;
				x.exact = 1;
				for (uint64_t i = 0; i < 6; i++) {
					CHECK(slab_image_params(&s, w, h, 3, 0, i, &p) == 0);
					CHECK(slab_image_decode(d, b.p, b.len, &s, &p, a, NULL) == 0);
					CHECK(slab_image_decode(d, b.p, b.len, &x, &p, f, NULL) == 0);
					CHECK(memcmp(a, f, 24 * 16) == 0);
					for (int k = 0; k < 24 * 16 && r == SLAB_IMAGE_RESIZE_NEAREST; k++)
						CHECK(a[k] < (1u << depth));
				}
			}
			free(b.p);
		}
	}

	/* JPEG: alpha 255 in every colour space, the colour that of 3 channels. */
	{
		static const int pfs[] = { TJPF_RGB, TJPF_GRAY, TJPF_CMYK };

		for (size_t k = 0; k < sizeof(pfs) / sizeof(pfs[0]); k++) {
			struct blob j = encode(w, h, pfs[k], pfs[k] == TJPF_GRAY ? TJSAMP_GRAY : TJSAMP_420);

			slab_image_spec_init(&s, w, h);
			CHECK(decode_whole(d, &j, w, h, s, want) == 0);
			s.channels = 4;
			CHECK(decode_whole(d, &j, w, h, s, got) == 0);
			for (size_t i = 0; i < (size_t)w * h; i++) {
				CHECK(got[4 * i + 3] == 255);
				CHECK(memcmp(got + 4 * i, want + 3 * i, 3) == 0);
			}
			free(j.p);
		}
	}

	/* RGBA: the left third transparent red, the rest opaque blue, a band of half alpha. */
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t xx = 0; xx < w; xx++) {
			unsigned char *q = px + 4 * ((size_t)y * w + xx);

			q[0] = xx < w / 3 ? 255 : 0;
			q[1] = (unsigned char)(y * 5);
			q[2] = xx < w / 3 ? 0 : 255;
			q[3] = xx < w / 3 ? 0 : xx < w / 2 ? 128 : 255;
		}
	}
	png_rgba(&b, px, w, h);
	slab_image_spec_init(&s, w, h);
	s.channels = 4;
	CHECK(decode_whole(d, &b, w, h, s, got) == 0);
	CHECK(memcmp(got, px, (size_t)w * h * 4) == 0);         /* the identity: a copy */
	/* Composite: alpha 0 the background, 255 the colour, 128 between them. */
	slab_image_spec_init(&s, w, h);
	s.alpha = SLAB_IMAGE_ALPHA_COMPOSITE;
	s.background[0] = 10;
	s.background[1] = 20;
	s.background[2] = 30;
	CHECK(decode_whole(d, &b, w, h, s, got) == 0);
	for (size_t i = 0; i < (size_t)w * h; i++) {
		const unsigned char *q = px + 4 * i, *o = got + 3 * i;

		for (int k = 0; k < 3; k++) {
			double v = (q[k] * q[3] + s.background[k] * (255.0 - q[3])) / 255.0;

			if (q[3] == 0)
				CHECK(o[k] == s.background[k]);
			else if (q[3] == 255)
				CHECK(o[k] == q[k]);
			else
				CHECK(fabs(o[k] - v) <= 1.0);
		}
	}
	/* Premultiplied: downscaled, the red under alpha 0 does not reach any visible pixel. */
	slab_image_spec_init(&s, 24, 16);
	s.channels = 4;
	CHECK(decode_whole(d, &b, w, h, s, a) == 0);
	for (int k = 0; k < 24 * 16; k++)
		CHECK(a[4 * k + 3] == 0 || a[4 * k] == 0);
	/* Nearest: each output pixel one of the source's; flip mirrors, CHW transposes. */
	s.resize = SLAB_IMAGE_RESIZE_NEAREST;
	s.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	for (unsigned ch = 1; ch <= 4; ch += 3) {
		s.channels = ch;
		for (uint64_t i = 0; i < 4; i++) {
			CHECK(slab_image_params(&s, w, h, 1, 0, i, &p) == 0);
			p.flip = 0;
			s.chw = 0;
			CHECK(slab_image_decode(d, b.p, b.len, &s, &p, a, NULL) == 0);
			p.flip = 1;
			CHECK(slab_image_decode(d, b.p, b.len, &s, &p, f, NULL) == 0);
			p.flip = 0;
			s.chw = 1;
			CHECK(slab_image_decode(d, b.p, b.len, &s, &p, c, NULL) == 0);
			s.chw = 0;
			for (int y = 0; y < 16; y++) {
				for (int xx = 0; xx < 24; xx++) {
					const unsigned char *o = a + (y * 24 + xx) * ch;

					for (unsigned k = 0; k < ch; k++) {
						CHECK(o[k] == f[(y * 24 + 23 - xx) * ch + k]);
						CHECK(o[k] == c[k * 24 * 16 + y * 24 + xx]);
					}
					if (ch == 4)
						CHECK(o[3] == 0 || o[3] == 128 || o[3] == 255);
				}
			}
		}
	}
	free(b.p);
	free(want);
	free(got);
	free(px);
}

int main(void)
{
	struct slab_image_decoder *d = slab_image_decoder_new();

	CHECK(d != NULL);
	if (!d)
		return 1;
	test_bombs();
	test_center_params();
	test_random_params();
	test_paths(d);
	hard = 1;
	test_paths(d);
	hard = 0;
	test_cmyk(d);
	test_flip_chw(d);
	test_corrupt(d);
	test_corpus(d);
	test_png(d);
	test_webp(d);
	test_center_ratio();
	test_channels(d);
	printf("MAE with corpus: scaled <= %.3f (hard edges %.3f), region-only <= %.3f, "
	       "reference <= %.3f\n", worst_scaled, worst_hard, worst_region, worst_ref);
	slab_image_decoder_free(d);
	slab_image_decoder_free(NULL);
	return UNIT_DONE();
}
