#!/usr/bin/env bats
# Channels, alpha and the nearest resize in the image pipeline (struct slab_image_spec's
# channels, alpha, background and resize; imgcrop, slab.Loader and prefetch --emit-format
# frames): grey is PIL's convert("L") to the bit and leaves grey images unchanged, a palette
# PNG gives its indices, RGBA is PIL's convert("RGBA") and composite PIL's alpha_composite at
# full size, the nearest resize is PIL's crop + resize(NEAREST) exactly (a label mask keeps its
# labels), the loader's shapes, the frames stream's header (version 2 for 1 and 4 channels)
# and every bad option's message.
#
# Tolerance against PIL for the bilinear resize of grey and RGBA crops (PIL: convert("L") or
# RGBA, then crop(box).resize((W, H), BILINEAR, reducing_gap=None), which resizes RGBA
# premultiplied): the per-channel mean absolute error of tests/image.bats, <= 1.0.

load test_helper/common

# PIL and numpy are /usr/bin/python3's (python3-pil, python3-numpy).
PY=/usr/bin/python3
need_pil() {
	$PY -c 'import PIL, numpy' 2>/dev/null || skip "no PIL and numpy for /usr/bin/python3"
}

# pyrun ARGS...: /usr/bin/python3 on a script on stdin, slab.py and the test helpers
# importable, slab.py on the build's libslab.so (a sanitizer build's with its runtime
# preloaded, as pyslab_any does: the loader's tests run under AddressSanitizer too).
pyrun() {
	if [ -z "$LIBSLAB" ] && [ -f "$SLAB_BUILD/libslab.so" ]; then
		LD_PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)" \
			ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:${ASAN_OPTIONS:-}" \
			PYTHONPATH="$SLAB_ROOT/scripts:$HELPERS" SLAB_LIBRARY="$SLAB_BUILD/libslab.so" $PY - "$@"
	else
		PYTHONPATH="$SLAB_ROOT/scripts:$HELPERS" SLAB_LIBRARY="$SLAB_BUILD/libslab.so" $PY - "$@"
	fi
}

setup() {
	cat > chan.py <<'PY'
"""Shared by the tests of channels.bats: imgcrop's output as an array, the crop it took, and
PIL's references."""
import os, re, sys
import imgbatch
import numpy as np
from PIL import Image

def imgcrop(path, w, h, *args):
    """(array of imgcrop's output, (w, h, x, y, flip)); args: imgcrop's options. (Run by an
    imgcrop --batch: tests/test_helper/imgbatch.py.)"""
    rc, text = imgbatch.run("--size", "%dx%d" % (w, h), *args, path, "out.raw")
    assert rc == 0, (path, args, text)
    m = re.match(r"crop (\d+)x(\d+)\+(\d+)\+(\d+) flip (\d) ", text)
    return np.fromfile("out.raw", np.uint8), tuple(map(int, m.groups()))

def full(path, *args):
    """imgcrop of the whole image at its own size."""
    im = Image.open(path)
    return imgcrop(path, im.size[0], im.size[1], "--crop", "none", *args)[0]

def pil_crop(im, crop, size, resample):
    """PIL's crop + resize (+ flip) of the crop imgcrop reported."""
    w, h, x, y, flip = crop
    out = im.crop((x, y, x + w, y + h)).resize(size, resample, reducing_gap=None)
    return out.transpose(Image.FLIP_LEFT_RIGHT) if flip else out

def composite(im, bg):
    """PIL's alpha_composite of im over an opaque bg, as RGB."""
    base = Image.new("RGBA", im.size, tuple(bg) + (255,))
    return Image.alpha_composite(base, im.convert("RGBA")).convert("RGB")

def mae(a, b, channels):
    """The largest per-channel mean absolute error."""
    d = np.abs(np.asarray(a, float).reshape(-1, channels) - np.asarray(b, float).reshape(-1, channels))
    return d.mean(0).max()

def masks(n, w=97, h=61, labels=21, seed=1):
    """n label masks (uint8 arrays of 0 .. labels - 1): blocks of labels and scattered
    single pixels, so that an interpolated or shifted pixel shows."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        m = rng.integers(0, labels, (h // 6 + 1, w // 6 + 1)).repeat(6, 0).repeat(6, 1)[:h, :w]
        m[::5, ::3] = rng.integers(0, labels, m[::5, ::3].shape)
        out.append(m.astype(np.uint8))
    return out

def save_mask(m, path, mode):
    """m as a PNG in PIL's mode "L", or "P" with a palette whose colours are not the
    indices."""
    im = Image.fromarray(m, "L")
    if mode == "P":
        im = Image.fromarray(m, "P")
        im.putpalette([(i * 37 + 11) % 256 for i in range(768)])
    im.save(path)
PY
}

@test "grey: PIL's convert('L') exactly (identity and nearest paths); grey PNGs and JPEGs unchanged" {
	need_pil
	run -0 pyrun <<'PY'
import numpy as np
from PIL import Image
from chan import *
rng = np.random.default_rng(5)
rgb = rng.integers(0, 256, (83, 117, 3), dtype=np.uint8)
rgb[:4, :4] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]]     # the extremes
Image.fromarray(rgb).save("rgb.png")
Image.fromarray(rgb[..., 1]).save("grey.png")
Image.fromarray(rgb[..., 1]).save("grey.jpg", quality=90)
ref = Image.open("rgb.png").convert("L")
assert np.array_equal(full("rgb.png", "--channels", 1), np.asarray(ref).reshape(-1))
# the formula, over every colour the test image has
r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
assert np.array_equal(np.asarray(ref), ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8))
# nearest: crops of every size, flipped or not, CHW the same bytes for one channel
for i in range(40):
    ow, oh = int(rng.integers(1, 150)), int(rng.integers(1, 150))
    got, crop = imgcrop("rgb.png", ow, oh, "--crop", "random-resized", "--flip", "--seed", 3,
                        "--index", i, "--channels", 1, "--resize", "nearest")
    assert np.array_equal(got, np.asarray(pil_crop(ref, crop, (ow, oh), Image.NEAREST)).reshape(-1)), i
    chw, _ = imgcrop("rgb.png", ow, oh, "--crop", "random-resized", "--flip", "--seed", 3,
                     "--index", i, "--channels", 1, "--resize", "nearest", "--chw")
    assert np.array_equal(got, chw), i
# a grey image comes through unchanged: the PNG's values, the JPEG's as its RGB has them
assert np.array_equal(full("grey.png", "--channels", 1), rgb[..., 1].reshape(-1))
three = full("grey.jpg").reshape(-1, 3)
assert (three[:, 0] == three[:, 1]).all() and (three[:, 1] == three[:, 2]).all()
assert np.array_equal(full("grey.jpg", "--channels", 1), three[:, 0])
assert np.array_equal(full("grey.jpg", "--channels", 1), np.asarray(Image.open("grey.jpg")).reshape(-1))
# bilinear grey crops: PIL's convert("L") then resize, within the tolerance
worst = 0
for i in range(20):
    got, crop = imgcrop("rgb.png", 40, 30, "--crop", "random-resized", "--seed", 4, "--index", i,
                        "--channels", 1)
    worst = max(worst, mae(got, pil_crop(ref, crop, (40, 30), Image.BILINEAR), 1))
assert worst <= 1.0, worst
print("ok", round(worst, 3))
PY
	assert_output --regexp '^ok [0-9.]+$'
}

@test "RGBA: PngSuite's alpha and tRNS files and the WebP alpha vectors at full size are PIL's RGBA; JPEGs opaque" {
	need_corpus
	need_pil
	run -0 pyrun "$CORPUS" <<'PY'
import os, struct, sys, warnings
import numpy as np
from PIL import Image
from chan import *
warnings.simplefilter("ignore")
corpus, n = sys.argv[1], 0
for name in sorted(os.listdir(corpus + "/png")):
    path = corpus + "/png/" + name
    if not name.endswith(".png") or name.startswith("x"):
        continue
    im = Image.open(path)
    data = open(path, "rb").read()
    depth, ctype = data[24], data[25]
    if not (ctype in (4, 6) or b"tRNS" in data):
        continue
    got = full(path, "--channels", 4).reshape(-1, 4)
    if depth == 16 and ctype == 0:
        # PIL keeps 16-bit grey whole (mode I) and clips it in convert(); the alpha is the
        # tRNS key's: alpha 0 exactly where the grey is the key
        key = struct.unpack(">H", data[data.index(b"tRNS") + 4:][:2])[0]
        raw = np.asarray(im).reshape(-1)
        assert np.array_equal(got[:, 3], np.where(raw == key, 0, 255)), name
    elif depth < 8 and ctype == 0:
        # PIL compares a 1, 2 or 4-bit grey tRNS key with the samples widened to 8 bits,
        # so it never matches; the PNG specification's key is the sample before widening
        key = struct.unpack(">H", data[data.index(b"tRNS") + 4:][:2])[0]
        wide = key * 255 // ((1 << depth) - 1)
        raw = np.asarray(im.convert("L")).reshape(-1)
        assert np.array_equal(got[:, 3], np.where(raw == wide, 0, 255)), name
        assert np.array_equal(got[:, :3], np.asarray(im.convert("RGB")).reshape(-1, 3)), name
    else:
        want = np.asarray(im.convert("RGBA")).reshape(-1, 4).astype(int)
        # 16-bit samples: rounded here, PIL takes the high byte (at most 1 less)
        assert np.abs(got - want).max() <= (1 if depth == 16 else 0), name
    n += 1
for name in sorted(os.listdir(corpus + "/webp")):
    path = corpus + "/webp/" + name
    if not name.endswith(".webp"):
        continue
    im = Image.open(path)
    if im.mode != "RGBA" or im.size[0] * im.size[1] > 4000000:
        continue
    assert np.array_equal(full(path, "--channels", 4), np.asarray(im).reshape(-1)), name
    n += 1
# JPEGs: alpha 255 whatever the colour space, the colour that of 3 channels
rng = np.random.default_rng(2)
px = rng.integers(0, 256, (40, 56, 4), dtype=np.uint8)
for mode in ("RGB", "L", "CMYK"):
    Image.fromarray(px[..., :len(mode)] if mode != "L" else px[..., 0], mode).save("j.jpg")
    four = full("j.jpg", "--channels", 4).reshape(-1, 4)
    assert (four[:, 3] == 255).all(), mode
    assert np.array_equal(four[:, :3], full("j.jpg").reshape(-1, 3)), mode
    n += 1
print("ok", n)
PY
	assert_output --regexp '^ok [0-9]+$'
}

@test "composite: PIL's alpha_composite over the background at full size; grey after it; bilinear RGBA within tolerance" {
	need_corpus
	need_pil
	run -0 pyrun "$CORPUS" <<'PY'
import os, sys, warnings
import numpy as np
from PIL import Image
from chan import *
warnings.simplefilter("ignore")
corpus, n = sys.argv[1], 0
files = [corpus + "/png/" + f for f in sorted(os.listdir(corpus + "/png"))
         if f.endswith(".png") and not f.startswith("x")]
files += [corpus + "/webp/" + f for f in sorted(os.listdir(corpus + "/webp"))
          if f.startswith(("alpha_", "lossy_alpha", "lossless"))]
for path in files:
    im = Image.open(path)
    data = open(path, "rb").read(26)
    if im.size[0] * im.size[1] > 4000000 or im.mode in ("I", "I;16"):
        continue        # 16-bit grey: PIL clips it (tests/png.bats)
    if data[:4] == b"\x89PNG" and data[24] < 8 and data[25] == 0:
        continue        # PIL misses a low-depth grey tRNS key (see the RGBA test)
    tol = 1 if data[:4] == b"\x89PNG" and data[24] == 16 else 0
    for bg in ((255, 255, 255), (10, 200, 30)):
        args = ["--alpha", "composite"] + (["--background", "%d,%d,%d" % bg] if bg[1] != 255 else [])
        want = composite(im, bg)
        got = full(path, *args)
        assert np.abs(got.astype(int) - np.asarray(want).reshape(-1)).max() <= tol, (path, bg)
        got = full(path, "--channels", 1, *args)
        if im.mode == "P":      # one channel of a palette PNG: its indices, alpha aside
            want = Image.fromarray(np.asarray(im), "L")
        assert np.abs(got.astype(int) - np.asarray(want.convert("L")).reshape(-1)).max() <= tol, (path, bg)
    n += 1
# crops: RGBA bilinear (PIL resizes it premultiplied) and composite, within the tolerance
h, w = 120, 160
yy, xx = np.mgrid[0:h, 0:w]
rgba = np.stack([xx * 255 // w, yy * 255 // h, (xx * yy) % 256,
                 np.clip(np.sin(xx / 13.0) * np.cos(yy / 9.0) * 200 + 128, 0, 255)], -1).astype(np.uint8)
rgba[:, :w // 3, 3] = 0
rgba[:, :w // 3, 0] = 255                       # red under transparency: it must not bleed
Image.fromarray(rgba, "RGBA").save("a.png")
src = Image.open("a.png")
worst = [0, 0]
for i in range(20):
    got, crop = imgcrop("a.png", 37, 29, "--crop", "random-resized", "--flip", "--seed", 8,
                        "--index", i, "--channels", 4)
    worst[0] = max(worst[0], mae(got, pil_crop(src, crop, (37, 29), Image.BILINEAR), 4))
    got, crop = imgcrop("a.png", 37, 29, "--crop", "random-resized", "--flip", "--seed", 8,
                        "--index", i, "--alpha", "composite")
    worst[1] = max(worst[1], mae(got, pil_crop(composite(src, (255, 255, 255)), crop, (37, 29),
                                               Image.BILINEAR), 3))
assert max(worst) <= 1.0, worst
print("ok", n, [round(v, 3) for v in worst])
PY
	assert_output --regexp '^ok [0-9]+ \[[0-9., ]+\]$'
}

@test "label masks: slab.Loader(channels=1, resize='nearest', random-resized crops) is PIL's crop + resize(NEAREST), labels only" {
	need_pil
	need_libslab_any
	run -0 pyrun <<'PY'
import os, subprocess, tarfile
import numpy as np
from PIL import Image
import slab
from chan import *
ms = masks(24)
os.mkdir("src")
for i, m in enumerate(ms):
    save_mask(m, "src/%03d.seg.png" % i, "P" if i % 2 else "L")
    open("src/%03d.cls" % i, "w").write(str(i))
with tarfile.open("m.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for f in sorted(os.listdir("src")):
        t.add("src/" + f, arcname=f)
subprocess.run(["pack", "-q", "-o", "m.slab", "m.tar"], check=True)
for chw in (False, True):
    with slab.Loader(["m.slab"], image="seg.png", size=(33, 47), crop="random-resized", flip=True,
                     seed=6, epoch=2, batch_size=5, channels=1, resize="nearest", chw=chw,
                     labels="cls") as ld:
        seen = 0
        for b in ld:
            a = np.asarray(b.images)
            assert a.shape == ((len(b), 1, 33, 47) if chw else (len(b), 33, 47, 1)), a.shape
            for j in range(len(b)):
                i = int(b.labels[j])
                img = a[j].reshape(33, 47)
                assert set(np.unique(img)) <= set(range(21)), i
                _, crop = imgcrop("src/%03d.seg.png" % i, 47, 33, "--crop", "random-resized",
                                  "--flip", "--seed", 6, "--epoch", 2, "--index", i,
                                  "--channels", 1, "--resize", "nearest")
                # PIL's own: a mode "P" image's indices (numpy.array(Image.open(f)))
                ref = Image.fromarray(np.asarray(Image.open("src/%03d.seg.png" % i)), "L")
                want = np.asarray(pil_crop(ref, crop, (47, 33), Image.NEAREST))
                assert np.array_equal(img, want), (i, crop)
                seen += 1
        assert seen == 24 and ld.stats()["images"] == 24
# bilinear would have blended labels: the test can tell
def batch(**kw):
    with slab.Loader(["m.slab"], image="seg.png", size=(33, 47), crop="random-resized", seed=6,
                     batch_size=24, channels=1, **kw) as ld:
        return np.asarray(next(iter(ld)).images).copy()
assert not np.array_equal(batch(), batch(resize="nearest"))
print("ok")
PY
	assert_output "ok"
}

@test "slab.Loader: shapes (n, H, W, C) and (n, C, H, W) for 1, 3 and 4 channels, each image imgcrop's" {
	need_corpus
	need_pil
	need_libslab_any
	run -0 pyrun "$CORPUS" <<'PY'
import os, shutil, subprocess, sys, tarfile
import numpy as np
import slab
from chan import *
corpus = sys.argv[1]
os.mkdir("src")
names = ["basn6a08.png", "basn3p04.png", "ftbrn2c08.png", "basn0g08.png"]
for i, n in enumerate(names):
    # copied: a hard link fails where the corpus and the test's folder (/tmp, say a tmpfs)
    # are on two filesystems
    shutil.copyfile(corpus + "/png/" + n, "src/%d.img" % i)
with tarfile.open("p.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for f in sorted(os.listdir("src")):
        t.add("src/" + f, arcname=f)
subprocess.run(["pack", "-q", "-o", "p.slab", "p.tar"], check=True)
cases = [(dict(), 3, []), (dict(channels=3), 3, []), (dict(channels=1), 1, ["--channels", 1]),
         (dict(channels=4), 4, ["--channels", 4]), (dict(alpha="keep"), 4, ["--channels", 4]),
         (dict(alpha="composite", background=(0, 0, 255)), 3,
          ["--alpha", "composite", "--background", "0,0,255"]),
         (dict(channels=1, alpha="composite"), 1, ["--channels", 1, "--alpha", "composite"]),
         (dict(channels=4, resize="nearest"), 4, ["--channels", 4, "--resize", "nearest"])]
for kw, c, args in cases:
    for chw in (False, True):
        with slab.Loader(["p.slab"], image="img", size=(12, 20), crop="random-resized",
                         flip=True, seed=1, batch_size=4, chw=chw, **kw) as ld:
            b = next(iter(ld))
            shape = tuple(b.images.shape)
            assert shape == ((4, c, 12, 20) if chw else (4, 12, 20, c)), (kw, chw, shape)
            assert b.images.nbytes == 4 * 12 * 20 * c
            for j in range(4):
                want, _ = imgcrop("src/%d.img" % j, 20, 12, "--crop", "random-resized", "--flip",
                                  "--seed", 1, "--index", j, *(args + (["--chw"] if chw else [])))
                assert b.image(j).tobytes() == want.tobytes(), (kw, chw, j)
print("ok")
PY
	assert_output "ok"
}

@test "frames: --channels 1 and 4 streams say so (version 2), each image imgcrop's; 3 channels unchanged (version 1)" {
	need_corpus
	mkdir src
	cp "$CORPUS/png/basn6a08.png" src/0.png
	cp "$CORPUS/png/basn3p08.png" src/1.png
	cp "$CORPUS/png/ftbrn2c08.png" src/2.png
	printf 0 > src/0.cls && printf 1 > src/1.cls && printf 2 > src/2.cls
	(cd src && tar --format=gnu --sort=name -cf ../p.tar -- *)
	pack -q -o p.slab p.tar
	shuffle-plan -q --mode sequential --seed 4 -o p.plan p.slab
	local frames=(--emit --emit-format frames --image png --size 9x7 --flip)
	prefetch -q --plan p.plan "${frames[@]}" p.slab > d.frames
	prefetch -q --plan p.plan "${frames[@]}" --channels 3 --alpha drop --resize bilinear p.slab > 3.frames
	cmp d.frames 3.frames
	prefetch -q --plan p.plan "${frames[@]}" --channels 1 --resize nearest p.slab > 1.frames
	prefetch -q --plan p.plan "${frames[@]}" --alpha keep --chw p.slab > 4.frames
	prefetch -q --plan p.plan "${frames[@]}" --alpha composite --background 1,2,3 p.slab > c.frames
	PYTHONPATH="$HELPERS" python3 - <<'PY'
import struct
from frames import read_frames
for name, version, c, layout in (("d", 1, 3, 0), ("1", 2, 1, 0), ("4", 2, 4, 1), ("c", 1, 3, 0)):
    data = open(name + ".frames", "rb").read()
    assert struct.unpack_from("<I", data, 8)[0] == version, name
    h, recs, end = read_frames(name + ".frames")
    assert (h["channels"], h["layout"], h["image_bytes"]) == (c, layout, 9 * 7 * c), (name, h)
    assert end == (3, 0) and len(recs) == 3
    for r in recs:
        open("%s-%d.raw" % (name, r.index), "wb").write(r.image)
PY
	local i
	for i in 0 1 2; do
		imgcrop --crop random-resized --flip --seed 4 --index "$i" --size 9x7 --channels 1 \
			--resize nearest "src/$i.png" want.raw > /dev/null
		cmp want.raw "1-$i.raw"
		imgcrop --crop random-resized --flip --seed 4 --index "$i" --size 9x7 --channels 4 --chw \
			"src/$i.png" want.raw > /dev/null
		cmp want.raw "4-$i.raw"
		imgcrop --crop random-resized --flip --seed 4 --index "$i" --size 9x7 --alpha composite \
			--background 1,2,3 "src/$i.png" want.raw > /dev/null
		cmp want.raw "c-$i.raw"
	done
	# a reader of version 1 only (as prefetch(1)'s example was) refuses the grey stream
	run -1 python3 -c '
import struct, sys
magic, version = struct.unpack("<8sI", open("1.frames", "rb").read(12))
if version != 1:
    sys.exit("unknown frames version %d" % version)'
	assert_output "unknown frames version 2"
}

@test "bad options: prefetch and imgcrop usage errors, slab.Loader ValueErrors, the loader's own checks" {
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --channels 2 x.slab
	assert_equal "$stderr" "prefetch: invalid --channels '2' (1 grey, 3 RGB or 4 RGBA)
Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --alpha over x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --alpha 'over' (drop, composite or keep)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --background 1,2 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --background '1,2' (R,G,B, each from 0 to 255)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --background 1,2,256 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --background '1,2,256' (R,G,B, each from 0 to 255)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --resize cubic x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --resize 'cubic' (bilinear or nearest)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --alpha keep --channels 1 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --alpha keep goes with --channels 4, not 1"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --channels 4 --alpha composite x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --alpha composite does not go with --channels 4 (RGBA keeps the alpha)"
	run -2 --separate-stderr prefetch --plan p --emit --emit-format frames --image png --background 0,0,0 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --background goes with --alpha composite"
	run -2 --separate-stderr prefetch --plan p --emit --channels 1 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --channels goes with --emit-format frames"
	run -2 --separate-stderr prefetch --resize nearest x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --resize goes with --emit-format frames"

	run -2 --separate-stderr imgcrop --channels 0 in out
	assert_equal "$stderr" "imgcrop: invalid --channels '0' (1 grey, 3 RGB or 4 RGBA)"
	run -2 --separate-stderr imgcrop --alpha keep --channels 3 in out
	assert_equal "$stderr" "imgcrop: --alpha keep goes with --channels 4, not 3"
	run -2 --separate-stderr imgcrop --background 1,2,3 in out
	assert_equal "$stderr" "imgcrop: --background goes with --alpha composite"

	need_libslab_any
	mkwds --count 2 -o t.tar
	pack -q -o t.slab t.tar
	run -0 pyrun <<'PY'
import slab
def refused(want, **kw):
    try:
        slab.Loader(["t.slab"], image="jpg", **kw).close()
    except (ValueError, slab.SlabError) as e:
        assert (type(e).__name__, str(e)) == want, (kw, type(e).__name__, str(e))
    else:
        raise AssertionError(("not refused", kw))
V = "ValueError"
refused((V, "channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not 2"), channels=2)
refused((V, "channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not True"), channels=True)
refused((V, "channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not 1.0"), channels=1.0)
# a numpy integer is its value (it shapes b.images: it failed every batch)
import numpy
with slab.Loader(["t.slab"], image="jpg", size=(8, 8), batch_size=2, channels=numpy.int64(1)) as ld:
    assert numpy.asarray(next(ld).images).shape == (2, 8, 8, 1)
refused((V, "alpha must be 'drop', 'composite' or 'keep', not 'over'"), alpha="over")
refused((V, "resize must be 'bilinear' or 'nearest', not 'bicubic'"), resize="bicubic")
refused((V, "alpha='keep' needs channels=4, not channels=1"), alpha="keep", channels=1)
refused((V, "channels=4 keeps the alpha: alpha must be 'keep' or None, not 'drop'"),
        channels=4, alpha="drop")
refused((V, "background must be (r, g, b), each an integer from 0 to 255, not (0, 0, 256)"),
        alpha="composite", background=(0, 0, 256))
refused((V, "background must be (r, g, b), each an integer from 0 to 255, not 'white'"),
        alpha="composite", background="white")
refused((V, "background needs alpha='composite', not alpha='drop'"), background=(0, 0, 0))
# past Python's checks, libslab's own (a spec from another binding)
real = slab._channels
for value, want in ((dict(channels=2), "image channels 2: wanted 1 (grey), 3 (RGB) or 4 (RGBA)"),
                    (dict(resize="x"), "image resize 7: wanted 0 (bilinear) or 1 (nearest)"),
                    (dict(alpha="composite", channels=4),
                     "image alpha composite with 4 channels: RGBA keeps the alpha")):
    slab._channels = lambda *a, v=value: (v.get("channels", 3), v.get("alpha", "drop"),
                                          (0, 0, 0), v.get("resize", "bilinear"))
    slab._RESIZES["x"] = 7
    refused(("SlabError", want))
slab._channels = real
print("ok")
PY
	assert_output "ok"
}
