/* cli.c: what every tool shares in front of the library: messages prefixed with the tool's
 * name, strict size and number parsing, human sizes, the clock, and the close of stdout. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "io.h"
#include "net.h"
#include "remote.h"

int cli_verbosity = 1;

static const char *progname = "slab";
static int progname_given;      /* from argv[0], not the default above */

/*
 * A tool started with fd 0, 1 or 2 closed ("2>&-", "<&-") would hand that number to the
 * first file it opens: a warning would then land in the output file, or the output would be
 * read as the input. Like gnulib's stdopen, put /dev/null there, opened in the other
 * direction, so the descriptor is taken but using it fails as it did when it was closed
 * (writes to a closed stdout still report "Bad file descriptor").
 */
static void std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		nfd = open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
		if (nfd < 0)
			_exit(SLAB_EXIT_FAIL);       /* no /dev/null: nothing safe is left to do */
		if (nfd != fd) {
			/* Not the lowest free number: only when a lower one was closed too, which
			 * the loop has filled already. */
			close(nfd);
			_exit(SLAB_EXIT_FAIL);
		}
	}
}

/*
 * stdout's writes go through slab_write_chunked(), the loop of every other writer of slab
 * (--get, --tar, the record streams): a pipe whose reader made it non-blocking (an event loop
 * sharing its file description) refuses a write with EAGAIN when full, which glibc's own
 * stream reports as a write error after 64 KiB; the loop waits for the reader instead. A short
 * count is a failure, with errno set: glibc marks the stream's error as for its own writes.
 */
static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	uint64_t done;

	(void)cookie;
	slab_write_chunked(STDOUT_FILENO, buf, len, 1u << 30, &done);
	return (ssize_t)done;
}

static int stdout_close(void *cookie)
{
	(void)cookie;
	return close(STDOUT_FILENO);
}

/* Buffered as glibc buffers its own stdout: by lines on a terminal, else fully (a cookie
 * stream's default). Without memory for the stream, stdout stays glibc's. Once a process. */
static void stdout_waiting(void)
{
	static const cookie_io_functions_t io = { .write = stdout_write, .close = stdout_close };
	static FILE *f;

	if (f != NULL)
		return;
	f = fopencookie(NULL, "w", io);
	if (f == NULL)
		return;
	if (isatty(STDOUT_FILENO))
		setvbuf(f, NULL, _IOLBF, 0);    /* allocates nothing: cannot fail */
	stdout = f;
}

/*
 * A walk of a plan (prefetch --plan, its frames stream) keeps a descriptor on each file of
 * the dataset for its advice, and a dataset may be thousands of shards: past the soft limit
 * (1024 on most systems) it failed with "Too many open files" though the hard limit allows
 * far more. The soft limit goes up to the hard one, as the Go runtime does at start; nothing
 * here uses select(2), whose sets stop at 1024.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void cli_init(const char *name)
{
	const char *slash;

	std_fds_open();
	stdout_waiting();
	raise_nofile();
	if (name == NULL || *name == '\0')
		return;
	/* argv[0] may be "build/bin/pack"; messages should say "pack:". */
	slash = strrchr(name, '/');
	if (slash != NULL && slash[1] != '\0')
		name = slash + 1;
	progname = name;
	progname_given = 1;
}

const char *cli_progname(void)
{
	return progname;
}

/* ---- text that is safe to show ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 when the bytes there are
 * not one or must not be shown as they are: overlong forms, surrogates and code points past
 * U+10FFFF count as invalid, and so do those of cli_unsafe_codepoint(). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	cp = p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cli_unsafe_codepoint(cp))
		return 0;
	return len;
}

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes), or minus the length of its
 * longest ill-formed start (Unicode's "maximal subpart"), which is replaced by one U+FFFD.
 * Overlong forms, surrogates and values past U+10FFFF are ill-formed (RFC 3629).
 */
int cli_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int need, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 1;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 2;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 3;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return -1;
	}
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= n || s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* The code point of the well-formed sequence of k bytes at s. */
uint32_t cli_utf8_value(const unsigned char *s, int k)
{
	uint32_t cp = s[0] & (0x7f >> k);

	for (int i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

int cli_unsafe_codepoint(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape for byte c that cannot be shown as it is, into out (room for 5 bytes). */
static size_t escape_byte(unsigned char c, char *out)
{
	static const char named[] = "\\a\\b\\t\\n\\v\\f\\r";

	if (c == '\\') {
		memcpy(out, "\\\\", 2);
		return 2;
	}
	if (c >= '\a' && c <= '\r') {
		memcpy(out, named + 2 * (c - '\a'), 2);
		return 2;
	}
	snprintf(out, 5, "\\x%02x", c);
	return 4;
}

/*
 * Write len bytes of s to f (or count them when f is NULL) with every byte that could split a
 * line or drive a terminal escaped C-style: backslash as \\, \a \b \t \n \v \f \r by
 * name, other control bytes (C0, DEL, C1), the bytes of the bidirectional controls and bytes
 * that are not UTF-8 as \xHH. Printable ASCII and other valid UTF-8 pass unchanged. Returns the length of the escaped text.
 */
static size_t escape_to(FILE *f, char *buf, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0, i = 0;

	while (i < len) {
		size_t run = i, k;
		char esc[5];

		/* The longest run that needs nothing, written at once. */
		while (run < len) {
			if (p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\')
				run++;
			else if (p[run] >= 0x80 && (k = utf8_len(p + run, len - run)) != 0)
				run += k;
			else
				break;
		}
		if (run > i) {
			if (f)
				fwrite(p + i, 1, run - i, f);
			if (buf)
				memcpy(buf + out, p + i, run - i);
			out += run - i;
			i = run;
		}
		if (i == len)
			break;
		k = escape_byte(p[i++], esc);
		if (f)
			fwrite(esc, 1, k, f);
		if (buf)
			memcpy(buf + out, esc, k);
		out += k;
	}
	return out;
}

size_t cli_fput_escaped(const char *s, size_t len, FILE *f)
{
	return escape_to(f, NULL, s, len);
}

int cli_text_shown_safely(const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t k;

	for (size_t i = 0; i < len; i += k) {
		k = 1;
		if ((p[i] >= 0x20 && p[i] < 0x7f) || p[i] == '\t' || p[i] == '\n')
			continue;
		if (p[i] < 0x80 || (k = utf8_len(p + i, len - i)) == 0)
			return 0;
	}
	return 1;
}

/* fmt formatted whole (in a small buffer, else one from the heap: truncated to the small one
 * when there is no memory, which beats nothing), then escaped to f (NULL: only counted). */
static size_t vescaped(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static size_t vescaped(FILE *f, const char *fmt, va_list ap)
{
	char small[1024], *buf = small;
	va_list ap2;
	size_t out;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= 0 && (size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL)
			vsnprintf(buf, (size_t)n + 1, fmt, ap2);
		else
			buf = small;
	}
	va_end(ap2);
	if (n < 0)
		return 0;
	if ((size_t)n >= sizeof(small) && buf == small)
		n = sizeof(small) - 1;
	out = escape_to(f, NULL, buf, (size_t)n);
	if (buf != small)
		free(buf);
	return out;
}

size_t cli_printf_escaped(FILE *f, const char *fmt, ...)
{
	va_list ap;
	size_t out;

	va_start(ap, fmt);
	out = vescaped(f, fmt, ap);
	va_end(ap);
	return out;
}

unsigned char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t cap = 0, n = 0, got;
	int failed;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			unsigned char *q = realloc(p, cap = cap ? cap * 2 : 1 << 16);

			if (!q) {
				free(p);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			p = q;
		}
		got = fread(p + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	failed = ferror(f);
	fclose(f);
	if (failed) {
		free(p);
		errno = EIO;
		return NULL;
	}
	*len = n;
	return p;
}

/* ---- messages ---------------------------------------------------------------------------- */

static void vmessage(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A progress line is on stderr (cli_progress_shown()). Atomic: an upload's -v lines come
 * from its own threads. */
static atomic_int progress_shown;

void cli_progress_shown(void)
{
	atomic_store(&progress_shown, 1);
}

void cli_progress_clear(void)
{
	if (atomic_exchange(&progress_shown, 0))
		fputs("\r\033[K", stderr);
}

static void vmessage(const char *fmt, va_list ap)
{
	int clear = atomic_exchange(&progress_shown, 0);
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	FILE *f = m != NULL ? m : stderr;       /* no memory: piece by piece beats nothing */

	/* Formatted whole, then written at once: stderr is unbuffered (each fprintf, each
	 * escaped run a write(2) of its own), and the lines of tools running side by side (a
	 * pack per shard under xargs -P) or of an upload's threads should not interleave
	 * mid-line. Names in messages come from files and archives: escaped, they can neither
	 * forge a line nor reach the terminal as control sequences. */
	if (clear)
		fputs("\r\033[K", f);
	fprintf(f, "%s: ", progname);
	vescaped(f, fmt, ap);
	fputc('\n', f);
	if (m != NULL && fclose(m) == 0)
		fwrite(line, 1, len, stderr);
	free(line);
}

/* The masked names made so far: kept (and reachable) until the process ends, so that a
 * name can be used as freely as the argument it stands for. */
struct shown {
	struct shown *next;
	char *name;                     /* as given */
	char text[];                    /* masked */
};
static struct shown *shown_list;
static pthread_mutex_t shown_lock = PTHREAD_MUTEX_INITIALIZER;

const char *cli_shown(const char *name)
{
	size_t len;
	struct shown *sh;
	const char *ret;

	if (!slab_net_is_url(name))
		return name;
	pthread_mutex_lock(&shown_lock);
	for (sh = shown_list; sh && strcmp(sh->name, name) != 0; sh = sh->next)
		;
	if (!sh) {
		/* Masking adds at most three bytes a query parameter. */
		len = 4 * strlen(name) + 4;
		sh = malloc(sizeof(*sh) + len);
		if (sh && !(sh->name = strdup(name))) {
			free(sh);
			sh = NULL;
		}
		if (sh) {
			slab_net_mask(sh->text, len, name);
			sh->next = shown_list;
			shown_list = sh;
		}
	}
	ret = sh ? sh->text : "(a URL)";
	pthread_mutex_unlock(&shown_lock);
	return ret;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void cli_info(const char *fmt, ...)
{
	va_list ap;

	if (cli_verbosity < 2)
		return;
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
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
static int parse_digits(const char *s, const char **end, uint64_t *out)
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

int cli_parse_size(const char *s, uint64_t *out)
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

int cli_split_list(const char *list, char ***items, size_t *n)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		char **k;

		if (len == 0)
			return -1;
		k = realloc(*items, (*n + 1) * sizeof(*k));
		if (!k)
			return SLAB_ERR_NOMEM;
		*items = k;
		k[*n] = strndup(p, len);
		if (!k[*n])
			return SLAB_ERR_NOMEM;
		(*n)++;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

int cli_fields_option(const char *arg, char ***items, size_t *n)
{
	int r = cli_split_list(arg, items, n);

	if (r == SLAB_ERR_NOMEM) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	if (r < 0)
		return cli_usage_error("invalid --fields list '%s' (names separated by commas, none empty)",
				       arg);
	return 0;
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
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

int cli_parse_decimal(const char *s, double min, double max, double *out)
{
	const char *dot;
	char *end;
	double d;

	if (s == NULL || !*s || s[strspn(s, "0123456789.")] || !strpbrk(s, "0123456789"))
		return -1;
	if ((dot = strchr(s, '.')) && strchr(dot + 1, '.'))
		return -1;
	d = strtod(s, &end);
	if (*end || !(d > 0 && d >= min && d <= max))
		return -1;
	*out = d;
	return 0;
}

/* -v: each request on stderr; the library's lines hold no credential. */
static void remote_log(void *arg, const char *line)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

	(void)arg;
	pthread_mutex_lock(&mu);        /* lines from the fetchers' threads, one at a time */
	cli_info("%s", line);
	pthread_mutex_unlock(&mu);
}

struct slab_remote_options cli_remote = { .size = sizeof(struct slab_remote_options),
					  .log = remote_log };

int cli_remote_option(int opt, const char *arg)
{
	char why[256], shown[512];
	uint64_t v;
	double d;

	switch (opt) {
	case CLI_OPT_CACHE_DIR:
		if (!*arg)
			return cli_usage_error("empty --cache-dir");
		cli_remote.cache_dir = arg;
		return 1;
	case CLI_OPT_S3_ENDPOINT:
		if (slab_net_check_endpoint(arg, why, sizeof(why)) < 0) {
			slab_net_mask(shown, sizeof(shown), arg);
			return cli_usage_error("--s3-endpoint '%s': %s", shown, why);
		}
		cli_remote.s3_endpoint = arg;
		return 1;
	case CLI_OPT_S3_ADDRESSING:
		if (strcmp(arg, "path") == 0)
			cli_remote.addressing = 1;
		else if (strcmp(arg, "virtual") == 0)
			cli_remote.addressing = 2;
		else if (strcmp(arg, "auto") == 0)
			cli_remote.addressing = 0;
		else
			return cli_usage_error("--s3-addressing '%s': not path, virtual or auto", arg);
		return 1;
	case CLI_OPT_PROFILE:
		cli_remote.profile = arg;
		return 1;
	case CLI_OPT_NO_SIGN:
		cli_remote.anonymous = 1;
		return 1;
	case CLI_OPT_CONNECTIONS:
		if (cli_parse_u64(arg, 1, 256, &v) < 0)
			return cli_usage_error("--connections '%s': not a number from 1 to 256", arg);
		cli_remote.connections = (unsigned)v;
		return 1;
	case CLI_OPT_RETRIES:
		if (cli_parse_u64(arg, 0, 100, &v) < 0)
			return cli_usage_error("--retries '%s': not a number from 0 to 100", arg);
		cli_remote.retries = v ? (int)v : -1;
		return 1;
	case CLI_OPT_TIMEOUT:
		if (cli_parse_decimal(arg, 0, SLAB_NET_MAX_TIMEOUT, &d) < 0)
			return cli_usage_error("--timeout '%s': not a number of seconds above 0 and at most 604800 (a week)",
					       arg);
		cli_remote.timeout = d;
		return 1;
	}
	return 0;
}

int cli_parse_rgb(const char *s, uint8_t rgb[3])
{
	uint64_t v[3];
	char part[8];

	for (int i = 0; i < 3; i++) {
		const char *comma = i < 2 ? strchr(s, ',') : s + strlen(s);
		size_t n = comma ? (size_t)(comma - s) : 0;

		if (!comma || n == 0 || n >= sizeof(part))
			return -1;
		memcpy(part, s, n);
		part[n] = '\0';
		if (cli_parse_u64(part, 0, 255, &v[i]) < 0)
			return -1;
		s = comma + (i < 2);
	}
	for (int i = 0; i < 3; i++)
		rgb[i] = (uint8_t)v[i];
	return 0;
}

const char *cli_human_size(uint64_t n, char *buf, size_t len)
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

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_progress_wanted(void)
{
	return isatty(STDERR_FILENO) && cli_verbosity >= 1;
}

/* The errno of the first failed cli_flush_stdout(): glibc drops the buffer of a failed
 * write, and with it the cause, before cli_close_stdout() could see it. */
static int stdout_errno;

int cli_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) == 0)
		return 0;
	if (!stdout_errno)
		stdout_errno = errno;
	return -1;
}

/*
 * After the model of util-linux close_stdout(): a full disk or a failing NFS server shows up
 * only at flush or close, and a tool that exits 0 then has lost data silently. EPIPE is not an
 * error: the reader ("| head") has had enough. Call once, at the very end.
 */
int cli_close_stdout(void)
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
		err = entry_errno == EPIPE ? EPIPE : stdout_errno;
	}
	errno = 0;
	/* EBADF with nothing left to write: stdout was closed from the start (">&-"). */
	if (fclose(stdout) != 0 && !failed && errno != EBADF) {
		failed = 1;
		err = errno;
	}
	if (!failed || err == EPIPE)
		return 0;
	cli_write_error(NULL, err);
	return -1;
}

void cli_write_error(const char *path, int err)
{
	int named = path != NULL && strcmp(path, "-") != 0;

	cli_error("%s%s%swrite error%s%s", named ? "'" : "", named ? cli_shown(path) : "", named ? "': " : "",
		  err ? ": " : "", err ? strerror(err) : "");
}

/* ---- outputs that appear only when complete ------------------------------------------- */

/* The temporary file of the one open output: read by the signal handler. */
static char *volatile tmp_path;
static struct sigaction saved_action[65];
static volatile sig_atomic_t signals_caught;
static int tmp_at_exit;         /* remove_tmp_at_exit() is registered */

/* An output at a URL: the handler writes the signal's number into this pipe (made once,
 * never closed: a handler in another thread may write at any time), and the upload's
 * watcher thread, reading it, cancels the upload (an S3 multipart upload is aborted on
 * the server) before the process dies of that signal. Armed while the upload runs; a second
 * signal, or a fault, ends the process at once. */
static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t cancel_armed;

static int fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
}

static void on_signal(int sig)
{
	char *tmp = tmp_path;

	if (cancel_armed && !fault_signal(sig) && sig > 0 && sig < 65) {
		unsigned char b = (unsigned char)sig;
		int saved = errno;

		cancel_armed = 0;
		if (write(cancel_pipe[1], &b, 1) == 1) {
			errno = saved;
			return;
		}
		errno = saved;
	}

	if (tmp != NULL)
		unlink(tmp);
	/* Die of the signal as we would have: the action we found (the default, or the
	 * sanitizer's for a fault). A fault signal returns into the faulting instruction,
	 * which faults again into that action; any other is delivered by the raise once this
	 * handler returns. */
	if (sig > 0 && sig < 65)
		sigaction(sig, &saved_action[sig], NULL);
	raise(sig);
}

/* libarchive calls exit(1) where an allocation fails inside it: the temporary file must
 * not outlive that exit either. */
static void remove_tmp_at_exit(void)
{
	char *tmp = tmp_path;

	if (tmp != NULL)
		unlink(tmp);
}

/*
 * Every signal whose default action ends the process removes the temporary file first; only
 * SIGKILL (which nothing can catch) can leave one behind. A signal that was ignored when we
 * started (nohup, a shell's background job) stays ignored. SIGXFSZ is ignored so that a
 * file-size limit is a write error like a full disk.
 */
static void catch_signals(void)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1,
		SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
#ifdef SIGSTKFLT
		SIGSTKFLT,
#endif
		SIGXCPU, SIGVTALRM, SIGPROF, SIGIO,
#ifdef SIGPWR
		SIGPWR,
#endif
		SIGSYS,
	};
	struct sigaction sa;

	if (signals_caught)
		return;
	signals_caught = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);        /* one handler at a time */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int sig = sigs[i];

		if (sigaction(sig, NULL, &saved_action[sig]) < 0 ||
		    saved_action[sig].sa_handler == SIG_IGN)
			continue;
		sigaction(sig, &sa, NULL);
	}
	for (int sig = SIGRTMIN; sig <= SIGRTMAX && sig < 65; sig++) {
		if (sigaction(sig, NULL, &saved_action[sig]) < 0 ||
		    saved_action[sig].sa_handler == SIG_IGN)
			continue;
		sigaction(sig, &sa, NULL);
	}
	signal(SIGXFSZ, SIG_IGN);
}

/* The descriptor a path names when it is one of this process's own: /dev/stdin, /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N with our PID. Else -1. */
static int fd_alias(const char *p)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	char own[64];
	uint64_t n;
	const char *rest = NULL;

	for (int i = 0; i < 3; i++)
		if (strcmp(p, std[i]) == 0)
			return i;
	snprintf(own, sizeof(own), "/proc/%ld/fd/", (long)getpid());
	if (strncmp(p, "/dev/fd/", 8) == 0)
		rest = p + 8;
	else if (strncmp(p, "/proc/self/fd/", 14) == 0)
		rest = p + 14;
	else if (strncmp(p, own, strlen(own)) == 0)
		rest = p + strlen(own);
	if (rest == NULL || cli_parse_u64(rest, 0, INT_MAX, &n) < 0)
		return -1;
	return (int)n;
}

/*
 * Where writing to path really goes. Symbolic links are followed one at a time, as the kernel
 * would, so that a link is never replaced, only its target (as cp does); a link to one of our
 * own descriptors (/dev/stdout -> /proc/self/fd/1) means that descriptor. 1 with *fd; 0 with
 * *target (malloc'd, may not exist yet); -1 after printing why.
 */
static int resolve_output(const char *path, char **target, int *fd)
{
	char *cur = strdup(path);

	*target = NULL;
	for (int hops = 0; cur != NULL; hops++) {
		struct stat st;
		char *link, *next;
		const char *slash;
		ssize_t len;
		int missing;

		if ((*fd = fd_alias(cur)) >= 0) {
			free(cur);
			return 1;
		}
		missing = lstat(cur, &st) < 0;

		if (missing && hops > 0 && errno == ENOENT) {
			/* As cp: a link to nothing is more likely a mistake than a wish. */
			cli_error("'%s': not writing through a dangling symbolic link", path);
			free(cur);
			return -1;
		}
		if (missing || !S_ISLNK(st.st_mode)) {
			*target = cur;
			return 0;
		}
		if (hops == 40) {
			cli_error("'%s': %s", path, strerror(ELOOP));
			free(cur);
			return -1;
		}
		link = malloc((size_t)st.st_size + PATH_MAX + 1);
		if (link == NULL)
			break;
		len = readlink(cur, link, (size_t)st.st_size + PATH_MAX);
		if (len < 0) {
			cli_error("'%s': %s", path, strerror(errno));
			free(link);
			free(cur);
			return -1;
		}
		link[len] = '\0';
		/* A relative link is relative to the folder holding it. */
		slash = strrchr(cur, '/');
		if (link[0] == '/' || slash == NULL) {
			next = link;
		} else {
			if (asprintf(&next, "%.*s%s", (int)(slash - cur + 1), cur, link) < 0)
				next = NULL;
			free(link);
		}
		free(cur);
		cur = next;
	}
	cli_error("out of memory");
	return -1;
}

int cli_output_is_stdout(const char *output)
{
	struct stat a, b;

	if (output == NULL || slab_is_url(output))
		return 0;
	if (strcmp(output, "-") == 0)
		return 1;
	return stat(output, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int cli_output_is_terminal(const char *output)
{
	struct stat st;
	int fd, tty;

	if (output == NULL || slab_is_url(output))
		return 0;
	if (strcmp(output, "-") == 0)
		return isatty(STDOUT_FILENO);
	/* Not only standard output by another name: "-o /dev/tty" or "-o /dev/stderr" put the
	 * bytes on the screen as surely. Only a character device is opened to ask (no
	 * controlling terminal taken, no wait for a serial line's carrier). */
	if (stat(output, &st) != 0 || !S_ISCHR(st.st_mode))
		return 0;
	fd = open(output, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	tty = isatty(fd);
	close(fd);
	return tty;
}

int cli_check_output(const char *output, char *const *inputs, int n)
{
	struct stat out, in;
	char *target = NULL;
	int fd = STDOUT_FILENO, r = 0;

	if (output != NULL && slab_is_url(output))
		return 0;       /* an object is never one of the files read */
	if (output != NULL && strcmp(output, "-") != 0) {
		r = resolve_output(output, &target, &fd);
		if (r < 0)
			return -1;
	}
	r = r == 0 && target != NULL ? stat(target, &out) : fstat(fd, &out);
	free(target);
	/* Only a regular file can be read back: a pipe or a device written is not an input. */
	if (r < 0 || !S_ISREG(out.st_mode))
		return 0;
	for (int i = 0; i < n; i++) {
		const char *name = inputs[i];
		int std = strcmp(name, "-") == 0;

		if ((std ? fstat(STDIN_FILENO, &in) : stat(name, &in)) < 0)
			continue;       /* the tool says so when it opens it */
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			cli_error("'%s': output is also an input", std ? "(stdin)" : name);
			return -1;
		}
	}
	return 0;
}

int cli_check_mapped_inputs(char *const *inputs, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(inputs[i], "-") == 0) {
			cli_usage_error("'-': a .slab file is mapped, not read from standard input: "
					"give its path ('./-' for a file named '-')");
			return -1;
		}
	return 0;
}

/* ---- uploads: -o URL ------------------------------------------------------------------- */

struct cli_upload {
	const char *url;
	struct slab_net_upload *u;
	int rfd;
	pthread_t tid;
	pthread_t watcher;      /* cancel_main(), while watching */
	int watching;
	int rc;
	struct slab_err err;
};

/* The upload's watcher: a signal's number from the pipe (see on_signal) cancels the upload,
 * then the process dies of that signal; a 0 says the upload is over. */
static void *cancel_main(void *arg)
{
	struct cli_upload *up = arg;
	unsigned char b = 0;
	sigset_t one;
	ssize_t n;

	do
		n = read(cancel_pipe[0], &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || b == 0)
		return NULL;
	slab_net_upload_cancel(up->u);
	sigaction(b, &saved_action[b], NULL);
	sigemptyset(&one);
	sigaddset(&one, b);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(b);
	_exit(128 + b);         /* (an action that returned: as the shell would say it) */
}

/* Watch for signals while the upload runs (nothing when the pipe or the thread cannot be
 * had: a signal then cuts the upload off, as it always did). */
static void cancel_watch(struct cli_upload *up)
{
	sigset_t all, old;

	if (cancel_pipe[0] < 0 && pipe2(cancel_pipe, O_CLOEXEC) < 0)
		return;
	catch_signals();
	/* The watcher takes no signal itself: another thread's handler writes to the pipe. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	up->watching = pthread_create(&up->watcher, NULL, cancel_main, up) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	cancel_armed = up->watching;
}

/* The upload is done with (finished or given up): the watcher goes, before u does. A signal
 * that came first is the watcher's: then this never returns. */
static void cancel_unwatch(struct cli_upload *up)
{
	unsigned char zero = 0;

	if (!up->watching)
		return;
	cancel_armed = 0;
	while (write(cancel_pipe[1], &zero, 1) < 0 && errno == EINTR)
		;
	pthread_join(up->watcher, NULL);
	up->watching = 0;
}

/* The pipe's bytes into the upload. After a failure the rest is read and dropped, so the
 * writer finishes (and is told at commit) rather than dying of SIGPIPE. */
static void *upload_main(void *arg)
{
	struct cli_upload *up = arg;
	size_t cap = 1u << 20;
	char *buf = malloc(cap);

	if (!buf)
		up->rc = slab_fail(&up->err, SLAB_ERR_NOMEM, up->url, "out of memory");
	for (;;) {
		ssize_t n = read(up->rfd, buf ? buf : (char[4096]){ 0 }, buf ? cap : 4096);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && up->rc == 0)
				up->rc = slab_fail(&up->err, SLAB_ERR_IO, up->url, "pipe: %s",
						   strerror(errno));
			break;
		}
		if (up->rc == 0 && buf)
			up->rc = slab_net_upload_write(up->u, buf, (size_t)n, &up->err);
	}
	free(buf);
	return NULL;
}

static int upload_open(struct cli_output *o, const char *url)
{
	struct slab_net_config c;
	struct cli_upload *up = calloc(1, sizeof(*up));
	int p[2];

	if (!up) {
		cli_error("out of memory");
		return -1;
	}
	up->url = url;
	slab_remote_net_config(&cli_remote, &c);
	if (slab_net_upload_open(&up->u, url, &c, &up->err) < 0) {
		cli_error("%s", up->err.text);
		free(up);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		cli_error("'%s': pipe: %s", cli_shown(url), strerror(errno));
		slab_net_upload_abort(up->u);
		free(up);
		return -1;
	}
	up->rfd = p[0];
	if (pthread_create(&up->tid, NULL, upload_main, up) != 0) {
		cli_error("'%s': cannot start the upload thread", cli_shown(url));
		close(p[0]);
		close(p[1]);
		slab_net_upload_abort(up->u);
		free(up);
		return -1;
	}
	o->fd = p[1];
	o->own_fd = 1;
	o->in_place = 1;
	o->up = up;
	cancel_watch(up);
	return 0;
}

/* Close the pipe and wait for the thread: the upload's result so far (0 or an error). */
static int upload_join(struct cli_output *o)
{
	struct cli_upload *up = o->up;

	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	pthread_join(up->tid, NULL);
	close(up->rfd);
	return up->rc;
}

static int upload_commit(struct cli_output *o)
{
	struct cli_upload *up = o->up;
	int rc = upload_join(o);

	o->up = NULL;
	if (rc < 0)
		cli_error("%s", up->err.text);
	else if ((rc = slab_net_upload_finish(up->u, &up->err)) < 0)
		cli_error("%s", up->err.text);
	cancel_unwatch(up);
	slab_net_upload_abort(up->u);
	free(up);
	return rc < 0 ? -1 : 0;
}

static void upload_abort(struct cli_output *o)
{
	struct cli_upload *up = o->up;

	upload_join(o);
	cancel_unwatch(up);
	slab_net_upload_abort(up->u);
	free(up);
	o->up = NULL;
}

/* How much of the output's name (base, in target) the temporary file's name takes: all of
 * it, or as much as leaves room in the folder's longest name for the dot and ".tmp.XXXXXX"
 * around it, so that an output whose own name is near that length can be written too. A
 * name already too long is taken whole: creating the temporary file says so at once, rather
 * than the rename once all is written. */
static int tmp_base_len(const char *target, const char *base)
{
	static const size_t around = sizeof(".") - 1 + sizeof(".tmp.XXXXXX") - 1;
	char *dir = base > target ? strndup(target, (size_t)(base - target)) : NULL;
	long max = pathconf(dir != NULL ? dir : ".", _PC_NAME_MAX);
	size_t len = strlen(base);

	free(dir);
	if (max <= 0)
		max = NAME_MAX;
	if ((size_t)max > around && len > (size_t)max - around && len <= (size_t)max)
		len = (size_t)max - around;
	return len > INT_MAX ? INT_MAX : (int)len;
}

int cli_output_open(struct cli_output *o, const char *path)
{
	const char *slash, *base;
	sigset_t block, unblock;
	struct stat st;
	char *tmp;
	mode_t mode;
	int fd, exists, err;

	o->path = path;
	o->target = NULL;
	o->fd = -1;
	o->in_place = 1;
	o->up = NULL;
	if (slab_is_url(path))
		return upload_open(o, path);
	o->own_fd = 0;
	catch_signals();
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	if (*path == '\0') {
		cli_error("'': %s", strerror(ENOENT));
		return -1;
	}
	switch (resolve_output(path, &o->target, &fd)) {
	case -1:
		return -1;
	case 1:
		/* One of our descriptors: write to it where it stands, as with "-". */
		o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0) {
			cli_error("'%s': %s", path, strerror(errno));
			return -1;
		}
		o->own_fd = 1;
		return 0;
	}
	exists = stat(o->target, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			cli_error("'%s': is a directory", path);
			return -1;
		}
		o->fd = open(o->target, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			cli_error("'%s': %s", path, strerror(errno));
			return -1;
		}
		o->own_fd = 1;
		return 0;
	}
	o->in_place = 0;
	if (!tmp_at_exit && atexit(remove_tmp_at_exit) == 0)
		tmp_at_exit = 1;
	slash = strrchr(o->target, '/');
	base = slash != NULL ? slash + 1 : o->target;
	if (asprintf(&tmp, "%.*s.%.*s.tmp.XXXXXX", (int)(base - o->target), o->target,
		     tmp_base_len(o->target, base), base) < 0) {
		cli_error("out of memory");
		return -1;
	}
	/* No signal between the file's creation and the handler's knowing of it: it would be
	 * left behind. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &unblock);
	fd = mkostemp(tmp, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		tmp_path = tmp;
	pthread_sigmask(SIG_SETMASK, &unblock, NULL);
	if (fd < 0) {
		cli_error("'%s': cannot create a file there: %s", path, strerror(err));
		free(tmp);
		return -1;
	}
	o->fd = fd;
	o->own_fd = 1;
	if (exists) {
		/* Replacing a file keeps its permissions and, where we may, its owner (as sed -i
		 * and editors do); set-id bits only stay with the owner. */
		mode = st.st_mode & 07777;
		if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
		    fchown(fd, st.st_uid, st.st_gid) < 0)
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
	} else {
		mode = umask(0);
		umask(mode);
		mode = 0666 & ~mode;
	}
	if (fchmod(fd, mode) < 0) {
		cli_error("'%s': %s", tmp, strerror(errno));
		cli_output_abort(o);
		return -1;
	}
	return 0;
}

int cli_output_commit(struct cli_output *o)
{
	const char *slash;
	char *dir, *tmp;
	int fd = o->fd, dfd;

	if (o->up)
		return upload_commit(o);
	o->fd = -1;
	if (o->in_place) {
		if (o->own_fd && close(fd) < 0) {
			cli_error("'%s': close: %s", o->path, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* close() exactly once, whatever fsync() says: a second close() after a failed one
	 * could close a descriptor another thread has just been given. */
	int err = fsync(fd) < 0 ? errno : 0;

	if (close(fd) < 0 && err == 0)
		err = errno;
	if (err) {
		cli_error("'%s': %s", o->path, strerror(err));
		cli_output_abort(o);
		return -1;
	}
	if (rename(tmp_path, o->target) < 0) {
		cli_error("'%s': rename: %s", o->path, strerror(errno));
		cli_output_abort(o);
		return -1;
	}
	tmp = tmp_path;
	tmp_path = NULL;
	free(tmp);
	/* The rename itself must reach the disk too. */
	slash = strrchr(o->target, '/');
	dir = slash != NULL ? strndup(o->target, (size_t)(slash - o->target + 1)) : strdup(".");
	if (dir != NULL) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	free(o->target);
	o->target = NULL;
	return 0;
}

void cli_output_abort(struct cli_output *o)
{
	char *tmp = tmp_path;

	if (o->up) {
		upload_abort(o);
		return;
	}
	if (o->fd >= 0 && o->own_fd)
		close(o->fd);
	o->fd = -1;
	if (!o->in_place && tmp != NULL) {
		unlink(tmp);
		tmp_path = NULL;
		free(tmp);
	}
	free(o->target);
	o->target = NULL;
}

/*
 * The usage text names the tool as built ("Usage: pack ...", "       pack --list ..."); the
 * tool may be installed as slab-pack or run by another name, so each line's leading name is
 * printed as the name invoked (as the messages say it).
 */
static void put_usage(const char *usage)
{
	const char *name, *p = usage;
	size_t len;

	/* Without an argv[0] the text's own name beats the default. */
	if (strncmp(usage, "Usage: ", 7) != 0 || !progname_given) {
		fputs(usage, stdout);
		return;
	}
	name = usage + 7;
	len = strcspn(name, " \n");
	while (*p != '\0') {
		size_t n = strcspn(p, "\n") + (strchr(p, '\n') != NULL);

		if ((strncmp(p, "Usage: ", 7) == 0 || strncmp(p, "       ", 7) == 0) &&
		    strncmp(p + 7, name, len) == 0 && (p[7 + len] == ' ' || p[7 + len] == '\n')) {
			printf("%.7s%s", p, progname);
			p += 7 + len;
			n -= 7 + len;
		}
		fwrite(p, 1, n, stdout);
		p += n;
	}
}

/* The tools whose pages are installed as slab-TOOL(1), with the tools as slab-TOOL. */
static const char *const tool_pages[] = {
	"pack", "inspect", "shuffle-plan", "prefetch", "bench-tlb", "numa-probe",
};

/* Whether the n bytes at name are a tool's name whose page is installed as slab-NAME(1). */
static int tool_page(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(tool_pages) / sizeof(tool_pages[0]); i++)
		if (strlen(tool_pages[i]) == n && strncmp(name, tool_pages[i], n) == 0)
			return 1;
	return 0;
}

/*
 * The help text names the tools' pages as built (pack(1): man/pack.1); run as installed
 * (slab-pack, or through the front, slab pack) the pages are slab-pack(1) ...: each
 * reference to a tool's page says so then.
 */
static void put_help(const char *help)
{
	const char *p = help, *q;

	if (!progname_given || strncmp(progname, "slab", 4) != 0) {
		fputs(help, stdout);
		return;
	}
	while ((q = strstr(p, "(1)")) != NULL) {
		const char *s = q;

		while (s > p && (isalnum((unsigned char)s[-1]) || s[-1] == '-'))
			s--;
		fwrite(p, 1, (size_t)(s - p), stdout);
		if (tool_page(s, (size_t)(q - s)))
			fputs("slab-", stdout);
		fwrite(s, 1, (size_t)(q - s) + 3, stdout);
		p = q + 3;
	}
	fputs(p, stdout);
}

int cli_help(const char *usage, const char *help)
{
	put_usage(usage);
	put_help(help);
	return cli_close_stdout() < 0 ? SLAB_EXIT_FAIL : SLAB_EXIT_OK;
}

int cli_version(void)
{
	printf("%s (slab) %s\n", progname, SLAB_VERSION_STRING);
	return cli_close_stdout() < 0 ? SLAB_EXIT_FAIL : SLAB_EXIT_OK;
}

int cli_try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	return SLAB_EXIT_USAGE;
}
