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

# want_flags PC INCDIR LIBDIR: what pkg-config --define-variable=prefix=$PWD/root/usr --cflags
# --libs slab should say for the slab.pc PC: slab's include folder, then the include folders
# the libraries of its Requires.private give of their own (Debian's libcurl.pc gives its
# multiarch folder), then slab's -L and -l.
want_flags() {
	local f out="-I$2"
	# shellcheck disable=SC2046
	for f in $(pkg-config --define-variable=prefix="$PWD/root/usr" --cflags-only-I \
		$(sed -n 's/^Requires.private: //p' "$1")); do
		[[ " $out " == *" $f "* ]] || out="$out $f"
	done
	echo "$out -L$3 -lslab"
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

# The tools as installed, and the man1 page's name each is in.
INSTALLED_TOOLS="pack inspect shuffle-plan prefetch bench-tlb numa-probe"

# slab_version: the library's version from slab.h.
slab_version() {
	sed -n 's/^#define SLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\)$/\2/p' \
		"$SLAB_ROOT/lib/slab.h" | paste -sd.
}

# installed_page DIR NAME: the man1 page NAME as installed in DIR (plain or gzipped), as roff.
installed_page() {
	if [ -f "$1/$2.1.gz" ]; then
		gzip -dc "$1/$2.1.gz"
	elif [ -f "$1/$2.1" ]; then
		cat "$1/$2.1"
	else
		fail "no man page $2.1 in $1"
	fi
}

@test "make install puts the tools (as slab-TOOL), the front, slab-capture-sysfs, man pages, slab.h, the libraries and slab.pc in place; uninstall removes them" {
	install_tree
	for f in usr/include/slab.h usr/lib/libslab.a usr/lib/libslab.so usr/lib/libslab.so.0 \
		usr/lib/pkgconfig/slab.pc usr/share/man/man3/libslab.3 usr/share/man/man5/slab.5; do
		[ -e "root/$f" ] || fail "make install did not install $f"
	done
	# The tools as slab-TOOL beside the front, and no short name left.
	want=$(for t in $INSTALLED_TOOLS; do echo "slab-$t"; done; echo slab; echo slab-capture-sysfs)
	run -0 ls root/usr/bin
	assert_output "$(sort <<<"$want")"
	for f in root/usr/bin/*; do
		[ -x "$f" ] || fail "$f is not executable"
	done
	# Their pages as slab-TOOL.1 (and the front's as slab.1), saying so in .TH and NAME.
	run -0 bash -c 'ls root/usr/share/man/man1 | sed "s/\.gz$//"'
	assert_output "$(sed 's/$/.1/' <<<"$want" | sort)"
	for t in $INSTALLED_TOOLS; do
		# Compared without roff's backslashes: the pages write a hyphen as - or \-.
		page=$(installed_page root/usr/share/man/man1 "slab-$t" | tr -d '\\')
		th=$(grep '^\.TH ' <<<"$page")
		[[ $th == ".TH SLAB-${t^^} 1 "* ]] || fail "slab-$t.1: .TH is '$th'"
		name=$(sed -n '/^\.SH NAME/{n;p;}' <<<"$page")
		[[ $name == "slab-$t - "* ]] || fail "slab-$t.1: NAME is '$name'"
		# The synopsis names the installed command.
		syn=$(sed -n '/^\.SH SYNOPSIS/{n;p;}' <<<"$page")
		[ "$syn" = ".B slab-$t" ] || fail "slab-$t.1: SYNOPSIS starts '$syn'"
		# The source page keeps the short name.
		name=$(sed -n '/^\.SH NAME/{n;p;}' "$SLAB_ROOT/man/$t.1" | tr -d '\\')
		[[ $name == "$t - "* ]] || fail "man/$t.1: NAME is '$name'"
	done
	# Pages name the tools' pages as installed: pack(1) is slab-pack(1).
	run grep -l '^\.BR pack (1)' -r root/usr/share/man
	assert_output ""
	# Their messages (DIAGNOSTICS) and examples' commands are the installed tools'.
	page=$(installed_page root/usr/share/man/man1 slab-pack)
	grep -qF '.B "slab\-pack: \(aqa.tar\(aq: output is also an input"' <<<"$page"
	grep -qxF 'slab\-pack \-o shard\-000000.slab shard\-000000.tar' <<<"$page"
	grep -qxF 'slab\-inspect \-q \-\-verify shard\-000000.slab' <<<"$page"
	grep -qF 'zstd \-dc x.tar.zst | slab\-pack \-o x.slab' <<<"$page"
	for t in $INSTALLED_TOOLS; do
		body=$(installed_page root/usr/share/man/man1 "slab-$t" | awk '/^\.EX/,/^\.EE/')
		run grep -E "(^|\| )(pack|inspect|shuffle\\?-plan|prefetch|bench\\?-tlb|numa\\?-probe)( |:|$)" <<<"$body"
		assert_output ""
		run grep -E '^\.BR? "(pack|inspect|shuffle\\?-plan|prefetch|bench\\?-tlb|numa\\?-probe)[: ]' <<<"$(installed_page root/usr/share/man/man1 "slab-$t")"
		assert_output ""
	done
	grep -q '^\.BR slab\\-pack (1)' root/usr/share/man/man5/slab.5
	version=$(slab_version)
	[ "$(readlink root/usr/lib/libslab.so)" = libslab.so.0 ]
	[ "$(readlink root/usr/lib/libslab.so.0)" = "libslab.so.$version" ]
	run -0 readelf -d "root/usr/lib/libslab.so.$version"
	assert_output --partial 'Library soname: [libslab.so.0]'
	run -0 slab_pkg_config --modversion slab
	assert_output "$version"
	# slab.pc gives its folders from ${prefix}: moved with it, they name the staged tree.
	run -0 grep -x -e 'libdir=${prefix}/lib' -e 'includedir=${prefix}/include' \
		root/usr/lib/pkgconfig/slab.pc
	[ "${#lines[@]}" -eq 2 ]
	flags=$(PKG_CONFIG_PATH="$PWD/root/usr/lib/pkgconfig" pkg-config \
		--define-variable=prefix="$PWD/root/usr" --cflags --libs slab)
	assert_equal "${flags% }" "$(want_flags root/usr/lib/pkgconfig/slab.pc "$PWD/root/usr/include" \
		"$PWD/root/usr/lib")"
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr DESTDIR="$PWD/root" uninstall
	run -0 find root -type f -o -type l
	assert_output ""
}

@test "installed man pages' examples run the installed tools wherever a command starts: loops, \$ , &&, \$(, VAR=, parallel, cron" {
	install_tree
	# Every example (.EX to .EE) of every installed page, without roff's backslashes.
	for p in root/usr/share/man/man*/*; do
		case $p in */man1/slab.1*) continue ;; esac
		case $p in *.gz) gzip -dc "$p" ;; *) cat "$p" ;; esac | awk '/^\.EX/,/^\.EE/'
	done | tr -d '\\' > examples
	grep -qxF '    slab-shuffle-plan --seed 7 --epoch "$epoch" --rank "$RANK" --world-size 8 e' examples
	grep -qxF '    slab-prefetch --plan "/tmp/plan.$RANK" --emit /data/train/*.slab | train_step' examples
	grep -qxF 'mkdir -p out && slab-inspect --tar train.slab | tar x -C out' examples
	grep -qxF '17 3 * * *  slab-inspect -q --verify /data/train/*.slab' examples
	grep -qxF 'AWS_PROFILE=minio slab-inspect --s3-endpoint http://127.0.0.1:9000 s3://bkt/a.slab' examples
	grep -qxF '$(slab-numa-probe --json | jq -r (aq.advice[] |' examples
	grep -qxF 'parallel -j4 slab-pack -q -o slabs/{/.}.slab {} ::: shards/*.tar' examples
	grep -qxF 'n=$(slab-shuffle-plan -q --mode sequential --format text /data/train/*.slab | wc -l)' examples
	grep -qxF '$ slab-pack -q --page-size 4K -o tiny.slab tiny.tar' examples
	# No short name is left where a command or a message starts...
	run grep -nE "(^|[ (|;&']|\(aq)(pack|inspect|shuffle-plan|prefetch|bench-tlb|numa-probe)(:| [^ ]|$)" examples
	assert_output ""
	# ... and what the tools write stays as they write it.
	grep -qF '"options": { "tool": "pack 0.1.0"' examples
	grep -qF '"tool": "bench-tlb", "version"' examples
}

@test "an installed tool names itself as installed: Usage: slab-pack, Try 'slab-pack --help', slab-pack (slab)" {
	install_tree
	run -0 root/usr/bin/slab-pack --help
	assert_line --index 0 "Usage: slab-pack [OPTIONS] -o OUTPUT [INPUT...]"
	# Every usage line of a tool with several.
	run -0 root/usr/bin/slab-inspect --help
	assert_line --index 0 "Usage: slab-inspect [OPTIONS] FILE..."
	assert_line --index 1 "       slab-inspect --list [--json] FILE"
	assert_line --index 2 "       slab-inspect --get KEY|#INDEX [--field NAME] FILE"
	run -0 root/usr/bin/slab-numa-probe --help
	assert_line --index 1 --regexp '^       slab-numa-probe --measure '
	run -2 --separate-stderr root/usr/bin/slab-pack --bogus
	assert_equal "$stderr" "slab-pack: unrecognized option '--bogus'
Try 'slab-pack --help' for more information."
	run -0 root/usr/bin/slab-shuffle-plan --version
	assert_output "slab-shuffle-plan (slab) $(slab_version)"
	run -0 root/usr/bin/slab-capture-sysfs --help
	assert_line --index 0 "Usage: slab-capture-sysfs DEST [ROOT]"
	# Its help names the pages as installed: slab-pack(1), every tool's, and each one there is
	local t
	for t in pack inspect shuffle-plan prefetch bench-tlb numa-probe; do
		run -0 root/usr/bin/slab-$t --help
		assert_output --partial "slab-$t(1)"
		refute_output --regexp '(^|[^a-z-])(pack|inspect|shuffle-plan|prefetch|bench-tlb|numa-probe)\(1\)'
		for page in $(grep -o 'slab-[a-z-]*([0-9])' <<< "$output" | sort -u); do
			name=${page%(*} sec=${page#*(}
			sec=${sec%)}
			[ -f "root/usr/share/man/man$sec/$name.$sec" ] ||
				[ -f "root/usr/share/man/man$sec/$name.$sec.gz" ] ||
				fail "slab-$t --help names $page, not installed"
		done
	done
	# The build tree's keep their short names (tests/man.bats compares those with the pages).
	run -0 "$SLAB_BUILD/bin/pack" --help
	assert_line --index 0 "Usage: pack [OPTIONS] -o OUTPUT [INPUT...]"
	assert_output --partial "See pack(1) and slab(5)."
}

@test "the installed front runs the tools installed beside it, whatever PATH says, as slab-TOOL" {
	install_tree
	version=$(slab_version)
	# A slab-pack earlier on PATH is not the one beside the front.
	mkdir decoy
	printf '#!/bin/sh\necho decoy\n' > decoy/slab-pack
	chmod +x decoy/slab-pack
	front() {
		env PATH="$PWD/decoy:/usr/bin:/bin" root/usr/bin/slab "$@"
	}
	run -0 front pack --version
	assert_output "slab-pack (slab) $version"
	for t in $INSTALLED_TOOLS; do
		run -0 front "$t" --version
		assert_output "slab-$t (slab) $version"
	done
	# Arguments, output and exit status pass through.
	mkwds --count 3 --width 16 --height 16 --seed 2 -o a.tar
	run -0 front pack -q --page-size 4K -o a.slab a.tar
	pack -q --page-size 4K -o b.slab a.tar
	cmp a.slab b.slab
	run -0 front inspect --list a.slab
	assert_output "$(inspect --list a.slab)"
	run -1 --separate-stderr front inspect missing.slab
	assert_equal "$stderr" "slab-inspect: 'missing.slab': No such file or directory"
	# help: the six tools, one line each; help TOOL is the tool's --help.
	run -0 front help
	assert_line --index 0 "Usage: slab TOOL [ARGS...]"
	for t in $INSTALLED_TOOLS; do
		assert_line --regexp "^  $t +[a-zA-Z]"
	done
	[ "$(grep -cE '^  [a-z-]+ {2,}[a-zA-Z]' <<<"$output")" -eq 6 ] ||
		fail "slab help lists other than six tools: $output"
	assert_line --partial "'slab help TOOL'"
	help=$output
	run -0 front --help
	assert_output "$help"
	run -0 front help prefetch
	assert_output "$(root/usr/bin/slab-prefetch --help)"
	assert_line --index 0 --partial "Usage: slab-prefetch "
	run -0 front --version
	assert_output "slab (slab) $version"
	# Mistakes: an unknown tool, no tool, an unknown option.
	run -2 --separate-stderr front frob
	assert_output ""
	assert_equal "$stderr" "slab: 'frob' is not a slab tool; see 'slab help'"
	run -2 --separate-stderr front help frob
	assert_equal "$stderr" "slab: 'frob' is not a slab tool; see 'slab help'"
	run -2 --separate-stderr front
	assert_output ""
	assert_equal "${stderr_lines[0]}" "Usage: slab TOOL [ARGS...]"
	assert_equal "${stderr_lines[-1]}" "Try 'slab --help' for more information."
	run -2 --separate-stderr front --bogus pack
	assert_equal "$stderr" "slab: unrecognized option '--bogus'
Try 'slab --help' for more information."
	# Options after the tool are the tool's.
	run -2 --separate-stderr front pack --bogus
	assert_equal "${stderr_lines[0]}" "slab-pack: unrecognized option '--bogus'"
}

@test "a front with no tools beside it runs them from PATH, or says they are not installed" {
	install_tree
	mkdir alone
	cp root/usr/bin/slab alone/
	run -0 env PATH="$PWD/root/usr/bin:/usr/bin:/bin" alone/slab pack --version
	assert_output "slab-pack (slab) $(slab_version)"
	# A PATH with no slab on it: not the system's, where tests/deb.bats, running beside
	# this file, may have installed slab-pack for a moment.
	mkdir nothing
	run -127 --separate-stderr env PATH="$PWD/nothing" alone/slab pack --version
	assert_output ""
	assert_equal "$stderr" "slab: 'slab-pack' is not installed (neither beside '$(pwd -P)/alone' nor on PATH)"
	# A tool beside it that cannot run is that tool's failure (126, as a shell says), never
	# "not installed", nor another slab-pack from PATH.
	cp root/usr/bin/slab-pack alone/
	chmod -x alone/slab-pack
	run -126 --separate-stderr env PATH="$PWD/root/usr/bin:/usr/bin:/bin" alone/slab pack --version
	assert_output ""
	assert_equal "$stderr" "slab: '$(pwd -P)/alone/slab-pack': Permission denied"
	rm alone/slab-pack
	mkdir alone/slab-pack
	run -126 --separate-stderr env PATH="$PWD/nothing" alone/slab pack --version
	assert_equal "$stderr" "slab: '$(pwd -P)/alone/slab-pack': Is a directory"
	rmdir alone/slab-pack
	# So is one found on PATH: a script whose interpreter is missing (ENOENT, as for no
	# file at all) was found, and is named by its path; one that is not executable is
	# passed over for an executable one further on PATH, as execvp does.
	mkdir broken
	printf '#!/nonexistent/sh\n' > broken/slab-pack
	chmod +x broken/slab-pack
	run -126 --separate-stderr env PATH="$PWD/nothing:$PWD/broken" alone/slab pack --version
	assert_output ""
	assert_equal "$stderr" "slab: '$PWD/broken/slab-pack': No such file or directory"
	chmod -x broken/slab-pack
	run -126 --separate-stderr env PATH="$PWD/broken:$PWD/nothing" alone/slab pack --version
	assert_equal "$stderr" "slab: '$PWD/broken/slab-pack': Permission denied"
	run -0 env PATH="$PWD/broken:$PWD/root/usr/bin:/usr/bin:/bin" alone/slab pack --version
	assert_output "slab-pack (slab) $(slab_version)"
}

@test "in the build tree the front runs the short-named tools beside it; elsewhere it never runs a short name" {
	# PATH names a folder with nothing in it (not the system's: see the test above).
	mkdir nothing
	run -0 env PATH="$PWD/nothing" "$SLAB_BUILD/bin/slab" inspect --version
	assert_output "inspect (slab) $(slab_version)"
	# A folder of programs that is not a build tree: its pack is somebody else's.
	mkdir -p t/bin
	cp "$SLAB_BUILD/bin/slab" t/bin/
	printf '#!/bin/sh\necho "not slab: $0 $*"\n' > t/bin/pack
	chmod +x t/bin/pack
	run -127 env PATH="$PWD/nothing" t/bin/slab pack -x
	refute_output --partial "not slab"
	# With the build's libslab-tools.a beside bin/ it is one, and pack there is slab's.
	touch t/libslab-tools.a
	run -0 env PATH="$PWD/nothing" t/bin/slab pack -x
	assert_output "not slab: $(pwd -P)/t/bin/pack -x"
}

@test "make install honours LIBDIR (multiarch) and INCLUDEDIR; slab.pc gives them from \${prefix}, or as they are outside it" {
	multi=/usr/lib/x86_64-linux-gnu
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr LIBDIR="$multi" DESTDIR="$PWD/root" install > install.log 2>&1 ||
		fail "make install failed: $(cat install.log)"
	for f in libslab.so libslab.so.0 libslab.a pkgconfig/slab.pc; do
		[ -e "root$multi/$f" ] || fail "make install did not install $multi/$f"
	done
	run -0 find root/usr/lib -maxdepth 1 ! -type d
	assert_output ""
	run -0 sed -n 's/^\(prefix\|libdir\|includedir\)=//p' "root$multi/pkgconfig/slab.pc"
	assert_output "/usr
\${prefix}/lib/x86_64-linux-gnu
\${prefix}/include"
	flags=$(PKG_CONFIG_PATH="$PWD/root$multi/pkgconfig" pkg-config \
		--define-variable=prefix="$PWD/root/usr" --cflags --libs slab)
	assert_equal "${flags% }" "$(want_flags "root$multi/pkgconfig/slab.pc" "$PWD/root/usr/include" \
		"$PWD/root$multi")"
	# A program builds and runs against the staged tree with those flags alone.
	printf '#include <slab.h>\n#include <stdio.h>\nint main(void) { puts(slab_version_string()); return 0; }\n' > v.c
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror $(sanitizer_flags) -o v v.c $flags
	run -0 env LD_LIBRARY_PATH="$PWD/root$multi" ./v
	assert_output "$(slab_version)"
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr LIBDIR="$multi" DESTDIR="$PWD/root" uninstall
	run -0 find root -type f -o -type l
	assert_output ""
	# Folders outside PREFIX are written as they are.
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/usr LIBDIR=/opt/slab/lib INCLUDEDIR=/usr/include/slab DESTDIR="$PWD/root2" \
		install > install.log 2>&1 || fail "make install failed: $(cat install.log)"
	[ -f root2/usr/include/slab/slab.h ]
	run -0 sed -n 's/^\(libdir\|includedir\)=//p' root2/opt/slab/lib/pkgconfig/slab.pc
	assert_output "/opt/slab/lib
\${prefix}/include/slab"
}

# Installed into the system (/usr/local/lib is searched through ld.so's cache only), a program
# linked with -lslab finds libslab.so.0 at once: install and uninstall run ldconfig, but not
# into a DESTDIR. LDCONFIG, a stub here, records its runs.
@test "make install and uninstall run ldconfig when installing into the system, never into a DESTDIR" {
	printf '#!/bin/sh\necho "ldconfig $*" >> "%s/ldconfig.log"\n' "$PWD" > ldc
	chmod +x ldc
	slab_install() {
		env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
			LDCONFIG="$PWD/ldc" PYTHON_SITE="$PWD/site" "$@" > install.log 2>&1 ||
			fail "make $* failed: $(cat install.log)"
	}
	slab_install PREFIX=/usr DESTDIR="$PWD/root" install
	slab_install PREFIX=/usr DESTDIR="$PWD/root" uninstall
	[ ! -e ldconfig.log ] || fail "ran into a DESTDIR: $(cat ldconfig.log)"
	slab_install PREFIX="$PWD/prefix" install
	[ -e prefix/lib/libslab.so.0 ]
	run -0 cat ldconfig.log
	assert_output "ldconfig "
	slab_install PREFIX="$PWD/prefix" uninstall
	[ ! -e prefix/lib/libslab.so.0 ]
	run -0 cat ldconfig.log
	assert_output "ldconfig 
ldconfig "
	# LDCONFIG= runs none; a failing one (not root) does not fail the install.
	slab_install PREFIX="$PWD/prefix" LDCONFIG= install
	slab_install PREFIX="$PWD/prefix" LDCONFIG=false uninstall
	[ "$(wc -l < ldconfig.log)" = 2 ]
}

# make splits words at spaces: PREFIX="$PWD/sp ace" would be "$PWD/sp" and "ace", and install
# would write under ace/ in the clone and uninstall remove a file "$PWD/sp".
@test "make install and uninstall refuse a place with a space, having written and removed nothing" {
	echo keep > sp
	find "$SLAB_ROOT" "$PWD" -path "$SLAB_ROOT/build" -prune -o -print | sort > "$BATS_TEST_TMPDIR/before"
	for target in install uninstall; do
		for place in PREFIX DESTDIR LIBDIR BINDIR MANDIR INCLUDEDIR BASHCOMPDIR PYTHON_SITE; do
			run -2 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" \
				BUILD="$SLAB_BUILD" PREFIX=/usr DESTDIR="$PWD/root" "$place=$PWD/sp ace" "$target"
			assert_line --regexp "^[A-Za-z/.]+:[0-9]+: \*\*\* [a-z-]+: $place='$PWD/sp ace[a-z/-]*' has a space \(make cannot install there\): give a place without one\.  Stop\.\$"
		done
		# PREFIX is named first: the others derive from it.
		run -2 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" \
			BUILD="$SLAB_BUILD" PREFIX="$PWD/sp ace" "$target"
		assert_output --partial ": PREFIX='$PWD/sp ace' has a space"
	done
	[ "$(cat sp)" = keep ]
	run diff "$BATS_TEST_TMPDIR/before" <(find "$SLAB_ROOT" "$PWD" -path "$SLAB_ROOT/build" -prune -o -print | sort)
	assert_output ""
}

@test "make install and uninstall refuse a place with a character the shell or sed reads as its own, having written and removed nothing" {
	echo keep > 'a&b'
	find "$SLAB_ROOT" "$PWD" -path "$SLAB_ROOT/build" -prune -o -print | sort > "$BATS_TEST_TMPDIR/before"
	for target in install uninstall; do
		# '&' would run install -d in the background on $PWD/a and the rest as a command;
		# a quote leaves the shell's quoting open, and slab/_paths.py not Python.
		for place in PREFIX DESTDIR LIBDIR PYTHON_SITE; do
			run -2 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" \
				BUILD="$SLAB_BUILD" PREFIX=/usr DESTDIR="$PWD/root" "$place=$PWD/a&b" "$target"
			assert_line --regexp "^[A-Za-z/.]+:[0-9]+: \*\*\* [a-z-]+: $place='$PWD/a&b[a-z/-]*' has the character & \(make cannot install there\): give a place without one\.  Stop\.\$"
		done
		for c in "'" '"' '\' ';' '|' '(' '#' '%' '*'; do
			run -2 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" \
				BUILD="$SLAB_BUILD" PREFIX="$PWD/x${c}y" DESTDIR="$PWD/root" "$target"
			assert_output --partial ": PREFIX='$PWD/x${c}y' has the character $c (make cannot install there)"
		done
	done
	[ "$(cat 'a&b')" = keep ]
	run diff "$BATS_TEST_TMPDIR/before" <(find "$SLAB_ROOT" "$PWD" -path "$SLAB_ROOT/build" -prune -o -print | sort)
	assert_output ""
	# What the shell takes as it is still installs: slab.pc and the package say the place.
	run -0 env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SLAB_ROOT" BUILD="$SLAB_BUILD" \
		PREFIX=/opt/slab-1.0_x+y,z:@~ DESTDIR="$PWD/root" install
	grep -qx 'prefix=/opt/slab-1.0_x+y,z:@~' root/opt/slab-1.0_x+y,z:@~/lib/pkgconfig/slab.pc
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

@test "pkg-config --static --libs slab names every library libslab.a needs, with those libraries' own" {
	install_tree
	run -0 slab_pkg_config --static --libs slab
	have=" $output "
	[[ $have == *" -lslab "* ]] || fail "no -lslab: $output"
	# libslab's libraries as the build links them, each with what its own .pc says a static
	# link needs (libcurl's TLS and HTTP/2 libraries...)
	for m in libarchive libturbojpeg libjpeg spng libdeflate libwebp libcurl nettle zlib; do
		for l in $(pkg-config --static --libs-only-l "$m"); do
			[[ $have == *" $l "* ]] || fail "$l (of $m) missing from: $output"
		done
	done
	for l in -lm -pthread; do
		[[ $have == *" $l "* ]] || fail "$l missing from: $output"
	done
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

@test "libslab(3) names every function slab.h declares, and no function slab.h lacks" {
	not_twice
	sed -n 's/^SLAB_API .*[ *]\(slab_[a-z0-9_]*\)(.*/\1/p' "$SLAB_ROOT/lib/slab.h" | sort -u > declared
	[ "$(wc -l < declared)" -ge 40 ] || fail "only $(wc -l < declared) functions in slab.h"
	# As the page writes a call: .BR name (), or name() in the example.
	sed -n 's/.*\<\(slab_[a-z0-9_]*\) *\\\?(.*/\1/p; s/^\.BR* \(slab_[a-z0-9_]*\) ().*/\1/p' \
		"$SLAB_ROOT/man/libslab.3" | sort -u > named
	run comm -23 declared named
	assert_output ""
	run comm -13 declared named
	assert_output ""
}

# Another libslab in the process's global scope (LD_PRELOAD here; a system copy beside a
# wheel's, loaded RTLD_GLOBAL) does not take over the library's calls to its own functions:
# the Loader's walk calls slab_page_size() inside libslab.so.
@test "libslab.so calls its own functions, whatever else the process has loaded" {
	[ -z "$(sanitizer_flags)" ] || skip "a sanitizer build: its runtime must come first"
	need_libslab
	cat > other.c <<'C'
#include <stdlib.h>
#include <unistd.h>
unsigned long slab_page_size(const void *s)
{
	(void)s;
	write(2, "the other slab_page_size\n", 25);
	abort();
}
C
	cc -shared -fPIC -o other.so other.c
	mkwds --count 20 -o a.tar
	pack -q --page-size 64K -o a.slab a.tar
	shuffle-plan -q --mode random -o r.plan a.slab
	run -0 --separate-stderr env LD_PRELOAD="$PWD/other.so" PYTHONPATH="$SLAB_ROOT/scripts" \
		SLAB_LIBRARY="$LIBSLAB" python3 -c '
import slab
with slab.Loader(["a.slab"], plan="r.plan", fields=["cls"], batch_size=5) as ld:
    print(sum(len(b) for b in ld))'
	assert_output 20
	assert_equal "$stderr" ""
	readelf -rW "$SLAB_BUILD/libslab.so" | grep -E 'JUMP_SLOT|GLOB_DAT' | grep ' slab_' > self.rel || true
	assert_equal "$(cat self.rel)" ""
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
	assert_output "slab: cannot build: missing Debian packages: pkg-config libarchive-dev libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libdeflate-dev libwebp-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libcurl4-openssl-dev nettle-dev zlib1g-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	mkdir pc
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libarchive-dev libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libdeflate-dev libwebp-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libcurl4-openssl-dev nettle-dev zlib1g-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	cp "$(pkg-config --variable=pcfiledir libarchive)/libarchive.pc" pc/
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libdeflate-dev libwebp-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libcurl4-openssl-dev nettle-dev zlib1g-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	cp "$(pkg-config --variable=pcfiledir libturbojpeg)/libturbojpeg.pc" pc/
	run -1 env PKG_CONFIG_LIBDIR="$PWD/pc" "$SLAB_ROOT/scripts/check-deps"
	assert_output "slab: cannot build: missing Debian packages: libjpeg62-turbo-dev libspng-dev libdeflate-dev libwebp-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libcurl4-openssl-dev nettle-dev zlib1g-dev; scripts/install-deps installs them (as root), and so do make demo and make check"
	run -0 "$SLAB_ROOT/scripts/check-deps"
	assert_output ""
}

# fake_dpkg: commands in ./fake that stand for dpkg-query (every package installed, make held
# with apt-mark hold, gcc known for two architectures, $FAKE_MISSING not installed), apt-get
# and sudo (which write what they were asked to fake/calls and fail), and id (root).
fake_dpkg() {
	mkdir -p fake
	cat > fake/dpkg-query <<'SH'
#!/bin/sh
fmt=${2#-f=} p=$3
if [ "$p" = "${FAKE_MISSING-}" ]; then
	echo "dpkg-query: no packages found matching $p" >&2
	exit 1
fi
want=install
[ "$p" != make ] || want=hold
case $fmt in
*db:Status-Status*) s=installed ;;
*) s="$want ok installed" ;;
esac
n=1
[ "$p" != gcc ] || n=2
for i in $(seq $n); do
	case $fmt in *'\n') printf '%s\n' "$s" ;; *) printf '%s' "$s" ;; esac
done
SH
	printf '#!/bin/sh\necho "$(basename "$0") $*" >> "${0%%/*}/calls"\nexit 1\n' > fake/apt-get
	cp fake/apt-get fake/sudo
	printf '#!/bin/sh\necho 0\n' > fake/id
	chmod +x fake/*
}

@test "install-deps does nothing where every package is installed, held ones and those of two architectures too" {
	fake_dpkg
	run -0 --separate-stderr env PATH="$PWD/fake:$PATH" "$SLAB_ROOT/scripts/install-deps"
	assert_output ""
	assert_equal "$stderr" ""
	[ ! -e fake/calls ] || fail "install-deps ran: $(cat fake/calls)"
	# One not installed: it is named, and apt-get asked for it.
	run -1 --separate-stderr env PATH="$PWD/fake:$PATH" FAKE_MISSING=curl \
		"$SLAB_ROOT/scripts/install-deps"
	assert_equal "$stderr" "install-deps: installing: curl"
	run -0 cat fake/calls
	assert_output "apt-get update -qq"
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
