/* image_png.c: PNG for the image pipeline (imgfmt.h), on libspng. Every colour type and bit
 * depth, Adam7 and tRNS come out as PIL's Image.open(f).convert("RGB") gives them; a
 * non-interlaced PNG is decoded row by row and only up to the crop's last row.
 *
 * The common PNG (8 bits a sample, not interlaced, no tRNS, its image data followed by IEND
 * alone) takes a faster way once libspng has read and checked everything before the image
 * data: libdeflate inflates the whole IDAT stream in one call, about twice as fast as zlib's
 * inflate under libspng, and the rows are unfiltered here up to the crop's last. It gives the
 * same pixels, and is taken only for files libspng decodes whole: anything it does not expect
 * (a chunk checksum, the stream's adler32 or length, a filter type) sends the image down
 * libspng's path, which then decodes or refuses it as before. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <spng.h>

#include "error.h"
#include "imgfmt.h"
#include "scratch.h"
#include "slab.h"

/*
 * What libspng may keep of the ancillary chunks before the image data (text, eXIf, iCCP,
 * sPLT): each zTXt, iTXt or iCCP inflated to at most CHUNK_MAX bytes, CACHE_MAX bytes in all
 * (libspng's defaults are 2 GiB and no limit, so a few kilobytes of zTXt could make it hold
 * gigabytes). PIL refuses text over 1 MiB inflated and 64 MiB in all, so these refuse
 * nothing PIL opens for its metadata's size. libspng also stops at 1000 such chunks, and
 * (0.7.3) says the same of an empty eXIf, which PIL takes. Any of these: SLAB_ERR_LIMIT.
 *
 * The image data needs no such limit: libspng inflates the IDAT stream only into the rows
 * asked for, a scanline at a time into buffers of the image's width, and never inflates what
 * follows the last row (nor IDAT chunks after it). So the work of an IDAT stream that would
 * inflate without end is bounded by the image's size, which the pixel limit bounds, and its
 * bytes by the file's length.
 */
#define CHUNK_MAX (8u << 20)
#define CACHE_MAX (64u << 20)

/* The faster way holds the whole inflated image (a filter byte and a row of samples for each
 * row, at most 4 bytes a pixel) where libspng holds a row, and a decoder keeps that buffer
 * for its next image: above this (11 megapixels of RGB), libspng's way, so that a loader's
 * threads each hold no more. */
#define WHOLE_MAX (32u << 20)

/* SLAB_PNG_LIBDEFLATE (read when a decoder first meets a PNG): 0 for libspng's way only, as
 * before the faster one (tests, debugging: the pixels are the same); require to fail with
 * the reason where the faster way is not taken. */
enum { FAST_ON, FAST_OFF, FAST_REQUIRE };

/* decode_fast()'s answer when it leaves the image to libspng's way: none of libspng's rcs,
 * which run from SPNG_IO_ERROR (-2) and SPNG_IO_EOF (-1, a file that ends before its image
 * data) up. */
#define NOT_TAKEN INT_MIN

static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

struct pdec {
	/* The image's context while one is being read: there is one per image (libspng has no
	 * reset), and it is freed here when a read was left by a longjmp (a fault reading a
	 * mapping, fault.h) rather than returning. */
	spng_ctx *ctx;
	struct slab_scratch row;        /* one row as libspng gives it, when it cannot go to pix;
					 * zeros above the first row on the faster way */
	struct slab_scratch idat;       /* the IDAT chunks' data joined, when there are several */
	struct slab_scratch raw;        /* the inflated image on the faster way */
	struct libdeflate_decompressor *inflater;  /* made at the first PNG it decodes */
	int fast;                       /* FAST_* */
};

/* Whether an allocation of libspng's (zlib's included) failed in this thread's current
 * decode: libspng reports some as what they broke (zlib allocates its window inside inflate,
 * which libspng then calls an IDAT stream error), and out of memory must not pass for a
 * corrupt file. Its allocators take no context, hence a thread's flag. */
static _Thread_local int alloc_failed;

static void *png_malloc(size_t n)
{
	void *p = malloc(n);

	alloc_failed |= !p;
	return p;
}

static void *png_realloc(void *q, size_t n)
{
	void *p = realloc(q, n);

	alloc_failed |= !p && n;
	return p;
}

static void *png_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	alloc_failed |= !p;
	return p;
}

static int probe(const unsigned char *p, size_t len)
{
	return len >= sizeof(signature) && memcmp(p, signature, sizeof(signature)) == 0;
}

static int cut_short(const unsigned char *p, size_t len)
{
	return len < sizeof(signature) && memcmp(p, signature, len) == 0;
}

static void *state_new(void)
{
	struct pdec *s = calloc(1, sizeof(struct pdec));
	const char *env = getenv("SLAB_PNG_LIBDEFLATE");

	if (s)
		s->fast = env && strcmp(env, "0") == 0 ? FAST_OFF :
			  env && strcmp(env, "require") == 0 ? FAST_REQUIRE : FAST_ON;
	return s;
}

static void end(struct pdec *s)
{
	spng_ctx_free(s->ctx);
	s->ctx = NULL;
	slab_scratch_trim(&s->row);
	slab_scratch_trim(&s->idat);
	slab_scratch_trim(&s->raw);
}

static void state_free(void *st)
{
	struct pdec *s = st;

	if (!s)
		return;
	spng_ctx_free(s->ctx);
	slab_scratch_free(&s->row);
	slab_scratch_free(&s->idat);
	slab_scratch_free(&s->raw);
	if (s->inflater)
		libdeflate_free_decompressor(s->inflater);
	free(s);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The chunks after the signature walked by their lengths, to IEND: 1 when its 12 bytes are
 * all there, 0 when the file ends first (libspng reads a file cut inside IEND, its checksum
 * or its type, as ended). *empty_exif (NULL: not asked) set when an eXIf chunk of no bytes
 * comes before: libspng counts it against the chunk limits (adding 0 bytes to them is its
 * error) and says they were reached. */
static int walk_chunks(const unsigned char *data, size_t len, int *empty_exif)
{
	for (size_t at = sizeof(signature); at <= len && len - at >= 12;) {
		uint32_t n = be32(data + at);

		if (memcmp(data + at + 4, "IEND", 4) == 0)
			return 1;
		if (n == 0 && empty_exif && memcmp(data + at + 4, "eXIf", 4) == 0)
			*empty_exif = 1;
		if (n > len - at - 12)
			return 0;
		at += 12 + (size_t)n;
	}
	return 0;
}

static int empty_exif(const unsigned char *data, size_t len)
{
	int empty = 0;

	walk_chunks(data, len, &empty);
	return empty;
}

/* libspng's error rc into err (SPNG_EMEM, or any failed allocation: out of memory), the
 * context ended; ih: the header when it was read, else NULL. Over the side limits set from
 * the pixel limit: the pixel limit's own text, with the sides libspng read (it had checked
 * the signature and IHDR's place, and found both sides valid, before it compared them). */
static int spng_failed(struct pdec *s, int rc, const struct spng_ihdr *ih,
		       const struct slab_image_limits *lim, const unsigned char *data, size_t len,
		       struct slab_err *err)
{
	int ret;

	end(s);
	if ((rc == SPNG_EUSER_WIDTH || rc == SPNG_EUSER_HEIGHT) && len >= 24 &&
	    (ret = slab_image_over_pixels("PNG", be32(data + 16), be32(data + 20), lim, err)) < 0)
		return ret;
	if (alloc_failed)
		rc = SPNG_EMEM;
	if (rc == SPNG_EMEM && ih)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a %ux%u PNG",
				 ih->width, ih->height);
	if (rc == SPNG_EMEM)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a PNG");
	if (rc == SPNG_ECHUNK_LIMITS && empty_exif(data, len))
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt PNG: an empty eXIf chunk "
				 "(it holds Exif data, 4 bytes or more)");
	if (rc == SPNG_ECHUNK_LIMITS)
		return slab_fail(err, SLAB_ERR_LIMIT, NULL, "PNG metadata over the limit of %u MiB "
				 "a chunk, %u MiB in all: %s", CHUNK_MAX >> 20, CACHE_MAX >> 20,
				 spng_strerror(rc));
	return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "corrupt PNG: %s", spng_strerror(rc));
}

/* A context on data with the limits set, and the header read: 0 and *ih, or the error (no
 * context left). Nothing the size of the image is allocated before the pixel check. */
static int start(struct pdec *s, const struct slab_image_limits *lim, const unsigned char *data,
		 size_t len, struct spng_ihdr *ih, struct slab_err *err)
{
	uint32_t side = lim->max_pixels < INT32_MAX ? (uint32_t)lim->max_pixels : INT32_MAX;
	struct spng_alloc alloc = { png_malloc, png_realloc, png_calloc, free };
	int rc;

	spng_ctx_free(s->ctx);
	alloc_failed = 0;
	if (!(s->ctx = spng_ctx_new2(&alloc, 0)))
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory making a PNG decoder");
	if ((rc = spng_set_image_limits(s->ctx, side, side)) != 0 ||
	    (rc = spng_set_chunk_limits(s->ctx, CHUNK_MAX, CACHE_MAX)) != 0 ||
	    (rc = spng_set_png_buffer(s->ctx, data, len)) != 0 ||
	    (rc = spng_get_ihdr(s->ctx, ih)) != 0)
		return spng_failed(s, rc, NULL, lim, data, len, err);
	if ((rc = slab_image_over_pixels("PNG", ih->width, ih->height, lim, err)) < 0)
		end(s);
	return rc;
}

static int size(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		size_t len, uint32_t *w, uint32_t *h, struct slab_err *err)
{
	struct pdec *s = st;
	struct spng_ihdr ih;
	int ret = start(s, lim, data, len, &ih, err);

	if (ret < 0)
		return ret;
	*w = ih.width;
	*h = ih.height;
	end(s);
	return 0;
}

/* A palette shorter than its bit depth allows, filled up as PIL fills it: entry i grey i.
 * An index past the PNG's palette (which the PNG specification calls an error) then comes
 * out as PIL gives it, where libspng would give black. */
static int fill_palette(spng_ctx *ctx, const struct spng_ihdr *ih)
{
	struct spng_plte pl;
	uint32_t n = 1u << ih->bit_depth;
	int rc;

	if (ih->color_type != SPNG_COLOR_TYPE_INDEXED)
		return 0;
	if ((rc = spng_get_plte(ctx, &pl)) != 0 || pl.n_entries >= n)
		return rc;
	for (uint32_t i = pl.n_entries; i < n; i++) {
		pl.entries[i].red = pl.entries[i].green = pl.entries[i].blue = (uint8_t)i;
		pl.entries[i].alpha = 255;
	}
	pl.n_entries = n;
	return spng_set_plte(ctx, &pl);
}

/* 16-bit samples to 8 bits, rounded: (v * 255 + 32767) / 65535. PIL instead takes the high
 * byte of 16-bit RGB, RGBA and grey + alpha (v >> 8, at most 1 less), and clips 16-bit grey
 * (mode I) at 255, which turns all but the darkest greys white. */
static unsigned char to8(uint16_t v)
{
	return (unsigned char)(((uint32_t)v * 255u + 32767u) / 65535u);
}

/* n RGBA16 pixels (host order) at src to RGBA8 at dst; dst may be src (forward in place). */
static void reduce16(unsigned char *dst, const unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t v[4];

		memcpy(v, src + 8 * i, sizeof(v));
		for (int c = 0; c < 4; c++)
			dst[4 * i + c] = to8(v[c]);
	}
}

/* Columns [x0, x0 + n) of a row of palette indices packed at `depth` bits (1, 2, 4 or 8, the
 * first pixel in the high bits, as PNG stores them) to one byte each at dst. */
static void unpack(unsigned char *dst, const unsigned char *src, uint32_t x0, uint32_t n,
		   int depth)
{
	unsigned mask = (1u << depth) - 1;

	if (depth == 8) {
		memcpy(dst, src + x0, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		size_t bit = (size_t)(x0 + i) * (unsigned)depth;

		dst[i] = (unsigned char)(src[bit / 8] >> (8 - depth - bit % 8) & mask);
	}
}

/* Adam7 spreads every row over the whole stream: the whole image, in pix; the box stays in
 * the image's coordinates. idx: palette indices, through s->row (packed as stored) into one
 * byte a pixel. 0, or libspng's rc (SPNG_EMEM for pix). */
static int decode_whole(struct pdec *s, const struct spng_ihdr *ih, int fmt, size_t bpp,
			int idx, struct slab_scratch *pix, struct slab_image_region *r,
			struct slab_image_stats *st)
{
	uint64_t n = (uint64_t)ih->width * ih->height;
	size_t len, rowlen = ((size_t)ih->width * ih->bit_depth + 7) / 8;
	int rc;

	if (idx) {
		if ((rc = spng_decoded_image_size(s->ctx, fmt, &len)) != 0)
			return rc;
		if ((size_t)n != n || slab_scratch_reserve(pix, (size_t)n) < 0 ||
		    slab_scratch_reserve(&s->row, len) < 0)
			return SPNG_EMEM;
		/* libspng deinterlaces samples under 8 bits by OR-ing their bits into place:
		 * the buffer must start zeroed. */
		memset(s->row.p, 0, len);
		if ((rc = spng_decode_image(s->ctx, s->row.p, len, fmt, 0)) != 0)
			return rc;
		for (uint32_t y = 0; y < ih->height; y++)
			unpack((unsigned char *)pix->p + (size_t)y * ih->width,
			       (const unsigned char *)s->row.p + (size_t)y * rowlen, 0, ih->width,
			       ih->bit_depth);
		r->pixel = 1;
	} else {
		if (n > SIZE_MAX / bpp || slab_scratch_reserve(pix, (size_t)n * bpp) < 0)
			return SPNG_EMEM;
		if ((rc = spng_decode_image(s->ctx, pix->p, (size_t)n * bpp, fmt,
					    SPNG_DECODE_TRNS)) != 0)
			return rc;
		if (bpp == 8)
			reduce16(pix->p, pix->p, (size_t)n);
	}
	r->px = pix->p;
	r->bw = ih->width;
	r->bh = ih->height;
	st->region = 0;
	st->decoded_w = ih->width;
	st->decoded_h = ih->height;
	return spng_decode_chunks(s->ctx);
}

/* The region and stats of a decode of rows [0, iy1) whose rows [iy0, iy1) and columns
 * [ix0, ix1) are in pix (one byte a pixel with idx, else 4); r's box moved to pix's
 * coordinates. */
static void rows_region(const struct spng_ihdr *ih, int idx, uint32_t ix0, uint32_t ix1,
			uint32_t iy0, uint32_t iy1, struct slab_scratch *pix,
			struct slab_image_region *r, struct slab_image_stats *st)
{
	r->pixel = idx ? 1 : 4;
	r->px = pix->p;
	r->bw = ix1 - ix0;
	r->bh = iy1 - iy0;
	r->x0 -= ix0;
	r->x1 -= ix0;
	r->y0 -= iy0;
	r->y1 -= iy0;
	st->region = iy1 < ih->height;
	st->decoded_w = ih->width;
	st->decoded_h = iy1;
}

/* Row by row, rows [0, iy1) and no further, keeping rows [iy0, iy1) and columns [ix0, ix1)
 * in pix (idx: palette indices, one byte a pixel). An 8-bit row that is kept whole goes
 * straight to its place in pix (a row before the crop to the first one, which its own row
 * overwrites later); any other through s->row. 0, or libspng's rc (SPNG_EMEM for the
 * buffers). */
static int decode_rows(struct pdec *s, const struct spng_ihdr *ih, int fmt, size_t bpp,
		       int idx, uint32_t ix0, uint32_t ix1, uint32_t iy0, uint32_t iy1,
		       struct slab_scratch *pix, struct slab_image_region *r,
		       struct slab_image_stats *st)
{
	uint32_t w = ih->width, bw = ix1 - ix0, bh = iy1 - iy0;
	size_t stride = (size_t)bw * (idx ? 1 : 4);
	size_t rowlen = idx ? ((size_t)w * ih->bit_depth + 7) / 8 : (size_t)w * bpp;
	int direct = (idx ? ih->bit_depth == 8 : bpp == 4) && bw == w, rc;

	if ((uint64_t)stride * bh > SIZE_MAX || slab_scratch_reserve(pix, stride * bh) < 0 ||
	    (!direct && slab_scratch_reserve(&s->row, rowlen) < 0))
		return SPNG_EMEM;
	rc = spng_decode_image(s->ctx, NULL, 0, fmt,
			       (idx ? 0 : SPNG_DECODE_TRNS) | SPNG_DECODE_PROGRESSIVE);
	if (rc != 0)
		return rc;
	for (uint32_t y = 0; y < iy1; y++) {
		unsigned char *to = (unsigned char *)pix->p + (y > iy0 ? y - iy0 : 0) * stride;
		unsigned char *got = direct ? to : s->row.p;

		rc = spng_decode_row(s->ctx, got, rowlen);
		if (rc != 0 && !(rc == SPNG_EOI && y + 1 == ih->height))
			return rc;
		if (direct || y < iy0)
			continue;
		if (idx)
			unpack(to, got, ix0, bw, ih->bit_depth);
		else if (bpp == 8)
			reduce16(to, got + (size_t)ix0 * 8, bw);
		else
			memcpy(to, got + (size_t)ix0 * 4, stride);
	}
	/* libspng makes whole rows, every one up to the crop's last. */
	rows_region(ih, idx, ix0, ix1, iy0, iy1, pix, r, st);
	/* At the end of the image, on to IEND: the last IDAT's CRC (and any later chunk's) is
	 * checked only there. Short of it, the rest is neither read nor checked. */
	return iy1 == ih->height ? spng_decode_chunks(s->ctx) : 0;
}

/* ---- The faster way: libdeflate, and the rows unfiltered here ---------------------------- */

/* The IDAT stream of a file whose chunks before it libspng has read and checked: the IDAT
 * chunks one after the other, each with its checksum right, then IEND, empty and with its
 * checksum right, ending the file. NULL and the stream in *z, *zlen (in the file when one
 * chunk holds it, else joined in s->idat), or why the faster way is not taken. */
static const char *idat_stream(struct pdec *s, const unsigned char *data, size_t len,
			       const unsigned char **z, size_t *zlen)
{
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D',
						0xae, 0x42, 0x60, 0x82 };
	size_t at = sizeof(signature), first = 0, n = 0, total = 0;

	for (;;) {
		const unsigned char *type = data + at + 4;
		uint32_t clen;

		if (len - at < 12)
			return "the file ends inside a chunk";
		clen = be32(data + at);
		if (clen > INT32_MAX || clen > len - at - 12)
			return "a chunk longer than the file";
		if (memcmp(type, "IDAT", 4) == 0) {
			if (libdeflate_crc32(0, type, (size_t)clen + 4) != be32(type + 4 + clen))
				return "an IDAT chunk's checksum";
			first = n++ ? first : at;
			total += clen;
		} else if (n) {
			if (len - at != sizeof(iend) || memcmp(data + at, iend, sizeof(iend)) != 0)
				return "more than IEND after the image data";
			break;
		}
		at += (size_t)clen + 12;
	}
	if (n == 1) {
		*z = data + first + 8;
		*zlen = total;
		return NULL;
	}
	if (slab_scratch_reserve(&s->idat, total) < 0)
		return "out of memory";
	*zlen = 0;
	for (at = first; *zlen < total; at += (size_t)be32(data + at) + 12) {
		memcpy((unsigned char *)s->idat.p + *zlen, data + at + 8, be32(data + at));
		*zlen += be32(data + at);
	}
	*z = s->idat.p;
	return NULL;
}

/* The Paeth predictor of PNG's filter type 4, from left a, above b and above left c. */
static inline unsigned paeth(unsigned a, unsigned b, unsigned c)
{
	int pa = abs((int)b - (int)c), pb = abs((int)a - (int)c), pc = abs((int)(a + b) - 2 * (int)c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo filter type f on a row of n bytes at cur, whose row above is prev (zeros above the
 * first row), bpp bytes a pixel: 0, or -1 for a type PNG does not have. Inlined with bpp a
 * constant, so that each loop is compiled for its pixel size. */
static inline int unfilter(unsigned f, unsigned char *restrict cur,
			   const unsigned char *restrict prev, size_t n, size_t bpp)
{
	size_t i;

	switch (f) {
	case 0:
		return 0;
	case 1:
		for (i = bpp; i < n; i++)
			cur[i] = (unsigned char)(cur[i] + cur[i - bpp]);
		return 0;
	case 2:
		for (i = 0; i < n; i++)
			cur[i] = (unsigned char)(cur[i] + prev[i]);
		return 0;
	case 3:
		for (i = 0; i < bpp; i++)
			cur[i] = (unsigned char)(cur[i] + (prev[i] >> 1));
		for (; i < n; i++)
			cur[i] = (unsigned char)(cur[i] + ((cur[i - bpp] + prev[i]) >> 1));
		return 0;
	case 4:
		for (i = 0; i < bpp; i++)
			cur[i] = (unsigned char)(cur[i] + prev[i]);
		for (; i < n; i++)
			cur[i] = (unsigned char)(cur[i] + paeth(cur[i - bpp], prev[i], prev[i - bpp]));
		return 0;
	}
	return -1;
}

/* Rows [0, rows) of the inflated image (a filter type byte, then n bytes, each row),
 * unfiltered in place: 0, or -1 at a filter type PNG does not have. */
static int unfilter_rows(unsigned char *raw, const unsigned char *zeros, uint32_t rows,
			 size_t n, size_t bpp)
{
	const unsigned char *prev = zeros;
	int rc = 0;

	for (uint32_t y = 0; y < rows && rc == 0; y++) {
		unsigned char *row = raw + (size_t)y * (n + 1);

		switch (bpp) {
		case 1: rc = unfilter(row[0], row + 1, prev, n, 1); break;
		case 2: rc = unfilter(row[0], row + 1, prev, n, 2); break;
		case 3: rc = unfilter(row[0], row + 1, prev, n, 3); break;
		default: rc = unfilter(row[0], row + 1, prev, n, 4); break;
		}
		prev = row + 1;
	}
	return rc;
}

/* n pixels of an 8-bit row of colour type ctype at src to 4 bytes each at dst, as libspng's
 * RGBA8 gives them (grey repeated, alpha 255 where there is none; pal: the palette, alpha
 * 255: no tRNS comes this way). One loop a colour type, so that each is compiled (and
 * vectorised) for its own. */
static void to_rgba(unsigned char *restrict dst, const unsigned char *restrict src, uint32_t n,
		    int ctype, const struct spng_plte *pal)
{
	uint32_t i;

	switch (ctype) {
	case SPNG_COLOR_TYPE_GRAYSCALE:
		for (i = 0; i < n; i++, dst += 4) {
			dst[0] = dst[1] = dst[2] = src[i];
			dst[3] = 255;
		}
		break;
	case SPNG_COLOR_TYPE_TRUECOLOR:
		for (i = 0; i < n; i++, dst += 4, src += 3) {
			dst[0] = src[0];
			dst[1] = src[1];
			dst[2] = src[2];
			dst[3] = 255;
		}
		break;
	case SPNG_COLOR_TYPE_INDEXED:
		for (i = 0; i < n; i++, dst += 4) {
			dst[0] = pal->entries[src[i]].red;
			dst[1] = pal->entries[src[i]].green;
			dst[2] = pal->entries[src[i]].blue;
			dst[3] = 255;
		}
		break;
	case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
		for (i = 0; i < n; i++, dst += 4, src += 2) {
			dst[0] = dst[1] = dst[2] = src[0];
			dst[3] = src[1];
		}
		break;
	default:
		memcpy(dst, src, (size_t)n * 4);
		break;
	}
}

/* What decode_rows() does, the faster way: 0; libspng's rc where it refused a chunk before
 * the image data (its context is then of no more use); or NOT_TAKEN when the way is not
 * taken, with the reason in *why, the image then going down libspng's way with nothing of
 * this one kept (out of memory is such a reason too, libspng's way needing less). The whole stream is
 * inflated (libdeflate cannot stop short of its end), rows are unfiltered up to the crop's
 * last. */
static int decode_fast(struct pdec *s, const struct spng_ihdr *ih, const unsigned char *data,
		       size_t len, int idx, uint32_t ix0, uint32_t ix1, uint32_t iy0, uint32_t iy1,
		       struct slab_scratch *pix, struct slab_image_region *r,
		       struct slab_image_stats *st, const char **why)
{
	static const unsigned char channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
	uint32_t w = ih->width, bw = ix1 - ix0, bh = iy1 - iy0;
	size_t bpp = channels[ih->color_type % 7], n = (size_t)w * bpp, zlen, used;
	size_t stride = (size_t)bw * (idx ? 1 : 4);
	struct spng_plte pal;
	struct spng_trns trns;
	const unsigned char *z;
	unsigned char *raw;
	uint64_t whole = ((uint64_t)w * bpp + 1) * ih->height;
	int rc;

	*why = ih->interlace_method ? "interlaced" : ih->bit_depth != 8 ? "not 8 bits a sample" :
	       whole > WHOLE_MAX ? "over the size it holds whole" : NULL;
	if (*why)
		return NOT_TAKEN;
	/* Reads and checks every chunk before the image data, as libspng's way would. */
	if ((rc = spng_get_trns(s->ctx, &trns)) != SPNG_ECHUNKAVAIL) {
		*why = "tRNS";
		return rc == 0 ? NOT_TAKEN : rc;
	}
	if (ih->color_type == SPNG_COLOR_TYPE_INDEXED && (rc = spng_get_plte(s->ctx, &pal)) != 0) {
		*why = "no palette";
		return rc == SPNG_ECHUNKAVAIL ? NOT_TAKEN : rc;
	}
	if (!s->inflater && !(s->inflater = libdeflate_alloc_decompressor())) {
		*why = "out of memory";
		return NOT_TAKEN;
	}
	if ((*why = idat_stream(s, data, len, &z, &zlen)))
		return NOT_TAKEN;
	if (slab_scratch_reserve(&s->raw, (size_t)whole) < 0 ||
	    slab_scratch_reserve(&s->row, n) < 0 || slab_scratch_reserve(pix, stride * bh) < 0) {
		*why = "out of memory";
		return NOT_TAKEN;
	}
	raw = s->raw.p;
	if (libdeflate_zlib_decompress_ex(s->inflater, z, zlen, raw, (size_t)whole, &used,
					  NULL) != LIBDEFLATE_SUCCESS || used != zlen) {
		*why = "the image data does not inflate to the image";
		return NOT_TAKEN;
	}
	memset(s->row.p, 0, n);
	if (unfilter_rows(raw, s->row.p, iy1, n, bpp) < 0) {
		*why = "a filter type PNG does not have";
		return NOT_TAKEN;
	}
	for (uint32_t y = iy0; y < iy1; y++) {
		const unsigned char *src = raw + (size_t)y * (n + 1) + 1;
		unsigned char *to = (unsigned char *)pix->p + (size_t)(y - iy0) * stride;

		if (idx)
			memcpy(to, src + ix0, bw);
		else
			to_rgba(to, src + (size_t)ix0 * bpp, bw, ih->color_type, &pal);
	}
	rows_region(ih, idx, ix0, ix1, iy0, iy1, pix, r, st);
	return 0;
}

/*
 * Output: 4 bytes a pixel, R G B as PIL's convert("RGB") makes them and the pixel's alpha
 * (tRNS applied; convert("RGB") drops it, so does the resize unless the spec keeps or
 * composites it). libspng's RGBA8 widens 1, 2 and 4-bit grey by repeating the bits, as PIL
 * does; gamma (gAMA), sBIT and iCCP are left alone, as PIL leaves them. 16-bit samples:
 * to8(). A palette PNG with spec->channels 1: its indices, one byte a pixel, as numpy.array()
 * of PIL's mode "P" image gives them (a segmentation mask's labels; tRNS and the palette's
 * colours play no part, an index past the palette is itself).
 */
static int decode(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		  size_t len, const struct slab_image_spec *spec, const struct slab_image_params *p,
		  struct slab_scratch *pix, struct slab_image_region *reg,
		  struct slab_image_stats *stats, struct slab_err *err)
{
	struct pdec *s = st;
	struct spng_ihdr ih;
	uint32_t ix0, ix1, iy0, iy1;
	int fmt, idx, rc, ret;
	size_t bpp;

	if ((ret = start(s, lim, data, len, &ih, err)) < 0)
		return ret;
	if ((ret = slab_image_crop_check(p, ih.width, ih.height, err)) < 0) {
		end(s);
		return ret;
	}
	slab_image_box(p, 1, ih.width, ih.height, spec->exact, reg, &ix0, &ix1, &iy0, &iy1);
	idx = ih.color_type == SPNG_COLOR_TYPE_INDEXED && spec->channels == 1;
	fmt = idx ? SPNG_FMT_PNG : ih.bit_depth == 16 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
	bpp = ih.bit_depth == 16 ? 8 : 4;
	stats->scale_denom = 1;
	if ((rc = idx ? 0 : fill_palette(s->ctx, &ih)) == 0 && s->fast != FAST_OFF) {
		const char *why;

		rc = decode_fast(s, &ih, data, len, idx, ix0, ix1, iy0, iy1, pix, reg, stats, &why);
		if (rc == 0) {
			end(s);
			return 0;
		}
		if (rc == NOT_TAKEN && s->fast == FAST_REQUIRE) {
			end(s);
			return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "PNG not inflated by "
					 "libdeflate: %s", why);
		}
		rc = rc == NOT_TAKEN ? 0 : rc;
	}
	if (rc == 0)
		rc = ih.interlace_method ? decode_whole(s, &ih, fmt, bpp, idx, pix, reg, stats) :
		     decode_rows(s, &ih, fmt, bpp, idx, ix0, ix1, iy0, iy1, pix, reg, stats);
	/* Read on to IEND (a whole image, or down to its last row): all of IEND there too. */
	if (rc == 0 && (ih.interlace_method || iy1 == ih.height) && !walk_chunks(data, len, NULL))
		rc = SPNG_EOF;
	if (rc != 0)
		return spng_failed(s, rc, &ih, lim, data, len, err);
	end(s);
	return 0;
}

const struct slab_image_format slab_image_png = {
	.name = "PNG",
	.probe = probe,
	.cut_short = cut_short,
	.state_new = state_new,
	.state_free = state_free,
	.size = size,
	.decode = decode,
};
