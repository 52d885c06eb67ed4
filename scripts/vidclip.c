/* vidclip: run the video pipeline (lib/dataset/video.c) on one video file and write the clip's
 * raw uint8 frames (T x H x W x 3, or C x T x H x W with --chw), for tests that compare them
 * with other decoders. Prints the video ("video WxH frames N duration D fps A/B codec C"),
 * the clip ("clip first N t0 T step S crop WxH+X+Y flip F") and what it took ("decoded D
 * converted C seeks S") on stdout; --info stops after the first line. --clips N decodes N
 * clips of indices index, index + 1, ... into OUT one after the other (with --second FILE, a
 * second decoder alternates with the first on that file's clips, written to OUT2: decoders
 * must not share state). */
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "slab.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: vidclip [--size WxH] [--frames T] [--stride S] [--fps F]\n"
		   "               [--start random|center|begin] [--on-short pad|loop|error]\n"
		   "               [--crop center|random-resized|none] [--flip] [--chw] [--exact]\n"
		   "               [--resize bilinear|nearest] [--seed N] [--epoch N] [--index N]\n"
		   "               [--clips N] [--threads N] [--max-pixels N] [--max-frames N]\n"
		   "               [--second IN2 OUT2] [--info] IN OUT.raw\n");
}

/* One of names (NULL-terminated) by its text: its index, or -1. */
static int choice(const char *arg, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

struct job {
	const char *in, *out;
	unsigned char *data;
	size_t len;
	struct slab_video_decoder *d;
	struct slab_video_info info;
	FILE *f;
};

static int open_job(struct job *j, unsigned long long max_pixels, unsigned long long max_frames)
{
	if (!(j->data = cli_read_file(j->in, &j->len))) {
		fprintf(stderr, "vidclip: '%s': cannot read\n", j->in);
		return -1;
	}
	if (!(j->d = slab_video_decoder_new())) {
		fprintf(stderr, "vidclip: out of memory\n");
		return -1;
	}
	slab_video_decoder_limits(j->d, max_pixels, max_frames);
	if (slab_video_info(j->d, j->data, j->len, &j->info) < 0) {
		fprintf(stderr, "vidclip: '%s': %s\n", j->in, slab_video_error(j->d));
		return -1;
	}
	printf("video %ux%u frames %llu duration %.3f fps %u/%u codec %s\n", j->info.width,
	       j->info.height, (unsigned long long)j->info.frames, j->info.duration,
	       j->info.fps_num, j->info.fps_den, j->info.codec);
	return 0;
}

/* Clip `index` of the job into its output: 0, or -1 with the message said. */
static int clip(struct job *j, const struct slab_video_spec *spec, unsigned long long seed,
		unsigned long long epoch, unsigned long long index, unsigned char *out, size_t n)
{
	struct slab_video_params p;
	struct slab_video_stats st;
	int ret;

	ret = slab_video_params(spec, &j->info, seed, epoch, index, &p);
	if (ret == SLAB_ERR_CORRUPT) {
		/* Too short under --on-short error: the decode says why. */
		memset(&p, 0, sizeof(p));
		p.step = 1;
		p.crop.w = j->info.width;
		p.crop.h = j->info.height;
	} else if (ret < 0) {
		fprintf(stderr, "vidclip: '%s': the spec or the video is refused\n", j->in);
		return -1;
	}
	ret = slab_video_decode(j->d, j->data, j->len, spec, &p, out, &st);
	if (ret < 0) {
		fprintf(stderr, "vidclip: '%s': %s\n", j->in, slab_video_error(j->d));
		return -1;
	}
	printf("clip first %llu t0 %.6f step %.6f crop %ux%u+%u+%u flip %d\n",
	       (unsigned long long)p.first, p.t0, p.step, p.crop.w, p.crop.h, p.crop.x, p.crop.y,
	       p.crop.flip);
	printf("decoded %llu converted %llu seeks %llu\n", (unsigned long long)st.decoded,
	       (unsigned long long)st.converted, (unsigned long long)st.seeks);
	if (fwrite(out, 1, n, j->f) != n) {
		fprintf(stderr, "vidclip: '%s': cannot write\n", j->out);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const starts[] = { "random", "center", "begin", NULL };
	static const char *const shorts[] = { "pad", "loop", "error", NULL };
	static const char *const crops[] = { "none", "center", "random-resized", NULL };
	static const char *const resizes[] = { "bilinear", "nearest", NULL };
	static const struct option longopts[] = {
		{ "chw",        no_argument,       NULL, 'c' },
		{ "clips",      required_argument, NULL, 'n' },
		{ "crop",       required_argument, NULL, 'C' },
		{ "epoch",      required_argument, NULL, 'e' },
		{ "exact",      no_argument,       NULL, 'x' },
		{ "flip",       no_argument,       NULL, 'f' },
		{ "fps",        required_argument, NULL, 'F' },
		{ "frames",     required_argument, NULL, 'T' },
		{ "help",       no_argument,       NULL, 'h' },
		{ "index",      required_argument, NULL, 'i' },
		{ "info",       no_argument,       NULL, 'I' },
		{ "max-frames", required_argument, NULL, 'M' },
		{ "max-pixels", required_argument, NULL, 'P' },
		{ "on-short",   required_argument, NULL, 'o' },
		{ "resize",     required_argument, NULL, 'Z' },
		{ "second",     required_argument, NULL, '2' },
		{ "seed",       required_argument, NULL, 's' },
		{ "size",       required_argument, NULL, 'S' },
		{ "start",      required_argument, NULL, 'B' },
		{ "stride",     required_argument, NULL, 'k' },
		{ "threads",    required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct slab_video_spec spec;
	struct job jobs[2];
	unsigned long long seed = 0, epoch = 0, index = 0, max_pixels = 0, max_frames = 0;
	unsigned long long clips = 1;
	unsigned ow = 64, oh = 64, frames = 8, stride = 1, threads = 0, njobs = 1;
	int start = SLAB_VIDEO_START_BEGIN, on_short = SLAB_VIDEO_SHORT_PAD;
	int crop = SLAB_IMAGE_CROP_CENTER, resize = SLAB_IMAGE_RESIZE_BILINEAR;
	int flip = 0, chw = 0, exact = 0, info_only = 0, c, ret = 1;
	double fps = 0;
	unsigned char *out = NULL;
	size_t n;
	char *end;

	memset(jobs, 0, sizeof(jobs));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'B': start = choice(optarg, starts); break;
		case 'C': crop = choice(optarg, crops); break;
		case 'F':
			fps = strtod(optarg, &end);
			if (end == optarg || *end) {
				fprintf(stderr, "vidclip: '%s': not a frame rate\n", optarg);
				return 2;
			}
			break;
		case 'I': info_only = 1; break;
		case 'M': max_frames = strtoull(optarg, NULL, 10); break;
		case 'P': max_pixels = strtoull(optarg, NULL, 10); break;
		case 'S':
			if (sscanf(optarg, "%ux%u", &ow, &oh) != 2) {
				fprintf(stderr, "vidclip: '%s': not a size WxH\n", optarg);
				return 2;
			}
			break;
		case 'T': frames = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'Z': resize = choice(optarg, resizes); break;
		case '2':
			if (optind >= argc) {
				usage(stderr);
				return 2;
			}
			jobs[1].in = optarg;
			jobs[1].out = argv[optind++];
			njobs = 2;
			break;
		case 'c': chw = 1; break;
		case 'e': epoch = strtoull(optarg, NULL, 10); break;
		case 'f': flip = 1; break;
		case 'h': usage(stdout); return 0;
		case 'i': index = strtoull(optarg, NULL, 10); break;
		case 'k': stride = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': clips = strtoull(optarg, NULL, 10); break;
		case 'o': on_short = choice(optarg, shorts); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'x': exact = 1; break;
		default: usage(stderr); return 2;
		}
		if (start < 0 || on_short < 0 || crop < 0 || resize < 0) {
			fprintf(stderr, "vidclip: '%s': not one of the option's choices\n", optarg);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	jobs[0].in = argv[optind];
	jobs[0].out = argv[optind + 1];
	slab_video_spec_init(&spec, ow, oh, frames);
	spec.stride = stride;
	spec.fps = fps;
	spec.start = start;
	spec.on_short = on_short;
	spec.codec_threads = threads;
	spec.image.crop = crop;
	spec.image.flip = flip;
	spec.image.chw = chw;
	spec.image.exact = exact;
	spec.image.resize = resize;
	for (unsigned k = 0; k < njobs; k++)
		if (open_job(&jobs[k], max_pixels, max_frames) < 0)
			goto done;
	if (info_only) {
		ret = 0;
		goto done;
	}
	n = (size_t)ow * oh * 3 * frames;
	if (!(out = malloc(n))) {
		fprintf(stderr, "vidclip: out of memory\n");
		goto done;
	}
	for (unsigned k = 0; k < njobs; k++) {
		if (!(jobs[k].f = fopen(jobs[k].out, "wb"))) {
			fprintf(stderr, "vidclip: '%s': cannot write\n", jobs[k].out);
			goto done;
		}
	}
	for (unsigned long long i = 0; i < clips; i++)
		for (unsigned k = 0; k < njobs; k++)
			if (clip(&jobs[k], &spec, seed, epoch, index + i, out, n) < 0)
				goto done;
	ret = 0;
done:
	for (unsigned k = 0; k < njobs; k++) {
		if (jobs[k].f && fclose(jobs[k].f) != 0 && ret == 0) {
			fprintf(stderr, "vidclip: '%s': cannot write\n", jobs[k].out);
			ret = 1;
		}
		slab_video_decoder_free(jobs[k].d);
		free(jobs[k].data);
	}
	free(out);
	return ret;
}
