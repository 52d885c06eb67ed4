/* tlbreport.c: bench-tlb's outputs from a finished run: the verdict in words, the table, CSV,
 * JSON and the SVG chart. Prints to standard output (the chart to the FILE given). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "slab.h"
#include "svgchart.h"
#include "tlbreport.h"

#define NB SLAB_MEMLAT_NBACKINGS

static const char *const requests[NB] = { "MADV_NOHUGEPAGE", "MADV_HUGEPAGE", "MAP_HUGETLB" };
static const char *const colors[NB] = { "#d62728", "#1f77b4", "#2ca02c" };

/* "32K", "1M", "1G": axis ticks and compact labels. */
static const char *short_size(double x, char *buf, size_t len)
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

static const char *cache_name(const struct slab_sysfs_cache *c, char *buf, size_t len)
{
	snprintf(buf, len, "L%u%s", c->level, strcmp(c->type, "Data") == 0 ? "d" : "");
	return buf;
}

static double spread_pct(const struct slab_memlat_point *p)
{
	double d = fmax(p->max - p->median, p->median - p->min);

	return p->median > 0 ? 100 * d / p->median : 0;
}

static double round3(double v)
{
	return isfinite(v) ? round(v * 1000) / 1000 : v;
}

static const char *pattern_text(enum slab_memlat_pattern p)
{
	switch (p) {
	case SLAB_MEMLAT_CHASE:
		return "chase: dependent loads (p = *p) along one random cycle through every "
		       "64-byte line of the working set; ns per load (latency)";
	case SLAB_MEMLAT_PAGE:
		return "page: dependent loads along one random cycle through the 4 KiB pages of "
		       "the working set, one line in each; ns per load (address translation)";
	case SLAB_MEMLAT_SEQ:
		return "seq: streaming reads of every 64-bit word of the working set, pass after "
		       "pass; ns per 64-byte line, and GB/s";
	}
	return "";
}

static const char *unit_text(enum slab_memlat_pattern p)
{
	return p == SLAB_MEMLAT_SEQ ? "ns per 64-byte line" : "ns per load";
}

/* "4k: 256 MiB with MADV_NOHUGEPAGE: 0% in huge pages (AnonHugePages)" and the like. */
const char *tlb_backing_text(const struct tlb_run *r, int b, char *buf, size_t len)
{
	const struct slab_memlat_region *g = &r->reg[b];
	char a[32];
	int n;

	if (!g->ok) {
		snprintf(buf, len, "missing: %s", slab_memlat_region_error(g));
		return buf;
	}
	cli_human_size(g->len, a, sizeof(a));
	if (b == SLAB_MEMLAT_HUGETLB) {
		n = snprintf(buf, len, "%s in %s pages with MAP_HUGETLB", a,
			     g->page_size == SLAB_MEMLAT_THP_SIZE ? "2 MiB" : "1 GiB");
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
	if (b == SLAB_MEMLAT_THP && r->thp_enabled[0] && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; THP enabled=%s, defrag=%s",
			      r->thp_enabled, r->thp_defrag);
	if (g->note[0] && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; %s", g->note);
	return buf;
}

/* ---- the verdict, in words ---------------------------------------------------------------- */

static void add_line(struct tlb_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_line(struct tlb_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nverdict >= (int)(sizeof(r->verdict) / sizeof(r->verdict[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->verdict[r->nverdict++], sizeof(r->verdict[0]), fmt, ap);
	va_end(ap);
}

void tlb_verdict_text(struct tlb_run *r)
{
	const struct slab_memlat_verdict *v = &r->v;
	const char *k4 = slab_memlat_backing_name(SLAB_MEMLAT_4K);
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
	if (r->o->pattern == SLAB_MEMLAT_PAGE || r->ncaches == 0)
		add_line(r, "levels of the %s curve (within 25%% over an octave or more):",
			 slab_memlat_backing_name(v->ref));
	else
		add_line(r, "levels of the %s curve (within 25%% over an octave or more; "
			 "caches per sysfs: %s):", slab_memlat_backing_name(v->ref), list);
	if (v->nplateaus == 0)
		add_line(r, "  none: the curve never stays level for an octave");
	for (size_t i = 0; i < v->nplateaus; i++) {
		const struct slab_memlat_plateau *p = &v->plateaus[i];
		char where[128] = "", a2[32], range[64];

		if (r->o->pattern != SLAB_MEMLAT_PAGE && r->ncaches > 0) {
			if (p->cache >= 0)
				snprintf(where, sizeof(where), ": within %s (%s)",
					 cache_name(&r->caches[p->cache], c, sizeof(c)),
					 cli_human_size(r->caches[p->cache].size, a2, sizeof(a2)));
			else if (r->o->pattern == SLAB_MEMLAT_CHASE && p->value >= TLB_MEMORY_NS)
				snprintf(where, sizeof(where), ": memory (%d ns or more)", TLB_MEMORY_NS);
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

	if (r->pt[SLAB_MEMLAT_4K] == NULL || !r->reg[SLAB_MEMLAT_4K].ok) {
		add_line(r, "TLB reach: not judged without the 4k backing");
	} else if (v->huge < 0) {
		if (r->pt[SLAB_MEMLAT_THP] != NULL && r->reg[SLAB_MEMLAT_THP].ok)
			add_line(r, "TLB reach: not judged: thp got only %.0f%% huge pages and "
				 "hugetlb was not measured", 100 * fmax(r->frac[SLAB_MEMLAT_THP], 0));
		else
			add_line(r, "TLB reach: not judged without a huge-page backing");
	} else if (v->reach < 0) {
		add_line(r, "TLB reach: not found up to %s: the 4k curve does not stay over 10%% "
			 "above the %s curve (the reach is larger, or caches hide the misses%s)",
			 cli_human_size(r->sizes[r->n - 1], a, sizeof(a)),
			 slab_memlat_backing_name(v->huge),
			 r->o->pattern == SLAB_MEMLAT_PAGE ? "" : "; --pattern page shows them best");
	} else if (v->reach == 0) {
		add_line(r, "TLB reach: the 4k curve is slower than the %s curve from the smallest "
			 "set on, %.2fx in the median", slab_memlat_backing_name(v->huge), v->reach_median);
	} else {
		add_line(r, "TLB reach: the 4k curve leaves the %s curve between %s and %s, "
			 "and stays %.2fx slower in the median from there on",
			 slab_memlat_backing_name(v->huge),
			 cli_human_size(r->sizes[v->reach - 1], a, sizeof(a)),
			 cli_human_size(r->sizes[v->reach], b, sizeof(b)), v->reach_median);
	}

	for (int h = SLAB_MEMLAT_THP; h < NB; h++) {
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
			 k4, slab_memlat_backing_name(h), s, k4, r->med[SLAB_MEMLAT_4K][i],
			 slab_memlat_backing_name(h), r->med[h][i], slab_memlat_backing_name(h), effect);
	}
	if (r->pt[SLAB_MEMLAT_THP] != NULL && r->reg[SLAB_MEMLAT_THP].ok &&
	    r->frac[SLAB_MEMLAT_THP] >= 0 &&
	    r->frac[SLAB_MEMLAT_THP] < 0.9)
		add_line(r, "note: thp got %.0f%% of its memory in huge pages, so its curve mixes "
			 "page sizes (THP enabled=%s, defrag=%s)", 100 * r->frac[SLAB_MEMLAT_THP],
			 r->thp_enabled[0] ? r->thp_enabled : "?",
			 r->thp_defrag[0] ? r->thp_defrag : "?");
}

/* ---- outputs ------------------------------------------------------------------------------ */

void tlb_print_table(const struct tlb_run *r)
{
	const struct tlb_opts *o = r->o;
	int perf = r->perf != NULL, seq = o->pattern == SLAB_MEMLAT_SEQ;
	char a[64], b[400];

	printf("method:   %s\n", pattern_text(o->pattern));
	printf("timing:   warm-up discarded, then %u repetition%s of at least %g ms each, "
	       "in thread CPU time; median, and +/-%% = farthest repetition from it\n",
	       o->repeat, o->repeat == 1 ? "" : "s", o->min_time * 1e3);
	printf("sizes:    %s to %s, %u per octave", cli_human_size(r->sizes[0], a, sizeof(a)),
	       cli_human_size(r->sizes[r->n - 1], b, sizeof(b)), o->steps);
	if (r->capped == 2)
		printf(" (--max capped at a quarter of what the memory cgroup allows, %s)",
		       cli_human_size(r->cgroup.room, a, sizeof(a)));
	else if (r->capped)
		printf(" (--max capped at a quarter of MemAvailable, %s)",
		       cli_human_size(r->mem_available, a, sizeof(a)));
	putchar('\n');
	if (o->cpu >= 0)
		printf("cpu:      %ld (pinned)", o->cpu);
	else
		printf("cpu:      not pinned (--cpu N pins)");
	/* The model and the THP settings are the tree's text: escaped. */
	if (r->cpu_model[0])
		cli_printf_escaped(stdout, ", %s", r->cpu_model);
	if (r->cpu_share >= 0)
		printf("; the thread ran %.0f%% of the wall-clock time%s", 100 * r->cpu_share,
		       r->cpu_share < 0.95 ? " (the CPU is shared: expect noise)" : "");
	putchar('\n');
	for (int k = 0; k < NB; k++) {
		if (r->pt[k] == NULL)
			continue;
		snprintf(a, sizeof(a), "%s:", slab_memlat_backing_name(k));
		printf("%-9s ", a);
		cli_fputs_escaped(tlb_backing_text(r, k, b, sizeof(b)), stdout);
		putchar('\n');
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
		snprintf(a, sizeof(a), "%s ns", slab_memlat_backing_name(k));
		printf(" %11s %5s", a, "+/-%");
		if (seq)
			printf(" %6s", "GB/s");
		if (perf)
			printf(" %8s %8s", "dTLB/acc", "walk/acc");
	}
	for (int k = SLAB_MEMLAT_THP; k < NB; k++)
		if (r->pt[k] != NULL && r->pt[SLAB_MEMLAT_4K] != NULL) {
			snprintf(a, sizeof(a), "4k/%s", slab_memlat_backing_name(k));
			printf(" %10s", a);
		}
	putchar('\n');
	for (size_t i = 0; i < r->n; i++) {
		printf("%10s", cli_human_size(r->sizes[i], a, sizeof(a)));
		for (int k = 0; k < NB; k++) {
			const struct slab_memlat_point *p;

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
		for (int k = SLAB_MEMLAT_THP; k < NB; k++) {
			double s;

			if (r->pt[k] == NULL || r->pt[SLAB_MEMLAT_4K] == NULL)
				continue;
			s = r->med[SLAB_MEMLAT_4K][i] / r->med[k][i];
			if (isfinite(s))
				printf(" %10.2f", s);
			else
				printf(" %10s", "-");
		}
		putchar('\n');
	}
	printf("\nverdict:\n");
	for (int i = 0; i < r->nverdict; i++) {
		printf("  ");
		cli_fputs_escaped(r->verdict[i], stdout);
		putchar('\n');
	}
}

/* ",value" with DIGITS decimals, or "," alone when there is none. */
static void csv_value(double v, int digits)
{
	putchar(',');
	if (isfinite(v))
		printf("%.*f", digits, v);
}

void tlb_print_csv(const struct tlb_run *r)
{
	int perf = r->o->perf, seq = r->o->pattern == SLAB_MEMLAT_SEQ;

	printf("size");
	for (int k = 0; k < NB; k++) {
		const char *n = slab_memlat_backing_name(k);

		if (r->pt[k] == NULL)
			continue;
		printf(",%s_ns,%s_min,%s_max", n, n, n);
		if (seq)
			printf(",%s_gbps", n);
		if (perf)
			printf(",%s_dtlb_per_access,%s_walks_per_access", n, n);
	}
	for (int k = SLAB_MEMLAT_THP; k < NB; k++)
		if (r->pt[k] != NULL && r->pt[SLAB_MEMLAT_4K] != NULL)
			printf(",speedup_%s", slab_memlat_backing_name(k));
	putchar('\n');
	for (size_t i = 0; i < r->n; i++) {
		printf("%llu", (unsigned long long)r->sizes[i]);
		for (int k = 0; k < NB; k++) {
			const struct slab_memlat_point *p;

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
		for (int k = SLAB_MEMLAT_THP; k < NB; k++)
			if (r->pt[k] != NULL && r->pt[SLAB_MEMLAT_4K] != NULL)
				csv_value(r->med[SLAB_MEMLAT_4K][i] / r->med[k][i], 3);
		putchar('\n');
	}
}

void tlb_print_json(const struct tlb_run *r)
{
	const struct tlb_opts *o = r->o;
	const struct slab_memlat_verdict *v = &r->v;
	struct json j;
	char a[32], buf[400];

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "tool", "bench-tlb");
	json_string(&j, "version", SLAB_VERSION_STRING);

	json_object_begin(&j, "method");
	json_string(&j, "pattern", slab_memlat_pattern_name(o->pattern));
	json_string(&j, "description", pattern_text(o->pattern));
	json_string(&j, "unit", unit_text(o->pattern));
	json_u64(&j, "line_size", SLAB_MEMLAT_LINE);
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
	if (r->cgroup.limited) {
		json_object_begin(&j, "memory_cgroup");
		json_u64(&j, "limit", r->cgroup.limit);
		json_u64(&j, "usage", r->cgroup.usage);
		json_u64(&j, "room", r->cgroup.room);
		json_object_end(&j);
	} else {
		json_null(&j, "memory_cgroup");
	}
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
		const struct slab_memlat_region *g = &r->reg[k];

		json_object_begin(&j, NULL);
		json_string(&j, "name", slab_memlat_backing_name(k));
		json_string(&j, "request", requests[k]);
		if (r->pt[k] == NULL) {
			json_string(&j, "status", "not selected");
		} else if (!g->ok) {
			json_string(&j, "status", "missing");
			json_string(&j, "reason", slab_memlat_region_error(g));
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
		if (k == SLAB_MEMLAT_HUGETLB && r->pt[k] != NULL && !g->ok)
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
			const struct slab_memlat_point *p = r->pt[k] != NULL ? &r->pt[k][i] : NULL;

			if (p == NULL || !p->measured) {
				json_null(&j, slab_memlat_backing_name(k));
				continue;
			}
			json_object_begin(&j, slab_memlat_backing_name(k));
			json_double(&j, "median", round3(p->median));
			json_double(&j, "min", round3(p->min));
			json_double(&j, "max", round3(p->max));
			json_u64(&j, "accesses", p->accesses);
			if (o->pattern == SLAB_MEMLAT_SEQ)
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
		for (int k = SLAB_MEMLAT_THP; k < NB; k++)
			json_double(&j, slab_memlat_backing_name(k), r->pt[SLAB_MEMLAT_4K] != NULL &&
				    r->pt[k] != NULL ?
				    round3(r->med[SLAB_MEMLAT_4K][i] / r->med[k][i]) : NAN);
		json_object_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);

	json_object_begin(&j, "verdict");
	json_string(&j, "reference", v->ref >= 0 ? slab_memlat_backing_name(v->ref) : NULL);
	json_array_begin(&j, "plateaus");
	for (size_t i = 0; i < v->nplateaus; i++) {
		const struct slab_memlat_plateau *p = &v->plateaus[i];

		json_object_begin(&j, NULL);
		json_u64(&j, "from", r->sizes[p->first]);
		json_u64(&j, "to", r->sizes[p->last]);
		json_double(&j, "ns", round3(p->value));
		json_double(&j, "ns_min", round3(p->lo));
		json_double(&j, "ns_max", round3(p->hi));
		if (o->pattern != SLAB_MEMLAT_PAGE && p->cache >= 0) {
			json_string(&j, "level", cache_name(&r->caches[p->cache], a, sizeof(a)));
			json_u64(&j, "cache_size", r->caches[p->cache].size);
		} else if (o->pattern != SLAB_MEMLAT_PAGE && r->ncaches > 0) {
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
		json_string(&j, "compared_with", slab_memlat_backing_name(v->huge));
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
	for (int k = SLAB_MEMLAT_THP; k < NB; k++) {
		if (v->largest[k] < 0) {
			json_null(&j, slab_memlat_backing_name(k));
			continue;
		}
		json_object_begin(&j, slab_memlat_backing_name(k));
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

int tlb_svg_write(FILE *f, const char *path, const struct tlb_run *r)
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
			snprintf(names[k], sizeof(names[k]), "%s: missing", slab_memlat_backing_name(k));
		else if (k == SLAB_MEMLAT_HUGETLB)
			snprintf(names[k], sizeof(names[k]), "hugetlb (%s pages)",
				 r->reg[k].page_size == SLAB_MEMLAT_THP_SIZE ? "2 MiB" : "1 GiB");
		else if (r->frac[k] >= 0)
			snprintf(names[k], sizeof(names[k]), "%s (%.0f%% huge)", slab_memlat_backing_name(k),
				 100 * r->frac[k]);
		else
			snprintf(names[k], sizeof(names[k]), "%s", slab_memlat_backing_name(k));
		series[ns].name = names[k];
		series[ns].color = colors[k];
		series[ns].n = r->n;
		series[ns].x = x;
		series[ns].y = r->med[k];
		series[ns].lo = lo[k];
		series[ns].hi = hi[k];
		ns++;
	}
	if (r->o->pattern != SLAB_MEMLAT_PAGE)
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
			 slab_memlat_backing_name(r->v.huge));
		markers[nm].x = (double)r->sizes[r->v.reach];
		markers[nm].label = labels[nm];
		markers[nm].color = "#ff7f0e";
		nm++;
	}

	snprintf(title, sizeof(title), "bench-tlb --pattern %s: %s against working set",
		 slab_memlat_pattern_name(r->o->pattern),
		 r->o->pattern == SLAB_MEMLAT_SEQ ? "read time" : "access latency");
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

			snprintf(lines[nl], sizeof(lines[0]), "%s: %s", slab_memlat_backing_name(k),
				 tlb_backing_text(r, k, t, sizeof(t)));
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
		cli_write_error(path, errno);
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

