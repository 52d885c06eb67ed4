# mk/python.mk: the Python package slab (python/slab/: __init__.py is scripts/slab.py, with
# __main__.py, __init__.pyi and py.typed) installed where the system python3 imports it.
# The Makefile includes this file; its install and uninstall run these targets too.
#
#   PYTHON       the Python whose import path decides the place: the system's,
#                /usr/bin/python3, else python3 on PATH
#   PYTHON_SITE  the folder the package slab/ goes into (under DESTDIR). For that Python by
#                default: on Debian and its derivatives $(PREFIX)/lib/python3/dist-packages
#                for PREFIX=/usr (beside the python3-* packages), else
#                $(PREFIX)/lib/python3.X/dist-packages (/usr/local's is on Debian's path);
#                elsewhere sysconfig's $(PREFIX)/lib/python3.X/site-packages
#
# The package records LIBDIR in slab/_paths.py (without DESTDIR: where the files will be
# once the staged tree is in place) and looks there for the libslab.so.0 make install puts
# there. `pip install .` (setup.py) makes the other kind of install, with a library of its own.

ifndef SLAB_PYTHON_MK
SLAB_PYTHON_MK := 1
# Included anywhere, this file leaves make's default goal as it was (all).
python_mk_goal := $(.DEFAULT_GOAL)
include $(dir $(lastword $(MAKEFILE_LIST)))places.mk

PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_SITE_CODE = import os, sys, sysconfig; \
	p = os.path.normpath(sys.argv[1]); v = "%d.%d" % sys.version_info[:2]; \
	deb = "/usr/lib/python3/dist-packages" in sys.path; \
	print((p + "/lib/python3/dist-packages" if p == "/usr" else \
		"%s/lib/python%s/dist-packages" % (p, v)) if deb else \
		sysconfig.get_path("purelib", "posix_prefix", {"base": p, "platbase": p}))
# Asked of $(PYTHON) once, when first used (install-python and uninstall-python only).
PYTHON_SITE ?= $(eval PYTHON_SITE := $$(shell $$(PYTHON) -c '$$(PY_SITE_CODE)' '$$(PREFIX)' \
	2>/dev/null))$(PYTHON_SITE)
PY_PKG_FILES := __init__.py __main__.py __init__.pyi py.typed
PY_PKG_DIR = $(DESTDIR)$(PYTHON_SITE)/slab
py_site_known = $(if $(PYTHON_SITE),,$(error $@: no site folder from $(PYTHON) (is it there?): \
	give PYTHON_SITE=DIR))

.PHONY: install-python uninstall-python

## install-python: install the Python package slab where the system python3 imports it
## (DESTDIR, PREFIX; PYTHON_SITE overrides the place), its libslab the one in LIBDIR
install-python:
	$(call safe_places,DESTDIR PREFIX LIBDIR PYTHON_SITE $(INSTALL_PLACES))
	$(py_site_known)
	install -d $(PY_PKG_DIR)
	install -m 644 $(addprefix python/slab/,$(PY_PKG_FILES)) $(PY_PKG_DIR)
	printf '%s\n' '# Written by make install-python: the LIBDIR of make install, where slab' \
		'# looks for libslab.so.0 (see its docstring).' "LIBDIR = '$(LIBDIR)'" \
		> $(PY_PKG_DIR)/_paths.py
	chmod 644 $(PY_PKG_DIR)/_paths.py

## uninstall-python: remove what install-python put there (and Python's __pycache__ of it)
uninstall-python:
	$(call safe_places,DESTDIR PREFIX LIBDIR PYTHON_SITE $(INSTALL_PLACES))
	$(py_site_known)
	rm -f $(addprefix $(PY_PKG_DIR)/,$(PY_PKG_FILES) _paths.py)
	rm -rf $(PY_PKG_DIR)/__pycache__
	[ ! -d $(PY_PKG_DIR) ] || rmdir --ignore-fail-on-non-empty $(PY_PKG_DIR)

.DEFAULT_GOAL := $(python_mk_goal)
endif
