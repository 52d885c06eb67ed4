/* videogen.h: small videos made in memory with FFmpeg's own MPEG-4 Part 2 encoder (built into
 * every libavcodec), for tests/unit/test_video.c and tests/fuzz/fuzz_video.c. Each frame tells
 * its number: the top quarter is flat grey, its left half at luma 24 + 12 (n % 16), its right
 * half at 24 + 12 (n / 16) (so up to 256 frames), and a pattern that moves with n below. */
#ifndef SLAB_VIDEOGEN_H
#define SLAB_VIDEOGEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

static inline void videogen_fill(AVFrame *f, int n)
{
	int w = f->width, h = f->height;

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int v = y < h / 4 ? 24 + 12 * (x < w / 2 ? n % 16 : n / 16) :
				16 + ((x * 3 + y * 2 + n * 4) % 220);

			f->data[0][y * f->linesize[0] + x] = (uint8_t)v;
		}
	for (int y = 0; y < (h + 1) / 2; y++)
		for (int x = 0; x < (w + 1) / 2; x++) {
			int band = 2 * y < h / 4;

			f->data[1][y * f->linesize[1] + x] =
				(uint8_t)(band ? 128 : 96 + ((x - n) & 63));
			f->data[2][y * f->linesize[2] + x] =
				(uint8_t)(band ? 128 : 96 + ((y + n) & 63));
		}
}

/* A growable buffer the muxer writes and seeks in (the AVI and MP4 muxers go back to fill in
 * their headers, which a dynamic buffer of avio_open_dyn_buf() does not let them do). */
struct videogen_buf {
	unsigned char *p;
	size_t len, cap, pos;
};

static int videogen_write(void *opaque, uint8_t *data, int n)
{
	struct videogen_buf *b = opaque;

	if (b->pos + (size_t)n > b->cap) {
		size_t cap = (b->pos + (size_t)n) * 2;
		unsigned char *q = realloc(b->p, cap);

		if (!q)
			return AVERROR(ENOMEM);
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->pos, data, (size_t)n);
	b->pos += (size_t)n;
	if (b->pos > b->len)
		b->len = b->pos;
	return n;
}

static int64_t videogen_seek(void *opaque, int64_t offset, int whence)
{
	struct videogen_buf *b = opaque;

	whence &= ~AVSEEK_FORCE;
	if (whence == AVSEEK_SIZE)
		return (int64_t)b->len;
	if (whence == SEEK_CUR)
		offset += (int64_t)b->pos;
	else if (whence == SEEK_END)
		offset += (int64_t)b->len;
	if (offset < 0 || (size_t)offset > b->len)
		return AVERROR(EINVAL);
	b->pos = (size_t)offset;
	return offset;
}

/* frames frames of w x h at fps, a keyframe every gop, muxed by `muxer` ("avi", "matroska",
 * "mp4") into a malloc'ed buffer *out of *len bytes: 0, or -1. */
static inline int videogen(const char *muxer, int w, int h, int fps, int frames, int gop,
		    unsigned char **out, size_t *len)
{
	const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
	AVFormatContext *fmt = NULL;
	AVCodecContext *cc = NULL;
	AVStream *st;
	AVFrame *f = av_frame_alloc();
	AVPacket *pkt = av_packet_alloc();
	struct videogen_buf mem = { NULL, 0, 0, 0 };
	uint8_t *iobuf = NULL;
	int ret = -1;

	*out = NULL;
	*len = 0;
	if (!codec || !f || !pkt || avformat_alloc_output_context2(&fmt, NULL, muxer, NULL) < 0)
		goto done;
	if (!(st = avformat_new_stream(fmt, NULL)) || !(cc = avcodec_alloc_context3(codec)))
		goto done;
	cc->width = w;
	cc->height = h;
	cc->pix_fmt = AV_PIX_FMT_YUV420P;
	cc->time_base = (AVRational){ 1, fps };
	cc->framerate = (AVRational){ fps, 1 };
	cc->gop_size = gop;
	cc->max_b_frames = 0;
	cc->flags |= AV_CODEC_FLAG_QSCALE;
	cc->global_quality = FF_QP2LAMBDA * 2;
	if (fmt->oformat->flags & AVFMT_GLOBALHEADER)
		cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if (avcodec_open2(cc, codec, NULL) < 0 ||
	    avcodec_parameters_from_context(st->codecpar, cc) < 0)
		goto done;
	st->time_base = cc->time_base;
	st->avg_frame_rate = cc->framerate;
	if (!(iobuf = av_malloc(4096)) ||
	    !(fmt->pb = avio_alloc_context(iobuf, 4096, 1, &mem, NULL, videogen_write,
					   videogen_seek)))
		goto done;
	iobuf = NULL;
	if (avformat_write_header(fmt, NULL) < 0)
		goto done;
	f->format = cc->pix_fmt;
	f->width = w;
	f->height = h;
	if (av_frame_get_buffer(f, 0) < 0)
		goto done;
	for (int n = 0; n <= frames; n++) {
		if (n < frames) {
			if (av_frame_make_writable(f) < 0)
				goto done;
			videogen_fill(f, n);
			f->pts = n;
			f->quality = cc->global_quality;
		}
		if (avcodec_send_frame(cc, n < frames ? f : NULL) < 0)
			goto done;
		while (avcodec_receive_packet(cc, pkt) == 0) {
			av_packet_rescale_ts(pkt, cc->time_base, st->time_base);
			pkt->stream_index = st->index;
			if (av_interleaved_write_frame(fmt, pkt) < 0)
				goto done;
		}
	}
	if (av_write_trailer(fmt) < 0)
		goto done;
	avio_flush(fmt->pb);
	*out = mem.p;
	*len = mem.len;
	mem.p = NULL;
	ret = 0;
done:
	if (fmt && fmt->pb) {
		av_freep(&fmt->pb->buffer);
		avio_context_free(&fmt->pb);
	}
	av_free(iobuf);
	free(mem.p);
	avformat_free_context(fmt);
	avcodec_free_context(&cc);
	av_frame_free(&f);
	av_packet_free(&pkt);
	return ret;
}

/* The frame number an output frame of w x h RGB (HWC) tells, from the means of its band's two
 * halves (its top eighth: inside the top quarter under any crop that keeps the top), or -1. */
static inline int videogen_number(const unsigned char *rgb, int w, int h)
{
	double sum[2] = { 0, 0 };
	int cnt[2] = { 0, 0 }, d[2];

	for (int y = 0; y < (h + 7) / 8; y++)
		for (int x = 0; x < w; x++) {
			int half = x >= w / 2;

			if (x == w / 2 || x == w / 2 - 1)
				continue;               /* the edge between the halves */
			sum[half] += rgb[(y * w + x) * 3 + 1];
			cnt[half]++;
		}
	for (int i = 0; i < 2; i++) {
		/* Luma back from full-range grey, then the step of 12. */
		double luma = cnt[i] ? sum[i] / cnt[i] * 219.0 / 255.0 + 16 : 0;

		d[i] = (int)((luma - 24) / 12 + 0.5);
		if (d[i] < 0 || d[i] > 15)
			return -1;
	}
	return d[0] + 16 * d[1];
}

#endif
