/* crc32c.c: CRC-32C with the SSE4.2 crc32 instruction when present, slicing-by-8 otherwise. */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u        /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			table[k][n] = (table[k - 1][n] >> 8) ^ table[0][table[k - 1][n] & 0xff];
}

static uint32_t crc_soft(uint32_t crc, const unsigned char *p, size_t len)
{
	pthread_once(&table_once, make_table);
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 |
			      (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HW 1

/*
 * The crc32 instruction has a latency of 3 cycles and a throughput of 1: one stream runs at a
 * third of the speed. Long buffers go as three streams over three consecutive blocks of
 * STREAM bytes, joined afterwards: a CRC register advanced over STREAM zero bytes is a linear
 * map of the register, tabulated once (shift_table) and applied byte by byte.
 */
#define STREAM 4096u

static uint32_t shift_table[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

/* The raw register after STREAM zero bytes, bit by bit: the definition, used once. */
static uint32_t shift_slow(uint32_t r)
{
	for (unsigned i = 0; i < STREAM * 8; i++)
		r = r & 1 ? (r >> 1) ^ POLY : r >> 1;
	return r;
}

static void make_shift_table(void)
{
	uint32_t basis[32];

	for (int b = 0; b < 32; b++)
		basis[b] = shift_slow(1u << b);
	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t r = 0;
			for (int b = 0; b < 8; b++)
				if (v >> b & 1)
					r ^= basis[8 * k + b];
			shift_table[k][v] = r;
		}
}

static uint32_t shift(uint32_t r)
{
	return shift_table[0][r & 0xff] ^ shift_table[1][(r >> 8) & 0xff] ^
	       shift_table[2][(r >> 16) & 0xff] ^ shift_table[3][r >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	if (len >= 3 * STREAM) {
		pthread_once(&shift_once, make_shift_table);
		while (len >= 3 * STREAM) {
			uint64_t a = c, b = 0, d = 0, x, y, z;
			for (size_t i = 0; i < STREAM; i += 8) {
				memcpy(&x, p + i, 8);
				memcpy(&y, p + STREAM + i, 8);
				memcpy(&z, p + 2 * STREAM + i, 8);
				a = __builtin_ia32_crc32di(a, x);
				b = __builtin_ia32_crc32di(b, y);
				d = __builtin_ia32_crc32di(d, z);
			}
			c = shift(shift((uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)d;
			p += 3 * STREAM;
			len -= 3 * STREAM;
		}
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t slab_crc32c(uint32_t crc, const void *buf, size_t len)
{
	crc = ~crc;
#ifdef HAVE_HW
	if (__builtin_cpu_supports("sse4.2"))
		crc = crc_hw(crc, buf, len);
	else
#endif
		crc = crc_soft(crc, buf, len);
	return ~crc;
}
