/* md5.c: MD5 (md5.h) by nettle, the digest library libarchive itself links. */
#include "md5.h"

#include <nettle/md5.h>

void slab_md5(const void *buf, size_t len, unsigned char out[16])
{
	struct md5_ctx c;

	md5_init(&c);
	md5_update(&c, len, buf);
	md5_digest(&c, MD5_DIGEST_SIZE, out);
}
