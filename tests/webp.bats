#!/usr/bin/env bats
# WebP in the image pipeline (lib/dataset/image_webp.c over libwebp; build/bin/imgcrop runs
# the pipeline alone): full-size output equal to libwebp's own for every conformance vector,
# the cropped path bit for bit the full decode's pixels, the cropped and scaled path within a
# stated tolerance of full decode + crop + resize, exact messages, no crash on damaged files,
# pixel bombs refused in bounded memory, and WebP shards through slab.Loader and prefetch
# --emit-format frames.
#
# Reference output: libwebp_tests.md5 (../shared/corpus/webp) lists, for 96 of the vectors,
# the MD5s of dwebp's output in five formats; the .ppm one is "P6\nW H\n255\n" and the RGB
# bytes (dwebp -ppm decodes to RGB: alpha dropped, the colour not premultiplied), which is
# exactly what the pipeline makes of a WebP at full size (--exact, crop none, --size the
# image's size: the resize is then the identity). For vectors with alpha that is the RGB
# part of libwebp's RGBA output, so they are compared the same way. Vectors the list leaves
# out (lossless_vec_*, lossless_color_transform, bryce) are compared with the installed
# dwebp -ppm instead.
#
# Tolerance of the cropped and scaled path (libwebp's use_cropping + use_scaling, then the
# shared BILINEAR resize) against --exact (whole image decoded at full size, then the same
# crop and resize), largest per-channel mean absolute error on 0..255: <= 2.5 on pictures
# (mkwds's, made WebP by cwebp -q 90 and -lossless; test.webp), as for JPEG's scaled path in
# image.bats; <= 5.0 on bryce.webp (a detailed 11158x2156 photograph reduced 10 to 50 times,
# where libwebp's box-averaging rescaler and the reference's triangle filter differ most;
# measured 3.6 .. 4.3). The cropped path without scaling is exact.

load test_helper/common

WEBP_DIR="$CORPUS/webp"

need_webp_corpus() {
	need_corpus
	[ -d "$WEBP_DIR" ] || skip "no WebP corpus at $WEBP_DIR"
}

need_cwebp() {
	command -v cwebp > /dev/null && command -v dwebp > /dev/null ||
		skip "no cwebp/dwebp (Debian package webp)"
}

# webp_size FILE: "W H" of a WebP, as the pipeline reads it.
webp_size() {
	imgcrop --crop none --size 1x1 "$1" /dev/null |
		sed -n 's/^crop \([0-9]*\)x\([0-9]*\)+0+0 .*/\1 \2/p'
}

# mae A B: the largest per-channel mean absolute error of two RGB files of the same size.
# (tests/test_helper/imgbatch.py's mae)
mae() {
	PYTHONPATH="$HELPERS" python3 -c 'import sys, imgbatch; print("%.3f" % imgbatch.mae(*sys.argv[1:3]))' "$1" "$2"
}

# pictures: big/p0.jpg ... from mkwds (1024x768 gradients, shapes and noise), each also as
# lossy (cwebp -q 90) p0.webp and lossless p0.ll.webp.
pictures() {
	mkwds --count "${1:-2}" --seed 5 --width 1024 --height 768 -o big.tar
	mkdir -p big
	tar -xf big.tar -C big
	for f in big/*.jpg; do
		cwebp -quiet -q 90 "$f" -o "${f%.jpg}.webp"
		cwebp -quiet -lossless "$f" -o "${f%.jpg}.ll.webp"
	done
}

# add_alpha IN.webp OUT.pam: IN's pixels with alpha in stripes of 0, 40 and 255 (50 columns,
# 70 rows a stripe), as a PAM for cwebp.
add_alpha() {
	dwebp -quiet -pam "$1" -o rgb.pam
	python3 - rgb.pam "$2" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
end = d.index(b"ENDHDR\n") + 7
words = d[:end].split()
W, H = int(words[words.index(b"WIDTH") + 1]), int(words[words.index(b"HEIGHT") + 1])
px = bytearray(d[end:])
px[3::4] = bytes((0, 40, 255)[(x // 50 + y // 70) % 3] for y in range(H) for x in range(W))
open(sys.argv[2], "wb").write(d[:end] + bytes(px))
PY
}

# alpha.webp (lossless, -exact: colour kept under alpha 0) and alpha.lossy.webp: a 640x480
# picture with alpha in stripes.
alpha_pictures() {
	mkwds --count 1 --seed 6 --width 640 --height 480 -o a.tar
	tar -xf a.tar
	cwebp -quiet -q 95 sample000000.jpg -o rgb.webp
	add_alpha rgb.webp alpha.pam
	cwebp -quiet -lossless -exact alpha.pam -o alpha.webp
	cwebp -quiet -q 90 -exact alpha.pam -o alpha.lossy.webp
}

@test "full size: every listed vector is libwebp's own decode (libwebp_tests.md5, .ppm)" {
	need_webp_corpus
	run -0 env PYTHONPATH="$HELPERS" python3 - "$WEBP_DIR" <<'PY'
import hashlib, os, re, sys
from imgbatch import ImgCrop
d = sys.argv[1]
n = 0
with ImgCrop() as ic:
    for line in open(os.path.join(d, "libwebp_tests.md5")):
        want, f = line.split()
        if not f.endswith(".ppm"):
            continue
        path = os.path.join(d, f[:-4])
        code, text = ic.run("--crop", "none", "--size", "1x1", path, "/dev/null")
        m = re.fullmatch(r"crop (\d+)x(\d+)\+0\+0 .*", text)
        assert code == 0 and m, (f, code, text)
        w, h = int(m[1]), int(m[2])
        for way, out in (["--exact"], "out.rgb"), ([], "fast.rgb"):
            # --exact, and the default path at full size (no crop, no scale): the same pixels
            code, text = ic.run("--crop", "none", *way, "--size", "%dx%d" % (w, h), path, out)
            assert (code, text) == (0, "crop %dx%d+0+0 flip 0 scale 1/1 region 0" % (w, h)), \
                (f, way, code, text)
        px = open("out.rgb", "rb").read()
        got = hashlib.md5(b"P6\n%d %d\n255\n" % (w, h) + px).hexdigest()
        assert got == want, "%s: MD5 %s, libwebp_tests.md5 says %s" % (f, got, want)
        assert open("fast.rgb", "rb").read() == px, "%s: the default path differs" % f
        n += 1
print("ok", n, "vectors")
PY
	assert_output "ok 96 vectors"
}

@test "full size: the vectors the MD5 list leaves out equal dwebp -ppm" {
	need_webp_corpus
	need_cwebp
	run -0 env PYTHONPATH="$HELPERS" python3 - "$WEBP_DIR" <<'PY'
import os, re, subprocess, sys
from imgbatch import ImgCrop
d = sys.argv[1]
listed = {line.split()[1] for line in open(os.path.join(d, "libwebp_tests.md5"))}
n = 0
with ImgCrop() as ic:
    for f in sorted(os.listdir(d)):
        if not f.endswith(".webp") or f + ".ppm" in listed:
            continue
        path = os.path.join(d, f)
        code, text = ic.run("--crop", "none", "--size", "1x1", path, "/dev/null")
        m = re.fullmatch(r"crop (\d+)x(\d+)\+0\+0 .*", text)
        assert code == 0 and m, (f, code, text)
        w, h = int(m[1]), int(m[2])
        code, text = ic.run("--crop", "none", "--exact", "--size", "%dx%d" % (w, h), path, "out.rgb")
        assert code == 0, (f, text)
        subprocess.run(["dwebp", "-quiet", "-ppm", path, "-o", "ref.ppm"], check=True)
        got = b"P6\n%d %d\n255\n" % (w, h) + open("out.rgb", "rb").read()
        assert got == open("ref.ppm", "rb").read(), "%s differs from dwebp -ppm" % f
        n += 1
assert n >= 30, "only %d vectors" % n
print("ok", n, "vectors")
PY
	echo "# $output" >&3
	assert_output --regexp '^ok [0-9]+ vectors$'
}

@test "cropped without scaling: the crop's pixels are the full decode's, bit for bit" {
	need_webp_corpus
	# an output the crop's own size: no scaling, and the resize is the identity on the box
	run -0 env PYTHONPATH="$HELPERS" python3 - "$WEBP_DIR" <<'PY'
import os, re, sys
from imgbatch import ImgCrop
d = sys.argv[1]
n = 0
with ImgCrop() as ic:
    for f in sorted(os.listdir(d)):
        if not f.endswith(".webp") or f == "bryce.webp":
            continue
        path = os.path.join(d, f)
        for i in 1, 2, 3:
            rr = ("--crop", "random-resized", "--index", i)
            code, line = ic.run(*rr, "--size", "1x1", path, "/dev/null")
            m = re.match(r"crop (\d+x\d+)\+", line)
            assert code == 0 and m, (f, code, line)
            # alpha dropped, kept (RGBA) and composited: the alpha plane cropped too
            for mode in (), ("--channels", "4"), ("--alpha", "composite"):
                code, line = ic.run(*rr, *mode, "--size", m[1], path, "a.rgb")
                assert code == 0 and re.fullmatch(r".* scale 1/1 region [01]", line), \
                    (f, mode, code, line)
                code, _ = ic.run(*rr, *mode, "--size", m[1], "--exact", path, "b.rgb")
                assert code == 0
                assert open("a.rgb", "rb").read() == open("b.rgb", "rb").read(), \
                    "%s %s: %s: the region differs from the full decode" % (f, mode, line)
                n += 1
print("ok", n, "crops")
PY
	assert_output "ok 1161 crops"
	# odd and even offsets, lossy and lossless: a region of test.webp (128x128) at each
	run -0 imgcrop --crop center --size 101x128 "$WEBP_DIR/test.webp" a.rgb
	assert_output "crop 101x128+13+0 flip 0 scale 1/1 region 1"
	imgcrop --crop center --size 101x128 --exact "$WEBP_DIR/test.webp" b.rgb
	cmp a.rgb b.rgb
}

@test "cropped and scaled: within the stated tolerance of full decode + crop + resize" {
	need_webp_corpus
	need_cwebp
	pictures 2
	run -0 env PYTHONPATH="$HELPERS" python3 - big/*.webp "$WEBP_DIR/test.webp" "$WEBP_DIR/bryce.webp" <<'PY'
import sys
from imgbatch import ImgCrop, mae
with ImgCrop() as ic:
    for f in sys.argv[1:]:
        bryce = f.endswith("/bryce.webp")
        tol = 5.0 if bryce else 2.5
        worst = 0
        for size in "224x224", "64x64", "100x150":
            for i in (1,) if bryce else (1, 2, 3):
                rr = ("--crop", "random-resized", "--flip", "--index", i, "--size", size)
                code, line = ic.run(*rr, f, "a.rgb")
                assert code == 0 and line.endswith(" region 1"), (f, size, code, line)
                assert ic.run(*rr, "--exact", f, "b.rgb")[0] == 0
                m = mae("a.rgb", "b.rgb")
                assert m <= tol, "%s %s %s: MAE %.3f over %s" % (f, size, line, m, tol)
                worst = max(worst, m)
        print("# %s: MAE <= %.3f (tolerance %s)" % (f.rsplit("/", 1)[-1], worst, tol))
print("ok")
PY
	echo "$output" | grep '^#' >&3
	assert_line "ok"
}

@test "lossless with alpha: cropped, never scaled, so the colour under alpha is kept" {
	need_cwebp
	alpha_pictures
	local i
	# libwebp's rescaler premultiplies by alpha: scaled, the colour under alpha 0 would be black
	for i in 1 2 3 4; do
		imgcrop --crop random-resized --index "$i" --size 64x64 alpha.webp a.rgb > /dev/null
		imgcrop --crop random-resized --index "$i" --size 64x64 --exact alpha.webp b.rgb > /dev/null
		cmp a.rgb b.rgb
		imgcrop --crop random-resized --index "$i" --size 64x64 alpha.lossy.webp a.rgb > /dev/null
		imgcrop --crop random-resized --index "$i" --size 64x64 --exact alpha.lossy.webp b.rgb > /dev/null
		m=$(mae a.rgb b.rgb)
		python3 -c "import sys; sys.exit(0 if $m <= 2.5 else 1)" || fail "lossy alpha: MAE $m"
	done
	# alpha dropped: the full-size output is dwebp's RGB
	imgcrop --crop none --exact --size 640x480 alpha.webp out.rgb
	dwebp -quiet -ppm alpha.webp -o ref.ppm
	{ printf 'P6\n640 480\n255\n'; cat out.rgb; } | cmp - ref.ppm
}

@test "errors: truncated, damaged, animated, over the limit: exact messages, exit 1" {
	need_webp_corpus
	head -c 2000 "$WEBP_DIR/test.webp" > cut.webp
	run -1 --separate-stderr imgcrop --size 16x16 cut.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'cut.webp': corrupt WebP: not enough data"
	head -c 100 "$WEBP_DIR/lossless1.webp" > cut.webp
	run -1 --separate-stderr imgcrop --size 16x16 cut.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'cut.webp': corrupt WebP: not enough data"
	# the VP8 frame's start code (9d 01 2a at offset 23) broken
	cp "$WEBP_DIR/test.webp" bad.webp
	flip bad.webp 23
	run -1 --separate-stderr imgcrop --size 16x16 bad.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'bad.webp': corrupt WebP: bitstream error"
	# a RIFF of another kind is no WebP
	printf 'RIFF\044\000\000\000WAVEfmt ' > x.wav
	run -1 --separate-stderr imgcrop --size 16x16 x.wav out.rgb
	assert_equal "$stderr" "imgcrop: 'x.wav': not a JPEG, PNG or WebP image: starts with 0x52 0x49 0x46 0x46"
	run -1 --separate-stderr imgcrop --max-pixels 10000 --size 16x16 "$WEBP_DIR/test.webp" out.rgb
	assert_equal "$stderr" "imgcrop: '$WEBP_DIR/test.webp': WebP of 128x128 pixels (16384): over the limit of 10000 pixels"
	run -0 imgcrop --max-pixels 16384 --size 16x16 "$WEBP_DIR/test.webp" out.rgb
}

@test "animated WebP: a clear error, not the first frame" {
	need_cwebp
	command -v webpmux > /dev/null || skip "no webpmux (Debian package webp)"
	mkwds --count 1 --seed 3 --width 48 --height 32 -o a.tar
	tar -xf a.tar
	cwebp -quiet -q 80 sample000000.jpg -o f.webp
	webpmux -frame f.webp +100 -frame f.webp +100+2+2 -loop 0 -o anim.webp
	run -1 --separate-stderr imgcrop --size 16x16 anim.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'anim.webp': animated WebP: not supported"
	run -1 --separate-stderr imgcrop --exact --crop none --size 16x16 anim.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'anim.webp': animated WebP: not supported"
}

@test "a lossless WebP whose header has no alpha is opaque with 4 channels and under composite" {
	need_webp_corpus
	# bad_palette_index.webp: 128x128 lossless, no alpha in its header; a sixteenth of its
	# pixels index past the palette, coded alpha 0 (libwebp hands that out): PIL's mode RGB
	local f="$WEBP_DIR/bad_palette_index.webp"
	run -0 imgcrop --crop none --exact --size 128x128 "$f" rgb.raw
	run -0 imgcrop --crop none --exact --size 128x128 --channels 4 "$f" rgba.raw
	run -0 imgcrop --crop none --exact --size 128x128 --alpha composite --background 9,9,9 "$f" comp.raw
	run -0 imgcrop --crop random-resized --index 3 --size 64x64 --alpha composite --background 9,9,9 "$f" comp2.raw
	run -0 imgcrop --crop random-resized --index 3 --size 64x64 "$f" rgb2.raw
	run -0 python3 - <<'PY'
rgb, rgba = open("rgb.raw", "rb").read(), open("rgba.raw", "rb").read()
assert len(rgba) == 128 * 128 * 4
assert rgba[3::4] == b"\xff" * (128 * 128), "alpha: %d pixels not 255" % sum(a != 255 for a in rgba[3::4])
assert bytes(b for i, b in enumerate(rgba) if i % 4 != 3) == rgb
assert open("comp.raw", "rb").read() == rgb
assert open("comp2.raw", "rb").read() == open("rgb2.raw", "rb").read()
print("ok")
PY
	assert_output "ok"
}

@test "every vector truncated at 10 cut points and with flipped bytes: a clean error or a decode" {
	need_webp_corpus
	run -0 env PYTHONPATH="$HELPERS" python3 - "$WEBP_DIR" <<'PY'
import os, re, sys
from imgbatch import ImgCrop
d = sys.argv[1]
clean = re.compile(r"imgcrop: 'v\.webp': (corrupt WebP: [a-z ]+|animated WebP: not supported|"
                   r"corrupt WebP: the data ends after \d+ bytes?, inside its signature|"
                   r"WebP of \d+x\d+ pixels \(\d+\): over the limit of \d+ pixels|"
                   r"not a [A-Za-z, ]+ image: starts with [0-9a-fx ]+)")
runs = decoded = 0
with ImgCrop() as ic:
    for name in sorted(os.listdir(d)):
        if not name.endswith(".webp"):
            continue
        data = open(os.path.join(d, name), "rb").read()
        n = len(data)
        variants = [("cut%d" % k, data[:n * k // 11]) for k in range(1, 11)]
        for k, off in enumerate([4, 12, 16, 20, 24, 28] + [n * j // 5 for j in range(1, 5)]):
            if off < n:
                b = bytearray(data)
                b[off] ^= 0xFF
                variants.append(("flip%d" % off, bytes(b)))
        for k, (what, b) in enumerate(variants):
            open("v.webp", "wb").write(b)
            if os.path.exists("o.rgb"):
                os.unlink("o.rgb")
            mode = ["--exact"] if k % 2 else ["--crop", "random-resized", "--index", k]
            code, text = ic.run("--size", "24x16", *mode, "v.webp", "o.rgb")
            runs += 1
            if code == 0 and text.startswith("crop ") and os.path.getsize("o.rgb") == 24 * 16 * 3:
                decoded += 1
            elif code != 1 or not clean.fullmatch(text):
                sys.exit("%s %s: exit %d: %s" % (name, what, code, text[:2000]))
print("ok", runs, "runs,", decoded, "decoded")
PY
	echo "# $output" >&3
	[[ "$output" == "ok "* ]]
}

# bomb.py KIND OUT: a WebP of a few dozen bytes declaring a huge canvas. vp8l: a VP8X
# header of 16383x16383 (the largest a VP8 or VP8L frame can be) and the start of a VP8L
# frame of that size; canvas: a bare VP8X header of 65535x65535 (a canvas may be larger than
# any frame, up to 2^32 pixels in all).
webpbomb() {
	python3 - "$@" <<'PY'
import struct, sys
kind, out = sys.argv[1:3]
def chunk(tag, data):
    return tag + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
def vp8x(w, h, flags=0):
    return chunk(b"VP8X", struct.pack("<I", flags) + (w - 1).to_bytes(3, "little") +
                 (h - 1).to_bytes(3, "little"))
if kind == "vp8l":
    bits = (16383 - 1) | (16383 - 1) << 14          # no alpha, version 0
    body = vp8x(16383, 16383) + chunk(b"VP8L", b"\x2f" + struct.pack("<I", bits) + b"\0" * 16)
else:
    body = vp8x(65535, 65535)
open(out, "wb").write(b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body)
PY
}

# peak_rss CMD...: run CMD (its output thrown away); sets rc to its exit status and rss to
# its peak resident set in KiB (as in bombs.bats).
peak_rss() {
	local r
	r=$(python3 - "$@" <<'PY'
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
	rc=${r% *}
	rss=${r#* }
}

@test "pixel bombs: refused with the limit's text before any pixel memory, RSS bounded" {
	webpbomb vp8l vp8l.webp
	webpbomb canvas canvas.webp
	[ "$(filesize vp8l.webp)" -lt 100 ]
	[ "$(filesize canvas.webp)" -lt 100 ]
	command -v webpinfo > /dev/null && run webpinfo vp8l.webp && assert_line "  Canvas size 16383 x 16383"
	run -1 --separate-stderr imgcrop --size 64x64 vp8l.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'vp8l.webp': WebP of 16383x16383 pixels (268402689): over the limit of 178956970 pixels"
	run -1 --separate-stderr imgcrop --exact --crop none --size 64x64 canvas.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'canvas.webp': WebP of 65535x65535 pixels (4294836225): over the limit of 178956970 pixels"
	peak_rss imgcrop --exact --size 64x64 vp8l.webp out.rgb
	[ "$rc" -eq 1 ]
	[ "$rss" -lt $((100 * 1024)) ] || fail "peak RSS $rss KiB"
	echo "# peak RSS refusing the bomb: $rss KiB" >&3
	# without the limit the VP8L bomb gets to libwebp, which finds its bitstream bad
	run -1 --separate-stderr imgcrop --max-pixels none --size 64x64 vp8l.webp out.rgb
	assert_equal "$stderr" "imgcrop: 'vp8l.webp': corrupt WebP: bitstream error"
}

# w.slab: 8 samples, key.webp (1024x768 pictures: lossy, lossless, lossy with alpha) and
# key.cls; the WebPs kept in the working folder for imgcrop.
webp_dataset() {
	mkwds --count 8 --seed 11 --width 1024 --height 768 -o j.tar
	mkdir src
	tar -xf j.tar -C src
	local f k i=0
	for f in src/*.jpg; do
		k=${f%.jpg}
		case $((i % 3)) in
		0) cwebp -quiet -q 90 "$f" -o "$k.webp" ;;
		1) cwebp -quiet -lossless -m 0 "$f" -o "$k.webp" ;;
		2) cwebp -quiet -q 95 "$f" -o rgb.webp && add_alpha rgb.webp rgba.pam &&
			cwebp -quiet -q 80 rgba.pam -o "$k.webp" ;;
		esac
		rm "$f" "$k.json"
		i=$((i + 1))
	done
	(cd src && tar --format=gnu --sort=name -cf ../w.tar -- *)
	cp src/*.webp .
	pack -q -o w.slab w.tar
}

@test "Loader: WebP shards, each image imgcrop's, threads 1 and 2 alike, fewer pixels decoded" {
	need_libslab_any
	need_cwebp
	webp_dataset
	run -0 pyslab_any - <<'PY'
import subprocess, slab
def run(threads):
    out = []
    with slab.Loader(["w.slab"], batch_size=3, threads=threads, image="webp", size=(64, 64),
                     crop="random-resized", flip=True, seed=3, epoch=1) as ld:
        for b in ld:
            for j, (f, i) in enumerate(b.samples):
                out.append((i, b.keys[j], b.image(j).tobytes()))
        return out, ld.stats()
one, st = run(1)
two, st2 = run(2)
assert one == two, "threads 1 and 2 differ"
assert st == st2, (st, st2)
for i, key, img in one:
    subprocess.run(["imgcrop", "--size", "64x64", "--crop", "random-resized", "--flip",
                    "--seed", "3", "--epoch", "1", "--index", str(i), key + ".webp", "o.rgb"],
                   check=True, stdout=subprocess.DEVNULL)
    assert img == open("o.rgb", "rb").read(), key
full = 8 * 1024 * 768
assert st["images"] == 8 and st["region"] == 8, st
assert st["decoded_pixels"] * 10 < full, (st["decoded_pixels"], full)
print("ok", len(one), "images,", st["decoded_pixels"], "pixels decoded of", full)
PY
	echo "# $output" >&3
	[[ "$output" == "ok 8 images,"* ]]
}

@test "prefetch --emit-format frames --image webp: imgcrop's pixels, -j 1 and -j 2 alike" {
	need_cwebp
	webp_dataset
	shuffle-plan -q --mode quasi --seed 7 --epoch 2 -o q.plan w.slab
	local frames=(--emit --emit-format frames --image webp --crop random-resized --flip --size 48x40)
	prefetch -q --plan q.plan "${frames[@]}" -j 1 w.slab > j1.frames
	prefetch -q --plan q.plan "${frames[@]}" -j 2 w.slab > j2.frames
	cmp j1.frames j2.frames
	rm -rf img && mkdir img
	PYTHONPATH="$HELPERS" python3 - j1.frames <<'PY' > list
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert end == (8, 0) and h["width"] == 48 and h["height"] == 40, (end, h)
for r in recs:
    open("img/%d.rgb" % r.pos, "wb").write(r.image)
    print(r.pos, r.index, r.key)
PY
	[ "$(wc -l < list)" -eq 8 ]
	local pos index key
	while read -r pos index key; do
		imgcrop --crop random-resized --flip --size 48x40 --seed 7 --epoch 2 --index "$index" \
			"$key.webp" want.rgb > /dev/null
		cmp want.rgb "img/$pos.rgb" || fail "record $pos ($key) differs from imgcrop"
	done < list
}
