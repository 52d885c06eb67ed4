/* fault.h: a fault reading a mapped file turned into an error return. A page of a shared file
 * mapping that cannot be read (the file was truncated under the mapping: NFS, a re-copy, a
 * full disk; or the device failed the read) is SIGBUS, which ends the process with no
 * message. Code that reads a mapping where that can happen guards the reads; a fault inside a
 * guard returns to it, with the address, instead:
 *
 *	struct slab_fault g;
 *
 *	if (sigsetjmp(g.jump, 0))
 *		return slab_fault_fail(&x->err, path, base, size, g.addr);
 *	slab_fault_begin(&g);
 *	... reads of the mapping ...
 *	slab_fault_end(&g);
 *
 * The guarded code must leave nothing half done that the fault path cannot undo (a decoder
 * state is rebuilt, a lock is never held across the reads), and locals it changes and the
 * fault path reads must be volatile. Guards nest, per thread. A SIGBUS outside every guard
 * goes to the handler that was there before (or ends the process as it would have). */
#ifndef SLAB_FAULT_H
#define SLAB_FAULT_H

#include <setjmp.h>
#include <stdint.h>

#include "error.h"

struct slab_fault {
	sigjmp_buf jump;
	const void *addr;               /* after a fault: the address that could not be read */
	struct slab_fault *prev;
};

/* Install the SIGBUS handler, chaining the one in place (again if another has replaced it
 * since). 0, or SLAB_ERR_IO with the reason in *e. Call before guarding, from the opening of
 * the context that guards; the handler stays. */
int slab_fault_setup(struct slab_err *e);

void slab_fault_begin(struct slab_fault *g);
void slab_fault_end(struct slab_fault *g);

/* Is this thread inside a guard? A fault there returns to it: code called from inside one
 * (a loader's worker, a walk) needs no guard of its own. */
int slab_fault_guarded(void);

/* The error after a fault at addr inside the mapping [base, base + size) of the file at
 * path: what the file is now (shorter than mapped: truncated while in use; else an I/O error),
 * and the offset. Returns SLAB_ERR_IO. */
int slab_fault_fail(struct slab_err *e, const char *path, const void *base, uint64_t size,
		    const void *addr);

#endif
