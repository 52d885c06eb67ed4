# common.bash: shared set-up for the bats suite: the tools under test on PATH, the shared
# corpus, a fresh working folder per test, and small helpers.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

SLAB_ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
: "${SLAB_BUILD:=$SLAB_ROOT/build}"
PATH="$SLAB_BUILD/bin:$PATH"
# python3 straight, not through a version manager's shim (pyenv's costs a third of a second
# a call, and the suite makes thousands): the interpreter the shim picks, found once per run
# and put first on PATH under its own name, so scripts' `#!/usr/bin/env python3` get it too.
if [ -n "${BATS_RUN_TMPDIR:-}" ] && [ ! -e "$BATS_RUN_TMPDIR/python3/python3" ]; then
	mkdir -p "$BATS_RUN_TMPDIR/python3.$$" &&
		ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$BATS_RUN_TMPDIR/python3.$$/python3" &&
		{ mv -T "$BATS_RUN_TMPDIR/python3.$$" "$BATS_RUN_TMPDIR/python3" 2>/dev/null ||
			rm -rf "$BATS_RUN_TMPDIR/python3.$$"; }
fi
[ -z "${BATS_RUN_TMPDIR:-}" ] || PATH="$BATS_RUN_TMPDIR/python3:$PATH"
CORPUS="$SLAB_ROOT/../shared/corpus"
export HELPERS="$SLAB_ROOT/tests/test_helper"

# A folder of its own: bats keeps files of its own in $BATS_TEST_TMPDIR.
# (Outside a test, as when bats reads the file, there is no such folder: stay put.)
if [ -n "${BATS_TEST_TMPDIR:-}" ]; then
	mkdir -p "$BATS_TEST_TMPDIR/w" && cd "$BATS_TEST_TMPDIR/w" || exit 1
fi

# Tests that run none of slab's code (rendering man pages) skip in the sanitizer pass of make
# check: they did the same work in the normal pass.
not_twice() {
	if grep -qa __asan_init "$SLAB_BUILD/bin/pack" 2>/dev/null; then
		skip "runs no code of slab's: checked in the normal pass"
	fi
}

# scripts/slab.py's python3, and the build's libslab.so when this python3 can load it: an
# AddressSanitizer build's cannot (its runtime must come first in the process), so there
# tests that need the library skip.
pyslab() {
	PYTHONPATH="$SLAB_ROOT/scripts" python3 "$@"
}
LIBSLAB="$SLAB_BUILD/libslab.so"
if [ ! -f "$LIBSLAB" ] || grep -qa __asan_init "$LIBSLAB"; then
	LIBSLAB=
fi
need_libslab() {
	[ -n "$LIBSLAB" ] || skip "no libslab.so this python3 can load in $SLAB_BUILD (a sanitizer build)"
}

# pyslab with the build's libslab.so whatever it was built with: an AddressSanitizer build's
# with the sanitizer's runtime preloaded (it must come first in the process; Python's own
# allocations are not checked for leaks). For the tests the sanitizer pass of make check must
# run too: use-after-free, fork and threads. need_libslab_any skips where there is none.
pyslab_any() {
	if [ -z "$LIBSLAB" ] && [ -f "$SLAB_BUILD/libslab.so" ]; then
		LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)" \
			ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:${ASAN_OPTIONS:-}" \
			SLAB_LIBRARY="$SLAB_BUILD/libslab.so" pyslab "$@"
	else
		pyslab "$@"
	fi
}
need_libslab_any() {
	[ -f "$SLAB_BUILD/libslab.so" ] || skip "no libslab.so in $SLAB_BUILD"
	if [ -z "$LIBSLAB" ] && ! [ -f "$(${CC:-cc} -print-file-name=libasan.so)" ]; then
		skip "libslab.so in $SLAB_BUILD is a sanitizer build and no libasan.so is here"
	fi
}

# Tests that read the shared corpus skip where it is absent, as in a user's own clone.
need_corpus() {
	[ -d "$CORPUS" ] || skip "no shared corpus at $CORPUS"
}

# small.tar: three samples, d/a (cls, txt), d/b (txt), d/c (cls, empty), after a directory.
small_tar() {
	mkdir -p src/d
	printf 'one' > src/d/a.txt
	printf '1' > src/d/a.cls
	printf 'two' > src/d/b.txt
	printf '' > src/d/c.cls
	(cd src && tar --format=gnu --sort=name -cf ../small.tar d)
}

# small.slab: small.tar packed.
small_slab() {
	small_tar
	pack -q -o small.slab small.tar
}

# one.slab: one sample (key d/a) of one field (txt, 3 bytes), from one.tar.
one_slab() {
	mkdir -p src1/d
	printf 'one' > src1/d/a.txt
	(cd src1 && tar --format=gnu -cf ../one.tar d/a.txt)
	pack -q -o one.slab one.tar
}

# mktar.py ARGS...: a random WebDataset tar (see its --help).
mktar() {
	python3 "$HELPERS/mktar.py" "$@"
}

# tarcmp A B: same members (names, bytes, order) in both tars, else a diff-like report.
tarcmp() {
	python3 "$HELPERS/tarcmp.py" "$@"
}

# flip FILE OFFSET: invert one byte in place.
flip() {
	python3 - "$1" "$2" <<'PY'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0xFF]))
PY
}

# nonblock CMD ARGS...: CMD with its standard output made non-blocking (O_NONBLOCK on the file
# description, as an event loop sharing a pipe with it sets): when the pipe is full, writes
# to it fail with EAGAIN until the reader reads.
nonblock() {
	python3 -c 'import fcntl, os, sys
fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# filesize FILE
filesize() {
	stat -c %s "$1"
}

# slabedit FILE OP ARGS...: change checksummed bytes of a .slab and fix every checksum (see
# test_helper/slabedit.py).
slabedit() {
	python3 "$HELPERS/slabedit.py" "$@"
}

# no_temporaries [DIR]: no .NAME.tmp.XXXXXX file of an output left behind.
no_temporaries() {
	local left
	left=$(find "${1:-.}" -name '.*.tmp.*')
	[ -z "$left" ] || fail "temporary files left behind: $left"
}

# memory_cgroup BYTES: a memory cgroup of this limit for the test (cgroup v1 or v2, as the
# machine has), its folder in $MEMCG; in_memcg CMD...: run CMD in it. need_memory_cgroup
# skips the test first without root, a memory controller or a build that fits (a sanitizer
# build's own memory does not). The test's file's teardown calls memcg_remove.
memory_cgroup() {
	need_memory_cgroup
	mkdir "$MEMCG" || skip "cannot make $MEMCG"
	echo "$MEMCG" > "$BATS_TEST_TMPDIR/cgroup"
	echo "$1" > "$MEMCG/$MEMCG_LIMIT"
}

need_memory_cgroup() {
	[ "$(id -u)" = 0 ] || skip "needs root to make a memory cgroup"
	if grep -qa __asan_init "$SLAB_BUILD/bin/pack" 2>/dev/null; then
		skip "a sanitizer build's own memory does not fit a small cgroup"
	fi
	if [ -w /sys/fs/cgroup/memory ]; then
		MEMCG=/sys/fs/cgroup/memory/slab-test-$$ MEMCG_LIMIT=memory.limit_in_bytes MEMCG_PROCS=tasks
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		MEMCG=/sys/fs/cgroup/slab-test-$$ MEMCG_LIMIT=memory.max MEMCG_PROCS=cgroup.procs
	else
		skip "no memory cgroup controller here"
	fi
}

in_memcg() {
	sh -c 'echo $$ > "$1/$2" && shift 2 && exec "$@"' sh "$MEMCG" "$MEMCG_PROCS" "$@"
}

# The cgroup the test made, if any (empty again once its processes are gone).
memcg_remove() {
	if [ -f "$BATS_TEST_TMPDIR/cgroup" ]; then
		rmdir "$(cat "$BATS_TEST_TMPDIR/cgroup")" 2>/dev/null || true
	fi
}
