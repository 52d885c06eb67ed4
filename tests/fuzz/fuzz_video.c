/* fuzz_video.c: libFuzzer target for the video pipeline (lib/dataset/video.c, over FFmpeg's
 * demuxers and decoders): the input's first 8 bytes choose the clip (frames 1..8, stride
 * 1..4 or an fps, start, what a short video does, crop mode, flip, CHW, exact, the nearest
 * resize, an output of 1..32 x 1..32, the seed), the rest is the video. slab_video_info(),
 * slab_video_params() and slab_video_decode() must return one of their documented codes,
 * write no byte past the clip (the buffer is its size), take no more pixels or frames than
 * the limits, and leave the decoder usable: after every failure, a small AVI made at
 * start-up (tests/unit/videogen.h) decodes again. FFmpeg itself is not instrumented. */
#include "slab.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/videogen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONTROL 8
#define MAX_PIXELS (1u << 20)           /* larger frames cost time, not coverage */
#define MAX_FRAMES 2000u

static struct slab_video_decoder *dec;
static unsigned char *good;
static size_t good_len;

static int documented(int rc)
{
	return rc == 0 || rc == SLAB_ERR_CORRUPT || rc == SLAB_ERR_NOMEM || rc == SLAB_ERR_LIMIT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slab_video_spec spec;
	struct slab_video_info info;
	struct slab_video_params p;
	struct slab_video_stats st;
	unsigned char *out;
	uint64_t seed = 0;
	int rc;

	if (!dec) {
		dec = slab_video_decoder_new();
		if (!dec || videogen("avi", 48, 32, 10, 12, 4, &good, &good_len) != 0)
			__builtin_trap();
		slab_video_decoder_limits(dec, MAX_PIXELS, MAX_FRAMES);
	}
	if (size < CONTROL)
		return 0;
	slab_video_spec_init(&spec, 1 + data[1] % 32u, 1 + data[2] % 32u, 1 + data[0] % 8u);
	spec.stride = 1 + (data[0] >> 3) % 4u;
	spec.fps = data[0] >> 5 & 1 ? 0.5 + data[3] % 64 : 0;
	spec.start = (data[0] >> 6) % 3;
	spec.on_short = (data[1] >> 5) % 3;
	spec.image.crop = (data[2] >> 5) % 3;
	spec.image.flip = data[2] >> 7 & 1;
	spec.image.chw = data[3] >> 6 & 1;
	spec.image.exact = data[3] >> 7 & 1;
	spec.image.resize = data[4] & 1;
	for (int i = 4; i < CONTROL; i++)
		seed = seed << 8 | data[i];
	data += CONTROL;
	size -= CONTROL;

	rc = slab_video_info(dec, data, size, &info);
	if (!documented(rc))
		__builtin_trap();
	if (rc < 0)
		goto check;
	if ((uint64_t)info.width * info.height > MAX_PIXELS || info.frames > MAX_FRAMES ||
	    info.frames == 0 || info.fps_num == 0 || info.fps_den == 0)
		__builtin_trap();
	rc = slab_video_params(&spec, &info, seed, seed >> 8, seed >> 16, &p);
	if (rc == SLAB_ERR_CORRUPT && spec.on_short == SLAB_VIDEO_SHORT_ERROR)
		return 0;
	if (rc != 0 || p.crop.w == 0 || p.crop.h == 0 || p.crop.x + (uint64_t)p.crop.w > info.width ||
	    p.crop.y + (uint64_t)p.crop.h > info.height || p.first >= info.frames)
		__builtin_trap();
	out = malloc((size_t)spec.image.out_w * spec.image.out_h * 3 * spec.frames);
	if (!out)
		__builtin_trap();
	rc = slab_video_decode(dec, data, size, &spec, &p, out, &st);
	if (!documented(rc))
		__builtin_trap();
	if (rc == 0 && (st.converted > spec.frames || st.converted == 0))
		__builtin_trap();
	free(out);
check:
	if (rc < 0) {
		/* The decoder is still good. */
		struct slab_video_spec gs;
		unsigned char gout[8 * 8 * 3 * 4];

		slab_video_spec_init(&gs, 8, 8, 4);
		if (slab_video_info(dec, good, good_len, &info) != 0 || info.frames != 12 ||
		    slab_video_params(&gs, &info, seed, 0, 0, &p) != 0 ||
		    slab_video_decode(dec, good, good_len, &gs, &p, gout, NULL) != 0)
			__builtin_trap();
	}
	return 0;
}
