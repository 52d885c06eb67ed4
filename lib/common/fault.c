/* fault.c: SIGBUS on a mapped file as an error return (fault.h). */
#include "fault.h"
#include "slab.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

/* The innermost guard of each thread. Initial-exec: the handler reads it, and a dynamic TLS
 * access from a library loaded with dlopen() may allocate on a thread's first use, which a
 * signal handler must not. */
static __thread struct slab_fault *current __attribute__((tls_model("initial-exec")));

/* Set while this thread runs the chained handler: a SIGBUS it raises again comes back here
 * (Python's faulthandler, enabled after the handler was installed and chained by a later
 * setup, puts this handler back as its own predecessor and raises), and must not be chained
 * again, or the two call each other until the stack overflows. */
static __thread int chaining __attribute__((tls_model("initial-exec")));

static pthread_mutex_t setup_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction chained;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	struct slab_fault *g = current;

	if (g && si->si_code > 0) {
		current = g->prev;
		g->addr = si->si_addr;
		siglongjmp(g->jump, 1);
	}
	/* A fault of its own, not the chained handler's raise: a chained handler that left by a
	 * jump left the mark set. */
	if (si->si_code > 0)
		chaining = 0;
	if (!chaining && (chained.sa_flags & SA_SIGINFO) && chained.sa_sigaction) {
		chaining = 1;
		chained.sa_sigaction(sig, si, uc);
		chaining = 0;
		return;
	}
	if (!chaining && !(chained.sa_flags & SA_SIGINFO) && chained.sa_handler != SIG_DFL &&
	    chained.sa_handler != SIG_IGN) {
		chaining = 1;
		chained.sa_handler(sig);
		chaining = 0;
		return;
	}
	/* As if nobody had caught it: the faulting read runs again and ends the process, and a
	 * SIGBUS that was sent, not faulted, is sent again. */
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static int installed(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_bus;
}

int slab_fault_setup(struct slab_err *e)
{
	struct sigaction now, sa;
	int ret = 0;

	/* In front already, as nearly always (a loader's workers ask before each batch): no
	 * lock, which a fork() child would find held by a thread of its parent's that is not
	 * there to let go of it, and hang in its own first opening. */
	if (sigaction(SIGBUS, NULL, &now) == 0 && installed(&now))
		return 0;
	pthread_mutex_lock(&setup_mu);
	if (sigaction(SIGBUS, NULL, &now) != 0) {
		ret = slab_fail(e, SLAB_ERR_IO, NULL, "cannot read the SIGBUS handler: %s",
				strerror(errno));
	} else if (!installed(&now)) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_bus;
		/* NODEFER: the handler leaves by siglongjmp to a jump buffer saved without the
		 * signal mask, so SIGBUS must not be blocked while it runs. */
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		chained = now;
		if (sigaction(SIGBUS, &sa, NULL) != 0)
			ret = slab_fail(e, SLAB_ERR_IO, NULL, "cannot install a SIGBUS handler: %s",
					strerror(errno));
	}
	pthread_mutex_unlock(&setup_mu);
	return ret;
}

void slab_fault_begin(struct slab_fault *g)
{
	g->addr = NULL;
	g->prev = current;
	/* The handler may run between any two instructions after this store: it must see a
	 * complete guard. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	current = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int slab_fault_guarded(void)
{
	return current != NULL;
}

void slab_fault_end(struct slab_fault *g)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	current = g->prev;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int slab_fault_fail(struct slab_err *e, const char *path, const void *base, uint64_t size,
		    const void *addr)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)base;
	unsigned long long off = a >= b && a - b < size ? (unsigned long long)(a - b) : 0;
	struct stat st;

	if (stat(path, &st) == 0 && (uint64_t)st.st_size < size)
		return slab_fail(e, SLAB_ERR_IO, path,
				 "cannot read offset %llu: the file is %llu bytes now, %llu when it "
				 "was opened (truncated while in use)", off,
				 (unsigned long long)st.st_size, (unsigned long long)size);
	return slab_fail(e, SLAB_ERR_IO, path,
			 "cannot read offset %llu of the mapped file (an I/O error, or the file "
			 "was truncated while in use)", off);
}
