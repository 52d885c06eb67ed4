/* fuzz_png.c: libFuzzer target for PNG in the image pipeline (lib/dataset/image_png.c over
 * libspng). The input's first 8 bytes choose what to make (crop mode, flip, CHW, the exact
 * path, the channels, the nearest resize, alpha composite, the output size, the seed, and
 * bit 5 of byte 0: recompute every chunk's CRC, so that
 * mutations get past the checksums to the chunk and image data behind them); the rest is a
 * PNG without its 8-byte signature, which is put back in front, so no time goes on finding
 * it. slab_image_size(), slab_image_params() and slab_image_decode() must return one of their
 * documented codes, write exactly out_h x out_w x C bytes, and leave the decoder usable:
 * after every failure, a small valid PNG made at start-up decodes again. A second decoder,
 * made with SLAB_PNG_LIBDEFLATE=0, decodes every input on libspng's way only: it must return
 * the same code, the same stats and the same bytes as the first, which takes the libdeflate
 * way wherever it can. */
#include "slab.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <spng.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONTROL 8
#define MAX_PIXELS (1u << 24)           /* the decoder's pixel limit: larger pictures cost
					 * time, not coverage */
#define MAX_INPUT (1u << 20)

static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

static struct slab_image_decoder *dec;
static struct slab_image_decoder *ref;  /* libspng's way only */
static unsigned char *good;
static size_t good_len;
static unsigned char *png;              /* signature + the input, CRCs maybe fixed */
static uint32_t crc_table[256];

/* A 24 x 16 RGB PNG of a gradient, Adam7, by libspng's encoder: to check the decoder after
 * a failure. */
static void make_good(void)
{
	unsigned char px[16 * 24 * 3];
	struct spng_ihdr ih = { .width = 24, .height = 16, .bit_depth = 8,
				.color_type = SPNG_COLOR_TYPE_TRUECOLOR, .interlace_method = 1 };
	spng_ctx *c = spng_ctx_new(SPNG_CTX_ENCODER);
	int err = 0;

	for (size_t i = 0; i < sizeof(px); i++)
		px[i] = (unsigned char)(i * 7);
	if (!c || spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1) || spng_set_ihdr(c, &ih) ||
	    spng_encode_image(c, px, sizeof(px), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE))
		__builtin_trap();
	good = spng_get_png_buffer(c, &good_len, &err);
	if (!good || err)
		__builtin_trap();
	spng_ctx_free(c);
}

static void make_crc_table(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

static uint32_t png_crc(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Each whole chunk of p[0, n) (after the signature) its correct CRC. */
static void fix_crcs(unsigned char *p, size_t n)
{
	size_t at = sizeof(signature);

	while (n - at >= 12) {
		uint32_t len = be32(p + at), crc;

		if (len > n - at - 12)
			break;
		crc = png_crc(p + at + 4, (size_t)len + 4);
		p[at + 8 + len] = (unsigned char)(crc >> 24);
		p[at + 9 + len] = (unsigned char)(crc >> 16);
		p[at + 10 + len] = (unsigned char)(crc >> 8);
		p[at + 11 + len] = (unsigned char)crc;
		at += (size_t)len + 12;
	}
}

static int documented(int rc)
{
	return rc == 0 || rc == SLAB_ERR_CORRUPT || rc == SLAB_ERR_NOMEM || rc == SLAB_ERR_LIMIT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slab_image_spec spec;
	struct slab_image_params p;
	struct slab_image_stats st, st2;
	unsigned char *out, *out2;
	size_t outlen;
	uint32_t w, h;
	uint64_t seed = 0;
	size_t len;
	int rc;

	if (!dec) {
		dec = slab_image_decoder_new();
		png = malloc(sizeof(signature) + MAX_INPUT);
		if (!dec || !png)
			__builtin_trap();
		slab_image_decoder_limits(dec, MAX_PIXELS, 0);
		make_good();
		/* The PNG decoder reads SLAB_PNG_LIBDEFLATE when it is made, at a decoder's
		 * first PNG. */
		if (setenv("SLAB_PNG_LIBDEFLATE", "0", 1) != 0 ||
		    !(ref = slab_image_decoder_new()) ||
		    slab_image_size(ref, good, good_len, &w, &h) != 0 ||
		    unsetenv("SLAB_PNG_LIBDEFLATE") != 0)
			__builtin_trap();
		slab_image_decoder_limits(ref, MAX_PIXELS, 0);
		make_crc_table();
		memcpy(png, signature, sizeof(signature));
	}
	if (size < CONTROL || size - CONTROL > MAX_INPUT)
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
	len = sizeof(signature) + size - CONTROL;
	memcpy(png + sizeof(signature), data + CONTROL, size - CONTROL);
	if (data[0] >> 5 & 1)
		fix_crcs(png, len);

	rc = slab_image_size(dec, png, len, &w, &h);
	if (!documented(rc))
		__builtin_trap();
	if (rc < 0)
		return 0;
	if ((uint64_t)w * h > MAX_PIXELS)
		__builtin_trap();               /* past the pixel limit */
	if (w == 0 || h == 0 || slab_image_params(&spec, w, h, seed, seed >> 8, seed >> 16, &p) != 0)
		__builtin_trap();
	outlen = (size_t)spec.out_w * spec.out_h * spec.channels;
	out = malloc(outlen);
	out2 = malloc(outlen);
	if (!out || !out2)
		__builtin_trap();
	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	rc = slab_image_decode(dec, png, len, &spec, &p, out, &st);
	if (!documented(rc))
		__builtin_trap();
	if (slab_image_decode(ref, png, len, &spec, &p, out2, &st2) != rc ||
	    (rc == 0 && (memcmp(out, out2, outlen) != 0 || memcmp(&st, &st2, sizeof(st)) != 0)))
		__builtin_trap();               /* the two ways differ */
	if (rc == 0 && (st.scale_denom != 1 || st.decoded_w != w || st.decoded_h > h ||
			st.decoded_h < p.y + p.h))
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
	free(out2);
	return 0;
}
