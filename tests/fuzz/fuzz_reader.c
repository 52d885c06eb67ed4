/* fuzz_reader.c: libFuzzer target for the .slab reader (lib/dataset/reader.c): open the input and, when
 * it opens, call every lookup on it and touch every byte the reader hands out.
 *
 * Checksums stop random mutations at the door, so an input whose reserved header byte 40 is
 * not zero (valid files have zero there) gets its header, table and trailer CRC32Cs recomputed
 * first, and with bit 0x02 of that byte the fields' CRCs too: then the structural checks behind
 * the checksums are fuzzed as well. */
#include "slab.h"
#include "format.h"
#include "crc32c.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MODE_BYTE 40                    /* reserved, zero in every valid header */
#define TOUCH_BUDGET (4u << 20)         /* bytes summed per input; beyond it, ends only */

static uint64_t budget;
static volatile uint64_t sink;          /* keeps the sums from being optimised away */

/* Read [p, p + n) so that AddressSanitizer sees any byte outside the input. */
static void touch(const void *p, uint64_t n)
{
	const unsigned char *b = p;
	uint64_t sum = 0;

	if (!n)
		return;
	if (n <= budget) {
		budget -= n;
		for (uint64_t i = 0; i < n; i++)
			sum += b[i];
	} else {
		/* The range starts inside the buffer, so if any byte is outside, the last one is. */
		sum = b[0] + b[n - 1];
	}
	sink += sum;
}

static void progress(uint64_t done, uint64_t total, void *arg)
{
	(void)arg;
	if (done > total)
		__builtin_trap();
}

/* Make the table CRC and the trailer CRC agree with the bytes around them. */
static void fix_table(unsigned char *b, size_t size)
{
	unsigned char *tr = b + size - SLAB_TRAILER_SIZE;
	uint64_t table_off = slab_le64(tr + 8), table_size = slab_le64(tr + 16);
	uint64_t end = size - SLAB_TRAILER_SIZE;

	if (table_off <= end && table_size <= end - table_off)
		slab_put32(tr + 40, slab_crc32c(0, b + table_off, (size_t)table_size));
	slab_put32(tr + 60, slab_crc32c(0, tr, 60));
}

/* Give every present field the CRC32C of the bytes it names, through the reader itself, so
 * slab_verify gets past the checksums to the page, tiling and key index rules. */
static void fix_fields(unsigned char *b, size_t size)
{
	struct slab *s = slab_new();
	uint64_t crc_budget = TOUCH_BUDGET;

	if (!s)
		return;
	if (slab_open_mem(s, b, size, "fix") == 0) {
		uint64_t n = slab_count(s), table = slab_table_offset(s);
		uint64_t fields = table + slab_le64(b + table + 56);
		unsigned nf = slab_field_count(s);
		struct slab_field fl;

		for (uint64_t i = 0; i < n; i++)
			for (unsigned f = 0; f < nf; f++) {
				if (slab_get(s, i, f, &fl) != 1 || fl.size > crc_budget)
					continue;
				crc_budget -= fl.size;
				slab_put32(b + fields + (i * nf + f) * SLAB_FIELD_RECORD + 16,
					   slab_crc32c(0, fl.data, (size_t)fl.size));
			}
	}
	slab_close(s);
	fix_table(b, size);
}

/* Mode byte bits, when it is not zero: the CRCs of header, table and trailer are always redone. */
#define MODE_FIELDS     0x02            /* the fields' CRCs too */
#define MODE_KEEP_TIE   0x04            /* leave the trailer's copy of the header CRC alone */

static void fix_checksums(unsigned char *b, size_t size, unsigned mode)
{
	uint32_t crc;

	memset(b + 36, 0, 4);
	crc = slab_crc32c(0, b, SLAB_HEADER_SIZE);
	slab_put32(b + 36, crc);
	if (!(mode & MODE_KEEP_TIE))
		slab_put32(b + size - SLAB_TRAILER_SIZE + 44, crc);
	fix_table(b, size);
	if (mode & MODE_FIELDS)
		fix_fields(b, size);
}

static void exercise(struct slab *s)
{
	uint64_t n = slab_count(s), idx;
	unsigned nf = slab_field_count(s);
	struct slab_sample smp;
	struct slab_field fl;

	sink += slab_page_size(s) + slab_page_count(s) + slab_data_offset(s) +
		slab_table_offset(s) + slab_file_size(s) + slab_format_major(s) +
		slab_format_minor(s) + strlen(slab_options(s)) + slab_base(s)[0];
	touch(slab_error(s), strlen(slab_error(s)));

	for (unsigned f = 0; f < nf; f++) {
		const char *name = slab_field_name(s, f);
		int id;
		if (!name)
			__builtin_trap();
		touch(name, strlen(name) + 1);
		/* Names need not be distinct in a damaged schema: the first match is enough. */
		id = slab_field_lookup(s, name);
		if (id < 0 || (unsigned)id > f)
			__builtin_trap();
	}
	if (slab_field_name(s, nf) != NULL)
		__builtin_trap();
	sink += (uint64_t)slab_field_lookup(s, "no such field \x01");

	for (uint64_t i = 0; i < n; i++) {
		int r = slab_sample(s, i, &smp);
		if (r == 0) {
			touch(smp.key, smp.key_len);
			touch(slab_base(s) + smp.offset, smp.size);
			r = slab_find(s, smp.key, smp.key_len, &idx);
			if (r == 0 && idx >= n)
				__builtin_trap();
		}
		for (unsigned f = 0; f < nf; f++) {
			struct slab_video_info vi;

			r = slab_get(s, i, f, &fl);
			if (r == 1) {
				if (fl.data != slab_base(s) + fl.offset)
					__builtin_trap();
				touch(fl.data, fl.size);
			}
			/* A video's record (1.3): in the table, or an error. */
			r = slab_field_video(s, i, f, &vi);
			if (r == 1) {
				if (memchr(vi.codec, '\0', sizeof(vi.codec)) == NULL)
					__builtin_trap();
				sink += vi.frames + vi.fps_num + vi.fps_den + vi.width + strlen(vi.codec);
			}
		}
		sink += (uint64_t)slab_get(s, i, nf, &fl);
	}
	if (slab_sample(s, n, &smp) != SLAB_ERR_RANGE || slab_get(s, n, 0, &fl) != SLAB_ERR_RANGE)
		__builtin_trap();
	sink += (uint64_t)slab_find(s, "", 0, &idx);
	sink += (uint64_t)slab_find(s, "no such key", 11, &idx);
	sink += (uint64_t)slab_verify(s, progress, NULL);
	touch(slab_error(s), strlen(slab_error(s)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slab *s = slab_new();
	unsigned char *copy = NULL;
	const void *buf = data;

	if (!s)
		return 0;
	budget = TOUCH_BUDGET;
	if (size >= SLAB_HEADER_SIZE + SLAB_TRAILER_SIZE && data[MODE_BYTE]) {
		/* An exact-size copy, so reads past the end still hit the redzone. */
		copy = malloc(size);
		if (!copy)
			goto out;
		memcpy(copy, data, size);
		fix_checksums(copy, size, data[MODE_BYTE]);
		buf = copy;
	}
	if (slab_open_mem(s, buf, size, "fuzz") == 0)
		exercise(s);
	else
		touch(slab_error(s), strlen(slab_error(s)));
out:
	slab_close(s);
	free(copy);
	return 0;
}
