#!/usr/bin/env bats
# prefetch --emit into a pipe moves the samples' bytes with splice(2) (tar and raw formats):
# the reader gets the same bytes as from the copying path (SLAB_NO_SPLICE=1) and as in a
# regular file (which is always copied), for every plan mode, several plans, samples larger
# than a page, empty fields and odd sizes; with --release the pages go as when copied; a
# reader that stops early ends the stream with status 0.

load test_helper/common

need_shuffle_plan() {
	command -v shuffle-plan >/dev/null 2>&1 || skip "shuffle-plan is not built"
}

# Two files: odd sizes from 0 bytes (empty fields) up to 600 KB in 64 KiB pages (many
# samples larger than a page, fields on both sides of the 16 KiB splice threshold), and
# mkwds JPEGs in 4 KiB pages; plans of each mode over both, and one of each file alone.
data() {
	mktar --seed 21 --samples 60 --max-size 200000 -o a.tar
	mkwds --count 40 --seed 5 --jpeg-bytes 10K:90K --prefix j -o b.tar
	pack -q --page-size 64K -o a.slab a.tar
	pack -q --page-size 4K -o b.slab b.tar
	for m in sequential quasi random; do
		w=()
		[ "$m" = quasi ] && w=(--window 3)
		shuffle-plan -q --mode "$m" "${w[@]}" --seed 4 -o "$m.plan" a.slab b.slab
	done
}

# emit_both NAME PREFETCH_ARGS...: NAME.splice through a pipe, NAME.copy through a pipe with
# SLAB_NO_SPLICE=1, NAME.file straight into a regular file; all three must be the same bytes.
emit_both() {
	local name=$1
	shift
	prefetch -q "$@" | cat > "$name.splice"
	SLAB_NO_SPLICE=1 prefetch -q "$@" | cat > "$name.copy"
	prefetch -q "$@" > "$name.file"
	cmp "$name.copy" "$name.splice"
	cmp "$name.copy" "$name.file"
	[ -s "$name.copy" ]
}

@test "splice: raw and tar streams equal the copying path's, byte for byte, every plan mode" {
	need_shuffle_plan
	data
	for fmt in raw tar; do
		for m in sequential quasi random; do
			emit_both "$m.$fmt" --plan "$m.plan" --emit --emit-format "$fmt" a.slab b.slab
		done
		# several plans: consecutive epochs in one stream
		emit_both "epochs.$fmt" --plan random.plan --plan quasi.plan --plan sequential.plan \
			--emit --emit-format "$fmt" a.slab b.slab
		emit_both "ahead1.$fmt" --plan quasi.plan --ahead 1 --emit --emit-format "$fmt" a.slab b.slab
	done
	# and what the stream holds is right: a sequential tar of one file is inspect --tar
	shuffle-plan -q --mode sequential -o a.plan a.slab
	prefetch -q --plan a.plan --emit a.slab | cat > a.emit.tar
	inspect --tar a.slab > a.inspect.tar
	cmp a.inspect.tar a.emit.tar
}

@test "splice: a field of exactly 16 KiB and around it, one larger than the pipe, empty fields" {
	need_shuffle_plan
	python3 - <<'PY'
import io, tarfile
sizes = [0, 1, 4095, 4096, 4097, 16383, 16384, 16385, 65536, 3 * 1024 * 1024 + 7, 0, 12345]
with tarfile.open("edge.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for i, n in enumerate(sizes):
        for field, size in (("bin", n), ("txt", i % 3), ("empty", 0)):
            data = bytes((i * 7 + j) & 0xFF for j in range(size)) if size < 70000 else \
                bytes(range(256)) * (size // 256) + b"x" * (size % 256)
            m = tarfile.TarInfo(f"s{i:03d}.{field}")
            m.size = len(data)
            t.addfile(m, io.BytesIO(data))
PY
	pack -q --page-size 8K -o edge.slab edge.tar
	shuffle-plan -q --mode random --seed 9 -o r.plan edge.slab
	shuffle-plan -q --mode sequential -o s.plan edge.slab
	for fmt in raw tar; do
		emit_both "r.$fmt" --plan r.plan --emit --emit-format "$fmt" edge.slab
		emit_both "s.$fmt" --plan s.plan --emit --emit-format "$fmt" edge.slab
	done
	# the sequential tar has every member of the input, with its bytes
	run -0 tarcmp edge.tar s.tar.splice
}

@test "splice: used into a pipe, not into a regular file nor with SLAB_NO_SPLICE=1 or --direct" {
	need_shuffle_plan
	command -v strace >/dev/null 2>&1 || skip "no strace"
	strace -o probe.trace true 2>/dev/null || skip "strace cannot trace here"
	# LeakSanitizer cannot run under ptrace (the sanitizer pass of make check)
	export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
	data
	for fmt in raw tar; do
		strace -f -e trace=splice -o pipe.trace prefetch -q --plan quasi.plan --emit \
			--emit-format "$fmt" a.slab b.slab | cat > /dev/null
		grep -q '^[0-9]* *splice(' pipe.trace || fail "$fmt: no splice into a pipe"
		strace -f -e trace=splice -o file.trace prefetch -q --plan quasi.plan --emit \
			--emit-format "$fmt" a.slab b.slab > out
		! grep -q 'splice(' file.trace || fail "$fmt: splice into a regular file"
		SLAB_NO_SPLICE=1 strace -f -e trace=splice -o off.trace prefetch -q --plan quasi.plan \
			--emit --emit-format "$fmt" a.slab b.slab | cat > /dev/null
		! grep -q 'splice(' off.trace || fail "$fmt: splice with SLAB_NO_SPLICE=1"
	done
	if prefetch -q --plan quasi.plan --emit --direct a.slab b.slab > /dev/null 2>&1; then
		strace -f -e trace=splice -o direct.trace prefetch -q --plan quasi.plan --emit --direct \
			a.slab b.slab | cat > /dev/null
		! grep -q 'splice(' direct.trace || fail "splice with --direct"
	fi
}

# percent FILE: the resident percentage prefetch --json reports.
percent() {
	prefetch --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["percent"])'
}

@test "splice: --release gives the same bytes, and drops the pages the pipe held once the reader has them" {
	need_shuffle_plan
	mkwds --count 120 --seed 8 --jpeg-bytes 60K:120K -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	shuffle-plan -q --mode sequential -o s.plan big.slab
	shuffle-plan -q --mode quasi --window 4 --seed 3 -o q.plan big.slab
	for fmt in raw tar; do
		emit_both "rel.$fmt" --plan q.plan --release --ahead 2 --emit --emit-format "$fmt" big.slab
	done
	prefetch --evict big.slab
	p=$(percent big.slab)
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 50 else 1)' "$p" ||
		skip "the filesystem of $PWD ignores POSIX_FADV_DONTNEED ($p% still resident)"
	# A slow reader: the pipe is full of the pages the walk releases.
	for mode in 0 1; do
		prefetch --evict big.slab
		SLAB_NO_SPLICE=$mode prefetch -q --plan s.plan --release --emit --emit-format raw big.slab |
			{ sleep 0.3; python3 -c '
import sys, time
while sys.stdin.buffer.read(65536):
    time.sleep(0.001)'; }
		percent big.slab > "resident.$mode"
	done
	# what stays is the header, table and trailer, and as much as with copying
	python3 -c 'import sys; s, c = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if s <= 5 and s <= c + 1 else 1)' \
		"$(cat resident.0)" "$(cat resident.1)" ||
		fail "$(cat resident.0)% resident after the spliced stream, $(cat resident.1)% after the copied one"
}

@test "--release with a reader that stops early: the pages read ahead are dropped too (prefetch, spliced and copied, and the Loader)" {
	need_shuffle_plan
	mkwds --count 200 --seed 3 -o a.tar
	pack -q --page-size 64K -o one.slab a.tar
	shuffle-plan -q --mode sequential -o s.plan one.slab
	prefetch --evict one.slab
	p=$(percent one.slab)
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 50 else 1)' "$p" ||
		skip "the filesystem of $PWD ignores POSIX_FADV_DONTNEED ($p% still resident)"
	# 16 pages of 64 KiB read ahead of a reader that takes 300 KB of the 6 MB: 17% of the
	# file stayed cached; what stays is the header, table and trailer (under 2%)
	for mode in 0 1; do
		for fmt in raw tar; do
			prefetch --evict one.slab
			SLAB_NO_SPLICE=$mode prefetch -q --plan s.plan --release --ahead 16 --emit \
				--emit-format $fmt one.slab | head -c 300000 >/dev/null
			p=$(percent one.slab)
			python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 5 else 1)' "$p" ||
				fail "SLAB_NO_SPLICE=$mode $fmt: $p% resident after the stream"
		done
	done
	# without --release the walk leaves what it read in the cache, as it should
	prefetch --evict one.slab
	prefetch -q --plan s.plan --ahead 16 --emit --emit-format raw one.slab | head -c 300000 >/dev/null
	p=$(percent one.slab)
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 10 else 1)' "$p" ||
		fail "$p% resident after the stream without --release"
	need_libslab
	prefetch --evict one.slab
	# closed after one batch; a view of it still reads its bytes (from the file again)
	run -0 pyslab - <<'PY'
import json, subprocess, slab
ld = slab.Loader(["one.slab"], plan="s.plan", batch_size=8, release=True, ahead=16)
b = next(ld)
view = b.fields["jpg"][0]
want = bytes(view)
ld.close()
out = subprocess.run(["prefetch", "--json", "one.slab"], capture_output=True, check=True).stdout
print(json.loads(out)["files"][0]["percent"] <= 5, bytes(view) == want)
PY
	assert_output "True True"
}

@test "splice: a reader that stops early ends the stream quietly with status 0, what it read a prefix" {
	need_shuffle_plan
	data
	SLAB_NO_SPLICE=1 prefetch -q --plan quasi.plan --emit --emit-format raw a.slab b.slab > want.raw
	SLAB_NO_SPLICE=1 prefetch -q --plan quasi.plan --emit a.slab b.slab > want.tar
	for n in 1 100 20000 300000 2000000; do
		for fmt in raw tar; do
			for opts in "" "--release"; do
				# shellcheck disable=SC2086
				run -0 --separate-stderr bash -c "set -o pipefail; prefetch -q --plan quasi.plan --emit --emit-format $fmt $opts a.slab b.slab | head -c $n > got"
				assert_equal "$stderr" ""
				cmp got <(head -c "$n" "want.$fmt")
			done
		done
	done
	# a reader that reads a little and closes the pipe later
	run -0 --separate-stderr bash -c 'set -o pipefail; prefetch -q --plan random.plan --emit a.slab b.slab | { head -c 5000 > /dev/null; sleep 0.2; }'
	assert_equal "$stderr" ""
}

@test "splice: a file truncated under the stream fails as when copying, naming it" {
	mkwds --count 200 --seed 3 --prefix a -o a.tar
	pack -q --page-size 64K -o one.slab a.tar
	shuffle-plan -q --mode sequential -o p.plan one.slab 2>/dev/null || skip "shuffle-plan is not built"
	size=$(stat -c %s one.slab)
	for mode in 0 1; do
		for fmt in raw tar; do
			cp one.slab cut.slab
			SLAB_NO_SPLICE=$mode prefetch --plan p.plan --emit --emit-format "$fmt" cut.slab 2>err |
				{ head -c 300000 >/dev/null; truncate -s 100000 cut.slab; cat >/dev/null; }
			st=${PIPESTATUS[0]}
			[ "$st" -eq 1 ] || fail "$fmt, SLAB_NO_SPLICE=$mode: exit status $st"
			run -0 cat err
			assert_line --index 0 --regexp "^prefetch: 'cut.slab': (cannot read offset [0-9]+: )?the file is 100000 bytes now, $size when it was opened \(truncated while in use\)$"
			[ "${#lines[@]}" -eq 1 ]
		done
	done
}

# late_reader WANT: standard input's pipe, read only once it holds WANT bytes (all of the
# stream, which prefetch has then handed over: 'full' made) and 'go' exists; into got.
late_reader() {
	python3 -c '
import fcntl, os, struct, sys, termios, time
want, end = int(sys.argv[1]), time.monotonic() + 60
while struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"\0" * 4))[0] < want:
    assert time.monotonic() < end, "the pipe never held the whole stream"
    time.sleep(0.01)
open("full", "w").close()
while not os.path.exists("go"):
    time.sleep(0.01)
open("got", "wb").write(sys.stdin.buffer.read())
' "$1"
}

@test "splice: a file truncated once the whole stream is in the pipe, before it is read: exit 1, naming it; copied, the bytes are whole" {
	# a stream that fits in a pipe of 64 KiB (the copying path does not grow it), with
	# fields over the 16 KiB from which they are spliced
	mkwds --count 3 --seed 3 --jpeg-bytes 17K:19K --prefix a -o a.tar
	pack -q -o one.slab a.tar
	shuffle-plan -q --mode sequential -o p.plan one.slab 2>/dev/null || skip "shuffle-plan is not built"
	size=$(stat -c %s one.slab)
	for release in "" --release; do
		for mode in 0 1; do
			cp one.slab cut.slab
			SLAB_NO_SPLICE=1 prefetch -q --plan p.plan --emit --emit-format raw cut.slab > want
			rm -f full go got
			{ st=0
			  SLAB_NO_SPLICE=$mode prefetch --plan p.plan --emit --emit-format raw $release cut.slab 2> err || st=$?
			  echo $st > rc; } | late_reader "$(filesize want)" &
			for _ in $(seq 1200); do
				[ -e full ] && break
				sleep 0.05
			done
			[ -e full ] || { touch go; wait; fail "the pipe never held the whole stream"; }
			truncate -s 4096 cut.slab
			touch go
			wait
			if [ "$mode" = 1 ]; then
				# copied: the pipe holds the bytes themselves
				assert_equal "$(cat rc)" 0
				cmp want got
			else
				# spliced: the pipe holds the file's pages, zeroed past the new end
				assert_equal "$(cat rc)" 1
				run -0 cat err
				assert_output "prefetch: 'cut.slab': the file is 4096 bytes now, $size when it was opened (truncated while in use): bytes of it in the pipe may have reached the reader as zeros"
				! cmp -s want got
			fi
		done
	done
}
