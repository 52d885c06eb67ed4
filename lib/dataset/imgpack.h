/* imgpack.h: pack's work on image fields: find a field's format by its bytes (JPEG, PNG,
 * WebP: the image pipeline's probes; videos: the video pipeline's), record its size (and a
 * video's frames, duration, rate and codec), check it by a full decode, fit an image to a
 * longest side by re-encoding it in its own format. JPEG through jpeg.c; PNG and WebP through
 * the image pipeline (slab.h) and their encoders (imgenc.h). One context per thread. */
#ifndef SLAB_IMGPACK_H
#define SLAB_IMGPACK_H

#include <stddef.h>
#include <stdint.h>

#include "slab.h"

struct slab_imgpack;

struct slab_imgpack_options {
	uint64_t max_pixels;    /* width x height an image may declare: 0 the default
				 * (SLAB_IMAGE_MAX_PIXELS), UINT64_MAX none */
	int check;              /* decode every image in full, every frame of every video */
	unsigned max_side;      /* re-encode images whose longer side exceeds it; 0: never */
	int jpeg_quality;       /* 1..100, for re-encoded JPEGs */
	int webp_quality;       /* 1..100, for re-encoded lossy WebPs */
	int jpeg_restart;       /* give JPEGs restart markers (slab_jpegrst_rewrite()) */
	unsigned jpeg_restart_most;     /* ...at most this many MCUs apart, tiling each MCU row;
					 * 0: one interval an MCU row */
};

/* What slab_imgpack_field() found and made. */
struct slab_imgpack_result {
	unsigned flags;         /* SLAB_FIELD_JPEG, _PNG or _WEBP, with SLAB_FIELD_TRANSCODED when
				 * re-encoded, SLAB_FIELD_RESTART when given restart markers;
				 * SLAB_FIELD_VIDEO; 0: not an image or a video, or a header that
				 * cannot be read (kept as plain bytes) */
	uint32_t width, height; /* of the stored image (the new one when re-encoded), of a
				 * video's frames */
	struct slab_video_info video;   /* with SLAB_FIELD_VIDEO: slab_video_info()'s */
	unsigned subsamp, colorspace;   /* a JPEG's (SLAB_SAMP_*, SLAB_CS_*) */
	void *data;             /* with SLAB_FIELD_TRANSCODED or SLAB_FIELD_RESTART: the new
				 * bytes, malloc'd, the caller's to free; else NULL */
	size_t size;
};

/* A context with these options (copied), or NULL when out of memory. free accepts NULL. */
struct slab_imgpack *slab_imgpack_new(const struct slab_imgpack_options *o);
void slab_imgpack_free(struct slab_imgpack *ip);

/* The text of the last failure: the decoder's or the encoder's reason, naming the format
 * ("corrupt PNG: ...", "PNG of 70000x70000 pixels (...): over the limit of ... pixels"). */
const char *slab_imgpack_error(const struct slab_imgpack *ip);

/*
 * One field, name and bytes. The format comes from the bytes alone. A video (its container
 * found by slab_video_probe()) is described by slab_video_info(), and with check decoded
 * frame by frame; it is never re-encoded. Without check and
 * max_side, an image whose header cannot be read is kept as plain bytes (flags 0); one whose
 * header declares more than max_pixels is refused. With check, every image is decoded in full,
 * and a field whose name ends in an image extension (slab_imgpack_image_name()) but whose
 * bytes are no known image is refused too. With max_side, a larger image is decoded, fitted
 * (slab_fit_size()) and re-encoded in its own format: a JPEG as slab_jpeg_fit() does, a PNG
 * or a WebP through the pipeline's resize (the whole image, at full size) when its encoder
 * can keep all it holds (imgenc.h: not with alpha, ...), else it is kept as it is. With
 * jpeg_restart, a JPEG that can have them (sequential, Huffman-coded, 8-bit, one scan) is
 * given restart markers without loss (slab_jpegrst_rewrite()), after any re-encode.
 * 0 and *res; SLAB_ERR_CORRUPT or SLAB_ERR_LIMIT when the image is bad (the sample's
 * fault); SLAB_ERR_NOMEM (never the sample's fault). The result depends only on the bytes and
 * the options.
 */
int slab_imgpack_field(struct slab_imgpack *ip, const char *name, const void *data, size_t len,
		       struct slab_imgpack_result *res);

/* True when a field name's last extension (after its last dot, or the whole name) is an image
 * one: jpg, jpeg, png or webp, in any case ("seg.png", "JPG"). */
int slab_imgpack_image_name(const char *name);

#endif
