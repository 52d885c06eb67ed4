/* rawout.c: samples as length-prefixed records (layout in rawout.h and prefetch(1)):
 * small parts gathered in one bounded buffer, large fields written straight from the data. */
#include "rawout.h"
#include "error.h"
#include "fault.h"
#include "format.h"
#include "io.h"
#include "slab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAW_BUF (64u * 1024)

struct slab_rawout {
	struct slab_outbuf out;
	int opened;
	int want_splice;
	uint64_t pipe_bytes;
	uint64_t written;               /* sample records */
	unsigned nf_cap;
	unsigned *ids;
	struct slab_field *fl;
	struct slab_err err;
};

static int flush(struct slab_rawout *r)
{
	return slab_outbuf_flush(&r->out, &r->err);
}

static int put(struct slab_rawout *r, const void *p, uint64_t len)
{
	return slab_outbuf_put(&r->out, p, len, &r->err);
}

struct slab_rawout *slab_rawout_new(void)
{
	struct slab_rawout *r = calloc(1, sizeof(*r));

	if (r && slab_outbuf_init(&r->out, RAW_BUF) < 0) {
		free(r);
		r = NULL;
	}
	return r;
}

void slab_rawout_set_splice(struct slab_rawout *r, int on, uint64_t pipe_bytes)
{
	r->want_splice = on;
	r->pipe_bytes = pipe_bytes;
}

int slab_rawout_splicing(const struct slab_rawout *r)
{
	return r->out.splice;
}

uint64_t slab_rawout_sent(const struct slab_rawout *r)
{
	return r->out.sent;
}

int slab_rawout_open(struct slab_rawout *r, int fd, uint64_t count)
{
	unsigned char h[SLAB_RAW_HEADER_SIZE] = { 0 };
	int rc;

	if (r->opened)
		return slab_fail(&r->err, SLAB_ERR_INVAL, NULL, "raw writer already open");
	if ((rc = slab_fault_setup(&r->err)) < 0)
		return rc;
	r->out.fd = fd;
	r->opened = 1;
	if (r->want_splice)
		(void)slab_outbuf_splice(&r->out, r->pipe_bytes);
	memcpy(h, SLAB_RAW_MAGIC, 8);
	slab_put32(h + 8, SLAB_RAW_VERSION);
	slab_put64(h + 16, count);
	return put(r, h, sizeof(h));
}

static int rawout_sample(struct slab_rawout *r, struct slab *s, int src, uint32_t file,
			 uint64_t i, uint64_t pos, const unsigned char *bytes)
{
	unsigned char rec[SLAB_RAW_RECORD_SIZE];
	unsigned nf = slab_field_count(s);
	struct slab_sample smp;
	int n, rc;

	if (!r->opened)
		return slab_fail(&r->err, SLAB_ERR_INVAL, NULL, "raw writer not open");
	if (nf > r->nf_cap || !r->ids) {
		unsigned *ids = realloc(r->ids, (nf ? nf : 1) * sizeof(*ids));
		struct slab_field *fl;
		if (ids)
			r->ids = ids;
		fl = realloc(r->fl, (nf ? nf : 1) * sizeof(*fl));
		if (fl)
			r->fl = fl;
		if (!ids || !fl)
			return slab_fail(&r->err, SLAB_ERR_NOMEM, NULL, "out of memory");
		r->nf_cap = nf;
	}
	n = slab_sample_fields(s, i, bytes, r->ids, r->fl);
	if (n < 0)
		return slab_fail_from(&r->err, n, slab_error(s));
	if ((rc = slab_sample(s, i, &smp)) < 0)
		return slab_fail_from(&r->err, rc, slab_error(s));
	memcpy(rec, SLAB_RAW_SAMPLE_MAGIC, 4);
	slab_put32(rec + 4, file);
	slab_put64(rec + 8, i);
	slab_put64(rec + 16, pos);
	slab_put32(rec + 24, (uint32_t)smp.key_len);
	slab_put32(rec + 28, (uint32_t)n);
	if (put(r, rec, sizeof(rec)) < 0 || put(r, smp.key, smp.key_len) < 0)
		return SLAB_ERR_IO;
	for (int k = 0; k < n; k++) {
		const char *name = slab_field_name(s, r->ids[k]);
		size_t len = strlen(name);
		unsigned char b[8];

		/* Field names come from a tar member name: far shorter than 64 KiB. */
		slab_put16(b, (uint16_t)len);
		if (put(r, b, 2) < 0 || put(r, name, len) < 0)
			return SLAB_ERR_IO;
		slab_put64(b, r->fl[k].size);
		if (put(r, b, 8) < 0 ||
		    slab_outbuf_put_file(&r->out, r->fl[k].data, r->fl[k].size, src,
					 r->fl[k].offset, &r->err) < 0)
			return SLAB_ERR_IO;
	}
	r->written++;
	return 0;
}

/* rawout_sample() with its reads of the mapping guarded: a file truncated under it is the
 * input's error, naming the file and the offset, not a SIGBUS nor the output's "Bad
 * address". */
int slab_rawout_sample_from(struct slab_rawout *r, struct slab *s, int src, uint32_t file,
			    uint64_t i, uint64_t pos, const unsigned char *bytes)
{
	struct slab_fault g;
	int rc;

	if (sigsetjmp(g.jump, 0))
		return slab_fault_fail(&r->err, slab_path(s), slab_base(s), slab_file_size(s), g.addr);
	slab_fault_begin(&g);
	rc = rawout_sample(r, s, src, file, i, pos, bytes);
	slab_fault_end(&g);
	if (rc < 0 && r->out.fault)
		return slab_fault_fail(&r->err, slab_path(s), slab_base(s), slab_file_size(s),
				       r->out.fault);
	return rc;
}

int slab_rawout_sample(struct slab_rawout *r, struct slab *s, uint32_t file, uint64_t i,
		       uint64_t pos, const unsigned char *bytes)
{
	return slab_rawout_sample_from(r, s, -1, file, i, pos, bytes);
}

int slab_rawout_finish(struct slab_rawout *r)
{
	unsigned char rec[SLAB_RAW_RECORD_SIZE] = { 0 };

	if (!r->opened)
		return slab_fail(&r->err, SLAB_ERR_INVAL, NULL, "raw writer not open");
	r->opened = 0;
	memcpy(rec, SLAB_RAW_END_MAGIC, 4);
	slab_put64(rec + 8, r->written);
	if (put(r, rec, sizeof(rec)) < 0)
		return SLAB_ERR_IO;
	return flush(r);
}

const char *slab_rawout_error(const struct slab_rawout *r)
{
	return r->err.text;
}

int slab_rawout_errno(const struct slab_rawout *r)
{
	return r->out.write_errno;
}

void slab_rawout_free(struct slab_rawout *r)
{
	if (!r)
		return;
	slab_outbuf_release(&r->out);
	free(r->ids);
	free(r->fl);
	free(r);
}
