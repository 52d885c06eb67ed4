#!/usr/bin/env bats
# shuffle-plan: plans are permutations (or their exact drop-last / pad variants), deterministic,
# split into disjoint complete rank shares, resumable with --start, the same as text and as
# binary, reproducible from the man page alone; options, messages and exit codes.

load test_helper/common

PLANREF="$HELPERS/planref.py"

# datasets: a.slab, 400 small samples in 4 KiB pages (about 17 a page); b.slab, 120 samples
# of several fields in 8 KiB pages, some larger than a page. Made once per file of tests.
datasets() {
	local d="$BATS_FILE_TMPDIR/ds"
	if [ ! -e "$d/b.slab" ]; then
		local t
		t=$(mktemp -d "$BATS_FILE_TMPDIR/ds.XXXXXX")
		mktar --seed 1 --samples 400 --max-size 400 --fields jpg,cls -o "$t/a.tar"
		mktar --seed 2 --samples 120 --max-size 3000 -o "$t/b.tar"
		pack -q --page-size 4K -o "$t/a.slab" "$t/a.tar"
		pack -q --page-size 8K -o "$t/b.slab" "$t/b.tar"
		mv -T "$t" "$d" 2>/dev/null || rm -rf "$t"
	fi
	cp "$d/a.slab" "$d/b.slab" .
}

# text ARGS...: the plan as text, no summary.
text() {
	shuffle-plan -q --format text "$@"
}

# decode PLAN: a binary plan as header lines, "entries:", then the entries (slab-plan(5)).
decode() {
	python3 "$PLANREF" decode "$1"
}

# entries PLAN: only the entries of a binary plan, as text (with od: no Python to start).
entries() {
	tail -c +$(($(od -An -tu4 -j12 -N4 "$1") + 1)) "$1" | od -An -v -tu4 -w8 | awk '{ print $1, $2 }'
}

# sequence FILE_INDEX COUNT: "FILE_INDEX 0" .. "FILE_INDEX COUNT-1".
sequence() {
	seq 0 $(($2 - 1)) | sed "s/^/$1 /"
}

# stat_of KEY: the value of one --stats line on standard input.
stat_of() {
	awk -F': ' -v k="$1" '$1 == k { print $2 }'
}

@test "shuffle-plan --help prints usage on stdout and exits 0" {
	run -0 --separate-stderr shuffle-plan --help
	assert_line --index 0 "Usage: shuffle-plan [OPTIONS] FILE..."
	assert_output --partial "--window PAGES"
	assert_output --partial "--world-size W"
	assert_output --partial "--subset LIST"
	[ -z "$stderr" ]
}

@test "shuffle-plan --version" {
	run -0 shuffle-plan --version
	assert_output --regexp '^shuffle-plan \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "every mode is a permutation of the samples" {
	datasets
	for mode in sequential random quasi; do
		text --mode "$mode" a.slab | sort -k2,2n > sorted
		sequence 0 400 | cmp - sorted
	done
	text --mode sequential a.slab | cmp - <(sequence 0 400)
	# random and quasi really shuffle
	! text --mode random a.slab | cmp -s - <(sequence 0 400)
	! text --mode quasi a.slab | cmp -s - <(sequence 0 400)
}

@test "several files are one dataset, FILE_INDEX naming the file" {
	datasets
	for mode in sequential random quasi; do
		text --mode "$mode" a.slab b.slab > plan.txt
		[ "$(grep -c '^0 ' plan.txt)" -eq 400 ]
		[ "$(grep -c '^1 ' plan.txt)" -eq 120 ]
		sort -k1,1n -k2,2n plan.txt | cmp - <(sequence 0 400; sequence 1 120)
	done
	text --mode sequential b.slab a.slab | cmp - <(sequence 0 120; sequence 1 400)
	# in the quasi mode the files mix
	text --mode quasi a.slab b.slab | head -50 | cut -d' ' -f1 | sort -u | wc -l | grep -qx 2
}

@test "a plan over several files addresses the samples of those files packed as one" {
	datasets
	for s in 1 2 3; do
		mkwds --count 7 --seed "$s" --prefix "s$s-" -o "shard$s.tar"
		pack -q --page-size 64K -o "shard$s.slab" "shard$s.tar"
	done
	pack -q --page-size 64K -o all.slab shard1.tar shard2.tar shard3.tar
	for f in 0 1 2; do
		inspect --list "shard$((f + 1)).slab" | awk -v f="$f" '{ print f, $1, $2 }'
	done > keys
	text --mode random --seed 4 shard1.slab shard2.slab shard3.slab |
		awk 'NR == FNR { key[$1 " " $2] = $3; next } { print key[$1 " " $2] }' keys - > planned
	[ "$(wc -l < planned)" -eq 21 ]
	sort planned | cmp - <(inspect --list all.slab | cut -f2 | sort)
}

@test "plans are deterministic: the same arguments give the same bytes" {
	datasets
	for mode in sequential random quasi; do
		shuffle-plan -q --mode "$mode" --seed 9 --epoch 2 --rank 1 --world-size 3 a.slab b.slab > one
		shuffle-plan -q --mode "$mode" --seed 9 --epoch 2 --rank 1 --world-size 3 -o two a.slab b.slab
		cmp one two
	done
	# names do not matter, contents do
	cp a.slab copy.slab
	shuffle-plan -q a.slab > p1
	shuffle-plan -q copy.slab > p2
	cmp p1 p2
}

@test "seeds, epochs, ranks and windows give other orders; sequential ignores the seed" {
	datasets
	text --seed 1 a.slab b.slab > s1
	text --seed 2 a.slab b.slab > s2
	text --seed 1 --epoch 1 a.slab b.slab > e1
	text --seed 1 --window 3 a.slab b.slab > w3
	! cmp -s s1 s2
	! cmp -s s1 e1
	! cmp -s s1 w3
	text --mode random --seed 1 a.slab > r1
	text --mode random --seed 2 a.slab > r2
	! cmp -s r1 r2
	text --mode sequential --seed 1 --epoch 5 a.slab | cmp - <(text --mode sequential a.slab)
	# another dataset (the same samples in other pages) gives another plan
	pack -q --page-size 8K -o a8.slab "$BATS_FILE_TMPDIR/ds/a.tar"
	! text --mode random --seed 1 a8.slab | cmp -s - r1
}

@test "rank shares with --drop-last are disjoint, equal, and miss at most W-1 samples" {
	datasets
	for mode in sequential random quasi; do
		for w in 1 3 7; do
			per=$((520 / w))
			: > all
			for ((r = 0; r < w; r++)); do
				text --mode "$mode" --rank "$r" --world-size "$w" a.slab b.slab > "r$r"
				[ "$(wc -l < "r$r")" -eq "$per" ]
				cat "r$r" >> all
			done
			[ -z "$(sort all | uniq -d)" ]                          # disjoint
			[ "$(sort -u all | wc -l)" -eq $((per * w)) ]
			[ $((520 - per * w)) -lt "$w" ]
		done
	done
	run -0 --separate-stderr shuffle-plan --format text --rank 3 --world-size 7 a.slab b.slab
	[[ "$stderr" == *", rank 3 of 7: 74 samples (dataset 520), drop-last: 2 dropped, "*" s" ]]
}

@test "rank shares with --pad cover every sample and repeat at most W-1" {
	datasets
	for mode in sequential random quasi; do
		for w in 1 2 7; do
			per=$(((520 + w - 1) / w))
			: > all
			for ((r = 0; r < w; r++)); do
				text --mode "$mode" --pad --rank "$r" --world-size "$w" a.slab b.slab > "r$r"
				[ "$(wc -l < "r$r")" -eq "$per" ]
				[ -z "$(sort "r$r" | uniq -d)" ]        # no repeat within a rank
				cat "r$r" >> all
			done
			sort -u -k1,1n -k2,2n all | cmp - <(sequence 0 400; sequence 1 120)
			[ "$(wc -l < all)" -eq $((per * w)) ]
			[ $((per * w - 520)) -lt "$w" ]
		done
	done
	run -0 --separate-stderr shuffle-plan --format text --pad --rank 0 --world-size 7 a.slab b.slab
	[[ "$stderr" == *", rank 0 of 7: 75 samples (dataset 520), pad: 5 repeated, "*" s" ]]
}

@test "fewer samples than ranks: drop-last leaves the ranks empty, pad gives each one" {
	small_slab
	run -0 --separate-stderr shuffle-plan --format text --rank 4 --world-size 5 small.slab
	assert_output ""
	[[ "$stderr" == *": 0 samples (dataset 3), drop-last: 3 dropped, "* ]]
	for r in 0 1 2 3 4; do
		text --pad --rank "$r" --world-size 5 small.slab
	done > all
	[ "$(wc -l < all)" -eq 5 ]
	sort -u all | cmp - <(sequence 0 3)
}

@test "--start K is the full plan from position K, as tail -n +K+1" {
	datasets
	for mode in sequential random quasi; do
		text --mode "$mode" --rank 1 --world-size 2 --pad a.slab b.slab > full
		for k in 0 7 259 260; do
			text --mode "$mode" --rank 1 --world-size 2 --pad --start "$k" a.slab b.slab > tail
			tail -n +$((k + 1)) full | cmp - tail
			shuffle-plan -q --mode "$mode" --rank 1 --world-size 2 --pad --start "$k" -o bin a.slab b.slab
			entries bin | cmp - tail
			[ "$(od -An -tu8 -j56 -N8 bin)" -eq "$k" ]             # start
			[ "$(od -An -tu8 -j72 -N8 bin)" -eq 260 ]              # length
		done
	done
	run -0 decode bin
	assert_line "start: 260"
	assert_line "entries: 0"
	run -0 --separate-stderr shuffle-plan --format text --start 500 a.slab b.slab
	[ "${#lines[@]}" -eq 20 ]
	[[ "$stderr" == *": 20 samples from position 500 of 520 (dataset 520), "* ]]
}

# Counts of one were plural: "window 1 pages", "1 samples", "(1 entries)", "has 1 samples".
@test "shuffle-plan's counts of one are singular" {
	one_slab
	run -0 --separate-stderr shuffle-plan --window 1 -o p.plan one.slab
	[[ "$stderr" == "shuffle-plan: 'p.plan': quasi, window 1 page, seed 0, epoch 0, rank 0 of 1: 1 sample (dataset 1), drop-last: 0 dropped, "*" s" ]] ||
		fail "$stderr"
	run -1 --separate-stderr shuffle-plan --start 2 --format text one.slab
	assert_equal "$stderr" "shuffle-plan: start 2 is past the end of the plan (1 entry)"
	printf '1\n' > sub
	run -2 --separate-stderr shuffle-plan --subset sub --format text one.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: 'sub': line 1: sample 1 is out of range (the dataset has 1 sample)"
}

@test "--start past the end of the plan is an error" {
	datasets
	run -1 --separate-stderr shuffle-plan --format text --start 401 a.slab
	assert_output ""
	[ "$stderr" = "shuffle-plan: start 401 is past the end of the plan (400 entries)" ]
	run -1 --separate-stderr shuffle-plan --start 201 --rank 1 --world-size 2 -o p a.slab
	[ "$stderr" = "shuffle-plan: start 201 is past the end of the plan (200 entries)" ]
	[ ! -e p ]
}

@test "text and binary plans agree, and the binary header says what the plan is" {
	datasets
	shuffle-plan -q --mode quasi --seed 12 --epoch 3 --rank 2 --world-size 3 --pad --window 5 \
		-o plan a.slab b.slab
	text --mode quasi --seed 12 --epoch 3 --rank 2 --world-size 3 --pad --window 5 a.slab b.slab > plan.txt
	entries plan | cmp - plan.txt
	run -0 decode plan
	assert_line "version: 1"
	assert_line "header_size: 4096"
	assert_line "mode: quasi"
	assert_line "flags: 1"
	assert_line "seed: 12"
	assert_line "epoch: 3"
	assert_line "rank: 2"
	assert_line "world_size: 3"
	assert_line "window: 5"
	assert_line "start: 0"
	assert_line "entries: 174"
	assert_line "length: 174"
	assert_line "samples: 520"
	assert_line "files: 2"
	assert_line --regexp "^file 0: size $(filesize a.slab), samples 400, header crc [0-9a-f]{8}, table crc [0-9a-f]{8}\$"
	assert_line --regexp "^file 1: size $(filesize b.slab), samples 120, "
	[ "$(filesize plan)" -eq $((4096 + 174 * 8)) ]
	# the identity is the files' own header and table CRCs (slab(5): header 36, trailer 40)
	hcrc=$(od -An -tx4 -j36 -N4 a.slab | tr -d ' ')
	tcrc=$(od -An -tx4 -j$(($(filesize a.slab) - 64 + 40)) -N4 a.slab | tr -d ' ')
	assert_line --regexp "^file 0: .*, header crc $hcrc, table crc $tcrc\$"
	# -o - is standard output
	shuffle-plan -q --mode quasi --seed 12 --epoch 3 --rank 2 --world-size 3 --pad --window 5 \
		-o - a.slab b.slab | cmp - plan
	# a text plan can go to a file too
	text --mode random -o t.txt a.slab
	text --mode random a.slab | cmp - t.txt
}

@test "the algorithm of shuffle-plan(1) reproduces every plan exactly" {
	datasets
	cat > configs <<'EOF'
--mode sequential
--mode random --seed 3 --epoch 1
--mode random --rank 2 --world-size 3 --pad --start 11
--mode quasi
--mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 --window 1
--mode quasi --rank 3 --world-size 4 --window 7
--mode quasi --rank 5 --world-size 6 --pad --window 2 --start 30
--mode quasi --memory 24576 --seed 5
EOF
	python3 "$PLANREF" batch a.slab b.slab < configs > ref
	while read -r args; do
		echo "== $args"
		# shellcheck disable=SC2086
		text $args a.slab b.slab
	done < configs > tool
	cmp tool ref
	[ "$(wc -l < ref)" -eq 2958 ]
}

@test "--memory is --window in bytes: the same order for files of one page size" {
	datasets
	text --window 5 a.slab > w
	text --memory 20K a.slab > m
	cmp w m
	text --window 3 b.slab > w
	text --memory 24K b.slab > m
	cmp w m
	shuffle-plan -q --memory 20K -o mplan a.slab
	[ "$(od -An -tu8 -j48 -N8 mplan)" -eq 20480 ]          # window
	[ "$(od -An -tu4 -j20 -N4 mplan)" -eq 2 ]              # flags: bytes
}

@test "quasi never needs more pages than the window" {
	datasets
	for w in 1 2 3 8 64; do
		live=$(shuffle-plan -q --stats --window "$w" a.slab | stat_of max_live_pages)
		[ "$live" -le "$w" ]
		# b.slab has samples of 2 and 3 pages: one may be alone in a smaller window
		live=$(shuffle-plan -q --stats --window "$w" --rank 1 --world-size 2 b.slab | stat_of max_live_pages)
		[ "$live" -le $((w > 3 ? w : 3)) ]
	done
	bytes=$(shuffle-plan -q --stats --memory 40K a.slab b.slab | stat_of max_live_bytes)
	[ "$bytes" -le 40960 ]
	# with a window of one page, each page is read in one go
	shuffle-plan -q --stats --window 1 a.slab > st
	[ "$(stat_of page_switches < st)" -eq $(($(stat_of distinct_pages < st) - 1)) ]
	# random order needs about every page at once
	live=$(shuffle-plan -q --stats --mode random a.slab | stat_of max_live_pages)
	[ "$live" -gt 8 ]
}

@test "--stats: an empty sample on a large sample's first page reads that page only" {
	# pack puts an empty sample at the next sample's offset: here d/b's, 10000 bytes, 3 pages
	mkdir -p src/d
	printf '' > src/d/a.txt
	head -c 10000 /dev/zero > src/d/b.bin
	(cd src && tar --format=gnu --sort=name -cf ../z.tar d)
	pack -q --page-size 4K -o z.slab z.tar
	echo 0 > sub
	shuffle-plan -q --stats --subset sub z.slab > st
	[ "$(stat_of distinct_pages < st)" = 1 ]
	[ "$(stat_of max_live_pages < st)" = 1 ]
	[ "$(stat_of max_live_bytes < st)" = 4096 ]
	# both: the large sample's 3 pages
	shuffle-plan -q --stats --mode sequential z.slab > st
	[ "$(stat_of distinct_pages < st)" = 3 ]
	[ "$(stat_of max_live_pages < st)" = 3 ]
}

@test "--stats prints the measures on standard output" {
	datasets
	run -0 --separate-stderr shuffle-plan -q --stats --mode sequential a.slab
	assert_equal "${#lines[@]}" 8
	assert_line --index 0 "samples: 400"
	assert_line --index 1 --regexp '^distinct_pages: [0-9]+$'
	assert_line --index 2 --regexp '^page_switches: [0-9]+$'
	assert_line --index 3 --regexp '^mean_run: [0-9]+\.[0-9]{3}$'
	assert_line --index 4 "max_live_pages: 1"
	assert_line --index 5 "max_live_bytes: 4096"
	assert_line --index 6 "displacement: 0.000000"
	assert_line --index 7 --regexp '^same_page_neighbours: 0\.9[0-9]{5}$'
	[ -z "$stderr" ]
	pages=$(stat_of distinct_pages <<<"$output")
	[ "$(stat_of page_switches <<<"$output")" -eq $((pages - 1)) ]
	# quasi: pages far apart in the order, almost no neighbours from one page
	shuffle-plan -q --stats a.slab b.slab > st
	awk -F': ' '$1 == "displacement" && $2 > 0.15 { ok = 1 } END { exit !ok }' st
	awk -F': ' '$1 == "same_page_neighbours" && $2 < 0.05 { ok = 1 } END { exit !ok }' st
	# without -o no plan is written; with it the plan goes to the file, the measures to stdout
	run -0 --separate-stderr shuffle-plan --stats -o plan a.slab
	assert_line --index 0 "samples: 400"
	[[ "$stderr" == "shuffle-plan: 'plan': quasi, window 64 pages, "* ]]
	shuffle-plan -q a.slab | cmp - plan
	run -0 --separate-stderr shuffle-plan --stats a.slab
	[[ "$stderr" == "shuffle-plan: quasi, window 64 pages, seed 0, epoch 0, rank 0 of 1: 400 samples (dataset 400), drop-last: 0 dropped, "*" s" ]]
}

@test "one summary line on stderr, none with -q" {
	datasets
	run -0 --separate-stderr shuffle-plan --mode random --seed 5 --epoch 6 --format text a.slab
	assert_equal "${#stderr_lines[@]}" 1
	[[ "$stderr" =~ ^shuffle-plan:\ \'\(stdout\)\':\ random,\ seed\ 5,\ epoch\ 6,\ rank\ 0\ of\ 1:\ 400\ samples\ \(dataset\ 400\),\ drop-last:\ 0\ dropped,\ [0-9]+\.[0-9]{3}\ s$ ]]
	run -0 --separate-stderr shuffle-plan --memory 1M -o p a.slab
	[[ "$stderr" == "shuffle-plan: 'p': quasi, window 1.0 MiB, seed 0, "* ]]
	run -0 --separate-stderr shuffle-plan -q -o p a.slab
	[ -z "$stderr" ] && [ -z "$output" ]
	run -0 --separate-stderr shuffle-plan -v -o p a.slab b.slab
	assert_equal "${#stderr_lines[@]}" 3
	assert_equal "${stderr_lines[0]}" "shuffle-plan: file 0 'a.slab': 400 samples, $(inspect a.slab | sed -n 's/^pages: *\([0-9]*\),.*/\1/p') pages of 4.0 KiB"
	assert_equal "${stderr_lines[1]}" "shuffle-plan: file 1 'b.slab': 120 samples, $(inspect b.slab | sed -n 's/^pages: *\([0-9]*\),.*/\1/p') pages of 8.0 KiB"
}

@test "an empty dataset gives an empty plan" {
	tar -cf empty.tar --files-from /dev/null
	pack -q -o empty.slab empty.tar
	run -0 --separate-stderr shuffle-plan --format text empty.slab
	assert_output ""
	shuffle-plan -q -o plan empty.slab
	[ "$(filesize plan)" -eq 4096 ]
	[ "$(od -An -tu8 -j64 -N8 plan)" -eq 0 ]               # entries
}

@test "bad options are usage errors (exit 2) with a clear message" {
	datasets
	while IFS='|' read -r args message; do
		# shellcheck disable=SC2086
		run -2 --separate-stderr shuffle-plan $args a.slab
		assert_output ""
		assert_equal "${stderr_lines[0]}" "shuffle-plan: $message"
		assert_equal "${stderr_lines[1]}" "Try 'shuffle-plan --help' for more information."
	done <<'EOF'
--mode shuffle|invalid --mode 'shuffle' (sequential, random or quasi)
--window 0|invalid --window '0' (a number from 1 to 2^64 - 1)
--window 3x|invalid --window '3x' (a number from 1 to 2^64 - 1)
--memory 0|invalid --memory '0' (a size such as 512M, more than 0)
--memory 1Q|invalid --memory '1Q' (a size such as 512M, more than 0)
--window 3 --memory 1M|--window and --memory exclude each other
--mode random --window 8|--window applies to --mode quasi only
--mode sequential --memory 8M|--memory applies to --mode quasi only
--seed -1|invalid --seed '-1' (a number from 0 to 2^64 - 1)
--seed 18446744073709551616|invalid --seed '18446744073709551616' (a number from 0 to 2^64 - 1)
--epoch 1.5|invalid --epoch '1.5' (a number from 0 to 2^64 - 1)
--rank x|invalid --rank 'x' (a number from 0 to 4294967294)
--world-size 0|invalid --world-size '0' (a number from 1 to 4294967295)
--world-size 4294967296|invalid --world-size '4294967296' (a number from 1 to 4294967295)
--rank 8 --world-size 8|--rank 8 is not below --world-size 8
--rank 1|--rank 1 is not below --world-size 1
--drop-last --pad|--drop-last and --pad exclude each other
--start -3|invalid --start '-3' (a number from 0 to 2^64 - 1)
--format json|invalid --format 'json' (binary or text)
--stats -o -|--stats prints on standard output: write the plan with -o FILE
--stats -o /dev/stdout|--stats prints on standard output: write the plan with -o FILE
--no-such-option|unrecognized option '--no-such-option'
EOF
	run -2 --separate-stderr shuffle-plan
	[ "$stderr" = "shuffle-plan: no input file
Try 'shuffle-plan --help' for more information." ]
}

@test "shuffle-plan refuses to write a binary plan to a terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	datasets
	run script -qec "shuffle-plan a.slab" /dev/null
	assert_output --partial "shuffle-plan: refusing to write a binary plan to a terminal (redirect it, use -o FILE, or --format text)"
	run script -qec "shuffle-plan -q --format text --mode sequential a.slab" /dev/null
	assert_output --partial "0 399"
	# standard output by another name is refused as well, by pack too
	run script -qec "shuffle-plan -o /dev/stdout a.slab" /dev/null
	assert_output --partial "shuffle-plan: refusing to write a binary plan to a terminal (redirect it, use -o FILE, or --format text)"
	mkwds --count 3 -o t.tar
	run script -qec "pack -o /dev/fd/1 t.tar" /dev/null
	assert_output --partial "pack: refusing to write a .slab to a terminal (redirect it, or use -o FILE)"
	# and a terminal by its own name, standard output redirected or not; text may go there
	run script -qec "shuffle-plan -o /dev/tty a.slab; echo status \$?" /dev/null
	assert_equal "${output//$'\r'/}" "shuffle-plan: refusing to write a binary plan to a terminal (redirect it, use -o FILE, or --format text)
Try 'shuffle-plan --help' for more information.
status 2"
	run script -qec "shuffle-plan -o /dev/stderr a.slab > out.txt; echo status \$?" /dev/null
	assert_equal "${output//$'\r'/}" "shuffle-plan: refusing to write a binary plan to a terminal (redirect it, use -o FILE, or --format text)
Try 'shuffle-plan --help' for more information.
status 2"
	run script -qec "shuffle-plan -q --format text --mode sequential -o /dev/tty a.slab" /dev/null
	assert_output --partial "0 399"
}

@test "missing, foreign or damaged .slab files are errors (exit 1), each one reported" {
	datasets
	run -1 --separate-stderr shuffle-plan -o plan nonexistent.slab
	[ "$stderr" = "shuffle-plan: 'nonexistent.slab': No such file or directory" ]
	assert_output ""
	cp "$BATS_FILE_TMPDIR/ds/a.tar" a.tar
	head -c 5000 b.slab > cut.slab
	cp a.slab flipped.slab
	# a byte of the table (which starts at the trailer's table offset)
	flip flipped.slab $(($(od -An -tu8 -j$(($(filesize a.slab) - 64 + 8)) -N8 a.slab) + 200))
	run -1 --separate-stderr shuffle-plan -o plan a.tar a.slab cut.slab flipped.slab missing.slab
	assert_equal "${#stderr_lines[@]}" 4
	assert_equal "${stderr_lines[0]}" "shuffle-plan: 'a.tar': not a slab file (bad magic number)"
	[[ "${stderr_lines[1]}" == "shuffle-plan: 'cut.slab': "*"truncated"* ]]
	[[ "${stderr_lines[2]}" == "shuffle-plan: 'flipped.slab': table checksum mismatch"* ]]
	assert_equal "${stderr_lines[3]}" "shuffle-plan: 'missing.slab': No such file or directory"
	[ ! -e plan ]
	[ -z "$(ls -A | grep tmp)" ]
}

@test "-o appears only when complete; an unwritable place is an error" {
	datasets
	run -1 --separate-stderr shuffle-plan -o nodir/plan a.slab
	[ "$stderr" = "shuffle-plan: 'nodir/plan': cannot create a file there: No such file or directory" ]
	echo old > plan
	run -1 --separate-stderr shuffle-plan --start 9999 -o plan a.slab
	[ "$(cat plan)" = old ]
	[ "$(ls -A)" = "$(printf '%s\n' a.slab b.slab plan)" ]
	if [ -w /dev/full ]; then
		# worded as every tool words a write error
		run -1 --separate-stderr bash -c 'shuffle-plan -q --format text a.slab > /dev/full'
		assert_equal "$stderr" "shuffle-plan: write error: No space left on device"
		run -1 --separate-stderr bash -c 'inspect --list a.slab > /dev/full'
		assert_equal "$stderr" "inspect: write error: No space left on device"
		run -1 --separate-stderr shuffle-plan -q --format text -o /dev/full a.slab
		assert_equal "$stderr" "shuffle-plan: '/dev/full': write error: No space left on device"
	fi
}

@test "shards packed in parallel with GNU parallel and xargs -P are one dataset to plan" {
	command -v parallel >/dev/null || skip "GNU parallel is not installed (Debian package parallel)"
	for i in 0 1 2 3 4 5; do
		mkwds --count $((5 + i)) --seed "$i" --prefix "shard$i-" -o "shard-00000$i.tar"
	done
	mkdir -p slabs xslabs
	ls shard-*.tar | parallel --will-cite -j 4 pack -q --page-size 64K -o slabs/{.}.slab {}
	ls shard-*.tar | xargs -P 4 -I{} sh -c 'pack -q --page-size 64K -o "xslabs/$(basename {} .tar).slab" {}'
	for f in slabs/*.slab; do cmp "$f" "x$f"; done
	[ "$(ls slabs | wc -l)" -eq 6 ]
	run -0 --separate-stderr shuffle-plan --format text --mode quasi --seed 3 slabs/*.slab
	[[ "$stderr" == *": 45 samples (dataset 45), drop-last: 0 dropped, "* ]]
	for i in 0 1 2 3 4 5; do
		[ "$(grep -c "^$i " <<<"$output")" -eq $((5 + i)) ]
	done
	sort -k1,1n -k2,2n <<<"$output" | cmp - <(for i in 0 1 2 3 4 5; do sequence "$i" $((5 + i)); done)
	# the same plan from the serial pack of the same shards
	for i in 0 1 2 3 4 5; do pack -q --page-size 64K -o "one$i.slab" "shard-00000$i.tar"; done
	shuffle-plan -q --seed 3 slabs/*.slab > p1
	shuffle-plan -q --seed 3 one0.slab one1.slab one2.slab one3.slab one4.slab one5.slab > p2
	cmp p1 p2
}

@test "-o to a FIFO writes in place and leaves the FIFO a FIFO" {
	datasets
	shuffle-plan -q --format text -o want.txt a.slab
	mkfifo p.fifo
	cat p.fifo > got.txt &
	reader=$!
	run -0 shuffle-plan -q --format text -o p.fifo a.slab
	wait "$reader"
	cmp want.txt got.txt
	[ -p p.fifo ]
}

# ---- --subset --------------------------------------------------------------------------------

# subset_of EVERY SEED: about one global index in EVERY of a.slab + b.slab (520 samples), in a
# scrambled order, one a line.
subset_of() {
	seq 0 519 | awk -v e="$1" -v s="$2" 'BEGIN { srand(s) } rand() * e < 1' | shuf --random-source=<(yes "$2")
}

# pairs LIST: the "FILE_INDEX SAMPLE_INDEX" of each global index of LIST (a.slab has 400).
pairs() {
	awk '{ print ($1 < 400 ? "0 " $1 : "1 " $1 - 400) }' "$1"
}

@test "--subset: a plan of exactly the subset, each sample once, in every mode" {
	datasets
	subset_of 4 1 > sub
	n=$(wc -l < sub)
	[ "$n" -gt 80 ] && [ "$n" -lt 180 ]
	pairs sub | sort > want
	for mode in sequential random quasi; do
		text --mode "$mode" --subset sub a.slab b.slab > plan.txt
		[ "$(wc -l < plan.txt)" -eq "$n" ]
		sort plan.txt | cmp - want
	done
	# sequential is the subset in file order; random and quasi shuffle it
	text --mode sequential --subset sub a.slab b.slab | cmp - <(sort -n sub | pairs /dev/stdin)
	! text --mode random --subset sub a.slab b.slab | cmp -s - <(sort -n sub | pairs /dev/stdin)
	run -0 --separate-stderr shuffle-plan --format text --subset sub a.slab b.slab
	[[ "$stderr" == *": $n samples (subset $n of dataset 520), drop-last: 0 dropped, "* ]]
}

@test "--subset: ranks partition the subset, with --drop-last and --pad" {
	datasets
	subset_of 3 2 > sub
	n=$(wc -l < sub)
	pairs sub | sort > want
	for mode in sequential random quasi; do
		for w in 2 3 7; do
			: > all
			for ((r = 0; r < w; r++)); do
				text --mode "$mode" --subset sub --rank "$r" --world-size "$w" a.slab b.slab > "r$r"
				[ "$(wc -l < "r$r")" -eq $((n / w)) ]
				cat "r$r" >> all
			done
			[ -z "$(sort all | uniq -d)" ]                          # disjoint
			[ -z "$(sort all | comm -23 - want)" ]                  # only the subset's
			[ $((n - $(wc -l < all))) -lt "$w" ]
			: > all
			for ((r = 0; r < w; r++)); do
				text --mode "$mode" --subset sub --pad --rank "$r" --world-size "$w" a.slab b.slab >> all
			done
			sort -u all | cmp - want                                # all of it
			[ "$(wc -l < all)" -eq $(((n + w - 1) / w * w)) ]
		done
	done
	run -0 --separate-stderr shuffle-plan --format text --subset sub --pad --rank 1 --world-size 7 a.slab b.slab
	per=$(((n + 6) / 7))
	[[ "$stderr" == *", rank 1 of 7: $per samples (subset $n of dataset 520), pad: $((per * 7 - n)) repeated, "* ]]
}

@test "--subset: keys and indices give the same plan, in any order; every sample is no subset" {
	datasets
	subset_of 3 3 > sub
	# (b.slab has keys of a.slab's: a key names the first file's sample; b.slab's go by index)
	{ inspect --list a.slab; inspect --list b.slab; } | cut -f2 > keys
	[ "$(sed -n 403p keys)" = "$(sed -n 3p keys)" ]
	# every other line of a.slab as a key; the same set reversed; through standard input
	awk 'NR == FNR { key[FNR - 1] = $0; next } { print (FNR % 2 && $1 < 400 ? "key:" key[$1] : $1) }' keys sub > mixed
	grep -q '^key:' mixed
	for mode in sequential random quasi; do
		shuffle-plan -q --mode "$mode" --seed 4 --subset sub -o p1 a.slab b.slab
		shuffle-plan -q --mode "$mode" --seed 4 --subset mixed -o p2 a.slab b.slab
		tac mixed | shuffle-plan -q --mode "$mode" --seed 4 --subset - -o p3 a.slab b.slab
		cmp p1 p2
		cmp p1 p3
		# a subset of every sample: the entries of the plan without one
		seq 519 -1 0 > every
		text --mode "$mode" --seed 4 --rank 1 --world-size 3 --subset every a.slab b.slab |
			cmp - <(text --mode "$mode" --seed 4 --rank 1 --world-size 3 a.slab b.slab)
	done
	# keys of digits are keys with key:, indexes without
	printf 'key:%s\n' "$(sed -n 6p keys)" > k
	text --mode sequential --subset k a.slab b.slab | cmp - <(echo "0 5")
}

@test "--subset: quasi keeps at most --window of the subset's pages live and reads only them" {
	datasets
	subset_of 5 4 | head -60 > sub
	# the pages holding subset samples of a.slab (every sample's page is its inspect --list third column)
	inspect --list a.slab | awk 'NR == FNR { in_sub[$1] = 1; next } ($1 in in_sub) { print $3 }' \
		<(awk '$1 < 400' sub) - | sort -u > pages
	awk '$1 < 400' sub > suba
	for w in 1 2 3 5 8; do
		shuffle-plan -q --stats --window "$w" --subset suba a.slab > st
		[ "$(stat_of samples < st)" -eq "$(wc -l < suba)" ]
		[ "$(stat_of max_live_pages < st)" -le "$w" ]
		[ "$(stat_of distinct_pages < st)" -eq "$(wc -l < pages)" ]
	done
	# a window of one page: each of the subset's pages in one stay
	shuffle-plan -q --stats --window 1 --subset suba a.slab > st
	[ "$(stat_of page_switches < st)" -eq $(($(wc -l < pages) - 1)) ]
	# the subset's plan needs fewer pages than the dataset's, and its order is quasi, not sequential
	[ "$(wc -l < pages)" -lt "$(shuffle-plan -q --stats a.slab | stat_of distinct_pages)" ]
	run -0 shuffle-plan -q --stats --mode sequential --subset suba a.slab
	assert_line "displacement: 0.000000"
	# decoded from the binary plan: at most 2 pages between a page's first and last sample
	shuffle-plan -q --window 2 --subset suba -o plan a.slab
	entries plan | awk '{ print $2 }' |
		awk 'NR == FNR { page[$1] = $3; next } { p = page[$1]; if (!(p in first)) first[p] = FNR; last[p] = FNR; seq[FNR] = p }
		     END { for (i = 1; i <= FNR; i++) { if (first[seq[i]] == i) live++; if (live > most) most = live; if (last[seq[i]] == i) live-- } exit most > 2 }' \
		<(inspect --list a.slab) -
}

@test "--subset: the binary header records the subset; shuffle-plan(1)'s algorithm reproduces it byte for byte" {
	datasets
	subset_of 4 5 > sub
	{ inspect --list a.slab; inspect --list b.slab; } | cut -f2 > keys
	awk 'NR == FNR { key[FNR - 1] = $0; next } { print (FNR % 3 || $1 >= 400 ? $1 : "key:" key[$1]) }' keys sub > mixed
	n=$(wc -l < sub)
	while read -r args; do
		# shellcheck disable=SC2086
		shuffle-plan -q $args --subset mixed -o tool.plan a.slab b.slab
		# shellcheck disable=SC2086
		python3 "$PLANREF" plan $args --subset mixed --binary a.slab b.slab > ref.plan
		cmp tool.plan ref.plan
	done <<'EOF2'
--mode sequential
--mode sequential --rank 2 --world-size 3 --pad --start 4
--mode random --seed 3 --epoch 1
--mode random --rank 1 --world-size 4
--mode quasi
--mode quasi --seed 18446744073709551615 --window 1
--mode quasi --rank 3 --world-size 4 --window 7 --pad
--mode quasi --memory 24576 --seed 5 --start 9
EOF2
	shuffle-plan -q --mode quasi --seed 5 --rank 1 --world-size 2 --pad --subset sub -o plan a.slab b.slab
	run -0 decode plan
	assert_line "version: 1"
	assert_line "minor_version: 1"
	assert_line "flags: 5"
	assert_line "samples: 520"
	assert_line "subset: $n"
	assert_line "length: $(((n + 1) / 2))"
	crc=$(sort -n sub | python3 -c '
import struct, sys
sys.path.insert(0, sys.argv[1])
from planref import crc32c
v = [int(x) for x in sys.stdin]
print("%08x" % crc32c(struct.pack("<%dI" % len(v), *v)))' "$HELPERS")
	assert_line "subset_crc: $crc"
	[ "$(od -An -tu2 -j10 -N2 plan)" -eq 1 ]                # minor version
	[ "$(od -An -tu8 -j104 -N8 plan)" -eq "$n" ]            # S
	# without a subset: minor version 0 and no subset fields, as before
	shuffle-plan -q -o plain a.slab b.slab
	[ "$(od -An -tu2 -j10 -N2 plain)" -eq 0 ]
	[ "$(od -An -tx1 -j100 -N28 plain | tr -d ' \n')" = "$(printf '0%.0s' {1..56})" ]
}

@test "--subset: bad lines are usage errors naming the line" {
	datasets
	k3=$(inspect --list a.slab | sed -n 4p | cut -f2)
	while IFS='|' read -r content message; do
		printf -- "$content" > sub
		run -2 --separate-stderr shuffle-plan -o plan --subset sub a.slab b.slab
		assert_output ""
		assert_equal "${stderr_lines[0]}" "shuffle-plan: 'sub': $message"
		assert_equal "${stderr_lines[1]}" "Try 'shuffle-plan --help' for more information."
		[ ! -e plan ]
	done <<EOF2
3\n5\n3\n|line 3: sample 3 is already on line 1
3\nkey:$k3\n|line 2: key '$k3' is sample 3, already on line 1
7\n520\n|line 2: sample 520 is out of range (the dataset has 520 samples)
7\n99999999999999999999999\n|line 2: sample 99999999999999999999999 is out of range (the dataset has 520 samples)
1\n\n2\n|line 2: empty line (a sample index or key:KEY on each line)
 4\n|line 1: ' 4' is neither a sample index nor key:KEY
4 \n|line 1: '4 ' is neither a sample index nor key:KEY
-1\n|line 1: '-1' is neither a sample index nor key:KEY
0x10\n|line 1: '0x10' is neither a sample index nor key:KEY
$k3\n|line 1: '$k3' is neither a sample index nor key:KEY
key:no-such-key\n|line 1: no sample has the key 'no-such-key'
key:\n|line 1: no sample has the key ''
7\0\n|line 1: a NUL byte at byte 2 (a sample index or key:KEY on each line)
key:ab\0c\n|line 1: a NUL byte at byte 7 (a sample index or key:KEY on each line)
EOF2
	# a long line is shown by its first 80 bytes
	x80=$(printf 'x%.0s' {1..80})
	{ printf 'x%.0s' {1..5000}; echo; } > sub
	run -2 --separate-stderr shuffle-plan -o plan --subset sub a.slab b.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: 'sub': line 1: '$x80...' is neither a sample index nor key:KEY"
	{ printf 'key:'; printf 'x%.0s' {1..5000}; echo; } > sub
	run -2 --separate-stderr shuffle-plan -o plan --subset sub a.slab b.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: 'sub': line 1: no sample has the key '$x80...'"
	# standard input is named so
	run -2 --separate-stderr bash -c 'printf "1\n1\n" | shuffle-plan --format text --subset - a.slab'
	assert_equal "${stderr_lines[0]}" "shuffle-plan: '(stdin)': line 2: sample 1 is already on line 1"
	# an unreadable list is an error, an empty one an empty plan
	run -1 --separate-stderr shuffle-plan -o plan --subset missing a.slab
	[ "$stderr" = "shuffle-plan: 'missing': No such file or directory" ]
	[ ! -e plan ]
	run -2 --separate-stderr shuffle-plan -o plan --subset '' a.slab
	assert_equal "${stderr_lines[0]}" "shuffle-plan: empty --subset name (use --subset FILE, or --subset - for standard input)"
	: > empty
	run -0 --separate-stderr shuffle-plan --format text --subset empty a.slab
	assert_output ""
	[[ "$stderr" == *": 0 samples (subset 0 of dataset 400), drop-last: 0 dropped, "* ]]
	# the last line may lack its newline
	printf '9\n4' > sub
	text --mode sequential --subset sub a.slab | cmp - <(printf '0 4\n0 9\n')
}

# The list was read and then replaced by the plan, or had the plan appended to it.
@test "--subset: the plan is not written over the list it was made from" {
	datasets
	seq 0 9 > keep
	cp keep keep.orig
	run -1 --separate-stderr shuffle-plan --format text --subset keep -o keep a.slab
	assert_equal "$stderr" "shuffle-plan: 'keep': output is also an input"
	run -1 --separate-stderr sh -c 'shuffle-plan --format text --subset keep a.slab >> keep'
	assert_equal "$stderr" "shuffle-plan: 'keep': output is also an input"
	run -1 --separate-stderr sh -c 'shuffle-plan --format text --subset - a.slab < keep >> keep'
	assert_equal "$stderr" "shuffle-plan: '(stdin)': output is also an input"
	run -1 --separate-stderr sh -c 'shuffle-plan --stats --subset keep a.slab >> keep'
	assert_equal "$stderr" "shuffle-plan: 'keep': output is also an input"
	cmp keep keep.orig
	ls -A > files
	printf '%s\n' a.slab b.slab files keep keep.orig | cmp - files
}

@test "--subset: an endless line (/dev/zero, no newline) is refused after its first bytes, not read whole" {
	datasets
	# Under an address space limit (not under AddressSanitizer, whose shadow needs terabytes
	# of it): a reader that takes the whole line fails, and failing was an empty plan, exit 0.
	limit="ulimit -v 1048576;"
	grep -qa __asan_init "$SLAB_BUILD/bin/shuffle-plan" && limit=
	run -2 --separate-stderr timeout 120 bash -c "$limit exec shuffle-plan -o plan --subset /dev/zero a.slab"
	assert_equal "${stderr_lines[0]}" "shuffle-plan: '/dev/zero': line 1: a NUL byte at byte 1 (a sample index or key:KEY on each line)"
	[ ! -e plan ]
	x80=$(printf 'x%.0s' {1..80})
	one80=$(printf '1%.0s' {1..80})
	run -2 --separate-stderr timeout 120 bash -c "$limit yes x | tr -d '\n' | shuffle-plan -o plan --subset - a.slab"
	assert_equal "${stderr_lines[0]}" "shuffle-plan: '(stdin)': line 1: '$x80...' is neither a sample index nor key:KEY"
	run -2 --separate-stderr timeout 120 bash -c "$limit yes 1 | tr -d '\n' | shuffle-plan -o plan --subset - a.slab"
	assert_equal "${stderr_lines[0]}" "shuffle-plan: '(stdin)': line 1: sample $one80... is out of range (the dataset has 400 samples)"
	run -2 --separate-stderr timeout 120 bash -c "$limit { printf key:; yes x | tr -d '\n'; } | shuffle-plan -o plan --subset - a.slab"
	assert_equal "${stderr_lines[0]}" "shuffle-plan: '(stdin)': line 1: no sample has the key '$x80...'"
	[ ! -e plan ]
	# a key longer than the first 64 KiB a line is read up to still names its sample
	python3 - <<'PY'
import io, tarfile
with tarfile.open("long.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for key in ("k" * 70000, "b"):
        m = tarfile.TarInfo(key + ".txt")
        m.size = 2
        t.addfile(m, io.BytesIO(b"hi"))
PY
	pack -q -o long.slab long.tar
	{ printf 'key:'; printf 'k%.0s' {1..70000}; printf '\nkey:b\n'; } > sub
	text --mode sequential --subset sub long.slab | cmp - <(printf '0 0\n0 1\n')
}

@test "--subset: prefetch --plan emits exactly the subset's samples; slab.Loader takes the plan and subset=" {
	datasets
	subset_of 5 6 > sub
	{ inspect --list a.slab; inspect --list b.slab; } | cut -f2 > keys
	shuffle-plan -q --mode quasi --window 3 --seed 2 --subset sub -o plan a.slab b.slab
	text --mode quasi --window 3 --seed 2 --subset sub a.slab b.slab > plan.txt
	prefetch -q --plan plan --emit --emit-format raw a.slab b.slab > out.raw
	# the keys emitted are those of the subset, in plan order
	python3 - "$HELPERS" <<'PY' > emitted
import sys
sys.path.insert(0, sys.argv[1])
from frames import read_raw
for r in read_raw("out.raw"):
    print(r.file, r.index, r.key.decode() if isinstance(r.key, bytes) else r.key)
PY
	cut -d' ' -f1,2 emitted | cmp - plan.txt
	cut -d' ' -f3- emitted | sort > got_keys
	awk 'NR == FNR { key[FNR - 1] = $0; next } { print key[$1] }' keys sub | sort | cmp - got_keys
	need_libslab_any
	# slab.Loader: the plan file, and subset= by index and by key, give the same samples
	run -0 pyslab_any - "$(paste -sd, sub)" <<'PY'
import sys, slab
sub = [int(x) for x in sys.argv[1].split(",")]
keys = [l.rstrip("\n") for l in open("keys")]
want = [tuple(map(int, l.split())) for l in open("plan.txt")]
def samples(**kw):
    with slab.Loader(["a.slab", "b.slab"], batch_size=7, **kw) as ld:
        return [s for b in ld for s in b.samples]
assert samples(plan="plan") == want
assert samples(subset=sub, order="quasi", window=3, seed=2) == want
# (b.slab has keys of a.slab's: a key names the first file's sample; b.slab's go by index)
by_key = [g if g >= 400 else keys[g] if i % 2 else keys[g].encode() for i, g in enumerate(sub)]
assert samples(subset=by_key[::-1], order="quasi", window=3, seed=2) == want
assert samples(subset=[], order="quasi") == []
for bad, what in (([520], ValueError), ([1, 1], ValueError), (["no-such-key"], ValueError),
                  ([1.5], TypeError), ("123", TypeError)):
    try:
        samples(subset=bad)
    except what as e:
        print(e)
    else:
        raise SystemExit("accepted %r" % (bad,))
try:
    samples(plan="plan", subset=[1])
except ValueError as e:
    print(e)
print(len(slab.read_plan("plan")), slab.read_plan("plan") == want)
PY
	assert_line "subset[0]: sample 520 is out of range (the dataset has 520 samples)"
	assert_line "subset[1]: sample 1 is already subset[0]"
	assert_line "subset[0]: no sample has the key 'no-such-key'"
	assert_line "subset[0] must be a sample index (int) or a key (str or bytes), not 1.5"
	assert_line "subset must be a list of sample indexes and keys, not a str"
	assert_line "subset applies to a plan made here (plan=None), not to a plan file"
	assert_line "$(wc -l < sub) True"
}

@test "--subset - from a terminal is a usage error, as prefetch --plan - is; from a pipe it is read" {
	small_slab
	run -0 script -qec "shuffle-plan --subset - -o s.plan small.slab; echo rc=\$?; prefetch --plan - small.slab; echo rc=\$?" /dev/null
	assert_line --index 0 --partial "shuffle-plan: --subset - reads the list from standard input, which is a terminal"
	assert_line --partial "rc=2"
	assert_line --partial "prefetch: --plan - reads the plan from standard input, which is a terminal"
	refute_line --partial "rc=0"
	[ ! -e s.plan ]
	printf '0\n2\n' | shuffle-plan -q --mode sequential --subset - -o s.plan small.slab
	run -0 shuffle-plan -q --format text --mode sequential --subset - small.slab <<<$'0\n2'
	assert_output $'0 0\n0 2'
}
