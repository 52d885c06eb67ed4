#!/usr/bin/env bats
# scripts/slab.py, the standard-library Python reader written from man/slab.5: it must agree
# with inspect on every field of every sample.

load test_helper/common

pyslab() {
	PYTHONPATH="$SLAB_ROOT/scripts" python3 "$@"
}

@test "slab.py: every field of every sample equals inspect --get" {
	mktar --seed 51 --samples 40 --max-size 9000 -o a.tar
	pack -q --page-size 8K -o a.slab a.tar
	inspect --list a.slab | while IFS=$'\t' read -r idx key page fields; do
		for f in $fields; do
			name=${f%%:*}
			inspect --get "#$idx" --field "$name" a.slab > "want.$idx.$name"
		done
	done
	pyslab - <<'PY'
import os, slab
ds = slab.Dataset("a.slab")
assert len(ds) == 40
seen = 0
for i in range(len(ds)):
    s = ds[i]
    for name, data in s.fields.items():
        want = open("want.%d.%s" % (i, name), "rb").read()
        assert data.tobytes() == want, (i, name)
        seen += 1
    assert ds.by_key(s.key).index == i
want_files = [f for f in os.listdir(".") if f.startswith("want.")]
assert seen == len(want_files), (seen, len(want_files))
PY
}

@test "slab.py: several files are one dataset, in the order given; keys, JPEG sizes" {
	mkwds --count 5 --seed 1 -o a.tar
	mkwds --count 7 --seed 2 --prefix other -o b.tar
	pack -q -o a.slab a.tar
	pack -q -o b.slab b.tar
	pyslab - <<'PY'
import json, slab
ds = slab.Dataset(["a.slab", "b.slab"])
assert len(ds) == 12
assert ds.locate(5) == (1, 0)
s = ds[6]
assert s.key == "other000001" and s.file == 1 and s.index == 1
meta = json.loads(s["json"].tobytes())
jpg = s.field("jpg")
assert jpg.is_jpeg and (jpg.width, jpg.height) == (meta["width"], meta["height"])
assert list(s.fields) == ["jpg", "cls", "json"]      # the order of the input tar
assert ds.by_key("sample000004").file == 0
try:
    ds.by_key("nope")
    raise SystemExit("found a key that is not there")
except KeyError:
    pass
PY
}

@test "slab.py --verify checks every CRC; damaged files raise SlabError" {
	small_slab
	run -0 pyslab "$SLAB_ROOT/scripts/slab.py" --verify small.slab
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152, verified"
	cp small.slab bad.slab
	flip bad.slab 4097
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" --verify bad.slab
	assert_equal "$stderr" "slab.py: bad.slab: sample 0 field txt: checksum mismatch (bytes at offset 4097, size 3)"
	cp small.slab bad.slab
	flip bad.slab 30
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" bad.slab
	assert_equal "$stderr" "slab.py: bad.slab: header checksum mismatch"
	head -c 5000 small.slab > cut.slab
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" cut.slab
	assert_equal "$stderr" "slab.py: cut.slab: truncated or damaged: no trailer"
	echo "a text file, not a slab" > t.slab
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" t.slab
	assert_equal "$stderr" "slab.py: t.slab: not a slab file (bad magic number)"
}

@test "slab.py: CRC-32C and FNV-1a check values" {
	run -0 pyslab -c 'import slab; print(hex(slab.crc32c(b"123456789")), hex(slab.fnv1a64(b"a")))'
	assert_output "0xe3069283 0xaf63dc4c8601ec8c"
}

@test "slab.py: read_plan gives shuffle-plan's entries, as --format text prints them; other files raise SlabError" {
	mkwds --count 30 --seed 3 -o a.tar
	mkwds --count 20 --seed 4 --prefix other -o b.tar
	pack -q --page-size 64K -o a.slab a.tar
	pack -q --page-size 64K -o b.slab b.tar
	shuffle-plan -q --seed 5 --epoch 2 --window 3 --rank 1 --world-size 2 -o p.plan a.slab b.slab
	shuffle-plan -q --seed 5 --epoch 2 --window 3 --rank 1 --world-size 2 --format text \
		a.slab b.slab > want.txt
	pyslab - <<'PY'
import slab
ds = slab.Dataset(["a.slab", "b.slab"])
got = slab.read_plan("p.plan", ds)
want = [tuple(int(x) for x in line.split()) for line in open("want.txt")]
assert got == want, (got[:5], want[:5])
assert len(got) == 25 and len(set(got)) == 25
assert {f for f, _ in got} == {0, 1} and got != sorted(got)
ds.sample(*got[0])      # every entry names a sample of the dataset
for other in (["b.slab", "a.slab"], ["a.slab"], ["a.slab", "a.slab"]):
    try:
        slab.read_plan("p.plan", slab.Dataset(other))
    except slab.SlabError as e:
        assert str(e) == "p.plan: plan does not belong to these files", str(e)
    else:
        raise SystemExit("read_plan accepted a plan made for other files: %s" % other)
PY
}
