/* io.c: write(2) until everything is written: the one loop every writer in slab needs; and
 * the buffered writer of the record streams on top of it, which splices file bytes into a
 * pipe where it can. */
#include "io.h"
#include "slab.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most a pipe is grown to: a bound on what a pipe of copied bytes can hold in memory. */
#define PIPE_MAX (16u << 20)

int slab_open_read(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;

	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 ||
	    (S_ISREG(st->st_mode) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int slab_wait_writable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	int n;

	do
		n = poll(&pf, 1, -1);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

int slab_write_chunked(int fd, const void *buf, uint64_t len, uint64_t chunk, uint64_t *done)
{
	const unsigned char *p = buf;

	*done = 0;
	while (*done < len) {
		uint64_t want = len - *done < chunk ? len - *done : chunk;
		ssize_t n = write(fd, p + *done, (size_t)want);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && slab_wait_writable(fd) == 0)
				continue;
			return errno;
		}
		*done += (uint64_t)n;
	}
	return 0;
}

int slab_write_nosigpipe(int fd, const void *buf, uint64_t len, uint64_t chunk, uint64_t *done)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pipe, old, pending;
	int e, before;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	/* Blocked, a SIGPIPE the write raises stays pending on this thread instead of being
	 * delivered, and the write says EPIPE; it is taken back below. One pending before is
	 * someone else's, and stays. */
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	before = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	e = slab_write_chunked(fd, buf, len, chunk, done);
	if (e == EPIPE && !before)
		while (sigtimedwait(&pipe, NULL, &now) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		errno = e;
	return e;
}

int slab_write_full(int fd, const void *buf, uint64_t len)
{
	uint64_t done;

	/* At most 1 GiB a call: what Linux writes at once anyway. */
	return slab_write_nosigpipe(fd, buf, len, 1u << 30, &done) ? SLAB_ERR_IO : 0;
}

int slab_outbuf_init(struct slab_outbuf *o, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->buf = malloc(cap);
	o->cap = cap;
	return o->buf ? 0 : SLAB_ERR_NOMEM;
}

static int write_out(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err)
{
	if (slab_write_full(o->fd, p, len) < 0) {
		if (errno == EFAULT) {
			o->fault = p;
			return slab_fail(err, SLAB_ERR_IO, NULL, "cannot read the bytes to write");
		}
		o->write_errno = errno;
		return slab_fail(err, SLAB_ERR_IO, NULL, "write error: %s", strerror(errno));
	}
	o->sent += len;
	return 0;
}

/* splice(2) len bytes from src at off into o->fd. A short count (the file is shorter than it
 * was: truncated under the writer) or a failure ends the splicing of this piece: the rest is
 * written from p, which reports the bytes it cannot read (EFAULT) as the copying writer
 * does. EPIPE is the reader gone, as from write(2). */
static int splice_out(struct slab_outbuf *o, const unsigned char *p, uint64_t len, int src,
		      uint64_t off, struct slab_err *err)
{
	loff_t at = (loff_t)off;
	uint64_t done = 0;

	while (done < len) {
		/* At most 1 GiB a call, as for write(2). */
		size_t want = len - done > (1u << 30) ? (1u << 30) : (size_t)(len - done);
		ssize_t n = splice(src, &at, o->fd, NULL, want, 0);

		if (n > 0) {
			done += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && slab_wait_writable(o->fd) == 0)
			continue;
		if (n < 0 && errno == EPIPE) {
			o->write_errno = EPIPE;
			o->spliced += done;
			o->sent += done;
			return slab_fail(err, SLAB_ERR_IO, NULL, "write error: %s", strerror(EPIPE));
		}
		/* Not on this file system, this kind of file, ...: copy from now on. */
		if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
			      errno == EBADF || errno == ESPIPE))
			o->splice = 0;
		break;
	}
	o->spliced += done;
	o->sent += done;
	return done < len ? write_out(o, p + done, len - done, err) : 0;
}

int slab_outbuf_splice(struct slab_outbuf *o, uint64_t pipe_bytes)
{
	struct stat st;
	int have;

	o->splice = 0;
	if (fstat(o->fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return 0;
	o->splice = 1;
	if (pipe_bytes > PIPE_MAX)
		pipe_bytes = PIPE_MAX;
	/* Halve the ask until Linux takes it (EPERM past fs.pipe-max-size or the user's pipe
	 * pages) or it is no more than the pipe has. */
	have = fcntl(o->fd, F_GETPIPE_SZ);
	for (uint64_t want = pipe_bytes; have > 0 && want > (uint64_t)have; want /= 2)
		if (fcntl(o->fd, F_SETPIPE_SZ, (int)want) >= 0)
			break;
	return 1;
}

int slab_outbuf_put_file(struct slab_outbuf *o, const void *p, uint64_t len, int src,
			 uint64_t off, struct slab_err *err)
{
	if (!o->splice || src < 0 || len < SLAB_SPLICE_MIN)
		return slab_outbuf_put(o, p, len, err);
	o->total += len;
	if (slab_outbuf_flush(o, err) < 0)
		return SLAB_ERR_IO;
	return splice_out(o, p, len, src, off, err);
}

int slab_outbuf_flush(struct slab_outbuf *o, struct slab_err *err)
{
	int ret = write_out(o, o->buf, o->fill, err);

	o->fill = 0;
	return ret;
}

int slab_outbuf_put(struct slab_outbuf *o, const void *p, uint64_t len, struct slab_err *err)
{
	o->total += len;
	if (len > o->cap - o->fill) {
		if (slab_outbuf_flush(o, err) < 0)
			return SLAB_ERR_IO;
		if (len >= o->cap / 2)
			return write_out(o, p, len, err);
	}
	memcpy(o->buf + o->fill, p, (size_t)len);
	o->fill += (size_t)len;
	return 0;
}

void slab_outbuf_release(struct slab_outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
	o->cap = o->fill = 0;
}
