/* rstpart: for scripts/bench/limit-restart, on one thread, over the first COUNT jpg fields of a
 * .slab packed with restart markers: what decoding RandomResizedCrop(224)'s crops from the
 * marker before them (lib/dataset/jpegrst.c) costs and saves. For each picture the crop of
 * the loader's pipeline (slab_image_params: seed, epoch 0, the sample's index) at its DCT
 * scale (the largest of 1/8, 1/4, 1/2 keeping the crop at least 224 a side: image_jpeg.c's rule
 * for 4:2:0 and 4:4:4), then:
 *   - the MCUs a decode must entropy-decode: without the part, every MCU of the rows from the
 *     first to that of the pixel row below the crop's last (the upsampling reads it); with
 *     it, those of the part (jpegrst.c's plan: the same last row);
 *   - the CPU time to find and copy the part (slab_jpegrst_layout, _plan, _part), best of 5;
 *   - the CPU time of the whole decode and resize (slab_image_decode), with the part and
 *     without (SLAB_JPEG_RESTART=0), best of 3 passes over all pictures.
 * Prints one JSON object. Built by the benchmark against build/libslab.a (jpegrst.c's
 * functions are internal to the library). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "imgfmt.h"
#include "jpegrst.h"
#include "scratch.h"
#include "slab.h"

/* This thread's CPU time: the figures hold on a busy machine. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct slab_image_decoder *decoder(const char *mode, const unsigned char *jpeg,
					  size_t len)
{
	struct slab_image_decoder *d = slab_image_decoder_new();
	uint32_t w, h;

	setenv("SLAB_JPEG_RESTART", mode, 1);
	if (!d || slab_image_size(d, jpeg, len, &w, &h) != 0) {
		fprintf(stderr, "rstpart: cannot make a decoder\n");
		exit(1);
	}
	unsetenv("SLAB_JPEG_RESTART");
	return d;
}

struct pic {
	const unsigned char *p;
	size_t len;
	uint32_t w, h;
	struct slab_image_params prm;
};

/* Seconds of the best of `passes` passes decoding every picture's crop with d. */
static double decode_all(struct slab_image_decoder *d, const struct slab_image_spec *spec,
			 const struct pic *pics, size_t n, unsigned char *out, int passes)
{
	double best = 1e30;

	for (int k = 0; k < passes; k++) {
		double t0 = now();

		for (size_t i = 0; i < n; i++) {
			if (slab_image_decode(d, pics[i].p, pics[i].len, spec, &pics[i].prm, out,
					      NULL) != 0) {
				fprintf(stderr, "rstpart: %s\n", slab_image_error(d));
				exit(1);
			}
		}
		if (now() - t0 < best)
			best = now() - t0;
	}
	return best;
}

int main(int argc, char **argv)
{
	struct slab *s = slab_new();
	struct slab_image_spec spec;
	struct slab_scratch part = { 0 };
	struct pic *pics;
	size_t n = 0, count, nfound = 0;
	uint64_t seed, total;
	int field;
	double mcus_all = 0, mcus_old = 0, mcus_part = 0, scan = 0;
	unsigned char *out = malloc(224 * 224 * 3);

	if (argc != 5) {
		fprintf(stderr, "usage: rstpart FILE.slab FIELD COUNT SEED\n");
		return 2;
	}
	count = strtoull(argv[3], NULL, 10);
	seed = strtoull(argv[4], NULL, 10);
	if (!s || !out || slab_open(s, argv[1]) != 0) {
		fprintf(stderr, "rstpart: '%s': %s\n", argv[1], s ? slab_error(s) : "out of memory");
		return 1;
	}
	field = slab_field_lookup(s, argv[2]);
	total = slab_count(s);
	pics = calloc(count ? count : 1, sizeof(*pics));
	if (field < 0 || !pics) {
		fprintf(stderr, "rstpart: no field '%s'\n", argv[2]);
		return 1;
	}
	slab_image_spec_init(&spec, 224, 224);
	spec.crop = SLAB_IMAGE_CROP_RANDOM_RESIZED;
	spec.flip = 1;
	for (uint64_t i = 0; i < total && n < count; i++) {
		struct slab_field f;
		struct pic *pc = &pics[n];
		struct slab_jpegrst_layout lay;
		struct slab_jpegrst_part pt;
		struct slab_image_region reg;
		const char *why;
		uint32_t ow, oh, ix0, ix1, iy0, iy1, rows, last, r1;
		unsigned denom = 1;
		double best = 1e30;
		size_t plen;

		if (slab_get(s, i, (unsigned)field, &f) != 1)
			continue;
		pc->p = f.data;
		pc->len = (size_t)f.size;
		pc->w = f.width;
		pc->h = f.height;
		if (slab_image_params(&spec, pc->w, pc->h, seed, 0, i, &pc->prm) != 0)
			continue;
		n++;
		if (!slab_jpegrst_layout(pc->p, pc->len, &lay, &why))
			continue;
		nfound++;
		for (unsigned sc = 8; sc > 1; sc /= 2) {
			if (pc->prm.w >= 224u * sc && pc->prm.h >= 224u * sc) {
				denom = sc;
				break;
			}
		}
		ow = (lay.width + denom - 1) / denom;
		oh = (lay.height + denom - 1) / denom;
		slab_image_box(&pc->prm, denom, ow, oh, 0, &reg, &ix0, &ix1, &iy0, &iy1);
		rows = lay.mcu_h / denom;
		last = lay.mcu_rows - 1;
		r1 = iy1 / rows;
		if (r1 > last)
			r1 = last;
		mcus_all += (double)lay.mcus_per_row * lay.mcu_rows;
		mcus_old += (double)lay.mcus_per_row * (r1 + 1);
		for (int k = 0; k < 5; k++) {
			double t0 = now();
			int got = slab_jpegrst_layout(pc->p, pc->len, &lay, &why) &&
				  slab_jpegrst_plan(&lay, denom, ow, oh, ix0, ix1, iy0, iy1, &pt);

			if (got && slab_jpegrst_part(pc->p, pc->len, &lay, &pt, &part, &plen, &why)) {
				fprintf(stderr, "rstpart: sample %llu: %s\n", (unsigned long long)i, why);
				return 1;
			}
			if (now() - t0 < best)
				best = now() - t0;
			if (k == 0) {
				uint32_t cols = !got ? lay.mcus_per_row : lay.segs_per_row ?
					(pt.seg1 - pt.seg0 + 1) * lay.interval : lay.mcus_per_row;

				if (cols > lay.mcus_per_row)
					cols = lay.mcus_per_row;
				mcus_part += got ? (double)cols * (pt.row1 - pt.row0 + 1) :
					     (double)lay.mcus_per_row * (r1 + 1);
			}
		}
		scan += best;
	}
	if (!n || !nfound) {
		fprintf(stderr, "rstpart: no JPEG with restart markers in '%s'\n", argv[1]);
		return 1;
	}
	{
		struct slab_image_decoder *dp = decoder("1", pics[0].p, pics[0].len);
		struct slab_image_decoder *d0 = decoder("0", pics[0].p, pics[0].len);
		double tp = decode_all(dp, &spec, pics, n, out, 3);
		double t0 = decode_all(d0, &spec, pics, n, out, 3);

		printf("{\"images\": %zu, \"with_markers\": %zu, \"mcus_old\": %.6f, "
		       "\"mcus_part\": %.6f, \"scan_us\": %.3f, \"decode_part_ms\": %.4f, "
		       "\"decode_old_ms\": %.4f}\n", n, nfound, mcus_old / mcus_all,
		       mcus_part / mcus_all, scan / (double)nfound * 1e6, tp / (double)n * 1e3,
		       t0 / (double)n * 1e3);
		slab_image_decoder_free(dp);
		slab_image_decoder_free(d0);
	}
	slab_scratch_free(&part);
	slab_close(s);
	free(pics);
	free(out);
	return 0;
}
