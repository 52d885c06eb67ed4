/* topo.c: read NUMA nodes, CPUs, caches, huge pages and PCIe devices from sysfs and procfs
 * under a root folder, without ever leaving it, and derive binding advice and warnings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "slab.h"
#include "sysfs.h"
#include "topo.h"

/* Kernels have at most 1024 NUMA nodes (MAX_NUMNODES, NODES_SHIFT up to 10). */
#define MAX_NODE_ID 1023

/* Text quoted from a file in a warning: its start, up to this many bytes. */
#define MAX_QUOTE 64

struct slab_topo {
	struct slab_sysfs *fs;
	int done;
	int nomem;
	char **invalid;         /* files warned about as sysfs_invalid, NULL-terminated */
	unsigned ninvalid;
	char err[PATH_MAX + 128];
	struct slab_topo_info info;
};

/* ---- small helpers ------------------------------------------------------------------------ */

static void warn(struct slab_topo *t, enum slab_topo_level level, const char *code, const char *fmt,
		 ...)
	__attribute__((format(printf, 4, 5)));

static void *t_calloc(struct slab_topo *t, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		t->nomem = 1;
	return p;
}

static char *t_strdup(struct slab_topo *t, const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		t->nomem = 1;
	return p;
}

/* Append p to a growing array of pointers kept NULL-terminated; the array is unchanged when
 * memory runs out (and p freed). */
static void push_str(struct slab_topo *t, char ***arr, unsigned *n, char *p)
{
	char **grown;

	if (p == NULL)
		return;
	grown = realloc(*arr, (*n + 2) * sizeof(**arr));
	if (grown == NULL) {
		t->nomem = 1;
		free(p);
		return;
	}
	grown[(*n)++] = p;
	grown[*n] = NULL;
	*arr = grown;
}

static int has_str(char *const *arr, const char *s)
{
	if (arr == NULL)
		return 0;
	for (; *arr != NULL; arr++)
		if (strcmp(*arr, s) == 0)
			return 1;
	return 0;
}

static void path_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	/* A name too long for PATH_MAX is not in sysfs: make the open fail cleanly. */
	if (n < 0 || (size_t)n >= len)
		snprintf(buf, len, "%s", "\001too-long");
}

/* The readers below keep topology's rule: a missing file leaves a field unknown; running out
 * of memory is remembered and fails the read at the end. */
static char *slurp(struct slab_topo *t, const char *rel)
{
	char *text = NULL;
	int rc = slab_sysfs_slurp(t->fs, rel, &text);

	if (rc == SLAB_ERR_NOMEM)
		t->nomem = 1;
	return rc == 0 ? text : NULL;
}

static int read_line(struct slab_topo *t, const char *rel, char *buf, size_t len)
{
	return slab_sysfs_line(t->fs, rel, buf, len);
}

/* text's first line without surrounding blanks, in place. */
static void first_line(char *text)
{
	char *p, *e;

	for (p = text; *p == ' ' || *p == '\t'; p++)
		;
	e = p + strcspn(p, "\n");
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*e = '\0';
	memmove(text, p, (size_t)(e - p) + 1);
}

/*
 * File path (as the user knows it) holds text the kernel never writes there: a warning
 * (sysfs_invalid) naming it, quoting the start of the text, saying why it is refused and what
 * is done without it; once per file, however many of its values are read (MemTotal and
 * MemFree of one meminfo).
 */
static void invalid_at(struct slab_topo *t, const char *path, const char *text, const char *why)
{
	if (has_str(t->invalid, path))
		return;
	push_str(t, &t->invalid, &t->ninvalid, t_strdup(t, path));
	warn(t, SLAB_TOPO_WARNING, "sysfs_invalid", "'%s' holds '%.*s%s', %s", path, MAX_QUOTE,
	     text, strlen(text) > MAX_QUOTE ? "..." : "", why);
}

/* The same for file rel under the root, why given as printf's. */
static void invalid(struct slab_topo *t, const char *rel, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void invalid(struct slab_topo *t, const char *rel, const char *text, const char *fmt, ...)
{
	char full[PATH_MAX * 2], why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	invalid_at(t, slab_sysfs_path(t->fs, rel, full, sizeof(full)), text, why);
}

/* What the readers of sysfs.c find invalid (a cache's files, meminfo, cpuinfo, THP). */
static void on_invalid(const char *path, const char *text, const char *why, void *arg)
{
	invalid_at(arg, path, text, why);
}

/*
 * The decimal number in file rel, from min to max, into *out: 0; SLAB_ERR_IO when the file
 * is missing; SLAB_ERR_CORRUPT, with a warning saying it is not what (as "not a count of
 * pages") and then what is done without it, for anything else.
 */
static int read_num(struct slab_topo *t, const char *rel, int64_t min, int64_t max,
		    const char *what, const char *then, int64_t *out)
{
	char line[256];
	int64_t v;

	if (read_line(t, rel, line, sizeof(line)) < 0)
		return SLAB_ERR_IO;
	if (slab_parse_i64(line, &v) < 0 || v < min || v > max) {
		invalid(t, rel, line, "not %s: ignored; %s", what, then);
		return SLAB_ERR_CORRUPT;
	}
	*out = v;
	return 0;
}

/* The same for a hexadecimal number ("0x030200") up to max. */
static int read_hex(struct slab_topo *t, const char *rel, unsigned max, const char *what,
		    const char *then, unsigned *out)
{
	char line[256];
	unsigned v;

	if (read_line(t, rel, line, sizeof(line)) < 0)
		return SLAB_ERR_IO;
	if (slab_parse_hex(line, &v) < 0 || v > max) {
		invalid(t, rel, line, "not %s: ignored; %s", what, then);
		return SLAB_ERR_CORRUPT;
	}
	*out = v;
	return 0;
}

static int cmp_plain(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a folder (no dot files), in version order ("nvme2n1" before "nvme10n1"),
 * or the order of cmp. A missing folder is an empty list. */
static unsigned list_dir_cmp(struct slab_topo *t, const char *rel, char ***out,
			     int (*cmp)(const void *, const void *))
{
	int n = slab_sysfs_list(t->fs, rel, cmp, out);

	if (n == SLAB_ERR_NOMEM)
		t->nomem = 1;
	return n > 0 ? (unsigned)n : 0;
}

static unsigned list_dir(struct slab_topo *t, const char *rel, char ***out)
{
	return list_dir_cmp(t, rel, out, NULL);
}

/* "prefix" followed by digits only: the number, else -1. */
static long numbered(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);
	int64_t v;

	if (strncmp(name, prefix, pl) != 0 || name[pl] < '0' || name[pl] > '9')
		return -1;
	if (strspn(name + pl, "0123456789") != strlen(name + pl))
		return -1;
	/* "node01" is not the kernel's, and beside "node1" would make a second node 1. */
	if (name[pl] == '0' && name[pl + 1] != '\0')
		return -1;
	if (slab_parse_i64(name + pl, &v) < 0 || v > INT_MAX)
		return -1;
	return (long)v;
}

/*
 * The number of entry name of folder dir, "prefix" and a number from 0 to max as the kernel
 * writes it ("node1"), else -1. A name that is prefix and digits all the same ("node01",
 * "node99999") is a warning naming it: the kernel never makes one.
 */
static long folder_id(struct slab_topo *t, const char *dir, const char *name, const char *prefix,
		      long max)
{
	size_t pl = strlen(prefix);
	long id = numbered(name, prefix);
	char rel[PATH_MAX], full[PATH_MAX * 2];

	if (id >= 0 && id <= max)
		return id;
	if (strncmp(name, prefix, pl) != 0 || name[pl] == '\0' ||
	    strspn(name + pl, "0123456789") != strlen(name + pl))
		return -1;      /* another entry: "online", "cpufreq" */
	path_fmt(rel, sizeof(rel), "%s/%s", dir, name);
	warn(t, SLAB_TOPO_WARNING, "sysfs_invalid",
	     "'%s': not a folder name the kernel writes (%s0 to %s%ld, no leading zero): ignored",
	     slab_sysfs_path(t->fs, rel, full, sizeof(full)), prefix, prefix, max);
	return -1;
}

/* ---- id lists ----------------------------------------------------------------------------- */

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* A decimal id at *pp, moved past it: 0, SLAB_ERR_CORRUPT when there is no digit, or
 * SLAB_ERR_LIMIT past SLAB_IDLIST_MAX_ID. */
static int parse_id(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return SLAB_ERR_CORRUPT;
	for (; *p >= '0' && *p <= '9'; p++)
		if (v <= SLAB_IDLIST_MAX_ID)
			v = v * 10 + (uint64_t)(*p - '0');
	*pp = p;
	*out = v;
	return v > SLAB_IDLIST_MAX_ID ? SLAB_ERR_LIMIT : 0;
}

/* The kernel writes "0-3,8\n" and nothing else: no blanks inside, no empty piece, every
 * range upwards. */
int slab_idlist_parse(const char *s, struct slab_idlist *out)
{
	unsigned *ids = NULL, *grown;
	size_t n = 0, cap = 0, total = 0;
	const char *p = s;
	int rc = SLAB_ERR_CORRUPT;

	out->n = 0;
	out->id = NULL;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	while (*p != '\0') {
		uint64_t a, b;

		if ((rc = parse_id(&p, &a)) < 0)
			goto junk;
		b = a;
		if (*p == '-') {
			p++;
			if ((rc = parse_id(&p, &b)) < 0)
				goto junk;
			rc = SLAB_ERR_CORRUPT;
			if (b < a)
				goto junk;
		}
		/* Overlapping ranges could repeat the ids past any machine's count. */
		total += (size_t)(b - a + 1);
		rc = SLAB_ERR_LIMIT;
		if (total > SLAB_IDLIST_MAX_ID + 1)
			goto junk;
		if (n + (size_t)(b - a + 1) > cap) {
			cap = (n + (size_t)(b - a + 1)) * 2;
			grown = realloc(ids, cap * sizeof(*ids));
			if (grown == NULL) {
				free(ids);
				return SLAB_ERR_NOMEM;
			}
			ids = grown;
		}
		for (uint64_t i = a; i <= b; i++)
			ids[n++] = (unsigned)i;
		rc = SLAB_ERR_CORRUPT;
		if (*p == ',') {
			p++;
			if (*p < '0' || *p > '9')
				goto junk;      /* "0,,1", "0," */
			continue;
		}
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p != '\0')
			goto junk;
	}
	if (n > 1) {
		size_t w = 1;

		qsort(ids, n, sizeof(*ids), cmp_unsigned);
		for (size_t r = 1; r < n; r++)
			if (ids[r] != ids[w - 1])
				ids[w++] = ids[r];
		n = w;
	}
	out->n = (unsigned)n;
	out->id = ids;
	return 0;
junk:
	free(ids);
	return rc;
}

/*
 * The CPU list in file rel, read whole (a big machine's lists are longer than a page, and a
 * list cut short is another list), parsed into out; its first line without surrounding
 * blanks into *text (the caller's to free) on success, else NULL. A missing file is
 * SLAB_ERR_IO, said nowhere (but -v). A list the kernel would never write is a warning
 * naming the file and its text, then what the caller does without it (then), and the
 * parser's error; out of memory is noted on t.
 */
static int read_idlist(struct slab_topo *t, const char *rel, struct slab_idlist *out,
		       char **text, const char *then)
{
	char why[64], *line = slurp(t, rel);
	int rc;

	out->n = 0;
	out->id = NULL;
	*text = NULL;
	if (line == NULL)
		return SLAB_ERR_IO;
	first_line(line);
	rc = slab_idlist_parse(line, out);
	if (rc == SLAB_ERR_NOMEM) {
		t->nomem = 1;
	} else if (rc < 0) {
		if (rc == SLAB_ERR_LIMIT)
			snprintf(why, sizeof(why), "more CPUs than a kernel has (ids 0 to %u)",
				 SLAB_IDLIST_MAX_ID);
		else
			snprintf(why, sizeof(why), "not a CPU list");
		invalid(t, rel, line, "%s: ignored; %s", why, then);
	}
	if (rc == 0)
		*text = line;
	else
		free(line);
	return rc;
}

void slab_idlist_free(struct slab_idlist *l)
{
	free(l->id);
	l->id = NULL;
	l->n = 0;
}

/* ---- PCIe arithmetic ---------------------------------------------------------------------- */

static const struct {
	double gts, lane_gbs;
	int gen;
} pcie_gens[] = {
	{ 2.5, 0.25, 1 },       /* 8b/10b */
	{ 5.0, 0.5, 2 },
	{ 8.0, 0.985, 3 },      /* 128b/130b: 8 * 128/130 / 8 */
	{ 16.0, 1.969, 4 },
	{ 32.0, 3.938, 5 },
	{ 64.0, 7.563, 6 },     /* PAM4 with FLIT mode: 242 of 256 bytes carry data, roughly */
};

static int gen_index(double gts)
{
	for (size_t i = 0; i < sizeof(pcie_gens) / sizeof(pcie_gens[0]); i++)
		if (gts > pcie_gens[i].gts - 0.01 && gts < pcie_gens[i].gts + 0.01)
			return (int)i;
	return -1;
}

int slab_pci_gen(double gts)
{
	int i = gen_index(gts);

	return i < 0 ? 0 : pcie_gens[i].gen;
}

double slab_pci_lane_gbs(double gts)
{
	int i = gen_index(gts);

	return i < 0 ? 0.0 : pcie_gens[i].lane_gbs;
}

double slab_pci_link_gbs(const struct slab_pci_link *l)
{
	return l->width ? slab_pci_lane_gbs(l->gts) * l->width : 0.0;
}

int slab_pci_downgraded(const struct slab_topo_pci *d)
{
	if (d->cur.gts > 0 && d->max.gts > 0 && d->cur.gts < d->max.gts - 0.01)
		return 1;
	return d->cur.width && d->max.width && d->cur.width < d->max.width;
}

const char *slab_pci_kind_name(enum slab_pci_kind k)
{
	switch (k) {
	case SLAB_PCI_GPU: return "gpu";
	case SLAB_PCI_DISPLAY: return "display";
	case SLAB_PCI_ACCEL: return "accelerator";
	case SLAB_PCI_NVME: return "nvme";
	case SLAB_PCI_ETHERNET: return "ethernet";
	case SLAB_PCI_INFINIBAND: return "infiniband";
	}
	return "unknown";
}

/* "16.0 GT/s PCIe", "8 GT/s", "Unknown": GT/s or 0. */
static double parse_gts(const char *s)
{
	double v = 0, scale = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			v += (*p - '0') * (scale /= 10);
	while (*p == ' ')
		p++;
	return strncmp(p, "GT/s", 4) == 0 ? v : 0;
}

/* ---- nodes -------------------------------------------------------------------------------- */

/* MemTotal and MemFree of a meminfo file, in bytes; -1 unknown. */
static void read_meminfo(struct slab_topo *t, const char *rel, struct slab_topo_node *nd)
{
	if (slab_sysfs_meminfo(t->fs, rel, "MemTotal", &nd->mem_total) < 0)
		nd->mem_total = -1;
	if (slab_sysfs_meminfo(t->fs, rel, "MemFree", &nd->mem_free) < 0)
		nd->mem_free = -1;
}

/* Reserved and free pages of each size in a hugepages folder; -1 unknown. */
static void read_hugepages(struct slab_topo *t, const char *dir, struct slab_topo_node *nd)
{
	static const char *const file[] = {
		"hugepages-2048kB/nr_hugepages", "hugepages-2048kB/free_hugepages",
		"hugepages-1048576kB/nr_hugepages", "hugepages-1048576kB/free_hugepages",
	};
	int64_t *v[] = { &nd->huge_2m_total, &nd->huge_2m_free, &nd->huge_1g_total,
			 &nd->huge_1g_free };
	char rel[PATH_MAX];

	for (size_t i = 0; i < sizeof(file) / sizeof(file[0]); i++) {
		path_fmt(rel, sizeof(rel), "%s/%s", dir, file[i]);
		if (read_num(t, rel, 0, INT64_MAX, "a count of pages", "the count is unknown",
			     v[i]) < 0)
			*v[i] = -1;
	}
}

/*
 * Node nd's row of distance (one number from 0 to 255 per node, in node order, blanks
 * between: "10 21\n") into nd->distance; read whole, as a thousand nodes take more than a
 * page. A row of another length, or junk, is a warning, and the distances stay unknown.
 */
static void read_distance(struct slab_topo *t, const char *rel, struct slab_topo_node *nd)
{
	unsigned n = t->info.nnodes, k = 0;
	char *text = slurp(t, rel), *p;

	if (text == NULL || nd->distance == NULL) {
		free(text);
		return;
	}
	first_line(text);
	for (p = text; *p != '\0'; k++) {
		int64_t v = 0;

		if (*p < '0' || *p > '9')
			break;
		for (; *p >= '0' && *p <= '9'; p++)
			if ((v = v * 10 + (*p - '0')) > 255)
				break;
		if (v > 255 || (*p != ' ' && *p != '\t' && *p != '\0'))
			break;
		if (k < n)
			nd->distance[k] = (int)v;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (*p != '\0' || k != n) {
		for (unsigned j = 0; j < n; j++)
			nd->distance[j] = -1;
		if (*p != '\0')
			invalid(t, rel, text, "not a row of distances (0 to 255): ignored; node %d's "
				"distances are unknown", nd->id);
		else
			invalid(t, rel, text, "%u distance%s for %u node%s: ignored; node %d's "
				"distances are unknown", k, k == 1 ? "" : "s", n, n == 1 ? "" : "s",
				nd->id);
	}
	free(text);
}

static void read_nodes(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	char **names, rel[PATH_MAX];
	unsigned n = list_dir(t, "sys/devices/system/node", &names), k = 0;
	int *ids = t_calloc(t, n, sizeof(*ids));

	for (unsigned i = 0; ids != NULL && i < n; i++) {
		long id = folder_id(t, "sys/devices/system/node", names[i], "node", MAX_NODE_ID);
		if (id >= 0)
			ids[k++] = (int)id;
	}
	slab_sysfs_free_names(names);
	if (ids == NULL)
		return;
	ti->nnodes = k;
	ti->numa_known = k > 0;
	if (k == 0) {
		/* A kernel without CONFIG_NUMA: one node with every CPU and all the memory. */
		ti->nnodes = 1;
		ids[0] = 0;
	}
	ti->nodes = t_calloc(t, ti->nnodes, sizeof(*ti->nodes));
	if (ti->nodes == NULL) {
		ti->nnodes = 0;
		free(ids);
		return;
	}
	for (unsigned i = 0; i < ti->nnodes; i++) {
		struct slab_topo_node *nd = &ti->nodes[i];
		char dir[PATH_MAX], then[64];

		nd->id = ids[i];
		nd->mem_total = nd->mem_free = -1;
		nd->distance = t_calloc(t, ti->nnodes, sizeof(*nd->distance));
		if (nd->distance != NULL)
			for (unsigned j = 0; j < ti->nnodes; j++)
				nd->distance[j] = -1;
		if (!ti->numa_known) {
			nd->cpulist = t_strdup(t, ti->online_list ? ti->online_list : "");
			if (ti->online.n) {
				nd->cpus.id = t_calloc(t, ti->online.n, sizeof(unsigned));
				if (nd->cpus.id != NULL) {
					memcpy(nd->cpus.id, ti->online.id, ti->online.n * sizeof(unsigned));
					nd->cpus.n = ti->online.n;
				}
			}
			read_meminfo(t, "proc/meminfo", nd);
			read_hugepages(t, "sys/kernel/mm/hugepages", nd);
			continue;
		}
		path_fmt(dir, sizeof(dir), "sys/devices/system/node/node%d", nd->id);
		path_fmt(rel, sizeof(rel), "%s/cpulist", dir);
		snprintf(then, sizeof(then), "node %d is taken to have no CPUs", nd->id);
		if (read_idlist(t, rel, &nd->cpus, &nd->cpulist, then) < 0)
			nd->cpulist = t_strdup(t, "");
		path_fmt(rel, sizeof(rel), "%s/meminfo", dir);
		read_meminfo(t, rel, nd);
		/* One number per online node, in node order: ours, as the folders are. */
		path_fmt(rel, sizeof(rel), "%s/distance", dir);
		read_distance(t, rel, nd);
		path_fmt(rel, sizeof(rel), "%s/hugepages", dir);
		read_hugepages(t, rel, nd);
	}
	free(ids);
}

const struct slab_topo_node *slab_topo_node(const struct slab_topo_info *ti, int id)
{
	for (unsigned i = 0; i < ti->nnodes; i++)
		if (ti->nodes[i].id == id)
			return &ti->nodes[i];
	return NULL;
}

/* ---- CPUs and caches ---------------------------------------------------------------------- */

static void read_model(struct slab_topo *t)
{
	char model[512];

	if (slab_sysfs_cpu_model(t->fs, model, sizeof(model)) == 0 &&
	    (t->info.model = strdup(model)) == NULL)
		t->nomem = 1;
}

static void read_online(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	char **names;
	unsigned n, k = 0;

	if (read_idlist(t, "sys/devices/system/cpu/online", &ti->online, &ti->online_list,
			"the cpuN folders name the CPUs instead") == 0)
		return;
	/* No online file: the cpuN folders. */
	n = list_dir(t, "sys/devices/system/cpu", &names);
	ti->online.id = t_calloc(t, n, sizeof(unsigned));
	for (unsigned i = 0; ti->online.id != NULL && i < n; i++) {
		long id = folder_id(t, "sys/devices/system/cpu", names[i], "cpu", SLAB_IDLIST_MAX_ID);
		if (id >= 0)
			ti->online.id[k++] = (unsigned)id;
	}
	slab_sysfs_free_names(names);
	ti->online.n = k;
	if (k > 1)
		qsort(ti->online.id, k, sizeof(unsigned), cmp_unsigned);
	ti->online_list = t_strdup(t, "");
}

struct cache_rec {
	unsigned level, type;   /* type: 0 data, 1 instruction, 2 unified */
	uint64_t size;
	char *shared;
	unsigned shared_n;
};

static int cmp_cache_rec(const void *a, const void *b)
{
	const struct cache_rec *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->shared, y->shared);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_cpus(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	unsigned ncpu = ti->online.n, nsib = 0, ncr = 0, crcap = 0;
	int64_t *pkgs = t_calloc(t, ncpu, sizeof(*pkgs));
	char **sibs = t_calloc(t, ncpu, sizeof(*sibs));
	struct cache_rec *cr = NULL;
	unsigned npkg = 0;

	if (pkgs == NULL || sibs == NULL)
		goto out;
	for (unsigned i = 0; i < ncpu; i++) {
		unsigned cpu = ti->online.id[i];
		char rel[PATH_MAX], then[64], *text, **idx;
		struct slab_idlist l;
		int64_t pkg = -1;
		unsigned nidx;

		path_fmt(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/topology/physical_package_id",
			 cpu);
		/* -1 is the kernel's "unknown" (some arm64 and virtual machines), not one more
		 * socket: counted without it, as a file that cannot be read is. */
		if (read_num(t, rel, -1, INT_MAX, "a package id (-1, or 0 and up)",
			     "sockets are counted without it", &pkg) == 0 && pkg >= 0)
			pkgs[npkg++] = pkg;
		else
			pkg = -1;
		path_fmt(rel, sizeof(rel),
			 "sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
		if (read_idlist(t, rel, &l, &text, "cores and threads are counted without it") == 0) {
			if (l.n > ti->threads_per_core)
				ti->threads_per_core = l.n;
			slab_idlist_free(&l);
			/* Sibling lists name a core uniquely, whatever core_id says. */
			if (asprintf(&sibs[nsib], "%lld:%s", (long long)pkg, text) >= 0)
				nsib++;
			else
				t->nomem = 1;
			free(text);
		}

		path_fmt(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cache", cpu);
		nidx = list_dir(t, rel, &idx);
		for (unsigned k = 0; k < nidx; k++) {
			struct cache_rec r;
			struct slab_sysfs_cache sc;

			if (numbered(idx[k], "index") < 0 ||
			    slab_sysfs_cache(t->fs, cpu, idx[k], &sc) < 0)
				continue;
			memset(&r, 0, sizeof(r));
			r.level = sc.level;
			r.type = strcmp(sc.type, "Data") == 0 ? 0 :
				 strcmp(sc.type, "Instruction") == 0 ? 1 : 2;
			r.size = sc.size;
			path_fmt(rel, sizeof(rel),
				 "sys/devices/system/cpu/cpu%u/cache/%s/shared_cpu_list", cpu, idx[k]);
			snprintf(then, sizeof(then), "CPU %u is taken to have the cache alone",
				 cpu);
			if (read_idlist(t, rel, &l, &r.shared, then) == 0) {
				r.shared_n = l.n;
				slab_idlist_free(&l);
			} else {
				if (asprintf(&r.shared, "%u", cpu) < 0) {
					r.shared = NULL;
					t->nomem = 1;
				}
				r.shared_n = 1;
			}
			if (r.shared == NULL)
				break;
			if (ncr == crcap) {
				unsigned cap = crcap ? crcap * 2 : 16;
				struct cache_rec *g = realloc(cr, cap * sizeof(*cr));

				/* crcap grows only with the array: the next CPU must not write
				 * past it. */
				if (g == NULL) {
					t->nomem = 1;
					free(r.shared);
					break;
				}
				cr = g;
				crcap = cap;
			}
			cr[ncr++] = r;
		}
		slab_sysfs_free_names(idx);
	}

	/* Sockets: distinct package ids; cores: distinct sibling lists. */
	if (npkg) {
		qsort(pkgs, npkg, sizeof(*pkgs), cmp_i64);
		ti->sockets = 1;
		for (unsigned i = 1; i < npkg; i++)
			ti->sockets += pkgs[i] != pkgs[i - 1];
	}
	if (nsib) {
		qsort(sibs, nsib, sizeof(*sibs), cmp_str);
		ti->cores = 1;
		for (unsigned i = 1; i < nsib; i++)
			ti->cores += strcmp(sibs[i], sibs[i - 1]) != 0;
	}

	/* Caches: one row per (level, type, size), counting distinct sharing sets. */
	if (ncr) {
		qsort(cr, ncr, sizeof(*cr), cmp_cache_rec);
		ti->caches = t_calloc(t, ncr, sizeof(*ti->caches));
		for (unsigned i = 0; ti->caches != NULL && i < ncr; i++) {
			struct slab_topo_cache *c;
			static const char *const types[] = { "data", "instruction", "unified" };
			static const char *const suffix[] = { "d", "i", "" };

			if (i == 0 || cr[i].level != cr[i - 1].level || cr[i].type != cr[i - 1].type ||
			    cr[i].size != cr[i - 1].size) {
				c = &ti->caches[ti->ncaches++];
				c->level = cr[i].level;
				c->type = types[cr[i].type];
				snprintf(c->name, sizeof(c->name), "L%u%s", c->level % 10,
					 suffix[cr[i].type]);
				c->size = cr[i].size;
			} else if (strcmp(cr[i].shared, cr[i - 1].shared) == 0) {
				continue;
			}
			c = &ti->caches[ti->ncaches - 1];
			c->instances++;
			if (cr[i].shared_n > c->cpus_each)
				c->cpus_each = cr[i].shared_n;
		}
	}
out:
	for (unsigned i = 0; i < ncr; i++)
		free(cr[i].shared);
	free(cr);
	for (unsigned i = 0; sibs != NULL && i < nsib; i++)
		free(sibs[i]);
	free(sibs);
	free(pkgs);
}

/* ---- PCIe --------------------------------------------------------------------------------- */

/* Display controllers that are not for compute: BMCs' and hypervisors' frame buffers. */
static int display_only(unsigned vendor)
{
	static const unsigned v[] = {
		0x1a03,         /* ASPEED (server BMCs) */
		0x102b,         /* Matrox (server BMCs) */
		0x19e5,         /* Huawei iBMC display */
		0x1234,         /* QEMU / Bochs */
		0x1af4,         /* virtio */
		0x1b36,         /* Red Hat QXL */
		0x15ad,         /* VMware */
		0x1013,         /* Cirrus (emulated) */
		0x1414,         /* Hyper-V */
		0x80ee,         /* VirtualBox */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] == vendor)
			return 1;
	return 0;
}

static int classify(unsigned class_code, unsigned vendor, enum slab_pci_kind *kind)
{
	unsigned base = class_code >> 16, sub = (class_code >> 8) & 0xff;

	if (base == 0x03)
		*kind = display_only(vendor) ? SLAB_PCI_DISPLAY : SLAB_PCI_GPU;
	else if (base == 0x12)
		*kind = SLAB_PCI_ACCEL;
	else if (base == 0x01 && sub == 0x08)
		*kind = SLAB_PCI_NVME;
	else if (base == 0x02 && sub == 0x00)
		*kind = SLAB_PCI_ETHERNET;
	else if (base == 0x02 && sub == 0x07)
		*kind = SLAB_PCI_INFINIBAND;
	else
		return -1;
	return 0;
}

/* The entries of dev/sub (all of them, or those the filter accepts) as names of d. */
static void add_names(struct slab_topo *t, struct slab_topo_pci *d, const char *dev,
		      const char *sub,
		      int (*accept)(const char *))
{
	char rel[PATH_MAX], **names;
	unsigned n;

	path_fmt(rel, sizeof(rel), "%s/%s", dev, sub);
	/* Most devices lack most of these folders: not worth a -v line each. */
	{
		int was = slab_sysfs_quiet(t->fs, 1);
		n = list_dir(t, rel, &names);
		slab_sysfs_quiet(t->fs, was);
	}
	for (unsigned i = 0; i < n; i++)
		if ((accept == NULL || accept(names[i])) && !has_str(d->names, names[i]))
			push_str(t, &d->names, &d->nnames, t_strdup(t, names[i]));
	slab_sysfs_free_names(names);
}

/* nvme0n1, not the per-path nvme0c0n1 of native multipath */
static int nvme_namespace(const char *s)
{
	size_t a, b;

	if (strncmp(s, "nvme", 4) != 0)
		return 0;
	a = strspn(s + 4, "0123456789");
	if (a == 0 || s[4 + a] != 'n')
		return 0;
	b = strspn(s + 5 + a, "0123456789");
	return b > 0 && s[5 + a + b] == '\0';
}

static int drm_card(const char *s)
{
	return numbered(s, "card") >= 0;
}

static void read_names(struct slab_topo *t, struct slab_topo_pci *d, const char *dev)
{
	char rel[PATH_MAX], **sub;
	unsigned n;

	/* /dev/nvidiaN from the NVIDIA driver's own procfs view. */
	if (d->kind == SLAB_PCI_GPU) {
		char *s;
		int was = slab_sysfs_quiet(t->fs, 1);

		path_fmt(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", d->addr);
		s = slurp(t, rel);
		slab_sysfs_quiet(t->fs, was);
		if (s != NULL) {
			char *p = strstr(s, "Device Minor:");
			int64_t minor;
			char num[32], name[48];

			if (p != NULL) {
				char *v = p + strlen("Device Minor:");
				int len = (int)strcspn(v, "\n");

				snprintf(num, sizeof(num), "%.*s", len, v);
				if (len < (int)sizeof(num) && slab_parse_i64(num, &minor) == 0 &&
				    minor >= 0 && minor < 1000000) {
					snprintf(name, sizeof(name), "nvidia%lld", (long long)minor);
					push_str(t, &d->names, &d->nnames, t_strdup(t, name));
				} else {
					first_line(p);
					invalid(t, rel, p, "not a device minor number (0 to "
						"999999): ignored; the GPU's /dev/nvidia name is "
						"unknown");
				}
			}
			free(s);
		}
	}
	/* NVMe namespaces hang below the controller: X/nvme/nvme0/nvme0n1. */
	path_fmt(rel, sizeof(rel), "%s/nvme", dev);
	{
		int was = slab_sysfs_quiet(t->fs, 1);
		n = list_dir(t, rel, &sub);
		slab_sysfs_quiet(t->fs, was);
	}
	for (unsigned i = 0; i < n; i++) {
		char s2[PATH_MAX];

		path_fmt(s2, sizeof(s2), "nvme/%s", sub[i]);
		add_names(t, d, dev, s2, nvme_namespace);
	}
	slab_sysfs_free_names(sub);
	add_names(t, d, dev, "block", NULL);
	add_names(t, d, dev, "infiniband", NULL);
	add_names(t, d, dev, "net", NULL);
	add_names(t, d, dev, "drm", drm_card);
	/* virtio devices put theirs one level down: X/virtio2/net/eth0. */
	{
		int was = slab_sysfs_quiet(t->fs, 1);
		n = list_dir(t, dev, &sub);
		slab_sysfs_quiet(t->fs, was);
	}
	for (unsigned i = 0; i < n; i++) {
		char s2[PATH_MAX];

		if (numbered(sub[i], "virtio") < 0)
			continue;
		path_fmt(s2, sizeof(s2), "%s/block", sub[i]);
		add_names(t, d, dev, s2, NULL);
		path_fmt(s2, sizeof(s2), "%s/net", sub[i]);
		add_names(t, d, dev, s2, NULL);
	}
	slab_sysfs_free_names(sub);
}

/*
 * A link speed file into l->gts (0 unknown): "16.0 GT/s PCIe", "8 GT/s" before Linux 5.4,
 * "Unknown" or "Unknown speed" when the device does not say. 0; SLAB_ERR_IO when the file is
 * missing; SLAB_ERR_CORRUPT, with a warning, for anything else.
 */
static int read_speed(struct slab_topo *t, const char *rel, struct slab_pci_link *l)
{
	char line[256];

	if (read_line(t, rel, line, sizeof(line)) < 0)
		return SLAB_ERR_IO;
	l->gts = parse_gts(line);
	if (l->gts > 0 || strncmp(line, "Unknown", 7) == 0)
		return 0;
	invalid(t, rel, line, "not a link speed (such as 16.0 GT/s PCIe): ignored; the speed is "
		"unknown");
	return SLAB_ERR_CORRUPT;
}

static void read_pci(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	char **names;
	unsigned n = list_dir_cmp(t, "sys/bus/pci/devices", &names, cmp_plain);

	ti->pci = t_calloc(t, n, sizeof(*ti->pci));
	for (unsigned i = 0; ti->pci != NULL && i < n; i++) {
		struct slab_topo_pci *d = &ti->pci[ti->npci];
		char dev[PATH_MAX], rel[PATH_MAX], line[4096];
		unsigned class_code, vendor = 0, device = 0;
		enum slab_pci_kind kind;
		struct slab_idlist cpus;
		int64_t v;
		int found = 0, rc;

		if (strlen(names[i]) >= sizeof(d->addr))
			continue;
		path_fmt(dev, sizeof(dev), "sys/bus/pci/devices/%s", names[i]);
		/* The kernel writes "0x030200", "0x10de". */
		path_fmt(rel, sizeof(rel), "%s/class", dev);
		if (read_hex(t, rel, 0xffffff, "a PCI class (6 hexadecimal digits)",
			     "the device is left out", &class_code) < 0)
			continue;
		path_fmt(rel, sizeof(rel), "%s/vendor", dev);
		if (read_hex(t, rel, 0xffff, "a PCI vendor id (4 hexadecimal digits)",
			     "the vendor is unknown", &vendor) < 0)
			vendor = 0xffff;
		if (classify(class_code, vendor, &kind) < 0)
			continue;
		memset(d, 0, sizeof(*d));
		snprintf(d->addr, sizeof(d->addr), "%s", names[i]);
		d->kind = kind;
		d->class_code = class_code;
		d->vendor = vendor;
		path_fmt(rel, sizeof(rel), "%s/device", dev);
		d->device = read_hex(t, rel, 0xffff, "a PCI device id (4 hexadecimal digits)",
				     "the device id is unknown", &device) == 0 ? device : 0xffff;

		/* driver is a symlink into /sys/bus/pci/drivers: its last component is the name;
		 * read, never followed. */
		if (slab_sysfs_link_name(t->fs, dev, "driver", line, sizeof(line)) == 0)
			d->driver = t_strdup(t, line);

		/* -1 when the firmware does not say; a node is below MAX_NUMNODES. */
		d->numa_node = -1;
		path_fmt(rel, sizeof(rel), "%s/numa_node", dev);
		rc = read_num(t, rel, -1, MAX_NODE_ID, "a NUMA node (-1, or 0 to 1023)",
			      "the device's node is unknown", &v);
		if (rc == 0) {
			d->numa_known = 1;
			d->numa_node = (int)v;
		}
		d->numa_invalid = rc == SLAB_ERR_CORRUPT;
		path_fmt(rel, sizeof(rel), "%s/local_cpulist", dev);
		read_idlist(t, rel, &cpus, &d->local_cpus, "its local CPUs are unknown");
		slab_idlist_free(&cpus);

		/* A link file there counts, whatever it holds. */
		path_fmt(rel, sizeof(rel), "%s/current_link_speed", dev);
		found |= read_speed(t, rel, &d->cur) != SLAB_ERR_IO;
		path_fmt(rel, sizeof(rel), "%s/max_link_speed", dev);
		found |= read_speed(t, rel, &d->max) != SLAB_ERR_IO;
		/* Six bits of the link registers: 0 when the link is down, 63 from a device
		 * that no longer answers; a width is 1 to 32 lanes. */
		path_fmt(rel, sizeof(rel), "%s/current_link_width", dev);
		rc = read_num(t, rel, 0, 63, "a link width (0 to 63)", "the width is unknown", &v);
		d->cur.width = rc == 0 && v > 0 && v <= 32 ? (unsigned)v : 0;
		found |= rc != SLAB_ERR_IO;
		path_fmt(rel, sizeof(rel), "%s/max_link_width", dev);
		rc = read_num(t, rel, 0, 63, "a link width (0 to 63)", "the width is unknown", &v);
		d->max.width = rc == 0 && v > 0 && v <= 32 ? (unsigned)v : 0;
		found |= rc != SLAB_ERR_IO;
		d->has_link = found;
		read_names(t, d, dev);
		ti->npci++;
	}
	slab_sysfs_free_names(names);
}

/* ---- advice and warnings ------------------------------------------------------------------ */

static void warn(struct slab_topo *t, enum slab_topo_level level, const char *code, const char *fmt,
		 ...)
{
	struct slab_topo_info *ti = &t->info;
	struct slab_topo_warning *g;
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->nomem = 1;
		return;
	}
	g = realloc(ti->warnings, (ti->nwarnings + 1) * sizeof(*g));
	if (g == NULL) {
		free(msg);
		t->nomem = 1;
		return;
	}
	ti->warnings = g;
	g[ti->nwarnings].level = level;
	g[ti->nwarnings].code = code;
	g[ti->nwarnings].message = msg;
	ti->nwarnings++;
}

/* A growing string for messages that list things. */
struct sbuf {
	char *s;
	size_t len, cap;
	int nomem;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || b->nomem)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)n + 1) * 2;
		char *g = realloc(b->s, cap);
		if (g == NULL) {
			b->nomem = 1;
			return;
		}
		b->s = g;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Free b's text; a text cut short by out of memory makes the whole read fail. */
static void sb_free(struct slab_topo *t, struct sbuf *b)
{
	if (b->nomem)
		t->nomem = 1;
	free(b->s);
	b->s = NULL;
}

static const char *sb_str(const struct sbuf *b)
{
	return b->s ? b->s : "";
}

/* "0000:17:00.0 (nvme0n1)" or just the address. */
static void sb_dev(struct sbuf *b, const struct slab_topo_pci *d)
{
	sb_add(b, "%s", d->addr);
	if (d->nnames) {
		sb_add(b, " (");
		for (unsigned i = 0; i < d->nnames; i++)
			sb_add(b, "%s%s", i ? " " : "", d->names[i]);
		sb_add(b, ")");
	}
}

/* A device's first name ("nvidia0", "nvme0n1"), or its address. */
static void sb_short(struct sbuf *b, const struct slab_topo_pci *d)
{
	sb_add(b, "%s", d->nnames ? d->names[0] : d->addr);
}

static int node_has_cpus(const struct slab_topo_node *nd)
{
	return nd != NULL && nd->cpus.n > 0;
}

static int node_has_memory(const struct slab_topo_node *nd)
{
	return nd != NULL && nd->mem_total != 0;        /* unknown (-1) counts as memory */
}

/* Node index a's distance to node index b: its own row's, else b's row's way back (the
 * kernel's table is symmetric), as a row of a node can be missing or junk alone; -1
 * unknown. */
static int distance(const struct slab_topo_info *ti, unsigned a, unsigned b)
{
	const int *ra = ti->nodes[a].distance, *rb = ti->nodes[b].distance;

	if (ra != NULL && ra[b] >= 0)
		return ra[b];
	return rb != NULL ? rb[a] : -1;
}

/* The node nearest to node index from (itself first) that satisfies want; -1 if none. */
static int nearest(const struct slab_topo_info *ti, unsigned from,
		   int (*want)(const struct slab_topo_node *))
{
	int best = -1, bestd = INT_MAX;

	if (want(&ti->nodes[from]))
		return ti->nodes[from].id;
	for (unsigned j = 0; j < ti->nnodes; j++) {
		int dist = distance(ti, from, j);

		if (!want(&ti->nodes[j]))
			continue;
		if (dist < 0)
			dist = INT_MAX - 1;
		if (dist < bestd) {
			bestd = dist;
			best = ti->nodes[j].id;
		}
	}
	return best;
}

/* The node a device belongs to for advice: its own, or on a one-node machine that one. */
static int device_node(const struct slab_topo_info *ti, const struct slab_topo_pci *d)
{
	if (d->numa_node >= 0 && slab_topo_node(ti, d->numa_node) != NULL)
		return d->numa_node;
	if (ti->nnodes == 1)
		return ti->nodes[0].id;
	return -1;
}

static int is_compute(const struct slab_topo_pci *d)
{
	return d->kind == SLAB_PCI_GPU || d->kind == SLAB_PCI_ACCEL;
}

static void advise(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	unsigned ncomp = 0;

	for (unsigned i = 0; i < ti->npci; i++)
		ncomp += is_compute(&ti->pci[i]);
	ti->advice = t_calloc(t, ncomp, sizeof(*ti->advice));
	if (ti->advice == NULL)
		return;
	for (unsigned i = 0; i < ti->npci; i++) {
		const struct slab_topo_pci *d = &ti->pci[i];
		struct slab_topo_advice *a;
		unsigned nn = 0, nw = 0;
		int node;

		if (!is_compute(d))
			continue;
		a = &ti->advice[ti->nadvice++];
		a->dev = d;
		a->node = d->numa_node >= 0 ? d->numa_node : -1;
		node = device_node(ti, d);
		a->cpu_node = a->mem_node = -1;
		/* CPUs on the device's node or the nearest with some; memory on the CPUs' node or
		 * the nearest to them with some (DRAM next to the loader, not a far node the
		 * device may hang off). */
		for (unsigned k = 0; node >= 0 && k < ti->nnodes; k++)
			if (ti->nodes[k].id == node)
				a->cpu_node = nearest(ti, k, node_has_cpus);
		for (unsigned k = 0; a->cpu_node >= 0 && k < ti->nnodes; k++)
			if (ti->nodes[k].id == a->cpu_node)
				a->mem_node = nearest(ti, k, node_has_memory);
		if (a->cpu_node >= 0 && a->mem_node >= 0) {
			snprintf(a->numactl, sizeof(a->numactl), "numactl --cpunodebind=%d --membind=%d",
				 a->cpu_node, a->mem_node);
			a->cpus = slab_topo_node(ti, a->cpu_node)->cpulist;
		} else {
			/* Nothing known to bind to: spreading pages averages the cost. */
			snprintf(a->numactl, sizeof(a->numactl),
				 "numactl --cpunodebind=all --interleave=all");
		}
		a->nvme = t_calloc(t, 1, sizeof(char *));
		a->network = t_calloc(t, 1, sizeof(char *));
		if (a->nvme == NULL || a->network == NULL || a->cpu_node < 0)
			continue;
		for (unsigned k = 0; k < ti->npci; k++) {
			const struct slab_topo_pci *o = &ti->pci[k];

			if (device_node(ti, o) != a->cpu_node)
				continue;
			if (o->kind == SLAB_PCI_NVME) {
				if (o->nnames == 0)
					push_str(t, &a->nvme, &nn, t_strdup(t, o->addr));
				for (unsigned m = 0; m < o->nnames; m++)
					push_str(t, &a->nvme, &nn, t_strdup(t, o->names[m]));
			} else if (o->kind == SLAB_PCI_ETHERNET || o->kind == SLAB_PCI_INFINIBAND) {
				if (o->nnames == 0)
					push_str(t, &a->network, &nw, t_strdup(t, o->addr));
				for (unsigned m = 0; m < o->nnames; m++)
					push_str(t, &a->network, &nw, t_strdup(t, o->names[m]));
			}
		}
	}
}

static void gts_text(char *buf, size_t len, const struct slab_pci_link *l)
{
	char sp[32], w[16];

	if (l->gts > 0)
		snprintf(sp, sizeof(sp), "%.1f GT/s", l->gts);
	else
		snprintf(sp, sizeof(sp), "unknown speed");
	if (l->width)
		snprintf(w, sizeof(w), " x%u", l->width);
	else
		snprintf(w, sizeof(w), " x?");
	snprintf(buf, len, "%s%s", sp, w);
	if (slab_pci_gen(l->gts) && l->width) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, " (Gen%d, %.1f GB/s%s)", slab_pci_gen(l->gts),
			 slab_pci_link_gbs(l), slab_pci_gen(l->gts) == 6 ? " approx." : "");
	}
}

static void warnings(struct slab_topo *t)
{
	struct slab_topo_info *ti = &t->info;
	int multi = ti->nnodes > 1;
	struct sbuf b;

	/* GPUs whose node the kernel does not know. */
	for (unsigned i = 0; multi && i < ti->nadvice; i++) {
		const struct slab_topo_advice *a = &ti->advice[i];

		if (a->cpu_node >= 0)
			continue;
		char why[64];

		memset(&b, 0, sizeof(b));
		sb_dev(&b, a->dev);
		/* Say what the tree says: -1, no file, or a node that has no folder. */
		if (a->dev->numa_invalid)
			snprintf(why, sizeof(why), "numa_node not a node number");
		else if (!a->dev->numa_known)
			snprintf(why, sizeof(why), "no numa_node file");
		else if (a->node >= 0)
			snprintf(why, sizeof(why), "numa_node %d, which is not a node", a->node);
		else
			snprintf(why, sizeof(why), "numa_node -1");
		warn(t, SLAB_TOPO_WARNING, "gpu_node_unknown",
		     "%s %s: the kernel does not know its NUMA node (%s): no binding to "
		     "suggest; %s spreads the cost", slab_pci_kind_name(a->dev->kind), sb_str(&b),
		     why, a->numactl);
		sb_free(t, &b);
	}

	/* GPUs and NVMe drives on different nodes: per node with GPUs. */
	for (unsigned k = 0; multi && k < ti->nnodes; k++) {
		int node = ti->nodes[k].id, local = 0, remote = 0;
		struct sbuf g, lb, rb;

		memset(&g, 0, sizeof(g));
		memset(&lb, 0, sizeof(lb));
		memset(&rb, 0, sizeof(rb));
		unsigned ngpu = 0;
		const char *gpus;

		for (unsigned i = 0; i < ti->nadvice; i++)
			if (ti->advice[i].cpu_node == node) {
				sb_add(&g, "%s", g.len ? " " : "");
				sb_short(&g, ti->advice[i].dev);
				ngpu++;
			}
		gpus = ngpu > 1 ? "GPUs" : "GPU";
		for (unsigned i = 0; g.len && i < ti->npci; i++) {
			const struct slab_topo_pci *d = &ti->pci[i];

			if (d->kind == SLAB_PCI_NVME && device_node(ti, d) == node) {
				local++;
				sb_add(&lb, "%s", lb.len ? " " : "");
				sb_short(&lb, d);
			}
		}
		/* The others, by node. */
		for (unsigned o = 0; g.len && o < ti->nnodes; o++) {
			int first = 1;

			if (ti->nodes[o].id == node)
				continue;
			for (unsigned i = 0; i < ti->npci; i++) {
				const struct slab_topo_pci *d = &ti->pci[i];

				if (d->kind != SLAB_PCI_NVME || device_node(ti, d) != ti->nodes[o].id)
					continue;
				remote++;
				if (first)
					sb_add(&rb, "%snode %d (", rb.len ? ", " : "", ti->nodes[o].id);
				else
					sb_add(&rb, " ");
				sb_short(&rb, d);
				first = 0;
			}
			if (!first)
				sb_add(&rb, ")");
		}
		if (remote && !local)
			warn(t, SLAB_TOPO_WARNING, "gpu_nvme_remote",
			     "%s on node %d (%s): no NVMe drive on that node, only on %s: data read "
			     "from those crosses between nodes on its way", gpus, node, sb_str(&g),
			     sb_str(&rb));
		else if (remote)
			warn(t, SLAB_TOPO_NOTE, "gpu_nvme_split",
			     "%s on node %d (%s): NVMe on that node (%s) and on %s: keep each GPU's "
			     "data on drives of its node", gpus, node, sb_str(&g), sb_str(&lb),
			     sb_str(&rb));
		sb_free(t, &g);
		sb_free(t, &lb);
		sb_free(t, &rb);
	}

	/* Other devices whose node the kernel does not know, one warning per cause: what the
	 * tree says (-1, a node it has no folder for, no file, junk). */
	for (int cause = 0; multi && cause < 4; cause++) {
		static const char *const why[] = {
			"numa_node is -1, the firmware does not give it",
			"numa_node names a node that has no folder (offline, or not captured)",
			"there is no numa_node file",
			"numa_node holds what the kernel never writes there",
		};

		memset(&b, 0, sizeof(b));
		for (unsigned i = 0; i < ti->npci; i++) {
			const struct slab_topo_pci *d = &ti->pci[i];

			if (is_compute(d) || d->kind == SLAB_PCI_DISPLAY || device_node(ti, d) >= 0)
				continue;
			if (cause != (d->numa_invalid ? 3 : !d->numa_known ? 2 :
				      d->numa_node >= 0 ? 1 : 0))
				continue;
			sb_add(&b, "%s", b.len ? ", " : "");
			sb_dev(&b, d);
		}
		if (b.len)
			warn(t, SLAB_TOPO_WARNING, "device_node_unknown",
			     "the kernel does not know the NUMA node of %s: %s", sb_str(&b),
			     why[cause]);
		sb_free(t, &b);
	}

	/* Links below their maximum. */
	for (unsigned i = 0; i < ti->npci; i++) {
		const struct slab_topo_pci *d = &ti->pci[i];
		char cur[96], max[96];

		if (!slab_pci_downgraded(d))
			continue;
		memset(&b, 0, sizeof(b));
		sb_dev(&b, d);
		gts_text(cur, sizeof(cur), &d->cur);
		gts_text(max, sizeof(max), &d->max);
		warn(t, SLAB_TOPO_WARNING, "link_downgraded",
		     "%s %s: link runs at %s, below its maximum %s%s",
		     slab_pci_kind_name(d->kind), sb_str(&b), cur, max,
		     d->kind == SLAB_PCI_GPU ? "; GPUs slow their links when idle: check again "
					       "under load" : "; check the slot, riser and BIOS settings");
		sb_free(t, &b);
	}

	if (strcmp(ti->thp_enabled, "never") == 0)
		warn(t, SLAB_TOPO_WARNING, "thp_never",
		     "transparent huge pages are off (never): datasets mapped and buffers "
		     "allocated get 4 KiB pages only, and TLB misses cost more");

	/* Explicit huge pages: none anywhere, or only on some nodes with CPUs. */
	{
		int any = 0, known = 0, cpu_nodes = 0, cpu_nodes_with = 0;
		struct sbuf with, without;

		memset(&with, 0, sizeof(with));
		memset(&without, 0, sizeof(without));
		for (unsigned k = 0; k < ti->nnodes; k++) {
			const struct slab_topo_node *nd = &ti->nodes[k];
			int has = nd->huge_2m_total > 0 || nd->huge_1g_total > 0;

			any |= has;
			if (nd->huge_2m_total < 0 && nd->huge_1g_total < 0)
				continue;       /* unknown: neither with nor without */
			known = 1;
			if (!node_has_cpus(nd))
				continue;
			cpu_nodes++;
			cpu_nodes_with += has;
			if (has)
				sb_add(&with, "%s%d", with.len ? ", " : "", nd->id);
			else
				sb_add(&without, "%s%d", without.len ? ", " : "", nd->id);
		}
		if (!any && known)
			warn(t, SLAB_TOPO_NOTE, "no_hugepages",
			     "no huge pages reserved on any node (2 MiB or 1 GiB): hugetlbfs and "
			     "MAP_HUGETLB get none; transparent huge pages do not need them");
		else if (cpu_nodes_with && cpu_nodes_with < cpu_nodes)
			warn(t, SLAB_TOPO_NOTE, "hugepages_uneven",
			     "huge pages are reserved on node%s %s only: a loader bound to node%s %s "
			     "gets none there", cpu_nodes_with > 1 ? "s" : "", sb_str(&with),
			     cpu_nodes - cpu_nodes_with > 1 ? "s" : "", sb_str(&without));
		sb_free(t, &with);
		sb_free(t, &without);
	}

	/* Memory without CPUs: CXL expanders, HBM or persistent memory as a node. */
	{
		int n = 0, dmin = INT_MAX, dmax = -1;

		memset(&b, 0, sizeof(b));
		for (unsigned k = 0; k < ti->nnodes; k++) {
			const struct slab_topo_node *nd = &ti->nodes[k];

			if (node_has_cpus(nd) || nd->mem_total <= 0)
				continue;
			n++;
			sb_add(&b, "%s%d", b.len ? ", " : "", nd->id);
			for (unsigned j = 0; j < ti->nnodes; j++) {
				int d = distance(ti, k, j);

				if (!node_has_cpus(&ti->nodes[j]) || d < 0)
					continue;
				if (d < dmin)
					dmin = d;
				if (d > dmax)
					dmax = d;
			}
		}
		if (n && dmax >= 0)
			warn(t, SLAB_TOPO_NOTE, "memory_only_nodes",
			     "node%s %s ha%s memory but no CPUs (CXL or other far memory, distance "
			     "%d-%d from the CPU nodes): --membind to a CPU node keeps a loader's "
			     "buffers off them", n > 1 ? "s" : "", sb_str(&b), n > 1 ? "ve" : "s",
			     dmin, dmax);
		else if (n)
			warn(t, SLAB_TOPO_NOTE, "memory_only_nodes",
			     "node%s %s ha%s memory but no CPUs (CXL or other far memory): --membind "
			     "to a CPU node keeps a loader's buffers off them", n > 1 ? "s" : "",
			     sb_str(&b), n > 1 ? "ve" : "s");
		sb_free(t, &b);
	}
}

/* ---- the context -------------------------------------------------------------------------- */

struct slab_topo *slab_topo_new(void)
{
	struct slab_topo *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->fs = slab_sysfs_new();
	if (t->fs == NULL) {
		free(t);
		return NULL;
	}
	slab_sysfs_set_invalid(t->fs, on_invalid, t);
	return t;
}

void slab_topo_set_missing(struct slab_topo *t, void (*fn)(const char *, int, void *), void *arg)
{
	slab_sysfs_set_missing(t->fs, fn, arg);
}

int slab_topo_read(struct slab_topo *t, const char *root)
{
	struct slab_topo_info *ti = &t->info;

	if (t->done) {
		snprintf(t->err, sizeof(t->err), "'%s': context already used", root);
		return SLAB_ERR_INVAL;
	}
	t->done = 1;
	if (slab_sysfs_open(t->fs, root) < 0) {
		snprintf(t->err, sizeof(t->err), "%s", slab_sysfs_error(t->fs));
		return SLAB_ERR_IO;
	}
	read_online(t);
	read_model(t);
	read_cpus(t);
	read_nodes(t);
	slab_sysfs_thp(t->fs, "enabled", ti->thp_enabled, sizeof(ti->thp_enabled));
	slab_sysfs_thp(t->fs, "defrag", ti->thp_defrag, sizeof(ti->thp_defrag));
	read_pci(t);
	advise(t);
	warnings(t);
	if (t->nomem) {
		snprintf(t->err, sizeof(t->err), "'%s': out of memory", root);
		return SLAB_ERR_NOMEM;
	}
	return 0;
}

const struct slab_topo_info *slab_topo_info(const struct slab_topo *t)
{
	return &t->info;
}

const char *slab_topo_error(const struct slab_topo *t)
{
	return t->err;
}

void slab_topo_close(struct slab_topo *t)
{
	struct slab_topo_info *ti;

	if (t == NULL)
		return;
	ti = &t->info;
	for (unsigned i = 0; ti->nodes != NULL && i < ti->nnodes; i++) {
		free(ti->nodes[i].cpulist);
		slab_idlist_free(&ti->nodes[i].cpus);
		free(ti->nodes[i].distance);
	}
	free(ti->nodes);
	free(ti->model);
	slab_idlist_free(&ti->online);
	free(ti->online_list);
	free(ti->caches);
	for (unsigned i = 0; ti->pci != NULL && i < ti->npci; i++) {
		free(ti->pci[i].driver);
		free(ti->pci[i].local_cpus);
		slab_sysfs_free_names(ti->pci[i].names);
	}
	free(ti->pci);
	for (unsigned i = 0; ti->advice != NULL && i < ti->nadvice; i++) {
		slab_sysfs_free_names(ti->advice[i].nvme);
		slab_sysfs_free_names(ti->advice[i].network);
	}
	free(ti->advice);
	for (unsigned i = 0; i < ti->nwarnings; i++)
		free(ti->warnings[i].message);
	free(ti->warnings);
	slab_sysfs_free_names(t->invalid);
	slab_sysfs_close(t->fs);
	free(t);
}
