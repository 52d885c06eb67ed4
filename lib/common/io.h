/* io.h: write(2) until everything is written. */
#ifndef SLAB_IO_H
#define SLAB_IO_H

#include <stdint.h>

/* Write all len bytes of buf to fd, retrying after EINTR and short writes. 0, or SLAB_ERR_IO
 * with errno set (EPIPE when the reader went away): no context, errno is the detail. */
int slab_write_full(int fd, const void *buf, uint64_t len);

#endif
