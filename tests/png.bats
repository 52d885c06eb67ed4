#!/usr/bin/env bats
# PNG in the image pipeline (lib/dataset/image_png.c, through build/bin/imgcrop, slab.Loader and
# prefetch --emit-format frames): every PngSuite file at full size byte for byte PIL's
# Image.open(f).convert("RGB") (16-bit files: the documented rounding, checked against a PNG
# decoder in Python written here), gamma, sBIT and alpha left alone, crops against PIL's crop +
# resize, crashers and damaged files as clean errors, bombs refused in bounded memory, and
# the WebDataset PNG shard end to end.
#
# Tolerance against PIL for crops (`convert("RGB").crop(box).resize((W, H), BILINEAR,
# reducing_gap=None)`): the per-channel mean absolute error of tests/image.bats's full decode,
# <= 1.0. A PNG is always decoded at full scale, so the rows-only path must also equal the
# --exact path byte for byte.

load test_helper/common

# PIL is /usr/bin/python3's (python3-pil); pngtool.py (written by setup) is standard library.
PY=/usr/bin/python3
need_pil() {
	$PY -c 'import PIL' 2>/dev/null || skip "no PIL for /usr/bin/python3 (python3-pil)"
}

# The peak RSS bound of tests/bombs.bats.
RSS_MAX_KB=$((200 * 1024))

# peak_rss CMD...: run CMD (its output thrown away); sets rc to its exit status and rss to
# its peak resident set in KiB (as tests/bombs.bats). A sanitizer build's freed memory is
# held back only a little (ASan keeps 256 MiB of it by default, to catch use after free).
peak_rss() {
	local r
	r=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" $PY - "$@" <<'PY'
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
	rc=${r% *}
	rss=${r#* }
}

setup() {
	cat > pngtool.py <<'PY'
"""PNG files for tests/png.bats: made here (every colour type and bit depth, Adam7, all five
filters, extra chunks, a stream that goes on after the image), and decoded here as the
reference: samples as stored, 16-bit ones reduced to 8 bits by (v * 255 + 32767) // 65535,
1, 2 and 4-bit grey widened by repeating the bits, grey made RGB, alpha and tRNS dropped, gAMA,
sBIT and the rest ignored, a palette index past the palette grey (i, i, i) as PIL has it."""
import os, struct, sys, zlib

sys.path.insert(0, os.environ["HELPERS"])
import imgbatch

SIG = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def passes(w, h, interlace):
    for x0, y0, dx, dy in (ADAM7 if interlace else [(0, 0, 1, 1)]):
        pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
        if pw > 0 and ph > 0:
            yield x0, y0, dx, dy, pw, ph


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def predict(f, line, prev, i, bpp):
    a = line[i - bpp] if i >= bpp else 0
    b, c = prev[i], prev[i - bpp] if i >= bpp else 0
    return (0, a, b, (a + b) // 2, paeth(a, b, c))[f]


def pack_row(samples, depth):
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, n = bytearray(), 0, 0
    for v in samples:
        acc, n = acc << depth | v, n + depth
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    return bytes(out + (bytes([acc << (8 - n)]) if n else b""))


def encode(w, h, depth, ctype, px, interlace=0, before=b"", plte=None, trns=None, after=b"",
           stream_tail=b"", idat_size=None):
    """A PNG whose pixel (x, y) has the samples px(x, y); row k filtered with filter k % 5;
    before: chunks after IHDR, after: chunks before IEND; stream_tail: bytes deflated after
    the image's; idat_size: the stream split in IDATs of that many bytes."""
    ch = CHANNELS[ctype]
    bpp = max(1, ch * depth // 8)
    raw, k = bytearray(), 0
    for x0, y0, dx, dy, pw, ph in passes(w, h, interlace):
        prev = bytes((pw * ch * depth + 7) // 8)
        for j in range(ph):
            line = pack_row([s for i in range(pw) for s in px(x0 + i * dx, y0 + j * dy)], depth)
            f, k = k % 5, k + 1
            raw.append(f)
            raw += bytes((line[i] - predict(f, line, prev, i, bpp)) & 255 for i in range(len(line)))
            prev = line
    z = zlib.compress(bytes(raw) + stream_tail, 9)
    out = SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace))
    out += before
    if plte is not None:
        out += chunk(b"PLTE", plte)
    if trns is not None:
        out += chunk(b"tRNS", trns)
    step = idat_size or len(z)
    for i in range(0, len(z), step):
        out += chunk(b"IDAT", z[i:i + step])
    return out + after + chunk(b"IEND", b"")


def chunks(data):
    """(type, offset of its data, length) of every chunk."""
    pos, out = 8, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append((kind, pos + 8, n))
        pos += 12 + n
    return out


def decode(data):
    """(w, h, bit depth, colour type, RGB bytes) of a valid PNG."""
    assert data[:8] == SIG
    idat, plte = b"", b""
    for kind, off, n in chunks(data):
        body = data[off:off + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"IDAT":
            idat += body
    ch = CHANNELS[ctype]
    bpp = max(1, ch * depth // 8)
    need = sum(ph * (1 + (pw * ch * depth + 7) // 8) for _, _, _, _, pw, ph in passes(w, h, interlace))
    raw = zlib.decompressobj().decompress(idat, need)
    img = [[None] * w for _ in range(h)]
    off = 0
    for x0, y0, dx, dy, pw, ph in passes(w, h, interlace):
        stride = (pw * ch * depth + 7) // 8
        prev = bytearray(stride)
        for j in range(ph):
            f, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
            off += 1 + stride
            for i in range(stride):
                line[i] = (line[i] + predict(f, line, prev, i, bpp)) & 255
            prev = line
            for i in range(pw):
                if depth < 8:
                    bit = i * depth
                    s = [(line[bit // 8] >> (8 - depth - bit % 8)) & ((1 << depth) - 1)]
                elif depth == 8:
                    s = list(line[i * ch:(i + 1) * ch])
                else:
                    s = [((line[2 * k] << 8 | line[2 * k + 1]) * 255 + 32767) // 65535
                         for k in range(i * ch, (i + 1) * ch)]
                if ctype == 3:
                    k = s[0]
                    p = tuple(plte[3 * k:3 * k + 3]) if 3 * k + 3 <= len(plte) else (k, k, k)
                elif ctype in (0, 4):
                    g = s[0] * 255 // ((1 << depth) - 1) if depth < 8 else s[0]
                    p = (g, g, g)
                else:
                    p = tuple(s[:3])
                img[y0 + j * dy][x0 + i * dx] = p
    return w, h, depth, ctype, bytes(v for row in img for p in row for v in p)


def imgcrop(*args, libdeflate=None):
    """(exit status, stdout, stderr) of build/bin/imgcrop ARGS, run by an imgcrop --batch (one
    for each SLAB_PNG_LIBDEFLATE given; None: not set)."""
    rc, text = imgbatch.run(*args, env=None if libdeflate is None else
                            {"SLAB_PNG_LIBDEFLATE": libdeflate})
    return (rc, text + "\n", "") if rc == 0 else (rc, "", text + "\n")


def full(path, w, h):
    """The pipeline's full-size output of path: crop none at its own size (an identity
    resize), checked equal to the --exact path's."""
    rc, out, err = imgcrop("--crop", "none", "--size", "%dx%d" % (w, h), path, "full.rgb")
    assert rc == 0 and out == "crop %dx%d+0+0 flip 0 scale 1/1 region 0\n" % (w, h), (path, rc, out, err)
    got = open("full.rgb", "rb").read()
    rc, out, err = imgcrop("--exact", "--crop", "none", "--size", "%dx%d" % (w, h), path, "full.rgb")
    assert rc == 0 and open("full.rgb", "rb").read() == got, (path, "--exact differs")
    return got
PY
}

@test "PngSuite: every valid file at full size is PIL's convert('RGB'), 16-bit ones the rounding; x*.png refused" {
	need_corpus
	need_pil
	run -0 $PY - "$CORPUS/png" <<'PY'
import glob, os, sys
from PIL import Image
import pngtool
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.png")))
n = bad = sixteen = 0
for path in files:
    name = os.path.basename(path)
    if name.startswith("x"):
        rc, out, err = pngtool.imgcrop("--crop", "none", "--size", "8x8", path, "x.rgb")
        assert rc == 1 and err.startswith("imgcrop: '%s': corrupt PNG: " % path), (name, rc, err)
        bad += 1
        continue
    data = open(path, "rb").read()
    w, h, depth, ctype, ref = pngtool.decode(data)
    im = Image.open(path)
    assert im.size == (w, h), name
    got = pngtool.full(path, w, h)
    assert got == ref, (name, "differs from the reference decoder")
    if depth <= 8:
        assert got == im.convert("RGB").tobytes(), (name, "differs from PIL")
    elif im.mode == "I":
        # PIL keeps 16-bit grey whole (mode I) and clips it at 255 in convert("RGB"):
        # compare with its samples rounded instead.
        want = bytes(v for s in im.getdata() for v in [(s * 255 + 32767) // 65535] * 3)
        assert got == want, (name, "differs from PIL's 16-bit grey, rounded")
        sixteen += 1
    else:
        # PIL takes the high byte of 16-bit colour samples, v >> 8 against about v / 257.
        pil = im.convert("RGB").tobytes()
        assert all(abs(g - p) <= 1 for g, p in zip(got, pil)), (name, "more than 1 from PIL")
        sixteen += 1
    n += 1
assert n >= 1
print("ok", n, "valid", sixteen, "16-bit", bad, "refused")
PY
	assert_output --regexp '^ok [0-9]+ valid [0-9]+ 16-bit [0-9]+ refused$'
	echo "# $output" >&3
}

@test "every colour type and bit depth, Adam7 and tRNS: PIL's bytes; gamma, sBIT, cHRM not applied; alpha dropped, not composited" {
	need_pil
	run -0 $PY - <<'PY'
import struct, warnings, zlib
from PIL import Image
import pngtool
from pngtool import chunk, encode
warnings.simplefilter("ignore")         # PIL on palettes with tRNS: "should be converted to RGBA"

# Chunks PIL leaves alone and libspng would act on if asked: gamma 1/2.2 (as sRGB files
# say), sBIT, cHRM, sRGB; text, compressed too (512 KiB inflated: PIL refuses over 1 MiB).
gama = chunk(b"gAMA", struct.pack(">I", 45455))
chrm = chunk(b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000))
text = chunk(b"tEXt", b"Comment\0made by png.bats") + \
    chunk(b"zTXt", b"Big\0\0" + zlib.compress(b"z" * (512 << 10), 9))

def sbit(ctype, depth):
    return chunk(b"sBIT", bytes([max(1, depth - 3)] * {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}[ctype]))

def sample(depth, x, y, k):
    top = (1 << depth) - 1
    return (x * 37 + y * 101 + k * 53 + x * y) % (top + 1) if depth < 16 else \
        (x * 4099 + y * 8191 + k * 16381 + x * y * 257) % 65536

made = 0
for ctype, depths in [(0, (1, 2, 4, 8, 16)), (2, (8, 16)), (3, (1, 2, 4, 8)), (4, (8, 16)),
                      (6, (8, 16))]:
    for depth in depths:
        for interlace in (0, 1):
            for w, h in [(1, 1), (3, 5), (9, 9), (33, 17)]:
                ch = pngtool.CHANNELS[ctype]
                top = (1 << depth) - 1
                plte = trns = None
                if ctype == 3:
                    # A palette shorter than the bit depth allows: the indices past it
                    # come out grey (i, i, i), as PIL fills a palette.
                    n = max(1, (top + 1) * 3 // 4)
                    plte = bytes((i * 73 + c * 91) % 256 for i in range(n) for c in range(3))
                    trns = bytes((i * 50) % 256 for i in range(min(n, 5)))
                    px = lambda x, y: ((x * 5 + y * 3) % (top + 1),)
                else:
                    px = lambda x, y, ch=ch, depth=depth: tuple(
                        sample(depth, x, y, k) for k in range(ch))
                    if ctype == 0:
                        trns = struct.pack(">H", px(0, 0)[0])
                    elif ctype == 2:
                        trns = struct.pack(">3H", *px(1 % w, 0))
                extra = gama + chrm + sbit(ctype, depth) + chunk(b"sRGB", b"\0") + text
                data = encode(w, h, depth, ctype, px, interlace, before=extra, plte=plte,
                              trns=trns, idat_size=7)
                name = "c%d-%d-%d-%dx%d.png" % (ctype, depth, interlace, w, h)
                open(name, "wb").write(data)
                got = pngtool.full(name, w, h)
                _, _, _, _, ref = pngtool.decode(data)
                assert got == ref, (name, "differs from the reference decoder")
                if depth <= 8:
                    assert got == Image.open(name).convert("RGB").tobytes(), (name, "PIL")
                made += 1

# RGBA and grey + alpha with colour under alpha 0: convert("RGB") keeps the colour.
data = encode(4, 2, 8, 6, lambda x, y: (200, 100 + x, 50 + y, 0 if x % 2 else 255))
open("a.png", "wb").write(data)
assert pngtool.full("a.png", 4, 2) == Image.open("a.png").convert("RGB").tobytes()
assert pngtool.full("a.png", 4, 2)[3:6] == bytes([200, 101, 50])
print("ok", made)
PY
	assert_output "ok 120"
}

# pics: PNGs made from a JPEG of mkwds (a photograph-like picture): RGB, L, P, RGBA by PIL's
# encoder, Adam7 RGB and 16-bit RGB by pngtool's.
make_pics() {
	mkwds --count 1 --seed 9 -o j.tar
	tar -xf j.tar
	$PY - sample000000.jpg <<'PY'
import sys
from PIL import Image
import pngtool
src = Image.open(sys.argv[1]).convert("RGB").crop((0, 0, 161, 123))
W, H = src.size
rgb = src.tobytes()
px = lambda x, y: tuple(rgb[3 * (y * W + x):3 * (y * W + x) + 3])
src.save("rgb.png")
src.convert("L").save("l.png")
src.quantize(256).save("p.png")
src.convert("RGBA").save("rgba.png")
open("adam7.png", "wb").write(pngtool.encode(W, H, 8, 2, px, interlace=1))
open("rgb16.png", "wb").write(pngtool.encode(
    W, H, 16, 2, lambda x, y: tuple(v * 257 ^ (x * 37 + y * 11 + k) % 256 for k, v in enumerate(px(x, y)))))
PY
}

@test "crops: rows up to the crop's last only (Adam7: whole), equal to --exact, within tolerance of PIL's crop + resize" {
	need_pil
	make_pics
	run -0 $PY - <<'PY'
import re
from PIL import Image
import pngtool
worst, partial = 0.0, 0
for name in ["rgb.png", "l.png", "p.png", "rgba.png", "adam7.png", "rgb16.png"]:
    w, h, depth, ctype, ref = pngtool.decode(open(name, "rb").read())
    whole = Image.frombytes("RGB", (w, h), ref)
    runs = [["--crop", "random-resized", "--flip", "--size", "64x64", "--seed", "3", "--index", i]
            for i in range(8)]
    runs += [["--size", "64x48"], ["--crop", "none", "--size", "100x150"], ["--size", "224x224"],
             ["--crop", "center", "--center-ratio", "0.5", "--size", "40x40"]]
    for opts in runs:
        rc, line, err = pngtool.imgcrop(*opts, name, "fast.rgb")
        assert rc == 0, (name, opts, err)
        rc, exact, err = pngtool.imgcrop("--exact", *opts, name, "exact.rgb")
        assert rc == 0, (name, opts, err)
        got = open("fast.rgb", "rb").read()
        assert got == open("exact.rgb", "rb").read(), (name, opts, "differs from --exact")
        cw, ch, x, y, flip, scale, region = map(int, re.match(
            r"crop (\d+)x(\d+)\+(\d+)\+(\d+) flip (\d) scale 1/(\d+) region (\d)\n$", line).groups())
        assert scale == 1
        # Only a non-interlaced PNG stops early, after the crop's last row.
        assert region == (name != "adam7.png" and y + ch < h), (name, opts, line)
        partial += region
        W, H = map(int, opts[opts.index("--size") + 1].split("x"))
        want = whole.crop((x, y, x + cw, y + ch)).resize((W, H), Image.BILINEAR, reducing_gap=None)
        if flip:
            want = want.transpose(Image.FLIP_LEFT_RIGHT)
        want = want.tobytes()
        err = max(sum(abs(got[i] - want[i]) for i in range(c, len(want), 3)) / (W * H)
                  for c in range(3))
        assert err <= 1.0, (name, opts, err)
        worst = max(worst, err)
assert partial >= 10, partial
print("ok, worst MAE %.3f" % worst)
PY
	assert_output --regexp '^ok, worst MAE 0\.[0-9]+$'
}

@test "the libdeflate way: the same bytes as libspng's way for 8-bit colour types, filters, crops; other files go libspng's way, saying why" {
	need_pil
	make_pics
	# Under the sanitizers one crop a file (the comparisons test the logic, which the normal
	# pass covers; fuzz_png decodes every input both ways under them).
	local runs=9
	! grep -qa __asan_init "$SLAB_BUILD/bin/imgcrop" || runs=1
	run -0 env RUNS=$runs $PY - "$CORPUS/png" <<'PY'
import glob, os, struct, subprocess, sys, zlib
import pngtool
from pngtool import chunk, encode, SIG

def crop(mode, opts, path, out):
    return pngtool.imgcrop(*opts, path, out, libdeflate=mode)

def same(path, opts, taken=None):
    """The default way and libspng's give the same exit, lines and bytes; require says
    whether the libdeflate way was taken (unless taken is None)."""
    a = crop("0", opts, path, "spng.out")
    b = crop("", opts, path, "fast.out")
    assert a[0] == b[0] and a[1] == b[1], (path, opts, a, b)
    assert a[2].replace("spng.out", "fast.out") == b[2], (path, opts, a, b)
    if a[0] == 0:
        assert open("spng.out", "rb").read() == open("fast.out", "rb").read(), (path, opts)
    if taken is None:
        return a[0]
    r = crop("require", opts, path, "req.out")
    if taken is True:
        assert r[0] == 0 and open("req.out", "rb").read() == open("fast.out", "rb").read(), (path, opts, r)
    else:
        head = "imgcrop: '%s': PNG not inflated by libdeflate: " % path
        assert r[0] == 1 and r[2] == head + taken + "\n", (path, opts, r, taken)
    return a[0]

RUNS = [["--crop", "random-resized", "--flip", "--size", "24x24", "--seed", "5", "--index", i]
        for i in range(4)]
RUNS += [["--crop", "none", "--size", "20x30"], ["--exact", "--crop", "center", "--size", "16x16"],
         ["--channels", "1", "--resize", "nearest", "--size", "12x12"],
         ["--channels", "4", "--alpha", "keep", "--crop", "random-resized", "--size", "9x9"]]
RUNS = RUNS[:int(os.environ["RUNS"])]
n = 0
# Every 8-bit colour type, odd sizes, the five filters (row k takes filter k % 5), the stream
# in one IDAT and in many, a short palette (indices past it grey, as PIL has them).
for ctype in (0, 2, 3, 4, 6):
    ch = pngtool.CHANNELS[ctype]
    for w, h in [(1, 1), (7, 1), (5, 11), (64, 40)]:
        for idat_size in (None, 5):
            px = lambda x, y, ch=ch: tuple((x * 37 + y * 101 + k * 53 + x * y) % 256 for k in range(ch))
            plte = None
            if ctype == 3:
                plte = bytes((i * 73 + c * 91) % 256 for i in range(200) for c in range(3))
                px = lambda x, y: ((x * 29 + y * 7) % 256,)
            name = "f%d-%dx%d-%s.png" % (ctype, w, h, idat_size)
            open(name, "wb").write(encode(w, h, 8, ctype, px, plte=plte, idat_size=idat_size))
            for i, opts in enumerate(RUNS):
                assert same(name, opts, True if i == 0 else None) == 0
                n += 1
# PIL's own files (photograph-like, adaptive filters) and PngSuite's 8-bit ones.
suite = sorted(glob.glob(os.path.join(sys.argv[1], "*.png")))
for name in ["rgb.png", "l.png", "p.png", "rgba.png"] + suite:
    if os.path.basename(name).startswith("x"):
        continue
    data = open(name, "rb").read()
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    kinds = [k for k, _, _ in pngtool.chunks(data)]
    why = ("interlaced" if data[28] else "not 8 bits a sample" if depth != 8 else
           "tRNS" if b"tRNS" in kinds else True)
    for i, opts in enumerate(RUNS[:1] + RUNS[4:]):
        assert same(name, opts, why if i == 0 else None) == 0
        n += 1

# Where the libdeflate way stops, libspng's way decides: it decodes, or refuses as before.
data = open("rgb.png", "rb").read()
body = pngtool.chunks(data)
iend = len(data) - 12
text = chunk(b"tEXt", b"Comment\0after the image")
open("text.png", "wb").write(data[:iend] + text + data[iend:])
open("tail.png", "wb").write(data + b"\0")
bad = bytearray(data)
off, size = next((o, s) for k, o, s in body if k == b"IDAT")
bad[off + size] ^= 1                    # the first IDAT's CRC
open("crc.png", "wb").write(bad)
open("endless.png", "wb").write(encode(30, 20, 8, 2, lambda x, y: (x, y, 9), stream_tail=bytes(1000)))
raw = b"".join(bytes([5 if y == 3 else 0]) + bytes(30 * 3) for y in range(20))
open("filter5.png", "wb").write(SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", 30, 20, 8, 2, 0, 0, 0)) +
                                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open("short.png", "wb").write(SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", 30, 20, 8, 2, 0, 0, 0)) +
                               chunk(b"IDAT", zlib.compress(raw[:-1])) + chunk(b"IEND", b""))
# 4000 x 3000 RGB: 36 MB inflated, over what the libdeflate way holds whole (32 MiB).
rows = b"".join(b"\0" + bytes([y % 256]) * 12000 for y in range(3000))
open("big.png", "wb").write(SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", 4000, 3000, 8, 2, 0, 0, 0)) +
                            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
whole = ["--crop", "none", "--size", "8x8"]
for name, why, rc in [("big.png", "over the size it holds whole", 0),("text.png", "more than IEND after the image data", 0),
                      ("tail.png", "more than IEND after the image data", 0),
                      ("crc.png", "an IDAT chunk's checksum", 1),
                      ("endless.png", "the image data does not inflate to the image", 0),
                      ("filter5.png", "a filter type PNG does not have", 1),
                      ("short.png", "the image data does not inflate to the image", 1)]:
    assert same(name, whole, why) == rc, name
    n += 1
print("ok", n)
PY
	assert_output --regexp '^ok [0-9]+$'
	echo "# $output" >&3
	local n=${output#ok }
	[ "$n" -gt $((runs == 1 ? 90 : 500)) ] || fail "only $n comparisons"
}

@test "crashers and damaged files (cut at 12 points, bytes flipped in IDAT) are exit 1 with one error line, never a crash" {
	need_corpus
	run -0 $PY - "$CORPUS/png" <<'PY'
import glob, os, sys
import pngtool
TEXTS = ("corrupt PNG: ", "PNG metadata over the limit", "PNG of ")

def refused(path, what):
    rc, out, err = pngtool.imgcrop("--crop", "none", "--size", "16x16", path, "x.rgb")
    head = "imgcrop: '%s': " % path
    assert rc == 1, (what, rc, err)
    assert err.startswith(head) and err[len(head):].startswith(TEXTS), (what, err)
    assert err.count("\n") == 1, (what, err)

n = 0
for path in sorted(glob.glob(os.path.join(sys.argv[1], "crashers", "*"))):
    refused(path, path)
    n += 1
# An empty eXIf chunk (libspng reports its chunk limits reached): named as what it is.
open("exif.png", "wb").write(pngtool.encode(4, 4, 8, 2, lambda x, y: (x, y, 7),
                                            before=pngtool.chunk(b"eXIf", b"")))
rc, out, err = pngtool.imgcrop("--crop", "none", "--size", "4x4", "exif.png", "x.rgb")
assert (rc, err) == (1, "imgcrop: 'exif.png': corrupt PNG: an empty eXIf chunk (it holds "
                        "Exif data, 4 bytes or more)\n"), (rc, err)
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.png"))):
    if os.path.basename(path).startswith("x"):
        continue
    data = open(path, "rb").read()
    # From just the signature to IEND without its CRC, and IEND cut inside its CRC (which
    # libspng reads as the end: the decode checks that all of IEND is there).
    for cut in [8 + k * (len(data) - 13) // 9 for k in range(10)] + [len(data) - 4,
                                                                      len(data) - 1]:
        open("cut.png", "wb").write(data[:cut])
        refused("cut.png", (path, "cut at", cut))
        n += 1
    idat = [(off, size) for kind, off, size in pngtool.chunks(data) if kind == b"IDAT"]
    spots = sorted({off + size * q // 4 for off, size in idat for q in range(4)})
    for at in spots:
        bad = bytearray(data)
        bad[at] ^= 0xFF
        open("flip.png", "wb").write(bad)
        refused("flip.png", (path, "flipped at", at))
        n += 1
print("ok", n)
PY
	assert_output --regexp '^ok [0-9]+$'
	echo "# $output" >&3
}

@test "a PNG that ends before its image data: libspng's reason on every way, not a state error nor the libdeflate way's" {
	run -0 $PY - <<'PY'
import pngtool
data = pngtool.encode(4, 4, 8, 6, lambda x, y: (x, y, 7, 200),
                      before=pngtool.chunk(b"tEXt", b"Comment\0" + b"x" * 40))
# Cut inside IHDR's checksum, right after IHDR, and inside a tEXt chunk before the image data.
for cut in (30, 33, 50):
    open("cut.png", "wb").write(data[:cut])
    for mode in (None, "0", "require"):
        rc, out, err = pngtool.imgcrop("--crop", "none", "--size", "4x4", "cut.png", "x.rgb",
                                       libdeflate=mode)
        assert (rc, err) == (1, "imgcrop: 'cut.png': corrupt PNG: end of stream\n"), (cut, mode, rc, err)
print("ok")
PY
	assert_output ok
}

@test "bombs: 65500x65500 refused with the limit text in bounded memory; an endless IDAT stream stops at the image; zTXt bombs refused" {
	$PY - <<'PY'
import struct, zlib
import pngtool
from pngtool import chunk, encode, SIG
# 65500 x 65500 grey, one row of data.
ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 65500, 65500, 8, 0, 0, 0, 0))
open("bomb.png", "wb").write(SIG + ihdr + chunk(b"IDAT", zlib.compress(bytes(65501))) +
                             chunk(b"IEND", b""))
# Wide and flat: over libspng's side limit (set from the pixel limit) as well.
open("wide.png", "wb").write(encode(5000, 1, 8, 0, lambda x, y: (x % 256,)))
open("small.png", "wb").write(encode(32, 32, 8, 2, lambda x, y: (x, y, x ^ y)))
# Strips within the pixel limit whose resize tables (6 pixels' memory a pixel of a side)
# are over it: 40000000 x 1 and 1 x 40000000 grey, of tens of KB.
for name, w, h in (("strip.png", 40000000, 1), ("tall.png", 1, 40000000)):
    rows = bytes(w + 1) * h
    open(name, "wb").write(SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
                           chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
# 300 x 200 grey whose IDAT stream goes on with 256 MiB of zeros after the image (256 KiB).
open("endless.png", "wb").write(encode(300, 200, 8, 0, lambda x, y: ((x * y) % 256,),
                                       stream_tail=bytes(256 << 20), idat_size=1 << 16))
px = lambda x, y: (x, y, 7)
# zTXt of 100 MiB inflated (100 KiB); 20 of 4 MiB each; one of 4 MiB (under the limit).
z = lambda n: zlib.compress(b"\0" * n, 9)
open("ztxt.png", "wb").write(encode(4, 4, 8, 2, px, before=chunk(b"zTXt", b"Bomb\0\0" + z(100 << 20))))
open("ztxt4.png", "wb").write(encode(4, 4, 8, 2, px, before=chunk(b"zTXt", b"Big\0\0" + z(4 << 20))))
open("ztxt20.png", "wb").write(encode(4, 4, 8, 2, px, before=b"".join(
    chunk(b"zTXt", b"Bomb\0\0" + z(4 << 20)) for _ in range(20))))
PY
	[ "$(filesize bomb.png)" -lt 200 ]
	[ "$(filesize endless.png)" -lt $((400 * 1024)) ]
	run -1 --separate-stderr imgcrop bomb.png out.rgb
	assert_equal "$stderr" "imgcrop: 'bomb.png': PNG of 65500x65500 pixels (4290250000): over the limit of 178956970 pixels"
	peak_rss imgcrop bomb.png out.rgb
	[ "$rc" -eq 1 ] && [ "$rss" -lt "$RSS_MAX_KB" ] || fail "bomb.png: exit $rc, peak RSS $rss KiB"
	run -1 --separate-stderr imgcrop --max-pixels 4999 wide.png out.rgb
	assert_equal "$stderr" "imgcrop: 'wide.png': PNG of 5000x1 pixels (5000): over the limit of 4999 pixels"
	run -0 imgcrop --max-pixels 5000 --crop none --size 50x1 wide.png out.rgb
	for f in strip tall; do
		[ "$(filesize $f.png)" -lt $((100 * 1024)) ]
		run -1 --separate-stderr imgcrop --crop none --size 1x1 $f.png out.rgb
		[ $f = strip ] && dims=40000000x1 || dims=1x40000000
		assert_equal "$stderr" "imgcrop: '$f.png': PNG of $dims pixels: resizing it takes the memory of 240000006 pixels, over the limit of 178956970 pixels"
		peak_rss imgcrop --crop none --size 1x1 $f.png out.rgb
		[ "$rc" -eq 1 ] && [ "$rss" -lt "$RSS_MAX_KB" ] || fail "$f.png: exit $rc, peak RSS $rss KiB"
	done
	# the limit given moves it
	run -1 --separate-stderr imgcrop --max-pixels 240000005 strip.png out.rgb
	assert_equal "$stderr" "imgcrop: 'strip.png': PNG of 40000000x1 pixels: resizing it takes the memory of 240000006 pixels, over the limit of 240000005 pixels"
	run -1 --separate-stderr imgcrop --max-pixels 1023 small.png out.rgb
	assert_equal "$stderr" "imgcrop: 'small.png': PNG of 32x32 pixels (1024): over the limit of 1023 pixels"
	# The endless stream: the image decodes, as PIL decodes it, in bounded memory.
	peak_rss imgcrop --crop none --size 300x200 endless.png out.rgb
	[ "$rc" -eq 0 ] && [ "$rss" -lt "$RSS_MAX_KB" ] || fail "endless.png: exit $rc, peak RSS $rss KiB"
	imgcrop --crop none --size 300x200 endless.png out.rgb
	$PY -c 'import pngtool, sys; assert pngtool.decode(open("endless.png", "rb").read())[4] == open("out.rgb", "rb").read()'
	run -0 imgcrop --size 4x4 ztxt4.png out.rgb
	for f in ztxt ztxt20; do
		run -1 --separate-stderr imgcrop "$f.png" out.rgb
		assert_equal "$stderr" "imgcrop: '$f.png': PNG metadata over the limit of 8 MiB a chunk, 64 MiB in all: reached chunk/cache limits"
		peak_rss imgcrop "$f.png" out.rgb
		[ "$rc" -eq 1 ] && [ "$rss" -lt "$RSS_MAX_KB" ] || fail "$f.png: exit $rc, peak RSS $rss KiB"
	done
}

@test "an animated PNG (APNG) gives its default image, as PIL's convert('RGB'), whether or not it is the first frame" {
	need_pil
	$PY - <<'PY'
from PIL import Image
frames = [Image.new("RGB", (20, 14)) for _ in range(3)]
for k, im in enumerate(frames):
    im.putdata([((x * 13 + k * 80) % 256, (y * 17) % 256, (x * y + k) % 256)
                for y in range(14) for x in range(20)])
frames[0].save("anim.png", save_all=True, append_images=frames[1:])
# the default image outside the animation (no fcTL before IDAT)
frames[0].save("animdef.png", save_all=True, append_images=frames[1:], default_image=True)
for f in ("anim.png", "animdef.png"):
    im = Image.open(f)
    assert im.n_frames >= 2, f
    open(f + ".want", "wb").write(im.convert("RGB").tobytes())
PY
	for f in anim animdef; do
		grep -qa acTL $f.png || fail "$f.png is not an APNG"
		imgcrop --crop none --size 20x14 $f.png out.rgb
		cmp out.rgb $f.png.want
	done
}

# s.slab: WebDataset's own test shard, 90 samples of N.png (28x28 grey) and N.cls.
wds_slab() {
	need_corpus
	[ -f "$CORPUS/wds/sample.tgz" ] || skip "no $CORPUS/wds/sample.tgz"
	pack -q -o s.slab "$CORPUS/wds/sample.tgz"
}

@test "Loader: the WebDataset PNG shard, image='png', 64x64 centre crops; threads 1 and 2 the same; each image imgcrop's" {
	need_libslab_any
	wds_slab
	run -0 pyslab_any - <<'PY'
import subprocess, slab
def run(threads):
    out = []
    with slab.Loader(["s.slab"], image="png", size=(64, 64), crop="center", threads=threads,
                     batch_size=16) as ld:
        for b in ld:
            for j in range(len(b)):
                out.append((b.samples[j], b.keys[j], b.image(j).tobytes()))
        st = ld.stats()
    assert st["images"] == 90, st
    return out
one = run(1)
assert len(one) == 90 and one == run(2)
for (f, i), key, img in one:
    png = subprocess.run(["inspect", "--get", "#%d" % i, "--field", "png", "s.slab"],
                         check=True, capture_output=True).stdout
    open("s.png", "wb").write(png)
    subprocess.run(["imgcrop", "--crop", "center", "--size", "64x64", "s.png", "o.rgb"],
                   check=True, stdout=subprocess.DEVNULL)
    assert img == open("o.rgb", "rb").read(), key
print("ok", len(one))
PY
	assert_output "ok 90"
}

@test "prefetch --emit-format frames --image png: the shard end to end, -j 1 and -j 2 the same bytes, each image imgcrop's" {
	wds_slab
	shuffle-plan -q --mode quasi --seed 3 --epoch 1 -o p.plan s.slab
	frames=(--emit --emit-format frames --image png --size 64x64 --crop random-resized --flip)
	prefetch -q --plan p.plan "${frames[@]}" -j 1 s.slab > j1.frames
	prefetch -q --plan p.plan "${frames[@]}" -j 2 s.slab > j2.frames
	cmp j1.frames j2.frames
	mkdir img
	PYTHONPATH="$HELPERS" python3 - j1.frames > list <<'PY'
import sys
from frames import read_frames
h, recs, end = read_frames(sys.argv[1])
assert end == (90, 0) and (h["width"], h["height"], h["seed"], h["epoch"]) == (64, 64, 3, 1), (end, h)
for r in recs:
    open("img/%d.rgb" % r.pos, "wb").write(r.image)
    print(r.pos, r.index)
PY
	[ "$(wc -l < list)" -eq 90 ]
	while read -r pos index; do
		inspect --get "#$index" --field png s.slab > s.png
		imgcrop --crop random-resized --flip --size 64x64 --seed 3 --epoch 1 --index "$index" \
			s.png want.rgb > /dev/null
		cmp want.rgb "img/$pos.rgb" || fail "record $pos (sample $index) differs from imgcrop"
	done < list
}

@test "out of memory: each allocation of a PNG decode failing in turn is exit 1 saying so (not corrupt), or the same bytes" {
	local failmalloc="$SLAB_BUILD/lib/failmalloc.so" n count rc
	[ -f "$failmalloc" ] ||
		skip "no $failmalloc (sanitizer builds cannot interpose malloc, so they do not build it)"
	$PY - <<'PY'
import pngtool
from pngtool import chunk, encode
import zlib
text = chunk(b"zTXt", b"Comment\0\0" + zlib.compress(b"slab " * 3000))
open("rows.png", "wb").write(encode(40, 30, 4, 3, lambda x, y: ((x + y) % 16,),
                                    plte=bytes(range(48)), before=text))
open("adam7.png", "wb").write(encode(40, 30, 16, 6, lambda x, y: (x * 999, y * 1999, 5, 9),
                                     interlace=1, before=text))
open("rgb8.png", "wb").write(encode(40, 30, 8, 2, lambda x, y: (x * 5, y * 7, x ^ y), before=text,
                                    idat_size=100))
PY
	for f in rows.png adam7.png rgb8.png; do
		FAILMALLOC_COUNT=$PWD/count LD_PRELOAD=$failmalloc \
			imgcrop --crop random-resized --size 16x16 --index 3 "$f" ref.rgb > /dev/null
		count=$(< count)
		[ "$count" -gt 5 ] || fail "$f: $count allocations: is the shim working?"
		for n in $(seq 1 "$count"); do
			rc=0
			FAILMALLOC_NTH=$n LD_PRELOAD=$failmalloc imgcrop --crop random-resized \
				--size 16x16 --index 3 "$f" got.rgb > /dev/null 2> err || rc=$?
			case $rc in
			0) cmp -s ref.rgb got.rgb || fail "$f, allocation $n: exit 0, other bytes";;
			1) grep -q "^imgcrop: ." err && ! grep -q -e corrupt -e limit err ||
				fail "$f, allocation $n: exit 1 saying $(cat err)"
				cat err >> said;;
			*) fail "$f, allocation $n: exit $rc: $(cat err)";;
			esac
		done
	done
	grep -q "^imgcrop: 'rows.png': out of memory decoding a 40x30 PNG$" said
	grep -q "^imgcrop: 'adam7.png': out of memory decoding a 40x30 PNG$" said
}
