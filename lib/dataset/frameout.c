/* frameout.c: decoded images (or clips) as fixed-layout records (layout in frameout.h and prefetch(1)):
 * heads and tails gathered in one bounded buffer, images and large fields written straight
 * from their bytes. */
#include "frameout.h"
#include "error.h"
#include "errfmt.h"
#include "fault.h"
#include "format.h"
#include "io.h"
#include "slab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_BUF (64u * 1024)

struct slab_frameout {
	struct slab_outbuf out;
	int opened;
	unsigned nfields;
	uint64_t image_bytes, image_block;
	uint64_t written;               /* records */
	uint64_t bytes;                 /* header and whole records */
	struct slab_err err;
};

static const unsigned char zeros[8];

static int flush(struct slab_frameout *w)
{
	return slab_outbuf_flush(&w->out, &w->err);
}

static int put(struct slab_frameout *w, const void *p, uint64_t len)
{
	return slab_outbuf_put(&w->out, p, len, &w->err);
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) / 8 * 8;
}

struct slab_frameout *slab_frameout_new(void)
{
	struct slab_frameout *w = calloc(1, sizeof(*w));

	if (w && slab_outbuf_init(&w->out, FRAME_BUF) < 0) {
		free(w);
		w = NULL;
	}
	return w;
}

int slab_frameout_open(struct slab_frameout *w, int fd, const struct slab_frameout_params *p)
{
	uint64_t size = SLAB_FRAMES_FIXED;
	unsigned ch = p->channels ? p->channels : 3;
	unsigned char *h, *at;
	int rc;

	if (w->opened)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "frame writer already open");
	if ((rc = slab_fault_setup(&w->err)) < 0)
		return rc;
	if (p->width == 0 || p->height == 0 || p->width > 65535 || p->height > 65535)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "image size %ux%u", p->width,
				 p->height);
	if (ch != 1 && ch != 3 && ch != 4)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "%u channels: 1, 3 or 4", ch);
	if (p->frames > 65535 || (p->frames && ch != 3))
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "clips of %u %s of %u %s",
				 p->frames, slab_plural(p->frames, "frame", "frames"), ch,
				 slab_plural(ch, "channel", "channels"));
	for (unsigned f = 0; f < p->nfields; f++) {
		size_t len = strlen(p->fields[f]);

		if (len > UINT16_MAX)
			return slab_fail(&w->err, SLAB_ERR_INVAL, NULL,
					 "field name of %zu bytes: at most 65535", len);
		size += 2 + len;
	}
	size = round8(size);
	if (size > UINT32_MAX)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "%u field names: too long together",
				 p->nfields);
	h = calloc(1, (size_t)size);
	if (!h)
		return slab_fail(&w->err, SLAB_ERR_NOMEM, NULL, "out of memory");
	w->out.fd = fd;
	w->opened = 1;
	w->nfields = p->nfields;
	w->image_bytes = (uint64_t)p->width * p->height * ch * (p->frames ? p->frames : 1);
	w->image_block = round8(w->image_bytes);
	memcpy(h, SLAB_FRAMES_MAGIC, 8);
	slab_put32(h + 8, p->frames ? SLAB_FRAMES_VERSION_CLIPS :
			  ch == 3 ? SLAB_FRAMES_VERSION : SLAB_FRAMES_VERSION_CHANNELS);
	slab_put32(h + 12, (uint32_t)size);
	slab_put64(h + 16, p->count);
	slab_put32(h + 24, p->width);
	slab_put32(h + 28, p->height);
	slab_put32(h + 32, ch);
	slab_put32(h + 36, p->chw ? 1 : 0);
	slab_put64(h + 40, w->image_bytes);
	slab_put64(h + 48, w->image_block);
	slab_put64(h + 56, p->seed);
	slab_put64(h + 64, p->epoch);
	slab_put32(h + 72, (uint32_t)p->crop);
	slab_put32(h + 76, p->flip ? 1 : 0);
	slab_put32(h + 80, p->nfields);
	slab_put32(h + 84, p->frames);
	at = h + SLAB_FRAMES_FIXED;
	for (unsigned f = 0; f < p->nfields; f++) {
		size_t len = strlen(p->fields[f]);

		slab_put16(at, (uint16_t)len);
		memcpy(at + 2, p->fields[f], len);
		at += 2 + len;
	}
	rc = put(w, h, size);
	free(h);
	if (rc == 0)
		w->bytes = size;
	return rc;
}

static int frameout_sample(struct slab_frameout *w, uint32_t file, uint64_t index, uint64_t pos,
			   const char *key, size_t key_len, const unsigned char *image,
			   const struct slab_frameout_field *fields)
{
	unsigned char head[SLAB_FRAMES_HEAD] = { 0 };
	uint64_t tail = key_len, total;
	unsigned char b[8];

	if (!w->opened)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "frame writer not open");
	for (unsigned f = 0; f < w->nfields; f++)
		tail += 8 + (fields[f].data ? fields[f].size : 0);
	tail = round8(tail);
	memcpy(head, SLAB_FRAMES_RECORD_MAGIC, 4);
	slab_put32(head + 4, file);
	slab_put64(head + 8, index);
	slab_put64(head + 16, pos);
	slab_put64(head + 24, tail);
	slab_put32(head + 32, (uint32_t)key_len);
	if (put(w, head, sizeof(head)) < 0 || put(w, image, w->image_bytes) < 0 ||
	    put(w, zeros, w->image_block - w->image_bytes) < 0 || put(w, key, key_len) < 0)
		return SLAB_ERR_IO;
	total = key_len;
	for (unsigned f = 0; f < w->nfields; f++) {
		const struct slab_frameout_field *fl = &fields[f];

		slab_put64(b, fl->data ? fl->size : SLAB_FRAMES_ABSENT);
		if (put(w, b, 8) < 0 || (fl->data && put(w, fl->data, fl->size) < 0))
			return SLAB_ERR_IO;
		total += 8 + (fl->data ? fl->size : 0);
	}
	if (put(w, zeros, tail - total) < 0)
		return SLAB_ERR_IO;
	w->written++;
	w->bytes += SLAB_FRAMES_HEAD + w->image_block + tail;
	return 0;
}

int slab_frameout_sample(struct slab_frameout *w, const struct slab *src, uint32_t file,
			 uint64_t index, uint64_t pos, const char *key, size_t key_len,
			 const unsigned char *image, const struct slab_frameout_field *fields)
{
	struct slab_fault g;
	int rc;

	if (sigsetjmp(g.jump, 0))
		return slab_fault_fail(&w->err, slab_path(src), slab_base(src), slab_file_size(src),
				       g.addr);
	slab_fault_begin(&g);
	rc = frameout_sample(w, file, index, pos, key, key_len, image, fields);
	slab_fault_end(&g);
	if (rc < 0 && w->out.fault)
		return slab_fault_fail(&w->err, slab_path(src), slab_base(src), slab_file_size(src),
				       w->out.fault);
	return rc;
}

int slab_frameout_finish(struct slab_frameout *w, uint64_t skipped)
{
	unsigned char rec[SLAB_FRAMES_HEAD] = { 0 };

	if (!w->opened)
		return slab_fail(&w->err, SLAB_ERR_INVAL, NULL, "frame writer not open");
	w->opened = 0;
	memcpy(rec, SLAB_FRAMES_END_MAGIC, 4);
	slab_put64(rec + 8, w->written);
	slab_put64(rec + 16, skipped);
	if (put(w, rec, sizeof(rec)) < 0)
		return SLAB_ERR_IO;
	w->bytes += sizeof(rec);
	return flush(w);
}

uint64_t slab_frameout_bytes(const struct slab_frameout *w)
{
	return w->bytes;
}

const char *slab_frameout_error(const struct slab_frameout *w)
{
	return w->err.text;
}

int slab_frameout_errno(const struct slab_frameout *w)
{
	return w->out.write_errno;
}

void slab_frameout_free(struct slab_frameout *w)
{
	if (!w)
		return;
	slab_outbuf_release(&w->out);
	free(w);
}
