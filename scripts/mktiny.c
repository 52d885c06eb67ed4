/* mktiny: a .slab of N one-byte samples, written straight through the writer API, for
 * benchmarks that need millions of samples (a tar of them would be 1 KiB a sample). */
#include "cli.h"
#include "slab.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count",     required_argument, NULL, 'n' },
		{ "help",      no_argument,       NULL, 'h' },
		{ "output",    required_argument, NULL, 'o' },
		{ "page-size", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t count = 1000000, page_size = 64 << 10;
	const char *out = NULL;
	struct slab_writer *w;
	struct slab_writer_options o = { 0 };
	int c, fd;

	cli_init(argv[0]);
	while ((c = getopt_long(argc, argv, "hn:o:p:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (cli_parse_u64(optarg, 0, 1ull << 32, &count) < 0)
				return cli_usage_error("invalid --count '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (cli_parse_size(optarg, &page_size) < 0)
				return cli_usage_error("invalid --page-size '%s'", optarg);
			break;
		case 'h':
			printf("Usage: mktiny [--count N] [--page-size SIZE] -o FILE\n"
			       "Write a .slab of N samples, key tNNNNNNNNNN, one field cls of one byte.\n");
			return 0;
		default:
			return SLAB_EXIT_USAGE;
		}
	}
	if (!out)
		return cli_usage_error("no output given (-o FILE)");
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		cli_error("'%s': cannot create: %m", out);
		return SLAB_EXIT_FAIL;
	}
	w = slab_writer_new();
	o.page_size = page_size;
	o.options = "tool=mktiny\n";
	if (!w || slab_writer_open(w, fd, out, &o) < 0)
		goto fail;
	for (uint64_t i = 0; i < count; i++) {
		char key[32], v = (char)('0' + i % 10);
		struct slab_writer_field f = { .name = "cls", .data = &v, .size = 1 };
		int n = snprintf(key, sizeof(key), "t%010llu", (unsigned long long)i);
		if (slab_writer_add(w, key, (size_t)n, &f, 1) < 0)
			goto fail;
	}
	if (slab_writer_finish(w) < 0 || close(fd) < 0)
		goto fail;
	slab_writer_free(w);
	return SLAB_EXIT_OK;
fail:
	cli_error("%s", w ? slab_writer_error(w) : "out of memory");
	unlink(out);
	return SLAB_EXIT_FAIL;
}
