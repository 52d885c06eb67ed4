"""setup.py: the Python package slab with its own copy of libslab, for `pip install .`.

The package is python/slab/: __init__.py is scripts/slab.py (a link: the one-file reader
stays where it always was), __main__.py (python3 -m slab), __init__.pyi and py.typed (the
typed API for editors). Building it runs make for build/libslab.so (the build tree
make uses; nothing is rebuilt when it is up to date) and copies the library into the package
as libslab.so.MAJOR, which slab looks for beside itself first. The wheel is then for this
platform and any Python 3 (the library is loaded through ctypes, not as an extension).

An sdist (setup.py sdist, python3 -m build) carries what that make needs, as MANIFEST.in
lists: slab.h, the library's sources, the Makefile and mk/, so that pip builds and installs it
as it does the clone.

setuptools' own build folders go under build/python/ (its default, build/lib/, holds make's
objects) and its egg-info too, so that the clone is left as it was, build/ aside.
"""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel    # setuptools >= 70.1
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:     # no wheel: setuptools refuses to build one, and says so
        bdist_wheel = None

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD_BASE = os.path.join("build", "python")


def version():
    """slab.h's SLAB_VERSION_MAJOR.MINOR.PATCH, as the Makefile reads it."""
    with open(os.path.join(ROOT, "lib", "slab.h")) as fh:
        text = fh.read()
    parts = [re.search(r"^#define SLAB_VERSION_%s +(\d+)" % p, text, re.M)
             for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit("setup.py: no SLAB_VERSION_MAJOR/MINOR/PATCH in lib/slab.h")
    return ".".join(m.group(1) for m in parts)


class BuildWithLibrary(build_py):
    """build_py, then make's build/libslab.so copied into the package as libslab.so.MAJOR."""

    def run(self):
        super().run()
        if self.dry_run:
            return
        # A make calling pip (make check) passes its flags and variables down through these;
        # this build is make's plain one in build/.
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
        cmd = [env.get("MAKE", "make"), "-C", ROOT, "-j%d" % (os.cpu_count() or 2),
               "BUILD=build", "build/libslab.so"]
        self.announce("running %s" % " ".join(cmd), level=2)
        subprocess.run(cmd, env=env, check=True)
        lib = os.path.realpath(os.path.join(ROOT, "build", "libslab.so"))
        major = version().split(".")[0]
        dest = os.path.join(self.build_lib, "slab", "libslab.so.%s" % major)
        self.mkpath(os.path.dirname(dest))
        shutil.copyfile(lib, dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """A package holding a shared library: not pure, so the wheel names its platform."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithLibrary}
if bdist_wheel is not None:
    class WheelForAnyPython3(bdist_wheel):
        """py3-none-PLATFORM: ctypes loads the library; no Python ABI is involved."""

        def get_tag(self):
            _python, _abi, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = WheelForAnyPython3

os.makedirs(os.path.join(ROOT, BUILD_BASE), exist_ok=True)
setup(
    name="slab",
    version=version(),
    description="Read .slab datasets; batches loaded and decoded by libslab's threads",
    long_description=__doc__,
    long_description_content_type="text/plain",
    python_requires=">=3.8",
    packages=["slab"],
    package_dir={"": "python"},
    package_data={"slab": ["py.typed", "*.pyi"]},
    zip_safe=False,
    distclass=BinaryDistribution,
    cmdclass=cmdclass,
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
)
