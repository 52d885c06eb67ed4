#!/usr/bin/env bats
# scripts/slab.py, the standard-library Python reader written from man/slab.5: it must agree
# with inspect on every field of every sample. It reads through libslab.so (ctypes) when it
# finds one, else in Python: the tests that read run both ways, SLAB_LIBRARY naming the
# build's library, then SLAB_LIBRARY=none.

load test_helper/common

BACKENDS="${LIBSLAB:+$LIBSLAB }none"

# The backend slab.py must report under SLAB_LIBRARY=$1.
check_backend() {
	SLAB_LIBRARY=$1 pyslab - <<'PY'
import os, slab
lib = os.environ["SLAB_LIBRARY"]
want = "python" if lib == "none" else "libslab 0.1.0 (%s)" % lib
assert slab.backend == want, (slab.backend, slab.backend_reason)
PY
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
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib pyslab - <<'PY'
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
	done
}

@test "slab.py: several files are one dataset, in the order given; keys, JPEG sizes" {
	mkwds --count 5 --seed 1 -o a.tar
	mkwds --count 7 --seed 2 --prefix other -o b.tar
	pack -q -o a.slab a.tar
	pack -q -o b.slab b.tar
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib pyslab - <<'PY'
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
	done
}

@test "slab.py: Dataset takes one path as bytes, as Loader does; paths of a wrong type name the argument" {
	mkwds --count 5 --seed 1 -o a.tar
	pack -q -o a.slab a.tar
	run -0 pyslab - <<'PY'
import pathlib, slab
# bytes were taken as a list, byte by byte: "open: path should be ..., not int"
print(len(slab.Dataset(b"a.slab")), len(slab.Dataset("a.slab")),
      len(slab.Dataset(pathlib.Path("a.slab"))), len(slab.Dataset([b"a.slab", "a.slab"])))
for bad in (None, 5):
    try:
        slab.Dataset(bad)
    except TypeError as e:
        print("TypeError: " + str(e))
PY
	assert_line --index 0 "5 5 5 10"
	assert_line --index 1 "TypeError: paths must be a list of paths, not None"
	assert_line --index 2 "TypeError: paths must be a list of paths, not 5"
	[ "${#lines[@]}" -eq 3 ]
}

@test "slab.py: the example its docstring (help(slab)) opens with runs as written" {
	need_libslab
	mkwds --count 20 --seed 1 -o a.tar
	mkwds --count 20 --seed 2 --prefix other -o b.tar
	pack -q -o train-000.slab a.tar
	pack -q -o train-001.slab b.tar
	shuffle-plan -q --epoch 3 -o epoch3.plan train-000.slab train-001.slab
	SLAB_LIBRARY=$LIBSLAB pyslab - <<'PY'
import textwrap, slab
lines = slab.__doc__.splitlines()
start = lines.index("    import slab")
code = []
for line in lines[start:]:
    if line and not line.startswith("    "):
        break
    code.append(line)
assert any("by_key" in line for line in code), code
names = {"paths": ["train-000.slab", "train-001.slab"]}
exec(textwrap.dedent("\n".join(code)), names)
assert names["jpg"].tobytes()[:2] == b"\xff\xd8"
assert len(names["order"]) == 40 and names["s"].key == "sample000012"
PY
}

@test "slab.py --verify checks every CRC; damaged files raise SlabError" {
	small_slab
	for lib in $BACKENDS; do
	export SLAB_LIBRARY=$lib
	check_backend "$lib"
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
	done
}

@test "slab.py: an unknown option is a usage error (exit 2), not a file; -- ends the options" {
	small_slab
	run -2 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" --bogus small.slab
	assert_equal "$stderr" "slab.py: unknown option '--bogus'
usage: slab.py [--verify] [--] FILE...
       slab.py --version"
	assert_equal "$output" ""
	cp small.slab ./--verify
	run -0 pyslab "$SLAB_ROOT/scripts/slab.py" -- --verify
	assert_output "--verify: 3 samples, fields cls,txt, page size 2097152"
	run -0 pyslab "$SLAB_ROOT/scripts/slab.py" --verify -- --verify
	assert_output "--verify: 3 samples, fields cls,txt, page size 2097152, verified"
	# after --, --help and -h are file names too, as --version is
	cp small.slab ./--help
	cp small.slab ./-h
	run -0 pyslab "$SLAB_ROOT/scripts/slab.py" -- --help -h
	assert_output "--help: 3 samples, fields cls,txt, page size 2097152
-h: 3 samples, fields cls,txt, page size 2097152"
	run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" -- missing -h
	assert_equal "$stderr" "slab.py: 'missing': No such file or directory"
}

@test "slab.py: control bytes and bidirectional controls in names and paths are escaped, as the tools escape them" {
	python3 - <<'PY'
import io, tarfile
with tarfile.open("n.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for n in ["a.x\x1b[31my", "a.t\u202ez", "a.c\u009bd"]:
        i = tarfile.TarInfo(n)
        i.size = 1
        t.addfile(i, io.BytesIO(b"x"))
PY
	pack -q -o n.slab n.tar
	cp n.slab $'e\e[2J\xff.slab'
	printf 'x' > $'bad\xe2\x81\xa6.slab'   # U+2066, in any locale
	for lib in $BACKENDS; do
		run -1 --separate-stderr env SLAB_LIBRARY=$lib PYTHONPATH="$SLAB_ROOT/scripts" \
			python3 "$SLAB_ROOT/scripts/slab.py" $'e\e[2J\xff.slab' $'no\esuch.slab' $'bad\xe2\x81\xa6.slab'
		assert_equal "$output" 'e\x1b[2J\xff.slab: 1 sample, fields c\xc2\x9bd,t\xe2\x80\xaez,x\x1b[31my, page size 2097152'
		assert_equal "$stderr" "slab.py: 'no\\x1bsuch.slab': No such file or directory
slab.py: bad\\xe2\\x81\\xa6.slab: not a slab file (1 byte)"
	done
	run -2 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" $'--\e[2J'
	assert_equal "${stderr_lines[0]}" "slab.py: unknown option '--\\x1b[2J'"
}

@test "slab.py: a failing standard output is one write error (exit 1), a reader that stops early no error" {
	small_slab
	# files' lines and --help alike, stdout buffered, as Python has it by default, and
	# unbuffered (PYTHONUNBUFFERED=1)
	for args in "small.slab small.slab" --help; do
		for unbuffered in "" 1; do
			run -1 --separate-stderr env -u PYTHONUNBUFFERED ${unbuffered:+PYTHONUNBUFFERED=1} \
				bash -c "$(declare -f pyslab); pyslab '$SLAB_ROOT/scripts/slab.py' $args >/dev/full"
			assert_equal "$stderr" "slab.py: write error: No space left on device"
		done
	done
	# shellcheck disable=SC2046
	run -0 --separate-stderr bash -c "set -o pipefail; $(declare -f pyslab); pyslab '$SLAB_ROOT/scripts/slab.py' $(printf 'small.slab %.0s' $(seq 3000)) | head -1"
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152"
	assert_equal "$stderr" ""
	# --help and --version alike: into a pipe closed before they write, nothing said, exit 0
	for opt in --help --version; do
		run -0 --separate-stderr python3 -c 'import subprocess, sys
p = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.close()
err = p.stderr.read()
sys.stdout.write("%d %r" % (p.wait(), err))' "$SLAB_ROOT/scripts/slab.py" $opt
		assert_output "0 b''"
	done
}

@test "slab.py: a closed stderr keeps messages out of stdout, a closed stdout is a write error" {
	small_slab
	# the interpreter itself, not a shim that would fill the closed number first
	local py
	py=$(python3 -c 'import sys; print(sys.executable)')
	# stderr closed: the messages are dropped, never written among the data; exit codes kept
	run -1 --separate-stderr bash -c "exec '$py' '$SLAB_ROOT/scripts/slab.py' nosuch.slab small.slab 2>&-"
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152"
	run -2 --separate-stderr bash -c "exec '$py' '$SLAB_ROOT/scripts/slab.py' --bogus 2>&-"
	assert_output ""
	# stdout closed: the lines are lost, which is said (exit 1), no traceback
	for args in small.slab --help; do
		run -1 --separate-stderr bash -c "exec '$py' '$SLAB_ROOT/scripts/slab.py' $args >&-"
		assert_equal "$stderr" "slab.py: write error: Bad file descriptor"
	done
	# nothing to write: only the file's own error
	run -1 --separate-stderr bash -c "exec '$py' '$SLAB_ROOT/scripts/slab.py' nosuch.slab >&-"
	assert_equal "$stderr" "slab.py: 'nosuch.slab': No such file or directory"
}

@test "slab.py: Ctrl-C is a death by SIGINT (130), no traceback; the lines printed before it kept" {
	small_slab
	# the second file's reading is where the interrupt lands, as a KeyboardInterrupt would
	run -130 --separate-stderr pyslab -c 'import slab, sys
real = slab.SlabFile
def interrupted(path, **kw):
    if path == "second.slab":
        raise KeyboardInterrupt
    return real(path, **kw)
slab.SlabFile = interrupted
sys.exit(slab.main(["small.slab", "second.slab", "small.slab"]))'
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152"
	assert_equal "$stderr" ""
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
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib pyslab - <<'PY'
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
	done
}

# Crafted and damaged variants of small.slab for the checks of slab(5), WHAT A READER CHECKS
# (tests/test_helper/crafted.py has the table of cases). For each, slab.py raises SlabError,
# and nothing else, on open or on an access (every sample and key, find, verify), with or
# without check_table, and its first message is the one of the check under test; slab.py
# --verify exits 1; and inspect --verify refuses the file too, with the message of its own
# check (except where the C reader does not make the check yet: see below). Through libslab,
# the damage libslab finds is met again by the pure code, so the messages are the pure
# reader's, the same both ways (messages.c and messages.py).
@test "slab.py: every crafted or damaged file raises SlabError at the check slab(5) names, as inspect refuses it" {
	small_slab
	python3 "$HELPERS/crafted.py" slab small.slab cases
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib pyslab - <<'PY'
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
messages = open("messages." + ("py" if slab.backend == "python" else "c"), "w")
for name, check, want, cmsg in cases:
    path = "cases/%s.slab" % name
    for check_table in (False, True):
        got = first_error(path, check_table)
        messages.write("%s %s: %s\n" % (path, check_table, got))
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
	done
	[ -z "$LIBSLAB" ] || diff messages.c messages.py
	[ "$(wc -l < messages.py)" -gt 160 ]
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

# Everything a reader sees of a dataset, printed by slab.py; the same through libslab and in
# Python.
@test "slab.py: the same keys, fields, bytes, order, by_key, find and read_plan through libslab and in Python" {
	need_libslab
	mkwds --count 9 --seed 7 -o a.tar
	mktar --seed 8 --samples 30 --max-size 9000 -o b.tar
	pack -q --page-size 8K -o a.slab a.tar
	pack -q --page-size 4K -o b.slab b.tar
	shuffle-plan -q --seed 2 -o p.plan a.slab b.slab
	cat > dump.py <<'PY'
import hashlib, slab
ds = slab.Dataset(["a.slab", "b.slab"])
print(slab.backend.split()[0], len(ds), [(f.names, f.page_size, f.page_count, f.options)
                                        for f in ds.files])
for i in range(len(ds)):
    s = ds[i]
    print(i, s.key, s.file, s.index, s.offset, s.size, s.page)
    for name in s.fields:
        f = s.field(name)
        print("  ", name, f.offset, len(f.data), f.data.readonly, f.crc, f.width, f.height,
              f.flags, f.order, hashlib.sha256(f.data).hexdigest())
    assert ds.by_key(s.key).index == s.index
    print("  find", ds.files[s.file].find(s.key), ds.files[s.file].key(s.index))
for k in ("sample000003", "nope", "", "a/../b"):
    print("find", k, [f.find(k) for f in ds.files])
print(slab.read_plan("p.plan", ds))
PY
	SLAB_LIBRARY=$LIBSLAB pyslab dump.py > c.txt
	SLAB_LIBRARY=none pyslab dump.py > py.txt
	run -0 head -c 7 c.txt
	assert_output "libslab"
	run -0 head -c 6 py.txt
	assert_output "python"
	diff <(tail -n +2 c.txt) <(tail -n +2 py.txt)
	[ "$(grep -c "^   " py.txt)" -gt 40 ]
}

@test "slab.py: SlabFile f[i], len(f), negative indexes, IndexError past the end" {
	mkwds --count 5 --seed 1 -o a.tar
	pack -q -o a.slab a.tar
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib pyslab - <<'PY'
import slab
f = slab.SlabFile("a.slab")
assert len(f) == 5
assert [f[i].key for i in range(5)] == ["sample%06d" % i for i in range(5)]
assert f[-1].key == "sample000004" and f[-5].key == "sample000000" and f[-1].index == 4
assert f[2]["cls"].tobytes() == f.sample(2)["cls"].tobytes()
for bad in (5, -6, 1 << 70):
    try:
        f[bad]
    except IndexError:
        pass
    else:
        raise SystemExit("f[%d] did not raise IndexError" % bad)
for bad in ("0", 1.0, slice(0, 2)):
    try:
        f[bad]
    except TypeError:
        pass
    else:
        raise SystemExit("f[%r] did not raise TypeError" % (bad,))
f.close()
PY
	done
}

# The lookup order of slab.py's docstring: SLAB_LIBRARY, then <scripts>/../build/libslab.so,
# then installed. A copy of the script in a source tree of its own (lib/slab.h), with the
# build's library in its build/; a copy elsewhere passes over a build/ beside its folder.
@test "slab.py: finds libslab through SLAB_LIBRARY, then in the build tree; reads through it" {
	need_libslab
	small_slab
	mkdir -p tree/scripts tree/build tree/lib
	cp "$SLAB_ROOT/scripts/slab.py" tree/scripts/
	cp "$SLAB_ROOT/lib/slab.h" tree/lib/
	cp "$LIBSLAB" tree/build/libslab.so
	run -0 env -u SLAB_LIBRARY PYTHONPATH=tree/scripts python3 -c \
		'import slab; print(slab.backend); print(slab.backend_reason)'
	assert_output "libslab 0.1.0 ($PWD/tree/build/libslab.so)
build tree: $PWD/tree/build/libslab.so"
	# not a source tree: a copy in proj/ (or a package in site-packages) and a stray build/
	mkdir -p proj build
	cp "$SLAB_ROOT/scripts/slab.py" proj/
	cp "$LIBSLAB" build/libslab.so
	run -0 env -u SLAB_LIBRARY PYTHONPATH=proj python3 -c \
		'import slab; print(slab.backend_reason)'
	refute_output --partial "build tree"
	refute_output --partial "$PWD/build/"
	run -0 env SLAB_LIBRARY="$LIBSLAB" PYTHONPATH=tree/scripts python3 -c \
		'import slab; print(slab.backend); print(slab.backend_reason)'
	assert_output "libslab 0.1.0 ($LIBSLAB)
SLAB_LIBRARY: $LIBSLAB"
	# the handle is libslab's, and the library is in the process
	SLAB_LIBRARY=$LIBSLAB pyslab - <<'PY'
import os, slab
f = slab.SlabFile("small.slab")
assert f._c is not None and f.sample(0).key == "d/a"
assert os.environ["SLAB_LIBRARY"] in open("/proc/self/maps").read()
f.close()
assert f._c is None
PY
	run -0 env SLAB_LIBRARY="$LIBSLAB" PYTHONPATH=tree/scripts python3 tree/scripts/slab.py --help
	assert_line "Reading through: libslab 0.1.0 ($LIBSLAB) (SLAB_LIBRARY: $LIBSLAB)"
}

# Libraries slab.py must pass over, each time reading in Python: none at the path, not a
# library, another major version, one without the reader's functions, a sanitizer build
# (loading one would abort python3), and SLAB_LIBRARY empty or none.
@test "slab.py: a missing, foreign or other-version library falls back to Python with the reason" {
	small_slab
	cat > v1.c <<'C'
unsigned slab_version(void) { return 10203; }
const char *slab_version_string(void) { return "1.2.3"; }
C
	cat > nofn.c <<'C'
unsigned slab_version(void) { return 100; }
const char *slab_version_string(void) { return "0.1.0"; }
C
	cat > asan.c <<'C'
void __asan_init(void) { }
unsigned slab_version(void) { return 100; }
C
	for c in v1 nofn asan; do
		cc -shared -fPIC -o "lib$c.so" "$c.c"
	done
	echo "not a library" > text.so
	check() {   # SLAB_LIBRARY, the reason slab.py must give
		run -0 env SLAB_LIBRARY="$1" PYTHONPATH="$SLAB_ROOT/scripts" python3 -c '
import slab
print(slab.backend)
print(slab.backend_reason)
f = slab.SlabFile("small.slab")
print(len(f), f[0].key, f._c)'
		assert_output "python
$2
3 d/a None"
	}
	check "$PWD/none.so" "SLAB_LIBRARY: $PWD/none.so: $PWD/none.so: cannot open shared object file: No such file or directory"
	run -0 env SLAB_LIBRARY="$PWD/text.so" PYTHONPATH="$SLAB_ROOT/scripts" python3 -c \
		'import slab; print(slab.backend, slab.backend_reason)'
	assert_output --partial "python SLAB_LIBRARY: $PWD/text.so: $PWD/text.so: "
	check "$PWD/libv1.so" "SLAB_LIBRARY: $PWD/libv1.so: version 1.2.3, this module reads major version 0"
	check "$PWD/libnofn.so" "SLAB_LIBRARY: $PWD/libnofn.so: not usable here: $PWD/libnofn.so: undefined symbol: slab_new"
	check "$PWD/libasan.so" "SLAB_LIBRARY: $PWD/libasan.so: built with a sanitizer (__asan_init) whose runtime this process lacks"
	check none "SLAB_LIBRARY=none"
	check "" "SLAB_LIBRARY="
	# the same file read in Python: the verification and its output
	run -0 env SLAB_LIBRARY="$PWD/libv1.so" PYTHONPATH="$SLAB_ROOT/scripts" python3 \
		"$SLAB_ROOT/scripts/slab.py" --verify small.slab
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152, verified"
}

# When libslab's verification fails, slab.py redoes it in Python for its message, leaving out
# the CRCs of the samples libslab reported checked (through its progress calls, every 64 MiB):
# those of samples that end at or before that offset, and no others.
@test "slab.py: a verification redone in Python skips only the CRCs libslab reported checked" {
	small_slab
	python3 "$HELPERS/crafted.py" slab small.slab cases
	SLAB_LIBRARY=none pyslab - <<'PY'
import slab
f = slab.SlabFile("cases/field-crc.slab")       # sample 0's txt, bytes 4097 to 4099, damaged
s = f.sample(0)
end = s.offset + s.size
assert end == 4100, end
f._py_verify(end)                               # sample 0 taken as checked: nothing else wrong
for to in (0, end - 1):
    try:
        f._py_verify(to)
    except slab.SlabError as e:
        assert str(e) == ("cases/field-crc.slab: sample 0 field txt: checksum mismatch "
                          "(bytes at offset 4097, size 3)"), str(e)
    else:
        raise SystemExit("_py_verify(%d) passed a damaged CRC" % to)
PY
}

# Check 38 as slab(5) makes it: one walk round the key index, not a lookup per sample (which
# walks a whole cluster each time: quadratic on keys that share a home slot, hours for a
# crafted file of 100000 samples); a repeated key is named as inspect names it.
@test "slab.py --verify: keys sharing one home slot cost a key read each; a repeated key is named as inspect names it" {
	mkcollide --count 2000 | pack -q --page-size 4K -o r.slab -
	mkcollide --count 16 | pack -q --page-size 4K -o c.slab -
	mkcollide --count 16 --keys > keys
	slabedit c.slab key-copy 2 9
	run -1 --separate-stderr inspect --verify c.slab
	assert_equal "$stderr" "inspect: 'c.slab': sample #9 '$(sed -n 3p keys)': same key as sample #2"
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" --verify c.slab
	assert_equal "$stderr" "slab.py: c.slab: sample 9 '$(sed -n 3p keys)': same key as sample 2"
	done
	SLAB_LIBRARY=none run -0 pyslab - <<'PY'
import slab
reads = 0
record = slab.SlabFile._record
def counted(self, i):
    global reads
    reads += 1
    return record(self, i)
slab.SlabFile._record = counted
f = slab.SlabFile("r.slab", check_table=True)
f.verify()
print(len(f), reads)
PY
	assert_output "2000 2000"
}

@test "fork() while another thread is inside a SlabFile's call: the child reads, verifies and closes, no hang" {
	small_slab
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib run -0 pyslab - <<'PY'
import os, threading, slab
d = slab.Dataset("small.slab")
f = d.files[0]
# A thread of the parent's inside a call (verify(), sample()...) as fork() runs: the file's
# lock, held here for as long as the test needs, would be held in the child too, by a thread
# the child does not have.
inside, leave = threading.Event(), threading.Event()
def busy():
    with f._lock:
        inside.set()
        leave.wait()
t = threading.Thread(target=busy)
t.start()
inside.wait()
pid = os.fork()
if pid == 0:
    s = d[0]
    print("child:", s.key, [bytes(s[n]) for n in s.fields], f.key(1), f.find("d/c"), flush=True)
    del s
    f.verify()
    d.close()
    print("child: closed", flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
leave.set()
t.join()
print("child exit", os.waitstatus_to_exitcode(status))
print("parent:", d[0].key, d.files[0].find("d/b"))
d.close()
PY
	assert_line --index 0 "child: d/a [b'1', b'one'] d/b 2"
	assert_line --index 1 "child: closed"
	assert_line --index 2 "child exit 0"
	assert_line --index 3 "parent: d/a 1"
	done
}

# libslab checks the table's CRC on open, fast; the pure reader only with check_table=True.
# A file libslab refuses is refused, whichever reader then gives the message: never opened
# to serve the records of a table found damaged (here sample 0's txt moved one byte back).
@test "slab.py: a file libslab refuses on open (table checksum) raises SlabError, not wrong bytes" {
	need_libslab
	small_slab
	cp small.slab bad.slab
	at=$(python3 -c 'import struct, sys
b = open("small.slab", "rb").read()
tb = struct.unpack_from("<Q", b, len(b) - 56)[0]
print(tb + struct.unpack_from("<Q", b, tb + 56)[0] + 32)')
	flip bad.slab "$at"
	run -1 --separate-stderr inspect --get d/a --field txt bad.slab
	assert_equal "$stderr" "inspect: 'bad.slab': table checksum mismatch (table at offset 8192)"
	SLAB_LIBRARY=$LIBSLAB run -0 pyslab - <<'PY'
import slab
for check_table in (False, True):
    try:
        f = slab.SlabFile("bad.slab", check_table)
        print("opened:", bytes(f.sample(0)["txt"]))
    except slab.SlabError as e:
        print(e)
PY
	assert_output "bad.slab: table checksum mismatch (table at offset 8192)
bad.slab: table checksum mismatch (table at offset 8192)"
	SLAB_LIBRARY=none run -0 pyslab - <<'PY'
import slab
try:
    slab.SlabFile("bad.slab", True)
except slab.SlabError as e:
    print(e)
PY
	assert_output "bad.slab: table checksum mismatch (table at offset 8192)"
}

@test "slab.py FILE: a table whose checksum does not match is refused without --verify too, as inspect refuses it" {
	small_slab
	cp small.slab bad.slab
	flip bad.slab 8300
	run -1 --separate-stderr inspect bad.slab
	assert_equal "$stderr" "inspect: 'bad.slab': table checksum mismatch (table at offset 8192)"
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib run -1 --separate-stderr pyslab "$SLAB_ROOT/scripts/slab.py" bad.slab small.slab
	assert_equal "$stderr" "slab.py: bad.slab: table checksum mismatch (table at offset 8192)"
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152"
	done
}

@test "slab.py: a SlabFile or Dataset let go without close() unmaps its file; a field's view outlives it" {
	small_slab
	for lib in $BACKENDS; do
	check_backend "$lib"
	SLAB_LIBRARY=$lib run -0 pyslab - <<'PY'
import gc, slab
def maps():
    return sum(line.rstrip().endswith("/small.slab") for line in open("/proc/self/maps"))
for _ in range(50):
    f = slab.SlabFile("small.slab")
    f.sample(0)
del f
gc.collect()
print("after 50 files:", maps())
d = slab.Dataset("small.slab")
txt = d[0]["txt"]
del d
gc.collect()
print("view:", bytes(txt), maps())
del txt
gc.collect()
print("no view:", maps())
f = slab.SlabFile("small.slab")
f.close()
f.close()
print("closed twice:", maps())
PY
	assert_output "after 50 files: 0
view: b'one' 1
no view: 0
closed twice: 0"
	done
}

@test "slab.py: a URL's scheme in any case is a URL, as libslab and the tools take it (HTTP:// was opened as a file)" {
	need_libslab
	run -0 pyslab - <<'PY'
import re, slab
for u in ("http://h/x", "HTTP://h/x", "Https://h/x", "S3://b/k", b"s3://b/k"):
    assert slab.is_url(u), u
for p in ("x.slab", "http:/h/x", "s3:/b", "./http://h/x", "", "HTTP"):
    assert not slab.is_url(p), p
# nothing listens on port 1: libslab's error for the URL, not FileNotFoundError for a path
for u in ("http://127.0.0.1:1/x.slab", "HTTP://127.0.0.1:1/x.slab"):
    try:
        slab.SlabFile(u, retries=0, cache_dir="cache")
    except slab.SlabError as e:
        print(re.sub(r" in [0-9.]+ s:", " in T s:", str(e)))
PY
	assert_output "'http://127.0.0.1:1/x.slab': gave up after 1 attempt in T s: last: Connection refused
'HTTP://127.0.0.1:1/x.slab': gave up after 1 attempt in T s: last: Connection refused"
}

@test "slab.py: an S3 endpoint's scheme in any case is taken, as libslab takes it (HTTP:// was a ValueError)" {
	need_libslab
	run -0 pyslab - <<'PY'
import re, slab
for ep in ("http://127.0.0.1:1", "HTTP://127.0.0.1:1"):
    try:
        slab.SlabFile("s3://b/x.slab", endpoint=ep, anonymous=True, retries=0, cache_dir="cache")
    except slab.SlabError as e:
        print(re.sub(r" in [0-9.]+ s:", " in T s:", str(e)))
try:
    slab.SlabFile("s3://b/x.slab", endpoint="ftp://h", anonymous=True, cache_dir="cache")
except ValueError as e:
    print(e)
PY
	assert_output "'s3://b/x.slab': gave up after 1 attempt in T s: last: Connection refused
's3://b/x.slab': gave up after 1 attempt in T s: last: Connection refused
endpoint must be an http:// or https:// URL, not 'ftp://h'"
}
