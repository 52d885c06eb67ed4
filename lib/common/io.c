/* io.c: write(2) until everything is written: the one loop every writer in slab needs. */
#include "io.h"
#include "slab.h"

#include <errno.h>
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
