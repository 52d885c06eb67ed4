/* errfmt.h: the one wording of a library error about a file: "'SUBJECT': message"; the noun
 * that goes with a count, in the library's messages and the tools'. */
#ifndef SLAB_ERRFMT_H
#define SLAB_ERRFMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Format "'subject': message" into buf (len bytes, always NUL-terminated). A subject too long
 * to leave the message room (a path near PATH_MAX in a 1 KiB buffer) is shortened in its
 * middle, "/data/sha...ard-0001.tar", so the text names both. No allocation: it serves the
 * out-of-memory path too. */
void slab_verrf(char *buf, size_t len, const char *subject, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* The noun for a count: one for 1, else many: "%llu %s", n, slab_plural(n, "entry", "entries") is
 * "1 entry", "0 entries", "2 entries". */
static inline const char *slab_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The precision a message shows a key with ("'%.*s'"): its first 200 bytes, so that a long
 * key (a u32 length in the format: over INT_MAX would be a negative precision, all of it read
 * to a NUL) cannot make the message its own size. */
#define SLAB_KEY_SHOWN 200
static inline int slab_key_shown(size_t key_len)
{
	return (int)(key_len > SLAB_KEY_SHOWN ? SLAB_KEY_SHOWN : key_len);
}

/* "512 KiB", "2 MiB", "1.5 GiB" into buf (len bytes): sizes in the library's messages (cli.h,
 * with its own, belongs to the tools). Returns buf. */
const char *slab_size_text(uint64_t n, char *buf, size_t len);

/* How a message names an input path: "-" (and NULL) is standard input, "(stdin)", as in
 * every tool's messages. */
static inline const char *slab_input_shown(const char *path)
{
	return path == NULL || strcmp(path, "-") == 0 ? "(stdin)" : path;
}

#endif
