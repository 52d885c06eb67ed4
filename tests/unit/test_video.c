/* test_video.c: unit tests of lib/dataset/video.c on videos made in memory (videogen.h: MPEG-4
 * Part 2 in AVI, Matroska and MP4, each frame telling its number): the spec's checks, clip
 * parameters (pure; start uniform and independent of the crop; centre, begin, short videos),
 * the probe, the info, the frames picked (stride, fps, PAD, LOOP, ERROR), the rows-only
 * conversion byte for byte the whole frame's, CHW, determinism across decoders, limits, and
 * corrupt input with the decoder usable after it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slab.h"
#include "unit.h"
#include "video.h"
#include "videogen.h"

struct video {
	unsigned char *p;
	size_t len;
};

static struct video avi, mkv, mp4;

static void test_spec(void)
{
	struct slab_video_spec s;
	struct slab_video_info info = { .width = 64, .height = 48, .frames = 30, .duration = 1,
					.fps_num = 30, .fps_den = 1 };
	struct slab_video_params p;

	slab_video_spec_init(&s, 32, 24, 8);
	CHECK(s.size == sizeof(s) && s.frames == 8 && s.stride == 1 && s.fps == 0);
	CHECK(s.start == SLAB_VIDEO_START_RANDOM && s.on_short == SLAB_VIDEO_SHORT_PAD);
	CHECK(s.image.out_w == 32 && s.image.out_h == 24 && s.image.crop == SLAB_IMAGE_CROP_CENTER);
	CHECK(slab_video_params(&s, &info, 1, 2, 3, &p) == 0);
#define REFUSED(field, value) do { \
		struct slab_video_spec b = s; \
		b.field = value; \
		CHECK(slab_video_params(&b, &info, 1, 2, 3, &p) == SLAB_ERR_INVAL); \
	} while (0)
	REFUSED(frames, 0);
	REFUSED(frames, 65536);
	REFUSED(stride, 0);
	REFUSED(stride, 65536);
	REFUSED(fps, -1);
	REFUSED(fps, INFINITY);
	REFUSED(fps, NAN);
	REFUSED(start, 3);
	REFUSED(on_short, 3);
	REFUSED(image.channels, 1);
	REFUSED(image.channels, 4);
	REFUSED(image.out_w, 0);
	REFUSED(image.crop, 7);
	REFUSED(size, 8);
#undef REFUSED
	/* The reasons the loader gives at open (video.h). */
#define REASON(field, value, want) do { \
		struct slab_video_spec b = s; \
		struct slab_err e = { 0 }; \
		b.field = value; \
		CHECK(slab_video_spec_check(&b, &e) == SLAB_ERR_INVAL); \
		CHECK_STR(e.text, want); \
	} while (0)
	REASON(frames, 0, "video clip of 0 frames: 1 to 65535");
	REASON(stride, 0, "video stride 0: 1 to 65535");
	REASON(fps, -1, "video fps -1: wanted 0.000001 to 1000000, or 0 for a stride");
	/* whose period 1/fps is no finite number, nor the times from it */
	REASON(fps, 1e-310, "video fps 1e-310: wanted 0.000001 to 1000000, or 0 for a stride");
	REASON(fps, 2e6, "video fps 2e+06: wanted 0.000001 to 1000000, or 0 for a stride");
	REASON(fps, NAN, "video fps nan: wanted 0.000001 to 1000000, or 0 for a stride");
	REASON(start, 3, "video start 3: wanted 0 (random), 1 (center) or 2 (begin)");
	REASON(on_short, 3, "video on_short 3: wanted 0 (pad), 1 (loop) or 2 (error)");
	REASON(image.channels, 4, "video channels 4: clips are RGB (3)");
	REASON(image.out_h, 70000, "video frame size 32x70000");
	REASON(size, 8, "video spec of 8 bytes: no such version");
#undef REASON
	CHECK(slab_video_spec_check(&s, NULL) == 0);
	/* stride is not used with fps */
	s.fps = 10;
	s.stride = 0;
	CHECK(slab_video_params(&s, &info, 1, 2, 3, &p) == 0);
	CHECK(fabs(p.step - 0.1) < 1e-12);
	s.fps = 0;
	s.stride = 1;
	/* An empty or unknown video. */
	info.frames = 0;
	CHECK(slab_video_params(&s, &info, 1, 2, 3, &p) == SLAB_ERR_INVAL);
	info.frames = 30;
	info.fps_num = 0;
	CHECK(slab_video_params(&s, &info, 1, 2, 3, &p) == SLAB_ERR_INVAL);
}

static void test_params(void)
{
	struct slab_video_spec s;
	struct slab_video_info info = { .width = 200, .height = 100, .frames = 100, .duration = 4,
					.fps_num = 25, .fps_den = 1 };
	struct slab_video_params p, q;
	struct slab_image_params c;
	unsigned hits[82] = { 0 }, flips = 0;

	slab_video_spec_init(&s, 32, 32, 10);
	s.stride = 2;                   /* spans 19 frames: starts 0 .. 81 */
	s.image.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	s.image.flip = 1;
	for (uint64_t i = 0; i < 8200; i++) {
		CHECK(slab_video_params(&s, &info, 5, 1, i, &p) == 0);
		CHECK(p.first <= 81);
		if (p.first <= 81)
			hits[p.first]++;
		CHECK(fabs(p.t0 - p.first / 25.0) < 1e-12 && fabs(p.step - 2 / 25.0) < 1e-12);
		/* The crop is the image pipeline's for the same arguments. */
		CHECK(slab_image_params(&s.image, 200, 100, 5, 1, i, &c) == 0);
		CHECK(memcmp(&c, &p.crop, sizeof(c)) == 0);
		/* Pure: the same again. */
		CHECK(slab_video_params(&s, &info, 5, 1, i, &q) == 0);
		CHECK(memcmp(&p, &q, sizeof(p)) == 0);
		flips += p.crop.flip;
	}
	/* Uniform over the 82 starts: each near 100 of 8200 (a loose bound, 5 sigma). */
	for (int k = 0; k < 82; k++)
		CHECK(hits[k] > 50 && hits[k] < 150);
	CHECK(flips > 3800 && flips < 4400);
	/* The start does not follow the flip (independent draws): starts of flipped and
	 * unflipped clips both cover the range's halves. */
	{
		unsigned lo[2] = { 0, 0 }, hi[2] = { 0, 0 };

		for (uint64_t i = 0; i < 2000; i++) {
			CHECK(slab_video_params(&s, &info, 9, 0, i, &p) == 0);
			if (p.first < 41)
				lo[p.crop.flip]++;
			else
				hi[p.crop.flip]++;
		}
		CHECK(lo[0] > 400 && lo[1] > 400 && hi[0] > 400 && hi[1] > 400);
	}
	/* Another epoch, another start (mostly). */
	{
		unsigned same = 0;

		for (uint64_t i = 0; i < 200; i++) {
			CHECK(slab_video_params(&s, &info, 5, 1, i, &p) == 0);
			CHECK(slab_video_params(&s, &info, 5, 2, i, &q) == 0);
			same += p.first == q.first;
		}
		CHECK(same < 20);
	}
	s.start = SLAB_VIDEO_START_CENTER;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 40);
	s.start = SLAB_VIDEO_START_BEGIN;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 0);
	/* Exactly fitting: one start. */
	s.start = SLAB_VIDEO_START_RANDOM;
	s.stride = 11;                  /* 9 * 11 + 1 = 100 */
	for (uint64_t i = 0; i < 50; i++)
		CHECK(slab_video_params(&s, &info, 5, 1, i, &p) == 0 && p.first == 0);
	/* Too short: from the first frame, or refused. */
	s.stride = 12;
	s.start = SLAB_VIDEO_START_CENTER;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 0);
	s.on_short = SLAB_VIDEO_SHORT_LOOP;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 0);
	s.on_short = SLAB_VIDEO_SHORT_ERROR;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == SLAB_ERR_CORRUPT);
	/* By fps: 10 frames at 50 a second span 0.18 s, 4.5 frames of 25 a second: the last
	 * target takes frame 4 (a tie goes to the earlier frame), 5 frames: centre (100 - 5) / 2. */
	s.on_short = SLAB_VIDEO_SHORT_PAD;
	s.fps = 50;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 47);
	CHECK(fabs(p.step - 0.02) < 1e-12);
	/* At 5 a second: 9 * 5 = 45 frames, 46 spanned: centre 27. */
	s.fps = 5;
	CHECK(slab_video_params(&s, &info, 5, 1, 7, &p) == 0 && p.first == 27);
}

static void test_probe(void)
{
	unsigned char ts[400];

	CHECK(slab_video_probe(avi.p, avi.len) == 1);
	CHECK(slab_video_probe(mkv.p, mkv.len) == 1);
	CHECK(slab_video_probe(mp4.p, mp4.len) == 1);
	CHECK(slab_video_probe("\0\0\0\x20" "ftypisom", 12) == 1);
	CHECK(slab_video_probe("\x1a\x45\xdf\xa3", 4) == 1);
	CHECK(slab_video_probe("FLV\x01\x01\0\0\0\x09", 9) == 1);
	memset(ts, 0, sizeof(ts));
	ts[0] = ts[188] = ts[376] = 0x47;
	CHECK(slab_video_probe(ts, sizeof(ts)) == 1);
	CHECK(slab_video_probe(ts, 300) == 0);
	CHECK(slab_video_probe("\xff\xd8\xff\xe0", 4) == 0);  /* a JPEG */
	CHECK(slab_video_probe("RIFF\0\0\0\0WEBPVP8 ", 16) == 0);
	CHECK(slab_video_probe("", 0) == 0);
	CHECK(slab_video_probe(NULL, 0) == 0);
	CHECK(slab_video_probe("\0\0\0\x20" "fty", 7) == 0);
}

static void test_info(struct slab_video_decoder *d)
{
	struct slab_video_info info;
	const struct video *v[] = { &avi, &mkv, &mp4 };

	for (int i = 0; i < 3; i++) {
		CHECK(slab_video_info(d, v[i]->p, v[i]->len, &info) == 0);
		CHECK(info.width == 96 && info.height == 72);
		CHECK(info.frames == 40);
		CHECK(info.fps_num == 20 && info.fps_den == 1);
		CHECK(fabs(info.duration - 2.0) < 0.06);
		CHECK_STR(info.codec, "mpeg4");
	}
}

/* The clip's frame numbers, from its frames (HWC). */
static void numbers(const unsigned char *out, const struct slab_video_spec *s, int *n)
{
	size_t frame = (size_t)s->image.out_w * s->image.out_h * 3;

	for (unsigned k = 0; k < s->frames; k++)
		n[k] = videogen_number(out + k * frame, (int)s->image.out_w, (int)s->image.out_h);
}

/* Decode clip (index under seed 1) of v into out; 0 or the error. */
static int clip(struct slab_video_decoder *d, const struct video *v,
		const struct slab_video_spec *s, uint64_t index, unsigned char *out,
		struct slab_video_stats *st, struct slab_video_params *pp)
{
	struct slab_video_info info;
	struct slab_video_params p;
	int ret;

	if ((ret = slab_video_info(d, v->p, v->len, &info)) < 0)
		return ret;
	if ((ret = slab_video_params(s, &info, 1, 0, index, &p)) < 0)
		return ret;
	if (pp)
		*pp = p;
	return slab_video_decode(d, v->p, v->len, s, &p, out, st);
}

static int same_numbers(const int *got, const int *want, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (got[k] != want[k]) {
			fprintf(stderr, "frame %u: %d, not %d\n", k, got[k], want[k]);
			return 0;
		}
	return 1;
}

static void test_frames(struct slab_video_decoder *d)
{
	struct slab_video_spec s;
	struct slab_video_stats st;
	struct slab_video_params p;
	unsigned char *out = malloc(32 * 24 * 3 * 30);
	int n[30];
	const struct video *v[] = { &avi, &mkv, &mp4 };

	if (!out)
		return;
	slab_video_spec_init(&s, 32, 24, 6);
	s.image.crop = SLAB_IMAGE_CROP_NONE;
	for (int i = 0; i < 3; i++) {
		/* Stride 1, 2, 3 from the centre of 40 frames. */
		for (unsigned stride = 1; stride <= 3; stride++) {
			int want[6];
			uint64_t first = (40 - (5 * stride + 1)) / 2;

			s.stride = stride;
			s.start = SLAB_VIDEO_START_CENTER;
			CHECK(clip(d, v[i], &s, 0, out, &st, &p) == 0);
			CHECK(p.first == first);
			for (int k = 0; k < 6; k++)
				want[k] = (int)(first + k * stride);
			numbers(out, &s, n);
			CHECK(same_numbers(n, want, 6));
			CHECK(st.converted == 6 && st.seeks <= 2);
			/* Keyframes every 10: from the one before the first frame. */
			CHECK(st.decoded == first + 5 * stride + 1 - first / 10 * 10);
		}
		/* Random starts: the frames are the ones the parameters say. */
		s.start = SLAB_VIDEO_START_RANDOM;
		s.stride = 2;
		for (uint64_t index = 0; index < 6; index++) {
			int want[6];

			CHECK(clip(d, v[i], &s, index, out, &st, &p) == 0);
			for (int k = 0; k < 6; k++)
				want[k] = (int)(p.first + 2 * k);
			numbers(out, &s, n);
			CHECK(same_numbers(n, want, 6));
		}
	}
	/* By fps: 30 a second in a video of 20: frames repeat, converted once each. */
	s.fps = 30;
	s.start = SLAB_VIDEO_START_BEGIN;
	CHECK(clip(d, &avi, &s, 0, out, &st, NULL) == 0);
	numbers(out, &s, n);
	CHECK(same_numbers(n, (const int[]){ 0, 1, 1, 2, 3, 3 }, 6));
	CHECK(st.converted == 4);
	/* At 7.5 a second: every 8/3 frames, ties to the earlier: 0, 2.67, 5.33, 8, 10.67,
	 * 13.33 -> 0 3 5 8 11 13. */
	s.fps = 7.5;
	CHECK(clip(d, &avi, &s, 0, out, &st, NULL) == 0);
	numbers(out, &s, n);
	CHECK(same_numbers(n, (const int[]){ 0, 3, 5, 8, 11, 13 }, 6));
	s.fps = 0;
	/* Short: 30 frames at stride 2 span 59 of 40. */
	s.frames = 30;
	s.stride = 2;
	s.start = SLAB_VIDEO_START_CENTER;
	s.on_short = SLAB_VIDEO_SHORT_PAD;
	CHECK(clip(d, &mkv, &s, 0, out, &st, &p) == 0);
	CHECK(p.first == 0);
	numbers(out, &s, n);
	for (int k = 0; k < 30; k++)
		CHECK(n[k] == (k < 20 ? 2 * k : 39));
	CHECK(st.converted == 21);
	s.on_short = SLAB_VIDEO_SHORT_LOOP;
	CHECK(clip(d, &mkv, &s, 0, out, &st, &p) == 0);
	numbers(out, &s, n);
	for (int k = 0; k < 30; k++)
		CHECK(n[k] == 2 * k % 40);
	CHECK(st.seeks >= 1);
	s.on_short = SLAB_VIDEO_SHORT_ERROR;
	CHECK(clip(d, &mkv, &s, 0, out, &st, &p) == SLAB_ERR_CORRUPT);
	memset(&p, 0, sizeof(p));
	p.step = 0.1;
	p.crop.w = 96;
	p.crop.h = 72;
	CHECK(slab_video_decode(d, mkv.p, mkv.len, &s, &p, out, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_video_error(d), "video of 40 frames: the clip needs 59");
	free(out);
}

/* Crops, flips, sizes and both resizes: the rows-only conversion gives the bytes of the
 * whole frame's (exact); CHW is HWC's planes; the same clip twice, and from two decoders
 * taking turns, is the same. */
static void test_paths(struct slab_video_decoder *d)
{
	struct slab_video_decoder *e = slab_video_decoder_new();
	struct slab_video_spec s;
	size_t n = 23 * 17 * 3 * 5;
	unsigned char *a = malloc(n), *b = malloc(n), *c = malloc(n);
	const struct video *v[] = { &avi, &mkv, &mp4 };

	CHECK(e != NULL);
	if (!e || !a || !b || !c)
		goto done;
	slab_video_spec_init(&s, 23, 17, 5);
	s.stride = 3;
	s.image.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	s.image.flip = 1;
	for (int i = 0; i < 3; i++) {
		for (uint64_t index = 0; index < 12; index++) {
			s.image.resize = index % 3 == 2 ? SLAB_IMAGE_RESIZE_NEAREST :
				SLAB_IMAGE_RESIZE_BILINEAR;
			s.image.exact = 0;
			s.image.chw = 0;
			CHECK(clip(d, v[i], &s, index, a, NULL, NULL) == 0);
			s.image.exact = 1;
			CHECK(clip(e, v[i], &s, index, b, NULL, NULL) == 0);
			CHECK(memcmp(a, b, n) == 0);
			s.image.exact = 0;
			s.image.chw = 1;
			CHECK(clip(d, v[i], &s, index, c, NULL, NULL) == 0);
			for (size_t k = 0; k < 5 * 17 * 23; k++)
				for (int ch = 0; ch < 3; ch++)
					CHECK(c[ch * 5 * 17 * 23 + k] == a[k * 3 + ch]);
		}
	}
	/* Interleaved: d on the AVI, e on the MP4, turn about, each equal to a lone decode. */
	s.image.chw = 0;
	s.image.resize = SLAB_IMAGE_RESIZE_BILINEAR;
	{
		struct slab_video_info ia, ib;
		struct slab_video_params pa, pb;
		unsigned char *ref = malloc(n);

		if (ref && slab_video_info(d, avi.p, avi.len, &ia) == 0 &&
		    slab_video_info(e, mp4.p, mp4.len, &ib) == 0) {
			for (uint64_t index = 0; index < 4; index++) {
				CHECK(slab_video_params(&s, &ia, 3, 0, index, &pa) == 0);
				CHECK(slab_video_params(&s, &ib, 3, 0, index, &pb) == 0);
				CHECK(slab_video_decode(d, avi.p, avi.len, &s, &pa, a, NULL) == 0);
				CHECK(slab_video_decode(e, mp4.p, mp4.len, &s, &pb, b, NULL) == 0);
				CHECK(slab_video_decode(e, avi.p, avi.len, &s, &pa, ref, NULL) == 0);
				CHECK(memcmp(a, ref, n) == 0);
				CHECK(slab_video_decode(d, mp4.p, mp4.len, &s, &pb, ref, NULL) == 0);
				CHECK(memcmp(b, ref, n) == 0);
			}
		} else {
			CHECK(0);
		}
		free(ref);
	}
	/* Codec threads give the same frames. */
	s.codec_threads = 3;
	CHECK(clip(d, &mp4, &s, 5, a, NULL, NULL) == 0);
	s.codec_threads = 0;
	CHECK(clip(e, &mp4, &s, 5, b, NULL, NULL) == 0);
	CHECK(memcmp(a, b, n) == 0);
done:
	slab_video_decoder_free(e);
	free(a);
	free(b);
	free(c);
}

static void test_limits(struct slab_video_decoder *d)
{
	struct slab_video_info info;

	slab_video_decoder_limits(d, 96 * 72 - 1, 0);
	CHECK(slab_video_info(d, avi.p, avi.len, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_video_error(d), "video of 96x72 pixels (6912): over the limit of 6911 "
		  "pixels");
	CHECK(slab_video_info(d, mkv.p, mkv.len, &info) == SLAB_ERR_LIMIT);
	slab_video_decoder_limits(d, 96 * 72, 39);
	/* The AVI and MP4 headers say 40 frames; Matroska's are counted. */
	CHECK(slab_video_info(d, avi.p, avi.len, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_video_error(d), "video of 40 frames: over the limit of 39 frames");
	CHECK(slab_video_info(d, mkv.p, mkv.len, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_video_error(d), "video of more than 39 frames: over the limit of 39 frames");
	slab_video_decoder_limits(d, 96 * 72, 40);
	CHECK(slab_video_info(d, mkv.p, mkv.len, &info) == 0 && info.frames == 40);
	slab_video_decoder_limits(d, 0, 0);
	CHECK(slab_video_info(d, mkv.p, mkv.len, &info) == 0);
}

static void test_corrupt(struct slab_video_decoder *d)
{
	struct slab_video_info info;
	struct slab_video_spec s;
	struct slab_video_params p;
	unsigned char *out = malloc(16 * 16 * 3 * 40), *bad;
	unsigned char junk[1000];
	uint64_t x = 12345;

	if (!out)
		return;
	slab_video_spec_init(&s, 16, 16, 40);
	s.start = SLAB_VIDEO_START_BEGIN;
	CHECK(slab_video_info(d, "", 0, &info) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_video_error(d), "corrupt video: no bytes");
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		junk[i] = (unsigned char)(x >> 56);
	}
	junk[0] = 0x12;
	junk[1] = 0x34;
	junk[2] = 0x56;
	junk[3] = 0x78;
	CHECK(slab_video_info(d, junk, sizeof(junk), &info) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_video_error(d), "corrupt video: not MP4/MOV, Matroska/WebM, AVI, MPEG-TS, "
		  "MPEG-PS, FLV or GIF: starts with 0x12 0x34 0x56 0x78");
	/* A Matroska header, then noise. */
	memcpy(junk, "\x1a\x45\xdf\xa3", 4);
	CHECK(slab_video_info(d, junk, sizeof(junk), &info) == SLAB_ERR_CORRUPT);
	CHECK(strncmp(slab_video_error(d), "corrupt video: ", 15) == 0);
	/* Truncated, and with noise over its frames: errors, never a crash or a hang; each
	 * truncation either fails or gives the frames it has. */
	bad = malloc(avi.len);
	if (bad) {
		for (size_t cut = 16; cut < avi.len; cut += avi.len / 23) {
			int ret = slab_video_info(d, avi.p, cut, &info);

			CHECK(ret == 0 || ret == SLAB_ERR_CORRUPT);
			if (ret == 0 && slab_video_params(&s, &info, 0, 0, 0, &p) == 0) {
				ret = slab_video_decode(d, avi.p, cut, &s, &p, out, NULL);
				CHECK(ret == 0 || ret == SLAB_ERR_CORRUPT);
			}
		}
		for (int round = 0; round < 20; round++) {
			int ret;

			memcpy(bad, avi.p, avi.len);
			for (size_t i = 600 + (size_t)round * 97; i < avi.len; i += 331) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				bad[i] = (unsigned char)(x >> 56);
			}
			ret = slab_video_info(d, bad, avi.len, &info);
			CHECK(ret == 0 || ret == SLAB_ERR_CORRUPT);
			if (ret == 0 && slab_video_params(&s, &info, 0, 0, 0, &p) == 0) {
				ret = slab_video_decode(d, bad, avi.len, &s, &p, out, NULL);
				CHECK(ret == 0 || ret == SLAB_ERR_CORRUPT);
			}
		}
		/* The half of the AVI, its index (at the end) gone: its frames are the packets
		 * there are, not the header's 40, and the last one, cut, says so. */
		CHECK(slab_video_info(d, avi.p, avi.len / 2, &info) == 0 && info.frames > 0 &&
		      info.frames < 40);
		CHECK(slab_video_params(&s, &info, 0, 0, 0, &p) == 0);
		CHECK(slab_video_decode(d, avi.p, avi.len / 2, &s, &p, out, NULL) ==
		      SLAB_ERR_CORRUPT);
		CHECK(strncmp(slab_video_error(d), "corrupt video: ", 15) == 0);
		free(bad);
	}
	/* A crop outside the video, a bad step: refused. */
	CHECK(slab_video_info(d, avi.p, avi.len, &info) == 0);
	CHECK(slab_video_params(&s, &info, 0, 0, 0, &p) == 0);
	p.crop.x = 90;
	CHECK(slab_video_decode(d, avi.p, avi.len, &s, &p, out, NULL) == SLAB_ERR_INVAL);
	p.crop.x = 0;
	p.step = 0;
	CHECK(slab_video_decode(d, avi.p, avi.len, &s, &p, out, NULL) == SLAB_ERR_INVAL);
	/* Still usable: without slab_video_info() first, the decode opens the bytes itself. */
	CHECK(slab_video_params(&s, &info, 0, 0, 0, &p) == 0);
	CHECK(slab_video_decode(d, avi.p, avi.len, &s, &p, out, NULL) == 0);
	CHECK(videogen_number(out + 39 * 16 * 16 * 3, 16, 16) == 39);
	free(out);
}

int main(void)
{
	struct slab_video_decoder *d = slab_video_decoder_new();

	CHECK(d != NULL);
	CHECK(videogen("avi", 96, 72, 20, 40, 10, &avi.p, &avi.len) == 0);
	CHECK(videogen("matroska", 96, 72, 20, 40, 10, &mkv.p, &mkv.len) == 0);
	CHECK(videogen("mp4", 96, 72, 20, 40, 10, &mp4.p, &mp4.len) == 0);
	if (!d || !avi.p || !mkv.p || !mp4.p)
		return 1;
	test_spec();
	test_params();
	test_probe();
	test_info(d);
	test_frames(d);
	test_paths(d);
	test_limits(d);
	test_corrupt(d);
	slab_video_decoder_free(d);
	slab_video_decoder_free(NULL);
	free(avi.p);
	free(mkv.p);
	free(mp4.p);
	return UNIT_DONE();
}
