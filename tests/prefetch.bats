#!/usr/bin/env bats
# prefetch: page-cache status, warm and evict; following a plan (look-ahead, release,
# O_DIRECT); --emit as tar and as raw records, checked against inspect --get; bad options,
# bad plans, foreign plans, a reader that leaves early.

load test_helper/common

# Plans come from shuffle-plan, built alongside.
need_shuffle_plan() {
	command -v shuffle-plan >/dev/null 2>&1 || skip "shuffle-plan is not built"
}

# Two .slab files of small pages (many pages per plan), from random WebDataset tars.
dataset() {
	mktar --seed 11 --samples 40 --max-size 9000 -o a.tar
	mktar --seed 12 --samples 30 --max-size 9000 -o b.tar
	pack -q --page-size 16K -o a.slab a.tar
	pack -q --page-size 16K -o b.slab b.tar
}

# plans: binary and text plans of the dataset in each mode.
plans() {
	local m w
	for m in sequential quasi random; do
		w=()
		[ "$m" = quasi ] && w=(--window 3)
		shuffle-plan -q a.slab b.slab --mode "$m" --seed 7 "${w[@]}" -o "$m.plan"
		shuffle-plan -q a.slab b.slab --mode "$m" --seed 7 "${w[@]}" --format text -o "$m.txt"
	done
}

# want FILE...: every field of every sample through inspect --get, as want/FILE_INDEX/...
# The files are the same bytes in every test that asks (dataset() is deterministic): made once
# per run of this file, copied after.
want() {
	local fi=0 path idx key page fields f name cache
	cache="$BATS_FILE_TMPDIR/want.$(cat "$@" | cksum | tr ' ' .)"
	if [ -d "$cache" ]; then
		cp -R "$cache" want
		return
	fi
	for path in "$@"; do
		inspect --list "$path" > "list.$fi"
		while IFS=$'\t' read -r idx key page fields; do
			mkdir -p "want/$fi/$idx"
			printf '%s' "$key" > "want/$fi/$idx/.key"
			for f in $fields; do
				name=${f%%:*}
				inspect --get "#$idx" --field "$name" "$path" > "want/$fi/$idx/$name"
			done
		done < "list.$fi"
		fi=$((fi + 1))
	done
	cp -R want "$cache.$$" && mv -T "$cache.$$" "$cache"
}

# check_stream FORMAT STREAM PLAN_TXT SOURCE_TAR...: the emitted stream holds, for each line
# "FILE SAMPLE" of the text plan, that sample: key, every field's bytes equal to inspect
# --get, the fields in the order of the source tar; and nothing else.
check_stream() {
	python3 - "$@" <<'PY'
import io, os, struct, sys, tarfile

fmt, stream, plan_txt, *sources = sys.argv[1:]
order = [tuple(map(int, line.split())) for line in open(plan_txt)]

# the field order of each key in each source tar
src_order = []
for path in sources:
    d = {}
    for m in tarfile.open(path):
        base = m.name.rsplit("/", 1)
        head, tail = (base[0] + "/", base[1]) if len(base) == 2 else ("", base[0])
        key, field = head + tail.split(".", 1)[0], tail.split(".", 1)[1]
        d.setdefault(key, []).append(field)
    src_order.append(d)

def expected(fi, si):
    d = "want/%d/%d" % (fi, si)
    key = open(d + "/.key").read()
    fields = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d) if n != ".key"}
    return key, fields

def check(k, fi, si, key, got):
    wkey, wfields = expected(fi, si)
    assert key == wkey, (k, key, wkey)
    names = [n for n, _ in got]
    assert names == src_order[fi][key], (k, key, names, src_order[fi][key])
    assert dict(got) == wfields, (k, key)

data = open(stream, "rb").read()
if fmt == "tar":
    tf = tarfile.open(fileobj=io.BytesIO(data))
    members = [(m.name, tf.extractfile(m).read()) for m in tf.getmembers()]
    at = 0
    for k, (fi, si) in enumerate(order):
        key, _ = expected(fi, si)
        n = len(src_order[fi][key])
        got = members[at:at + n]
        at += n
        assert all(name.startswith(key + ".") for name, _ in got), (k, key, got[:1])
        check(k, fi, si, key, [(name[len(key) + 1:], b) for name, b in got])
    assert at == len(members), ("members left over", len(members) - at)
else:
    assert data[:8] == b"SLABEMIT", data[:8]
    version, flags, count = struct.unpack_from("<IIQ", data, 8)
    assert (version, flags, count) == (1, 0, len(order)), (version, flags, count)
    at = 24
    for k, (fi, si) in enumerate(order):
        magic, f, i, pos, klen, nf = struct.unpack_from("<4sIQQII", data, at)
        at += 32
        assert (magic, f, i, pos) == (b"SMPL", fi, si, k), (k, magic, f, i, pos)
        key = data[at:at + klen].decode()
        at += klen
        got = []
        for _ in range(nf):
            (nlen,) = struct.unpack_from("<H", data, at)
            name = data[at + 2:at + 2 + nlen].decode()
            (size,) = struct.unpack_from("<Q", data, at + 2 + nlen)
            at += 2 + nlen + 8
            got.append((name, data[at:at + size]))
            at += size
        check(k, fi, si, key, got)
    assert data[at:at + 4] == b"DONE", data[at:at + 4]
    assert struct.unpack_from("<IQQII", data, at + 4) == (0, len(order), 0, 0, 0)
    assert at + 32 == len(data), (at + 32, len(data))
PY
}

# percent FILE: the resident percentage prefetch --json reports.
percent() {
	prefetch --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["percent"])'
}

# evicted FILE: evict it; skip the test when the filesystem keeps the pages anyway.
evicted() {
	prefetch --evict "$1"
	local p
	p=$(percent "$1")
	if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 50 else 1)' "$p"; then
		skip "the filesystem of $PWD ignores POSIX_FADV_DONTNEED ($p% still resident)"
	fi
}

# below FILE MAX / above FILE MIN: the resident percentage compared.
below() {
	local p
	p=$(percent "$1")
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$p" "$2" ||
		fail "$1: $p% resident, expected at most $2%"
}

above() {
	local p
	p=$(percent "$1")
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$p" "$2" ||
		fail "$1: $p% resident, expected at least $2%"
}

# O_DIRECT may be refused (some filesystems); such tests skip.
need_direct() {
	local err
	err=$(prefetch --plan "$1" --direct "${@:2}" 2>&1 >/dev/null) && return 0
	case $err in
	*O_DIRECT*) skip "no O_DIRECT here: $err" ;;
	*) fail "prefetch --direct: $err" ;;
	esac
}

@test "prefetch --help and --version" {
	run -0 --separate-stderr prefetch --help
	assert_line --index 0 "Usage: prefetch [OPTIONS] FILE..."
	assert_output --partial "--emit-format"
	assert_equal "$stderr" ""
	run -0 prefetch --version
	assert_output --regexp '^prefetch \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "usage errors exit 2 with one clear line" {
	dataset
	run -2 --separate-stderr prefetch
	assert_equal "$stderr" "prefetch: no input file
Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --emit a.slab
	assert_equal "$stderr" "prefetch: --emit goes with --plan
Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --warm --direct a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --direct goes with --plan"
	run -2 --separate-stderr prefetch --direct a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --direct goes with --plan"
	run -2 --separate-stderr prefetch --plan p --ahead 0 a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --ahead '0' (a number of pages, 1 to 4294967295)"
	run -2 --separate-stderr prefetch --plan p --ahead -3 a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --ahead '-3' (a number of pages, 1 to 4294967295)"
	run -2 --separate-stderr prefetch --plan p --ahead 4x a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --ahead '4x' (a number of pages, 1 to 4294967295)"
	run -2 --separate-stderr prefetch --plan p --ahead 4294967296 a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --ahead '4294967296' (a number of pages, 1 to 4294967295)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format zip a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --emit-format 'zip' (tar, raw or frames)"
	run -2 --separate-stderr prefetch --plan p --emit-format raw a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --emit-format goes with --emit"
	run -2 --separate-stderr prefetch --warm --evict a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --status, --warm, --evict and --plan exclude each other"
	run -2 --separate-stderr prefetch --status --plan p a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --status, --warm, --evict and --plan exclude each other"
	run -2 --separate-stderr prefetch --warm --ahead 4 a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --ahead and --release go with --plan"
	run -2 --separate-stderr prefetch --release a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --ahead and --release go with --plan"
	run -2 --separate-stderr prefetch --json --warm a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --json goes with --status"
	run -2 --separate-stderr prefetch --frobnicate a.slab
	assert_equal "${stderr_lines[1]}" "Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --plan
	assert_equal "${stderr_lines[1]}" "Try 'prefetch --help' for more information."
}

# Each mode option counted as a mode of its own: "--warm --warm" was refused as two modes.
@test "a mode given twice is one mode; two modes are a usage error" {
	dataset
	need_shuffle_plan
	shuffle-plan -q -o p a.slab
	run -0 --separate-stderr prefetch -q --warm --warm a.slab
	assert_equal "$stderr" ""
	run -0 --separate-stderr prefetch -q --evict --evict a.slab
	assert_equal "$stderr" ""
	run -0 --separate-stderr prefetch --status --status a.slab
	assert_equal "${lines[0]}" "       RES      PAGES       SIZE  PERCENT FILE"
	assert_equal "${#lines[@]}" 2
	run -2 --separate-stderr prefetch --warm --warm --evict a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --status, --warm, --evict and --plan exclude each other"
	run -2 --separate-stderr prefetch --plan p --plan p --warm a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --status, --warm, --evict and --plan exclude each other"
}

# The walk keeps a descriptor on each file: a dataset of more shards than the soft limit on
# open files (1024 by default) failed with "Too many open files" under a far higher hard one.
@test "--plan over more files than the soft limit on open files, within the hard one" {
	dataset
	need_shuffle_plan
	[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 200 ] ||
		skip "the hard limit on open files is $(ulimit -Hn)"
	mkdir many
	for i in $(seq 100 179); do
		ln a.slab many/$i.slab 2>/dev/null || cp a.slab many/$i.slab
	done
	shuffle-plan -q --mode random -o many.plan many/*.slab
	prefetch -q --plan many.plan --emit --emit-format raw many/*.slab > want
	run -0 --separate-stderr bash -c 'ulimit -Sn 40 && prefetch -q --plan many.plan many/*.slab'
	assert_equal "$stderr" ""
	run -0 --separate-stderr bash -c 'ulimit -Sn 40 && prefetch -q --plan many.plan --emit --emit-format raw many/*.slab > got'
	assert_equal "$stderr" ""
	cmp want got
	# past the hard limit too: the file it stopped at, exit 1
	run -1 --separate-stderr bash -c 'ulimit -n 40 && prefetch -q --plan many.plan many/*.slab'
	assert_regex "$stderr" "^prefetch: 'many/1[0-9][0-9].slab': Too many open files\$"
}

# --timeout went through strtod: hexadecimal, exponents and blanks were taken as seconds, and
# a value past a week was refused as "not above 0".
@test "--timeout takes decimal seconds up to a week, and says so" {
	dataset
	for t in 604801 1e3 0x10 " 5" "+5" 1.2.3 . 0 inf; do
		run -2 --separate-stderr prefetch --timeout "$t" a.slab
		assert_equal "$stderr" "prefetch: --timeout '$t': not a number of seconds above 0 and at most 604800 (a week)
Try 'prefetch --help' for more information."
	done
	for t in 604800 2.5 .5 30; do
		run -0 --separate-stderr prefetch -q --timeout "$t" a.slab
	done
	run -2 --separate-stderr shuffle-plan --timeout 1e3 a.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: --timeout '1e3': not a number of seconds above 0 and at most 604800 (a week)"
}

@test "--emit refuses a terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab --mode sequential -o s.plan
	run script -qec "prefetch --plan s.plan --emit a.slab" /dev/null
	assert_output --partial "prefetch: refusing to write samples to a terminal (redirect it)"
}

@test "--status: a header, one line per file like fincore, a total for several" {
	dataset
	printf '' > empty
	head -c 10000 /dev/zero > plain
	sync plain
	prefetch --warm -q a.slab plain
	ps=$(getconf PAGESIZE)
	size=$(filesize a.slab)
	pages=$(( (size + ps - 1) / ps ))
	human=$(python3 -c 'import sys; n=int(sys.argv[1]); print("%.1f MiB" % (n/1048576) if n >= 1048576*0.99995 else "%.1f KiB" % (n/1024))' "$size")
	run -0 --separate-stderr prefetch a.slab
	assert_equal "${lines[0]}" "       RES      PAGES       SIZE  PERCENT FILE"
	assert_equal "${lines[1]}" "$(printf '%10s %10s %10s %7s%% %s' "$human" "$pages" "$human" 100.0 a.slab)"
	assert_equal "${#lines[@]}" 2
	run -0 --separate-stderr prefetch empty plain
	assert_equal "${lines[1]}" "$(printf '%10s %10s %10s %7s%% %s' "0 B" 0 "0 B" 100.0 empty)"
	assert_equal "${lines[2]}" "$(printf '%10s %10s %10s %7s%% %s' "9.8 KiB" 3 "9.8 KiB" 100.0 plain)"
	assert_equal "${lines[3]}" "$(printf '%10s %10s %10s %7s%% %s' "9.8 KiB" 3 "9.8 KiB" 100.0 total)"
}

@test "--status --json has the documented keys" {
	dataset
	prefetch --warm -q a.slab
	run -0 --separate-stderr prefetch --json a.slab b.slab
	python3 - "$output" "$(filesize a.slab)" "$(getconf PAGESIZE)" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
size, ps = int(sys.argv[2]), int(sys.argv[3])
assert set(d) == {"page_size", "files", "total"}, d.keys()
assert d["page_size"] == ps
a = d["files"][0]
assert set(a) == {"file", "size", "pages", "resident_pages", "resident_bytes", "dirty_pages",
                  "percent", "method"}, a.keys()
assert a["file"] == "a.slab" and a["size"] == size and a["pages"] == (size + ps - 1) // ps
assert a["resident_pages"] == a["pages"] and a["resident_bytes"] == size and a["percent"] == 100
assert a["method"] in ("cachestat", "mincore")
assert a["dirty_pages"] is None or a["dirty_pages"] == 0
assert [f["file"] for f in d["files"]] == ["a.slab", "b.slab"]
t = d["total"]
assert t["size"] == sum(f["size"] for f in d["files"])
assert t["pages"] == sum(f["pages"] for f in d["files"])
assert t["resident_pages"] == sum(f["resident_pages"] for f in d["files"])
PY
}

@test "a file that cannot be read is reported, the others still shown, exit 1" {
	dataset
	mkdir d
	run -1 --separate-stderr prefetch a.slab missing d b.slab
	assert_equal "$stderr" "prefetch: 'missing': No such file or directory
prefetch: 'd': is a directory"
	assert_line --index 1 --partial " a.slab"
	assert_line --index 2 --partial " b.slab"
	assert_line --index 3 --partial " total"
	run -1 --separate-stderr prefetch --warm missing
	assert_equal "$stderr" "prefetch: 'missing': No such file or directory"
	# no file to show: no table, only the errors
	run -1 --separate-stderr prefetch missing d
	assert_output ""
	assert_equal "$stderr" "prefetch: 'missing': No such file or directory
prefetch: 'd': is a directory"
	run -1 --separate-stderr prefetch --evict missing a.slab
	assert_equal "$stderr" "prefetch: 'missing': No such file or directory"
}

@test "--evict then --status is close to 0%, --warm then --status 100% (a .slab)" {
	mktar --seed 3 --samples 60 --max-size 60000 -o big.tar
	pack -q -o big.slab big.tar
	evicted big.slab
	below big.slab 1
	run -0 --separate-stderr prefetch --warm big.slab
	assert_regex "$stderr" "^prefetch: warmed 1 file, [0-9.]+ MiB in [0-9.]+ s, [0-9.]+ MB/s$"
	# all of it, but for a page or two the kernel may reclaim at once on a busy machine
	above big.slab 99
	evicted big.slab
	below big.slab 1
}

@test "--evict and --warm work on plain files too; -q is silent, -v says more" {
	head -c 3000000 /dev/urandom > plain.bin
	sync plain.bin
	evicted plain.bin
	below plain.bin 1
	run -0 --separate-stderr prefetch -q --warm plain.bin
	assert_equal "$stderr" ""
	above plain.bin 99
	run -0 --separate-stderr prefetch -v --evict plain.bin
	assert_equal "$stderr" "prefetch: 'plain.bin': evicted, 0 of 733 pages still resident"
	run -0 --separate-stderr prefetch -v --warm plain.bin
	assert_regex "${stderr_lines[0]}" "^prefetch: 'plain.bin': 2.9 MiB in [0-9.]+ s, [0-9.]+ MB/s$"
}

@test "--emit: tar of the samples in plan order equals inspect --get, every mode" {
	need_shuffle_plan
	dataset
	plans
	want a.slab b.slab
	for m in sequential quasi random; do
		prefetch -q --plan "$m.plan" --emit a.slab b.slab > "$m.tar"
		check_stream tar "$m.tar" "$m.txt" a.tar b.tar
	done
	# small look-ahead, release behind: the same bytes
	prefetch -q --plan quasi.plan --emit --ahead 1 --release a.slab b.slab > q1.tar
	cmp q1.tar quasi.tar
}

@test "--emit of a sequential plan is inspect --tar byte for byte" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode sequential -o s.plan
	prefetch -q --plan s.plan --emit a.slab b.slab > s.tar
	inspect --tar a.slab b.slab > i.tar
	cmp s.tar i.tar
}

@test "--emit-format raw: records parsed as documented equal inspect --get" {
	need_shuffle_plan
	dataset
	plans
	want a.slab b.slab
	for m in sequential quasi random; do
		prefetch -q --plan "$m.plan" --emit --emit-format raw a.slab b.slab > "$m.raw"
		check_stream raw "$m.raw" "$m.txt" a.tar b.tar
	done
}

@test "--direct: the same stream, read with O_DIRECT, and the page cache stays cold" {
	need_shuffle_plan
	dataset
	plans
	need_direct sequential.plan a.slab b.slab
	for m in sequential quasi random; do
		prefetch -q --plan "$m.plan" --emit a.slab b.slab > "$m.tar"
		for ahead in 1 4 64; do
			prefetch -q --plan "$m.plan" --emit --direct --ahead "$ahead" a.slab b.slab > d.tar
			cmp d.tar "$m.tar"
		done
		prefetch -q --plan "$m.plan" --emit --emit-format raw a.slab b.slab > "$m.raw"
		prefetch -q --plan "$m.plan" --emit --emit-format raw --direct a.slab b.slab > d.raw
		cmp d.raw "$m.raw"
	done
}

@test "--direct leaves the page cache as opening the file does" {
	need_shuffle_plan
	mktar --seed 4 --samples 100 --max-size 200000 -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	shuffle-plan -q big.slab --mode random -o r.plan
	need_direct r.plan big.slab
	# Opening maps the file and reads its header and table: with the kernel's read-around
	# (read_ahead_kb) that caches some data too. That much, and no more, may be cached.
	evicted big.slab
	inspect big.slab > /dev/null
	opened=$(percent big.slab)
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 50 else 1)' "$opened" ||
		skip "opening the file alone caches $opened% of it (read_ahead_kb is large)"
	evicted big.slab
	prefetch -q --plan r.plan --direct big.slab
	below big.slab "$(python3 -c 'import sys; print(float(sys.argv[1]) + 1)' "$opened")"
	evicted big.slab
	prefetch -q --plan r.plan big.slab
	above big.slab "$(inspect --json big.slab | python3 -c 'import json, sys; d = json.load(sys.stdin); print(100 * d["data_bytes"] / d["file_size"] - 1)')"
}

@test "--direct: many tiny samples on one page take no more buffers than --ahead pages" {
	need_shuffle_plan
	# 300000 samples of one byte on one page of 512 KiB: the samples share the reads of the
	# page's blocks, rather than each having a read and a buffer of its own (hundreds of MiB).
	mktiny --count 300000 --page-size 512K -o t.slab
	shuffle-plan -q --mode quasi -o quasi.plan t.slab
	shuffle-plan -q --mode random -o random.plan t.slab
	need_direct quasi.plan t.slab
	for m in quasi random; do
		run -0 --separate-stderr prefetch -v --plan "$m.plan" --direct --ahead 1 t.slab
		buffers=$(sed -n 's/.*, at most \(.*\) in buffers$/\1/p' <<< "$stderr")
		[ -n "$buffers" ] || fail "no buffer figure in: $stderr"
		python3 -c 'import sys; n, u = sys.argv[1].split(); sys.exit(0 if float(n) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[u] <= 512 << 10 else 1)' "$buffers" ||
			fail "$m: $buffers in buffers, more than --ahead 1 page of 512 KiB"
		prefetch -q --plan "$m.plan" --emit --emit-format raw t.slab > mapped.raw
		prefetch -q --plan "$m.plan" --emit --emit-format raw --direct t.slab > direct.raw
		cmp direct.raw mapped.raw
		# The process as a whole: about what the same walk through the mapping takes.
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f %M -o mapped.rss prefetch -q --plan "$m.plan" t.slab
			/usr/bin/time -f %M -o direct.rss prefetch -q --plan "$m.plan" --direct t.slab
			(( $(tail -1 direct.rss) <= $(tail -1 mapped.rss) + 32768 )) ||
				fail "$m: $(tail -1 direct.rss) KiB of memory with --direct, $(tail -1 mapped.rss) KiB without"
		fi
	done
}

@test "--plan walks the plan and warms what it reads; --release drops it behind" {
	need_shuffle_plan
	mktar --seed 3 --samples 60 --max-size 60000 -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	shuffle-plan -q big.slab --mode quasi --window 4 --seed 2 -o q.plan
	evicted big.slab
	run -0 --separate-stderr prefetch --plan q.plan big.slab
	assert_regex "$stderr" "^prefetch: 'q.plan': 60 samples, [0-9.]+ MiB in [0-9.]+ s, [0-9.]+ MB/s$"
	# at least every byte of every sample is in (padding may be, or not)
	above big.slab "$(inspect --json big.slab | python3 -c 'import json, sys; d = json.load(sys.stdin); print(100 * d["data_bytes"] / d["file_size"] - 1)')"
	evicted big.slab
	run -0 --separate-stderr prefetch -v --plan q.plan --release --ahead 2 big.slab
	assert_regex "${stderr_lines[1]}" "^prefetch: 'q.plan': [0-9]+ distinct pages, [0-9]+ WILLNEED calls, [0-9]+ pages released, window of at most [0-9]+ pages$"
	# the data is gone again: what stays is the header, table and trailer
	below big.slab 5
}

# --release with a --memory budget over several epochs: what the budget kept for a later
# epoch goes once no plan uses it again (it stayed, a budget's worth, as for a next reader).
@test "--release with --memory: after the last epoch the cache holds no more than before; without --release the budget's pages stay" {
	need_shuffle_plan
	mkwds --count 200 --seed 3 -o a.tar
	pack -q --page-size 64K -o one.slab a.tar
	shuffle-plan -q --seed 3 --epoch 0 --window 4 -o e0.plan one.slab
	shuffle-plan -q --mode random --seed 1 --epoch 1 -o r1.plan one.slab
	evicted one.slab
	for pol in belady fixed; do
		evicted one.slab
		prefetch -q --plan e0.plan --plan r1.plan --release --memory 2M --cache-policy $pol one.slab
		below one.slab 5
		evicted one.slab
		prefetch -q --plan e0.plan --plan r1.plan --memory 2M --cache-policy $pol one.slab
		above one.slab 10
	done
}

# The fixed policy over a random plan: a page outside the set goes when it leaves the window,
# not at its last use (a random plan's pages are all in use until near its end: the whole file).
@test "--memory with --cache-policy fixed holds the budget over a random plan" {
	need_shuffle_plan
	mkwds --count 1200 --seed 5 --jpeg-bytes 12K:24K -o a.tar
	pack -q --page-size 64K -o f.slab a.tar
	shuffle-plan -q --mode random --seed 4 -o r.plan f.slab
	for pol in fixed belady; do
		evicted f.slab
		# Half the stream read, the rest waiting in prefetch: the cache holds the 2 MiB
		# budget, the window and what the pipe holds (at most about 1 MiB), of 21 MiB.
		prefetch -q --plan r.plan --emit --emit-format raw --memory 2M --cache-policy $pol \
			--ahead 2 f.slab | python3 -c '
import subprocess, sys
data = sys.stdin.buffer
total = 0
while total < int(sys.argv[1]) // 2:
    total += len(data.read(65536))
p = subprocess.run(["prefetch", "--json", sys.argv[2]], capture_output=True, text=True, check=True)
open(sys.argv[3], "w").write(p.stdout)
while data.read(65536):
    pass' "$(filesize f.slab)" f.slab half.json
		pct=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["files"][0]["percent"])' half.json)
		python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 20 else 1)' "$pct" ||
			fail "$pol: $pct% of f.slab resident half way with a budget of 2 MiB"
	done
}

# Counts of one were plural: "1 samples", "1 distinct pages, 1 WILLNEED calls", "1 entries".
@test "prefetch's counts of one are singular" {
	need_shuffle_plan
	one_slab
	shuffle-plan -q -o p.plan one.slab
	run -0 --separate-stderr prefetch -v --plan p.plan one.slab
	assert_regex "${stderr_lines[0]}" "^prefetch: 'p.plan': 1 sample, 3 B in [0-9.]+ s, [0-9.]+ MB/s$"
	assert_equal "${stderr_lines[1]}" "prefetch: 'p.plan': 1 distinct page, 1 WILLNEED call, 0 pages released, window of at most 1 page"
	head -c 4100 p.plan > t.plan
	run -1 --separate-stderr prefetch --plan t.plan one.slab
	assert_equal "$stderr" "prefetch: 't.plan': truncated plan: 1 entry announced, 4 bytes of entries"
	{ cat p.plan; printf x; } > l.plan
	run -1 --separate-stderr prefetch --plan l.plan one.slab
	assert_equal "$stderr" "prefetch: 'l.plan': trailing bytes after the plan (1 entry announced)"
}

# The summary of several plans was labelled with the first plan's name alone, as if it were
# that plan's: it counts them all, and says how many.
@test "several --plans: the summary lines name how many plans they count" {
	need_shuffle_plan
	one_slab
	shuffle-plan -q -o p.plan one.slab
	shuffle-plan -q --seed 1 -o q.plan one.slab
	run -0 --separate-stderr prefetch -v --plan p.plan --plan q.plan --plan p.plan one.slab
	assert_equal "${#stderr_lines[@]}" 5
	assert_regex "${stderr_lines[0]}" "^prefetch: 'p.plan': epoch 1 of 3: 1 sample, "
	assert_regex "${stderr_lines[1]}" "^prefetch: 'q.plan': epoch 2 of 3: 1 sample, "
	assert_regex "${stderr_lines[2]}" "^prefetch: 'p.plan': epoch 3 of 3: 1 sample, "
	assert_regex "${stderr_lines[3]}" "^prefetch: 3 plans: 3 samples, 9 B in [0-9.]+ s, [0-9.]+ MB/s$"
	assert_equal "${stderr_lines[4]}" "prefetch: 3 plans: 1 distinct page, 1 WILLNEED call, 0 pages released, window of at most 1 page"
}

@test "the plan may come from standard input" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode random --seed 3 -o r.plan
	prefetch -q --plan r.plan --emit a.slab b.slab > want.tar
	prefetch -q --plan - --emit a.slab b.slab < r.plan > got.tar
	cmp want.tar got.tar
}

@test "a reader that stops early ends the stream quietly with status 0" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi -o q.plan
	run -0 --separate-stderr bash -c 'set -o pipefail; prefetch -q --plan q.plan --emit a.slab b.slab | head -c 1000 > /dev/null'
	assert_equal "$stderr" ""
	run -0 --separate-stderr bash -c 'set -o pipefail; prefetch -q --plan q.plan --emit --emit-format raw a.slab b.slab | head -c 100 > /dev/null'
	assert_equal "$stderr" ""
}

@test "bad plans: not a plan, truncated, corrupt, missing" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi --seed 1 -o p.plan
	size=$(filesize p.plan)
	echo "not a plan at all" > junk.plan
	run -1 --separate-stderr prefetch --plan junk.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 'junk.plan': not a plan file (bad magic number)"
	assert_equal "$output" ""
	run -1 --separate-stderr prefetch --plan a.slab a.slab
	assert_equal "$stderr" "prefetch: 'a.slab': not a plan file (bad magic number)"
	head -c $((size - 8)) p.plan > t.plan
	run -1 --separate-stderr prefetch --plan t.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 't.plan': truncated plan: 70 entries announced, 552 bytes of entries"
	assert_equal "$output" ""
	head -c 1000 p.plan > h.plan
	run -1 --separate-stderr prefetch --plan h.plan a.slab b.slab
	assert_equal "$stderr" "prefetch: 'h.plan': truncated or damaged plan header"
	cp p.plan c.plan; flip c.plan $((size - 3))
	run -1 --separate-stderr prefetch --plan c.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 'c.plan': plan entries checksum mismatch"
	assert_equal "$output" ""
	cp p.plan c.plan; flip c.plan 30
	run -1 --separate-stderr prefetch --plan c.plan a.slab b.slab
	assert_equal "$stderr" "prefetch: 'c.plan': plan header checksum mismatch"
	run -1 --separate-stderr prefetch --plan missing.plan a.slab b.slab
	assert_equal "$stderr" "prefetch: 'missing.plan': No such file or directory"
}

# peak_rss FILE CMD...: run CMD; its peak resident size in KiB goes to FILE, its status is ours.
peak_rss() {
	python3 -c '
import resource, subprocess, sys
status = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(status)' "$@"
}

@test "a file that is not a plan is refused from its header: a large .slab, /dev/zero" {
	need_shuffle_plan
	dataset
	# The arguments swapped: a .slab of 300 MiB (sparse, so quick) given as the plan. Only
	# its first bytes are read, whatever its size.
	cp a.slab big.slab
	truncate -s 300M big.slab
	run -1 --separate-stderr peak_rss big.rss prefetch --plan big.slab a.slab
	assert_equal "$stderr" "prefetch: 'big.slab': not a plan file (bad magic number)"
	(( $(cat big.rss) < 100 * 1024 )) || fail "$(cat big.rss) KiB to refuse a .slab of 300 MiB as a plan"
	run -1 --separate-stderr peak_rss big.rss prefetch --plan big.slab --emit --emit-format frames --image jpg a.slab
	assert_equal "$stderr" "prefetch: 'big.slab': not a plan file (bad magic number)"
	(( $(cat big.rss) < 100 * 1024 )) || fail "$(cat big.rss) KiB to refuse a .slab of 300 MiB as a plan (frames)"
	# An endless device: refused at once, no growth. (Address space limited to 1 GiB, so that
	# a reader that reads it all fails instead of taking the machine's memory; not under
	# AddressSanitizer, whose shadow needs terabytes of it.)
	limit="ulimit -v 1048576;"
	grep -qa __asan_init "$SLAB_BUILD/bin/prefetch" && limit=
	run -1 --separate-stderr peak_rss zero.rss bash -c "$limit exec prefetch --plan /dev/zero a.slab"
	assert_equal "$stderr" "prefetch: '/dev/zero': not a plan file (bad magic number)"
	(( $(cat zero.rss) < 100 * 1024 )) || fail "$(cat zero.rss) KiB to refuse /dev/zero as a plan"
	run -1 --separate-stderr bash -c "$limit exec prefetch --plan - a.slab < /dev/zero"
	assert_equal "$stderr" "prefetch: '(stdin)': not a plan file (bad magic number)"
}

@test "a plan cut short or followed by more bytes is refused, from a file, a pipe or a FIFO" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi --seed 1 -o p.plan
	size=$(filesize p.plan)
	# more bytes after the entries the header announces
	{ cat p.plan; printf 'junk'; } > long.plan
	run -1 --separate-stderr prefetch --plan long.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 'long.plan': trailing bytes after the plan (70 entries announced)"
	assert_equal "$output" ""
	run -1 --separate-stderr bash -c '{ cat p.plan; printf x; } | prefetch --plan - --emit a.slab b.slab'
	assert_equal "$stderr" "prefetch: '(stdin)': trailing bytes after the plan (70 entries announced)"
	assert_equal "$output" ""
	# two plans back to back are not one plan
	run -1 --separate-stderr bash -c 'cat p.plan p.plan | prefetch --plan - a.slab b.slab'
	assert_equal "$stderr" "prefetch: '(stdin)': trailing bytes after the plan (70 entries announced)"
	# cut short, through a pipe: the same message as from a file
	run -1 --separate-stderr bash -c "head -c $((size - 8)) p.plan | prefetch --plan - --emit a.slab b.slab"
	assert_equal "$stderr" "prefetch: '(stdin)': truncated plan: 70 entries announced, 552 bytes of entries"
	assert_equal "$output" ""
	run -1 --separate-stderr bash -c 'head -c 1000 p.plan | prefetch --plan - a.slab b.slab'
	assert_equal "$stderr" "prefetch: '(stdin)': truncated or damaged plan header"
	# a FIFO: whole, cut short, too long
	mkfifo fifo
	cat p.plan > fifo &
	prefetch -q --plan fifo --emit --emit-format raw a.slab b.slab > got.raw
	prefetch -q --plan p.plan --emit --emit-format raw a.slab b.slab > want.raw
	cmp want.raw got.raw
	head -c $((size - 16)) p.plan > fifo &
	run -1 --separate-stderr prefetch --plan fifo a.slab b.slab
	assert_equal "$stderr" "prefetch: 'fifo': truncated plan: 70 entries announced, 544 bytes of entries"
	cat long.plan > fifo &
	run -1 --separate-stderr prefetch --plan fifo a.slab b.slab
	assert_equal "$stderr" "prefetch: 'fifo': trailing bytes after the plan (70 entries announced)"
	wait
}

@test "a plan for other files, or another number of files, is refused" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi -o ab.plan
	shuffle-plan -q a.slab --mode quasi -o a.plan
	run -1 --separate-stderr prefetch --plan ab.plan --emit b.slab a.slab
	assert_equal "$stderr" "prefetch: 'ab.plan': plan does not belong to these files: file 0 is not the one the plan was made for (content differs)"
	assert_equal "$output" ""
	run -1 --separate-stderr prefetch --plan ab.plan a.slab a.slab
	assert_equal "$stderr" "prefetch: 'ab.plan': plan does not belong to these files: file 1 is not the one the plan was made for (content differs)"
	run -1 --separate-stderr prefetch --plan a.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 'a.plan': plan does not belong to these files: the plan is for 1 file, 2 given"
	run -1 --separate-stderr prefetch --plan ab.plan a.slab
	assert_equal "$stderr" "prefetch: 'ab.plan': plan does not belong to these files: the plan is for 2 files, 1 given"
	# a file repacked with other options is another file
	pack -q --page-size 8K -o a.slab a.tar
	run -1 --separate-stderr prefetch --plan ab.plan a.slab b.slab
	assert_equal "$stderr" "prefetch: 'ab.plan': plan does not belong to these files: file 0 is not the one the plan was made for (content differs)"
}

@test "--plan needs .slab files that open" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode sequential -o p.plan
	run -1 --separate-stderr prefetch --plan p.plan a.slab a.tar
	assert_equal "$stderr" "prefetch: 'a.tar': not a slab file (bad magic number)"
	run -1 --separate-stderr prefetch --plan p.plan a.slab missing.slab
	assert_equal "$stderr" "prefetch: 'missing.slab': No such file or directory"
	head -c 9000 b.slab > b.slab.cut && mv b.slab.cut b.slab
	run -1 --separate-stderr prefetch --plan p.plan --emit a.slab b.slab
	assert_equal "$stderr" "prefetch: 'b.slab': truncated or damaged: no trailer at offset 8936"
	assert_equal "$output" ""
}

@test "a write error on standard output is an error, exit 1" {
	need_shuffle_plan
	[ -w /dev/full ] || skip "no /dev/full"
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi -o q.plan
	run -1 --separate-stderr bash -c 'prefetch -q --plan q.plan --emit a.slab b.slab > /dev/full'
	assert_equal "$stderr" "prefetch: tar output: write error: No space left on device"
	run -1 --separate-stderr bash -c 'prefetch -q --plan q.plan --emit --emit-format raw a.slab b.slab > /dev/full'
	assert_equal "$stderr" "prefetch: raw output: write error: No space left on device"
	# the status, as text and as JSON, and inspect's JSON, with the reason
	for opts in "" --json; do
		run -1 --separate-stderr bash -c "prefetch $opts a.slab > /dev/full"
		assert_equal "$stderr" "prefetch: write error: No space left on device"
		run -1 --separate-stderr bash -c "prefetch $opts a.slab >&-"
		assert_equal "$stderr" "prefetch: write error: Bad file descriptor"
	done
	run -1 --separate-stderr bash -c 'inspect --json a.slab > /dev/full'
	assert_equal "$stderr" "inspect: write error: No space left on device"
}

@test "a non-blocking pipe on standard output: prefetch waits for the reader, spliced or copied" {
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi -o q.plan
	for fmt in raw tar; do
		SLAB_NO_SPLICE=1 prefetch -q --plan q.plan --emit --emit-format $fmt a.slab b.slab > want.$fmt
		[ "$(filesize want.$fmt)" -gt $((4 * 65536)) ]
		for nosplice in 0 1; do
			# the reader starts late: the pipe (64 KiB) fills, and writes to it fail with
			# EAGAIN until it reads
			run -0 env SLAB_NO_SPLICE=$nosplice python3 - $fmt <<'PY'
import fcntl, os, subprocess, sys, time
fmt = sys.argv[1]
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen(["prefetch", "-q", "--plan", "q.plan", "--emit", "--emit-format", fmt,
                      "a.slab", "b.slab"], stdout=w, stderr=subprocess.PIPE)
os.close(w)
time.sleep(0.2)
got = b"".join(iter(lambda: os.read(r, 65536), b""))
err, rc = p.stderr.read(), p.wait()
assert (rc, err) == (0, b""), (rc, err)
assert got == open("want." + fmt, "rb").read(), (len(got), "bytes differ")
print("ok", len(got))
PY
			assert_output "ok $(filesize want.$fmt)"
		done
	done
}

@test "the consumer examples of prefetch(1) read the stream" {
	command -v man >/dev/null 2>&1 || skip "man (man-db) is not installed"
	need_shuffle_plan
	dataset
	shuffle-plan -q a.slab b.slab --mode quasi -o q.plan
	shuffle-plan -q a.slab b.slab --mode quasi --format text -o q.txt
	MANWIDTH=200 LC_ALL=C man -l "$SLAB_ROOT/man/prefetch.1" 2>/dev/null > page.txt
	sed -n '/^ *import sys, tarfile$/,/^ *print(key, sorted(fields))$/p' page.txt | sed 's/^       //' > consumer.py
	sed -n '/^ *import struct, sys$/,/^ *print(pos, file, index, key, sorted(fields))$/p' page.txt | sed 's/^       //' > raw.py
	[ -s consumer.py ] && [ -s raw.py ] || fail "examples not found in prefetch(1)"
	prefetch -q --plan q.plan --emit a.slab b.slab | python3 consumer.py > tar.out
	prefetch -q --plan q.plan --emit --emit-format raw a.slab b.slab | python3 raw.py > raw.out
	# raw.py prints position, file, index, key, fields; consumer.py key and fields
	[ "$(wc -l < raw.out)" -eq 70 ]
	cut -d' ' -f4- raw.out | cmp - tar.out
	awk '{ print $2, $3 }' raw.out | cmp - q.txt
}
