/* md5.h: MD5 (RFC 1321, by nettle), for what S3 names by it: a multipart object's ETag is the
 * MD5 of its parts' MD5s. Not for anything that must resist an adversary. */
#ifndef SLAB_MD5_H
#define SLAB_MD5_H

#include <stddef.h>
#include <stdint.h>

/* The 16-byte digest of buf[0, len) into out. "abc" gives 900150983cd24fb0d6963f7d28e17f72. */
void slab_md5(const void *buf, size_t len, unsigned char out[16]);

#endif
