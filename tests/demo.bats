#!/usr/bin/env bats
# scripts/demo as `make demo` runs it (BUILD=build, relative, from the folder that holds it):
# it ends with a slab.Loader epoch from the python3 that imports numpy and PIL, naming that
# interpreter and the batch shape, and writes the first batch as a contact sheet,
# build/demo/batch0.png: a valid PNG holding the grid of the batch's crops (8 columns of
# 128 x 128 crops, a 16-pixel key band under each, 4 pixels around), cell j the loader's
# image j. Run twice, it works again and writes the same sheet.
#
# Here build/ is a folder of this test's own whose bin/ and libslab.so are the build's
# (symlinks), so the demo's files go here, not into the tree's build/demo.

load test_helper/common

# The interpreter the demo picks: the first of /usr/bin/python3 and python3 on PATH that
# imports numpy and PIL.
find_python() {
	PY=""
	for py in /usr/bin/python3 "$(command -v python3 || true)"; do
		if [ -z "$py" ] || [ ! -x "$py" ]; then continue; fi
		if "$py" -c 'import numpy, PIL' 2>/dev/null; then
			PY=$py
			return 0
		fi
	done
	skip "no python3 here imports numpy and PIL (python3-numpy, python3-pil: scripts/install-deps)"
}

setup() {
	need_libslab
	find_python
	mkdir -p build
	ln -s "$SLAB_BUILD/bin" build/bin
	ln -s "$SLAB_BUILD/libslab.so" build/libslab.so
}

# check_sheet: batch0.png is the 8 x 4 grid of batch 0's 32 crops, cell j image j of the
# same Loader (crops depend on seed, epoch and sample only).
check_sheet() {
	PYTHONPATH="$SLAB_ROOT/scripts" SLAB_LIBRARY=build/libslab.so "$PY" - <<'PY'
import numpy as np, slab
from PIL import Image
path = "build/demo/batch0.png"
with open(path, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "not a PNG"
im = Image.open(path)
im.verify()                     # the chunks and their CRCs
im = Image.open(path)
n, cols, side, pad, band = 32, 8, 128, 4, 16
rows = (n + cols - 1) // cols
want = (cols * side + (cols + 1) * pad, rows * (side + band) + (rows + 1) * pad)
assert (im.format, im.mode, im.size) == ("PNG", "RGB", want), (im.format, im.mode, im.size)
a = np.asarray(im)
with slab.Loader("build/demo/train.slab", plan="build/demo/epoch0.plan", image="jpg",
                 size=(side, side), crop="random-resized", flip=True, labels="cls",
                 batch_size=n, threads=1) as ld:
    b = next(iter(ld))
    x = np.asarray(b.images)
    assert x.shape == (n, side, side, 3), x.shape
    for j in range(n):
        r, c = divmod(j, cols)
        y0, x0 = pad + r * (side + band + pad), pad + c * (side + pad)
        assert (a[y0:y0 + side, x0:x0 + side] == x[j]).all(), "cell %d is not crop %d" % (j, j)
        # the key band under the crop holds text (light pixels on the dark background)
        assert a[y0 + side:y0 + side + band, x0:x0 + side].max() > 128, "no key under cell %d" % j
print("ok", im.size)
PY
}

@test "demo: ends with a slab.Loader epoch and writes batch 0 as a contact sheet PNG" {
	run -0 env BUILD=build "$SLAB_ROOT/scripts/demo"
	assert_line --regexp "^slab.Loader from Python: $PY[ ,]"
	assert_line --regexp "^interpreter: +$PY \(Python [0-9.]+; numpy [^,]+, PIL [^)]+\)$"
	assert_line --regexp "^epoch: .*: 4 batches of \(32, 128, 128, 3\) uint8, labels \(32,\) int64$"
	assert_line --regexp "^speed: +128 images in [0-9.]+ s: [0-9]+ images/s, [0-9.]+ CPU ms per image"
	n='[0-9]+'
	assert_line --regexp "^decode paths: +$n DCT-scaled \(1/2: $n, 1/4: $n, 1/8: $n\), $n at full scale; $n region decodes"
	assert_line --regexp "^stats\(\): +batches=4, samples=128, skipped=0, .*images=128, "
	assert_line --partial "contact sheet: build/demo/batch0.png (batch 0: 32 crops 128x128, 8 x 4,"
	assert_line "demo: done"
	run -0 check_sheet
	assert_output "ok (1060, 596)"
}

@test "demo: run twice, it works again and writes the same contact sheet" {
	run -0 env BUILD=build "$SLAB_ROOT/scripts/demo"
	cp build/demo/batch0.png first.png
	run -0 env BUILD=build "$SLAB_ROOT/scripts/demo"
	assert_line "demo: done"
	assert_line --partial "contact sheet: build/demo/batch0.png"
	cmp first.png build/demo/batch0.png
	[ ! -e build/demo/batch0.png.tmp ]
}
