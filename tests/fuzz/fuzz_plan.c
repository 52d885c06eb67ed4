/* fuzz_plan.c: libFuzzer target for the plan file reader (lib/dataset/plan.c, slab_plan_read): read
 * the input as a plan and, when it is accepted, write it back and read that again, which must
 * give the same plan byte for byte.
 *
 * Checksums stop random mutations at the door, so an input whose reserved header byte 100 is
 * not zero (valid plans have zero there) first gets its entries CRC and header CRC recomputed:
 * then the checks behind the checksums are fuzzed as well. */
#include "crc32c.h"
#include "format.h"
#include "plan.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MODE_BYTE 100                   /* reserved, zero in every valid header */

static void fix_crcs(unsigned char *b, size_t size)
{
	uint64_t hsize = slab_le32(b + 12);

	if (hsize < SLAB_PLAN_HEADER_FIXED || hsize > size)
		return;
	slab_put32(b + 92, slab_crc32c(0, b + hsize, (size_t)(size - hsize)));
	slab_put32(b + 96, 0);
	slab_put32(b + 96, slab_crc32c(0, b, (size_t)hsize));
}

/* The bytes of a memory file, or NULL. */
static unsigned char *contents(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *b = end >= 0 ? malloc((size_t)end + 1) : NULL;

	if (b && pread(fd, b, (size_t)end, 0) != end) {
		free(b);
		return NULL;
	}
	*len = (size_t)end;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slab_plan *plan = slab_plan_new(), *again = slab_plan_new();
	unsigned char *copy = malloc(size + 1), *b1 = NULL, *b2 = NULL;
	int in = memfd_create("plan", 0), out = memfd_create("again", 0);
	char path[64];
	size_t l1 = 0, l2 = 0;

	if (!copy || in < 0 || out < 0 || !plan || !again)
		__builtin_trap();
	memcpy(copy, data, size);
	if (size > MODE_BYTE && copy[MODE_BYTE])
		fix_crcs(copy, size);
	if (write(in, copy, size) != (ssize_t)size)
		__builtin_trap();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", in);
	if (slab_plan_read(plan, path) == 0) {
		/* every entry is in range of its own identities */
		for (uint64_t i = 0; i < plan->n; i++)
			if (plan->entries[i].file >= plan->nfiles ||
			    plan->entries[i].sample >= plan->ids[plan->entries[i].file].samples)
				__builtin_trap();
		if (slab_plan_write(plan, out) < 0)
			__builtin_trap();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", out);
		if (slab_plan_read(again, path) < 0)
			__builtin_trap();
		b1 = contents(in, &l1);
		b2 = contents(out, &l2);
		/* The reader ignores reserved bytes, which the writer zeroes: the sizes and the
		 * entries must be the same bytes, the rest the same values. */
		if (!b1 || !b2 || l1 != l2 || again->n != plan->n ||
		    memcmp(b1 + slab_le32(b1 + 12), b2 + slab_le32(b1 + 12), l1 - slab_le32(b1 + 12)) != 0 ||
		    memcmp(plan->entries, again->entries, plan->n * sizeof(*plan->entries)) != 0 ||
		    memcmp(plan->ids, again->ids, plan->nfiles * sizeof(*plan->ids)) != 0 ||
		    plan->p.mode != again->p.mode || plan->p.seed != again->p.seed ||
		    plan->p.epoch != again->p.epoch || plan->p.rank != again->p.rank ||
		    plan->p.world != again->p.world || plan->p.window != again->p.window ||
		    plan->p.flags != again->p.flags || plan->start != again->start ||
		    plan->length != again->length || plan->total != again->total)
			__builtin_trap();
	}
	slab_plan_free(plan);
	slab_plan_free(again);
	free(copy);
	free(b1);
	free(b2);
	close(in);
	close(out);
	return 0;
}
