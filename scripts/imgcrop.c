/* imgcrop: run the image pipeline (lib/dataset/image.c) on one image file and write the raw
 * uint8 output (RGB; grey or RGBA with --channels), for tests that compare it with other
 * decoders. Prints the crop taken and the decode path on stdout: "crop WxH+X+Y flip F scale
 * 1/D region R". --max-pixels and --max-scans set the decoder's limits
 * (slab_image_decoder_limits(); "none": no limit); --center-ratio the centre crop's (struct
 * slab_image_spec center_ratio); --channels, --alpha, --background and --resize as prefetch
 * --emit-format frames takes them (prefetch(1)), with the same usage errors.
 *
 * imgcrop --batch reads one run's arguments a line from standard input (split at white space)
 * and prints one line a run: what the run prints, or "exit N: MESSAGE" where the run alone
 * would exit N with MESSAGE on standard error (less its last line break; any other written
 * \n, a backslash \\). Tests that decode hundreds of files use it (tests/test_helper/
 * imgbatch.py): one process, the same code, a fresh decoder each run. */
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
	fprintf(f, "Usage: imgcrop [--size WxH] [--crop center|random-resized|none] [--flip]\n"
		   "               [--center-ratio R] [--seed N] [--epoch N] [--index N] [--chw]\n"
		   "               [--channels 1|3|4] [--alpha drop|composite|keep]\n"
		   "               [--background R,G,B] [--resize bilinear|nearest]\n"
		   "               [--exact] [--max-pixels N|none] [--max-scans N|none] IN OUT.raw\n"
		   "       imgcrop --batch < RUNS\n");
}

/* A limit: a number, or "none" (none_value); -1 when it is neither. */
static int limit_arg(const char *s, unsigned long long max, unsigned long long none_value,
		     unsigned long long *out)
{
	char *end;

	if (strcmp(s, "none") == 0) {
		*out = none_value;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end || *out > max ? -1 : 0;
}

/* One run: the result line on stdout, errors on err; the exit status. */
static int run(int argc, char **argv, FILE *err)
{
	static const struct option longopts[] = {
		{ "alpha", required_argument, NULL, 'A' },
		{ "background", required_argument, NULL, 'B' },
		{ "center-ratio", required_argument, NULL, 'R' },
		{ "channels", required_argument, NULL, 'K' },
		{ "chw",   no_argument,       NULL, 'c' },
		{ "crop",  required_argument, NULL, 'C' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "exact", no_argument,       NULL, 'x' },
		{ "flip",  no_argument,       NULL, 'f' },
		{ "help",  no_argument,       NULL, 'h' },
		{ "index", required_argument, NULL, 'i' },
		{ "max-pixels", required_argument, NULL, 'P' },
		{ "max-scans", required_argument, NULL, 'N' },
		{ "resize", required_argument, NULL, 'Z' },
		{ "seed",  required_argument, NULL, 's' },
		{ "size",  required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct slab_image_spec spec;
	struct slab_image_params p;
	struct slab_image_stats st;
	struct slab_image_decoder *d;
	unsigned long long seed = 0, epoch = 0, index = 0, max_pixels = 0, max_scans = 0;
	unsigned ow = 224, oh = 224;
	int crop = SLAB_IMAGE_CROP_CENTER, flip = 0, chw = 0, exact = 0, c, ret;
	/* alpha: -1 not given, 0 drop, 1 composite, 2 keep */
	int alpha = -1, resize = SLAB_IMAGE_RESIZE_BILINEAR, background_set = 0;
	unsigned channels = 0;
	uint8_t bg[3] = { 255, 255, 255 };
	const char *alpha_arg = NULL;
	double ratio = 1.0;
	char *end;
	unsigned char *jpeg, *out;
	size_t len, n;
	uint32_t w, h;
	FILE *f;

	opterr = 0;     /* its messages would go to stderr, not err: usage() says it */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A':
			alpha = strcmp(optarg, "drop") == 0 ? 0 : strcmp(optarg, "composite") == 0 ? 1 :
				strcmp(optarg, "keep") == 0 ? 2 : -2;
			if (alpha == -2) {
				fprintf(err, "imgcrop: invalid --alpha '%s' (drop, composite or keep)\n",
					optarg);
				return 2;
			}
			alpha_arg = optarg;
			break;
		case 'B':
			if (cli_parse_rgb(optarg, bg) < 0) {
				fprintf(err, "imgcrop: invalid --background '%s' (R,G,B, each from 0 "
					"to 255)\n", optarg);
				return 2;
			}
			background_set = 1;
			break;
		case 'K':
			if (strcmp(optarg, "1") && strcmp(optarg, "3") && strcmp(optarg, "4")) {
				fprintf(err, "imgcrop: invalid --channels '%s' (1 grey, 3 RGB or 4 "
					"RGBA)\n", optarg);
				return 2;
			}
			channels = (unsigned)(*optarg - '0');
			break;
		case 'Z':
			if (strcmp(optarg, "bilinear") == 0)
				resize = SLAB_IMAGE_RESIZE_BILINEAR;
			else if (strcmp(optarg, "nearest") == 0)
				resize = SLAB_IMAGE_RESIZE_NEAREST;
			else {
				fprintf(err, "imgcrop: invalid --resize '%s' (bilinear or nearest)\n",
					optarg);
				return 2;
			}
			break;
		case 'c': chw = 1; break;
		case 'R':
			ratio = strtod(optarg, &end);
			if (end == optarg || *end || !(ratio > 0 && ratio <= 1)) {
				fprintf(err, "imgcrop: '%s': not a ratio, 0 < R <= 1\n", optarg);
				return 2;
			}
			break;
		case 'C':
			if (strcmp(optarg, "center") == 0)
				crop = SLAB_IMAGE_CROP_CENTER;
			else if (strcmp(optarg, "random-resized") == 0)
				crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
			else if (strcmp(optarg, "none") == 0)
				crop = SLAB_IMAGE_CROP_NONE;
			else {
				fprintf(err, "imgcrop: '%s': not a crop mode\n", optarg);
				return 2;
			}
			break;
		case 'e': epoch = strtoull(optarg, NULL, 10); break;
		case 'x': exact = 1; break;
		case 'f': flip = 1; break;
		case 'h': usage(stdout); return 0;
		case 'i': index = strtoull(optarg, NULL, 10); break;
		case 'P':
		case 'N':
			if (limit_arg(optarg, c == 'P' ? UINT64_MAX : UINT_MAX,
				      c == 'P' ? UINT64_MAX : UINT_MAX,
				      c == 'P' ? &max_pixels : &max_scans) < 0) {
				fprintf(err, "imgcrop: '%s': not a number or none\n", optarg);
				return 2;
			}
			break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		case 'S':
			if (sscanf(optarg, "%ux%u", &ow, &oh) != 2) {
				fprintf(err, "imgcrop: '%s': not a size WxH\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(err, "imgcrop: '%s': not an option, or its argument is missing\n",
				argv[optind - 1]);
			usage(err);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(err);
		return 2;
	}
	if (alpha == 2 && channels != 0 && channels != 4) {
		fprintf(err, "imgcrop: --alpha keep goes with --channels 4, not %u\n", channels);
		return 2;
	}
	if (alpha == 2)
		channels = 4;
	if ((alpha == 0 || alpha == 1) && channels == 4) {
		fprintf(err, "imgcrop: --alpha %s does not go with --channels 4 (RGBA keeps the "
			"alpha)\n", alpha_arg);
		return 2;
	}
	if (background_set && alpha != 1) {
		fprintf(err, "imgcrop: --background goes with --alpha composite\n");
		return 2;
	}
	slab_image_spec_init(&spec, ow, oh);
	spec.crop = crop;
	spec.flip = flip;
	spec.chw = chw;
	spec.exact = exact;
	spec.center_ratio = ratio;
	spec.channels = channels;
	spec.alpha = alpha == 1 ? SLAB_IMAGE_ALPHA_COMPOSITE : SLAB_IMAGE_ALPHA_DROP;
	memcpy(spec.background, bg, sizeof(bg));
	spec.resize = resize;
	jpeg = cli_read_file(argv[optind], &len);
	if (!jpeg) {
		fprintf(err, "imgcrop: '%s': cannot read\n", argv[optind]);
		return 1;
	}
	d = slab_image_decoder_new();
	n = (size_t)ow * oh * (channels ? channels : 3);
	out = malloc(n);
	if (!d || !out) {
		fprintf(err, "imgcrop: out of memory\n");
		ret = 1;
		goto done;
	}
	slab_image_decoder_limits(d, max_pixels, (unsigned)max_scans);
	ret = slab_image_size(d, jpeg, len, &w, &h);
	if (ret == 0)
		ret = slab_image_params(&spec, w, h, seed, epoch, index, &p);
	if (ret == 0)
		ret = slab_image_decode(d, jpeg, len, &spec, &p, out, &st);
	if (ret < 0) {
		fprintf(err, "imgcrop: '%s': %s\n", argv[optind], slab_image_error(d));
		ret = 1;
		goto done;
	}
	printf("crop %ux%u+%u+%u flip %d scale 1/%u region %d\n", p.w, p.h, p.x, p.y, p.flip,
	       st.scale_denom, st.region);
	f = fopen(argv[optind + 1], "wb");
	if (!f || (fwrite(out, 1, n, f) != n) + (fclose(f) != 0)) {
		fprintf(err, "imgcrop: '%s': cannot write\n", argv[optind + 1]);
		ret = 1;
	}
done:
	slab_image_decoder_free(d);
	free(out);
	free(jpeg);
	return ret;
}

/* --batch: the runs of standard input's lines, one after the other. */
static int batch(void)
{
	char *line = NULL, *msg = NULL, *argv[64], *tok, *save;
	size_t cap = 0, mlen;
	int argc, ret;
	FILE *err;

	while (getline(&line, &cap, stdin) > 0) {
		argc = 0;
		argv[argc++] = "imgcrop";
		for (tok = strtok_r(line, " \t\n", &save); tok && argc < 63;
		     tok = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = tok;
		if (argc == 1)
			continue;
		if (tok) {
			printf("exit 2: imgcrop: more than %d arguments on a line\n", argc - 1);
			fflush(stdout);
			continue;
		}
		argv[argc] = NULL;
		err = open_memstream(&msg, &mlen);
		if (!err) {
			fprintf(stderr, "imgcrop: out of memory\n");
			free(line);
			return 1;
		}
		optind = 0;     /* getopt_long starts again */
		ret = run(argc, argv, err);
		fclose(err);
		if (ret != 0) {
			if (mlen > 0 && msg[mlen - 1] == '\n')
				mlen--;
			printf("exit %d: ", ret);
			for (size_t i = 0; i < mlen; i++) {
				if (msg[i] == '\\' || msg[i] == '\n')
					printf("\\%c", msg[i] == '\n' ? 'n' : '\\');
				else
					putchar(msg[i]);
			}
			putchar('\n');
		}
		free(msg);
		msg = NULL;
		fflush(stdout);
	}
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--batch") == 0)
		return batch();
	return run(argc, argv, stderr);
}
