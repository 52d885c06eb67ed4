/* jpegrst.h: restart markers in sequential JPEGs. pack's lossless rewrite that adds them (the
 * DCT coefficients copied through libjpeg, as jpegtran -restart does), and what the image
 * pipeline needs to decode a crop from the marker before it: a JPEG's layout read from its
 * header, and a smaller JPEG made of the crop's MCU rows (and, when the restart intervals tile
 * each row, only the intervals that hold its columns) from the original's header and
 * entropy-coded segments, its markers renumbered from RST0. */
#ifndef SLAB_JPEGRST_H
#define SLAB_JPEGRST_H

#include <stddef.h>
#include <stdint.h>

#include "scratch.h"

/* ---- Decoding a part (image_jpeg.c) ----------------------------------------------------- */

/* What the header says, for a JPEG a part can be made of. */
struct slab_jpegrst_layout {
	uint32_t width, height;         /* of the image (SOF) */
	size_t sof;                     /* offset of SOF's height field; its width follows */
	size_t scan;                    /* first byte of the entropy-coded data (after SOS) */
	unsigned interval;              /* MCUs between restart markers (DRI), > 0 */
	unsigned mcu_w, mcu_h;          /* an MCU's size in pixels at full scale */
	uint32_t mcus_per_row, mcu_rows;
	uint32_t row_step;              /* the MCU rows that start an interval: multiples of it */
	uint32_t segs_per_row;          /* intervals in an MCU row when they tile every row, else 0 */
};

/*
 * 1 and *lay when a part can be made of the JPEG p: sequential (SOF0, SOF1), Huffman-coded,
 * 8-bit, one scan holding every component, a nonzero restart interval (a single component's
 * MCU is one block, however it is sampled). 0 and *why (static text: "progressive", "no
 * restart markers", ...) for any other JPEG, and for bytes whose header this reading cannot
 * follow. Reads the header only, never the entropy-coded data.
 */
int slab_jpegrst_layout(const unsigned char *p, size_t len, struct slab_jpegrst_layout *lay,
			const char **why);

/* A part: MCU rows row0 .. row1 and, of each, the restart intervals seg0 .. seg1 (0 .. 0 and
 * every MCU of each row when the intervals do not tile the rows). x and y: where the part
 * starts, and w x h its size, in pixels of the image decoded at 1/denom. */
struct slab_jpegrst_part {
	uint32_t row0, row1, seg0, seg1;
	uint32_t x, y, w, h;
};

/*
 * The part of a JPEG of layout lay decoded at 1/denom (1, 2, 4 or 8; an ow x oh image) that
 * holds output rows [iy0, iy1) and columns [ix0, ix1) (non-empty) such that libjpeg, asked
 * for the same rows and columns of the part (jpeg_skip_scanlines, jpeg_crop_scanline), gives
 * the same pixels as from the whole image: the MCU rows of the output rows just above and
 * below those asked for are kept for the upsampling's context (the part's top row,
 * upsampled against a copy of itself, is never one asked for, nor its bottom row unless it
 * is the image's); the columns start at or before where jpeg_crop_scanline would start them,
 * and the part is never exactly the columns asked for (libjpeg would not crop it, and its
 * upsampling can depend on that) unless the image is.
 * 1 and *part, or 0 when the part would be the whole image.
 */
int slab_jpegrst_plan(const struct slab_jpegrst_layout *lay, unsigned denom, uint32_t ow,
		      uint32_t oh, uint32_t ix0, uint32_t ix1, uint32_t iy0, uint32_t iy1,
		      struct slab_jpegrst_part *part);

/*
 * The JPEG of part into out (grown as needed): the bytes of p's header up to its scan, with
 * SOF's height and width those of the part, then the part's entropy-coded segments with
 * restart markers RST0, RST1, ... between them, then EOI. 0 and *outlen; SLAB_ERR_NOMEM; or
 * 1 and *why when the entropy-coded data does not have the restart markers in order where
 * the layout says (a corrupt JPEG: the caller decodes the whole instead). Reads the
 * entropy-coded data up to the part's last segment, copies only the part's segments.
 */
int slab_jpegrst_part(const unsigned char *p, size_t len, const struct slab_jpegrst_layout *lay,
		      const struct slab_jpegrst_part *part, struct slab_scratch *out,
		      size_t *outlen, const char **why);

/* ---- Adding restart markers (pack) ------------------------------------------------------ */

struct slab_jpegrst;

/* A context for rewrites (libjpeg's decompressor and compressor, kept between calls), or NULL
 * when out of memory; an image of more than max_pixels (UINT64_MAX: none) is never read. One
 * per thread. free accepts NULL. */
struct slab_jpegrst *slab_jpegrst_new(uint64_t max_pixels);
void slab_jpegrst_free(struct slab_jpegrst *r);

/* Why the last call kept the JPEG as it was, or why it failed. */
const char *slab_jpegrst_error(const struct slab_jpegrst *r);

/* The restart interval, in MCUs, for an image of mcus_per_row MCUs a row and at most `most`
 * MCUs an interval: the largest divisor of mcus_per_row not over most, so that the intervals
 * tile every MCU row and a crop's columns can be decoded alone; one a row with most 0. */
unsigned slab_jpegrst_interval(uint32_t mcus_per_row, unsigned most);

/*
 * The JPEG buf with restart markers every slab_jpegrst_interval(its MCUs a row, most) MCUs:
 * its DCT coefficients, quantisation tables, sampling and markers (APPn, COM) copied as they
 * are, its Huffman tables kept where they can code the new stream (each restart sets the DC
 * prediction back to 0, which changes the DC differences) and made anew for it otherwise, so
 * that it decodes to the same pixels; checked by reading the new JPEG's coefficients back.
 * 1 with *out (malloc'd, the caller's to free) and *outlen; 0 when it is kept as it is, with
 * the reason in slab_jpegrst_error(): not sequential, Huffman-coded and 8-bit in one scan
 * (progressive, arithmetic-coded, 12-bit, ...), restart markers already at that interval, or
 * not readable in full; SLAB_ERR_NOMEM. The result depends only on the bytes and most.
 */
int slab_jpegrst_rewrite(struct slab_jpegrst *r, const void *buf, size_t len, unsigned most,
			 void **out, size_t *outlen);

#endif
