/* test_format.c: the writer and reader API against each other: layout rules, lookups, error
 * codes, and that every single flipped byte or truncation of a file is caught. */
#include "crc32c.h"
#include "format.h"
#include "slab.h"
#include "tarin.h"
#include "unit.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Pack samples into a memory file; returns its bytes (malloc'd) and size. */
struct sample_spec {
	const char *key;
	const char *f1;
	size_t n1;
	const char *f2;
	size_t n2;
};

static unsigned char *pack(const struct sample_spec *sp, size_t n, uint64_t page_size,
			   size_t *size)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = page_size, .options = "tool=test\n" };
	unsigned char *buf;
	off_t end;

	CHECK(fd >= 0 && w);
	CHECK(slab_writer_open(w, fd, "mem", &o) == 0);
	for (size_t i = 0; i < n; i++) {
		struct slab_writer_field f[2];
		size_t nf = 0;
		unsigned char *d1 = malloc(sp[i].n1 + 1), *d2 = malloc(sp[i].n2 + 1);
		for (size_t k = 0; k < sp[i].n1; k++)
			d1[k] = (unsigned char)(i * 7 + k);
		for (size_t k = 0; k < sp[i].n2; k++)
			d2[k] = (unsigned char)(i * 13 + k * 3);
		memset(f, 0, sizeof(f));
		if (sp[i].f1)
			f[nf++] = (struct slab_writer_field){ .name = sp[i].f1, .data = d1, .size = sp[i].n1 };
		if (sp[i].f2)
			f[nf++] = (struct slab_writer_field){ .name = sp[i].f2, .data = d2, .size = sp[i].n2 };
		CHECK(slab_writer_add(w, sp[i].key, strlen(sp[i].key), f, nf) == 0);
		free(d1);
		free(d2);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	end = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)end);
	CHECK(pread(fd, buf, (size_t)end, 0) == end);
	close(fd);
	*size = (size_t)end;
	return buf;
}

static void test_crc(void)
{
	CHECK(slab_crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK(slab_crc32c(slab_crc32c(0, "1234", 4), "56789", 5) == 0xe3069283u);
	CHECK(slab_crc32c(0, "", 0) == 0);
	/* every path (byte loops, one stream, three streams) against the bitwise definition */
	{
		static unsigned char big[70000];
		uint32_t seed = 1;
		for (size_t i = 0; i < sizeof(big); i++) {
			seed = seed * 1103515245u + 12345u;
			big[i] = (unsigned char)(seed >> 16);
		}
		for (size_t len = 0; len < sizeof(big) - 8; len += len < 64 ? 1 : 997) {
			size_t off = len % 7;
			uint32_t ref = 0xffffffffu;
			for (size_t i = 0; i < len; i++) {
				ref ^= big[off + i];
				for (int k = 0; k < 8; k++)
					ref = ref & 1 ? (ref >> 1) ^ 0x82f63b78u : ref >> 1;
			}
			ref ^= 0xffffffffu;
			if (slab_crc32c(0, big + off, len) != ref) {
				fprintf(stderr, "crc32c differs at length %zu\n", len);
				CHECK(!"crc32c matches the bitwise definition");
				break;
			}
		}
	}
	/* unaligned start and odd lengths take the byte loops */
	{
		unsigned char b[100];
		for (int i = 0; i < 100; i++)
			b[i] = (unsigned char)(i * 31);
		uint32_t whole = slab_crc32c(0, b + 3, 90);
		uint32_t parts = slab_crc32c(slab_crc32c(0, b + 3, 13), b + 16, 77);
		CHECK(whole == parts);
	}
}

static void test_split(void)
{
	size_t kl;
	const char *f;

	CHECK(slab_split_name("a/b.seg.png", &kl, &f) == 0 && kl == 3 && strcmp(f, "seg.png") == 0);
	CHECK(slab_split_name("x.y/z.jpg", &kl, &f) == 0 && kl == 5 && strcmp(f, "jpg") == 0);
	CHECK(slab_split_name("./k.cls", &kl, &f) == 0 && kl == 3 && strcmp(f, "cls") == 0);
	CHECK(slab_split_name("noext", &kl, &f) < 0);
	CHECK(slab_split_name("dir.d/noext", &kl, &f) < 0);
	CHECK(slab_split_name(".hidden", &kl, &f) < 0);
	CHECK(slab_split_name("a/.hidden", &kl, &f) < 0);
	CHECK(slab_split_name("trailing.", &kl, &f) < 0);
	CHECK(slab_split_name("", &kl, &f) < 0);
}

static void test_roundtrip_and_pages(void)
{
	static const struct sample_spec sp[] = {
		{ "s0", "jpg", 3000, "cls", 1 },
		{ "s1", "jpg", 2000, NULL, 0 },         /* does not fit page 0: page 1 */
		{ "big", "jpg", 9000, "cls", 2 },       /* larger than a page: starts page 2, 3 pages */
		{ "after", "cls", 5, NULL, 0 },         /* page 5, not the big one's last page */
		{ "exact", "bin", 4096, NULL, 0 },      /* a whole page */
		{ "empty", "bin", 0, NULL, 0 },         /* zero bytes after a full page */
		{ "dir/with.dots/k", "seg.png", 10, "A", 0 },
	};
	size_t n = sizeof(sp) / sizeof(sp[0]), size;
	unsigned char *buf = pack(sp, n, 4096, &size);
	struct slab *s = slab_new();
	struct slab_sample smp;
	struct slab_field fl;
	uint64_t idx;

	CHECK(slab_open_mem(s, buf, size, "mem") == 0);
	CHECK(slab_count(s) == n);
	CHECK(slab_page_size(s) == 4096);
	CHECK(slab_field_count(s) == 5);
	CHECK_STR(slab_field_name(s, 0), "A");          /* sorted by bytes */
	CHECK_STR(slab_field_name(s, 1), "bin");
	CHECK_STR(slab_field_name(s, 2), "cls");
	CHECK_STR(slab_field_name(s, 3), "jpg");
	CHECK_STR(slab_field_name(s, 4), "seg.png");
	CHECK(slab_field_name(s, 5) == NULL);
	CHECK(slab_field_lookup(s, "cls") == 2);
	CHECK(slab_field_lookup(s, "nope") == SLAB_ERR_NOTFOUND);
	CHECK_STR(slab_options(s), "tool=test\n");

	CHECK(slab_sample(s, 0, &smp) == 0 && smp.page == 0 && smp.offset == 4096 && smp.size == 3001);
	CHECK(slab_sample(s, 1, &smp) == 0 && smp.page == 1 && smp.offset == 8192);
	CHECK(slab_sample(s, 2, &smp) == 0 && smp.page == 2 && smp.offset == 12288 && smp.size == 9002);
	CHECK(slab_sample(s, 3, &smp) == 0 && smp.page == 5 && smp.offset == 4096 + 5 * 4096);
	CHECK(slab_sample(s, 4, &smp) == 0 && smp.page == 6);
	CHECK(slab_sample(s, 5, &smp) == 0 && smp.page == 7 && smp.size == 0);
	CHECK(slab_sample(s, 7, &smp) == SLAB_ERR_RANGE);
	CHECK(slab_page_count(s) == 8);

	CHECK(slab_get(s, 0, 3, &fl) == 1 && fl.size == 3000 && fl.offset == 4096 && fl.order == 0);
	for (size_t k = 0; k < 3000; k++)
		if (fl.data[k] != (unsigned char)k) {
			CHECK(!"field bytes differ");
			break;
		}
	CHECK(slab_get(s, 0, 2, &fl) == 1 && fl.size == 1 && fl.offset == 7096 && fl.order == 1);
	CHECK(slab_get(s, 1, 2, &fl) == 0);             /* s1 has no cls */
	CHECK(slab_get(s, 6, 0, &fl) == 1 && fl.size == 0);
	CHECK(slab_get(s, 0, 9, &fl) == SLAB_ERR_RANGE);
	CHECK(slab_get(s, 99, 0, &fl) == SLAB_ERR_RANGE);

	CHECK(slab_find(s, "big", 3, &idx) == 0 && idx == 2);
	CHECK(slab_find(s, "dir/with.dots/k", 15, &idx) == 0 && idx == 6);
	CHECK(slab_find(s, "bi", 2, &idx) == SLAB_ERR_NOTFOUND);
	CHECK(strstr(slab_error(s), "no sample with key 'bi'") != NULL);
	CHECK(slab_verify(s, NULL, NULL) == 0);
	slab_close(s);

	/* Every single flipped byte is found, by open or by verify. */
	{
		size_t missed = 0;
		for (size_t off = 0; off < size; off++) {
			struct slab *t = slab_new();
			buf[off] ^= 0x5a;
			if (slab_open_mem(t, buf, size, "mem") == 0 && slab_verify(t, NULL, NULL) == 0) {
				if (!missed)
					fprintf(stderr, "flip at offset %zu not found\n", off);
				missed++;
			}
			buf[off] ^= 0x5a;
			slab_close(t);
		}
		CHECK(missed == 0);
	}
	/* Every truncation is refused at open. */
	{
		size_t accepted = 0;
		for (size_t len = 0; len < size; len += 1 + len / 64) {
			struct slab *t = slab_new();
			if (slab_open_mem(t, buf, len, "mem") == 0)
				accepted++;
			slab_close(t);
		}
		CHECK(accepted == 0);
	}
	free(buf);
}

static void test_writer_errors(void)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options bad = { .page_size = 5000 };
	struct slab_writer_options ok = { .page_size = 4096 };
	struct slab_writer_field f[2] = {
		{ .name = "a", .data = "x", .size = 1 },
		{ .name = "a", .data = "y", .size = 1 },
	};
	char longopt[SLAB_OPTIONS_MAX + 2];
	off_t before;

	CHECK(slab_writer_open(w, fd, "mem", &bad) == SLAB_ERR_INVAL);
	CHECK(strstr(slab_writer_error(w), "page size 5000 is not a power of two") != NULL);
	slab_writer_free(w);

	w = slab_writer_new();
	memset(longopt, 'x', sizeof(longopt) - 1);
	longopt[sizeof(longopt) - 1] = '\0';
	ok.options = longopt;
	CHECK(slab_writer_open(w, fd, "mem", &ok) == SLAB_ERR_INVAL);
	slab_writer_free(w);

	w = slab_writer_new();
	ok.options = NULL;
	CHECK(slab_writer_open(w, fd, "mem", &ok) == 0);
	CHECK(slab_writer_add(w, "k", 1, f, 2) == SLAB_ERR_DUPFIELD);
	CHECK_STR(slab_writer_error(w), "sample 'k': field 'a' given twice");
	CHECK(slab_writer_add(w, "k", 1, f, 1) == 0);
	before = lseek(fd, 0, SEEK_CUR);
	CHECK(slab_writer_add(w, "k", 1, f + 1, 1) == SLAB_ERR_DUPKEY);
	CHECK_STR(slab_writer_error(w), "key 'k' appears again (first as sample 0)");
	CHECK(slab_writer_add(w, "j", 1, f + 1, 1) == 0);  /* refusals are not final */
	CHECK(slab_writer_finish(w) == 0);
	CHECK(lseek(fd, 0, SEEK_CUR) > before);
	slab_writer_free(w);

	/* An empty field name is a bad argument, not out of memory. */
	w = slab_writer_new();
	CHECK(slab_writer_open(w, fd, "mem", &ok) == 0);
	f[0].name = "";
	CHECK(slab_writer_add(w, "e", 1, f, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'mem': empty field name");
	slab_writer_free(w);
	close(fd);
}

/* The image part of field records (slab(5), Field records): an image flag keeps width and
 * height, a side over 65535 makes both 0, no image flag zeroes them, subsampling and colour
 * space only with JPEG; version 1.3 in the header. */
static void test_image_fields(void)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };
	struct slab_writer_field f[4] = {
		{ .name = "a", .data = "1", .size = 1, .flags = SLAB_FIELD_JPEG, .width = 640,
		  .height = 480, .subsamp = SLAB_SAMP_420, .colorspace = SLAB_CS_YCBCR },
		{ .name = "b", .data = "2", .size = 1, .flags = SLAB_FIELD_PNG | SLAB_FIELD_TRANSCODED,
		  .width = 65535, .height = 3, .subsamp = 7, .colorspace = 7 },
		{ .name = "c", .data = "3", .size = 1, .flags = SLAB_FIELD_PNG, .width = 70000,
		  .height = 2 },
		{ .name = "d", .data = "4", .size = 1, .width = 9, .height = 9, .subsamp = 1 },
	};
	struct slab *s = slab_new();
	struct slab_field fl;
	unsigned char *buf;
	off_t size;

	CHECK(fd >= 0 && w && s);
	CHECK(slab_writer_open(w, fd, "mem", &o) == 0);
	CHECK(slab_writer_add(w, "k", 1, f, 4) == 0);
	CHECK(slab_writer_finish(w) == 0);
	size = lseek(fd, 0, SEEK_END);
	buf = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(buf != MAP_FAILED);
	CHECK(slab_open_mem(s, buf, (size_t)size, "mem") == 0);
	CHECK(slab_format_major(s) == 1 && slab_format_minor(s) == 3);
	CHECK(slab_get(s, 0, 0, &fl) == 1);
	CHECK(fl.flags == (SLAB_FIELD_PRESENT | SLAB_FIELD_JPEG) && fl.width == 640 &&
	      fl.height == 480 && fl.subsamp == SLAB_SAMP_420 && fl.colorspace == SLAB_CS_YCBCR);
	CHECK(slab_get(s, 0, 1, &fl) == 1);
	CHECK(fl.flags == (SLAB_FIELD_PRESENT | SLAB_FIELD_PNG | SLAB_FIELD_TRANSCODED) &&
	      fl.width == 65535 && fl.height == 3 && fl.subsamp == 0 && fl.colorspace == 0);
	CHECK(slab_get(s, 0, 2, &fl) == 1);
	CHECK(fl.flags == (SLAB_FIELD_PRESENT | SLAB_FIELD_PNG) && fl.width == 0 && fl.height == 0);
	CHECK(slab_get(s, 0, 3, &fl) == 1);
	CHECK(fl.flags == SLAB_FIELD_PRESENT && fl.width == 0 && fl.height == 0 && fl.subsamp == 0);
	CHECK(slab_verify(s, NULL, NULL) == 0);
	slab_close(s);
	munmap(buf, (size_t)size);
	slab_writer_free(w);
	close(fd);
}

/* Video fields (format 1.3): the writer keeps each one's info in a video record, in the
 * order the fields come, which slab_field_video() reads back (the codec's first 8 bytes, the
 * duration to the microsecond); a video flag without its info is refused. */
static void test_video_fields(void)
{
	int fd = memfd_create("slab", 0);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };
	struct slab_video_info a = { .frames = 48, .duration = 2.0000004, .fps_num = 24,
				     .fps_den = 1, .codec = "h264" };
	struct slab_video_info b = { .frames = 5, .duration = 0.5, .fps_num = 30000,
				     .fps_den = 1001, .codec = "mpeg2video" };
	const struct slab_video_info *v1[2] = { NULL, &a }, *v2[1] = { &b };
	struct slab_writer_field f1[2] = {
		{ .name = "cls", .data = "1", .size = 1 },
		{ .name = "mp4", .data = "vid", .size = 3, .flags = SLAB_FIELD_VIDEO, .width = 160,
		  .height = 120 },
	};
	struct slab_writer_field f2[1] = {
		{ .name = "mp4", .data = "v2", .size = 2, .flags = SLAB_FIELD_VIDEO, .width = 70000,
		  .height = 8 },
	};
	struct slab *s = slab_new();
	struct slab_video_info got;
	struct slab_field fl;
	unsigned char *buf;
	off_t size;

	CHECK(fd >= 0 && w && s);
	CHECK(slab_writer_open(w, fd, "mem", &o) == 0);
	CHECK(slab_writer_add_ex(w, "k0", 2, f1, 2, v1) == 0);
	CHECK(slab_writer_add_ex(w, "k1", 2, f2, 1, v2) == 0);
	CHECK(slab_writer_finish(w) == 0);
	size = lseek(fd, 0, SEEK_END);
	buf = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(buf != MAP_FAILED);
	CHECK(slab_open_mem(s, buf, (size_t)size, "mem") == 0);
	CHECK(slab_get(s, 0, 1, &fl) == 1);
	CHECK(fl.flags == (SLAB_FIELD_PRESENT | SLAB_FIELD_VIDEO) && fl.width == 160 && fl.height == 120);
	CHECK(slab_field_video(s, 0, 1, &got) == 1);
	CHECK(got.width == 160 && got.height == 120 && got.frames == 48 && got.duration == 2.0 &&
	      got.fps_num == 24 && got.fps_den == 1);
	CHECK_STR(got.codec, "h264");
	CHECK(slab_field_video(s, 1, 1, &got) == 1);
	CHECK(got.width == 0 && got.height == 0 && got.frames == 5 && got.duration == 0.5 &&
	      got.fps_num == 30000 && got.fps_den == 1001);
	CHECK_STR(got.codec, "mpeg2vid");
	CHECK(slab_field_video(s, 0, 0, &got) == 0);    /* not a video */
	CHECK(slab_field_video(s, 1, 0, &got) == 0);    /* absent */
	CHECK(slab_field_video(s, 2, 1, &got) == SLAB_ERR_RANGE);
	CHECK(slab_verify(s, NULL, NULL) == 0);
	slab_close(s);
	munmap(buf, (size_t)size);
	slab_writer_free(w);

	/* A video flag without its info ends the writer. */
	w = slab_writer_new();
	CHECK(w && slab_writer_open(w, fd, "mem", &o) == 0);
	CHECK(slab_writer_add(w, "k0", 2, f2, 1) == SLAB_ERR_INVAL);
	CHECK_STR(slab_writer_error(w), "'mem': sample 'k0' field 'mp4': a video without its info");
	slab_writer_free(w);
	close(fd);
}

static void test_reader_rejects(void)
{
	static const struct sample_spec sp[] = { { "a", "txt", 10, NULL, 0 } };
	size_t size;
	unsigned char *buf = pack(sp, 1, 0, &size);
	struct slab *s = slab_new();

	CHECK(slab_open_mem(s, "hello", 5, "x") == SLAB_ERR_FORMAT);
	CHECK_STR(slab_error(s), "'x': not a slab file (bad magic number)");
	slab_close(s);

	/* Another major version is refused even with a valid checksum. */
	s = slab_new();
	slab_put16(buf + 8, 2);
	slab_put16(buf + 10, 0);
	memset(buf + 36, 0, 4);
	slab_put32(buf + 36, slab_crc32c(0, buf, SLAB_HEADER_SIZE));
	CHECK(slab_open_mem(s, buf, size, "x") == SLAB_ERR_FORMAT);
	CHECK_STR(slab_error(s), "'x': format version 2.0 is not supported (this reader reads 1.x)");
	slab_close(s);

	s = slab_new();
	CHECK(slab_open(s, "/nonexistent/file.slab") == SLAB_ERR_IO);
	CHECK_STR(slab_error(s), "'/nonexistent/file.slab': No such file or directory");
	slab_close(s);
	free(buf);
}

int main(void)
{
	test_crc();
	test_split();
	test_roundtrip_and_pages();
	test_writer_errors();
	test_image_fields();
	test_video_fields();
	test_reader_rejects();
	return UNIT_DONE();
}
