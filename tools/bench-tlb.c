/* bench-tlb: what a memory access costs as the working set grows from 4 KiB to --max, on
 * 4 KiB pages, transparent huge pages and hugetlb pages side by side; a table and a verdict
 * (cache plateaus, TLB reach, huge-page speed-up), or CSV, JSON, and an SVG chart. */
#include "cli.h"
#include "json.h"
#include "memlat.h"
#include "perfev.h"
#include "svgchart.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: bench-tlb [OPTIONS]\n";

static const char help_text[] =
"Measure what a memory access costs as the working set grows from 4 KiB to\n"
"--max, on 4 KiB pages, transparent huge pages and hugetlb pages side by side;\n"
"then say where the cache levels are, where 4 KiB pages outgrow the TLB, and\n"
"what huge pages save at the largest size.\n"
"\n"
"Options:\n"
"      --pattern PATTERN    chase (default): dependent loads along a random cycle\n"
"                           through every cache line (latency); page: one line per\n"
"                           4 KiB page in random order (the TLB's own cost); seq:\n"
"                           streaming reads (bandwidth)\n"
"      --backing LIST       a comma-separated subset of 4k,thp,hugetlb (default:\n"
"                           all three)\n"
"      --hugetlb-size SIZE  hugetlb page size: 2M (default) or 1G\n"
"      --max SIZE           largest working set (default 1G; at most a quarter of\n"
"                           MemAvailable)\n"
"      --steps-per-octave N working sets per doubling of the size (default 2)\n"
"      --min-time TIME      each timed repetition runs at least TIME of thread\n"
"                           CPU time (default 50ms; units s, ms, us)\n"
"      --repeat N           timed repetitions per point (default 5): the median,\n"
"                           the minimum and the maximum are reported\n"
"      --cpu N              pin the measuring thread to CPU N\n"
"      --perf               also count dTLB-load-misses and page walks per access\n"
"                           (perf_event_open), where the machine allows it\n"
"      --csv                one CSV row per working set instead of the table\n"
"      --json               the method, the backings, every point and the verdict\n"
"                           as JSON\n"
"      --svg FILE           also draw the curves into FILE, an SVG chart\n"
"  -q, --quiet              no progress or notes on standard error\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"SIZE takes K, M, G suffixes (binary). Exit status: 0 measured, 1 failed (no\n"
"backing could be had, --cpu not usable, the SVG not written), 2 usage error.\n"
"See bench-tlb(1).\n";

enum {
	OPT_BACKING = CHAR_MAX + 1,
	OPT_CPU,
	OPT_CSV,
	OPT_HUGETLB_SIZE,
	OPT_JSON,
	OPT_MAX,
	OPT_MIN_TIME,
	OPT_PATTERN,
	OPT_PERF,
	OPT_REPEAT,
	OPT_STEPS,
	OPT_SVG,
};

static const struct option longopts[] = {
	{ "backing",          required_argument, NULL, OPT_BACKING },
	{ "cpu",              required_argument, NULL, OPT_CPU },
	{ "csv",              no_argument,       NULL, OPT_CSV },
	{ "help",             no_argument,       NULL, 'h' },
	{ "hugetlb-size",     required_argument, NULL, OPT_HUGETLB_SIZE },
	{ "json",             no_argument,       NULL, OPT_JSON },
	{ "max",              required_argument, NULL, OPT_MAX },
	{ "min-time",         required_argument, NULL, OPT_MIN_TIME },
	{ "pattern",          required_argument, NULL, OPT_PATTERN },
	{ "perf",             no_argument,       NULL, OPT_PERF },
	{ "quiet",            no_argument,       NULL, 'q' },
	{ "repeat",           required_argument, NULL, OPT_REPEAT },
	{ "steps-per-octave", required_argument, NULL, OPT_STEPS },
	{ "svg",              required_argument, NULL, OPT_SVG },
	{ "version",          no_argument,       NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

#define DEFAULT_MAX ((uint64_t)1 << 30)
#define MEMORY_NS 50                    /* chase: a level this slow is memory, not a cache */
#define NB MEMLAT_NBACKINGS

static const char *const requests[NB] = { "MADV_NOHUGEPAGE", "MADV_HUGEPAGE", "MAP_HUGETLB" };
static const char *const colors[NB] = { "#d62728", "#1f77b4", "#2ca02c" };

struct opts {
	enum memlat_pattern pattern;
	int selected[NB];
	size_t hugetlb_page;
	uint64_t max;
	int max_given;
	unsigned steps;
	double min_time;
	unsigned repeat;
	long cpu;                       /* -1: not pinned */
	int perf, csv, json;
	const char *svg;
};

/* Everything measured and found out, for whichever output. */
struct run {
	const struct opts *o;
	uint64_t max, mem_available;
	int capped;
	uint64_t *sizes;
	size_t n;
	struct memlat_region reg[NB];
	struct memlat_point *pt[NB];    /* n each; NULL for a backing not selected */
	double *med[NB];                /* medians, NAN where not measured */
	double frac[NB];
	struct memlat_cache caches[8];
	int ncaches;
	char cpu_model[128], thp_enabled[32], thp_defrag[32];
	struct perfev *perf;
	char perf_why[400], walk_why[200];
	const char *walk_name;
	double cpu_share;               /* mean over the points measured; -1: none */
	struct memlat_verdict v;
	char verdict[24][400];
	int nverdict;
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* "50ms", "0.2s", "500us", "1" (seconds): from 1 us to 60 s. */
static int
parse_time(const char *s, double *out)
{
	size_t digits = strspn(s, "0123456789."), dots = 0;
	const char *unit = s + digits;
	char num[32];
	double v, scale;

	for (size_t i = 0; i < digits; i++)
		dots += s[i] == '.';
	if (digits == 0 || digits >= sizeof(num) || dots > 1 || digits == dots)
		return -1;
	if (*unit == '\0' || strcmp(unit, "s") == 0)
		scale = 1;
	else if (strcmp(unit, "ms") == 0)
		scale = 1e-3;
	else if (strcmp(unit, "us") == 0)
		scale = 1e-6;
	else
		return -1;
	memcpy(num, s, digits);
	num[digits] = '\0';
	v = strtod(num, NULL) * scale;
	if (!(v >= 1e-6 * (1 - 1e-9)) || v > 60)
		return -1;
	*out = v;
	return 0;
}

static int
parse_backings(const char *s, int selected[NB])
{
	const char *p = s;

	memset(selected, 0, NB * sizeof(*selected));
	for (;;) {
		size_t len = strcspn(p, ",");
		int found = 0;

		for (int b = 0; b < NB; b++)
			if (len == strlen(memlat_backing_name(b)) &&
			    strncmp(p, memlat_backing_name(b), len) == 0) {
				selected[b] = 1;
				found = 1;
			}
		if (!found) {
			cli_usage_error("unknown backing '%.*s' in --backing (4k, thp, hugetlb)",
					(int)len, p);
			return -1;
		}
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

/* "0-3,8": the CPUs of a set, for a message. */
static const char *
cpu_list(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int e = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
		if (e > c && used < len)
			used += (size_t)snprintf(buf + used, len - used, "-%d", e);
		c = e;
	}
	return buf;
}

static int
pin_cpu(long cpu)
{
	cpu_set_t allowed, set;
	char list[256];

	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		CPU_ZERO(&allowed);
	if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
		cli_error("--cpu %ld: not a CPU this process may run on (allowed: %s)", cpu,
			  cpu_list(&allowed, list, sizeof(list)));
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		cli_error("--cpu %ld: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* "32K", "1M", "1G": axis ticks and compact labels. */
static const char *
short_size(double x, char *buf, size_t len)
{
	static const char *const suffix[] = { "", "K", "M", "G", "T" };
	int u = 0;

	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	if (x == floor(x))
		snprintf(buf, len, "%.0f%s", x, suffix[u]);
	else
		snprintf(buf, len, "%.1f%s", x, suffix[u]);
	return buf;
}

static const char *
cache_name(const struct memlat_cache *c, char *buf, size_t len)
{
	snprintf(buf, len, "L%u%s", c->level, strcmp(c->type, "Data") == 0 ? "d" : "");
	return buf;
}

static double
spread_pct(const struct memlat_point *p)
{
	double d = fmax(p->max - p->median, p->median - p->min);

	return p->median > 0 ? 100 * d / p->median : 0;
}

static double
round3(double v)
{
	return isfinite(v) ? round(v * 1000) / 1000 : v;
}

static const char *
pattern_text(enum memlat_pattern p)
{
	switch (p) {
	case MEMLAT_CHASE:
		return "chase: dependent loads (p = *p) along one random cycle through every "
		       "64-byte line of the working set; ns per load (latency)";
	case MEMLAT_PAGE:
		return "page: dependent loads along one random cycle through the 4 KiB pages of "
		       "the working set, one line in each; ns per load (address translation)";
	case MEMLAT_SEQ:
		return "seq: streaming reads of every 64-bit word of the working set, pass after "
		       "pass; ns per 64-byte line, and GB/s";
	}
	return "";
}

static const char *
unit_text(enum memlat_pattern p)
{
	return p == MEMLAT_SEQ ? "ns per 64-byte line" : "ns per load";
}

/* "4k: 256 MiB with MADV_NOHUGEPAGE: 0% in huge pages (AnonHugePages)" and the like. */
static const char *
backing_text(const struct run *r, int b, char *buf, size_t len)
{
	const struct memlat_region *g = &r->reg[b];
	char a[32];
	int n;

	if (!g->ok) {
		snprintf(buf, len, "missing: %s", g->why);
		return buf;
	}
	cli_human_size(g->len, a, sizeof(a));
	if (b == MEMLAT_HUGETLB) {
		n = snprintf(buf, len, "%s in %s pages with MAP_HUGETLB", a,
			     g->page_size == MEMLAT_THP_SIZE ? "2 MiB" : "1 GiB");
	} else if (r->frac[b] >= 0) {
		n = snprintf(buf, len, "%s with %s: %.0f%% in huge pages (AnonHugePages)", a,
			     requests[b], 100 * r->frac[b]);
		if (g->huge_bytes_start != g->huge_bytes && n > 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, ", %.0f%% before the run",
				      100.0 * (double)g->huge_bytes_start / (double)g->len);
	} else {
		n = snprintf(buf, len, "%s with %s (huge pages unknown: no /proc/self/smaps)", a,
			     requests[b]);
	}
	if (b == MEMLAT_THP && r->thp_enabled[0] && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; THP enabled=%s, defrag=%s",
			      r->thp_enabled, r->thp_defrag);
	if (g->note[0] && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; %s", g->note);
	return buf;
}

/* ---- the verdict, in words ---------------------------------------------------------------- */

static void add_line(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_line(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nverdict >= (int)(sizeof(r->verdict) / sizeof(r->verdict[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->verdict[r->nverdict++], sizeof(r->verdict[0]), fmt, ap);
	va_end(ap);
}

static void
verdict_text(struct run *r)
{
	const struct memlat_verdict *v = &r->v;
	const char *k4 = memlat_backing_name(MEMLAT_4K);
	char a[32], b[32], c[32], list[160];
	size_t used = 0;

	if (v->ref < 0) {
		add_line(r, "nothing was measured");
		return;
	}
	list[0] = '\0';
	for (int i = 0; i < r->ncaches && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %s",
					 i ? ", " : "", cache_name(&r->caches[i], a, sizeof(a)),
					 cli_human_size(r->caches[i].size, b, sizeof(b)));
	if (r->o->pattern == MEMLAT_PAGE || r->ncaches == 0)
		add_line(r, "levels of the %s curve (within 25%% over an octave or more):",
			 memlat_backing_name(v->ref));
	else
		add_line(r, "levels of the %s curve (within 25%% over an octave or more; "
			 "caches per sysfs: %s):", memlat_backing_name(v->ref), list);
	if (v->nplateaus == 0)
		add_line(r, "  none: the curve never stays level for an octave");
	for (size_t i = 0; i < v->nplateaus; i++) {
		const struct memlat_plateau *p = &v->plateaus[i];
		char where[128] = "", a2[32], range[64];

		if (r->o->pattern != MEMLAT_PAGE && r->ncaches > 0) {
			if (p->cache >= 0)
				snprintf(where, sizeof(where), ": within %s (%s)",
					 cache_name(&r->caches[p->cache], c, sizeof(c)),
					 cli_human_size(r->caches[p->cache].size, a2, sizeof(a2)));
			else if (r->o->pattern == MEMLAT_CHASE && p->value >= MEMORY_NS)
				snprintf(where, sizeof(where), ": memory (%d ns or more)", MEMORY_NS);
			else
				snprintf(where, sizeof(where), ": memory (beyond %s)",
					 cache_name(&r->caches[r->ncaches - 1], c, sizeof(c)));
		}
		if (p->hi > 1.1 * p->lo)
			snprintf(range, sizeof(range), " (%.2f to %.2f)", p->lo, p->hi);
		else
			range[0] = '\0';
		add_line(r, "  %.2f %s%s from %s to %s%s", p->value, unit_text(r->o->pattern), range,
			 cli_human_size(r->sizes[p->first], a, sizeof(a)),
			 cli_human_size(r->sizes[p->last], b, sizeof(b)), where);
	}

	if (r->pt[MEMLAT_4K] == NULL || !r->reg[MEMLAT_4K].ok) {
		add_line(r, "TLB reach: not judged without the 4k backing");
	} else if (v->huge < 0) {
		if (r->pt[MEMLAT_THP] != NULL && r->reg[MEMLAT_THP].ok)
			add_line(r, "TLB reach: not judged: thp got only %.0f%% huge pages and "
				 "hugetlb was not measured", 100 * fmax(r->frac[MEMLAT_THP], 0));
		else
			add_line(r, "TLB reach: not judged without a huge-page backing");
	} else if (v->reach < 0) {
		add_line(r, "TLB reach: not found up to %s: the 4k curve does not stay over 10%% "
			 "above the %s curve (the reach is larger, or caches hide the misses%s)",
			 cli_human_size(r->sizes[r->n - 1], a, sizeof(a)),
			 memlat_backing_name(v->huge),
			 r->o->pattern == MEMLAT_PAGE ? "" : "; --pattern page shows them best");
	} else if (v->reach == 0) {
		add_line(r, "TLB reach: the 4k curve is slower than the %s curve from the smallest "
			 "set on, %.2fx in the median", memlat_backing_name(v->huge), v->reach_median);
	} else {
		add_line(r, "TLB reach: the 4k curve leaves the %s curve between %s and %s, "
			 "and stays %.2fx slower in the median from there on",
			 memlat_backing_name(v->huge),
			 cli_human_size(r->sizes[v->reach - 1], a, sizeof(a)),
			 cli_human_size(r->sizes[v->reach], b, sizeof(b)), v->reach_median);
	}

	for (int h = MEMLAT_THP; h < NB; h++) {
		long i = v->largest[h];
		double s = v->speedup[h];
		char effect[64];

		if (i < 0)
			continue;
		if (s >= 1.05)
			snprintf(effect, sizeof(effect), "saves %.0f%% of the time per access",
				 100 * (1 - 1 / s));
		else if (s <= 0.95)
			snprintf(effect, sizeof(effect), "costs %.0f%% more time per access",
				 100 * (1 / s - 1));
		else
			snprintf(effect, sizeof(effect), "changes little: within 5%%");
		add_line(r, "at %s%s: %s/%s = %.2f (%s %.2f ns, %s %.2f ns): %s %s",
			 cli_human_size(r->sizes[i], a, sizeof(a)),
			 (size_t)i == r->n - 1 ? " (the largest size)" : " (the largest on both)",
			 k4, memlat_backing_name(h), s, k4, r->med[MEMLAT_4K][i],
			 memlat_backing_name(h), r->med[h][i], memlat_backing_name(h), effect);
	}
	if (r->pt[MEMLAT_THP] != NULL && r->reg[MEMLAT_THP].ok && r->frac[MEMLAT_THP] >= 0 &&
	    r->frac[MEMLAT_THP] < 0.9)
		add_line(r, "note: thp got %.0f%% of its memory in huge pages, so its curve mixes "
			 "page sizes (THP enabled=%s, defrag=%s)", 100 * r->frac[MEMLAT_THP],
			 r->thp_enabled[0] ? r->thp_enabled : "?",
			 r->thp_defrag[0] ? r->thp_defrag : "?");
}

/* ---- outputs ------------------------------------------------------------------------------ */

static void
print_table(const struct run *r)
{
	const struct opts *o = r->o;
	int perf = r->perf != NULL, seq = o->pattern == MEMLAT_SEQ;
	char a[64], b[400];

	printf("method:   %s\n", pattern_text(o->pattern));
	printf("timing:   warm-up discarded, then %u repetition%s of at least %g ms each, "
	       "in thread CPU time; median, and +/-%% = farthest repetition from it\n",
	       o->repeat, o->repeat == 1 ? "" : "s", o->min_time * 1e3);
	printf("sizes:    %s to %s, %u per octave", cli_human_size(r->sizes[0], a, sizeof(a)),
	       cli_human_size(r->sizes[r->n - 1], b, sizeof(b)), o->steps);
	if (r->capped)
		printf(" (--max capped at a quarter of MemAvailable, %s)",
		       cli_human_size(r->mem_available, a, sizeof(a)));
	putchar('\n');
	if (o->cpu >= 0)
		printf("cpu:      %ld (pinned)", o->cpu);
	else
		printf("cpu:      not pinned (--cpu N pins)");
	if (r->cpu_model[0])
		printf(", %s", r->cpu_model);
	if (r->cpu_share >= 0)
		printf("; the thread ran %.0f%% of the wall-clock time%s", 100 * r->cpu_share,
		       r->cpu_share < 0.95 ? " (the CPU is shared: expect noise)" : "");
	putchar('\n');
	for (int k = 0; k < NB; k++) {
		if (r->pt[k] == NULL)
			continue;
		snprintf(a, sizeof(a), "%s:", memlat_backing_name(k));
		printf("%-9s %s\n", a, backing_text(r, k, b, sizeof(b)));
	}
	if (o->perf) {
		if (r->perf == NULL)
			printf("perf:     not available (%s)\n", r->perf_why);
		else if (r->walk_name != NULL)
			printf("perf:     dTLB-load-misses and %s, per access\n", r->walk_name);
		else
			printf("perf:     dTLB-load-misses per access; page walks not available (%s)\n",
			       r->walk_why);
	}
	putchar('\n');

	printf("%10s", "size");
	for (int k = 0; k < NB; k++) {
		if (r->pt[k] == NULL)
			continue;
		snprintf(a, sizeof(a), "%s ns", memlat_backing_name(k));
		printf(" %11s %5s", a, "+/-%");
		if (seq)
			printf(" %6s", "GB/s");
		if (perf)
			printf(" %8s %8s", "dTLB/acc", "walk/acc");
	}
	for (int k = MEMLAT_THP; k < NB; k++)
		if (r->pt[k] != NULL && r->pt[MEMLAT_4K] != NULL) {
			snprintf(a, sizeof(a), "4k/%s", memlat_backing_name(k));
			printf(" %10s", a);
		}
	putchar('\n');
	for (size_t i = 0; i < r->n; i++) {
		printf("%10s", cli_human_size(r->sizes[i], a, sizeof(a)));
		for (int k = 0; k < NB; k++) {
			const struct memlat_point *p;

			if (r->pt[k] == NULL)
				continue;
			p = &r->pt[k][i];
			if (!p->measured) {
				printf(" %11s %5s", r->reg[k].ok ? "-" : "missing", "-");
				if (seq)
					printf(" %6s", "-");
				if (perf)
					printf(" %8s %8s", "-", "-");
				continue;
			}
			printf(" %11.2f %5.1f", p->median, spread_pct(p));
			if (seq)
				printf(" %6.1f", p->gbps);
			if (perf) {
				if (isfinite(p->dtlb_per_access))
					printf(" %8.3f", p->dtlb_per_access);
				else
					printf(" %8s", "-");
				if (isfinite(p->walks_per_access))
					printf(" %8.3f", p->walks_per_access);
				else
					printf(" %8s", "-");
			}
		}
		for (int k = MEMLAT_THP; k < NB; k++) {
			double s;

			if (r->pt[k] == NULL || r->pt[MEMLAT_4K] == NULL)
				continue;
			s = r->med[MEMLAT_4K][i] / r->med[k][i];
			if (isfinite(s))
				printf(" %10.2f", s);
			else
				printf(" %10s", "-");
		}
		putchar('\n');
	}
	printf("\nverdict:\n");
	for (int i = 0; i < r->nverdict; i++)
		printf("  %s\n", r->verdict[i]);
}

/* ",value" with DIGITS decimals, or "," alone when there is none. */
static void
csv_value(double v, int digits)
{
	putchar(',');
	if (isfinite(v))
		printf("%.*f", digits, v);
}

static void
print_csv(const struct run *r)
{
	int perf = r->o->perf, seq = r->o->pattern == MEMLAT_SEQ;

	printf("size");
	for (int k = 0; k < NB; k++) {
		const char *n = memlat_backing_name(k);

		if (r->pt[k] == NULL)
			continue;
		printf(",%s_ns,%s_min,%s_max", n, n, n);
		if (seq)
			printf(",%s_gbps", n);
		if (perf)
			printf(",%s_dtlb_per_access,%s_walks_per_access", n, n);
	}
	for (int k = MEMLAT_THP; k < NB; k++)
		if (r->pt[k] != NULL && r->pt[MEMLAT_4K] != NULL)
			printf(",speedup_%s", memlat_backing_name(k));
	putchar('\n');
	for (size_t i = 0; i < r->n; i++) {
		printf("%llu", (unsigned long long)r->sizes[i]);
		for (int k = 0; k < NB; k++) {
			const struct memlat_point *p;

			if (r->pt[k] == NULL)
				continue;
			p = &r->pt[k][i];
			csv_value(p->measured ? p->median : NAN, 3);
			csv_value(p->measured ? p->min : NAN, 3);
			csv_value(p->measured ? p->max : NAN, 3);
			if (seq)
				csv_value(p->measured ? p->gbps : NAN, 3);
			if (perf) {
				csv_value(p->measured ? p->dtlb_per_access : NAN, 4);
				csv_value(p->measured ? p->walks_per_access : NAN, 4);
			}
		}
		for (int k = MEMLAT_THP; k < NB; k++)
			if (r->pt[k] != NULL && r->pt[MEMLAT_4K] != NULL)
				csv_value(r->med[MEMLAT_4K][i] / r->med[k][i], 3);
		putchar('\n');
	}
}

static void
print_json(const struct run *r)
{
	const struct opts *o = r->o;
	const struct memlat_verdict *v = &r->v;
	struct json j;
	char a[32], buf[400];

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "tool", "bench-tlb");
	json_string(&j, "version", SLAB_VERSION_STRING);

	json_object_begin(&j, "method");
	json_string(&j, "pattern", memlat_pattern_name(o->pattern));
	json_string(&j, "description", pattern_text(o->pattern));
	json_string(&j, "unit", unit_text(o->pattern));
	json_u64(&j, "line_size", MEMLAT_LINE);
	json_string(&j, "clock", "CLOCK_THREAD_CPUTIME_ID");
	json_string(&j, "warm_up", "one traversal of the working set (at most 2 x min_time), "
		    "discarded");
	json_double(&j, "min_time_s", o->min_time);
	json_u64(&j, "repeat", o->repeat);
	json_string(&j, "statistic", "median, min and max over the repetitions");
	json_u64(&j, "steps_per_octave", o->steps);
	json_u64(&j, "min_size", r->sizes[0]);
	json_u64(&j, "max_size", r->sizes[r->n - 1]);
	json_u64(&j, "max_requested", o->max);
	json_bool(&j, "max_capped", r->capped);
	if (r->mem_available)
		json_u64(&j, "mem_available", r->mem_available);
	else
		json_null(&j, "mem_available");
	if (o->cpu >= 0)
		json_i64(&j, "cpu", o->cpu);
	else
		json_null(&j, "cpu");
	json_double(&j, "cpu_share", r->cpu_share >= 0 ? round3(r->cpu_share) : NAN);
	json_object_end(&j);

	json_object_begin(&j, "system");
	json_string(&j, "cpu_model", r->cpu_model);
	json_string(&j, "thp_enabled", r->thp_enabled);
	json_string(&j, "thp_defrag", r->thp_defrag);
	json_array_begin(&j, "caches");
	for (int i = 0; i < r->ncaches; i++) {
		json_object_begin(&j, NULL);
		json_string(&j, "name", cache_name(&r->caches[i], a, sizeof(a)));
		json_u64(&j, "level", r->caches[i].level);
		json_string(&j, "type", r->caches[i].type);
		json_u64(&j, "size", r->caches[i].size);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);

	json_array_begin(&j, "backings");
	for (int k = 0; k < NB; k++) {
		const struct memlat_region *g = &r->reg[k];

		json_object_begin(&j, NULL);
		json_string(&j, "name", memlat_backing_name(k));
		json_string(&j, "request", requests[k]);
		if (r->pt[k] == NULL) {
			json_string(&j, "status", "not selected");
		} else if (!g->ok) {
			json_string(&j, "status", "missing");
			json_string(&j, "reason", g->why);
		} else {
			json_string(&j, "status", "ok");
			json_u64(&j, "bytes", g->len);
			json_u64(&j, "page_size", g->page_size);
			if (g->huge_known) {
				json_u64(&j, "huge_bytes", g->huge_bytes);
				json_double(&j, "huge_fraction", round3(r->frac[k]));
				json_double(&j, "huge_fraction_start",
					    round3((double)g->huge_bytes_start / (double)g->len));
			} else {
				json_null(&j, "huge_bytes");
				json_null(&j, "huge_fraction");
				json_null(&j, "huge_fraction_start");
			}
			json_string(&j, "note", g->note[0] ? g->note : NULL);
		}
		if (k == MEMLAT_HUGETLB && r->pt[k] != NULL && !g->ok)
			json_u64(&j, "page_size", g->page_size);
		json_object_end(&j);
	}
	json_array_end(&j);

	json_object_begin(&j, "perf");
	json_bool(&j, "requested", o->perf);
	if (o->perf) {
		json_bool(&j, "available", r->perf != NULL);
		json_string(&j, "reason", r->perf == NULL ? r->perf_why : NULL);
		json_string(&j, "dtlb_event", r->perf != NULL ? "dTLB-load-misses" : NULL);
		json_string(&j, "walk_event", r->walk_name);
		json_string(&j, "walk_reason", r->perf != NULL && r->walk_name == NULL ?
			    r->walk_why : NULL);
	}
	json_object_end(&j);

	json_array_begin(&j, "points");
	for (size_t i = 0; i < r->n; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "size", r->sizes[i]);
		for (int k = 0; k < NB; k++) {
			const struct memlat_point *p = r->pt[k] != NULL ? &r->pt[k][i] : NULL;

			if (p == NULL || !p->measured) {
				json_null(&j, memlat_backing_name(k));
				continue;
			}
			json_object_begin(&j, memlat_backing_name(k));
			json_double(&j, "median", round3(p->median));
			json_double(&j, "min", round3(p->min));
			json_double(&j, "max", round3(p->max));
			json_u64(&j, "accesses", p->accesses);
			if (o->pattern == MEMLAT_SEQ)
				json_double(&j, "gbps", round3(p->gbps));
			if (o->perf) {
				json_double(&j, "dtlb_misses_per_access",
					    isfinite(p->dtlb_per_access) ?
					    round(p->dtlb_per_access * 1e4) / 1e4 : NAN);
				json_double(&j, "walks_per_access",
					    isfinite(p->walks_per_access) ?
					    round(p->walks_per_access * 1e4) / 1e4 : NAN);
			}
			json_object_end(&j);
		}
		json_object_begin(&j, "speedup");
		for (int k = MEMLAT_THP; k < NB; k++)
			json_double(&j, memlat_backing_name(k), r->pt[MEMLAT_4K] != NULL &&
				    r->pt[k] != NULL ?
				    round3(r->med[MEMLAT_4K][i] / r->med[k][i]) : NAN);
		json_object_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);

	json_object_begin(&j, "verdict");
	json_string(&j, "reference", v->ref >= 0 ? memlat_backing_name(v->ref) : NULL);
	json_array_begin(&j, "plateaus");
	for (size_t i = 0; i < v->nplateaus; i++) {
		const struct memlat_plateau *p = &v->plateaus[i];

		json_object_begin(&j, NULL);
		json_u64(&j, "from", r->sizes[p->first]);
		json_u64(&j, "to", r->sizes[p->last]);
		json_double(&j, "ns", round3(p->value));
		json_double(&j, "ns_min", round3(p->lo));
		json_double(&j, "ns_max", round3(p->hi));
		if (o->pattern != MEMLAT_PAGE && p->cache >= 0) {
			json_string(&j, "level", cache_name(&r->caches[p->cache], a, sizeof(a)));
			json_u64(&j, "cache_size", r->caches[p->cache].size);
		} else if (o->pattern != MEMLAT_PAGE && r->ncaches > 0) {
			json_string(&j, "level", "memory");
			json_null(&j, "cache_size");
		} else {
			json_null(&j, "level");
			json_null(&j, "cache_size");
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	if (v->reach >= 0) {
		json_object_begin(&j, "tlb_reach");
		json_string(&j, "compared_with", memlat_backing_name(v->huge));
		json_u64(&j, "size", r->sizes[v->reach]);
		if (v->reach > 0)
			json_u64(&j, "previous_size", r->sizes[v->reach - 1]);
		else
			json_null(&j, "previous_size");
		json_double(&j, "ratio", round3(v->reach_ratio));
		json_double(&j, "median_ratio_after", round3(v->reach_median));
		json_object_end(&j);
	} else {
		json_null(&j, "tlb_reach");
	}
	json_object_begin(&j, "speedup_at_largest");
	for (int k = MEMLAT_THP; k < NB; k++) {
		if (v->largest[k] < 0) {
			json_null(&j, memlat_backing_name(k));
			continue;
		}
		json_object_begin(&j, memlat_backing_name(k));
		json_u64(&j, "size", r->sizes[v->largest[k]]);
		json_double(&j, "speedup", round3(v->speedup[k]));
		json_object_end(&j);
	}
	json_object_end(&j);
	json_array_begin(&j, "text");
	for (int i = 0; i < r->nverdict; i++) {
		snprintf(buf, sizeof(buf), "%s", r->verdict[i]);
		json_string(&j, NULL, buf);
	}
	json_array_end(&j);
	json_object_end(&j);

	json_object_end(&j);
	json_finish(&j);
}

/* ---- the SVG file: appears only when complete (cli_output) -------------------------------- */

static struct cli_output svg_out = { .fd = -1 };

static FILE *
svg_open(const char *path)
{
	FILE *f;

	if (cli_output_open(&svg_out, path) != 0)
		return NULL;
	f = fdopen(svg_out.fd, "w");
	if (f == NULL) {
		cli_error("'%s': %s", path, strerror(errno));
		cli_output_abort(&svg_out);
	}
	return f;
}

static void
svg_abandon(FILE *f)
{
	if (f != NULL) {
		fclose(f);
		svg_out.fd = -1;        /* fclose closed it */
	}
	cli_output_abort(&svg_out);
}

static int
svg_write(FILE *f, const char *path, const struct run *r)
{
	struct svg_series series[NB];
	struct svg_marker markers[10];
	const char *notes[32];
	char names[NB][96], labels[10][64], title[160], subtitle[300], ylabel[96], a[32], b[32];
	char pinned[48];
	char lines[8][400];
	double *x = malloc(r->n * sizeof(*x)), *lo[NB] = { NULL }, *hi[NB] = { NULL };
	struct svg_chart c;
	size_t ns = 0, nm = 0, nn = 0, nl = 0;
	int rc = -1;

	if (x == NULL) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->n; i++)
		x[i] = (double)r->sizes[i];
	for (int k = 0; k < NB; k++) {
		if (r->pt[k] == NULL)
			continue;
		lo[k] = malloc(r->n * sizeof(double));
		hi[k] = malloc(r->n * sizeof(double));
		if (lo[k] == NULL || hi[k] == NULL) {
			cli_error("out of memory");
			goto out;
		}
		for (size_t i = 0; i < r->n; i++) {
			lo[k][i] = r->pt[k][i].measured ? r->pt[k][i].min : NAN;
			hi[k][i] = r->pt[k][i].measured ? r->pt[k][i].max : NAN;
		}
		if (!r->reg[k].ok)
			snprintf(names[k], sizeof(names[k]), "%s: missing", memlat_backing_name(k));
		else if (k == MEMLAT_HUGETLB)
			snprintf(names[k], sizeof(names[k]), "hugetlb (%s pages)",
				 r->reg[k].page_size == MEMLAT_THP_SIZE ? "2 MiB" : "1 GiB");
		else if (r->frac[k] >= 0)
			snprintf(names[k], sizeof(names[k]), "%s (%.0f%% huge)", memlat_backing_name(k),
				 100 * r->frac[k]);
		else
			snprintf(names[k], sizeof(names[k]), "%s", memlat_backing_name(k));
		series[ns].name = names[k];
		series[ns].color = colors[k];
		series[ns].n = r->n;
		series[ns].x = x;
		series[ns].y = r->med[k];
		series[ns].lo = lo[k];
		series[ns].hi = hi[k];
		ns++;
	}
	if (r->o->pattern != MEMLAT_PAGE)
		for (int i = 0; i < r->ncaches && nm < 8; i++) {
			snprintf(labels[nm], sizeof(labels[nm]), "%s %s",
				 cache_name(&r->caches[i], a, sizeof(a)),
				 short_size((double)r->caches[i].size, b, sizeof(b)));
			markers[nm].x = (double)r->caches[i].size;
			markers[nm].label = labels[nm];
			markers[nm].color = "#888888";
			nm++;
		}
	if (r->v.reach >= 0) {
		snprintf(labels[nm], sizeof(labels[nm]), "4k leaves %s",
			 memlat_backing_name(r->v.huge));
		markers[nm].x = (double)r->sizes[r->v.reach];
		markers[nm].label = labels[nm];
		markers[nm].color = "#ff7f0e";
		nm++;
	}

	snprintf(title, sizeof(title), "bench-tlb --pattern %s: %s against working set",
		 memlat_pattern_name(r->o->pattern),
		 r->o->pattern == MEMLAT_SEQ ? "read time" : "access latency");
	if (r->o->cpu >= 0)
		snprintf(pinned, sizeof(pinned), "pinned to CPU %ld", r->o->cpu);
	else
		snprintf(pinned, sizeof(pinned), "not pinned");
	snprintf(subtitle, sizeof(subtitle), "%s, %s; median of %u x >= %g ms, bars min to max",
		 r->cpu_model[0] ? r->cpu_model : "CPU unknown", pinned, r->o->repeat,
		 r->o->min_time * 1e3);
	snprintf(ylabel, sizeof(ylabel), "%s (log scale)", unit_text(r->o->pattern));
	snprintf(lines[nl++], sizeof(lines[0]), "%s", pattern_text(r->o->pattern));
	notes[nn++] = lines[0];
	for (int k = 0; k < NB && nl < 8; k++)
		if (r->pt[k] != NULL) {
			char t[340];

			snprintf(lines[nl], sizeof(lines[0]), "%s: %s", memlat_backing_name(k),
				 backing_text(r, k, t, sizeof(t)));
			notes[nn++] = lines[nl++];
		}
	for (int i = 0; i < r->nverdict && nn < 32; i++)
		notes[nn++] = r->verdict[i];

	memset(&c, 0, sizeof(c));
	c.title = title;
	c.subtitle = subtitle;
	c.xlabel = "working set (bytes, log scale)";
	c.ylabel = ylabel;
	c.ylog = 1;
	c.xtick = short_size;
	c.series = series;
	c.nseries = ns;
	c.markers = markers;
	c.nmarkers = nm;
	c.notes = notes;
	c.nnotes = nn;
	if (svg_chart_write(f, &c) != 0 || fflush(f) != 0) {
		cli_error("'%s': write error: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(x);
	for (int k = 0; k < NB; k++) {
		free(lo[k]);
		free(hi[k]);
	}
	return rc;
}

static int
svg_finish(FILE *f, const char *path, const struct run *r)
{
	int fd;

	if (svg_write(f, path, r) != 0) {
		svg_abandon(f);
		return -1;
	}
	if (fflush(f) != 0 || ferror(f) || (fd = dup(fileno(f))) < 0) {
		cli_error("'%s': write error: %s", path, strerror(errno));
		svg_abandon(f);
		return -1;
	}
	fclose(f);
	svg_out.fd = fd;
	return cli_output_commit(&svg_out);
}

/* ---- the run ------------------------------------------------------------------------------ */

static int
measure_all(struct run *r)
{
	struct memlat_params prm;
	size_t done = 0, total = 0;
	int progress = cli_progress_wanted();
	char a[32];

	memset(&prm, 0, sizeof(prm));
	prm.pattern = r->o->pattern;
	prm.min_time = r->o->min_time;
	prm.repeat = r->o->repeat;
	prm.perf = r->perf;
	for (int k = 0; k < NB; k++)
		if (r->pt[k] != NULL && r->reg[k].ok)
			total += r->n;
	/* Size by size, the backings in turn: each comparison is made under the same
	 * conditions (frequency, neighbours' load), not minutes apart. */
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < NB; k++) {
			if (r->pt[k] == NULL || !r->reg[k].ok)
				continue;
			if (progress)
				fprintf(stderr, "\r%s: %zu/%zu: %s at %s\033[K", cli_progname(), ++done,
					total, memlat_backing_name(k),
					cli_human_size(r->sizes[i], a, sizeof(a)));
			if (memlat_measure(&r->reg[k], r->sizes[i], &prm, &r->pt[k][i]) != 0) {
				if (progress)
					fputs("\r\033[K", stderr);
				cli_error("out of memory");
				return -1;
			}
			r->med[k][i] = r->pt[k][i].measured ? r->pt[k][i].median : NAN;
		}
	if (progress)
		fputs("\r\033[K", stderr);
	return 0;
}

/* How much of the wall-clock time the thread had its CPU, over every point measured. */
static double
mean_cpu_share(const struct run *r)
{
	double sum = 0;
	size_t cnt = 0;

	for (int k = 0; k < NB; k++)
		for (size_t i = 0; r->pt[k] != NULL && i < r->n; i++)
			if (r->pt[k][i].measured) {
				sum += r->pt[k][i].cpu_share;
				cnt++;
			}
	return cnt ? sum / (double)cnt : -1;
}

static int
bench(const struct opts *o)
{
	struct run *r = calloc(1, sizeof(*r));
	FILE *svg = NULL;
	int ret = SLAB_EXIT_FAIL, any = 0;
	char a[32], b[400];

	if (r == NULL) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	r->o = o;
	if (o->cpu >= 0 && pin_cpu(o->cpu) != 0)
		goto out;
	if (o->svg != NULL && (svg = svg_open(o->svg)) == NULL)
		goto out;

	/* Two regions of --max at once: a quarter of what is available each leaves room. */
	r->max = o->max;
	r->mem_available = memlat_mem_available();
	if (r->mem_available > 0 && r->max > r->mem_available / 4) {
		r->max = r->mem_available / 4 / MEMLAT_SMALL_PAGE * MEMLAT_SMALL_PAGE;
		r->capped = 1;
		if (o->max_given && cli_verbosity >= 1)
			cli_warn("--max capped at %s, a quarter of MemAvailable",
				 cli_human_size(r->max, a, sizeof(a)));
	}
	if (memlat_sizes(r->max, o->steps, memlat_unit(o->pattern), &r->sizes, &r->n) != 0) {
		if (r->max < MEMLAT_MIN_SIZE)
			cli_error("too little memory available (MemAvailable %s)",
				  cli_human_size(r->mem_available, a, sizeof(a)));
		else
			cli_error("out of memory");
		goto out;
	}
	r->ncaches = memlat_caches(o->cpu >= 0 ? (unsigned)o->cpu : 0, r->caches, 8);
	memlat_cpu_model(r->cpu_model, sizeof(r->cpu_model));
	memlat_thp_setting("enabled", r->thp_enabled, sizeof(r->thp_enabled));
	memlat_thp_setting("defrag", r->thp_defrag, sizeof(r->thp_defrag));
	if (o->perf) {
		r->perf = perfev_open(r->perf_why, sizeof(r->perf_why));
		if (r->perf != NULL)
			r->walk_name = perfev_walk_event(r->perf, r->walk_why, sizeof(r->walk_why));
	}

	for (int k = 0; k < NB; k++) {
		r->frac[k] = -1;
		if (!o->selected[k])
			continue;
		r->pt[k] = calloc(r->n, sizeof(*r->pt[k]));
		r->med[k] = malloc(r->n * sizeof(*r->med[k]));
		if (r->pt[k] == NULL || r->med[k] == NULL) {
			cli_error("out of memory");
			goto out;
		}
		for (size_t i = 0; i < r->n; i++)
			r->med[k][i] = NAN;
		if (cli_progress_wanted())
			fprintf(stderr, "\r%s: mapping %s of %s\033[K", cli_progname(),
				cli_human_size(r->sizes[r->n - 1], a, sizeof(a)),
				memlat_backing_name(k));
		memlat_region_map(&r->reg[k], k, r->sizes[r->n - 1], o->hugetlb_page);
		any |= r->reg[k].ok;
	}
	if (!any) {
		if (cli_progress_wanted())
			fputs("\r\033[K", stderr);
		for (int k = 0; k < NB; k++)
			if (o->selected[k])
				cli_error("%s: %s", memlat_backing_name(k), backing_text(r, k, b, sizeof(b)));
		cli_error("no backing could be measured");
		goto out;
	}
	if (measure_all(r) != 0)
		goto out;
	for (int k = 0; k < NB; k++) {
		memlat_region_check(&r->reg[k]);
		r->frac[k] = memlat_huge_fraction(&r->reg[k]);
	}
	r->cpu_share = mean_cpu_share(r);
	if (memlat_analyse(r->sizes, r->n, (const double *const *)r->med, r->frac,
			   o->pattern == MEMLAT_PAGE ? NULL : r->caches,
			   o->pattern == MEMLAT_PAGE ? 0 : r->ncaches,
			   o->pattern == MEMLAT_CHASE ? MEMORY_NS : 0, &r->v) < 0) {
		cli_error("out of memory");
		goto out;
	}
	verdict_text(r);

	if (o->json)
		print_json(r);
	else if (o->csv)
		print_csv(r);
	else
		print_table(r);
	ret = SLAB_EXIT_OK;
	if (svg != NULL) {
		FILE *f = svg;

		svg = NULL;
		if (svg_finish(f, o->svg, r) != 0)
			ret = SLAB_EXIT_FAIL;
	}
out:
	if (svg != NULL)
		svg_abandon(svg);
	for (int k = 0; k < NB; k++) {
		memlat_region_unmap(&r->reg[k]);
		free(r->pt[k]);
		free(r->med[k]);
	}
	perfev_close(r->perf);
	free(r->sizes);
	free(r);
	return ret;
}

int
main(int argc, char **argv)
{
	struct opts o;
	uint64_t u;
	int c, ret;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	memset(&o, 0, sizeof(o));
	o.pattern = MEMLAT_CHASE;
	for (int k = 0; k < NB; k++)
		o.selected[k] = 1;
	o.hugetlb_page = MEMLAT_THP_SIZE;
	o.max = DEFAULT_MAX;
	o.steps = 2;
	o.min_time = 0.05;
	o.repeat = 5;
	o.cpu = -1;
	while ((c = getopt_long(argc, argv, "hqV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_BACKING:
			if (parse_backings(optarg, o.selected) != 0)
				return SLAB_EXIT_USAGE;
			break;
		case OPT_CPU:
			if (cli_parse_u64(optarg, 0, LONG_MAX, &u) != 0)
				return cli_usage_error("invalid CPU number '%s' for --cpu", optarg);
			o.cpu = (long)u;
			break;
		case OPT_CSV:
			o.csv = 1;
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		case OPT_HUGETLB_SIZE:
			if (cli_parse_size(optarg, &u) != 0 ||
			    (u != MEMLAT_THP_SIZE && u != (uint64_t)1 << 30))
				return cli_usage_error("--hugetlb-size must be 2M or 1G, not '%s'",
						       optarg);
			o.hugetlb_page = (size_t)u;
			break;
		case OPT_JSON:
			o.json = 1;
			break;
		case OPT_MAX:
			if (cli_parse_size(optarg, &o.max) != 0)
				return cli_usage_error("invalid size '%s' for --max", optarg);
			if (o.max < MEMLAT_MIN_SIZE)
				return cli_usage_error("--max must be at least 4K");
			o.max_given = 1;
			break;
		case OPT_MIN_TIME:
			if (parse_time(optarg, &o.min_time) != 0)
				return cli_usage_error("invalid time '%s' for --min-time (such as 50ms, "
						       "0.2s or 500us; at most 60s)", optarg);
			break;
		case OPT_PATTERN:
			if (strcmp(optarg, "chase") == 0)
				o.pattern = MEMLAT_CHASE;
			else if (strcmp(optarg, "page") == 0)
				o.pattern = MEMLAT_PAGE;
			else if (strcmp(optarg, "seq") == 0)
				o.pattern = MEMLAT_SEQ;
			else
				return cli_usage_error("unknown pattern '%s' (chase, page, seq)", optarg);
			break;
		case OPT_PERF:
			o.perf = 1;
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case OPT_REPEAT:
			if (cli_parse_u64(optarg, 1, 1000, &u) != 0)
				return cli_usage_error("--repeat must be a number from 1 to 1000, not '%s'",
						       optarg);
			o.repeat = (unsigned)u;
			break;
		case OPT_STEPS:
			if (cli_parse_u64(optarg, 1, 16, &u) != 0)
				return cli_usage_error("--steps-per-octave must be a number from 1 to 16, "
						       "not '%s'", optarg);
			o.steps = (unsigned)u;
			break;
		case OPT_SVG:
			if (optarg[0] == '\0')
				return cli_usage_error("--svg needs a file name");
			o.svg = optarg;
			break;
		case 'V':
			return cli_version();
		default:
			return cli_try_help();
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (o.csv && o.json)
		return cli_usage_error("--csv and --json exclude each other");

	ret = bench(&o);
	if (cli_close_stdout() < 0)
		ret = SLAB_EXIT_FAIL;
	return ret;
}
