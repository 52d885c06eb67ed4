#!/usr/bin/env bats
# bash completions (scripts/mkcompletions, mk/completion.mk): generated from each tool's
# --help, each file loaded by bash-completion's own lazy loader by the command name it is
# installed as, they offer every long option the help lists and no other, the words the help
# lists for an option's argument, file names where it takes files, and `slab TOOL` hands over
# to slab-TOOL's completion.

load test_helper/common

bats_require_minimum_version 1.5.0

TOOL_NAMES="pack inspect shuffle-plan prefetch bench-tlb numa-probe"
# bash-completion's main script (Debian package bash-completion).
: "${BASH_COMPLETION_SH:=/usr/share/bash-completion/bash_completion}"

# The tools as mk/completion.mk gives them to mkcompletions: the front slab too, once built.
tool_paths() {
	local t
	[ ! -x "$SLAB_BUILD/bin/slab" ] || echo "$SLAB_BUILD/bin/slab"
	for t in $TOOL_NAMES; do
		echo "$SLAB_BUILD/bin/$t"
	done
}

# The completions of the tools under test, generated once for the file into a folder named
# completions/, as bash-completion's user folder wants.
setup_file() {
	# shellcheck disable=SC2046
	"$SLAB_ROOT/scripts/mkcompletions" "$BATS_FILE_TMPDIR/completions" $(tool_paths)
}

need_front() {
	[ -x "$SLAB_BUILD/bin/slab" ] || skip "no front $SLAB_BUILD/bin/slab (tools/slab.c) built"
}

COMPDIR="$BATS_FILE_TMPDIR/completions"
COMPOPT_LOG="${BATS_TEST_TMPDIR:-}/compopt.log"

need_bash_completion() {
	[ -f "$BASH_COMPLETION_SH" ] ||
		skip "bash-completion is not installed ($BASH_COMPLETION_SH; Debian package bash-completion)"
}

# offers LINE: what completing at the end of LINE offers, one a line, sorted, as bash would:
# LINE split into words at blanks and at '=' (COMP_WORDBREAKS), the completion of its first
# word loaded by bash-completion's lazy loader (__load_completion, what `complete -D` runs)
# from $COMPDIR only, and its function run. compopt (which works only inside a real
# completion) is recorded in $COMPOPT_LOG. Fails when the function came from elsewhere.
offers() {
	BASH_COMPLETION_USER_DIR="${COMPDIR%/completions}" XDG_DATA_DIRS=/nonexistent \
		bash --norc --noprofile -c '
		. "$1" >/dev/null 2>&1 || { echo "cannot source $1" >&2; exit 99; }
		line=$2 compdir=$3 log=$4
		compopt() { printf "%s\n" "$*" >>"$log"; }
		read -ra raw <<<"$line"
		words=()
		for w in "${raw[@]}"; do
			while [[ $w == *=* ]]; do
				[[ -z ${w%%=*} ]] || words+=("${w%%=*}")
				words+=("=")
				w=${w#*=}
			done
			[[ -z $w ]] || words+=("$w")
		done
		[[ $line != *" " ]] || words+=("")
		COMP_WORDS=("${words[@]}") COMP_CWORD=$((${#words[@]} - 1))
		COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=9 COMP_KEY=9
		cmd=${words[0]}
		__load_completion "$cmd" || { echo "no completion found for $cmd" >&2; exit 98; }
		spec=$(complete -p "$cmd") || exit 97
		fn=${spec#*-F }
		fn=${fn%% *}
		shopt -s extdebug
		from=$(declare -F "$fn")
		shopt -u extdebug
		[[ ${from##* } == "$compdir/$cmd" ]] || { echo "$fn comes from ${from##* }, not $compdir/$cmd" >&2; exit 96; }
		COMPREPLY=()
		"$fn" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		((${#COMPREPLY[@]} == 0)) || printf "%s\n" "${COMPREPLY[@]}"
	' _ "$BASH_COMPLETION_SH" "$1" "$COMPDIR" "$COMPOPT_LOG" | LC_ALL=C sort
	return "${PIPESTATUS[0]}"
}

# expect_offers LINE WORD...: completing LINE offers exactly the WORDs.
expect_offers() {
	local line=$1 got want
	shift
	got=$(offers "$line") || fail "completing '$line' failed"
	want=$(printf '%s\n' "$@" | LC_ALL=C sort)
	[ -n "$*" ] || want=""
	[ "$got" = "$want" ] ||
		fail "$(printf "completing '%s'\n-- offered:\n%s\n-- expected:\n%s" "$line" "$got" "$want")"
}

# long_options TOOL: every long option TOOL --help names (as tests/man.bats counts them).
long_options() {
	"$1" --help | grep -o -e '--[a-z][a-z0-9-]*' | LC_ALL=C sort -u
}

# short_options TOOL: the short options of TOOL --help's option lines.
short_options() {
	"$1" --help | sed -n 's/^ \{2,8\}\(-[A-Za-z0-9]\)\([, ].*\|\)$/\1/p' | LC_ALL=C sort -u
}

# long_options_offered TOOL: slab-TOOL -- completes these exactly.
long_options_offered() {
	need_bash_completion
	local tool=$1 want got
	want=$(long_options "$tool")
	[ "$(wc -l <<<"$want")" -ge 4 ] || fail "$tool --help lists only: $want"
	got=$(offers "slab-$tool --") || fail "completing 'slab-$tool --' failed"
	# --opt= (an option the help writes --opt=VALUE) is the option --opt; none twice.
	[ "$(sed 's/=$//' <<<"$got" | sort | uniq -d)" = "" ] || fail "offered twice: $got"
	got=$(sed 's/=$//' <<<"$got" | LC_ALL=C sort -u)
	[ "$got" = "$want" ] || fail "$(printf 'slab-%s -- offers what %s --help does not list, or misses some:\n%s' \
		"$tool" "$tool" "$(diff <(echo "$want") <(echo "$got") | grep '^[<>]')")"
}

@test "mkcompletions writes slab and one slab-TOOL per tool, each valid bash" {
	local t f
	for t in $TOOL_NAMES; do
		[ -s "$COMPDIR/slab-$t" ] || fail "no $COMPDIR/slab-$t"
	done
	[ -s "$COMPDIR/slab" ] || fail "no $COMPDIR/slab"
	[ "$(ls -A "$COMPDIR" | wc -l)" -eq 7 ] || fail "more files than expected: $(ls -A "$COMPDIR")"
	for f in "$COMPDIR"/*; do
		run bash -n "$f"
		assert_success
	done
	grep -q '^ *complete -F _slab_shuffle_plan slab-shuffle-plan$' "$COMPDIR/slab-shuffle-plan"
	grep -q '^ *complete -F _slab slab$' "$COMPDIR/slab"
}

@test "slab-pack -- offers exactly the long options of pack --help" {
	long_options_offered pack
}

@test "slab-inspect -- offers exactly the long options of inspect --help" {
	long_options_offered inspect
}

@test "slab-shuffle-plan -- offers exactly the long options of shuffle-plan --help" {
	long_options_offered shuffle-plan
}

@test "slab-prefetch -- offers exactly the long options of prefetch --help" {
	long_options_offered prefetch
}

@test "slab-bench-tlb -- offers exactly the long options of bench-tlb --help" {
	long_options_offered bench-tlb
}

@test "slab-numa-probe -- offers exactly the long options of numa-probe --help" {
	long_options_offered numa-probe
}

@test "- offers the short options of --help too, for every tool" {
	need_bash_completion
	local t got shorts s n
	for t in $TOOL_NAMES; do
		got=$(offers "slab-$t -") || fail "completing 'slab-$t -' failed"
		shorts=$(short_options "$t")
		n=$(wc -l <<<"$shorts")
		[ "$n" -ge 3 ] || fail "$t --help has only the short options: $shorts"
		for s in $shorts; do
			grep -qx -e "$s" <<<"$got" || fail "slab-$t - does not offer $s: $got"
		done
		# Those, and the long options.
		[ "$(grep -c '^-[^-]' <<<"$got")" -eq "$n" ] || fail "slab-$t - offers other short options: $got"
		grep -qx -e '--help' <<<"$got" || fail "slab-$t - does not offer --help"
	done
}

@test "a prefix offers only the options it begins: slab-prefetch --em, slab-pack --on" {
	need_bash_completion
	expect_offers "slab-prefetch --em" --emit --emit-format
	# --on-error=MODE in the help: offered as --on-error=, the cursor kept after the '='.
	rm -f "$COMPOPT_LOG"
	expect_offers "slab-pack --on" --on-error=
	grep -qx -e '-o nospace' "$COMPOPT_LOG" || fail "no compopt -o nospace after --on-error="
}

@test "slab-prefetch --emit-format offers tar raw frames" {
	need_bash_completion
	expect_offers "slab-prefetch --emit-format " tar raw frames
	expect_offers "slab-prefetch --emit-format r" raw
	expect_offers "slab-prefetch --emit-format=" tar raw frames
	expect_offers "slab-prefetch --emit-format=f" frames
}

@test "the words the help lists for an option's argument are offered" {
	need_bash_completion
	expect_offers "slab-shuffle-plan --mode " quasi random sequential
	expect_offers "slab-shuffle-plan --format " binary text
	expect_offers "slab-prefetch --cache-policy " belady fixed
	expect_offers "slab-prefetch --crop " random-resized center none
	expect_offers "slab-prefetch --alpha " drop composite keep
	expect_offers "slab-prefetch --resize " bilinear nearest
	expect_offers "slab-prefetch --on-error " fail skip
	expect_offers "slab-pack --on-error=" fail skip
	expect_offers "slab-pack --on-error=s" skip
	expect_offers "slab-bench-tlb --pattern " chase page seq
	expect_offers "slab-bench-tlb --hugetlb-size " 2M 1G
	# A list: its last item.
	rm -f "$COMPOPT_LOG"
	expect_offers "slab-bench-tlb --backing 4k,t" 4k,thp
	grep -qx -e '-o nospace' "$COMPOPT_LOG" || fail "no compopt -o nospace in a list"
}

@test "--s3-addressing offers the words of its metavariable in every tool that has it" {
	need_bash_completion
	local t words n=0
	for t in $TOOL_NAMES; do
		words=$("$t" --help | sed -n 's/^ *--s3-addressing \([a-z|]*\) .*/\1/p')
		[ -n "$words" ] || continue
		n=$((n + 1))
		# shellcheck disable=SC2086
		expect_offers "slab-$t --s3-addressing " ${words//|/ }
	done
	[ "$n" -ge 3 ] || fail "only $n tools have --s3-addressing"
}

@test "file arguments complete file names, DIR ones folders, PLAN ones plans first, values nothing" {
	need_bash_completion
	mkdir sub
	touch a.slab b.txt e.plan
	expect_offers "slab-pack -o " a.slab b.txt e.plan sub
	expect_offers "slab-pack --output=b" b.txt
	expect_offers "slab-prefetch --cache-dir " sub
	expect_offers "slab-bench-tlb --sysfs-root " sub
	expect_offers "slab-shuffle-plan --subset " a.slab b.txt e.plan sub
	expect_offers "slab-prefetch --plan " e.plan sub
	# No plan file matches: any file.
	expect_offers "slab-prefetch --plan b" b.txt
	expect_offers "slab-shuffle-plan -o " e.plan sub
	# A number, a size: nothing, whatever files there are.
	expect_offers "slab-prefetch --ahead "
	expect_offers "slab-pack --memory "
	expect_offers "slab-pack --jobs=" 
}

@test "operands: .slab files first, tar archives first for pack, none for bench-tlb" {
	need_bash_completion
	mkdir sub
	touch a.slab b.txt c.tar d.tar.zst
	expect_offers "slab-inspect " a.slab sub
	expect_offers "slab-prefetch --plan e.plan " a.slab sub
	expect_offers "slab-shuffle-plan --mode random " a.slab sub
	# Nothing of that kind matches: any file.
	expect_offers "slab-inspect b" b.txt
	expect_offers "slab-pack -o out.slab " c.tar d.tar.zst sub
	expect_offers "slab-pack -o out.slab a" a.slab
	# After --, operands only, even those starting with -.
	touch -- -x.slab
	expect_offers "slab-inspect -- -" -x.slab
	# No operands: bench-tlb and numa-probe complete their options.
	local got
	got=$(offers "slab-bench-tlb ")
	grep -qx -e '--pattern' <<<"$got" || fail "slab-bench-tlb offers: $got"
	! grep -q '\.slab$' <<<"$got" || fail "slab-bench-tlb offers files: $got"
	got=$(offers "slab-numa-probe --json ")
	grep -qx -e '--measure' <<<"$got" || fail "slab-numa-probe offers: $got"
}

@test "slab offers the six tool names and help" {
	need_bash_completion
	# shellcheck disable=SC2086
	expect_offers "slab " $TOOL_NAMES help
	expect_offers "slab p" pack prefetch
	expect_offers "slab nosuchtool --"
}

@test "slab - offers the options of slab --help; slab help offers the tool names" {
	need_bash_completion
	need_front
	local want
	want=$(slab --help | sed -n 's/^ \{2,8\}\(-[A-Za-z0-9]\)\?,\? \?\(--[a-z][a-z0-9-]*\)\? .*/\1 \2/p')
	[ -n "$want" ] || fail "slab --help lists no options"
	# shellcheck disable=SC2086
	expect_offers "slab -" $want
	# shellcheck disable=SC2086
	expect_offers "slab help " $TOOL_NAMES
	expect_offers "slab help pack "
}

@test "slab TOOL hands over to slab-TOOL's completion, loaded from beside it" {
	need_bash_completion
	expect_offers "slab prefetch --em" --emit --emit-format
	expect_offers "slab prefetch --emit-format " tar raw frames
	expect_offers "slab prefetch --plan x --emit-format=r" raw
	expect_offers "slab shuffle-plan --mode " quasi random sequential
	touch a.slab b.txt
	expect_offers "slab inspect " a.slab
	local t want got
	for t in $TOOL_NAMES; do
		want=$(offers "slab-$t --")
		got=$(offers "slab $t --")
		[ "$got" = "$want" ] || fail "slab $t -- offers: $got"
	done
}

@test "mkcompletions fails loudly, writing nothing, on a --help it cannot read" {
	local bin=$PWD/bin out=$PWD/out
	mkdir -p "$bin"
	# fake NAME HELP [STATUS]: a tool that prints HELP for --help and exits STATUS.
	fake() {
		printf '#!/bin/sh\ncat <<'\''EOF'\''\n%s\nEOF\nexit %s\n' "$2" "${3:-0}" >"$bin/$1"
		chmod +x "$bin/$1"
	}
	local good='Usage: good [OPTIONS] FILE...
Options:
      --mode MODE          fast (default): quick; slow: careful
  -o, --output FILE        here
  -h, --help               show this help and exit'
	fake good "$good"
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/good"
	assert_success
	grep -q "compgen -W 'fast slow'" "$out/slab-good" || fail "$(cat "$out/slab-good")"
	rm -rf "$out"

	fake bad "${good/--mode MODE  /--mode<M>     }"
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/good" "$bin/bad"
	assert_failure
	assert_output --partial 'bad --help: an option line of a shape not known'
	[ ! -e "$out" ] || [ -z "$(ls -A "$out")" ] || fail "wrote: $(ls -A "$out")"

	fake bad "$good
Use --frobnicate to frobnicate."
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/bad"
	assert_failure
	assert_output --partial 'names --frobnicate, which no option line defines'

	fake bad "${good/fast (default): quick; slow: careful/how fast to go}"
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/bad"
	assert_failure
	assert_output --partial '--mode MODE lists no words the generator can read'

	fake bad "${good/Usage: /Use: }"
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/bad"
	assert_failure
	assert_output --partial "no 'Usage:' line"

	fake bad "$good" 2
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/bad"
	assert_failure
	assert_output --partial 'exited with status 2'

	# The front's list of tools is the tools given.
	fake slab 'Usage: slab TOOL [ARGS...]
       slab help [TOOL]
Tools:
  good               a tool
  other              another

Options:
  -h, --help           this help'
	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/slab" "$bin/good"
	assert_failure
	assert_output --partial 'slab --help lists the tools good other, but the tools given are good'

	run "$SLAB_ROOT/scripts/mkcompletions" "$out" "$bin/missing"
	assert_failure
	assert_output --partial 'cannot run'
	[ ! -e "$out" ] || [ -z "$(ls -A "$out")" ] || fail "wrote: $(ls -A "$out")"
}

@test "make install-completions puts them where bash-completion finds them; uninstall removes them" {
	need_bash_completion
	local t tools dest=$PWD/dest dir
	tools=$(tool_paths | tr "\n" " ")
	# mk/completion.mk alone, so that nothing of the build is remade here.
	run make --no-print-directory -C "$SLAB_ROOT" -f mk/completion.mk BUILD="$PWD/b" \
		TOOLS="$tools" DESTDIR="$dest" PREFIX=/usr install-completions
	assert_success
	dir=$dest/usr/share/bash-completion/completions
	for t in $TOOL_NAMES; do
		[ -f "$dir/slab-$t" ] || fail "not installed: $dir/slab-$t"
		cmp "$dir/slab-$t" "$COMPDIR/slab-$t" || fail "$dir/slab-$t differs from what mkcompletions writes"
		[ "$(stat -c %a "$dir/slab-$t")" = 644 ] || fail "$dir/slab-$t is not mode 644"
	done
	[ -f "$dir/slab" ] || fail "not installed: $dir/slab"
	[ "$(ls -A "$dir" | wc -l)" -eq 7 ] || fail "installed: $(ls -A "$dir")"
	# bash-completion's loader finds them there (as under /usr/share) by command name.
	COMPDIR=$dir expect_offers "slab prefetch --emit-format " tar raw frames
	run make --no-print-directory -C "$SLAB_ROOT" -f mk/completion.mk BUILD="$PWD/b" \
		TOOLS="$tools" DESTDIR="$dest" PREFIX=/usr uninstall-completions
	assert_success
	[ -z "$(ls -A "$dir")" ] || fail "left behind: $(ls -A "$dir")"
}
