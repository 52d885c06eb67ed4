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
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	/* Three independent streams hide the instruction's 3-cycle latency on long buffers;
	 * the simple loop is enough here: fields are checksummed once, at copy speed. */
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
