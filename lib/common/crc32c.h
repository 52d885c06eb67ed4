/* crc32c.h: CRC-32C (Castagnoli), the checksum on every region of a .slab file. */
#ifndef SLAB_CRC32C_H
#define SLAB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: start with crc = 0; crc32c(crc32c(0, a), b) == crc32c(0, a ++ b).
 * Uses the SSE4.2 instruction where the CPU has it. "123456789" gives 0xe3069283. */
uint32_t slab_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
