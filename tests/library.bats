#!/usr/bin/env bats
# libslab as an installed library: make install into a DESTDIR, a C program built against it
# with pkg-config alone (the example of libslab(3)), the symbols the shared library exports,
# slab.h standing alone, make uninstall, and the build's own checks (dependencies, layers).

load test_helper/common

# install_tree: make install of the build under test into ./root (PREFIX=/usr), as a user's
# package build would. The make of the suite may have passed its flags down: not to this one.
install_tree() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr DESTDIR="$PWD/root" install > install.log 2>&1 ||
		fail "make install failed: $(cat install.log)"
}

# slab_pkg_config ARGS...: pkg-config finding slab.pc in the installed tree (and the libraries
# slab needs where the system keeps them).
slab_pkg_config() {
	PKG_CONFIG_PATH="$PWD/root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$PWD/root" \
		pkg-config "$@"
}

# Sanitizer builds make a libslab.so that needs the sanitizer runtime linked into the program.
sanitizer_flags() {
	if nm -D "$SLAB_BUILD/libslab.so" | grep -q ' U __asan_'; then
		echo "-fsanitize=address,undefined"
	fi
}

# man_example: the C program of libslab(3)'s EXAMPLE section, as plain C.
man_example() {
	sed -n '/^\.\\" example begin/,/^\.\\" example end/p' "$SLAB_ROOT/man/libslab.3" |
		sed -e '1d' -e '$d' | grep -v '^\.EX$\|^\.EE$' |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\(aq/'"'"'/g' -e 's/\\&//g'
}

@test "make install puts the tools, man pages, slab.h, the libraries and slab.pc in place; uninstall removes them" {
	install_tree
	for f in usr/bin/pack usr/bin/inspect usr/bin/shuffle-plan usr/bin/prefetch \
		usr/bin/bench-tlb usr/bin/numa-probe usr/include/slab.h usr/lib/libslab.a \
		usr/lib/libslab.so usr/lib/libslab.so.0 usr/lib/pkgconfig/slab.pc \
		usr/share/man/man1/pack.1 usr/share/man/man3/libslab.3 usr/share/man/man5/slab.5; do
		[ -e "root/$f" ] || fail "make install did not install $f"
	done
	version=$(sed -n 's/^#define SLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\)$/\2/p' \
		"$SLAB_ROOT/lib/slab.h" | paste -sd.)
	[ "$(readlink root/usr/lib/libslab.so)" = libslab.so.0 ]
	[ "$(readlink root/usr/lib/libslab.so.0)" = "libslab.so.$version" ]
	run -0 readelf -d "root/usr/lib/libslab.so.$version"
	assert_output --partial 'Library soname: [libslab.so.0]'
	run -0 slab_pkg_config --modversion slab
	assert_output "$version"
	flags=$(slab_pkg_config --cflags --libs slab)
	assert_equal "${flags% }" "-I$PWD/root/usr/include -L$PWD/root/usr/lib -lslab"
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr DESTDIR="$PWD/root" uninstall
	run -0 find root -type f -o -type l
	assert_output ""
}

@test "the example of libslab(3) builds with pkg-config alone against the installed tree and runs" {
	install_tree
	man_example > example.c
	[ -s example.c ] || fail "no example found in man/libslab.3"
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror $(sanitizer_flags) -o example example.c \
		$(slab_pkg_config --cflags --libs slab)
	mkwds --count 7 --width 16 --height 16 --seed 2 -o a.tar
	mkwds --count 5 --width 16 --height 16 --seed 3 --prefix other -o b.tar
	pack -q --page-size 4K -o a.slab a.tar
	pack -q --page-size 4K -o b.slab b.tar
	shuffle-plan -q --mode random --seed 9 -o p.plan a.slab b.slab
	key=$(inspect --list b.slab | awk 'NR == 4 { print $2 }')
	run -0 env LD_LIBRARY_PATH="$PWD/root/usr/lib" ./example "$key" p.plan a.slab b.slab
	# The key's place and fields (name:offset:size in inspect --list)...
	{
		echo "$key: file 1, sample 3"
		inspect --list b.slab | awk 'NR == 4 {
			for (i = 4; i <= NF; i++) { split($i, f, ":"); print "  " f[1] ": " f[3] " bytes" } }'
		# ...then the plan's samples in order, as shuffle-plan lists them.
		inspect --list a.slab | awk '{ print "0 " $1, $2 }' > keys
		inspect --list b.slab | awk '{ print "1 " $1, $2 }' >> keys
		shuffle-plan -q --mode random --seed 9 --format text a.slab b.slab |
			awk 'NR == FNR { key[$1 " " $2] = $3; next } { print key[$1 " " $2] }' keys -
	} > expected
	assert_output "$(cat expected)"
	# Errors come back as text naming the file, and a non-zero exit.
	akey=$(inspect --list a.slab | awk 'NR == 1 { print $2 }')
	run -1 env LD_LIBRARY_PATH="$PWD/root/usr/lib" ./example "$akey" p.plan a.slab
	assert_line "$akey: file 0, sample 0"
	assert_line "'p.plan': plan does not belong to these files: the plan is for 2 files, 1 given"
	run -1 env LD_LIBRARY_PATH="$PWD/root/usr/lib" ./example "$key" p.plan a.slab
	assert_output "$key: no such key"
	run -1 env LD_LIBRARY_PATH="$PWD/root/usr/lib" ./example "$key" p.plan a.slab missing.slab
	assert_output "'missing.slab': No such file or directory"
}

@test "libslab.so exports exactly the functions slab.h declares, all slab_" {
	so="$SLAB_BUILD/libslab.so"
	nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRW]$/ { sub(/@.*/, "", $3); print $3 }' |
		sort > exported
	sed -n 's/^SLAB_API .*[ *]\(slab_[a-z0-9_]*\)(.*/\1/p' "$SLAB_ROOT/lib/slab.h" | sort > declared
	run diff declared exported
	assert_success
	[ "$(wc -l < exported)" -ge 40 ] || fail "only $(wc -l < exported) exported symbols"
	run grep -v '^slab_' exported
	assert_output ""
}

@test "slab.h stands alone: a C program (and a C++ one) includes it and nothing else; versions agree" {
	cat > v.c <<'EOF'
#include "slab.h"
#include <stdio.h>
int main(void)
{
	struct slab *s = slab_new();
	int ok = slab_version() == SLAB_VERSION_NUMBER;
	printf("%s %s %d\n", SLAB_VERSION_STRING, slab_version_string(), ok);
	slab_close(s);
	return !ok;
}
EOF
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror -pedantic $(sanitizer_flags) -I"$SLAB_ROOT/lib" -o v v.c \
		-L"$SLAB_BUILD" -lslab
	run -0 env LD_LIBRARY_PATH="$SLAB_BUILD" ./v
	version=$(sed -n 's/^#define SLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\)$/\2/p' \
		"$SLAB_ROOT/lib/slab.h" | paste -sd.)
	assert_output "$version $version 1"
	if command -v c++ >/dev/null 2>&1; then
		cp v.c v.cc
		# shellcheck disable=SC2046
		c++ -Wall -Wextra -Werror $(sanitizer_flags) -I"$SLAB_ROOT/lib" -o vxx v.cc \
			-L"$SLAB_BUILD" -lslab
		run -0 env LD_LIBRARY_PATH="$SLAB_BUILD" ./vxx
		assert_output "$version $version 1"
	fi
}

@test "a build without the libraries' headers says in one line what is missing and what installs it" {
	run -1 env PKG_CONFIG=/nonexistent/pkg-config "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: pkg-config libarchive-dev libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libcurl4-openssl-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	mkdir pc
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libarchive-dev libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libcurl4-openssl-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	cp "$(pkg-config --variable=pcfiledir libarchive)/libarchive.pc" pc/
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libcurl4-openssl-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	cp "$(pkg-config --variable=pcfiledir libturbojpeg)/libturbojpeg.pc" pc/
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libjpeg62-turbo-dev libspng-dev libwebp-dev libcurl4-openssl-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	run -0 "$SLAB_ROOT/scripts/check-deps"
	assert_output ""
}

@test "the layer check refuses a library object that prints or exits, and a leaked symbol" {
	mkdir -p b/lib/dataset b/lib/machine b/lib/fe
	printf '#include <stdio.h>\nvoid slab_x(void);\nvoid slab_x(void) { puts("x"); }\n' > p.c
	printf '#include <stdlib.h>\nvoid slab_y(int);\nvoid slab_y(int c) { exit(c); }\n' > e.c
	printf 'int leaked(void);\nint leaked(void) { return 1; }\n' > l.c
	cc -c -o b/lib/dataset/p.o p.c
	cc -c -o b/lib/machine/e.o e.c
	cc -c -o b/lib/fe/p.o p.c
	cc -shared -fPIC -o b/libslab.so l.c
	run -1 "$SLAB_ROOT/scripts/check-layers" b
	assert_line "check-layers: lib/dataset/p.o calls puts: a library layer returns errors, it never prints or exits"
	assert_line "check-layers: lib/machine/e.o calls exit: a library layer returns errors, it never prints or exits"
	assert_line "check-layers: libslab.so exports symbols without the slab_ prefix: leaked"
	[ "${#lines[@]}" -eq 3 ]
	run -0 "$SLAB_ROOT/scripts/check-layers" "$SLAB_BUILD"
}
