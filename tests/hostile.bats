#!/usr/bin/env bats
# Hostile surroundings and names: an output that is also an input, outputs through symbolic
# links and /dev/stdout, closed standard descriptors, signals, control bytes in names, and
# member names that would escape the folder they are extracted in. Nothing may be destroyed,
# nothing may escape, nothing may be left behind.

load test_helper/common

# evil.tar: two good samples around three whose names leave the folder.
evil_tar() {
	python3 - <<'PY'
import io, tarfile
with tarfile.open("evil.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for n in ["ok/a.txt", "../../evil/x.txt", "/etc/x.txt", "a/../../../tmp/y.txt",
              "ok/b.txt", "..x/c.txt"]:
        d = n.encode()
        i = tarfile.TarInfo(n)
        i.size = len(d)
        t.addfile(i, io.BytesIO(d))
PY
}

# Members of a tar written by tarfile, listed: names only.
tar_names() {
	python3 -c 'import sys, tarfile; [print(m.name) for m in tarfile.open(fileobj=sys.stdin.buffer, mode="r|")]'
}

# ---- the output is an input ---------------------------------------------------------------

@test "pack refuses an output that is one of its inputs, however it is named, and leaves it alone" {
	small_tar
	cp small.tar keep.tar
	mkdir sub
	ln small.tar hard.tar
	ln -s small.tar link.tar
	ln -s ../small.tar sub/up.tar
	for out in small.tar ./small.tar hard.tar link.tar sub/up.tar "$PWD/small.tar"; do
		run -1 --separate-stderr pack -o "$out" other.tar small.tar
		assert_equal "$stderr" "pack: 'small.tar': output is also an input"
		cmp small.tar keep.tar
	done
	run -1 --separate-stderr pack -o small.tar ./hard.tar
	assert_equal "$stderr" "pack: './hard.tar': output is also an input"
	# standard input as the input, the file as the output
	run -1 --separate-stderr pack -o small.tar < small.tar
	assert_equal "$stderr" "pack: '(stdin)': output is also an input"
	# standard output appending to the input: the file would grow under the reader
	run -1 --separate-stderr bash -c 'pack -o - small.tar >> small.tar'
	assert_equal "$stderr" "pack: 'small.tar': output is also an input"
	cmp small.tar keep.tar
	no_temporaries
}

@test "shuffle-plan, inspect and prefetch refuse to write over their inputs" {
	small_slab
	cp small.slab keep.slab
	run -1 --separate-stderr shuffle-plan -o small.slab small.slab
	assert_equal "$stderr" "shuffle-plan: 'small.slab': output is also an input"
	cmp small.slab keep.slab
	run -1 --separate-stderr bash -c 'shuffle-plan --format text small.slab >> small.slab'
	assert_equal "$stderr" "shuffle-plan: 'small.slab': output is also an input"
	run -1 --separate-stderr bash -c 'inspect --tar small.slab >> small.slab'
	assert_equal "$stderr" "inspect: 'small.slab': output is also an input"
	run -1 --separate-stderr bash -c 'inspect small.slab >> small.slab'
	assert_equal "$stderr" "inspect: 'small.slab': output is also an input"
	cmp small.slab keep.slab
	shuffle-plan -q -o plan small.slab
	cp plan keep.plan
	run -1 --separate-stderr bash -c 'prefetch --plan plan --emit small.slab >> plan'
	assert_equal "$stderr" "prefetch: 'plan': output is also an input"
	run -1 --separate-stderr bash -c 'prefetch --plan plan --emit small.slab >> small.slab'
	assert_equal "$stderr" "prefetch: 'small.slab': output is also an input"
	cmp small.slab keep.slab
	cmp plan keep.plan
	no_temporaries
}

# ---- outputs through links and descriptors ------------------------------------------------

@test "-o /dev/stdout, /proc/self/fd/1 and /dev/fd/N write to the descriptor, never replace the link" {
	small_tar
	pack -q -o want.slab small.tar
	pack -q -o /dev/stdout small.tar > a.slab
	cmp a.slab want.slab
	pack -q -o /proc/self/fd/1 small.tar > b.slab
	cmp b.slab want.slab
	pack -q -o /dev/fd/5 small.tar 5> c.slab
	cmp c.slab want.slab
	shuffle-plan -q --format text -o /dev/stdout small.slab > plan.txt 2>/dev/null || shuffle-plan -q --format text -o /dev/stdout want.slab > plan.txt
	[ "$(wc -l < plan.txt)" -eq 3 ]
	# a link of ours that leads to /dev/stdout is that descriptor too
	ln -s /dev/stdout out.link
	pack -q -o out.link small.tar > d.slab
	cmp d.slab want.slab
	[ -L out.link ]
	[ -L /dev/stdout ]
	no_temporaries /dev
	no_temporaries
}

@test "-o through a symbolic link replaces the target in its own folder and keeps the link" {
	small_tar
	pack -q -o want.slab small.tar
	mkdir data links
	echo old > data/real.slab
	ln -s ../data/real.slab links/rel.slab
	ln -s "$PWD/data/real.slab" abs.slab
	ln -s links/rel.slab chain.slab
	for link in links/rel.slab abs.slab chain.slab; do
		echo old > data/real.slab
		pack -q -o "$link" small.tar
		[ -L "$link" ]
		cmp data/real.slab want.slab
	done
	# a dangling link is refused, as cp refuses it, and nothing appears
	ln -s nowhere/x.slab dangling.slab
	run -1 --separate-stderr pack -o dangling.slab small.tar
	assert_equal "$stderr" "pack: 'dangling.slab': not writing through a dangling symbolic link"
	[ -L dangling.slab ] && [ ! -e nowhere ]
	# a loop of links is an error, not a hang
	ln -s loop2 loop1
	ln -s loop1 loop2
	run -1 --separate-stderr pack -o loop1 small.tar
	assert_equal "$stderr" "pack: 'loop1': Too many levels of symbolic links"
	no_temporaries
}

@test "re-packing keeps an existing file's permissions; a new file follows the umask" {
	small_tar
	pack -q -o a.slab small.tar
	chmod 600 a.slab
	pack -q -o a.slab small.tar
	[ "$(stat -c %a a.slab)" = 600 ]
	chmod 640 a.slab
	shuffle-plan -q -o a.plan a.slab
	chmod 604 a.plan
	shuffle-plan -q -o a.plan a.slab
	[ "$(stat -c %a a.plan)" = 604 ]
	(umask 027 && pack -q -o new.slab small.tar)
	[ "$(stat -c %a new.slab)" = 640 ]
	(umask 077 && shuffle-plan -q -o new.plan a.slab)
	[ "$(stat -c %a new.plan)" = 600 ]
}

# ---- closed standard descriptors ----------------------------------------------------------

@test "a closed stderr does not send warnings into the output file" {
	small_tar
	# a second copy of d/a later in the stream: a duplicate key, warned about and skipped
	mkdir -p dup/d && printf 'again' > dup/d/a.txt
	(cd dup && tar --format=gnu -cf ../dup.tar d)
	cat small.tar dup.tar > both.tar
	run -0 bash -c 'pack --on-error=skip -o out.slab both.tar 2>&-'
	run -0 inspect --verify out.slab
	run -0 inspect --get d/a --field txt out.slab
	assert_output "one"
	no_temporaries
}

@test "a closed stdin is not read from the output file; a closed stdout is a write error" {
	small_tar
	run -1 --separate-stderr bash -c 'pack -o x.slab <&-'
	assert_equal "$stderr" "pack: '(stdin)': Bad file descriptor"
	[ ! -e x.slab ]
	run -1 --separate-stderr bash -c 'pack -o - small.tar >&-'
	assert_equal "$stderr" "pack: '(stdout)': file descriptor 1 is not open for writing: Bad file descriptor"
	pack -q -o small.slab small.tar
	run -1 --separate-stderr bash -c 'inspect --list small.slab >&-'
	assert_equal "$stderr" "inspect: write error: Bad file descriptor"
	run -1 --separate-stderr bash -c 'shuffle-plan --format text -o - small.slab >&-'
	assert_equal "${stderr_lines[0]}" "shuffle-plan: write error: Bad file descriptor"
	run -0 bash -c 'shuffle-plan -q -o p.plan small.slab <&- 2>&-'
	run -0 bash -c 'prefetch --plan p.plan small.slab <&- 2>&-'
	no_temporaries
}

# ---- signals ------------------------------------------------------------------------------

# pack_until_temporary [ENV-OPTION]: pack from a FIFO kept open, in the background (pid in
# $pid, the feeder in $feeder), once its temporary file is there. Signals start at their
# defaults (a shell's background job would ignore SIGINT and SIGQUIT), or as env(1) says.
pack_until_temporary() {
	rm -f fifo && mkfifo fifo
	(head -c 300000 big.tar; exec sleep 60) > fifo &
	feeder=$!
	env --default-signal "$@" pack -q -o out.slab fifo &
	pid=$!
	for _ in $(seq 600); do
		compgen -G '.out.slab.tmp.*' > /dev/null && return 0
		sleep 0.05
	done
	fail "no temporary file appeared"
}

@test "pack -o - into a reader that stops early dies of SIGPIPE quietly; with SIGPIPE ignored it is a write error" {
	mkwds --count 40 -o w.tar
	run -0 --separate-stderr bash -c 'pack -q -o - w.tar | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
	assert_output "141"
	assert_equal "$stderr" ""
	run -0 --separate-stderr bash -c 'pack -q -j 2 -o - w.tar | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
	assert_output "141"
	assert_equal "$stderr" ""
	run -0 --separate-stderr bash -c 'trap "" PIPE; pack -q -o - w.tar | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
	assert_output "1"
	assert_regex "$stderr" "^pack: '\(stdout\)': write failed at offset [0-9]+: Broken pipe\$"
}

@test "every signal that ends pack removes its temporary file" {
	mkwds --count 60 -o big.tar
	for sig in HUP INT QUIT TERM USR1 USR2 ALRM PIPE XCPU VTALRM PROF RTMIN+2; do
		pack_until_temporary
		kill -s "$sig" "$pid"
		local status=0
		wait "$pid" || status=$?
		kill "$feeder" 2>/dev/null || true
		wait "$feeder" 2>/dev/null || true
		[ "$status" -eq $((128 + $(kill -l "$sig"))) ] || fail "$sig: exit status $status"
		no_temporaries
		[ ! -e out.slab ]
	done
	# a signal ignored from the start (nohup) stays ignored: pack goes on and finishes
	pack_until_temporary --ignore-signal=HUP
	kill -s HUP "$pid"
	sleep 0.2
	kill "$feeder"
	local status=0
	wait "$pid" || status=$?
	# the feeder's end cut the tar short: an error, and still nothing left behind
	[ "$status" -eq 1 ] || fail "HUP ignored: exit status $status"
	no_temporaries
}

@test "pack writing its messages into a closed pipe dies of SIGPIPE and leaves nothing" {
	small_tar
	python3 - <<'PY'
import glob, os, signal, subprocess
r, w = os.pipe()
os.close(r)                     # the reader of stderr has gone, as "2>&1 | head -c 1" after it
p = subprocess.run(["pack", "-v", "-o", "out.slab", "small.tar"], stderr=w)
assert p.returncode == -signal.SIGPIPE, p.returncode
assert glob.glob(".out.slab.tmp.*") == [] and not os.path.exists("out.slab")
PY
}

# ---- control bytes in names ---------------------------------------------------------------

@test "control bytes in keys and field names are escaped in --list, the summary and messages" {
	python3 - <<'PY'
import io, tarfile
with tarfile.open("ctl.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for n in ["a\tb.txt", "line\nbreak.txt", "esc\x1b[31mred.txt", "bell\a\r.x\ty", "back\\slash.txt",
              "caf\u00e9.txt", "bad\xff.txt".encode("latin-1").decode("utf-8", "surrogateescape")]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	pack -q -o ctl.slab ctl.tar
	run -0 inspect --list ctl.slab
	assert_equal "${#lines[@]}" 7
	assert_line --index 0 --regexp $'^0\ta\\\\tb\t0\ttxt:[0-9]+:1$'
	assert_line --index 1 --regexp $'^1\tline\\\\nbreak\t0\ttxt:[0-9]+:1$'
	assert_line --index 2 --regexp $'^2\tesc\\\\x1b\\[31mred\t0\ttxt:[0-9]+:1$'
	assert_line --index 3 --regexp $'^3\tbell\\\\a\\\\r\t0\tx\\\\ty:[0-9]+:1$'
	assert_line --index 4 --regexp $'^4\tback\\\\\\\\slash\t0\ttxt:[0-9]+:1$'
	# U+00E9 as its UTF-8 bytes: bash's $'\u00e9' gives them only in a UTF-8 locale
	assert_line --index 5 --regexp $'^5\tcaf\xc3\xa9\t0\ttxt:[0-9]+:1$'
	assert_line --index 6 --regexp $'^6\tbad\\\\xff\t0\ttxt:[0-9]+:1$'
	refute_output --partial $'\e'
	# the summary names the fields escaped
	run -0 inspect ctl.slab
	assert_line --regexp '^  x\\ty +1 '
	refute_output --partial $'\a'
	# --json keeps the bytes, JSON-escaped
	run -0 inspect --list --json ctl.slab
	assert_output --partial '"key": "esc\u001b[31mred"'
	# a message naming such a key: a duplicate key
	python3 - <<'PY'
import io, tarfile
with tarfile.open("dup.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for n in ["k\x1b]0;pwned\a.txt", "other.txt", "k\x1b]0;pwned\a.txt"]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	run -1 --separate-stderr pack -o dup.slab dup.tar
	assert_equal "$stderr" "pack: 'dup.tar': key 'k\\x1b]0;pwned\\a' appears again (first as sample 0)"
}

# Bytes of the output outside printable ASCII, tab and newline, in hex: none is the answer.
raw_bytes() {
	LC_ALL=C tr -d '\t\n -~' | od -An -tx1
}

@test "DEL, C1 controls and bidirectional controls in names are escaped in --list, --json and messages" {
	python3 - <<'PY'
import io, tarfile
# U+009B is a CSI to some terminals; U+202E and U+2066..U+2069 reorder what follows them
with tarfile.open("uc.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for n in ["del\x7f.txt", "csi\u009b2J.txt", "rlo\u202etxt.exe.txt", "lri\u2066x\u2069.txt",
              "nbsp\u00a0ok.x\u202ay"]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	pack -q -o uc.slab uc.tar
	run -0 bash -c 'inspect --list uc.slab | cut -f2'
	assert_equal "$output" 'del\x7f
csi\xc2\x9b2J
rlo\xe2\x80\xaetxt
lri\xe2\x81\xa6x\xe2\x81\xa9
nbsp'$'\xc2\xa0''ok'
	inspect --list uc.slab > uc.list
	# "rlo\xe2\x80\xaetxt", byte for byte
	run -0 bash -c 'sed -n 3p uc.list | cut -f2 | xxd -p'
	assert_equal "$output" 726c6f5c7865325c7838305c7861657478740a
	run -0 raw_bytes < uc.list
	assert_equal "$output" ' c2 a0'
	# the summary names the field escaped
	run -0 inspect uc.slab
	assert_line --regexp '^  x\\xe2\\x80\\xaay +1 '
	# --json: the same string to a parser, \uXXXX on the wire
	inspect --list --json uc.slab > uc.json
	run -0 raw_bytes < uc.json
	assert_equal "$output" ' c2 a0'
	run -0 inspect --list --json uc.slab
	assert_output --partial '"key": "del\u007f"'
	assert_output --partial '"key": "csi\u009b2J"'
	assert_output --partial '"key": "rlo\u202etxt"'
	assert_output --partial '"key": "lri\u2066x\u2069"'
	assert_output --partial '"name": "x\u202ay"'
	python3 -c 'import json; k = [s["key"] for s in json.load(open("uc.json"))]; assert k[2] == "rlo\u202etxt" and k[1] == "csi\x9b2J", k'
	# a message naming such a key: a duplicate key
	python3 - <<'PY'
import io, tarfile
with tarfile.open("dup.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for n in ["k\u202egnp.txt", "other.txt", "k\u202egnp.txt"]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	run -1 --separate-stderr pack -o dup.slab dup.tar
	assert_equal "$stderr" "pack: 'dup.tar': key 'k\\xe2\\x80\\xaegnp' appears again (first as sample 0)"
	printf '%s\n' "$stderr" > dup.err
	run -0 raw_bytes < dup.err
	assert_equal "$output" ''
}

@test "a path with control bytes is escaped in messages and in text output" {
	small_slab
	cp small.slab $'new\nline.slab'
	run -0 --separate-stderr inspect --verify $'new\nline.slab'
	assert_output --regexp '^new\\nline\.slab: ok, 3 samples, [0-9.]+ KiB checked$'
	run -1 --separate-stderr inspect $'no\e[2Jsuch.slab'
	assert_equal "$stderr" "inspect: 'no\\x1b[2Jsuch.slab': No such file or directory"
	run -0 prefetch $'new\nline.slab'
	assert_line --index 1 --regexp ' new\\nline\.slab$'
}

# ---- names that leave the folder ----------------------------------------------------------

@test "pack refuses member names that are absolute or go up with '..', naming the member" {
	evil_tar
	run -1 --separate-stderr pack -o e.slab evil.tar
	assert_equal "$stderr" "pack: 'evil.tar': member '../../evil/x.txt' at offset 1024: not a safe member name (absolute, or with a '..' component)"
	[ ! -e e.slab ]
	run -0 --separate-stderr pack --on-error=skip -o e.slab evil.tar
	assert_equal "${stderr_lines[0]}" "pack: 'evil.tar': skipping: member '../../evil/x.txt' at offset 1024: not a safe member name (absolute, or with a '..' component)"
	assert_equal "${stderr_lines[1]}" "pack: 'evil.tar': skipping: member '/etc/x.txt' at offset 2048: not a safe member name (absolute, or with a '..' component)"
	assert_equal "${stderr_lines[2]}" "pack: 'evil.tar': skipping: member 'a/../../../tmp/y.txt' at offset 3072: not a safe member name (absolute, or with a '..' component)"
	assert_equal "${#stderr_lines[@]}" 4
	run -0 inspect --list e.slab
	assert_equal "$(cut -f2 <<< "$output" | tr '\n' ' ')" "ok/a ok/b ..x/c "
	inspect --tar e.slab | tar_names > names
	assert_equal "$(cat names | tr '\n' ' ')" "ok/a.txt ok/b.txt ..x/c.txt "
}

@test "a .slab holding an unsafe key: --verify reports it, no export writes it" {
	small_tar
	mkdir -p src/zz/yy && printf 'evil' > src/zz/yy/e.txt
	(cd src && tar --format=gnu --sort=name -cf ../k.tar d zz)
	pack -q -o k.slab k.tar
	slabedit k.slab key 'zz/yy/e' '../yy/e'
	run -1 --separate-stderr inspect --verify k.slab
	assert_equal "$stderr" "inspect: 'k.slab': sample #3: key '../yy/e' is not a safe member name (absolute, or with a '..' component)"
	run -1 --separate-stderr inspect --tar k.slab
	assert_equal "$stderr" "inspect: 'k.slab': sample #3: key '../yy/e' is not a safe member name (absolute, or with a '..' component)"
	assert_equal "$output" ""
	shuffle-plan -q --mode sequential -o p k.slab
	for fmt in tar raw "frames --image txt"; do
		run -1 --separate-stderr prefetch -q --plan p --emit --emit-format $fmt k.slab
		assert_equal "$stderr" "prefetch: 'k.slab': sample #3: key '../yy/e' is not a safe member name (absolute, or with a '..' component)"
		assert_equal "$output" ""
	done
	# absolute, and a NUL inside
	pack -q -o k2.slab k.tar
	slabedit k2.slab key 'zz/yy/e' '/zz/y/e'
	run -1 --separate-stderr inspect --verify k2.slab
	assert_equal "$stderr" "inspect: 'k2.slab': sample #3: key '/zz/y/e' is not a safe member name (absolute, or with a '..' component)"
	pack -q -o k3.slab k.tar
	slabedit k3.slab key 'zz/yy/e' 'zz\x00../e'
	run -1 --separate-stderr inspect --tar k3.slab
	assert_equal "$stderr" "inspect: 'k3.slab': sample #3: key 'zz' has a NUL byte at position 2: not a safe member name"
	# the other tools still read it: it is the export that is refused
	run -0 inspect --get d/a --field txt k.slab
	assert_output "one"
}

@test "a .slab whose key ending in '/' has a field '.' (exported as 'KEY..'): --verify reports it, no export writes it" {
	mkdir -p src/zz && printf 'evil' > src/zz/a.x && printf 'one' > src/zz/b.x
	(cd src && tar --format=gnu --sort=name -cf ../h.tar zz)
	pack -q -o h.slab h.tar
	slabedit h.slab key 'zz/a' 'zzz/'
	slabedit h.slab field-name 'x' '.'
	want="'h.slab': sample #0: key 'zzz/' with its field '.' is not a safe member name ('zzz/..' has a '..' component)"
	run -1 --separate-stderr inspect --verify h.slab
	assert_equal "$stderr" "inspect: $want"
	run -1 --separate-stderr inspect --tar h.slab
	assert_equal "$stderr" "inspect: $want"
	assert_equal "$output" ""
	shuffle-plan -q --mode sequential -o p h.slab
	run -1 --separate-stderr prefetch -q --plan p --emit --emit-format tar h.slab
	assert_equal "$stderr" "prefetch: $want"
	assert_equal "$output" ""
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" --verify h.slab
	assert_equal "$stderr" "slab.py: h.slab: sample 0: key 'zzz/' with its field '.' is not a safe member name ('zzz/..' has a '..' component)"
	# the other tools still read it, and the field '.' of another key ('zz/b..' on export)
	run -0 inspect --get zz/b --field . h.slab
	assert_output "one"
}

@test "a '/' in a field name or an options text without NUL is refused on open" {
	small_tar
	mkdir -p src2 && printf 'v' > src2/k.ab && (cd src2 && tar --format=gnu -cf ../f.tar k.ab)
	pack -q -o f.slab f.tar
	slabedit f.slab field-name 'ab' 'a/'
	run -1 --separate-stderr inspect --verify f.slab
	assert_equal "$stderr" "inspect: 'f.slab': schema field 0 has a '/' in its name"
	pack -q -o o.slab small.tar
	slabedit o.slab options-fill
	run -1 --separate-stderr inspect o.slab
	assert_equal "$stderr" "inspect: 'o.slab': options text in the header has no NUL terminator"
}

@test "a field with two image flags (JPEG and PNG): --verify calls it corrupt" {
	small_slab
	run -0 inspect --verify -q small.slab
	slabedit small.slab field-flags 0 1 0x0b
	run -1 --separate-stderr inspect --verify -q small.slab
	assert_equal "$stderr" "inspect: 'small.slab': sample #0 'd/a' field 'txt': flags 0x0b: more than one of JPEG, PNG, WEBP and VIDEO"
	# what opening checks is not all of it: the other modes read it
	run -0 inspect --get d/a --field txt small.slab
	assert_output "one"
}

# ---- smaller things ---------------------------------------------------------------------------

@test "prefetch counts only what reached the reader" {
	mkwds --count 50 -o a.tar
	pack -q -o a.slab a.tar
	shuffle-plan -q -o p a.slab
	run -0 --separate-stderr bash -c 'prefetch --plan p --emit a.slab | true'
	assert_equal "$stderr" "$(sed -n 1p <<< "$stderr")"
	[[ "$stderr" =~ ^"prefetch: 'p': "([0-9]+)" samples, "(.*)" in " ]] || fail "$stderr"
	local n=${BASH_REMATCH[1]}
	[ "$n" -lt 50 ] || fail "$n samples counted for a reader that read none"
	[ "$n" -eq 0 ] && assert_equal "${BASH_REMATCH[2]}" "0 B"
	run -0 --separate-stderr prefetch --plan p --emit a.slab
	assert_equal "$stderr" "$(sed -n 1p <<< "$stderr")"
	[[ "$stderr" == "prefetch: 'p': 50 samples, "* ]]
}

@test "pack: an empty -o, an empty --fields item, a long input path, a field name over 65535 bytes" {
	small_tar
	run -2 --separate-stderr pack -o "" small.tar
	assert_equal "${stderr_lines[0]}" "pack: empty output name (use -o FILE, or -o - for standard output)"
	for list in 'a,,b' ',a' 'a,' ''; do
		run -2 --separate-stderr pack --fields "$list" -o x.slab small.tar
		assert_equal "${stderr_lines[0]}" "pack: invalid --fields list '$list' (names separated by commas, none empty)"
	done
	run -2 --separate-stderr shuffle-plan -o "" x.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: empty output name (use -o FILE, or -o - for standard output)"
	# a path too long to open: the message still names it, shortened in the middle
	long=$(printf 'd%.0s' $(seq 5000)).tar
	run -1 --separate-stderr pack -o x.slab "$long"
	[[ "$stderr" =~ ^"pack: 'ddd"+"...ddd"+".tar': File name too long"$ ]] || fail "$stderr"
	# a field name longer than the format holds is a bad sample of the input
	python3 - <<'PY'
import io, tarfile
with tarfile.open("long.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for n in ["a.txt", "b." + "f" * 70000, "c.txt"]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	run -1 --separate-stderr pack -o l.slab long.tar
	assert_equal "$stderr" "pack: 'long.tar': sample 'b': field name 'ffffffffffffffffffffffffffffffffffffffff...' is longer than 65535 bytes"
	run -0 --separate-stderr pack --on-error=skip -o l.slab long.tar
	assert_equal "${stderr_lines[0]}" "pack: 'long.tar': skipping: sample 'b': field name 'ffffffffffffffffffffffffffffffffffffffff...' is longer than 65535 bytes"
	run -0 inspect --list l.slab
	assert_equal "$(cut -f2 <<< "$output" | tr '\n' ' ')" "a c "
}

@test "inspect: a summary that fails on a damaged field record frees what it gathered" {
	small_slab
	# a field record pointing outside the data: found when the summary reads it
	slabedit small.slab field-offset 1 1 999999
	run -1 --separate-stderr inspect small.slab
	assert_equal "$stderr" "inspect: 'small.slab': sample #1 field 'txt': offset 999999, size 3 outside the data area"
	run -1 --separate-stderr inspect --json small.slab
	assert_equal "$stderr" "inspect: 'small.slab': sample #1 field 'txt': offset 999999, size 3 outside the data area"
}
