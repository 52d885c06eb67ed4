/* jpegbomb.h: JPEG decompression bombs (and cheap large JPEGs) written marker by marker, for
 * the unit tests of the two JPEG decoders; the C twin of tests/test_helper/jpegbomb.py, whose
 * docstring says what each one is. Every picture is flat grey (all coefficients 0), so its
 * entropy-coded data is a few bits a block. The caller frees bomb.p. */
#ifndef SLAB_TEST_JPEGBOMB_H
#define SLAB_TEST_JPEGBOMB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bomb {
	unsigned char *p;
	size_t len, cap;
	unsigned acc;           /* bits not yet a whole byte */
	int nbits;
};

static inline void bomb_put(struct bomb *b, const void *bytes, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p) {
			fprintf(stderr, "jpegbomb: out of memory\n");
			abort();
		}
		b->cap = cap;
	}
	memcpy(b->p + b->len, bytes, n);
	b->len += n;
}

static inline void bomb_byte(struct bomb *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	bomb_put(b, &c, 1);
}

static inline void bomb_segment(struct bomb *b, unsigned marker, const unsigned char *payload,
				size_t n)
{
	bomb_byte(b, 0xFF);
	bomb_byte(b, marker);
	bomb_byte(b, (unsigned)(n + 2) >> 8);
	bomb_byte(b, (unsigned)(n + 2) & 0xFF);
	bomb_put(b, payload, n);
}

/* MSB first, 0xFF stuffed with 0x00 as in entropy-coded data. */
static inline void bomb_bits(struct bomb *b, unsigned v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		b->acc = b->acc << 1 | (v >> i & 1);
		if (++b->nbits == 8) {
			bomb_byte(b, b->acc);
			if (b->acc == 0xFF)
				bomb_byte(b, 0);
			b->acc = 0;
			b->nbits = 0;
		}
	}
}

/* The last byte padded with ones. */
static inline void bomb_flush(struct bomb *b)
{
	if (b->nbits)
		bomb_bits(b, (1u << (8 - b->nbits)) - 1, 8 - b->nbits);
}

static inline void bomb_zeros(struct bomb *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bomb_byte(b, 0);
}

/* SOI and a quantisation table of ones. */
static inline void bomb_start(struct bomb *b)
{
	unsigned char q[65];

	memset(b, 0, sizeof(*b));
	bomb_byte(b, 0xFF);
	bomb_byte(b, 0xD8);
	q[0] = 0;
	memset(q + 1, 1, 64);
	bomb_segment(b, 0xDB, q, sizeof(q));
}

static inline void bomb_end(struct bomb *b)
{
	bomb_byte(b, 0xFF);
	bomb_byte(b, 0xD9);
}

/* SOF marker, w x h, ncomp components: the first sampled samp x samp, the others 1 x 1. */
static inline void bomb_sof(struct bomb *b, unsigned marker, unsigned w, unsigned h, int ncomp,
			    unsigned samp)
{
	unsigned char s[6 + 3 * 3] = { 8, (unsigned char)(h >> 8), (unsigned char)h,
				       (unsigned char)(w >> 8), (unsigned char)w,
				       (unsigned char)ncomp };

	for (int c = 0; c < ncomp; c++) {
		s[6 + 3 * c] = (unsigned char)(c + 1);
		s[7 + 3 * c] = (unsigned char)(c == 0 ? samp << 4 | samp : 0x11);
		s[8 + 3 * c] = 0;
	}
	bomb_segment(b, marker, s, 6 + 3 * (size_t)ncomp);
}

/* DC table 0: category 0 is "0". AC table 0: with runs, the EOB runs 0x00 .. 0xE0, 4 bits
 * each (0000 .. 1110: libjpeg refuses an all-ones code); else EOB is "0". */
static inline void bomb_dht(struct bomb *b, int runs)
{
	unsigned char dc[1 + 16 + 1] = { 0x00, 1 }, ac[1 + 16 + 15] = { 0x10 };

	dc[17] = 0;
	bomb_segment(b, 0xC4, dc, sizeof(dc));
	if (runs) {
		ac[4] = 15;
		for (int r = 0; r < 15; r++)
			ac[17 + r] = (unsigned char)(r << 4);
		bomb_segment(b, 0xC4, ac, sizeof(ac));
	} else {
		ac[1] = 1;
		ac[17] = 0;
		bomb_segment(b, 0xC4, ac, 18);
	}
}

static inline void bomb_sos(struct bomb *b, int ncomp, unsigned ss, unsigned se, unsigned ah,
			    unsigned al)
{
	unsigned char s[1 + 2 * 3 + 3] = { (unsigned char)ncomp };

	for (int c = 0; c < ncomp; c++) {
		s[1 + 2 * c] = (unsigned char)(c + 1);
		s[2 + 2 * c] = 0x00;
	}
	s[1 + 2 * ncomp] = (unsigned char)ss;
	s[2 + 2 * ncomp] = (unsigned char)se;
	s[3 + 2 * ncomp] = (unsigned char)(ah << 4 | al);
	bomb_segment(b, 0xDA, s, 4 + 2 * (size_t)ncomp);
}

static inline size_t bomb_blocks(unsigned w, unsigned h)
{
	return (size_t)((w + 7) / 8) * ((h + 7) / 8);
}

/* Progressive greyscale, w x h declared, a DC scan of a few bytes: the 987-byte bomb. */
static inline struct bomb bomb_pixels(unsigned w, unsigned h)
{
	struct bomb b;

	bomb_start(&b);
	bomb_sof(&b, 0xC2, w, h, 1, 1);
	bomb_dht(&b, 0);
	bomb_sos(&b, 1, 0, 0, 0, 0);
	bomb_zeros(&b, 16);
	bomb_end(&b);
	return b;
}

/* Baseline YCbCr 4:2:0, w x h declared, a few bytes of scan data. */
static inline struct bomb bomb_header(unsigned w, unsigned h)
{
	struct bomb b;

	bomb_start(&b);
	bomb_sof(&b, 0xC0, w, h, 3, 2);
	bomb_dht(&b, 0);
	bomb_sos(&b, 3, 0, 63, 0, 0);
	bomb_zeros(&b, 16);
	bomb_end(&b);
	return b;
}

/* Progressive greyscale w x h of nscans scans: the DC scan, then one coefficient a scan, each
 * first at Al 13 and refined 13 times (883 scans libjpeg takes without a warning), then
 * refinements again (warned about, inconsistent progression) up to nscans. */
static inline struct bomb bomb_scans(unsigned w, unsigned h, unsigned nscans)
{
	struct bomb b, runs = { 0 };
	size_t nb = bomb_blocks(w, h);

	for (size_t left = nb; left > 0;) {
		unsigned run = left > 32767 ? 32767 : (unsigned)left, r = 0;

		while (run >> (r + 1))
			r++;
		bomb_bits(&runs, r, 4);
		if (r)
			bomb_bits(&runs, run - (1u << r), (int)r);
		left -= run;
	}
	bomb_flush(&runs);
	bomb_start(&b);
	bomb_sof(&b, 0xC2, w, h, 1, 1);
	bomb_dht(&b, 1);
	bomb_sos(&b, 1, 0, 0, 0, 0);
	bomb_zeros(&b, (nb + 7) / 8);
	for (unsigned n = 1; n < nscans; n++) {
		unsigned k, ah, al;

		if (n - 1 < 63 * 14) {
			k = 1 + (n - 1) / 14;
			ah = (n - 1) % 14 == 0 ? 0 : 14 - (n - 1) % 14;
			al = ah ? ah - 1 : 13;
		} else {
			k = 1 + (n - 1 - 63 * 14) % 63;
			ah = 1;
			al = 0;
		}
		bomb_sos(&b, 1, k, k, ah, al);
		bomb_put(&b, runs.p, runs.len);
	}
	bomb_end(&b);
	free(runs.p);
	return b;
}

/* Baseline greyscale w x h, whole and valid: large but cheap (2 bits a block). */
static inline struct bomb bomb_flat(unsigned w, unsigned h)
{
	struct bomb b;

	bomb_start(&b);
	bomb_sof(&b, 0xC0, w, h, 1, 1);
	bomb_dht(&b, 0);
	bomb_sos(&b, 1, 0, 63, 0, 0);
	bomb_zeros(&b, (2 * bomb_blocks(w, h) + 7) / 8);
	bomb_end(&b);
	return b;
}

#endif
