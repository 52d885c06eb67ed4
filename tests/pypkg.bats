#!/usr/bin/env bats
# slab as an installed Python package: make install puts python/slab/ (whose __init__.py is
# scripts/slab.py) where the system python3 imports it and the package finds the libslab.so.0
# make install put in LIBDIR; `pip install .` into a virtualenv makes a package with its own
# copy of the library. Each runs a slab.Loader epoch from its site folder alone and must
# give the build tree's batches, byte for byte. And __init__.pyi names the module's public API.
#
# The system Python is /usr/bin/python3 (python3 on PATH may be a version manager's, which
# sees no Debian python3-* package): the installs are for it.

load test_helper/common

SYSPY=/usr/bin/python3

need_system_python() {
	[ -x "$SYSPY" ] || skip "no $SYSPY, the system Python the install is for"
}

# Debian's layout of site folders, which make install follows for its python3.
need_debian_python() {
	need_system_python
	"$SYSPY" -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)' ||
		skip "$SYSPY is not Debian's (no /usr/lib/python3/dist-packages on its path)"
}

# slab_make ARGS...: make in the clone for the build under test, with mk/python.mk (the
# Makefile includes it too: its guard reads it once). The suite's make may have passed
# its flags down: not to this one.
slab_make() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" -f Makefile -f mk/python.mk \
		BUILD="$SLAB_BUILD" "$@" > make.log 2>&1 || fail "make $* failed: $(cat make.log)"
}

# install_all ARGS...: make install, which installs the package too once the Makefile
# includes mk/python.mk; until then install-python is asked for by name.
install_all() {
	if grep -Eq '^-?include +mk/python\.mk' "$SLAB_ROOT/Makefile"; then
		slab_make "$@" install
	else
		slab_make "$@" install install-python
	fi
}
uninstall_all() {
	if grep -Eq '^-?include +mk/python\.mk' "$SLAB_ROOT/Makefile"; then
		slab_make "$@" uninstall
	else
		slab_make "$@" uninstall uninstall-python
	fi
}

# slab_version: slab's version, from slab.h.
slab_version() {
	sed -n 's/^#define SLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\)$/\2/p' \
		"$SLAB_ROOT/lib/slab.h" | paste -sd.
}

# a.slab: 23 small JPEGs with classes; epoch.py FILE: one epoch of slab.Loader over it (a
# random plan, decoded, cropped and resized images, labels), printing slab.backend, then the
# samples and a digest of every batch's keys, labels and pixels; want: the build's digest.
setup_epoch() {
	mkwds --count 23 --width 24 --height 20 --seed 8 -o a.tar
	pack -q --page-size 4K -o a.slab a.tar
	cat > epoch.py <<'PY'
import hashlib, sys
import slab
h, n = hashlib.sha256(), 0
with slab.Loader([sys.argv[1]], order="random", seed=7, epoch=2, batch_size=5, threads=2,
                 image="jpg", size=(12, 16), flip=True, labels="cls") as ld:
    for b in ld:
        h.update("\n".join(b.keys).encode())
        h.update(b.labels.tobytes())
        h.update(b.images.tobytes())
        n += len(b)
print(slab.backend)
print(n, h.hexdigest())
PY
	SLAB_LIBRARY=$LIBSLAB pyslab epoch.py a.slab | tail -n 1 > want
	[ "$(cut -d' ' -f1 want)" = 23 ] || fail "the build's epoch: $(cat want)"
}

# The one site folder under DIR that holds slab/__init__.py.
site_under() {
	local init
	init=$(find "$1" -path '*/slab/__init__.py')
	[ "$(printf '%s\n' "$init" | wc -l)" = 1 ] && [ -n "$init" ] ||
		fail "not one slab/__init__.py under $1: $init"
	dirname "$(dirname "$init")"
}

# What make install put in a package folder DIR: the module as one file, the stub, the
# marker, __main__.py and the recorded LIBDIR ($2).
check_package() {
	for f in __init__.py __main__.py __init__.pyi py.typed _paths.py; do
		[ -f "$1/$f" ] && [ ! -L "$1/$f" ] || fail "no file $1/$f"
	done
	cmp "$1/__init__.py" "$SLAB_ROOT/scripts/slab.py"
	cmp "$1/__init__.pyi" "$SLAB_ROOT/python/slab/__init__.pyi"
	run -0 grep '^LIBDIR' "$1/_paths.py"
	assert_output "LIBDIR = '$2'"
}

@test "make install puts the package where Debian's python3 imports it (/usr, /usr/local, PYTHON_SITE); uninstall removes it" {
	not_twice
	need_debian_python
	ver=$("$SYSPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	install_all PREFIX=/usr DESTDIR="$PWD/root"
	check_package root/usr/lib/python3/dist-packages/slab /usr/lib
	[ -e root/usr/lib/libslab.so.0 ] || fail "make install did not install libslab.so.0"
	slab_make PREFIX=/usr/local DESTDIR="$PWD/local" install-python
	check_package "local/usr/local/lib/python$ver/dist-packages/slab" /usr/local/lib
	slab_make PREFIX=/usr LIBDIR=/usr/lib64 PYTHON_SITE=/opt/py DESTDIR="$PWD/opt" install-python
	check_package opt/opt/py/slab /usr/lib64
	# the files Python writes beside an imported module go too
	mkdir root/usr/lib/python3/dist-packages/slab/__pycache__
	touch root/usr/lib/python3/dist-packages/slab/__pycache__/__init__.cpython-311.pyc
	uninstall_all PREFIX=/usr DESTDIR="$PWD/root"
	slab_make PREFIX=/usr/local DESTDIR="$PWD/local" uninstall-python
	slab_make PREFIX=/usr PYTHON_SITE=/opt/py DESTDIR="$PWD/opt" uninstall-python
	run -0 find root local opt -type f -o -type l -o -name slab
	assert_output ""
	# no Python to ask: say so, rather than install into /slab
	run -2 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" -f Makefile \
		-f mk/python.mk PYTHON="$PWD/nopython" DESTDIR="$PWD/none" install-python
	assert_output --partial "install-python: no site folder from $PWD/nopython (is it there?): give PYTHON_SITE=DIR"
	[ ! -e none ]
}

@test "the package staged in a DESTDIR imports from its site folder alone and runs the build's epoch with the staged libslab" {
	need_system_python
	need_libslab
	[ ! -e /usr/lib/libslab.so.0 ] || skip "/usr/lib/libslab.so.0 is installed: it would be found first"
	setup_epoch
	install_all PREFIX=/usr DESTDIR="$PWD/root"
	site=$(site_under root)
	# The recorded /usr/lib holds the library once the tree is in place; staged, the loader's
	# path is how the system would find it.
	mkdir elsewhere && cd elsewhere
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$PWD/../$site" LD_LIBRARY_PATH="$PWD/../root/usr/lib" \
		"$SYSPY" -s - <<'PY'
import os, slab
print(os.path.relpath(slab.__file__))
print(slab.backend)
maps = open("/proc/self/maps").read()
print(any(line.endswith("/root/usr/lib/" + os.path.basename(os.path.realpath(
    "../root/usr/lib/libslab.so.0"))) for line in maps.splitlines()))
PY
	assert_output "../$site/slab/__init__.py
libslab 0.1.0 (libslab.so.0)
True"
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$PWD/../$site" LD_LIBRARY_PATH="$PWD/../root/usr/lib" \
		"$SYSPY" -s ../epoch.py ../a.slab
	assert_output "libslab 0.1.0 (libslab.so.0)
$(cat ../want)"
}

@test "installed into a prefix, the package finds libslab.so.0 in the LIBDIR it recorded; python3 -m slab --verify" {
	need_system_python
	need_libslab
	setup_epoch
	install_all PREFIX="$PWD/prefix"
	site=$PWD/$(site_under prefix)
	lib=$PWD/prefix/lib/libslab.so.0
	cp a.slab bad.slab
	flip bad.slab 4097
	mkdir elsewhere && cd elsewhere
	run -0 env -u SLAB_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$site" "$SYSPY" -s \
		-c 'import slab; print(slab.__file__); print(slab.backend); print(slab.backend_reason)'
	assert_output "$site/slab/__init__.py
libslab 0.1.0 ($lib)
installed: $lib"
	run -0 env -u SLAB_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$site" "$SYSPY" -s ../epoch.py ../a.slab
	assert_output "libslab 0.1.0 ($lib)
$(cat ../want)"
	cd ..
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$site" "$SYSPY" -s -m slab --verify a.slab
	assert_output "a.slab: 23 samples, fields cls,jpg,json, page size 4096, verified"
	run -1 --separate-stderr env -u SLAB_LIBRARY PYTHONPATH="$site" "$SYSPY" -s -m slab \
		--verify bad.slab
	assert_equal "$stderr" "slab.py: bad.slab: sample 0 field jpg: checksum mismatch (bytes at offset 4096, size $(tar -xOf a.tar sample000000.jpg | wc -c))"
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$site" "$SYSPY" -s -m slab --help
	assert_line "Reading through: libslab 0.1.0 ($lib) (installed: $lib)"
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$site" "$SYSPY" -s -m slab --version
	assert_output "slab.py (slab) $(slab_version)"
	uninstall_all PREFIX="$PWD/prefix"
	run -0 find prefix -type f -o -type l
	assert_output ""
}

# pip builds through make in the clone's build/ (nothing to do when the suite's build is that
# one) and installs offline: --no-build-isolation with the system's setuptools and wheel. The
# venv has no pip of its own (ensurepip takes seconds): the system's, seen through
# --system-site-packages, installs into it, as the venv's own would.
@test "pip install . into a virtualenv: the package carries its own libslab and runs the epoch from outside the clone" {
	need_system_python
	need_libslab
	[ "$SLAB_BUILD" -ef "$SLAB_ROOT/build" ] ||
		skip "pip builds in $SLAB_ROOT/build, not in the build under test ($SLAB_BUILD)"
	"$SYSPY" -c 'import venv, setuptools, wheel, pip' 2>/dev/null ||
		skip "$SYSPY lacks venv, setuptools, wheel or pip (python3-venv python3-setuptools python3-wheel python3-pip)"
	setup_epoch
	"$SYSPY" -m venv --system-site-packages --without-pip venv
	run -0 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u PYTHONPATH PIP_DISABLE_PIP_VERSION_CHECK=1 \
		venv/bin/python -m pip install -q --no-build-isolation --no-index --no-cache-dir \
		"$SLAB_ROOT"
	pkg=$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("platlib"))')/slab
	[ -f "$pkg/libslab.so.0" ] && cmp "$pkg/libslab.so.0" "$SLAB_ROOT/build/libslab.so"
	for f in __init__.py __main__.py __init__.pyi py.typed; do
		[ -f "$pkg/$f" ] && [ ! -L "$pkg/$f" ] || fail "pip did not install slab/$f"
	done
	cmp "$pkg/__init__.py" "$SLAB_ROOT/scripts/slab.py"
	[ ! -e "$pkg/_paths.py" ]
	# the clone keeps no build products outside build/
	run -0 find "$SLAB_ROOT" -maxdepth 2 -name '*.egg-info' -not -path "$SLAB_ROOT/build/*"
	assert_output ""
	mkdir elsewhere && cd elsewhere
	[[ $PWD != "$SLAB_ROOT"/* ]] || skip "the test folder is inside the clone"
	py() {
		env -u SLAB_LIBRARY -u PYTHONPATH -u LD_LIBRARY_PATH ../venv/bin/python "$@"
	}
	run -0 py -c 'import slab; slab.Loader; print(slab.__file__); print(slab.backend_reason)'
	assert_output "$pkg/__init__.py
package: $pkg/libslab.so.0"
	run -0 py ../epoch.py ../a.slab
	assert_output "libslab 0.1.0 ($pkg/libslab.so.0)
$(cat ../want)"
	run -0 py -m slab --verify ../a.slab
	assert_output "../a.slab: 23 samples, fields cls,jpg,json, page size 4096, verified"
	# the package's version, its metadata's (setup.py reads slab.h) and the library's agree
	run -0 py -c 'import importlib.metadata as m, slab; print(slab.__version__, m.version("slab"))'
	assert_output "$(slab_version) $(slab_version)"
	run -0 env -u MAKEFLAGS PIP_DISABLE_PIP_VERSION_CHECK=1 ../venv/bin/python -m pip \
		uninstall -q -y slab
	[ ! -e "$pkg" ]
}

# An sdist (setup.py sdist, what python3 -m build makes first and builds its wheel from, and
# what an index serves) holds what setup.py builds libslab with: pip installs it offline,
# making the library in its own unpacked copy (a whole build: no build/ goes with it).
@test "pip installs the sdist into a virtualenv: it carries slab.h and what make builds libslab from" {
	need_system_python
	need_libslab
	"$SYSPY" -c 'import venv, setuptools, wheel, pip' 2>/dev/null ||
		skip "$SYSPY lacks venv, setuptools, wheel or pip (python3-venv python3-setuptools python3-wheel python3-pip)"
	setup_epoch
	# its egg-info here, as in a fresh clone: setuptools adds the files an earlier
	# SOURCES.txt lists to those it finds
	mkdir "$BATS_TEST_TMPDIR/egg"
	(cd "$SLAB_ROOT" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$SYSPY" setup.py -q \
		egg_info --egg-base "$BATS_TEST_TMPDIR/egg" sdist -d "$BATS_TEST_TMPDIR/dist") \
		> sdist.log 2>&1 || fail "setup.py sdist: $(cat sdist.log)"
	sdist=$BATS_TEST_TMPDIR/dist/slab-$(slab_version).tar.gz
	run -0 tar -tzf "$sdist"
	for f in lib/slab.h lib/libslab.map Makefile mk/places.mk scripts/check-deps tools/pack.c; do
		assert_line "slab-$(slab_version)/$f"
	done
	refute_line --regexp '\.(o|so|a)$'
	"$SYSPY" -m venv --system-site-packages --without-pip venv
	run -0 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u PYTHONPATH PIP_DISABLE_PIP_VERSION_CHECK=1 \
		venv/bin/python -m pip install -q --no-build-isolation --no-index --no-cache-dir "$sdist"
	pkg=$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("platlib"))')/slab
	[ -f "$pkg/libslab.so.0" ] || fail "no libslab.so.0 in $pkg"
	mkdir elsewhere && cd elsewhere
	run -0 env -u SLAB_LIBRARY -u PYTHONPATH -u LD_LIBRARY_PATH ../venv/bin/python ../epoch.py ../a.slab
	assert_output "libslab $(slab_version) ($pkg/libslab.so.0)
$(cat ../want)"
}

@test "scripts/slab.py is the package's __init__.py, and still one file on the standard library" {
	small_slab
	[ "$(readlink "$SLAB_ROOT/python/slab/__init__.py")" = ../../scripts/slab.py ]
	# a copy alone, with no site folder on the path
	mkdir alone && cp "$SLAB_ROOT/scripts/slab.py" alone/
	run -0 env SLAB_LIBRARY=none python3 -S alone/slab.py --verify small.slab
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152, verified"
	# the package in the clone: python3 -m slab, the build tree's library found from the real
	# path of the file
	run -0 env -u SLAB_LIBRARY PYTHONPATH="$SLAB_ROOT/python" python3 -c \
		'import slab; print(slab.__name__, slab.__package__, slab.backend_reason)'
	if [ -f "$SLAB_ROOT/build/libslab.so" ] && ! grep -qa __asan_init "$SLAB_ROOT/build/libslab.so"; then
		assert_output "slab slab build tree: $SLAB_ROOT/build/libslab.so"
	else
		assert_output --partial "slab slab "
	fi
	run -0 env SLAB_LIBRARY=none PYTHONPATH="$SLAB_ROOT/python" python3 -m slab --verify small.slab
	assert_output "small.slab: 3 samples, fields cls,txt, page size 2097152, verified"
}

@test "slab.__version__ and slab.py --version are slab.h's version, as the tools'" {
	run -0 env SLAB_LIBRARY=none PYTHONPATH="$SLAB_ROOT/python" python3 -c \
		'import slab; print(slab.__version__)'
	assert_output "$(slab_version)"
	run -0 env SLAB_LIBRARY=none python3 "$SLAB_ROOT/scripts/slab.py" --version
	assert_output "slab.py (slab) $(slab_version)"
	run -0 env SLAB_LIBRARY=none PYTHONPATH="$SLAB_ROOT/python" python3 -m slab --version
	assert_output "slab.py (slab) $(slab_version)"
	run -0 pack --version
	assert_output "pack (slab) $(slab_version)"
	# after --, a file named --version
	run -1 --separate-stderr env SLAB_LIBRARY=none python3 "$SLAB_ROOT/scripts/slab.py" -- --version
	assert_output ""
}

# The stub against the module: the same public names (modules it imports aside), each
# class's public members those of its instances, and each function's and method's
# parameters the same names in the same order (**remote stands for the keyword-only
# options of remote files: cache_dir, endpoint, ...).
@test "__init__.pyi names every public name of slab and of its classes, with their parameters" {
	mkwds --count 3 --width 16 --height 16 --seed 2 -o a.tar
	pack -q -o a.slab a.tar
	export SLAB_LIBRARY=${LIBSLAB:-none}
	run -0 pyslab - "$SLAB_ROOT/python/slab/__init__.pyi" <<'PY'
import ast, inspect, sys, types
import slab

stub = ast.parse(open(sys.argv[1]).read())


def members(body):
    """Public names a stub's body defines: {name: node}."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            out.update((t.id, node) for t in node.targets)
    return {n: v for n, v in out.items() if not n.startswith("_")}


def real_params(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD and p.name == "remote":
            out += [(k, "keyword") for k in slab._REMOTE_KEYS]
        else:
            out.append((p.name, {p.KEYWORD_ONLY: "keyword", p.VAR_POSITIONAL: "*",
                                 p.VAR_KEYWORD: "**"}.get(p.kind, "positional")))
    return out


def stub_params(node):
    a = node.args
    out = [(x.arg, "positional") for x in a.posonlyargs + a.args]
    out += [(a.vararg.arg, "*")] if a.vararg else []
    out += [(x.arg, "keyword") for x in a.kwonlyargs]
    return out + ([(a.kwarg.arg, "**")] if a.kwarg else [])


problems = []


def compare(where, have, stubbed):
    problems.extend("%s: the stub lacks %s" % (where, n) for n in sorted(have - stubbed))
    problems.extend("%s: the stub has %s, the module not" % (where, n)
                    for n in sorted(stubbed - have))


def check_function(where, fn, node):
    if real_params(fn) != stub_params(node):
        problems.append("%s: parameters %s, in the stub %s"
                        % (where, real_params(fn), stub_params(node)))


top = members(stub.body)
compare("slab", {n for n in dir(slab) if not n.startswith("_")
                 and not isinstance(getattr(slab, n), types.ModuleType)}, set(top))
f = slab.SlabFile("a.slab")
ds = slab.Dataset(["a.slab"])
instances = {"SlabFile": f, "Dataset": ds, "Sample": ds[0], "Field": ds[0].field("jpg")}
if slab.backend != "python":
    ld = slab.Loader(["a.slab"], batch_size=2, image="jpg", size=(8, 8), labels="cls")
    instances.update(Loader=ld, Batch=ld.next_batch())
for name, node in top.items():
    real = getattr(slab, name, None)
    if isinstance(node, ast.FunctionDef) and inspect.isfunction(real):
        check_function(name, real, node)
    if not isinstance(node, ast.ClassDef) or not isinstance(real, type):
        continue
    stubbed = members(node.body)
    have = {n for n in dir(instances.get(name, real)) if not n.startswith("_")}
    # without an instance (no libslab for a Loader), what __init__ sets is not seen
    compare(name, have - set(dir(Exception)),
            set(stubbed) if name in instances or name == "SlabError" else have & set(stubbed))
    for m, mnode in list(stubbed.items()) + [(x.name, x) for x in node.body
                                             if getattr(x, "name", "") == "__init__"]:
        fn = vars(real).get(m)
        if isinstance(mnode, ast.FunctionDef) and inspect.isfunction(fn):
            check_function("%s.%s" % (name, m), fn, mnode)
print("\n".join(problems) or "same")
PY
	assert_output "same"
	# And mypy's own comparison of stub and module, where the system Python has mypy
	# (python3-mypy): types that name nothing, defaults, properties. Not slab.__main__: importing
	# it runs the command line.
	if "$SYSPY" -c 'import mypy.stubtest' 2>/dev/null; then
		echo 'slab.__main__' > allowlist
		run -0 env SLAB_LIBRARY=none PYTHONPATH="$SLAB_ROOT/python" "$SYSPY" -m mypy.stubtest \
			--allowlist allowlist slab
		assert_output "Success: no issues found in 2 modules"
	fi
}
