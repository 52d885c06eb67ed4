/* video.h: what the video pipeline (video.c) offers the rest of libslab beyond slab.h. */
#ifndef SLAB_VIDEO_H
#define SLAB_VIDEO_H

#include <stdint.h>

#include "error.h"
#include "sized.h"
#include "slab.h"

/* 0 when FFmpeg's libraries are loaded (video.c loads them at first use), else
 * SLAB_ERR_INVAL with "video needs FFmpeg's libraries: <the loader's reason>" in *err (err may
 * be NULL). */
int slab_video_ready(struct slab_err *err);

/* With every set, each clip d decodes decodes every frame from its first to the end of the
 * stream (none left out) and fails at the first that does not decode whole, picked or not
 * ("corrupt video: the frame at 1.234 s does not decode whole"): pack's check. */
void slab_video_decoder_check(struct slab_video_decoder *d, int every);

/* The size of struct slab_video_spec's first version (sized.h): all of it so far. */
#define SLAB_VIDEO_SPEC_FIRST SLAB_SIZED_END(struct slab_video_spec, codec_threads)

/* 0 when the video pipeline takes what spec adds to its image spec (its size, the frame size,
 * frames, stride or fps, start, short-video policy, 3 channels), else SLAB_ERR_INVAL with the
 * first thing wrong in *err ("video stride 0: 1 to 65535"; err may be NULL). The image spec
 * is checked apart (slab_image_spec_ok(), or the loader's own check with its reasons). */
int slab_video_spec_check(const struct slab_video_spec *spec, struct slab_err *err);

/* The frames a clip of spec spans in the video info describes, as slab_video_params() counts
 * them: (frames - 1) x stride + 1, or at fps up to the frame nearest the last one's time. More
 * than info->frames: the video is short (spec->on_short). */
uint64_t slab_video_span(const struct slab_video_spec *spec, const struct slab_video_info *info);

#endif
