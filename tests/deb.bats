#!/usr/bin/env bats
# make deb (mk/deb.mk, debian/): Debian's own tooling builds slab-tools, libslab0, libslab-dev
# and python3-slab from a copy of the tree, once for the file; each holds what it should and
# lintian finds no error. Then, as root, the four install with dpkg -i, every tool and the
# Python package work from where Debian put them, C programs build with pkg-config, and
# dpkg --purge takes everything away again (teardown_file purges whatever happened).

# dpkg-query's formats are ${field} in single quotes.
# shellcheck disable=SC2016
load test_helper/common

DEB_PACKAGES="slab-tools libslab0 libslab-dev python3-slab"
SYSPY=/usr/bin/python3
# Where make deb puts the packages: this file's own folder, not the tree's build/deb.
DEB_DIR=$BATS_FILE_TMPDIR/deb

# The reason the packages were not built (setup_file writes it), for every test to skip with.
need_debs() {
	if [ -s "$BATS_FILE_TMPDIR/skip" ]; then
		skip "$(cat "$BATS_FILE_TMPDIR/skip")"
	fi
	[ -f "$BATS_FILE_TMPDIR/built" ] ||
		fail "make deb failed: $(tail -n 40 "$BATS_FILE_TMPDIR/deb.log")"
}

setup_file() {
	local why="" tool
	# The packages are built from the sources, not from the build under test: once is enough.
	if grep -qa __asan_init "$SLAB_BUILD/bin/pack" 2>/dev/null; then
		why="builds nothing of the build under test: checked in the normal pass"
	fi
	for tool in dpkg-buildpackage dh dh_python3 lintian; do
		[ -n "$why" ] || command -v "$tool" >/dev/null ||
			why="no $tool (Debian packages dpkg-dev, debhelper, dh-python, lintian)"
	done
	if [ -z "$why" ] && ! (cd "$SLAB_ROOT" && dpkg-checkbuilddeps) > "$BATS_FILE_TMPDIR/bdeps" 2>&1; then
		why="$(cat "$BATS_FILE_TMPDIR/bdeps")"
	fi
	if [ -n "$why" ]; then
		printf '%s\n' "$why" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	# The suite's make may have passed its flags down: not to this one.
	if env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$SLAB_ROOT" -f Makefile -f mk/deb.mk \
		DEB_DIR="$DEB_DIR" DEB_JOBS=2 deb > "$BATS_FILE_TMPDIR/deb.log" 2>&1; then
		touch "$BATS_FILE_TMPDIR/built"
	fi
}

# Whatever a failed test left: the packages this file installed go (only those: the test
# does not run where any of them was installed before).
teardown_file() {
	local p left=""
	[ -f "$BATS_FILE_TMPDIR/installed" ] || return 0
	for p in $DEB_PACKAGES; do
		if dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			left="$left $p"
		fi
	done
	# shellcheck disable=SC2086
	[ -z "$left" ] || dpkg --purge $left >/dev/null
}

# The one .deb of package $1.
deb_of() {
	local f
	f=$(find "$DEB_DIR" -maxdepth 1 -name "$1_*.deb")
	if [ -z "$f" ] || [ "$(printf '%s\n' "$f" | wc -l)" != 1 ]; then
		fail "not one $1_*.deb in $DEB_DIR: $f"
	fi
	printf '%s\n' "$f"
}

# contents PACKAGE: the paths its .deb holds, one a line (links as PATH -> TARGET), folders
# aside.
contents() {
	dpkg-deb -c "$(deb_of "$1")" | awk '$1 !~ /^d/ { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }' |
		LC_ALL=C sort
}

# The installed tools' short names, as the Makefile finds them: tools/*.c but the front.
tool_names() {
	local t
	for t in "$SLAB_ROOT"/tools/*.c; do
		t=${t##*/}
		t=${t%.c}
		[ "$t" = slab ] || echo "$t"
	done
}

multiarch() {
	dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null
}

@test "make deb builds slab-tools, libslab0, libslab-dev and python3-slab, each with its files, and lintian finds no error" {
	need_debs
	local m t
	m=$(multiarch)
	[ -n "$m" ] || fail "dpkg-architecture gives no DEB_HOST_MULTIARCH"
	# the results land in DEB_DIR, the build's copy in DEB_DIR/src, nothing beside them
	for p in $DEB_PACKAGES; do deb_of "$p" > /dev/null; done
	[ -n "$(find "$DEB_DIR" -maxdepth 1 -name 'slab_*.changes')" ] || fail "no .changes in $DEB_DIR"
	[ -x "$DEB_DIR/src/debian/rules" ] || fail "the build's copy is not in $DEB_DIR/src"
	run -0 find "$SLAB_ROOT/.." "$SLAB_ROOT" "$SLAB_ROOT/debian" -maxdepth 1 \
		-newer "$BATS_FILE_TMPDIR/bdeps" \( -name '*.deb' -o -name '*.changes' -o \
		-name '*.buildinfo' -o -path '*/debian/tmp' -o -path '*/debian/files' \)
	assert_output ""

	run -0 contents slab-tools
	assert_line ./usr/bin/slab
	assert_line ./usr/share/man/man1/slab.1.gz
	assert_line ./usr/share/man/man5/slab.5.gz
	assert_line ./usr/share/man/man5/slab-plan.5.gz
	assert_line ./usr/share/bash-completion/completions/slab
	for t in $(tool_names); do
		assert_line "./usr/bin/slab-$t"
		assert_line "./usr/share/man/man1/slab-$t.1.gz"
		assert_line "./usr/share/bash-completion/completions/slab-$t"
	done
	assert_line ./usr/share/doc/slab-tools/copyright
	refute_line --regexp '^\./usr/(include|lib)/'

	run -0 contents libslab0
	assert_line --regexp "^\./usr/lib/$m/libslab\.so\.0 -> libslab\.so\.0\.[0-9]+\.[0-9]+$"
	assert_line --regexp "^\./usr/lib/$m/libslab\.so\.0\.[0-9]+\.[0-9]+$"
	refute_line --regexp '^\./usr/(bin|include)/|libslab\.(a|so)$|libslab\.so ->|\.pc$'

	run -0 contents libslab-dev
	assert_line ./usr/include/slab.h
	assert_line "./usr/lib/$m/libslab.so -> libslab.so.0"
	assert_line "./usr/lib/$m/libslab.a"
	assert_line "./usr/lib/$m/pkgconfig/slab.pc"
	assert_line ./usr/share/man/man3/libslab.3.gz
	refute_line --regexp '^\./usr/bin/|^\./usr/lib/.*/libslab\.so\.[0-9]'

	run -0 contents python3-slab
	for f in __init__.py __init__.pyi __main__.py _paths.py py.typed; do
		assert_line "./usr/lib/python3/dist-packages/slab/$f"
	done
	refute_line --regexp '^\./usr/(bin|include)/|libslab\.so|__pycache__'

	# what each needs: the tools link libslab.a, so not libslab0; python3-slab loads it
	run -0 dpkg-deb -f "$(deb_of slab-tools)" Depends
	refute_output --partial libslab0
	run -0 dpkg-deb -f "$(deb_of python3-slab)" Depends
	assert_output --regexp 'libslab0 \(= [^)]+\)'
	assert_output --partial python3
	run -0 dpkg-deb -f "$(deb_of libslab-dev)" Depends
	assert_output --regexp 'libslab0 \(= [^)]+\)'
	# FFmpeg's libraries, which libslab loads to read a video, by the sonames of the headers
	# it was built with: recommended by those sonames, not by a list written for one release
	want=$(for l in avcodec avformat avutil swscale; do
		echo "lib$l$(pkg-config --modversion "lib$l" | cut -d. -f1)"; done | paste -sd, | sed 's/,/, /g')
	for p in slab-tools libslab0; do
		run -0 dpkg-deb -f "$(deb_of "$p")" Recommends
		assert_output "$want"
	done
	run grep -nE 'lib(avcodec|avformat|avutil|swscale)[0-9]' "$SLAB_ROOT/debian/control"
	assert_output ""

	run lintian "$DEB_DIR"/slab_*.changes
	if [ "$status" -ne 0 ] || grep -q '^E: ' <<< "$output"; then
		fail "lintian exited $status: $output"
	fi
}

@test "the packages install with dpkg -i, their tools, Python package and pkg-config work, and dpkg --purge removes them" {
	need_debs
	[ "$(id -u)" = 0 ] || skip "installs packages: needs root"
	local p m version t
	for p in $DEB_PACKAGES; do
		if dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			skip "$p is installed on this machine already: not replaced and purged by a test"
		fi
	done
	for p in /usr/bin/slab /usr/bin/slab-pack /usr/lib/python3/dist-packages/slab; do
		[ ! -e "$p" ] || skip "$p is there already (a make install?): not overwritten by a test"
	done
	m=$(multiarch)
	version=$(sed -n 's/^#define SLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
		"$SLAB_ROOT/lib/slab.h" | paste -sd.)

	touch "$BATS_FILE_TMPDIR/installed"
	# shellcheck disable=SC2046
	run -0 dpkg -i $(for p in $DEB_PACKAGES; do deb_of "$p"; done)
	for p in $DEB_PACKAGES; do
		run -0 dpkg-query -W -f='${db:Status-Status}' "$p"
		assert_output installed
	done

	# each tool as installed, and through the front
	for t in $(tool_names); do
		run -0 "/usr/bin/slab-$t" --version
		assert_output "slab-$t (slab) $version"
		run -0 /usr/bin/slab "$t" --version
		assert_output --partial "(slab) $version"
	done
	run -0 /usr/bin/slab --version
	assert_output "slab (slab) $version"
	run -0 man -w slab-pack
	assert_output /usr/share/man/man1/slab-pack.1.gz

	# the system Python imports the package from dist-packages, and it loads the installed
	# library from the LIBDIR recorded at build time
	mkdir elsewhere && cd elsewhere
	run -0 env -u PYTHONPATH -u SLAB_LIBRARY -u LD_LIBRARY_PATH "$SYSPY" -c \
		'import slab; print(slab.__file__); print(slab.backend)'
	assert_output "/usr/lib/python3/dist-packages/slab/__init__.py
libslab $version (/usr/lib/$m/libslab.so.0)"
	cd ..

	# a C program builds against libslab-dev with pkg-config alone and runs on libslab0
	run -0 pkg-config --libs slab
	assert_output --regexp '(^| )-lslab( |$)'
	printf '#include <slab.h>\n#include <stdio.h>\nint main(void) { puts(slab_version_string()); return 0; }\n' > v.c
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror -o v v.c $(pkg-config --cflags --libs slab)
	run -0 env -u LD_LIBRARY_PATH ./v
	assert_output "$version"
	run -0 ldd ./v
	# (/lib is /usr/lib on a merged-/usr system)
	assert_output --regexp "libslab\.so\.0 => (/usr)?/lib/$m/libslab\.so\.0 "

	# shellcheck disable=SC2086
	run -0 dpkg --purge $DEB_PACKAGES
	for p in $DEB_PACKAGES; do
		# a purged package is one dpkg has forgotten or lists as not-installed
		run dpkg-query -W -f='${db:Status-Status}' "$p"
		[ "$status" = 1 ] || [ "$output" = not-installed ] || fail "$p after dpkg --purge: $output"
	done
	for p in /usr/bin/slab /usr/bin/slab-pack /usr/include/slab.h "/usr/lib/$m/libslab.so.0" \
		"/usr/lib/$m/pkgconfig/slab.pc" /usr/lib/python3/dist-packages/slab \
		/usr/share/man/man1/slab-pack.1.gz /usr/share/bash-completion/completions/slab-pack; do
		[ ! -e "$p" ] && [ ! -L "$p" ] || fail "left after dpkg --purge: $p"
	done
}
