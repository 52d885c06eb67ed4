/* rawout.h: the length-prefixed sample framing of prefetch --emit-format raw, for programs
 * that want samples in order without a tar parser. prefetch(1) gives it byte by byte. */
#ifndef SLAB_RAWOUT_H
#define SLAB_RAWOUT_H

#include <stddef.h>
#include <stdint.h>

/*
 * All integers little-endian, no padding anywhere.
 *
 * Stream header, 24 bytes:
 *   0   8  magic "SLABEMIT"
 *   8   4  version (1)
 *   12  4  flags (0)
 *   16  8  samples announced (the records that follow unless the stream is cut short)
 *
 * Sample record: a fixed part of 32 bytes, the key, then the fields:
 *   0   4  magic "SMPL"
 *   4   4  file: index of the .slab file in the order given
 *   8   8  sample index in that file
 *   16  8  position in the plan
 *   24  4  key length K
 *   28  4  field count F (the fields the sample has)
 *   32  K  key bytes (UTF-8 as stored, no terminator)
 *   then F times, in the order the fields had in the packed input:
 *     0  2  name length L
 *     2  L  name bytes (the WebDataset extension: "jpg", "seg.png", ...)
 *     .  8  size S
 *     .  S  the field's bytes
 *
 * End record, 32 bytes: magic "DONE", then zero, the number of sample records written (u64
 * at offset 8), and zeros. A stream without it was cut short.
 */

#define SLAB_RAW_MAGIC          "SLABEMIT"
#define SLAB_RAW_SAMPLE_MAGIC   "SMPL"
#define SLAB_RAW_END_MAGIC      "DONE"
#define SLAB_RAW_VERSION        1
#define SLAB_RAW_HEADER_SIZE    24u
#define SLAB_RAW_RECORD_SIZE    32u

struct slab;
struct slab_rawout;

/* A new raw writer; NULL only when out of memory. Free with slab_rawout_free(). */
struct slab_rawout *slab_rawout_new(void);

/* Before slab_rawout_open(): splice (on non-zero) the bytes of fields given with their file
 * (slab_rawout_sample_from()) into fd when fd is a pipe, the pipe grown to pipe_bytes where
 * Linux allows (slab_outbuf_splice() in io.h). The stream is the same bytes either way. Off
 * until asked. */
void slab_rawout_set_splice(struct slab_rawout *r, int on, uint64_t pipe_bytes);

/* Start a stream on fd (a file or a pipe; never seeks) and write its header announcing
 * count samples. Buffers at most 64 KiB; larger fields go straight from their bytes to fd, so
 * a full pipe blocks the writer. 0 or SLAB_ERR_IO. */
int slab_rawout_open(struct slab_rawout *r, int fd, uint64_t count);
/* 1 when the stream splices (set so, and fd is a pipe), else 0. */
int slab_rawout_splicing(const struct slab_rawout *r);
/* When splicing: the bytes of the stream handed to fd so far (what is buffered not counted). */
uint64_t slab_rawout_sent(const struct slab_rawout *r);

/* Append sample i of s, file index file, plan position pos. bytes as for
 * slab_tarout_sample(): the sample's bytes read elsewhere, or NULL for the mapping.
 * 0, SLAB_ERR_IO (slab_rawout_errno() says why, EPIPE when the reader has gone),
 * SLAB_ERR_CORRUPT, SLAB_ERR_NOMEM. */
int slab_rawout_sample(struct slab_rawout *r, struct slab *s, uint32_t file, uint64_t i,
		       uint64_t pos, const unsigned char *bytes);
/* slab_rawout_sample() with src a file descriptor open on the file s maps (the same file, not
 * only the same name: the caller checks; for a file at a URL, its local cache file with the
 * sample's bytes fetched), or -1: large fields are spliced from it when splicing. The bytes
 * written are the same. */
int slab_rawout_sample_from(struct slab_rawout *r, struct slab *s, int src, uint32_t file,
			    uint64_t i, uint64_t pos, const unsigned char *bytes);

/* Write the end record and flush. The fd is left open. 0 or SLAB_ERR_IO. */
int slab_rawout_finish(struct slab_rawout *r);

const char *slab_rawout_error(const struct slab_rawout *r);
/* The errno of the last failed write, else 0. */
int slab_rawout_errno(const struct slab_rawout *r);
/* Frees without writing the end record; accepts NULL. */
void slab_rawout_free(struct slab_rawout *r);

#endif
