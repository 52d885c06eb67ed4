/* test_pagecache.c: unit tests of lib/dataset/pagecache.c on a file in the current folder:
 * cachestat and mincore agree, evict and warm move residency, ranges are clipped, O_DIRECT
 * reads give the bytes pread gives at any offset, and errors name the file. */
#include "pagecache.h"
#include "slab.h"
#include "unit.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_SIZE (3u * 1024 * 1024 + 100)

static unsigned char *content;

static void make_file(const char *path, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, content, size) == (ssize_t)size);
	/* Dirty pages are not dropped by DONTNEED: make them clean. */
	CHECK(fsync(fd) == 0);
	close(fd);
}

static void test_residency(void)
{
	struct slab_pagecache *p = slab_pagecache_new();
	struct slab_pagecache_residency a, m;
	uint64_t ps = slab_pagecache_os_page(), bytes = 0;
	int honoured;

	CHECK(p && slab_pagecache_open(p, "pc.bin") == 0);
	CHECK(slab_pagecache_size(p) == FILE_SIZE);
	CHECK(slab_pagecache_warm(p, 1 << 20, NULL, NULL, &bytes) == 0);
	CHECK(bytes == FILE_SIZE);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_AUTO, &a) == 0);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_MINCORE, &m) == 0);
	CHECK(a.pages == (FILE_SIZE + ps - 1) / ps && m.pages == a.pages);
	CHECK(a.resident == a.pages && m.resident == m.pages);
	CHECK(m.method == SLAB_PAGECACHE_MINCORE && m.dirty == UINT64_MAX);

	/* A range: whole OS pages around it, clipped to the file. */
	CHECK(slab_pagecache_residency(p, ps + 1, 10, SLAB_PAGECACHE_MINCORE, &m) == 0);
	CHECK(m.pages == 1 && m.resident == 1);
	CHECK(slab_pagecache_residency(p, ps - 1, 2, SLAB_PAGECACHE_AUTO, &a) == 0);
	CHECK(a.pages == 2);
	CHECK(slab_pagecache_residency(p, FILE_SIZE - 10, 1000000, SLAB_PAGECACHE_AUTO, &a) == 0);
	CHECK(a.pages == 1);
	CHECK(slab_pagecache_residency(p, FILE_SIZE + 10, 0, SLAB_PAGECACHE_AUTO, &a) == 0);
	CHECK(a.pages == 0 && a.resident == 0);

	CHECK(slab_pagecache_advise(p, 0, 0, SLAB_PAGECACHE_DONTNEED) == 0);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_AUTO, &a) == 0);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_MINCORE, &m) == 0);
	CHECK(a.resident == m.resident);
	honoured = a.resident < a.pages / 2;
	if (!honoured)
		fprintf(stderr, "note: this filesystem ignores POSIX_FADV_DONTNEED; eviction not checked\n");
	else
		CHECK(a.resident <= 2);

	/* Half the file back, through WILLNEED of a range: it arrives without a read. */
	CHECK(slab_pagecache_advise(p, 0, FILE_SIZE / 2, SLAB_PAGECACHE_WILLNEED) == 0);
	for (int tries = 0; tries < 200; tries++) {
		CHECK(slab_pagecache_residency(p, 0, FILE_SIZE / 2, SLAB_PAGECACHE_MINCORE, &m) == 0);
		if (m.resident == m.pages)
			break;
		usleep(10000);
	}
	CHECK(m.resident == m.pages);
	if (honoured) {
		CHECK(slab_pagecache_residency(p, FILE_SIZE / 2 + ps, 0, SLAB_PAGECACHE_AUTO, &a) == 0);
		CHECK(a.resident < a.pages);
	}
	slab_pagecache_close(p);
}

static void test_empty_and_errors(void)
{
	struct slab_pagecache *p = slab_pagecache_new();
	struct slab_pagecache_residency r;
	uint64_t bytes = 1;

	make_file("empty.bin", 0);
	CHECK(p && slab_pagecache_open(p, "empty.bin") == 0);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_AUTO, &r) == 0 && r.pages == 0 && r.resident == 0);
	CHECK(slab_pagecache_residency(p, 0, 0, SLAB_PAGECACHE_MINCORE, &r) == 0 && r.pages == 0);
	CHECK(slab_pagecache_warm(p, 0, NULL, NULL, &bytes) == 0 && bytes == 0);
	CHECK(slab_pagecache_advise(p, 0, 0, SLAB_PAGECACHE_DONTNEED) == 0);
	slab_pagecache_close(p);

	p = slab_pagecache_new();
	CHECK(slab_pagecache_open(p, "no-such-file") == SLAB_ERR_IO);
	CHECK_STR(slab_pagecache_error(p), "'no-such-file': No such file or directory");
	slab_pagecache_close(p);
	p = slab_pagecache_new();
	CHECK(slab_pagecache_open(p, ".") == SLAB_ERR_IO);
	CHECK_STR(slab_pagecache_error(p), "'.': is a directory");
	slab_pagecache_close(p);
	p = slab_pagecache_new();
	CHECK(slab_pagecache_open(p, "/dev/null") == SLAB_ERR_IO);
	CHECK_STR(slab_pagecache_error(p), "'/dev/null': not a regular file");
	slab_pagecache_close(p);
	slab_pagecache_close(NULL);
}

static void test_direct(void)
{
	struct slab_pagecache *p = slab_pagecache_new();
	size_t cap = slab_pagecache_direct_span(200000);
	unsigned char *buf = slab_pagecache_alloc(cap);
	const unsigned char *d;
	static const uint64_t offs[] = { 0, 1, 4095, 4096, 4097, 123457, FILE_SIZE - 200000,
					 FILE_SIZE - 1 };
	static const uint64_t lens[] = { 0, 1, 100, 4096, 8191, 200000 };
	int r;

	CHECK(slab_pagecache_direct_span(0) == 4096);
	CHECK(slab_pagecache_direct_span(1) == 4096);
	CHECK(slab_pagecache_direct_span(4096) == 8192);
	CHECK(slab_pagecache_direct_span(4097) == 8192);
	CHECK(buf && (uintptr_t)buf % SLAB_PAGECACHE_ALIGN == 0);
	CHECK(p && slab_pagecache_open(p, "pc.bin") == 0);
	r = slab_pagecache_direct_open(p);
	if (r == SLAB_ERR_INVAL) {
		fprintf(stderr, "note: no O_DIRECT here (%s); direct reads not checked\n",
			slab_pagecache_error(p));
		goto out;
	}
	CHECK(r == 0);
	CHECK(slab_pagecache_direct_fd(p) >= 0);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			uint64_t off = offs[i], len = lens[k];
			if (off + len > FILE_SIZE)
				continue;
			d = NULL;
			CHECK(slab_pagecache_direct_read(p, off, len, buf, cap, &d) == 0);
			CHECK(d != NULL && memcmp(d, content + off, (size_t)len) == 0);
		}
	/* Past the end, or more than the buffer holds. */
	CHECK(slab_pagecache_direct_read(p, FILE_SIZE - 10, 11, buf, cap, &d) == SLAB_ERR_RANGE);
	CHECK(slab_pagecache_direct_read(p, 0, cap, buf, cap - 4096, &d) == SLAB_ERR_RANGE);
out:
	free(buf);
	slab_pagecache_close(p);
}

int main(void)
{
	content = malloc(FILE_SIZE);
	for (size_t i = 0; i < FILE_SIZE; i++)
		content[i] = (unsigned char)(i * 2654435761u >> 13);
	make_file("pc.bin", FILE_SIZE);
	test_residency();
	test_empty_and_errors();
	test_direct();
	unlink("pc.bin");
	unlink("empty.bin");
	free(content);
	return UNIT_DONE();
}
