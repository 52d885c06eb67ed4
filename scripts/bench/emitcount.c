/* emitcount.c: the reader at the end of `prefetch --emit --emit-format raw` in
 * scripts/bench/cache. Reads the raw stream (prefetch(1), RAW FORMAT) from standard input,
 * every byte of it, and counts the sample records; each time the count reaches a multiple of
 * EVERY (an epoch's samples) it prints {"samples": N, "t": T} at once, T being
 * CLOCK_MONOTONIC in seconds (Python's time.monotonic()), so that the benchmark can read the
 * cgroup's counters at the epoch boundaries of a process that reads several epochs. At the
 * end it prints {"samples": N, "bytes": B, "headers": H, "ends": E, "t": T}: B the bytes of
 * the stream, H the stream headers and E the end records met (a stream of several plans may
 * have one of each per plan, or one in all). Compiled by scripts/bench/cache.
 *
 * usage: emitcount EVERY < STREAM */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUFSZ (1 << 20)

static unsigned char buf[BUFSZ];
static size_t have, at;                 /* bytes in buf, and read from it */
static unsigned long long total;        /* bytes of the stream consumed */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "emitcount: %s at byte %llu\n", what, total);
	exit(1);
}

/* 1 when the next byte could be read into the buffer, 0 at the end of the stream */
static int fill(void)
{
	ssize_t r;

	if (at < have)
		return 1;
	do
		r = read(0, buf, BUFSZ);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die(strerror(errno));
	have = (size_t)r;
	at = 0;
	return r > 0;
}

/* n bytes into out (NULL: skip them); 0 when the stream ended before the first, else 1 */
static int take(void *out, uint64_t n)
{
	unsigned char *o = out;
	uint64_t done = 0;

	while (done < n) {
		size_t k;

		if (!fill()) {
			if (done == 0)
				return 0;
			die("stream cut short in a record");
		}
		k = have - at;
		if (k > n - done)
			k = (size_t)(n - done);
		if (o)
			memcpy(o + done, buf + at, k);
		at += k;
		done += k;
		total += k;
	}
	return 1;
}

static void must(void *out, uint64_t n)
{
	if (!take(out, n))
		die("stream cut short in a record");
}

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long every, n = 0, headers = 0, ends = 0;
	unsigned char fix[32], name[2], size[8];
	char *end;

	if (argc != 2 || !(every = strtoull(argv[1], &end, 10)) || *end) {
		fprintf(stderr, "usage: emitcount EVERY < STREAM\n");
		return 2;
	}
	while (take(fix, 4)) {
		if (!memcmp(fix, "SLAB", 4)) {          /* SLABEMIT, version, flags, count */
			must(fix + 4, 20);
			if (memcmp(fix, "SLABEMIT", 8) || le(fix + 8, 4) != 1)
				die("not a raw stream header (or not version 1)");
			headers++;
		} else if (!memcmp(fix, "SMPL", 4)) {
			uint64_t key, nf;

			must(fix + 4, 28);
			key = le(fix + 24, 4);
			nf = le(fix + 28, 4);
			must(NULL, key);
			while (nf--) {
				must(name, 2);
				must(NULL, le(name, 2));
				must(size, 8);
				must(NULL, le(size, 8));
			}
			if (++n % every == 0) {
				printf("{\"samples\": %llu, \"t\": %.6f}\n", n, now());
				fflush(stdout);
			}
		} else if (!memcmp(fix, "DONE", 4)) {
			must(fix + 4, 28);
			ends++;
		} else {
			die("unknown record");
		}
	}
	printf("{\"samples\": %llu, \"bytes\": %llu, \"headers\": %llu, \"ends\": %llu, "
	       "\"t\": %.6f}\n", n, total, headers, ends, now());
	return fflush(stdout) ? 1 : 0;
}
