/* jpegrst.c: restart markers in sequential JPEGs (jpegrst.h): the header's layout and a JPEG
 * made of a crop's restart intervals, for the image pipeline; the lossless rewrite that adds
 * the markers, for pack, on libjpeg's transcoding API (jpeg_read_coefficients,
 * jpeg_write_coefficients), never coding entropy by hand. */
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "error.h"
#include "jpegrst.h"
#include "scratch.h"
#include "slab.h"

static uint32_t be16(const unsigned char *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static int no(const char **why, const char *text)
{
	if (why)
		*why = text;
	return 0;
}

static uint32_t gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The frame and the scan of a JPEG, as far as the header goes. */
struct frame {
	uint32_t width, height;
	size_t sof, scan;
	unsigned dri, nf, hmax, vmax;
	unsigned h[4], v[4];
};

/*
 * Walk the markers from SOI to the first SOS. 1 and *f for a sequential Huffman-coded 8-bit
 * JPEG whose first scan holds every component; else 0 and *why. Only markers libjpeg reads
 * without complaint are followed (fill bytes before a marker, APPn, COM, DQT, DHT, DRI):
 * anything else, which the decoder would warn about or refuse, is not this code's to judge.
 */
static int read_frame(const unsigned char *p, size_t len, struct frame *f, const char **why)
{
	size_t i = 2;
	int sof = 0;

	memset(f, 0, sizeof(*f));
	if (!p || len < 4 || p[0] != 0xFF || p[1] != 0xD8)
		return no(why, "not a JPEG");
	for (;;) {
		unsigned m;
		size_t seg;

		if (i >= len || p[i] != 0xFF)
			return no(why, "bytes between markers");
		while (i < len && p[i] == 0xFF)
			i++;
		if (i + 3 > len)
			return no(why, "truncated header");
		m = p[i++];
		if (m == 0xD8 || m == 0xD9 || m == 0x01 || (m >= 0xD0 && m <= 0xD7))
			return no(why, "no scan");
		seg = be16(p + i);
		if (seg < 2 || seg > len - i)
			return no(why, "truncated header");
		switch (m) {
		case 0xC0: case 0xC1:
			if (sof)
				return no(why, "two frames");
			sof = 1;
			if (seg < 8)
				return no(why, "bad frame header");
			if (p[i + 2] != 8)
				return no(why, "not 8-bit");
			f->sof = i + 3;
			f->height = be16(p + i + 3);
			f->width = be16(p + i + 5);
			f->nf = p[i + 7];
			if (f->height == 0)
				return no(why, "height in a DNL marker");
			if (f->width == 0 || f->nf < 1 || f->nf > 4 || seg != 8 + 3 * (size_t)f->nf)
				return no(why, "bad frame header");
			f->hmax = f->vmax = 1;
			for (unsigned c = 0; c < f->nf; c++) {
				f->h[c] = p[i + 9 + 3 * c] >> 4;
				f->v[c] = p[i + 9 + 3 * c] & 15;
				if (f->h[c] < 1 || f->h[c] > 4 || f->v[c] < 1 || f->v[c] > 4)
					return no(why, "bad sampling factors");
				if (f->h[c] > f->hmax)
					f->hmax = f->h[c];
				if (f->v[c] > f->vmax)
					f->vmax = f->v[c];
			}
			break;
		case 0xC2: case 0xC6: case 0xCA: case 0xCE:
			return no(why, "progressive");
		case 0xC9: case 0xCD: case 0xCC:
			return no(why, "arithmetic-coded");
		case 0xC3: case 0xC5: case 0xC7: case 0xCB: case 0xCF:
			return no(why, "lossless or hierarchical");
		case 0xDD:
			if (seg != 4)
				return no(why, "bad restart interval");
			f->dri = be16(p + i + 2);
			break;
		case 0xDA: {
			unsigned ns;

			if (!sof)
				return no(why, "scan before frame");
			ns = seg >= 3 ? p[i + 2] : 0;
			if (seg != 6 + 2 * (size_t)ns)
				return no(why, "bad scan header");
			if (ns != f->nf)
				return no(why, "components in separate scans");
			if (p[i + 3 + 2 * ns] != 0 || p[i + 4 + 2 * ns] != 63 ||
			    p[i + 5 + 2 * ns] != 0)
				return no(why, "bad scan header");
			f->scan = i + seg;
			return 1;
		}
		case 0xC4: case 0xDB: case 0xFE:
			break;
		default:
			if (m >= 0xE0 && m <= 0xEF)
				break;
			return no(why, "unexpected marker in header");
		}
		i += seg;
	}
}

int slab_jpegrst_layout(const unsigned char *p, size_t len, struct slab_jpegrst_layout *lay,
			const char **why)
{
	struct frame f;

	memset(lay, 0, sizeof(*lay));
	if (!read_frame(p, len, &f, why))
		return 0;
	if (f.dri == 0)
		return no(why, "no restart markers");
	lay->width = f.width;
	lay->height = f.height;
	lay->sof = f.sof;
	lay->scan = f.scan;
	lay->interval = f.dri;
	/* A lone component's scan has MCUs of one block whatever its sampling factors (a grey
	 * JPEG written 2x2, as PIL's subsampling=2 does), and nothing is upsampled: its MCU is
	 * a block, which is also where jpeg_crop_scanline aligns its columns. */
	lay->mcu_w = f.nf == 1 ? 8 : 8 * f.hmax;
	lay->mcu_h = f.nf == 1 ? 8 : 8 * f.vmax;
	lay->mcus_per_row = (f.width + lay->mcu_w - 1) / lay->mcu_w;
	lay->mcu_rows = (f.height + lay->mcu_h - 1) / lay->mcu_h;
	lay->row_step = f.dri / gcd(f.dri, lay->mcus_per_row);
	lay->segs_per_row = lay->mcus_per_row % f.dri == 0 ? lay->mcus_per_row / f.dri : 0;
	return 1;
}

/* Output columns of intervals s0 .. s1 of a row, n of them a row, each sw wide, the last one
 * ending at the image's right edge ow. */
static uint32_t seg_width(uint32_t s0, uint32_t s1, uint32_t n, uint32_t sw, uint32_t ow)
{
	return s1 == n - 1 ? ow - s0 * sw : (s1 - s0 + 1) * sw;
}

int slab_jpegrst_plan(const struct slab_jpegrst_layout *lay, unsigned denom, uint32_t ow,
		      uint32_t oh, uint32_t ix0, uint32_t ix1, uint32_t iy0, uint32_t iy1,
		      struct slab_jpegrst_part *part)
{
	uint32_t rows, cols;                    /* output rows, columns of an MCU */
	uint32_t step = lay->row_step, last = lay->mcu_rows - 1, r0 = 0, r1, s0 = 0, s1 = 0;
	uint32_t n = lay->segs_per_row;

	memset(part, 0, sizeof(*part));
	if (denom == 0 || lay->mcu_h % denom || lay->mcu_w % denom || ix0 >= ix1 || iy0 >= iy1 ||
	    ix1 > ow || iy1 > oh)
		return 0;
	rows = lay->mcu_h / denom;
	cols = lay->mcu_w / denom;
	/* Vertical upsampling (4:2:0, 4:4:0) reads the row above an MCU row's first output row
	 * and the row below its last: the part starts at the MCU row of the output row above
	 * the first one asked for, so that its own top row, upsampled against a copy of itself,
	 * is never asked for; and ends at the MCU row of the output row below the last one. */
	if (iy0 > 0)
		r0 = (iy0 - 1) / rows / step * step;
	r1 = iy1 / rows;
	/* Without tiling, the part ends where an interval does. */
	if (!n && r1 < last)
		r1 = (r1 + step) / step * step - 1;
	if (r1 > last)
		r1 = last;
	if (n && (ix0 > 0 || ix1 < ow)) {
		uint32_t sw = lay->interval * cols;
		uint32_t w;

		/* jpeg_crop_scanline starts at the iMCU column of ix0. */
		s0 = ix0 / cols * cols / sw;
		s1 = (ix1 - 1) / sw;
		if (s1 > n - 1)
			s1 = n - 1;
		/* Never exactly the columns asked for (libjpeg would not crop, which changes
		 * how it upsamples at the edges), nor under 3 iMCU columns (libjpeg picks the
		 * upsampler by the width): widen, to the right first. */
		w = seg_width(s0, s1, n, sw, ow);
		while ((w == ix1 - ix0 || w < 3 * cols) && !(s0 == 0 && s1 == n - 1)) {
			if (s1 < n - 1)
				s1++;
			else
				s0--;
			w = seg_width(s0, s1, n, sw, ow);
		}
		part->x = s0 * sw;
		part->w = w;
	} else {
		s1 = n ? n - 1 : 0;
		part->w = ow;
	}
	if (r0 == 0 && r1 == last && part->w == ow)
		return 0;
	part->row0 = r0;
	part->row1 = r1;
	part->seg0 = s0;
	part->seg1 = s1;
	part->y = r0 * rows;
	part->h = r1 == last ? oh - part->y : (r1 - r0 + 1) * rows;
	return 1;
}

/* From pos in the entropy-coded data: the offset of the next marker's first 0xFF (len when
 * the data ends first), its code in *code (-1 at the end) and the offset after it in *after.
 * 0xFF 0x00 is a data byte, and 0xFF bytes before a code are fill, as libjpeg reads them. */
static size_t next_marker(const unsigned char *p, size_t len, size_t pos, int *code,
			  size_t *after)
{
	for (;;) {
		const unsigned char *ff = pos < len ? memchr(p + pos, 0xFF, len - pos) : NULL;
		size_t at, q;

		if (!ff) {
			*code = -1;
			*after = len;
			return len;
		}
		at = (size_t)(ff - p);
		q = at + 1;
		while (q < len && p[q] == 0xFF)
			q++;
		if (q >= len) {
			*code = -1;
			*after = len;
			return at;
		}
		if (p[q] == 0x00) {
			pos = q + 1;
			continue;
		}
		*code = p[q];
		*after = q + 1;
		return at;
	}
}

int slab_jpegrst_part(const unsigned char *p, size_t len, const struct slab_jpegrst_layout *lay,
		      const struct slab_jpegrst_part *part, struct slab_scratch *out,
		      size_t *outlen, const char **why)
{
	uint64_t n = lay->segs_per_row, first, lastseg, k;
	uint64_t mcus = (uint64_t)lay->mcus_per_row * lay->mcu_rows;
	uint64_t total = (mcus + lay->interval - 1) / lay->interval;
	uint32_t pw, ph;
	size_t pos = lay->scan, o, need;
	unsigned char *q;
	unsigned written = 0;

	if (n) {
		first = part->row0 * n + part->seg0;
		lastseg = part->row1 * n + part->seg1;
		pw = part->seg1 == n - 1 ? lay->width - part->seg0 * lay->interval * lay->mcu_w :
		     (part->seg1 - part->seg0 + 1) * lay->interval * lay->mcu_w;
	} else {
		first = (uint64_t)part->row0 * lay->mcus_per_row / lay->interval;
		lastseg = part->row1 == lay->mcu_rows - 1 ? total - 1 :
			  ((uint64_t)part->row1 + 1) * lay->mcus_per_row / lay->interval - 1;
		pw = lay->width;
	}
	ph = part->row1 == lay->mcu_rows - 1 ? lay->height - part->row0 * lay->mcu_h :
	     (part->row1 - part->row0 + 1) * lay->mcu_h;
	if (lastseg >= total || first > lastseg || pw == 0 || ph == 0 || pw > 65535 || ph > 65535)
		return (*why = "part outside the image", 1);
	/* The header, the entropy-coded data at most, a marker before each segment, EOI. */
	need = len + 2 * (size_t)(lastseg - first + 1) + 2;
	if (slab_scratch_reserve(out, need) < 0)
		return SLAB_ERR_NOMEM;
	q = out->p;
	memcpy(q, p, lay->scan);
	q[lay->sof] = (unsigned char)(ph >> 8);
	q[lay->sof + 1] = (unsigned char)ph;
	q[lay->sof + 2] = (unsigned char)(pw >> 8);
	q[lay->sof + 3] = (unsigned char)pw;
	o = lay->scan;
	for (k = 0;; k++) {
		int code;
		size_t after, end = next_marker(p, len, pos, &code, &after);
		int keep = k >= first && (!n || (k % n >= part->seg0 && k % n <= part->seg1));

		if (keep) {
			if (written++) {
				q[o++] = 0xFF;
				q[o++] = (unsigned char)(0xD0 + ((written - 2) & 7));
			}
			memcpy(q + o, p + pos, end - pos);
			o += end - pos;
		}
		if (k == lastseg)
			break;
		if (code < 0xD0 || code > 0xD7)
			return (*why = "restart markers missing", 1);
		if (code != (int)(0xD0 + (k & 7)))
			return (*why = "restart markers out of order", 1);
		pos = after;
	}
	q[o++] = 0xFF;
	q[o++] = 0xD9;
	*outlen = o;
	return 0;
}

/* ---- The rewrite ------------------------------------------------------------------------ */

/* libjpeg's error manager, made to return: error_exit jumps back to the call that entered
 * libjpeg; warnings are counted (a JPEG that warns is not rewritten); nothing is printed. */
struct rsterr {
	struct jpeg_error_mgr pub;
	jmp_buf jump;
	int warnings;
};

/* A destination of our own (libjpeg's jpeg_mem_dest leaks its buffer when compression is
 * aborted): a malloc'd buffer, doubled as it fills. */
struct memdst {
	struct jpeg_destination_mgr pub;
	unsigned char *buf;
	size_t cap;
};

struct slab_jpegrst {
	struct jpeg_decompress_struct src, chk;
	struct jpeg_compress_struct dst;
	struct rsterr jerr;
	struct memdst out;
	struct slab_err err;
	long max_memory;
	int made;               /* how many of src, chk, dst exist */
};

static void on_error(j_common_ptr c)
{
	longjmp(((struct rsterr *)c->err)->jump, 1);
}

static void on_message(j_common_ptr c, int level)
{
	if (level < 0) {
		((struct rsterr *)c->err)->warnings++;
		c->err->num_warnings++;
	}
}

static void on_output(j_common_ptr c)
{
	(void)c;
}

static void dst_init(j_compress_ptr c)
{
	struct memdst *d = (struct memdst *)c->dest;

	d->pub.next_output_byte = d->buf;
	d->pub.free_in_buffer = d->cap;
}

static boolean dst_empty(j_compress_ptr c)
{
	struct memdst *d = (struct memdst *)c->dest;
	size_t cap = d->cap * 2;
	unsigned char *b = d->cap > SIZE_MAX / 2 ? NULL : realloc(d->buf, cap);

	if (!b)
		ERREXIT1(c, JERR_OUT_OF_MEMORY, 99);
	d->buf = b;
	d->pub.next_output_byte = b + d->cap;
	d->pub.free_in_buffer = cap - d->cap;
	d->cap = cap;
	return TRUE;
}

static void dst_term(j_compress_ptr c)
{
	(void)c;
}

/* As image_jpeg.c bounds the decoder: the coefficients of an image within the pixel limit
 * fit, a crafted one's do not. */
static long mem_bound(uint64_t max_pixels)
{
	const uint64_t slack = 64ull << 20;

	if (max_pixels > ((uint64_t)LONG_MAX - slack) / 8)
		return 0;
	return (long)(max_pixels * 8 + slack);
}

static int create(struct slab_jpegrst *r)
{
	if (setjmp(r->jerr.jump))
		return -1;
	jpeg_create_decompress(&r->src);
	r->made = 1;
	jpeg_create_decompress(&r->chk);
	r->made = 2;
	jpeg_create_compress(&r->dst);
	r->made = 3;
	return 0;
}

struct slab_jpegrst *slab_jpegrst_new(uint64_t max_pixels)
{
	struct slab_jpegrst *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->src.err = r->chk.err = r->dst.err = jpeg_std_error(&r->jerr.pub);
	r->jerr.pub.error_exit = on_error;
	r->jerr.pub.emit_message = on_message;
	r->jerr.pub.output_message = on_output;
	r->out.pub.init_destination = dst_init;
	r->out.pub.empty_output_buffer = dst_empty;
	r->out.pub.term_destination = dst_term;
	r->max_memory = mem_bound(max_pixels == 0 ? SLAB_IMAGE_MAX_PIXELS : max_pixels);
	if (create(r) < 0) {
		slab_jpegrst_free(r);
		return NULL;
	}
	return r;
}

void slab_jpegrst_free(struct slab_jpegrst *r)
{
	if (!r)
		return;
	if (r->made > 0)
		jpeg_destroy_decompress(&r->src);
	if (r->made > 1)
		jpeg_destroy_decompress(&r->chk);
	if (r->made > 2)
		jpeg_destroy_compress(&r->dst);
	free(r->out.buf);
	free(r);
}

const char *slab_jpegrst_error(const struct slab_jpegrst *r)
{
	return r ? r->err.text : "no restart context";
}

/* The symbols a Huffman table codes, as a bit set of 256. */
static void table_symbols(const JHUFF_TBL *t, uint64_t set[4])
{
	unsigned n = 0;

	memset(set, 0, 4 * sizeof(*set));
	if (!t)
		return;
	for (int l = 1; l <= 16; l++)
		n += t->bits[l];
	for (unsigned i = 0; i < n && i < 256; i++)
		set[t->huffval[i] >> 6] |= 1ull << (t->huffval[i] & 63);
}

static int has_symbol(const uint64_t set[4], unsigned s)
{
	return (int)(set[s >> 6] >> (s & 63) & 1);
}

static unsigned nbits(int v)
{
	unsigned n = 0;
	unsigned u = (unsigned)(v < 0 ? -v : v);

	while (u) {
		n++;
		u >>= 1;
	}
	return n;
}

/*
 * Whether the source's Huffman tables, copied into dst, code the stream dst will write with
 * restarts every `interval` MCUs. Its AC symbols are those the source coded with the same
 * tables; its DC differences are not (each restart sets the prediction back to 0), nor its
 * dummy blocks (the right and bottom edges' padding, which libjpeg's transcoder writes with
 * the DC of the block before and no AC: a DC difference of 0 and an EOB). Walks the blocks in
 * the order dst codes them (jctrans.c). Calls libjpeg, which may jump.
 */
static int tables_cover(struct slab_jpegrst *r, jvirt_barray_ptr *coefs, unsigned interval)
{
	j_decompress_ptr s = &r->src;
	uint64_t dc[4][4], ac[4][4];
	int pred[MAX_COMPONENTS] = { 0 };
	unsigned nc = (unsigned)s->num_components;
	int one = nc == 1;
	JDIMENSION mw = one ? s->comp_info[0].width_in_blocks :
		       (s->image_width + 8 * s->max_h_samp_factor - 1) / (8 * s->max_h_samp_factor);
	JDIMENSION mh = one ? s->comp_info[0].height_in_blocks :
		       (s->image_height + 8 * s->max_v_samp_factor - 1) /
		       (8 * s->max_v_samp_factor);
	uint64_t mcu = 0;

	for (int t = 0; t < 4; t++) {
		table_symbols(r->dst.dc_huff_tbl_ptrs[t], dc[t]);
		table_symbols(r->dst.ac_huff_tbl_ptrs[t], ac[t]);
	}
	for (JDIMENSION my = 0; my < mh; my++) {
		JBLOCKARRAY rows[MAX_COMPONENTS];

		for (unsigned ci = 0; ci < nc; ci++) {
			jpeg_component_info *c = &s->comp_info[ci];
			JDIMENSION v = one ? 1 : (JDIMENSION)c->v_samp_factor;

			rows[ci] = s->mem->access_virt_barray((j_common_ptr)s, coefs[ci], my * v, v,
							      FALSE);
		}
		for (JDIMENSION mx = 0; mx < mw; mx++, mcu++) {
			if (mcu % interval == 0)
				memset(pred, 0, sizeof(pred));
			for (unsigned ci = 0; ci < nc; ci++) {
				jpeg_component_info *c = &s->comp_info[ci];
				int h = one ? 1 : c->h_samp_factor, v = one ? 1 : c->v_samp_factor;
				int dt = r->dst.comp_info[ci].dc_tbl_no;
				int at = r->dst.comp_info[ci].ac_tbl_no;

				for (int y = 0; y < v; y++) {
					for (int x = 0; x < h; x++) {
						JDIMENSION bx = mx * (JDIMENSION)h + (JDIMENSION)x;
						JDIMENSION by = my * (JDIMENSION)v + (JDIMENSION)y;
						int d = 0;

						if (bx < c->width_in_blocks && by < c->height_in_blocks) {
							int dcv = rows[ci][y][bx][0];

							d = dcv - pred[ci];
							pred[ci] = dcv;
						} else if (!has_symbol(ac[at], 0)) {
							return 0;
						}
						if (nbits(d) > 15 || !has_symbol(dc[dt], nbits(d)))
							return 0;
					}
				}
			}
		}
	}
	return 1;
}

/* The source's Huffman tables and the components' choice of them into dst. */
static void copy_tables(struct slab_jpegrst *r)
{
	for (int t = 0; t < NUM_HUFF_TBLS; t++) {
		JHUFF_TBL *const *from[2] = { &r->src.dc_huff_tbl_ptrs[t], &r->src.ac_huff_tbl_ptrs[t] };
		JHUFF_TBL **to[2] = { &r->dst.dc_huff_tbl_ptrs[t], &r->dst.ac_huff_tbl_ptrs[t] };

		for (int k = 0; k < 2; k++) {
			if (!*from[k])
				continue;
			if (!*to[k])
				*to[k] = jpeg_alloc_huff_table((j_common_ptr)&r->dst);
			memcpy((*to[k])->bits, (*from[k])->bits, sizeof((*to[k])->bits));
			memcpy((*to[k])->huffval, (*from[k])->huffval, sizeof((*to[k])->huffval));
			(*to[k])->sent_table = FALSE;
		}
	}
	for (int ci = 0; ci < r->src.num_components; ci++) {
		r->dst.comp_info[ci].dc_tbl_no = r->src.comp_info[ci].dc_tbl_no;
		r->dst.comp_info[ci].ac_tbl_no = r->src.comp_info[ci].ac_tbl_no;
	}
}

/*
 * Whether chk (the new JPEG, its coefficients read) decodes as src does: the same size,
 * components, colour space and its markers (JFIF, Adobe's transform), quantisation tables and
 * every real block's coefficients (the dummy blocks at the edges are never output). Calls
 * libjpeg, which may jump.
 */
static int same_image(struct slab_jpegrst *r, jvirt_barray_ptr *a, jvirt_barray_ptr *b)
{
	j_decompress_ptr s = &r->src, c = &r->chk;

	if (s->image_width != c->image_width || s->image_height != c->image_height ||
	    s->num_components != c->num_components || s->jpeg_color_space != c->jpeg_color_space ||
	    s->saw_JFIF_marker != c->saw_JFIF_marker || s->saw_Adobe_marker != c->saw_Adobe_marker ||
	    (s->saw_Adobe_marker && s->Adobe_transform != c->Adobe_transform) ||
	    c->progressive_mode || c->arith_code)
		return 0;
	for (int ci = 0; ci < s->num_components; ci++) {
		jpeg_component_info *x = &s->comp_info[ci], *y = &c->comp_info[ci];

		if (x->component_id != y->component_id || x->h_samp_factor != y->h_samp_factor ||
		    x->v_samp_factor != y->v_samp_factor || x->width_in_blocks != y->width_in_blocks ||
		    x->height_in_blocks != y->height_in_blocks || !x->quant_table || !y->quant_table ||
		    memcmp(x->quant_table->quantval, y->quant_table->quantval,
			   sizeof(x->quant_table->quantval)))
			return 0;
		for (JDIMENSION by = 0; by < x->height_in_blocks; by++) {
			JBLOCKARRAY ra = s->mem->access_virt_barray((j_common_ptr)s, a[ci], by, 1, FALSE);
			JBLOCKARRAY rb = c->mem->access_virt_barray((j_common_ptr)c, b[ci], by, 1, FALSE);

			if (memcmp(ra[0], rb[0], x->width_in_blocks * sizeof(JBLOCK)))
				return 0;
		}
	}
	return 1;
}

/* Undo whatever a call left in libjpeg's objects, for the next call. */
static void reset(struct slab_jpegrst *r)
{
	jpeg_abort_decompress(&r->src);
	jpeg_abort_decompress(&r->chk);
	jpeg_abort_compress(&r->dst);
}

static int kept(struct slab_jpegrst *r, const char *why)
{
	slab_fail(&r->err, 0, NULL, "%s", why);
	return 0;
}

/* One encoding of the source into r->out.buf (optimize: new Huffman tables), checked; 1 when
 * it decodes as the source does, 0 when not. Calls libjpeg, which may jump. */
static int encode(struct slab_jpegrst *r, jvirt_barray_ptr *coefs, unsigned interval,
		  int optimize, size_t *outlen)
{
	jvirt_barray_ptr *back;
	int same;

	r->jerr.warnings = 0;
	jpeg_copy_critical_parameters(&r->src, &r->dst);
	r->dst.dest = &r->out.pub;
	/* The source's own JFIF and Adobe markers go out as they came, among its others. */
	r->dst.write_JFIF_header = FALSE;
	r->dst.write_Adobe_marker = FALSE;
	copy_tables(r);
	r->dst.restart_interval = interval;
	r->dst.restart_in_rows = 0;
	r->dst.optimize_coding = optimize ? TRUE : FALSE;
	jpeg_write_coefficients(&r->dst, coefs);
	for (jpeg_saved_marker_ptr m = r->src.marker_list; m; m = m->next)
		jpeg_write_marker(&r->dst, m->marker, m->data, m->data_length);
	jpeg_finish_compress(&r->dst);
	*outlen = r->out.cap - r->out.pub.free_in_buffer;

	jpeg_mem_src(&r->chk, r->out.buf, (unsigned long)*outlen);
	r->chk.mem->max_memory_to_use = r->max_memory;
	jpeg_read_header(&r->chk, TRUE);
	back = jpeg_read_coefficients(&r->chk);
	same = r->jerr.warnings == 0 && same_image(r, coefs, back) &&
	       r->chk.restart_interval == interval;
	jpeg_abort_decompress(&r->chk);
	return same;
}

unsigned slab_jpegrst_interval(uint32_t mcus_per_row, unsigned most)
{
	if (most == 0 || most >= mcus_per_row)
		return mcus_per_row;
	for (unsigned n = most; n > 1; n--)
		if (mcus_per_row % n == 0)
			return n;
	return 1;
}

int slab_jpegrst_rewrite(struct slab_jpegrst *r, const void *buf, size_t len, unsigned most,
			 void **out, size_t *outlen)
{
	struct frame f;
	const char *why;
	jvirt_barray_ptr *coefs;
	unsigned row, interval;
	volatile int optimize = 0;
	int same;

	*out = NULL;
	*outlen = 0;
	r->err.text[0] = '\0';
	if (!read_frame(buf, len, &f, &why))
		return kept(r, why);
	/* libjpeg's MCUs_per_row: a lone component's scan has MCUs of one block. */
	row = f.nf == 1 ? (f.width + 7) / 8 : (f.width + 8 * f.hmax - 1) / (8 * f.hmax);
	interval = slab_jpegrst_interval(row, most);
	if (f.dri == interval)
		return kept(r, "restart markers already at that interval");
	if (interval > 65535)
		return kept(r, "an MCU row over 65535 MCUs");
	if (!r->out.buf) {
		if (!(r->out.buf = malloc(1 << 16)))
			return slab_fail(&r->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		r->out.cap = 1 << 16;
	}

	if (setjmp(r->jerr.jump)) {
		int code = r->jerr.pub.msg_code;
		char msg[JMSG_LENGTH_MAX];

		r->jerr.pub.format_message((j_common_ptr)&r->src, msg);
		reset(r);
		if (code == JERR_OUT_OF_MEMORY)
			return slab_fail(&r->err, SLAB_ERR_NOMEM, NULL, "out of memory adding "
					 "restart markers: %s", msg);
		return kept(r, msg);
	}
	r->jerr.warnings = 0;
	jpeg_mem_src(&r->src, buf, (unsigned long)len);
	r->src.mem->max_memory_to_use = r->max_memory;
	jpeg_save_markers(&r->src, JPEG_COM, 0xFFFF);
	for (int m = 0; m < 16; m++)
		jpeg_save_markers(&r->src, JPEG_APP0 + m, 0xFFFF);
	jpeg_read_header(&r->src, TRUE);
	coefs = jpeg_read_coefficients(&r->src);
	if (r->jerr.warnings) {
		reset(r);
		return kept(r, "corrupt JPEG");
	}
	/* Bytes after its end: an MPO's other pictures, whose offsets in its APP2 index would
	 * no longer hold in a longer first picture, or anything else a tool appended. */
	if (r->src.src->bytes_in_buffer > 0) {
		reset(r);
		return kept(r, "bytes after the end of the image");
	}
	/* The source's tables where they code the new stream, so that it grows by the markers
	 * only; new ones where they do not; the check decides. */
	jpeg_copy_critical_parameters(&r->src, &r->dst);
	copy_tables(r);
	optimize = !tables_cover(r, coefs, interval);
	jpeg_abort_compress(&r->dst);
	same = encode(r, coefs, interval, optimize, outlen);
	if (!same && !optimize) {
		optimize = 1;
		same = encode(r, coefs, interval, 1, outlen);
	}
	reset(r);
	if (!same)
		return kept(r, "the rewritten JPEG did not read back the same");
	if (!(*out = malloc(*outlen ? *outlen : 1)))
		return slab_fail(&r->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	memcpy(*out, r->out.buf, *outlen);
	/* Give back a buffer one huge image grew. */
	if (r->out.cap > (64u << 20)) {
		free(r->out.buf);
		r->out.buf = NULL;
		r->out.cap = 0;
	}
	return 1;
}
