/* io.c: write(2) until everything is written: the one loop every writer in slab needs; and
 * the buffered writer of the record streams on top of it. */
#include "io.h"
#include "slab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int slab_write_full(int fd, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;

	while (len) {
		/* At most 1 GiB a call: what Linux writes at once anyway. */
		ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : (size_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return SLAB_ERR_IO;
		}
		p += n;
		len -= (uint64_t)n;
	}
	return 0;
}

int slab_outbuf_init(struct slab_outbuf *o, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->buf = malloc(cap);
	o->cap = cap;
	return o->buf ? 0 : SLAB_ERR_NOMEM;
}

static int write_out(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err)
{
	if (slab_write_full(o->fd, p, len) < 0) {
		if (errno == EFAULT) {
			o->fault = p;
			return slab_fail(err, SLAB_ERR_IO, NULL, "cannot read the bytes to write");
		}
		o->write_errno = errno;
		return slab_fail(err, SLAB_ERR_IO, NULL, "write error: %s", strerror(errno));
	}
	return 0;
}

int slab_outbuf_flush(struct slab_outbuf *o, struct slab_err *err)
{
	int ret = write_out(o, o->buf, o->fill, err);

	o->fill = 0;
	return ret;
}

int slab_outbuf_put(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err)
{
	if (len > o->cap - o->fill) {
		if (slab_outbuf_flush(o, err) < 0)
			return SLAB_ERR_IO;
		if (len >= o->cap / 2)
			return write_out(o, p, len, err);
	}
	memcpy(o->buf + o->fill, p, (size_t)len);
	o->fill += (size_t)len;
	return 0;
}

void slab_outbuf_release(struct slab_outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
	o->cap = o->fill = 0;
}
