/* fuzz_webp.c: libFuzzer target for the image pipeline's WebP decoder (lib/dataset/
 * image_webp.c, through lib/dataset/image.c): the input's first 8 bytes choose what to make
 * (crop mode, flip, CHW, the exact path, the channels, the nearest resize, alpha composite,
 * the output size and the seed), the rest is the WebP;
 * inputs that do not start as a WebP ("RIFF" ... "WEBP") are passed over, so that every run
 * reaches libwebp. slab_image_size(), slab_image_params() and slab_image_decode() must return
 * one of their documented codes, write exactly out_h x out_w x C bytes (the output buffer is
 * that size, so ASan sees a byte past it), report no more pixels decoded than the image has,
 * and leave the decoder usable: after every failure, a small valid WebP made at start-up
 * decodes again. */
#include "slab.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONTROL 8
#define MAX_PIXELS (1u << 24)           /* the decoder's pixel limit: larger pictures cost
					 * time, not coverage */

static struct slab_image_decoder *dec;
static uint8_t *good;
static size_t good_len;

/* A 24 x 16 lossy WebP of a gradient, to check the decoder after a failure. */
static void make_good(void)
{
	unsigned char px[16 * 24 * 3];

	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (unsigned char)(i * 7);
	good_len = WebPEncodeRGB(px, 24, 16, 24 * 3, 90, &good);
	if (good_len == 0)
		__builtin_trap();
}

static int documented(int rc)
{
	return rc == 0 || rc == SLAB_ERR_CORRUPT || rc == SLAB_ERR_NOMEM || rc == SLAB_ERR_LIMIT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slab_image_spec spec;
	struct slab_image_params p;
	struct slab_image_stats st;
	unsigned char *out;
	uint32_t w, h;
	uint64_t seed = 0;
	int rc;

	if (!dec) {
		dec = slab_image_decoder_new();
		if (!dec)
			__builtin_trap();
		slab_image_decoder_limits(dec, MAX_PIXELS, 0);
		make_good();
	}
	if (size < CONTROL + 12 || memcmp(data + CONTROL, "RIFF", 4) != 0 ||
	    memcmp(data + CONTROL + 8, "WEBP", 4) != 0)
		return 0;
	slab_image_spec_init(&spec, 1 + data[1] % 64u, 1 + data[2] % 64u);
	spec.crop = data[0] % 3;
	spec.flip = data[0] >> 2 & 1;
	spec.chw = data[0] >> 3 & 1;
	spec.exact = data[0] >> 4 & 1;
	/* The spare bits: channels (RGB, grey, RGBA, RGB), the nearest resize, composite. */
	spec.channels = (unsigned)"\3\1\4\3"[data[0] >> 6];
	spec.resize = data[1] >> 7;
	spec.alpha = spec.channels != 4 ? data[2] >> 7 : 0;
	for (int i = 3; i < CONTROL; i++)
		seed = seed << 8 | data[i];
	data += CONTROL;
	size -= CONTROL;

	rc = slab_image_size(dec, data, size, &w, &h);
	if (!documented(rc))
		__builtin_trap();
	if (rc < 0)
		return 0;
	if ((uint64_t)w * h > MAX_PIXELS)
		__builtin_trap();               /* past the pixel limit */
	if (w == 0 || h == 0 || slab_image_params(&spec, w, h, seed, seed >> 8, seed >> 16, &p) != 0)
		__builtin_trap();
	if (p.w == 0 || p.h == 0 || p.x + (uint64_t)p.w > w || p.y + (uint64_t)p.h > h)
		__builtin_trap();
	out = malloc((size_t)spec.out_w * spec.out_h * spec.channels);
	if (!out)
		__builtin_trap();
	rc = slab_image_decode(dec, data, size, &spec, &p, out, &st);
	if (!documented(rc))
		__builtin_trap();
	if (rc == 0 && (st.decoded_w == 0 || st.decoded_h == 0 || st.decoded_w > w ||
			st.decoded_h > h || (st.scale_denom != 1 && st.scale_denom != 2 &&
					     st.scale_denom != 4 && st.scale_denom != 8) ||
			(spec.exact && (st.decoded_w != w || st.decoded_h != h || st.region))))
		__builtin_trap();
	if (rc < 0) {
		/* The decoder is still good. */
		uint32_t gw, gh;

		if (slab_image_size(dec, good, good_len, &gw, &gh) != 0 || gw != 24 || gh != 16 ||
		    slab_image_params(&spec, gw, gh, seed, 0, 0, &p) != 0 ||
		    slab_image_decode(dec, good, good_len, &spec, &p, out, NULL) != 0)
			__builtin_trap();
	}
	free(out);
	return 0;
}
