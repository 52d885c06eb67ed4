/* imgenc_webp.c: WebP re-encoding for pack --image-max-side (imgenc.h), with libwebp's
 * encoder: a lossy WebP at the quality asked for, a lossless one lossless (libwebp's default
 * effort), on the calling thread only. Still images without alpha only. */
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "imgenc.h"
#include "slab.h"

/*
 * Whether wr's bytes decode back to a w x h image, and for a lossless one to rgb exactly.
 * libwebp 1.2's lossless encoder can lose an allocation failure and return success with a
 * short, wrong stream (seen failing allocations one by one, tests/oom.bats): stored, it would
 * be a corrupt image no one is told of. 0 when they do, SLAB_ERR_NOMEM when they do not (the
 * sample is not at fault) or memory ran out here.
 */
static int decodes_back(const WebPMemoryWriter *wr, const unsigned char *rgb, uint32_t w,
			uint32_t h, int lossless, struct slab_err *err)
{
	size_t n = (size_t)w * h * 3;
	unsigned char *back = malloc(n);
	int ok;

	if (!back)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory checking a %ux%u WebP",
				 w, h);
	ok = WebPDecodeRGBInto(wr->mem, wr->size, back, n, (int)w * 3) != NULL &&
	     (!lossless || memcmp(back, rgb, n) == 0);
	free(back);
	if (!ok)
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "WebP encoding failed: libwebp's output "
				 "does not decode back to the %ux%u image (out of memory in libwebp?)",
				 w, h);
	return 0;
}

static int reencodable(const unsigned char *p, size_t len, const char **why)
{
	WebPBitstreamFeatures f;

	if (WebPGetFeatures(p, len, &f) != VP8_STATUS_OK) {
		*why = "an unreadable header";
		return 0;
	}
	if (f.has_animation) {
		*why = "animation";
		return 0;
	}
	if (f.has_alpha) {
		*why = "an alpha channel";
		return 0;
	}
	return 1;
}

static int encode(const unsigned char *data, size_t len, const unsigned char *rgb, uint32_t w,
		  uint32_t h, int quality, void **out, size_t *outlen, struct slab_err *err)
{
	WebPBitstreamFeatures f;
	WebPConfig config;
	WebPPicture pic;
	WebPMemoryWriter wr;
	int lossless, ret;

	*out = NULL;
	*outlen = 0;
	if (quality < 1 || quality > 100)
		return slab_fail(err, SLAB_ERR_INVAL, NULL, "WebP quality %d out of range 1..100",
				 quality);
	lossless = WebPGetFeatures(data, len, &f) == VP8_STATUS_OK && f.format == 2;
	if (!WebPConfigInit(&config) || !WebPPictureInit(&pic))
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "WebP encoding failed: libwebp "
				 "version mismatch");
	/* One thread, whatever libwebp would choose: the bytes must not depend on it. */
	config.thread_level = 0;
	if (lossless)
		config.lossless = 1;
	else
		config.quality = (float)quality;
	pic.use_argb = lossless;
	pic.width = (int)w;
	pic.height = (int)h;
	WebPMemoryWriterInit(&wr);
	pic.writer = WebPMemoryWrite;
	pic.custom_ptr = &wr;
	if (!WebPValidateConfig(&config)) {
		ret = slab_fail(err, SLAB_ERR_CORRUPT, NULL, "WebP encoding failed: bad configuration");
		goto out;
	}
	if (!WebPPictureImportRGB(&pic, rgb, (int)w * 3)) {
		ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory encoding a %ux%u WebP", w, h);
		goto out;
	}
	if (!WebPEncode(&config, &pic)) {
		/* The memory writer fails a write only when it cannot grow its buffer. */
		if (pic.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ||
		    pic.error_code == VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY ||
		    pic.error_code == VP8_ENC_ERROR_BAD_WRITE)
			ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory encoding a %ux%u WebP",
					w, h);
		else
			ret = slab_fail(err, SLAB_ERR_CORRUPT, NULL, "WebP encoding failed: libwebp "
					"error %d", (int)pic.error_code);
		goto out;
	}
	if ((ret = decodes_back(&wr, rgb, w, h, lossless, err)) < 0)
		goto out;
	/* Copied so the caller can free() it: libwebp's buffers belong to WebPFree(). */
	if (!(*out = malloc(wr.size ? wr.size : 1))) {
		ret = slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory for a %zu-byte WebP",
				wr.size);
		goto out;
	}
	memcpy(*out, wr.mem, wr.size);
	*outlen = wr.size;
	ret = 0;
out:
	WebPPictureFree(&pic);
	WebPMemoryWriterClear(&wr);
	return ret;
}

const struct slab_imgenc slab_imgenc_webp = {
	.name = "WebP",
	.reencodable = reencodable,
	.encode = encode,
};
