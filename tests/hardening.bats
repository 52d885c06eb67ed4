#!/usr/bin/env bats
# slab.Loader and prefetch --emit under what a multi-day training job meets: a data file
# truncated while mapped, a batch used after close(), Ctrl-C in the middle of a hand-over,
# fork(), batches whose every sample was skipped, crop ranges that fit no image, two consumer
# threads, many closed loaders, integer options that ctypes would wrap. No crash, no lost or
# repeated batch, no hang. The tests that exercise memory and threads run again in the
# sanitizer pass of make check, with the ASan runtime preloaded into Python (pyslab_any).

load test_helper/common

# one.slab: 200 mkwds JPEGs in 64 KiB pages (about 6 MB); p.plan: a quasi plan over it.
setup_data() {
	mkwds --count 200 --seed 3 --prefix a -o a.tar
	pack -q --page-size 64K -o one.slab a.tar
	shuffle-plan -q --mode quasi --window 4 --seed 1 -o p.plan one.slab
}

# Loader over cut.slab (a copy of one.slab) that truncates the file to 100000 bytes when
# batch 2 is handed out and reads every later batch's fields and keys: the threads meet the
# cut, the iteration raises SlabError, the process lives on. $1: raw or image.
truncate_loader() {
	cp one.slab cut.slab
	pyslab_any - "$1" <<'PY'
import os, sys, slab
kw = dict(image="jpg", size=(32, 32)) if sys.argv[1] == "image" else {}
n = 0
try:
    for b in slab.Loader(["cut.slab"], plan="p.plan", batch_size=8, threads=2, ring=4, **kw):
        n += 1
        if b.number == 2:
            os.truncate("cut.slab", 100000)
            continue
        for v in b.fields["jpg"]:
            bytes(v)
        b.keys
except slab.SlabError as e:
    print(e)
print("alive after", n, "batches")
PY
}

@test "a file truncated while the Loader reads it: SlabError naming it and the offset, no SIGBUS (raw)" {
	need_libslab_any
	setup_data
	run -0 truncate_loader raw
	assert_line --index 0 --regexp "^'cut.slab': (cannot read offset [0-9]+: )?the file is 100000 bytes now, $(stat -c %s one.slab) when it was opened \(truncated while in use\)$"
	assert_line --index 1 "alive after 3 batches"
}

@test "a file truncated while the Loader decodes it: SlabError naming it, no SIGBUS (image)" {
	need_libslab_any
	setup_data
	run -0 truncate_loader image
	assert_line --index 0 --regexp "^'cut.slab': (cannot read offset [0-9]+: )?the file is 100000 bytes now, $(stat -c %s one.slab) when it was opened \(truncated while in use\)$"
	assert_line --index 1 "alive after 3 batches"
}

# prefetch --emit into a reader that truncates cut.slab after 200000 bytes and reads on:
# prefetch's exit status, then its stderr. $@: more prefetch options.
truncate_emit() {
	cp one.slab cut.slab
	prefetch --plan p.plan --emit "$@" cut.slab 2>err |
		{ head -c 200000 >/dev/null; truncate -s 100000 cut.slab; cat >/dev/null; }
	echo "status ${PIPESTATUS[0]}"
	cat err
}

@test "faulthandler enabled after one Loader, chained by the next: a SIGBUS outside the guards is one report and SIGBUS, not a recursion" {
	need_libslab
	setup_data
	cp one.slab cut.slab
	# The second Loader chains faulthandler's handler, whose own predecessor is libslab's:
	# a fault where the caller reads a raw view of a file cut after the hand-over (the
	# documented SIGBUS) went back and forth between the two until the stack overflowed.
	ulimit -c 0
	run -135 pyslab - <<'PY'
import faulthandler, os, slab
one = slab.Loader(["one.slab"], batch_size=8)
faulthandler.enable()
ld = slab.Loader(["cut.slab"], batch_size=8, threads=1, ring=2)
v = next(iter(ld)).fields["jpg"][0]
os.truncate("cut.slab", 0)
print("reading", flush=True)
bytes(v)
print("read a page that is gone")
PY
	assert_line --index 0 "reading"
	[ "$(grep -c '^Fatal Python error: Bus error$' <<< "$output")" -eq 1 ]
}

@test "a file truncated while the Loader reads it, faulthandler enabled after the Loader was made: SlabError, no SIGBUS" {
	need_libslab
	setup_data
	cp one.slab cut.slab
	# faulthandler.enable() (pytest, torch's elastic agent and training scripts call it)
	# puts its own SIGBUS handler in front of the one the Loader installed at open: the
	# workers' guards must not depend on what was in front then. One worker, one slot: every
	# batch after the first is begun after the enable().
	ulimit -c 0
	run -0 pyslab - <<'PY'
import faulthandler, os, slab
ld = slab.Loader(["cut.slab"], plan="p.plan", batch_size=8, threads=1, ring=1,
                 image="jpg", size=(16, 16))
faulthandler.enable()
n = 0
try:
    for b in ld:
        n += 1
        if b.number == 2:
            os.truncate("cut.slab", 100000)
except slab.SlabError as e:
    print(e)
print("alive after", n, "batches")
PY
	assert_line --index 0 --regexp "^'cut.slab': (cannot read offset [0-9]+: )?the file is 100000 bytes now, $(stat -c %s one.slab) when it was opened \(truncated while in use\)$"
	assert_line --index 1 "alive after 3 batches"
}

@test "prefetch --emit (raw, tar, frames, --release) from a file truncated mid-stream: exit 1 naming the input" {
	setup_data
	size=$(stat -c %s one.slab)
	for opts in "--emit-format raw" "--emit-format tar" "--emit-format raw --release" \
		"--emit-format tar --release --ahead 2" "--emit-format frames --image jpg --size 32x32"; do
		# shellcheck disable=SC2086
		run -0 truncate_emit $opts
		assert_line --index 0 "status 1"
		assert_line --index 1 --regexp "^prefetch: 'cut.slab': (cannot read offset [0-9]+: )?the file is 100000 bytes now, $size when it was opened \(truncated while in use\)$"
		[ "${#lines[@]}" -eq 2 ]
	done
}

@test "inspect --get of a field whose file is truncated mid-stream: exit 1 naming the input, not the output" {
	head -c 3000000 /dev/urandom > big.bin
	tar -cf big.tar big.bin
	pack -q -o one.slab big.tar
	size=$(stat -c %s one.slab)
	cp one.slab cut.slab
	run -0 bash -c 'inspect --get big cut.slab 2>err |
		{ head -c 200000 >/dev/null; truncate -s 100000 cut.slab; cat >/dev/null; }
		echo "status ${PIPESTATUS[0]}"; cat err'
	assert_line --index 0 "status 1"
	assert_line --index 1 --regexp "^inspect: 'cut.slab': cannot read offset [0-9]+: the file is 100000 bytes now, $size when it was opened \(truncated while in use\)$"
	assert_equal "${#lines[@]}" 2
}

# setup_cut: setup_data, and for the truncation tests: shim (the preloaded shim; the test
# skips without it), size (one.slab's) and want (the message naming cut.slab cut to 4096).
setup_cut() {
	shim="$SLAB_BUILD/lib/truncmap.so"
	[ -f "$shim" ] || skip "no $shim (sanitizer builds do not build the preloaded shims)"
	setup_data
	size=$(stat -c %s one.slab)
	want="'cut.slab': cannot read offset [0-9]+: the file is 4096 bytes now, $size when it was opened \\(truncated while in use\\)"
}

# cut_on_open WHEN CMD...: CMD on cut.slab, a fresh copy of one.slab that the preloaded shim
# (tests/fault/truncmap.c) cuts to 4096 bytes at the reader's madvise WHEN (random, normal,
# random:2): exit 1 and one line, CMD's name and $want (the message naming the file).
cut_on_open() {
	local when=$1
	shift
	cp one.slab cut.slab
	run -1 --separate-stderr env LD_PRELOAD="$shim" TRUNCMAP=cut.slab:4096:$when "$@"
	assert_equal "${#stderr_lines[@]}" 1
	[[ "$stderr" =~ ^$1:\ $want$ ]] || fail "$*: $stderr"
}

# The file truncated while it is opened (tests/fault/truncmap.c, preloaded, cuts it at the
# reader's madvise before the table is read and checked, or after, before prefetch --emit
# checks every key): an error naming it, exit 1 or SlabError, never SIGBUS.
@test "a file truncated while it is opened: inspect, shuffle-plan, prefetch and the Loader say so, no SIGBUS" {
	setup_cut
	for cmd in "inspect cut.slab" "shuffle-plan -o x.plan cut.slab" "prefetch --plan p.plan cut.slab" \
		"prefetch --plan p.plan --emit --emit-format raw cut.slab"; do
		# shellcheck disable=SC2086
		cut_on_open random $cmd
	done
	# after the open's checks: before the stream's walk over every key, shuffle-plan's quasi
	# plan making; and (the second madvise to random) the walk's pass over the plan
	for cmd in "prefetch --plan p.plan --emit --emit-format tar cut.slab" \
		"shuffle-plan --mode quasi -o x.plan cut.slab"; do
		# shellcheck disable=SC2086
		cut_on_open normal $cmd
	done
	for cmd in "prefetch --plan p.plan cut.slab" "prefetch --plan p.plan --emit --emit-format raw cut.slab"; do
		# shellcheck disable=SC2086
		cut_on_open random:2 $cmd
	done
	need_libslab
	cp one.slab cut.slab
	LD_PRELOAD="$shim" TRUNCMAP=cut.slab:4096:random run -0 pyslab - <<'PY'
import slab
try:
    slab.Loader(["cut.slab"], batch_size=8)
except slab.SlabError as e:
    print("SlabError", e)
PY
	[[ "$output" =~ ^SlabError\ $want$ ]] || fail "$output"
	# the Loader's quasi plan, and its walk's pass over the plan
	for when in normal random:2; do
		cp one.slab cut.slab
		LD_PRELOAD="$shim" TRUNCMAP=cut.slab:4096:$when run -0 pyslab - <<'PY'
import slab
try:
    slab.Loader(["cut.slab"], batch_size=8, order="quasi")
except slab.SlabError as e:
    print("SlabError", e)
PY
		[[ "$output" =~ ^SlabError\ $want$ ]] || fail "$when: $output"
	done
}

# The file truncated after it is opened (the shim at the reader's madvise back to normal,
# before anything reads the table): every inspect mode, shuffle-plan --stats and --subset's
# key lines, slab.SlabFile and the Loader's subset keys read the table through libslab's
# guarded accessors: an error naming the file, never SIGBUS.
@test "a file truncated after it is opened: inspect's modes, shuffle-plan --stats and key lookups say so, no SIGBUS" {
	setup_cut
	printf 'key:a000003\nkey:a000007\n' >keys.txt
	for cmd in "inspect cut.slab" "inspect --json cut.slab" "inspect --list cut.slab" \
		"inspect --list --json cut.slab" "inspect --verify cut.slab" "inspect --get a000005 cut.slab" \
		"inspect --get #5 cut.slab" "shuffle-plan --stats --mode random cut.slab" \
		"shuffle-plan --mode random --subset keys.txt -o y.plan cut.slab"; do
		# shellcheck disable=SC2086
		cut_on_open normal $cmd
	done
	# the files after it still get their turn
	cp one.slab cut.slab
	run -1 --separate-stderr env LD_PRELOAD="$shim" TRUNCMAP=cut.slab:4096:normal inspect cut.slab one.slab
	[[ "$stderr" =~ ^inspect:\ $want$ ]] || fail "$stderr"
	assert_line --index 0 "file:         one.slab"
	assert_line "samples:      200"
	# cut inside its last page, which then reads as zeros: --verify compares the size
	cp one.slab cut.slab
	run -1 --separate-stderr env LD_PRELOAD="$shim" TRUNCMAP=cut.slab:$((size - 10)):normal inspect --verify cut.slab
	assert_equal "$stderr" "inspect: 'cut.slab': the file is $((size - 10)) bytes now, $size when it was opened (truncated while in use)"
	need_libslab
	cp one.slab cut.slab
	LD_PRELOAD="$shim" TRUNCMAP=cut.slab:4096:normal run -0 pyslab - <<'PY'
import slab
try:
    slab.Loader(["cut.slab"], batch_size=8, subset=["a000003", "a000009"])
except slab.SlabError as e:
    print("SlabError", e)
PY
	[[ "$output" =~ ^SlabError\ subset\[0\]:\ $want$ ]] || fail "$output"
	for cut in 4096 $((size - 10)); do
		cp one.slab cut.slab
		run -0 pyslab - "$cut" <<'PY'
import os, sys, slab
f = slab.SlabFile("cut.slab")
os.truncate("cut.slab", int(sys.argv[1]))
for what in ("key", "sample", "find", "verify"):
    try:
        got = {"key": lambda: f.key(5), "sample": lambda: f.sample(5).key,
               "find": lambda: f.find("a000007"), "verify": f.verify}[what]()
        print(what, got)
    except slab.SlabError as e:
        print(what, "SlabError", e)
PY
		if [ "$cut" = 4096 ]; then
			for k in 0 1 2 3; do
				[[ "${lines[$k]}" =~ ^(key|sample|find|verify)\ SlabError\ cut.slab:\ cannot\ read\ offset\ [0-9]+:\ the\ file\ is\ 4096\ bytes\ now,\ $size\ when\ it\ was\ opened\ \(truncated\ while\ in\ use\)$ ]] ||
					fail "line $k: ${lines[$k]}"
			done
		else
			assert_line --index 0 "key a000005"
			assert_line --index 1 "sample a000005"
			assert_line --index 2 "find 7"
			assert_line --index 3 "verify SlabError cut.slab: the file is $cut bytes now, $size when it was opened (truncated while in use)"
		fi
	done
}

# A loader let go mid-epoch (a break, islice, an exception) without close(): freed at once,
# its threads and files with it, not when the cyclic collector happens to run (the batch
# iteration handed out held the loader, and the loader that batch); a batch kept keeps it.
@test "a Loader dropped mid-epoch without close() is freed at once; a batch kept keeps it working" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import gc, os, slab
gc.disable()
def counts():
    return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))
base = counts()
for ep in range(5):
    ld = slab.Loader(["one.slab"], batch_size=8, threads=2, image="jpg", size=(16, 16), epoch=ep)
    for b in ld:
        break
    del ld, b
    assert counts() == base, (ep, counts(), base)
b = next(iter(slab.Loader(["one.slab"], batch_size=8)))
print(len(b.keys), sorted(b.fields))
PY
	assert_output "8 ['cls', 'jpg', 'json']"
}

@test "a Batch used after its Loader's close(): SlabError('loader closed'), views taken before still read" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import slab
for kw in ({}, dict(image="jpg", size=(16, 16))):
    ld = slab.Loader(["one.slab"], batch_size=8, **kw)
    b = next(ld)
    jpg = b.fields["jpg"][0]
    want = bytes(jpg)
    ld.close()
    for attr in ("samples", "fields", "keys", "positions"):
        try:
            getattr(b, attr)
        except slab.SlabError as e:
            print(attr, e)
    try:
        next(ld)
    except slab.SlabError as e:
        print("next", e)
    assert bytes(jpg) == want
    if b.images is not None:
        assert len(b.images.tobytes()) == 8 * 16 * 16 * 3
print("ok")
PY
	for k in 0 5; do
		assert_line --index $((k + 0)) "samples loader closed"
		assert_line --index $((k + 1)) "fields loader closed"
		assert_line --index $((k + 2)) "keys loader closed"
		assert_line --index $((k + 3)) "positions loader closed"
		assert_line --index $((k + 4)) "next loader closed"
	done
	assert_line --index 10 "ok"
}

@test "Ctrl-C over a whole epoch: iterating on after each KeyboardInterrupt yields every batch exactly once, in order" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import os, signal, threading, time, slab
# A thread sends SIGINT every millisecond; while armed, the main thread takes each as Python's own
# handler would (KeyboardInterrupt wherever it lands: in the hand-over, in the release, in
# the loop), catches it and iterates on.
armed = False
def on_int(sig, frame):
    if armed:
        raise KeyboardInterrupt
signal.signal(signal.SIGINT, on_int)
stop = threading.Event()
def nag():
    while not stop.is_set():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.002)
interrupts, ok = 0, 0
t = threading.Thread(target=nag)
t.start()
for epoch in range(3):
    ld = slab.Loader(["one.slab"], plan="p.plan", batch_size=1, threads=1, ring=2,
                     image="jpg", size=(128, 128), epoch=epoch)
    seen = []
    armed = True
    while True:
        try:
            for b in ld:
                seen.append(b.number)
            break
        except KeyboardInterrupt:
            interrupts += 1
    armed = False
    assert seen == list(range(len(ld))), (seen, len(ld))
    ok += len(seen)
    ld.close()
stop.set()
t.join()
assert interrupts >= 20, interrupts
print("ok", ok)
PY
	assert_output "ok 600"
}

@test "Ctrl-C as the hand-over's last call returns: the batch comes on the next call, none lost or repeated" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import weakref, slab
# Python takes a pending signal as a call into C returns: here weakref.ref(), the last call
# of the hand-over, raises KeyboardInterrupt once, as a SIGINT arriving then would.
class Ref:
    armed = 0
    @staticmethod
    def ref(x, *a):
        r = weakref.ref(x, *a)
        if Ref.armed:
            Ref.armed -= 1
            raise KeyboardInterrupt
        return r
slab.weakref = Ref
ld = slab.Loader(["one.slab"], batch_size=8, threads=1, ring=2, fields=["cls"])
it = iter(ld)
seen = [next(it).number]
Ref.armed = 1
while True:
    try:
        for b in it:
            seen.append(b.number)
        break
    except KeyboardInterrupt:
        print("interrupted")
assert seen == list(range(len(ld))), seen
print("ok", len(seen))
PY
	assert_line --index 0 "interrupted"
	assert_line --index 1 "ok 25"
}

@test "fork() after a Loader exists: the child gets SlabError or exits cleanly, the parent is unaffected" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import os, sys, slab
ld = slab.Loader(["one.slab"], plan="p.plan", batch_size=8, threads=2, image="jpg", size=(16, 16))
first = next(ld).number
for how in ("iterate", "close", "exit"):
    sys.stdout.flush()                  # a buffered stdout: the child's exit would write it again
    pid = os.fork()
    if pid == 0:
        code = 0
        if how == "iterate":
            try:
                next(ld)
                code = 3
            except slab.SlabError as e:
                print("child:", str(e).replace(str(os.getpid()), "CHILD").replace(
                    str(os.getppid()), "PARENT"))
                sys.stdout.flush()
        elif how == "close":
            ld.close()
            del ld
        os._exit(code) if how == "iterate" else sys.exit(code)
    _, status = os.waitpid(pid, 0)
    print(how, "status", status)
rest = [b.number for b in ld]
assert [first] + rest == list(range(len(ld))), rest
print("parent ok", len(rest) + 1)
PY
	assert_line --index 0 "child: slab.Loader: created in process PARENT, used in process CHILD (after fork()): the loader's threads are not in this process; make a new Loader here"
	assert_line --index 1 "iterate status 0"
	assert_line --index 2 "close status 0"
	assert_line --index 3 "exit status 0"
	assert_line --index 4 "parent ok 25"
}

@test "fork() while another thread is in the Loader's close(): the child's close() and with-exit return, no hang" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import os, threading, slab
ld = slab.Loader(["one.slab"], batch_size=8, threads=1, ring=2)
b = next(iter(ld))
# A thread of the parent's inside close() as fork() runs: its lock, held here for as long as
# the test needs, is held in the child too, by a thread the child does not have.
inside, leave = threading.Event(), threading.Event()
def closing():
    with ld._closing:
        inside.set()
        leave.wait()
t = threading.Thread(target=closing)
t.start()
inside.wait()
pid = os.fork()
if pid == 0:
    with ld:
        pass
    ld.close()
    try:
        b.keys
    except slab.SlabError as e:
        print("child:", e, flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
leave.set()
t.join()
print("child exit", os.waitstatus_to_exitcode(status))
print("parent", b.number, len(b.keys), sum(1 for _ in ld) + 1)
ld.close()
PY
	assert_line --index 0 "child: loader closed"
	assert_line --index 1 "child exit 0"
	assert_line --index 2 "parent 0 8 25"
}

@test "libslab: a fork() child's slab_loader_next() fails saying so, and its close frees without joining" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import ctypes, os, slab
lib = slab._loader_lib()
ld = slab.Loader(["one.slab"], batch_size=8, threads=2)
h = ld._owner.loader
pid = os.fork()
if pid == 0:
    out = ctypes.c_void_p()
    rc = lib.slab_loader_next(h, ctypes.byref(out))
    msg = lib.slab_loader_error(h).decode()
    print(rc, msg.replace(str(os.getpid()), "CHILD").replace(str(os.getppid()), "PARENT"),
          flush=True)                   # os._exit() does not flush a buffered stdout
    lib.slab_loader_close(h)
    ld._owner.loader = None
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("status", status, "parent", sum(1 for _ in ld))
PY
	assert_line --index 0 "-7 loader opened in process PARENT, used in process CHILD: a fork() child has none of its threads; open a new loader there"
	assert_line --index 1 "status 0 parent 25"
}

@test "a batch whose every sample was skipped is not handed out: the epoch goes on, the samples counted" {
	need_libslab_any
	# a000002 and a000003 cut in half: with batches of 2, batch 1 has nothing left.
	mkwds --count 8 --seed 4 --prefix a -o x.tar
	mkdir x && (cd x && tar -xf ../x.tar && for f in a000002.jpg a000003.jpg; do
		head -c $(($(stat -c %s $f) / 2)) $f > t && mv t $f; done &&
		tar --format=pax -cf ../cut.tar $(tar -tf ../x.tar))
	pack -q -o cut.slab cut.tar
	run -0 pyslab_any - <<'PY'
import slab
ld = slab.Loader(["cut.slab"], batch_size=2, image="jpg", size=(16, 16), on_error="skip")
got = [(b.number, len(b), tuple(b.images.shape)) for b in ld]
print(len(ld), got, ld.skipped, ld.stats()["batches"])
print(ld.error)
PY
	assert_line --index 0 "4 [(0, 2, (2, 16, 16, 3)), (2, 2, (2, 16, 16, 3)), (3, 2, (2, 16, 16, 3))] 2 3"
	assert_line --index 1 "'cut.slab': sample #2 'a000002': field 'jpg': corrupt JPEG: Premature end of JPEG file"
}

@test "Loader: crop ranges that fit no image are refused at construction, never 'no error' per sample" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
nan, inf = float("nan"), float("inf")
for kw in (dict(scale=(0, 0)), dict(scale=(nan, 1)), dict(scale=(0.5, inf)),
           dict(scale=(0.9, 0.1)), dict(ratio=(0, 1)), dict(ratio=(1, inf)),
           dict(ratio=(nan, nan)), dict(scale=1), dict(size=(0, 8))):
    try:
        slab.Loader(["one.slab"], image="jpg", **kw)
        print("accepted", kw)
    except ValueError as e:
        print(e)
PY
	assert_line --index 0 "scale must be (min, max) with 0 < min <= max <= 1, not (0, 0)"
	assert_line --index 1 "scale must be (min, max) with 0 < min <= max <= 1, not (nan, 1)"
	assert_line --index 2 "scale must be (min, max) with 0 < min <= max <= 1, not (0.5, inf)"
	assert_line --index 3 "scale must be (min, max) with 0 < min <= max <= 1, not (0.9, 0.1)"
	assert_line --index 4 "ratio must be (min, max) with 0 < min <= max, finite, not (0, 1)"
	assert_line --index 5 "ratio must be (min, max) with 0 < min <= max, finite, not (1, inf)"
	assert_line --index 6 "ratio must be (min, max) with 0 < min <= max, finite, not (nan, nan)"
	assert_line --index 7 "scale must be a pair of numbers (min, max), not 1"
	assert_line --index 8 "size[0] must be at least 1, not 0"
	[ "${#lines[@]}" -eq 9 ]
}

@test "Loader: integer options are range-checked, never wrapped by ctypes; a batch larger than the plan is one batch" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
for kw in (dict(batch_size=2**64), dict(threads=2**32 + 1), dict(threads=0),
           dict(memory=2**64), dict(batch_size=1.5), dict(ring=5000), dict(seed=-1),
           dict(rank=2**32), dict(batch_size="8"), dict(max_pixels=0)):
    try:
        slab.Loader(["one.slab"], **kw)
        print("accepted", kw)
    except (TypeError, ValueError) as e:
        print(type(e).__name__ + ": " + str(e))
with slab.Loader(["one.slab"], batch_size=10**9) as ld:
    print(len(ld), [len(b) for b in ld])
PY
	assert_line --index 0 "ValueError: batch_size must be at most 9223372036854775807, not 18446744073709551616"
	assert_line --index 1 "ValueError: threads must be at most 1024, not 4294967297"
	assert_line --index 2 "ValueError: threads must be at least 1, not 0"
	assert_line --index 3 "ValueError: memory must be at most 18446744073709551615, not 18446744073709551616"
	assert_line --index 4 "TypeError: batch_size must be an integer, not 1.5"
	assert_line --index 5 "ValueError: ring must be at most 4096, not 5000"
	assert_line --index 6 "ValueError: seed must be at least 0, not -1"
	assert_line --index 7 "ValueError: rank must be at most 4294967295, not 4294967296"
	assert_line --index 8 "TypeError: batch_size must be an integer, not '8'"
	assert_line --index 9 "ValueError: max_pixels must be at least 1, not 0"
	assert_line --index 10 "1 [200]"
}

@test "Loader: a word option given a list or a dict is a ValueError naming the option, not 'unhashable type'" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
for kw in (dict(image="jpg", crop=["center"]), dict(order=["random"]),
           dict(cache_policy={"fixed": 1}), dict(video="mp4", clip_start=["begin"]),
           dict(video="mp4", on_short=["loop"]), dict(addressing=["path"])):
    try:
        slab.Loader(["one.slab"], **kw)
        print("accepted", kw)
    except (TypeError, ValueError) as e:
        print(type(e).__name__ + ": " + str(e))
PY
	assert_line --index 0 "ValueError: crop must be 'random-resized', 'center' or None, not ['center']"
	assert_line --index 1 "ValueError: order must be 'sequential', 'random' or 'quasi', not ['random']"
	assert_line --index 2 "ValueError: cache_policy must be 'belady' or 'fixed', not {'fixed': 1}"
	assert_line --index 3 "ValueError: clip_start must be 'random', 'center' or 'begin', not ['begin']"
	assert_line --index 4 "ValueError: on_short must be 'pad', 'loop' or 'error', not ['loop']"
	assert_line --index 5 "ValueError: addressing must be 'path', 'virtual' or 'auto', not ['path']"
	[ "${#lines[@]}" -eq 6 ]
}

@test "Loader: paths, plan, next_plans, fields or subset of the wrong type: a TypeError naming the argument" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import pathlib, slab
for kw in (dict(paths=None), dict(paths=5), dict(paths=["one.slab", None]), dict(plan=5),
           dict(next_plans=7), dict(next_plans=["p.plan", 3]), dict(fields=5), dict(subset=5)):
    try:
        slab.Loader(kw.pop("paths", ["one.slab"]), **kw)
        print("accepted", kw)
    except TypeError as e:
        print("TypeError: " + str(e))
# what they take still works: one path, a PathLike, bytes, iterables
with slab.Loader(pathlib.Path("one.slab"), plan=b"p.plan", next_plans=iter([pathlib.Path("p.plan")]),
                 fields=("cls",), memory="1M") as ld:
    print(len(ld), ld.fields)
with slab.Loader(iter(["one.slab"]), subset=range(5), batch_size=8) as ld:
    print([len(b) for b in ld])
PY
	assert_line --index 0 "TypeError: paths must be a list of paths, not None"
	assert_line --index 1 "TypeError: paths must be a list of paths, not 5"
	assert_line --index 2 "TypeError: paths[1] must be a path (str, bytes or os.PathLike), not None"
	assert_line --index 3 "TypeError: plan must be a path (str, bytes or os.PathLike), not 5"
	assert_line --index 4 "TypeError: next_plans must be a list of plan files, not 7"
	assert_line --index 5 "TypeError: next_plans[1] must be a path (str, bytes or os.PathLike), not 3"
	assert_line --index 6 "TypeError: fields must be a list of field names, not 5"
	assert_line --index 7 "TypeError: subset must be a list of sample indexes and keys, not 5"
	assert_line --index 8 "1 ['cls']"
	assert_line --index 9 "[5]"
	[ "${#lines[@]}" -eq 10 ]
}

@test "Loader: a file or field name holding a NUL byte is a ValueError, never the name cut at the NUL" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
# C would read each as the name before the NUL: one.slab, p.plan, jpg, cls.
for kw in (dict(paths=["one.slab\0.old"]), dict(plan="p.plan\0.old"),
           dict(next_plans=["p.plan\0.old"], memory="1M"), dict(fields=["jpg\0.png"]),
           dict(image="jpg\0.png"), dict(labels="cls\0.txt"), dict(cache_dir="/tmp\0/x")):
    try:
        slab.Loader(kw.pop("paths", ["one.slab"]), **kw)
        print("accepted", kw)
    except ValueError as e:
        print("ValueError: " + str(e))
PY
	assert_line --index 0 "ValueError: paths[0] must not hold a NUL byte, not 'one.slab\\x00.old'"
	assert_line --index 1 "ValueError: plan must not hold a NUL byte, not 'p.plan\\x00.old'"
	assert_line --index 2 "ValueError: next_plans[0] must not hold a NUL byte, not 'p.plan\\x00.old'"
	assert_line --index 3 "ValueError: fields must not hold a NUL byte, not 'jpg\\x00.png'"
	assert_line --index 4 "ValueError: image must not hold a NUL byte, not 'jpg\\x00.png'"
	assert_line --index 5 "ValueError: labels must not hold a NUL byte, not 'cls\\x00.txt'"
	assert_line --index 6 "ValueError: cache_dir must not hold a NUL byte, not '/tmp\\x00/x'"
	[ "${#lines[@]}" -eq 7 ]
}

@test "Loader: a yes-or-no option given a string is a TypeError naming it, never taken as yes" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
# bool("false") is True: drop_last="false" dropped the short batch, chw="no" made CHW.
for kw in (dict(drop_last="false"), dict(image="jpg", chw="no"), dict(release="no"),
           dict(verify=b"0"), dict(image="jpg", flip="no"), dict(anonymous="false")):
    try:
        slab.Loader(["one.slab"], **kw)
        print("accepted", kw)
    except TypeError as e:
        print("TypeError: " + str(e))
with slab.Loader(["one.slab"], batch_size=64, drop_last=0, verify=1, release=False) as ld:
    print([len(b) for b in ld])
PY
	assert_line --index 0 "TypeError: drop_last must be True or False, not 'false'"
	assert_line --index 1 "TypeError: chw must be True or False, not 'no'"
	assert_line --index 2 "TypeError: release must be True or False, not 'no'"
	assert_line --index 3 "TypeError: verify must be True or False, not b'0'"
	assert_line --index 4 "TypeError: flip must be True or False, not 'no'"
	assert_line --index 5 "TypeError: anonymous must be True or False, not 'false'"
	assert_line --index 6 "[64, 64, 64, 8]"
	[ "${#lines[@]}" -eq 7 ]
}

@test "Loader: a rank not below world_size is a ValueError naming both, as shuffle-plan's usage error" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
for rank, world in ((2, 2), (5, 2), (1, 1)):
    try:
        slab.Loader(["one.slab"], rank=rank, world_size=world)
        print("accepted", rank, world)
    except ValueError as e:
        print("ValueError: " + str(e))
with slab.Loader(["one.slab"], rank=1, world_size=2, batch_size=1000) as ld:
    print([b.samples[0] for b in ld])
PY
	assert_line --index 0 "ValueError: rank must be below world_size (2), not 2"
	assert_line --index 1 "ValueError: rank must be below world_size (2), not 5"
	assert_line --index 2 "ValueError: rank must be below world_size (1), not 1"
	assert_line --index 3 "[(0, 100)]"
	[ "${#lines[@]}" -eq 4 ]
}

@test "two Python threads iterating one Loader: every batch once, each with its own pixels" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import threading, time, slab
kw = dict(plan="p.plan", batch_size=4, threads=2, ring=6, image="jpg", size=(24, 24))
with slab.Loader(["one.slab"], **kw) as ld:
    want = {b.number: (b.images.tobytes(), tuple(b.keys)) for b in ld}
ld = slab.Loader(["one.slab"], **kw)
got, errors = {}, []
def consume():
    try:
        for b in ld:
            pixels = b.images.tobytes()
            time.sleep(0.003)                       # the other thread takes its next batch
            keys = tuple(b.keys)
            assert b.images.tobytes() == pixels      # not overwritten while held
            got.setdefault(b.number, []).append((pixels, keys))
    except Exception as e:
        errors.append(repr(e))
ts = [threading.Thread(target=consume) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
ld.close()
assert not errors, errors
assert sorted(got) == sorted(want), (sorted(got), len(want))
assert all(len(v) == 1 and v[0] == want[k] for k, v in got.items())
print("ok", len(got))
PY
	assert_output "ok 50"
}

# close() from another thread while a consumer is inside a call into the loader (waiting in
# the iteration, reading a batch's keys): the call must not read the loader's memory after
# close() let go of it. Wrappers around the C calls hold the consumer there until close()
# has returned and new Loaders have taken the freed memory, as a training job's next one
# would: the call then read another loader's error text (an empty SlabError), or an unmapped
# slot.
@test "close() from another thread during a call into the loader: 'loader closed', or the call's result, never freed memory" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import gc, threading, slab
lib = slab._loader_lib()
real = {n: getattr(lib, n) for n in ("slab_loader_next_timed", "slab_loader_error",
                                     "slab_loader_batch_samples")}
# state["signal"]: the call whose entry lets the main thread close (one per race)
state = {}
entered, closed = threading.Event(), threading.Event()
def wrap(name, hold):
    def call(*args):
        if threading.current_thread() is state.get("t"):
            if state.get("signal") == name:
                entered.set()
            if hold:
                state["held in " + name] = True
                closed.wait()
        return real[name](*args)
    setattr(lib, name, call)
wrap("slab_loader_next_timed", False)
wrap("slab_loader_error", True)
wrap("slab_loader_batch_samples", True)

def race(make, consume):
    entered.clear(); closed.clear()
    ld = make()
    got = []
    t = state["t"] = threading.Thread(target=lambda: got.append(consume(ld)))
    t.start()
    entered.wait()
    ld.close()
    del ld
    gc.collect()
    others = [slab.Loader(["one.slab"], batch_size=8) for _ in range(4)]
    closed.set()
    t.join()
    state["t"] = None
    for o in others:
        o.close()
    return got[0]

def iterate(ld):
    try:
        for b in ld:
            pass
        return "end"
    except slab.SlabError as e:
        return "SlabError: %s" % e
# one batch of 200 decodes: the consumer waits in slab_loader_next_timed() while close() runs
state["signal"] = "slab_loader_next_timed"
waiting = set()
for attempt in range(20):
    waiting.add(race(lambda: slab.Loader(["one.slab"], batch_size=200, threads=1, ring=1,
                                         image="jpg", size=(64, 64)), iterate))
    if state.pop("held in slab_loader_error", False):
        break
print(sorted(waiting), attempt < 19)

with slab.Loader(["one.slab"], batch_size=8) as ld:
    want = next(ld).keys
def keys(ld):
    b = ld.next_batch()
    return b.keys
# the consumer reading a batch's samples while close() runs
state["signal"] = "slab_loader_batch_samples"
print(race(lambda: slab.Loader(["one.slab"], batch_size=8), keys) == want,
      state.pop("held in slab_loader_batch_samples", False))
PY
	assert_line --index 0 "['SlabError: loader closed'] True"
	assert_line --index 1 "True True"
	[ "${#lines[@]}" -eq 2 ]
}

# A Loader handed to a spawned process (multiprocessing, a DataLoader's workers) is pickled:
# that said "Can't pickle local object 'CDLL.__init__.<locals>._FuncPtr'". copy.copy made a
# second Loader over the same C loader, and of a Batch a second owner of its slot, whose
# release gave back the slot of a later batch still held (its pixels overwritten).
@test "a Loader or a Batch pickled or copied: TypeError saying what to do; no slot released twice" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import copy, pickle, slab
ld = slab.Loader(["one.slab"], plan="p.plan", batch_size=4, threads=1, ring=2, image="jpg",
                 size=(32, 32))
b0 = ld.next_batch()
for what in (ld, b0):
    for f in (pickle.dumps, copy.copy, copy.deepcopy):
        try:
            f(what)
            print("copied", type(what).__name__, f.__name__)
        except TypeError as e:
            print(e)
b0.release()
b1, b2 = ld.next_batch(), ld.next_batch()   # b2 in b0's slot
keep = b2.images.tobytes()
b1.release()
b3 = ld.next_batch()
assert b2.images.tobytes() == keep
print(b2.number, b3.number)
PY
	for k in 0 1 2; do
		assert_line --index $k "a slab.Loader cannot be pickled or copied: its threads and ring are this process's; make a Loader where it is used (in each worker process, with the same arguments)"
		assert_line --index $((k + 3)) "a slab.Batch cannot be pickled or copied: it is a slot of its Loader's ring; copy what it holds (numpy.array(b.images), b.keys, bytes(v) of b.fields)"
	done
	assert_line --index 6 "2 3"
	[ "${#lines[@]}" -eq 7 ]
}

# A trainer resuming with Loader(paths, plan=FILE, start=K) got the epoch from position 0
# again (start, like rank, world_size and order, shapes a plan made here and was dropped
# without a word for a plan file): every batch before K trained on twice.
@test "a plan file with start, rank, world_size or order: ValueError, never an epoch replayed from its start" {
	need_libslab
	setup_data
	shuffle-plan -q --mode quasi --window 4 --seed 1 --start 96 -o tail.plan one.slab
	run -0 pyslab - <<'PY'
import slab
for kw in (dict(start=96), dict(rank=1, world_size=2), dict(world_size=2),
           dict(order="random"), dict(order="sequential", start=1)):
    try:
        slab.Loader(["one.slab"], plan="p.plan", batch_size=8, **kw)
        print("accepted", kw)
    except ValueError as e:
        print(e)
with slab.Loader(["one.slab"], plan="p.plan", batch_size=8, start=0, rank=0,
                 world_size=1) as ld:
    whole = [p for b in ld for p in b.positions]
with slab.Loader(["one.slab"], plan="tail.plan", batch_size=8) as ld:
    tail = [p for b in ld for p in b.positions]
print(len(whole), tail[0], len(tail))
PY
	assert_line --index 0 "start applies to a plan made here (plan=None), not to a plan file: resume with the plan shuffle-plan --start 96 makes"
	assert_line --index 1 "rank and world_size apply to a plan made here (plan=None), not to a plan file: make each rank's with shuffle-plan --rank R --world-size N"
	assert_line --index 2 "rank and world_size apply to a plan made here (plan=None), not to a plan file: make each rank's with shuffle-plan --rank R --world-size N"
	assert_line --index 3 "order applies to a plan made here (plan=None), not to a plan file: shuffle-plan --mode made it"
	assert_line --index 4 "start applies to a plan made here (plan=None), not to a plan file: resume with the plan shuffle-plan --start 1 makes"
	assert_line --index 5 "200 96 104"
	[ "${#lines[@]}" -eq 6 ]
}

# Under an address space limit (ulimit -v, a container's): a ring that does not fit, or
# threads whose stacks do not, are a SlabError saying what ran out; nothing stays behind.
@test "Loader under RLIMIT_AS: a ring or threads that do not fit are a SlabError saying so, nothing left behind" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import os, resource, slab
def counts():
    return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
base = counts()
resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), resource.RLIM_INFINITY))
for kw in (dict(batch_size=200, ring=64, image="jpg", size=(512, 512)),
           dict(batch_size=1, threads=1000)):
    try:
        slab.Loader(["one.slab"], **kw)
        print("opened", kw)
    except slab.SlabError as e:
        print(str(e).rstrip("0123456789"))
    assert counts() == base, (counts(), base)
with slab.Loader(["one.slab"], batch_size=8, threads=2, image="jpg", size=(32, 32)) as ld:
    print(sum(len(b) for b in ld))
PY
	assert_line --index 0 "out of memory for the ring: 64 batches of 157306880 bytes each"
	assert_line --index 1 "cannot start worker thread "
	assert_line --index 2 "200"
}

@test "close() stops the threads at once: 200 closed Loaders with live views leave no thread, descriptor or ring behind" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import os, slab
def threads():
    return len(os.listdir("/proc/self/task"))
def fds():
    return len(os.listdir("/proc/self/fd"))
t0, f0 = threads(), fds()
keep = []
for i in range(200):
    ld = slab.Loader(["one.slab"], plan="p.plan", batch_size=4, threads=2, ahead=4)
    b = next(ld)
    keep.append(b.fields["jpg"][0])     # a raw view: the mapping stays, nothing else
    ld.close()
print("threads", threads() - t0, "fds", fds() - f0)
assert all(len(bytes(v)) > 0 for v in keep)
PY
	assert_output "threads 0 fds 0"
}

@test "Loader: 300 files that share their 220 field names are 220 fields, not 66000" {
	need_libslab
	python3 - <<'PY'
import io, tarfile
for k in range(300):
    with tarfile.open("s%03d.tar" % k, "w", format=tarfile.PAX_FORMAT) as t:
        for f in range(220):
            data = b"%d" % f
            ti = tarfile.TarInfo("k%03d.f%03d" % (k, f))
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
PY
	printf '%s\n' s*.tar | xargs -P 2 -I{} sh -c 'pack -q --page-size 4K -o "$(basename {} .tar).slab" {}'
	run -0 pyslab - <<'PY'
import glob, slab
paths = sorted(glob.glob("s*.slab"))
with slab.Loader(paths, batch_size=300, threads=1, ahead=0) as ld:
    b = next(ld)
    print(len(paths), len(ld.fields), ld.fields[0], ld.fields[-1], bytes(b.fields["f219"][299]))
names = ["f%03d" % i for i in range(220)] + ["f007"]
try:
    slab.Loader(paths[:1], fields=names)
except slab.SlabError as e:
    print(e)
PY
	assert_line --index 0 "300 220 f000 f219 b'219'"
	assert_line --index 1 "field 'f007' wanted twice"
}
