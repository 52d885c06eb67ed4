/* readfiles.c: the C reader of scripts/bench/peers for one file per sample. Reads every file
 * named in LIST (one path a line), in that order, with open, read into one reused 1 MiB buffer
 * until end of file, and close, as a C loader of such a dataset would; then prints
 * {"samples": N, "bytes": B}. Compiled by scripts/bench/peers into its data folder.
 *
 * (GNU cat is not used for this: coreutils 9.1 maps a fresh 128 KiB buffer for every file it
 * is given and unmaps it after, which costs more than reading a 150 KB file from the cache.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[1 << 20];

int main(int argc, char **argv)
{
	unsigned long long n = 0, bytes = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len, r;
	FILE *list;

	if (argc != 2) {
		fprintf(stderr, "usage: readfiles LIST\n");
		return 2;
	}
	list = fopen(argv[1], "r");
	if (!list) {
		fprintf(stderr, "readfiles: '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	while ((len = getline(&line, &cap, list)) > 0) {
		int fd;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "readfiles: '%s': %s\n", line, strerror(errno));
			return 1;
		}
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			bytes += (unsigned long long)r;
		if (r < 0) {
			fprintf(stderr, "readfiles: '%s': %s\n", line, strerror(errno));
			return 1;
		}
		close(fd);
		n++;
	}
	free(line);
	fclose(list);
	printf("{\"samples\": %llu, \"bytes\": %llu}\n", n, bytes);
	return 0;
}
