/* tarout.h: writes .slab samples out as a tar stream, member names KEY.FIELD: a whole
 * dataset at once (inspect --tar), or sample by sample in any order (prefetch --emit). */
#ifndef SLAB_TAROUT_H
#define SLAB_TAROUT_H

#include <stddef.h>
#include <stdint.h>

struct slab;
struct slab_field;

/* Write every sample of the n datasets, in order, to fd as one tar stream (ustar, pax
 * headers where names or sizes need them), fields in the order they had in the packed input,
 * mode 0644, time 0. 0, or -1 with the reason in err. */
int slab_tar_export(struct slab *const *sets, size_t n, int fd, char *err, size_t errlen);

/* ---- Streaming: one sample at a time ------------------------------------------------------ */

struct slab_tarout;

/* A new tar writer; NULL only when out of memory. Free with slab_tarout_free(). */
struct slab_tarout *slab_tarout_new(void);

/* Start a tar stream on fd (a file or a pipe; never seeks). Writes go straight to fd in
 * blocks of 10 KiB, so a full pipe blocks the writer: memory stays bounded. 0 or
 * SLAB_ERR_IO. */
int slab_tarout_open(struct slab_tarout *t, int fd);

/* Append sample i of s: one member KEY.FIELD per field it has, in the order the fields had in
 * the packed input, the same members slab_tar_export() writes. bytes, when not NULL, holds
 * the sample's bytes as read elsewhere (e.g. with O_DIRECT): the slab_sample size bytes
 * from its offset; NULL reads them through the mapping. 0, SLAB_ERR_IO (a write failed:
 * slab_tarout_errno() tells why, EPIPE when the reader has gone), SLAB_ERR_CORRUPT (the
 * table points outside the data or outside the sample), SLAB_ERR_NOMEM. */
int slab_tarout_sample(struct slab_tarout *t, struct slab *s, uint64_t i,
		       const unsigned char *bytes);

/* End the archive (the two zero blocks) and flush. The fd is left open. 0 or SLAB_ERR_IO. */
int slab_tarout_finish(struct slab_tarout *t);

const char *slab_tarout_error(const struct slab_tarout *t);
/* The errno of the last failed write, else 0. */
int slab_tarout_errno(const struct slab_tarout *t);
/* Frees without finishing the archive; accepts NULL. */
void slab_tarout_free(struct slab_tarout *t);

/* ---- Shared with other sample writers ----------------------------------------------------- */

/* The fields sample i of s has, in the order they had in the packed input: ids[k] the field
 * id and fl[k] the field, for k < the count returned; both arrays hold slab_field_count(s)
 * entries. With bytes (as for slab_tarout_sample) each fl[k].data points into bytes, and a
 * field outside the sample's range is SLAB_ERR_CORRUPT. The count, or a negative error with
 * the reason in err. */
int slab_sample_fields(struct slab *s, uint64_t i, const unsigned char *bytes, unsigned *ids,
		       struct slab_field *fl, char *err, size_t errlen);

#endif
