#!/usr/bin/env bats
# man pages: they render without warnings, each tool's SYNOPSIS is its --help "Usage:" text,
# OPTIONS documents every long option --help lists, and slab(5) names every magic number.

load test_helper/common

bats_require_minimum_version 1.5.0

MAN_DIR="$SLAB_ROOT/man"

need_man() {
	command -v man >/dev/null 2>&1 || skip "man (man-db) is not installed"
}

# render PAGE: the page as plain text, 200 columns wide so nothing wraps, in the C locale
# so \- is a plain '-', without overstrike; U+2010/U+2212 mapped to '-' in case a groff
# renders hyphens and minus signs as such.
render() {
	MANWIDTH=200 LC_ALL=C MAN_KEEP_FORMATTING= man -l "$1" 2>/dev/null |
		sed -e 's/.\x08//g' -e 's/\xe2\x80\x90/-/g' -e 's/\xe2\x88\x92/-/g'
}

# section NAME: the lines of one top-level section of a rendered page on stdin, without
# its heading; a section runs up to the next line that starts in column 1.
section() {
	awk -v name="$1" '
		/^[^ \t]/ { inside = ($0 == name); next }
		inside { print }
	'
}

# squeeze: one line per non-empty line, leading and trailing blanks dropped, runs of
# blanks made one space.
squeeze() {
	sed -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' | grep -v '^$'
}

# usage_lines TOOL: the "Usage:" line of TOOL --help and its indented continuation lines,
# without "Usage:".
usage_lines() {
	"$1" --help | awk '
		/^Usage: / { sub(/^Usage: /, ""); print; more = 1; next }
		more && /^[ \t]/ { print; next }
		{ more = 0 }
	' | squeeze
}

# groff warnings that always mean a mistake in the page, beyond --warnings' default (mac):
# unknown escapes and special characters, unbalanced delimiters, bad numbers.
STRICT_WARNINGS=mac,escape,char,font,input,missing,delim,right-brace,number,range

# no_warnings PAGE: man --warnings (and the stricter set) prints nothing on stderr, in the
# C and UTF-8 locales.
no_warnings() {
	local page=$1 loc w
	[ -f "$page" ] || fail "no man page $page"
	for loc in C C.UTF-8; do
		for w in --warnings "--warnings=$STRICT_WARNINGS"; do
			run --separate-stderr env LC_ALL="$loc" MANWIDTH=80 man "$w" -l "$page"
			assert_success
			[ -n "$output" ] || fail "$page renders as nothing (LC_ALL=$loc)"
			[ -z "$stderr" ] ||
				fail "$(printf '%s: man %s (LC_ALL=%s):\n%s' "$page" "$w" "$loc" "$stderr")"
		done
	done
}

# synopsis_matches TOOL: the SYNOPSIS of man/TOOL.1 is TOOL --help's usage text.
synopsis_matches() {
	local tool=$1 want got
	want=$(usage_lines "$tool")
	[ -n "$want" ] || fail "$tool --help has no Usage: line"
	got=$(render "$MAN_DIR/$tool.1" | section SYNOPSIS | squeeze)
	[ -n "$got" ] || fail "man/$tool.1 has no SYNOPSIS"
	if [ "$got" != "$want" ]; then
		fail "$(printf 'SYNOPSIS of man/%s.1 differs from %s --help\n-- man:\n%s\n-- help:\n%s' \
			"$tool" "$tool" "$got" "$want")"
	fi
}

# options_documented TOOL: each long option TOOL --help lists is an entry (a tag line) of
# the OPTIONS section of man/TOOL.1.
options_documented() {
	local tool=$1 opts tags opt missing=""
	opts=$("$tool" --help | grep -o -e '--[a-z][a-z0-9-]*' | sort -u)
	[ -n "$opts" ] || fail "$tool --help lists no long option"
	# Entry tags start at the section's indent (7 columns), their text deeper; a short tag
	# shares its line with the text, so keep only its leading options and METAVARIABLES.
	tags=$(render "$MAN_DIR/$tool.1" | section OPTIONS | grep -E '^ {7}-' | awk '{
		tag = ""
		for (i = 1; i <= NF; i++) {
			t = $i
			sub(/,$/, "", t)
			if (t !~ /^-/ && t !~ /^[A-Z][A-Z0-9_|#=.]*$/)
				break
			tag = tag " " t
		}
		print tag
	}')
	[ -n "$tags" ] || fail "man/$tool.1 has no OPTIONS entries"
	for opt in $opts; do
		grep -qE -e "(^|[ ,])$opt([^a-z0-9-]|\$)" <<<"$tags" || missing="$missing $opt"
	done
	[ -z "$missing" ] || fail "man/$tool.1 OPTIONS lacks:$missing"
}

@test "man/slab.5 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/slab.5"
}

@test "man/pack.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/pack.1"
}

@test "man/inspect.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/inspect.1"
}

@test "man/prefetch.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/prefetch.1"
}

@test "every page in man/ renders without warnings and has NAME, DESCRIPTION and SEE ALSO" {
	not_twice
	need_man
	local page n=0 text
	for page in "$MAN_DIR"/*.[1-8]; do
		[ -e "$page" ] || continue
		no_warnings "$page"
		text=$(render "$page")
		for s in NAME DESCRIPTION 'SEE ALSO'; do
			grep -qx "$s" <<<"$text" || fail "$page has no $s section"
		done
		n=$((n + 1))
	done
	[ "$n" -ge 3 ] || fail "only $n man pages found in $MAN_DIR"
}

@test "pack(1) SYNOPSIS is the Usage: text of pack --help" {
	need_man
	synopsis_matches pack
}

@test "inspect(1) SYNOPSIS is the Usage: text of inspect --help" {
	need_man
	synopsis_matches inspect
}

@test "prefetch(1) SYNOPSIS is the Usage: text of prefetch --help" {
	need_man
	synopsis_matches prefetch
}

@test "pack(1) OPTIONS has an entry for every long option of pack --help" {
	need_man
	options_documented pack
}

@test "inspect(1) OPTIONS has an entry for every long option of inspect --help" {
	need_man
	options_documented inspect
}

@test "prefetch(1) OPTIONS has an entry for every long option of prefetch --help" {
	need_man
	options_documented prefetch
}

@test "slab(5) names every magic number of lib/dataset/format.h" {
	need_man
	local text magics magic hex n=0
	text=$(render "$MAN_DIR/slab.5")
	magics=$(sed -n 's/^#define[[:space:]]\+[A-Z_]*MAGIC[[:space:]]\+"\(.*\)".*/\1/p' \
		"$SLAB_ROOT/lib/dataset/format.h")
	while IFS= read -r magic; do
		[ -n "$magic" ] || continue
		n=$((n + 1))
		# As the C string literal of format.h, e.g. "\x89SLAB\r\n\x1a" or "SLABTAIL".
		grep -qF -e "\"$magic\"" <<<"$text" || fail "slab(5) does not name the magic \"$magic\""
		# A magic with escapes is given byte by byte in hex too: 89 53 4C ...
		if [[ $magic == *\\* ]]; then
			hex=$(printf '%b' "$magic" | od -An -tx1 | tr -s ' \n' ' ' |
				sed 's/^ //; s/ $//' | tr a-f A-F)
			grep -qF -e "$hex" <<<"$text" || fail "slab(5) does not give the magic \"$magic\" as bytes $hex"
		fi
	done <<<"$magics"
	[ "$n" -ge 3 ] || fail "found only $n magic numbers in lib/dataset/format.h"
}

@test "slab(5) gives the CRC-32C and FNV-1a constants of the implementation" {
	need_man
	local text
	text=$(render "$MAN_DIR/slab.5")
	for c in 0x82F63B78 0xE3069283 0xCBF29CE484222325 00000100000001B3; do
		grep -qiF -e "$c" <<<"$text" || fail "slab(5) lacks the constant $c"
	done
	# The FNV constants the code uses are the ones documented.
	grep -qi 'cbf29ce484222325' "$SLAB_ROOT/lib/dataset/format.h"
	grep -qi '100000001b3' "$SLAB_ROOT/lib/dataset/format.h"
}

@test "man/shuffle-plan.1 and man/slab-plan.5 render without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/shuffle-plan.1"
	no_warnings "$MAN_DIR/slab-plan.5"
}

@test "shuffle-plan(1) SYNOPSIS is the Usage: text of shuffle-plan --help" {
	need_man
	synopsis_matches shuffle-plan
}

@test "shuffle-plan(1) OPTIONS has an entry for every long option of shuffle-plan --help" {
	need_man
	options_documented shuffle-plan
}

@test "slab-plan(5) names the plan magic and the sizes of lib/dataset/plan.h" {
	need_man
	local text magic
	text=$(render "$MAN_DIR/slab-plan.5")
	magic=$(sed -n 's/^#define[[:space:]]\+SLAB_PLAN_MAGIC[[:space:]]\+"\(.*\)".*/\1/p' "$SLAB_ROOT/lib/dataset/plan.h")
	[ "$magic" = SLABPLAN ] || fail "lib/dataset/plan.h magic is '$magic'"
	grep -qF '"SLABPLAN" (53 4C 41 42 50 4C 41 4E)' <<<"$text" || fail "slab-plan(5) lacks the magic as text and bytes"
	grep -q 'SLAB_PLAN_HEADER_FIXED 128u' "$SLAB_ROOT/lib/dataset/plan.h"
	grep -q 'SLAB_PLAN_ID_SIZE      32u' "$SLAB_ROOT/lib/dataset/plan.h"
	grep -q 'SLAB_PLAN_ENTRY_SIZE   8u' "$SLAB_ROOT/lib/dataset/plan.h"
	grep -qF '128 + 32 x F rounded up' <<<"$text" || fail "slab-plan(5) lacks the header size rule"
	grep -qF 'n entries of 8 bytes' <<<"$text" || fail "slab-plan(5) lacks the entry size"
	grep -qiF '0x82F63B78' <<<"$text" || fail "slab-plan(5) lacks the CRC-32C polynomial"
}

@test "man/numa-probe.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/numa-probe.1"
}

@test "numa-probe(1) SYNOPSIS is the Usage: text of numa-probe --help" {
	need_man
	synopsis_matches numa-probe
}

@test "numa-probe(1) OPTIONS has an entry for every long option of numa-probe --help" {
	need_man
	options_documented numa-probe
}

@test "numa-probe(1) documents every JSON key and every warning code numa-probe uses" {
	need_man
	local text key missing=""
	text=$(render "$MAN_DIR/numa-probe.1")
	# Keys: every json_*(j, "key", ...) of the tool and its report (lib/fe/numareport.c); codes: every warn(..., "code", ...) of lib/machine/topo.c.
	for key in $(grep -oh 'json_[a-z0-9_]*(j, "[a-z0-9_]*"' "$SLAB_ROOT/tools/numa-probe.c" "$SLAB_ROOT/lib/fe/numareport.c" | sed 's/.*"\(.*\)"/\1/' | sort -u) \
		$(grep -o 'SLAB_TOPO_\(NOTE\|WARNING\), "[a-z_]*"' "$SLAB_ROOT/lib/machine/topo.c" | sed 's/.*"\(.*\)"/\1/' | sort -u); do
		grep -qE "(^|[^a-z_])$key([^a-z_]|\$)" <<<"$text" || missing="$missing $key"
	done
	[ -z "$missing" ] || fail "numa-probe(1) does not document:$missing"
}

@test "man/bench-tlb.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/bench-tlb.1"
}

@test "bench-tlb(1) SYNOPSIS is the Usage: text of bench-tlb --help" {
	need_man
	synopsis_matches bench-tlb
}

@test "bench-tlb(1) OPTIONS has an entry for every long option of bench-tlb --help" {
	need_man
	options_documented bench-tlb
}

@test "bench-tlb(1) documents every JSON key bench-tlb writes" {
	need_man
	local text key missing=""
	text=$(render "$MAN_DIR/bench-tlb.1" | section 'JSON OUTPUT')
	# Every key the tool and its report (lib/fe/tlbreport.c) pass to the JSON writer, as "key"
	# in the page's example or text.
	for key in $(grep -ohE 'json_[a-z0-9]+\(&j, "[a-z0-9_]+"' "$SLAB_ROOT/tools/bench-tlb.c" "$SLAB_ROOT/lib/fe/tlbreport.c" |
		sed 's/.*"\(.*\)"/\1/' | sort -u); do
		grep -qE "(\"$key\"|(^|[^a-z_])$key([^a-z_]|\$))" <<<"$text" || missing="$missing $key"
	done
	[ -z "$missing" ] || fail "bench-tlb(1) JSON OUTPUT lacks:$missing"
}

@test "man/slab.1 renders without warnings" {
	not_twice
	need_man
	no_warnings "$MAN_DIR/slab.1"
}

@test "slab(1) SYNOPSIS is the Usage: text of slab --help" {
	need_man
	synopsis_matches slab
}

@test "slab(1) OPTIONS has an entry for every long option of slab --help" {
	need_man
	options_documented slab
}

@test "every tool's --help, slab --help and slab.py --help are at most 80 columns wide, as built and as installed" {
	local t cmd wide="" dir="$BATS_TEST_TMPDIR/installed"
	mkdir -p "$dir"
	for t in pack inspect shuffle-plan prefetch bench-tlb numa-probe slab; do
		# Installed as slab-TOOL, a tool's usage lines and pages (slab-pack(1)) are longer.
		cmd=$t
		if [ "$t" != slab ]; then
			ln -s "$SLAB_BUILD/bin/$t" "$dir/slab-$t"
			cmd="$t $dir/slab-$t"
		fi
		for cmd in $cmd; do
			run -0 --separate-stderr "$cmd" --help
			[ "$(wc -l <<<"$output")" -ge 5 ] || fail "$cmd --help: $output"
			wide+=$(expand <<<"$output" | LC_ALL=C awk -v t="${cmd##*/}" \
				'length($0) > 80 { printf "\n%s --help: %d columns: %s", t, length($0), $0 }')
		done
	done
	# slab.py's too (its last line names the library it found: none here, a short line)
	run -0 --separate-stderr env SLAB_LIBRARY=none python3 "$SLAB_ROOT/scripts/slab.py" --help
	[ "$(wc -l <<<"$output")" -ge 5 ] || fail "slab.py --help: $output"
	wide+=$(expand <<<"$output" | LC_ALL=C awk \
		'length($0) > 80 { printf "\nslab.py --help: %d columns: %s", length($0), $0 }')
	[ -z "$wide" ] || fail "wider than 80 columns:$wide"
}

@test "slab(1) TOOLS has an entry, with its page, for each tool slab --help lists" {
	need_man
	local text tools t n=0
	text=$(render "$MAN_DIR/slab.1" | section TOOLS)
	tools=$(slab --help | awk '/^Tools:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
	for t in $tools; do
		n=$((n + 1))
		grep -qx " \{7\}$t" <<<"$text" || grep -q "^ \{7\}$t " <<<"$text" ||
			fail "slab(1) TOOLS has no entry for $t"
		grep -qF "$t(1)" <<<"$text" || fail "slab(1) TOOLS does not name $t(1)"
		[ -f "$MAN_DIR/$t.1" ] || fail "slab --help lists $t, which has no man/$t.1"
	done
	[ "$n" -eq 6 ] || fail "slab --help lists $n tools"
}
