/* cli.c: what every tool shares in front of the library: messages prefixed with the tool's
 * name, strict size and number parsing, human sizes, the clock, and the close of stdout. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_verbosity = 1;

static const char *progname = "slab";

void
cli_init(const char *name)
{
	const char *slash;

	if (name == NULL || *name == '\0')
		return;
	/* argv[0] may be "build/bin/pack"; messages should say "pack:". */
	slash = strrchr(name, '/');
	if (slash != NULL && slash[1] != '\0')
		name = slash + 1;
	progname = name;
}

const char *
cli_progname(void)
{
	return progname;
}

static void vmessage(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void
vmessage(const char *fmt, va_list ap)
{
	/* Formatted whole, then written at once: stderr is unbuffered, and lines from tools
	 * running side by side in a pipeline should not interleave mid-line. */
	char small[1024], *buf = small;
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= 0 && (size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL)
			vsnprintf(buf, (size_t)n + 1, fmt, ap2);
		else
			buf = small;    /* truncated beats nothing */
	}
	va_end(ap2);
	if (n < 0)
		return;
	fprintf(stderr, "%s: %s\n", progname, buf);
	if (buf != small)
		free(buf);
}

void
cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void
cli_info(const char *fmt, ...)
{
	va_list ap;

	if (cli_verbosity < 2)
		return;
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

int
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	return cli_try_help();
}

/*
 * Leading decimal digits of s into *out; the end in *end. Done by hand because strtoull
 * accepts leading blanks, a sign (and negates "-1" into a huge value) and sets errno
 * differently across libcs. -1 when there is no digit or the value overflows.
 */
static int
parse_digits(const char *s, const char **end, uint64_t *out)
{
	uint64_t n = 0;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	if (p == s)
		return -1;
	*end = p;
	*out = n;
	return 0;
}

int
cli_parse_size(const char *s, uint64_t *out)
{
	const char *p;
	uint64_t n;
	int shift = 0;

	if (s == NULL || parse_digits(s, &p, &n) != 0)
		return -1;
	switch (*p) {
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	case 'T': case 't': shift = 40; break;
	}
	if (shift != 0) {
		p++;
		/* "iB" only after a multiplier: "4096iB" means nothing. */
		if (strcmp(p, "iB") == 0)
			p += 2;
	}
	if (strcmp(p, "B") == 0)
		p++;
	if (*p != '\0')
		return -1;
	if (n > UINT64_MAX >> shift)
		return -1;
	*out = n << shift;
	return 0;
}

int
cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *p;
	uint64_t n;

	if (s == NULL || parse_digits(s, &p, &n) != 0 || *p != '\0')
		return -1;
	if (n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

const char *
cli_human_size(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	const size_t nunits = sizeof(units) / sizeof(units[0]);
	double v;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, len, "%u B", (unsigned)n);
		return buf;
	}
	v = (double)n / 1024;
	/* Move up while the value would print as 1024.0 or more, so 1048575 is "1.0 MiB". */
	while (v >= 1023.95 && u + 1 < nunits) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

double
cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
cli_progress_wanted(void)
{
	return isatty(STDERR_FILENO) && cli_verbosity >= 1;
}

/*
 * After the model of util-linux close_stdout(): a full disk or a failing NFS server shows up
 * only at flush or close, and a tool that exits 0 then has lost data silently. EPIPE is not an
 * error: the reader ("| head") has had enough. Call once, at the very end.
 */
int
cli_close_stdout(void)
{
	int entry_errno = errno;
	int failed = 0, err = 0;

	errno = 0;
	if (fflush(stdout) != 0) {
		failed = 1;
		err = errno;
	} else if (ferror(stdout)) {
		/*
		 * An earlier write failed and glibc dropped its buffer, so the cause is gone.
		 * Like util-linux, trust a stale EPIPE: the usual cause is a reader gone away
		 * while SIGPIPE is ignored.
		 */
		failed = 1;
		err = entry_errno == EPIPE ? EPIPE : 0;
	}
	errno = 0;
	/* EBADF with nothing left to write: stdout was closed from the start (">&-"). */
	if (fclose(stdout) != 0 && !failed && errno != EBADF) {
		failed = 1;
		err = errno;
	}
	if (!failed || err == EPIPE)
		return 0;
	if (err != 0)
		cli_error("write error: %s", strerror(err));
	else
		cli_error("write error");
	return -1;
}

/* ---- outputs that appear only when complete ------------------------------------------- */

static char *tmp_path;          /* the temporary file of the one open output */
static int tmp_at_exit;         /* remove_tmp_at_exit() is registered */

static void
on_signal(int sig)
{
	if (tmp_path != NULL)
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* libarchive calls exit(1) where an allocation fails inside it: the temporary file must
 * not outlive that exit either. */
static void
remove_tmp_at_exit(void)
{
	if (tmp_path != NULL)
		unlink(tmp_path);
}

static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);
}

int
cli_output_open(struct cli_output *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash != NULL ? (size_t)(slash - path + 1) : 0;
	struct stat st;
	char *tmp;
	mode_t mask;
	int fd;

	o->path = path;
	o->fd = -1;
	o->in_place = 1;
	catch_signals();
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			cli_error("'%s': is a directory", path);
			return -1;
		}
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			cli_error("'%s': %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	o->in_place = 0;
	if (!tmp_at_exit && atexit(remove_tmp_at_exit) == 0)
		tmp_at_exit = 1;
	if (asprintf(&tmp, "%.*s.%s.tmp.XXXXXX", (int)dirlen, path,
		     slash != NULL ? slash + 1 : path) < 0) {
		cli_error("out of memory");
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		cli_error("'%s': cannot create a file there: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	tmp_path = tmp;
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0) {
		cli_error("'%s': %s", tmp, strerror(errno));
		o->fd = fd;
		cli_output_abort(o);
		return -1;
	}
	o->fd = fd;
	return 0;
}

int
cli_output_commit(struct cli_output *o)
{
	const char *slash = strrchr(o->path, '/');
	char *dir;
	int fd = o->fd, dfd;

	o->fd = -1;
	if (o->in_place) {
		if (fd != STDOUT_FILENO && close(fd) < 0) {
			cli_error("'%s': close: %s", o->path, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		cli_error("'%s': %s", o->path, strerror(errno));
		close(fd);
		cli_output_abort(o);
		return -1;
	}
	if (rename(tmp_path, o->path) < 0) {
		cli_error("'%s': rename: %s", o->path, strerror(errno));
		cli_output_abort(o);
		return -1;
	}
	free(tmp_path);
	tmp_path = NULL;
	/* The rename itself must reach the disk too. */
	dir = slash != NULL ? strndup(o->path, (size_t)(slash - o->path + 1)) : strdup(".");
	if (dir != NULL) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	return 0;
}

void
cli_output_abort(struct cli_output *o)
{
	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (tmp_path != NULL) {
		unlink(tmp_path);
		free(tmp_path);
		tmp_path = NULL;
	}
}

int
cli_help(const char *usage, const char *help)
{
	fputs(usage, stdout);
	fputs(help, stdout);
	return cli_close_stdout() < 0 ? EXIT_FAIL : EXIT_OK;
}

int
cli_version(void)
{
	printf("%s (slab) %s\n", progname, SLAB_VERSION);
	return cli_close_stdout() < 0 ? EXIT_FAIL : EXIT_OK;
}

int
cli_try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	return EXIT_USAGE;
}
