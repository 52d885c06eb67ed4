/* test_jpeg.c: unit tests of lib/dataset/jpeg.c on JPEGs made in memory with TurboJPEG, and on the
 * corpus JPEGs in $SLAB_CORPUS/jpeg/ when that variable is set. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <turbojpeg.h>

#include "format.h"
#include "imgpack.h"
#include "jpeg.h"
#include "jpegbomb.h"
#include "slab.h"
#include "unit.h"

struct blob {
	unsigned char *p;
	size_t len;
};

/* A colour picture: horizontal red ramp, vertical green ramp, a blue checkerboard so the
 * scan data is not trivially small. */
static unsigned char *make_pixels(int w, int h, int pf)
{
	int ps = tjPixelSize[pf];
	unsigned char *pix = malloc((size_t)w * h * ps);

	if (!pix)
		abort();
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			unsigned char *p = pix + ((size_t)y * w + x) * ps;
			int r = x * 255 / (w > 1 ? w - 1 : 1);
			int g = y * 255 / (h > 1 ? h - 1 : 1);
			int b = ((x / 16 + y / 16) & 1) ? 200 : 60;

			if (pf == TJPF_GRAY) {
				p[0] = (unsigned char)((r + g + b) / 3);
			} else {
				p[0] = (unsigned char)r;
				p[1] = (unsigned char)g;
				p[2] = (unsigned char)b;
				if (ps == 4)
					p[3] = (unsigned char)(255 - (r + g) / 2);
			}
		}
	}
	return pix;
}

static struct blob encode(int w, int h, int pf, int samp, int quality)
{
	tjhandle tj = tjInitCompress();
	unsigned char *pix = make_pixels(w, h, pf), *jbuf = NULL;
	unsigned long jsize = 0;
	struct blob b = { NULL, 0 };

	if (!tj || tjCompress2(tj, pix, w, 0, h, pf, &jbuf, &jsize, samp, quality, 0) != 0) {
		fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(tj));
		abort();
	}
	b.p = malloc(jsize);
	if (!b.p)
		abort();
	memcpy(b.p, jbuf, jsize);
	b.len = jsize;
	tjFree(jbuf);
	tjDestroy(tj);
	free(pix);
	return b;
}

/* Mean of each channel of a decoded JPEG; the number of channels, or 0. */
static int mean_colour(const struct blob *b, int pf, double mean[4])
{
	tjhandle tj = tjInitDecompress();
	int w, h, samp, cs, ps = tjPixelSize[pf], ret = 0;
	unsigned char *pix = NULL;

	if (!tj || tjDecompressHeader3(tj, b->p, b->len, &w, &h, &samp, &cs) != 0)
		goto out;
	pix = malloc((size_t)w * h * ps);
	if (!pix || tjDecompress2(tj, b->p, b->len, pix, w, 0, h, pf, 0) != 0)
		goto out;
	for (int c = 0; c < ps; c++) {
		uint64_t sum = 0;

		for (size_t i = 0; i < (size_t)w * h; i++)
			sum += pix[i * ps + c];
		mean[c] = (double)sum / ((double)w * h);
	}
	ret = ps;
out:
	free(pix);
	if (tj)
		tjDestroy(tj);
	return ret;
}

/* Offset of the first byte of entropy-coded data, after the first SOS segment. */
static size_t scan_start(const struct blob *b)
{
	size_t i = 2;

	while (i + 4 <= b->len && b->p[i] == 0xFF) {
		unsigned m = b->p[i + 1];
		size_t seglen = (size_t)b->p[i + 2] << 8 | b->p[i + 3];

		if (m == 0xDA)
			return i + 2 + seglen;
		i += 2 + seglen;
	}
	return 0;
}

static int has(const char *haystack, const char *needle)
{
	return haystack && strstr(haystack, needle) != NULL;
}

static void test_header(struct slab_jpeg *j)
{
	struct { int w, h, pf, samp, want_samp, want_cs; } cases[] = {
		{ 640, 480, TJPF_RGB, TJSAMP_420, SLAB_SAMP_420, SLAB_CS_YCBCR },
		{ 640, 480, TJPF_RGB, TJSAMP_444, SLAB_SAMP_444, SLAB_CS_YCBCR },
		{ 333, 222, TJPF_RGB, TJSAMP_422, SLAB_SAMP_422, SLAB_CS_YCBCR },
		{ 100, 200, TJPF_RGB, TJSAMP_440, SLAB_SAMP_440, SLAB_CS_YCBCR },
		{ 640, 480, TJPF_GRAY, TJSAMP_GRAY, SLAB_SAMP_GRAY, SLAB_CS_GRAY },
		{ 64, 48, TJPF_CMYK, TJSAMP_444, SLAB_SAMP_444, SLAB_CS_YCCK },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob b = encode(cases[i].w, cases[i].h, cases[i].pf, cases[i].samp, 90);
		struct slab_jpeg_info info;

		memset(&info, 0xAA, sizeof(info));
		CHECK(slab_jpeg_header(j, b.p, b.len, &info) == 0);
		CHECK(info.width == (uint32_t)cases[i].w);
		CHECK(info.height == (uint32_t)cases[i].h);
		CHECK(info.subsamp == cases[i].want_samp);
		CHECK(info.colorspace == cases[i].want_cs);
		CHECK(slab_jpeg_check(j, b.p, b.len) == 0);
		free(b.p);
	}
}

/* Decompression bombs: every entry point refuses them with SLAB_ERR_LIMIT before decoding;
 * any scan limit is honoured, not only TurboJPEG 2.1's 500. */
static void test_limits(void)
{
	struct slab_jpeg *j = slab_jpeg_new();
	struct bomb pix = bomb_pixels(40000, 40000), hdr = bomb_header(65500, 65500);
	struct bomb scans = bomb_scans(256, 256, 600);
	struct blob good = encode(320, 240, TJPF_RGB, TJSAMP_420, 90);
	struct slab_jpeg_info info;
	void *out = NULL;
	size_t outlen = 0;
	static const char pixels[] =
		"JPEG of 40000x40000 pixels (1600000000): over the limit of 178956970 pixels";

	CHECK(j != NULL);
	if (!j)
		return;
	CHECK_STR(slab_jpeg_error(j), "");
	CHECK(slab_jpeg_header(j, pix.p, pix.len, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), pixels);
	CHECK(slab_jpeg_check(j, pix.p, pix.len) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), pixels);
	CHECK(slab_jpeg_fit(j, pix.p, pix.len, 100, 90, &out, &outlen, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), pixels);
	CHECK(out == NULL && outlen == 0);
	/* Fitting already, still refused: the limit is on what the header declares. */
	CHECK(slab_jpeg_fit(j, pix.p, pix.len, 65535, 90, &out, &outlen, &info) == SLAB_ERR_LIMIT);
	CHECK(slab_jpeg_check(j, hdr.p, hdr.len) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j),
		  "JPEG of 65500x65500 pixels (4290250000): over the limit of 178956970 pixels");

	/* 600 scans, none warned about by libjpeg. */
	CHECK(slab_jpeg_header(j, scans.p, scans.len, &info) == 0);
	CHECK(slab_jpeg_check(j, scans.p, scans.len) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), "JPEG of more than 500 scans: over the limit of 500 scans");
	CHECK(slab_jpeg_fit(j, scans.p, scans.len, 100, 90, &out, &outlen, &info) == SLAB_ERR_LIMIT);
	slab_jpeg_limits(j, 0, 600);
	CHECK(slab_jpeg_check(j, scans.p, scans.len) == 0);
	CHECK(slab_jpeg_fit(j, scans.p, scans.len, 100, 90, &out, &outlen, &info) == 1);
	CHECK(info.width == 100 && info.height == 100);
	free(out);
	out = NULL;
	slab_jpeg_limits(j, 0, 599);
	CHECK(slab_jpeg_check(j, scans.p, scans.len) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), "JPEG of more than 599 scans: over the limit of 599 scans");
	slab_jpeg_limits(j, 0, UINT_MAX);
	CHECK(slab_jpeg_check(j, scans.p, scans.len) == 0);
	/* A low limit refuses an encoder's progressive JPEG (TurboJPEG's has 10 scans). */
	{
		tjhandle tj = tjInitCompress();
		unsigned char px[64 * 64 * 3] = { 0 }, *jb = NULL;
		unsigned long jl = 0;

		CHECK(tj && tjCompress2(tj, px, 64, 0, 64, TJPF_RGB, &jb, &jl, TJSAMP_420, 90,
					TJFLAG_PROGRESSIVE) == 0);
		slab_jpeg_limits(j, 0, 0);
		CHECK(slab_jpeg_check(j, jb, jl) == 0);
		slab_jpeg_limits(j, 0, 9);
		CHECK(slab_jpeg_check(j, jb, jl) == SLAB_ERR_LIMIT);
		CHECK_STR(slab_jpeg_error(j), "JPEG of more than 9 scans: over the limit of 9 scans");
		slab_jpeg_limits(j, 0, 10);
		CHECK(slab_jpeg_check(j, jb, jl) == 0);
		tjFree(jb);
		tjDestroy(tj);
	}

	/* The pixel limit both ways, on an ordinary JPEG. */
	slab_jpeg_limits(j, 320 * 240 - 1, 0);
	CHECK(slab_jpeg_header(j, good.p, good.len, &info) == SLAB_ERR_LIMIT);
	CHECK_STR(slab_jpeg_error(j), "JPEG of 320x240 pixels (76800): over the limit of 76799 pixels");
	slab_jpeg_limits(j, 320 * 240, 0);
	CHECK(slab_jpeg_header(j, good.p, good.len, &info) == 0);
	CHECK(slab_jpeg_check(j, good.p, good.len) == 0);
	slab_jpeg_limits(j, UINT64_MAX, 0);
	CHECK(slab_jpeg_header(j, hdr.p, hdr.len, &info) == 0);
	CHECK(info.width == 65500 && info.height == 65500);

	free(pix.p);
	free(hdr.p);
	free(scans.p);
	free(good.p);
	slab_jpeg_free(j);
}

static void test_bad(struct slab_jpeg *j)
{
	struct blob b = encode(640, 480, TJPF_RGB, TJSAMP_420, 90);
	static const unsigned char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x02";
	static const unsigned char junk[] = "\xff\xd8\xff\xe0 this is not really a JPEG at all";
	struct slab_jpeg_info info;
	unsigned char *bad, *stray;
	size_t start = scan_start(&b), cut;

	/* Cut in the middle of the scan data: the header is intact, the decode is not. */
	CHECK(start > 0 && start < b.len / 2);
	CHECK(slab_jpeg_header(j, b.p, b.len / 2, &info) == 0);
	CHECK(info.width == 640 && info.height == 480);
	CHECK(slab_jpeg_check(j, b.p, b.len / 2) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "corrupt JPEG: "));
	/* Short by the final EOI marker only: still truncated. */
	CHECK(slab_jpeg_check(j, b.p, b.len - 2) == SLAB_ERR_CORRUPT);

	/* 64 scrambled bytes mid-scan. Not every corruption of Huffman data shows (a single
	 * flipped bit often decodes to other, valid coefficients), but a run like this one
	 * loses the decoder's place: the data ends early or late. */
	bad = malloc(b.len);
	if (!bad)
		abort();
	memcpy(bad, b.p, b.len);
	for (size_t i = 0; i < 64; i++)
		bad[start + (b.len - start) / 2 + i] ^= 0xA5;
	CHECK(slab_jpeg_header(j, bad, b.len, &info) == 0);
	CHECK(slab_jpeg_check(j, bad, b.len) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "corrupt JPEG: "));

	/* Stray bytes between two header segments: libjpeg only warns, so the header is fine
	 * but the check is not. */
	stray = malloc(b.len + 2);
	if (!stray)
		abort();
	cut = 4 + ((size_t)b.p[4] << 8 | b.p[5]);
	memcpy(stray, b.p, cut);
	stray[cut] = 0x12;
	stray[cut + 1] = 0x34;
	memcpy(stray + cut + 2, b.p + cut, b.len - cut);
	CHECK(slab_jpeg_header(j, stray, b.len + 2, &info) == 0);
	CHECK(info.width == 640 && info.height == 480 && info.subsamp == SLAB_SAMP_420);
	CHECK(slab_jpeg_check(j, stray, b.len + 2) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "extraneous bytes"));
	free(stray);

	CHECK(slab_jpeg_header(j, png, sizeof(png) - 1, &info) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "not a JPEG: "));
	CHECK(slab_jpeg_check(j, png, sizeof(png) - 1) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "not a JPEG: "));
	CHECK(slab_jpeg_check(j, junk, sizeof(junk) - 1) == SLAB_ERR_CORRUPT);
	CHECK(slab_jpeg_check(j, b.p, 0) == SLAB_ERR_CORRUPT);
	CHECK(slab_jpeg_check(j, NULL, 0) == SLAB_ERR_CORRUPT);
	CHECK(slab_jpeg_header(j, b.p, 1, &info) == SLAB_ERR_CORRUPT);

	/* TurboJPEG 2.1 leaves its handle broken after a failed header: the same context
	 * must read good JPEGs again. */
	CHECK(slab_jpeg_header(j, b.p, b.len, &info) == 0);
	CHECK(slab_jpeg_check(j, b.p, b.len) == 0);

	free(bad);
	free(b.p);
}

/* Sampling factors TurboJPEG has no name for (Y 2x2, Cb 2x2, Cr 1x1), patched into the SOF of
 * a 4:4:4 JPEG. The scan data no longer matches, so only the header is of use. */
static void test_unknown_subsampling(struct slab_jpeg *j)
{
	struct blob b = encode(64, 48, TJPF_RGB, TJSAMP_444, 90), good;
	struct slab_jpeg_info info;
	size_t i = 2;
	int patched = 0;

	good = encode(64, 48, TJPF_RGB, TJSAMP_420, 90);
	while (i + 4 <= b.len && b.p[i] == 0xFF && !patched) {
		size_t seglen = (size_t)b.p[i + 2] << 8 | b.p[i + 3];

		if (b.p[i + 1] == 0xC0 && b.p[i + 9] == 3) {
			b.p[i + 11] = 0x22;
			b.p[i + 14] = 0x22;
			b.p[i + 17] = 0x11;
			patched = 1;
		}
		i += 2 + seglen;
	}
	CHECK(patched);
	memset(&info, 0, sizeof(info));
	CHECK(slab_jpeg_header(j, b.p, b.len, &info) == 0);
	CHECK(info.width == 64 && info.height == 48);
	CHECK(info.subsamp == SLAB_SAMP_UNKNOWN);
	CHECK(info.colorspace == SLAB_CS_YCBCR);
	CHECK(slab_jpeg_header(j, good.p, good.len, &info) == 0);
	CHECK(info.subsamp == SLAB_SAMP_420);
	free(good.p);
	free(b.p);
}

/* fit() to max_side: the size wanted, the mean colour kept, the header of the result. */
static void fit_case(struct slab_jpeg *j, int w, int h, int pf, int samp, unsigned max_side,
		     uint32_t want_w, uint32_t want_h)
{
	struct blob b = encode(w, h, pf, samp, 95), o;
	struct slab_jpeg_info info, oinfo;
	double m0[4], m1[4];
	void *out = NULL;
	size_t outlen = 0;
	int n0, n1;

	CHECK(slab_jpeg_fit(j, b.p, b.len, max_side, 90, &out, &outlen, &info) == 1);
	CHECK(out != NULL && outlen > 0);
	if (!out) {
		fprintf(stderr, "fit %dx%d to %u: %s\n", w, h, max_side, slab_jpeg_error(j));
		free(b.p);
		return;
	}
	CHECK(info.width == want_w && info.height == want_h);
	CHECK(info.subsamp == (pf == TJPF_GRAY ? SLAB_SAMP_GRAY : samp));
	o.p = out;
	o.len = outlen;
	CHECK(slab_jpeg_header(j, out, outlen, &oinfo) == 0);
	CHECK(oinfo.width == info.width && oinfo.height == info.height);
	CHECK(oinfo.subsamp == info.subsamp && oinfo.colorspace == info.colorspace);
	CHECK(slab_jpeg_check(j, out, outlen) == 0);

	/* Area averaging keeps the mean; nearest neighbour on a checkerboard would not. */
	n0 = mean_colour(&b, pf, m0);
	n1 = mean_colour(&o, pf, m1);
	CHECK(n0 > 0 && n0 == n1);
	for (int c = 0; c < n0 && n0 == n1; c++) {
		if (m0[c] - m1[c] > 2.0 || m1[c] - m0[c] > 2.0) {
			fprintf(stderr, "%dx%d -> %ux%u channel %d: mean %.2f became %.2f\n",
				w, h, want_w, want_h, c, m0[c], m1[c]);
			CHECK(!"mean colour kept");
		}
	}
	free(out);
	free(b.p);
}

struct fit_job {
	const struct blob *in;
	void *out;
	size_t outlen;
	int ret;
};

static void *fit_thread(void *arg)
{
	struct fit_job *job = arg;
	struct slab_jpeg *j = slab_jpeg_new();
	struct slab_jpeg_info info;

	job->ret = j ? slab_jpeg_fit(j, job->in->p, job->in->len, 100, 85, &job->out,
				     &job->outlen, &info) : -1;
	slab_jpeg_free(j);
	return NULL;
}

static void test_fit(struct slab_jpeg *j)
{
	struct blob b = encode(640, 480, TJPF_RGB, TJSAMP_420, 95);
	struct slab_jpeg_info info;
	struct fit_job job = { &b, NULL, 0, -2 };
	pthread_t t;
	void *a = NULL, *c = NULL;
	size_t alen = 0, clen = 0;

	fit_case(j, 640, 480, TJPF_RGB, TJSAMP_420, 100, 100, 75);
	fit_case(j, 480, 640, TJPF_RGB, TJSAMP_444, 100, 75, 100);
	fit_case(j, 641, 480, TJPF_RGB, TJSAMP_422, 100, 100, 75);
	fit_case(j, 640, 480, TJPF_GRAY, TJSAMP_GRAY, 100, 100, 75);
	fit_case(j, 640, 480, TJPF_CMYK, TJSAMP_420, 100, 100, 75);
	fit_case(j, 800, 600, TJPF_RGB, TJSAMP_420, 100, 100, 75);
	fit_case(j, 4000, 3000, TJPF_RGB, TJSAMP_420, 256, 256, 192);
	/* No IDCT scaling leaves twice the target: the box filter alone. */
	fit_case(j, 400, 300, TJPF_RGB, TJSAMP_420, 399, 399, 299);
	/* Scaled 1/8, the last row of blocks is mostly padding and must weigh 4/20 only. */
	fit_case(j, 2000, 20, TJPF_RGB, TJSAMP_444, 100, 100, 1);
	/* Too thin for IDCT scaling. */
	fit_case(j, 1000, 10, TJPF_RGB, TJSAMP_444, 100, 100, 1);
	fit_case(j, 3, 2000, TJPF_GRAY, TJSAMP_GRAY, 64, 1, 64);

	/* Already fits: nothing made, the input described. */
	a = (void *)1;
	alen = 7;
	CHECK(slab_jpeg_fit(j, b.p, b.len, 640, 90, &a, &alen, &info) == 0);
	CHECK(a == NULL && alen == 0);
	CHECK(info.width == 640 && info.height == 480 && info.subsamp == SLAB_SAMP_420);
	CHECK(slab_jpeg_fit(j, b.p, b.len, 100000, 90, &a, &alen, &info) == 0);

	CHECK(slab_jpeg_fit(j, b.p, b.len, 100, 0, &a, &alen, &info) == SLAB_ERR_INVAL);
	CHECK(slab_jpeg_fit(j, b.p, b.len, 100, 101, &a, &alen, &info) == SLAB_ERR_INVAL);
	CHECK(slab_jpeg_fit(j, b.p, b.len, 0, 90, &a, &alen, &info) == SLAB_ERR_INVAL);
	CHECK(slab_jpeg_fit(j, b.p, b.len / 2, 100, 90, &a, &alen, &info) == SLAB_ERR_CORRUPT);
	CHECK(a == NULL);

	/* The same bytes twice on one context, and on another context in another thread. */
	CHECK(slab_jpeg_fit(j, b.p, b.len, 100, 85, &a, &alen, &info) == 1);
	CHECK(slab_jpeg_fit(j, b.p, b.len, 100, 85, &c, &clen, &info) == 1);
	CHECK(a && c && alen == clen && memcmp(a, c, alen) == 0);
	CHECK(pthread_create(&t, NULL, fit_thread, &job) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(job.ret == 1 && job.out && job.outlen == alen);
	CHECK(job.out && a && job.outlen == alen && memcmp(job.out, a, alen) == 0);

	free(job.out);
	free(a);
	free(c);
	free(b.p);
}

/* pack's image extensions (imgpack.c), which decide only whether --image-check refuses a field
 * whose bytes are no image: the format itself comes from the bytes. */
static void test_field_names(void)
{
	CHECK(slab_imgpack_image_name("jpg"));
	CHECK(slab_imgpack_image_name("jpeg"));
	CHECK(slab_imgpack_image_name("JPG"));
	CHECK(slab_imgpack_image_name("JpEg"));
	CHECK(slab_imgpack_image_name("png"));
	CHECK(slab_imgpack_image_name("WebP"));
	CHECK(slab_imgpack_image_name("seg.png"));
	CHECK(slab_imgpack_image_name("left.jpg"));
	CHECK(!slab_imgpack_image_name("jpe"));
	CHECK(!slab_imgpack_image_name("jp"));
	CHECK(!slab_imgpack_image_name("jpgs"));
	CHECK(!slab_imgpack_image_name("xjpg"));
	CHECK(!slab_imgpack_image_name("jpg.gz"));
	CHECK(!slab_imgpack_image_name("png."));
	CHECK(!slab_imgpack_image_name(""));
	CHECK(!slab_imgpack_image_name(NULL));
}

/* The fitted size every format shares (slab_fit_size()): round half up, at least 1. */
static void test_fit_size(void)
{
	uint32_t tw, th;

	slab_fit_size(1000, 500, 100, &tw, &th);
	CHECK(tw == 100 && th == 50);
	slab_fit_size(3, 1000, 100, &tw, &th);
	CHECK(tw == 1 && th == 100);            /* 0.3 rounds to 0: at least 1 */
	slab_fit_size(300, 201, 200, &tw, &th);
	CHECK(tw == 200 && th == 134);          /* 134.0 */
	slab_fit_size(2000000000u, 3, 65535, &tw, &th);
	CHECK(tw == 65535 && th == 1);
}

static struct blob read_corpus(const char *dir, const char *name)
{
	char path[4096];
	struct blob b = { NULL, 0 };
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/jpeg/%s", dir, name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "cannot read '%s'\n", path);
		CHECK(!"corpus file readable");
		if (f)
			fclose(f);
		return b;
	}
	b.p = malloc((size_t)n);
	if (b.p && fread(b.p, 1, (size_t)n, f) == (size_t)n)
		b.len = (size_t)n;
	fclose(f);
	CHECK(b.len > 0);
	return b;
}

static void test_corpus(struct slab_jpeg *j, const char *dir)
{
	struct blob orig = read_corpus(dir, "testorig.jpg");
	struct blob intl = read_corpus(dir, "testimgint.jpg");
	struct blob ari = read_corpus(dir, "testimgari.jpg");
	struct blob m12 = read_corpus(dir, "monkey12.jpg");
	struct slab_jpeg_info info;
	void *out = NULL;
	size_t outlen = 0;
	int r;

	CHECK(slab_jpeg_header(j, orig.p, orig.len, &info) == 0);
	CHECK(info.width == 227 && info.height == 149);
	CHECK(info.subsamp == SLAB_SAMP_420 && info.colorspace == SLAB_CS_YCBCR);
	CHECK(slab_jpeg_check(j, orig.p, orig.len) == 0);
	CHECK(slab_jpeg_fit(j, orig.p, orig.len, 100, 90, &out, &outlen, &info) == 1);
	CHECK(info.width == 100 && info.height == 66);
	free(out);
	CHECK(slab_jpeg_check(j, orig.p, orig.len - 100) == SLAB_ERR_CORRUPT);

	CHECK(slab_jpeg_header(j, intl.p, intl.len, &info) == 0);
	CHECK(info.width == 227 && info.height == 149);
	CHECK(slab_jpeg_check(j, intl.p, intl.len) == 0);

	/* Debian builds libjpeg-turbo with arithmetic decoding, so this one is accepted. */
	CHECK(slab_jpeg_header(j, ari.p, ari.len, &info) == 0);
	CHECK(info.width == 227 && info.height == 149);
	CHECK(slab_jpeg_check(j, ari.p, ari.len) == 0);

	/* 12-bit: TurboJPEG 2.1 refuses it already at the header, and says why. */
	r = slab_jpeg_header(j, m12.p, m12.len, &info);
	CHECK(r == SLAB_ERR_CORRUPT || r == 0);
	if (r == SLAB_ERR_CORRUPT)
		CHECK(has(slab_jpeg_error(j), "12-bit"));
	CHECK(slab_jpeg_check(j, m12.p, m12.len) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_jpeg_error(j), "12-bit"));
	CHECK(slab_jpeg_fit(j, m12.p, m12.len, 16, 90, &out, &outlen, &info) == SLAB_ERR_CORRUPT);

	/* The context still works after the refusals. */
	CHECK(slab_jpeg_check(j, orig.p, orig.len) == 0);

	free(orig.p);
	free(intl.p);
	free(ari.p);
	free(m12.p);
}

int main(void)
{
	struct slab_jpeg *j = slab_jpeg_new();
	const char *corpus = getenv("SLAB_CORPUS");

	CHECK(j != NULL);
	if (!j)
		return UNIT_DONE();
	test_header(j);
	test_limits();
	test_bad(j);
	test_unknown_subsampling(j);
	test_fit(j);
	test_field_names();
	test_fit_size();
	if (corpus && *corpus) {
		char probe[4096];

		/* A clone without the corpus beside it: skip, as the bats files do. */
		snprintf(probe, sizeof(probe), "%s/jpeg/testorig.jpg", corpus);
		if (access(probe, R_OK) == 0)
			test_corpus(j, corpus);
		else
			printf("skip: corpus tests: cannot read %s\n", probe);
	} else {
		printf("skip: corpus tests: SLAB_CORPUS is not set\n");
	}
	slab_jpeg_free(j);
	CHECK_STR(slab_jpeg_error(NULL), "no JPEG context");
	return UNIT_DONE();
}
