#!/usr/bin/env bats
# prefetch with several plans (consecutive epochs in one walk) and a page cache budget
# (--memory, --cache-policy): the same samples, bytes and order as without the budget, the
# budget kept, the per-epoch lines, the usage errors; and, as root with a memory cgroup, the
# same output inside a cgroup far smaller than the dataset.

load test_helper/common

teardown() {
	memcg_remove
}

# d.slab: 400 samples of up to 9 KB a field in 16 KiB pages (9 MB); e0..e2.plan: quasi
# plans for epochs 0, 1, 2 (window 8 pages); r1.plan: a random one for epoch 1.
setup_data() {
	mktar --seed 61 --samples 400 --max-size 9000 -o d.tar
	pack -q --page-size 16K -o d.slab d.tar
	for e in 0 1 2; do
		shuffle-plan -q --mode quasi --window 8 --seed 3 --epoch $e -o e$e.plan d.slab
	done
	shuffle-plan -q --mode random --seed 3 --epoch 1 -o r1.plan d.slab
}

# The records of a raw stream, one line each (pos, file, index, key, fields and bytes' CRC).
records() {
	python3 - "$1" <<'PY'
import sys, zlib
sys.path.insert(0, __import__("os").environ["HELPERS"])
from frames import read_raw
for r in read_raw(sys.argv[1]):
    print(r.pos, r.file, r.index, r.key, sorted((n, zlib.crc32(b)) for n, b in r.fields.items()))
PY
}

@test "cache: several plans emit what the plans emit one by one, with or without a budget" {
	setup_data
	export HELPERS
	for p in e0 r1 e2; do
		prefetch -q --plan $p.plan --emit --emit-format raw d.slab > one.$p
		records one.$p
	done > want
	[ "$(wc -l < want)" -eq 1200 ]
	prefetch -q --plan e0.plan --plan r1.plan --plan e2.plan --emit --emit-format raw d.slab > none
	records none > got
	cmp want got
	for pol in belady fixed; do
		for m in 64K 300K 1M 100M; do
			prefetch -q --plan e0.plan --plan r1.plan --plan e2.plan --memory $m \
				--cache-policy $pol --ahead 2 --emit --emit-format raw d.slab > with
			cmp none with
		done
	done
	# tar too: the members of the three epochs, in order
	prefetch -q --plan e0.plan --plan e1.plan --emit d.slab > a.tar
	prefetch -q --plan e0.plan --plan e1.plan --memory 200K --emit d.slab > b.tar
	cmp a.tar b.tar
	[ "$(tar -tf a.tar | wc -l)" -eq $(( 2 * $(tar -tf d.tar | wc -l) )) ]
}

@test "cache: one line per epoch, and the budget's summary" {
	setup_data
	run -0 --separate-stderr sh -c 'prefetch -v --plan e0.plan --plan e1.plan --plan e2.plan \
		--memory 400K --emit --emit-format raw d.slab > out'
	assert_equal "${#stderr_lines[@]}" 6
	[[ ${stderr_lines[0]} =~ ^"prefetch: 'e0.plan': epoch 1 of 3: 400 samples, "[0-9.]+" "[KM]"iB in "[0-9.]+" s, "[0-9]+" samples/s, read from storage " ]]
	[[ ${stderr_lines[1]} == "prefetch: 'e1.plan': epoch 2 of 3: 400 samples, "* ]]
	[[ ${stderr_lines[2]} == "prefetch: 'e2.plan': epoch 3 of 3: 400 samples, "* ]]
	[[ ${stderr_lines[3]} == "prefetch: 3 plans: 1200 samples, "* ]]
	[[ ${stderr_lines[4]} == "prefetch: 3 plans: "*" distinct pages, "* ]]
	[[ ${stderr_lines[5]} =~ ^"prefetch: 3 plans: cache budget 400.0 KiB (belady): "[0-9]+" pages cached at the start, "[0-9]+" kept, "[0-9]+" evicted, "[0-9]+" hits, "[0-9]+" misses, at most "[0-9.]+" KiB cached"$ ]]
	# -q: none of it
	run -0 --separate-stderr sh -c 'prefetch -q --plan e0.plan --plan e1.plan --memory 400K --emit d.slab > out'
	assert_equal "$stderr" ""
}

# An epoch line came when the first sample of the next plan did: a plan with no entries (a
# resumed epoch already done, --start at its end) had none, and the lines after it named the
# wrong plans or were missing.
@test "cache: an empty plan among several has its own epoch line" {
	setup_data
	shuffle-plan -q --mode quasi --window 8 --seed 3 --epoch 1 --start 400 -o done.plan d.slab
	for emit in "" "--emit --emit-format raw" "--emit"; do
		run -0 --separate-stderr sh -c "prefetch -v --plan done.plan --plan e0.plan --plan done.plan \
			--plan done.plan --plan e2.plan --plan done.plan $emit d.slab > out"
		assert_equal "${#stderr_lines[@]}" 8
		for i in 0 2 3 5; do
			[[ ${stderr_lines[i]} == "prefetch: 'done.plan': epoch $((i + 1)) of 6: 0 samples, 0 B in "* ]] ||
				fail "$emit: line $i: ${stderr_lines[i]}"
		done
		[[ ${stderr_lines[1]} == "prefetch: 'e0.plan': epoch 2 of 6: 400 samples, "* ]] || fail "$emit: ${stderr_lines[1]}"
		[[ ${stderr_lines[4]} == "prefetch: 'e2.plan': epoch 5 of 6: 400 samples, "* ]] || fail "$emit: ${stderr_lines[4]}"
		[[ ${stderr_lines[6]} == "prefetch: 6 plans: 800 samples, "* ]] || fail "$emit: ${stderr_lines[6]}"
	done
	# plans that are all empty, under a budget
	run -0 --separate-stderr sh -c "prefetch -v --plan done.plan --plan done.plan --memory 1G d.slab > out"
	assert_equal "${stderr_lines[0]%% in *}" "prefetch: 'done.plan': epoch 1 of 2: 0 samples, 0 B"
	assert_equal "${stderr_lines[1]%% in *}" "prefetch: 'done.plan': epoch 2 of 2: 0 samples, 0 B"
}

@test "cache: Belady keeps the budget; a budget as large as the data reads each page once" {
	setup_data
	# the cached bytes (kept and in the window) never pass the budget
	for budget in 200 400 800; do
		run -0 --separate-stderr sh -c "prefetch -v --plan e0.plan --plan e1.plan --plan e2.plan \
			--memory ${budget}K --ahead 4 --emit --emit-format raw d.slab > out"
		line=${stderr_lines[5]}
		at=$(sed -n 's/.*at most \([0-9.]*\) KiB cached$/\1/p' <<< "$line")
		[ -n "$at" ] && python3 -c "import sys; sys.exit(not (float('$at') <= $budget))" ||
			fail "$budget K: $line"
		[[ $line =~ ([0-9]+)" evicted" ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "$m: nothing evicted: $line"
	done
	# everything fits: after the first epoch every page is a hit, nothing is evicted
	pages=$(prefetch -v --plan e0.plan d.slab 2>&1 | sed -n 's/.* \([0-9]*\) distinct pages.*/\1/p')
	prefetch --evict d.slab
	# (a tmpfs keeps every page whatever it is told: nothing then starts out of the cache)
	p=$(prefetch --json d.slab |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["percent"])')
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 50 else 1)' "$p" ||
		skip "the filesystem of $PWD ignores POSIX_FADV_DONTNEED ($p% still resident)"
	run -0 --separate-stderr sh -c 'prefetch -v --plan e0.plan --plan e1.plan --plan e2.plan \
		--memory 100M --emit --emit-format raw d.slab > out'
	assert_regex "${stderr_lines[5]}" ": 0 pages cached at the start, [0-9]+ kept, 0 evicted, [0-9]+ hits, $pages misses, "
	# run again at once: the pages kept are cached still and taken as kept (those more than
	# half in the cache: a page only partly read is not), so each page is one or the other
	run -0 --separate-stderr sh -c 'prefetch -v --plan e0.plan --plan e1.plan --plan e2.plan \
		--memory 100M --emit --emit-format raw d.slab > out'
	[[ ${stderr_lines[5]} =~ ": "([0-9]+)" pages cached at the start, "[0-9]+" kept, 0 evicted, "[0-9]+" hits, "([0-9]+)" misses, " ]] ||
		fail "${stderr_lines[5]}"
	[ $((BASH_REMATCH[1] + BASH_REMATCH[2])) -eq "$pages" ] && [ $((BASH_REMATCH[1] * 2)) -ge "$pages" ] ||
		fail "${stderr_lines[5]}"
}

@test "cache: usage errors" {
	setup_data
	run -2 --separate-stderr prefetch --memory 1M d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --memory goes with --plan"
	assert_equal "${stderr_lines[1]}" "Try 'prefetch --help' for more information."
	run -2 --separate-stderr prefetch --plan e0.plan --memory 0 d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --memory '0' (a size such as 4G, more than 0)"
	run -2 --separate-stderr prefetch --plan e0.plan --cache-policy belady d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --cache-policy goes with --memory or --disk"
	run -2 --separate-stderr prefetch --plan e0.plan --memory 1M --cache-policy lru d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: invalid --cache-policy 'lru' (belady or fixed)"
	run -2 --separate-stderr prefetch --plan e0.plan --memory 1M --direct d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --memory does not go with --direct (which bypasses the page cache)"
	run -2 --separate-stderr prefetch --plan e0.plan --plan e1.plan --direct d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --direct takes one --plan"
	run -2 --separate-stderr prefetch --plan e0.plan --plan - d.slab < e1.plan
	assert_equal "${stderr_lines[0]}" "prefetch: --plan - (standard input) goes alone"
	# --disk budgets the local cache of files at URLs: over local files it did nothing, exit 0
	run -2 --separate-stderr prefetch --plan e0.plan --disk 1M --emit d.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --disk goes with files at URLs (it budgets their local cache)"
	assert_equal "${stderr_lines[1]}" "Try 'prefetch --help' for more information."
	assert_output ""
	# a plan of other files is named
	small_slab
	shuffle-plan -q -o other.plan small.slab
	run -1 --separate-stderr prefetch -q --plan e0.plan --plan other.plan d.slab
	assert_equal "$stderr" "prefetch: 'other.plan': plan does not belong to these files: file 0 is not the one the plan was made for (content differs)"
}

@test "cache: the same output inside a memory cgroup a tenth of the dataset's size (root)" {
	need_memory_cgroup
	mktar --seed 62 --samples 600 --max-size 60000 -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	for e in 0 1 2; do
		shuffle-plan -q --mode quasi --window 4 --seed 5 --epoch $e -o b$e.plan big.slab
	done
	prefetch -q --plan b0.plan --plan b1.plan --plan b2.plan --emit --emit-format raw big.slab > want
	size=$(stat -c %s big.slab)
	memory_cgroup $((size / 10 + 8 * 1024 * 1024))
	prefetch --evict big.slab
	in_memcg prefetch -q --plan b0.plan --plan b1.plan --plan b2.plan --memory $((size / 10)) \
		--ahead 4 --emit --emit-format raw big.slab > got
	cmp want got
	prefetch --evict big.slab
	in_memcg prefetch -q --plan b0.plan --plan b1.plan --plan b2.plan --memory $((size / 10)) \
		--cache-policy fixed --emit --emit-format raw big.slab > got
	cmp want got
}
