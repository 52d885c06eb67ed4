/* mkcollide: a WebDataset tar of N one-field samples whose keys all share the low 32 bits of
 * their FNV-1a-64 hash (tests/test_helper/fnvcollide.h), for tests of the key index on keys
 * chosen to collide. Deterministic: the same arguments give the same bytes. */
#include "cli.h"
#include "../tests/test_helper/fnvcollide.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"Usage: mkcollide [--count N] [--dup I,J] [--keys] [-o OUT]\n";

static const char help_text[] =
	"\n"
	"Write a WebDataset tar of N samples to OUT or standard output. Sample i has a key of\n"
	"6 letters and digits per bit of N - 1 (at least 6) with a '/' in the middle, all keys\n"
	"hashing to the same low 32 bits of FNV-1a-64, and one field, txt, holding\n"
	"\"sample i\\n\".\n"
	"\n"
	"Options:\n"
	"  -n, --count N      samples to write (default 1000)\n"
	"      --dup I,J      sample I (after J) takes sample J's key: a repeated key\n"
	"      --keys         write the keys, one a line, instead of a tar\n"
	"  -o, --output FILE  write to FILE ('-': standard output, the default)\n"
	"  -h, --help         show this help and exit\n";

enum { OPT_DUP = 256, OPT_KEYS };

static const char *archive_message(struct archive *a)
{
	const char *m = archive_error_string(a);

	return m ? m : "unknown libarchive error";
}

static int add_file(struct archive *a, struct archive_entry *e, const char *name,
		    const void *data, size_t len)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, 0, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    (len && archive_write_data(a, data, len) != (la_ssize_t)len)) {
		cli_error("writing '%s': %s", name, archive_message(a));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count",  required_argument, NULL, 'n' },
		{ "dup",    required_argument, NULL, OPT_DUP },
		{ "help",   no_argument,       NULL, 'h' },
		{ "keys",   no_argument,       NULL, OPT_KEYS },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	static struct fnv_collide fc;
	uint64_t count = 1000, dup_i = UINT64_MAX, dup_j = 0;
	const char *out = "-";
	int c, fd = STDOUT_FILENO, keys_only = 0, ret = SLAB_EXIT_FAIL;
	struct archive *a = NULL;
	struct archive_entry *e = NULL;

	cli_init(argv[0]);
	while ((c = getopt_long(argc, argv, "hn:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (cli_parse_u64(optarg, 0, 1ull << FNVC_MAX_BLOCKS, &count) < 0)
				return cli_usage_error("invalid --count '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_DUP: {
			unsigned long long i, j;
			int n = 0;
			if (sscanf(optarg, "%llu,%llu%n", &i, &j, &n) != 2 || optarg[n] || j >= i)
				return cli_usage_error("invalid --dup '%s' (I,J with J < I)", optarg);
			dup_i = i;
			dup_j = j;
			break;
		}
		case OPT_KEYS:
			keys_only = 1;
			break;
		case 'h':
			return cli_help(usage_text, help_text);
		default:
			return cli_try_help();
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (fnvc_init(&fc, fnvc_blocks_for(count)) < 0) {
		cli_error("out of memory");
		return SLAB_EXIT_FAIL;
	}
	if (strcmp(out, "-") != 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			cli_error("'%s': cannot create: %m", out);
			return SLAB_EXIT_FAIL;
		}
	}

	if (keys_only) {
		char key[FNVC_KEY_MAX];
		FILE *f = fdopen(fd, "w");
		if (!f) {
			cli_error("'%s': %m", out);
			goto out;
		}
		for (uint64_t i = 0; i < count; i++) {
			size_t len = fnvc_key(&fc, i == dup_i ? dup_j : i, key);
			fprintf(f, "%.*s\n", (int)len, key);
		}
		if (fclose(f) != 0) {
			cli_error("'%s': %m", out);
			return SLAB_EXIT_FAIL;
		}
		return SLAB_EXIT_OK;
	}

	a = archive_write_new();
	e = archive_entry_new();
	if (!a || !e) {
		cli_error("out of memory");
		goto out;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 65536) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		cli_error("%s", archive_message(a));
		goto out;
	}
	for (uint64_t i = 0; i < count; i++) {
		char name[FNVC_KEY_MAX + 8], text[40];
		size_t len = fnvc_key(&fc, i == dup_i ? dup_j : i, name);
		memcpy(name + len, ".txt", 5);
		snprintf(text, sizeof(text), "sample %llu\n", (unsigned long long)i);
		if (add_file(a, e, name, text, strlen(text)) < 0)
			goto out;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		cli_error("%s", archive_message(a));
		goto out;
	}
	ret = SLAB_EXIT_OK;
out:
	archive_entry_free(e);
	archive_write_free(a);
	if (fd != STDOUT_FILENO && close(fd) < 0 && ret == SLAB_EXIT_OK) {
		cli_error("'%s': %m", out);
		ret = SLAB_EXIT_FAIL;
	}
	return ret;
}
