/* io.h: write(2) until everything is written, and a buffered writer over it that can move
 * file bytes into a pipe with splice(2) instead of copying them. */
#ifndef SLAB_IO_H
#define SLAB_IO_H

#include "error.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* write(2) all len bytes of buf to fd, at most chunk bytes a call, retrying after EINTR and
 * short writes and waiting with slab_wait_writable() after EAGAIN: 0, or the errno of the
 * write that failed (errno is left set to it too). *done counts the bytes written, on
 * failure as well: the loop every writer of slab goes through. */
int slab_write_chunked(int fd, const void *buf, uint64_t len, uint64_t chunk, uint64_t *done);

/* slab_write_chunked() for the library's own writers to a caller's descriptor (a writer's
 * output, a plan file): a pipe whose reader went away is EPIPE, never SIGPIPE, whose default
 * action ends the process (the library never exits). SIGPIPE is blocked in the calling thread
 * for the writes and the one they raise taken back, unless one was pending before. */
int slab_write_nosigpipe(int fd, const void *buf, uint64_t len, uint64_t chunk, uint64_t *done);

/* Write all len bytes of buf to fd, retrying after EINTR and short writes, as
 * slab_write_nosigpipe() does. 0, or SLAB_ERR_IO with errno set (EPIPE when the reader went
 * away): no context, errno is the detail. */
int slab_write_full(int fd, const void *buf, uint64_t len);

/* open(2) path to read, without waiting for a writer when it is a FIFO (which would block
 * until one comes): the descriptor, with *st its fstat, blocking again where it is a
 * regular file; or -1 with errno. The caller judges the kind of file from *st. */
int slab_open_read(const char *path, struct stat *st);

/* After EAGAIN from a write to fd (an output some other process made non-blocking, such as a
 * pipe an event loop shares): wait until it takes more. 0, or -1 with errno. */
int slab_wait_writable(int fd);

/* A buffered writer to fd, for the record streams (rawout, frameout): small pieces are
 * gathered in a buffer of cap bytes, a piece of half of it or more goes straight out after
 * what is buffered. A failed write is SLAB_ERR_IO with "write error: ..." in *err, and its
 * errno stays in write_errno (EPIPE when the reader went away). */
struct slab_outbuf {
	int fd;
	int write_errno;
	/* A write straight from the caller's bytes failed with EFAULT: they could not be read
	 * (a mapped input truncated under it), the output is not at fault. Where they were. */
	const void *fault;
	unsigned char *buf;
	size_t cap, fill;
	/* slab_outbuf_splice() found fd a pipe: pieces given with their file are spliced. Turned
	 * off for good when splice(2) says it cannot (EINVAL: a file system without it). */
	int splice;
	uint64_t spliced;               /* bytes moved with splice(2) */
	uint64_t total;                 /* bytes taken in (put, put_file) */
	uint64_t sent;                  /* bytes handed to fd (written or spliced) */
};

/* An empty buffer of cap bytes, fd -1 until set: 0, or SLAB_ERR_NOMEM. */
int slab_outbuf_init(struct slab_outbuf *o, size_t cap);
int slab_outbuf_put(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err);
/* Pieces from a file of at least this many bytes are spliced (see slab_outbuf_put_file);
 * smaller ones are copied into the buffer: a spliced piece takes at least one slot of the
 * pipe (a page), however few its bytes. */
#define SLAB_SPLICE_MIN (16u * 1024)

/* Splice from now on if fd (set already) is a pipe: 1 if so, 0 if the writer keeps copying.
 * A pipe smaller than pipe_bytes is grown to it, or as far as Linux lets this process
 * (fs.pipe-max-size, the per-user pipe limits); a failure to grow it is not an error. */
int slab_outbuf_splice(struct slab_outbuf *o, uint64_t pipe_bytes);
/* slab_outbuf_put() of len bytes at p which are the bytes [off, off + len) of the file open
 * on src (-1: none): when splicing and len >= SLAB_SPLICE_MIN, what is buffered is written
 * and the bytes go from src into the pipe with splice(2), their pages referenced by the pipe
 * until its reader has read them, not copied. Where the file gives fewer bytes than asked
 * (truncated under the writer) or splice fails (other than EPIPE), the rest is written from
 * p, so that what p cannot give is reported as for slab_outbuf_put(): fault set. */
int slab_outbuf_put_file(struct slab_outbuf *o, const void *p, uint64_t len, int src,
			 uint64_t off, struct slab_err *err);
/* Write what is buffered. */
int slab_outbuf_flush(struct slab_outbuf *o, struct slab_err *err);
/* Free the buffer (accepts one never initialised, zeroed). */
void slab_outbuf_release(struct slab_outbuf *o);

#endif
