/* dataset.c: several .slab files read as one dataset, numbered in the order given (as the
 * tools and plans number them): global indexes, (file, index) pairs, key lookup across files,
 * and plans and plan following over the same files. */
#include "slab.h"
#include "errfmt.h"
#include "error.h"
#include "plan.h"
#include "reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct slab_dataset {
	size_t n;
	struct slab **files;
	char **paths;
	uint64_t *first;        /* global index of each file's sample 0; first[n]: the total */
	struct slab_err err;
};

/* The error of a call that failed on file f: its reader's text, which names the file. */
static int file_fail(struct slab_dataset *d, size_t f, int code)
{
	return slab_fail_from(&d->err, code, slab_error(d->files[f]));
}

struct slab_dataset *slab_dataset_new(void)
{
	return calloc(1, sizeof(struct slab_dataset));
}

static void dataset_clear(struct slab_dataset *d)
{
	for (size_t f = 0; f < d->n; f++) {
		slab_close(d->files[f]);
		free(d->paths[f]);
	}
	free(d->files);
	free(d->paths);
	free(d->first);
	d->files = NULL;
	d->paths = NULL;
	d->first = NULL;
	d->n = 0;
}

int slab_dataset_open(struct slab_dataset *d, const char *const *paths, size_t n)
{
	return slab_dataset_open_ex(d, paths, n, NULL);
}

int slab_dataset_open_ex(struct slab_dataset *d, const char *const *paths, size_t n,
			 const struct slab_remote_options *o)
{
	size_t first_url = SIZE_MAX;
	int rc;

	/* Closing the files open would leave the readers taken from them dangling. */
	if (d->n)
		return slab_fail(&d->err, SLAB_ERR_INVAL, NULL, "dataset already open");
	if (n == 0)
		return slab_fail(&d->err, SLAB_ERR_INVAL, "(dataset)", "no files");
	if (n > UINT32_MAX)
		return slab_fail(&d->err, SLAB_ERR_INVAL, "(dataset)", "more than 2^32 - 1 files");
	d->files = calloc(n, sizeof(*d->files));
	d->paths = calloc(n, sizeof(*d->paths));
	d->first = calloc(n + 1, sizeof(*d->first));
	if (!d->files || !d->paths || !d->first) {
		rc = slab_fail(&d->err, SLAB_ERR_NOMEM, "(dataset)", "out of memory");
		goto undo;
	}
	d->n = n;
	for (size_t f = 0; f < n; f++) {
		d->paths[f] = strdup(paths[f]);
		d->files[f] = slab_new();
		if (!d->paths[f] || !d->files[f]) {
			rc = slab_fail(&d->err, SLAB_ERR_NOMEM, "(dataset)", "out of memory");
			goto undo;
		}
		rc = slab_open_ex(d->files[f], paths[f], o);
		if (rc < 0) {
			file_fail(d, f, rc);
			goto undo;
		}
		/* One pool of background fetchers for all the dataset's URLs. */
		if (slab_is_url(paths[f])) {
			if (first_url == SIZE_MAX)
				first_url = f;
			else
				slab_share_fetcher(d->files[f], d->files[first_url]);
		}
		d->first[f + 1] = d->first[f] + slab_count(d->files[f]);
	}
	return 0;
undo:
	dataset_clear(d);
	return rc;
}

void slab_dataset_close(struct slab_dataset *d)
{
	if (!d)
		return;
	dataset_clear(d);
	free(d);
}

const char *slab_dataset_error(const struct slab_dataset *d)
{
	return d->err.text;
}

size_t slab_dataset_files(const struct slab_dataset *d)
{
	return d->n;
}

struct slab *slab_dataset_file(const struct slab_dataset *d, size_t file)
{
	return file < d->n ? d->files[file] : NULL;
}

/* The least field name of d's files above after (NULL: the least of all), or NULL. */
static const char *next_field(const struct slab_dataset *d, const char *after)
{
	const char *best = NULL;

	for (size_t i = 0; i < d->n; i++) {
		for (unsigned f = 0; f < slab_field_count(d->files[i]); f++) {
			const char *name = slab_field_name(d->files[i], f);

			if ((!after || strcmp(name, after) > 0) && (!best || strcmp(name, best) < 0))
				best = name;
		}
	}
	return best;
}

/* No allocation: the names are found in order one at a time, and only as many as fit. */
int slab_no_field(const struct slab_dataset *d, const char *name, struct slab_err *e)
{
	char list[SLAB_ERR_TEXT / 2];
	size_t len = 0;
	const char *f = next_field(d, NULL);

	if (!f)
		return slab_fail(e, SLAB_ERR_NOTFOUND, NULL, "no file has a field '%s' (the files "
				 "have no fields)", name);
	list[0] = '\0';
	for (; f; f = next_field(d, f)) {
		size_t n = strlen(f);

		if (len + n + 2 + 5 >= sizeof(list)) {
			memcpy(list + len, len ? ", ..." : "...", len ? 6 : 4);
			break;
		}
		if (len) {
			memcpy(list + len, ", ", 2);
			len += 2;
		}
		memcpy(list + len, f, n + 1);
		len += n;
	}
	return slab_fail(e, SLAB_ERR_NOTFOUND, NULL, "no file has a field '%s' (fields: %s)",
			 name, list);
}

const char *slab_dataset_path(const struct slab_dataset *d, size_t file)
{
	return file < d->n ? d->paths[file] : NULL;
}

uint64_t slab_dataset_count(const struct slab_dataset *d)
{
	return d->n ? d->first[d->n] : 0;
}

int slab_dataset_locate(const struct slab_dataset *d, uint64_t global, size_t *file,
			uint64_t *index)
{
	size_t lo = 0, hi = d->n;

	if (global >= slab_dataset_count(d))
		return SLAB_ERR_RANGE;
	/* The last file whose first index is <= global (files may be empty). */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->first[mid] <= global)
			lo = mid;
		else
			hi = mid;
	}
	*file = lo;
	*index = global - d->first[lo];
	return 0;
}

int slab_dataset_global(const struct slab_dataset *d, size_t file, uint64_t index,
			uint64_t *global)
{
	if (file >= d->n || index >= d->first[file + 1] - d->first[file])
		return SLAB_ERR_RANGE;
	*global = d->first[file] + index;
	return 0;
}

int slab_dataset_find(const struct slab_dataset *d, const char *key, size_t key_len,
		      size_t *file, uint64_t *index)
{
	for (size_t f = 0; f < d->n; f++) {
		/* Quiet: a key a file lacks writes no text in it, which a const dataset's
		 * lookup from many threads would write in all of them at once. */
		int rc = slab_find_quiet(d->files[f], key, key_len, index);

		if (rc == 0) {
			*file = f;
			return 0;
		}
		/* The text is on that file's reader: d is the caller's to read from many threads,
		 * and keeps no text of this call. */
		if (rc != SLAB_ERR_NOTFOUND) {
			*file = f;
			return rc;
		}
	}
	return SLAB_ERR_NOTFOUND;
}

/* ---- Plans over the dataset ----------------------------------------------------------- */

/* A plan handle's failure, taken over by the dataset; the plan is freed. */
static int plan_fail(struct slab_dataset *d, struct slab_plan *plan, int rc)
{
	slab_fail_from(&d->err, rc, slab_plan_error(plan));
	slab_plan_free(plan);
	return rc;
}

/* A plan over the dataset's files, of the whole dataset (subset NULL) or of a subset. */
static int plan_make(struct slab_dataset *d, const struct slab_plan_params *p,
		     const uint64_t *subset, size_t n, uint64_t start, struct slab_plan **out)
{
	struct slab_plan *plan;
	int rc;

	if (d->n == 0)
		return slab_fail(&d->err, SLAB_ERR_INVAL, "(dataset)", "no files open");
	plan = slab_plan_new();
	if (!plan)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, "(dataset)", "out of memory");
	rc = subset ? slab_plan_make_subset(plan, d->files, (uint32_t)d->n, p, subset, n, start)
		    : slab_plan_make(plan, d->files, (uint32_t)d->n, p, start);
	if (rc < 0)
		return plan_fail(d, plan, rc);
	*out = plan;
	return 0;
}

int slab_dataset_plan_make(struct slab_dataset *d, const struct slab_plan_params *p,
			   uint64_t start, struct slab_plan **out)
{
	return plan_make(d, p, NULL, 0, start, out);
}

int slab_dataset_plan_make_subset(struct slab_dataset *d, const struct slab_plan_params *p,
				  const uint64_t *subset, size_t n, uint64_t start,
				  struct slab_plan **out)
{
	/* An empty subset is a subset still: a plan of no entries. */
	static const uint64_t none[1];

	return plan_make(d, p, subset ? subset : none, n, start, out);
}

int slab_dataset_plan_read(struct slab_dataset *d, const char *path, struct slab_plan **out)
{
	struct slab_plan *plan = slab_plan_new();
	int rc;

	if (!plan)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, slab_input_shown(path), "out of memory");
	rc = slab_plan_read(plan, path);
	if (rc < 0)
		return plan_fail(d, plan, rc);
	rc = slab_plan_match(plan, d->files, (uint32_t)d->n);
	if (rc < 0) {
		slab_fail(&d->err, rc, slab_input_shown(path), "plan does not belong to these files: %s",
			  slab_plan_error(plan));
		slab_plan_free(plan);
		return rc;
	}
	*out = plan;
	return 0;
}

int slab_plan_get(const struct slab_plan *plan, uint64_t i, size_t *file, uint64_t *index)
{
	if (i >= plan->n)
		return SLAB_ERR_RANGE;
	*file = plan->entries[i].file;
	*index = plan->entries[i].sample;
	return 0;
}

int slab_dataset_follow(struct slab_dataset *d, const struct slab_plan *plan,
			const struct slab_follow_options *o, struct slab_follow **out)
{
	return slab_dataset_follow_plans(d, &plan, 1, o, out);
}

int slab_dataset_follow_plans(struct slab_dataset *d, const struct slab_plan *const *plans,
			      size_t n, const struct slab_follow_options *o, struct slab_follow **out)
{
	struct slab_follow *f = slab_follow_new();
	int rc;

	if (!f)
		return slab_fail(&d->err, SLAB_ERR_NOMEM, "(dataset)", "out of memory");
	rc = slab_follow_open_plans(f, d->files, (const char *const *)d->paths, (uint32_t)d->n,
				    plans, n, o);
	if (rc < 0) {
		slab_fail_from(&d->err, rc, slab_follow_error(f));
		slab_follow_close(f);
		return rc;
	}
	*out = f;
	return 0;
}
