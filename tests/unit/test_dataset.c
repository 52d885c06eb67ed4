/* test_dataset.c: several files as one dataset through slab.h alone: global and (file, index)
 * numbering across empty files, key lookup across files (first file wins), errors, and plans
 * made and read over the dataset. */
#include "slab.h"
#include "plan.h"
#include "unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Write path with n samples keyed PREFIX0, PREFIX1, ... each with one field "txt". */
static void make_file(const char *path, const char *prefix, unsigned n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct slab_writer *w = slab_writer_new();
	struct slab_writer_options o = { .page_size = 4096 };

	CHECK(fd >= 0 && w);
	CHECK(slab_writer_open(w, fd, path, &o) == 0);
	for (unsigned i = 0; i < n; i++) {
		char key[64], text[64];
		struct slab_writer_field f = { .name = "txt", .data = text };

		snprintf(key, sizeof(key), "%s%u", prefix, i);
		f.size = (uint64_t)snprintf(text, sizeof(text), "%s says %u", prefix, i);
		CHECK(slab_writer_add(w, key, strlen(key), &f, 1) == 0);
	}
	CHECK(slab_writer_finish(w) == 0);
	slab_writer_free(w);
	CHECK(close(fd) == 0);
}

static void test_numbering(void)
{
	const char *paths[] = { "a.slab", "empty.slab", "b.slab" };
	struct slab_dataset *d = slab_dataset_new();
	size_t file;
	uint64_t index, global;

	CHECK(slab_dataset_open(d, paths, 3) == 0);
	CHECK(slab_dataset_files(d) == 3);
	CHECK(slab_dataset_count(d) == 8);
	CHECK_STR(slab_dataset_path(d, 1), "empty.slab");
	CHECK(slab_dataset_file(d, 3) == NULL && slab_dataset_path(d, 3) == NULL);
	for (global = 0; global < 8; global++) {
		CHECK(slab_dataset_locate(d, global, &file, &index) == 0);
		CHECK(file == (global < 5 ? 0u : 2u));
		CHECK(index == (global < 5 ? global : global - 5));
		uint64_t back = 99;
		CHECK(slab_dataset_global(d, file, index, &back) == 0 && back == global);
	}
	CHECK(slab_dataset_locate(d, 8, &file, &index) == SLAB_ERR_RANGE);
	CHECK(slab_dataset_global(d, 1, 0, &global) == SLAB_ERR_RANGE);
	CHECK(slab_dataset_global(d, 2, 3, &global) == SLAB_ERR_RANGE);
	CHECK(slab_dataset_global(d, 3, 0, &global) == SLAB_ERR_RANGE);

	/* Keys: "k1" is in both a.slab and b.slab: the first file wins. */
	CHECK(slab_dataset_find(d, "k4", 2, &file, &index) == 0 && file == 0 && index == 4);
	CHECK(slab_dataset_find(d, "k1", 2, &file, &index) == 0 && file == 0 && index == 1);
	CHECK(slab_dataset_find(d, "k9", 2, &file, &index) == SLAB_ERR_NOTFOUND);
	{
		struct slab *s = slab_dataset_file(d, 2);
		struct slab_field f;
		CHECK(slab_get(s, 2, 0, &f) == 1);
		CHECK(f.size == 8 && memcmp(f.data, "k says 2", 8) == 0);
	}
	slab_dataset_close(d);
}

static void test_errors(void)
{
	const char *paths[] = { "a.slab", "missing.slab" };
	struct slab_dataset *d = slab_dataset_new();

	CHECK(slab_dataset_open(d, paths, 0) == SLAB_ERR_INVAL);
	CHECK_STR(slab_dataset_error(d), "'(dataset)': no files");
	CHECK(slab_dataset_open(d, paths, 2) == SLAB_ERR_IO);
	CHECK_STR(slab_dataset_error(d), "'missing.slab': No such file or directory");
	/* Nothing stays open after a failure. */
	CHECK(slab_dataset_files(d) == 0 && slab_dataset_count(d) == 0);
	/* and it may be opened then: the error text stays, as after any call that succeeds */
	CHECK(slab_dataset_open(d, paths, 1) == 0 && slab_dataset_count(d) == 5);
	CHECK_STR(slab_dataset_error(d), "'missing.slab': No such file or directory");
	{
		/* Opened again while open: refused, the files open and the readers taken from
		 * them untouched (they were closed, the readers left dangling) */
		const char *others[] = { "b.slab" };
		struct slab *s = slab_dataset_file(d, 0);
		struct slab_sample smp;

		CHECK(slab_dataset_open(d, others, 1) == SLAB_ERR_INVAL);
		CHECK_STR(slab_dataset_error(d), "dataset already open");
		CHECK(slab_dataset_open_ex(d, others, 1, NULL) == SLAB_ERR_INVAL);
		CHECK(slab_dataset_files(d) == 1 && slab_dataset_count(d) == 5);
		CHECK(slab_dataset_file(d, 0) == s && slab_sample(s, 4, &smp) == 0);
		CHECK(smp.key_len == 2 && memcmp(smp.key, "k4", 2) == 0);
		CHECK_STR(slab_dataset_path(d, 0), "a.slab");
	}
	slab_dataset_close(d);
	slab_dataset_close(NULL);
}

static void test_plans(void)
{
	const char *paths[] = { "a.slab", "empty.slab", "b.slab" };
	struct slab_dataset *d = slab_dataset_new();
	struct slab_plan_params p = { .mode = SLAB_PLAN_RANDOM, .seed = 4, .world = 1, .window = 1 };
	struct slab_plan *plan = NULL, *again = NULL;
	int seen[8] = { 0 };
	size_t file;
	uint64_t index, global;

	CHECK(slab_dataset_open(d, paths, 3) == 0);
	CHECK(slab_dataset_plan_make(d, &p, 0, &plan) == 0);
	CHECK(slab_plan_count(plan) == 8);
	for (uint64_t i = 0; i < slab_plan_count(plan); i++) {
		CHECK(slab_plan_get(plan, i, &file, &index) == 0);
		CHECK(slab_dataset_global(d, file, index, &global) == 0);
		seen[global]++;
	}
	for (int g = 0; g < 8; g++)
		CHECK(seen[g] == 1);
	CHECK(slab_plan_get(plan, 8, &file, &index) == SLAB_ERR_RANGE);

	/* Written and read back over the same files: the same entries; over others: refused. */
	{
		int fd = open("p.plan", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0 && slab_plan_write(plan, fd) == 0 && close(fd) == 0);
	}
	CHECK(slab_dataset_plan_read(d, "p.plan", &again) == 0);
	CHECK(slab_plan_count(again) == 8);
	for (uint64_t i = 0; i < 8; i++) {
		size_t f1, f2;
		uint64_t i1, i2;
		CHECK(slab_plan_get(plan, i, &f1, &i1) == 0 && slab_plan_get(again, i, &f2, &i2) == 0);
		CHECK(f1 == f2 && i1 == i2);
	}
	slab_plan_free(again);
	slab_dataset_close(d);

	d = slab_dataset_new();
	CHECK(slab_dataset_open(d, paths, 1) == 0);
	again = NULL;
	CHECK(slab_dataset_plan_read(d, "p.plan", &again) < 0 && again == NULL);
	CHECK_STR(slab_dataset_error(d),
		  "'p.plan': plan does not belong to these files: the plan is for 3 files, 1 given");
	slab_plan_free(plan);
	slab_dataset_close(d);
}

int main(void)
{
	char dir[] = "/tmp/test_dataset.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chdir(dir) == 0);
	make_file("a.slab", "k", 5);
	make_file("empty.slab", "e", 0);
	make_file("b.slab", "k", 3);
	test_numbering();
	test_errors();
	test_plans();
	unlink("a.slab");
	unlink("empty.slab");
	unlink("b.slab");
	unlink("p.plan");
	CHECK(rmdir(dir) == 0);
	return UNIT_DONE();
}
