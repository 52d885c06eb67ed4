/* format.h: the on-disk layout of a .slab file, version 1.
 * man/slab.5 is the reference for readers in other languages; this file and it must agree. */
#ifndef SLAB_FORMAT_H
#define SLAB_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "slab.h"

/*
 * File:    [header 4096 B][data pages ...][table][trailer 64 B]
 * All integers are little-endian. Offsets are absolute file offsets unless said otherwise.
 *
 * Header (offset 0, SLAB_HEADER_SIZE bytes):
 *   0   8  magic "\x89SLAB\r\n\x1a"
 *   8   2  version major (1); a reader refuses any other major
 *   10  2  version minor (3: 1.1 added the PNG and WEBP field flags, 1.2 the RESTART
 *          flag, 1.3 the VIDEO flag and the video records); readers accept any minor
 *   12  4  header size (4096)
 *   16  8  page size (power of two, >= 4096)
 *   24  8  data offset: start of page 0 (multiple of 4096)
 *   32  4  flags (0)
 *   36  4  CRC32C of the 4096 header bytes, computed with this field set to zero
 *   40  24 reserved, zero
 *   64  .. options: UTF-8 "key=value\n" lines, NUL-padded to the end of the header
 *
 * Page p occupies [data offset + p * page size, + page size), cut short by the table for the
 * last page.
 *
 * Table (offset and size from the trailer; offset is a multiple of 4096):
 *   table header, SLAB_TABLE_HEADER_SIZE bytes:
 *   0   8  magic "SLABTABL"
 *   8   8  sample count N
 *   16  8  page count P
 *   24  4  field count F
 *   28  4  reserved, zero
 *   32  8  schema offset, relative to the table
 *   40  8  schema size
 *   48  8  samples offset (N records of 32 bytes), relative to the table
 *   56  8  fields offset (N * F records of 32 bytes), relative to the table
 *   64  8  keys offset, relative to the table
 *   72  8  keys size
 *   80  8  key index offset (B slots of 8 bytes), relative to the table
 *   88  8  key index slot count B (a power of two, >= 2 * N, >= 2)
 *   96  8  video records offset (V records of 32 bytes), relative to the table; 0 when V
 *          is 0 (1.3; zero before)
 *   104 8  video record count V (1.3; zero before)
 *   112 16 reserved, zero
 *   Sections start at multiples of 8 from the table start and are zero-padded to one.
 *
 *   schema: F entries in field-id order (names sorted by bytes): u16 length, then the name.
 *
 *   sample record i (32 bytes):
 *   0   8  offset of the sample's first byte
 *   8   8  size: bytes of all its fields, which lie back to back from offset
 *   16  8  key offset within the keys section
 *   24  4  key length
 *   28  4  page holding the sample's first byte
 *
 *   field record (i, f) at fields offset + (i * F + f) * 32:
 *   0   8  offset of the field's bytes (0 when absent)
 *   8   8  size
 *   16  4  CRC32C of the bytes
 *   20  2  image width  (when flags has SLAB_FIELD_JPEG, _PNG, _WEBP or _VIDEO; 0 with
 *          the height when a side is over 65535)
 *   22  2  image height
 *   24  1  flags (SLAB_FIELD_*)
 *   25  1  JPEG chroma subsampling (SLAB_SAMP_*)
 *   26  1  JPEG colour space (SLAB_CS_*)
 *   27  1  position of the field in the sample as read from the tar (0-based)
 *   28  4  with SLAB_FIELD_VIDEO: the index of its video record (< V), else zero. The
 *          video fields of the file, taken in sample order and within a sample in the
 *          order of byte 27, have the records 0, 1, ... V - 1 in turn
 *
 *   key index slot: 0 = empty, else sample index + 1. A key's home slot is
 *   FNV-1a-64(key bytes) & (B - 1); probe forward by one, wrapping, until an empty slot.
 *
 *   video record k (32 bytes), after the key index:
 *   0   8  duration in microseconds
 *   8   8  frames in the video stream
 *   16  4  frame rate numerator (frames a second = numerator / denominator; 0/0 unknown)
 *   20  4  frame rate denominator
 *   24  8  codec name (FFmpeg's: "h264", "vp9", ...), its first 8 bytes, NUL-padded
 *
 * Trailer (last SLAB_TRAILER_SIZE bytes of the file):
 *   0   8  magic "SLABTAIL"
 *   8   8  table offset
 *   16  8  table size
 *   24  8  file size
 *   32  8  sample count (same as the table's)
 *   40  4  CRC32C of the table bytes
 *   44  4  the header's CRC32C (ties the trailer to its header)
 *   48  12 reserved, zero
 *   60  4  CRC32C of trailer bytes 0..59
 */

#define SLAB_MAGIC              "\x89SLAB\r\n\x1a"
#define SLAB_TABLE_MAGIC        "SLABTABL"
#define SLAB_TRAILER_MAGIC      "SLABTAIL"
#define SLAB_FORMAT_MAJOR      1
#define SLAB_FORMAT_MINOR      3
#define SLAB_HEADER_SIZE        4096u
#define SLAB_OPTIONS_OFFSET     64u
#define SLAB_OPTIONS_MAX        (SLAB_HEADER_SIZE - SLAB_OPTIONS_OFFSET - 1)
#define SLAB_TABLE_HEADER_SIZE  128u
#define SLAB_SAMPLE_RECORD      32u
#define SLAB_FIELD_RECORD       32u
#define SLAB_VIDEO_RECORD       32u
#define SLAB_VIDEO_CODEC        8u      /* bytes of the codec name in a video record */
#define SLAB_TRAILER_SIZE       64u
#define SLAB_ALIGN              4096u
#define SLAB_MIN_PAGE_SIZE      4096u
#define SLAB_MAX_PAGE_SIZE      (1ull << 30)
#define SLAB_DEFAULT_PAGE_SIZE  (2ull << 20)

/* The field flags (SLAB_FIELD_*), JPEG subsampling (SLAB_SAMP_*) and colour space
 * (SLAB_CS_*) stored in a field record are public: slab.h. */

/* Does KEY.FIELD, a sample's member name on export, end in a ".." component though the key
 * is safe (slab_key_safe) and the field has no '/'? Only a key whose last component is empty
 * (the key "" or one ending in '/') with the field ".": "x/" "." "." is "x/..". */
static inline int slab_member_dotdot(const char *key, size_t key_len, const char *field)
{
	return field[0] == '.' && field[1] == '\0' && (key_len == 0 || key[key_len - 1] == '/');
}

static inline uint16_t slab_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t slab_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t slab_le64(const unsigned char *p)
{
	return (uint64_t)slab_le32(p) | (uint64_t)slab_le32(p + 4) << 32;
}

static inline void slab_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void slab_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void slab_put64(unsigned char *p, uint64_t v)
{
	slab_put32(p, (uint32_t)v);
	slab_put32(p + 4, (uint32_t)(v >> 32));
}

/* FNV-1a, 64 bit: the key index hash. */
static inline uint64_t slab_key_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
