/* numa-probe: the machine's NUMA nodes, CPUs, caches, huge pages and PCIe devices as the
 * kernel reports them, where a data loader feeding each GPU should run, and with --measure
 * what local and remote memory really cost (bandwidth and latency matrices). */
#include "cli.h"
#include "json.h"
#include "membench.h"
#include "numareport.h"
#include "topo.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: numa-probe [--json] [--sysfs-root DIR]\n"
"       numa-probe --measure [--size SIZE] [--repeat N]\n"
"                  [--threads N] [--json]\n";

static const char help_text[] =
"Report the machine's layout as the kernel sees it: NUMA nodes (CPUs, memory,\n"
"distances, huge pages), CPU and caches, the PCIe devices that matter for\n"
"loading data (GPUs, accelerators, NVMe, Ethernet, InfiniBand) with their link\n"
"state, and where a loader feeding each GPU should run.\n"
"\n"
"Options:\n"
"      --json               everything as one JSON object (keys in\n"
"                           numa-probe(1))\n"
"      --measure            also measure memory bandwidth and latency from the\n"
"                           CPUs of every node to the memory of every node\n"
"      --repeat N           measured runs of each figure, after one warm-up run\n"
"                           (default 5)\n"
"      --size SIZE          buffer per memory node (default 256M, or 4 times the\n"
"                           last-level caches when that is larger)\n"
"      --sysfs-root DIR     read DIR/sys and DIR/proc instead of /sys and /proc\n"
"                           (a captured or hand-made tree; not with --measure)\n"
"      --threads N          bandwidth threads per CPU node (default: one per CPU)\n"
"  -q, --quiet              no progress on standard error\n"
"  -v, --verbose            also name each file that could not be read\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"Exit status: 0 success, 1 failure (unreadable root, a pair that could not be\n"
"measured), 2 usage error. See numa-probe(1).\n";

enum {
	OPT_JSON = CHAR_MAX + 1,
	OPT_MEASURE,
	OPT_REPEAT,
	OPT_SIZE,
	OPT_SYSFS_ROOT,
	OPT_THREADS,
};

static const struct option longopts[] = {
	{ "help",       no_argument,       NULL, 'h' },
	{ "json",       no_argument,       NULL, OPT_JSON },
	{ "measure",    no_argument,       NULL, OPT_MEASURE },
	{ "quiet",      no_argument,       NULL, 'q' },
	{ "repeat",     required_argument, NULL, OPT_REPEAT },
	{ "size",       required_argument, NULL, OPT_SIZE },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
	{ "threads",    required_argument, NULL, OPT_THREADS },
	{ "verbose",    no_argument,       NULL, 'v' },
	{ "version",    no_argument,       NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* ---- main --------------------------------------------------------------------------------- */

static void missing(const char *path, int err, void *arg)
{
	(void)arg;
	if (err == ENODEV)
		cli_info("'%s': not a regular file", path);
	else
		cli_info("'%s': %s", path, strerror(err));
}

static void progress(int cpu_node, int mem_node, const char *step, void *arg)
{
	(void)arg;
	if (cpu_node < 0)
		fprintf(stderr, "\r\033[K%s: memory node %d: %s the buffer", cli_progname(), mem_node,
			step);
	else
		fprintf(stderr, "\r\033[K%s: CPU node %d, memory node %d: %s", cli_progname(),
			cpu_node, mem_node, step);
	cli_progress_shown();
}

int main(int argc, char **argv)
{
	const char *root = "/", *size_arg = NULL;
	int json = 0, measure = 0, root_given = 0, c, ret = SLAB_EXIT_OK;
	uint64_t size = 0, repeat = 5, threads = 0;
	int size_given = 0, repeat_given = 0, threads_given = 0;
	struct slab_topo *t;
	const struct slab_topo_info *ti;
	struct slab_membench_result res;
	struct json j;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the tool as messages do */
	memset(&res, 0, sizeof(res));
	while ((c = getopt_long(argc, argv, "hqvV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return cli_help(usage_text, help_text);
		case OPT_JSON:
			json = 1;
			break;
		case OPT_MEASURE:
			measure = 1;
			break;
		case 'q':
			cli_verbosity = 0;
			break;
		case OPT_REPEAT:
			if (cli_parse_u64(optarg, 1, 1000, &repeat) < 0)
				return cli_usage_error("invalid --repeat '%s' (1 to 1000)", optarg);
			repeat_given = 1;
			break;
		case OPT_SIZE:
			/* The chase indexes lines with 32 bits: 256 GiB at most. */
			if (cli_parse_size(optarg, &size) < 0 || size < (64u << 10) ||
			    size > (UINT64_C(256) << 30))
				return cli_usage_error("invalid --size '%s' (64K to 256G)", optarg);
			size_given = 1;
			size_arg = optarg;
			break;
		case OPT_SYSFS_ROOT:
			root = optarg;
			root_given = 1;
			break;
		case OPT_THREADS:
			if (cli_parse_u64(optarg, 1, 4096, &threads) < 0)
				return cli_usage_error("invalid --threads '%s' (1 to 4096)", optarg);
			threads_given = 1;
			break;
		case 'v':
			cli_verbosity = 2;
			break;
		case 'V':
			return cli_version();
		default:
			return cli_try_help();
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!measure && (size_given || repeat_given || threads_given))
		return cli_usage_error("--size, --repeat and --threads go with --measure");
	if (measure && root_given) {
		char *real = realpath(root, NULL);
		int here = real != NULL && strcmp(real, "/") == 0;

		free(real);
		if (!here)
			return cli_usage_error("--measure measures this machine: it does not go with "
					       "--sysfs-root");
	}
	if (size_given && threads_given && size < threads * 4096) {
		char need[32];

		return cli_usage_error("--size %s is too small for %llu threads: 4K each, %s in all",
				       size_arg, (unsigned long long)threads,
				       cli_human_size(threads * 4096, need, sizeof(need)));
	}

	t = slab_topo_new();
	if (t == NULL) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	if (cli_verbosity >= 2)
		slab_topo_set_missing(t, missing, NULL);
	if (slab_topo_read(t, root) < 0) {
		cli_error("%s", slab_topo_error(t));
		slab_topo_close(t);
		return SLAB_EXIT_FAIL;
	}
	ti = slab_topo_info(t);

	if (!json) {
		numa_print_nodes(ti);
		numa_print_cpu(ti);
		numa_print_pci(ti);
		numa_print_advice(ti);
		cli_flush_stdout();     /* the layout shows while the measuring runs */
	}
	if (measure) {
		struct slab_membench_opts o;
		int progress_on = cli_progress_wanted();

		memset(&o, 0, sizeof(o));
		o.size = size;
		o.threads = (unsigned)threads;
		o.repeat = (unsigned)repeat;
		o.progress = progress_on ? progress : NULL;
		if (slab_membench_run(ti, &o, &res) < 0) {
			if (progress_on)
				cli_progress_clear();
			cli_error("--measure: %s", slab_membench_error(&res));
			ret = SLAB_EXIT_FAIL;
		} else if (progress_on) {
			cli_progress_clear();
		}
	}
	if (json) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		numa_json_topology(&j, ti);
		if (measure && res.cells != NULL)
			numa_json_measure(&j, ti, &res);
		json_object_end(&j);
		json_finish(&j);
	} else if (measure && res.cells != NULL) {
		numa_print_measure(ti, &res);
	}
	slab_membench_free(&res);
	slab_topo_close(t);
	if (numa_report_out_of_memory()) {
		cli_error("out of memory: the report above is incomplete");
		ret = SLAB_EXIT_FAIL;
	}
	if (cli_close_stdout() < 0)
		ret = SLAB_EXIT_FAIL;
	return ret;
}
