/* test_memlat.c: bench-tlb's verdict (slab_memlat_analyse) on synthetic latency curves:
 * flat, a step at the TLB reach, huge pages without that step, noise, too few points; the
 * memory cgroup's limit (slab_memlat_cgroup) and the number readers of sysfs.c
 * (slab_sysfs_i64, slab_sysfs_hex) and what they say to the invalid-file function, on
 * hand-made trees. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memlat.h"
#include "slab.h"
#include "sysfs.h"
#include "unit.h"

#define NB SLAB_MEMLAT_NBACKINGS
#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)

/* L1d 32 KiB, L2 1 MiB, L3 32 MiB, sorted by size as slab_memlat_caches gives them. */
static const struct slab_sysfs_cache caches[] = {
	{ 1, "Data", 32 * KiB },
	{ 2, "Unified", 1 * MiB },
	{ 3, "Unified", 32 * MiB },
};

/* The cache hierarchy above as huge pages see it: a level per cache, then memory. */
static double levels(uint64_t size)
{
	if (size <= 32 * KiB)
		return 1.0;
	if (size <= 1 * MiB)
		return 4.0;
	if (size <= 32 * MiB)
		return 12.0;
	return 80.0;
}

/* 4 KiB pages: past the TLB reach (here 6 MiB, between two grid points) every load also
 * walks the page table: 1.5 times slower. */
static double small_pages(uint64_t size)
{
	return levels(size) * (size > 6 * MiB ? 1.5 : 1.0);
}

struct curves {
	uint64_t *sizes;
	size_t n;
	double *m[NB];
};

static void curves_free(struct curves *c)
{
	free(c->sizes);
	for (int b = 0; b < NB; b++)
		free(c->m[b]);
}

/* Sizes 4 KiB to max, two per octave, as bench-tlb makes them; no curve yet. */
static int curves_init(struct curves *c, uint64_t max)
{
	memset(c, 0, sizeof(*c));
	return slab_memlat_sizes(max, 2, SLAB_MEMLAT_LINE, &c->sizes, &c->n);
}

static double *curve(const struct curves *c, double (*f)(uint64_t), double noise)
{
	double *m = malloc(c->n * sizeof(*m));

	/* A fixed zig-zag: +noise, -noise, ... (and the other way round for odd sizes' twin
	 * curve, which callers get by passing -noise). */
	for (size_t i = 0; m != NULL && i < c->n; i++)
		m[i] = f(c->sizes[i]) * (1 + (i % 2 ? -noise : noise));
	return m;
}

static long index_of(const struct curves *c, uint64_t size)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->sizes[i] == size)
			return (long)i;
	return -2;
}

static int analyse(const struct curves *c, const double frac[NB], struct slab_memlat_verdict *v)
{
	const double *med[NB] = { c->m[0], c->m[1], c->m[2] };

	return slab_memlat_analyse(c->sizes, c->n, med, frac, caches, 3, 50, v);
}

static double flat(uint64_t size)
{
	(void)size;
	return 2.0;
}

/* One level, 4k and thp alike: no plateau but one, no TLB reach, no speed-up. */
static void test_flat(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	const double frac[NB] = { 0, 1, -1 };

	CHECK(curves_init(&c, 256 * MiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, flat, 0);
	c.m[SLAB_MEMLAT_THP] = curve(&c, flat, 0);
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.ref == SLAB_MEMLAT_THP);
	CHECK(v.huge == SLAB_MEMLAT_THP);
	CHECK(v.nplateaus == 1);
	CHECK(v.plateaus[0].first == 0 && v.plateaus[0].last == c.n - 1);
	CHECK(v.plateaus[0].value == 2.0);
	/* Its geometric middle, 1 MiB, is within L2. */
	CHECK(v.plateaus[0].cache == 1);
	CHECK(v.reach == -1);
	CHECK(isnan(v.reach_ratio));
	CHECK(v.largest[SLAB_MEMLAT_THP] == (long)c.n - 1);
	CHECK(v.speedup[SLAB_MEMLAT_THP] == 1.0);
	CHECK(v.largest[SLAB_MEMLAT_HUGETLB] == -1);
	curves_free(&c);
}

/* hugetlb without the TLB step, 4k with it: four levels labelled L1d, L2, L3, memory from
 * the hugetlb curve, and the reach at the first size past 6 MiB. */
static void test_step(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	const double frac[NB] = { 0, -1, 1 };

	CHECK(curves_init(&c, 256 * MiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, small_pages, 0);
	c.m[SLAB_MEMLAT_HUGETLB] = curve(&c, levels, 0);
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.ref == SLAB_MEMLAT_HUGETLB);
	CHECK(v.huge == SLAB_MEMLAT_HUGETLB);
	CHECK(v.nplateaus == 4);
	if (v.nplateaus == 4) {
		CHECK(c.sizes[v.plateaus[0].first] == 4 * KiB);
		CHECK(c.sizes[v.plateaus[0].last] == 32 * KiB);
		CHECK(v.plateaus[0].value == 1.0 && v.plateaus[0].cache == 0);
		CHECK(c.sizes[v.plateaus[1].last] == 1 * MiB);
		CHECK(v.plateaus[1].value == 4.0 && v.plateaus[1].cache == 1);
		CHECK(c.sizes[v.plateaus[2].last] == 32 * MiB);
		CHECK(v.plateaus[2].value == 12.0 && v.plateaus[2].cache == 2);
		CHECK(c.sizes[v.plateaus[3].last] == 256 * MiB);
		CHECK(v.plateaus[3].value == 80.0 && v.plateaus[3].cache == -1);
	}
	CHECK(v.reach == index_of(&c, 8 * MiB));
	CHECK(v.reach_ratio == 1.5);
	CHECK(v.reach_median == 1.5);
	CHECK(v.largest[SLAB_MEMLAT_HUGETLB] == (long)c.n - 1);
	CHECK(v.speedup[SLAB_MEMLAT_HUGETLB] == 1.5);
	CHECK(v.largest[SLAB_MEMLAT_THP] == -1);
	curves_free(&c);
}

/* Huge pages remove the step: the levels come from the thp curve (only the caches' four,
 * not the 4k curve's fifth at the reach). thp that got few huge pages is no comparison. */
static void test_huge_pages_remove_step(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	double frac[NB] = { 0, 0.95, -1 };

	CHECK(curves_init(&c, 256 * MiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, small_pages, 0);
	c.m[SLAB_MEMLAT_THP] = curve(&c, levels, 0);
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.ref == SLAB_MEMLAT_THP);
	CHECK(v.huge == SLAB_MEMLAT_THP);
	CHECK(v.nplateaus == 4);
	CHECK(v.reach == index_of(&c, 8 * MiB));
	CHECK(v.speedup[SLAB_MEMLAT_THP] == 1.5);

	/* A fifth of thp in huge pages: its curve is no huge-page curve. */
	frac[SLAB_MEMLAT_THP] = 0.2;
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.huge == -1);
	CHECK(v.ref == SLAB_MEMLAT_4K);
	CHECK(v.reach == -1);
	/* The speed-up at the largest size is still stated, whatever thp got. */
	CHECK(v.speedup[SLAB_MEMLAT_THP] == 1.5);
	curves_free(&c);
}

/* +-4% of noise on each curve, in opposite directions, and one wild point on the 4k curve
 * before the reach: the same levels and the same reach. */
static void test_noise(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	const double frac[NB] = { 0, -1, 1 };
	long spike;

	CHECK(curves_init(&c, 256 * MiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, small_pages, 0.04);
	c.m[SLAB_MEMLAT_HUGETLB] = curve(&c, levels, -0.04);
	spike = index_of(&c, 64 * KiB);
	CHECK(spike >= 0);
	if (spike >= 0 && c.m[SLAB_MEMLAT_4K] != NULL)
		c.m[SLAB_MEMLAT_4K][spike] *= 2;
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.nplateaus == 4);
	if (v.nplateaus == 4) {
		CHECK(v.plateaus[0].cache == 0 && v.plateaus[1].cache == 1);
		CHECK(v.plateaus[2].cache == 2 && v.plateaus[3].cache == -1);
		CHECK(v.plateaus[1].lo == 4.0 * 0.96 && v.plateaus[1].hi == 4.0 * 1.04);
	}
	CHECK(v.reach == index_of(&c, 8 * MiB));
	CHECK(v.reach_median > 1.35 && v.reach_median < 1.65);
	curves_free(&c);
}

/* Too few points for a finding: no level spans an octave, one point is no trend. */
static void test_too_few(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	const double frac[NB] = { 0, -1, 1 };

	/* One size. */
	CHECK(curves_init(&c, 4 * KiB) == 0);
	CHECK(c.n == 1);
	c.m[SLAB_MEMLAT_4K] = curve(&c, flat, 0);
	c.m[SLAB_MEMLAT_HUGETLB] = curve(&c, flat, 0);
	if (c.m[SLAB_MEMLAT_4K] != NULL)
		c.m[SLAB_MEMLAT_4K][0] = 4.0;
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.ref == SLAB_MEMLAT_HUGETLB);
	CHECK(v.nplateaus == 0);
	CHECK(v.reach == -1);
	CHECK(v.largest[SLAB_MEMLAT_HUGETLB] == 0 && v.speedup[SLAB_MEMLAT_HUGETLB] == 2.0);
	curves_free(&c);

	/* Slower only at the last of many sizes: not a reach. */
	CHECK(curves_init(&c, 64 * KiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, flat, 0);
	c.m[SLAB_MEMLAT_HUGETLB] = curve(&c, flat, 0);
	if (c.m[SLAB_MEMLAT_4K] != NULL)
		c.m[SLAB_MEMLAT_4K][c.n - 1] = 3.0;
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.reach == -1);
	curves_free(&c);

	/* Nothing measured: no reference curve, no finding. */
	CHECK(curves_init(&c, 64 * KiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, flat, 0);
	for (size_t i = 0; c.m[SLAB_MEMLAT_4K] != NULL && i < c.n; i++)
		c.m[SLAB_MEMLAT_4K][i] = NAN;
	CHECK(analyse(&c, frac, &v) == 0);
	CHECK(v.ref == -1 && v.huge == -1 && v.nplateaus == 0 && v.reach == -1);
	CHECK(v.largest[SLAB_MEMLAT_THP] == -1 && v.largest[SLAB_MEMLAT_HUGETLB] == -1);
	curves_free(&c);

	/* No sizes at all: slab_memlat_sizes refuses a max under 4 KiB. */
	CHECK(curves_init(&c, 4095) == SLAB_ERR_INVAL);
	CHECK(c.sizes == NULL && c.n == 0);
}

/* No caches in sysfs (some VMs): the levels below 50 ns have no label, and are not joined
 * to one another or to memory as if they had one; the two memory plateaus still are. */
static void test_no_caches(void)
{
	struct curves c;
	struct slab_memlat_verdict v;
	const double frac[NB] = { 0, -1, 1 };
	const double *med[NB];

	CHECK(curves_init(&c, 256 * MiB) == 0);
	c.m[SLAB_MEMLAT_4K] = curve(&c, small_pages, 0);
	c.m[SLAB_MEMLAT_HUGETLB] = curve(&c, levels, 0);
	med[0] = c.m[0];
	med[1] = c.m[1];
	med[2] = c.m[2];
	CHECK(slab_memlat_analyse(c.sizes, c.n, med, frac, NULL, 0, 50, &v) == 0);
	CHECK(v.ref == SLAB_MEMLAT_HUGETLB);
	CHECK(v.nplateaus == 4);
	if (v.nplateaus == 4) {
		CHECK(v.plateaus[0].value == 1.0 && v.plateaus[0].lo == 1.0 &&
		      v.plateaus[0].hi == 1.0);
		CHECK(c.sizes[v.plateaus[0].last] == 32 * KiB);
		CHECK(v.plateaus[1].value == 4.0);
		CHECK(v.plateaus[2].value == 12.0);
		CHECK(v.plateaus[3].value == 80.0 && c.sizes[v.plateaus[3].last] == 256 * MiB);
		for (int k = 0; k < 4; k++)
			CHECK(v.plateaus[k].cache == -1);
	}
	CHECK(v.reach == index_of(&c, 8 * MiB));
	curves_free(&c);
}

/* ---- the memory cgroup on hand-made trees ------------------------------------------------- */

static char tree[64];

/* Write text to rel under the tree, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	for (char *p = path + strlen(tree) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			CHECK(!"mkdir");
		*p = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* slab_memlat_cgroup on the tree as it is. */
static int cgroup_of_tree(struct slab_memlat_cgroup *cg)
{
	struct slab_sysfs *fs = slab_sysfs_new();
	int rc = SLAB_ERR_INVAL;

	CHECK(fs != NULL);
	if (fs != NULL && slab_sysfs_open(fs, tree) == 0)
		rc = slab_memlat_cgroup(fs, cg);
	slab_sysfs_close(fs);
	return rc;
}

static void test_cgroup(void)
{
	struct slab_memlat_cgroup cg;
	char cmd[128];

	snprintf(tree, sizeof(tree), "/tmp/test_memlat.XXXXXX");
	CHECK(mkdtemp(tree) != NULL);
	put("sys/devices/system/.keep", "");

	/* No proc/self/cgroup: no limit. */
	CHECK(cgroup_of_tree(&cg) == SLAB_ERR_NOTFOUND && cg.limited == 0);

	/* v2: the limit of an ancestor ("max" below it); the root has no memory.max. */
	put("proc/self/cgroup", "0::/user.slice/app.scope\n");
	put("sys/fs/cgroup/user.slice/app.scope/memory.max", "max\n");
	put("sys/fs/cgroup/user.slice/app.scope/memory.current", "4096\n");
	put("sys/fs/cgroup/user.slice/memory.max", "1073741824\n");
	put("sys/fs/cgroup/user.slice/memory.current", "268435456\n");
	CHECK(cgroup_of_tree(&cg) == 0 && cg.limited == 1);
	CHECK(cg.limit == 1073741824 && cg.usage == 268435456 && cg.room == 805306368);

	/* The tightest room wins, even with the larger limit; usage over the limit: no room. */
	put("sys/fs/cgroup/user.slice/app.scope/memory.max", "536870912\n");
	put("sys/fs/cgroup/user.slice/app.scope/memory.current", "4096\n");
	CHECK(cgroup_of_tree(&cg) == 0 && cg.limit == 536870912 && cg.room == 536866816);
	put("sys/fs/cgroup/user.slice/memory.current", "2147483648\n");
	CHECK(cgroup_of_tree(&cg) == 0 && cg.limit == 1073741824 && cg.room == 0);

	/* "max" all the way up, or garbage: no limit. */
	put("sys/fs/cgroup/user.slice/app.scope/memory.max", "max\n");
	put("sys/fs/cgroup/user.slice/memory.max", "-5\n");
	CHECK(cgroup_of_tree(&cg) == SLAB_ERR_NOTFOUND && cg.limited == 0);

	/* v1, the memory controller with another; a container sees the host's path, but only
	 * its own cgroup mounted: the mount's root is the cgroup. v1's "no limit" is near
	 * 2^63. */
	put("proc/self/cgroup", "5:cpu,memory:/docker/0123abcd\n4:pids:/docker/0123abcd\n0::/\n");
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/memory.usage_in_bytes", "1000\n");
	CHECK(cgroup_of_tree(&cg) == SLAB_ERR_NOTFOUND);
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
	CHECK(cgroup_of_tree(&cg) == 0 && cg.limit == 536870912 && cg.usage == 1000 &&
	      cg.room == 536869912);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	CHECK(system(cmd) == 0);
}

/* ---- sysfs.c's number readers on a hand-made tree ------------------------------------------ */

static int ninvalid;
static char invalid_path[600], invalid_text[128], invalid_why[160];

static void on_invalid(const char *path, const char *text, const char *why, void *arg)
{
	ninvalid++;
	CHECK(arg == tree);
	snprintf(invalid_path, sizeof(invalid_path), "%s", path);
	snprintf(invalid_text, sizeof(invalid_text), "%s", text);
	snprintf(invalid_why, sizeof(invalid_why), "%s", why);
}

static void test_sysfs_numbers(void)
{
	struct slab_sysfs *fs = slab_sysfs_new();
	char cmd[128], want[600];
	int64_t v = 7;
	unsigned h = 7;

	snprintf(tree, sizeof(tree), "/tmp/test_memlat.XXXXXX");
	CHECK(mkdtemp(tree) != NULL);
	put("sys/devices/system/.keep", "");
	put("proc/sys/kernel/perf_event_paranoid", "-1\n");
	put("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "  512 \n");
	put("sys/bus/pci/devices/0000:00:01.0/vendor", "0x10de\n");
	put("n/junk", "12 apples\nmore\n");
	put("n/empty", "\n");
	put("n/hex", "0x12zz\n");
	put("n/long", "0x123456789\n");
	CHECK(fs != NULL && slab_sysfs_open(fs, tree) == 0);
	if (fs == NULL)
		return;
	slab_sysfs_set_invalid(fs, on_invalid, tree);

	/* What the kernel writes: read, nothing said. */
	CHECK(slab_sysfs_i64(fs, "proc/sys/kernel/perf_event_paranoid", &v) == 0 && v == -1);
	CHECK(slab_sysfs_i64(fs, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
			     &v) == 0 && v == 512);
	CHECK(slab_sysfs_hex(fs, "sys/bus/pci/devices/0000:00:01.0/vendor", &h) == 0 &&
	      h == 0x10de);
	/* Missing: an I/O error, not an invalid file. */
	CHECK(slab_sysfs_i64(fs, "n/none", &v) == SLAB_ERR_IO);
	CHECK(slab_sysfs_hex(fs, "n/none", &h) == SLAB_ERR_IO);
	CHECK(ninvalid == 0);

	/* Anything else: said, with the file's path and its line, then SLAB_ERR_CORRUPT. */
	CHECK(slab_sysfs_i64(fs, "n/junk", &v) == SLAB_ERR_CORRUPT && v == 512);
	CHECK(ninvalid == 1);
	snprintf(want, sizeof(want), "%s/n/junk", tree);
	CHECK_STR(invalid_path, want);
	CHECK_STR(invalid_text, "12 apples");
	CHECK_STR(invalid_why, "not a decimal number: ignored; the value is unknown");
	CHECK(slab_sysfs_i64(fs, "n/empty", &v) == SLAB_ERR_CORRUPT && ninvalid == 2);
	CHECK_STR(invalid_text, "");
	CHECK(slab_sysfs_hex(fs, "n/hex", &h) == SLAB_ERR_CORRUPT && h == 0x10de);
	CHECK(ninvalid == 3);
	snprintf(want, sizeof(want), "%s/n/hex", tree);
	CHECK_STR(invalid_path, want);
	CHECK_STR(invalid_text, "0x12zz");
	CHECK_STR(invalid_why, "not a hexadecimal number (at most 8 digits): ignored; the value "
		  "is unknown");
	CHECK(slab_sysfs_hex(fs, "n/long", &h) == SLAB_ERR_CORRUPT && ninvalid == 4);
	CHECK_STR(invalid_text, "0x123456789");

	/* No function: the same failures, said to nobody. */
	slab_sysfs_set_invalid(fs, NULL, NULL);
	CHECK(slab_sysfs_i64(fs, "n/junk", &v) == SLAB_ERR_CORRUPT);
	CHECK(slab_sysfs_hex(fs, "n/hex", &h) == SLAB_ERR_CORRUPT && ninvalid == 4);
	slab_sysfs_close(fs);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_flat();
	test_step();
	test_huge_pages_remove_step();
	test_noise();
	test_too_few();
	test_no_caches();
	test_cgroup();
	test_sysfs_numbers();
	return UNIT_DONE();
}
