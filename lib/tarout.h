/* tarout.h: writes a .slab dataset back out as a tar stream, member names key.field. */
#ifndef SLAB_TAROUT_H
#define SLAB_TAROUT_H

#include <stddef.h>

struct slab;

/* Write every sample of the n datasets, in order, to fd as one tar stream (ustar, pax
 * headers where names or sizes need them), fields in the order they had in the packed input,
 * mode 0644, time 0. 0, or -1 with the reason in err. */
int slab_tar_export(struct slab *const *sets, size_t n, int fd, char *err, size_t errlen);

#endif
