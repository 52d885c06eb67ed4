/* sysfs.h: the one reader of /sys and /proc for lib/machine, every path relative to a root
 * folder ("/" for this machine, a captured or hand-made tree in tests), never leaving it
 * (util-linux ul_path). Topology and the memory benchmarks' hardware description both read
 * through it. Never prints. */
#ifndef SLAB_SYSFS_H
#define SLAB_SYSFS_H

#include <stddef.h>
#include <stdint.h>

struct slab_sysfs;

/* A new context with no root yet; NULL only when out of memory. */
struct slab_sysfs *slab_sysfs_new(void);

/* Use ROOT as "/" from now on. 0; SLAB_ERR_IO when ROOT is not a readable folder or holds no
 * sys/devices/system (the error says which); SLAB_ERR_INVAL when a root was set already. */
int slab_sysfs_open(struct slab_sysfs *s, const char *root);

/* The root as given to slab_sysfs_open(). */
const char *slab_sysfs_root(const struct slab_sysfs *s);

/* The detail of the last failure of slab_sysfs_open(); "" when none. */
const char *slab_sysfs_error(const struct slab_sysfs *s);

/* Accepts NULL. */
void slab_sysfs_close(struct slab_sysfs *s);

/* Called with the full path and errno of each file or folder that could not be read (missing
 * ones are normal: this is for -v); NULL: nobody. A file that is neither a regular file nor
 * a folder (a FIFO, a device: never an attribute) is refused without waiting on it, with
 * ENODEV. */
void slab_sysfs_set_missing(struct slab_sysfs *s, void (*fn)(const char *path, int err, void *arg),
			    void *arg);

/* Called by the readers of values below (slab_sysfs_i64, _hex, _cache, _thp, _cpu_model,
 * _meminfo) with the full path of a file that holds what the kernel never writes there, its
 * line at fault (blanks trimmed) and why it is refused and what is done without it ("not a
 * cache size: ignored; the cache is left out"); the reader then fails as for a missing
 * value. NULL: nobody. */
void slab_sysfs_set_invalid(struct slab_sysfs *s,
			    void (*fn)(const char *path, const char *text, const char *why, void *arg),
			    void *arg);

/* REL as the user knows it: the root as given, then REL ("tree/sys/devices/system/cpu/online",
 * "/proc/cpuinfo" for NULL), into buf (len bytes, cut to fit). Returns buf. */
const char *slab_sysfs_path(const struct slab_sysfs *s, const char *rel, char *buf, size_t len);

/* Stop (quiet 1) or resume (0) calling the missing-file function, for files most trees lack;
 * returns the previous setting. */
int slab_sysfs_quiet(struct slab_sysfs *s, int quiet);

/*
 * The readers below take a context with a root, or NULL for this machine's own "/" (what a
 * process reads about itself: /proc/self/smaps, the huge pages it may map); NULL never
 * reports missing files and allocates nothing.
 */

/* Open REL under the root with open(2) FLAGS (O_CLOEXEC added). A descriptor, or
 * SLAB_ERR_IO with errno set. Not reported as missing. */
int slab_sysfs_openat(struct slab_sysfs *s, const char *rel, int flags);

/* The start of REL, up to len - 1 bytes, NUL-terminated, into buf. Allocates nothing, so
 * running short of memory never turns a value the kernel gives into an unknown one. The
 * length read, or SLAB_ERR_IO. */
int slab_sysfs_read(struct slab_sysfs *s, const char *rel, char *buf, size_t len);

/* The whole of REL (at most 16 MiB), NUL-terminated, into *out (the caller frees). 0,
 * SLAB_ERR_IO (missing, unreadable, too big) or SLAB_ERR_NOMEM. */
int slab_sysfs_slurp(struct slab_sysfs *s, const char *rel, char **out);

/* The first line of REL without surrounding blanks into buf (len bytes). 0, SLAB_ERR_IO. */
int slab_sysfs_line(struct slab_sysfs *s, const char *rel, char *buf, size_t len);

/* REL holds one decimal number (optionally signed); 0, SLAB_ERR_IO, or SLAB_ERR_CORRUPT
 * (said to the invalid-file function) when it holds something else. */
int slab_sysfs_i64(struct slab_sysfs *s, const char *rel, int64_t *out);

/* REL holds one hexadecimal number of at most 8 digits, "0x" optional ("0x030200", "10de");
 * 0, SLAB_ERR_IO or SLAB_ERR_CORRUPT (said to the invalid-file function). */
int slab_sysfs_hex(struct slab_sysfs *s, const char *rel, unsigned *out);

/* The entries of folder REL but dot files, sorted with CMP (on char *const *; NULL:
 * version order, "nvme2n1" before "nvme10n1"), into *out, NULL-terminated (free with
 * slab_sysfs_free_names). The count (a missing folder: 0, *out NULL), or SLAB_ERR_NOMEM. */
int slab_sysfs_list(struct slab_sysfs *s, const char *rel, int (*cmp)(const void *, const void *),
		    char ***out);
void slab_sysfs_free_names(char **names);

/* The last component of symlink LINK inside folder REL (a driver link: the driver's name),
 * read, never followed, into buf. 0, or SLAB_ERR_IO. */
int slab_sysfs_link_name(struct slab_sysfs *s, const char *rel, const char *link, char *buf,
			 size_t len);

/* A decimal number, optionally signed, with nothing after it but blanks: 0, or
 * SLAB_ERR_CORRUPT. */
int slab_parse_i64(const char *s, int64_t *out);

/* At most 8 hexadecimal digits, "0x" optional, nothing else: 0, or SLAB_ERR_CORRUPT. */
int slab_parse_hex(const char *s, unsigned *out);

/* ---- what the machine says about itself ------------------------------------------------- */

/* One cache of a CPU: sys/devices/system/cpu/cpuN/cache/indexK. */
struct slab_sysfs_cache {
	unsigned level;         /* 1 .. 9 */
	char type[16];          /* "Data", "Instruction", "Unified" */
	uint64_t size;          /* bytes */
};

/* Cache INDEX ("index0") of CPU cpu: level, type and size. 0; SLAB_ERR_IO when a file is
 * missing; SLAB_ERR_CORRUPT when one holds something else than sysfs writes (said to the
 * invalid-file function). */
int slab_sysfs_cache(struct slab_sysfs *s, unsigned cpu, const char *index,
		     struct slab_sysfs_cache *c);

/* The bracketed choice of sys/kernel/mm/transparent_hugepage/WHICH ("enabled", "defrag"):
 * "madvise", ...; a file of one word is that word. At most 31 bytes into buf. 0;
 * SLAB_ERR_IO; SLAB_ERR_CORRUPT (said to the invalid-file function) for anything else. buf
 * is "" on failure. */
int slab_sysfs_thp(struct slab_sysfs *s, const char *which, char *buf, size_t len);

/* The first "model name" of proc/cpuinfo ("AMD EPYC 7B13"), blanks trimmed. 0; SLAB_ERR_IO;
 * SLAB_ERR_NOTFOUND when there is none (buf then ""); SLAB_ERR_CORRUPT (said to the
 * invalid-file function) when that line has no colon or no model. */
int slab_sysfs_cpu_model(struct slab_sysfs *s, char *buf, size_t len);

/* KEY's value in a meminfo file REL ("proc/meminfo", or a node's "Node 0 MemTotal: ... kB"),
 * in bytes when given in kB. 0; SLAB_ERR_IO; SLAB_ERR_NOTFOUND when KEY is not there;
 * SLAB_ERR_CORRUPT (said to the invalid-file function) when its value is not a number, with
 * "kB" or no unit, that fits in 63 bits. */
int slab_sysfs_meminfo(struct slab_sysfs *s, const char *rel, const char *key, int64_t *out);

#endif
