/* slab: the front of the tools, as git is of its commands: `slab TOOL ARGS...` runs
 * slab-TOOL ARGS..., found beside this program first, then on PATH. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
"Usage: slab TOOL [ARGS...]\n"
"       slab help [TOOL]\n"
"       slab --version\n";

/* The help: head, the list of tools, tail. */
static const char help_head[] =
"Run one of slab's tools: 'slab TOOL ARGS...' is 'slab-TOOL ARGS...'.\n"
"\n"
"Tools:\n";

static const char help_tail[] =
"\n"
"'slab help TOOL' shows the tool's --help.\n"
"\n"
"Options:\n"
"  -h, --help           this help\n"
"  -V, --version        the version\n";

/* The tools, as their man pages' NAME lines say, shorter. */
static const struct tool {
	const char *name, *summary;
} tools[] = {
	{ "pack",         "pack tar / WebDataset shards into one page-aligned .slab file" },
	{ "inspect",      "read .slab files: summary, list, extract, verify, export to tar" },
	{ "shuffle-plan", "sample orderings for one epoch of a .slab dataset, per rank" },
	{ "prefetch",     "page cache of .slab files; follow a plan; stream samples" },
	{ "bench-tlb",    "memory access cost against working set, by page size" },
	{ "numa-probe",   "NUMA, memory and PCIe layout; where to run loaders" },
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct option longopts[] = {
	{ "help",    no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static int help(void)
{
	char list[1024], *text;
	size_t off = 0;
	int ret;

	/* The longest name (shuffle-plan) and two blanks: a summary of 63 columns fits 80. */
	for (size_t i = 0; i < NTOOLS; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "  %-14s %s\n",
					tools[i].name, tools[i].summary);
	if (asprintf(&text, "%s%s%s", help_head, list, help_tail) < 0) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	ret = cli_help(usage_text, text);
	free(text);
	return ret;
}

static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

/* 1: an executable regular file at path; -1: a file there that cannot be run (errno says
 * why); 0: nothing there. */
static int runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return 0;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
		return -1;
	}
	return access(path, X_OK) == 0 ? 1 : -1;
}

/*
 * execvp(name, argv), but telling what execvp's errno cannot: whether a file of that name was
 * found on PATH at all. A tool there that does not run with ENOENT (a script whose interpreter
 * is missing) was found, and is not "not installed". As execvp: each folder of PATH in turn
 * (an empty one the current folder; no PATH, /bin:/usr/bin), the first executable file run, a
 * file that is not executable passed over but remembered. Only returns on failure: 1 when a
 * file was found (path its path, errno why it does not run), else 0 (errno ENOENT).
 */
static int run_from_path(const char *name, char **argv, char *path, size_t size)
{
	const char *dirs = getenv("PATH"), *d, *end;
	char file[PATH_MAX + 64];
	int r, found = 0, err = ENOENT;

	if (dirs == NULL)
		dirs = "/bin:/usr/bin";
	for (d = dirs;; d = end + 1) {
		end = strchr(d, ':');
		if (end == NULL)
			end = d + strlen(d);
		if ((size_t)(end - d) + strlen(name) + 2 <= sizeof(file)) {
			snprintf(file, sizeof(file), "%.*s%s%s", (int)(end - d), d,
				 end == d ? "" : "/", name);
			if ((r = runnable(file)) > 0) {
				snprintf(path, size, "%s", file);
				execv(file, argv);
				return 1;
			}
			/* not executable: the next folder's may be; else this is why */
			if (r < 0 && !found) {
				found = 1;
				err = errno;
				snprintf(path, size, "%s", file);
			}
		}
		if (*end == '\0')
			break;
	}
	errno = err;
	return found;
}

/*
 * Replace this process with the tool, argv[0] the name it was found by (slab-pack, or pack in
 * a build tree), args after it. Looked for beside this program (/proc/self/exe's folder: an
 * installed front runs the tools installed with it, whatever PATH says), then on PATH. Only
 * returns on failure: the exit code.
 */
static int run_tool(const struct tool *t, char **args, int nargs)
{
	char self[PATH_MAX], path[PATH_MAX + 64], name[64];
	char **argv = calloc((size_t)nargs + 2, sizeof(*argv));
	ssize_t len;
	int err, r, found = 0;

	if (argv == NULL) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	snprintf(name, sizeof(name), "slab-%s", t->name);
	memcpy(argv + 1, args, (size_t)nargs * sizeof(*argv));
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		char *slash;

		self[len] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/%s", self, name);
			if ((r = runnable(path)) != 0) {
				argv[0] = name;
				if (r > 0)
					execv(path, argv);
				found = 1;
				goto fail;
			}
			/* The build tree names the tools pack, inspect ...: it is the build tree
			 * when libslab-tools.a (built there, never installed) is beside bin/, and
			 * only then is a short name beside us one of ours, not some other pack. */
			snprintf(path, sizeof(path), "%s/../libslab-tools.a", self);
			if (access(path, F_OK) == 0) {
				snprintf(path, sizeof(path), "%s/%s", self, t->name);
				if ((r = runnable(path)) != 0) {
					argv[0] = (char *)t->name;
					if (r > 0)
						execv(path, argv);
					found = 1;
					goto fail;
				}
			}
		}
	}
	argv[0] = name;
	found = run_from_path(name, argv, path, sizeof(path));
fail:
	err = errno;
	free(argv);
	/* A tool found that does not run (not executable, or a bad interpreter: ENOENT from
	 * execv of a file that exists) is 126, as a shell says, not "not installed". */
	if (err == ENOENT && !found) {
		cli_error("'%s' is not installed (neither beside '%s' nor on PATH)", name,
			  len > 0 ? self : cli_progname());
		return 127;
	}
	cli_error("'%s': %s", path, strerror(err));
	return 126;
}

static int not_a_tool(const char *name)
{
	cli_error("'%s' is not a slab tool; see '%s help'", name, cli_progname());
	return SLAB_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct tool *t;
	int c;

	cli_init(argv[0]);
	argv[0] = (char *)cli_progname();      /* getopt names the front as messages do */
	/* Options end at the tool's name: what follows is the tool's. */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return help();
		case 'V':
			return cli_version();
		default:
			return cli_try_help();
		}
	}
	if (optind == argc) {
		fputs(usage_text, stderr);
		return cli_try_help();
	}
	if (strcmp(argv[optind], "help") == 0) {
		static char *want_help[] = { "--help" };

		if (argc - optind == 1)
			return help();
		if (argc - optind > 2)
			return cli_usage_error("help takes one tool, not '%s'", argv[optind + 2]);
		t = find_tool(argv[optind + 1]);
		return t ? run_tool(t, want_help, 1) : not_a_tool(argv[optind + 1]);
	}
	t = find_tool(argv[optind]);
	return t ? run_tool(t, argv + optind + 1, argc - optind - 1) : not_a_tool(argv[optind]);
}
