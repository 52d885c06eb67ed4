/* sysfs.c: files and folders of /sys and /proc under a root folder, read without ever
 * leaving it, and the few values the machine code parses out of them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "slab.h"
#include "sysfs.h"

/* Files larger than this are not sysfs attributes; /proc/cpuinfo of a 1024-CPU machine is
 * well under it. */
#define MAX_FILE (16u << 20)

struct slab_sysfs {
	int rootfd;
	int no_openat2;         /* openat2 refused (old kernel, seccomp): plain openat */
	int quiet;
	char root[PATH_MAX];
	char err[PATH_MAX + 128];
	void (*missing)(const char *path, int err, void *arg);
	void *missing_arg;
	void (*invalid)(const char *path, const char *text, const char *why, void *arg);
	void *invalid_arg;
};

struct slab_sysfs *slab_sysfs_new(void)
{
	struct slab_sysfs *s = calloc(1, sizeof(*s));

	if (s != NULL)
		s->rootfd = -1;
	return s;
}

/*
 * Open rel under the root. openat2's RESOLVE_IN_ROOT treats the root as "/" for every
 * component, absolute symlinks and ".." included, so a captured tree with an absolute link
 * (or a hostile one) can never lead outside it. Where openat2 is missing (Linux < 5.6) or
 * filtered, plain openat is used: relative links inside a tree still work.
 */
static int open_rel(struct slab_sysfs *s, const char *rel, int flags)
{
	char path[PATH_MAX];
	int fd;

	if (s == NULL) {
		if (snprintf(path, sizeof(path), "/%s", rel) >= (int)sizeof(path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return open(path, flags | O_CLOEXEC);
	}
	if (!s->no_openat2) {
		struct open_how how;

		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(flags | O_CLOEXEC);
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, s->rootfd, rel, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		s->no_openat2 = 1;
	}
	return openat(s->rootfd, rel, flags | O_CLOEXEC);
}

int slab_sysfs_open(struct slab_sysfs *s, const char *root)
{
	struct stat st;
	int fd;

	if (s->rootfd >= 0) {
		snprintf(s->err, sizeof(s->err), "'%s': a root is open already", root);
		return SLAB_ERR_INVAL;
	}
	snprintf(s->root, sizeof(s->root), "%s", root);
	s->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {
		snprintf(s->err, sizeof(s->err), "'%s': %s", root, strerror(errno));
		return SLAB_ERR_IO;
	}
	fd = open_rel(s, "sys/devices/system", O_PATH | O_DIRECTORY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(s->err, sizeof(s->err), "'%s': not a sysfs root (no sys/devices/system)",
			 root);
		if (fd >= 0)
			close(fd);
		return SLAB_ERR_IO;
	}
	close(fd);
	return 0;
}

const char *slab_sysfs_root(const struct slab_sysfs *s)
{
	return s->root;
}

const char *slab_sysfs_error(const struct slab_sysfs *s)
{
	return s->err;
}

void slab_sysfs_close(struct slab_sysfs *s)
{
	if (s == NULL)
		return;
	if (s->rootfd >= 0)
		close(s->rootfd);
	free(s);
}

void slab_sysfs_set_missing(struct slab_sysfs *s, void (*fn)(const char *, int, void *), void *arg)
{
	s->missing = fn;
	s->missing_arg = arg;
}

void slab_sysfs_set_invalid(struct slab_sysfs *s,
			    void (*fn)(const char *, const char *, const char *, void *), void *arg)
{
	s->invalid = fn;
	s->invalid_arg = arg;
}

int slab_sysfs_quiet(struct slab_sysfs *s, int quiet)
{
	int was = s->quiet;

	s->quiet = quiet;
	return was;
}

const char *slab_sysfs_path(const struct slab_sysfs *s, const char *rel, char *buf, size_t len)
{
	const char *root = s != NULL ? s->root : "/";

	snprintf(buf, len, "%s%s%s", root, root[0] && root[strlen(root) - 1] == '/' ? "" : "/",
		 rel);
	return buf;
}

static void report_missing(const struct slab_sysfs *s, const char *rel, int err)
{
	char full[PATH_MAX * 2];

	if (s == NULL || s->missing == NULL || s->quiet)
		return;
	s->missing(slab_sysfs_path(s, rel, full, sizeof(full)), err, s->missing_arg);
}

/* rel holds text (its line at fault, up to its end or a newline) that the kernel never writes
 * there: say so, then the caller fails. Returns SLAB_ERR_CORRUPT. */
static int report_invalid(const struct slab_sysfs *s, const char *rel, const char *text,
			  const char *why)
{
	char full[PATH_MAX * 2], line[512];
	const char *e = text + strcspn(text, "\n");

	while (*text == ' ' || *text == '\t')
		text++;
	while (e > text && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (s == NULL || s->invalid == NULL)
		return SLAB_ERR_CORRUPT;
	snprintf(line, sizeof(line), "%.*s", (int)(e - text), text);
	s->invalid(slab_sysfs_path(s, rel, full, sizeof(full)), line, why, s->invalid_arg);
	return SLAB_ERR_CORRUPT;
}

int slab_sysfs_openat(struct slab_sysfs *s, const char *rel, int flags)
{
	int fd = open_rel(s, rel, flags);

	return fd >= 0 ? fd : SLAB_ERR_IO;
}

/*
 * Open rel to read it as an attribute: a regular file, as every attribute of sysfs and procfs
 * is. O_NONBLOCK keeps a FIFO (or a device) put in a hand-made tree from blocking the open
 * or the reads for ever; it is refused, as a folder is, with errno saying why.
 */
static int open_file(struct slab_sysfs *s, const char *rel)
{
	struct stat st;
	int fd = open_rel(s, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : ENODEV;
		return -1;
	}
	return fd;
}

int slab_sysfs_read(struct slab_sysfs *s, const char *rel, char *buf, size_t len)
{
	int fd = open_file(s, rel);
	size_t n = 0;

	if (len == 0)
		return SLAB_ERR_INVAL;
	buf[0] = '\0';
	if (fd < 0) {
		report_missing(s, rel, errno);
		return SLAB_ERR_IO;
	}
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			report_missing(s, rel, errno);
			close(fd);
			return SLAB_ERR_IO;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return n > INT_MAX ? INT_MAX : (int)n;
}

int slab_sysfs_slurp(struct slab_sysfs *s, const char *rel, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = NULL, *grown;
	int fd = open_file(s, rel), ret = SLAB_ERR_IO;

	*out = NULL;
	if (fd < 0) {
		report_missing(s, rel, errno);
		return SLAB_ERR_IO;
	}
	for (;;) {
		ssize_t n;

		if (buf == NULL || len + 1 >= cap) {
			if (buf != NULL)
				cap *= 2;
			if (cap > MAX_FILE) {
				report_missing(s, rel, EFBIG);
				goto out;
			}
			grown = realloc(buf, cap);
			if (grown == NULL) {
				ret = SLAB_ERR_NOMEM;
				goto out;
			}
			buf = grown;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			report_missing(s, rel, errno);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
	ret = 0;
out:
	close(fd);
	free(buf);
	return ret;
}

/* The first line of text without surrounding blanks into buf. */
static void first_line(const char *text, char *buf, size_t len)
{
	const char *p, *e;

	for (p = text; *p == ' ' || *p == '\t'; p++)
		;
	e = p + strcspn(p, "\n");
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	snprintf(buf, len, "%.*s", (int)(e - p), p);
}

int slab_sysfs_line(struct slab_sysfs *s, const char *rel, char *buf, size_t len)
{
	/* Attributes are one line; the longest are CPU lists, which fit (a list that does not
	 * is cut, as the caller's buffer would cut it). */
	char text[8192];
	int rc = slab_sysfs_read(s, rel, text, sizeof(text));

	if (rc < 0) {
		if (len)
			buf[0] = '\0';
		return rc;
	}
	first_line(text, buf, len);
	return 0;
}

int slab_parse_i64(const char *s, int64_t *out)
{
	int neg = 0;
	int64_t v = 0;
	const char *p = s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
		return SLAB_ERR_CORRUPT;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return SLAB_ERR_CORRUPT;
		v = v * 10 + (*p - '0');
	}
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p != '\0')
		return SLAB_ERR_CORRUPT;
	*out = neg ? -v : v;
	return 0;
}

int slab_sysfs_i64(struct slab_sysfs *s, const char *rel, int64_t *out)
{
	char buf[64];
	int rc = slab_sysfs_line(s, rel, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	if (slab_parse_i64(buf, out) < 0)
		return report_invalid(s, rel, buf, "not a decimal number: ignored; the value is "
				      "unknown");
	return 0;
}

int slab_parse_hex(const char *s, unsigned *out)
{
	const char *p = s;
	unsigned long v = 0;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return SLAB_ERR_CORRUPT;
		if (digits >= 8)
			return SLAB_ERR_CORRUPT;
		v = v * 16 + (unsigned long)d;
	}
	if (digits == 0)
		return SLAB_ERR_CORRUPT;
	*out = (unsigned)v;
	return 0;
}

int slab_sysfs_hex(struct slab_sysfs *s, const char *rel, unsigned *out)
{
	char buf[64];
	int rc = slab_sysfs_line(s, rel, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	if (slab_parse_hex(buf, out) < 0)
		return report_invalid(s, rel, buf, "not a hexadecimal number (at most 8 digits): "
				      "ignored; the value is unknown");
	return 0;
}

static int cmp_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

void slab_sysfs_free_names(char **names)
{
	if (names == NULL)
		return;
	for (char **p = names; *p != NULL; p++)
		free(*p);
	free(names);
}

int slab_sysfs_list(struct slab_sysfs *s, const char *rel, int (*cmp)(const void *, const void *),
		    char ***out)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL, **grown, *name;
	unsigned n = 0;
	int fd = open_rel(s, rel, O_RDONLY | O_DIRECTORY);

	*out = NULL;
	if (fd < 0) {
		report_missing(s, rel, errno);
		return 0;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return errno == ENOMEM ? SLAB_ERR_NOMEM : 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		name = strdup(e->d_name);
		grown = name != NULL && n < INT_MAX - 2 ?
			realloc(names, (n + 2) * sizeof(*names)) : NULL;
		if (grown == NULL) {
			free(name);
			closedir(d);
			if (names != NULL)
				names[n] = NULL;
			slab_sysfs_free_names(names);
			return SLAB_ERR_NOMEM;
		}
		names = grown;
		names[n++] = name;
		names[n] = NULL;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp != NULL ? cmp : cmp_version);
	*out = names;
	return (int)n;
}

int slab_sysfs_link_name(struct slab_sysfs *s, const char *rel, const char *link, char *buf,
			 size_t len)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;
	int fd = open_rel(s, rel, O_PATH | O_DIRECTORY);

	if (len)
		buf[0] = '\0';
	if (fd < 0)
		return SLAB_ERR_IO;
	n = readlinkat(fd, link, target, sizeof(target) - 1);
	close(fd);
	if (n <= 0)
		return SLAB_ERR_IO;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (*base == '\0')
		return SLAB_ERR_IO;
	snprintf(buf, len, "%s", base);
	return 0;
}

/* ---- what the machine says about itself ------------------------------------------------- */

/* "32K" (the kernel's form), "1280K", "1M": bytes, 0 on anything else. */
static uint64_t parse_cache_size(const char *s)
{
	uint64_t v = 0;
	const char *p = s;
	int shift = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		if ((v = v * 10 + (uint64_t)(*p - '0')) > (UINT64_MAX >> 31))
			return 0;
	if (p == s)
		return 0;
	switch (*p) {
	case 'K': shift = 10; p++; break;
	case 'M': shift = 20; p++; break;
	case 'G': shift = 30; p++; break;
	}
	return *p == '\0' ? v << shift : 0;
}

int slab_sysfs_cache(struct slab_sysfs *s, unsigned cpu, const char *index,
		     struct slab_sysfs_cache *c)
{
	static const char left_out[] = "ignored; the cache is left out";
	char rel[PATH_MAX], line[256], why[128];
	int64_t level;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cache/%s/level", cpu, index);
	if ((rc = slab_sysfs_line(s, rel, line, sizeof(line))) < 0)
		return rc;
	if (slab_parse_i64(line, &level) < 0 || level < 1 || level > 9) {
		snprintf(why, sizeof(why), "not a cache level (1 to 9): %s", left_out);
		return report_invalid(s, rel, line, why);
	}
	c->level = (unsigned)level;
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cache/%s/type", cpu, index);
	if ((rc = slab_sysfs_line(s, rel, line, sizeof(line))) < 0)
		return rc;
	if (strcmp(line, "Data") != 0 && strcmp(line, "Instruction") != 0 &&
	    strcmp(line, "Unified") != 0) {
		snprintf(why, sizeof(why), "not a cache type (Data, Instruction or Unified): %s",
			 left_out);
		return report_invalid(s, rel, line, why);
	}
	snprintf(c->type, sizeof(c->type), "%.15s", line);
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cache/%s/size", cpu, index);
	if ((rc = slab_sysfs_line(s, rel, line, sizeof(line))) < 0)
		return rc;
	c->size = parse_cache_size(line);
	if (c->size == 0) {
		snprintf(why, sizeof(why), "not a cache size (such as 32K): %s", left_out);
		return report_invalid(s, rel, line, why);
	}
	return 0;
}

int slab_sysfs_thp(struct slab_sysfs *s, const char *which, char *buf, size_t len)
{
	char rel[128], line[256], *a, *b;
	int rc;

	if (len)
		buf[0] = '\0';
	snprintf(rel, sizeof(rel), "sys/kernel/mm/transparent_hugepage/%s", which);
	if ((rc = slab_sysfs_line(s, rel, line, sizeof(line))) < 0)
		return rc;
	/* "always [madvise] never": the bracketed word is the setting; a file of one word is
	 * that word. No word, several and none chosen, two chosen, a blank inside the brackets
	 * or a word too long for any setting: not the kernel's. */
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a != NULL && b != NULL && b - a - 1 > 0 && b - a - 1 <= 31 &&
	    strcspn(a + 1, " \t") >= (size_t)(b - a - 1) && strchr(b, '[') == NULL)
		snprintf(buf, len, "%.*s", (int)(b - a - 1), a + 1);
	else if (a == NULL && strchr(line, ']') == NULL && line[0] != '\0' &&
		 strcspn(line, " \t") == strlen(line) && strlen(line) <= 31)
		snprintf(buf, len, "%s", line);
	else
		return report_invalid(s, rel, line, "not a setting (one word, or one in brackets "
				      "among others): ignored; the setting is unknown");
	return 0;
}

int slab_sysfs_cpu_model(struct slab_sysfs *s, char *buf, size_t len)
{
	/* The first CPU's lines, "model name" among them, are well within the start. */
	char text[8192], *p;
	int rc;

	if (len)
		buf[0] = '\0';
	if ((rc = slab_sysfs_read(s, "proc/cpuinfo", text, sizeof(text))) < 0)
		return rc;
	for (p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *v = p + 10, *e;

		if (strncmp(p, "model name", 10) != 0)
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != ':')
			return report_invalid(s, "proc/cpuinfo", p, "a \"model name\" line without "
					      "its colon: ignored; the CPU model is unknown");
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
		e = v + strcspn(v, "\n");
		while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		/* x86 writes "unknown" for a CPU without a name, never nothing. */
		if (e == v)
			return report_invalid(s, "proc/cpuinfo", p, "no CPU model after \"model "
					      "name\": ignored; the CPU model is unknown");
		snprintf(buf, len, "%.*s", (int)(e - v), v);
		return 0;
	}
	return SLAB_ERR_NOTFOUND;
}

int slab_sysfs_meminfo(struct slab_sysfs *s, const char *rel, const char *key, int64_t *out)
{
	char text[8192], why[160];
	const char *p = text;
	size_t kl = strlen(key);
	int rc = slab_sysfs_read(s, rel, text, sizeof(text));

	if (rc < 0)
		return rc;
	while (p != NULL && *p != '\0') {
		const char *line = p, *k = NULL, *nl = strchr(p, '\n');
		int64_t v = 0;
		int digits = 0, over = 0;

		/* The key may follow "Node N ". */
		for (const char *q = line; q < (nl ? nl : line + strlen(line)); q++)
			if ((q == line || q[-1] == ' ') && strncmp(q, key, kl) == 0 && q[kl] == ':') {
				k = q + kl + 1;
				break;
			}
		p = nl ? nl + 1 : NULL;
		if (k == NULL)
			continue;
		/* "     16318860 kB", or a count without a unit (HugePages_Total). */
		while (*k == ' ' || *k == '\t')
			k++;
		for (; *k >= '0' && *k <= '9'; k++, digits++) {
			if (v > INT64_MAX / 10 - 10)
				over = 1;
			else
				v = v * 10 + (*k - '0');
		}
		while (*k == ' ' || *k == '\t')
			k++;
		if (strncmp(k, "kB", 2) == 0) {
			k += 2;
			if (v > INT64_MAX / 1024)
				over = 1;
			else
				v *= 1024;
		}
		while (*k == ' ' || *k == '\t' || *k == '\r')
			k++;
		if (!digits || over || (*k != '\n' && *k != '\0')) {
			snprintf(why, sizeof(why), "not a number of kB for %s: ignored; %s is "
				 "unknown", key, key);
			return report_invalid(s, rel, line, why);
		}
		*out = v;
		return 0;
	}
	return SLAB_ERR_NOTFOUND;
}
