/* shuffle-plan: the order to read a dataset of .slab files in for one epoch and one rank
 * (sequential, uniform random, or quasi-random through a bounded window of pages), written
 * as a binary plan (slab-plan(5)) or as text, with measures of how random and how local
 * it is. */
#include "cli.h"
#include "errfmt.h"
#include "io.h"
#include "slab.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: shuffle-plan [OPTIONS] FILE...\n";

static const char help_text[] =
"Write a plan: the order to read the samples of a dataset in for one epoch, for\n"
"one rank of a distributed job. The FILEs (.slab) are one dataset, samples\n"
"numbered in the order the files are given. A plan depends only on the files'\n"
"contents and the options below: the same bytes on every run and machine.\n"
"\n"
"Options:\n"
"      --mode MODE          quasi (default): pages shuffled, read through a\n"
"                           window of live pages; random: a uniform permutation;\n"
"                           sequential: file order\n"
"      --window PAGES       quasi: at most PAGES pages live at once (default 64)\n"
"      --memory SIZE        quasi: the same budget in bytes, instead of --window\n"
"      --seed N             seed of the shuffle (default 0)\n"
"      --epoch N            epoch number, each with its own order (default 0)\n"
"      --rank R             the rank whose share to write, below W (default 0)\n"
"      --world-size W       ranks sharing the dataset (default 1)\n"
"      --drop-last          equal shares by dropping up to W-1 samples (default)\n"
"      --pad                equal shares by repeating up to W-1 samples\n"
"      --start K            the plan from position K on, to resume an epoch\n"
"      --subset LIST        plan only the samples LIST names ('-': standard\n"
"                           input), one a line: a global sample index (file\n"
"                           order, then index in the file) or key:KEY\n"
"      --format FORMAT      binary (default; see slab-plan(5)) or text, one\n"
"                           \"FILE_INDEX SAMPLE_INDEX\" line per sample\n"
"  -o, --output PLAN        write the plan to PLAN ('-': standard output, the\n"
"                           default); a file appears only when complete; a\n"
"                           URL (s3://, http://, https://) is uploaded\n"
"      --stats              print measures of the plan on standard output; the\n"
"                           plan itself is then written only with -o PLAN\n"
"  -q, --quiet              no summary line\n"
"  -v, --verbose            also describe each file\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
CLI_REMOTE_HELP"\n"
"SIZE takes K, M, G suffixes (binary). Exit status: 0 written, 1 failed (a file\n"
"unreadable or corrupt, --start past the end, a write error), 2 usage error.\n"
"See shuffle-plan(1) and slab-plan(5).\n";

enum {
	OPT_DROP_LAST = CHAR_MAX + 1,
	OPT_EPOCH,
	OPT_FORMAT,
	OPT_MEMORY,
	OPT_MODE,
	OPT_PAD,
	OPT_RANK,
	OPT_SEED,
	OPT_START,
	OPT_STATS,
	OPT_SUBSET,
	OPT_WINDOW,
	OPT_WORLD_SIZE,
};

static const struct option longopts[] = {
	{ "drop-last",  no_argument,       NULL, OPT_DROP_LAST },
	{ "epoch",      required_argument, NULL, OPT_EPOCH },
	{ "format",     required_argument, NULL, OPT_FORMAT },
	{ "help",       no_argument,       NULL, 'h' },
	{ "memory",     required_argument, NULL, OPT_MEMORY },
	{ "mode",       required_argument, NULL, OPT_MODE },
	{ "output",     required_argument, NULL, 'o' },
	{ "pad",        no_argument,       NULL, OPT_PAD },
	{ "quiet",      no_argument,       NULL, 'q' },
	{ "rank",       required_argument, NULL, OPT_RANK },
	{ "seed",       required_argument, NULL, OPT_SEED },
	{ "start",      required_argument, NULL, OPT_START },
	{ "stats",      no_argument,       NULL, OPT_STATS },
	{ "subset",     required_argument, NULL, OPT_SUBSET },
	{ "verbose",    no_argument,       NULL, 'v' },
	{ "version",    no_argument,       NULL, 'V' },
	CLI_REMOTE_LONGOPTS,
	{ "window",     required_argument, NULL, OPT_WINDOW },
	{ "world-size", required_argument, NULL, OPT_WORLD_SIZE },
	{ NULL, 0, NULL, 0 }
};

static const char *const mode_names[] = { "sequential", "random", "quasi" };

/* ---- writing --------------------------------------------------------------------------- */

static char *put_u32(char *p, uint32_t v)
{
	char tmp[10];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* One "FILE_INDEX SAMPLE_INDEX" line per entry; printf would be the slowest part. */
static int write_text(const struct slab_plan *plan, int fd)
{
	enum { SIZE = 1 << 16, LINE = 22 };
	const struct slab_plan_entry *e = slab_plan_entries(plan);
	uint64_t n = slab_plan_count(plan);
	char *buf = malloc(SIZE), *p;
	int ret = -1;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	p = buf;
	for (uint64_t i = 0; i < n; i++) {
		if (p - buf > SIZE - LINE) {
			if (slab_write_full(fd, buf, (size_t)(p - buf)) < 0)
				goto out;
			p = buf;
		}
		p = put_u32(p, e[i].file);
		*p++ = ' ';
		p = put_u32(p, e[i].sample);
		*p++ = '\n';
	}
	if (slab_write_full(fd, buf, (size_t)(p - buf)) < 0)
		goto out;
	ret = 0;
out:
	free(buf);
	return ret;
}

static void print_stats(const struct slab_plan_stats *st)
{
	printf("samples: %llu\n", (unsigned long long)st->samples);
	printf("distinct_pages: %llu\n", (unsigned long long)st->distinct_pages);
	printf("page_switches: %llu\n", (unsigned long long)st->page_switches);
	printf("mean_run: %.3f\n", st->mean_run);
	printf("max_live_pages: %llu\n", (unsigned long long)st->max_live_pages);
	printf("max_live_bytes: %llu\n", (unsigned long long)st->max_live_bytes);
	printf("displacement: %.6f\n", st->displacement);
	printf("same_page_neighbours: %.6f\n", st->same_page_neighbours);
}

static void summary(const struct slab_plan *plan, const char *target, double secs)
{
	const struct slab_plan_params *p = slab_plan_params(plan);
	uint64_t length = slab_plan_length(plan), total = slab_plan_subset_count(plan);
	uint64_t all = length * p->world;
	char window[64] = "", from[64] = "", hs[32], of[64];

	if (p->mode == SLAB_PLAN_QUASI) {
		if (p->flags & SLAB_PLAN_MEMORY)
			snprintf(window, sizeof(window), " window %s,", cli_human_size(p->window, hs, sizeof(hs)));
		else
			snprintf(window, sizeof(window), " window %llu %s,", (unsigned long long)p->window,
				 slab_plural(p->window, "page", "pages"));
	}
	if (slab_plan_start(plan))
		snprintf(from, sizeof(from), " from position %llu of %llu",
			 (unsigned long long)slab_plan_start(plan), (unsigned long long)length);
	if (p->flags & SLAB_PLAN_SUBSET)
		snprintf(of, sizeof(of), "subset %llu of dataset %llu", (unsigned long long)total,
			 (unsigned long long)slab_plan_total(plan));
	else
		snprintf(of, sizeof(of), "dataset %llu", (unsigned long long)total);
	cli_error("%s%s%s%s,%s seed %llu, epoch %llu, rank %u of %u: %llu %s%s (%s), %s %llu %s, %.3f s",
		  target ? "'" : "", target ? target : "", target ? "': " : "", mode_names[p->mode],
		  window, (unsigned long long)p->seed, (unsigned long long)p->epoch, p->rank, p->world,
		  (unsigned long long)slab_plan_count(plan),
		  slab_plural(slab_plan_count(plan), "sample", "samples"), from, of,
		  p->flags & SLAB_PLAN_PAD ? "pad:" : "drop-last:",
		  (unsigned long long)(p->flags & SLAB_PLAN_PAD ? all - total : total - all),
		  p->flags & SLAB_PLAN_PAD ? "repeated" : "dropped", secs);
}

/* ---- the subset -------------------------------------------------------------------------- */

/* The global index of a key: the first file holding it wins, as slab_dataset_find(). 0,
 * SLAB_ERR_NOTFOUND, or another error in the file's reader. */
static int find_key(struct slab *const *files, int nfiles, const char *key, size_t len,
		    uint64_t *global, int *failed_file)
{
	uint64_t base = 0;

	for (int f = 0; f < nfiles; f++) {
		uint64_t index;
		int rc = slab_find(files[f], key, len, &index);
		if (rc == 0) {
			*global = base + index;
			return 0;
		}
		if (rc != SLAB_ERR_NOTFOUND) {
			*failed_file = f;
			return rc;
		}
		base += slab_count(files[f]);
	}
	return SLAB_ERR_NOTFOUND;
}

/* The "%.*s%s" arguments that show a line of len bytes in a message: all of it, or its first
 * SHOWN bytes and "...". */
#define SHOWN 80
#define SHOW(s, len) (int)((len) > SHOWN ? SHOWN : (len)), (s), (len) > SHOWN ? "..." : ""

/* A line of the subset list is read up to this many bytes, or "key:" and the longest key of
 * the dataset (and a byte) when that is more: no longer line can be a key or an index. */
#define LINE_FIRST ((size_t)64 << 10)

/* The longest line that may name a sample: LINE_FIRST, or "key:", the longest key and one. */
static size_t line_limit(struct slab *const *files, int nfiles)
{
	size_t limit = LINE_FIRST;

	for (int f = 0; f < nfiles; f++) {
		for (uint64_t i = 0; i < slab_count(files[f]); i++) {
			struct slab_sample smp;
			if (slab_sample(files[f], i, &smp) == 0 && smp.key_len > limit - 5)
				limit = smp.key_len + 5;
		}
	}
	return limit;
}

/*
 * The next line of in into *line (NUL-terminated, its newline dropped): its length, or -1 at
 * the end of the list (or a read error: ferror), -2 out of memory. Reading stops after a NUL
 * byte, which no line may hold, and after *limit bytes (raised once by line_limit()): what
 * was read is refused as it stands, so an endless line (/dev/zero, a file without newlines)
 * costs no more than that, where getline() would take all the memory there is.
 */
static ssize_t read_line(FILE *in, char **line, size_t *cap, size_t *limit, int *raised,
			 struct slab *const *files, int nfiles)
{
	size_t len = 0;
	int c = 0;

	for (;;) {
		if (len == *limit && !*raised) {
			*limit = line_limit(files, nfiles);
			*raised = 1;
		}
		if (len == *limit || (c = getc_unlocked(in)) == EOF || c == '\n')
			break;
		if (len + 1 >= *cap) {
			size_t want = *cap ? *cap * 2 : 256;
			char *a = realloc(*line, want);
			if (!a)
				return -2;
			*line = a;
			*cap = want;
		}
		(*line)[len++] = (char)c;
		if (c == '\0')
			break;
	}
	if (c == EOF && len == 0)
		return -1;
	if (!*line && !(*line = malloc(*cap = 1)))
		return -2;
	(*line)[len] = '\0';
	return (ssize_t)len;
}

/*
 * The subset list at path ("-": standard input): line i (from 1) is entry i - 1, a global
 * sample index in decimal or "key:" and a key (the rest of the line, byte for byte). A bad
 * line, a sample out of range or listed twice, an unknown key: a usage error naming the line.
 * 0 with *out (malloc'd) and *n, or the exit status after the message.
 */
static int read_subset(const char *path, struct slab *const *files, int nfiles, uint64_t **out,
		       size_t *n)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	const char *name = slab_input_shown(path);
	uint64_t total = 0, *bits = NULL, *g = NULL, cap = 0;
	char *line = NULL;
	size_t linecap = 0, count = 0, limit = LINE_FIRST;
	ssize_t len;
	int ret = SLAB_EXIT_FAIL, raised = 0;

	if (!in) {
		cli_error("'%s': %s", path, strerror(errno));
		return SLAB_EXIT_FAIL;
	}
	for (int f = 0; f < nfiles; f++)
		total += slab_count(files[f]);
	bits = calloc(total / 64 + 1, sizeof(*bits));
	if (!bits)
		goto nomem;
	errno = 0;
	while ((len = read_line(in, &line, &linecap, &limit, &raised, files, nfiles)) >= 0) {
		size_t at = count + 1;      /* the line number */
		uint64_t v;
		int is_key;
		is_key = strncmp(line, "key:", 4) == 0;
		if (len == 0) {
			ret = cli_usage_error("'%s': line %zu: empty line (a sample index or key:KEY on each line)",
					      name, at);
			goto out;
		}
		/* (a key never holds one: a tar member's name cannot) */
		if ((size_t)len != strlen(line)) {
			ret = cli_usage_error("'%s': line %zu: a NUL byte at byte %zu (a sample index or key:KEY on each line)",
					      name, at, strlen(line) + 1);
			goto out;
		}
		if (is_key) {
			int bad = 0, rc = find_key(files, nfiles, line + 4, (size_t)len - 4, &v, &bad);
			if (rc == SLAB_ERR_NOTFOUND) {
				ret = cli_usage_error("'%s': line %zu: no sample has the key '%.*s%s'", name,
						      at, SHOW(line + 4, (size_t)len - 4));
				goto out;
			}
			if (rc < 0) {
				cli_error("%s", slab_error(files[bad]));
				goto out;
			}
		} else if ((size_t)len == limit || cli_parse_u64(line, 0, UINT64_MAX, &v) < 0) {
			if (strspn(line, "0123456789") == (size_t)len)     /* past 2^64 - 1 */
				ret = cli_usage_error("'%s': line %zu: sample %.*s%s is out of range (the dataset has %llu %s)",
						      name, at, SHOW(line, (size_t)len),
						      (unsigned long long)total,
						      slab_plural(total, "sample", "samples"));
			else
				ret = cli_usage_error("'%s': line %zu: '%.*s%s' is neither a sample index nor key:KEY",
						      name, at, SHOW(line, (size_t)len));
			goto out;
		} else if (v >= total) {
			ret = cli_usage_error("'%s': line %zu: sample %llu is out of range (the dataset has %llu %s)",
					      name, at, (unsigned long long)v, (unsigned long long)total,
					      slab_plural(total, "sample", "samples"));
			goto out;
		}
		if (bits[v / 64] >> (v % 64) & 1) {
			size_t first = 0;
			while (g[first] != v)
				first++;
			if (is_key)
				ret = cli_usage_error("'%s': line %zu: key '%.*s%s' is sample %llu, already on line %zu",
						      name, at, SHOW(line + 4, (size_t)len - 4),
						      (unsigned long long)v, first + 1);
			else
				ret = cli_usage_error("'%s': line %zu: sample %llu is already on line %zu",
						      name, at, (unsigned long long)v, first + 1);
			goto out;
		}
		bits[v / 64] |= 1ull << (v % 64);
		if (count == cap) {
			uint64_t *a;
			cap = cap ? cap * 2 : 1024;
			a = realloc(g, cap * sizeof(*g));
			if (!a)
				goto nomem;
			g = a;
		}
		g[count++] = v;
		errno = 0;
	}
	if (len == -2)
		goto nomem;
	if (ferror(in)) {
		cli_error("'%s': %s", name, strerror(errno ? errno : EIO));
		goto out;
	}
	*out = g;
	*n = count;
	g = NULL;
	ret = 0;
	goto out;
nomem:
	cli_error("out of memory");
out:
	if (in != stdin)
		fclose(in);
	free(line);
	free(bits);
	free(g);
	return ret;
}

/* The error names the range; the largest 64-bit number is said as such, not in 20 digits. */
static int number(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	char top[32] = "2^64 - 1";

	if (cli_parse_u64(arg, min, max, out) == 0)
		return 0;
	if (max != UINT64_MAX)
		snprintf(top, sizeof(top), "%llu", (unsigned long long)max);
	cli_usage_error("invalid %s '%s' (a number from %llu to %s)", opt, arg,
			(unsigned long long)min, top);
	return -1;
}

int main(int argc, char **argv)
{
	struct slab_plan_params p = { .size = sizeof(p), .mode = SLAB_PLAN_QUASI, .world = 1,
				      .window = 64 };
	const char *output = NULL, *subset_path = NULL;
	uint64_t *subset = NULL;
	size_t nsubset = 0;
	struct slab **files = NULL;
	struct slab_plan *plan = NULL;
	struct slab_plan_stats st = { .size = sizeof(st) };
	uint64_t v, start = 0, rank = 0, world = 1;
	int c, text = 0, stats = 0, drop_set = 0, pad_set = 0, window_set = 0, memory_set = 0;
	struct cli_output outf = { .fd = -1 };
	int ret = SLAB_EXIT_FAIL, nfiles = 0, failed = 0;
	double t0;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	while ((c = getopt_long(argc, argv, "ho:qvV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DROP_LAST:
			drop_set = 1;
			break;
		case OPT_EPOCH:
			if (number("--epoch", optarg, 0, UINT64_MAX, &p.epoch) < 0)
				return SLAB_EXIT_USAGE;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				text = 1;
			else if (strcmp(optarg, "binary") == 0)
				text = 0;
			else
				return cli_usage_error("invalid --format '%s' (binary or text)", optarg);
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		case OPT_MEMORY:
			if (cli_parse_size(optarg, &p.window) < 0 || p.window == 0)
				return cli_usage_error("invalid --memory '%s' (a size such as 512M, more than 0)", optarg);
			memory_set = 1;
			break;
		case OPT_MODE:
			for (v = 0; v < 3 && strcmp(optarg, mode_names[v]) != 0; v++)
				;
			if (v == 3)
				return cli_usage_error("invalid --mode '%s' (sequential, random or quasi)", optarg);
			p.mode = (enum slab_plan_mode)v;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_PAD:
			pad_set = 1;
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case OPT_RANK:
			if (number("--rank", optarg, 0, UINT32_MAX - 1, &rank) < 0)
				return SLAB_EXIT_USAGE;
			break;
		case OPT_SEED:
			if (number("--seed", optarg, 0, UINT64_MAX, &p.seed) < 0)
				return SLAB_EXIT_USAGE;
			break;
		case OPT_START:
			if (number("--start", optarg, 0, UINT64_MAX, &start) < 0)
				return SLAB_EXIT_USAGE;
			break;
		case OPT_STATS:
			stats = 1;
			break;
		case OPT_SUBSET:
			if (!*optarg)
				return cli_usage_error("empty --subset name (use --subset FILE, or --subset - for standard input)");
			subset_path = optarg;
			break;
		case 'v':
			cli_verbosity = 2;
			break;
		case 'V':
			return cli_version();
		case OPT_WINDOW:
			if (number("--window", optarg, 1, UINT64_MAX, &p.window) < 0)
				return SLAB_EXIT_USAGE;
			window_set = 1;
			break;
		case OPT_WORLD_SIZE:
			if (number("--world-size", optarg, 1, UINT32_MAX, &world) < 0)
				return SLAB_EXIT_USAGE;
			break;
		default:
			if ((c = cli_remote_option(c, optarg)) == 1)
				break;
			return c ? c : cli_try_help();
		}
	}
	if (window_set && memory_set)
		return cli_usage_error("--window and --memory exclude each other");
	if ((window_set || memory_set) && p.mode != SLAB_PLAN_QUASI)
		return cli_usage_error("--%s applies to --mode quasi only", window_set ? "window" : "memory");
	if (drop_set && pad_set)
		return cli_usage_error("--drop-last and --pad exclude each other");
	if (rank >= world)
		return cli_usage_error("--rank %llu is not below --world-size %llu",
				       (unsigned long long)rank, (unsigned long long)world);
	if (optind == argc)
		return cli_usage_error("no input file");
	if (output && !*output)
		return cli_usage_error("empty output name (use -o FILE, or -o - for standard output)");
	if (stats && output && cli_output_is_stdout(output))
		return cli_usage_error("--stats prints on standard output: write the plan with -o FILE");
	if (!output && !stats)
		output = "-";
	if (output && !text && cli_output_is_terminal(output))
		return cli_usage_error("refusing to write a binary plan to a terminal (redirect it, use -o FILE, or --format text)");
	p.rank = (uint32_t)rank;
	p.world = (uint32_t)world;
	if (memory_set)
		p.flags |= SLAB_PLAN_MEMORY;
	if (pad_set)
		p.flags |= SLAB_PLAN_PAD;

	if (cli_check_mapped_inputs(argv + optind, argc - optind) < 0)
		return SLAB_EXIT_USAGE;
	/* A terminal would wait for lines typed at it, with no prompt: a forgotten pipe. */
	if (subset_path && strcmp(subset_path, "-") == 0 && isatty(STDIN_FILENO))
		return cli_usage_error("--subset - reads the list from standard input, which is a "
				       "terminal");
	/* The subset list is read as the files are: the plan must not be written over it. */
	if (cli_check_output(output, argv + optind, argc - optind) < 0 ||
	    (subset_path && cli_check_output(output, (char **)&subset_path, 1) < 0))
		return SLAB_EXIT_FAIL;
	t0 = cli_now();
	nfiles = argc - optind;
	files = calloc((size_t)nfiles, sizeof(*files));
	if (!files) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	/* Every file must open; each one that does not is reported. */
	for (int i = 0; i < nfiles; i++) {
		char hs[32];
		files[i] = slab_new();
		if (!files[i]) {
			cli_error("out of memory");
			goto out;
		}
		if (slab_open_ex(files[i], argv[optind + i], &cli_remote) < 0) {
			cli_error("%s", slab_error(files[i]));
			failed = 1;
			continue;
		}
		cli_info("file %d '%s': %llu %s, %llu %s of %s", i, cli_shown(argv[optind + i]),
			 (unsigned long long)slab_count(files[i]),
			 slab_plural(slab_count(files[i]), "sample", "samples"),
			 (unsigned long long)slab_page_count(files[i]),
			 slab_plural(slab_page_count(files[i]), "page", "pages"),
			 cli_human_size(slab_page_size(files[i]), hs, sizeof(hs)));
	}
	if (failed)
		goto out;
	if (subset_path && (ret = read_subset(subset_path, files, nfiles, &subset, &nsubset)) != 0)
		goto out;
	ret = SLAB_EXIT_FAIL;
	plan = slab_plan_new();
	if (!plan) {
		cli_error("out of memory");
		goto out;
	}
	if ((subset_path ? slab_plan_make_subset(plan, files, (uint32_t)nfiles, &p, subset, nsubset, start)
			 : slab_plan_make(plan, files, (uint32_t)nfiles, &p, start)) < 0) {
		cli_error("%s", slab_plan_error(plan));
		goto out;
	}
	if (stats && slab_plan_stats(plan, files, (uint32_t)nfiles, &st) < 0) {
		cli_error("%s", slab_plan_error(plan));
		goto out;
	}
	if (output) {
		int to_stdout = strcmp(output, "-") == 0;
		if (cli_output_open(&outf, output) < 0)
			goto out;
		if ((text ? write_text(plan, outf.fd) : slab_plan_write(plan, outf.fd)) < 0) {
			if (!(to_stdout && errno == EPIPE)) {
				cli_write_error(output, errno);
				goto out;
			}
		}
		if (cli_output_commit(&outf) < 0)
			goto out;
	}
	if (stats)
		print_stats(&st);
	if (cli_close_stdout() < 0)
		goto out;
	if (cli_verbosity >= 1)
		summary(plan, output ? (strcmp(output, "-") ? cli_shown(output) : "(stdout)") : NULL, cli_now() - t0);
	ret = SLAB_EXIT_OK;
out:
	cli_output_abort(&outf);
	slab_plan_free(plan);
	free(subset);
	for (int i = 0; i < nfiles && files; i++)
		slab_close(files[i]);
	free(files);
	return ret;
}
