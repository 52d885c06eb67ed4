/* test_jpegrst.c: unit tests of lib/dataset/jpegrst.c and of the image pipeline's decode from a
 * restart marker. The rewrite that adds restart markers is held to the original's pixels
 * (TurboJPEG's full decode, byte for byte) and keeps the APPn and COM markers; the decode of a
 * crop from a part of the JPEG (SLAB_JPEG_RESTART=require: it must be used wherever there are
 * rows or columns to leave out) is held to the decode without it (SLAB_JPEG_RESTART=0), byte
 * for byte, for many random crops, scales and output sizes, on JPEGs made here with TurboJPEG
 * (every subsampling, grey, CMYK, odd sizes, optimised Huffman tables, restart intervals from
 * the rewrite and from TurboJPEG's own TJ_RESTART, tiling the rows or not) and on the corpus
 * JPEGs in $SLAB_CORPUS/jpeg/. Progressive and arithmetic-coded JPEGs, and ones whose markers
 * are out of order, fall back to the decode without it. Crops output at their own size, with
 * and without markers, are held to TurboJPEG's full decode at full and half scale, byte for
 * byte, on every kind of JPEG: their edges on iMCU boundaries and beside them. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <jpeglib.h>

#include "imgfmt.h"
#include "jpegrst.h"
#include "slab.h"
#include "unit.h"

struct blob {
	unsigned char *p;
	size_t len;
};

static void blob_free(struct blob *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
}

/* A photograph-like picture: ramps, hard squares and noise, so that DC differences are both
 * small and large. */
static unsigned char *make_pixels(int w, int h, int pf, unsigned seed)
{
	int ps = tjPixelSize[pf];
	unsigned char *pix = malloc((size_t)w * h * ps);
	uint32_t s = seed * 2654435761u + 1;

	if (!pix)
		abort();
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			unsigned char *p = pix + ((size_t)y * w + x) * ps;
			int v[4];

			s = s * 1664525u + 1013904223u;
			v[0] = x * 255 / (w > 1 ? w - 1 : 1);
			v[1] = y * 255 / (h > 1 ? h - 1 : 1);
			v[2] = ((x / 13 + y / 11) & 1) ? 220 : 30;
			v[3] = (x * y) & 255;
			for (int c = 0; c < ps; c++) {
				int n = v[c & 3] + (int)(s >> (27 - c)) % 40 - 20;

				p[c] = (unsigned char)(n < 0 ? 0 : n > 255 ? 255 : n);
			}
			if (pf == TJPF_GRAY)
				p[0] = (unsigned char)((v[0] + v[2]) / 2);
		}
	}
	return pix;
}

/* The JPEG of pix, w x h, made by TurboJPEG at quality q. */
static struct blob compress(const unsigned char *pix, int w, int h, int pf, int samp, int q,
			    int flags)
{
	tjhandle tj = tjInitCompress();
	unsigned char *jbuf = NULL;
	unsigned long jsize = 0;
	struct blob b = { NULL, 0 };

	if (!tj || tjCompress2(tj, pix, w, 0, h, pf, &jbuf, &jsize, samp, q, flags) != 0) {
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
	return b;
}

/* A JPEG of w x h made by TurboJPEG; restart: TJ_RESTART's value for it (NULL: none),
 * arith: TJ_ARITHMETIC. */
static struct blob make_jpeg(int w, int h, int pf, int samp, const char *restart, int flags,
			     int arith)
{
	unsigned char *pix = make_pixels(w, h, pf, (unsigned)(w * 31 + h));
	struct blob b;

	if (restart)
		setenv("TJ_RESTART", restart, 1);
	if (arith)
		setenv("TJ_ARITHMETIC", "1", 1);
	b = compress(pix, w, h, pf, samp, 85, flags);
	unsetenv("TJ_RESTART");
	unsetenv("TJ_ARITHMETIC");
	free(pix);
	return b;
}

/* A YCbCr JPEG of w x h made with libjpeg, its luma sampled h_samp x v_samp times its
 * chroma's: the samplings TurboJPEG cannot make (4x2, 2x4, 3x2, ...). */
static struct blob make_sampled(int w, int h, int h_samp, int v_samp)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr jerr;
	unsigned char *pix = make_pixels(w, h, TJPF_RGB, (unsigned)(w * 37 + h));
	unsigned char *out = NULL;
	unsigned long size = 0;
	struct blob b;

	c.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &out, &size);
	c.image_width = (JDIMENSION)w;
	c.image_height = (JDIMENSION)h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 85, TRUE);
	c.comp_info[0].h_samp_factor = h_samp;
	c.comp_info[0].v_samp_factor = v_samp;
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		JSAMPROW row = pix + (size_t)c.next_scanline * w * 3;
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	/* jpeg_mem_dest's buffer is malloc'd: the blob takes it as it is */
	b.p = out;
	b.len = size;
	free(pix);
	return b;
}

/* libjpeg's decode of b at 1/denom with its defaults (TurboJPEG's: the accurate integer
 * DCT, fancy upsampling; libjpeg, not TurboJPEG, so that every sampling decodes), in the
 * JPEG's own kind of pixels (CMYK stays CMYK), of *w x *h pixels (*n bytes, *pf TurboJPEG's
 * pixel format for them; the full-size image *fw x *fh). NULL where it does not decode. */
struct tjimage {
	int fw, fh, w, h, pf;
	size_t n;
};

struct lj_err {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
};

static void lj_error_exit(j_common_ptr c)
{
	longjmp(((struct lj_err *)c->err)->jb, 1);
}

static unsigned char *tj_decode(const struct blob *b, unsigned denom, struct tjimage *im)
{
	struct jpeg_decompress_struct c;
	struct lj_err jerr;
	unsigned char *volatile pix = NULL;

	c.err = jpeg_std_error(&jerr.pub);
	jerr.pub.error_exit = lj_error_exit;
	jpeg_create_decompress(&c);
	if (setjmp(jerr.jb)) {
		jpeg_destroy_decompress(&c);
		free(pix);
		return NULL;
	}
	jpeg_mem_src(&c, b->p, (unsigned long)b->len);
	jpeg_read_header(&c, TRUE);
	im->fw = (int)c.image_width;
	im->fh = (int)c.image_height;
	c.scale_num = 1;
	c.scale_denom = denom;
	if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK) {
		c.out_color_space = JCS_CMYK;
		im->pf = TJPF_CMYK;
	} else if (c.jpeg_color_space == JCS_GRAYSCALE) {
		c.out_color_space = JCS_GRAYSCALE;
		im->pf = TJPF_GRAY;
	} else {
		c.out_color_space = JCS_RGB;
		im->pf = TJPF_RGB;
	}
	jpeg_start_decompress(&c);
	im->w = (int)c.output_width;
	im->h = (int)c.output_height;
	im->n = (size_t)im->w * im->h * tjPixelSize[im->pf];
	pix = malloc(im->n);
	if (!pix)
		abort();
	while (c.output_scanline < c.output_height) {
		JSAMPROW row = pix + (size_t)c.output_scanline * im->w * tjPixelSize[im->pf];
		jpeg_read_scanlines(&c, &row, 1);
	}
	jpeg_finish_decompress(&c);
	jpeg_destroy_decompress(&c);
	return pix;
}

/* A pipeline decoder whose JPEG state was made under SLAB_JPEG_RESTART=mode (the state reads
 * it once, when made: the first JPEG the decoder meets). */
static struct slab_image_decoder *decoder(const char *mode, const struct blob *any_jpeg)
{
	struct slab_image_decoder *d = slab_image_decoder_new();
	uint32_t w, h;

	if (!d)
		abort();
	setenv("SLAB_JPEG_RESTART", mode, 1);
	CHECK(slab_image_size(d, any_jpeg->p, any_jpeg->len, &w, &h) == 0);
	unsetenv("SLAB_JPEG_RESTART");
	return d;
}

static struct slab_image_decoder *d_old, *d_req, *d_on;
static unsigned long crops_tried, crops_parted, crops_full;
static int sweep = 1;      /* SLAB_TEST_SWEEP=1: 3 */

/* The crop specs tried on every JPEG. */
static void spec_of(int k, struct slab_image_spec *spec)
{
	static const uint32_t sizes[][2] = { { 224, 224 }, { 32, 32 }, { 17, 23 }, { 64, 48 } };

	slab_image_spec_init(spec, sizes[k % 4][0], sizes[k % 4][1]);
	spec->crop = k % 7 == 6 ? SLAB_IMAGE_CROP_CENTER : SLAB_IMAGE_CROP_RANDOM_RESIZED;
	spec->flip = k % 3 == 1;
	if (k % 5 == 4)
		spec->resize = SLAB_IMAGE_RESIZE_NEAREST;
	if (k % 11 == 10)
		spec->exact = 1;
}

/* Whether the crop p of this JPEG, decoded at 1/denom, leaves any part out: what the restart
 * path is for. */
static int leaves_out(const struct blob *b, const struct slab_image_spec *spec,
		      const struct slab_image_params *p, unsigned denom)
{
	struct slab_jpegrst_layout lay;
	struct slab_jpegrst_part part;
	struct slab_image_region reg;
	const char *why;
	uint32_t ow, oh, ix0, ix1, iy0, iy1;

	if (!slab_jpegrst_layout(b->p, b->len, &lay, &why))
		return 0;
	ow = (lay.width + denom - 1) / denom;
	oh = (lay.height + denom - 1) / denom;
	slab_image_box(p, denom, ow, oh, spec->exact, &reg, &ix0, &ix1, &iy0, &iy1);
	return slab_jpegrst_plan(&lay, denom, ow, oh, ix0, ix1, iy0, iy1, &part);
}

/* Every crop spec and seed, decoded with and without the restart path: byte-for-byte the
 * same output and stats. With require, the restart path must be taken wherever it leaves
 * something out. The suite's default run takes every other spec, the odd ones and the even
 * ones by turns from one JPEG to the next (so that the sweep still meets every spec on
 * every kind of JPEG); SLAB_TEST_SWEEP=1 takes them all. */
static void same_crops(const char *what, const struct blob *b, int nseeds, int require)
{
	static unsigned turn;
	int step = sweep > 1 ? 1 : 2;
	uint32_t w, h;
	unsigned char *a = malloc(224 * 224 * 4), *c = malloc(224 * 224 * 4);
	int fails = 0;

	if (!a || !c)
		abort();
	if (slab_image_size(d_old, b->p, b->len, &w, &h) != 0) {
		CHECK(!"size");
		goto out;
	}
	for (int k = step > 1 ? (int)(turn++ % 2) : 0; k < 22; k += step) {
		struct slab_image_spec spec;

		spec_of(k, &spec);
		for (int seed = 0; seed < nseeds; seed++) {
			struct slab_image_params p;
			struct slab_image_stats sa, sc;
			size_t n = (size_t)spec.out_w * spec.out_h * 3;
			int ra, rc;

			CHECK(slab_image_params(&spec, w, h, 7, (uint64_t)seed, (uint64_t)k, &p) == 0);
			memset(a, 1, n);
			memset(c, 2, n);
			ra = slab_image_decode(d_old, b->p, b->len, &spec, &p, a, &sa);
			rc = slab_image_decode(require ? d_req : d_on, b->p, b->len, &spec, &p, c,
					       &sc);
			crops_tried++;
			if (require && rc == 0 && leaves_out(b, &spec, &p, sc.scale_denom))
				crops_parted++;
			if (ra != rc || (ra == 0 && (memcmp(a, c, n) != 0 ||
						     sa.scale_denom != sc.scale_denom ||
						     sa.decoded_w != sc.decoded_w ||
						     sa.decoded_h != sc.decoded_h ||
						     sa.region != sc.region))) {
				if (fails++ < 3)
					fprintf(stderr, "%s: spec %d seed %d (crop %ux%u+%u+%u, "
						"scale 1/%u): %d vs %d: %s\n", what, k, seed, p.w,
						p.h, p.x, p.y, sa.scale_denom, ra, rc,
						rc ? slab_image_error(require ? d_req : d_on) :
						"pixels differ");
				unit_failures++;
			}
		}
	}
out:
	free(a);
	free(c);
}

/* Crops whose output is the crop's own size (no resize: nearest at full scale, bilinear at
 * 1/2 and 1/4), through decoder d, decoded at 1/1, 1/2 ... 1/most (checked: the scale each
 * is decoded at): every pixel is libjpeg's full decode's at that scale, byte for byte; past
 * 1/most, decoded at full scale, the same bytes as the exact path's (spec.exact). The
 * crops start and end on iMCU columns and rows, beside them and between, and at the image's
 * edges, where a region decode's own edges fall: libjpeg's fancy upsampling mirrors the
 * chroma at the edges of the columns it decodes. */
static void crops_are_full_to(const char *what, const struct blob *b,
			      struct slab_image_decoder *d, unsigned most)
{
	static const uint32_t starts[] = { 0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48 };
	static const uint32_t sides[] = { 1, 2, 3, 8, 15, 16, 17, 30, 33, 64 };
	const size_t ns = sizeof(sides) / sizeof(sides[0]);
	unsigned char *out = malloc((size_t)64 * 64 * 3), *ref = malloc((size_t)64 * 64 * 3);
	int fails = 0;

	if (!out || !ref)
		abort();
	for (unsigned denom = 1; denom <= 4; denom *= 2) {
		unsigned want = denom <= most ? denom : 1;
		struct tjimage im;
		unsigned char *full = tj_decode(b, denom, &im);
		int fw, fh, w, h, ps;

		/* (CMYK: the pipeline converts it itself) */
		if (!full || im.pf == TJPF_CMYK) {
			if (!full) {
				fprintf(stderr, "%s: libjpeg does not decode it at 1/%u\n", what,
					denom);
				unit_failures++;
			}
			free(full);
			break;
		}
		fw = im.fw, fh = im.fh, w = im.w, h = im.h, ps = tjPixelSize[im.pf];
		/* From the left and the bottom, then from the right and the top. */
		for (size_t i = 0; i < 2 * sizeof(starts) / sizeof(starts[0]); i++) {
			for (size_t k = 0; k < ns; k++) {
				uint32_t cw = sides[k], ch = sides[(k + i) % ns], at = starts[i / 2];
				uint32_t x = i % 2 ? (uint32_t)w - cw - at : at;
				uint32_t y = i % 2 ? at : (uint32_t)h - ch - at;
				struct slab_image_spec spec;
				struct slab_image_params p;
				struct slab_image_stats st;
				int bad = 0, rc;

				if (cw + at > (uint32_t)w || ch + at > (uint32_t)h ||
				    (x + cw) * denom > (uint32_t)fw || (y + ch) * denom > (uint32_t)fh)
					continue;
				slab_image_spec_init(&spec, cw, ch);
				spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
				if (denom == 1)
					spec.resize = SLAB_IMAGE_RESIZE_NEAREST;
				memset(&p, 0, sizeof(p));
				p.x = x * denom;
				p.y = y * denom;
				p.w = cw * denom;
				p.h = ch * denom;
				rc = slab_image_decode(d, b->p, b->len, &spec, &p, out, &st);
				if (rc == 0 && st.scale_denom != want) {
					if (fails++ < 3)
						fprintf(stderr, "%s: crop %ux%u+%u+%u: decoded at "
							"1/%u, not 1/%u\n", what, p.w, p.h, p.x,
							p.y, st.scale_denom, want);
					unit_failures++;
					continue;
				}
				if (want != denom) {
					spec.exact = 1;
					CHECK(slab_image_decode(d, b->p, b->len, &spec, &p, ref,
								NULL) == 0);
					bad = rc == 0 && memcmp(out, ref, (size_t)cw * ch * 3) != 0;
				}
				for (uint32_t r = 0; rc == 0 && want == denom && r < ch; r++)
					for (uint32_t c = 0; c < cw * 3; c++)
						bad |= out[r * cw * 3 + c] !=
						       full[((size_t)(y + r) * w + x + c / 3) * ps +
							    (ps == 3 ? c % 3 : 0)];
				if (rc != 0 || bad) {
					if (fails++ < 3)
						fprintf(stderr, "%s: crop %ux%u+%u+%u at 1/%u: %s\n",
							what, p.w, p.h, p.x, p.y, denom,
							rc ? slab_image_error(d) :
							"not the full decode's pixels");
					unit_failures++;
				}
				crops_full++;
			}
		}
		free(full);
	}
	free(out);
	free(ref);
}

static void crops_are_full(const char *what, const struct blob *b, struct slab_image_decoder *d)
{
	crops_are_full_to(what, b, d, 4);
}

/* The rewrite of b at most MCUs an interval: kept pixels, markers where asked, tiling. */
static struct blob rewrite(struct slab_jpegrst *r, const char *what, const struct blob *b,
			   unsigned most)
{
	struct blob out = { NULL, 0 };
	struct slab_jpegrst_layout lay;
	const char *why = NULL;
	unsigned char *pa, *pb;
	struct tjimage ia = { 0 }, ib = { 0 };
	void *o;
	int rc = slab_jpegrst_rewrite(r, b->p, b->len, most, &o, &out.len);

	if (rc != 1) {
		fprintf(stderr, "%s: rewrite at most %u: %d: %s\n", what, most, rc,
			slab_jpegrst_error(r));
		unit_failures++;
		return out;
	}
	out.p = o;
	pa = tj_decode(b, 1, &ia);
	pb = tj_decode(&out, 1, &ib);
	if (!pa || !pb || ia.n != ib.n || memcmp(pa, pb, ia.n) != 0) {
		fprintf(stderr, "%s: rewrite at most %u: pixels differ\n", what, most);
		unit_failures++;
	}
	free(pa);
	free(pb);
	if (!slab_jpegrst_layout(out.p, out.len, &lay, &why)) {
		fprintf(stderr, "%s: rewrite at most %u: no layout: %s\n", what, most, why);
		unit_failures++;
	} else {
		CHECK(lay.interval == slab_jpegrst_interval(lay.mcus_per_row, most));
		CHECK(lay.segs_per_row > 0);
		CHECK(most == 0 || lay.interval <= most);
	}
	return out;
}

static void test_interval(void)
{
	CHECK(slab_jpegrst_interval(44, 0) == 44);
	CHECK(slab_jpegrst_interval(44, 4) == 4);
	CHECK(slab_jpegrst_interval(44, 3) == 2);
	CHECK(slab_jpegrst_interval(43, 4) == 1);
	CHECK(slab_jpegrst_interval(45, 4) == 3);
	CHECK(slab_jpegrst_interval(45, 100) == 45);
	CHECK(slab_jpegrst_interval(1, 1) == 1);
}

/* Made JPEGs: every subsampling and odd sizes, rewritten at several intervals and made with
 * TurboJPEG's own restart markers. */
static void test_made(struct slab_jpegrst *r)
{
	static const int sizes[][2] = {
		{ 1, 1 }, { 9, 7 }, { 16, 16 }, { 17, 33 }, { 33, 17 }, { 64, 48 }, { 100, 75 },
		{ 227, 149 }, { 257, 511 }, { 401, 300 }, { 696, 523 },
	};
	static const struct { int pf, samp; const char *name; } kinds[] = {
		{ TJPF_RGB, TJSAMP_420, "4:2:0" }, { TJPF_RGB, TJSAMP_422, "4:2:2" },
		{ TJPF_RGB, TJSAMP_444, "4:4:4" }, { TJPF_GRAY, TJSAMP_GRAY, "grey" },
		{ TJPF_RGB, TJSAMP_440, "4:4:0" }, { TJPF_RGB, TJSAMP_411, "4:1:1" },
		{ TJPF_CMYK, TJSAMP_444, "CMYK" }, { TJPF_CMYK, TJSAMP_420, "YCCK 4:2:0" },
	};
	static const unsigned mosts[] = { 0, 1, 2, 4 };
	static const char *const tj_restarts[] = { "1", "2", "3B", "5B" };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			int w = sizes[s][0], h = sizes[s][1];
			struct blob b = make_jpeg(w, h, kinds[k].pf, kinds[k].samp, NULL, 0, 0);
			int seeds = (w * h > 100000 ? 1 : 2) * sweep;
			char what[96];

			snprintf(what, sizeof(what), "%dx%d %s", w, h, kinds[k].name);
			crops_are_full(what, &b, d_old);

			for (size_t m = 0; m < sizeof(mosts) / sizeof(mosts[0]); m++) {
				struct blob rb;

				snprintf(what, sizeof(what), "%dx%d %s at most %u", w, h,
					 kinds[k].name, mosts[m]);
				rb = rewrite(r, what, &b, mosts[m]);
				if (rb.p) {
					same_crops(what, &rb, seeds, 1);
					if (mosts[m] <= 1)
						crops_are_full(what, &rb, d_req);
				}
				blob_free(&rb);
			}
			for (size_t t = 0; t < sizeof(tj_restarts) / sizeof(tj_restarts[0]); t++) {
				struct blob tb = make_jpeg(w, h, kinds[k].pf, kinds[k].samp,
							   tj_restarts[t], 0, 0);

				snprintf(what, sizeof(what), "%dx%d %s TJ_RESTART=%s", w, h,
					 kinds[k].name, tj_restarts[t]);
				same_crops(what, &tb, seeds, 1);
				blob_free(&tb);
			}
			blob_free(&b);
		}
	}
}

/* What cannot be decoded from a marker falls back to the decode without it; require says
 * why. */
static void test_fallback(struct slab_jpegrst *r)
{
	struct blob plain = make_jpeg(300, 200, TJPF_RGB, TJSAMP_420, NULL, 0, 0);
	struct blob prog = make_jpeg(300, 200, TJPF_RGB, TJSAMP_420, "1", TJFLAG_PROGRESSIVE, 0);
	struct blob ari = make_jpeg(300, 200, TJPF_RGB, TJSAMP_420, "1", 0, 1);
	struct blob rb;
	struct slab_image_spec spec;
	struct slab_image_params p;
	unsigned char out[64 * 64 * 3];
	void *o;
	size_t olen;

	slab_image_spec_init(&spec, 64, 64);
	spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	memset(&p, 0, sizeof(p));
	p.x = 40;
	p.y = 100;
	p.w = 120;
	p.h = 80;

	CHECK(slab_jpegrst_rewrite(r, prog.p, prog.len, 0, &o, &olen) == 0);
	CHECK_STR(slab_jpegrst_error(r), "progressive");
	CHECK(slab_jpegrst_rewrite(r, ari.p, ari.len, 0, &o, &olen) == 0);
	CHECK_STR(slab_jpegrst_error(r), "arithmetic-coded");

	CHECK(slab_image_decode(d_req, prog.p, prog.len, &spec, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strstr(slab_image_error(d_req), "progressive") != NULL);
	CHECK(slab_image_decode(d_req, ari.p, ari.len, &spec, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strstr(slab_image_error(d_req), "arithmetic") != NULL);
	CHECK(slab_image_decode(d_req, plain.p, plain.len, &spec, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK(strstr(slab_image_error(d_req), "no restart markers") != NULL);
	same_crops("progressive", &prog, 4, 0);
	same_crops("arithmetic", &ari, 4, 0);
	same_crops("plain", &plain, 4, 0);

	/* Markers out of order past the first: the part fails, the old decode decides. */
	rb = rewrite(r, "300x200 rows", &plain, 0);
	if (rb.p) {
		size_t seen = 0;

		for (size_t i = 0; i + 1 < rb.len; i++) {
			if (rb.p[i] == 0xFF && rb.p[i + 1] >= 0xD0 && rb.p[i + 1] <= 0xD7 &&
			    ++seen == 3) {
				rb.p[i + 1] = 0xD6;
				break;
			}
		}
		CHECK(seen == 3);
		same_crops("markers out of order", &rb, 4, 0);
		p.y = 150;
		p.h = 50;
		CHECK(slab_image_decode(d_req, rb.p, rb.len, &spec, &p, out, NULL) ==
		      SLAB_ERR_CORRUPT);
		CHECK(strstr(slab_image_error(d_req), "out of order") != NULL);
	}
	blob_free(&rb);
	blob_free(&plain);
	blob_free(&prog);
	blob_free(&ari);
}

/* APPn and COM markers come through the rewrite as they were, in order. */
static void test_markers(struct slab_jpegrst *r)
{
	static const unsigned char extra[] = {
		0xFF, 0xE1, 0x00, 0x0C, 'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42,
		0xFF, 0xE2, 0x00, 0x10, 'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, 1, 1,
		0xFF, 0xFE, 0x00, 0x07, 'h', 'e', 'l', 'l', 'o',
		0xFF, 0xEE, 0x00, 0x0E, 'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 1,
	};
	struct blob b = make_jpeg(120, 90, TJPF_RGB, TJSAMP_420, NULL, 0, 0), m, rb;
	size_t at = 2 + 2 + ((size_t)b.p[4] << 8 | b.p[5]);     /* after SOI and JFIF */

	m.len = b.len + sizeof(extra);
	m.p = malloc(m.len);
	if (!m.p)
		abort();
	memcpy(m.p, b.p, at);
	memcpy(m.p + at, extra, sizeof(extra));
	memcpy(m.p + at + sizeof(extra), b.p + at, b.len - at);
	rb = rewrite(r, "with markers", &m, 0);
	if (rb.p) {
		CHECK(rb.len > at + sizeof(extra));
		CHECK(memcmp(rb.p, m.p, at + sizeof(extra)) == 0);
		same_crops("with markers", &rb, 6, 1);
	}
	blob_free(&rb);
	blob_free(&m);
	blob_free(&b);
}

/* The bytes of the DHT segments before the scan. */
static size_t dht_bytes(const struct blob *b, unsigned char *out, size_t cap)
{
	size_t i = 2, n = 0;

	while (i + 4 <= b->len && b->p[i] == 0xFF && b->p[i + 1] != 0xDA) {
		size_t seg = 2 + ((size_t)b->p[i + 2] << 8 | b->p[i + 3]);

		if (b->p[i + 1] == 0xC4 && n + seg <= cap && i + seg <= b->len) {
			memcpy(out + n, b->p + i, seg);
			n += seg;
		}
		i += seg;
	}
	return n;
}

/* Optimised Huffman tables (TJ_OPTIMIZE) code only the DC differences the image had: with a
 * restart at each row the DC of each row's first block is coded whole, which they may not
 * cover (a vertical ramp: its differences are all small, its values not), and the rewrite
 * makes new tables. The standard tables TurboJPEG writes by default code every difference:
 * kept. The pixels stay either way. */
static void test_optimized(struct slab_jpegrst *r)
{
	static const int kinds[][2] = { { TJPF_RGB, TJSAMP_420 }, { TJPF_GRAY, TJSAMP_GRAY },
					{ TJPF_RGB, TJSAMP_444 } };
	unsigned char *pix = malloc(200 * 160), ta[2048], tb[2048];
	struct blob ramp, rb;
	size_t na, nb;

	if (!pix)
		abort();
	for (int y = 0; y < 160; y++)
		memset(pix + y * 200, 128 + y * 127 / 159, 200);
	setenv("TJ_OPTIMIZE", "1", 1);
	ramp = compress(pix, 200, 160, TJPF_GRAY, TJSAMP_GRAY, 95, 0);
	unsetenv("TJ_OPTIMIZE");
	free(pix);
	rb = rewrite(r, "optimised ramp", &ramp, 0);
	if (rb.p) {
		na = dht_bytes(&ramp, ta, sizeof(ta));
		nb = dht_bytes(&rb, tb, sizeof(tb));
		CHECK(na > 0 && nb > 0 && (na != nb || memcmp(ta, tb, na) != 0));
		same_crops("optimised ramp", &rb, 4, 1);
	}
	blob_free(&rb);
	blob_free(&ramp);

	for (size_t k = 0; k < 2 * sizeof(kinds) / sizeof(kinds[0]); k++) {
		int opt = k % 2;
		struct blob b;

		if (opt)
			setenv("TJ_OPTIMIZE", "1", 1);
		b = make_jpeg(203, 150, kinds[k / 2][0], kinds[k / 2][1], NULL, 0, 0);
		unsetenv("TJ_OPTIMIZE");
		for (unsigned most = 0; most <= 2; most++) {
			rb = rewrite(r, opt ? "optimised tables" : "standard tables", &b, most);
			if (rb.p) {
				na = dht_bytes(&b, ta, sizeof(ta));
				nb = dht_bytes(&rb, tb, sizeof(tb));
				CHECK(opt || (na > 0 && na == nb && memcmp(ta, tb, na) == 0));
				same_crops(opt ? "optimised tables" : "standard tables", &rb, 4, 1);
			}
			blob_free(&rb);
		}
		blob_free(&b);
	}
}

static struct blob slurp(const char *path)
{
	struct blob b = { NULL, 0 };
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return b;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b.p = malloc((size_t)n)) && fread(b.p, 1, (size_t)n, f) == (size_t)n)
		b.len = (size_t)n;
	fclose(f);
	if (!b.len)
		blob_free(&b);
	return b;
}

static void test_corpus(struct slab_jpegrst *r)
{
	static const struct { const char *name, *kept; } files[] = {
		{ "testorig.jpg", NULL }, { "testimgint.jpg", NULL },
		{ "testimgari.jpg", "arithmetic-coded" }, { "monkey12.jpg", "not 8-bit" },
	};
	const char *dir = getenv("SLAB_CORPUS");
	char path[4096];

	if (!dir || !*dir) {
		printf("skip: corpus tests: SLAB_CORPUS is not set\n");
		return;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct blob b;

		snprintf(path, sizeof(path), "%s/jpeg/%s", dir, files[i].name);
		b = slurp(path);
		if (!b.p) {
			printf("skip: '%s': not there\n", path);
			continue;
		}
		if (files[i].kept) {
			void *o;
			size_t olen;

			CHECK(slab_jpegrst_rewrite(r, b.p, b.len, 0, &o, &olen) == 0);
			CHECK_STR(slab_jpegrst_error(r), files[i].kept);
		} else {
			crops_are_full(files[i].name, &b, d_old);
			for (unsigned most = 0; most <= 4; most += 2) {
				struct blob rb = rewrite(r, files[i].name, &b, most);

				if (rb.p) {
					same_crops(files[i].name, &rb, 4 * sweep, 1);
					crops_are_full(files[i].name, &rb, d_req);
				}
				blob_free(&rb);
			}
		}
		blob_free(&b);
	}
}

/* JPEGs of the samplings TurboJPEG does not make, their crops held to the full decode at 1/1,
 * 1/2 and 1/4 (1/1 only for 4x2 and 2x4, which the pipeline does not scale), without and with
 * restart markers. */
static void test_sampled(struct slab_jpegrst *r)
{
	static const int sizes[][2] = { { 17, 33 }, { 100, 75 }, { 257, 211 } };
	static const int samps[][2] = { { 4, 2 }, { 2, 4 }, { 4, 1 }, { 1, 4 }, { 3, 2 },
					{ 2, 3 }, { 3, 1 }, { 1, 2 }, { 1, 3 } };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t k = 0; k < sizeof(samps) / sizeof(samps[0]); k++) {
			int w = sizes[s][0], h = sizes[s][1];
			struct blob b = make_sampled(w, h, samps[k][0], samps[k][1]), rb;
			/* not scaled where luma is sampled 4 x 2 or 2 x 4 (image_jpeg.c's
			 * max_scale()) */
			unsigned most = samps[k][0] * samps[k][1] == 8 ? 1 : 4;
			char what[96];

			snprintf(what, sizeof(what), "%dx%d sampled %dx%d", w, h, samps[k][0],
				 samps[k][1]);
			crops_are_full_to(what, &b, d_old, most);
			snprintf(what, sizeof(what), "%dx%d sampled %dx%d at most 1", w, h,
				 samps[k][0], samps[k][1]);
			rb = rewrite(r, what, &b, 1);
			if (rb.p)
				crops_are_full_to(what, &rb, d_on, most);
			blob_free(&rb);
			blob_free(&b);
		}
	}
}

int main(void)
{
	struct slab_jpegrst *r = slab_jpegrst_new(0);
	const char *long_run = getenv("SLAB_TEST_SWEEP");
	struct blob any = make_jpeg(16, 16, TJPF_RGB, TJSAMP_420, NULL, 0, 0);

	unsetenv("TJ_RESTART");
	unsetenv("TJ_ARITHMETIC");
	unsetenv("TJ_PROGRESSIVE");
	unsetenv("TJ_OPTIMIZE");
	/* SLAB_TEST_SWEEP=1: every crop spec, three times the seeds (about 90,000 crops, 40 s;
	 * the suite's default takes a sixth, so that make check stays short). */
	if (long_run && strcmp(long_run, "1") == 0)
		sweep = 3;
	CHECK(r != NULL);
	d_old = decoder("0", &any);
	d_req = decoder("require", &any);
	d_on = decoder("1", &any);
	test_interval();
	test_markers(r);
	test_optimized(r);
	test_fallback(r);
	test_corpus(r);
	test_made(r);
	test_sampled(r);
	printf("%lu crops compared, %lu of them decoded from a part; %lu crops held to the full "
	       "decode\n", crops_tried, crops_parted, crops_full);
	CHECK(crops_parted > crops_tried / 4);
	slab_image_decoder_free(d_old);
	slab_image_decoder_free(d_req);
	slab_image_decoder_free(d_on);
	slab_jpegrst_free(r);
	blob_free(&any);
	return UNIT_DONE();
}
