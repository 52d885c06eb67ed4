/* image_jpeg.c: JPEG for the image pipeline (imgfmt.h), on libjpeg-turbo's libjpeg API so that
 * the decoder can be told to produce less: a DCT-scaled image, only the crop's columns, only
 * its rows, and, when the JPEG has restart markers (pack --jpeg-restart), only the entropy-coded
 * data of the crop's MCU rows and columns (jpegrst.h). Grey, YCbCr, RGB, CMYK and YCCK (Adobe's
 * inverted form too) come out RGB. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "error.h"
#include "imgfmt.h"
#include "jpeg.h"
#include "jpegrst.h"
#include "slab.h"
#include "scratch.h"

/* libjpeg's error manager, made to return: error_exit jumps back to the call that entered
 * libjpeg; warnings are counted (the first one's text kept) and nothing is ever printed. In a
 * decode (fatal set) the first warning jumps back too, as an error: a decode with a warning
 * fails with its text whatever follows, and libjpeg would otherwise go on to make every row
 * of a file cut short (grey), filling the whole region (hundreds of megabytes at full size
 * from a file of a few hundred bytes) before the failure. The scan limit's progress monitor
 * jumps back the same way, with scan_limit set. */
struct errmgr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
	char warning[JMSG_LENGTH_MAX];
	int scan_limit;
	int fatal;
};

/* libjpeg calls the progress monitor before it takes in each row of blocks (and in
 * jpeg_read_scanlines, jpeg_skip_scanlines): in jpeg_start_decompress it takes in every scan
 * of a multi-scan JPEG, so the monitor sees each new scan as soon as its SOS marker is read. */
struct scanmon {
	struct jpeg_progress_mgr pub;
	unsigned max_scans;
};

/* Whether a crop is decoded from the restart marker before it (SLAB_JPEG_RESTART, read when
 * the state is made): "0" never, as before restart markers were used (for tests and
 * debugging); "require" always where the image has rows or columns to leave out, failing
 * with the reason where it cannot; anything else, or unset, wherever it can. */
enum { RESTART_OFF, RESTART_ON, RESTART_REQUIRE };

struct jdec {
	struct jpeg_decompress_struct cinfo;
	struct errmgr jerr;
	struct scanmon scans;
	int restart;
	int in_part;                    /* this decode reads a part made by jpegrst.c */
	struct slab_scratch part;       /* that part's bytes */
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
		if (e->fatal)
			longjmp(e->jump, 1);
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

static int probe(const unsigned char *p, size_t len)
{
	return len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF;
}

static int cut_short(const unsigned char *p, size_t len)
{
	static const unsigned char soi[3] = { 0xFF, 0xD8, 0xFF };

	return len < sizeof(soi) && memcmp(p, soi, len) == 0;
}

/* jpeg_create_decompress can only fail to allocate: 0, or SLAB_ERR_NOMEM. */
static int create(struct jdec *j)
{
	if (setjmp(j->jerr.jump))
		return SLAB_ERR_NOMEM;
	jpeg_create_decompress(&j->cinfo);
	return 0;
}

static void *state_new(void)
{
	struct jdec *j = calloc(1, sizeof(*j));
	const char *env;

	if (!j)
		return NULL;
	j->cinfo.err = jpeg_std_error(&j->jerr.pub);
	j->jerr.pub.error_exit = on_error;
	j->jerr.pub.emit_message = on_message;
	j->jerr.pub.output_message = on_output;
	if (create(j) < 0) {
		jpeg_destroy_decompress(&j->cinfo);
		free(j);
		return NULL;
	}
	j->scans.pub.progress_monitor = on_progress;
	env = getenv("SLAB_JPEG_RESTART");
	j->restart = env && strcmp(env, "0") == 0 ? RESTART_OFF :
		     env && strcmp(env, "require") == 0 ? RESTART_REQUIRE : RESTART_ON;
	return j;
}

static void state_free(void *st)
{
	struct jdec *j = st;

	if (!j)
		return;
	jpeg_destroy_decompress(&j->cinfo);
	slab_scratch_free(&j->part);
	free(j);
}

/* After libjpeg (or the scan limit) jumped out: why, into err; the decompressor reset. */
static int jpeg_failed(struct jdec *j, struct slab_err *err)
{
	char msg[JMSG_LENGTH_MAX];
	int code = j->jerr.pub.msg_code;
	uint32_t w = j->cinfo.image_width, h = j->cinfo.image_height;

	j->jerr.pub.format_message((j_common_ptr)&j->cinfo, msg);
	jpeg_abort_decompress(&j->cinfo);
	if (j->jerr.scan_limit)
		return slab_fail(err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_SCANS_TEXT,
				 j->scans.max_scans, j->scans.max_scans);
	if (code == JERR_NO_BACKING_STORE)
		return slab_fail(err, SLAB_ERR_LIMIT, NULL, SLAB_JPEG_MEMORY_TEXT, w, h,
				 (long long)j->cinfo.mem->max_memory_to_use);
	if (code == JERR_BAD_PRECISION)
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "unsupported JPEG: %d-bit samples, only "
				 "8-bit JPEGs can be decoded", j->jerr.pub.msg_parm.i[0]);
	if (code == JERR_OUT_OF_MEMORY)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a JPEG: %s", msg);
	return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s", msg);
}

/* The limits into libjpeg, then the header. May jump to the caller's setjmp. */
static void start(struct jdec *j, const struct slab_image_limits *lim, const unsigned char *data,
		  size_t len)
{
	j->scans.max_scans = lim->max_scans;
	j->cinfo.progress = lim->max_scans == UINT_MAX ? NULL : &j->scans.pub;
	j->cinfo.mem->max_memory_to_use = mem_bound(lim->max_pixels);
	j->jerr.warnings = 0;
	j->jerr.warning[0] = '\0';
	j->jerr.pub.num_warnings = 0;
	j->jerr.scan_limit = 0;
	jpeg_mem_src(&j->cinfo, data, (unsigned long)len);
	jpeg_read_header(&j->cinfo, TRUE);
}

/* After the header: SLAB_ERR_LIMIT (decompressor reset) when the image has more pixels than
 * the limit, before jpeg_start_decompress allocates anything the size of the image. */
static int over_pixels(struct jdec *j, const struct slab_image_limits *lim, struct slab_err *err)
{
	int ret = slab_image_over_pixels("JPEG", j->cinfo.image_width, j->cinfo.image_height, lim,
					 err);

	if (ret < 0)
		jpeg_abort_decompress(&j->cinfo);
	return ret;
}

static int read_size(struct jdec *j, const struct slab_image_limits *lim,
		     const unsigned char *data, size_t len, uint32_t *w, uint32_t *h,
		     struct slab_err *err)
{
	int ret;

	j->jerr.fatal = 0;
	if (setjmp(j->jerr.jump))
		return jpeg_failed(j, err);
	start(j, lim, data, len);
	if ((ret = over_pixels(j, lim, err)) < 0)
		return ret;
	*w = j->cinfo.image_width;
	*h = j->cinfo.image_height;
	jpeg_abort_decompress(&j->cinfo);
	return 0;
}

static int size(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		size_t len, uint32_t *w, uint32_t *h, struct slab_err *err)
{
	return read_size(st, lim, data, len, w, h, err);
}

/* The largest DCT scaling denominator worth taking for this JPEG: 8, or 4 when its chroma is
 * subsampled in one direction only (4:2:2, 4:4:0). Measured in test_image.c (mean absolute
 * error per channel of the crop against a full decode): such JPEGs came out 5.6 at 1/8 and 3.4
 * at 1/4, against 2.3 for 4:2:0 at 1/8. 1 (no scaling) for a component sampled 4 x 2 or 2 x 4
 * times another: libjpeg-turbo 2.1 decodes such a JPEG's columns or rows at 1/2 to other
 * pixels than its full decode at that scale (test_jpegrst.c holds every sampling to it). */
static unsigned max_scale(const struct jpeg_decompress_struct *c)
{
	if (c->max_h_samp_factor * c->max_v_samp_factor == 8)
		return 1;
	return c->num_components == 3 && c->max_h_samp_factor != c->max_v_samp_factor ? 4 : 8;
}

/* The scale and output colour space of a decode, into libjpeg (again for a part). */
static void set_output(struct jpeg_decompress_struct *c, unsigned denom)
{
	c->scale_num = 1;
	c->scale_denom = denom;
	/* Four bytes a pixel whatever the source (RGBA, or CMYK converted in place below), so
	 * that the horizontal pass reads whole pixels as 32-bit words. JCS_EXT_RGBA, not RGBX:
	 * libjpeg-turbo documents its fourth byte as 0xFF (opaque), the pipeline's alpha for
	 * an image without one, and decodes it as fast. */
	c->out_color_space = c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK ?
			     JCS_CMYK : JCS_EXT_RGBA;
}

/*
 * With restart markers, the crop's rows [iy0, iy1) and columns [ix0, ix1) of the image
 * decoded at 1/denom (ow x oh) from a part of it (jpegrst.h): the crop's MCU rows, with those
 * of the pixel rows just above and below it (the upsampling's context), and, when the
 * restart intervals tile the rows, only the intervals that hold its columns. Entropy
 * decoding, most of a crop's cost, then skips what lies above and beside the crop instead of
 * decoding it to throw it away. Replaces the source of c (header read, output set) by the
 * part and returns 1 with *part; 0 when the whole image is read as before (no markers,
 * nothing to leave out, ...); the reason with SLAB_JPEG_RESTART=require. May jump to the
 * caller's setjmp.
 */
static int use_part(struct jdec *j, const unsigned char *data, size_t len, unsigned denom,
		    uint32_t ow, uint32_t oh, uint32_t ix0, uint32_t ix1, uint32_t iy0,
		    uint32_t iy1, struct slab_jpegrst_part *part, struct slab_err *err)
{
	struct jpeg_decompress_struct *c = &j->cinfo;
	struct slab_jpegrst_layout lay;
	struct slab_jpegrst_part plan;
	const char *why = NULL;
	size_t plen;
	int r;

	if (!slab_jpegrst_layout(data, len, &lay, &why) || lay.width != c->image_width ||
	    lay.height != c->image_height) {
		if (j->restart != RESTART_REQUIRE || (ix0 == 0 && iy0 == 0 && ix1 == ow && iy1 == oh))
			return 0;
		jpeg_abort_decompress(c);
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "JPEG not decoded from a restart "
				 "marker: %s", why ? why : "header read otherwise by libjpeg");
	}
	/* The plan stays local until the part is made: the whole image read instead (markers
	 * missing or out of order below the crop) is read at its own rows and columns, not
	 * shifted by where the part would have started. */
	if (!slab_jpegrst_plan(&lay, denom, ow, oh, ix0, ix1, iy0, iy1, &plan))
		return 0;
	r = slab_jpegrst_part(data, len, &lay, &plan, &j->part, &plen, &why);
	if (r != 0) {
		if (r == 1 && j->restart != RESTART_REQUIRE)
			return 0;
		jpeg_abort_decompress(c);
		return r < 0 ? slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a JPEG "
					 "from a restart marker") :
		       slab_fail(err, SLAB_ERR_CORRUPT, NULL, "JPEG not decoded from a restart "
				 "marker: %s", why);
	}
	*part = plan;
	j->in_part = 1;
	jpeg_abort_decompress(c);
	jpeg_mem_src(c, j->part.p, (unsigned long)plen);
	jpeg_read_header(c, TRUE);
	set_output(c, denom);
	return 1;
}

/* Whether a component's chroma is sampled across at less than the image's width, so that
 * libjpeg upsamples it (after jpeg_start_decompress). */
static int upsampled_across(const struct jpeg_decompress_struct *c)
{
	for (int i = 0; i < c->num_components; i++)
		if (c->comp_info[i].h_samp_factor != c->max_h_samp_factor)
			return 1;
	return 0;
}

/* Decode the part of the image the crop needs into pix: the largest DCT scaling that keeps
 * the crop at least the output size, the crop's columns (and one more on each side where
 * chroma is upsampled across; widened by libjpeg to an iMCU boundary), its rows, nothing
 * after them; with restart, from the marker before them. Calls libjpeg, which may jump to
 * the caller's setjmp. */
static int decode_region(struct jdec *j, int restart, const struct slab_image_limits *lim,
			 const unsigned char *data, size_t len, const struct slab_image_spec *spec,
			 const struct slab_image_params *p, struct slab_scratch *pix,
			 struct slab_image_region *r, struct slab_image_stats *st,
			 struct slab_err *err)
{
	struct jpeg_decompress_struct *c = &j->cinfo;
	struct slab_jpegrst_part part = { 0 };
	unsigned denom = 1;
	uint32_t ow, oh, ix0, ix1, iy0, iy1;
	JDIMENSION xoff, cw;
	size_t stride, need;
	unsigned char *row;
	int ret;

	start(j, lim, data, len);
	if ((ret = over_pixels(j, lim, err)) < 0)
		return ret;
	if ((ret = slab_image_crop_check(p, c->image_width, c->image_height, err)) < 0) {
		jpeg_abort_decompress(c);
		return ret;
	}
	for (unsigned s = max_scale(c); s > 1 && slab_image_may_scale(spec); s /= 2) {
		if (p->w >= (uint64_t)spec->out_w * s && p->h >= (uint64_t)spec->out_h * s) {
			denom = s;
			break;
		}
	}
	set_output(c, denom);
	jpeg_calc_output_dimensions(c);
	ow = c->output_width;
	oh = c->output_height;
	slab_image_box(p, denom, ow, oh, spec->exact, r, &ix0, &ix1, &iy0, &iy1);
	/* libjpeg's fancy upsampling takes a pixel's chroma from both neighbouring chroma
	 * samples, mirroring them at the edges of the columns it decodes (a part's, or
	 * jpeg_crop_scanline's, whose left edge is an iMCU boundary), and repeats a chroma row
	 * of one sample instead: with chroma sampled across, a column more on each side, and
	 * never fewer than two chroma samples' worth, make every pixel of the crop the full
	 * decode's. */
	if (upsampled_across(c)) {
		uint32_t least = 2u * (uint32_t)c->max_h_samp_factor + 1;

		ix0 -= ix0 > 0;
		ix1 += ix1 < ow;
		if (ix1 - ix0 < least) {
			ix1 = ix0 + least < ow ? ix0 + least : ow;
			ix0 = ix1 > least ? ix1 - least : 0;
		}
	}
	if (restart && (ret = use_part(j, data, len, denom, ow, oh, ix0, ix1, iy0, iy1, &part,
				       err)) < 0)
		return ret;
	jpeg_start_decompress(c);
	if (j->in_part && (c->output_width != part.w || c->output_height != part.h)) {
		jpeg_abort_decompress(c);
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "JPEG not decoded from a restart "
				 "marker: a part of %ux%u came out %ux%u", part.w, part.h,
				 c->output_width, c->output_height);
	}
	/* From here on the rows and columns are the part's (the whole image's without one). */
	ix0 -= part.x;
	ix1 -= part.x;
	iy0 -= part.y;
	iy1 -= part.y;

	xoff = 0;
	if (ix0 > 0 || ix1 < c->output_width) {
		xoff = ix0;
		cw = ix1 - ix0;
		jpeg_crop_scanline(c, &xoff, &cw);
	}
	if (iy0 > 0 && jpeg_skip_scanlines(c, iy0) != iy0) {
		jpeg_abort_decompress(c);
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: cannot skip %u rows",
				 iy0 + part.y);
	}
	stride = (size_t)c->output_width * (size_t)c->output_components;
	need = stride * (iy1 - iy0);
	if (slab_scratch_reserve(pix, need) < 0) {
		jpeg_abort_decompress(c);
		return slab_fail(err, SLAB_ERR_NOMEM, NULL,
				 "out of memory decoding a %ux%u JPEG region", c->output_width,
				 iy1 - iy0);
	}
	row = pix->p;
	for (uint32_t y = iy0; y < iy1; y++, row += stride) {
		JSAMPROW rp = row;

		if (jpeg_read_scanlines(c, &rp, 1) != 1) {
			jpeg_abort_decompress(c);
			return slab_fail(err, SLAB_ERR_CORRUPT, NULL,
					 "corrupt JPEG: row %u did not decode", y + part.y);
		}
	}

	/* CMYK as libjpeg gives it (Adobe's inverted form when the Adobe marker says so) to RGB,
	 * in place, as PIL does: R = (255 - C)(255 - K) / 255; the fourth byte, K, made the
	 * opaque alpha. */
	if (c->out_color_space == JCS_CMYK) {
		unsigned char *px = pix->p;
		size_t n = (size_t)c->output_width * (iy1 - iy0);
		int inv = c->saw_Adobe_marker;

		for (size_t i = 0; i < n; i++) {
			unsigned k = inv ? px[4 * i + 3] : 255u - px[4 * i + 3];

			for (int ch = 0; ch < 3; ch++) {
				unsigned v = inv ? px[4 * i + ch] : 255u - px[4 * i + ch];
				unsigned t = v * k + 128;

				px[4 * i + ch] = (unsigned char)((t + (t >> 8)) >> 8);
			}
			px[4 * i + 3] = 255;
		}
	}

	st->scale_denom = denom;
	st->region = part.x + xoff > 0 || c->output_width < ow || part.y + iy0 > 0 ||
		     part.y + iy1 < oh;
	st->decoded_w = c->output_width;
	st->decoded_h = iy1 - iy0;
	r->px = pix->p;
	r->bw = c->output_width;
	r->bh = iy1 - iy0;
	r->x0 -= part.x + xoff;
	r->x1 -= part.x + xoff;
	r->y0 -= part.y + iy0;
	r->y1 -= part.y + iy0;

	if (c->output_scanline == c->output_height)
		jpeg_finish_decompress(c);
	else
		jpeg_abort_decompress(c);
	if (j->jerr.warnings)
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt JPEG: %s", j->jerr.warning);
	return 0;
}

static int decode_once(struct jdec *j, int restart, const struct slab_image_limits *lim,
		       const unsigned char *data, size_t len, const struct slab_image_spec *spec,
		       const struct slab_image_params *p, struct slab_scratch *pix,
		       struct slab_image_region *reg, struct slab_image_stats *stats,
		       struct slab_err *err)
{
	j->jerr.fatal = 1;
	if (setjmp(j->jerr.jump))
		return jpeg_failed(j, err);
	return decode_region(j, restart, lim, data, len, spec, p, pix, reg, stats, err);
}

/* A part that fails to decode (its source's data corrupt where the part lies, or any doubt)
 * is decoded again the way it was before restart markers, which decides the outcome. */
static int decode(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		  size_t len, const struct slab_image_spec *spec, const struct slab_image_params *p,
		  struct slab_scratch *pix, struct slab_image_region *reg,
		  struct slab_image_stats *stats, struct slab_err *err)
{
	struct jdec *j = st;
	int ret;

	j->in_part = 0;
	ret = decode_once(j, j->restart != RESTART_OFF, lim, data, len, spec, p, pix, reg, stats,
			  err);
	if (ret < 0 && j->in_part && j->restart != RESTART_REQUIRE) {
		j->in_part = 0;
		ret = decode_once(j, 0, lim, data, len, spec, p, pix, reg, stats, err);
	}
	slab_scratch_trim(&j->part);
	return ret;
}

const struct slab_image_format slab_image_jpeg = {
	.name = "JPEG",
	.probe = probe,
	.cut_short = cut_short,
	.state_new = state_new,
	.state_free = state_free,
	.size = size,
	.decode = decode,
};
