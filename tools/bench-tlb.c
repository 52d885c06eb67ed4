/* bench-tlb: what a memory access costs as the working set grows from 4 KiB to --max, on
 * 4 KiB pages, transparent huge pages and hugetlb pages side by side; a table and a verdict
 * (cache plateaus, TLB reach, huge-page speed-up), or CSV, JSON, and an SVG chart. */
#include "cli.h"
#include "memlat.h"
#include "perfev.h"
#include "sysfs.h"
#include "tlbreport.h"

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
"                           through every cache line (latency); page: one line\n"
"                           per 4 KiB page in random order (the TLB's own cost);\n"
"                           seq: streaming reads (bandwidth)\n"
"      --backing LIST       a comma-separated subset of 4k,thp,hugetlb (default:\n"
"                           all three)\n"
"      --hugetlb-size SIZE  hugetlb page size: 2M (default) or 1G\n"
"      --max SIZE           largest working set (default 1G; at most a quarter of\n"
"                           MemAvailable, or of what the memory cgroup allows)\n"
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
"      --sysfs-root DIR     read the hardware description (caches, CPU model,\n"
"                           THP setting) from DIR/sys and DIR/proc instead of\n"
"                           this machine's; the measuring is still done here\n"
"  -q, --quiet              no progress or notes on standard error\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"SIZE takes K, M, G suffixes (binary). Exit status: 0 measured, 1 failed (no\n"
"backing could be had, --cpu not usable, --sysfs-root not a sysfs tree, the SVG\n"
"not written), 2 usage error.\n"
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
	OPT_SYSFS_ROOT,
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
	{ "sysfs-root",       required_argument, NULL, OPT_SYSFS_ROOT },
	{ "version",          no_argument,       NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

#define DEFAULT_MAX ((uint64_t)1 << 30)
#define NB SLAB_MEMLAT_NBACKINGS

/* ---- small helpers ------------------------------------------------------------------------ */

/* "50ms", "0.2s", "500us", "1" (seconds): from 1 us to 60 s. */
static int parse_time(const char *s, double *out)
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

static int parse_backings(const char *s, int selected[NB])
{
	const char *p = s;

	memset(selected, 0, NB * sizeof(*selected));
	for (;;) {
		size_t len = strcspn(p, ",");
		int found = 0;

		for (int b = 0; b < NB; b++)
			if (len == strlen(slab_memlat_backing_name(b)) &&
			    strncmp(p, slab_memlat_backing_name(b), len) == 0) {
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
static const char *cpu_list(const cpu_set_t *set, char *buf, size_t len)
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

static int pin_cpu(long cpu)
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

/* ---- the SVG file: appears only when complete (cli_output) -------------------------------- */

static int stdout_is_char_device(void)
{
	struct stat st;

	return fstat(STDOUT_FILENO, &st) == 0 && S_ISCHR(st.st_mode);
}

static struct cli_output svg_out = { .fd = -1 };

static FILE *svg_open(const char *path)
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

static void svg_abandon(FILE *f)
{
	if (f != NULL) {
		fclose(f);
		svg_out.fd = -1;        /* fclose closed it */
	}
	cli_output_abort(&svg_out);
}

static int svg_finish(FILE *f, const char *path, const struct tlb_run *r)
{
	int fd;

	if (tlb_svg_write(f, path, r) != 0) {
		svg_abandon(f);
		return -1;
	}
	if (fflush(f) != 0 || ferror(f) || (fd = dup(fileno(f))) < 0) {
		cli_write_error(path, errno);
		svg_abandon(f);
		return -1;
	}
	fclose(f);
	svg_out.fd = fd;
	return cli_output_commit(&svg_out);
}

/* ---- the run ------------------------------------------------------------------------------ */

static int measure_all(struct tlb_run *r)
{
	struct slab_memlat_params prm;
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
			if (progress) {
				fprintf(stderr, "\r%s: %zu/%zu: %s at %s\033[K", cli_progname(), ++done,
					total, slab_memlat_backing_name(k),
					cli_human_size(r->sizes[i], a, sizeof(a)));
				cli_progress_shown();
			}
			if (slab_memlat_measure(&r->reg[k], r->sizes[i], &prm, &r->pt[k][i]) != 0) {
				if (progress)
					cli_progress_clear();
				cli_error("out of memory");
				return -1;
			}
			r->med[k][i] = r->pt[k][i].measured ? r->pt[k][i].median : NAN;
		}
	if (progress)
		cli_progress_clear();
	return 0;
}

/* How much of the wall-clock time the thread had its CPU, over every point measured. */
static double mean_cpu_share(const struct tlb_run *r)
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

/* A file of the --sysfs-root tree (or of this machine's /sys and /proc) that the kernel
 * never writes so: said, then left out of the description. */
static void sysfs_invalid(const char *path, const char *text, const char *why, void *arg)
{
	(void)arg;
	if (cli_verbosity >= 1)
		cli_warn("'%s' holds '%.64s%s', %s", path, text, strlen(text) > 64 ? "..." : "",
			 why);
}

static int bench(const struct tlb_opts *o)
{
	struct tlb_run *r = calloc(1, sizeof(*r));
	struct slab_sysfs *fs = NULL;
	struct slab_perfev *perf = NULL;
	FILE *svg = NULL;
	int ret = SLAB_EXIT_FAIL, any = 0;
	int64_t avail;
	char a[32], b[400];

	if (r == NULL) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	r->o = o;
	/* The hardware description is read through a context, the tree's or this machine's "/",
	 * so that a file holding what the kernel never writes is said the same way for both. */
	fs = slab_sysfs_new();
	if (fs == NULL) {
		cli_error("out of memory");
		goto out;
	}
	if (slab_sysfs_open(fs, o->sysfs_root != NULL ? o->sysfs_root : "/") < 0) {
		if (o->sysfs_root != NULL) {
			cli_error("%s", slab_sysfs_error(fs));
			goto out;
		}
		/* No sysfs mounted here (a bare container): what /proc has, unreported. */
		slab_sysfs_close(fs);
		fs = NULL;
	} else {
		slab_sysfs_set_invalid(fs, sysfs_invalid, NULL);
	}
	if (o->cpu >= 0 && pin_cpu(o->cpu) != 0)
		goto out;
	if (o->svg != NULL && (svg = svg_open(o->svg)) == NULL)
		goto out;

	/* Two regions of --max at once: a quarter of what is available each leaves room. */
	r->max = o->max;
	/* This machine's, whatever --sysfs-root says: the regions are mapped here. */
	if (slab_sysfs_meminfo(NULL, "proc/meminfo", "MemAvailable", &avail) == 0 && avail > 0)
		r->mem_available = (uint64_t)avail;
	/* A memory cgroup (a container, a systemd slice) may allow much less than the machine
	 * has: past its limit the kernel kills the process while it populates the regions. */
	slab_memlat_cgroup(NULL, &r->cgroup);
	if (r->cgroup.limited && (r->mem_available == 0 || r->cgroup.room < r->mem_available)) {
		if (r->max > r->cgroup.room / 4) {
			char c[32];

			r->max = r->cgroup.room / 4 / SLAB_MEMLAT_SMALL_PAGE * SLAB_MEMLAT_SMALL_PAGE;
			r->capped = 2;
			if (o->max_given && cli_verbosity >= 1)
				cli_warn("--max capped at %s, a quarter of what the memory cgroup "
					 "allows (limit %s, %s in use)",
					 cli_human_size(r->max, a, sizeof(a)),
					 cli_human_size(r->cgroup.limit, b, sizeof(b)),
					 cli_human_size(r->cgroup.usage, c, sizeof(c)));
		}
	} else if (r->mem_available > 0 && r->max > r->mem_available / 4) {
		r->max = r->mem_available / 4 / SLAB_MEMLAT_SMALL_PAGE * SLAB_MEMLAT_SMALL_PAGE;
		r->capped = 1;
		if (o->max_given && cli_verbosity >= 1)
			cli_warn("--max capped at %s, a quarter of MemAvailable",
				 cli_human_size(r->max, a, sizeof(a)));
	}
	if (slab_memlat_sizes(r->max, o->steps, slab_memlat_unit(o->pattern), &r->sizes, &r->n) != 0) {
		if (r->max < SLAB_MEMLAT_MIN_SIZE && r->capped == 2)
			cli_error("too little memory available (the memory cgroup allows %s, "
				  "%s in use)", cli_human_size(r->cgroup.limit, a, sizeof(a)),
				  cli_human_size(r->cgroup.usage, b, sizeof(b)));
		else if (r->max < SLAB_MEMLAT_MIN_SIZE)
			cli_error("too little memory available (MemAvailable %s)",
				  cli_human_size(r->mem_available, a, sizeof(a)));
		else
			cli_error("out of memory");
		goto out;
	}
	/* The hardware description: unknown parts stay empty. */
	r->ncaches = slab_memlat_caches(fs, o->cpu >= 0 ? (unsigned)o->cpu : 0, r->caches, 8);
	slab_sysfs_cpu_model(fs, r->cpu_model, sizeof(r->cpu_model));
	slab_sysfs_thp(fs, "enabled", r->thp_enabled, sizeof(r->thp_enabled));
	slab_sysfs_thp(fs, "defrag", r->thp_defrag, sizeof(r->thp_defrag));
	if (o->perf) {
		perf = slab_perfev_new();
		if (perf == NULL) {
			cli_error("out of memory");
			goto out;
		}
		if (slab_perfev_open(perf) == 0) {
			r->perf = perf;
			r->walk_name = slab_perfev_walk_event(perf);
		}
		r->perf_why = r->walk_why = slab_perfev_error(perf);
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
		if (cli_progress_wanted()) {
			fprintf(stderr, "\r%s: mapping %s of %s\033[K", cli_progname(),
				cli_human_size(r->sizes[r->n - 1], a, sizeof(a)),
				slab_memlat_backing_name(k));
			cli_progress_shown();
		}
		slab_memlat_region_map(&r->reg[k], k, r->sizes[r->n - 1], o->hugetlb_page);
		any |= r->reg[k].ok;
	}
	if (!any) {
		if (cli_progress_wanted())
			cli_progress_clear();
		for (int k = 0; k < NB; k++)
			if (o->selected[k])
				cli_error("%s: %s", slab_memlat_backing_name(k), tlb_backing_text(r, k, b, sizeof(b)));
		cli_error("no backing could be measured");
		goto out;
	}
	if (measure_all(r) != 0)
		goto out;
	for (int k = 0; k < NB; k++) {
		slab_memlat_region_check(&r->reg[k]);
		r->frac[k] = slab_memlat_huge_fraction(&r->reg[k]);
	}
	r->cpu_share = mean_cpu_share(r);
	if (slab_memlat_analyse(r->sizes, r->n, (const double *const *)r->med, r->frac,
			   o->pattern == SLAB_MEMLAT_PAGE ? NULL : r->caches,
			   o->pattern == SLAB_MEMLAT_PAGE ? 0 : r->ncaches,
			   o->pattern == SLAB_MEMLAT_CHASE ? TLB_MEMORY_NS : 0, &r->v) < 0) {
		cli_error("out of memory");
		goto out;
	}
	tlb_verdict_text(r);

	if (o->json)
		tlb_print_json(r);
	else if (o->csv)
		tlb_print_csv(r);
	else
		tlb_print_table(r);
	/* A run whose output could not be written failed: it leaves no chart (main says why).
	 * A reader that has gone away (EPIPE) had what it wanted. */
	if (svg != NULL && cli_flush_stdout() < 0 && errno != EPIPE)
		goto out;
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
		slab_memlat_region_unmap(&r->reg[k]);
		free(r->pt[k]);
		free(r->med[k]);
	}
	slab_perfev_close(perf);
	slab_sysfs_close(fs);
	free(r->sizes);
	free(r);
	return ret;
}

int main(int argc, char **argv)
{
	struct tlb_opts o;
	uint64_t u;
	int c, ret;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	memset(&o, 0, sizeof(o));
	o.pattern = SLAB_MEMLAT_CHASE;
	for (int k = 0; k < NB; k++)
		o.selected[k] = 1;
	o.hugetlb_page = SLAB_MEMLAT_THP_SIZE;
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
			    (u != SLAB_MEMLAT_THP_SIZE && u != (uint64_t)1 << 30))
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
			if (o.max < SLAB_MEMLAT_MIN_SIZE)
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
				o.pattern = SLAB_MEMLAT_CHASE;
			else if (strcmp(optarg, "page") == 0)
				o.pattern = SLAB_MEMLAT_PAGE;
			else if (strcmp(optarg, "seq") == 0)
				o.pattern = SLAB_MEMLAT_SEQ;
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
		case OPT_SYSFS_ROOT:
			if (optarg[0] == '\0')
				return cli_usage_error("--sysfs-root needs a folder");
			o.sysfs_root = optarg;
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
	/* The chart after the report in one stream is neither (a JSON reader fails on it);
	 * /dev/null for both is harmless, a terminal is not (the XML on the screen). */
	if (o.svg != NULL && cli_output_is_stdout(o.svg) &&
	    (strcmp(o.svg, "-") == 0 || !stdout_is_char_device() || isatty(STDOUT_FILENO)))
		return cli_usage_error("--svg '%s' is standard output, where the report goes: give "
				       "another file", o.svg);

	ret = bench(&o);
	if (cli_close_stdout() < 0)
		ret = SLAB_EXIT_FAIL;
	return ret;
}
