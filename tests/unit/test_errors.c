/* test_errors.c: the library's error convention: the codes (out of memory is SLAB_ERR_NOMEM,
 * a bad argument SLAB_ERR_INVAL), the texts the *_error() accessors give, the sized structs,
 * and two writers finishing at once in two threads. */
#include "slab.h"
#include "crc32c.h"
#include "errfmt.h"
#include "format.h"
#include "tarin.h"
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The out-of-memory test asks for more than any machine has: under AddressSanitizer that must
 * be a NULL from malloc, as everywhere else, not a report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static int has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

/* ---- the wording of sizes and inputs in messages -------------------------------------- */

static void test_shown(void)
{
	char b[32];

	CHECK(strcmp(slab_size_text(0, b, sizeof(b)), "0 B") == 0);
	CHECK(strcmp(slab_size_text(512 << 10, b, sizeof(b)), "512 KiB") == 0);   /* not "0 MiB" */
	CHECK(strcmp(slab_size_text(128ull << 20, b, sizeof(b)), "128 MiB") == 0);
	CHECK(strcmp(slab_size_text(3ull << 29, b, sizeof(b)), "1.5 GiB") == 0);
	CHECK(strcmp(slab_size_text(UINT64_MAX, b, sizeof(b)), "16777216 TiB") == 0);
	CHECK(strcmp(slab_input_shown("-"), "(stdin)") == 0);
	CHECK(strcmp(slab_input_shown(NULL), "(stdin)") == 0);
	CHECK(strcmp(slab_input_shown("./-"), "./-") == 0);
}

/* ---- tar in ---------------------------------------------------------------------------- */

/* A tar of one sparse member of 2^50 bytes whose only data is 512 bytes at its start: its
 * sample cannot be held in memory. */
static size_t sparse_tar(unsigned char *buf, size_t cap)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	char data[512];
	size_t used = 0;

	memset(data, 'x', sizeof(data));
	CHECK(a && e);
	CHECK(archive_write_set_format_pax(a) == ARCHIVE_OK);
	CHECK(archive_write_open_memory(a, buf, cap, &used) == ARCHIVE_OK);
	archive_entry_set_pathname(e, "k.bin");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)1 << 50);
	archive_entry_sparse_add_entry(e, 0, sizeof(data));
	CHECK(archive_write_header(a, e) == ARCHIVE_OK);
	CHECK(archive_write_data(a, data, sizeof(data)) == (la_ssize_t)sizeof(data));
	CHECK(archive_write_close(a) == ARCHIVE_OK);
	archive_entry_free(e);
	archive_write_free(a);
	return used;
}

static void test_tarin(void)
{
	static unsigned char buf[1 << 16];
	size_t len = sparse_tar(buf, sizeof(buf));
	struct slab_tarin_options o = { 0 };
	struct slab_tarin *t = slab_tarin_new();
	struct slab_tarin_sample *s = NULL;

	/* Out of memory is no fault of the input: never SLAB_ERR_CORRUPT. */
	CHECK(t && slab_tarin_open_memory(t, buf, len, "sparse.tar", &o) == 0);
	CHECK_STR(slab_tarin_error(t), "");
	CHECK(slab_tarin_next(t, &s) == SLAB_ERR_NOMEM && !s);
	CHECK_STR(slab_tarin_error(t), "'sparse.tar': out of memory for a sample of 1125899906842624 bytes");
	slab_tarin_free(t);

	/* Not a tar: the format's code, and the input named. */
	t = slab_tarin_new();
	CHECK(t && slab_tarin_open_memory(t, "hello, world, this is not a tar archive", 39,
					  NULL, &o) == SLAB_ERR_FORMAT);
	CHECK(has(slab_tarin_error(t), "'(memory)': not a tar archive"));
	slab_tarin_free(t);

	/* A missing file: the system's reason. */
	t = slab_tarin_new();
	CHECK(t && slab_tarin_open(t, "/nonexistent/shard.tar", &o) == SLAB_ERR_IO);
	CHECK_STR(slab_tarin_error(t), "'/nonexistent/shard.tar': No such file or directory");
	slab_tarin_free(t);

	{
		size_t kl;
		const char *field;

		CHECK(slab_split_name("a/b.jpg", &kl, &field) == 0 && kl == 3);
		CHECK(slab_split_name("a/.jpg", &kl, &field) == SLAB_ERR_INVAL);
		CHECK(slab_split_name("nodot", &kl, &field) == SLAB_ERR_INVAL);
	}
}

/* ---- reader ---------------------------------------------------------------------------- */

static void test_reader(void)
{
	struct slab *s = slab_new();
	struct slab_sample smp;

	CHECK(s);
	CHECK_STR(slab_error(s), "");
	CHECK(slab_open(s, "/nonexistent/d.slab") == SLAB_ERR_IO);
	CHECK_STR(slab_error(s), "'/nonexistent/d.slab': No such file or directory");
	slab_close(s);

	s = slab_new();
	CHECK(slab_open_mem(s, "not a slab file at all", 22, "mem.slab") == SLAB_ERR_FORMAT);
	CHECK_STR(slab_error(s), "'mem.slab': not a slab file (bad magic number)");
	/* nothing open: every index is out of range, under the name it was given */
	CHECK(slab_sample(s, 0, &smp) == SLAB_ERR_RANGE);
	CHECK_STR(slab_error(s), "'mem.slab': sample #0 out of range (0 samples)");
	slab_close(s);
}

/* A file of two samples with fields "a" and "b", read into memory: *len bytes. */
static unsigned char *two_fields(size_t *len)
{
	struct slab_writer_field f[2] = {
		{ .name = "a", .data = "x", .size = 1 },
		{ .name = "b", .data = "yz", .size = 2 },
	};
	struct slab_writer *w = slab_writer_new();
	int fd = open("two.slab", O_RDWR | O_CREAT | O_TRUNC, 0644);
	unsigned char *buf = NULL;
	struct stat st;

	CHECK(w && fd >= 0 && slab_writer_open(w, fd, "two.slab", NULL) == 0);
	CHECK(slab_writer_add(w, "k0", 2, f, 2) == 0 && slab_writer_add(w, "k1", 2, f, 2) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size)) != NULL);
	CHECK(pread(fd, buf, (size_t)st.st_size, 0) == st.st_size);
	close(fd);
	CHECK(unlink("two.slab") == 0);
	*len = (size_t)st.st_size;
	return buf;
}

/* The table's and the trailer's checksums of a changed file made right again, so that the
 * check under test is the one that fails. */
static void fix_crcs(unsigned char *b, size_t len)
{
	unsigned char *tr = b + len - SLAB_TRAILER_SIZE;

	slab_put32(tr + 40, slab_crc32c(0, b + slab_le64(tr + 8), (size_t)slab_le64(tr + 16)));
	slab_put32(tr + 60, slab_crc32c(0, tr, 60));
}

/* A reader whose open failed holds nothing of the file: no count, no schema, no table for a
 * later call to read unchecked (a schema cut short left a field name NULL, and
 * slab_field_lookup() crashed on it); and it may be opened again. */
static void test_failed_open(void)
{
	size_t len;
	unsigned char *good = two_fields(&len), *bad = malloc(len);
	unsigned char *t = good + slab_le64(good + len - SLAB_TRAILER_SIZE + 8);
	uint64_t schema = slab_le64(t + 32);
	static const struct {
		const char *what;
		int code;
		const char *text;
	} cases[] = {
		{ "order", SLAB_ERR_CORRUPT, "'bad.slab': schema field 1 is empty, out of order or repeated" },
		{ "cut", SLAB_ERR_CORRUPT, "'bad.slab': schema truncated at field 1" },
		{ "count", SLAB_ERR_CORRUPT, "'bad.slab': trailer and table disagree on the sample count" },
		{ "table", SLAB_ERR_CORRUPT, "'bad.slab': table checksum mismatch (table at offset 8192)" },
	};
	struct slab_sample smp;
	struct slab_field fl;
	uint64_t idx;
	struct slab *s;

	CHECK(bad && slab_le32(t + 24) == 2 && slab_le16(t + schema + 3) == 1 && t[schema + 5] == 'b');
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		unsigned char *bt = bad + (t - good);

		memcpy(bad, good, len);
		if (c == 0)
			bt[schema + 5] = 'A';           /* "a", "A": out of order */
		else if (c == 1)
			slab_put64(bt + 40, 4);         /* the schema ends inside field 1's length */
		else if (c == 2)
			slab_put64(bt + 8, 1);          /* the table says 1 sample, the trailer 2 */
		if (c < 3)
			fix_crcs(bad, len);
		else
			bt[schema + 5] = 'c';           /* the table's checksum left as it was */
		s = slab_new();
		CHECK(s && slab_open_mem(s, bad, len, "bad.slab") == cases[c].code);
		CHECK_STR(slab_error(s), cases[c].text);
		CHECK(slab_count(s) == 0 && slab_field_count(s) == 0 && slab_page_count(s) == 0);
		CHECK(slab_file_size(s) == 0 && slab_base(s) == NULL && slab_field_name(s, 0) == NULL);
		CHECK(slab_field_lookup(s, "a") == SLAB_ERR_NOTFOUND);
		CHECK(slab_field_lookup(s, "b") == SLAB_ERR_NOTFOUND);
		CHECK(slab_sample(s, 0, &smp) == SLAB_ERR_RANGE);
		CHECK_STR(slab_error(s), "'bad.slab': sample #0 out of range (0 samples)");
		CHECK(slab_get(s, 0, 0, &fl) == SLAB_ERR_RANGE);
		CHECK(slab_find(s, "k0", 2, &idx) == SLAB_ERR_NOTFOUND);
		CHECK(slab_verify(s, NULL, NULL) == SLAB_ERR_INVAL);
		CHECK_STR(slab_error(s), "'bad.slab': reader not open");
		/* opened again, on the good bytes: the same as a new reader */
		CHECK(slab_open_mem(s, good, len, "good.slab") == 0);
		CHECK(slab_count(s) == 2 && slab_field_lookup(s, "b") == 1);
		CHECK(slab_verify(s, NULL, NULL) == 0);
		slab_close(s);
	}
	/* and a file that fails to open from a path: unmapped, the same */
	{
		int fd = open("bad.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		memcpy(bad, good, len);
		bad[len - SLAB_TRAILER_SIZE + 8 + 16] ^= 1;     /* file size in the trailer */
		fix_crcs(bad, len);
		CHECK(fd >= 0 && write(fd, bad, len) == (ssize_t)len);
		close(fd);
		s = slab_new();
		CHECK(s && slab_open(s, "bad.slab") == SLAB_ERR_CORRUPT);
		CHECK(slab_count(s) == 0 && slab_base(s) == NULL && slab_field_count(s) == 0);
		CHECK_STR(slab_path(s), "bad.slab");
		slab_close(s);
		CHECK(unlink("bad.slab") == 0);
	}
	free(bad);
	free(good);
}

/* The lookups on a const dataset or plan keep no text (many threads may make them at once):
 * slab_dataset_find()'s failure in a file says which file, whose reader has the text (it
 * was "" everywhere). */
static void test_const_lookups(void)
{
	size_t len, file = 99;
	unsigned char *b = two_fields(&len);
	unsigned char *t = b + slab_le64(b + len - SLAB_TRAILER_SIZE + 8);
	uint64_t buckets = slab_le64(t + 88), index = 99;
	const char *paths[] = { "good.slab", "bad.slab" };
	struct slab_dataset *d = slab_dataset_new();
	char want[128];
	int fd;

	fd = open("good.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, b, len) == (ssize_t)len);
	close(fd);
	/* every slot of the key index points past the 2 samples */
	for (uint64_t h = 0; h < buckets; h++)
		slab_put64(t + slab_le64(t + 80) + h * 8, 3);
	fix_crcs(b, len);
	fd = open("bad.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, b, len) == (ssize_t)len);
	close(fd);
	CHECK(d && slab_dataset_open(d, paths, 2) == 0);
	CHECK(slab_dataset_find(d, "k1", 2, &file, &index) == 0 && file == 0 && index == 1);
	CHECK(slab_dataset_find(d, "zz", 2, &file, &index) == SLAB_ERR_CORRUPT);
	CHECK(file == 1);
	snprintf(want, sizeof(want), "'bad.slab': key index slot %llu points past the samples",
		 (unsigned long long)(slab_key_hash("zz", 2) & (buckets - 1)));
	CHECK_STR(slab_error(slab_dataset_file(d, 1)), want);
	/* good.slab lacks "zz": no text written in its reader, which threads share */
	CHECK_STR(slab_error(slab_dataset_file(d, 0)), "");
	CHECK_STR(slab_dataset_error(d), "");
	CHECK(slab_dataset_locate(d, 4, &file, &index) == SLAB_ERR_RANGE);
	CHECK_STR(slab_dataset_error(d), "");
	slab_dataset_close(d);
	/* a key no file has: SLAB_ERR_NOTFOUND alone, every reader's text as it was */
	d = slab_dataset_new();
	paths[1] = "good.slab";
	CHECK(d && slab_dataset_open(d, paths, 2) == 0);
	CHECK(slab_dataset_find(d, "zz", 2, &file, &index) == SLAB_ERR_NOTFOUND);
	CHECK_STR(slab_error(slab_dataset_file(d, 0)), "");
	CHECK_STR(slab_error(slab_dataset_file(d, 1)), "");
	CHECK_STR(slab_dataset_error(d), "");
	/* slab_find() on a reader of its own still says why */
	CHECK(slab_find(slab_dataset_file(d, 0), "zz", 2, &index) == SLAB_ERR_NOTFOUND);
	CHECK_STR(slab_error(slab_dataset_file(d, 0)), "'good.slab': no sample with key 'zz'");
	slab_dataset_close(d);
	CHECK(unlink("good.slab") == 0 && unlink("bad.slab") == 0);
	free(b);
}

/* ---- writer ---------------------------------------------------------------------------- */

static const char *mem_name = "out.slab";

static void test_writer_codes(void)
{
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .size = sizeof(o), .page_size = 4096 };
	struct slab_writer_options tiny = { .size = sizeof(size_t), .page_size = 4096 };
	struct slab_writer_field f[2] = {
		{ .name = "a", .data = "x", .size = 1 },
		{ .name = "", .data = "y", .size = 1 },
	};
	struct slab_writer_stats st = { .size = sizeof(st) };
	int fd = open("/dev/null", O_WRONLY);

	CHECK(w && fd >= 0);
	/* a caller's options struct smaller than any version */
	CHECK(slab_writer_open(w, fd, mem_name, &tiny) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'out.slab': options size 8 is that of no version");
	CHECK(slab_writer_add(w, "k1", 2, f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'(output)': writer is not open");
	/* and a page size no file has: nothing written, the writer as new, which opens with
	 * others (it said "writer already open") */
	{
		struct slab_writer_options odd = { .size = sizeof(odd), .page_size = 4097 };

		CHECK(slab_writer_open(w, fd, mem_name, &odd) == SLAB_ERR_INVAL);
		CHECK_STR(slab_writer_error(w),
			  "'out.slab': page size 4097 is not a power of two from 4 KiB to 1 GiB");
	}
	/* a descriptor it cannot write to (closed; read-only) fails at once, not at the
	 * finish after every sample was taken; nothing written, the writer as new */
	{
		int ro = open("/dev/null", O_RDONLY), closed = dup(fd);

		CHECK(ro >= 0 && closed >= 0 && close(closed) == 0);
		errno = 0;
		CHECK(slab_writer_open(w, closed, mem_name, &o) == SLAB_ERR_IO);
		CHECK(errno == EBADF);
		CHECK(has(slab_writer_error(w), "'out.slab': file descriptor "));
		CHECK(has(slab_writer_error(w), " is not open for writing: Bad file descriptor"));
		errno = 0;
		CHECK(slab_writer_open(w, ro, mem_name, &o) == SLAB_ERR_IO);
		CHECK(errno == EBADF);
		CHECK(has(slab_writer_error(w), " is not open for writing: Bad file descriptor"));
		CHECK(slab_writer_add(w, "k1", 2, f, 1) == SLAB_ERR_INVAL);
		CHECK_STR(slab_writer_error(w), "'(output)': writer is not open");
		close(ro);
	}
	CHECK(slab_writer_open(w, fd, mem_name, &o) == 0);
	CHECK(slab_writer_add(w, "k1", 2, f, 1) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);

	w = slab_writer_new();
	CHECK(slab_writer_open(w, fd, mem_name, &o) == 0);
	CHECK_STR(slab_writer_error(w), "");
	CHECK(slab_writer_add(w, "k1", 2, f, 1) == 0);
	/* refused samples: the writer goes on, the text names the sample, not the output */
	CHECK(slab_writer_add(w, "k1", 2, f, 1) == SLAB_ERR_DUPKEY);
	CHECK_STR(slab_writer_error(w), "key 'k1' appears again (first as sample 0)");
	f[1].name = "a";
	CHECK(slab_writer_add(w, "k2", 2, f, 2) == SLAB_ERR_DUPFIELD);
	CHECK_STR(slab_writer_error(w), "sample 'k2': field 'a' given twice");
	CHECK(slab_writer_add(w, "k2", 2, f, 1) == 0);
	/* an empty field name is a bad argument, not out of memory */
	f[1].name = "";
	CHECK(slab_writer_add(w, "k3", 2, f, 2) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'out.slab': empty field name");
	slab_writer_stats(w, &st);
	CHECK(st.size == sizeof(st) && st.samples == 2 && st.fields == 1);
	/* and that error is final */
	CHECK(slab_writer_finish(w) == SLAB_ERR_INVAL);
	slab_writer_free(w);
	close(fd);
}

/* A writer used out of order, or given what the file could not hold: an error, never a crash,
 * and never a file that its own reader refuses or slab_verify() calls corrupt. */
static void test_writer_misuse(void)
{
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_field f = { .name = "a", .data = "x", .size = 1 };
	static const struct { const char *key; size_t len; } bad[] = {
		{ "/abs", 4 }, { "d/../e", 6 }, { "..", 2 }, { "a\0b", 3 },
	};
	struct slab *s;
	int fd;

	/* before open: no page size to place a sample with (it divided by zero), no output */
	CHECK(w && slab_writer_add(w, "k", 1, &f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'(output)': writer is not open");
	CHECK(slab_writer_finish(w) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'(output)': writer is not open");
	/* and opened after that slip, it writes its file (every call after the open said
	 * "writer is not open", which the open had returned 0 for) */
	fd = open("late.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && slab_writer_open(w, fd, "late.slab", NULL) == 0);
	CHECK(slab_writer_add(w, "k", 1, &f, 1) == 0);
	CHECK(slab_writer_finish(w) == 0);
	/* finished: said so, not "not open" */
	CHECK(slab_writer_add(w, "k2", 2, &f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'late.slab': writer finished already");
	CHECK(slab_writer_finish(w) == SLAB_ERR_INVAL);
	slab_writer_free(w);
	close(fd);
	s = slab_new();
	CHECK(s && slab_open(s, "late.slab") == 0 && slab_verify(s, NULL, NULL) == 0);
	CHECK(slab_count(s) == 1);
	slab_close(s);
	CHECK(unlink("late.slab") == 0);

	/* a writer that failed gives its failure again, with its reason: a write to a pipe no
	 * one reads is EPIPE, at the finish too (it said "writer is not open") */
	{
		int p[2];
		char big[70000];

		memset(big, 'x', sizeof(big));
		CHECK(pipe(p) == 0);
		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		w = slab_writer_new();
		CHECK(w && slab_writer_open(w, p[1], "gone.slab", NULL) == 0);
		f.data = big;
		f.size = sizeof(big);
		CHECK(slab_writer_add(w, "k", 1, &f, 1) == SLAB_ERR_IO ||
		      slab_writer_finish(w) == SLAB_ERR_IO);
		CHECK(has(slab_writer_error(w), "'gone.slab': write failed at offset 0: Broken pipe"));
		CHECK(slab_writer_add(w, "k2", 2, &f, 1) == SLAB_ERR_IO);
		CHECK(slab_writer_finish(w) == SLAB_ERR_IO);
		CHECK(has(slab_writer_error(w), "'gone.slab': write failed at offset 0: Broken pipe"));
		slab_writer_free(w);
		close(p[1]);
		signal(SIGPIPE, SIG_DFL);
		f.data = "x";
		f.size = 1;
	}

	/* opened twice: refused, and the first file goes on whole (it had a second header in
	 * it, and the first one's buffers leaked) */
	fd = open("twice.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = slab_writer_new();
	CHECK(fd >= 0 && w && slab_writer_open(w, fd, "twice.slab", NULL) == 0);
	CHECK(slab_writer_open(w, fd, "other.slab", NULL) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'twice.slab': writer already open");
	CHECK(slab_writer_add(w, "k", 1, &f, 1) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	close(fd);
	s = slab_new();
	CHECK(s && slab_open(s, "twice.slab") == 0 && slab_verify(s, NULL, NULL) == 0);
	CHECK(slab_count(s) == 1);
	slab_close(s);
	CHECK(unlink("twice.slab") == 0);

	fd = open("/dev/null", O_WRONLY);
	CHECK(fd >= 0);
	/* a field name with a '/', which every reader refuses ("schema field 0 has a '/'") */
	w = slab_writer_new();
	CHECK(w && slab_writer_open(w, fd, mem_name, NULL) == 0);
	f.name = "x/y";
	CHECK(slab_writer_add(w, "k", 1, &f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'out.slab': field name 'x/y' has a '/' in it");
	slab_writer_free(w);
	f.name = "a";
	/* keys that are not safe member names, which slab_verify() calls corrupt */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[200];

		snprintf(want, sizeof(want), "'out.slab': key '%s' is not a safe member name "
			 "(absolute, with a '..' component or a NUL byte)", bad[i].key);
		w = slab_writer_new();
		CHECK(w && slab_writer_open(w, fd, mem_name, NULL) == 0);
		CHECK(slab_writer_add(w, bad[i].key, bad[i].len, &f, 1) == SLAB_ERR_INVAL);
		CHECK_STR(slab_writer_error(w), want);
		slab_writer_free(w);
	}
	close(fd);
}

/* Fields the writer refuses before writing anything of the sample: a NULL name, NULL data
 * of some bytes (it crashed on both), two image flags, which slab(5) forbids (it wrote them,
 * for slab_verify() to call corrupt), RESTART without JPEG. An image flag with VIDEO is checked by slab_verify()
 * too. */
static void test_writer_fields(void)
{
	static const struct {
		struct slab_writer_field f;
		const char *text;
	} bad[] = {
		{ { .name = NULL, .data = "x", .size = 1 }, "'out.slab': sample 'k' field 1: no name" },
		{ { .name = "b", .data = NULL, .size = 3 },
		  "'out.slab': sample 'k' field 'b': no data for 3 bytes" },
		{ { .name = "b", .data = "x", .size = 1, .flags = SLAB_FIELD_JPEG | SLAB_FIELD_PNG },
		  "'out.slab': sample 'k' field 'b': more than one image flag" },
		{ { .name = "b", .data = "x", .size = 1, .flags = SLAB_FIELD_PNG | SLAB_FIELD_WEBP },
		  "'out.slab': sample 'k' field 'b': more than one image flag" },
		/* slab(5): RESTART is a JPEG's (it was written on anything, and verified) */
		{ { .name = "b", .data = "x", .size = 1, .flags = SLAB_FIELD_RESTART },
		  "'out.slab': sample 'k' field 'b': RESTART without JPEG" },
		{ { .name = "b", .data = "x", .size = 1,
		    .flags = SLAB_FIELD_RESTART | SLAB_FIELD_TRANSCODED | SLAB_FIELD_PNG },
		  "'out.slab': sample 'k' field 'b': RESTART without JPEG" },
		/* a flag the library does not know, a value over a byte (was cut to 4:4:4) */
		{ { .name = "b", .data = "x", .size = 1, .flags = 0x80 },
		  "'out.slab': sample 'k' field 'b': unknown flags 0x80" },
		{ { .name = "b", .data = "x", .size = 1, .flags = SLAB_FIELD_JPEG, .subsamp = 256 },
		  "'out.slab': sample 'k' field 'b': subsampling 256 or colour space 0 over 255" },
		{ { .name = "b", .data = "x", .size = 1, .flags = SLAB_FIELD_JPEG,
		    .colorspace = 0x103 },
		  "'out.slab': sample 'k' field 'b': subsampling 0 or colour space 259 over 255" },
	};
	struct slab_writer_field f[2] = { { .name = "a", .data = "x", .size = 1 } };
	struct slab_video_info vi = { .width = 2, .height = 2, .frames = 1, .fps_num = 1,
				      .fps_den = 1, .codec = "h264", .duration = 1e13 };
	const struct slab_video_info *vis[2] = { NULL, &vi };
	struct slab_writer *w;
	size_t len;
	struct slab *s;
	unsigned char *buf;
	int fd = open("/dev/null", O_WRONLY);

	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slab_writer_stats st = { .size = sizeof(st) };

		w = slab_writer_new();
		CHECK(w && slab_writer_open(w, fd, mem_name, NULL) == 0);
		f[1] = bad[i].f;
		CHECK(slab_writer_add(w, "k", 1, f, 2) == SLAB_ERR_INVAL);
		CHECK_STR(slab_writer_error(w), bad[i].text);
		slab_writer_stats(w, &st);
		CHECK(st.samples == 0 && st.data_bytes == 0);
		slab_writer_free(w);
	}
	close(fd);

	/* NULL data of no bytes is an empty field; one image flag (and TRANSCODED) is fine */
	fd = open("flags.slab", O_RDWR | O_CREAT | O_TRUNC, 0644);
	w = slab_writer_new();
	CHECK(fd >= 0 && w && slab_writer_open(w, fd, "flags.slab", NULL) == 0);
	f[1] = (struct slab_writer_field){ .name = "b", .data = NULL, .size = 0 };
	CHECK(slab_writer_add(w, "k0", 2, f, 2) == 0);
	f[1] = (struct slab_writer_field){ .name = "b", .data = "x", .size = 1,
					   .flags = SLAB_FIELD_PNG | SLAB_FIELD_TRANSCODED };
	CHECK(slab_writer_add(w, "k1", 2, f, 2) == 0);
	f[1] = (struct slab_writer_field){ .name = "b", .data = "vid", .size = 3,
					   .flags = SLAB_FIELD_VIDEO, .width = 2, .height = 2 };
	CHECK(slab_writer_add_ex(w, "k2", 2, f, 2, vis) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	len = (size_t)lseek(fd, 0, SEEK_END);
	CHECK((buf = malloc(len)) != NULL && pread(fd, buf, len, 0) == (ssize_t)len);
	close(fd);
	CHECK(unlink("flags.slab") == 0);
	s = slab_new();
	CHECK(s && slab_open_mem(s, buf, len, "flags.slab") == 0);
	CHECK(slab_verify(s, NULL, NULL) == 0);
	/* a length past 2^63 microseconds, as a video's header may claim, kept as it was (it
	 * came back as 2^63 us whatever it was) */
	{
		struct slab_video_info got;

		CHECK(slab_field_video(s, 2, 1, &got) == 1);
		CHECK(got.frames == 1 && got.duration == 1e13);
	}
	slab_close(s);
	/* the video field given a PNG flag too, as no writer writes it */
	{
		unsigned char *t = buf + slab_le64(buf + len - SLAB_TRAILER_SIZE + 8);
		unsigned char *rec = t + slab_le64(t + 56) + (2 * 2 + 1) * SLAB_FIELD_RECORD;

		CHECK(rec[24] == (SLAB_FIELD_PRESENT | SLAB_FIELD_VIDEO));
		rec[24] |= SLAB_FIELD_PNG;
		fix_crcs(buf, len);
	}
	s = slab_new();
	CHECK(s && slab_open_mem(s, buf, len, "flags.slab") == 0);
	CHECK(slab_verify(s, NULL, NULL) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_error(s), "'flags.slab': sample #2 'k2' field 'b': flags 0x49: more than one "
		  "of JPEG, PNG, WEBP and VIDEO");
	slab_close(s);
	free(buf);
}

/* Two writers, each with many field names given in another order, finish at once: the
 * schemas must come out sorted and each sample's fields where they were put. */
enum { NAMES = 400, ROUNDS = 8 };

struct wjob {
	char path[64];
	int reverse;
	int ret;
};

static char names[NAMES][16];

static void *write_one(void *arg)
{
	struct wjob *j = arg;
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .size = sizeof(o), .page_size = 4096 };
	int fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	j->ret = -100;
	if (!w || fd < 0 || slab_writer_open(w, fd, j->path, &o) < 0)
		goto out;
	for (int i = 0; i < NAMES; i++) {
		int k = j->reverse ? NAMES - 1 - i : (i * 7919) % NAMES;
		struct slab_writer_field f = { .name = names[k], .data = names[k],
					       .size = strlen(names[k]) };
		char key[16];

		snprintf(key, sizeof(key), "s%d", i);
		if ((j->ret = slab_writer_add(w, key, strlen(key), &f, 1)) < 0)
			goto out;
	}
	j->ret = slab_writer_finish(w);
out:
	slab_writer_free(w);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void check_written(const struct wjob *j)
{
	struct slab *s = slab_new();

	CHECK(s && slab_open(s, j->path) == 0);
	CHECK(slab_verify(s, NULL, NULL) == 0);
	CHECK(slab_field_count(s) == NAMES);
	for (unsigned f = 1; f < slab_field_count(s); f++)
		CHECK(strcmp(slab_field_name(s, f - 1), slab_field_name(s, f)) < 0);
	for (int i = 0; i < NAMES; i += 97) {
		int k = j->reverse ? NAMES - 1 - i : (i * 7919) % NAMES;
		int id = slab_field_lookup(s, names[k]);
		struct slab_field fl;

		CHECK(id >= 0 && slab_get(s, (uint64_t)i, (unsigned)id, &fl) == 1);
		CHECK(fl.size == strlen(names[k]) && memcmp(fl.data, names[k], fl.size) == 0);
	}
	slab_close(s);
	unlink(j->path);
}

static void test_writers_in_threads(void)
{
	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "f%05d", (i * 4099) % 100000);
	for (int round = 0; round < ROUNDS; round++) {
		struct wjob jobs[2] = { { "w0.slab", 0, 0 }, { "w1.slab", 1, 0 } };
		pthread_t th[2];

		for (int k = 0; k < 2; k++)
			CHECK(pthread_create(&th[k], NULL, write_one, &jobs[k]) == 0);
		for (int k = 0; k < 2; k++)
			CHECK(pthread_join(th[k], NULL) == 0);
		for (int k = 0; k < 2; k++) {
			CHECK(jobs[k].ret == 0);
			check_written(&jobs[k]);
		}
	}
}

/* ---- sized structs ----------------------------------------------------------------------- */

/* Where a struct's last member ends: the first version's size of the structs that have not
 * grown yet, tail padding left out (a version's size is the end of its last member, or the
 * offset of the member the next one added). */
#define END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Every sized struct taken at its first version's size and at today's, and refused smaller:
 * the first version's size was sizeof of today's struct, which refused the first of these
 * where tail padding follows the last member (plan parameters, the video spec), and would
 * have changed with the first member added. */
static void test_sized_first(void)
{
	size_t wo[] = { sizeof(struct slab_writer_options),
			END(struct slab_writer_options, writeback) };
	size_t pp[] = { sizeof(struct slab_plan_params), END(struct slab_plan_params, flags) };
	size_t vs[] = { sizeof(struct slab_video_spec),
			END(struct slab_video_spec, codec_threads) };
	struct slab_writer_field fl = { .name = "a", .data = "x", .size = 1 };
	struct slab_plan *p = slab_plan_new();
	struct slab *s = slab_new();
	int fd;

	CHECK(p && s);
	for (int k = 0; k < 3; k++) {
		struct slab_writer_options o = { .size = k < 2 ? wo[k] : wo[1] - 1, .page_size = 4096 };
		struct slab_writer_stats st;
		struct slab_writer *w = slab_writer_new();

		fd = k < 2 ? open("sized.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644)
			   : open("/dev/null", O_WRONLY);
		CHECK(w && fd >= 0);
		if (k == 2) {
			CHECK(slab_writer_open(w, fd, "sized.slab", &o) == SLAB_ERR_INVAL);
			CHECK_STR(slab_writer_error(w), "'sized.slab': options size 31 is that of no version");
			slab_writer_free(w);
			close(fd);
			continue;
		}
		CHECK(slab_writer_open(w, fd, "sized.slab", &o) == 0);
		for (int i = 0; i < 3; i++) {
			char key[4] = { 'k', (char)('0' + i) };

			CHECK(slab_writer_add(w, key, 2, &fl, 1) == 0);
		}
		memset(&st, 0xee, sizeof(st));
		st.size = k == 0 ? sizeof(st) : END(struct slab_writer_stats, file_bytes);
		slab_writer_stats(w, &st);
		CHECK(st.samples == 3 && st.fields == 1 && st.data_bytes == 3);
		CHECK(slab_writer_finish(w) == 0);
		slab_writer_free(w);
		close(fd);
	}
	CHECK(slab_open(s, "sized.slab") == 0 && slab_count(s) == 3);
	for (int k = 0; k < 3; k++) {
		struct slab_plan_params prm = { .size = k < 2 ? pp[k] : pp[1] - 1, .world = 1,
						.mode = SLAB_PLAN_QUASI, .window = 1 };
		int rc = slab_plan_make(p, &s, 1, &prm, 0);

		CHECK(rc == (k < 2 ? 0 : SLAB_ERR_INVAL));
		if (k < 2)
			CHECK(slab_plan_count(p) == 3 && slab_plan_params(p)->mode == SLAB_PLAN_QUASI);
	}
	CHECK_STR(slab_plan_error(p), "plan parameters of 51 bytes: no such version");
	for (int k = 0; k < 2; k++) {
		struct slab_plan_stats ps;
		struct slab_follow_stats fs;
		struct slab_follow_item it;
		struct slab_follow *f = slab_follow_new();
		const char *paths[] = { "sized.slab" };

		memset(&ps, 0xee, sizeof(ps));
		ps.size = k == 0 ? sizeof(ps) : END(struct slab_plan_stats, same_page_neighbours);
		CHECK(slab_plan_stats(p, &s, 1, &ps) == 0 && ps.samples == 3 && ps.distinct_pages == 1);
		CHECK(f && slab_follow_open(f, &s, paths, 1, p, NULL) == 0);
		while (slab_follow_next(f, &it) == 1)
			;
		memset(&fs, 0xee, sizeof(fs));
		fs.size = k == 0 ? sizeof(fs) : END(struct slab_follow_stats, adopted);
		slab_follow_stats(f, &fs);
		CHECK(fs.samples == 3 && fs.bytes == 3 && fs.released == 0);
		slab_follow_close(f);
	}
	for (int k = 0; k < 3; k++) {
		struct slab_video_spec v;
		struct slab_video_info info = { .width = 64, .height = 48, .frames = 30, .duration = 1,
						.fps_num = 30, .fps_den = 1 };
		struct slab_video_params vp;

		slab_video_spec_init(&v, 32, 32, 4);
		v.size = k < 2 ? vs[k] : vs[1] - 1;
		CHECK(slab_video_params(&v, &info, 1, 0, 0, &vp) == (k < 2 ? 0 : SLAB_ERR_INVAL));
	}
	/* remote options: the options are used for a URL only; nothing answers at port 1 */
	for (int k = 0; k < 3; k++) {
		struct slab_remote_options ro = { .cache_dir = ".", .retries = -1, .timeout = 10 };
		struct slab *r = slab_new();
		int rc;

		ro.size = k == 0 ? sizeof(ro) : END(struct slab_remote_options, log_arg) - (k == 2);
		rc = slab_open_ex(r, "http://127.0.0.1:1/sized.slab", &ro);
		if (k < 2) {
			CHECK(rc == SLAB_ERR_IO);
		} else {
			CHECK(rc == SLAB_ERR_INVAL);
			CHECK_STR(slab_error(r), "'http://127.0.0.1:1/sized.slab': remote options of 79 bytes: no such version");
		}
		slab_close(r);
	}
	/* a file's open has no use for them, but a struct of no version is refused there too
	 * (it opened, and the same call failed on the day the path was a URL) */
	for (int k = 0; k < 3; k++) {
		struct slab_remote_options ro = { .size = k == 0 ? 0 : k == 1 ? 79 : 1 };
		struct slab *r = slab_new();
		struct slab_dataset *d = slab_dataset_new();
		const char *path = "sized.slab";

		CHECK(r && d);
		CHECK(slab_open_ex(r, path, &ro) == (k ? SLAB_ERR_INVAL : 0));
		CHECK(slab_dataset_open_ex(d, &path, 1, &ro) == (k ? SLAB_ERR_INVAL : 0));
		if (k) {
			char want[100];

			snprintf(want, sizeof(want), "'sized.slab': remote options of %s: no such version",
				 k == 1 ? "79 bytes" : "1 byte");
			CHECK_STR(slab_error(r), want);
			CHECK_STR(slab_dataset_error(d), want);
			CHECK(slab_count(r) == 0 && slab_base(r) == NULL);
			CHECK(slab_open_ex(r, path, NULL) == 0);
		}
		CHECK(slab_count(r) == slab_dataset_count(d) || k);
		slab_dataset_close(d);
		slab_close(r);
	}
	slab_plan_free(p);
	slab_close(s);
	CHECK(unlink("sized.slab") == 0);
}

/* ---- plans and walks --------------------------------------------------------------------- */

/* A walk used before it is open, and option structs not given (NULL): an error or the
 * defaults, never a crash, and the walk opened afterwards starts at its first entry. */
static void test_walk_misuse(void)
{
	struct slab_writer_field fl = { .name = "a", .data = "x", .size = 1 };
	const char *paths[] = { "walk.slab" };
	struct slab_plan_params prm = { .size = sizeof(prm), .world = 1 };
	struct slab_follow_item it;
	struct slab_plan *p = slab_plan_new();
	struct slab_follow *f = slab_follow_new();
	struct slab_writer *w = slab_writer_new();
	struct slab_loader *l = slab_loader_new();
	struct slab_dataset *d = slab_dataset_new();
	struct slab *s = slab_new();
	int fd = open("walk.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	uint64_t n = 0, pos = 0;
	int r;

	CHECK(p && f && w && l && d && s && fd >= 0);
	CHECK(slab_writer_open(w, fd, "walk.slab", NULL) == 0);
	for (int i = 0; i < 5; i++) {
		char key[16];

		snprintf(key, sizeof(key), "k%d", i);
		CHECK(slab_writer_add(w, key, strlen(key), &fl, 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	close(fd);
	CHECK(slab_open(s, "walk.slab") == 0);

	/* no parameters: all zero, a world of 0 ranks */
	CHECK(slab_plan_make(p, &s, 1, NULL, 0) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(p), "mode 0, rank 0, world size 0, window 0: out of range");
	CHECK(slab_plan_make(p, &s, 1, &prm, 0) == 0 && slab_plan_count(p) == 5);

	/* next before open: not the end of an empty walk (it also moved the walk opened
	 * afterwards past its first entry) */
	CHECK(slab_follow_next(f, &it) == SLAB_ERR_INVAL);
	CHECK_STR(slab_follow_error(f), "plan walk not open");
	/* no options: the defaults */
	CHECK(slab_follow_open(f, &s, paths, 1, p, NULL) == 0);
	while ((r = slab_follow_next(f, &it)) == 1) {
		CHECK(it.pos == pos++);
		n++;
	}
	CHECK(r == 0 && n == 5);
	slab_follow_close(f);

	/* a plan of other files: refused at open, as slab_plan_match() refuses it (the walk
	 * failed part way, "sample #3 out of range"), the plan's own error untouched */
	{
		struct slab *two[2] = { NULL, s };
		const char *opaths[] = { "other.slab", "walk.slab" };

		fd = open("other.slab", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		w = slab_writer_new();
		CHECK(fd >= 0 && w && slab_writer_open(w, fd, "other.slab", NULL) == 0);
		CHECK(slab_writer_add(w, "k0", 2, &fl, 1) == 0);
		CHECK(slab_writer_finish(w) == 0);
		slab_writer_free(w);
		close(fd);
		CHECK((two[0] = slab_new()) && slab_open(two[0], "other.slab") == 0);
		f = slab_follow_new();
		CHECK(f && slab_follow_open(f, two, opaths, 1, p, NULL) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f), "file 0 is not the one the plan was made for (content differs)");
		CHECK(slab_follow_open(f, two, opaths, 2, p, NULL) == SLAB_ERR_INVAL);
		CHECK_STR(slab_follow_error(f), "the plan is for 1 file, 2 given");
		CHECK(slab_follow_next(f, &it) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(p), "mode 0, rank 0, world size 0, window 0: out of range");
		slab_follow_close(f);
		/* and through a dataset of other files */
		CHECK(slab_dataset_open(d, opaths, 1) == 0);
		CHECK(slab_dataset_follow(d, p, NULL, &f) == SLAB_ERR_INVAL);
		CHECK_STR(slab_dataset_error(d), "file 0 is not the one the plan was made for (content differs)");
		slab_dataset_close(d);
		CHECK((d = slab_dataset_new()) != NULL);
		slab_close(two[0]);
		CHECK(unlink("other.slab") == 0);
	}

	/* a loader without options: a batch of 0 samples */
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	CHECK(slab_loader_open(l, d, p, NULL) == SLAB_ERR_INVAL);
	CHECK_STR(slab_loader_error(l), "batch size 0");
	slab_loader_close(l);
	slab_dataset_close(d);
	slab_plan_free(p);
	slab_close(s);
	CHECK(unlink("walk.slab") == 0);
}

static void test_plan_handles(void)
{
	struct slab_plan *p = slab_plan_new();
	struct slab_follow *f = slab_follow_new();
	struct slab_follow_options o = { .size = 1 };
	int fd;

	CHECK(p && f);
	CHECK_STR(slab_plan_error(p), "");
	CHECK(slab_plan_count(p) == 0 && slab_plan_file_count(p) == 0);
	CHECK(slab_plan_read(p, "/nonexistent/plan") == SLAB_ERR_IO);
	CHECK_STR(slab_plan_error(p), "'/nonexistent/plan': No such file or directory");
	/* nothing made or read: no file, rather than one slab_plan_read() refuses */
	fd = open("empty.plan", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && slab_plan_write(p, fd) == SLAB_ERR_INVAL);
	CHECK_STR(slab_plan_error(p), "no plan to write: none was made or read");
	CHECK(lseek(fd, 0, SEEK_END) == 0);
	close(fd);
	CHECK(unlink("empty.plan") == 0);
	CHECK(slab_follow_open(f, NULL, NULL, 0, p, &o) == SLAB_ERR_INVAL);
	CHECK_STR(slab_follow_error(f), "walk options of 1 byte: no such version");
	{
		/* readers with no file (never opened, or the open failed): no plan over them,
		 * no statistics of a plan over other files (both divided by a page size of 0) */
		struct slab_plan_params prm = { .size = sizeof(prm), .world = 1 };
		struct slab_plan_stats st = { .size = sizeof(st) };
		struct slab *s[2] = { slab_new(), slab_new() };

		CHECK(s[0] && s[1]);
		CHECK(slab_open_mem(s[1], "not a slab file at all", 22, "bad.slab") == SLAB_ERR_FORMAT);
		CHECK(slab_plan_make(p, s, 1, &prm, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(p), "'(slab)': reader not open");
		CHECK(slab_plan_make(p, s + 1, 1, &prm, 0) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(p), "'bad.slab': reader not open");
		CHECK(slab_plan_stats(p, s, 1, &st) == SLAB_ERR_INVAL);
		CHECK_STR(slab_plan_error(p), "the plan is for 0 files, 1 given");
		slab_close(s[0]);
		slab_close(s[1]);
	}
	slab_follow_close(f);
	slab_plan_free(p);
	slab_plan_free(NULL);
	slab_follow_close(NULL);
}

/* A field named "." is exported as KEY.. : a ".." component when the key's last component is
 * empty (the key "" or "x/"), though the key alone is safe. The writer refuses such a sample;
 * a reader refuses one a file holds (slab_check_key(s), slab_sample_fields(), verify), and
 * takes the field "." with another key, "x..". */
static void test_dot_field(void)
{
	struct slab_writer_field dot = { .name = ".", .data = "evil", .size = 4 };
	struct slab_writer *w = slab_writer_new();
	const char *keys[] = { "", "x/" }, *texts[] = {
		"'out.slab': sample '' field '.': member name '..' is not a safe member name "
		"(a '..' component)",
		"'out.slab': sample 'x/' field '.': member name 'x/..' is not a safe member name "
		"(a '..' component)",
	};
	int fd = open("dot.slab", O_RDWR | O_CREAT | O_TRUNC, 0644);
	unsigned char *b = NULL;
	struct slab_sample smp;
	struct slab *s = slab_new();
	struct stat st;
	unsigned ids[1];
	struct slab_field fl[1];

	CHECK(w && s && fd >= 0);
	for (int k = 0; k < 2; k++) {
		struct slab_writer *x = slab_writer_new();
		int nul = open("/dev/null", O_WRONLY);

		CHECK(slab_writer_open(x, nul, mem_name, NULL) == 0);
		CHECK(slab_writer_add(x, keys[k], strlen(keys[k]), &dot, 1) == SLAB_ERR_INVAL);
		CHECK_STR(slab_writer_error(x), texts[k]);
		slab_writer_free(x);
		close(nul);
	}
	/* "xy" with its field "." is "xy..": written, read; then its key made "x/" by hand */
	CHECK(slab_writer_open(w, fd, "dot.slab", NULL) == 0);
	CHECK(slab_writer_add(w, "xy", 2, &dot, 1) == 0);
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(fstat(fd, &st) == 0 && (b = malloc((size_t)st.st_size)) != NULL);
	CHECK(pread(fd, b, (size_t)st.st_size, 0) == st.st_size);
	close(fd);
	CHECK(unlink("dot.slab") == 0);
	CHECK(slab_open_mem(s, b, (size_t)st.st_size, "dot.slab") == 0);
	CHECK(slab_check_keys(s) == 0 && slab_sample_fields(s, 0, NULL, ids, fl) == 1);
	CHECK(slab_sample(s, 0, &smp) == 0 && smp.key_len == 2);
	b[(const unsigned char *)smp.key - b + 1] = '/';
	slab_close(s);
	fix_crcs(b, (size_t)st.st_size);
	s = slab_new();
	CHECK(slab_open_mem(s, b, (size_t)st.st_size, "dot.slab") == 0);
	CHECK(slab_check_keys(s) == SLAB_ERR_CORRUPT);
	CHECK_STR(slab_error(s), "'dot.slab': sample #0: key 'x/' with its field '.' is not a safe "
		  "member name ('x/..' has a '..' component)");
	CHECK(slab_check_key(s, 0) == SLAB_ERR_CORRUPT);
	CHECK(slab_sample_fields(s, 0, NULL, ids, fl) == SLAB_ERR_CORRUPT);
	CHECK(slab_verify(s, NULL, NULL) == SLAB_ERR_CORRUPT);
	CHECK(has(slab_error(s), "key 'x/' with its field '.' is not a safe member name"));
	slab_close(s);
	free(b);
}

/* A writer's output and a plan file written into a pipe whose reader has gone: EPIPE, with
 * SIGPIPE at its default action (which would end the process) and no SIGPIPE left pending
 * after; one pending before the write stays. */
static void test_closed_pipe(void)
{
	struct slab_writer_field f = { .name = "txt", .data = "abc", .size = 3 };
	struct slab_plan_params pp = { .size = sizeof(pp), .world = 1, .window = 1 };
	struct slab_writer *w = slab_writer_new();
	struct slab_plan *p = slab_plan_new();
	struct slab *s = slab_new();
	size_t len;
	unsigned char *b = two_fields(&len);
	sigset_t pipe_set, old, pending;
	int fds[2];

	CHECK(w && p && s && b);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	CHECK(slab_writer_open(w, fds[1], "pipe", NULL) == 0);
	CHECK(slab_writer_add(w, "k", 1, &f, 1) == 0);
	errno = 0;
	CHECK(slab_writer_finish(w) == SLAB_ERR_IO);
	CHECK(errno == EPIPE);
	CHECK_STR(slab_writer_error(w), "'pipe': write failed at offset 0: Broken pipe");
	CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE));

	CHECK(slab_open_mem(s, b, len, "two.slab") == 0);
	CHECK(slab_plan_make(p, &s, 1, &pp, 0) == 0);
	errno = 0;
	CHECK(slab_plan_write(p, fds[1]) == SLAB_ERR_IO);
	CHECK(errno == EPIPE);
	CHECK_STR(slab_plan_error(p), "Broken pipe");
	CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE));

	/* a SIGPIPE of the caller's, pending (blocked) before: still pending after */
	CHECK(pthread_sigmask(SIG_BLOCK, &pipe_set, &old) == 0);
	CHECK(raise(SIGPIPE) == 0);
	CHECK(slab_plan_write(p, fds[1]) == SLAB_ERR_IO && errno == EPIPE);
	CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE));
	signal(SIGPIPE, SIG_IGN);       /* discards it */
	signal(SIGPIPE, SIG_DFL);
	CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
	close(fds[1]);
	slab_writer_free(w);
	slab_plan_free(p);
	slab_close(s);
	free(b);
}

int main(void)
{
	char dir[] = "/tmp/slab-test-errors-XXXXXX";

	CHECK(mkdtemp(dir) != NULL && chdir(dir) == 0);
	test_shown();
	test_tarin();
	test_reader();
	test_failed_open();
	test_const_lookups();
	test_writer_codes();
	test_closed_pipe();
	test_dot_field();
	test_writer_misuse();
	test_writer_fields();
	test_writers_in_threads();
	test_plan_handles();
	test_walk_misuse();
	test_sized_first();
	CHECK(chdir("/") == 0 && rmdir(dir) == 0);
	return UNIT_DONE();
}
