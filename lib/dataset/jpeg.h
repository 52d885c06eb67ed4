/* jpeg.h: JPEG header parsing, full-decode checks and downscaling re-encode (TurboJPEG, and
 * the image pipeline's DCT-scaled decode and resize).
 * One context per thread; a context is not shared between threads. */
#ifndef SLAB_JPEG_H
#define SLAB_JPEG_H

#include <stddef.h>
#include <stdint.h>

struct slab_jpeg;

struct slab_jpeg_info {
	uint32_t width;
	uint32_t height;
	int subsamp;            /* SLAB_SAMP_* (slab.h) */
	int colorspace;         /* SLAB_CS_* */
};

/* A new context, or NULL when out of memory. */
struct slab_jpeg *slab_jpeg_new(void);
void slab_jpeg_free(struct slab_jpeg *j);

/* Text of the last failure, e.g. "not a JPEG: Not a JPEG file: starts with 0x89 0x50". */
const char *slab_jpeg_error(const struct slab_jpeg *j);

/*
 * Decompression bombs: the most pixels (width x height, from the header) and the most scans a
 * context accepts, as slab_image_decoder_limits() (slab.h): 0 takes the default
 * (SLAB_IMAGE_MAX_PIXELS, SLAB_IMAGE_MAX_SCANS), UINT64_MAX / UINT_MAX none. A new context
 * has the defaults. An image over either is refused with SLAB_ERR_LIMIT by every function
 * below, before anything is decoded: the pixels from the header, the scans by counting the
 * SOS markers as a decoder meets them (so any limit is honoured, not only TurboJPEG 2.1's
 * fixed 500 of TJFLAG_LIMITSCANS, which stays on as a second check when the limit is at most
 * 500).
 */
void slab_jpeg_limits(struct slab_jpeg *j, uint64_t max_pixels, unsigned max_scans);

/* The texts of those refusals, the same from both JPEG decoders (this one and image.c's):
 * width, height, their product and the limit; the scan limit twice; width, height and the
 * bytes libjpeg's memory manager was allowed. */
#define SLAB_JPEG_PIXELS_TEXT "JPEG of %ux%u pixels (%llu): over the limit of %llu pixels"
#define SLAB_JPEG_SCANS_TEXT "JPEG of more than %u scans: over the limit of %u scans"
#define SLAB_JPEG_MEMORY_TEXT "JPEG of %ux%u pixels: over the limit of %lld bytes of decoder memory"

/* The size an image of w x h is fitted to when its longer side exceeds max_side (>= 1): each
 * side times max_side / the longer side, rounded half up, at least 1. slab_jpeg_fit() and the
 * other formats' re-encoding (imgpack.c) take it from here, so every format fits alike. */
void slab_fit_size(uint32_t w, uint32_t h, unsigned max_side, uint32_t *tw, uint32_t *th);

/*
 * Every function below that can fail returns SLAB_ERR_NOMEM (slab.h) when memory ran out,
 * which says nothing about the JPEG, SLAB_ERR_CORRUPT when the JPEG itself is at fault,
 * SLAB_ERR_LIMIT when it is over the context's limits, or SLAB_ERR_INVAL for a bad argument;
 * slab_jpeg_error() says why.
 */

/* Parse the header only. 0 and *info filled, or a negative error. */
int slab_jpeg_header(struct slab_jpeg *j, const void *buf, size_t len, struct slab_jpeg_info *info);

/* Decode the whole image (and throw the pixels away): 0 when it decodes cleanly,
 * SLAB_ERR_CORRUPT when it is corrupt, truncated or of a kind the decoder refuses (warnings
 * count as corrupt). */
int slab_jpeg_check(struct slab_jpeg *j, const void *buf, size_t len);

/* When the longer side exceeds max_side, downscale to fit max_side (slab_fit_size()) and
 * re-encode at quality (1..100) with the input's subsampling. A grey, YCbCr or RGB JPEG goes
 * through the image pipeline (slab_image_decode()): decoded at the largest DCT scaling whose
 * output is still at least the fitted size (at full size when the fitted size has a side
 * under 16), then its bilinear resize; it comes out grey or YCbCr. A CMYK or YCCK one is decoded at a scaling that leaves twice the fitted size, then
 * area-averaged, and stays four-channel (YCCK). Returns 1 with *out (malloc'd, caller frees),
 * *outlen and *info of the new image; 0 when the image already fits (*out NULL, *info of the
 * input); a negative error.
 * The result depends only on the input bytes and parameters, never on the thread. */
int slab_jpeg_fit(struct slab_jpeg *j, const void *buf, size_t len, unsigned max_side,
		  int quality, void **out, size_t *outlen, struct slab_jpeg_info *info);

#endif
