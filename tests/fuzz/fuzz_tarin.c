/* fuzz_tarin.c: libFuzzer target for tar / WebDataset ingestion (lib/dataset/tarin.c over libarchive):
 * read every sample of the input, check what comes back hangs together, free everything. An
 * input of odd length is read keeping only some fields, as pack --fields does. */
#include "tarin.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A sparse member can claim any size: keep what one sample may hold below the RSS limit. */
#define MAX_SAMPLE (16u << 20)

static volatile uint64_t sink;

static void check(const struct slab_tarin_sample *s)
{
	uint64_t sum = 0;

	if (!s->key || strlen(s->key) != s->key_len || s->size > MAX_SAMPLE)
		__builtin_trap();
	if (s->bad)
		return;
	for (size_t i = 0; i < s->nfields; i++) {
		const struct slab_tarin_field *f = &s->fields[i];
		if (!f->name || f->offset > s->size || f->size > s->size - f->offset)
			__builtin_trap();
		sum += strlen(f->name);
	}
	/* Every byte was written (data or sparse zeros): let the sanitizers see them read. */
	for (uint64_t i = 0; i < s->size; i++)
		sum += s->data[i];
	sink += sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keep[] = { "cls", "jpg", "txt" };
	/* Odd lengths also test --fields (plain tars, in 512-byte blocks, start without). */
	const struct slab_tarin_options o = {
		.max_sample_size = MAX_SAMPLE,
		.keep = size % 2 ? keep : NULL,
		.nkeep = size % 2 ? 3 : 0,
	};
	struct slab_tarin *t = slab_tarin_new();
	struct slab_tarin_sample *s;
	struct slab_tarin_stats st;
	int r;

	if (!t)
		return 0;
	if (slab_tarin_open_memory(t, data, size, "fuzz", &o) == 0) {
		while ((r = slab_tarin_next(t, &s)) > 0) {
			check(s);
			slab_tarin_sample_free(s);
		}
		if (r < 0)
			sink += strlen(slab_tarin_error(t));
	}
	slab_tarin_stats(t, &st);
	sink += st.members + st.data_bytes + st.raw_bytes;
	slab_tarin_free(t);
	return 0;
}
