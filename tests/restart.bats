#!/usr/bin/env bats
# pack --jpeg-restart and the image pipeline's decode of a crop from the restart marker before
# it: markers added without loss (PIL decodes the input's pixels from the rewritten JPEG, byte
# for byte; APPn and COM markers kept), recorded as the RESTART field flag and the jpeg-restart
# option; progressive, arithmetic-coded and 12-bit JPEGs kept as they are; the same output
# whatever -j; crops decoded from a part of the JPEG equal to those decoded without
# (SLAB_JPEG_RESTART=0 forces the old decode, =require the new one), through imgcrop and
# through slab.Loader; the C unit test of lib/dataset/jpegrst.c holds the same on every
# subsampling, odd sizes and the corpus JPEGs. Test pictures come from mkwds and from PIL
# (/usr/bin/python3's python3-pil).

load test_helper/common

need_pil() {
	/usr/bin/python3 -c 'import PIL.Image' 2>/dev/null || skip "no PIL for /usr/bin/python3 (python3-pil)"
}

# j.tar: 16 mkwds samples (baseline 4:2:0 JPEGs of various sizes, cls, json).
jpegs() {
	mkwds --count 16 --seed 7 --jpeg-bytes 8K:40K -o j.tar
}

# odd.tar: PIL's JPEGs: 4:4:4, 4:2:2, grey, odd sizes, and one with EXIF, an ICC profile and
# a comment (emeta); prog.jpg, a progressive one, kept aside.
odd_jpegs() {
	mkdir -p odd
	/usr/bin/python3 - <<'PY'
import random
from PIL import Image

def picture(w, h, mode, seed):
    rnd = random.Random(seed)
    im = Image.new(mode, (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            v = ((x * 7 + y * 3) % 256, (x ^ y) & 255, (x // 9 * 40 + y // 7 * 30) % 256)
            n = rnd.randrange(-25, 26)
            c = tuple(max(0, min(255, a + n)) for a in v)
            px[x, y] = c if mode == "RGB" else c[0]
    return im

picture(301, 203, "RGB", 1).save("odd/a444.jpg", quality=92, subsampling=0)
picture(177, 250, "RGB", 2).save("odd/b422.jpg", quality=80, subsampling=1)
picture(257, 129, "L", 3).save("odd/cgrey.jpg", quality=85)
picture(33, 17, "RGB", 4).save("odd/dtiny.jpg", quality=90)
exif = Image.Exif()
exif[0x010E] = "a test picture"
picture(200, 150, "RGB", 5).save("odd/emeta.jpg", quality=90, exif=exif.tobytes(),
                                 icc_profile=b"\0" * 300, comment=b"hello")
picture(240, 160, "RGB", 6).save("prog.jpg", quality=90, progressive=True)
PY
	for f in odd/*.jpg; do
		printf '%s' "$(basename "$f" .jpg)" > "${f%.jpg}.cls"
	done
	(cd odd && tar --sort=name -cf ../odd.tar ./*)
}

# samepixels A.tar B.tar: every jpg member decodes (PIL) to the same pixels in both, in the
# same order; prints how many there are, how many differ in bytes and the restart intervals of
# B's ("rows" for one an MCU row).
samepixels() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
from PIL import Image

def jpgs(path):
    with tarfile.open(path) as t:
        return [(m.name, t.extractfile(m).read()) for m in t if m.isfile() and m.name.endswith(".jpg")]

def dri(b):
    i, row, dri = 2, 0, 0
    while i + 4 <= len(b) and b[i] == 0xFF:
        m, n = b[i + 1], b[i + 2] << 8 | b[i + 3]
        if m in (0xC0, 0xC1, 0xC2):
            w, nc = b[i + 7] << 8 | b[i + 8], b[i + 9]
            hmax = 1 if nc == 1 else max(b[i + 11 + 3 * c] >> 4 for c in range(nc))
            row = (w + 8 * hmax - 1) // (8 * hmax)
        if m == 0xDD:
            dri = b[i + 4] << 8 | b[i + 5]
        if m == 0xDA:
            break
        i += 2 + n
    return "rows" if dri and dri == row else dri

a, b = jpgs(sys.argv[1]), jpgs(sys.argv[2])
assert [n for n, _ in a] == [n for n, _ in b], "members differ"
changed, intervals = 0, set()
for (name, x), (_, y) in zip(a, b):
    ix, iy = Image.open(io.BytesIO(x)), Image.open(io.BytesIO(y))
    assert (ix.mode, ix.size) == (iy.mode, iy.size), name
    assert ix.tobytes() == iy.tobytes(), f"{name}: pixels differ"
    changed += x != y
    intervals.add(dri(y))
print(len(a), changed, sorted(intervals, key=str))
PY
}

# flags FILE: the jpg fields' flags in FILE, through slab.py, one line (both backends agree).
flags() {
	local lib out prev=
	for lib in ${LIBSLAB:+$LIBSLAB} none; do
		out=$(SLAB_LIBRARY=$lib pyslab - "$1" <<'PY'
import sys, slab
ds = slab.Dataset(sys.argv[1])
print(" ".join(hex(ds[i].field("jpg").flags) for i in range(len(ds)) if "jpg" in ds[i].fields))
PY
)
		[ -z "$prev" ] || [ "$out" = "$prev" ] || fail "slab.py backends differ: '$prev' vs '$out'"
		prev=$out
	done
	echo "$prev"
}

@test "pack --jpeg-restart adds restart markers without changing a pixel, flagged and recorded" {
	need_pil
	jpegs
	pack -q -o plain.slab j.tar
	pack -q --jpeg-restart=rows -o rows.slab j.tar
	pack -q --jpeg-restart=2 -o two.slab j.tar
	pack -q --jpeg-restart -o four.slab j.tar
	inspect --tar plain.slab > plain.tar
	run -0 tarcmp j.tar plain.tar
	inspect --tar rows.slab > rows.tar
	inspect --tar two.slab > two.tar
	# every JPEG rewritten, one interval an MCU row, then at most 2 MCUs (1 for odd rows)
	run -0 samepixels j.tar rows.tar
	assert_output "16 16 ['rows']"
	run -0 samepixels j.tar two.tar
	assert_output "16 16 [1, 2]"
	# alone: at most 4 MCUs
	inspect --tar four.slab > four.tar
	run -0 samepixels j.tar four.tar
	assert_output "16 16 [1, 3, 4]"
	run -0 flags plain.slab
	assert_output "$(printf '0x3 %.0s' {1..16} | sed 's/ $//')"
	run -0 flags rows.slab
	assert_output "$(printf '0x23 %.0s' {1..16} | sed 's/ $//')"
	run -0 inspect plain.slab
	assert_line "  jpeg-restart=0"
	run -0 inspect rows.slab
	assert_line "  jpeg-restart=rows"
	run -0 inspect two.slab
	assert_line "  jpeg-restart=2"
	assert_line "format:       slab 1.3"
	run -0 inspect four.slab
	assert_line "  jpeg-restart=4"
}

@test "pack --jpeg-restart: 4:4:4, 4:2:2, grey, odd sizes; EXIF, ICC profile, comment and JFIF kept" {
	need_pil
	odd_jpegs
	pack -q --jpeg-restart=3 -o odd.slab odd.tar
	inspect --tar odd.slab > back.tar
	run -0 samepixels odd.tar back.tar
	assert_output --regexp '^5 5 '
	# the markers before the frame, byte for byte and in order
	run -0 /usr/bin/python3 - odd.tar back.tar <<'PY'
import sys, tarfile

def segments(b):
    out, i = [], 2
    while b[i] == 0xFF and b[i + 1] != 0xDA:
        n = b[i + 2] << 8 | b[i + 3]
        if 0xE0 <= b[i + 1] <= 0xEF or b[i + 1] == 0xFE:
            out.append(b[i:i + 2 + n])
        i += 2 + n
    return out

def meta(path):
    with tarfile.open(path) as t:
        return segments(t.extractfile(t.getmember("./emeta.jpg")).read())

a, b = meta(sys.argv[1]), meta(sys.argv[2])
assert a == b, (a, b)
print(sorted({s[1] for s in a}))
PY
	assert_output "[224, 225, 226, 254]"
}

@test "progressive, arithmetic-coded and 12-bit JPEGs, and ones with bytes after their end, are kept byte for byte, unflagged" {
	need_pil
	odd_jpegs
	mkdir -p k
	cp prog.jpg k/p.jpg
	printf 'p' > k/p.cls
	# an MPO of two pictures (the second found by its offset), and bytes appended to a JPEG
	/usr/bin/python3 -c '
from PIL import Image
a, b = Image.open("odd/a444.jpg"), Image.open("odd/b422.jpg").resize((301, 203))
a.save("k/m.jpg", "MPO", save_all=True, append_images=[b])'
	cat odd/a444.jpg > k/t.jpg
	printf 'appended' >> k/t.jpg
	if [ -d "$CORPUS" ]; then
		cp "$CORPUS/jpeg/testimgari.jpg" k/q.jpg
		cp "$CORPUS/jpeg/monkey12.jpg" k/r.jpg
	fi
	(cd k && tar --sort=name -cf ../k.tar ./*)
	pack -q --jpeg-restart=rows -o k.slab k.tar
	inspect --tar k.slab > back.tar
	run -0 tarcmp k.tar back.tar
	# (pack cannot read a 12-bit JPEG's header: plain bytes, no JPEG flag)
	run -0 flags k.slab
	assert_output --regexp '^0x3 0x3( 0x3 0x1)? 0x3$'
}

@test "a crop decodes from the marker before it to the pixels it has without (imgcrop)" {
	jpegs
	pack -q --jpeg-restart=rows -o rows.slab j.tar
	pack -q --jpeg-restart=1 -o one.slab j.tar
	mkdir rows one
	(cd rows && inspect --tar ../rows.slab | tar -x)
	(cd one && inspect --tar ../one.slab | tar -x)
	run -0 env PYTHONPATH="$HELPERS" python3 - rows/*.jpg one/*.jpg <<'PY'
import sys
from imgbatch import ImgCrop
n = 0
with ImgCrop(env={"SLAB_JPEG_RESTART": "require"}) as req, \
        ImgCrop(env={"SLAB_JPEG_RESTART": "0"}) as old:
    for f in sys.argv[1:]:
        for args in (("--size", "224x224", "--seed", 1), ("--size", "64x48", "--seed", 2, "--flip"),
                     ("--size", "32x32", "--seed", 3),
                     ("--size", "17x23", "--seed", 4, "--resize", "nearest")):
            for i in 0, 1, 2:
                what = "%s %s --index %d" % (f, " ".join(map(str, args)), i)
                a = req.run("--crop", "random-resized", *args, "--index", i, f, "a.raw")
                assert a[0] == 0, "%s: %s" % (what, a[1])
                b = old.run("--crop", "random-resized", *args, "--index", i, f, "b.raw")
                assert open("a.raw", "rb").read() == open("b.raw", "rb").read(), \
                    "%s: the pixels differ" % what
                assert a == b, "%s: %s vs %s" % (what, a, b)
                n += 1
print("ok", n)
PY
	assert_output "ok 384"
}

@test "SLAB_JPEG_RESTART=require says why a JPEG cannot be decoded from a marker; unset, it decodes as before" {
	need_pil
	jpegs
	odd_jpegs
	tar -xf j.tar sample000003.jpg
	for f in sample000003.jpg prog.jpg; do
		SLAB_JPEG_RESTART=0 imgcrop --crop random-resized --size 32x32 --seed 9 "$f" a.raw
		imgcrop --crop random-resized --size 32x32 --seed 9 "$f" b.raw
		cmp a.raw b.raw
	done
	SLAB_JPEG_RESTART=require run -1 --separate-stderr imgcrop --crop random-resized --size 32x32 \
		--seed 9 sample000003.jpg c.raw
	assert_equal "$stderr" "imgcrop: 'sample000003.jpg': JPEG not decoded from a restart marker: no restart markers"
	SLAB_JPEG_RESTART=require run -1 --separate-stderr imgcrop --crop random-resized --size 32x32 \
		--seed 9 prog.jpg c.raw
	assert_equal "$stderr" "imgcrop: 'prog.jpg': JPEG not decoded from a restart marker: progressive"
	# the whole image is never a part: nothing to say
	SLAB_JPEG_RESTART=require run -0 imgcrop --crop none --exact prog.jpg c.raw
}

@test "a JPEG whose restart markers go wrong below the crop is decoded whole at the crop's own place" {
	need_pil
	odd_jpegs
	pack -q --jpeg-restart=1 -o odd.slab odd.tar
	inspect --tar odd.slab | tar -x ./a444.jpg
	# the marker before the last MCU row (38 MCUs a row, 26 rows) renumbered: no part that
	# holds the row below a crop can be made, the rows above it still decode
	python3 - a444.jpg <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
m = [i for i in range(len(b) - 1) if b[i] == 0xFF and 0xD0 <= b[i + 1] <= 0xD7]
assert len(m) == 38 * 26 - 1, len(m)
i = m[25 * 38 - 1]
b[i + 1] = 0xD0 + (b[i + 1] - 0xD0 + 3) % 8
open("late.jpg", "wb").write(bytes(b))
PY
	SLAB_JPEG_RESTART=require run -1 --separate-stderr imgcrop --crop random-resized --size 8x8 \
		--seed 5 late.jpg c.raw
	assert_equal "$stderr" "imgcrop: 'late.jpg': JPEG not decoded from a restart marker: restart markers out of order"
	# the old decode's crops, not ones shifted by where the part would have started
	SLAB_JPEG_RESTART=0 imgcrop --crop random-resized --size 8x8 --seed 5 late.jpg a.raw
	imgcrop --crop random-resized --size 8x8 --seed 5 late.jpg b.raw
	cmp a.raw b.raw
	# (the old decode fails on crops whose rows reach the bad marker)
	for seed in $(seq 1 40); do
		rm -f a.raw b.raw
		SLAB_JPEG_RESTART=0 imgcrop --crop random-resized --size 8x8 --seed "$seed" late.jpg \
			a.raw 2>/dev/null || continue
		imgcrop --crop random-resized --size 8x8 --seed "$seed" late.jpg b.raw
		cmp a.raw b.raw
	done
}

@test "a grey JPEG whose one component is sampled 2x2 (PIL's subsampling=2) is decoded from its markers" {
	need_pil
	/usr/bin/python3 - <<'PY'
import random
from PIL import Image
rnd = random.Random(5)
im = Image.new("L", (203, 150))
im.putdata([(x * 3 + y * 5 + rnd.randrange(40)) % 256 for y in range(150) for x in range(203)])
im.save("g.jpg", quality=90, subsampling=2)
PY
	# the frame says 0x22 for the lone component
	run -0 python3 -c 'b = open("g.jpg", "rb").read(); i = b.index(b"\xff\xc0"); print(b[i + 9], hex(b[i + 11]))'
	assert_output "1 0x22"
	mkdir g && mv g.jpg g/ && printf 0 > g/g.cls
	(cd g && tar --sort=name -cf ../g.tar ./*)
	pack -q --jpeg-restart=1 -o g.slab g.tar
	inspect --tar g.slab | tar -x ./g.jpg
	n=0
	for seed in 1 2 3 4 5 6 7 8; do
		for size in 64x48 16x16; do
			SLAB_JPEG_RESTART=0 imgcrop --crop random-resized --size "$size" --seed "$seed" g.jpg a.raw
			SLAB_JPEG_RESTART=require run -0 --separate-stderr imgcrop --crop random-resized \
				--size "$size" --seed "$seed" g.jpg b.raw
			cmp a.raw b.raw
			n=$((n + 1))
		done
	done
	[ "$n" = 16 ]
}

@test "inspect --list --json says which JPEGs pack --jpeg-restart rewrote" {
	need_pil
	odd_jpegs
	cp prog.jpg odd/fprog.jpg
	printf fprog > odd/fprog.cls
	(cd odd && tar --sort=name -cf ../odd.tar ./*)
	pack -q -o plain.slab odd.tar
	pack -q --jpeg-restart -o rst.slab odd.tar
	for f in plain rst; do
		inspect --list --json "$f.slab" | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    for f in s["fields"]:
        print(s["key"].removeprefix("./"), f["name"], f.get("restart"), f.get("transcoded"))' > "$f.txt"
	done
	run -0 cat plain.txt
	assert_output "$(printf '%s\n' a444 b422 cgrey dtiny emeta fprog |
		sed 's/.*/& cls None None\n& jpg False False/')"
	# the progressive one is kept as it is
	run -0 cat rst.txt
	assert_output "$(printf '%s\n' a444 b422 cgrey dtiny emeta |
		sed 's/.*/& cls None None\n& jpg True False/'; printf 'fprog cls None None\nfprog jpg False False')"
}

@test "pack --jpeg-restart gives the same bytes with -j 1, 2 and 4" {
	jpegs
	pack -q --jpeg-restart=4 -j 1 -o a.slab j.tar
	pack -q --jpeg-restart=4 -j 2 -o b.slab j.tar
	pack -q --jpeg-restart=4 -j 4 --memory 64K -o c.slab j.tar
	cmp a.slab b.slab
	cmp a.slab c.slab
}

@test "--jpeg-restart with --image-max-side puts the markers into the re-encoded JPEG" {
	need_pil
	jpegs
	pack -q --image-max-side 100 -o small.slab j.tar
	pack -q --image-max-side 100 --jpeg-restart=rows -o smallrst.slab j.tar
	inspect --tar small.slab > small.tar
	inspect --tar smallrst.slab > smallrst.tar
	run -0 samepixels small.tar smallrst.tar
	assert_output "16 16 ['rows']"
	run -0 flags smallrst.slab
	assert_output "$(printf '0x27 %.0s' {1..16} | sed 's/ $//')"
}

@test "--jpeg-restart=N takes rows or N from 1 to 65535" {
	jpegs
	for bad in 0 65536 x -1 ""; do
		run -2 --separate-stderr pack --jpeg-restart="$bad" -o x.slab j.tar
		assert_equal "${stderr_lines[0]}" "pack: invalid --jpeg-restart '$bad' (rows, or a number from 1 to 65535)"
		assert_equal "${stderr_lines[1]}" "Try 'pack --help' for more information."
	done
	[ ! -e x.slab ]
	pack -q --jpeg-restart=65535 -o x.slab j.tar
}

@test "slab.Loader over a --jpeg-restart pack gives the plain pack's images, byte for byte" {
	need_libslab
	jpegs
	pack -q -o plain.slab j.tar
	pack -q --jpeg-restart=rows -o rows.slab j.tar
	pack -q --jpeg-restart=1 -o one.slab j.tar
	run -0 pyslab - <<'PY'
import slab
def images(path, size):
    out = []
    with slab.Loader([path], batch_size=5, threads=2, image="jpg", size=size,
                     crop="random-resized", flip=True, seed=3) as ld:
        for b in ld:
            out += [(b.keys[j], b.image(j).tobytes()) for j in range(len(b))]
    return out
n = 0
for size in ((224, 224), (40, 24)):
    want = images("plain.slab", size)
    assert want == images("rows.slab", size) == images("one.slab", size)
    n += len(want)
print("ok", n)
PY
	assert_output "ok 32"
}

@test "unit: lib/dataset/jpegrst.c and the decode from a restart marker (test_jpegrst)" {
	[ -x "$SLAB_BUILD/unit/test_jpegrst" ] || fail "unit test test_jpegrst not built (run make)"
	SLAB_CORPUS="$CORPUS" run -0 "$SLAB_BUILD/unit/test_jpegrst"
	assert_output --regexp 'crops compared, [0-9]+ of them decoded from a part'
}
