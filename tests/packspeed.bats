#!/usr/bin/env bats
# pack's fast read and write paths give the bytes pack gave before them: each output below
# against a SHA-256 made by pack before those paths (commit 4e04c5c), over inputs made here
# deterministically, whatever the page size, the thread count, the compression, a pipe in or
# out: buffer boundaries, members larger than a page or than the write buffer, empty members,
# long names, sparse members.

load test_helper/common

# What the references cover: every byte of the .slab but the header's magic, format version
# and options record (they name versions: pack's, the format's) and the three checksums
# over them (the header's, its copy in the trailer and the trailer's own). The page size,
# the pages, their padding, the table, keys, index and the rest of the trailer are all in.
declare -gA REF=(
	[big_1M]=3c4241162f4576f390251c60813c4680b8a9211bd73171480c71e2309bdb4e31
	[big_2M]=991d91bd1fcb7f69328c84ee0b9759f5e49eda91f47be8177dda101500b29593
	[big_4K]=7dc1bbc7ee026e01bab5dcabc869bb64e1dada1cf014ae5551a88f21384a58b4
	[big_8M]=cb8dabefa79889f2f80b98486ba471a4933629c54f94f9c8c9f8526ea0b1ce8f
	[big_fields]=bf4fd2466d8bb49453dc69a810c81a52c8de6fe807e36392d9ecf7677f159036
	[gnu_2M]=efbd5a2a6f191347ebf54cae6a4d603b83663be19c41060010aec4404db2f0f5
	[gnu_4K]=6d235812bf7fa1a96bdb5ac5d0cbb8aacd653c1231502d2929a88b27372c038f
	[pax_16K]=367a7699d07ee0f2a36472395119b6e38f76a306139247a46844e0b759b7ebab
	[pax_2M]=88cbfe344dc43dd6304973c7237d962db07d776c69955e7761d8ee48a099156f
	[pax_4K]=ea1bda2d506589dc59a6529bc749ee0fd68b9990cd8d9a4c26e9731cac1c5614
	[sparse_64k]=84a3af42e88e7e0e09b786e0352dadeb17392d6790bdea7aa667f8b0c027182c
	[two_2M]=f41b622746cea0cc430a381ecfa4df4e8bfabcc8617367abff8d1e1e7455ef38
	[wds_2M]=a31df6f7da74ba7d042a13dd362d1b9fbb3e642d0e89c5c69836ceb04ccd4313
	[wds_4K]=7ecfc32278aaa45ac11290b475142764f702f64ea061fb27983a4c9abafbdeb8
	[wds_64K]=011e1746f5f9689c73820bb1b50c973538a451b210ed8bfbb6825606f610d810
	[wds_check]=9f6bc4f0cecd71262828819fbbd4d2dbd82cc0a863fabb260df9ed75650e1f3b
	[wds_jpg]=9d2134405235732fe80a3ad149580c572bdbba575799ce294affc5db660e96b5
)

# The inputs' own SHA-256s: mkwds encodes its JPEGs with the libjpeg-turbo it was built
# with, mktar.py uses Python's tarfile and random. Where these make other bytes, the
# references do not apply and the tests that need them skip.
declare -gA INPUT=(
	[big]=d7731d4c79db26ad0a2fc15052f0e00bcac944a32378139a355a23577b570984
	[gnu]=e26b1b3c0d80502a07148e053d012196bc573e2fb8fcfbe4ef2426bd25a94cca
	[pax]=8d0cc1e28037bb9bbb1a7234d343f04ed1252cd2a155895091443fc2b2acc1b6
	[wds]=7ec9ecce08906991807d45770ac497ace71e1bad08b0b2724ee9454d699d31c9
)

# slabsum FILE: the SHA-256 of FILE without the bytes named above.
slabsum() {
	python3 - "$1" <<'PY'
import hashlib, sys
d = open(sys.argv[1], "rb").read()
assert len(d) >= 4096 + 64 and d[:8] == b"\x89SLAB\r\n\x1a", "not a .slab"
print(hashlib.sha256(d[12:32] + d[4096:len(d) - 20] + d[len(d) - 16:len(d) - 4]).hexdigest())
PY
}

# PACKSPEED_MAKE_REFS=FILE: instead of checking, append the sums as the tables' lines to
# FILE. How the tables were made, with the pack of the commit named at the top:
#   git worktree add /tmp/pack-old 4e04c5c && make -C /tmp/pack-old -j2
#   SLAB_BUILD=/tmp/pack-old/build PACKSPEED_MAKE_REFS=/tmp/refs bats tests/packspeed.bats
made() {
	echo "	[$1]=$2" >> "$PACKSPEED_MAKE_REFS"
}

# input NAME FILE: skip unless FILE has the bytes the references were made from.
input() {
	local sum
	sum=$(sha256sum "$2" | cut -d' ' -f1)
	if [ -n "${PACKSPEED_MAKE_REFS:-}" ]; then
		made "$1" "$sum"
		return
	fi
	[ "$sum" = "${INPUT[$1]:-}" ] ||
		skip "input $1 is not the one the references were made from ($sum): other libraries here"
}

# expect NAME FILE: FILE is a .slab whose bytes are those of reference NAME.
expect() {
	local sum
	sum=$(slabsum "$2")
	if [ -n "${PACKSPEED_MAKE_REFS:-}" ]; then
		made "$1" "$sum"
		return
	fi
	[ "$sum" = "${REF[$1]:-}" ] || fail "$1: $2 has sum $sum, want ${REF[$1]:-(none)}"
}

# Small JPEG samples (about 10 to 20 KB a picture): most are larger than a 4K page.
wds_small() {
	mkwds --count 40 --seed 3 -o wds.tar
	input wds wds.tar
}

# pax headers: long keys (over 100 bytes), empty members, dotted folders, six fields.
pax_tar() {
	mktar --format pax --seed 7 --samples 60 -o pax.tar
	input pax pax.tar
}

# Members up to 4.3 MB, larger than pack's read and write buffers.
big_tar() {
	mktar --format pax --seed 11 --samples 8 --max-size 1500000 -o big.tar
	input big big.tar
}

@test "packspeed: JPEG samples at page sizes 4K, 64K and 2M" {
	wds_small
	for ps in 4K 64K 2M; do
		pack -q --page-size "$ps" -o "wds-$ps.slab" wds.tar
		expect "wds_$ps" "wds-$ps.slab"
	done
}

@test "packspeed: --image-check on 1, 2 and 5 threads, with and without a small --memory" {
	wds_small
	for j in 1 2 5; do
		pack -q --image-check -j "$j" --page-size 16K -o "j$j.slab" wds.tar
		expect wds_check "j$j.slab"
	done
	pack -q --image-check -j 3 --memory 20K --page-size 16K -o m.slab wds.tar
	expect wds_check m.slab
}

@test "packspeed: pax long names, empty members, dotted keys at page sizes 4K, 16K and 2M" {
	pax_tar
	for ps in 4K 16K 2M; do
		pack -q --page-size "$ps" -o "pax-$ps.slab" pax.tar
		expect "pax_$ps" "pax-$ps.slab"
	done
}

@test "packspeed: GNU long names at page sizes 4K and 2M" {
	mktar --format gnu --seed 8 --samples 60 -o gnu.tar
	input gnu gnu.tar
	for ps in 4K 2M; do
		pack -q --page-size "$ps" -o "gnu-$ps.slab" gnu.tar
		expect "gnu_$ps" "gnu-$ps.slab"
	done
}

@test "packspeed: members of several MiB at page sizes 4K, 1M, 2M and 8M" {
	big_tar
	for ps in 4K 1M 2M 8M; do
		pack -q --page-size "$ps" -o "big-$ps.slab" big.tar
		expect "big_$ps" "big-$ps.slab"
	done
}

@test "packspeed: sparse members come back with their holes as zeros" {
	mkdir x
	python3 - <<'PY'
import random
rnd = random.Random(5)
with open("x/s1.bin", "wb") as f:      # data, a 1 MiB hole, data, a hole to the end
    f.write(rnd.randbytes(10000))
    f.seek(10000 + (1 << 20))
    f.write(rnd.randbytes(70000))
    f.truncate(3 << 20)
with open("x/s1.cls", "wb") as f:
    f.write(b"7")
with open("x/s2.bin", "wb") as f:      # a hole first
    f.seek(200000)
    f.write(rnd.randbytes(5000))
PY
	(cd x && tar --sparse --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 \
		-cf ../sparse.tar s1.bin s1.cls s2.bin)
	pack -q --page-size 64K -o sparse.slab sparse.tar
	expect sparse_64k sparse.slab
}

@test "packspeed: gzip and zstd inputs give the plain tar's bytes" {
	wds_small
	pax_tar
	gzip -n -c pax.tar > pax.tar.gz
	zstd -q -c wds.tar > wds.tar.zst
	pack -q --page-size 16K -o gz.slab pax.tar.gz
	expect pax_16K gz.slab
	pack -q --page-size 64K -o zst.slab wds.tar.zst
	expect wds_64K zst.slab
}

@test "packspeed: a pipe in, a pipe out, standard output to a file" {
	wds_small
	cat wds.tar | pack -q --page-size 64K -o in.slab -
	expect wds_64K in.slab
	pack -q --page-size 64K -o - wds.tar | cat > out.slab
	expect wds_64K out.slab
	pack -q --page-size 64K -o - wds.tar > stdout.slab
	expect wds_64K stdout.slab
	big_tar
	cat big.tar | pack -q --page-size 1M -o - - | cat > big.slab
	expect big_1M big.slab
}

@test "packspeed: several inputs, concatenated archives, --fields" {
	wds_small
	pax_tar
	pack -q --page-size 2M -o two.slab wds.tar pax.tar
	expect two_2M two.slab
	# One file of two archives: the second is read past the first one's end blocks.
	cat wds.tar pax.tar > cat.tar
	pack -q --page-size 2M -o cat.slab cat.tar
	expect two_2M cat.slab
	# Dropped fields are skipped over, not read: the reads go on from a new offset.
	pack -q --fields jpg --page-size 16K -o jpg.slab wds.tar
	expect wds_jpg jpg.slab
	big_tar
	pack -q --fields cls,json --page-size 4K -o big.slab big.tar
	expect big_fields big.slab
}

@test "packspeed: a write that fails on the write thread stops the pack cleanly" {
	big_tar
	# A file size limit of 2 MiB: the write thread's write fails there, the reading
	# thread hears of it, the message is the one a write on the reading thread gave.
	run -1 --separate-stderr bash -c 'ulimit -f 2048; exec pack -o out.slab big.tar'
	assert_equal "$stderr" "pack: 'out.slab': write failed at offset 2097152: File too large"
	[ ! -e out.slab ]
	no_temporaries
}
