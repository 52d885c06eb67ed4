#!/usr/bin/env bats
# bench-tlb: output shape of the table, CSV, JSON and SVG; every option; hugetlb missing is
# reported, not a crash; usage errors. Tiny runs only (256 KiB, 1 ms repetitions), and no
# test asserts a timing: the numbers depend on the machine and its load.

load test_helper/common

# The options of a run that takes well under a second.
TINY=(--max 256K --repeat 1 --min-time 1ms)

# rows: the lines of the table in $output (between its header and the blank line after it).
rows() {
	awk '/^ +size /{t=1; next} t && NF==0 {exit} t' <<<"$output"
}

# table_header: the header line of the table in $output.
table_header() {
	grep -E '^ +size ' <<<"$output"
}

# hugetlb_reserved SIZE_KB: the number of reserved huge pages of that size (0 if none).
hugetlb_reserved() {
	cat "/sys/kernel/mm/hugepages/hugepages-$1kB/nr_hugepages" 2>/dev/null || echo 0
}

@test "bench-tlb --help and --version" {
	run -0 --separate-stderr bench-tlb --help
	assert_line --index 0 "Usage: bench-tlb [OPTIONS]"
	for opt in --pattern --backing --hugetlb-size --max --steps-per-octave --min-time \
		--repeat --cpu --perf --csv --json --svg --sysfs-root --quiet --help --version; do
		assert_output --partial -- "$opt"
	done
	assert_equal "$stderr" ""
	run -0 bench-tlb --version
	assert_output --regexp '^bench-tlb \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "bench-tlb usage errors exit 2 with one line and the hint" {
	run -2 --separate-stderr bench-tlb --pattern zigzag
	assert_equal "$stderr" "bench-tlb: unknown pattern 'zigzag' (chase, page, seq)
Try 'bench-tlb --help' for more information."
	run -2 --separate-stderr bench-tlb --backing 4k,2m
	assert_equal "${stderr_lines[0]}" "bench-tlb: unknown backing '2m' in --backing (4k, thp, hugetlb)"
	run -2 --separate-stderr bench-tlb --backing ''
	assert_equal "${stderr_lines[0]}" "bench-tlb: unknown backing '' in --backing (4k, thp, hugetlb)"
	run -2 --separate-stderr bench-tlb --hugetlb-size 4M
	assert_equal "${stderr_lines[0]}" "bench-tlb: --hugetlb-size must be 2M or 1G, not '4M'"
	run -2 --separate-stderr bench-tlb --max 1K
	assert_equal "${stderr_lines[0]}" "bench-tlb: --max must be at least 4K"
	run -2 --separate-stderr bench-tlb --max 12Q
	assert_equal "${stderr_lines[0]}" "bench-tlb: invalid size '12Q' for --max"
	run -2 --separate-stderr bench-tlb --max -1
	assert_equal "${stderr_lines[0]}" "bench-tlb: invalid size '-1' for --max"
	run -2 --separate-stderr bench-tlb --steps-per-octave 0
	assert_equal "${stderr_lines[0]}" "bench-tlb: --steps-per-octave must be a number from 1 to 16, not '0'"
	run -2 --separate-stderr bench-tlb --repeat 1001
	assert_equal "${stderr_lines[0]}" "bench-tlb: --repeat must be a number from 1 to 1000, not '1001'"
	run -2 --separate-stderr bench-tlb --repeat 3x
	assert_equal "${stderr_lines[0]}" "bench-tlb: --repeat must be a number from 1 to 1000, not '3x'"
	for t in 0 0.1us 61s 5min 1.5.2ms . ''; do
		run -2 --separate-stderr bench-tlb --min-time "$t"
		assert_equal "${stderr_lines[0]}" "bench-tlb: invalid time '$t' for --min-time (such as 50ms, 0.2s or 500us; at most 60s)"
	done
	run -2 --separate-stderr bench-tlb --cpu one
	assert_equal "${stderr_lines[0]}" "bench-tlb: invalid CPU number 'one' for --cpu"
	run -2 --separate-stderr bench-tlb --cpu -1
	assert_equal "${stderr_lines[0]}" "bench-tlb: invalid CPU number '-1' for --cpu"
	run -2 --separate-stderr bench-tlb --csv --json
	assert_equal "${stderr_lines[0]}" "bench-tlb: --csv and --json exclude each other"
	run -2 --separate-stderr bench-tlb --svg ''
	assert_equal "${stderr_lines[0]}" "bench-tlb: --svg needs a file name"
	run -2 --separate-stderr bench-tlb extra
	assert_equal "$stderr" "bench-tlb: unexpected argument 'extra'
Try 'bench-tlb --help' for more information."
	run -2 --separate-stderr bench-tlb --frobnicate
	assert_equal "${stderr_lines[1]}" "Try 'bench-tlb --help' for more information."
	assert_equal "$output" ""
}

@test "a tiny run: method, backings, one row per working set, verdict" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}"
	assert_equal "$stderr" ""
	assert_line --index 0 --regexp '^method:   chase: dependent loads '
	assert_line --index 1 --regexp '^timing:   warm-up discarded, then 1 repetition of at least 1 ms each, in thread CPU time; '
	assert_line --index 2 "sizes:    4.0 KiB to 256.0 KiB, 2 per octave"
	assert_line --index 3 --regexp '^cpu:      not pinned \(--cpu N pins\)'
	assert_line --index 4 --regexp '^4k:       256\.0 KiB with MADV_NOHUGEPAGE: [0-9]+% in huge pages \(AnonHugePages\)$'
	assert_line --index 5 --regexp '^thp:      (2\.0 MiB with MADV_HUGEPAGE: [0-9]+% in huge pages|missing: )'
	assert_line --index 6 --regexp '^hugetlb:  (missing: |[0-9.]+ [KMG]iB in 2 MiB pages with MAP_HUGETLB)'
	assert_equal "$(table_header | tr -s ' ')" " size 4k ns +/-% thp ns +/-% hugetlb ns +/-% 4k/thp 4k/hugetlb"
	# 4 KiB to 256 KiB is 6 octaves: 13 working sets at 2 per octave.
	[ "$(rows | wc -l)" -eq 13 ]
	assert_equal "$(rows | awk '{print $1 " " $2}' | head -3)" "4.0 KiB
5.7 KiB
8.0 KiB"
	assert_equal "$(rows | tail -1 | awk '{print $1 " " $2}')" "256.0 KiB"
	# size (2 fields) + 3 backings x (ns, +/-%) + 2 speed-ups
	rows | awk 'NF != 10 { print "bad row: " $0; bad = 1 } END { exit bad }'
	rows | awk '$3 !~ /^[0-9]+\.[0-9][0-9]$/ || $4 !~ /^[0-9]+\.[0-9]$/ { print "bad 4k: " $0; bad = 1 } END { exit bad }'
	assert_line "verdict:"
	assert_line --regexp '^  levels of the (thp|hugetlb|4k) curve \(within 25% over an octave or more'
	assert_line --regexp '^  TLB reach: '
	assert_line --regexp '^  at 256\.0 KiB \(the largest (size|on both)\): 4k/thp = [0-9]+\.[0-9][0-9] '
}

@test "--steps-per-octave sets the number of working sets" {
	run -0 bench-tlb "${TINY[@]}" --steps-per-octave 1 --backing 4k
	assert_equal "$(rows | awk '{print $1 $2}' | tr '\n' ' ')" "4.0KiB 8.0KiB 16.0KiB 32.0KiB 64.0KiB 128.0KiB 256.0KiB "
	run -0 bench-tlb "${TINY[@]}" --steps-per-octave 4 --backing 4k
	[ "$(rows | wc -l)" -eq 25 ]
	assert_line "sizes:    4.0 KiB to 256.0 KiB, 4 per octave"
	# A --max off the grid is measured too, as the last point.
	run -0 bench-tlb --max 100K --repeat 1 --min-time 1ms --steps-per-octave 1 --backing 4k
	assert_equal "$(rows | awk '{print $1 $2}' | tr '\n' ' ')" "4.0KiB 8.0KiB 16.0KiB 32.0KiB 64.0KiB 100.0KiB "
}

@test "--backing selects the columns, in the fixed order 4k, thp, hugetlb" {
	run -0 bench-tlb "${TINY[@]}" --backing 4k
	assert_equal "$(table_header | tr -s ' ')" " size 4k ns +/-%"
	refute_line --regexp '^thp: '
	refute_line --regexp '^hugetlb: '
	rows | awk 'NF != 4 { print "bad row: " $0; bad = 1 } END { exit bad }'
	assert_line "  TLB reach: not judged without a huge-page backing"
	run -0 bench-tlb "${TINY[@]}" --backing thp,4k,thp
	assert_equal "$(table_header | tr -s ' ')" " size 4k ns +/-% thp ns +/-% 4k/thp"
	run -0 bench-tlb "${TINY[@]}" --backing thp
	assert_equal "$(table_header | tr -s ' ')" " size thp ns +/-%"
	assert_line "  TLB reach: not judged without the 4k backing"
}

@test "hugetlb without reserved pages: the column says missing and why, the run goes on" {
	[ "$(hugetlb_reserved 2048)" -eq 0 ] || skip "2 MiB huge pages are reserved on this machine"
	run -0 --separate-stderr bench-tlb "${TINY[@]}"
	assert_line "hugetlb:  missing: no 2 MiB huge pages reserved (echo N > /proc/sys/vm/nr_hugepages, or hugepages=N at boot)"
	rows | awk '$7 != "missing" || $8 != "-" || $10 != "-" { print "bad row: " $0; bad = 1 } END { exit bad }'
	run -0 bench-tlb "${TINY[@]}" --json
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
h = [b for b in d["backings"] if b["name"] == "hugetlb"][0]
assert h["status"] == "missing" and h["reason"].startswith("no 2 MiB huge pages reserved"), h
assert h["page_size"] == 2097152
assert all(p["hugetlb"] is None and p["speedup"]["hugetlb"] is None for p in d["points"])
PY
	# Only hugetlb asked for, and none to be had: nothing to measure is a failure.
	run -1 --separate-stderr bench-tlb "${TINY[@]}" --backing hugetlb
	assert_equal "$stderr" "bench-tlb: hugetlb: missing: no 2 MiB huge pages reserved (echo N > /proc/sys/vm/nr_hugepages, or hugepages=N at boot)
bench-tlb: no backing could be measured"
	assert_equal "$output" ""
}

@test "--hugetlb-size 1G without 1 GiB pages says which pages are missing" {
	[ "$(hugetlb_reserved 1048576)" -eq 0 ] || skip "1 GiB huge pages are reserved on this machine"
	run -1 --separate-stderr bench-tlb "${TINY[@]}" --backing hugetlb --hugetlb-size 1G
	assert_equal "${stderr_lines[1]}" "bench-tlb: no backing could be measured"
	if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ]; then
		assert_equal "${stderr_lines[0]}" "bench-tlb: hugetlb: missing: no 1 GiB huge pages reserved (echo N > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages, or hugepagesz=1G hugepages=N at boot)"
	else
		assert_equal "${stderr_lines[0]}" "bench-tlb: hugetlb: missing: this kernel or CPU offers no 1 GiB huge pages (no /sys/kernel/mm/hugepages/hugepages-1048576kB)"
	fi
	run -0 bench-tlb "${TINY[@]}" --hugetlb-size 1GiB --backing 4k,hugetlb
	assert_line --regexp '^hugetlb:  missing: .*1 GiB huge pages'
}

@test "--pattern page: working sets in whole pages; --pattern seq: GB/s columns" {
	run -0 bench-tlb "${TINY[@]}" --pattern page --backing 4k,thp --csv
	python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
sizes = [int(r["size"]) for r in rows]
assert sizes[0] == 4096 and sizes[-1] == 262144, sizes
assert all(s % 4096 == 0 for s in sizes), sizes
assert sizes == sorted(set(sizes)), sizes
PY
	run -0 bench-tlb "${TINY[@]}" --pattern page --backing 4k
	assert_line --index 0 --regexp '^method:   page: dependent loads along one random cycle through the 4 KiB pages'
	run -0 bench-tlb "${TINY[@]}" --pattern seq --backing 4k,thp
	assert_line --index 0 --regexp '^method:   seq: streaming reads of every 64-bit word'
	assert_equal "$(table_header | tr -s ' ')" " size 4k ns +/-% GB/s thp ns +/-% GB/s 4k/thp"
	rows | awk 'NF != 9 || $5 !~ /^[0-9]+\.[0-9]$/ { print "bad row: " $0; bad = 1 } END { exit bad }'
	assert_line --regexp '^  levels of the .* curve .*: *$'
}

@test "--csv: a header line and one row of numbers per working set" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}" --csv
	assert_line --index 0 "size,4k_ns,4k_min,4k_max,thp_ns,thp_min,thp_max,hugetlb_ns,hugetlb_min,hugetlb_max,speedup_thp,speedup_hugetlb"
	[ "${#lines[@]}" -eq 14 ]
	python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
assert len(rows) == 13
assert [int(r["size"]) for r in rows][:3] == [4096, 5824, 8192], rows[:3]
for r in rows:
    assert len(r) == 12 and None not in r, r
    lo, mid, hi = float(r["4k_min"]), float(r["4k_ns"]), float(r["4k_max"])
    assert 0 < lo <= mid <= hi, r
    assert float(r["speedup_thp"]) > 0
PY
	run -0 bench-tlb "${TINY[@]}" --csv --pattern seq --backing 4k --perf
	assert_line --index 0 "size,4k_ns,4k_min,4k_max,4k_gbps,4k_dtlb_per_access,4k_walks_per_access"
}

@test "--json: method, system, backings, points and verdict under stable keys" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}" --repeat 3 --steps-per-octave 1 --json
	assert_equal "$stderr" ""
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["tool"] == "bench-tlb"
m = d["method"]
assert m["pattern"] == "chase" and m["line_size"] == 64 and m["repeat"] == 3
assert m["min_time_s"] == 0.001 and m["steps_per_octave"] == 1
assert m["min_size"] == 4096 and m["max_size"] == 262144 and m["max_requested"] == 262144
assert m["max_capped"] is False and m["cpu"] is None
assert m["clock"] == "CLOCK_THREAD_CPUTIME_ID"
assert 0 < m["cpu_share"] <= 1
assert {"cpu_model", "thp_enabled", "thp_defrag", "caches"} <= set(d["system"])
assert [b["name"] for b in d["backings"]] == ["4k", "thp", "hugetlb"]
for b in d["backings"]:
    assert b["status"] in ("ok", "missing"), b
    if b["status"] == "ok" and b["name"] != "hugetlb":
        assert 0 <= b["huge_fraction"] <= 1 and b["bytes"] >= 262144
k4 = d["backings"][0]
assert k4["status"] == "ok" and k4["request"] == "MADV_NOHUGEPAGE" and k4["page_size"] == 4096
assert d["perf"] == {"requested": False}
pts = d["points"]
assert [p["size"] for p in pts] == [4096 << i for i in range(7)]
for p in pts:
    assert set(p) == {"size", "4k", "thp", "hugetlb", "speedup"}
    x = p["4k"]
    assert x["min"] <= x["median"] <= x["max"] and x["accesses"] > 0
    assert set(p["speedup"]) == {"thp", "hugetlb"}
v = d["verdict"]
assert v["reference"] in ("4k", "thp", "hugetlb")
for pl in v["plateaus"]:
    assert {"from", "to", "ns", "ns_min", "ns_max", "level", "cache_size"} <= set(pl)
    assert pl["from"] < pl["to"]
assert v["tlb_reach"] is None or v["tlb_reach"]["size"] in [p["size"] for p in pts]
assert set(v["speedup_at_largest"]) == {"thp", "hugetlb"}
assert v["text"] and all(isinstance(t, str) for t in v["text"])
PY
}

@test "--svg FILE: a valid SVG chart with a curve per backing, written whole" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}" --svg chart.svg
	assert_line --index 0 --regexp '^method:   chase'
	[ -s chart.svg ]
	python3 - chart.svg <<'PY'
import sys
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg"
texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
assert any(t.startswith("bench-tlb --pattern chase") for t in texts), texts[:3]
assert "4K" in texts and "256K" in texts, texts
assert any(t.startswith("4k (") for t in texts) and any(t.startswith("thp") for t in texts)
assert any(t.startswith("hugetlb") for t in texts)
assert len(root.findall("s:polyline", ns)) >= 2
assert len(root.findall("s:circle", ns)) >= 26
PY
	# Nothing but the chart is left behind.
	assert_equal "$(ls -A)" "chart.svg"
	# With --json the chart comes too; an existing file is replaced.
	run -0 bench-tlb "${TINY[@]}" --backing 4k --json --svg chart.svg
	python3 -c 'import json,sys; json.loads(sys.argv[1])' "$output"
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' chart.svg
	assert_equal "$(ls -A)" "chart.svg"
}

@test "--svg FILE with standard output unwritable: exit 1, one error, no new chart, an old one kept" {
	[ -w /dev/full ] || skip "no /dev/full"
	for opt in "" --json --csv; do
		run -1 --separate-stderr bash -c "bench-tlb ${TINY[*]} --backing 4k $opt --svg chart.svg >/dev/full"
		assert_equal "$stderr" "bench-tlb: write error: No space left on device"
		assert_equal "$(ls -A)" ""
	done
	echo old > chart.svg
	run -1 --separate-stderr bash -c "bench-tlb ${TINY[*]} --backing 4k --svg chart.svg >/dev/full"
	assert_equal "$stderr" "bench-tlb: write error: No space left on device"
	assert_equal "$(cat chart.svg)" "old"
	assert_equal "$(ls -A)" "chart.svg"
	# A reader that has gone away is no failure: the chart is written.
	rm chart.svg
	run -0 --separate-stderr bash -c "trap '' PIPE; bench-tlb ${TINY[*]} --backing 4k --svg chart.svg | true"
	assert_equal "$stderr" ""
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' chart.svg
}

@test "--svg to standard output, where the report goes, is a usage error; /dev/null for both is fine" {
	for f in - /dev/stdout; do
		run -2 --separate-stderr bench-tlb "${TINY[@]}" --json --svg "$f"
		assert_equal "$stderr" "bench-tlb: --svg '$f' is standard output, where the report goes: give another file
Try 'bench-tlb --help' for more information."
		assert_equal "$output" ""
	done
	# the file standard output is redirected to
	run -2 --separate-stderr bash -c "bench-tlb ${TINY[*]} --svg out.txt > out.txt"
	assert_equal "${stderr_lines[0]}" "bench-tlb: --svg 'out.txt' is standard output, where the report goes: give another file"
	run -0 bash -c "bench-tlb ${TINY[*]} --backing 4k --svg /dev/null > /dev/null"
	# a terminal is a character device too, but not one to draw XML on
	run -0 script -qec "bench-tlb ${TINY[*]} --svg /dev/stdout; echo rc=\$?" /dev/null
	assert_line --index 0 --partial "bench-tlb: --svg '/dev/stdout' is standard output, where the report goes: give another file"
	assert_line --partial "rc=2"
	refute_output --partial "<svg"
}

@test "--svg into a folder that does not exist fails before measuring" {
	run -1 --separate-stderr bench-tlb "${TINY[@]}" --svg nowhere/chart.svg
	assert_equal "$stderr" "bench-tlb: 'nowhere/chart.svg': cannot create a file there: No such file or directory"
	assert_equal "$output" ""
}

@test "--cpu N pins the thread; a CPU this process cannot use fails with exit 1" {
	# CPU 0 on most machines; the first one allowed where a cpuset says otherwise.
	local cpu
	cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
	run -0 bench-tlb "${TINY[@]}" --backing 4k --cpu "$cpu"
	assert_line --regexp "^cpu:      $cpu \\(pinned\\)"
	run -0 bench-tlb "${TINY[@]}" --backing 4k --cpu "$cpu" --json
	python3 -c 'import json,sys; assert json.loads(sys.argv[1])["method"]["cpu"] == int(sys.argv[2])' "$output" "$cpu"
	run -1 --separate-stderr bench-tlb "${TINY[@]}" --cpu 999
	assert_output ""
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "$stderr" "^bench-tlb: --cpu 999: not a CPU this process may run on \(allowed: [0-9,-]+\)$"
}

@test "--perf gives counts per access, or says why it cannot" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}" --perf
	assert_line --regexp '^perf:     (not available \(.+\)|dTLB-load-misses (and .+|per access; page walks not available \(.+\)))$'
	run -0 bench-tlb "${TINY[@]}" --perf --json
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
p = d["perf"]
assert p["requested"] is True and isinstance(p["available"], bool)
if p["available"]:
    assert p["reason"] is None and p["dtlb_event"] == "dTLB-load-misses"
    assert all(isinstance(pt["4k"]["dtlb_misses_per_access"], (int, float)) for pt in d["points"])
else:
    assert p["reason"], p
    assert all(pt["4k"]["dtlb_misses_per_access"] is None for pt in d["points"])
PY
}

@test "-q is silent on stderr; so is a run whose stderr is not a terminal" {
	run -0 --separate-stderr bench-tlb "${TINY[@]}" -q --backing 4k
	assert_equal "$stderr" ""
	assert_line "verdict:"
}

# ---- the hardware description from captured trees (--sysfs-root) ---------------------------

SYSFS="$SLAB_ROOT/tests/fixtures/sysfs"
# The smallest run: the description is the point, not the numbers.
MINI=(--max 16K --repeat 1 --min-time 1ms)

# system_is TREE JSON: the "system" object of --json on TREE is exactly JSON.
system_is() {
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k --json --sysfs-root "$1"
	assert_equal "$stderr" ""
	assert_equal "$(python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])["system"]))' "$output")" "$2"
}

@test "--sysfs-root: CPU model, THP setting and caches of each captured tree, in --json" {
	system_is "$SYSFS/vm-1node" '{"cpu_model": "AMD EPYC", "thp_enabled": "madvise", "thp_defrag": "madvise", "caches": [{"name": "L1d", "level": 1, "type": "Data", "size": 32768}, {"name": "L2", "level": 2, "type": "Unified", "size": 524288}, {"name": "L3", "level": 3, "type": "Unified", "size": 33554432}]}'
	system_is "$SYSFS/server-2s-8gpu" '{"cpu_model": "Intel(R) Xeon(R) Gold 6346 CPU @ 3.10GHz", "thp_enabled": "always", "thp_defrag": "madvise", "caches": [{"name": "L1d", "level": 1, "type": "Data", "size": 49152}, {"name": "L2", "level": 2, "type": "Unified", "size": 1310720}, {"name": "L3", "level": 3, "type": "Unified", "size": 37748736}]}'
	system_is "$SYSFS/cxl-memnodes" '{"cpu_model": "Intel(R) Xeon(R) Gold 6434", "thp_enabled": "never", "thp_defrag": "never", "caches": [{"name": "L1d", "level": 1, "type": "Data", "size": 49152}, {"name": "L2", "level": 2, "type": "Unified", "size": 2097152}, {"name": "L3", "level": 3, "type": "Unified", "size": 23592960}]}'
}

@test "--sysfs-root: the table names the tree's CPU, THP setting and caches" {
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k,thp --sysfs-root "$SYSFS/server-2s-8gpu"
	assert_equal "$stderr" ""
	assert_line --index 3 --regexp '^cpu:      not pinned \(--cpu N pins\), Intel\(R\) Xeon\(R\) Gold 6346 CPU @ 3\.10GHz; the thread ran [0-9]+% of the wall-clock time'
	assert_line --index 5 --regexp '^thp:      (.*; THP enabled=always, defrag=madvise|missing: .*)$'
	run -0 bench-tlb "${MINI[@]}" --backing 4k --sysfs-root "$SYSFS/vm-1node"
	assert_line "  levels of the 4k curve (within 25% over an octave or more; caches per sysfs: L1d 32.0 KiB, L2 512.0 KiB, L3 32.0 MiB):"
	run -0 bench-tlb "${MINI[@]}" --backing 4k --sysfs-root "$SYSFS/cxl-memnodes"
	assert_line "  levels of the 4k curve (within 25% over an octave or more; caches per sysfs: L1d 48.0 KiB, L2 2.0 MiB, L3 22.5 MiB):"
}

@test "--sysfs-root: a file missing from one cache leaves out that cache, not the caches after it" {
	cp -a "$SYSFS/vm-1node" tree
	rm tree/sys/devices/system/cpu/cpu0/cache/index0/type
	system_is tree '{"cpu_model": "AMD EPYC", "thp_enabled": "madvise", "thp_defrag": "madvise", "caches": [{"name": "L2", "level": 2, "type": "Unified", "size": 524288}, {"name": "L3", "level": 3, "type": "Unified", "size": 33554432}]}'
}

@test "--sysfs-root: a tree without cpuinfo, THP files or caches gives an empty description" {
	cp -a "$SYSFS/vm-1node" tree
	rm tree/proc/cpuinfo tree/sys/kernel/mm/transparent_hugepage/enabled \
		tree/sys/kernel/mm/transparent_hugepage/defrag
	rm -r tree/sys/devices/system/cpu/cpu*/cache
	system_is tree '{"cpu_model": "", "thp_enabled": "", "thp_defrag": "", "caches": []}'
	run -0 bench-tlb "${MINI[@]}" --backing 4k --sysfs-root tree
	assert_line --index 3 --regexp '^cpu:      not pinned \(--cpu N pins\); the thread ran '
	assert_line "  levels of the 4k curve (within 25% over an octave or more):"
}

@test "--sysfs-root: control characters in the CPU model and THP setting are escaped in the table" {
	cp -a "$SYSFS/vm-1node" tree
	printf 'processor\t: 0\nmodel name\t: AMD \033[31mEPYC\033]0;x\a\n' > tree/proc/cpuinfo
	printf 'always [mad\033[2Jvise] never\n' > tree/sys/kernel/mm/transparent_hugepage/enabled
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k,thp --sysfs-root tree
	assert_line --index 3 --regexp '^cpu:      not pinned \(--cpu N pins\), AMD \\x1b\[31mEPYC\\x1b\]0;x\\a; the thread ran '
	assert_line --index 5 --regexp '^thp:      (.*; THP enabled=mad\\x1b\[2Jvise, defrag=madvise|missing: .*)$'
	refute_output --partial $'\033'
	# JSON has them as they are, escaped the JSON way
	run -0 bench-tlb "${MINI[@]}" --backing 4k --json --sysfs-root tree
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["system"]["cpu_model"] == "AMD \x1b[31mEPYC\x1b]0;x\x07", d["system"]' "$output"
}

@test "--svg: a CPU model that is not UTF-8 (or U+FFFE) still gives a well-formed chart, U+FFFD in its place" {
	cp -a "$SYSFS/vm-1node" tree
	printf 'processor\t: 0\nmodel name\t: Caf\351 \377 EPYC \001\357\277\276 <&>\n' > tree/proc/cpuinfo
	run -0 bench-tlb "${MINI[@]}" --backing 4k --sysfs-root tree --svg chart.svg
	python3 - chart.svg <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
want = "Caf\ufffd \ufffd EPYC \ufffd <&>, not pinned; "
assert any(t.startswith(want) for t in texts), [t for t in texts if "EPYC" in t]
PY
}

@test "--sysfs-root: cache files, CPU model and THP settings the kernel never writes: a warning naming the file and the text, left out" {
	cp -a "$SYSFS/vm-1node" tree
	local c=tree/sys/devices/system/cpu/cpu0/cache
	echo x > $c/index0/level
	echo 512Q > $c/index2/size
	printf 'processor\t: 0\nmodel name\t:\n' > tree/proc/cpuinfo
	echo 'always madvise never' > tree/sys/kernel/mm/transparent_hugepage/enabled
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k --json --sysfs-root tree
	assert_equal "$stderr" "bench-tlb: 'tree/sys/devices/system/cpu/cpu0/cache/index0/level' holds 'x', not a cache level (1 to 9): ignored; the cache is left out
bench-tlb: 'tree/sys/devices/system/cpu/cpu0/cache/index2/size' holds '512Q', not a cache size (such as 32K): ignored; the cache is left out
bench-tlb: 'tree/proc/cpuinfo' holds 'model name\\t:', no CPU model after \"model name\": ignored; the CPU model is unknown
bench-tlb: 'tree/sys/kernel/mm/transparent_hugepage/enabled' holds 'always madvise never', not a setting (one word, or one in brackets among others): ignored; the setting is unknown"
	assert_equal "$(python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])["system"]))' "$output")" '{"cpu_model": "", "thp_enabled": "", "thp_defrag": "madvise", "caches": [{"name": "L3", "level": 3, "type": "Unified", "size": 33554432}]}'
	# -q: quiet
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k -q --sysfs-root tree
	assert_equal "$stderr" ""
}

@test "this machine's own cache files, CPU model and THP setting the kernel never writes: the same warnings (root)" {
	# this machine's files as they are: no warning
	run -0 --separate-stderr bench-tlb "${MINI[@]}" --backing 4k --json
	assert_equal "$stderr" ""
	[ "$(id -u)" = 0 ] || skip "binds files over /sys and /proc in a mount namespace: needs root"
	local c=/sys/devices/system/cpu/cpu0/cache/index0/level t=/sys/kernel/mm/transparent_hugepage/enabled
	[ -f $c ] && [ -f $t ] && [ -f /proc/cpuinfo ] || skip "no cache, THP or cpuinfo files here"
	unshare -m true 2>/dev/null || skip "no mount namespace here"
	echo x > level
	printf 'processor\t: 0\nmodel name\t:\n' > cpuinfo
	echo 'always madvise never' > enabled
	run -0 --separate-stderr timeout 120 unshare -m sh -c "mount --bind level $c && mount --bind cpuinfo /proc/cpuinfo && mount --bind enabled $t && exec bench-tlb ${MINI[*]} --backing 4k --json"
	assert_equal "$stderr" "bench-tlb: '$c' holds 'x', not a cache level (1 to 9): ignored; the cache is left out
bench-tlb: '/proc/cpuinfo' holds 'model name\\t:', no CPU model after \"model name\": ignored; the CPU model is unknown
bench-tlb: '$t' holds 'always madvise never', not a setting (one word, or one in brackets among others): ignored; the setting is unknown"
	python3 -c 'import json, sys; d = json.loads(sys.argv[1])["system"]; assert (d["cpu_model"], d["thp_enabled"]) == ("", ""), d' "$output"
}

@test "--sysfs-root that is missing, not a folder or not a sysfs tree: exit 1 before measuring" {
	run -1 --separate-stderr bench-tlb "${MINI[@]}" --sysfs-root nowhere
	assert_equal "$stderr" "bench-tlb: 'nowhere': No such file or directory"
	assert_equal "$output" ""
	touch plain
	run -1 --separate-stderr bench-tlb "${MINI[@]}" --sysfs-root plain
	assert_equal "$stderr" "bench-tlb: 'plain': Not a directory"
	mkdir empty
	run -1 --separate-stderr bench-tlb "${MINI[@]}" --json --sysfs-root empty
	assert_equal "$stderr" "bench-tlb: 'empty': not a sysfs root (no sys/devices/system)"
	assert_equal "$output" ""
	run -2 --separate-stderr bench-tlb --sysfs-root ''
	assert_equal "$stderr" "bench-tlb: --sysfs-root needs a folder
Try 'bench-tlb --help' for more information."
}

teardown() {
	memcg_remove
}

# In a container (a memory cgroup of 256 MiB here) the default --max (1G: two regions of 1 GiB
# at once) would be killed by the kernel past the cgroup's limit: capped at a quarter of what
# the cgroup allows, and the JSON says what it found.
@test "in a memory cgroup, --max is capped at a quarter of what the cgroup allows (root)" {
	memory_cgroup $((256 * 1024 * 1024))
	run -0 --separate-stderr in_memcg bench-tlb --backing 4k --min-time 1ms --repeat 1 \
		--steps-per-octave 1 --json
	run -0 python3 -c '
import json, sys
m = json.loads(sys.argv[1])["method"]
cg = m["memory_cgroup"]
assert cg["limit"] == 256 << 20, cg
assert cg["room"] == cg["limit"] - cg["usage"] and cg["usage"] > 0, cg
assert m["max_requested"] == 1 << 30 and m["max_capped"] is True, m
assert m["max_size"] <= cg["room"] // 4, (m["max_size"], cg)
print("ok")' "$output"
	assert_output ok
}
