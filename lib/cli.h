/* cli.h: the tools' shared front end: messages, number and size parsing, terminals.
 * The one part of lib/ that prints; only tools/ use it. */
#ifndef SLAB_CLI_H
#define SLAB_CLI_H

#include <stdint.h>
#include <stdio.h>

#define SLAB_VERSION "0.1.0"

/* Exit codes shared by every tool. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* Set once from main: the name messages start with. */
void cli_init(const char *progname);
const char *cli_progname(void);

/* Verbosity: 0 with -q, 1 by default, 2 with -v. */
extern int cli_verbosity;

/* "tool: message\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define cli_warn cli_error
/* Only when verbosity >= 2. */
void cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: the message, then "Try 'tool --help' for more information.", returns
 * EXIT_USAGE for main to return. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "1048576", "64K", "2M", "1G", "1T" (binary multiples, optional trailing "B" or "iB").
 * 0 and *out, or -1 on anything else (empty, sign, junk, overflow). */
int cli_parse_size(const char *s, uint64_t *out);

/* A decimal integer in [min, max]; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Human size: "1.5 MiB" into buf. */
const char *cli_human_size(uint64_t n, char *buf, size_t len);

/* Seconds since an arbitrary start, monotonic. */
double cli_now(void);

/* Progress lines on stderr only when it is a terminal and verbosity >= 1. */
int cli_progress_wanted(void);

/* After getopt has said what is wrong: "Try 'tool --help' for more information." on stderr;
 * returns EXIT_USAGE. */
int cli_try_help(void);

/* --help: the usage and help texts on stdout; --version: "tool (slab) VERSION". Each returns
 * the exit code for main. */
int cli_help(const char *usage, const char *help);
int cli_version(void);

/* Flush and close stdout; on failure other than EPIPE, print an error and return -1. */
int cli_close_stdout(void);

/*
 * An output file that appears only when complete: written under a temporary name beside it
 * (.NAME.tmp.XXXXXX), then fsync'd and renamed over NAME. "-" is standard output. An existing
 * target that is not a regular file (/dev/null, a FIFO, a device) is written in place: there is
 * nothing to replace, and renaming over it would destroy it. While a temporary file exists,
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT remove it before the process dies; SIGXFSZ is ignored
 * so a file-size limit is a write error like a full disk. One such output at a time.
 */
struct cli_output {
	int fd;
	const char *path;
	int in_place;           /* stdout or a non-regular file: no temporary name */
};

/* 0 with o->fd open for writing, or -1 after printing why. */
int cli_output_open(struct cli_output *o, const char *path);
/* fsync, close and rename into place. 0, or -1 after printing why (the temporary is gone). */
int cli_output_commit(struct cli_output *o);
/* Close and remove the temporary file; nothing happens to the target. */
void cli_output_abort(struct cli_output *o);

#endif
