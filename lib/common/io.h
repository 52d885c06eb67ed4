/* io.h: write(2) until everything is written. */
#ifndef SLAB_IO_H
#define SLAB_IO_H

#include <stdint.h>

/* Write all len bytes of buf to fd, retrying after EINTR and short writes. 0, or -1 with errno
 * set (EPIPE when the reader went away). */
int slab_write_full(int fd, const void *buf, uint64_t len);

#endif
