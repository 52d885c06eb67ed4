/* cli.h: the tools' shared front end: messages, number and size parsing, terminals.
 * The one part of lib/ that prints; only tools/ use it. */
#ifndef SLAB_CLI_H
#define SLAB_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "slab.h"


/* Exit codes shared by every tool. */
enum { SLAB_EXIT_OK = 0, SLAB_EXIT_FAIL = 1, SLAB_EXIT_USAGE = 2 };

/* Set once from main: the name messages start with. */
void cli_init(const char *progname);
const char *cli_progname(void);

/* Verbosity: 0 with -q, 1 by default, 2 with -v. */
extern int cli_verbosity;

/* Keys, field names and paths come from files and archives: text output writes them through
 * this, C-style escaped (backslash as \\, \t \n \r ... by name, other control bytes, the
 * bytes of the code points below and bytes that are not UTF-8 as \xHH), so they can neither split a line nor drive a terminal.
 * It allocates nothing. Returns the length written (for padding a column). Messages
 * (cli_error ...) escape by themselves. */
size_t cli_fput_escaped(const char *s, size_t len, FILE *f);
/* 1 when the len bytes at data are text a terminal shows as it is (printable ASCII, tab,
 * newline and the UTF-8 that cli_fput_escaped() leaves alone), 0 when any byte could drive
 * the terminal (an escape sequence, a carriage return, a bidirectional control) or is not
 * UTF-8: binary data, or text crafted to rewrite the screen. */
int cli_text_shown_safely(const void *data, size_t len);
#define cli_fputs_escaped(s, f) cli_fput_escaped((s), strlen(s), (f))
/* Code points that are well-formed UTF-8 yet act on a terminal: the C1 controls
 * (U+0080..U+009F; U+009B is a CSI to some terminals) and the bidirectional embeddings,
 * overrides and isolates (U+202A..U+202E, U+2066..U+2069), which reorder what follows them
 * on the line, so that a key can show as another. Text output escapes their bytes (\xHH),
 * --json writes them as \uXXXX. */
int cli_unsafe_codepoint(uint32_t cp);
/* Length of the well-formed UTF-8 sequence at s (at most n bytes, n > 0), or minus the
 * length of its longest ill-formed start, which a writer replaces by one U+FFFD (overlong
 * forms, surrogates and values past U+10FFFF are ill-formed); and the code point of a
 * well-formed sequence of k bytes. --json and the SVG charts write strings through them. */
int cli_utf8_seq(const unsigned char *s, size_t n);
uint32_t cli_utf8_value(const unsigned char *s, int k);
/* The same for formatted text (a line's end is the caller's: a "\n" in it is escaped too).
 * With f NULL, both only count. */
size_t cli_printf_escaped(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "tool: message\n" on stderr, the message escaped as above. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define cli_warn cli_error
/* Only when verbosity >= 2. */
void cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The name messages and reports give an input: the path itself, or a URL with what carries
 * a credential masked as slab_net_mask() masks it (user:password@, a presigned query's
 * signature), as libslab's own messages give it. Valid for the life of the process. */
const char *cli_shown(const char *name);

/* A usage error: the message, then "Try 'tool --help' for more information.", returns
 * SLAB_EXIT_USAGE for main to return. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "1048576", "64K", "2M", "1G", "1T" (binary multiples, optional trailing "B" or "iB").
 * 0 and *out, or -1 on anything else (empty, sign, junk, overflow). */
int cli_parse_size(const char *s, uint64_t *out);

/* A decimal integer in [min, max]; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A number written in decimal digits with at most one point ("30", "29.97", ".5": not
 * strtod's blanks, signs, hexadecimal, exponents or infinities), above 0 and in [min, max]:
 * 0 and *out, or -1. */
int cli_parse_decimal(const char *s, double min, double max, double *out);

/* "jpg,cls" appended to *items (*n of them, each malloc'd, as is the array): 0, -1 on an
 * empty list or an empty name in it ("a,,b", ",a", "a,"), or SLAB_ERR_NOMEM. What was
 * appended before a failure stays, for the caller to free. */
int cli_split_list(const char *list, char ***items, size_t *n);

/* A --fields option's argument through cli_split_list(), the errors said: 0, or the exit
 * status for main to return (usage error, out of memory). */
int cli_fields_option(const char *arg, char ***items, size_t *n);

/* A whole file read into memory (malloc'd, the caller's to free), its size in *len: NULL when
 * it cannot be opened or read, or memory runs out (errno says which). */
unsigned char *cli_read_file(const char *path, size_t *len);

/* "R,G,B", each a decimal from 0 to 255 (a colour such as --background's): 0, or -1. */
int cli_parse_rgb(const char *s, uint8_t rgb[3]);

/*
 * The options of every tool that reads .slab files at URLs (http://, https://, s3://): the
 * long options (put CLI_REMOTE_LONGOPTS in the tool's table; their values are above
 * CLI_OPT_REMOTE_BASE, so keep the tool's own below it), their help lines
 * (CLI_REMOTE_HELP), and one parser that fills cli_remote, which the tool then passes to
 * slab_open_ex() / slab_dataset_open_ex(). -v logs each request through cli_info().
 */
#define CLI_OPT_REMOTE_BASE 0x4000
enum {
	CLI_OPT_CACHE_DIR = CLI_OPT_REMOTE_BASE,
	CLI_OPT_S3_ENDPOINT,
	CLI_OPT_S3_ADDRESSING,
	CLI_OPT_PROFILE,
	CLI_OPT_NO_SIGN,
	CLI_OPT_CONNECTIONS,
	CLI_OPT_RETRIES,
	CLI_OPT_TIMEOUT,
};
#define CLI_REMOTE_LONGOPTS \
	{ "cache-dir",       required_argument, NULL, CLI_OPT_CACHE_DIR }, \
	{ "s3-endpoint",     required_argument, NULL, CLI_OPT_S3_ENDPOINT }, \
	{ "s3-addressing",   required_argument, NULL, CLI_OPT_S3_ADDRESSING }, \
	{ "profile",         required_argument, NULL, CLI_OPT_PROFILE }, \
	{ "no-sign-request", no_argument,       NULL, CLI_OPT_NO_SIGN }, \
	{ "connections",     required_argument, NULL, CLI_OPT_CONNECTIONS }, \
	{ "retries",         required_argument, NULL, CLI_OPT_RETRIES }, \
	{ "timeout",         required_argument, NULL, CLI_OPT_TIMEOUT }
#define CLI_REMOTE_HELP \
"\n" \
"Files at URLs (http://, https://, s3://BUCKET/KEY):\n" \
"      --cache-dir DIR      the local cache of URLs read (default\n" \
"                           $SLAB_CACHE_DIR, else $XDG_CACHE_HOME/slab, else\n" \
"                           ~/.cache/slab)\n" \
"      --s3-endpoint URL    S3 endpoint (default $AWS_ENDPOINT_URL_S3, else\n" \
"                           $AWS_ENDPOINT_URL, else the profile's endpoint_url,\n" \
"                           else AWS)\n" \
"      --s3-addressing path|virtual|auto   bucket in the path or in the host\n" \
"                           name (default: virtual on AWS, path elsewhere)\n" \
"      --profile NAME       credentials profile (default $AWS_PROFILE, else the\n" \
"                           profile named default)\n" \
"      --no-sign-request    send S3 requests unsigned (public buckets)\n" \
"      --connections N      requests in flight (default 16)\n" \
"      --retries N          retries of a failed request (default 8)\n" \
"      --timeout SECONDS    time one request may take, retries included\n" \
"                           (default 300)\n"

extern struct slab_remote_options cli_remote;

/* 1 when opt was one of CLI_REMOTE_LONGOPTS (cli_remote set), 0 when it is not, or the
 * exit status of a usage error (printed) to return from main. */
int cli_remote_option(int opt, const char *arg);

/* Human size: "1.5 MiB" into buf. */
const char *cli_human_size(uint64_t n, char *buf, size_t len);

/* Seconds since an arbitrary start, monotonic. */
double cli_now(void);

/* Progress lines on stderr only when it is a terminal and verbosity >= 1. */
int cli_progress_wanted(void);

/* A progress line (ended by no newline) is on stderr: the next message, or
 * cli_progress_clear(), erases it first, so that no message goes on after it. */
void cli_progress_shown(void);
void cli_progress_clear(void);

/* After getopt has said what is wrong: "Try 'tool --help' for more information." on stderr;
 * returns SLAB_EXIT_USAGE. */
int cli_try_help(void);

/* --help: the usage and help texts on stdout, the tool's name at the start of each usage line
 * ("Usage: pack ...") printed as the name invoked (slab-pack when installed); --version:
 * "tool (slab) VERSION". Each returns the exit code for main. */
int cli_help(const char *usage, const char *help);
int cli_version(void);

/* The one wording of a failed write: "write error: REASON" for standard output (path NULL or
 * "-"), "'PATH': write error: REASON" for a named output; err 0 when the cause is unknown. */
void cli_write_error(const char *path, int err);

/* Flush and close stdout; on failure other than EPIPE, print an error and return -1. */
int cli_close_stdout(void);
/* Flush stdout before the end (output that should show while the tool works on): 0, or -1
 * with the failure's errno kept for cli_close_stdout()'s message. */
int cli_flush_stdout(void);

/*
 * An output file that appears only when complete: written under a temporary name beside it
 * (.NAME.tmp.XXXXXX), then fsync'd and renamed over NAME, keeping an existing NAME's
 * permissions (and owner where allowed). "-" is standard output. A symbolic link is followed
 * to its target, which is replaced (the link stays); a dangling one is refused; /dev/stdout,
 * /dev/fd/N, /proc/self/fd/N name our own descriptor N, written where it stands as "-" is. An
 * existing target that is not a regular file (/dev/null, a FIFO, a device) is written in
 * place: there is nothing to replace, and renaming over it would destroy it. While a
 * temporary file exists, every signal whose default action ends the process removes it
 * first (only SIGKILL can leave one); SIGXFSZ is ignored so a file-size limit is a write
 * error like a full disk. One such output at a time.
 */
struct cli_output {
	int fd;
	const char *path;       /* as given, for messages */
	char *target;           /* the file written or replaced, links resolved */
	int in_place;           /* stdout, a descriptor or a non-regular file: no temporary */
	int own_fd;             /* fd is ours to close */
	struct cli_upload *up;  /* a URL: fd is a pipe to a thread uploading what comes */
};

/* 0 with o->fd open for writing, or -1 after printing why. A URL (http://, https://,
 * s3://, reached with cli_remote) is uploaded as written: an S3 multipart upload, or one
 * chunked HTTP PUT, completed by cli_output_commit() (the object appears only then) and
 * aborted on the server by cli_output_abort(). */
int cli_output_open(struct cli_output *o, const char *path);
/* fsync, close and rename into place. 0, or -1 after printing why (the temporary is gone). */
int cli_output_commit(struct cli_output *o);
/* Close and remove the temporary file; nothing happens to the target. Accepts an output
 * never opened (fd -1). */
void cli_output_abort(struct cli_output *o);

/* Refuse to write over an input: when output (a path as -o takes it; NULL or "-" for
 * standard output) is a regular file that is the same file (device and inode, links
 * followed) as one of the n inputs ("-" is standard input), print "'INPUT': output is also
 * an input" and return -1; else 0. Call before opening anything for writing. */
int cli_check_output(const char *output, char *const *inputs, int n);
/* Refuse "-" among n .slab operands: a .slab file is mapped, and standard input (a pipe, or
 * a redirected file the tool could not name in messages) is not one. -1 after the usage
 * error (the tool exits SLAB_EXIT_USAGE; './-' names a file called '-'); else 0. */
int cli_check_mapped_inputs(char *const *inputs, int n);

/* 1 when output is "-" or a name of what standard output is (/dev/stdout, /dev/fd/1, a link
 * to them): the checks made for "-" (--stats) apply to it too. */
int cli_output_is_stdout(const char *output);

/* 1 when writing to output (a path as -o takes it; "-" for standard output) puts the bytes on
 * a terminal: standard output that is one, or any name of a terminal (/dev/tty, /dev/pts/N,
 * /dev/stderr when it is one, a link to them); 0 otherwise, or when that cannot be told (the
 * open that writes will say why). For the refusal to write binary to a terminal. */
int cli_output_is_terminal(const char *output);

#endif
