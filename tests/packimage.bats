#!/usr/bin/env bats
# pack on every image format (issue 17): JPEG, PNG and WebP found by their bytes whatever the
# field is called, their sizes in the table and in inspect --list, --image-check decoding each,
# --image-max-side re-encoding each in its own format (PNG lossless, a lossless WebP lossless,
# a lossy one at --webp-quality), images the RGB pipeline cannot re-encode whole kept as they
# are, --max-pixels for every format, and byte-identical output whatever -j. Test pictures
# come from PIL (/usr/bin/python3's python3-pil) or are made by hand.

load test_helper/common

# pil SCRIPT...: /usr/bin/python3 with PIL (WebP included), or skip.
need_pil() {
	/usr/bin/python3 -c 'import sys, PIL.features as f; sys.exit(0 if f.check("webp") else 1)' \
		2>/dev/null || skip "no PIL with WebP for /usr/bin/python3 (python3-pil)"
}

# The pipeline decodes PNG and WebP once their decoders are in (image_png.c, image_webp.c);
# until then their bytes are an unknown format and none of this can work.
need_decoders() {
	grep -q spng_ "$SLAB_ROOT/lib/dataset/image_png.c" &&
		grep -q 'WebPDecode\|WebPGetFeatures\|WebPIDecode' "$SLAB_ROOT/lib/dataset/image_webp.c" ||
		skip "the PNG and WebP decoders of the image pipeline are not in yet"
}

# images: pictures in img/ (gradients and noise, the same bytes every run):
#   rgb.png 300x200 RGB   rgba.png 300x200 RGBA   grey.png 300x200 L   small.png 40x30 RGB
#   lossy.webp 300x200    lossless.webp 240x160   alpha.webp 300x200 RGBA (lossy)
#   photo.jpg 33x17       wide.png 70000x2 RGB
images() {
	mkdir -p img
	/usr/bin/python3 - <<'PY'
import random
from PIL import Image

def picture(w, h, mode, seed):
    rnd = random.Random(seed)
    n = len(mode)
    px = bytearray()
    for y in range(h):
        for x in range(w):
            v = [(x * 255) // max(1, w - 1), (y * 255) // max(1, h - 1), (x * y) % 256, 128 + (x - y) % 100]
            px += bytes((v[c] + rnd.randrange(24)) % 256 for c in range(n))
    return Image.frombytes(mode, (w, h), bytes(px))

picture(300, 200, "RGB", 1).save("img/rgb.png")
picture(300, 200, "RGBA", 2).save("img/rgba.png")
picture(300, 200, "L", 3).save("img/grey.png")
picture(40, 30, "RGB", 4).save("img/small.png")
picture(300, 200, "RGB", 5).save("img/lossy.webp", quality=80)
picture(240, 160, "RGB", 6).save("img/lossless.webp", lossless=True)
picture(300, 200, "RGBA", 7).save("img/alpha.webp", quality=80)
picture(33, 17, "RGB", 8).save("img/photo.jpg", quality=90)
Image.new("RGB", (70000, 2), (10, 200, 30)).save("img/wide.png")
PY
}

# bad.jpg: a large JPEG, corrupt near its end: slow to check, so that the reader is far
# ahead of the threads when a thread finds it bad.
slow_bad_jpeg() {
	/usr/bin/python3 - <<'PY'
import io
from PIL import Image
im = Image.merge("RGB", [Image.effect_noise((3000, 2000), 80 + 10 * c) for c in range(3)])
b = io.BytesIO()
im.save(b, "JPEG", quality=95)
jpg = bytearray(b.getvalue())
for i in range(len(jpg) - 3000, len(jpg) - 2800):
    jpg[i] ^= 0x55
open("bad.jpg", "wb").write(jpg)
PY
}

# mixed.tar: the images under names that say another format (or none):
#   a.jpg small.png, a.cls          b.png lossy.webp          c.webp photo.jpg
#   d.seg.png grey.png, d.img rgb.png, d.txt "hello"          e.webp lossless.webp, e.png rgba.png
#   f.jpg alpha.webp
mixed_tar() {
	images
	mkdir -p m
	cp img/small.png m/a.jpg
	printf 3 > m/a.cls
	cp img/lossy.webp m/b.png
	cp img/photo.jpg m/c.webp
	cp img/grey.png m/d.seg.png
	cp img/rgb.png m/d.img
	printf hello > m/d.txt
	cp img/lossless.webp m/e.webp
	cp img/rgba.png m/e.png
	cp img/alpha.webp m/f.jpg
	(cd m && tar --format=gnu -cf ../mixed.tar a.jpg a.cls b.png c.webp d.seg.png d.img d.txt \
		e.webp e.png f.jpg)
}

# fields SLAB: "key field format WxH transcoded" per image field, from inspect --list --json.
fields() {
	inspect --list --json "$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    for f in r["fields"]:
        if "format" in f:
            print(r["key"], f["name"], f["format"], "%dx%d" % (f["width"], f["height"]),
                  int(f["transcoded"]))'
}

@test "formats come from the bytes: a PNG named jpg, a WebP named png, a JPEG named webp" {
	need_pil
	need_decoders
	mixed_tar
	run -0 pack -q -o m.slab mixed.tar
	run -0 fields m.slab
	assert_output "a jpg png 40x30 0
b png webp 300x200 0
c webp jpeg 33x17 0
d img png 300x200 0
d seg.png png 300x200 0
e png png 300x200 0
e webp webp 240x160 0
f jpg webp 300x200 0"
	run -0 inspect --list m.slab
	assert_line --index 0 --regexp '^0	a	0	cls:[0-9]+:1	jpg:[0-9]+:[0-9]+:40x30:png$'
	assert_line --index 2 --regexp '^2	c	0	webp:[0-9]+:[0-9]+:33x17:jpeg$'
	# d.txt is no image: no size, no format
	assert_line --index 3 --regexp '	txt:[0-9]+:5$'
	run -0 inspect --list --json m.slab
	python3 - "$output" <<'PY'
import json, sys
c = json.loads(sys.argv[1])[2]["fields"][0]
assert (c["format"], c["subsampling"], c["colorspace"]) == ("jpeg", "4:2:0", "ycbcr"), c
a = json.loads(sys.argv[1])[0]["fields"]
assert "format" not in a[0] and "subsampling" not in a[1], a
PY
	# the summary: a range per format and field
	run -0 inspect m.slab
	assert_line --regexp '^  jpg .*  PNG 40x30\.\.40x30  WebP 300x200\.\.300x200$'
	assert_line "  image-check=0"
	assert_line "  webp-quality=0"
	run -0 inspect --json m.slab
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert (d["version_major"], d["version_minor"]) == (1, 3)
png = [f for f in d["fields"] if f["name"] == "png"][0]
assert png["webp"] == {"count": 1, "min_width": 300, "max_width": 300, "min_height": 200, "max_height": 200}, png
assert png["png"]["count"] == 1 and "jpeg" not in png
PY
	# slab.py names the format, both ways
	for lib in ${LIBSLAB:+$LIBSLAB} none; do
		SLAB_LIBRARY=$lib pyslab - <<'PY'
import slab
ds = slab.Dataset("m.slab")
got = [(s.key, f.name, f.format, f.width, f.height, f.is_jpeg)
       for s in (ds[i] for i in range(len(ds))) for f in map(s.field, s.fields)]
assert ("a", "jpg", "png", 40, 30, False) in got, got
assert ("c", "webp", "jpeg", 33, 17, True) in got, got
assert ("d", "txt", None, 0, 0, False) in got, got
PY
	done
	inspect --tar m.slab > back.tar
	run -0 tarcmp mixed.tar back.tar
}

@test "--image-check decodes every format; a corrupt PNG or WebP is a bad sample naming key and field" {
	need_pil
	need_decoders
	images
	mkdir -p s
	head -c $(($(stat -c %s img/rgb.png) * 6 / 10)) img/rgb.png > s/p.png
	head -c $(($(stat -c %s img/lossy.webp) * 6 / 10)) img/lossy.webp > s/w.jpg
	cp img/small.png s/ok.png
	printf 'hello, not a picture' > s/t.png
	(cd s && tar --format=gnu -cf ../bad.tar ok.png p.png w.jpg)
	(cd s && tar --format=gnu -cf ../text.tar ok.png t.png)
	# Without the check the headers are read and the bytes kept.
	run -0 pack -q -o plain.slab bad.tar
	run -0 fields plain.slab
	assert_output "ok png png 40x30 0
p png png 300x200 0
w jpg webp 300x200 0"
	for opt in --image-check --jpeg-check; do
		run -1 --separate-stderr pack $opt -o c.slab bad.tar
		[[ "$stderr" == "pack: 'bad.tar': sample 'p' field 'png': "*PNG* ]] || fail "$stderr"
		[ ! -e c.slab ]
	done
	run -0 --separate-stderr pack --image-check --on-error=skip -j2 -o c.slab bad.tar
	[[ "${stderr_lines[0]}" == "pack: 'bad.tar': skipping: sample 'p' field 'png': "*PNG* ]]
	[[ "${stderr_lines[1]}" == "pack: 'bad.tar': skipping: sample 'w' field 'jpg': "*WebP* ]]
	[[ "${stderr_lines[2]}" == "pack: 'c.slab': 1 sample, "*"; skipped 2 bad samples" ]]
	run -0 inspect c.slab
	assert_line "  image-check=1"
	# Checked, a field named as an image whose bytes are none is refused; unchecked, kept.
	run -0 pack -q -o t.slab text.tar
	run -1 --separate-stderr pack --image-check -o t.slab text.tar
	assert_equal "$stderr" "pack: 'text.tar': sample 't' field 'png': not a JPEG, PNG or WebP image: starts with 0x68 0x65 0x6c 0x6c"
	# So is one whose bytes are a video's (a GIF named jpg, which the loader's image mode
	# refuses); unchecked, it is recorded as what it is.
	/usr/bin/python3 -c 'from PIL import Image; Image.new("RGB", (8, 8), (200, 10, 10)).save("s/g.jpg", "GIF")'
	(cd s && tar --format=gnu -cf ../gif.tar ok.png g.jpg)
	run -1 --separate-stderr pack --image-check -o g.slab gif.tar
	assert_equal "$stderr" "pack: 'gif.tar': sample 'g' field 'jpg': not a JPEG, PNG or WebP image: starts with 0x47 0x49 0x46 0x38"
	[ ! -e g.slab ]
	run -0 pack -q -o g.slab gif.tar
}

@test "a JPEG cut before its frame header is kept unrecorded, and --image-check names it" {
	need_corpus
	mkdir -p s
	for n in 3 20 150 300; do
		head -c "$n" "$CORPUS/jpeg/testorig.jpg" > "s/t$n.jpg"
	done
	(cd s && tar --format=gnu --sort=name -cf ../cut.tar t3.jpg t20.jpg t150.jpg t300.jpg)
	run -0 pack -q -o c.slab cut.tar
	# four samples, no field recorded as an image (it was 0x0 JPEG for those cut before 150)
	run -0 inspect --list c.slab
	assert_equal "${#lines[@]}" 4
	run -0 fields c.slab
	assert_output ""
	run -1 --separate-stderr pack --image-check -o c.slab cut.tar
	assert_equal "$stderr" "pack: 'cut.tar': sample 't3' field 'jpg': bad JPEG header: no frame header (SOF) before the data ends"
	run -0 --separate-stderr pack --image-check --on-error skip -o c.slab cut.tar
	assert_equal "${stderr_lines[2]}" "pack: 'cut.tar': skipping: sample 't150' field 'jpg': bad JPEG header: no frame header (SOF) before the data ends"
	assert_equal "${stderr_lines[3]}" "pack: 'cut.tar': skipping: sample 't300' field 'jpg': bad JPEG header: Invalid JPEG file structure: missing SOS marker"
}

@test "--image-max-side: PNG to PNG (lossless), WebP to WebP, the rest kept as it is" {
	need_pil
	need_decoders
	mixed_tar
	run -0 pack -q --image-max-side 150 -o s.slab mixed.tar
	run -0 fields s.slab
	assert_output "a jpg png 40x30 0
b png webp 150x100 1
c webp jpeg 33x17 0
d img png 150x100 1
d seg.png png 300x200 0
e png png 300x200 0
e webp webp 150x100 1
f jpg webp 300x200 0"
	run -0 inspect s.slab
	assert_line "  image-max-side=150"
	assert_line "  jpeg-quality=90"
	assert_line "  webp-quality=90"
	# Kept: byte for byte (small, grey, alpha)
	for kf in a:jpg d:seg.png e:png f:jpg c:webp; do
		inspect --get "${kf%%:*}" --field "${kf#*:}" s.slab | cmp - "m/${kf%%:*}.${kf#*:}"
	done
	# Re-encoded: the pipeline's resize of the whole image, exactly for PNG and lossless WebP
	inspect --get d --field img s.slab > d.png
	inspect --get e --field webp s.slab > e.webp
	inspect --get b --field png s.slab > b.webp
	imgcrop --crop none --exact --size 150x100 m/d.img want-d.rgb
	imgcrop --crop none --exact --size 150x100 m/e.webp want-e.rgb
	/usr/bin/python3 - <<'PY'
from PIL import Image
d = Image.open("d.png")
assert (d.format, d.mode, d.size) == ("PNG", "RGB", (150, 100)), (d.format, d.mode, d.size)
assert d.tobytes() == open("want-d.rgb", "rb").read(), "PNG: not the pipeline's pixels"
e = open("e.webp", "rb").read()
assert e[:4] == b"RIFF" and e[8:16] == b"WEBPVP8L", e[:16]
ei = Image.open("e.webp")
assert ei.size == (150, 100) and ei.convert("RGB").tobytes() == open("want-e.rgb", "rb").read()
b = open("b.webp", "rb").read()
assert b[8:16] == b"WEBPVP8 ", b[:16]
assert Image.open("b.webp").size == (150, 100)
PY
	# --webp-quality: the lossy one only
	run -0 pack -q --image-max-side 150 --webp-quality 30 -o q30.slab mixed.tar
	a=$(inspect --get b --field png q30.slab | wc -c)
	[ "$a" -lt "$(wc -c < b.webp)" ]
	inspect --get e --field webp q30.slab | cmp - e.webp
	run -0 inspect q30.slab
	assert_line "  webp-quality=30"
	run -0 inspect --verify s.slab
}

@test "--image-max-side and --image-check: the same bytes whatever -j and --memory; the jpeg aliases are the same options" {
	need_pil
	need_decoders
	mixed_tar
	mkwds --count 6 --seed 3 -o j.tar
	pack -q -j1 --image-check --image-max-side 120 -o want.slab mixed.tar j.tar
	for args in "-j 2" "-j 4" "-j 3 --memory 1" "-j 4 --memory 100K"; do
		pack -q $args --image-check --image-max-side 120 -o got.slab mixed.tar j.tar
		cmp want.slab got.slab || fail "pack $args differs from -j 1"
	done
	pack -q -j4 --jpeg-check --jpeg-max-side 120 -o alias.slab mixed.tar j.tar
	cmp want.slab alias.slab
}

@test "a bad sample before a truncated tar: the same messages whatever -j, as the samples come in order" {
	need_pil
	# A large corrupt JPEG, slow to check, then small samples and a tar cut short: the
	# reader reaches the cut long before a thread has checked the JPEG.
	slow_bad_jpeg
	/usr/bin/python3 - <<'PY'
import io, tarfile
jpg = open("bad.jpg", "rb").read()
with tarfile.open("in.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for name, data in [("000.jpg", bytes(jpg))] + [("%03d.cls" % i, b"%d" % i) for i in range(1, 6)] + [("006.cls", b"x" * 5000)]:
        ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
m = tarfile.open("in.tar").getmembers()
d = open("in.tar", "rb").read()
open("whole.tar", "wb").write(d)
open("in.tar", "wb").write(d[:m[6].offset_data + 1000])   # inside 006.cls
open("last", "w").write("%d" % m[5].offset)
PY
	run -1 --separate-stderr pack -j1 --image-check -o x.slab in.tar
	assert_equal "${#stderr_lines[@]}" 1
	[[ "$stderr" == "pack: 'in.tar': sample '000' field 'jpg': corrupt JPEG: "* ]]
	want=$stderr
	run -1 --separate-stderr pack -j1 --image-check --on-error=skip -o x.slab in.tar
	assert_equal "${stderr_lines[0]}" "pack: 'in.tar': skipping: ${want#"pack: 'in.tar': "}"
	assert_equal "${stderr_lines[1]}" "pack: 'in.tar': truncated or corrupt archive: Truncated tar archive (last good member '005.cls' at offset $(cat last))"
	want_skip=$stderr
	for j in 2 4; do
		run -1 --separate-stderr pack -j$j --image-check -o x.slab in.tar
		assert_equal "$stderr" "$want"
		run -1 --separate-stderr pack -j$j --image-check --on-error=skip -o x.slab in.tar
		assert_equal "$stderr" "$want_skip"
	done
	# The same before an input that cannot be opened.
	for j in 1 2 4; do
		run -1 --separate-stderr pack -j$j --image-check -o x.slab whole.tar missing.tar
		assert_equal "$stderr" "pack: 'whole.tar': ${want#"pack: 'in.tar': "}"
	done
	[ ! -e x.slab ]
}

@test "warnings and -v lines about an input come after its samples' messages, whatever -j" {
	need_pil
	slow_bad_jpeg
	# a.tar: the bad JPEG, small samples, and no end-of-archive blocks (a warning); b.tar.
	/usr/bin/python3 - <<'PY'
import io, tarfile
def tar(name, members):
    with tarfile.open(name, "w", format=tarfile.GNU_FORMAT) as t:
        for n, data in members:
            ti = tarfile.TarInfo(n); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
tar("a.tar", [("000.jpg", open("bad.jpg", "rb").read())] + [("%03d.cls" % i, b"%d" % i) for i in range(1, 4)])
m = tarfile.open("a.tar").getmembers()
d = open("a.tar", "rb").read()
open("a.tar", "wb").write(d[:m[3].offset_data + 512])
tar("b.tar", [("100.cls", b"x")])
PY
	run -0 --separate-stderr pack -j1 -q --image-check --on-error=skip -o x.slab a.tar b.tar
	assert_equal "${#stderr_lines[@]}" 2
	[[ "${stderr_lines[0]}" == "pack: 'a.tar': skipping: sample '000' field 'jpg': corrupt JPEG: "* ]]
	[[ "${stderr_lines[1]}" == "pack: warning: 'a.tar': no end-of-archive blocks after member '003.cls' "* ]]
	want=$stderr
	run -0 --separate-stderr pack -j1 -v --image-check --on-error=skip -o x.slab a.tar b.tar
	assert_equal "${stderr_lines[0]}" "pack: reading 'a.tar'"
	assert_equal "${stderr_lines[1]}" "${want%%$'\n'*}"
	assert_equal "${stderr_lines[4]}" "pack: reading 'b.tar'"
	[[ "${stderr_lines[6]}" == "pack: bytes in flight: "* ]]
	want_v=$(printf '%s\n' "${stderr_lines[@]:0:6}")
	for j in 2 4; do
		run -0 --separate-stderr pack -j$j -q --image-check --on-error=skip -o x.slab a.tar b.tar
		assert_equal "$stderr" "$want"
		run -0 --separate-stderr pack -j$j -v --image-check --on-error=skip -o x.slab a.tar b.tar
		assert_equal "$(printf '%s\n' "${stderr_lines[@]:0:6}")" "$want_v"
	done
}

@test "a PNG wider than 65535 is recorded with its format and size 0x0; fitted, with its new size" {
	need_pil
	need_decoders
	images
	mkdir -p w
	cp img/wide.png w/x.png
	(cd w && tar -cf ../wide.tar x.png)
	run -0 pack -q -o w.slab wide.tar
	run -0 inspect --list w.slab
	[[ "${lines[0]}" == *"	png:"*":0x0:png" ]]
	run -0 pack -q --image-max-side 1000 -o f.slab wide.tar
	run -0 inspect --list f.slab
	[[ "${lines[0]}" == *"	png:"*":1000x1:png" ]]
}

@test "--max-pixels holds for PNG and WebP headers: refused before decoding, with or without options" {
	need_pil
	need_decoders
	images
	mkdir -p b
	# A PNG header declaring 65500 x 65500 RGB pixels, a few bytes of IDAT.
	python3 - <<'PY'
import struct, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 65500, 65500, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(bytes(100000))) + chunk(b"IEND", b"")
open("b/bomb.png", "wb").write(png)
PY
	cp img/small.png b/s.jpg
	cp img/lossless.webp b/w.png
	(cd b && tar --format=gnu -cf ../bomb.tar bomb.png)
	(cd b && tar --format=gnu -cf ../two.tar s.jpg w.png)
	for opts in "" "--image-check" "--image-max-side 100"; do
		run -1 --separate-stderr pack $opts -o x.slab bomb.tar
		assert_equal "$stderr" "pack: 'bomb.tar': sample 'bomb' field 'png': PNG of 65500x65500 pixels (4290250000): over the limit of 178956970 pixels"
		[ ! -e x.slab ]
	done
	run -1 --separate-stderr pack --max-pixels 1199 -o x.slab two.tar
	assert_equal "$stderr" "pack: 'two.tar': sample 's' field 'jpg': PNG of 40x30 pixels (1200): over the limit of 1199 pixels"
	run -0 --separate-stderr pack -q --max-pixels 38399 --on-error=skip -o x.slab two.tar
	assert_equal "$stderr" "pack: 'two.tar': skipping: sample 'w' field 'png': WebP of 240x160 pixels (38400): over the limit of 38399 pixels"
	run -0 pack -q --max-pixels 38400 --image-check -o x.slab two.tar
}

@test "usage: --webp-quality and the image options' values, the aliases named as given" {
	small_tar
	run -2 --separate-stderr pack -o x.slab --webp-quality 80 small.tar
	assert_equal "${stderr_lines[0]}" "pack: --webp-quality only applies with --image-max-side"
	run -2 --separate-stderr pack -o x.slab --jpeg-quality 80 small.tar
	assert_equal "${stderr_lines[0]}" "pack: --jpeg-quality only applies with --image-max-side"
	for bad in 0 101 x ''; do
		run -2 --separate-stderr pack -o x.slab --image-max-side 10 --webp-quality "$bad" small.tar
		assert_equal "${stderr_lines[0]}" "pack: invalid --webp-quality '$bad' (a number from 1 to 100)"
	done
	run -2 --separate-stderr pack -o x.slab --image-max-side 0 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --image-max-side '0' (a number from 1 to 65535)"
	run -2 --separate-stderr pack -o x.slab --jpeg-max-side=65536 small.tar
	assert_equal "${stderr_lines[0]}" "pack: invalid --jpeg-max-side '65536' (a number from 1 to 65535)"
	[ ! -e x.slab ]
	run -0 pack -q -o x.slab --image-max-side 10 --webp-quality 100 small.tar
}
