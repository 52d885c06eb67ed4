/* test_cli.c: unit tests of lib/fe/cli.c: size and number parsing at their edges, human sizes,
 * message format and the close of stdout. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "unit.h"

static int size_is(const char *s, uint64_t want)
{
	uint64_t got = 12345;

	if (cli_parse_size(s, &got) != 0) {
		fprintf(stderr, "cli_parse_size(\"%s\") failed\n", s);
		return 0;
	}
	if (got != want) {
		fprintf(stderr, "cli_parse_size(\"%s\") = %llu\n", s, (unsigned long long)got);
		return 0;
	}
	return 1;
}

static int size_bad(const char *s)
{
	uint64_t got = 12345;

	/* A failed parse must leave *out alone. */
	return cli_parse_size(s, &got) == -1 && got == 12345;
}

static int u64_is(const char *s, uint64_t min, uint64_t max, uint64_t want)
{
	uint64_t got = 12345;

	return cli_parse_u64(s, min, max, &got) == 0 && got == want;
}

static int u64_bad(const char *s, uint64_t min, uint64_t max)
{
	uint64_t got = 12345;

	return cli_parse_u64(s, min, max, &got) == -1 && got == 12345;
}

static void test_parse_size(void)
{
	CHECK(size_is("0", 0));
	CHECK(size_is("1", 1));
	CHECK(size_is("4096", 4096));
	CHECK(size_is("007", 7));
	CHECK(size_is("4096B", 4096));
	CHECK(size_is("1048576", 1048576));
	CHECK(size_is("4K", 4096));
	CHECK(size_is("4k", 4096));
	CHECK(size_is("4KB", 4096));
	CHECK(size_is("4KiB", 4096));
	CHECK(size_is("64K", 65536));
	CHECK(size_is("2M", 2097152));
	CHECK(size_is("2m", 2097152));
	CHECK(size_is("2MiB", 2097152));
	CHECK(size_is("1G", 1073741824));
	CHECK(size_is("1g", 1073741824));
	CHECK(size_is("1GB", 1073741824));
	CHECK(size_is("1T", 1099511627776ULL));
	CHECK(size_is("1t", 1099511627776ULL));
	CHECK(size_is("1TiB", 1099511627776ULL));
	CHECK(size_is("0K", 0));
	CHECK(size_is("18446744073709551615", UINT64_MAX));
	CHECK(size_is("18446744073709551615B", UINT64_MAX));
	/* The largest multiple of each unit that fits. */
	CHECK(size_is("18014398509481983K", 18014398509481983ULL << 10));
	CHECK(size_is("17179869183G", 17179869183ULL << 30));
	CHECK(size_is("16777215T", 16777215ULL << 40));

	CHECK(size_bad(""));
	CHECK(size_bad("K"));
	CHECK(size_bad("B"));
	CHECK(size_bad("iB"));
	CHECK(size_bad("-1"));
	CHECK(size_bad("+1"));
	CHECK(size_bad("-0"));
	CHECK(size_bad(" 1"));
	CHECK(size_bad("1 "));
	CHECK(size_bad("1 K"));
	CHECK(size_bad("\t4K"));
	CHECK(size_bad("0x10"));
	CHECK(size_bad("0X10"));
	CHECK(size_bad("1.5M"));
	CHECK(size_bad("1,5M"));
	CHECK(size_bad(".5"));
	CHECK(size_bad("1e3"));
	CHECK(size_bad("4KK"));
	CHECK(size_bad("4Ki"));
	CHECK(size_bad("4KIB"));
	CHECK(size_bad("4KiBB"));
	CHECK(size_bad("4BB"));
	CHECK(size_bad("4iB"));
	CHECK(size_bad("4b"));
	CHECK(size_bad("4KBx"));
	CHECK(size_bad("16E"));
	CHECK(size_bad("1P"));
	CHECK(size_bad("4X"));
	CHECK(size_bad("abc"));
	CHECK(size_bad("12abc"));
	CHECK(size_bad("18446744073709551616"));
	CHECK(size_bad("99999999999999999999"));
	CHECK(size_bad("999999999999999999999999999999"));
	CHECK(size_bad("18014398509481984K"));
	CHECK(size_bad("17179869184G"));
	CHECK(size_bad("16777216T"));
	CHECK(size_bad("20000000000T"));
	CHECK(size_bad(NULL));
}

static void test_parse_u64(void)
{
	CHECK(u64_is("0", 0, UINT64_MAX, 0));
	CHECK(u64_is("42", 0, UINT64_MAX, 42));
	CHECK(u64_is("0042", 0, UINT64_MAX, 42));
	CHECK(u64_is("18446744073709551615", 0, UINT64_MAX, UINT64_MAX));
	CHECK(u64_is("1", 1, 1, 1));
	CHECK(u64_is("1", 1, 64, 1));
	CHECK(u64_is("64", 1, 64, 64));

	CHECK(u64_bad("18446744073709551616", 0, UINT64_MAX));
	CHECK(u64_bad("18446744073709551620", 0, UINT64_MAX));
	CHECK(u64_bad("99999999999999999999", 0, UINT64_MAX));
	CHECK(u64_bad("0", 1, 64));
	CHECK(u64_bad("65", 1, 64));
	CHECK(u64_bad("", 0, UINT64_MAX));
	CHECK(u64_bad("-1", 0, UINT64_MAX));
	CHECK(u64_bad("+1", 0, UINT64_MAX));
	CHECK(u64_bad(" 1", 0, UINT64_MAX));
	CHECK(u64_bad("1 ", 0, UINT64_MAX));
	CHECK(u64_bad("1\n", 0, UINT64_MAX));
	CHECK(u64_bad("0x1", 0, UINT64_MAX));
	CHECK(u64_bad("1.0", 0, UINT64_MAX));
	CHECK(u64_bad("1e2", 0, UINT64_MAX));
	CHECK(u64_bad("4K", 0, UINT64_MAX));
	CHECK(u64_bad("x", 0, UINT64_MAX));
	CHECK(u64_bad(NULL, 0, UINT64_MAX));
}

static void test_human_size(void)
{
	char buf[32];

	CHECK_STR(cli_human_size(0, buf, sizeof(buf)), "0 B");
	CHECK_STR(cli_human_size(512, buf, sizeof(buf)), "512 B");
	CHECK_STR(cli_human_size(1023, buf, sizeof(buf)), "1023 B");
	CHECK_STR(cli_human_size(1024, buf, sizeof(buf)), "1.0 KiB");
	CHECK_STR(cli_human_size(1536, buf, sizeof(buf)), "1.5 KiB");
	CHECK_STR(cli_human_size(4096, buf, sizeof(buf)), "4.0 KiB");
	CHECK_STR(cli_human_size(1048575, buf, sizeof(buf)), "1.0 MiB");
	CHECK_STR(cli_human_size(1048576, buf, sizeof(buf)), "1.0 MiB");
	CHECK_STR(cli_human_size(2097152, buf, sizeof(buf)), "2.0 MiB");
	CHECK_STR(cli_human_size(1572864, buf, sizeof(buf)), "1.5 MiB");
	CHECK_STR(cli_human_size(3435973837ULL, buf, sizeof(buf)), "3.2 GiB");
	CHECK_STR(cli_human_size(1099511627776ULL, buf, sizeof(buf)), "1.0 TiB");
	CHECK_STR(cli_human_size(1125899906842624ULL, buf, sizeof(buf)), "1.0 PiB");
	CHECK_STR(cli_human_size(UINT64_MAX, buf, sizeof(buf)), "16.0 EiB");
	/* A short buffer is truncated, never overrun. */
	CHECK_STR(cli_human_size(1536, buf, 4), "1.5");
}

/* Runs fn with stderr sent to a temporary file and returns what it wrote. */
static char *capture_stderr(void (*fn)(void))
{
	static char text[4096];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	if (tmp == NULL || saved < 0)
		return NULL;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(text, 1, sizeof(text) - 1, tmp);
	text[n] = '\0';
	fclose(tmp);
	return text;
}

static int usage_ret;

static void say_error(void)
{
	cli_error("'%s': truncated archive at offset %d", "shard-007.tar", 1048576);
}

static void say_info(void)
{
	cli_info("packed %d samples", 3);
}

static void say_usage(void)
{
	usage_ret = cli_usage_error("unknown option '%s'", "--frob");
}

static void say_long(void)
{
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cli_error("%s", big);
}

static void test_messages(void)
{
	char *s;

	CHECK_STR(cli_progname(), "slab");
	cli_init("build/bin/pack");
	CHECK_STR(cli_progname(), "pack");
	cli_init("inspect");
	CHECK_STR(cli_progname(), "inspect");
	cli_init("pack");

	CHECK(cli_verbosity == 1);
	CHECK_STR(capture_stderr(say_error),
		"pack: 'shard-007.tar': truncated archive at offset 1048576\n");
	cli_verbosity = 0;
	CHECK_STR(capture_stderr(say_error),
		"pack: 'shard-007.tar': truncated archive at offset 1048576\n");
	CHECK(cli_progress_wanted() == 0);
	CHECK_STR(capture_stderr(say_info), "");
	cli_verbosity = 1;
	CHECK_STR(capture_stderr(say_info), "");
	cli_verbosity = 2;
	CHECK_STR(capture_stderr(say_info), "pack: packed 3 samples\n");
	cli_verbosity = 1;

	CHECK_STR(capture_stderr(say_usage),
		"pack: unknown option '--frob'\n"
		"Try 'pack --help' for more information.\n");
	CHECK(usage_ret == SLAB_EXIT_USAGE);

	s = capture_stderr(say_long);
	CHECK(s != NULL && strlen(s) == strlen("pack: ") + 2999 + 1);
	CHECK(s != NULL && strncmp(s, "pack: xxx", 9) == 0 && s[strlen(s) - 1] == '\n');
}

static void test_now(void)
{
	double a = cli_now(), b = cli_now();

	CHECK(a > 0);
	CHECK(b >= a);
}

/*
 * cli_close_stdout() in a child whose stdout is out_fd (closed when -1); the child's exit
 * status is 0 when the call returned 0. What it wrote to stderr lands in err.
 */
static int close_in_child(int out_fd, const char *write_this, char *err, size_t errlen)
{
	FILE *tmp = tmpfile();
	int status = -1;
	size_t n;
	pid_t pid;

	if (tmp == NULL)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_IGN);
		dup2(fileno(tmp), STDERR_FILENO);
		if (out_fd >= 0)
			dup2(out_fd, STDOUT_FILENO);
		else
			close(STDOUT_FILENO);
		if (write_this != NULL)
			fputs(write_this, stdout);
		_exit(cli_close_stdout() == 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		fclose(tmp);
		return -1;
	}
	rewind(tmp);
	n = fread(err, 1, errlen - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return WEXITSTATUS(status);
}

static void test_close_stdout(void)
{
	char err[256];
	int fds[2], fd;

	/* A reader gone away (| head) is not an error. */
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	CHECK(close_in_child(fds[1], "nobody reads this\n", err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	close(fds[1]);

	/* A full disk is. */
	fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		CHECK(close_in_child(fd, "lost\n", err, sizeof(err)) == 1);
		CHECK_STR(err, "pack: write error: No space left on device\n");
		close(fd);
	}

	/* Nothing written to a closed stdout (">&-"): nothing lost. */
	CHECK(close_in_child(-1, NULL, err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	/* Something written to it: lost. */
	CHECK(close_in_child(-1, "lost\n", err, sizeof(err)) == 1);
	CHECK_STR(err, "pack: write error: Bad file descriptor\n");

	/* The plain case. */
	fd = open("/dev/null", O_WRONLY);
	CHECK(fd >= 0);
	CHECK(close_in_child(fd, "fine\n", err, sizeof(err)) == 0);
	CHECK_STR(err, "");
	close(fd);
}

/* cli_read_file(): exact bytes across the buffer's growth (64 KiB, then doubling), an empty
 * file, and a missing one. */
static void test_read_file(void)
{
	char path[] = "/tmp/test_cli_read.XXXXXX";
	size_t n = 200000, len = 1;
	unsigned char *want = malloc(n), *got;
	int fd = mkstemp(path);

	CHECK(fd >= 0 && want != NULL);
	if (fd < 0 || !want) {
		free(want);
		return;
	}
	for (size_t i = 0; i < n; i++)
		want[i] = (unsigned char)(i * 131 + (i >> 9));
	CHECK(write(fd, want, n) == (ssize_t)n);
	got = cli_read_file(path, &len);
	CHECK(got != NULL && len == n && memcmp(got, want, n) == 0);
	free(got);
	CHECK(ftruncate(fd, 0) == 0);
	len = 1;
	got = cli_read_file(path, &len);
	CHECK(got != NULL && len == 0);
	free(got);
	close(fd);
	unlink(path);
	errno = 0;
	CHECK(cli_read_file(path, &len) == NULL && errno == ENOENT);
	free(want);
}

int main(void)
{
	test_parse_size();
	test_parse_u64();
	test_human_size();
	test_messages();
	test_now();
	test_close_stdout();
	test_read_file();
	return UNIT_DONE();
}
