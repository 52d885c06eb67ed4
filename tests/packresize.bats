#!/usr/bin/env bats
# pack --image-max-side on JPEGs (issue "to the machine's limit", item 5): a grey, YCbCr or RGB
# JPEG is decoded through the image pipeline's DCT-scaled decode (the largest of 1/2, 1/4, 1/8
# whose output is still at least the fitted size), resized by its bilinear resize, re-encoded
# at --jpeg-quality. The same bytes whatever -j and --memory; every re-encoded JPEG's longer
# side exactly N; its pixels the pipeline's (as imgcrop makes them) and close to PIL's resize
# of the original; grey, CMYK, progressive and the corpus's JPEGs still work; PNG and WebP
# keep their own path (the whole image at full size). Pictures come from PIL
# (/usr/bin/python3's python3-pil) and mkwds.

load test_helper/common

need_pil() {
	/usr/bin/python3 -c 'import PIL.Image' 2>/dev/null ||
		skip "no PIL for /usr/bin/python3 (python3-pil)"
}

# pil.tar: img/*.jpg made by PIL (gradients, discs, a little noise; the same bytes every run),
# one sample each, key = the name:
#   a 1024x768 4:2:0 q95   b 2100x900 4:2:0     c 901x601 4:4:4        d 640x1000 4:2:2
#   e 700x500 grey        f 800x600 CMYK        g 900x700 progressive  h 256x200 (fits 256)
#   i 257x40              j 3000x20 (a sliver)  k 333x333
# mk.tar: mkwds's 12 samples of 143x215 .. 440x248 (noisier), with their cls and json fields,
# their pictures also as img/mk/KEY.jpg.
photos() {
	mkdir -p img
	/usr/bin/python3 - <<'PY'
import random
from PIL import Image, ImageDraw

def picture(w, h, seed, mode="RGB"):
    rnd = random.Random(seed)
    g = Image.linear_gradient("L")
    im = Image.merge("RGB", (g.resize((w, h)), g.rotate(90).resize((w, h)),
                             Image.radial_gradient("L").resize((w, h))))
    d = ImageDraw.Draw(im)
    for _ in range(12):
        x0, y0 = rnd.randrange(w), rnd.randrange(h)
        x1, y1 = x0 + rnd.randrange(1, max(2, w // 3)), y0 + rnd.randrange(1, max(2, h // 3))
        d.ellipse((x0, y0, x1, y1), fill=tuple(rnd.randrange(256) for _ in range(3)))
    im = Image.blend(im, Image.effect_noise((w, h), 12).convert("RGB"), 0.1)
    return im if mode == "RGB" else im.convert(mode)

def save(name, im, **kw):
    im.save(f"img/{name}.jpg", "JPEG", **kw)

save("a", picture(1024, 768, 1), quality=95)
save("b", picture(2100, 900, 2), quality=90)
save("c", picture(901, 601, 3), quality=90, subsampling=0)
save("d", picture(640, 1000, 4), quality=90, subsampling=1)
save("e", picture(700, 500, 5, "L"), quality=90)
save("f", picture(800, 600, 6, "CMYK"), quality=90)
save("g", picture(900, 700, 7), quality=90, progressive=True)
save("h", picture(256, 200, 8), quality=90)
save("i", picture(257, 40, 9), quality=90)
save("j", picture(3000, 20, 10), quality=90)
save("k", picture(333, 333, 11), quality=90)
PY
	(cd img && tar --format=gnu --sort=name -cf ../pil.tar -- *.jpg)
	mkwds --count 12 --seed 5 --jpeg-bytes 10K:60K -o mk.tar
	mkdir -p img/mk && tar -xf mk.tar -C img/mk
}

# jpegs SLAB: its jpg fields as out/KEY.jpg, and "KEY SOURCE" lines in out/list (SOURCE:
# img/KEY.jpg or img/mk/KEY.jpg).
jpegs() {
	rm -rf out
	mkdir out
	inspect --list "$1" | cut -f2 | while read -r key; do
		inspect --get "$key" --field jpg "$1" > "out/$key.jpg"
		if [ -e "img/$key.jpg" ]; then
			echo "$key img/$key.jpg"
		else
			echo "$key img/mk/$key.jpg"
		fi
	done > out/list
}

# check_sizes N SLAB: every JPEG in SLAB (packed with --image-max-side N) against its source:
# the longer side exactly N and the size the table records, or the bytes unchanged when it
# already fits; grey, CMYK and the subsampling kept. Prints "KEY WxH" of each re-encoded one.
check_sizes() {
	jpegs "$2"
	inspect --list --json "$2" > out/list.json
	/usr/bin/python3 - "$1" <<'PY'
import io, json, sys
from PIL import Image, JpegImagePlugin
n = int(sys.argv[1])
rows = {r["key"]: r for r in json.load(open("out/list.json"))}
seen = 0
for line in open("out/list"):
    key, src = line.split()
    orig, got = open(src, "rb").read(), open(f"out/{key}.jpg", "rb").read()
    o, g = Image.open(src), Image.open(io.BytesIO(got))
    f = [f for f in rows[key]["fields"] if f["name"] == "jpg"][0]
    assert (f["width"], f["height"]) == g.size, (key, f, g.size)
    if max(o.size) <= n:
        assert got == orig and not f["transcoded"], key
        continue
    assert f["transcoded"] and g.format == "JPEG", key
    assert max(g.size) == n, (key, o.size, g.size)
    want = {"L": "L", "CMYK": "CMYK"}.get(o.mode, "RGB")
    assert g.mode == want, (key, o.mode, g.mode)
    if g.mode == "RGB":
        assert JpegImagePlugin.get_sampling(g) == JpegImagePlugin.get_sampling(o), key
    print(key, "%dx%d" % g.size)
    seen += 1
assert seen > 0
PY
}

@test "--image-max-side on JPEGs: the same bytes whatever -j and --memory" {
	need_pil
	photos
	for n in 256 100; do
		pack -q -j 1 --image-max-side "$n" -o want.slab pil.tar mk.tar
		for args in "-j 2" "-j 4" "-j 3 --memory 1" "-j 4 --memory 100K" "-j 1 --memory 300K"; do
			# shellcheck disable=SC2086
			pack -q $args --image-max-side "$n" -o got.slab pil.tar mk.tar
			cmp want.slab got.slab || fail "pack $args --image-max-side $n differs from -j 1"
		done
	done
	run -0 inspect --verify want.slab
}

@test "--image-max-side on JPEGs: the longer side exactly N, smaller ones byte for byte, colour space and subsampling kept" {
	need_pil
	photos
	pack -q --image-max-side 256 -o s256.slab pil.tar mk.tar
	run -0 check_sizes 256 s256.slab
	assert_output "a 256x192
b 256x110
c 256x171
d 164x256
e 256x183
f 256x192
g 256x199
i 256x40
j 256x2
k 256x256
sample000001 192x256
sample000002 256x193
sample000003 256x205
sample000004 256x144
sample000006 171x256
sample000007 256x206
sample000008 256x170
sample000009 256x192
sample000010 255x256
sample000011 256x192"
	for n in 1000 100 17 1; do
		pack -q --image-max-side "$n" --jpeg-quality 80 -o s.slab pil.tar mk.tar
		check_sizes "$n" s.slab > /dev/null || fail "--image-max-side $n"
	done
	run -0 inspect s.slab
	assert_line "  image-max-side=1"
	assert_line "  jpeg-quality=80"
}

# The pixels: each re-encoded JPEG decoded by PIL against (1) the image pipeline's output for
# that size (imgcrop --crop none: the DCT-scaled decode and the bilinear resize), encoded by
# PIL at the same quality and subsampling: the same pixels (mean absolute error at most 0.1
# of 255, measured 0: pixel for pixel), and between the two sizes at least one image at each
# scale 1/2, 1/4, 1/8; and (2) PIL's resize of the full-size picture (Image.resize, BILINEAR,
# no draft): mean absolute error per channel at most 4.5 (of 255) per image and 3.5 over all
# of them, measured 0.5 .. 3.5 per image, 2.3 (N 256) and 2.8 (N 100) over them, most of it
# the re-encode at quality 90 of noisy pictures (today's full decode and box filter measured
# within 0.5 of these). Not for CMYK (its own path, below), nor for slivers fitted to under 32
# pixels on a side: there the 4:2:0 re-encode averages the colour of row pairs (j at 256x2:
# 19 against PIL, today's output too).
@test "--image-max-side on JPEGs: the pipeline's DCT-scaled decode and resize, close to PIL's resize" {
	need_pil
	photos
	for n in 256 100; do
		pack -q --image-max-side "$n" -o s.slab pil.tar mk.tar
		jpegs s.slab
		/usr/bin/python3 - "$n" <<'PY'
import subprocess, sys
from PIL import Image, ImageChops, ImageStat, JpegImagePlugin

def mae(a, b):
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / len(a.getbands())

n = int(sys.argv[1])
scales, vs_pil = set(), []
for line in open("out/list"):
    key, src = line.split()
    o, g = Image.open(src), Image.open(f"out/{key}.jpg")
    if max(o.size) <= n or min(g.size) < 32 or o.mode == "CMYK":
        continue
    mode = "L" if o.mode == "L" else "RGB"
    r = subprocess.run(["imgcrop", "--crop", "none", "--size", "%dx%d" % g.size,
                        "--channels", "1" if mode == "L" else "3", src, "p.raw"],
                       capture_output=True, text=True, check=True)
    scales.add(r.stdout.split("scale ")[1].split()[0])
    # the pipeline's pixels through libjpeg's encoder as pack encodes them (quality 90, the
    # source's subsampling, the accurate DCT), decoded: the same pixels as pack's output
    pipe = Image.frombytes(mode, g.size, open("p.raw", "rb").read())
    pipe.save("p.jpg", quality=90, subsampling=JpegImagePlugin.get_sampling(o) if mode == "RGB" else -1)
    e = mae(g.convert(mode), Image.open("p.jpg").convert(mode))
    assert e <= 0.1, (n, key, "against the pipeline's pixels re-encoded", e)
    e = mae(g.convert(mode), o.convert(mode).resize(g.size, Image.BILINEAR))
    assert e <= 4.5, (n, key, "against PIL", e)
    vs_pil.append(e)
    print(n, key, r.stdout.strip())
open("scales", "a").write(" ".join(sorted(scales)) + "\n")
assert len(vs_pil) >= 8 and sum(vs_pil) / len(vs_pil) <= 3.5, vs_pil
PY
	done
	run -0 cat scales
	[[ "$output" == *"1/2"* && "$output" == *"1/4"* && "$output" == *"1/8"* ]]
}

@test "--image-max-side: grey stays grey, CMYK stays CMYK (its own area-averaging path), progressive and 4:2:2 decode" {
	need_pil
	photos
	pack -q --image-max-side 128 -o s.slab pil.tar
	for k in d e f g; do
		inspect --get "$k" --field jpg s.slab > "$k.jpg"
	done
	/usr/bin/python3 - <<'PY'
from PIL import Image, ImageChops, ImageStat, JpegImagePlugin
for k, mode, size in (("d", "RGB", (82, 128)), ("e", "L", (128, 91)), ("f", "CMYK", (128, 96)),
                      ("g", "RGB", (128, 100))):
    g = Image.open(k + ".jpg")
    assert (g.mode, g.size) == (mode, size), (k, g.mode, g.size)
    ref = Image.open(f"img/{k}.jpg").convert("RGB").resize(size, Image.BILINEAR)
    e = sum(ImageStat.Stat(ImageChops.difference(g.convert("RGB"), ref)).mean) / 3
    assert e <= 4.0, (k, e)
assert JpegImagePlugin.get_sampling(Image.open("d.jpg")) == 1      # 4:2:2 kept
assert Image.open("f.jpg").info.get("adobe_transform") == 2       # YCCK, as before
PY
	# CMYK: four channels kept, which the pipeline (RGB out) cannot; grey through it.
	run -0 imgcrop --crop none --size 128x91 --channels 1 img/e.jpg e.raw
	assert_output "crop 700x500+0+0 flip 0 scale 1/4 region 0"
}

# markers FILE: the JPEG's markers before its first SOS, as "FFxx" words (APPn with its
# identifier, as "FFE1:Exif").
markers() {
	/usr/bin/python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
i, out = 2, ["FFD8"]
while d[i + 1] != 0xDA:
    m, n = d[i + 1], int.from_bytes(d[i + 2:i + 4], "big")
    word = "FF%02X" % m
    if 0xE0 <= m <= 0xEF:
        word += ":" + d[i + 4:i + 4 + n - 2].split(b"\0")[0][:8].decode("latin-1")
    out.append(word)
    i += 2 + n
print(" ".join(out))
PY
}

@test "--image-max-side: a re-encoded JPEG holds no APP or COM marker of the source (EXIF, ICC, XMP, comment), as pack(1) says" {
	need_pil
	/usr/bin/python3 - <<'PY'
from PIL import Image, ImageCms
im = Image.linear_gradient("L").convert("RGB").resize((400, 300))
exif = Image.Exif()
exif[0x0112] = 6                                            # orientation: rotated
icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
im.save("m.jpg", quality=90, exif=exif.tobytes(), icc_profile=icc, comment=b"a comment")
PY
	run -0 markers m.jpg
	assert_output --regexp 'FFE1:Exif.*FFE2:ICC_PROF.*FFFE'
	tar -cf m.tar m.jpg
	pack -q --image-max-side 64 -o s.slab m.tar
	inspect --get m --field jpg s.slab > out.jpg
	run -0 markers out.jpg
	assert_output --regexp '^FFD8 FFE0:JFIF FFDB '
	refute_output --regexp 'FFE[1-9A-F]|FFFE'
	# kept byte for byte where it fits already
	pack -q --image-max-side 400 -o s.slab m.tar
	inspect --get m --field jpg s.slab | cmp - m.jpg
}

@test "--image-max-side: the corpus's JPEGs (baseline, other coding options, arithmetic-coded) fit; a 12-bit one is a bad sample" {
	need_corpus
	need_pil
	mkdir -p c
	cp "$CORPUS/jpeg/testorig.jpg" "$CORPUS/jpeg/testimgint.jpg" "$CORPUS/jpeg/testimgari.jpg" \
		"$CORPUS/jpeg/monkey12.jpg" c/
	(cd c && tar --format=gnu --sort=name -cf ../c.tar testimgari.jpg testimgint.jpg testorig.jpg)
	pack -q --image-max-side 100 -o c.slab c.tar
	for k in testorig testimgint testimgari; do
		inspect --get "$k" --field jpg c.slab > "$k.jpg"
		/usr/bin/python3 - "$k" "$CORPUS/jpeg/testorig.jpg" <<'PY'
import sys
from PIL import Image, ImageChops, ImageStat
g = Image.open(sys.argv[1] + ".jpg")
assert (g.format, g.mode, g.size) == ("JPEG", "RGB", (100, 66)), (g.format, g.mode, g.size)
# all three are the same picture; PIL may not read the arithmetic-coded one, so the
# baseline one is the reference
ref = Image.open(sys.argv[2]).convert("RGB").resize((100, 66), Image.BILINEAR)
e = sum(ImageStat.Stat(ImageChops.difference(g, ref)).mean) / 3
assert e <= 4.0, (sys.argv[1], e)
PY
	done
	(cd c && tar --format=gnu -cf ../m12.tar monkey12.jpg)
	run -1 --separate-stderr pack --image-max-side 16 -o m.slab m12.tar
	assert_equal "$stderr" "pack: 'm12.tar': sample 'monkey12' field 'jpg': unsupported JPEG: 12-bit samples, only 8-bit JPEGs can be decoded"
	[ ! -e m.slab ]
}

@test "--image-max-side: PNG and WebP keep their path, the whole image at full size through the pipeline" {
	/usr/bin/python3 -c 'import sys, PIL.features as f; sys.exit(0 if f.check("webp") else 1)' \
		2>/dev/null || skip "no PIL with WebP for /usr/bin/python3 (python3-pil)"
	need_pil
	photos
	/usr/bin/python3 - <<'PY'
from PIL import Image
im = Image.open("img/a.jpg")
im.save("img/a.png")
im.save("img/ll.webp", lossless=True)
im.save("img/ly.webp", quality=80)
PY
	mkdir -p o
	cp img/a.png o/p.png
	cp img/ll.webp o/q.webp
	cp img/ly.webp o/r.webp
	(cd o && tar --format=gnu --sort=name -cf ../o.tar p.png q.webp r.webp)
	pack -q -j 1 --image-max-side 256 -o o.slab o.tar
	pack -q -j 4 --memory 1 --image-max-side 256 -o o4.slab o.tar
	cmp o.slab o4.slab
	inspect --get p --field png o.slab > p.png
	inspect --get q --field webp o.slab > q.webp
	inspect --get r --field webp o.slab > r.webp
	# the exact path: a full-size decode (scale 1/1) and the same resize
	run -0 imgcrop --crop none --exact --size 256x192 img/a.png want.rgb
	assert_output "crop 1024x768+0+0 flip 0 scale 1/1 region 0"
	/usr/bin/python3 - <<'PY'
from PIL import Image
want = open("want.rgb", "rb").read()
for name, fmt in (("p.png", "PNG"), ("q.webp", "WEBP")):
    g = Image.open(name)
    assert (g.format, g.size) == (fmt, (256, 192)), (name, g.format, g.size)
    assert g.convert("RGB").tobytes() == want, name + ": not the pipeline's full-size pixels"
r = Image.open("r.webp")
assert (r.format, r.size) == ("WEBP", (256, 192)), (r.format, r.size)
PY
}
