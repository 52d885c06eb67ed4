/* video.c: the video pipeline (slab.h "Video: clips of frames") over FFmpeg's libraries: a
 * video field demuxed from memory, the clip's frames picked by their timestamps, each picked
 * frame's rows holding the crop converted to RGBA by libswscale and handed to the image
 * pipeline's resize (imgfmt.h slab_image_finish()), so a frame is resized as an image is. The
 * only file that includes FFmpeg's headers.
 *
 * FFmpeg logs through one process-wide callback: the first decoder made sets it
 * (av_log_set_callback(), once) to one that prints nothing and keeps the calling thread's last
 * error line, which the messages quote. An application that uses FFmpeg itself and wants its
 * log sets its callback again after making a video decoder. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "error.h"
#include "errfmt.h"
#include "imgfmt.h"
#include "scratch.h"
#include "slab.h"
#include "video.h"

/* ---- FFmpeg's libraries, loaded at first use -------------------------------------------- */

/* libslab does not link FFmpeg's libraries: it loads them (dlopen(), by the sonames of the
 * headers it was built with) when a video is first read, so that a program that never reads
 * one, and every tool but pack and prefetch, starts without FFmpeg and the hundred libraries
 * FFmpeg's packages bring in; a machine without them reads everything but videos. Every call
 * to FFmpeg goes through ff, filled once. */
#define FF_STR2(x) #x
#define FF_STR(x) FF_STR2(x)
#define FF_LIBS(X) \
	X(avutil, "libavutil.so." FF_STR(LIBAVUTIL_VERSION_MAJOR)) \
	X(swscale, "libswscale.so." FF_STR(LIBSWSCALE_VERSION_MAJOR)) \
	X(avcodec, "libavcodec.so." FF_STR(LIBAVCODEC_VERSION_MAJOR)) \
	X(avformat, "libavformat.so." FF_STR(LIBAVFORMAT_VERSION_MAJOR))
#define FF_FUNCS(X) \
	X(avutil, av_calloc) \
	X(avutil, av_d2q) \
	X(avutil, av_dict_free) \
	X(avutil, av_dict_set_int) \
	X(avutil, av_frame_alloc) \
	X(avutil, av_frame_free) \
	X(avutil, av_frame_get_buffer) \
	X(avutil, av_frame_move_ref) \
	X(avutil, av_frame_unref) \
	X(avutil, av_free) \
	X(avutil, av_freep) \
	X(avutil, av_get_pix_fmt_name) \
	X(avutil, av_log_set_callback) \
	X(avutil, av_malloc) \
	X(avutil, av_pix_fmt_desc_get) \
	X(avutil, av_reduce) \
	X(avutil, av_strerror) \
	X(avcodec, av_packet_alloc) \
	X(avcodec, av_packet_free) \
	X(avcodec, av_packet_unref) \
	X(avcodec, avcodec_alloc_context3) \
	X(avcodec, avcodec_find_decoder) \
	X(avcodec, avcodec_flush_buffers) \
	X(avcodec, avcodec_free_context) \
	X(avcodec, avcodec_get_name) \
	X(avcodec, avcodec_open2) \
	X(avcodec, avcodec_parameters_to_context) \
	X(avcodec, avcodec_receive_frame) \
	X(avcodec, avcodec_send_packet) \
	X(avformat, av_find_best_stream) \
	X(avformat, av_find_input_format) \
	X(avformat, av_index_search_timestamp) \
	X(avformat, av_read_frame) \
	X(avformat, av_seek_frame) \
	X(avformat, avformat_alloc_context) \
	X(avformat, avformat_close_input) \
	X(avformat, avformat_find_stream_info) \
	X(avformat, avformat_index_get_entries_count) \
	X(avformat, avformat_index_get_entry) \
	X(avformat, avformat_open_input) \
	X(avformat, avio_alloc_context) \
	X(avformat, avio_context_free) \
	X(swscale, sws_frame_end) \
	X(swscale, sws_frame_start) \
	X(swscale, sws_freeContext) \
	X(swscale, sws_getCoefficients) \
	X(swscale, sws_getContext) \
	X(swscale, sws_receive_slice) \
	X(swscale, sws_receive_slice_alignment) \
	X(swscale, sws_send_slice) \
	X(swscale, sws_setColorspaceDetails)

static struct {
#define FF_MEMBER(lib, fn) __typeof__(fn) *fn;
	FF_FUNCS(FF_MEMBER)
#undef FF_MEMBER
} ff;
static pthread_once_t ff_once = PTHREAD_ONCE_INIT;
static int ff_loaded;
static char ff_why[256];

static void ff_load(void)
{
#define FF_HANDLE(lib, so) void *lib = NULL;
	FF_LIBS(FF_HANDLE)
#undef FF_HANDLE
	const char *e;

	/* In dependency order, each RTLD_LOCAL: nothing of FFmpeg's joins the program's global
	 * namespace. The handles are never closed: the functions stay in ff. */
#define FF_OPEN(lib, name) \
	if (!(lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) { \
		e = dlerror(); \
		snprintf(ff_why, sizeof(ff_why), "%s", e ? e : name ": cannot be loaded"); \
		return; \
	}
	FF_LIBS(FF_OPEN)
#undef FF_OPEN
#define FF_SYM(lib, fn) \
	if (!(*(void **)&ff.fn = dlsym(lib, #fn))) { \
		snprintf(ff_why, sizeof(ff_why), "lib" #lib ": no function " #fn); \
		return; \
	}
	FF_FUNCS(FF_SYM)
#undef FF_SYM
	ff_loaded = 1;
}

/* 0 once FFmpeg's libraries are loaded, else SLAB_ERR_INVAL saying why in *err (if any). */
int slab_video_ready(struct slab_err *err)
{
	pthread_once(&ff_once, ff_load);
	if (ff_loaded)
		return 0;
	if (!err)
		return SLAB_ERR_INVAL;
	return slab_fail(err, SLAB_ERR_INVAL, NULL, "video needs FFmpeg's libraries: %s", ff_why);
}

/* The demuxer's reads go through a buffer of this size. */
#define IO_BUF 32768
/* The clip's start is draw START_DRAW of the sample's key: far from the crop's draws (0 .. 40),
 * so the start and the crop are drawn independently. */
#define START_DRAW (1ull << 40)
/* The most codec threads asked for that are honoured: each is a copy of the decoder's state. */
#define MAX_THREADS 64
/* Guards against a demuxer or decoder that goes round on hostile bytes (FFmpeg's can): per
 * pass (an open, or a seek, and what is read after it) the bytes the demuxer may read, as a
 * multiple of the video's size plus a constant, and the packets of the video stream, as a
 * multiple of its frames plus a constant. A sound file reads each byte about once. */
#define IO_TIMES 16
#define IO_EXTRA (16u << 20)
#define PACKETS_TIMES 2
#define PACKETS_EXTRA 256
/* Times within this many seconds count as equal when a frame is picked (a target half a frame
 * after a frame takes that frame, whatever the rounding of the two times). */
#define TIE_EPS 1e-6
/* A LOOP's target wrapped past the end within this many seconds of a target of the clip's first
 * pass over the video is that target (their times apart by the rounding of the wrap), and
 * picks its frame. */
#define SAME_TARGET 1e-9
/* decode_clip(): the clip must be decoded again without skipping frames. */
#define AGAIN 1
/* next_frame(): the clip must be decoded again from the start (d->linear). */
#define FROM_START 2

/* ---- FFmpeg's log ---------------------------------------------------------------------- */

/* The last error line FFmpeg logged on this thread (the decoder's own threads keep theirs). */
static _Thread_local char log_line[160];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_keep(void *avcl, int level, const char *fmt, va_list vl)
	__attribute__((format(printf, 3, 0)));

static void log_keep(void *avcl, int level, const char *fmt, va_list vl)
{
	size_t n;

	(void)avcl;
	if (level > AV_LOG_ERROR || !fmt)
		return;
	vsnprintf(log_line, sizeof(log_line), fmt, vl);
	n = strlen(log_line);
	while (n > 0 && (log_line[n - 1] == '\n' || log_line[n - 1] == ' ' || log_line[n - 1] == '.'))
		log_line[--n] = '\0';
}

static void log_init(void)
{
	ff.av_log_set_callback(log_keep);
}

/* ---- the bytes, as FFmpeg reads them ---------------------------------------------------- */

struct memio {
	const unsigned char *p;
	size_t len, pos;
	uint64_t served, budget;        /* bytes read in this pass, and the most allowed */
	int over;                       /* the budget ran out */
};

static int mem_read(void *opaque, uint8_t *buf, int size)
{
	struct memio *m = opaque;
	size_t n;

	if (m->served > m->budget) {
		m->over = 1;
		return AVERROR_EXIT;
	}
	if (m->pos >= m->len)
		return AVERROR_EOF;
	n = m->len - m->pos;
	if (n > (size_t)size)
		n = (size_t)size;
	memcpy(buf, m->p + m->pos, n);
	m->pos += n;
	m->served += n;
	return (int)n;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
	struct memio *m = opaque;
	int64_t to;

	switch (whence & ~AVSEEK_FORCE) {
	case AVSEEK_SIZE:
		return (int64_t)m->len;
	case SEEK_SET:
		to = offset;
		break;
	case SEEK_CUR:
		to = (int64_t)m->pos + offset;
		break;
	case SEEK_END:
		to = (int64_t)m->len + offset;
		break;
	default:
		return AVERROR(EINVAL);
	}
	if (to < 0)
		return AVERROR(EINVAL);
	/* Past the end is allowed (as lseek allows it): the next read says EOF. */
	m->pos = (uint64_t)to > m->len ? m->len : (size_t)to;
	return to;
}

/* No demuxer opens anything else (a playlist's segments, a QuickTime reference to another
 * file): the field's bytes are all there is. */
static int refuse_open(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
		       AVDictionary **options)
{
	(void)s;
	(void)pb;
	(void)url;
	(void)flags;
	(void)options;
	return AVERROR(EPERM);
}

/* ---- containers ------------------------------------------------------------------------ */

/* Whether the bytes start with three MPEG-TS packets: of 188 bytes, of 192 (M2TS: AVCHD
 * camcorders' .MTS, Blu-ray; a 4-byte time stamp before each) or of 204 (DVB's, 16 bytes of
 * Reed-Solomon after each), as FFmpeg's demuxer reads them all. */
static int ts_packets(const unsigned char *p, size_t len)
{
	static const unsigned size[] = { 188, 192, 204 };

	for (size_t i = 0; i < sizeof(size) / sizeof(size[0]); i++) {
		size_t at = size[i] == 192 ? 4 : 0;

		if (len > at + 2 * size[i] && p[at] == 0x47 && p[at + size[i]] == 0x47 &&
		    p[at + 2 * size[i]] == 0x47)
			return 1;
	}
	return 0;
}

/* The demuxer for the bytes, by their magic, or NULL: the pipeline reads these and no other
 * (FFmpeg's other demuxers are never asked, so none of them meets a field's bytes). */
static const char *demuxer_of(const unsigned char *p, size_t len)
{
	static const char boxes[][5] = { "ftyp", "moov", "mdat", "wide", "free", "skip" };

	if (len >= 8) {
		for (size_t i = 0; i < sizeof(boxes) / sizeof(boxes[0]); i++)
			if (memcmp(p + 4, boxes[i], 4) == 0)
				return "mov";
	}
	if (len >= 4 && p[0] == 0x1a && p[1] == 0x45 && p[2] == 0xdf && p[3] == 0xa3)
		return "matroska";
	if (len >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "AVI ", 4) == 0)
		return "avi";
	if (ts_packets(p, len))
		return "mpegts";
	if (len >= 9 && memcmp(p, "FLV\x01", 4) == 0)
		return "flv";
	if (len >= 4 && memcmp(p, "\0\0\1\xba", 4) == 0)
		return "mpeg";                  /* MPEG program stream: a pack header */
	if (len >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0))
		return "gif";
	return NULL;
}

int slab_video_probe(const void *data, size_t len)
{
	return data && demuxer_of(data, len) != NULL;
}

/* ---- the decoder ------------------------------------------------------------------------- */

struct slab_video_decoder {
	struct slab_err err;
	uint64_t max_pixels, max_frames;
	struct slab_image_decoder *img;         /* the resize and its scratch buffers */

	/* The open video: its bytes (data, len, sig), demuxer, stream and decoder. */
	const void *data;
	size_t len;
	uint64_t sig;
	struct memio io;
	AVIOContext *avio;
	AVFormatContext *fmt;
	int stream;
	AVRational tb;
	int64_t start;                          /* stream_start(), or frame 0's (linear) */
	struct slab_video_info info;
	double fps;
	AVCodecContext *cc;
	unsigned threads;                       /* cc's thread count */
	int fresh;                              /* nothing read since the open: at the start */
	int draining;                           /* the end reached, the decoder drained */
	uint64_t packets, budget;               /* this pass's video packets, and the most */
	uint64_t stream_packets;                /* the header's count, or counted: at least frames */
	/* The demuxer marks keyframe packets (keyed), and the packets after a seek are passed
	 * over up to the first of them (want_key): a demuxer without an index (MPEG-TS and
	 * -PS) seeks to any packet, and some decoders (HEVC's) make frames of what follows
	 * without the frames it refers to, where H.264's and MPEG-2's wait for a keyframe. */
	int keyed, want_key;
	/* A demuxer without an index (MPEG-TS, MPEG-PS) finds a time by searching the bytes
	 * for a packet's decode time, and lands on a packet after the keyframe before it (so
	 * that the first keyframe passed to is past the target) or, from the start, after
	 * the first keyframe. The count at open (count_frames()) notes where the stream's
	 * keyframe packets start and their presentation times, in the order read (keys,
	 * n_keys of them, room for cap_keys; none where the index was not needed or the
	 * demuxer cannot seek by bytes): seek_to() goes to the bytes of the one it wants. */
	struct key_pos { int64_t pos, pts; } *keys;
	size_t n_keys, cap_keys;
	/* The presentation time of the stream's first keyframe where packets come before it in
	 * decode order (a capture cut mid-group, an MP4 cut without an edit list): those are
	 * no frames (a decode shows none of them), the frames and their times start at that
	 * keyframe, and a pass from the start passes them over as after a seek. AV_NOPTS_VALUE
	 * where the first packet is a keyframe. */
	int64_t origin;
	/* Frames shown before this time (seconds from the stream's start) will not be picked:
	 * the decoder may leave out those no other frame refers to (skip_nonref()). */
	double skip_before;
	/* Frames shown at or after this time (seconds from the stream's start) are never left
	 * out: the video's last frame, where the clip has targets past it (PAD), which pick it
	 * (+inf for none). */
	double keep_from;
	int no_skip;                            /* SLAB_VIDEO_SKIP=0: decode every frame */
	/* slab_video_decoder_check(): every frame decoded (none left out, to the end of the
	 * stream), and one that does not decode whole fails the clip, picked or not. */
	int check;
	/* Skipping is off for the open video (unordered: a decoded frame's time went back, so
	 * the order frames are shown in is not their times') or for the clip being decoded
	 * again (full_clip); skipped_max is the latest time of a packet left out since the last
	 * seek (-inf for none). */
	int unordered, full_clip;
	double skipped_max;
	/* The frames' times do not step evenly at the rate they are numbered at (vfr: a GIF's
	 * delays, a phone's video, a pause): a target's pick is the nearer of the last frame
	 * before it (kept in before) and the first at or after it, and nothing is skipped. */
	int vfr;
	AVFrame *before;
	/* The pass began with a seek past the start (mid); the video's packets do not all
	 * carry a presentation time (linear: AVI with B-frames). A linear video's frames are
	 * numbered by the decode times of the packets they come out at (the decoder's
	 * guesses from presentation times that come and go would not do after a seek), from
	 * the first frame of a decode from the start (start then that frame's: dts_known);
	 * until that is known, a clip of it is decoded from the start. */
	int mid, linear, dts_known;
	/* An AVI (avi); one whose index came with its headers (indexed), whose entries are its
	 * chunks with bytes, one frame each: a linear AVI's frame is numbered by its packet's
	 * place among them (rank0: frame 0's), so that an empty chunk (a frame an encoder
	 * dropped or held back) is not a frame; without an index, by counting. */
	int avi, indexed;
	long rank0;
	/* The clip's pick thresholds, target k's at pick_t0 + k pick_step (pick_n of them; 0
	 * where the targets are not in order, as a LOOP that wraps), and for each, the earliest
	 * frame at or past it, in the part before the next, sure to be decoded since the last
	 * seek (pick_first, doubles; +inf for none): skip_nonref() leaves out a frame between
	 * two targets that a frame before it already answers. */
	double pick_t0, pick_step;
	unsigned pick_n;
	struct slab_scratch pick_first;
	/* A LOOP clip that wraps: the targets of its first pass over the video, in order, and
	 * the times of the frames they picked (doubles, two a target), so that a target wrapped
	 * onto one of them has that frame copied instead of decoded again. */
	struct slab_scratch lap;

	AVPacket *pkt;
	AVFrame *frame;                         /* the last frame decoded */
	AVFrame *next;                          /* the one being received */
	AVFrame *rgb;                           /* the conversion's output, width x height RGBA */
	struct SwsContext *sws;
	int sws_w, sws_h, sws_fmt, sws_cs, sws_range;
	struct slab_scratch planes;             /* one frame C x H x W, for chw */
	struct slab_video_stats st;
};

struct slab_video_decoder *slab_video_decoder_new(void)
{
	struct slab_video_decoder *d = calloc(1, sizeof(*d));
	const char *env;

	if (!d)
		return NULL;
	d->stream = -1;
	d->origin = AV_NOPTS_VALUE;
	slab_video_decoder_limits(d, 0, 0);
	/* A debugging aid (libslab(3), ENVIRONMENT): every frame decoded, as before frames were
	 * skipped; the same pixels, more time. */
	env = getenv("SLAB_VIDEO_SKIP");
	d->no_skip = env && strcmp(env, "0") == 0;
	d->img = slab_image_decoder_new();
	if (!d->img) {
		free(d);
		return NULL;
	}
	/* Without FFmpeg's libraries the decoder is made all the same: each call then fails
	 * saying why (slab_video_ready()). */
	if (slab_video_ready(&d->err) < 0)
		return d;
	pthread_once(&log_once, log_init);
	d->pkt = ff.av_packet_alloc();
	d->frame = ff.av_frame_alloc();
	d->next = ff.av_frame_alloc();
	d->rgb = ff.av_frame_alloc();
	d->before = ff.av_frame_alloc();
	if (!d->pkt || !d->frame || !d->next || !d->rgb || !d->before) {
		slab_video_decoder_free(d);
		return NULL;
	}
	return d;
}

void slab_video_decoder_limits(struct slab_video_decoder *d, uint64_t max_pixels,
			       uint64_t max_frames)
{
	d->max_pixels = max_pixels ? max_pixels : SLAB_IMAGE_MAX_PIXELS;
	d->max_frames = max_frames ? max_frames : SLAB_VIDEO_MAX_FRAMES;
}

void slab_video_decoder_check(struct slab_video_decoder *d, int every)
{
	d->check = every != 0;
}

const char *slab_video_error(const struct slab_video_decoder *d)
{
	return d->err.text;
}

/* Forget the open video: the next call opens its bytes afresh. */
static void close_video(struct slab_video_decoder *d)
{
	if (!d->frame)                  /* FFmpeg not loaded, or the decoder half made */
		return;
	ff.avcodec_free_context(&d->cc);
	ff.avformat_close_input(&d->fmt);
	if (d->avio) {
		ff.av_freep(&d->avio->buffer);
		ff.avio_context_free(&d->avio);
	}
	ff.av_frame_unref(d->frame);
	ff.av_frame_unref(d->next);
	ff.av_frame_unref(d->before);
	ff.av_packet_unref(d->pkt);
	d->data = NULL;
	d->len = 0;
	d->stream = -1;
	d->fresh = d->draining = 0;
}

void slab_video_decoder_free(struct slab_video_decoder *d)
{
	if (!d)
		return;
	close_video(d);
	if (ff_loaded) {
		ff.sws_freeContext(d->sws);
		ff.av_frame_free(&d->rgb);
		ff.av_frame_free(&d->frame);
		ff.av_frame_free(&d->next);
		ff.av_frame_free(&d->before);
		ff.av_packet_free(&d->pkt);
	}
	slab_scratch_free(&d->planes);
	slab_scratch_free(&d->pick_first);
	slab_scratch_free(&d->lap);
	free(d->keys);
	slab_image_decoder_free(d->img);
	free(d);
}

/* ---- errors ---------------------------------------------------------------------------- */

static int corrupt(struct slab_video_decoder *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int corrupt(struct slab_video_decoder *d, const char *fmt, ...)
{
	char reason[SLAB_ERR_TEXT - 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "corrupt video: %s", reason);
}

/* An FFmpeg error as ours: out of memory, our guards, or "corrupt video: FFmpeg's text",
 * with the line it logged last when it says more. */
static int fail_av(struct slab_video_decoder *d, int averr)
{
	char text[AV_ERROR_MAX_STRING_SIZE + 8];

	if (averr == AVERROR(ENOMEM))
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory decoding a video");
	if (d->io.over)
		return corrupt(d, "read past %d times its size", IO_TIMES);
	if (ff.av_strerror(averr, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "error %d", averr);
	/* FFmpeg's texts start with a capital; ours do not (unless an acronym). */
	if (text[0] >= 'A' && text[0] <= 'Z' && text[1] >= 'a' && text[1] <= 'z')
		text[0] = (char)(text[0] - 'A' + 'a');
	if (log_line[0] && strcmp(log_line, text) != 0)
		return corrupt(d, "%s (%s)", text, log_line);
	return corrupt(d, "%s", text);
}

/* ---- opening ----------------------------------------------------------------------------- */

/* A cheap fingerprint of the bytes: their length and their first and last 4 KiB (read anyway
 * by every demuxer), so that a decode after slab_video_info() on other bytes at the same
 * address is seen as another video. */
static uint64_t fingerprint(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t head = len < 4096 ? len : 4096, tail = len - head < 4096 ? len - head : 4096;

	for (size_t i = 0; i < head; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	for (size_t i = len - tail; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void new_pass(struct slab_video_decoder *d)
{
	d->io.served = 0;
	d->io.over = 0;
	d->packets = 0;
	d->draining = 0;
	d->want_key = d->origin != AV_NOPTS_VALUE;
}

/* The stream's start in its time base: its first keyframe's time where packets come before
 * it (d->origin), else the container's start time (0 where it gives none). */
static int64_t stream_start(const struct slab_video_decoder *d)
{
	int64_t t = d->origin != AV_NOPTS_VALUE ? d->origin : d->fmt->streams[d->stream]->start_time;

	return t != AV_NOPTS_VALUE ? t : 0;
}

/* The demuxer over the bytes, the video stream found: 0 or an error (the video closed). */
/* SLAB_ERR_LIMIT, said as the image pipeline says it ("video of WxH pixels (N): over the
 * limit of M pixels"), when a w x h frame (both > 0) is over the decoder's pixel limit; else 0. */
static int over_pixels(struct slab_video_decoder *d, int w, int h)
{
	const struct slab_image_limits lim = { .max_pixels = d->max_pixels, .max_scans = UINT_MAX };

	return slab_image_over_pixels("video", (uint32_t)w, (uint32_t)h, &lim, &d->err);
}

/*
 * Whether the container's headers, as avformat_open_input() read them, say all a clip needs of
 * its one video stream: codec, frame size, time base, start time and frame rate (MP4 and MOV
 * do). Then avformat_find_stream_info(), which for the rest decodes the first frame (for its
 * pixel format, which the decoder finds by itself) and reads ahead, is not needed: it would
 * change none of these (it estimates a rate or a start only where the demuxer gave none),
 * and costs as much as a few frames of the clip. With two video streams, the stream
 * av_find_best_stream() picks may depend on what it finds: then it runs.
 */
static int headers_suffice(const AVFormatContext *fmt)
{
	const AVStream *video = NULL;

	for (unsigned i = 0; i < fmt->nb_streams; i++) {
		const AVStream *st = fmt->streams[i];

		if (st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO ||
		    (st->disposition & AV_DISPOSITION_ATTACHED_PIC))
			continue;
		if (video)
			return 0;
		video = st;
	}
	return video && video->codecpar->codec_id != AV_CODEC_ID_NONE &&
	       video->codecpar->width > 0 && video->codecpar->height > 0 &&
	       video->time_base.num > 0 && video->time_base.den > 0 &&
	       video->start_time != AV_NOPTS_VALUE &&
	       video->avg_frame_rate.num > 0 && video->avg_frame_rate.den > 0;
}

static int open_demuxer(struct slab_video_decoder *d, const void *data, size_t len)
{
	const char *name = demuxer_of(data, len);
	const AVInputFormat *ifmt;
	AVDictionary **opts = NULL;
	unsigned char *buf;
	unsigned nopts = 0;
	int ret, s;

	close_video(d);
	log_line[0] = '\0';
	if (!name) {
		char first[32] = "";

		for (size_t i = 0; i < len && i < 4; i++)
			snprintf(first + strlen(first), sizeof(first) - strlen(first), "%s0x%02x",
				 i ? " " : "", ((const unsigned char *)data)[i]);
		return corrupt(d, "not MP4/MOV, Matroska/WebM, AVI, MPEG-TS, MPEG-PS, FLV or "
			       "GIF: starts with %s", first);
	}
	d->io = (struct memio){ .p = data, .len = len };
	d->io.budget = (uint64_t)len * IO_TIMES + IO_EXTRA;
	ifmt = ff.av_find_input_format(name);
	buf = ff.av_malloc(IO_BUF);
	if (!ifmt || !buf ||
	    !(d->avio = ff.avio_alloc_context(buf, IO_BUF, 0, &d->io, mem_read, NULL, mem_seek))) {
		ff.av_free(buf);
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory opening a video");
	}
	if (!(d->fmt = ff.avformat_alloc_context())) {
		close_video(d);
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory opening a video");
	}
	d->fmt->pb = d->avio;
	d->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	d->fmt->io_open = refuse_open;
	if ((ret = ff.avformat_open_input(&d->fmt, "", ifmt, NULL)) < 0) {
		ret = fail_av(d, ret);
		close_video(d);
		return ret;
	}
	/* The header's frame sizes, before anything decodes a frame; the decoders that
	 * avformat_find_stream_info() opens are held to the limit too. */
	for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
		const AVCodecParameters *cp = d->fmt->streams[i]->codecpar;

		if (cp->codec_type == AVMEDIA_TYPE_VIDEO && cp->width > 0 && cp->height > 0 &&
		    (ret = over_pixels(d, cp->width, cp->height)) < 0) {
			close_video(d);
			return ret;
		}
	}
	if (headers_suffice(d->fmt))
		goto found;
	nopts = d->fmt->nb_streams;
	if (nopts && !(opts = ff.av_calloc(nopts, sizeof(*opts)))) {
		close_video(d);
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory opening a video");
	}
	for (unsigned i = 0; i < nopts; i++)
		ff.av_dict_set_int(&opts[i], "max_pixels",
				d->max_pixels > INT64_MAX ? INT64_MAX : (int64_t)d->max_pixels, 0);
	ret = ff.avformat_find_stream_info(d->fmt, opts);
	for (unsigned i = 0; i < nopts; i++)
		ff.av_dict_free(&opts[i]);
	ff.av_free(opts);
	if (ret < 0) {
		ret = fail_av(d, ret);
		close_video(d);
		return ret;
	}
found:
	s = ff.av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (s < 0 || (d->fmt->streams[s]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
		close_video(d);
		return corrupt(d, "no video stream");
	}
	for (unsigned i = 0; i < d->fmt->nb_streams; i++)
		d->fmt->streams[i]->discard = (int)i == s ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
	d->stream = s;
	d->tb = d->fmt->streams[s]->time_base;
	if (d->tb.num <= 0 || d->tb.den <= 0) {
		close_video(d);
		return corrupt(d, "no time base");
	}
	d->start = stream_start(d);
	d->data = data;
	d->len = len;
	d->fresh = 1;
	d->mid = 0;
	new_pass(d);
	return 0;
}

/* A video of n frames over the frame limit: SLAB_ERR_LIMIT, saying so in d->err. */
static int over_frames(struct slab_video_decoder *d, uint64_t n)
{
	return slab_fail(&d->err, SLAB_ERR_LIMIT, NULL, "video of %llu frames: over the limit of "
			 "%llu frames", (unsigned long long)n, (unsigned long long)d->max_frames);
}

/* What the stream's packets, or its index's entries, say: how many (frames), how many of
 * them are shown (shown: an edit list marks the others), whether one has no presentation
 * time (nopts) and whether one is a keyframe (keys), and the smallest step between two of
 * their decode times in the stream's time base (step; 0 for none). */
struct packet_count {
	uint64_t frames, shown;
	int nopts, keys;
	int64_t step;
	int64_t last;                           /* the decode time counted last */
	int64_t first, max;                     /* the first and the latest decode times */
	int64_t end;                            /* index: the end of the last entry's bytes */
	/* Those before the first keyframe (lead, lead_shown of them shown: no frames where a
	 * keyframe follows), and that keyframe's decode time and, counting packets, its
	 * presentation time (key_dts, key_pts). */
	uint64_t lead, lead_shown;
	int64_t key_dts, key_pts;
};

static void count_start(struct packet_count *c)
{
	memset(c, 0, sizeof(*c));
	c->last = c->first = c->max = c->key_dts = c->key_pts = AV_NOPTS_VALUE;
}

/* One packet or entry more: its decode time (AV_NOPTS_VALUE for none), whether it is a
 * keyframe and whether it is shown. */
static void count_one(struct packet_count *c, int64_t dts, int key, int shown)
{
	c->frames++;
	c->shown += shown != 0;
	if (!c->keys && !key) {
		c->lead++;
		c->lead_shown += shown != 0;
	}
	if (!c->keys && key)
		c->key_dts = dts;
	c->keys |= key != 0;
	if (dts == AV_NOPTS_VALUE)
		return;
	if (c->last != AV_NOPTS_VALUE && dts > c->last && (c->step == 0 || dts - c->last < c->step))
		c->step = dts - c->last;
	c->last = dts;
	if (c->first == AV_NOPTS_VALUE)
		c->first = dts;
	if (c->max == AV_NOPTS_VALUE || dts > c->max)
		c->max = dts;
}

/* One keyframe packet more for d->keys (its start pos, its presentation time pts): 0, or
 * SLAB_ERR_NOMEM. */
static int note_key(struct slab_video_decoder *d, int64_t pos, int64_t pts)
{
	if (d->n_keys == d->cap_keys) {
		size_t cap = d->cap_keys ? 2 * d->cap_keys : 64;
		struct key_pos *k = cap <= SIZE_MAX / sizeof(*k) ?
				    realloc(d->keys, cap * sizeof(*k)) : NULL;

		if (!k)
			return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory for a "
					 "video's keyframes");
		d->keys = k;
		d->cap_keys = cap;
	}
	d->keys[d->n_keys++] = (struct key_pos){ pos, pts };
	return 0;
}

/* The stream's packets, by demuxing them all (no decoding): 0 or an error. Where the stream
 * has no index and the demuxer seeks by bytes, its keyframes are noted (d->keys); none if
 * one lacks a byte position or a presentation time, or they do not come in order. */
static int count_frames(struct slab_video_decoder *d, struct packet_count *c)
{
	int ret, note = !(d->fmt->iformat->flags & AVFMT_NO_BYTE_SEEK) &&
			ff.avformat_index_get_entries_count(d->fmt->streams[d->stream]) == 0;

	count_start(c);
	d->fresh = 0;
	d->n_keys = 0;
	while ((ret = ff.av_read_frame(d->fmt, d->pkt)) >= 0) {
		const AVPacket *k = d->pkt;

		if (k->stream_index == d->stream) {
			if (k->pts == AV_NOPTS_VALUE)
				c->nopts = 1;
			if (note && (k->flags & AV_PKT_FLAG_KEY)) {
				if (k->pos < 0 || k->pts == AV_NOPTS_VALUE || (d->n_keys &&
				    (k->pos <= d->keys[d->n_keys - 1].pos ||
				     k->pts <= d->keys[d->n_keys - 1].pts))) {
					note = 0;
					d->n_keys = 0;
				} else if ((ret = note_key(d, k->pos, k->pts)) < 0) {
					ff.av_packet_unref(d->pkt);
					return ret;
				}
			}
			if (!c->keys && (k->flags & AV_PKT_FLAG_KEY))
				c->key_pts = k->pts != AV_NOPTS_VALUE ? k->pts : k->dts;
			count_one(c, k->dts, k->flags & AV_PKT_FLAG_KEY, 1);
			if (c->frames > d->max_frames) {
				ff.av_packet_unref(d->pkt);
				return slab_fail(&d->err, SLAB_ERR_LIMIT, NULL, "video of more "
						 "than %llu frames: over the limit of %llu frames",
						 (unsigned long long)d->max_frames,
						 (unsigned long long)d->max_frames);
			}
		}
		ff.av_packet_unref(d->pkt);
	}
	return ret == AVERROR_EOF ? 0 : fail_av(d, ret);
}

/* The same from the demuxer's index, read with the headers (no packet is read; 0 frames
 * where there is none). An MP4 cut without decoding keeps the packets from the keyframe
 * before the cut, and after its end to the next frame decoded before the last one shown:
 * its edit list marks them, decoded for the frames that refer to them but never shown. An
 * AVI's entries are its chunks with bytes, their times in ticks. Whether packets carry
 * presentation times the index does not say: the first few packets do (peek_nopts()). */
static void index_count(AVStream *st, struct packet_count *c)
{
	int n = ff.avformat_index_get_entries_count(st);

	count_start(c);
	for (int i = 0; i < n; i++) {
		const AVIndexEntry *e = ff.avformat_index_get_entry(st, i);

		if (!e)
			continue;
		count_one(c, e->timestamp, e->flags & AVINDEX_KEYFRAME,
			  !(e->flags & AVINDEX_DISCARD_FRAME));
		if (e->pos >= 0 && e->pos + e->size > c->end)
			c->end = e->pos + e->size;
	}
}

/* Whether the frame times c counted (every frame's: an MP4's or AVI's index, or the packets)
 * vary at a rate of fps frames a second, their time base's tick tick seconds: a smallest step
 * other than a frame (by more than 1% and a tick, WebM's milliseconds rounding 1/30 s to 33
 * ms), or more time from the first to the last than their count at that rate (a pause,
 * frames dropped). */
static int rate_varies(const struct packet_count *c, double tick, double fps)
{
	if (c->step <= 0)
		return 0;
	return fabs((double)c->step * tick - 1 / fps) > 0.01 / fps + tick ||
	       (double)(c->max - c->first) * tick > ((double)c->frames - 0.5) / fps + tick;
}

/* Whether one of the stream's first PEEK_PACKETS packets has no presentation time: 1, 0,
 * or an error. The demuxer is left past them (d->fresh 0). */
#define PEEK_PACKETS 8
static int peek_nopts(struct slab_video_decoder *d)
{
	unsigned seen = 0;
	int ret, nopts = 0;

	d->fresh = 0;
	while (seen < PEEK_PACKETS && !nopts && (ret = ff.av_read_frame(d->fmt, d->pkt)) >= 0) {
		if (d->pkt->stream_index == d->stream) {
			seen++;
			nopts = d->pkt->pts == AV_NOPTS_VALUE;
		}
		ff.av_packet_unref(d->pkt);
	}
	if (!nopts && seen < PEEK_PACKETS && ret != AVERROR_EOF)
		return fail_av(d, ret);
	return nopts;
}

/* The presentation time of the stream's first keyframe, which an index places at decode time
 * dts (an index holds no presentation times): read from there, the demuxer left past it.
 * AV_NOPTS_VALUE where it cannot be found. */
static int64_t first_key_pts(struct slab_video_decoder *d, int64_t dts)
{
	int64_t pts = AV_NOPTS_VALUE;
	int found = 0;

	d->fresh = 0;
	if (dts == AV_NOPTS_VALUE ||
	    ff.av_seek_frame(d->fmt, d->stream, dts, AVSEEK_FLAG_BACKWARD) < 0)
		return AV_NOPTS_VALUE;
	while (!found && ff.av_read_frame(d->fmt, d->pkt) >= 0) {
		const AVPacket *k = d->pkt;

		if (k->stream_index == d->stream && (k->flags & AV_PKT_FLAG_KEY)) {
			pts = k->pts != AV_NOPTS_VALUE ? k->pts : k->dts;
			found = 1;
		}
		ff.av_packet_unref(d->pkt);
	}
	return pts;
}

/* Open the bytes and fill d->info: 0 or an error (the video closed). */
static int open_video(struct slab_video_decoder *d, const void *data, size_t len)
{
	struct slab_video_info *info = &d->info;
	const AVStream *st;
	const AVCodecParameters *cp;
	AVRational r = { 0, 0 };
	struct packet_count c;
	int ret, avi, cut = 0;

	if ((ret = slab_video_ready(&d->err)) < 0)
		return ret;
	if (!data || len == 0) {
		close_video(d);
		return corrupt(d, "no bytes");
	}
	d->origin = AV_NOPTS_VALUE;      /* the last video's */
	if ((ret = open_demuxer(d, data, len)) < 0)
		return ret;
	d->unordered = d->linear = d->dts_known = d->indexed = d->vfr = 0;
	d->rank0 = 0;
	d->n_keys = 0;
	d->keyed = 1;
	st = d->fmt->streams[d->stream];
	cp = st->codecpar;
	d->avi = avi = strcmp(d->fmt->iformat->name, "avi") == 0;
	memset(info, 0, sizeof(*info));
	if (cp->width <= 0 || cp->height <= 0) {
		close_video(d);
		return corrupt(d, "no frame size");
	}
	if ((ret = over_pixels(d, cp->width, cp->height)) < 0) {
		close_video(d);
		return ret;
	}
	info->width = (uint32_t)cp->width;
	info->height = (uint32_t)cp->height;
	snprintf(info->codec, sizeof(info->codec), "%s", ff.avcodec_get_name(cp->codec_id));
	if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
		info->duration = (double)st->duration * av_q2d(st->time_base);
	else if (d->fmt->duration != AV_NOPTS_VALUE && d->fmt->duration > 0)
		info->duration = (double)d->fmt->duration / AV_TIME_BASE;
	if (st->nb_frames > 0 && (uint64_t)st->nb_frames > d->max_frames) {
		ret = over_frames(d, (uint64_t)st->nb_frames);
		close_video(d);
		return ret;
	}
	/* The packets a clip may read are the stream's, shown or not (d->budget); the frames,
	 * those shown where the index marks some not (an edit list). */
	d->stream_packets = info->frames = st->nb_frames > 0 ? (uint64_t)st->nb_frames : 0;
	index_count(d->fmt->streams[d->stream], &c);
	/* An index (an MP4's sample table, an AVI's idx1, a WebM's cues) that places frames
	 * past the bytes: the file was cut short, and those frames are not there to decode. */
	if (c.end > (int64_t)len) {
		close_video(d);
		return corrupt(d, "cut short: its index places frames up to byte %lld, past its "
			       "%zu bytes", (long long)c.end, len);
	}
	d->indexed = avi && c.frames > 0;
	if (info->frames && c.shown > 0 && c.shown < c.frames)
		info->frames = c.shown;
	/* Counted where the header does not say, and in an AVI. An AVI has a chunk for each
	 * tick of its time base, empty where no frame is: its header counts those too. Where
	 * its packets lack presentation times (B-frames, or H.264 whatever its frames) its
	 * frames are numbered as they decode from the start (d->linear), so they are the
	 * packets counted, not the header's chunks (Xvid's packed B-frames begin with empty
	 * chunks for the frames the encoder held back). Where no two packets are a tick apart
	 * (H.264 copied into AVI by FFmpeg has a chunk every half frame, every other one
	 * empty), the frame rate is the packets' and the frames the packets counted. */
	if (!info->frames || avi) {
		if (avi && c.frames > 0) {
			if (c.frames > d->max_frames) {
				ret = over_frames(d, c.frames);
				close_video(d);
				return ret;
			}
			if ((ret = peek_nopts(d)) < 0) {
				close_video(d);
				return ret;
			}
			c.nopts = ret;
		} else if ((ret = count_frames(d, &c)) < 0) {
			close_video(d);
			return ret;
		}
		/* (an AVI without an index whose header counts more frames than its packets
		 * hold: cut short, the idx1 at its end gone with the rest; its frames are the
		 * packets there are) */
		cut = avi && !d->indexed && c.frames < info->frames;
		if (!info->frames || c.nopts || (avi && c.step > 1) || cut)
			info->frames = c.frames;
		if (c.frames > d->stream_packets)
			d->stream_packets = c.frames;
		if (avi && c.step > 1 && c.step <= INT_MAX / st->time_base.num)
			r = (AVRational){ st->time_base.den, st->time_base.num * (int)c.step };
		d->linear = c.nopts;
		d->keyed = c.keys;
	}
	/* Packets before the first keyframe: no frames, as a decode (ffmpeg's) shows none of
	 * them; the frames and their times start at that keyframe. Not where no packet is
	 * marked a keyframe (the decoder's to say), nor in a linear video (its frames are
	 * numbered from the first decoded). */
	if (c.keys && c.lead > 0 && !d->linear) {
		int64_t key = c.key_pts != AV_NOPTS_VALUE ? c.key_pts : first_key_pts(d, c.key_dts);

		if (key != AV_NOPTS_VALUE) {
			d->origin = d->start = key;
			info->frames = info->frames > c.lead_shown ? info->frames - c.lead_shown : 0;
			d->want_key = 1;
		}
	}
	if (info->frames == 0) {
		close_video(d);
		return corrupt(d, "no frames");
	}
	if (r.num <= 0 || r.den <= 0)
		r = st->avg_frame_rate;
	if (r.num <= 0 || r.den <= 0)
		r = st->r_frame_rate;
	if ((r.num <= 0 || r.den <= 0) && info->duration > 0)
		r = ff.av_d2q((double)info->frames / info->duration, 1 << 20);
	if (r.num <= 0 || r.den <= 0) {
		close_video(d);
		return corrupt(d, "no frame rate");
	}
	ff.av_reduce(&r.num, &r.den, r.num, r.den, INT32_MAX);
	info->fps_num = (uint32_t)r.num;
	info->fps_den = (uint32_t)r.den;
	d->fps = av_q2d(r);
	/* (decode_clip() also finds a varying rate from the frames, where nothing counted them
	 * all; a linear video's frames are numbered a frame apart whatever its times) */
	d->vfr = !d->linear && c.frames >= info->frames &&
		 rate_varies(&c, av_q2d(st->time_base), d->fps);
	/* (the container's duration counts the packets before a first keyframe too; its start
	 * time may be a guess from a frame decoded: MKV) */
	if (info->duration <= 0 || d->linear || cut || d->origin != AV_NOPTS_VALUE)
		info->duration = (double)info->frames / d->fps;
	d->sig = fingerprint(data, len);
	return 0;
}

int slab_video_info(struct slab_video_decoder *d, const void *data, size_t len,
		    struct slab_video_info *info)
{
	int ret = open_video(d, data, len);

	if (ret < 0)
		memset(info, 0, sizeof(*info));
	else
		*info = d->info;
	return ret;
}

/* ---- clip parameters ----------------------------------------------------------------------- */

void slab_video_spec_init(struct slab_video_spec *spec, uint32_t out_w, uint32_t out_h,
			  unsigned frames)
{
	memset(spec, 0, sizeof(*spec));
	spec->size = sizeof(*spec);
	slab_image_spec_init(&spec->image, out_w, out_h);
	spec->frames = frames;
	spec->stride = 1;
	spec->start = SLAB_VIDEO_START_RANDOM;
	spec->on_short = SLAB_VIDEO_SHORT_PAD;
}

int slab_video_spec_check(const struct slab_video_spec *s, struct slab_err *err)
{
	char text[96];

	if (!s) {
		snprintf(text, sizeof(text), "no video spec");
	} else if (s->size != 0 && s->size < SLAB_VIDEO_SPEC_FIRST) {
		snprintf(text, sizeof(text), "video spec of %zu %s: no such version", s->size,
			 slab_plural(s->size, "byte", "bytes"));
	} else if (s->image.out_w == 0 || s->image.out_h == 0 || s->image.out_w > 65535 ||
		   s->image.out_h > 65535) {
		snprintf(text, sizeof(text), "video frame size %ux%u", s->image.out_w, s->image.out_h);
	} else if (s->frames < 1 || s->frames > 65535) {
		snprintf(text, sizeof(text), "video clip of %u frames: 1 to 65535", s->frames);
	} else if (!(s->fps == 0 || (s->fps >= SLAB_VIDEO_MIN_FPS && s->fps <= SLAB_VIDEO_MAX_FPS))) {
		snprintf(text, sizeof(text), "video fps %g: wanted 0.000001 to 1000000, or 0 for a "
			 "stride", s->fps);
	} else if (s->fps == 0 && (s->stride < 1 || s->stride > 65535)) {
		snprintf(text, sizeof(text), "video stride %u: 1 to 65535", s->stride);
	} else if (s->start != SLAB_VIDEO_START_RANDOM && s->start != SLAB_VIDEO_START_CENTER &&
		   s->start != SLAB_VIDEO_START_BEGIN) {
		snprintf(text, sizeof(text), "video start %d: wanted 0 (random), 1 (center) or 2 "
			 "(begin)", s->start);
	} else if (s->on_short != SLAB_VIDEO_SHORT_PAD && s->on_short != SLAB_VIDEO_SHORT_LOOP &&
		   s->on_short != SLAB_VIDEO_SHORT_ERROR) {
		snprintf(text, sizeof(text), "video on_short %d: wanted 0 (pad), 1 (loop) or 2 "
			 "(error)", s->on_short);
	} else if (s->image.channels != 0 && s->image.channels != 3) {
		snprintf(text, sizeof(text), "video channels %u: clips are RGB (3)", s->image.channels);
	} else {
		return 0;
	}
	if (!err)
		return SLAB_ERR_INVAL;
	return slab_fail(err, SLAB_ERR_INVAL, NULL, "%s", text);
}

static int spec_ok(const struct slab_video_spec *s)
{
	return slab_video_spec_check(s, NULL) == 0 && slab_image_spec_ok(&s->image);
}

static int info_ok(const struct slab_video_info *info)
{
	return info && info->frames > 0 && info->width > 0 && info->height > 0 &&
	       info->fps_num > 0 && info->fps_den > 0;
}

/* The frames the clip spans in a video at fps frames a second: (frames - 1) stride + 1, or
 * up to the frame picked for the last time (frames - 1) / spec->fps after the first (the
 * frame of time t is the first at or after t less half a frame, at the nominal times
 * n / fps: n = ceil(t fps - 1/2), the small epsilon for the rounding of exact halves). */
static uint64_t span(const struct slab_video_spec *spec, double fps)
{
	double x;

	if (spec->fps == 0)
		return (uint64_t)(spec->frames - 1) * spec->stride + 1;
	x = ceil((spec->frames - 1) * fps / spec->fps - 0.5 - 1e-9);
	return x <= 0 ? 1 : x >= 1e18 ? UINT64_MAX : (uint64_t)x + 1;
}

uint64_t slab_video_span(const struct slab_video_spec *spec, const struct slab_video_info *info)
{
	return span(spec, info->fps_den ? (double)info->fps_num / info->fps_den : 0);
}

int slab_video_params(const struct slab_video_spec *spec, const struct slab_video_info *info,
		      uint64_t seed, uint64_t epoch, uint64_t index, struct slab_video_params *p)
{
	double fps;
	uint64_t n, s, first = 0;

	memset(p, 0, sizeof(*p));
	if (!spec_ok(spec) || !info_ok(info))
		return SLAB_ERR_INVAL;
	fps = (double)info->fps_num / info->fps_den;
	n = info->frames;
	s = span(spec, fps);
	if (s > n) {
		if (spec->on_short == SLAB_VIDEO_SHORT_ERROR)
			return SLAB_ERR_CORRUPT;
	} else if (spec->start == SLAB_VIDEO_START_RANDOM) {
		uint64_t starts = n - s + 1;
		uint64_t key = slab_image_key(seed, epoch, index);

		first = (uint64_t)(slab_image_unit(slab_image_draw(key, START_DRAW)) *
				   (double)starts);
		if (first >= starts)
			first = starts - 1;
	} else if (spec->start == SLAB_VIDEO_START_CENTER) {
		first = (n - s) / 2;
	}
	if (slab_image_params(&spec->image, info->width, info->height, seed, epoch, index,
			      &p->crop) != 0)
		return SLAB_ERR_INVAL;
	p->first = first;
	p->t0 = (double)first / fps;
	p->step = spec->fps > 0 ? 1.0 / spec->fps : (double)spec->stride / fps;
	return 0;
}

/* ---- decoding ------------------------------------------------------------------------------ */

/* The decoder for the open stream, with threads codec threads (0, 1: none). */
static int open_codec(struct slab_video_decoder *d, unsigned threads)
{
	const AVStream *st = d->fmt->streams[d->stream];
	const AVCodec *codec;
	int ret;

	threads = threads <= 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
	if (d->cc && d->threads == threads)
		return 0;
	ff.avcodec_free_context(&d->cc);
	if (!(codec = ff.avcodec_find_decoder(st->codecpar->codec_id)))
		return corrupt(d, "no decoder for %s", ff.avcodec_get_name(st->codecpar->codec_id));
	if (!(d->cc = ff.avcodec_alloc_context3(codec)))
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory opening a decoder");
	if ((ret = ff.avcodec_parameters_to_context(d->cc, st->codecpar)) < 0)
		return fail_av(d, ret);
	d->cc->pkt_timebase = st->time_base;
	d->cc->max_pixels = d->max_pixels > INT64_MAX ? INT64_MAX : (int64_t)d->max_pixels;
	d->cc->thread_count = (int)threads;
	d->cc->thread_type = FF_THREAD_FRAME;
	if ((ret = ff.avcodec_open2(d->cc, codec, NULL)) < 0) {
		ret = fail_av(d, ret);
		ff.avcodec_free_context(&d->cc);
		return ret;
	}
	d->threads = threads;
	/* A new decoder starts where the demuxer is only from the start. */
	return 0;
}

/* The time of a decoded frame in seconds from the stream's start, or prev plus a frame when
 * it has no timestamp. frame_ts(): its timestamp (a linear video's: the decode time of the
 * packet it came out at), or AV_NOPTS_VALUE. */
static int64_t frame_ts(const struct slab_video_decoder *d, const AVFrame *f)
{
	if (d->linear)
		return f->pkt_dts;
	return f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp : f->pts;
}

/* Whether frame f is a keyframe: AVFrame's flag from FFmpeg 6.1 (libavutil 58.29), where its
 * key_frame field is deprecated; key_frame before. */
static int frame_is_key(const AVFrame *f)
{
#ifdef AV_FRAME_FLAG_KEY
	return (f->flags & AV_FRAME_FLAG_KEY) != 0;
#else
	return f->key_frame != 0;
#endif
}

/* The place of the packet with decode time ts among a linear AVI's chunks with bytes
 * (d->indexed), or -1. */
static long chunk_rank(const struct slab_video_decoder *d, int64_t ts)
{
	if (!d->indexed || ts == AV_NOPTS_VALUE)
		return -1;
	return ff.av_index_search_timestamp(d->fmt->streams[d->stream], ts,
					    AVSEEK_FLAG_ANY | AVSEEK_FLAG_BACKWARD);
}

static double frame_time(const struct slab_video_decoder *d, const AVFrame *f, double prev)
{
	int64_t ts = frame_ts(d, f);
	long r;

	if (d->linear && d->avi) {
		/* Numbered by its chunk where the index says, else counted. */
		if (d->dts_known && (r = chunk_rank(d, ts)) >= 0)
			return (double)(r - d->rank0) / d->fps;
		return prev + 1.0 / d->fps;
	}
	if (ts == AV_NOPTS_VALUE)
		return prev + 1.0 / d->fps;
	return (double)(ts - d->start) * av_q2d(d->tb);
}

/* The bucket of a frame shown at time t (seconds): the last target whose pick threshold is at
 * or before t + slack, clamped to the clip's targets; -1 before the first. */
static long pick_bucket(const struct slab_video_decoder *d, double t, double slack)
{
	double r = (t + slack - d->pick_t0) / d->pick_step;

	if (!(r >= 0))
		return -1;
	return r >= d->pick_n - 1 ? (long)d->pick_n - 1 : (long)r;
}

/* Before d->pkt goes to the decoder: a packet whose frame no target will pick is sent with
 * AVDISCARD_NONREF, so that the decoder drops it unread when no other frame refers to it (an
 * H.264 or MPEG-4 B-frame that is not a reference: about half the frames x264 makes by
 * default); reference frames decode as before, so every frame decoded, and every pixel of the
 * clip, is what it would be without. A frame is picked by none when it is shown before
 * d->skip_before (the threshold of the target being looked for: the targets after it are
 * later), or when a frame sure to be decoded is shown at or past the threshold of the last
 * target before it, and before it: that one, or one before, is every such target's pick (the
 * frames between the sampled ones at a stride, which the decoder's reordering has it read
 * before the target before them is out). This is where seeking to the keyframe before a clip
 * costs: the frames between that keyframe and the clip's start, and, at a stride, the frames
 * between the sampled ones. The packet's presentation time must be known and every time is
 * taken a quarter of a frame towards decoding (a frame's time may differ from its packet's by
 * a rounding). The first frame after a seek is always decoded (skip_before 0). All of this
 * counts on frames being shown in the order of their times, as in every well-formed file;
 * decode_clip() turns skipping off where a decoded frame's time goes back, and decodes a clip
 * again whose end would have been a frame left out. */
static void skip_nonref(struct slab_video_decoder *d)
{
	const AVPacket *k = d->pkt;
	double m = 0.25 / d->fps, t, *first = d->pick_first.p;
	int skip = 0;
	long b;

	if (k->pts == AV_NOPTS_VALUE || d->no_skip || d->check || d->unordered || d->full_clip || d->linear ||
	    d->vfr) {
		d->cc->skip_frame = AVDISCARD_DEFAULT;
		return;
	}
	t = (double)(k->pts - d->start) * av_q2d(d->tb);
	if (d->skip_before > 0 && t < d->keep_from - m) {
		skip = t < d->skip_before - m;
		if (!skip && d->pick_n && (b = pick_bucket(d, t, m)) >= 0)
			skip = first[b] < t - 2 * m;
	}
	/* Sent without leave to drop it: its frame will be decoded. Its bucket takes the
	 * earliest such, counting it from a quarter frame earlier. */
	if (!skip && d->pick_n && (b = pick_bucket(d, t, -m)) >= 0 && t < first[b])
		first[b] = t;
	if (skip && t > d->skipped_max)
		d->skipped_max = t;
	d->cc->skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
}

/* The next frame in presentation order into d->frame: 1; 0 at the end of the stream (d->frame
 * still the last one); FROM_START when a packet without a presentation time turns up in a pass
 * that began with a seek past the start; or an error. */
static int next_frame(struct slab_video_decoder *d)
{
	int ret;

	for (;;) {
		ret = ff.avcodec_receive_frame(d->cc, d->next);
		if (ret == 0) {
			/* (where the rate varies, the frame before is kept: decode_clip()) */
			if (d->vfr) {
				ff.av_frame_unref(d->before);
				ff.av_frame_move_ref(d->before, d->frame);
			} else {
				ff.av_frame_unref(d->frame);
			}
			ff.av_frame_move_ref(d->frame, d->next);
			d->st.decoded++;
			return 1;
		}
		if (ret == AVERROR_EOF)
			return 0;
		if (ret != AVERROR(EAGAIN))
			return fail_av(d, ret);
		if (d->draining)
			return 0;
		ret = ff.av_read_frame(d->fmt, d->pkt);
		d->fresh = 0;
		if (ret == AVERROR_EOF) {
			d->draining = 1;
			if ((ret = ff.avcodec_send_packet(d->cc, NULL)) < 0 && ret != AVERROR_EOF)
				return fail_av(d, ret);
			continue;
		}
		if (ret < 0)
			return fail_av(d, ret);
		if (d->pkt->stream_index != d->stream) {
			ff.av_packet_unref(d->pkt);
			continue;
		}
		if (d->pkt->pts == AV_NOPTS_VALUE && !d->linear) {
			/* No presentation time: the decoder guesses the frames' times, right
			 * only when it has decoded from the start. */
			d->linear = 1;
			if (d->mid || d->skipped_max > -HUGE_VAL) {
				ff.av_packet_unref(d->pkt);
				return FROM_START;
			}
		}
		if (++d->packets > d->budget) {
			ff.av_packet_unref(d->pkt);
			return corrupt(d, "more than %llu packets for a clip of a video of %llu %s",
				       (unsigned long long)d->budget,
				       (unsigned long long)d->info.frames,
				       slab_plural(d->info.frames, "frame", "frames"));
		}
		if (d->want_key) {
			if (!(d->pkt->flags & AV_PKT_FLAG_KEY)) {
				ff.av_packet_unref(d->pkt);
				continue;
			}
			d->want_key = 0;
		}
		skip_nonref(d);
		ret = ff.avcodec_send_packet(d->cc, d->pkt);
		ff.av_packet_unref(d->pkt);
		if (ret < 0 && ret != AVERROR(EAGAIN))
			return fail_av(d, ret);
	}
}

/* Time t (seconds from the stream's start, 0 and before: the start) in the stream's time
 * base, for a seek: from the stream's start time even where frame 0 comes out at a later
 * packet (d->linear), since a keyframe's packet is where its frame is shown, or before. */
static int64_t stream_ts(const struct slab_video_decoder *d, double t)
{
	int64_t t0 = stream_start(d);

	return t <= 0 ? t0 : t0 + (int64_t)floor(t / av_q2d(d->tb));
}

/* Whether a seek to time t would start decoding past the start: the index an AVI's headers
 * hold has a keyframe after the one of the start at or before t. Not an index a demuxer
 * makes as it reads (MPEG-PS's; an AVI without one: every packet a keyframe to it). */
static int key_past_start(const struct slab_video_decoder *d, double t)
{
	AVStream *st = d->fmt->streams[d->stream];
	int a, b;

	if (!d->indexed)
		return 0;
	a = ff.av_index_search_timestamp(st, stream_ts(d, 0), AVSEEK_FLAG_BACKWARD);
	b = ff.av_index_search_timestamp(st, stream_ts(d, t), AVSEEK_FLAG_BACKWARD);
	return b >= 0 && b > a;
}

/* The last of d->keys (n_keys > 0) shown at or before ts, the stream's time; the first
 * where none is. */
static size_t key_before(const struct slab_video_decoder *d, int64_t ts)
{
	size_t lo = 0, hi = d->n_keys;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->keys[mid].pts <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Position the demuxer and decoder so that the next frames are the first at or after time t
 * (from the keyframe before it): t <= 0 goes back to the start, by opening the bytes again
 * with reopen (a demuxer's seek to the start may land late: MPEG-TS). Where the keyframes'
 * bytes are known (d->keys), to those of the last shown at or before t (the first for the
 * start). 0 or an error. */
static int seek_to(struct slab_video_decoder *d, double t, int reopen)
{
	int64_t ts;
	int ret;

	ff.av_frame_unref(d->frame);
	if (d->fresh && t <= 0)
		return 0;                       /* just opened: at the start already */
	d->st.seeks++;
	new_pass(d);
	d->mid = t > 0;
	ts = stream_ts(d, t);
	if (reopen && t <= 0)
		ret = -1;
	else if (d->n_keys && !d->linear)
		ret = ff.av_seek_frame(d->fmt, d->stream,
				       d->keys[t <= 0 ? 0 : key_before(d, ts)].pos, AVSEEK_FLAG_BYTE);
	else
		ret = ff.av_seek_frame(d->fmt, d->stream, ts, AVSEEK_FLAG_BACKWARD);
	if (ret < 0 && t > 0) {
		/* No keyframe at or before t that the demuxer knows of (a stream whose first
		 * packets are not keyframes: an MP4 cut without an edit list, a capture cut
		 * mid-group): from the start, as a seek there would. */
		t = 0;
		d->mid = 0;
	}
	if (ret < 0 && t <= 0) {
		/* Back to the start when the demuxer cannot say: open the bytes again. */
		const void *data = d->data;
		size_t len = d->len;
		struct slab_video_info info = d->info;
		double fps = d->fps;
		uint64_t sig = d->sig;
		unsigned threads = d->threads;
		int64_t start = d->start;

		if ((ret = open_demuxer(d, data, len)) < 0)
			return ret;
		d->info = info;
		d->fps = fps;
		d->sig = sig;
		if (d->dts_known)
			d->start = start;
		return open_codec(d, threads);
	}
	if (ret < 0)
		return fail_av(d, ret);
	ff.avcodec_flush_buffers(d->cc);
	d->want_key = d->keyed;
	return 0;
}

/* The RGBA rows of frame f that hold crop p (all of them with exact), converted by libswscale
 * (as the whole frame would be: the conversion is set up for the whole frame and asked for
 * those rows only), and handed to the image pipeline into out. A frame of another size than
 * the video's (its size changes part way: streams put end to end, a resolution switch) has
 * the crop scaled to it, the same part of the picture (a fractional box, as a JPEG decoded
 * at a reduced scale has), and gives the same output size; the conversion is set up again
 * for it. */
static int emit(struct slab_video_decoder *d, const AVFrame *f, const struct slab_image_spec *spec,
		const struct slab_image_params *p, unsigned char *out)
{
	struct slab_image_region r;
	unsigned align;
	uint32_t y0, y1, H = (uint32_t)f->height;
	const AVPixFmtDescriptor *desc = ff.av_pix_fmt_desc_get(f->format);
	int cs = f->colorspace, range = f->color_range == AVCOL_RANGE_JPEG, ret;
	double sx = (double)f->width / d->info.width, sy = (double)f->height / d->info.height;
	double cx0 = p->x * sx, cx1 = ((double)p->x + p->w) * sx;
	double cy0 = p->y * sy, cy1 = ((double)p->y + p->h) * sy;

	if (f->width <= 0 || f->height <= 0)
		return corrupt(d, "a frame of %dx%d", f->width, f->height);
	/* RGB frames (FFV1's, VP9's and HEVC's GBR 4:4:4, 16-bit PNG) are RGB already: where
	 * libswscale has no direct path to RGBA (planar RGB of 9 to 16 bits) it goes through
	 * YUV, from RGB by the destination's matrix and range and back by the source's, so the
	 * two must be the same, full range (GBR frames say AVCOL_SPC_RGB, whose entry in
	 * libswscale's table is BT.709's against the default BT.601: colours shifted by up to
	 * 40 levels). */
	if (cs == AVCOL_SPC_RGB || (desc && (desc->flags & AV_PIX_FMT_FLAG_RGB))) {
		cs = SWS_CS_DEFAULT;
		range = 1;
	}
	/* (the nearest resize picks whole pixels of a box of whole pixels: the nearest box) */
	if (spec->resize == SLAB_IMAGE_RESIZE_NEAREST && (sx != 1 || sy != 1)) {
		cx0 = floor(cx0 + 0.5);
		cx1 = fmax(floor(cx1 + 0.5), cx0 + 1);
		cy0 = floor(cy0 + 0.5);
		cy1 = fmax(floor(cy1 + 0.5), cy0 + 1);
	}
	if (!d->sws || d->sws_w != f->width || d->sws_h != f->height || d->sws_fmt != f->format ||
	    d->sws_cs != cs || d->sws_range != range) {
		ff.sws_freeContext(d->sws);
		d->sws = ff.sws_getContext(f->width, f->height, f->format, f->width, f->height,
					AV_PIX_FMT_RGBA, SWS_BICUBIC, NULL, NULL, NULL);
		if (!d->sws)
			return corrupt(d, "cannot convert %s frames to RGB",
				       ff.av_get_pix_fmt_name(f->format) ? ff.av_get_pix_fmt_name(f->format) :
				       "unknown");
		/* The frame's colour matrix and range (an unknown one: BT.601, studio range). */
		ff.sws_setColorspaceDetails(d->sws, ff.sws_getCoefficients(cs), range,
					 ff.sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
		d->sws_w = f->width;
		d->sws_h = f->height;
		d->sws_fmt = f->format;
		d->sws_cs = cs;
		d->sws_range = range;
	}
	if (d->rgb->width != f->width || d->rgb->height != f->height || !d->rgb->buf[0]) {
		ff.av_frame_unref(d->rgb);
		d->rgb->width = f->width;
		d->rgb->height = f->height;
		d->rgb->format = AV_PIX_FMT_RGBA;
		/* Rows padded as FFmpeg pads them (align 0): libswscale's SIMD converters write
		 * whole blocks of pixels and, where a row has no room for the last block, leave
		 * the row's last pixels unconverted (FFmpeg 5.1's yuv420p to RGBA leaves the last
		 * 4 of a 340-pixel row: stale memory, different from run to run). */
		if ((ret = ff.av_frame_get_buffer(d->rgb, 0)) < 0)
			return fail_av(d, ret);
		if (d->rgb->linesize[0] % 4 != 0 || d->rgb->linesize[0] < 4 * f->width) {
			ff.av_frame_unref(d->rgb);
			return corrupt(d, "a row of %d RGBA pixels in %d bytes", f->width,
				       d->rgb->linesize[0]);
		}
	}
	align = ff.sws_receive_slice_alignment(d->sws);
	y0 = spec->exact ? 0 : (uint32_t)floor(cy0) / align * align;
	y1 = spec->exact ? H : ((uint32_t)ceil(cy1) + align - 1) / align * align;
	if (y1 > H)
		y1 = H;
	if ((ret = ff.sws_frame_start(d->sws, d->rgb, f)) < 0 ||
	    (ret = ff.sws_send_slice(d->sws, 0, H)) < 0 ||
	    (ret = ff.sws_receive_slice(d->sws, y0, y1 - y0)) < 0) {
		ff.sws_frame_end(d->sws);
		return fail_av(d, ret);
	}
	ff.sws_frame_end(d->sws);
	d->st.converted++;
	memset(&r, 0, sizeof(r));
	/* The region is the rows with their padding as more columns: the pipeline's rows are
	 * back to back, and its crop box, which it never reads past, lies in the frame. */
	r.px = d->rgb->data[0] + (size_t)y0 * (size_t)d->rgb->linesize[0];
	r.bw = (uint32_t)d->rgb->linesize[0] / 4;
	r.bh = y1 - y0;
	r.x0 = cx0;
	r.x1 = cx1;
	r.y0 = cy0 - y0;
	r.y1 = cy1 - y0;
	r.pixel = 4;
	if ((ret = slab_image_finish(d->img, &r, spec, p->flip, out)) < 0)
		return slab_fail_from(&d->err, ret, slab_image_error(d->img));
	return 0;
}

/* Frame k of the clip as its frame j, already made (T x H x W x 3, or C x T x H x W). */
static void copy_frame(const struct slab_video_spec *spec, unsigned char *out, unsigned j,
		       unsigned k)
{
	size_t plane = (size_t)spec->image.out_w * spec->image.out_h, frame = plane * 3;

	if (!spec->image.chw) {
		memcpy(out + k * frame, out + j * frame, frame);
		return;
	}
	for (unsigned c = 0; c < 3; c++)
		memcpy(out + (c * (size_t)spec->frames + k) * plane,
		       out + (c * (size_t)spec->frames + j) * plane, plane);
}

/* Frame k of the clip, made from the picked frame into out (T x H x W x 3), or into
 * d->planes and from there to each plane's place (C x T x H x W); again = the frame of
 * target k - 1, already made: copied. */
static int put_frame(struct slab_video_decoder *d, const AVFrame *f,
		     const struct slab_video_spec *spec, const struct slab_video_params *p,
		     unsigned char *out, unsigned k, int again)
{
	size_t plane = (size_t)spec->image.out_w * spec->image.out_h, frame = plane * 3;
	int ret;

	if (again) {
		copy_frame(spec, out, k - 1, k);
		return 0;
	}
	if (!spec->image.chw)
		return emit(d, f, &spec->image, &p->crop, out + k * frame);
	if (slab_scratch_reserve(&d->planes, frame) < 0)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory for a frame");
	if ((ret = emit(d, f, &spec->image, &p->crop, d->planes.p)) < 0)
		return ret;
	for (unsigned c = 0; c < 3; c++)
		memcpy(out + (c * (size_t)spec->frames + k) * plane,
		       (unsigned char *)d->planes.p + c * plane, plane);
	return 0;
}

/* The target of the first pass (lap: n of them, target and pick times in pairs, the targets
 * increasing) that t is (within SAME_TARGET), or -1. */
static long lap_target(const double *lap, unsigned n, double t)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {               /* the first target at or past t - SAME_TARGET */
		unsigned mid = lo + (hi - lo) / 2;

		if (lap[2 * mid] < t - SAME_TARGET)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && lap[2 * lo] <= t + SAME_TARGET ? (long)lo : -1;
}

/* How far a frame's time may lie from its true one: TIE_EPS, and half a tick of a time base
 * coarser than a hundredth of a frame (WebM's milliseconds) but finer than half of one; a
 * frame within it of a target less half a frame is taken (the earlier of two as near). */
static double tie_slack(const struct slab_video_decoder *d)
{
	double g = av_q2d(d->tb) * d->fps;

	return TIE_EPS + (g > 0.01 && g < 0.5 ? 0.5 * av_q2d(d->tb) : 0);
}

/* Whether two frames dt seconds apart are not a whole number of frames apart at the rate the
 * video's frames are numbered at (within a quarter frame): its rate varies. */
static int uneven(const struct slab_video_decoder *d, double dt)
{
	double g = dt * d->fps;

	return g > 0 && fabs(g - floor(g + 0.5)) > 0.25;
}

/* A frame shown at t that does not decode whole: an error (d->err); else 0. */
static int whole(struct slab_video_decoder *d, const AVFrame *f, double t)
{
	if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT))
		return corrupt(d, "the frame at %.3f s does not decode whole", t);
	return 0;
}

/* The clip: targets t_k = t0 + k step (wrapped past the end under LOOP), each given the frame
 * nearest to t_k (the earlier of two as near); past the end, the last frame. Where frames are
 * a frame apart, that is the first frame whose time is at or after t_k less half a frame;
 * where the rate varies (d->vfr), the nearer of the last frame before t_k and the first at or
 * after it. */
static int decode_clip(struct slab_video_decoder *d, const struct slab_video_spec *spec,
		       const struct slab_video_params *p, unsigned char *out)
{
	double half = 0.5 / d->fps, n = (double)d->info.frames, prev_t = -1, cur_t = 0;
	double before_t = 0, made_t = NAN, slack = tie_slack(d);
	int have = 0, have_before = 0, eof = 0, ret;
	int past = (p->t0 + (spec->frames - 1) * p->step) * d->fps + 0.5 >= n;
	int wraps = past && spec->on_short == SLAB_VIDEO_SHORT_LOOP;
	unsigned made_k = 0, lap_n = 0;
	double *lap = NULL;

	d->budget = d->stream_packets * PACKETS_TIMES + PACKETS_EXTRA;
	/* Targets past the last frame (PAD) pick it: no frame shown from half a frame before its
	 * time is left out, so that a decode that reaches the end has it (else the clip would be
	 * decoded again, whole, for it). */
	d->keep_from = past && !wraps ? (n - 1) / d->fps - half - TIE_EPS : HUGE_VAL;
	/* A LOOP that wraps: its first pass's targets, for the targets wrapped onto them. */
	if (wraps) {
		if (slab_scratch_reserve(&d->lap, (size_t)spec->frames * 2 * sizeof(double)) < 0)
			return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory for a clip's "
					 "%u targets", spec->frames);
		lap = d->lap.p;
	}
	/* The targets' pick thresholds in order, for skip_nonref(): not where a LOOP wraps. */
	d->pick_n = 0;
	if (p->step > 0 && !wraps) {
		if (slab_scratch_reserve(&d->pick_first, (size_t)spec->frames * sizeof(double)) < 0)
			return slab_fail(&d->err, SLAB_ERR_NOMEM, NULL, "out of memory for a clip's "
					 "%u %s", spec->frames,
					 slab_plural(spec->frames, "target", "targets"));
		d->pick_n = spec->frames;
		d->pick_t0 = p->t0 - half - TIE_EPS;
		d->pick_step = p->step;
	}
	for (unsigned k = 0; k < spec->frames; k++) {
		double t = p->t0 + k * p->step, x = t * d->fps, pick_t;
		const AVFrame *pick;
		long same;

		if (spec->on_short == SLAB_VIDEO_SHORT_LOOP && x + 0.5 >= n) {
			t = (x - n * floor((x + 0.5) / n)) / d->fps;
			/* A target of the first pass again: its frame, made already. The decoder
			 * stays where it is (prev_t): the next target decoded seeks if it must. */
			if ((same = lap_target(lap, lap_n, t)) >= 0) {
				copy_frame(spec, out, (unsigned)same, k);
				made_t = lap[2 * same + 1];
				made_k = k;
				continue;
			}
		} else if (lap) {
			lap_n = k + 1;          /* (filled below, before it is read) */
		}
		if (k == 0 || t < prev_t) {
			/* The first target, or back to the start (LOOP): seek, then check that
			 * the first frame decoded is not past the target (the demuxer may land
			 * late); back off further until it is, or from the start, and from the
			 * start by opening the bytes again if the seek there lands late too. A
			 * video whose frames' times are sure only from the start (d->linear) is
			 * decoded from the start until they are (d->dts_known), then seeks as
			 * any other where its index has a keyframe past the start's. */
			double back = 0, at;
			int reopen = d->linear, from_start, known;

			for (;;) {
				/* First to the target itself, so that a clip starting on a keyframe
				 * starts decoding there, not at the keyframe before: the same frames
				 * where keyframes start closed groups (no frame decoded after a
				 * keyframe is shown before it: H.264 IDR frames, VP8/VP9 keyframes,
				 * as x264 and libvpx make them); with open groups a frame shown less
				 * than half a frame before the keyframe would be passed over. */
				at = d->linear && !(d->dts_known && key_past_start(d, t)) ? 0 :
				     back ? t - half - back : t;
				d->skip_before = 0;     /* the first frame after the seek: decoded */
				d->skipped_max = -HUGE_VAL;
				for (unsigned j = 0; j < d->pick_n; j++)
					((double *)d->pick_first.p)[j] = HUGE_VAL;
				from_start = at <= 0 && (d->fresh || reopen);
				if ((ret = seek_to(d, at, reopen)) < 0)
					return ret;
				have = eof = have_before = 0;
				made_t = NAN;
				if ((ret = next_frame(d)) < 0)
					return ret;
				if (ret == FROM_START)
					return AGAIN;
				if (ret == 0 && from_start)
					return corrupt(d, "no frame decodes");
				if (ret == 1) {
					have = 1;
					/* A linear video's frame 0 is the first frame decoded, and
					 * its packet's decode time numbers the others (AVI with
					 * B-frames: the decoder holds a frame back, so frame 0
					 * comes out at the second packet). */
					known = d->dts_known;
					if (d->linear && from_start) {
						d->start = d->frame->pkt_dts;
						d->dts_known = d->start != AV_NOPTS_VALUE;
						if (!d->dts_known)
							d->start = stream_start(d);
						d->rank0 = chunk_rank(d, d->start);
						if (d->rank0 < 0)
							d->indexed = 0;
					}
					cur_t = frame_time(d, d->frame, -1.0 / d->fps);
					if (d->check && (ret = whole(d, d->frame, cur_t)) < 0)
						return ret;
					/* Now that its frames' times are known, a seek. */
					if (d->linear && from_start && !known && d->dts_known &&
					    key_past_start(d, t))
						continue;
					/* Its index's keyframes are taken on trust: the first frame
					 * of a seek that is not one (a muxer that marks every chunk),
					 * or whose packet the index does not hold, has the clip
					 * decoded again from the start, as the video's clips are
					 * from here on. */
					if (d->linear && !from_start && (!frame_is_key(d->frame) ||
					    (d->avi && chunk_rank(d, d->frame->pkt_dts) < 0))) {
						d->indexed = 0;
						return AGAIN;
					}
					/* (where the rate varies, the frame before the target
					 * may be the nearer: the first frame must not be past it) */
					if (cur_t <= t + (d->vfr ? 0 : half) + TIE_EPS || from_start)
						break;
				}
				if (at <= 0)
					reopen = 1;
				else
					back = back ? 2 * back : 1;
			}
		}
		prev_t = t;
		/* No frame shown before this target's threshold is picked from here on (the
		 * targets after it are later, until a LOOP wraps, which seeks). */
		d->skip_before = t - half - TIE_EPS;
		/* Decode until a frame is at or past the target less half a frame (a frame at
		 * exactly that time is taken: TIE_EPS keeps the rounding of times out of it),
		 * where the rate varies the target itself, or the end. */
		while (!eof && cur_t < t - (d->vfr ? 0 : half) - slack) {
			double was = cur_t;
			int had = have, kept = d->vfr;

			if ((ret = next_frame(d)) < 0)
				return ret;
			if (ret == FROM_START)
				return AGAIN;
			if (ret == 0) {
				/* The last frame is picked from here on: a frame left out and
				 * shown after it would have been the last. */
				if (d->skipped_max > cur_t - 0.25 / d->fps)
					return AGAIN;
				eof = 1;
				break;
			}
			cur_t = frame_time(d, d->frame, cur_t);
			if (d->check && (ret = whole(d, d->frame, cur_t)) < 0)
				return ret;
			/* A time going back: frames are not shown in the order of their times
			 * (a damaged or badly muxed file), which skip_nonref() counts on. Nothing
			 * is skipped in this video from here on, and the clip is decoded again
			 * where something was. */
			if (cur_t < was && !d->unordered) {
				d->unordered = 1;
				if (d->skipped_max > -HUGE_VAL)
					return AGAIN;
			}
			/* Frames not a whole number of frames apart: the rate varies. The
			 * clip again where a frame was picked or skipped by the even rate's
			 * rule; from here on, the frame before is kept. */
			if (!d->vfr && had && uneven(d, cur_t - was)) {
				d->vfr = 1;
				if (d->skipped_max > -HUGE_VAL || k > 0)
					return AGAIN;
			}
			if (kept) {
				before_t = was;
				have_before = had;
			}
			have = 1;
		}
		if (!have)
			return corrupt(d, "no frame decodes");
		pick = d->frame;
		pick_t = cur_t;
		if (d->vfr && have_before && before_t < t && t - before_t <= cur_t - t + TIE_EPS) {
			pick = d->before;
			pick_t = before_t;
		}
		if ((ret = whole(d, pick, pick_t)) < 0)
			return ret;
		ret = put_frame(d, pick, spec, p, out, k, made_k == k - 1 && pick_t == made_t);
		if (ret < 0)
			return ret;
		made_t = pick_t;
		made_k = k;
		if (lap && k < lap_n) {
			lap[2 * k] = t;
			lap[2 * k + 1] = pick_t;
		}
	}
	/* Checking every frame: those after the last target's too. */
	while (d->check && !eof) {
		if ((ret = next_frame(d)) < 0)
			return ret;
		if (ret == FROM_START)
			return AGAIN;
		if (ret == 0)
			break;
		cur_t = frame_time(d, d->frame, cur_t);
		if ((ret = whole(d, d->frame, cur_t)) < 0)
			return ret;
	}
	return 0;
}

int slab_video_decode(struct slab_video_decoder *d, const void *data, size_t len,
		      const struct slab_video_spec *spec, const struct slab_video_params *p,
		      void *out, struct slab_video_stats *stats)
{
	int ret;

	memset(&d->st, 0, sizeof(d->st));
	if (stats)
		*stats = d->st;
	log_line[0] = '\0';
	if (!spec_ok(spec) || !p || !out || !(p->t0 >= 0) || !isfinite(p->t0) ||
	    !(p->step > 0) || !isfinite(p->step))
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL, "bad video spec or parameters");
	/* The video slab_video_info() opened, if these are its bytes; else open them. */
	if (!d->fmt || d->data != data || d->len != len || !data ||
	    d->sig != fingerprint(data, len)) {
		if ((ret = open_video(d, data, len)) < 0)
			return ret;
	}
	ret = slab_image_crop_check(&p->crop, d->info.width, d->info.height, &d->err);
	if (ret == 0 && spec->on_short == SLAB_VIDEO_SHORT_ERROR &&
	    span(spec, d->fps) > d->info.frames)
		ret = slab_fail(&d->err, SLAB_ERR_CORRUPT, NULL, "video of %llu %s: the clip "
				"needs %llu", (unsigned long long)d->info.frames,
				slab_plural(d->info.frames, "frame", "frames"),
				(unsigned long long)span(spec, d->fps));
	if (ret == 0)
		ret = open_codec(d, spec->codec_threads);
	if (ret == 0)
		ret = decode_clip(d, spec, p, out);
	/* Frames left out might have changed the clip, or its times are sure only from the
	 * start: all of it again, skipping none (from the start: at most once more). The
	 * frames decoded and the seeks count every pass, the frames converted the last. */
	for (int pass = 0; ret == AGAIN && pass < 2; pass++) {
		d->st.converted = 0;
		d->full_clip = 1;
		ret = decode_clip(d, spec, p, out);
		d->full_clip = 0;
	}
	if (ret > 0)
		ret = corrupt(d, "the frames' times change from one decode to the next");
	/* Whatever failed, the next call starts afresh. */
	if (ret < 0)
		close_video(d);
	if (d->frame) {
		ff.av_frame_unref(d->frame);
		ff.av_frame_unref(d->before);
	}
	slab_scratch_trim(&d->planes);
	if (stats)
		*stats = d->st;
	return ret;
}
