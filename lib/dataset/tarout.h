/* tarout.h: writes .slab samples out as a tar stream, member names KEY.FIELD: a whole
 * dataset at once (inspect --tar), or sample by sample in any order (prefetch --emit). */
#ifndef SLAB_TAROUT_H
#define SLAB_TAROUT_H

#include <stddef.h>
#include <stdint.h>

#include "slab.h"

struct slab_tarout;

/* A new tar writer; NULL only when out of memory. Free with slab_tarout_free(). */
struct slab_tarout *slab_tarout_new(void);

/* Write every sample of the n datasets, in order, to fd as one tar stream (ustar, pax
 * headers where names or sizes need them), fields in the order they had in the packed input,
 * mode 0644, time 0: slab_tarout_open(), slab_tarout_sample() for each, slab_tarout_finish().
 * Each sample's fields are checked against their CRCs before it is written (slab_tarout_sample()
 * alone passes them on as stored). 0, or a negative error with the reason in
 * slab_tarout_error(); after an error of the input's (a damaged sample) nothing more is
 * written, not even the end of the archive. */
int slab_tarout_export(struct slab_tarout *t, int fd, struct slab *const *sets, size_t n);

/* ---- Streaming: one sample at a time ------------------------------------------------------ */

/* Before slab_tarout_open(): splice (on non-zero) the bytes of fields given with their file
 * (slab_tarout_sample_from()) into fd when fd is a pipe, the pipe grown to pipe_bytes where
 * Linux allows (slab_outbuf_splice() in io.h); headers and padding are gathered in a 64 KiB
 * buffer and written. The stream is the same bytes either way. Off until asked. */
void slab_tarout_set_splice(struct slab_tarout *t, int on, uint64_t pipe_bytes);

/* Start a tar stream on fd (a file or a pipe; never seeks). Writes go straight to fd in
 * blocks of 10 KiB, so a full pipe blocks the writer: memory stays bounded. 0,
 * SLAB_ERR_IO, SLAB_ERR_NOMEM, or SLAB_ERR_INVAL when open already. */
int slab_tarout_open(struct slab_tarout *t, int fd);
/* 1 when the stream splices (set so, and fd is a pipe), else 0. */
int slab_tarout_splicing(const struct slab_tarout *t);
/* When splicing: the bytes of the stream handed to fd so far (what is buffered not counted). */
uint64_t slab_tarout_sent(const struct slab_tarout *t);

/* Append sample i of s: one member KEY.FIELD per field it has, in the order the fields had in
 * the packed input, the same members slab_tar_export() writes. bytes, when not NULL, holds
 * the sample's bytes as read elsewhere (e.g. with O_DIRECT): the slab_sample size bytes
 * from its offset; NULL reads them through the mapping. 0, SLAB_ERR_IO (a write failed:
 * slab_tarout_errno() tells why, EPIPE when the reader has gone), SLAB_ERR_CORRUPT (the
 * table points outside the data or outside the sample), SLAB_ERR_NOMEM. */
int slab_tarout_sample(struct slab_tarout *t, struct slab *s, uint64_t i,
		       const unsigned char *bytes);
/* slab_tarout_sample() with src a file descriptor open on the file s maps (the same file, not
 * only the same name: the caller checks; for a file at a URL, its local cache file with the
 * sample's bytes fetched), or -1: large fields are spliced from it when splicing. The bytes
 * written are the same. */
int slab_tarout_sample_from(struct slab_tarout *t, struct slab *s, int src, uint64_t i,
			    const unsigned char *bytes);

/* End the archive (the two zero blocks) and flush. The fd is left open. 0 or SLAB_ERR_IO. */
int slab_tarout_finish(struct slab_tarout *t);

const char *slab_tarout_error(const struct slab_tarout *t);
/* The errno of the last failed write, else 0. */
int slab_tarout_errno(const struct slab_tarout *t);
/* Frees without finishing the archive; accepts NULL. */
void slab_tarout_free(struct slab_tarout *t);

#endif
