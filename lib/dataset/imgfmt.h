/* imgfmt.h: the image pipeline's one decoder interface. Each format is one file
 * (image_jpeg.c, ...) with a table of these functions, named in image.c's list of formats; the
 * pipeline (crop parameters, resize, flip, layout) and the loader never name a format. A
 * format is found by its first bytes, never by a field's name. */
#ifndef SLAB_IMGFMT_H
#define SLAB_IMGFMT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "scratch.h"
#include "slab.h"

/* The limits a decode is held to (slab_image_decoder_limits()): UINT64_MAX / UINT_MAX none. */
struct slab_image_limits {
	uint64_t max_pixels;
	unsigned max_scans;
};

/* What a format's decode leaves for the resize: bw x bh pixels of `pixel` bytes at px, rows
 * back to back, and the crop box in that buffer's coordinates (fractional where the format
 * decoded at a reduced scale). pixel is 4 (the pipeline's default: R, G, B and alpha, 255
 * where the image has none), or 1 when the format hands out the output's one channel itself
 * (a palette PNG's indices with spec->channels 1). */
struct slab_image_region {
	unsigned char *px;
	uint32_t bw, bh;
	double x0, y0, x1, y1;
	unsigned pixel;
};

/* Whether a decoder may decode at a reduced scale (JPEG's DCT scaling, libwebp's scaling):
 * not with exact (the whole image at full size), nor with the nearest resize (each output
 * pixel is one source pixel, as PIL's NEAREST picks it). */
static inline int slab_image_may_scale(const struct slab_image_spec *spec)
{
	return !spec->exact && spec->resize != SLAB_IMAGE_RESIZE_NEAREST;
}

/* Whether the output depends on alpha (RGBA kept, or composited). */
static inline int slab_image_wants_alpha(const struct slab_image_spec *spec)
{
	return spec->channels == 4 || spec->alpha == SLAB_IMAGE_ALPHA_COMPOSITE;
}

struct slab_image_format {
	const char *name;               /* "JPEG": messages say "corrupt JPEG: ..." */
	/* 1 when the bytes start as this format's files do. len may be short. */
	int (*probe)(const unsigned char *p, size_t len);
	/* 1 when the len bytes, too few for probe to say yes, are how this format's files
	 * start: a file cut short inside its signature, named as such rather than as bytes of
	 * no known format. */
	int (*cut_short)(const unsigned char *p, size_t len);
	/* The format's own decoder state, made when the pipeline first meets the format; NULL
	 * when out of memory. free accepts NULL. */
	void *(*state_new)(void);
	void (*state_free)(void *st);
	/* Width and height from the header: 0, SLAB_ERR_CORRUPT, SLAB_ERR_NOMEM, SLAB_ERR_LIMIT
	 * (over lim->max_pixels: slab_image_over_pixels()), with the reason in *err. */
	int (*size)(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		    size_t len, uint32_t *w, uint32_t *h, struct slab_err *err);
	/* Decode what crop p of spec needs (never less; less than the whole image where the
	 * format allows: a reduced scale where slab_image_may_scale(), the crop's rows and
	 * columns) into pix, described by *reg (reg->pixel is 4 on entry); stats: the scale (1/scale_denom of the full size in each direction, 1 when not
	 * a power of two), whether only part was decoded, the pixels produced. spec->exact asks
	 * for the whole image at full size. Errors as size(), and SLAB_ERR_INVAL for a crop
	 * outside the image (slab_image_crop_check()). */
	int (*decode)(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		      size_t len, const struct slab_image_spec *spec,
		      const struct slab_image_params *p, struct slab_scratch *pix,
		      struct slab_image_region *reg, struct slab_image_stats *stats,
		      struct slab_err *err);
};

/* The formats (image_jpeg.c, ...). */
extern const struct slab_image_format slab_image_jpeg;
extern const struct slab_image_format slab_image_png;
extern const struct slab_image_format slab_image_webp;

/* SLAB_ERR_LIMIT with the standard text when a w x h image of format `name` is over the
 * pixel limit, else 0. */
int slab_image_over_pixels(const char *name, uint32_t w, uint32_t h,
			   const struct slab_image_limits *lim, struct slab_err *err);

/* SLAB_ERR_INVAL when crop p does not fit a w x h image, else 0. */
int slab_image_crop_check(const struct slab_image_params *p, uint32_t w, uint32_t h,
			  struct slab_err *err);

/* The crop p of a w x h image decoded at 1/denom (an ow x oh image): the box in the scaled
 * image's coordinates into reg->x0 .. y1, and the whole pixels that hold it, [*ix0, *ix1) x
 * [*iy0, *iy1) (all of it with exact). */
void slab_image_box(const struct slab_image_params *p, unsigned denom, uint32_t ow, uint32_t oh,
		    int exact, struct slab_image_region *reg, uint32_t *ix0, uint32_t *ix1,
		    uint32_t *iy0, uint32_t *iy1);

/* What slab_image_decode() does after a format's decode, for a region made elsewhere (the
 * video pipeline's frames): the alpha and channel steps, the resize of r's crop box to the
 * spec's size, flip and layout into out (out_h x out_w x C bytes). r->px is the caller's and
 * may be changed in place; the failure's text is d's (slab_image_error()). 0,
 * SLAB_ERR_NOMEM, SLAB_ERR_INVAL (a spec the pipeline refuses). */
int slab_image_finish(struct slab_image_decoder *d, struct slab_image_region *r,
		      const struct slab_image_spec *spec, int flip, void *out);

/* 1 when the image pipeline accepts the spec (what slab_image_params() and
 * slab_image_decode() check), else 0. */
int slab_image_spec_ok(const struct slab_image_spec *spec);

/* The counter-based generator of slab_image_params() (image.c says how it works): the key of
 * (seed, epoch, index), its draw n, and a draw as a double uniform in [0, 1). The crop takes
 * draws 0 (the flip) to 40 (ten tries of four); other users take draws far from them. */
uint64_t slab_image_key(uint64_t seed, uint64_t epoch, uint64_t index);
uint64_t slab_image_draw(uint64_t key, uint64_t n);
double slab_image_unit(uint64_t x);

#endif
