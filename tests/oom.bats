#!/usr/bin/env bats
# Out of memory: every tool, on a representative command line, with each allocation call in
# turn made to fail (tests/fault/failmalloc.c, preloaded). Whichever allocation fails, the
# tool either does without it (exit 0, the same output) or stops cleanly: exit 1, a message
# on stderr, no temporary file and no output file left. Never a crash, an abort or a hang.

load test_helper/common

FAILMALLOC="$SLAB_BUILD/lib/failmalloc.so"

setup() {
	[ -f "$FAILMALLOC" ] ||
		skip "no $FAILMALLOC (sanitizer builds cannot interpose malloc, so they do not build it)"
}

# Inputs small enough that each run takes milliseconds: the sweeps run each command hundreds
# of times.
wds() {
	mkwds --count 3 --width 40 --height 30 --seed 5 -o s.tar
}

dataset() {
	wds
	pack -q --page-size 16K -o d.slab s.tar
}

# allocations N: the allocation numbers to fail for a command making N of them. By default
# every one up to 80 (start-up, option parsing, opening the inputs: where the paths differ
# most), then 80 spread evenly over the rest; SLAB_OOM_FULL=1 fails every one up to 300 and
# 200 spread over the rest (a few minutes more: run it when changing an allocation path).
allocations() {
	local n=$1 all=80 spread=80
	if [ -n "${SLAB_OOM_FULL:-}" ]; then
		all=300 spread=200
	fi
	if [ "$n" -le $((all + spread)) ]; then
		seq 1 "$n"
	else
		seq 1 $all
		awk -v n="$n" -v a=$all -v s=$spread \
			'BEGIN { for (k = 1; k <= s; k++) print a + int(k * (n - a) / s) }'
	fi
}

# sweep [--any | --same SED] [--skips] [--in FILE] OUT CMD ARGS...: run CMD once counting its
# allocations, then once for each allocation number of allocations() with that allocation
# failing. OUT is the file CMD writes ('-': its standard output); standard input is FILE,
# else /dev/null. A successful run's output must equal the first run's; with --same, after
# the sed -E script SED on both (for timings: numbers out, the shape stays); with --any,
# only be there when the first run's was; with --skips, a run may also have skipped samples
# whose decode ran out of memory (the sample's failure, under --on-error skip), saying so
# in a warning "... out of memory ... (skipped)". A failed run must say why in a line
# "TOOL: reason" (or libarchive's own last words: it exits on some failed allocations).
# The loop forks little: a sweep is hundreds of runs.
sweep() {
	local any=0 same="" skips=0 in=/dev/null out n rc why report="" nfail=0 count start left tool
	while :; do
		case $1 in
		--any) any=1; shift;;
		--same) same=$2; shift 2;;
		--skips) skips=1; shift;;
		--in) in=$2; shift 2;;
		*) break;;
		esac
	done
	out=$1
	shift
	tool=$1
	shopt -s nullglob
	[ "$out" = - ] || rm -f "$out"
	rm -f count
	FAILMALLOC_COUNT=$PWD/count LD_PRELOAD=$FAILMALLOC "$@" < "$in" > ref.stdout 2> ref.stderr ||
		fail "$(printf '%s failed without injection:\n%s' "$*" "$(cat ref.stderr)")"
	if [ "$out" = - ]; then
		mv ref.stdout ref.out
	else
		mv "$out" ref.out
	fi
	count=$(< count)
	[ "$count" -gt 0 ] || fail "$* made no allocation: is the shim working?"
	start=$SECONDS
	for n in $(allocations "$count"); do
		[ "$out" = - ] || [ ! -e "$out" ] || rm "$out"
		[ ! -e trace ] || rm trace
		rc=0
		FAILMALLOC_NTH=$n FAILMALLOC_TRACE=$PWD/trace LD_PRELOAD=$FAILMALLOC \
			timeout 60 "$@" < "$in" > got.stdout 2> got.stderr || rc=$?
		why=""
		case $rc in
		0)
			[ "$out" = - ] || { [ -e "$out" ] && mv "$out" got.stdout; }
			if [ -s ref.out ] && [ ! -s got.stdout ]; then
				why="exit 0 without output"
			elif [ -n "$same" ]; then
				[ "$(sed -E "$same" ref.out)" = "$(sed -E "$same" got.stdout)" ] ||
					why="exit 0 with output of another shape"
			elif [ "$any" = 0 ] && ! cmp -s ref.out got.stdout &&
				! { [ "$skips" = 1 ] &&
					grep -q "^$tool: .*: out of memory.* (skipped)$" got.stderr; }; then
				why="exit 0 with different output"
			fi;;
		1)
			grep -q -e "^$tool: ." -e "^Fatal Internal Error in libarchive: ." got.stderr ||
				why="exit 1 without a message"
			[ "$out" = - ] || [ ! -e "$out" ] || why="exit 1 left the output file $out";;
		124)
			why="hung (killed after 60 s)";;
		*)
			why="exit $rc";;
		esac
		left=(.*.tmp.*)
		if [ "${#left[@]}" -gt 0 ]; then
			why="${why:+$why, }left ${left[*]}"
			rm -f "${left[@]}"
		fi
		if [ -n "$why" ]; then
			nfail=$((nfail + 1))
			[ "$nfail" -le 10 ] &&
				report+=$(printf '\nallocation %s: %s\n  stderr: %s\n%s\n' "$n" "$why" \
					"$(head -c 400 got.stderr)" "$([ -f trace ] && sed 's/^/  /' trace)")
		fi
	done
	echo "# $*: $count allocations, $(allocations "$count" | wc -l) failed in turn, $((SECONDS - start)) s" >&3
	[ "$nfail" -eq 0 ] ||
		fail "$(printf '%s: %d of the runs failing one allocation went wrong:%s' "$*" "$nfail" "$report")"
}

@test "the shim counts allocations and fails the one asked for" {
	wds
	FAILMALLOC_COUNT=$PWD/count LD_PRELOAD=$FAILMALLOC pack -q -j1 -o o.slab s.tar
	[ "$(cat count)" -gt 10 ]
	rm o.slab
	# (the first is the standard output stream that waits for a non-blocking pipe: without
	# it, the tool keeps the C library's, and goes on)
	run -0 --separate-stderr env FAILMALLOC_NTH=1 LD_PRELOAD="$FAILMALLOC" pack -q -j1 -o o.slab s.tar
	assert_equal "$stderr" ""
	rm o.slab
	run -1 --separate-stderr env FAILMALLOC_NTH=2 LD_PRELOAD="$FAILMALLOC" pack -q -j1 -o o.slab s.tar
	assert_equal "$stderr" "pack: out of memory"
	[ -z "$(ls -A | grep -v -e '^s.tar$' -e '^count$')" ]
}

@test "pack -j 1 --fields, to a file" {
	wds
	sweep o.slab pack -q -j 1 --fields jpg,cls,json -o o.slab s.tar
}

@test "pack -j 2 --jpeg-check --jpeg-max-side under a small --memory, to a file" {
	wds
	sweep o.slab pack -q -j 2 --jpeg-check --jpeg-max-side 20 --memory 100K -o o.slab s.tar
}

@test "pack -j 1 --jpeg-check, standard input to standard output" {
	wds
	sweep --in s.tar - pack -q -j 1 --jpeg-check --on-error=skip -o - -
}

@test "pack -j 1 --image-check --image-max-side: PNG and WebP decoded, resized, re-encoded" {
	/usr/bin/python3 -c 'import sys, PIL.features as f; sys.exit(0 if f.check("webp") else 1)' \
		2>/dev/null || skip "no PIL with WebP for /usr/bin/python3 (python3-pil)"
	# An RGB PNG and a lossy WebP re-encoded, an RGBA PNG checked and kept. Not a lossless
	# WebP: Debian's libwebp 1.2.4 crashes (SIGSEGV inside WebPDecode) when one of its
	# lossless decoder's allocations fails; upstream fixed such a case in 2023 (libwebp
	# commit "Fix next is invalid pointer when WebPSafeMalloc fails").
	/usr/bin/python3 - <<'PY'
import io, random, tarfile
from PIL import Image
rnd = random.Random(3)
def pic(w, h, mode):
    return Image.frombytes(mode, (w, h), bytes(rnd.randrange(256) for _ in range(w * h * len(mode))))
files = []
for name, im, kw in (("a.png", pic(48, 32, "RGB"), {"format": "PNG"}),
                     ("a.jpg", pic(48, 32, "RGB"), {"format": "WEBP", "quality": 80}),
                     ("b.png", pic(30, 20, "RGBA"), {"format": "PNG"})):
    b = io.BytesIO()
    im.save(b, **kw)
    files.append((name, b.getvalue()))
with tarfile.open("img.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for name, data in files:
        ti = tarfile.TarInfo(name)
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
PY
	sweep o.slab pack -q -j 1 --image-check --image-max-side 20 -o o.slab img.tar
}

@test "inspect: summary, --json, --list, --verify -v" {
	dataset
	sweep - inspect d.slab
	sweep - inspect --json d.slab d.slab
	sweep - inspect --list d.slab
	sweep - inspect --list --json d.slab
	sweep - inspect -v --verify d.slab
}

@test "inspect --tar and --get" {
	dataset
	sweep - inspect --tar d.slab
	sweep - inspect --get sample000001 --field jpg d.slab
}

@test "shuffle-plan: binary to a file, text to standard output, --stats" {
	dataset
	sweep p.plan shuffle-plan -q --seed 3 -o p.plan d.slab d.slab
	sweep - shuffle-plan -q --mode random --format text d.slab
	sweep p.plan shuffle-plan -q --stats --window 2 -o p.plan d.slab
}

@test "prefetch --plan: --emit tar, --emit raw, with and without --direct" {
	dataset
	shuffle-plan -q --window 2 -o q.plan d.slab
	sweep - prefetch -q --plan q.plan --emit d.slab
	sweep - prefetch -q --plan q.plan --emit --emit-format raw d.slab
	# --direct where the file system takes O_DIRECT (tmpfs does not)
	if prefetch -q --plan q.plan --emit --direct d.slab > /dev/null 2>&1; then
		sweep - prefetch -q --plan q.plan --emit --emit-format raw --direct d.slab
		sweep --any - prefetch -v --plan q.plan --direct d.slab
	fi
}

@test "prefetch --plan --emit-format frames: the loader's threads and the image pipeline" {
	dataset
	shuffle-plan -q --window 2 -o q.plan d.slab
	sweep - prefetch -q --plan q.plan --emit --emit-format frames --image jpg --size 16x12 d.slab
	# A decode that runs out of memory is the sample's failure: skipped, and said.
	sweep --skips - prefetch -q --plan q.plan --emit --emit-format frames --image jpg \
		--size 16x12 --on-error skip -j 1 --fields cls d.slab
}

@test "prefetch --plan, --status, --warm" {
	dataset
	shuffle-plan -q --window 2 -o q.plan d.slab
	sweep --any - prefetch -v --plan q.plan --release d.slab
	sweep --same "s/[0-9]+(\.[0-9]+)?/#/g" - prefetch --status d.slab s.tar
	sweep --same "s/[0-9]+(\.[0-9]+)?/#/g" - prefetch --status --json d.slab
	sweep --any - prefetch -v --warm d.slab
}

# The timings vary, and so does the verdict's wording with them: numbers out, verdict out.
# bench-tlb's text, numbers out and what depends on the moment left out too: whether the CPU
# was shared during the run, and how many huge pages moved during it.
BENCH_SHAPE='s/ \(the CPU is shared: expect noise\)//; s/, [0-9]+% before the run//; s/[0-9]+(\.[0-9]+)?/#/g; /^verdict:/,$d'

@test "bench-tlb: a tiny run with --svg, and the table" {
	sweep --any c.svg bench-tlb -q --max 16K --repeat 1 --min-time 1ms --backing 4k,thp --svg c.svg
	sweep --same "$BENCH_SHAPE" - bench-tlb -q --max 16K --repeat 1 --min-time 1ms --backing 4k,thp
}

@test "numa-probe on captured trees, text and --json" {
	sweep - numa-probe --json --sysfs-root "$SLAB_ROOT/tests/fixtures/sysfs/vm-1node"
	sweep - numa-probe --sysfs-root "$SLAB_ROOT/tests/fixtures/sysfs/cxl-memnodes"
}
