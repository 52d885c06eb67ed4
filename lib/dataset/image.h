/* image.h: the image pipeline for training samples: one JPEG in, a crop of it resized to a
 * fixed H x W out as uint8 RGB, HWC or CHW, decoding no more of the JPEG than the crop needs
 * (libjpeg-turbo's libjpeg API: DCT-domain scaling, column cropping, row skipping).
 *
 * Thread contract: slab_image_params() is a pure function. A decoder is one thread's: make one
 * per worker thread; it keeps its scratch buffers between images. Nothing is global. */
#ifndef SLAB_IMAGE_H
#define SLAB_IMAGE_H

#include <stddef.h>
#include <stdint.h>

enum slab_image_crop {
	SLAB_IMAGE_CROP_NONE = 0,       /* resize the whole image (aspect not kept) */
	SLAB_IMAGE_CROP_CENTER = 1,     /* the largest centred region with the output's aspect */
	SLAB_IMAGE_CROP_RANDOM_RESIZED = 2, /* torchvision's RandomResizedCrop.get_params */
};

/* What to make of each image. slab_image_spec_init() fills torchvision's defaults. */
struct slab_image_spec {
	uint32_t out_w, out_h;          /* output size, each 1 .. 65535 */
	int crop;                       /* enum slab_image_crop */
	double scale_min, scale_max;    /* random-resized: area fraction, default 0.08 .. 1 */
	double ratio_min, ratio_max;    /* random-resized: w/h, default 3/4 .. 4/3 */
	int flip;                       /* nonzero: horizontal flip with probability 1/2 */
	int chw;                        /* nonzero: planar output (3 x H x W), else H x W x 3 */
	int exact;                      /* nonzero: decode the whole image at full size, then
					 * crop (the reference the faster paths are held to) */
};

/* One image's crop rectangle, in source pixels, and whether it is flipped. */
struct slab_image_params {
	uint32_t x, y, w, h;
	int flip;
	int fallback;                   /* random-resized: the 10 attempts failed, centre crop */
};

/* What one decode did: the DCT scaling taken (1, 2, 4 or 8: the image was decoded at
 * 1/scale_denom size) and whether only part of it was decoded. */
struct slab_image_stats {
	unsigned scale_denom;
	int region;                     /* columns cropped or rows skipped or the tail unread */
	uint32_t decoded_w, decoded_h;  /* pixels actually produced by libjpeg */
};

struct slab_image_decoder;

/* Fill *spec: out_w x out_h, centre crop, scale 0.08 .. 1, ratio 3/4 .. 4/3, no flip, HWC. */
void slab_image_spec_init(struct slab_image_spec *spec, uint32_t out_w, uint32_t out_h);

/* The crop and flip of sample `index` of epoch `epoch` under `seed`, for a src_w x src_h
 * image. The result depends on these arguments only (never on the thread or on earlier
 * calls). 0, or SLAB_ERR_INVAL (an empty image or output, bad ranges). */
int slab_image_params(const struct slab_image_spec *spec, uint32_t src_w, uint32_t src_h,
		      uint64_t seed, uint64_t epoch, uint64_t index, struct slab_image_params *p);

/* A decoder, or NULL when out of memory. free accepts NULL. */
struct slab_image_decoder *slab_image_decoder_new(void);
void slab_image_decoder_free(struct slab_image_decoder *d);

/* Text of the decoder's last failure. */
const char *slab_image_error(const struct slab_image_decoder *d);

/* A JPEG's width and height from its header. 0, SLAB_ERR_CORRUPT, SLAB_ERR_NOMEM. */
int slab_image_size(struct slab_image_decoder *d, const void *jpeg, size_t len,
		    uint32_t *w, uint32_t *h);

/* Decode jpeg, crop p's rectangle, flip if p says so, resize to spec's out_w x out_h with an
 * antialiased bilinear filter (PIL's BILINEAR resample), and write exactly out_h * out_w * 3
 * bytes to out. p must have been made for this image's size (a rectangle outside the image is
 * SLAB_ERR_INVAL). Grey, YCbCr, RGB, CMYK and YCCK JPEGs all come out RGB. stats may be NULL.
 * 0, or SLAB_ERR_CORRUPT (corrupt, truncated or unsupported JPEG: libjpeg's warnings count
 * too; slab_image_error() has libjpeg's message), SLAB_ERR_NOMEM, SLAB_ERR_INVAL. The decoder
 * stays usable after any failure. */
int slab_image_decode(struct slab_image_decoder *d, const void *jpeg, size_t len,
		      const struct slab_image_spec *spec, const struct slab_image_params *p,
		      void *out, struct slab_image_stats *stats);

#endif
