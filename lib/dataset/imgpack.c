/* imgpack.c: pack's work on image fields (imgpack.h): the format from the bytes, the size for
 * the table, a full-decode check, a re-encode to fit a longest side, for every format the
 * image pipeline knows; restart markers for JPEGs (jpegrst.h); what a video holds, and a
 * decode of its every frame as the check, through the video pipeline. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "errfmt.h"
#include "imgenc.h"
#include "imgfmt.h"
#include "imgpack.h"
#include "jpeg.h"
#include "jpegrst.h"
#include "scratch.h"
#include "slab.h"
#include "video.h"

/* The formats pack records: the pipeline's decoder (its probe finds the format), the table's
 * flag, and the re-encoder (NULL: JPEG, which jpeg.c does whole). */
static const struct kind {
	const struct slab_image_format *fmt;
	unsigned flag;
	const struct slab_imgenc *enc;
} kinds[] = {
	{ &slab_image_jpeg, SLAB_FIELD_JPEG, NULL },
	{ &slab_image_png, SLAB_FIELD_PNG, &slab_imgenc_png },
	{ &slab_image_webp, SLAB_FIELD_WEBP, &slab_imgenc_webp },
};

struct slab_imgpack {
	struct slab_imgpack_options o;
	struct slab_jpeg *jp;
	struct slab_jpegrst *rst;       /* made by the first JPEG given restart markers */
	struct slab_image_decoder *dec;
	struct slab_video_decoder *vdec;        /* made by the first video */
	struct slab_scratch rgb;        /* a fitted image before it is re-encoded; a checked
					 * video's frames of one pixel */
	struct slab_err err;
};

struct slab_imgpack *slab_imgpack_new(const struct slab_imgpack_options *o)
{
	struct slab_imgpack *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->o = *o;
	ip->jp = slab_jpeg_new();
	ip->dec = slab_image_decoder_new();
	if (!ip->jp || !ip->dec) {
		slab_imgpack_free(ip);
		return NULL;
	}
	slab_jpeg_limits(ip->jp, o->max_pixels, 0);
	slab_image_decoder_limits(ip->dec, o->max_pixels, 0);
	return ip;
}

void slab_imgpack_free(struct slab_imgpack *ip)
{
	if (!ip)
		return;
	slab_jpeg_free(ip->jp);
	slab_jpegrst_free(ip->rst);
	slab_image_decoder_free(ip->dec);
	slab_video_decoder_free(ip->vdec);
	slab_scratch_free(&ip->rgb);
	free(ip);
}

const char *slab_imgpack_error(const struct slab_imgpack *ip)
{
	return ip ? ip->err.text : "no image context";
}

int slab_imgpack_image_name(const char *name)
{
	static const char *const exts[] = { "jpg", "jpeg", "png", "webp" };
	const char *ext;

	if (!name)
		return 0;
	ext = strrchr(name, '.');
	ext = ext ? ext + 1 : name;
	/* By hand rather than strcasecmp, which follows the locale. */
	for (size_t k = 0; k < sizeof(exts) / sizeof(exts[0]); k++) {
		const char *a = ext, *b = exts[k];

		while (*a && *b && (*a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a) == *b) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return 1;
	}
	return 0;
}

/* pack --jpeg-restart: the JPEG (the re-encoded one, when there is one) with restart markers
 * in res->data, flagged; as it is when it cannot have them (progressive, ...: jpegrst.h). */
static int add_restart(struct slab_imgpack *ip, const void *data, size_t len,
		       struct slab_imgpack_result *res)
{
	void *out;
	size_t outlen;
	int r;

	if (!ip->rst && !(ip->rst = slab_jpegrst_new(ip->o.max_pixels)))
		return slab_fail(&ip->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	if (res->flags & SLAB_FIELD_TRANSCODED) {
		data = res->data;
		len = res->size;
	}
	r = slab_jpegrst_rewrite(ip->rst, data, len, ip->o.jpeg_restart_most, &out, &outlen);
	if (r < 0)
		return slab_fail_from(&ip->err, r, slab_jpegrst_error(ip->rst));
	if (r == 1) {
		free(res->data);
		res->data = out;
		res->size = outlen;
		res->flags |= SLAB_FIELD_RESTART;
	}
	return 0;
}

/* A JPEG: header, check and fit as jpeg.c does them. */
static int do_jpeg(struct slab_imgpack *ip, const void *data, size_t len,
		   struct slab_imgpack_result *res)
{
	struct slab_jpeg_info info;
	int r = 0;

	if (ip->o.check)
		r = slab_jpeg_check(ip->jp, data, len);
	if (r == 0 && ip->o.max_side) {
		r = slab_jpeg_fit(ip->jp, data, len, ip->o.max_side, ip->o.jpeg_quality, &res->data,
				  &res->size, &info);
		if (r == 1) {
			res->flags |= SLAB_FIELD_TRANSCODED;
			r = 0;
		}
	} else if (r == 0 && (r = slab_jpeg_header(ip->jp, data, len, &info)) == SLAB_ERR_CORRUPT) {
		/* Without a check an unreadable header is kept as bytes, unannotated; one over
		 * the pixel limit (SLAB_ERR_LIMIT) is a bad sample. */
		return 0;
	}
	if (r < 0)
		return slab_fail_from(&ip->err, r, slab_jpeg_error(ip->jp));
	if (ip->o.jpeg_restart && (r = add_restart(ip, data, len, res)) < 0)
		return r;
	res->flags |= SLAB_FIELD_JPEG;
	res->width = info.width;
	res->height = info.height;
	res->subsamp = (unsigned)info.subsamp;
	res->colorspace = (unsigned)info.colorspace;
	return 0;
}

/* The pipeline's decode of the whole image (crop none) to out_w x out_h into out: exact
 * decodes it at full size, else at the least scale the format allows. */
static int decode_whole(struct slab_imgpack *ip, const void *data, size_t len, uint32_t w,
			uint32_t h, uint32_t out_w, uint32_t out_h, int exact, void *out)
{
	struct slab_image_spec spec;
	struct slab_image_params p;
	int r;

	slab_image_spec_init(&spec, out_w, out_h);
	spec.crop = SLAB_IMAGE_CROP_NONE;
	spec.exact = exact;
	if ((r = slab_image_params(&spec, w, h, 0, 0, 0, &p)) < 0)
		return slab_fail(&ip->err, r, NULL, "cannot fit a %ux%u image to %ux%u", w, h,
				 out_w, out_h);
	if ((r = slab_image_decode(ip->dec, data, len, &spec, &p, out, NULL)) < 0)
		return slab_fail_from(&ip->err, r, slab_image_error(ip->dec));
	return 0;
}

/* A PNG or a WebP: the size from the pipeline, a check by decoding, a fit by the pipeline's
 * resize and the format's encoder. */
static int do_other(struct slab_imgpack *ip, const struct kind *k, const void *data, size_t len,
		    struct slab_imgpack_result *res)
{
	uint32_t w, h, tw, th;
	const char *why;
	int r;

	r = slab_image_size(ip->dec, data, len, &w, &h);
	if (r == SLAB_ERR_CORRUPT && !ip->o.check && !ip->o.max_side)
		return 0;               /* as for JPEG: kept as bytes */
	if (r < 0)
		return slab_fail_from(&ip->err, r, slab_image_error(ip->dec));
	if (ip->o.max_side && (w > ip->o.max_side || h > ip->o.max_side) &&
	    k->enc->reencodable(data, len, &why)) {
		/* A decode of the whole image at full size: the check too. */
		slab_fit_size(w, h, ip->o.max_side, &tw, &th);
		if (slab_scratch_reserve(&ip->rgb, (size_t)tw * th * 3) < 0) {
			r = slab_fail(&ip->err, SLAB_ERR_NOMEM, NULL, "out of memory resizing a %ux%u "
				      "%s", w, h, k->fmt->name);
		} else if ((r = decode_whole(ip, data, len, w, h, tw, th, 1, ip->rgb.p)) == 0 &&
			   (r = k->enc->encode(data, len, ip->rgb.p, tw, th, ip->o.webp_quality,
					       &res->data, &res->size, &ip->err)) == 0) {
			res->flags |= SLAB_FIELD_TRANSCODED;
			w = tw;
			h = th;
		}
		slab_scratch_trim(&ip->rgb);
		if (r < 0)
			return r;
	} else if (ip->o.check) {
		/* Every byte of the image decoded, at the least scale, to one pixel: the
		 * verdict of a full-size decode without its memory where the format scales. */
		unsigned char px[3];

		if ((r = decode_whole(ip, data, len, w, h, 1, 1, 0, px)) < 0)
			return r;
	}
	res->flags |= k->flag;
	res->width = w;
	res->height = h;
	return 0;
}

/* Decode every frame of a video (the check): one clip of all its frames (every stride-th
 * converted when they are more than a clip holds, the others decoded all the same), each to
 * one pixel. */
static int check_video(struct slab_imgpack *ip, const void *data, size_t len,
		       const struct slab_video_info *info)
{
	struct slab_video_spec spec;
	struct slab_video_params p;
	uint64_t t = info->frames < 65535 ? info->frames : 65535;
	int r;

	slab_video_spec_init(&spec, 1, 1, t ? (unsigned)t : 1);
	spec.size = sizeof(spec);
	spec.image.crop = SLAB_IMAGE_CROP_NONE;
	spec.stride = t ? (unsigned)((info->frames + t - 1) / t) : 1;
	spec.start = SLAB_VIDEO_START_BEGIN;
	spec.on_short = SLAB_VIDEO_SHORT_PAD;
	if ((r = slab_video_params(&spec, info, 0, 0, 0, &p)) < 0)
		return slab_fail(&ip->err, SLAB_ERR_CORRUPT, NULL,
				 "corrupt video: no clip of its %llu %s",
				 (unsigned long long)info->frames,
				 slab_plural(info->frames, "frame", "frames"));
	if (slab_scratch_reserve(&ip->rgb, (size_t)spec.frames * 3) < 0)
		return slab_fail(&ip->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	r = slab_video_decode(ip->vdec, data, len, &spec, &p, ip->rgb.p, NULL);
	slab_scratch_trim(&ip->rgb);
	return r < 0 ? slab_fail_from(&ip->err, r, slab_video_error(ip->vdec)) : 0;
}

/* A video: its size, frames, duration, rate and codec for the table; with check, every frame
 * decoded. As for an image, one whose headers cannot be read is kept as bytes unless
 * checked; so is every video where FFmpeg's libraries cannot be loaded (video.h), which a
 * check needs. */
static int do_video(struct slab_imgpack *ip, const void *data, size_t len,
		    struct slab_imgpack_result *res)
{
	int r;

	if (!ip->vdec) {
		if (!(ip->vdec = slab_video_decoder_new()))
			return slab_fail(&ip->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		slab_video_decoder_limits(ip->vdec, ip->o.max_pixels, 0);
		slab_video_decoder_check(ip->vdec, 1);
	}
	r = slab_video_info(ip->vdec, data, len, &res->video);
	if ((r == SLAB_ERR_CORRUPT || slab_video_ready(NULL) < 0) && !ip->o.check) {
		memset(&res->video, 0, sizeof(res->video));
		return 0;
	}
	if (r < 0)
		return slab_fail_from(&ip->err, r, slab_video_error(ip->vdec));
	if (ip->o.check && (r = check_video(ip, data, len, &res->video)) < 0)
		return r;
	res->flags = SLAB_FIELD_VIDEO;
	res->width = res->video.width;
	res->height = res->video.height;
	return 0;
}

int slab_imgpack_field(struct slab_imgpack *ip, const char *name, const void *data, size_t len,
		       struct slab_imgpack_result *res)
{
	const unsigned char *p = data;
	uint32_t w, h;
	int r;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!p || !kinds[i].fmt->probe(p, len))
			continue;
		r = kinds[i].enc ? do_other(ip, &kinds[i], data, len, res) : do_jpeg(ip, data, len, res);
		if (r < 0) {
			free(res->data);
			memset(res, 0, sizeof(*res));
		}
		return r;
	}
	/* No image format's bytes. Checked, a field named as an image is damaged or of
	 * another format, a video's too (a GIF named .jpg, which the loader's image mode
	 * refuses): the pipeline's refusal says which formats it knows and what it found. */
	if (ip->o.check && slab_imgpack_image_name(name) &&
	    (r = slab_image_size(ip->dec, data, len, &w, &h)) < 0)
		return slab_fail_from(&ip->err, r, slab_image_error(ip->dec));
	if (p && slab_video_probe(p, len)) {
		if ((r = do_video(ip, data, len, res)) < 0)
			memset(res, 0, sizeof(*res));
		return r;
	}
	return 0;
}
