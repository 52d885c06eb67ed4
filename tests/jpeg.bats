#!/usr/bin/env bats
# pack's JPEG work: dimensions recorded, --jpeg-check, --jpeg-max-side re-encoding on threads.

load test_helper/common

# jpegs.tar: 12 real JPEGs of assorted sizes from mkwds.
setup_jpegs() {
	mkwds --count 12 --seed 5 -o jpegs.tar
}

# A copy of jpegs.tar whose sample000004.jpg is cut in the middle of its scan data.
corrupt_tar() {
	python3 - <<'PY'
import io, tarfile
src = tarfile.open("jpegs.tar")
with tarfile.open("bad.tar", "w") as out:
    for m in src:
        data = src.extractfile(m).read()
        if m.name == "sample000004.jpg":
            data = data[: len(data) // 2]
            m.size = len(data)
        out.addfile(m, io.BytesIO(data))
PY
}

@test "every JPEG's width and height land in the table" {
	setup_jpegs
	pack -q -o j.slab jpegs.tar
	run -0 inspect --list --json j.slab
	python3 - "$output" <<'PY'
import json, sys, tarfile
rows = json.loads(sys.argv[1])
meta = {}
t = tarfile.open("jpegs.tar")
for m in t:
    if m.name.endswith(".json"):
        meta[m.name[:-5]] = json.loads(t.extractfile(m).read())
assert len(rows) == 12
for r in rows:
    jpg = [f for f in r["fields"] if f["name"] == "jpg"][0]
    assert (jpg["width"], jpg["height"]) == (meta[r["key"]]["width"], meta[r["key"]]["height"]), r
    assert jpg["subsampling"] == "4:2:0" and jpg["colorspace"] == "ycbcr"
    assert jpg["transcoded"] is False
PY
}

@test "--jpeg-check accepts good JPEGs and records the option" {
	setup_jpegs
	run -0 pack -q --jpeg-check -o j.slab jpegs.tar
	run -0 inspect j.slab
	assert_line "  image-check=1"
}

@test "--jpeg-check: a corrupt JPEG is a bad sample named by its key" {
	setup_jpegs
	corrupt_tar
	run -0 pack -q -o plain.slab bad.tar            # without the check its bytes are kept
	run -1 --separate-stderr pack --jpeg-check -o c.slab bad.tar
	[[ "$stderr" == "pack: 'bad.tar': sample 'sample000004' field 'jpg': "* ]]
	[ ! -e c.slab ]
	run -0 --separate-stderr pack --jpeg-check --on-error=skip -j2 -o c.slab bad.tar
	[[ "${stderr_lines[0]}" == "pack: 'bad.tar': skipping: sample 'sample000004' field 'jpg': "* ]]
	[[ "${stderr_lines[1]}" == "pack: 'c.slab': 11 samples, "*"; skipped 1 bad sample" ]]
	run -1 inspect --get sample000004 --field jpg c.slab
	run -0 inspect --get sample000005 --field cls c.slab
}

@test "--jpeg-max-side re-encodes big JPEGs to fit, keeps small ones byte for byte" {
	setup_jpegs
	run -0 pack -q --jpeg-max-side 200 -o small.slab jpegs.tar
	run -0 inspect --list --json small.slab
	python3 - "$output" <<'PY'
import json, sys, tarfile
rows = json.loads(sys.argv[1])
t = tarfile.open("jpegs.tar")
orig = {m.name: t.extractfile(m).read() for m in t}
meta = {k[:-5]: json.loads(v) for k, v in orig.items() if k.endswith(".json")}
changed = 0
for r in rows:
    jpg = [f for f in r["fields"] if f["name"] == "jpg"][0]
    w, h = meta[r["key"]]["width"], meta[r["key"]]["height"]
    if max(w, h) > 200:
        scale = 200 / max(w, h)
        assert (jpg["width"], jpg["height"]) == (max(1, round(w * scale)), max(1, round(h * scale))), (r, w, h)
        assert jpg["transcoded"] is True
        changed += 1
    else:
        assert (jpg["width"], jpg["height"]) == (w, h) and jpg["transcoded"] is False
assert changed > 0
PY
	# what comes out is a real JPEG whose frame header says the recorded size
	inspect --get sample000000 --field jpg small.slab > s.jpg
	dims=$(python3 - <<'PY'
import struct
d = open("s.jpg", "rb").read()
assert d[:2] == b"\xff\xd8"
i = 2
while True:
    assert d[i] == 0xFF
    marker, length = d[i + 1], struct.unpack(">H", d[i + 2:i + 4])[0]
    if marker in (0xC0, 0xC1, 0xC2):
        h, w = struct.unpack(">HH", d[i + 5:i + 9])
        print("%dx%d" % (w, h))
        break
    i += 2 + length
PY
)
	run -0 inspect --list small.slab
	[[ "${lines[0]}" == *"	jpg:"*":$dims:jpeg	"* ]]
	run -0 inspect small.slab
	assert_line "  image-max-side=200"
	assert_line "  jpeg-quality=90"
}

@test "re-encoded output is byte-identical whatever the number of threads" {
	mkwds --count 24 --seed 6 -o many.tar
	pack -q -j1 --jpeg-max-side 100 --jpeg-quality 80 -o j1.slab many.tar
	pack -q -j2 --jpeg-max-side 100 --jpeg-quality 80 -o j2.slab many.tar
	pack -q -j5 --jpeg-max-side 100 --jpeg-quality 80 -o j5.slab many.tar
	cmp j1.slab j2.slab
	cmp j1.slab j5.slab
	TJ_OPTIMIZE=1 TJ_PROGRESSIVE=1 pack -q -j2 --jpeg-max-side 100 --jpeg-quality 80 -o env.slab many.tar
	cmp j1.slab env.slab
	run -0 inspect --verify j2.slab
}

@test "--jpeg-quality changes the re-encoded bytes" {
	setup_jpegs
	pack -q --jpeg-max-side 150 --jpeg-quality 95 -o q95.slab jpegs.tar
	pack -q --jpeg-max-side 150 --jpeg-quality 30 -o q30.slab jpegs.tar
	a=$(inspect --get sample000001 --field jpg q95.slab | wc -c)
	b=$(inspect --get sample000001 --field jpg q30.slab | wc -c)
	[ "$b" -lt "$a" ]
}

@test "--jpeg-max-side: an undecodable JPEG is a bad sample" {
	setup_jpegs
	corrupt_tar
	run -1 --separate-stderr pack --jpeg-max-side 100 -o c.slab bad.tar
	[[ "$stderr" == "pack: 'bad.tar': sample 'sample000004' field 'jpg': "* ]]
	[ ! -e c.slab ]
}

@test "JPEGs are found by their bytes, whatever the field's name: JPG, jpeg, jpgx, bin" {
	mkwds --count 1 --seed 1 -o one.tar
	mkdir x && tar xf one.tar -C x
	cp x/sample000000.jpg x/a.JPG
	cp x/sample000000.jpg x/b.jpeg
	cp x/sample000000.jpg x/c.jpgx
	cp x/sample000000.jpg x/d.bin
	printf 'not a picture' > x/e.jpg
	(cd x && tar cf ../names.tar a.JPG b.jpeg c.jpgx d.bin e.jpg)
	pack -q -o n.slab names.tar
	run -0 inspect --list n.slab
	[[ "${lines[0]}" == "0	a	0	JPG:4096:"*":"*"x"*":jpeg" ]]
	[[ "${lines[1]}" == "1	b	0	jpeg:"*":"*"x"*":jpeg" ]]
	[[ "${lines[2]}" == "2	c	0	jpgx:"*":"*"x"*":jpeg" ]]
	[[ "${lines[3]}" == "3	d	0	bin:"*":"*"x"*":jpeg" ]]
	re=$'^4\te\t0\tjpg:[0-9]+:13$'
	[[ "${lines[4]}" =~ $re ]]
}
