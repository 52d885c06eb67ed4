/* imgenc.h: the re-encoders behind pack --image-max-side for the formats other than JPEG
 * (JPEG has jpeg.c): 8-bit RGB pixels, as the image pipeline makes them, to a format's bytes.
 * One file per format (imgenc_png.c, imgenc_webp.c), each a table of these functions. No
 * state: every call is on its own, so any thread may call any of them at once. */
#ifndef SLAB_IMGENC_H
#define SLAB_IMGENC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct slab_imgenc {
	const char *name;               /* "PNG", as the pipeline's decoder names it */
	/*
	 * Whether the image in data can be re-encoded from the pipeline's 8-bit RGB output
	 * without losing more than the resize does: 1 when it can; 0 when it holds something
	 * the RGB output drops (alpha or transparency, 16-bit samples, grey or palette
	 * samples that a mask's labels may be, animation), with *why (static text) saying
	 * what. Reads the header only; never fails: bytes it cannot make sense of are 0, and
	 * the decoder says what is wrong with them.
	 */
	int (*reencodable)(const unsigned char *data, size_t len, const char **why);
	/*
	 * Encode w x h pixels of rgb (rows of 3 * w bytes, back to back) in the format of the
	 * original, data: lossless where the original is lossless, else at quality (1..100).
	 * 0 and *out (malloc'd: the caller frees) and *outlen; SLAB_ERR_NOMEM, or
	 * SLAB_ERR_CORRUPT when the encoder fails otherwise, with the reason in *err. The bytes
	 * depend only on the arguments (and the library's version), never on the thread.
	 */
	int (*encode)(const unsigned char *data, size_t len, const unsigned char *rgb, uint32_t w,
		      uint32_t h, int quality, void **out, size_t *outlen, struct slab_err *err);
};

extern const struct slab_imgenc slab_imgenc_png;
extern const struct slab_imgenc slab_imgenc_webp;

#endif
