/* image_png.c: PNG for the image pipeline (imgfmt.h). Not decoded yet: the probe matches
 * nothing, so PNG bytes are refused as an unknown format. */
#include "imgfmt.h"

static int probe(const unsigned char *p, size_t len)
{
	(void)p;
	(void)len;
	return 0;
}

static void *state_new(void)
{
	return NULL;
}

static void state_free(void *st)
{
	(void)st;
}

static int size(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		size_t len, uint32_t *w, uint32_t *h, struct slab_err *err)
{
	(void)st;
	(void)lim;
	(void)data;
	(void)len;
	(void)w;
	(void)h;
	return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "PNG is not decoded yet");
}

static int decode(void *st, const struct slab_image_limits *lim, const unsigned char *data,
		  size_t len, const struct slab_image_spec *spec, const struct slab_image_params *p,
		  struct slab_scratch *pix, struct slab_image_region *reg,
		  struct slab_image_stats *stats, struct slab_err *err)
{
	(void)st;
	(void)lim;
	(void)data;
	(void)len;
	(void)spec;
	(void)p;
	(void)pix;
	(void)reg;
	(void)stats;
	return slab_fail(err, SLAB_ERR_CORRUPT, NULL, "PNG is not decoded yet");
}

const struct slab_image_format slab_image_png = {
	.name = "PNG",
	.probe = probe,
	.state_new = state_new,
	.state_free = state_free,
	.size = size,
	.decode = decode,
};
