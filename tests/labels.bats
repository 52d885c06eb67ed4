#!/usr/bin/env bats
# What FFCV users reach for, in slab.Loader and prefetch frames: labels parsed in C into one
# int64 array per batch (labels="cls": b.labels), equal to int(bytes(cls)) in plan order, the
# same with any thread count, a bad label a bad sample named exactly, zero-copy and alive after
# close() as the images are; and the evaluation crop, center_ratio / --center-ratio (ImageNet's
# Resize(256) + CenterCrop(224) is 224/256): its boxes, its pixels against PIL within
# tests/image.bats' tolerance, and its errors. The C side is in tests/unit/test_loader.c
# (labels) and tests/unit/test_image.c (the boxes, exact, and against torchvision's).

load test_helper/common

# one.slab + two.slab: 30 and 17 samples of mkwds JPEGs (jpg, cls, json) in small pages;
# a.plan: a quasi-random plan over both, in that order.
setup_data() {
	mkwds --count 30 --seed 21 --prefix a -o a.tar
	mkwds --count 17 --seed 22 --prefix b -o b.tar
	pack -q --page-size 64K -o one.slab a.tar
	pack -q --page-size 64K -o two.slab b.tar
	shuffle-plan -q --mode quasi --window 2 --seed 5 --epoch 3 -o a.plan one.slab two.slab
}

# bad.slab: six samples; a000001 has no cls, a000002's is "abc", a000004's " 12\n",
# a000005's "99999999999999999999" (past int64).
setup_bad() {
	mkwds --count 6 --seed 4 --prefix a -o x.tar
	mkdir x && (cd x && tar -xf ../x.tar && rm a000001.cls && printf 'abc' > a000002.cls &&
		printf ' 12\n' > a000004.cls && printf '99999999999999999999' > a000005.cls &&
		tar --format=gnu --sort=name -cf ../bad.tar -- *)
	pack -q -o bad.slab bad.tar
}

# sizes.slab: JPEGs of the sizes that show the centre crop's rounding, extracted too.
setup_sizes() {
	local s
	for s in 500x375 333x500 640x480 257x1000 256x256; do
		mkwds --count 1 --seed 5 --width "${s%x*}" --height "${s#*x}" --prefix "s$s-" -o "s$s.tar"
		tar -xf "s$s.tar"
	done
	pack -q -o sizes.slab s500x375.tar s333x500.tar s640x480.tar s257x1000.tar s256x256.tar
}

@test "labels: int(bytes(cls)) of every sample in plan order, raw and image mode, 1 and 2 threads" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import slab
paths = ["one.slab", "two.slab"]
ds = slab.Dataset(paths)
plan = slab.read_plan("a.plan", ds)
want = [int(bytes(ds.sample(f, i)["cls"])) for f, i in plan]
assert len(set(want)) > 1
def run(threads, **kw):
    got, samples = [], []
    with slab.Loader(paths, plan="a.plan", batch_size=7, threads=threads, labels="cls", **kw) as ld:
        for b in ld:
            lab = b.labels
            assert isinstance(lab, memoryview) and lab.format == "q" and lab.itemsize == 8
            assert lab.shape == (len(b),) and not lab.readonly and lab.c_contiguous
            if b.images is None:
                assert lab.tolist() == [int(bytes(c)) for c in b.fields["cls"]]
            got += lab.tolist()
            samples += b.samples
        return ld.fields, samples, got
for kw in (dict(), dict(fields=["json"]),
           dict(image="jpg", size=(16, 16), crop="center", center_ratio=0.875, fields=[])):
    one, two = run(1, **kw), run(2, **kw)
    assert one == two and one[1] == plan and one[2] == want, kw
    print(one[0])
with slab.Loader(paths, plan="a.plan", batch_size=7) as ld:
    assert next(ld).labels is None
PY
	assert_line --index 0 "['cls', 'jpg', 'json']"
	assert_line --index 1 "['json', 'cls']"
	assert_line --index 2 "['jpg', 'cls']"
	[ "${#lines[@]}" -eq 3 ]
}

@test "labels: a bad label raises SlabError naming the key, the field and the text, or is skipped" {
	need_libslab_any
	setup_bad
	run -0 pyslab_any - <<'PY'
import slab
for start in (1, 2, 5):
    try:
        with slab.Loader(["bad.slab"], batch_size=4, labels="cls", start=start) as ld:
            for b in ld:
                pass
    except slab.SlabError as e:
        print(e)
for image in (None, "jpg"):
    with slab.Loader(["bad.slab"], batch_size=4, labels="cls", on_error="skip", image=image,
                     size=(8, 8)) as ld:
        got = [(b.labels.tolist(), b.keys, b.skipped) for b in ld]
        print(got, ld.skipped)
        print(ld.error)
PY
	assert_line --index 0 "'bad.slab': sample #1 'a000001': no label field 'cls'"
	assert_line --index 1 "'bad.slab': sample #2 'a000002': field 'cls': not an integer: 'abc'"
	assert_line --index 2 "'bad.slab': sample #5 'a000005': field 'cls': integer out of the int64 range: '99999999999999999999'"
	c0=$(tar -xOf bad.tar a000000.cls) c3=$(tar -xOf bad.tar a000003.cls)
	assert_line --index 3 "[([$c0, $c3], ['a000000', 'a000003'], 2), ([12], ['a000004'], 1)] 3"
	assert_line --index 4 "'bad.slab': sample #1 'a000001': no label field 'cls'"
	assert_line --index 5 "[([$c0, $c3], ['a000000', 'a000003'], 2), ([12], ['a000004'], 1)] 3"
	assert_line --index 6 "'bad.slab': sample #1 'a000001': no label field 'cls'"
	[ "${#lines[@]}" -eq 7 ]
}

@test "labels: numpy and torch wrap b.labels without a copy" {
	need_libslab
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "no numpy for /usr/bin/python3 (python3-numpy)"
	setup_data
	run -0 env PYTHONPATH="$SLAB_ROOT/scripts" /usr/bin/python3 - <<'PY'
import numpy, slab
with slab.Loader(["one.slab"], batch_size=8, labels="cls", image="jpg", size=(8, 8)) as ld:
    b = next(iter(ld))
    want = [int(bytes(c)) for c in b.fields["cls"]]
    a = numpy.frombuffer(b.labels, dtype=numpy.int64)
    v = numpy.asarray(b.labels)
    assert a.shape == v.shape == (8,) and v.dtype == numpy.int64 and a.tolist() == want
    assert numpy.shares_memory(a, v) and a.ctypes.data == v.ctypes.data
    v[0] = -12345                             # the same memory, not a copy
    assert b.labels[0] == -12345 and a[0] == -12345
    try:
        import torch
    except ImportError:
        print("ok numpy")
    else:
        t = torch.from_numpy(v)
        assert t.dtype == torch.int64 and t.data_ptr() == v.ctypes.data
        print("ok numpy torch")
PY
	assert_output --regexp '^ok numpy( torch)?$'
}

@test "labels: a released batch's labels are released; a kept view outlives close()" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import gc, slab
ld = slab.Loader(["one.slab"], batch_size=4, ring=3, labels="cls", image="jpg", size=(8, 8))
it = iter(ld)
a = next(it)
lab = a.labels
next(it)                                      # releases a, as its images
for view in (lab, a.images):
    try:
        view.tolist()
    except ValueError as e:
        print("released:", e)
c = ld.next_batch()
keep = c.labels
want = keep.tolist()
ld.close()
del ld, a, c, it
gc.collect()
assert keep.tolist() == want and len(want) == 4
print("ok")
PY
	assert_line --index 0 "released: operation forbidden on released memoryview object"
	assert_line --index 1 "released: operation forbidden on released memoryview object"
	assert_line --index 2 "ok"
}

@test "center_ratio: boxes of round(min(W, H) * 224/256), centred; imgcrop's bytes; PIL's pixels" {
	need_libslab_any
	setup_sizes
	for f in s*.jpg; do
		imgcrop --size 224x224 --crop center --center-ratio 0.875 "$f" "$f.rgb" > "$f.txt"
		imgcrop --size 224x224 --crop center --center-ratio 0.875 --exact "$f" "$f.exact.rgb" > "$f.exact.txt"
	done
	run -0 pyslab_any - <<'PY'
import glob, math, re, slab
boxes = {}
for f in sorted(glob.glob("s*.jpg")):
    W, H = map(int, re.match(r"s(\d+)x(\d+)-", f).groups())
    w, h, x, y = map(int, re.match(r"crop (\d+)x(\d+)\+(\d+)\+(\d+)", open(f + ".txt").read()).groups())
    side = math.floor(min(W, H) * 224 / 256 + 0.5)
    assert (w, h, x, y) == (side, side, (W - side) // 2, (H - side) // 2), (f, w, h, x, y)
    # torchvision: Resize(256) then CenterCrop(224), mapped back to the source
    nw, nh = (256, int(256 * H / W)) if W <= H else (int(256 * W / H), 256)
    sx, sy = W / nw, H / nh
    tx, ty = round((nw - 224) / 2) * sx, round((nh - 224) / 2) * sy
    lx, ly = (0, sy) if W <= H else (sx, 0)
    assert abs(w - 224 * sx) <= 0.5 + lx and abs(h - 224 * sy) <= 0.5 + ly, f
    assert abs(x - tx) <= 0.75 + lx and abs(y - ty) <= 0.75 + ly, f
    boxes[f[:-4]] = open(f + ".rgb", "rb").read()
    print(W, H, w, h, x, y)
with slab.Loader(["sizes.slab"], batch_size=2, threads=2, image="jpg", size=(224, 224),
                 crop="center", center_ratio=224 / 256) as ld:
    n = 0
    for b in ld:
        for j, key in enumerate(b.keys):
            assert b.image(j).tobytes() == boxes[key], key
            n += 1
assert n == len(boxes) == 5
PY
	assert_line --index 0 "256 256 224 224 16 16"
	assert_line --index 1 "257 1000 225 225 16 387"
	assert_line --index 2 "333 500 291 291 21 104"
	assert_line --index 3 "500 375 328 328 86 23"
	assert_line --index 4 "640 480 420 420 110 30"
	/usr/bin/python3 -c 'import PIL' 2>/dev/null || skip "no PIL for /usr/bin/python3 (python3-pil)"
	run -0 /usr/bin/python3 - <<'PY'
import glob, re
from PIL import Image
# tests/image.bats' tolerance: MAE <= 1.0 for --exact, <= 2.5 for the fast paths
for f in sorted(glob.glob("s*.jpg")):
    for mode, tol in (("", 2.5), (".exact", 1.0)):
        w, h, x, y = map(int, re.match(r"crop (\d+)x(\d+)\+(\d+)\+(\d+)",
                                       open(f + mode + ".txt").read()).groups())
        ref = Image.open(f).convert("RGB").crop((x, y, x + w, y + h)).resize(
            (224, 224), Image.BILINEAR, reducing_gap=None).tobytes()
        got = open(f + mode + ".rgb", "rb").read()
        err = max(sum(abs(got[i] - ref[i]) for i in range(c, len(ref), 3)) / (224 * 224)
                  for c in range(3))
        assert err <= tol, (f, mode, err)
print("ok")
PY
	assert_output "ok"
}

@test "center_ratio: bad values are ValueError; 1 is the whole short side as before" {
	need_libslab_any
	setup_data
	run -0 pyslab_any - <<'PY'
import slab
def err(**kw):
    try:
        slab.Loader(["one.slab"], **kw).close()
    except (ValueError, slab.SlabError) as e:
        print(type(e).__name__ + ": " + str(e))
    else:
        print("no error", kw)
for r in (0, -0.5, 1.5, float("nan"), float("inf"), "0.5", True, None):
    err(image="jpg", crop="center", center_ratio=r)
err(image="jpg", center_ratio=0.875)
err(labels=3)
err(labels="")
err(labels="nope")
err(labels="nope", fields=["cls"])
def images(**kw):
    with slab.Loader(["one.slab"], batch_size=30, image="jpg", size=(12, 10), crop="center", **kw) as ld:
        return next(ld).images.tobytes()
assert images() == images(center_ratio=1) == images(center_ratio=1.0)
assert images(center_ratio=0.5) != images()
print("ok")
PY
	assert_line --index 0 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not 0"
	assert_line --index 1 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not -0.5"
	assert_line --index 2 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not 1.5"
	assert_line --index 3 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not nan"
	assert_line --index 4 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not inf"
	assert_line --index 5 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not '0.5'"
	assert_line --index 6 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not True"
	assert_line --index 7 "ValueError: center_ratio must be a number with 0 < center_ratio <= 1, not None"
	assert_line --index 8 "ValueError: center_ratio needs crop='center', not crop='random-resized'"
	assert_line --index 9 "ValueError: labels must be a field name such as 'cls', not 3"
	assert_line --index 10 "ValueError: labels must be a field name such as 'cls', not ''"
	assert_line --index 11 "SlabError: no file has a field 'nope' (fields: cls, jpg, json)"
	assert_line --index 12 "SlabError: no file has a field 'nope' (fields: cls, jpg, json)"
	assert_line --index 13 "ok"
}

@test "prefetch --center-ratio: frames equal to the Loader's images; usage errors" {
	need_libslab_any
	setup_sizes
	shuffle-plan -q --mode random --seed 3 -o s.plan sizes.slab
	prefetch -q --plan s.plan --emit --emit-format frames --image jpg --size 24x20 --crop center \
		--center-ratio 0.875 sizes.slab > s.frames
	run -0 pyslab_any - "$HELPERS" <<'PY'
import sys
import slab
sys.path.insert(0, sys.argv[1])
from frames import read_frames
h, recs, end = read_frames("s.frames")
assert h["crop"] == 1 and end == (5, 0)
with slab.Loader(["sizes.slab"], plan="s.plan", batch_size=5, image="jpg", size=(20, 24),
                 crop="center", center_ratio=0.875) as ld:
    b = next(ld)
    assert [r.key for r in recs] == b.keys
    assert [r.image for r in recs] == [b.image(j).tobytes() for j in range(5)]
print("ok")
PY
	assert_output "ok"
	local try="Try 'prefetch --help' for more information." r
	for r in 0 1.5 -1 abc '' 0.5x nan; do
		run -2 --separate-stderr prefetch --plan s.plan --emit --emit-format frames --image jpg \
			--crop center --center-ratio "$r" sizes.slab
		assert_equal "$stderr" "prefetch: invalid --center-ratio '$r' (a number, 0 < R <= 1)
$try"
	done
	run -2 --separate-stderr prefetch --plan s.plan --emit --emit-format frames --image jpg \
		--center-ratio 0.875 sizes.slab
	assert_equal "$stderr" "prefetch: --center-ratio goes with --crop center
$try"
	run -2 --separate-stderr prefetch --plan s.plan --center-ratio 0.875 sizes.slab
	assert_equal "$stderr" "prefetch: --center-ratio goes with --emit-format frames
$try"
}
