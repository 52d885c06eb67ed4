#!/usr/bin/env bats
# pack: options, messages, exit codes, compression, pipes, atomic output, determinism.

load test_helper/common

@test "pack --help prints usage on stdout and exits 0" {
	run -0 --separate-stderr pack --help
	assert_line --index 0 "Usage: pack [OPTIONS] -o OUTPUT [INPUT...]"
	assert_output --partial "--page-size SIZE"
	[ -z "$stderr" ]
}

@test "pack --version" {
	run -0 pack --version
	assert_output --regexp '^pack \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "pack without -o is a usage error" {
	small_tar
	run -2 --separate-stderr pack small.tar
	[ "$stderr" = "pack: no output given (use -o FILE, or -o - for standard output)
Try 'pack --help' for more information." ]
}

@test "pack rejects bad option values with exit 2" {
	small_tar
	run -2 --separate-stderr pack -o x.slab --page-size 3K small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --page-size '3K' (a power of two from 4K to 1G)"
	run -2 --separate-stderr pack -o x.slab --page-size 2048 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --page-size '2048' (a power of two from 4K to 1G)"
	run -2 --separate-stderr pack -o x.slab --page-size 2G small.tar
	run -2 --separate-stderr pack -o x.slab -j 0 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --jobs '0' (a number from 1 to 1024)"
	run -2 --separate-stderr pack -o x.slab -j 3x small.tar
	run -2 --separate-stderr pack -o x.slab --jpeg-quality 101 --jpeg-max-side 10 small.tar
	run -2 --separate-stderr pack -o x.slab --jpeg-quality 80 small.tar
	assert_equal "${stderr_lines[0]}" "pack: --jpeg-quality only applies with --image-max-side"
	run -2 --separate-stderr pack -o x.slab --on-error=ignore small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --on-error 'ignore' (fail or skip)"
	run -2 --separate-stderr pack -o x.slab --max-sample-size 1Q small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --max-sample-size '1Q' (a size such as 64M, more than 0)"
	run -2 --separate-stderr pack -o x.slab --max-sample-size 0 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --max-sample-size '0' (a size such as 64M, more than 0)"
	run -2 --separate-stderr pack -o x.slab --fields , small.tar
	# The header records the list: it must fit, and hold no line of its own.
	run -2 --separate-stderr pack -o x.slab --fields "$(printf 'f%04d,' $(seq 700))txt" small.tar
	assert_equal "${stderr_lines[0]}" "pack: --fields list too long to record (the options take 4383 bytes, the header holds 4031)"
	run -2 --separate-stderr pack -o x.slab --fields $'txt\nimage-check=1' small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --fields list 'txt\\nimage-check=1' (a name with a line break cannot be recorded)"
	run -0 pack -q -o y.slab --fields "$(printf 'f%04d,' $(seq 600))txt" small.tar
	rm y.slab
	run -2 --separate-stderr pack -o x.slab --no-such-option small.tar
	assert_equal "${stderr_lines[0]}" "pack: unrecognized option '--no-such-option'"
	assert_equal "${stderr_lines[1]}" "Try 'pack --help' for more information."
	[ ! -e x.slab ]
}

@test "pack a small tar: summary line, samples, fields" {
	small_tar
	run -0 --separate-stderr pack -o small.slab small.tar
	[ -z "$output" ]
	assert_equal "${#stderr_lines[@]}" 1
	[[ "$stderr" == "pack: 'small.slab': 3 samples, 2 fields, 1 page of 2.0 MiB, fill 0.0%, 7 B data, "* ]]
	[[ "$stderr" == *"; skipped 1 non-file member" ]]
	run -0 inspect --list small.slab
	assert_equal "${lines[0]}" "0	d/a	0	cls:4096:1	txt:4097:3"
	assert_equal "${lines[1]}" "1	d/b	0	txt:4100:3"
	assert_equal "${lines[2]}" "2	d/c	0	cls:4103:0"
	assert_equal "${#lines[@]}" 3
}

# Counts of one were plural: "1 samples, 1 fields, 1 pages", "1 members", "1 bad samples".
@test "pack's counts of one are singular: 1 sample, 1 field, 1 page, 1 member" {
	mkdir -p src/d
	printf 'one' > src/d/a.txt
	printf 'x' > src/d/noext
	(cd src && tar --format=gnu --sort=name -cf ../one.tar d)
	run -0 --separate-stderr pack -v -o one.slab one.tar
	assert_equal "${stderr_lines[1]}" "pack: 'one.tar': 3 members, 3 B of member data, 10.0 KiB read"
	[[ "${stderr_lines[-1]}" == "pack: 'one.slab': 1 sample, 1 field, 1 page of 2.0 MiB, fill 0.0%, "*"; skipped 1 non-file member, 1 name without extension" ]] ||
		fail "$stderr"
	(cd src && tar --format=gnu -cf ../a.tar d/a.txt)
	run -0 --separate-stderr pack -v -o a.slab a.tar
	assert_equal "${stderr_lines[1]}" "pack: 'a.tar': 1 member, 3 B of member data, 10.0 KiB read"
}

@test "a message while the progress line shows erases it first, never goes on after it" {
	command -v script >/dev/null || skip "no script(1) to give pack a terminal"
	# s0, then after a pause (0.25 s pass: a progress line shows) s1 and s2, whose field
	# twice makes it a bad sample, skipped with a warning.
	python3 - <<'PY'
import io, tarfile
with tarfile.open("in.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for name in ("s0.txt", "s1.txt", "s2.txt", "s2.txt"):
        ti = tarfile.TarInfo(name); ti.size = 3; t.addfile(ti, io.BytesIO(b"abc"))
open("first", "w").write("%d" % tarfile.open("in.tar").getmembers()[1].offset)
PY
	first=$(cat first)
	script -qec "(head -c $first in.tar; sleep 0.5; tail -c +$((first + 1)) in.tar) | pack --on-error=skip -o out.slab 2>&1" /dev/null > tty.out
	# The progress line, then at once its erasure and the warning.
	grep -q $'\rpack: [0-9]* samples*, [^\r]*\r\e\[Kpack: \'(stdin)\': skipping: field \'txt\' appears twice in sample \'s2\'\r$' tty.out ||
		fail "$(cat -A tty.out)"
	run -0 inspect --verify out.slab
}

@test "pack -q prints nothing" {
	small_tar
	run -0 pack -q -o small.slab small.tar
	assert_output ""
}

@test "pack reads standard input and writes standard output" {
	small_tar
	pack -q -o file.slab small.tar
	pack -q -o - < small.tar > pipe.slab
	cmp file.slab pipe.slab
	cat small.tar | pack -q -o - - | cat > pipe2.slab
	cmp file.slab pipe2.slab
}

@test "pack refuses to write a .slab to a terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	small_tar
	run script -qec "pack -o - small.tar" /dev/null
	assert_output --partial "pack: refusing to write a .slab to a terminal"
	# any name of a terminal, not only standard output's: nothing written to it
	run script -qec "pack -o /dev/tty small.tar; echo status \$?" /dev/null
	assert_equal "${output//$'\r'/}" "pack: refusing to write a .slab to a terminal (redirect it, or use -o FILE)
Try 'pack --help' for more information.
status 2"
	run script -qec "pack -o /dev/stderr small.tar > out.txt; echo status \$?" /dev/null
	assert_equal "${output//$'\r'/}" "pack: refusing to write a .slab to a terminal (redirect it, or use -o FILE)
Try 'pack --help' for more information.
status 2"
	[ ! -s out.txt ]
	# a character device that is no terminal is written to
	run -0 pack -q -o /dev/null small.tar
}

@test "pack detects every compression from the bytes, not the name" {
	mktar --seed 3 --samples 20 -o in.tar
	pack -q -o plain.slab in.tar
	for z in gzip bzip2 xz zstd lz4; do
		command -v "$z" >/dev/null || skip "$z not installed"
		"$z" -c in.tar > "in.$z.bin"
		run -0 pack -q -o "$z.slab" "in.$z.bin"
		cmp plain.slab "$z.slab"
		"$z" -c in.tar | pack -q -o - > "$z.pipe.slab"
		cmp plain.slab "$z.pipe.slab"
	done
}

@test "several inputs make one dataset in the order given" {
	mktar --seed 1 --samples 10 -o a.tar
	python3 - <<'PY'
import tarfile, io
with tarfile.open("b.tar", "w") as t:
    for i in range(3):
        ti = tarfile.TarInfo("other%d.bin" % i); ti.size = 2
        t.addfile(ti, io.BytesIO(b"xy"))
PY
	gzip -c b.tar > b.tar.gz
	run -0 pack -q -o ab.slab a.tar b.tar.gz
	run -0 inspect --list ab.slab
	assert_equal "${#lines[@]}" 13
	[[ "${lines[10]}" == "10	other0	"* ]]
	[[ "${lines[12]}" == "12	other2	"* ]]
}

@test "--page-size is recorded and every page starts 4096-aligned" {
	mktar --seed 5 --samples 40 --max-size 3000 -o in.tar
	run -0 pack -q --page-size 8K -o p.slab in.tar
	run -0 inspect --json p.slab
	assert_output --partial '"page_size": 8192'
	assert_output --partial '"page-size": "8192"'
	# every sample lies inside one 8 KiB page, or starts one when larger
	inspect --list p.slab | python3 -c '
import sys
for line in sys.stdin:
    parts = line.rstrip("\n").split("\t")
    offs = [int(f.split(":")[1]) for f in parts[3:]]
    sizes = [int(f.split(":")[2]) for f in parts[3:]]
    start, size = min(offs), sum(sizes)
    rel = start - 4096
    if size > 8192:
        assert rel % 8192 == 0, line
    else:
        assert rel // 8192 == (rel + max(size, 1) - 1) // 8192, line
'
}

@test "a sample larger than a page starts a page and takes whole pages" {
	python3 - <<'PY'
import tarfile, io
with tarfile.open("big.tar", "w") as t:
    for name, size in [("a.bin", 100), ("big.bin", 10000), ("c.bin", 10)]:
        ti = tarfile.TarInfo(name); ti.size = size
        t.addfile(ti, io.BytesIO(bytes([len(name)]) * size))
PY
	run -0 pack -q --page-size 4K -o big.slab big.tar
	run -0 inspect --list big.slab
	assert_equal "${lines[0]}" "0	a	0	bin:4096:100"
	assert_equal "${lines[1]}" "1	big	1	bin:8192:10000"
	assert_equal "${lines[2]}" "2	c	4	bin:20480:10"
	run -0 inspect --verify big.slab
}

@test "--fields keeps only the named fields and counts the rest" {
	small_tar
	run -0 --separate-stderr pack -o f.slab --fields txt small.tar
	[[ "$stderr" == *"skipped 1 non-file member, 2 members of other fields" ]]
	run -0 inspect --list f.slab
	assert_equal "${#lines[@]}" 2
	assert_equal "${lines[0]}" "0	d/a	0	txt:4096:3"
}

@test "--fields: a name that no sample has is a warning, even with -q; the file is still written" {
	small_tar
	run -0 --separate-stderr pack -q -o f.slab --fields txt,jgp,nope small.tar
	assert_equal "$stderr" "pack: warning: --fields 'jgp': no sample has that field
pack: warning: --fields 'nope': no sample has that field"
	run -0 inspect --list f.slab
	assert_equal "${#lines[@]}" 2
	# every name found: no warning
	run -0 --separate-stderr pack -q -o g.slab --fields txt small.tar
	assert_equal "$stderr" ""
	# no name found: an empty dataset, still with its warning
	run -0 --separate-stderr pack -q -o h.slab --fields jgp small.tar
	assert_equal "$stderr" "pack: warning: --fields 'jgp': no sample has that field"
	run -0 inspect h.slab
	assert_line "samples:      0"
}

@test "a key appearing again later is an error naming the key and input" {
	python3 - <<'PY'
import tarfile, io
with tarfile.open("dup.tar", "w") as t:
    for name in ["a.txt", "b.txt", "a.cls"]:
        ti = tarfile.TarInfo(name); ti.size = 1
        t.addfile(ti, io.BytesIO(b"x"))
PY
	run -1 --separate-stderr pack -o dup.slab dup.tar
	assert_equal "$stderr" "pack: 'dup.tar': key 'a' appears again (first as sample 0)"
	[ ! -e dup.slab ]
	[ -z "$(ls -A | grep -v '^dup.tar$')" ]
	run -0 --separate-stderr pack -o dup.slab --on-error=skip dup.tar
	assert_equal "${stderr_lines[0]}" "pack: 'dup.tar': skipping: key 'a' appears again (first as sample 0)"
	[[ "${stderr_lines[1]}" == *"2 samples"*"; skipped 1 bad sample" ]]
}

@test "keys that all share a key index home slot pack, verify and are found" {
	# mkcollide: keys with the same low 32 bits of FNV-1a, the key index hash
	mkcollide --count 50000 | pack -q -o c.slab -
	run -0 inspect --verify c.slab
	assert_output --regexp '^c\.slab: ok, 50000 samples, '
	mkcollide --count 50000 --keys > keys
	for i in 0 1 2 31337 49999; do
		key=$(sed -n "$((i + 1))p" keys)
		inspect --get "$key" c.slab > got
		printf 'sample %d\n' "$i" | cmp - got
	done
	run -1 --separate-stderr inspect --get "${key%?}" c.slab
	assert_equal "$stderr" "inspect: 'c.slab': no sample with key '${key%?}'"
}

@test "a key appearing again among keys that share a home slot is still found" {
	mkcollide --count 1000 --dup 700,300 -o dup.tar
	key=$(mkcollide --count 1000 --keys | sed -n 301p)
	run -1 --separate-stderr pack -o dup.slab dup.tar
	assert_equal "$stderr" "pack: 'dup.tar': key '$key' appears again (first as sample 300)"
	[ ! -e dup.slab ]
}

@test "a field twice in one sample is an error; --on-error=skip drops that sample" {
	python3 - <<'PY'
import tarfile, io
with tarfile.open("dupf.tar", "w") as t:
    for name in ["a.txt", "b.txt", "b.txt", "c.txt"]:
        ti = tarfile.TarInfo(name); ti.size = 1
        t.addfile(ti, io.BytesIO(b"x"))
PY
	run -1 --separate-stderr pack -o d.slab dupf.tar
	assert_equal "$stderr" "pack: 'dupf.tar': field 'txt' appears twice in sample 'b'"
	[ ! -e d.slab ]
	run -0 --separate-stderr pack -o d.slab --on-error=skip dupf.tar
	assert_equal "${stderr_lines[0]}" "pack: 'dupf.tar': skipping: field 'txt' appears twice in sample 'b'"
	run -0 inspect --list d.slab
	assert_equal "${#lines[@]}" 2
	[[ "${lines[1]}" == "1	c	"* ]]
}

@test "--max-sample-size refuses bigger samples with a clear message" {
	python3 - <<'PY'
import tarfile, io
with tarfile.open("m.tar", "w") as t:
    for name, size in [("a.bin", 10), ("b.bin", 5000), ("b.txt", 100), ("c.bin", 10)]:
        ti = tarfile.TarInfo(name); ti.size = size
        t.addfile(ti, io.BytesIO(b"z" * size))
PY
	run -1 --separate-stderr pack -o m.slab --max-sample-size 4K m.tar
	assert_equal "$stderr" "pack: 'm.tar': sample 'b' is larger than the maximum sample size 4096 bytes"
	[ ! -e m.slab ]
	run -0 --separate-stderr pack -o m.slab --max-sample-size 4K --on-error=skip m.tar
	run -0 inspect --list m.slab
	assert_equal "${#lines[@]}" 2
}

@test "a truncated tar is an error naming the input and the last good member's offset" {
	mktar --seed 2 --samples 8 --max-size 4000 --format gnu -o in.tar
	size=$(filesize in.tar)
	head -c $((size / 2)) in.tar > cut.tar
	run -1 --separate-stderr pack -o cut.slab cut.tar
	[[ "$stderr" == "pack: 'cut.tar': truncated or corrupt archive: "*"(last good member '"*"' at offset "[0-9]*")" ]]
	[ ! -e cut.slab ]
	[ -z "$(ls -A | grep -v -e '^in.tar$' -e '^cut.tar$')" ]
}

@test "a truncated tar.gz is an error too" {
	mktar --seed 2 --samples 8 --max-size 4000 -o in.tar
	gzip -c in.tar > in.tgz
	head -c $(($(filesize in.tgz) / 2)) in.tgz > cut.tgz
	run -1 --separate-stderr pack -o cut.slab cut.tgz
	[[ "$stderr" == "pack: 'cut.tgz': truncated or corrupt archive: "* ]]
	[ ! -e cut.slab ]
	# cut inside the gzip trailer (CRC and size, 8 bytes), from a file and a pipe: libarchive
	# fails with no reason given, which is not "out of memory"
	for c in 1 4 8; do
		head -c $(($(filesize in.tgz) - c)) in.tgz > cut.tgz
		run -1 --separate-stderr pack -o cut.slab cut.tgz
		[[ "$stderr" == "pack: 'cut.tgz': truncated or corrupt archive: the input ends before its compressed stream does (last good member '"*"' at offset "[0-9]*")" ]] || fail "$c: $stderr"
		run -1 --separate-stderr pack -o cut.slab < cut.tgz
		[[ "$stderr" == "pack: '(stdin)': truncated or corrupt archive: the input ends before its compressed stream does "* ]] || fail "$c: $stderr"
		[ ! -e cut.slab ]
	done
}

# libarchive's gzip reader checks neither the CRC-32 nor the length in a gzip member's trailer:
# flipped bits in the compressed data, or in the trailer, were packed with exit status 0, the
# .slab file's own CRCs then vouching for the wrong bytes. pack inflates gzip itself (zlib).
@test "a .tar.gz whose data, CRC-32 or length do not match is an error; good ones, concatenated, padded or piped, pack as the plain tar" {
	printf 'hello world\n' > 0.cls
	printf abc > 0.txt
	tar cf s.tar 0.cls 0.txt
	python3 - <<'PY'
import gzip
t = open("s.tar", "rb").read()
g = bytearray(gzip.compress(t, 0, mtime=0)); g[g.find(b"hello")] ^= 1
open("data.tgz", "wb").write(g)
g = bytearray(gzip.compress(t, 6, mtime=0)); g[-6] ^= 1
open("crc.tgz", "wb").write(g)
g = bytearray(gzip.compress(t, 6, mtime=0)); g[-2] ^= 1
open("len.tgz", "wb").write(g)
g = bytearray(gzip.compress(t, 6, mtime=0)); g[10] |= 6    # the first block's type: 3
open("type.tgz", "wb").write(g)
PY
	run gzip -t data.tgz
	assert_failure
	for f in data.tgz:"incorrect data check":4 crc.tgz:"incorrect data check":4 \
		len.tgz:"incorrect length check":0 type.tgz:"invalid block type":-11; do
		IFS=: read -r m why back <<<"$f"
		at=$(($(filesize "$m") - back))
		[ "$back" -ge 0 ] || at=$((-back))
		last="last good member '0.txt' at offset 1024"
		[ "$m" != type.tgz ] || last="no good member before it"
		want="truncated or corrupt archive: gzip stream: $why at compressed offset $at ($last)"
		run -1 --separate-stderr pack -o x.slab "$m"
		assert_equal "$stderr" "pack: '$m': $want"
		run -1 --separate-stderr pack -o x.slab - <"$m"
		assert_equal "$stderr" "pack: '(stdin)': $want"
		run -1 --separate-stderr bash -c "cat $m | pack -o x.slab"
		assert_equal "$stderr" "pack: '(stdin)': $want"
		[ ! -e x.slab ]
	done
	# the second member of a concatenation is checked too
	gzip -c s.tar > s.tgz
	cat s.tgz crc.tgz > two.tgz
	run -1 --separate-stderr pack -o x.slab two.tgz
	assert_equal "$stderr" "pack: 'two.tgz': truncated or corrupt archive: gzip stream: incorrect data check at compressed offset $(($(filesize two.tgz) - 4)) (last good member '0.txt' at offset 11264)"
	[ ! -e x.slab ]

	# good ones: the plain tar's bytes, from a file or a pipe, whole or in members, padded
	mkwds --count 5 --prefix a -o a.tar
	mkwds --count 5 --prefix b -o b.tar
	gzip -k a.tar b.tar
	pack -q -o a.slab a.tar
	cat a.tar b.tar > ab.tar
	pack -q -o ab.slab ab.tar
	cat a.tar.gz b.tar.gz > ab.tar.gz
	{ cat a.tar.gz; head -c 3000 /dev/zero; } > pad.tar.gz
	# what -v says was read is the compressed bytes
	run -0 --separate-stderr pack -v -o x.slab s.tgz
	[[ "$stderr" == *"
pack: 's.tgz': 2 members, 15 B of member data, $(filesize s.tgz) B read
"* ]] || fail "$stderr"
	pack -q -o x.slab a.tar.gz
	cmp a.slab x.slab
	pack -q -o x.slab - < a.tar.gz
	cmp a.slab x.slab
	cat a.tar.gz | pack -q -o x.slab
	cmp a.slab x.slab
	pack -q -o x.slab ab.tar.gz
	cmp ab.slab x.slab
	cat ab.tar.gz | pack -q -o x.slab
	cmp ab.slab x.slab
	pack -q -o x.slab pad.tar.gz
	cmp a.slab x.slab
	cat pad.tar.gz | pack -q -o x.slab
	cmp a.slab x.slab
	# members --fields drops are read through, not seeked over in the compressed file
	mktar --seed 4 --samples 30 --max-size 200000 -o m.tar
	gzip -c m.tar > m.tgz
	pack -q --fields json -o m.slab m.tar
	run -0 pack -q --fields json -o x.slab m.tgz
	cmp m.slab x.slab
}

# libarchive's gzip, bzip2 and lz4 readers end at the first bytes that start no member of
# their format and leave them unread: a tar after a .tar.gz, a damaged second member of a
# concatenation, junk. Packed as the first stream alone, exit 0, before.
@test "bytes after a compressed stream that are not another one are an error, from a file and a pipe; zeros are padding" {
	mkwds --count 5 --prefix a -o a.tar
	mkwds --count 5 --prefix b -o b.tar
	mkwds --count 5 --prefix c -o c.tar
	gzip -k a.tar b.tar c.tar
	bzip2 -k b.tar
	n=$(filesize a.tar.gz)
	last=$(tar -tf a.tar | tail -1)
	cp b.tar.gz bx.tar.gz
	printf '\x1e' | dd of=bx.tar.gz bs=1 seek=1 conv=notrunc status=none
	cat a.tar.gz b.tar > m1
	cat a.tar.gz b.tar.bz2 > m2
	cat a.tar.gz bx.tar.gz c.tar.gz > m3
	for m in m1 m2 m3; do
		run -1 --separate-stderr pack -o x.slab "$m"
		[[ "$stderr" == "pack: '$m': truncated or corrupt archive: data after the end of its last gzip stream at offset $n, not read (last good member '$last' at offset "[0-9]*")" ]] ||
			fail "$m: $stderr"
		# standard input that is a file is read as a file
		run -1 --separate-stderr pack -o x.slab - <"$m"
		[[ "$stderr" == "pack: '(stdin)': truncated or corrupt archive: data after the end of its last gzip stream at offset $n, not read "* ]] ||
			fail "$m < : $stderr"
		cat "$m" | { run -1 --separate-stderr pack -o x.slab; [[ "$stderr" == "pack: '(stdin)': truncated or corrupt archive: data after the end of its last gzip stream, near offset $n, not read "* ]] || fail "$m | pack: $stderr"; }
		[ ! -e x.slab ]
	done
	# a concatenation of whole streams, and zeros after a stream (tape padding), are read whole
	cat a.tar.gz b.tar.gz > ab.tar.gz
	run -0 pack -q -o ab.slab ab.tar.gz
	[ "$(inspect --json ab.slab | python3 -c 'import json, sys; print(json.load(sys.stdin)["samples"])')" -eq 10 ]
	for z in 1 511 70000 1100000; do
		{ cat a.tar.gz; head -c "$z" /dev/zero; } >padded
		run -0 pack -q -o p.slab padded
		{ cat a.tar.gz; head -c "$z" /dev/zero; } | pack -q -o q.slab
		cmp p.slab q.slab
	done
}

# A tar cut exactly between two members is a tar written without its end-of-archive blocks,
# as libarchive (and GNU tar) read it: packed, with a warning naming the last member read.
@test "a tar that ends between two members without its end blocks: packed, with a warning; whole tars say nothing" {
	mkwds --count 30 -o w.tar
	# sample000000.jpg's header and data are blocks 0-44; .cls starts at block 45
	head -c $((45 * 512)) w.tar >cut.tar
	want="pack: warning: 'cut.tar': no end-of-archive blocks after member 'sample000000.jpg' (its header at offset 0): the input may have been cut short there"
	run -0 --separate-stderr pack -q -o cut.slab cut.tar
	assert_equal "$stderr" "$want"
	run -0 --separate-stderr bash -c "gzip -c cut.tar | pack -q -o cut.slab"
	assert_equal "$stderr" "${want/\'cut.tar\'/\'(stdin)\'}"
	[ "$(inspect --list cut.slab | wc -l)" -eq 1 ]
	run -0 --separate-stderr pack -q -o w.slab w.tar
	assert_equal "$stderr" ""
	mkwds --count 2 --prefix z -o z.tar
	run -0 --separate-stderr bash -c "cat w.tar z.tar | pack -q -o wz.slab"
	assert_equal "$stderr" ""
}

@test "a corrupt header checksum is an error" {
	mktar --seed 2 --samples 4 --format ustar -o in.tar
	second=$(python3 -c 'import tarfile; print(tarfile.open("in.tar").getmembers()[1].offset)')
	flip in.tar $((second + 3))   # inside the second member's name
	run -1 --separate-stderr pack -o x.slab in.tar
	assert_equal "$stderr" "pack: 'in.tar': truncated or corrupt archive: Damaged tar archive (last good member 'sample00000.cls' at offset 0)"
	[ ! -e x.slab ]
}

@test "input that is not a tar, missing inputs and directories fail with exit 1" {
	echo "hello world" > note.txt
	run -1 --separate-stderr pack -o x.slab note.txt
	assert_equal "$stderr" "pack: 'note.txt': not a tar archive: Unrecognized archive format"
	run -1 --separate-stderr pack -o x.slab missing.tar
	assert_equal "$stderr" "pack: 'missing.tar': No such file or directory"
	mkdir adir
	run -1 --separate-stderr pack -o x.slab adir
	assert_equal "$stderr" "pack: 'adir': is a directory"
	[ ! -e x.slab ]
}

@test "an input's first bytes never choose a program to run: lrzip, lzop, grzip and uuencode are not tars" {
	small_tar
	# A decompressor on PATH that would turn anything into small.tar, and say it ran.
	mkdir bin
	for prog in lrzip lzop grzip; do
		printf '#!/bin/sh\ntouch "%s/ran-%s"\ncat "%s/small.tar"\n' "$PWD" "$prog" "$PWD" > "bin/$prog"
		chmod +x "bin/$prog"
	done
	printf 'LRZI\000\006' > in.lrz
	printf '\211LZO\000\r\n\032\n' > in.lzo
	printf 'GRZipII\000\002\004:)' > in.grz
	head -c 64 /dev/zero | tee -a in.lrz in.lzo >> in.grz
	python3 -c 'import binascii, sys
d = open("small.tar", "rb").read()
sys.stdout.write("begin 644 small.tar\n" + "".join(binascii.b2a_uu(d[i:i + 45]).decode() for i in range(0, len(d), 45)) + "`\nend\n")' > in.uu
	for f in in.lrz in.lzo in.grz in.uu; do
		PATH="$PWD/bin:$PATH" run -1 --separate-stderr pack -o x.slab "$f"
		assert_equal "$stderr" "pack: '$f': not a tar archive: Unrecognized archive format"
	done
	[ -z "$(ls -A | grep '^ran-')" ]
	[ ! -e x.slab ]
}

@test "an empty input gives an empty, valid dataset" {
	: > empty.tar
	run -0 --separate-stderr pack -q -o e.slab empty.tar
	assert_equal "$stderr" "pack: warning: 'empty.tar': the input is empty (0 bytes): it adds no samples"
	# A pipe whose producer wrote nothing warns too; a tar of no members does not.
	run -0 --separate-stderr pack -q -o p.slab - < /dev/null
	assert_equal "$stderr" "pack: warning: '(stdin)': the input is empty (0 bytes): it adds no samples"
	tar -cf none.tar --files-from /dev/null
	run -0 --separate-stderr pack -q -o n.slab none.tar
	assert_equal "$stderr" ""
	run -0 inspect --verify e.slab
	run -0 inspect --list e.slab
	assert_output ""
}

@test "the output replaces an existing file only when complete" {
	small_tar
	echo "precious" > out.slab
	head -c 3000 small.tar > bad.tar
	run -1 pack -o out.slab bad.tar
	assert_equal "$(cat out.slab)" "precious"
	run -0 pack -q -o out.slab small.tar
	run -0 inspect --verify out.slab
}

@test "an output whose name is as long as the folder allows is written; its temporary name is cut to fit" {
	small_tar
	max=$(getconf NAME_MAX .)
	name=$(printf 'n%.0s' $(seq $((max - 5)))).slab
	assert_equal "${#name}" "$max"
	run -0 --separate-stderr pack -q -o "$name" small.tar
	assert_equal "$stderr" ""
	run -0 inspect --verify "$name"
	[ -z "$(ls -A | grep -v -e '^src$' -e '^small.tar$' -e "^$name\$")" ]
	# The same with a folder in front, and replacing the file.
	mkdir d
	run -0 pack -q -o "d/$name" small.tar
	run -0 pack -q -o "d/$name" small.tar
	assert_equal "$(ls -A d)" "$name"
	# A name too long for any file fails before anything is read.
	run -1 --separate-stderr pack -q -o "d/x$name" small.tar
	assert_equal "$stderr" "pack: 'd/x$name': cannot create a file there: File name too long"
	assert_equal "$(ls -A d)" "$name"
}

@test "an unwritable output folder fails cleanly" {
	small_tar
	run -1 --separate-stderr pack -o no/such/dir/x.slab small.tar
	[[ "$stderr" == "pack: 'no/such/dir/x.slab': cannot create a file there: No such file or directory" ]]
}

@test "disk full (file size limit) leaves no output file and exits 1" {
	mktar --seed 4 --samples 30 --max-size 20000 -o in.tar
	run -1 --separate-stderr bash -c 'ulimit -f 64; exec pack -o out.slab in.tar'
	# the offset is where the file size limit (64 blocks of 1 KiB) stopped the write
	assert_equal "$stderr" "pack: 'out.slab': write failed at offset 65536: File too large"
	[ ! -e out.slab ]
	[ -z "$(ls -A | grep -v '^in.tar$')" ]
}

@test "a killed pack leaves nothing under the output name" {
	mktar --seed 4 --samples 20 --max-size 20000 -o in.tar
	mkfifo fifo
	# Half the input, then the writer holds the pipe open: pack waits mid-stream.
	(head -c 30000 in.tar; sleep 30) > fifo &
	feeder=$!
	pack -q -o out.slab fifo &
	pid=$!
	seen=0
	for _ in $(seq 100); do
		ls -A | grep -q '^\.out\.slab\.tmp\.' && { seen=1; break; }
		sleep 0.1
	done
	assert_equal "$seen" 1
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	kill "$feeder" 2>/dev/null || true
	[ ! -e out.slab ]
	[ -z "$(ls -A | grep -v -e '^in.tar$' -e '^fifo$')" ]
}

@test "output is byte-identical whatever the number of threads" {
	mktar --seed 9 --samples 60 -o in.tar
	pack -q -j1 -o j1.slab in.tar
	pack -q -j2 -o j2.slab in.tar
	pack -q -j7 -o j7.slab in.tar
	cmp j1.slab j2.slab
	cmp j1.slab j7.slab
	pack -q -j1 -o again.slab in.tar
	cmp j1.slab again.slab
}

@test "sparse members are read with their holes as zeros" {
	truncate -s 300000 holes.bin
	printf 'head' | dd of=holes.bin conv=notrunc status=none
	printf 'tail' | dd of=holes.bin bs=1 seek=299990 conv=notrunc status=none
	tar --sparse --format=gnu -cf sparse.tar holes.bin
	tar --sparse --format=posix -cf sparse-pax.tar holes.bin
	for t in sparse.tar sparse-pax.tar; do
		run -0 pack -q -o s.slab "$t"
		inspect --get holes --field bin s.slab > back.bin
		cmp holes.bin back.bin
	done
}

@test "a sample with more than 255 fields is a bad sample, skippable" {
	python3 - <<'PY'
import tarfile, io
with tarfile.open("wide.tar", "w") as t:
    for name in ["a.f%03d" % i for i in range(256)] + ["b.x"]:
        ti = tarfile.TarInfo(name); ti.size = 1
        t.addfile(ti, io.BytesIO(b"w"))
PY
	run -1 --separate-stderr pack -o w.slab wide.tar
	assert_equal "$stderr" "pack: 'wide.tar': sample 'a' has more than 255 fields"
	run -0 --separate-stderr pack -o w.slab --on-error=skip wide.tar
	assert_equal "${stderr_lines[0]}" "pack: 'wide.tar': skipping: sample 'a' has more than 255 fields"
	run -0 inspect --list w.slab
	assert_output "0	b	0	x:4096:1"
}

@test "pack -v says a line per input" {
	mktar --seed 1 --samples 3 -o a.tar
	tar cf b.tar a.tar          # one sample, key "a", field "tar"
	run -0 --separate-stderr pack -v -o v.slab a.tar - < b.tar
	assert_equal "${stderr_lines[0]}" "pack: reading 'a.tar'"
	[[ "${stderr_lines[1]}" == "pack: 'a.tar': "*" members, "*" of member data, "*" read" ]]
	assert_equal "${stderr_lines[2]}" "pack: reading '(stdin)'"
}

@test "an output that is a FIFO or a device is written in place, never replaced" {
	small_tar
	pack -q -o want.slab small.tar
	mkfifo out.fifo
	cat out.fifo > got.slab &
	reader=$!
	run -0 pack -q -o out.fifo small.tar
	wait "$reader"
	cmp want.slab got.slab
	[ -p out.fifo ]
	[ -z "$(ls -A | grep '\.tmp\.')" ]
}

@test "v7, ustar, GNU and pax headers all read the same samples" {
	mkdir -p src && cd src
	printf 'abc' > s1.txt; printf '1' > s1.cls; printf 'defg' > s2.txt
	for fmt in v7 ustar gnu posix; do
		tar --format=$fmt --sort=name -cf ../$fmt.tar s1.cls s1.txt s2.txt
	done
	cd ..
	pack -q -o v7.slab v7.tar
	for fmt in ustar gnu posix; do
		pack -q -o $fmt.slab $fmt.tar
		cmp v7.slab $fmt.slab
	done
	run -0 inspect --list v7.slab
	assert_output "0	s1	0	cls:4096:1	txt:4097:3
1	s2	0	txt:4100:4"
}

@test "getopt's own messages name the tool, not the path it was run by" {
	run -2 --separate-stderr "$SLAB_BUILD/bin/pack" --bogus
	assert_equal "${stderr_lines[0]}" "pack: unrecognized option '--bogus'"
}

# in_flight: the peak "bytes in flight" of the pack -v run in $stderr, in bytes.
in_flight() {
	sed -n 's/^pack: bytes in flight: at most \([0-9]*\) (.*), --memory .*/\1/p' <<<"$stderr"
}

@test "--memory must be a size above 0" {
	small_tar
	run -2 --separate-stderr pack -o x.slab --memory 0 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --memory '0' (a size such as 512M, more than 0)"
	run -2 --separate-stderr pack -o x.slab --memory 1Q small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --memory '1Q' (a size such as 512M, more than 0)"
	[ ! -e x.slab ]
}

@test "--memory bounds the bytes in flight; a sample larger than it goes through alone" {
	# Sparse members named .jpg: 64 MiB each, and one of 128 MiB. --jpeg-check calls them
	# corrupt (they are zeros), but each is read whole first.
	for i in 1 2 3 4; do truncate -s 64M "s$i.jpg"; done
	truncate -s 128M big.jpg
	tar --sparse --format=gnu -cf sparse.tar s1.jpg s2.jpg big.jpg s3.jpg s4.jpg
	rm ./*.jpg
	# Two 64 MiB samples fit 160M beside each other, a third does not.
	run -0 --separate-stderr pack -v -j 4 --jpeg-check --on-error=skip --memory 160M -o m.slab sparse.tar
	peak=$(in_flight)
	[ -n "$peak" ] || fail "no bytes-in-flight line: $stderr"
	[ "$peak" -le $((160 << 20)) ] || fail "peak $peak over --memory 160M"
	# Under 100M no two samples fit: each goes alone, the peak is the largest one.
	run -0 --separate-stderr pack -v -j 4 --jpeg-check --on-error=skip --memory 100M -o m.slab sparse.tar
	assert_equal "$(in_flight)" $((128 << 20))
	[[ "$stderr" == *"skipped 5 bad samples"* ]]
}

@test "--memory bounds JPEG samples checked on threads; -j and --memory never change the output" {
	mkwds --count 30 --jpeg-bytes 20K:60K --seed 4 -o in.tar
	run -0 --separate-stderr pack -v -j 4 --jpeg-check --memory 200K -o a.slab in.tar
	peak=$(in_flight)
	[ -n "$peak" ] || fail "no bytes-in-flight line: $stderr"
	[ "$peak" -le $((200 << 10)) ] || fail "peak $peak over --memory 200K"
	# Without threads one sample is in flight: its buffer, 64 KiB or 128 KiB.
	run -0 --separate-stderr pack -v -j 1 --jpeg-check -o b.slab in.tar
	[ "$(in_flight)" -le $((128 << 10)) ]
	cmp a.slab b.slab
	# Re-encoding on threads, every budget from one sample at a time up.
	pack -q -j 1 --jpeg-check --jpeg-max-side 100 -o want.slab in.tar
	for args in "-j 2 --memory 1" "-j 2 --memory 64K" "-j 4 --memory 300K" "-j 4" "-j 3 --memory 1G"; do
		pack -q $args --jpeg-check --jpeg-max-side 100 -o got.slab in.tar
		cmp want.slab got.slab || fail "pack $args differs from -j 1"
	done
	# Not recorded: the options text is the same.
	run -0 inspect --json want.slab
	refute_output --partial memory
}
