/* io.h: write(2) until everything is written, and a buffered writer over it. */
#ifndef SLAB_IO_H
#define SLAB_IO_H

#include "error.h"

#include <stddef.h>
#include <stdint.h>

/* Write all len bytes of buf to fd, retrying after EINTR and short writes. 0, or SLAB_ERR_IO
 * with errno set (EPIPE when the reader went away): no context, errno is the detail. */
int slab_write_full(int fd, const void *buf, uint64_t len);

/* A buffered writer to fd, for the record streams (rawout, frameout): small pieces are
 * gathered in a buffer of cap bytes, a piece of half of it or more goes straight out after
 * what is buffered. A failed write is SLAB_ERR_IO with "write error: ..." in *err, and its
 * errno stays in write_errno (EPIPE when the reader went away). */
struct slab_outbuf {
	int fd;
	int write_errno;
	/* A write straight from the caller's bytes failed with EFAULT: they could not be read
	 * (a mapped input truncated under it), the output is not at fault. Where they were. */
	const void *fault;
	unsigned char *buf;
	size_t cap, fill;
};

/* An empty buffer of cap bytes, fd -1 until set: 0, or SLAB_ERR_NOMEM. */
int slab_outbuf_init(struct slab_outbuf *o, size_t cap);
int slab_outbuf_put(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err);
/* Write what is buffered. */
int slab_outbuf_flush(struct slab_outbuf *o, struct slab_err *err);
/* Free the buffer (accepts one never initialised, zeroed). */
void slab_outbuf_release(struct slab_outbuf *o);

#endif
