#!/usr/bin/env bats
# The image pipeline from the shell (build/bin/imgcrop, scripts/imgcrop.c): output size,
# determinism, errors, and pixels against PIL where PIL is installed.
#
# Tolerance against PIL (`Image.open().convert('RGB').crop(box).resize((W, H),
# Image.BILINEAR, reducing_gap=None)`), largest per-channel mean absolute error on 0..255:
# <= 1.0 for the full decode (--exact: the same libjpeg decode and the same resample, so
# rounding only), <= 2.5 for the default DCT-scaled and region paths on photographs.

load test_helper/common

# jpegs: sample000000.jpg ... from mkwds, real JPEGs of assorted sizes.
setup_jpegs() {
	mkwds --count 4 --seed 9 -o jpegs.tar
	tar -xf jpegs.tar
}

@test "imgcrop writes exactly W*H*3 bytes and says which crop and path it took" {
	need_corpus
	run -0 imgcrop --size 64x48 "$CORPUS/jpeg/testorig.jpg" out.rgb
	assert_output "crop 199x149+14+0 flip 0 scale 1/2 region 1"
	[ "$(stat -c %s out.rgb)" -eq $((64 * 48 * 3)) ]
	run -0 imgcrop --size 64x48 --exact "$CORPUS/jpeg/testorig.jpg" out.rgb
	assert_output "crop 199x149+14+0 flip 0 scale 1/1 region 0"
}

@test "random-resized crops depend on seed, epoch and index only" {
	setup_jpegs
	f=$(ls *.jpg | head -1)
	imgcrop --crop random-resized --flip --seed 3 --epoch 1 --index 7 --size 32x32 "$f" a.rgb > a.txt
	imgcrop --crop random-resized --flip --seed 3 --epoch 1 --index 7 --size 32x32 "$f" b.rgb > b.txt
	cmp a.rgb b.rgb
	cmp a.txt b.txt
	imgcrop --crop random-resized --flip --seed 3 --epoch 2 --index 7 --size 32x32 "$f" c.rgb > c.txt
	! cmp -s a.txt c.txt
}

@test "imgcrop --batch: each line's run prints, writes and fails as the run alone does" {
	setup_jpegs
	head -c 3000 sample000001.jpg > cut.jpg
	local runs=(
		"--crop random-resized --flip --seed 3 --index 7 --size 32x32 sample000000.jpg a"
		"--exact --size 20x10 sample000002.jpg b"
		"--size 16x16 cut.jpg c"
		"--size 16x16 nosuch.jpg d"
		"--size 16 sample000000.jpg e"
		"--bogus x"
		"--size 24x24 --channels 1 sample000003.jpg f"
	)
	local r out err rc want=""
	for r in "${runs[@]}"; do
		rc=0
		# shellcheck disable=SC2086
		out=$(imgcrop $r.alone 2> err) || rc=$?
		err=$(cat err)
		if [ "$rc" -eq 0 ]; then
			want+="$out"$'\n'
		else
			want+="exit $rc: ${err//$'\n'/\\n}"$'\n'
		fi
	done
	run -0 imgcrop --batch < <(printf '%s\n' "${runs[@]/%/.batch}" "" "   ")
	assert_output "${want%$'\n'}"
	[ "${#lines[@]}" -eq 7 ]
	assert_line -n 2 "exit 1: imgcrop: 'cut.jpg': corrupt JPEG: Premature end of JPEG file"
	assert_line -n 5 --regexp "^exit 2: imgcrop: '--bogus': not an option, or its argument is missing\\\\nUsage: imgcrop .*\\\\n       imgcrop --batch < RUNS\$"
	for r in a b f; do
		cmp "$r.alone" "$r.batch"
	done
	[ ! -e c.batch ] && [ ! -e d.batch ]
}

@test "a truncated JPEG is a clear error, exit 1" {
	setup_jpegs
	f=$(ls *.jpg | head -1)
	head -c $(($(stat -c %s "$f") / 2)) "$f" > cut.jpg
	run -1 --separate-stderr imgcrop --crop none --size 16x16 cut.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'cut.jpg': corrupt JPEG: Premature end of JPEG file"
}

@test "a file cut inside its format's signature is that format cut short, not bytes of no known format" {
	# JPEG's is ff d8 ff; PNG's 89 'PNG' 0d 0a 1a 0a; WebP's 'RIFF', a size, 'WEBP'.
	# refused BYTES MESSAGE: imgcrop of a file of BYTES (printf escapes) fails saying MESSAGE.
	refused() {
		# shellcheck disable=SC2059
		printf "$1" > f.img
		run -1 --separate-stderr imgcrop --size 4x4 f.img out.rgb
		assert_equal "$stderr" "imgcrop: 'f.img': $2"
	}
	refused '\377\330' "corrupt JPEG: the data ends after 2 bytes, inside its signature"
	refused '\211' "corrupt PNG: the data ends after 1 byte, inside its signature"
	refused '\211PNG\r\n\032' "corrupt PNG: the data ends after 7 bytes, inside its signature"
	refused 'RIFF' "corrupt WebP: the data ends after 4 bytes, inside its signature"
	refused 'RIFF\044\000\000\000WEB' "corrupt WebP: the data ends after 11 bytes, inside its signature"
	# Bytes that leave the signature are still no known format's, however short.
	refused 'RIFF\044\000\000\000WAV' "not a JPEG, PNG or WebP image: starts with 0x52 0x49 0x46 0x46"
	refused '\211PNX' "not a JPEG, PNG or WebP image: starts with 0x89 0x50 0x4e 0x58"
	# pack --image-check says the same of such a field; unchecked, it is kept as bytes.
	mkdir s && printf '\211PNG' > s/k.png && (cd s && tar --format=gnu -cf ../cut.tar k.png)
	run -1 --separate-stderr pack --image-check -o c.slab cut.tar
	assert_equal "$stderr" "pack: 'cut.tar': sample 'k' field 'png': corrupt PNG: the data ends after 4 bytes, inside its signature"
	run -0 pack -q -o c.slab cut.tar
}

@test "a large downscale keeps a flat colour and a ramp as PIL's BILINEAR has them, not a few levels off" {
	# Flat PNGs made with the standard library: 20000 x 4 pixels of one colour.
	python3 - <<'PY'
import struct, zlib
def png(path, w, h, rgb):
    def chunk(k, d):
        return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
    raw = (b"\0" + bytes(rgb) * w) * h
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
png("white.png", 20000, 4, (255, 255, 255))
png("brown.png", 20000, 4, (128, 64, 32))
PY
	imgcrop --crop none --size 3x1 white.png out.rgb
	run -0 od -An -v -tu1 out.rgb
	assert_equal "$(echo $output)" "255 255 255 255 255 255 255 255 255"
	imgcrop --crop none --size 1x1 brown.png out.rgb
	run -0 od -An -v -tu1 out.rgb
	assert_equal "$(echo $output)" "128 64 32"
	imgcrop --crop none --size 2x2 brown.png out.rgb
	run -0 od -An -v -tu1 out.rgb
	assert_equal "$(echo $output)" "128 64 32 128 64 32 128 64 32 128 64 32"
	# A ramp downscaled by 128 (PIL's weights are ties at the 14 bits the SIMD passes use).
	/usr/bin/python3 -c 'import PIL' 2>/dev/null || skip "no PIL for /usr/bin/python3 (python3-pil)"
	run -0 /usr/bin/python3 - <<'PY'
import subprocess
from PIL import Image
w, h = 4096, 64
im = Image.new("RGB", (w, h))
im.putdata([(x * 255 // w, x * 255 // w, 255 - x * 255 // w) for y in range(h) for x in range(w)])
im.save("ramp.png")
for size in ((32, 4), (8, 1), (1, 1)):
    subprocess.run(["imgcrop", "--crop", "none", "--size", "%dx%d" % size, "ramp.png", "out.rgb"],
                   check=True, stdout=subprocess.DEVNULL)
    ref = im.resize(size, Image.BILINEAR, reducing_gap=None).tobytes()
    assert open("out.rgb", "rb").read() == ref, size
print("ok")
PY
	assert_output ok
}

@test "centre crop + resize matches PIL's BILINEAR within the stated tolerance" {
	/usr/bin/python3 -c 'import PIL' 2>/dev/null || skip "no PIL for /usr/bin/python3 (python3-pil)"
	setup_jpegs
	files=(*.jpg)
	[ -d "$CORPUS" ] && files+=("$CORPUS/jpeg/testorig.jpg" "$CORPUS/jpeg/testimgint.jpg")
	for f in "${files[@]}"; do
		for size in 224x224 64x48 100x150; do
			for mode in --exact ""; do
				line=$(imgcrop --size "$size" $mode "$f" out.rgb)
				/usr/bin/python3 - "$f" "$size" "$line" "${mode:-fast}" out.rgb <<'PY'
import re, sys
from PIL import Image
path, size, line, mode, out = sys.argv[1:]
W, H = map(int, size.split("x"))
w, h, x, y = map(int, re.match(r"crop (\d+)x(\d+)\+(\d+)\+(\d+)", line).groups())
ref = Image.open(path).convert("RGB").crop((x, y, x + w, y + h)).resize(
    (W, H), Image.BILINEAR, reducing_gap=None).tobytes()
got = open(out, "rb").read()
assert len(got) == len(ref), (len(got), len(ref))
err = max(sum(abs(got[i] - ref[i]) for i in range(c, len(ref), 3)) / (W * H) for c in range(3))
tol = 1.0 if mode == "--exact" else 2.5
print(f"{path} {size} {mode} {line}: MAE {err:.3f} (tolerance {tol})")
sys.exit(0 if err <= tol else 1)
PY
			done
		done
	done
}
