#!/usr/bin/env bats
# prefetch --emit-format frames: the image pipeline from the shell. The stream as prefetch(1)
# FRAMES FORMAT documents it (read by test_helper/frames.py), records in plan order with the
# keys and fields --emit-format raw gives, pixels byte for byte those of imgcrop for each
# sample's global index, the same bytes whatever the threads and for a resumed plan, CHW,
# bad JPEGs under fail and skip, usage errors, and the reader of prefetch(1)'s example.

load test_helper/common

# frames_py ARGS...: python3 reading a script on stdin with test_helper/frames.py importable.
frames_py() {
	PYTHONPATH="$HELPERS" python3 - "$@"
}

# a.slab: six real JPEG samples (jpg, cls, json; sample000004 has no json); b.slab: five
# more, keys other000000 ...; q.plan a quasi plan of both with seed 7, epoch 2.
jpeg_dataset() {
	mkwds --count 6 --seed 9 -o a0.tar
	mkdir a && tar -xf a0.tar -C a && rm a/sample000004.json
	(cd a && tar --format=gnu --sort=name -cf ../a.tar -- *)
	mkwds --count 5 --seed 10 --prefix other -o b.tar
	pack -q -o a.slab a.tar
	pack -q -o b.slab b.tar
	shuffle-plan -q --mode quasi --seed 7 --epoch 2 -o q.plan a.slab b.slab
	shuffle-plan -q --mode quasi --seed 7 --epoch 2 --format text -o q.txt a.slab b.slab
}

# c.slab: six samples, the JPEG of sample000002 cut in half; c.plan sequential.
bad_dataset() {
	mkwds --count 6 --seed 9 -o c0.tar
	mkdir c && tar -xf c0.tar -C c
	head -c $(($(filesize c/sample000002.jpg) / 2)) c/sample000002.jpg > cut.jpg
	mv cut.jpg c/sample000002.jpg
	(cd c && tar --format=gnu --sort=name -cf ../c.tar -- *)
	pack -q -o c.slab c.tar
	shuffle-plan -q --mode sequential -o c.plan c.slab
}

FRAMES=(--emit --emit-format frames --image jpg)

@test "frames: the header as documented, records in plan order with the keys and fields of raw" {
	jpeg_dataset
	prefetch -q --plan q.plan --emit --emit-format raw a.slab b.slab > q.raw
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 15x9 a.slab b.slab > q.frames
	frames_py q.frames q.raw q.txt <<'PY'
import sys
from frames import read_frames, read_raw
h, recs, end = read_frames(sys.argv[1])
raw = read_raw(sys.argv[2])
plan = [tuple(map(int, line.split())) for line in open(sys.argv[3])]
assert h == dict(header_size=104, count=11, width=15, height=9, channels=3, layout=0,
                 image_bytes=405, image_block=408, seed=7, epoch=2, crop=2, flip=0,
                 fields=["cls", "json"]), h
assert end == (11, 0), end
assert len(recs) == len(raw) == len(plan) == 11
for k, (r, w) in enumerate(zip(recs, raw)):
    assert (r.file, r.index) == plan[k], (k, r.file, r.index)
    assert (r.file, r.index, r.pos, r.key) == (w.file, w.index, w.pos, w.key), (k, r, w)
    assert r.pos == k
    assert r.fields == {n: w.fields.get(n) for n in ("cls", "json")}, (k, r.key)
    assert len(r.image) == 405
# the sample without json says so, and only it
assert [r.key for r in recs if r.fields["json"] is None] == ["sample000004"]
PY
	# --fields: those, in that order; the image among them is carried too
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 8x8 --fields json,jpg a.slab b.slab > f.frames
	frames_py f.frames q.raw <<'PY'
import sys
from frames import read_frames, read_raw
h, recs, end = read_frames(sys.argv[1])
raw = read_raw(sys.argv[2])
assert h["fields"] == ["json", "jpg"] and h["header_size"] == 104 and end == (11, 0), h
for r, w in zip(recs, raw):
    assert r.fields == {"json": w.fields.get("json"), "jpg": w.fields["jpg"]}
PY
}

@test "frames: each image is imgcrop's for the sample's global index, byte for byte" {
	jpeg_dataset
	local opts seed epoch file index pos global
	# the crop and flip options, then the seed and epoch (those of the plan when not given)
	for opts in "--crop random-resized --flip --size 40x30 --seed 3 --epoch 1|3 1" \
		"--crop center --size 17x11|7 2" "--crop none --flip --size 8x8|7 2" \
		"--crop random-resized --flip --chw --size 24x24|7 2"; do
		read -r seed epoch <<< "${opts#*|}"
		opts=${opts%|*}
		prefetch -q --plan q.plan "${FRAMES[@]}" $opts a.slab b.slab > o.frames
		rm -rf img && mkdir img
		frames_py o.frames <<'PY' > list
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert end == (11, 0)
for r in recs:
    open("img/%d.rgb" % r.pos, "wb").write(r.image)
    print(r.pos, r.file, r.index)
PY
		[ "$(wc -l < list)" -eq 11 ]
		while read -r pos file index; do
			global=$index
			[ "$file" -eq 1 ] && global=$((6 + index))
			slab=a.slab
			[ "$file" -eq 1 ] && slab=b.slab
			inspect --get "#$index" --field jpg "$slab" > s.jpg
			imgcrop $opts --seed "$seed" --epoch "$epoch" --index "$global" s.jpg want.rgb > /dev/null
			cmp want.rgb "img/$pos.rgb" || fail "$opts: record $pos (file $file, sample $index) differs from imgcrop"
		done < list
	done
}

@test "frames: the same bytes with -j 1, -j 2, --ahead 1 --release; a plan resumed with --start gives the same tail" {
	jpeg_dataset
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 20x20 --flip -j 1 a.slab b.slab > j1.frames
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 20x20 --flip -j 2 a.slab b.slab > j2.frames
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 20x20 --flip --threads 3 --ahead 1 --release \
		a.slab b.slab > j3.frames
	cmp j1.frames j2.frames
	cmp j1.frames j3.frames
	shuffle-plan -q --mode quasi --seed 7 --epoch 2 --start 4 -o s.plan a.slab b.slab
	prefetch -q --plan s.plan "${FRAMES[@]}" --size 20x20 --flip -j 2 a.slab b.slab > s.frames
	frames_py j1.frames s.frames <<'PY'
import sys
from frames import read_frames
h, full, end = read_frames(sys.argv[1])
hs, tail, ends = read_frames(sys.argv[2])
assert h["count"] == 11 and hs["count"] == 7, (h["count"], hs["count"])
assert dict(h, count=0) == dict(hs, count=0)
assert end == (11, 0) and ends == (7, 0)
assert [r.pos for r in tail] == list(range(4, 11))
assert [r.raw for r in tail] == [r.raw for r in full[4:]]
PY
}

@test "frames: --chw is the planar transpose of HWC" {
	jpeg_dataset
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 15x9 --flip a.slab b.slab > hwc.frames
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 15x9 --flip --chw a.slab b.slab > chw.frames
	frames_py hwc.frames chw.frames <<'PY'
import sys
from frames import read_frames
ha, a, _ = read_frames(sys.argv[1])
hb, b, _ = read_frames(sys.argv[2])
assert (ha["layout"], hb["layout"]) == (0, 1)
W, H = 15, 9
for ra, rb in zip(a, b):
    assert ra.key == rb.key
    want = bytes(ra.image[(y * W + x) * 3 + c] for c in range(3) for y in range(H) for x in range(W))
    assert rb.image == want, ra.key
assert len(a) == len(b) == 11
PY
}

@test "frames: a JPEG that does not decode fails naming the key, or is skipped and counted" {
	bad_dataset
	run -1 --separate-stderr bash -c "prefetch -q --plan c.plan ${FRAMES[*]} --size 16x16 c.slab > f.frames"
	assert_equal "$stderr" "prefetch: 'c.slab': sample #2 'sample000002': field 'jpg': corrupt JPEG: Premature end of JPEG file"
	frames_py f.frames <<'PY'
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert end is None, "an end record after a failure"
PY
	run -0 --separate-stderr bash -c "prefetch --plan c.plan ${FRAMES[*]} --size 16x16 --on-error skip c.slab > s.frames"
	assert_equal "${stderr_lines[0]}" "prefetch: 'c.slab': sample #2 'sample000002': field 'jpg': corrupt JPEG: Premature end of JPEG file (skipped)"
	assert_regex "${stderr_lines[1]}" "^prefetch: 'c.plan': 5 samples, [0-9.]+ KiB in [0-9.]+ s, [0-9.]+ MB/s, 1 skipped$"
	assert_equal "${#stderr_lines[@]}" 2
	frames_py s.frames <<'PY'
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert h["count"] == 6 and end == (5, 1), (h["count"], end)
assert [r.key for r in recs] == ["sample%06d" % i for i in (0, 1, 3, 4, 5)]
assert [r.pos for r in recs] == [0, 1, 3, 4, 5]
PY
	# -q: the warning stays, the summary goes; the same bytes
	run -0 --separate-stderr bash -c "prefetch -q --plan c.plan ${FRAMES[*]} --size 16x16 --on-error skip -j 1 c.slab > q.frames"
	assert_equal "$stderr" "prefetch: 'c.slab': sample #2 'sample000002': field 'jpg': corrupt JPEG: Premature end of JPEG file (skipped)"
	cmp s.frames q.frames
}

@test "frames: usage errors exit 2 with one clear line" {
	jpeg_dataset
	local try="Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --plan q.plan --emit --image jpg a.slab b.slab
	assert_equal "$stderr" "prefetch: --image goes with --emit-format frames
$try"
	run -2 --separate-stderr prefetch --plan q.plan --emit --emit-format raw --size 8x8 a.slab b.slab
	assert_equal "$stderr" "prefetch: --size goes with --emit-format frames
$try"
	run -2 --separate-stderr prefetch -j 2 a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --threads goes with --emit-format frames"
	run -2 --separate-stderr prefetch --plan q.plan --on-error skip a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --on-error goes with --emit-format frames"
	run -2 --separate-stderr prefetch --plan q.plan --emit --emit-format frames a.slab b.slab
	assert_equal "$stderr" "prefetch: --emit-format frames needs --image FIELD (the image field, such as jpg) or --video FIELD
$try"
	run -2 --separate-stderr prefetch --plan q.plan --emit --emit-format zip a.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --emit-format 'zip' (tar, raw or frames)"
	local size
	for size in 0x5 10 99999x1 5x0 x5 5x 5x5x5 -5x5 ' 5x5' 5x70000; do
		run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --size "$size" a.slab b.slab
		assert_equal "$stderr" "prefetch: invalid --size '$size' (WxH, each from 1 to 65535)
$try"
	done
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --crop square a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --crop 'square' (random-resized, center or none)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --fields cls,,json a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --fields list 'cls,,json' (names separated by commas, none empty)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --fields '' a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --fields list '' (names separated by commas, none empty)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --fields cls,json,cls a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --fields list: 'cls' given twice"
	run -2 --separate-stderr prefetch --plan q.plan --emit --emit-format frames --image '' a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --image '' (the name of an image field, such as jpg)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" -j 0 a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --threads '0' (a number from 1 to 1024)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --threads 1025 a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --threads '1025' (a number from 1 to 1024)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --on-error ignore a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --on-error 'ignore' (fail or skip)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --seed -1 a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --seed '-1' (a number from 0)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --epoch 1e3 a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --epoch '1e3' (a number from 0)"
	run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --direct a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --direct does not go with --emit-format frames"
}

@test "frames: a field no file has is an error before anything is written, exit 1" {
	jpeg_dataset
	run -1 --separate-stderr prefetch --plan q.plan --emit --emit-format frames --image png a.slab b.slab
	assert_equal "$stderr" "prefetch: no file has a field 'png' (fields: cls, jpg, json)"
	assert_equal "$output" ""
	run -1 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --fields cls,nope a.slab b.slab
	assert_equal "$stderr" "prefetch: no file has a field 'nope' (fields: cls, jpg, json)"
	assert_equal "$output" ""
	# the plan is checked as with the other formats
	shuffle-plan -q --mode quasi -o a.plan a.slab
	run -1 --separate-stderr prefetch --plan a.plan "${FRAMES[@]}" a.slab b.slab
	assert_equal "$stderr" "prefetch: 'a.plan': plan does not belong to these files: the plan is for 1 file, 2 given"
	assert_equal "$output" ""
}

@test "frames: the output checks of --emit: an input as output, a reader that leaves, a full disk" {
	jpeg_dataset
	run -1 --separate-stderr bash -c "prefetch --plan q.plan ${FRAMES[*]} a.slab b.slab >> b.slab"
	assert_equal "$stderr" "prefetch: 'b.slab': output is also an input"
	run -0 --separate-stderr bash -c "set -o pipefail; prefetch -q --plan q.plan ${FRAMES[*]} a.slab b.slab | head -c 100 > /dev/null"
	assert_equal "$stderr" ""
	run -0 --separate-stderr bash -c "set -o pipefail; prefetch -v --plan q.plan ${FRAMES[*]} a.slab b.slab | head -c 1000 > /dev/null"
	assert_regex "${stderr_lines[0]}" "^prefetch: 'q.plan': the reader closed the pipe after [0-9]+ of 11 samples$"
	if [ -w /dev/full ]; then
		run -1 --separate-stderr bash -c "prefetch -q --plan q.plan ${FRAMES[*]} a.slab b.slab > /dev/full"
		assert_equal "$stderr" "prefetch: frames output: write error: No space left on device"
	fi
}

@test "frames: the reader of prefetch(1)'s example reads the stream, with and without numpy" {
	command -v man >/dev/null 2>&1 || skip "man (man-db) is not installed"
	jpeg_dataset
	MANWIDTH=200 LC_ALL=C man -l "$SLAB_ROOT/man/prefetch.1" 2>/dev/null > page.txt
	sed -n '/^ *# frames.py/,/^ *print(written, "images,", skipped, "skipped")$/p' page.txt |
		sed 's/^       //' > frames.py
	[ -s frames.py ] || fail "the frames example is not in prefetch(1)"
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 32x32 --flip a.slab b.slab > q.frames
	python3 frames.py < q.frames > out.txt
	[ "$(wc -l < out.txt)" -eq 12 ]
	assert_equal "$(tail -1 out.txt)" "11 images, 0 skipped"
	head -11 out.txt | awk '{ print $2, $3 }' | cmp - q.txt
	assert_equal "$(head -1 out.txt | cut -d' ' -f5-)" "['cls', 'json']"
	if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
		/usr/bin/python3 frames.py < q.frames | cmp - out.txt
	fi
	# cut short: the reader says so
	head -c 5000 q.frames > cut.frames
	run -1 python3 frames.py < cut.frames
	assert_output --partial "stream cut short"
}

@test "frames: the corpus JPEGs that decode come out as imgcrop makes them, the others are skipped" {
	need_corpus
	local f n=0 key
	mkdir src
	for f in "$CORPUS"/jpeg/*.jpg; do
		cp "$f" "src/$(printf 'img%03d' "$n").jpg"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || skip "no JPEGs in the corpus"
	(cd src && tar --format=gnu --sort=name -cf ../corpus.tar -- *)
	pack -q -o corpus.slab corpus.tar
	shuffle-plan -q --mode sequential -o s.plan corpus.slab
	prefetch -q --plan s.plan "${FRAMES[@]}" --size 48x32 --flip --seed 5 --on-error skip \
		corpus.slab > c.frames 2> err
	rm -rf img && mkdir img
	frames_py c.frames <<'PY' > keys
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert end[0] + end[1] == h["count"], (end, h["count"])
for r in recs:
    open("img/%s.rgb" % r.key, "wb").write(r.image)
    print(r.key)
PY
	for ((i = 0; i < n; i++)); do
		key=$(printf 'img%03d' "$i")
		if imgcrop --crop random-resized --flip --size 48x32 --seed 5 --epoch 0 --index "$i" \
			"src/$key.jpg" want.rgb > /dev/null 2>&1; then
			cmp want.rgb "img/$key.rgb" || fail "$key differs from imgcrop"
		else
			[ ! -e "img/$key.rgb" ] || fail "$key does not decode with imgcrop but has a record"
		fi
	done
}

# concat_check ALL ONE...: the stream ALL of several plans is the streams ONE... of each plan
# alone put end to end, as prefetch(1) says (Epochs larger than memory): the first one's
# header with the count of all, the records of each in turn, one end record counting them all.
concat_check() {
	frames_py "$@" <<'PY'
import struct, sys
from frames import read_frames
whole = open(sys.argv[1], "rb").read()
parts = [open(p, "rb").read() for p in sys.argv[2:]]
read = [read_frames(p) for p in sys.argv[2:]]
hsize = read[0][0]["header_size"]
count = sum(h["count"] for h, _, _ in read)
written = sum(e[0] for _, _, e in read)
skipped = sum(e[1] for _, _, e in read)
head = bytearray(parts[0][:hsize])
struct.pack_into("<Q", head, 16, count)
want = bytes(head) + b"".join(p[hsize:-40] for p in parts)
want += b"DONE" + struct.pack("<IQQ", 0, written, skipped) + bytes(16)
assert whole == want, "not the streams of the plans one by one put end to end"
h, recs, end = read_frames(sys.argv[1])
assert h == dict(read[0][0], count=count) and end == (written, skipped), (h, end)
assert [r.pos for r in recs] == [r.pos for _, rs, _ in read for r in rs]
PY
}

@test "frames: several plans are consecutive epochs: the plans' streams one by one, framed once; --memory changes no byte" {
	jpeg_dataset
	shuffle-plan -q --mode random --seed 3 --epoch 5 -o r.plan a.slab b.slab
	shuffle-plan -q --mode quasi --seed 7 --epoch 6 --start 4 -o s.plan a.slab b.slab
	local p opts=(-q "${FRAMES[@]}" --size 12x10 --flip)
	for p in q r s; do
		prefetch --plan $p.plan "${opts[@]}" a.slab b.slab > $p.frames
	done
	prefetch --plan q.plan --plan r.plan --plan s.plan "${opts[@]}" a.slab b.slab > all.frames
	concat_check all.frames q.frames r.frames s.frames
	# each plan's crops come from its own epoch: the epochs differ, so do the images
	frames_py q.frames r.frames <<'PY'
import sys
from frames import read_frames
a = {r.key: r.image for r in read_frames(sys.argv[1])[1]}
b = {r.key: r.image for r in read_frames(sys.argv[2])[1]}
assert any(a[k] != b[k] for k in a), "epochs 2 and 5 gave the same crops"
PY
	# a budget, either policy, and -j, --ahead, --release: the same bytes
	prefetch --plan q.plan --plan r.plan --plan s.plan "${opts[@]}" --memory 64K a.slab b.slab > m.frames
	cmp all.frames m.frames
	prefetch --plan q.plan --plan r.plan --plan s.plan "${opts[@]}" --memory 1M --cache-policy fixed \
		-j 3 --ahead 2 --release a.slab b.slab > f.frames
	cmp all.frames f.frames
	prefetch --plan q.plan "${opts[@]}" --memory 1G a.slab b.slab > m1.frames
	cmp q.frames m1.frames
	# --seed and --epoch given hold for every plan
	for p in q r; do
		prefetch --plan $p.plan "${opts[@]}" --seed 11 --epoch 9 a.slab b.slab > $p.9.frames
	done
	prefetch --plan q.plan --plan r.plan "${opts[@]}" --seed 11 --epoch 9 a.slab b.slab > all.9.frames
	concat_check all.9.frames q.9.frames r.9.frames
	# a line per epoch, then the summary
	run -0 --separate-stderr bash -c "prefetch --plan q.plan --plan r.plan ${FRAMES[*]} --size 12x10 a.slab b.slab > /dev/null"
	assert_equal "${#stderr_lines[@]}" 3
	assert_regex "${stderr_lines[0]}" "^prefetch: 'q.plan': epoch 1 of 2: 11 samples, [0-9.]+ KiB in [0-9.]+ s, [0-9.]+ samples/s, read from storage "
	assert_regex "${stderr_lines[1]}" "^prefetch: 'r.plan': epoch 2 of 2: 11 samples, "
	assert_regex "${stderr_lines[2]}" "^prefetch: 2 plans: 22 samples, [0-9.]+ KiB in [0-9.]+ s, [0-9.]+ MB/s$"
}

@test "frames: several plans with skipped samples: one warning, the end record counts them all" {
	bad_dataset
	shuffle-plan -q --mode random --seed 4 -o r.plan c.slab
	local p opts=(-q "${FRAMES[@]}" --size 16x16 --on-error skip)
	for p in c r; do
		prefetch --plan $p.plan "${opts[@]}" c.slab > $p.frames 2> /dev/null
	done
	run -0 --separate-stderr bash -c "prefetch --plan c.plan --plan r.plan ${opts[*]} c.slab > all.frames"
	assert_equal "$stderr" "prefetch: 'c.slab': sample #2 'sample000002': field 'jpg': corrupt JPEG: Premature end of JPEG file (skipped)"
	concat_check all.frames c.frames r.frames
	frames_py all.frames <<'PY'
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert h["count"] == 12 and end == (10, 2), (h["count"], end)
PY
	# without skip, the first bad sample ends the stream, without an end record
	run -1 --separate-stderr bash -c "prefetch -q --plan r.plan --plan c.plan ${FRAMES[*]} --size 16x16 c.slab > f.frames"
	assert_equal "$stderr" "prefetch: 'c.slab': sample #2 'sample000002': field 'jpg': corrupt JPEG: Premature end of JPEG file"
	frames_py f.frames <<'PY'
import sys
from frames import read_frames
assert read_frames(sys.argv[1])[2] is None
PY
}

@test "frames: --max-pixels refuses larger images as samples that do not decode; none lifts the limit" {
	jpeg_dataset
	local try="Try 'prefetch --help' for more information."
	for v in 0 -1 1e6 '' 10x 18446744073709551615 18446744073709551616; do
		run -2 --separate-stderr prefetch --plan q.plan "${FRAMES[@]}" --max-pixels "$v" a.slab b.slab
		assert_equal "$stderr" "prefetch: invalid --max-pixels '$v' (a number from 1, or none)
$try"
	done
	run -2 --separate-stderr prefetch --plan q.plan --emit --emit-format raw --max-pixels 100 a.slab b.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --max-pixels goes with --emit-format frames"
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 8x8 a.slab b.slab > d.frames
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 8x8 --max-pixels none a.slab b.slab > n.frames
	prefetch -q --plan q.plan "${FRAMES[@]}" --size 8x8 --max-pixels 178956970 a.slab b.slab > l.frames
	cmp d.frames n.frames
	cmp d.frames l.frames
	# every JPEG of mkwds is larger than 100 pixels
	run -1 --separate-stderr bash -c "prefetch -q --plan q.plan ${FRAMES[*]} --size 8x8 --max-pixels 100 a.slab b.slab > f.frames"
	assert_regex "$stderr" "^prefetch: '[ab].slab': sample #[0-9]+ '[a-z0-9]+': .*100 pixels"
	run -0 --separate-stderr bash -c "prefetch -q --plan q.plan ${FRAMES[*]} --size 8x8 --max-pixels 100 --on-error skip a.slab b.slab > s.frames"
	assert_regex "$stderr" "100 pixels.* \(skipped\)$"
	frames_py s.frames <<'PY'
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert h["count"] == 11 and recs == [] and end == (0, 11), (h["count"], len(recs), end)
PY
}
