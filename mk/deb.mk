# mk/deb.mk: make deb: slab's Debian packages, built by Debian's own tooling from debian/
# (dpkg-buildpackage -b -uc -us: unsigned binary packages) in a copy of the tree,
# $(DEB_DIR)/src: the files git knows of plus the working tree's new and changed ones (every
# file but build/ outside a git checkout). dpkg-buildpackage writes its results beside the
# tree it builds, so they land in $(DEB_DIR): slab-tools, libslab0, libslab-dev and
# python3-slab as .deb (with -dbgsym packages of the debugging symbols), the .buildinfo and
# the .changes. lintian, where it is installed, then checks them: an error fails make deb,
# warnings are shown.
#
#   DEB_DIR   where the packages go (build/deb)
#   DEB_JOBS  compiles at once in the package build (2)
#
# The Makefile includes this file. Needs build-essential, dpkg-dev, debhelper, dh-python and
# the build's -dev packages (scripts/install-deps installs them; dpkg-buildpackage names what
# is missing).

ifndef SLAB_DEB_MK
SLAB_DEB_MK := 1
# Included anywhere, this file leaves the default goal alone (all, the Makefile's first).
SLAB_DEB_GOAL := $(.DEFAULT_GOAL)

DEB_DIR  ?= build/deb
DEB_JOBS ?= 2
# The packages' names, for the files of an earlier make deb (NAME_VERSION_ARCH.deb ...).
DEB_NAMES := slab slab-tools libslab0 libslab-dev python3-slab slab-tools-dbgsym libslab0-dbgsym
# The file list: the index's files and the untracked ones not ignored, less those deleted in
# the working tree.
DEB_FILES = if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do { [ -e "$$f" ] || [ -h "$$f" ]; } && printf "%s\0" "$$f"; done' sh; \
	else \
		find . -path ./build -prune -o -path ./.git -prune -o ! -type d -print0; \
	fi

.PHONY: deb

## deb: build the Debian packages (slab-tools, libslab0, libslab-dev, python3-slab) with
## dpkg-buildpackage from debian/ in a copy of the tree, build/deb/src, then lintian them:
## the .deb files land in build/deb/ (DEB_DIR)
deb:
	rm -rf $(DEB_DIR)/src
	rm -f $(foreach n,$(DEB_NAMES),$(DEB_DIR)/$(n)_*)
	mkdir -p $(DEB_DIR)/src
	@echo "  COPY    $(DEB_DIR)/src"
	$(Q)($(DEB_FILES)) | tar --null --no-recursion -T - -cf - | tar -xf - -C $(DEB_DIR)/src
	@echo "  DEB     $(DEB_DIR)"
	$(Q)cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
		dpkg-buildpackage -b -uc -us -j$(DEB_JOBS)
	$(Q)if command -v lintian >/dev/null 2>&1; then \
		echo "  LINTIAN $(DEB_DIR)/slab_*.changes"; \
		lintian --fail-on error $(DEB_DIR)/slab_*.changes || exit 1; \
	else \
		echo "  LINTIAN skipped: no lintian (apt-get install lintian)"; \
	fi
	@ls $(DEB_DIR)/*.deb

.DEFAULT_GOAL := $(SLAB_DEB_GOAL)
endif
