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

# Crafted and damaged variants of small.slab for the checks of slab(5), WHAT A READER CHECKS
# (tests/test_helper/crafted.py has the table of cases). For each, slab.py raises SlabError,
# and nothing else, on open or on an access (every sample and key, find, verify), with or
# without check_table, and its first message is the one of the check under test; slab.py
# --verify exits 1; and inspect --verify refuses the file too, with the message of its own
# check (except where the C reader does not make the check yet: see below).
@test "slab.py: every crafted or damaged file raises SlabError at the check slab(5) names, as inspect refuses it" {
	small_slab
	python3 "$HELPERS/crafted.py" slab small.slab cases
	pyslab - <<'PY'
import contextlib, io, subprocess, traceback, slab

KEYS = ["d/a", "d/b", "d/c", "no such key"]
problems = []


def first_error(path, check_table):
    """Open the file and make every access; the first SlabError's message, or None. Any
    other exception is a problem."""
    first = None

    def attempt(what, fn, *args):
        nonlocal first
        try:
            return fn(*args)
        except slab.SlabError as e:
            first = first or str(e)
        except Exception:
            problems.append("%s: %s raised %s" % (path, what, traceback.format_exc()))
        return None

    f = attempt("open", slab.SlabFile, path, check_table)
    if f is None:
        return first
    for i in range(len(f)):
        attempt("sample(%d)" % i, f.sample, i)
        attempt("key(%d)" % i, f.key, i)
    for k in KEYS:
        attempt("find(%r)" % k, f.find, k)
    attempt("verify()", f.verify)
    f.close()
    return first


cases = [line.rstrip("\n").split("\t") for line in open("cases/cases.tsv")]
assert len(cases) > 80, len(cases)
for name, check, want, cmsg in cases:
    path = "cases/%s.slab" % name
    for check_table in (False, True):
        got = first_error(path, check_table)
        if got is None:
            problems.append("%s (check %s): no SlabError (check_table=%s)" % (path, check, check_table))
        elif not got.startswith("%s: %s" % (path, want)):
            problems.append("%s (check %s): %r, want %r (check_table=%s)"
                            % (path, check, got, want, check_table))
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = slab.main(["--verify", path])
    except Exception:
        rc = traceback.format_exc()
    if rc != 1 or want not in err.getvalue():
        problems.append("%s: slab.py --verify exited %s: %r" % (path, rc, err.getvalue()))
    r = subprocess.run(["inspect", "--verify", "-q", path], capture_output=True, text=True)
    if r.returncode != 1 or cmsg not in r.stderr:
        problems.append("%s (check %s): inspect --verify exited %d: %r, want %r"
                        % (path, check, r.returncode, r.stderr, cmsg))
assert not problems, "\n".join(problems)
PY
}

@test "slab.py: read_plan raises SlabError on a damaged plan, where prefetch refuses it too" {
	small_slab
	cp small.slab b.slab
	shuffle-plan -q --seed 1 --mode random -o p.plan small.slab b.slab
	python3 "$HELPERS/crafted.py" plan p.plan cases
	pyslab - <<'PY'
import subprocess, traceback, slab

ds = slab.Dataset(["small.slab", "b.slab"])
assert len(slab.read_plan("p.plan", ds)) == 6
problems = []
cases = [line.rstrip("\n").split("\t") for line in open("cases/cases.tsv")]
assert len(cases) > 20, len(cases)
for name, want in cases:
    path = "cases/%s.plan" % name
    for d in (None, ds):
        try:
            slab.read_plan(path, d)
            problems.append("%s: read_plan accepted it" % path)
        except slab.SlabError as e:
            if str(e) != "%s: %s" % (path, want):
                problems.append("%s: %r, want %r" % (path, str(e), want))
        except Exception:
            problems.append("%s: read_plan raised %s" % (path, traceback.format_exc()))
    r = subprocess.run(["prefetch", "-q", "--plan", path, "small.slab", "b.slab"],
                       capture_output=True, text=True)
    if r.returncode != 1 or want not in r.stderr:
        problems.append("%s: prefetch exited %d: %r" % (path, r.returncode, r.stderr))
assert not problems, "\n".join(problems)
PY
}
