/* imgenc_png.c: PNG re-encoding for pack --image-max-side (imgenc.h), with libspng's encoder:
 * 8-bit RGB, lossless. Only PNGs the pipeline's RGB output represents in full are taken. */
#include <spng.h>
#include <stdlib.h>
#include <string.h>

#include "imgenc.h"
#include "slab.h"

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * 8-bit truecolour without a tRNS chunk and without animation (APNG's acTL), from IHDR and
 * the chunks before the first IDAT (where PNG puts tRNS and acTL). Grey and palette PNGs are
 * left alone as well as alpha ones: masks are grey or palette, and their labels must never
 * be interpolated nor spread over three channels. No allocation, no CRC check: the decoder
 * has read the file already and will again.
 */
static int reencodable(const unsigned char *p, size_t len, const char **why)
{
	size_t i = 8;

	*why = "an unreadable header";
	if (len < 8 + 8 + 13 || memcmp(p, "\x89PNG\r\n\x1a\n", 8) != 0 || be32(p + 8) != 13 ||
	    memcmp(p + 12, "IHDR", 4) != 0)
		return 0;
	if (p[24] != 8 || (p[25] != 2 && p[25] != 6)) {
		*why = p[24] == 16 ? "16-bit samples" : p[25] == 3 ? "a palette" :
		       p[25] == 0 || p[25] == 4 ? "grey samples" : "an unusual layout";
		return 0;
	}
	if (p[25] == 6) {
		*why = "an alpha channel";
		return 0;
	}
	while (len - i >= 12) {
		uint32_t n = be32(p + i);
		const unsigned char *type = p + i + 4;

		if (memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0)
			return 1;
		if (memcmp(type, "tRNS", 4) == 0) {
			*why = "transparency (tRNS)";
			return 0;
		}
		if (memcmp(type, "acTL", 4) == 0) {
			*why = "animation (APNG)";
			return 0;
		}
		if (n > len - i - 12)
			break;
		i += 12 + (size_t)n;
	}
	*why = "an unreadable header";
	return 0;
}

static int encode(const unsigned char *data, size_t len, const unsigned char *rgb, uint32_t w,
		  uint32_t h, int quality, void **out, size_t *outlen, struct slab_err *err)
{
	struct spng_ihdr ihdr = {
		.width = w,
		.height = h,
		.bit_depth = 8,
		.color_type = SPNG_COLOR_TYPE_TRUECOLOR,
	};
	spng_ctx *ctx;
	void *buf;
	size_t n = 0;
	int r;

	(void)data;
	(void)len;
	(void)quality;
	*out = NULL;
	*outlen = 0;
	if (!(ctx = spng_ctx_new(SPNG_CTX_ENCODER)))
		return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory making a PNG encoder");
	if ((r = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)) == 0 &&
	    (r = spng_set_ihdr(ctx, &ihdr)) == 0)
		r = spng_encode_image(ctx, rgb, (size_t)w * h * 3, SPNG_FMT_PNG,
				      SPNG_ENCODE_FINALIZE);
	/* The buffer is the caller's once taken (spng_ctx_free() leaves it), made with
	 * the context's allocator: malloc. */
	buf = r == 0 ? spng_get_png_buffer(ctx, &n, &r) : NULL;
	spng_ctx_free(ctx);
	if (!buf || r != 0) {
		free(buf);
		if (r == 0 || r == SPNG_EMEM)
			return slab_fail(err, SLAB_ERR_NOMEM, NULL, "out of memory encoding a %ux%u PNG",
					 w, h);
		return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "PNG encoding failed: %s",
				 spng_strerror(r));
	}
	*out = buf;
	*outlen = n;
	return 0;
}

const struct slab_imgenc slab_imgenc_png = {
	.name = "PNG",
	.reencodable = reencodable,
	.encode = encode,
};
