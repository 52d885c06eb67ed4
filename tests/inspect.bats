#!/usr/bin/env bats
# inspect: summary, JSON, list, get, verify, tar; corrupt, truncated and foreign files.

load test_helper/common

@test "inspect --help and --version" {
	run -0 --separate-stderr inspect --help
	assert_line --index 0 "Usage: inspect [OPTIONS] FILE..."
	assert_output --partial "--verify"
	run -0 inspect --version
	assert_output --regexp '^inspect \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "inspect usage errors exit 2" {
	small_slab
	run -2 --separate-stderr inspect
	assert_equal "$stderr" "inspect: no input file
Try 'inspect --help' for more information."
	run -2 --separate-stderr inspect --list --verify small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --list, --get, --verify and --tar exclude each other"
	run -2 --separate-stderr inspect --get '#0' --tar small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --list, --get, --verify and --tar exclude each other"
	# one mode given twice is that mode (the last --get wins), as any repeated option
	run -0 inspect --list --list small.slab
	assert_equal "${#lines[@]}" 3
	cmp <(inspect --get '#1' --get '#2' --field txt small.slab) <(inspect --get '#2' --field txt small.slab)
	run -2 --separate-stderr inspect --field txt small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --field goes with --get"
	run -2 --separate-stderr inspect --json --verify small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --json goes with the summary or --list"
	run -2 --separate-stderr inspect --get d/a small.slab small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --get and --list read exactly one file"
	run -2 --separate-stderr inspect --list small.slab small.slab
	assert_equal "${stderr_lines[0]}" "inspect: --get and --list read exactly one file"
	run -2 --separate-stderr inspect --frobnicate small.slab
	assert_equal "${stderr_lines[1]}" "Try 'inspect --help' for more information."
}

@test "summary names version, page size, samples, fields and packing options" {
	small_slab
	run -0 inspect small.slab
	assert_line "file:         small.slab"
	assert_line "format:       slab 1.3"
	assert_line "page size:    2.0 MiB (2097152 bytes)"
	assert_line "samples:      3"
	assert_line "data:         7 B (7 bytes)"
	assert_line "fields:       2"
	assert_line --regexp '^  cls +2 +1 B +0 B +1 B$'
	assert_line --regexp '^  txt +2 +6 B +3 B +3 B$'
	assert_line "  page-size=2097152"
	assert_line --regexp '^  tool=pack [0-9.]+$'
}

@test "summary --json has the documented keys and values" {
	small_slab
	run -0 inspect --json small.slab
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["file"] == "small.slab"
assert (d["version_major"], d["version_minor"]) == (1, 3)
assert d["page_size"] == 2097152 and d["samples"] == 3 and d["pages"] == 1
assert d["data_bytes"] == 7
assert d["padding_bytes"] == 4096 - 7
assert [f["name"] for f in d["fields"]] == ["cls", "txt"]
cls = d["fields"][0]
assert (cls["samples"], cls["total_bytes"], cls["min_bytes"], cls["max_bytes"]) == (2, 1, 0, 1)
assert d["options"]["page-size"] == "2097152"
assert d["options"]["on-error"] == "fail"
PY
}

@test "--json of a file that cannot be read prints no JSON (not an empty list), exit 1" {
	echo "this is not a slab file" > bad.slab
	for mode in "" --list; do
		# shellcheck disable=SC2086
		run -1 --separate-stderr inspect --json $mode bad.slab
		assert_equal "$output" ""
		assert_equal "$stderr" "inspect: 'bad.slab': not a slab file (bad magic number)"
	done
}

@test "several files: a summary each; a bad one fails but the others are shown" {
	small_slab
	cp small.slab two.slab
	echo "this is not a slab file" > bad.slab
	run -1 --separate-stderr inspect small.slab bad.slab two.slab
	assert_line "file:         small.slab"
	assert_line "file:         two.slab"
	assert_equal "$stderr" "inspect: 'bad.slab': not a slab file (bad magic number)"
	run -0 inspect --json small.slab two.slab
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [x["file"] for x in d] == ["small.slab","two.slab"]' "$output"
}

@test "several files: an empty line between two summaries, none before the first shown" {
	small_slab
	cp small.slab two.slab
	echo "this is not a slab file" > bad.slab
	run -1 --separate-stderr inspect bad.slab small.slab bad.slab two.slab bad.slab
	assert_line --index 0 "file:         small.slab"
	assert_equal "$(grep -c '^$' <<<"$output")" 1
	assert_equal "$(grep -A1 '^$' <<<"$output" | tail -1)" "file:         two.slab"
	assert_equal "${#stderr_lines[@]}" 3
}

@test "each message is one write: lines of tools sharing a stderr cannot interleave mid-line" {
	small_slab
	# stderr is a packet-mode pipe (O_DIRECT): each write(2) is one packet, read whole
	run -0 python3 - "$(command -v inspect)" <<'PY'
import os, subprocess, sys
r, w = os.pipe2(os.O_DIRECT)
p = subprocess.Popen([sys.argv[1], "no.slab", "bad\x01\udcffname", "small.slab"],
                     stdout=subprocess.DEVNULL, stderr=w)
os.close(w)
packets = []
while True:
    b = os.read(r, 65536)
    if not b:
        break
    packets.append(b)
print(p.wait())
for b in packets:
    print(repr(b))
PY
	assert_output "1
b\"inspect: 'no.slab': No such file or directory\\n\"
b\"inspect: 'bad\\\\x01\\\\xffname': No such file or directory\\n\""
}

@test "--list gives index, key, page and name:offset:size per field" {
	small_slab
	run -0 inspect --list small.slab
	assert_equal "$output" "0	d/a	0	cls:4096:1	txt:4097:3
1	d/b	0	txt:4100:3
2	d/c	0	cls:4103:0"
	run -0 inspect --list --json small.slab
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert [s["key"] for s in d] == ["d/a", "d/b", "d/c"]
assert d[0]["fields"][1] == {"name": "txt", "offset": 4097, "size": 3, "crc32c": d[0]["fields"][1]["crc32c"]}
assert len(d[0]["fields"][1]["crc32c"]) == 8
PY
}

@test "--list of a file whose field record fails part way: whole lines, valid JSON, exit 1" {
	small_slab
	cp small.slab c.slab; slabedit c.slab field-offset 1 1 64   # d/b's txt, in the header
	run -1 --separate-stderr inspect --list c.slab
	assert_equal "$output" "0	d/a	0	cls:4096:1	txt:4097:3"
	assert_equal "$stderr" "inspect: 'c.slab': sample #1 field 'txt': offset 64, size 3 outside the data area"
	inspect --list c.slab 2>/dev/null | tail -c 1 | cmp - <(printf '\n')   # no half line
	run -1 --separate-stderr inspect --list --json c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #1 field 'txt': offset 64, size 3 outside the data area"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [x["key"] for x in d] == ["d/a"], d' "$output"
}

@test "summary of a file whose fields overlap past the data area: an error, not a padding of 16 EiB" {
	small_slab
	cp small.slab c.slab
	slabedit c.slab field-size 0 1 4095     # d/a's txt to the end of the data area
	slabedit c.slab field-offset 1 1 4097   # d/b's txt over it
	slabedit c.slab field-size 1 1 4095
	for mode in "" --json; do
		run -1 --separate-stderr inspect $mode c.slab
		assert_equal "$stderr" "inspect: 'c.slab': the fields' sizes add up to 8191 bytes, more than the data area's 4096: fields overlap (inspect --verify says where)"
	done
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #0 'd/a' field 'txt': checksum mismatch (bytes at offset 4097, size 4095)"
}

@test "--list to a non-blocking pipe waits for a slow reader: whole output, exit 0" {
	mktar --seed 2 --samples 1000 --max-size 64 -o big.tar
	pack -q -o big.slab big.tar
	inspect --list big.slab > want
	[ "$(filesize want)" -gt 65536 ]          # more than a pipe holds
	nonblock timeout 120 inspect --list big.slab 2> err | { sleep 1; cat; } > got
	assert_equal "${PIPESTATUS[*]}" "0 0"
	assert_equal "$(cat err)" ""
	cmp got want
}

@test "--get writes a field's exact bytes, by key or by #index" {
	small_slab
	run -0 inspect --get d/a --field txt small.slab
	assert_output "one"
	run -0 inspect --get '#1' --field txt small.slab
	assert_output "two"
	run -0 inspect --get d/b small.slab
	assert_output "two"
	inspect --get d/c --field cls small.slab > empty.out
	[ ! -s empty.out ]
}

@test "--get failures: no key, no field, several fields, bad index" {
	small_slab
	run -1 --separate-stderr inspect --get nope --field txt small.slab
	assert_equal "$stderr" "inspect: 'small.slab': no sample with key 'nope'"
	run -1 --separate-stderr inspect --get d/b --field cls small.slab
	assert_equal "$stderr" "inspect: 'small.slab': sample 'd/b' has no field 'cls'"
	run -1 --separate-stderr inspect --get d/a --field jpg small.slab
	assert_equal "$stderr" "inspect: 'small.slab': no field 'jpg' in this dataset"
	run -2 --separate-stderr inspect --get d/a small.slab
	assert_equal "$stderr" "inspect: 'small.slab': sample 'd/a' has several fields: choose one with --field"
	run -1 --separate-stderr inspect --get '#3' small.slab
	assert_equal "$stderr" "inspect: 'small.slab': no sample #3 (3 samples)"
	run -1 --separate-stderr inspect --get '#x' small.slab
	assert_equal "$stderr" "inspect: 'small.slab': no sample with key '#x'"
}

@test "--verify reports ok, and nothing with -q" {
	small_slab
	run -0 inspect --verify small.slab
	assert_output "small.slab: ok, 3 samples, 8.6 KiB checked"
	run -0 inspect -v --verify small.slab
	assert_line --index 1 "small.slab: 4 field checksums over 7 B of data, 4.0 KiB of padding all zero, header, table and trailer checksums match"
	run -0 inspect -q --verify small.slab
	assert_output ""
}

# Counts of one were plural: "ok, 1 samples", "1 field checksums", "(1 samples)".
@test "inspect's counts of one are singular" {
	one_slab
	run -0 inspect -v --verify one.slab
	assert_line --index 0 "one.slab: ok, 1 sample, 8.3 KiB checked"
	assert_line --index 1 "one.slab: 1 field checksum over 3 B of data, 4.0 KiB of padding all zero, header, table and trailer checksums match"
	run -1 --separate-stderr inspect --get '#1' one.slab
	assert_equal "$stderr" "inspect: 'one.slab': no sample #1 (1 sample)"
}

# A dataset of a few pages to damage: offsets of its regions come from inspect itself.
damaged_setup() {
	mktar --seed 1 --samples 6 --max-size 6000 -o r.tar
	pack -q --page-size 4K -o r.slab r.tar
	size=$(filesize r.slab)
	table=$(python3 -c 'import struct,sys; d=open("r.slab","rb").read(); print(struct.unpack_from("<Q", d, len(d)-64+8)[0])')
}

@test "a flipped byte in the header is found" {
	damaged_setup
	cp r.slab c.slab; flip c.slab 20
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': header checksum mismatch at offset 0"
	cp r.slab c.slab; flip c.slab 3000   # the zero padding of the options area counts too
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': header checksum mismatch at offset 0"
}

@test "a flipped byte in field data is found, naming sample, key, field and offset" {
	damaged_setup
	read -r idx key page first rest < <(inspect --list r.slab | head -1)
	name=${first%%:*}; off=$(echo "$first" | cut -d: -f2); len=$(echo "$first" | cut -d: -f3)
	cp r.slab c.slab; flip c.slab $((off + len / 2))
	run -0 inspect c.slab          # the summary reads only the table
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #0 '$key' field '$name': checksum mismatch (bytes at offset $off, size $len)"
}

@test "--get and --tar check the bytes they write: a damaged field is an error, not output" {
	small_slab
	cp small.slab c.slab; flip c.slab 4098   # d/a's txt: "one"
	run -1 --separate-stderr inspect --get d/a --field txt c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #0 'd/a' field 'txt': checksum mismatch (bytes at offset 4097, size 3)"
	assert_equal "$output" ""
	inspect --get d/b c.slab > b.out     # the other fields are intact
	printf 'two' | cmp - b.out
	# nothing of the damaged sample goes into the tar, and no end of archive after what
	# went before: the output never reads as a whole tar
	for at in 4098 4100; do
		cp small.slab c.slab; flip c.slab $at
		run -1 --separate-stderr sh -c 'inspect --tar c.slab > out.tar'
		assert_equal "$(filesize out.tar)" 0
	done
	assert_equal "$stderr" "inspect: 'c.slab': sample #1 'd/b' field 'txt': checksum mismatch (bytes at offset 4100, size 3)"
	cp small.slab c.slab
	printf 'x%.0s' $(seq 20000) > big.txt
	mkdir -p src/e && cp big.txt src/e/a.txt && printf 'two' > src/e/b.txt
	(cd src && tar cf ../big.tar e/a.txt e/b.txt)
	pack -q --page-size 4K -o c.slab big.tar
	off=$(inspect --list c.slab | awk -F'\t' 'NR == 2 { split($4, f, ":"); print f[2] }')
	flip c.slab "$off"
	run -1 --separate-stderr sh -c 'inspect --tar c.slab > out.tar'
	assert_equal "$stderr" "inspect: 'c.slab': sample #1 'e/b' field 'txt': checksum mismatch (bytes at offset $off, size 3)"
	run -2 --separate-stderr tar tf out.tar
	assert_line --index 0 "e/a.txt"
}

@test "a flipped byte in padding between samples is found" {
	damaged_setup
	# the last byte before the table is padding (the table starts 4096-aligned)
	cp r.slab c.slab; flip c.slab $((table - 1))
	run -1 --separate-stderr inspect --verify c.slab
	[[ "$stderr" == "inspect: 'c.slab': non-zero padding byte at offset $((table - 1)) "* ]]
}

@test "a flipped byte in the table or the trailer is found at open" {
	damaged_setup
	cp r.slab c.slab; flip c.slab $((table + 200))
	run -1 --separate-stderr inspect c.slab
	assert_equal "$stderr" "inspect: 'c.slab': table checksum mismatch (table at offset $table)"
	cp r.slab c.slab; flip c.slab $((size - 30))
	run -1 --separate-stderr inspect --list c.slab
	assert_equal "$stderr" "inspect: 'c.slab': trailer checksum mismatch at offset $((size - 64))"
}

@test "every single flipped byte of a small file is found by --verify" {
	small_slab
	size=$(filesize small.slab)
	# One interpreter flips each byte in turn and runs inspect on the copy.
	python3 - "$size" <<'PY'
import random, subprocess, sys
n = int(sys.argv[1])
r = random.Random(5)
good = open("small.slab", "rb").read()
missed = []
for off in sorted(set([0, 8, 36, 4095, 4096, n - 1] + r.sample(range(n), 60))):
    bad = bytearray(good)
    bad[off] ^= 0xFF
    with open("c.slab", "wb") as f:
        f.write(bad)
    if subprocess.run(["inspect", "-q", "--verify", "c.slab"], stderr=subprocess.DEVNULL).returncode != 1:
        missed.append(off)
if missed:
    sys.exit("flips not found (or not exit 1) at %s" % missed)
PY
}

@test "a key index that would not lead a lookup to a sample, or a repeated key, is found" {
	# 16 keys with one home slot in the 32 of the index: one run of 16 filled slots
	mkcollide --count 16 | pack -q --page-size 4K -o r.slab -
	mkcollide --count 16 --keys > keys
	cp r.slab c.slab; slabedit c.slab index-move
	run -0 inspect c.slab
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #15 '$(sed -n 16p keys)': key index does not lead to it"
	cp r.slab c.slab; slabedit c.slab key-copy 2 9
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #9 '$(sed -n 3p keys)': same key as sample #2"
}

@test "truncated, empty, foreign and wrong-version files get a clear error" {
	damaged_setup
	head -c 9000 r.slab > t.slab
	run -1 --separate-stderr inspect t.slab
	assert_equal "$stderr" "inspect: 't.slab': truncated or damaged: no trailer at offset 8936"
	head -c 100 r.slab > h.slab
	run -1 --separate-stderr inspect h.slab
	assert_equal "$stderr" "inspect: 'h.slab': truncated: 100 bytes, shorter than header and trailer"
	: > e.slab
	run -1 --separate-stderr inspect e.slab
	assert_equal "$stderr" "inspect: 'e.slab': not a slab file (0 bytes)"
	run -1 --separate-stderr inspect r.tar
	assert_equal "$stderr" "inspect: 'r.tar': not a slab file (bad magic number)"
	run -1 --separate-stderr inspect missing.slab
	assert_equal "$stderr" "inspect: 'missing.slab': No such file or directory"
	run -1 --separate-stderr inspect .
	assert_equal "$stderr" "inspect: '.': not a regular file (a .slab is read through mmap)"
	# a FIFO with no writer: refused at once, not waited on (timeout only ends a hang, 124)
	mkfifo fifo
	run -1 --separate-stderr timeout 60 inspect fifo
	assert_equal "$stderr" "inspect: 'fifo': not a regular file (a .slab is read through mmap)"
	run -1 --separate-stderr timeout 60 shuffle-plan -o f.plan fifo
	assert_equal "$stderr" "shuffle-plan: 'fifo': not a regular file (a .slab is read through mmap)"
	run -1 --separate-stderr timeout 60 prefetch fifo
	assert_equal "$stderr" "prefetch: 'fifo': not a regular file"
	cp r.slab v.slab
	python3 - <<'PY'
# version 9.0 with a correct header checksum: refused for its version, not its checksum
import struct
d = bytearray(open("v.slab", "rb").read())
struct.pack_into("<HH", d, 8, 9, 0)
struct.pack_into("<I", d, 36, 0)
import zlib
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
struct.pack_into("<I", d, 36, crc32c(bytes(d[:4096])))
open("v.slab", "wb").write(d)
PY
	run -1 --separate-stderr inspect v.slab
	assert_equal "$stderr" "inspect: 'v.slab': format version 9.0 is not supported (this reader reads 1.x)"
	cp r.slab a.slab; printf 'extra' >> a.slab
	run -1 --separate-stderr inspect a.slab
	assert_equal "$stderr" "inspect: 'a.slab': truncated or damaged: no trailer at offset $((size + 5 - 64))"
}

@test "'-' as a .slab file is a usage error in inspect, shuffle-plan and prefetch; './-' is the file" {
	small_slab
	local why="'-': a .slab file is mapped, not read from standard input: give its path ('./-' for a file named '-')"
	run -2 --separate-stderr inspect - <small.slab
	assert_equal "${stderr_lines[0]}" "inspect: $why"
	assert_equal "$output" ""
	run -2 --separate-stderr inspect --verify small.slab - <small.slab
	assert_equal "${stderr_lines[0]}" "inspect: $why"
	assert_equal "$output" ""
	run -2 --separate-stderr shuffle-plan -o p.plan - <small.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: $why"
	[ ! -e p.plan ]
	run -2 --separate-stderr prefetch --status - <small.slab
	assert_equal "${stderr_lines[0]}" "prefetch: $why"
	cp small.slab ./-
	run -0 inspect --list ./-
	assert_output "$(inspect --list small.slab)"
}

@test "--tar refuses a terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	small_slab
	run script -qec "inspect --tar small.slab" /dev/null
	assert_output --partial "inspect: refusing to write a tar to a terminal"
}

@test "--get to a terminal writes plain text only: escape sequences and binary bytes are refused" {
	command -v script >/dev/null || skip "script(1) not installed"
	mkdir -p t
	printf 'cat\n' > t/a.cls
	printf '\e]0;owned\a\e[2J' > t/b.cls
	printf '\xff\xd8\xff\xe0' > t/c.cls
	printf 'l\xc3\xa9\tchat\n' > t/d.cls
	printf 'x\r\n' > t/e.cls
	(cd t && tar --format=gnu -cf ../t.tar a.cls b.cls c.cls d.cls e.cls)
	pack -q -o t.slab t.tar
	# (stty -onlcr: the terminal passes a newline on as it is)
	run -0 script -qec "stty -onlcr; inspect --get a --field cls t.slab" /dev/null
	assert_output "cat"
	run -0 script -qec "stty -onlcr; inspect --get d t.slab" /dev/null
	assert_output $'l\xc3\xa9\tchat'
	for k in b c e; do
		run -2 script -qec "stty -onlcr; inspect --get $k --field cls t.slab" /dev/null
		assert_output "inspect: 't.slab': sample '$k' field 'cls' is not plain text: refusing to write it to a terminal (redirect it)"
	done
	# redirected, the bytes as they are
	inspect --get b --field cls t.slab > b.out
	cmp b.out t/b.cls
}

@test "--tar and --list into a reader that stops early, SIGPIPE ignored: a quiet stop, exit 0" {
	mkwds --count 50 -o big.tar
	pack -q -o big.slab big.tar
	for mode in --tar --list; do
		run -0 --separate-stderr bash -c "trap '' PIPE; inspect $mode big.slab | head -c 1 >/dev/null; exit \${PIPESTATUS[0]}"
		assert_equal "$stderr" ""
	done
}

@test "--tar gives back the members in their original order with their bytes" {
	small_slab
	inspect --tar small.slab > back.tar
	run -0 tar tf back.tar
	assert_equal "$output" "d/a.cls
d/a.txt
d/b.txt
d/c.cls"
	run -0 tarcmp small.tar back.tar
}

@test "--tar of several files is one tar stream, in the order given" {
	small_slab
	mktar --seed 3 --samples 5 -o two.tar
	pack -q -o two.slab two.tar
	inspect --tar small.slab two.slab > both.tar
	python3 - <<'PY'
import tarfile
names = [m.name for m in tarfile.open("both.tar")]
first = [m.name for m in tarfile.open("small.tar") if m.isreg()]
second = [m.name for m in tarfile.open("two.tar")]
assert names == first + second, names
PY
	echo "not a slab at all, really" > bad.slab
	run -1 --separate-stderr inspect --tar small.slab bad.slab
	assert_equal "$stderr" "inspect: 'bad.slab': not a slab file (bad magic number)"
	assert_equal "$output" ""
}
