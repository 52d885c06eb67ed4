/* frameout.h: the fixed-layout records of prefetch --emit-format frames: decoded images (or
 * clips of T frames) of one size and the sample's other fields, for readers in any language
 * that want pixels without a parser. prefetch(1), FRAMES FORMAT, gives it byte by byte. */
#ifndef SLAB_FRAMEOUT_H
#define SLAB_FRAMEOUT_H

#include <stddef.h>
#include <stdint.h>

struct slab;

/*
 * All integers little-endian; every part starts at a multiple of 8 bytes from the start of
 * the stream.
 *
 * Header, header_size bytes (a multiple of 8):
 *   0   8  magic "SLABFRMS"
 *   8   4  version: 1 for images of 3 channels, 2 for 1 or 4 (a reader of version 1
 *          refuses those rather than misread their images as RGB), 3 for clips of T
 *          frames (3 channels; a reader of version 1 or 2 refuses them rather than misread
 *          a clip as an image); the layout is the same
 *   12  4  header_size
 *   16  8  count: the entries of the plan, or of all the plans (the most records that follow)
 *   24  4  width W
 *   28  4  height H
 *   32  4  channels C: 3 (RGB); version 2: 1 (grey) or 4 (RGBA)
 *   36  4  layout: 0 HWC (H x W x C), 1 CHW (C x H x W); version 3: 0 T x H x W x C,
 *          1 C x T x H x W
 *   40  8  image_bytes: W * H * C; version 3: T * W * H * C (a record's clip)
 *   48  8  image_block: image_bytes rounded up to a multiple of 8
 *   56  8  seed
 *   64  8  epoch
 *   72  4  crop (enum slab_image_crop: 0 none, 1 center, 2 random-resized)
 *   76  4  flip (0 or 1)
 *   80  4  nfields: the other fields each record carries
 *   84  4  version 3: frames T of each clip (1 .. 65535); versions 1 and 2: 0
 *   88  .  nfields times: u16 name length, the name's bytes; then zeros up to header_size
 *
 * Sample record: a head of 40 bytes, image_block bytes (the pixels, then zeros), tail_len
 * bytes:
 *   0   4  magic "FRAM"
 *   4   4  file: index of the .slab file in the order given
 *   8   8  index of the sample in that file
 *   16  8  position in the plan
 *   24  8  tail_len
 *   32  4  key length K
 *   36  4  0
 *   tail: the key's K bytes; then for each other field, in the header's order, a u64 size
 *   (UINT64_MAX when the sample lacks the field, and no bytes follow) and its bytes; then
 *   zeros up to tail_len, a multiple of 8.
 *
 * End record, 40 bytes: magic "DONE", 0 (u32), the records written (u64 at 8), the samples
 * skipped (u64 at 16), zeros. A stream without it was cut short.
 */

#define SLAB_FRAMES_MAGIC       "SLABFRMS"
#define SLAB_FRAMES_RECORD_MAGIC "FRAM"
#define SLAB_FRAMES_END_MAGIC   "DONE"
#define SLAB_FRAMES_VERSION     1       /* 3 channels */
#define SLAB_FRAMES_VERSION_CHANNELS 2  /* 1 or 4 channels */
#define SLAB_FRAMES_VERSION_CLIPS 3     /* clips of T frames */
#define SLAB_FRAMES_FIXED       88u     /* the header before the field names */
#define SLAB_FRAMES_HEAD        40u     /* a record's head, and the end record */
#define SLAB_FRAMES_ABSENT      UINT64_MAX

struct slab_frameout;

/* What the header announces. */
struct slab_frameout_params {
	uint64_t count;
	uint32_t width, height;         /* each 1 .. 65535 */
	int chw;
	unsigned channels;              /* 1, 3 or 4; 0 is 3 */
	unsigned frames;                /* clips of this many frames (3 channels), 1 .. 65535:
					 * version 3; 0: images */
	int crop;                       /* enum slab_image_crop */
	int flip;
	uint64_t seed, epoch;
	const char *const *fields;      /* the other fields' names, in the records' order */
	unsigned nfields;
};

/* One of a record's other fields: NULL data when the sample lacks it. */
struct slab_frameout_field {
	const unsigned char *data;
	uint64_t size;
};

/* A new frame writer; NULL only when out of memory. Free with slab_frameout_free(). */
struct slab_frameout *slab_frameout_new(void);

/* Start a stream on fd (a file or a pipe; never seeks) and write its header. Buffers at most
 * 64 KiB; images and large fields go straight from their bytes to fd, so a full pipe blocks
 * the writer. 0, SLAB_ERR_INVAL (a size out of range, a field name longer than 65535 bytes,
 * open already), SLAB_ERR_NOMEM or SLAB_ERR_IO. */
int slab_frameout_open(struct slab_frameout *w, int fd, const struct slab_frameout_params *p);

/* Append a record: file, index and plan position of the sample, its key, its image (exactly
 * width * height * channels bytes; a clip: frames times that) and its other fields (nfields
 * of them, in the header's order).
 * Key and fields point into src's mapping, read under a SIGBUS guard: a file truncated under
 * the stream is SLAB_ERR_IO naming it (slab_frameout_errno() 0: not the output's failure).
 * 0, SLAB_ERR_IO (slab_frameout_errno() says why, EPIPE when the reader has gone) or
 * SLAB_ERR_INVAL (not open). */
int slab_frameout_sample(struct slab_frameout *w, const struct slab *src, uint32_t file,
			 uint64_t index, uint64_t pos, const char *key, size_t key_len,
			 const unsigned char *image, const struct slab_frameout_field *fields);

/* Write the end record, counting skipped samples, and flush. The fd is left open. 0 or
 * SLAB_ERR_IO. */
int slab_frameout_finish(struct slab_frameout *w, uint64_t skipped);

/* Bytes written so far (header and records), whether flushed yet or not. */
uint64_t slab_frameout_bytes(const struct slab_frameout *w);
const char *slab_frameout_error(const struct slab_frameout *w);
/* The errno of the last failed write, else 0. */
int slab_frameout_errno(const struct slab_frameout *w);
/* Frees without writing the end record; accepts NULL. */
void slab_frameout_free(struct slab_frameout *w);

#endif
