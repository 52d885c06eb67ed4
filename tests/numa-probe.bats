#!/usr/bin/env bats
# numa-probe: exact text and JSON on hand-made and captured sysfs trees (tests/fixtures/sysfs),
# advice and warnings, missing files, symlinks that try to leave the root, usage errors, and
# the shape (never the timings) of --measure on this machine.

load test_helper/common

FIXTURES="$SLAB_ROOT/tests/fixtures"
SYSFS="$FIXTURES/sysfs"
EXPECTED="$FIXTURES/expected"

# probe_matches NAME [--json]: output on tree NAME is expected/numa-probe-NAME.{txt,json}.
probe_matches() {
	local name=$1 ext=txt
	[ "${2:-}" = --json ] && ext=json
	run -0 --separate-stderr numa-probe ${2:-} --sysfs-root "$SYSFS/$name"
	[ -z "$stderr" ] || fail "stderr: $stderr"
	printf '%s\n' "$output" > got
	diff -u "$EXPECTED/numa-probe-$name.$ext" got || fail "numa-probe on $name differs"
}

# jcheck DIR PYTHON: run PYTHON with d = the parsed --json output on the tree in DIR.
jcheck() {
	numa-probe --json --sysfs-root "$1" > out.json
	python3 -c "import json; d = json.load(open('out.json'))
$2"
}

@test "numa-probe --help and --version" {
	run -0 --separate-stderr numa-probe --help
	assert_line --index 0 "Usage: numa-probe [--json] [--sysfs-root DIR]"
	assert_line --index 1 "       numa-probe --measure [--size SIZE] [--repeat N]"
	assert_line --index 2 "                  [--threads N] [--json]"
	assert_output --partial "--sysfs-root DIR"
	run -0 numa-probe --version
	assert_output --regexp '^numa-probe \(slab\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "usage errors exit 2 with one line and the --help hint" {
	run -2 --separate-stderr numa-probe extra
	assert_equal "$stderr" "numa-probe: unexpected argument 'extra'
Try 'numa-probe --help' for more information."
	run -2 --separate-stderr numa-probe --size 1M
	assert_equal "${stderr_lines[0]}" "numa-probe: --size, --repeat and --threads go with --measure"
	run -2 --separate-stderr numa-probe --measure --size 12Q
	assert_equal "${stderr_lines[0]}" "numa-probe: invalid --size '12Q' (64K to 256G)"
	run -2 --separate-stderr numa-probe --measure --size 4K
	assert_equal "${stderr_lines[0]}" "numa-probe: invalid --size '4K' (64K to 256G)"
	run -2 --separate-stderr numa-probe --measure --repeat 0
	assert_equal "${stderr_lines[0]}" "numa-probe: invalid --repeat '0' (1 to 1000)"
	run -2 --separate-stderr numa-probe --measure --threads -3
	assert_equal "${stderr_lines[0]}" "numa-probe: invalid --threads '-3' (1 to 4096)"
	run -2 --separate-stderr numa-probe --measure --size 64K --threads 64
	assert_equal "${stderr_lines[0]}" "numa-probe: --size 64K is too small for 64 threads: 4K each, 256.0 KiB in all"
	run -2 --separate-stderr numa-probe --measure --sysfs-root "$SYSFS/vm-1node"
	assert_equal "${stderr_lines[0]}" "numa-probe: --measure measures this machine: it does not go with --sysfs-root"
	run -2 --separate-stderr numa-probe --frobnicate
	assert_equal "${stderr_lines[1]}" "Try 'numa-probe --help' for more information."
}

@test "a full disk on standard output: one write error with its reason, exit 1, text and JSON" {
	[ -w /dev/full ] || skip "no /dev/full"
	for opt in "" --json; do
		run -1 --separate-stderr bash -c "numa-probe --sysfs-root '$SYSFS/vm-1node' $opt >/dev/full"
		assert_equal "$stderr" "numa-probe: write error: No space left on device"
	done
}

@test "a --sysfs-root that is missing, not a folder or not a sysfs tree fails with exit 1" {
	run -1 --separate-stderr numa-probe --sysfs-root nowhere
	assert_equal "$stderr" "numa-probe: 'nowhere': No such file or directory"
	assert_equal "$output" ""
	touch plain
	run -1 --separate-stderr numa-probe --sysfs-root plain
	assert_equal "$stderr" "numa-probe: 'plain': Not a directory"
	mkdir empty
	run -1 --separate-stderr numa-probe --json --sysfs-root empty
	assert_equal "$stderr" "numa-probe: 'empty': not a sysfs root (no sys/devices/system)"
	assert_equal "$output" ""
}

# scripts/capture-sysfs (installed as slab-capture-sysfs): a tree captured from each fixture,
# and from this machine, reads as what it was captured from.
@test "capture-sysfs: a captured tree gives numa-probe's very output; usage" {
	local cap="$SLAB_ROOT/scripts/capture-sysfs" t
	for t in vm-1node server-2s-8gpu cxl-memnodes; do
		"$cap" "cap-$t" "$SYSFS/$t"
		numa-probe --json --sysfs-root "$SYSFS/$t" > want.json
		numa-probe --json --sysfs-root "cap-$t" > got.json
		cmp want.json got.json
		numa-probe --sysfs-root "cap-$t" > got.txt
		diff -u "$EXPECTED/numa-probe-$t.txt" got.txt
	done
	"$cap" here
	# (free memory moves between the two runs)
	diff -u <(numa-probe --json | grep -v '"memory_free_bytes"') \
		<(numa-probe --json --sysfs-root here | grep -v '"memory_free_bytes"')
	! grep -rqiE 'serial|uuid' here || fail "a serial number or UUID was copied"
	run -1 --separate-stderr "$cap" here
	assert_equal "$stderr" "capture-sysfs: 'here': exists and is not empty"
	run -2 --separate-stderr "$cap"
	assert_equal "$stderr" "Usage: capture-sysfs DEST [ROOT]"
	run -0 "$cap" --help
	assert_line --index 0 "Usage: capture-sysfs DEST [ROOT]"
	# an unknown option is a usage error, before or after the operands, and makes nothing;
	# after --, a name beginning with - is a DEST
	run -2 --separate-stderr "$cap" --bogus new
	assert_equal "$stderr" "capture-sysfs: unknown option '--bogus'
Usage: capture-sysfs DEST [ROOT]"
	run -2 --separate-stderr "$cap" new -x
	assert_equal "$stderr" "capture-sysfs: unknown option '-x'
Usage: capture-sysfs DEST [ROOT]"
	[ ! -e new ] && [ ! -e ./--bogus ] && [ ! -e ./-x ]
	"$cap" -- -x "$SYSFS/vm-1node"
	numa-probe --json --sysfs-root "$SYSFS/vm-1node" > want.json
	numa-probe --json --sysfs-root ./-x > got.json
	cmp want.json got.json
}

@test "capture-sysfs: a ROOT that is missing or holds no sys/devices/system fails with exit 1 and writes nothing" {
	local cap="$SLAB_ROOT/scripts/capture-sysfs"
	run -1 --separate-stderr "$cap" out nowhere
	assert_equal "$stderr" "capture-sysfs: 'nowhere': not a sysfs root (no sys/devices/system)"
	mkdir -p notsys/sys
	run -1 --separate-stderr "$cap" out notsys/
	assert_equal "$stderr" "capture-sysfs: 'notsys/': not a sysfs root (no sys/devices/system)"
	# the ROOT named is the one given, wherever the options were
	run -1 --separate-stderr "$cap" -- out -r
	assert_equal "$stderr" "capture-sysfs: '-r': not a sysfs root (no sys/devices/system)"
	[ ! -e out ] || fail "a tree was written"
}

@test "capture-sysfs: a file that cannot be written fails naming it, and leaves no capture behind" {
	local cap="$SLAB_ROOT/scripts/capture-sysfs" i
	mkdir -p root/sys/devices/system root/proc
	for i in $(seq 0 999); do
		printf 'processor\t: %d\nmodel name\t: Some CPU\n\n' "$i"
	done > root/proc/cpuinfo
	# a file-size limit of 8 KiB (SIGXFSZ ignored: a write error, as a full disk's) that the
	# kept lines of cpuinfo pass: never a shorter copy and exit 0
	run -1 --separate-stderr bash -c "trap '' XFSZ; ulimit -f 8; exec '$cap' out root"
	assert_equal "$stderr" "capture-sysfs: 'out/proc/cpuinfo': File too large"
	[ ! -e out ] || fail "a half capture was left"
	# an empty DEST stays, empty
	mkdir empty
	run -1 --separate-stderr bash -c "trap '' XFSZ; ulimit -f 8; exec '$cap' empty/ root"
	assert_equal "$stderr" "capture-sysfs: 'empty/proc/cpuinfo': File too large"
	run -0 ls -A . empty
	assert_output ".:
empty
root

empty:"
}

@test "capture-sysfs: SIGTERM mid-capture leaves no DEST and no temporary folder, and ends by SIGTERM" {
	local cap="$SLAB_ROOT/scripts/capture-sysfs"
	# the signal comes when the capture reaches its first grep, after some files were copied
	mkdir bin
	printf '#!/bin/sh\nkill -TERM "$CAPTURE_PID"\nexec %s "$@"\n' "$(command -v grep)" > bin/grep
	chmod +x bin/grep
	run -143 bash -c "export CAPTURE_PID=\$\$ PATH='$PWD/bin':\$PATH; exec '$cap' out '$SYSFS/vm-1node'"
	run -0 ls -A
	assert_output "bin"
}

@test "capture-sysfs: a DEST that is a file, even an empty one, is refused as not a folder" {
	local cap="$SLAB_ROOT/scripts/capture-sysfs" f
	: > empty
	echo x > full
	for f in empty full; do
		run -1 --separate-stderr "$cap" $f "$SYSFS/vm-1node"
		assert_equal "$stderr" "capture-sysfs: '$f': exists and is not a folder"
	done
	assert_equal "$(cat full)" x
}

@test "vm-1node (captured from this kind of VM): exact text and JSON" {
	probe_matches vm-1node
	probe_matches vm-1node --json
}

@test "server-2s-8gpu: exact text and JSON" {
	probe_matches server-2s-8gpu
	probe_matches server-2s-8gpu --json
}

@test "cxl-memnodes: exact text and JSON" {
	probe_matches cxl-memnodes
	probe_matches cxl-memnodes --json
}

@test "vm-1node: one node, the virtio NIC with numa_node -1, no GPU, no huge pages" {
	run -0 numa-probe --sysfs-root "$SYSFS/vm-1node"
	assert_line --regexp '^  0     0-1   [0-9.]+ GiB +[0-9.]+ GiB +cpus\+memory$'
	assert_line "  0000:00:03.0  ethernet  1af4:1041  virtio-pci  -1    -     -    -     eth0"
	assert_line "  no GPU or accelerator found: no loader binding to suggest"
	assert_line "  note: no huge pages reserved on any node (2 MiB or 1 GiB): hugetlbfs and MAP_HUGETLB get none; transparent huge pages do not need them"
	refute_output --partial "warning:"
	jcheck "$SYSFS/vm-1node" '
assert len(d["nodes"]) == 1 and d["nodes"][0]["distances"] == [10]
assert d["cpu"] == {"model": "AMD EPYC", "online": "0-1", "count": 2, "sockets": 1, "cores": 2, "threads_per_core": 1}
assert [c["name"] for c in d["caches"]] == ["L1d", "L1i", "L2", "L3"]
assert d["caches"][3]["size_bytes"] == 32 << 20 and d["caches"][3]["cpus_each"] == 2
(nic,) = d["pci_devices"]
assert nic["numa_node"] == -1 and nic["link"] is None and nic["names"] == ["eth0"]
assert d["advice"] == [] and [w["code"] for w in d["warnings"]] == ["no_hugepages"]
assert d["transparent_hugepage"] == {"enabled": "madvise", "defrag": "madvise"}
assert "measurements" not in d
'
}

@test "server-2s-8gpu: a numactl prefix per GPU on its own node, the downgraded link flagged" {
	run -0 numa-probe --sysfs-root "$SYSFS/server-2s-8gpu"
	assert_line "  0000:17:00.0 gpu nvidia0, node 0: numactl --cpunodebind=0 --membind=0"
	assert_line "  0000:e3:00.0 gpu nvidia7, node 1: numactl --cpunodebind=1 --membind=1"
	assert_line "    CPUs 16-31,48-63; NVMe on node 1: nvme2n1 nvme3n1; network on node 1: mlx5_2 ib1"
	assert_line "  0000:b1:00.0  gpu         10de:20b5  nvidia     1     Gen3x16  Gen4x16  15.8  nvidia5              DOWNGRADED"
	assert_line "  warning: gpu 0000:b1:00.0 (nvidia5): link runs at 8.0 GT/s x16 (Gen3, 15.8 GB/s), below its maximum 16.0 GT/s x16 (Gen4, 31.5 GB/s); GPUs slow their links when idle: check again under load"
	assert_line "  note: huge pages are reserved on node 0 only: a loader bound to node 1 gets none there"
	assert_line "  note: GPUs on node 0 (nvidia0 nvidia1 nvidia2 nvidia3): NVMe on that node (nvme0n1 nvme1n1) and on node 1 (nvme2n1 nvme3n1): keep each GPU's data on drives of its node"
	# the BMC's display gets no advice; bridges and the per-path nvme0c0n1 are not shown
	refute_line --partial "0000:03:00.0 display"
	refute_output --partial "0000:16:00.0"
	refute_output --partial "nvme0c0n1"
	assert_equal "$(grep -c DOWNGRADED <<<"$output")" 1
	jcheck "$SYSFS/server-2s-8gpu" '
gpus = [p for p in d["pci_devices"] if p["kind"] == "gpu"]
assert len(gpus) == 8 and [p["numa_node"] for p in gpus] == [0] * 4 + [1] * 4
assert [p["address"] for p in gpus if p["link"]["downgraded"]] == ["0000:b1:00.0"]
b1 = [p for p in gpus if p["address"] == "0000:b1:00.0"][0]["link"]
assert b1["current"] == {"gt_s": 8, "width": 16, "generation": 3, "gb_per_s": 15.76}
assert b1["max"] == {"gt_s": 16, "width": 16, "generation": 4, "gb_per_s": 31.504}
assert [a["numactl"] for a in d["advice"]] == ["numactl --cpunodebind=0 --membind=0"] * 4 + ["numactl --cpunodebind=1 --membind=1"] * 4
assert d["advice"][0]["cpus"] == "0-15,32-47" and d["advice"][0]["nvme"] == ["nvme0n1", "nvme1n1"]
assert {p["kind"] for p in d["pci_devices"]} == {"gpu", "display", "nvme", "ethernet", "infiniband"}
assert d["nodes"][0]["hugepages_2m"] == {"reserved": 1024, "free": 1000}
assert d["nodes"][1]["hugepages_2m"] == {"reserved": 0, "free": 0}
assert d["cpu"]["sockets"] == 2 and d["cpu"]["cores"] == 32 and d["cpu"]["threads_per_core"] == 2
assert [w["code"] for w in d["warnings"]] == ["gpu_nvme_split", "gpu_nvme_split", "link_downgraded", "hugepages_uneven"]
'
}

@test "cxl-memnodes: memory-only nodes, a GPU with no NVMe on its node, a NIC without a node, THP off" {
	run -0 numa-probe --sysfs-root "$SYSFS/cxl-memnodes"
	assert_line "  2     -     256.0 GiB  256.0 GiB  memory-only"
	assert_line "  3     24  14  26  10"
	assert_line "  0000:38:00.0 accelerator, node 0: numactl --cpunodebind=0 --membind=0"
	assert_line "  0000:b8:00.0 gpu card1, node 1: numactl --cpunodebind=1 --membind=1"
	assert_line "  warning: GPU on node 1 (card1): no NVMe drive on that node, only on node 0 (nvme0n1): data read from those crosses between nodes on its way"
	assert_line "  warning: the kernel does not know the NUMA node of 0000:6a:00.0 (ens801f0): numa_node is -1, the firmware does not give it"
	assert_line "  warning: transparent huge pages are off (never): datasets mapped and buffers allocated get 4 KiB pages only, and TLB misses cost more"
	assert_line "  note: nodes 2, 3 have memory but no CPUs (CXL or other far memory, distance 14-24 from the CPU nodes): --membind to a CPU node keeps a loader's buffers off them"
	refute_output --partial "0000:e0:00.0"          # the CXL memory device itself
	refute_output --partial "renderD128"
	jcheck "$SYSFS/cxl-memnodes" '
assert [n["cpu_count"] for n in d["nodes"]] == [4, 4, 0, 0]
assert [n["cpus"] for n in d["nodes"]] == ["0-3", "4-7", "", ""]
assert [n["distances"] for n in d["nodes"]] == [[10, 21, 14, 24], [21, 10, 24, 14], [14, 24, 10, 26], [24, 14, 26, 10]]
assert [n["memory_bytes"] for n in d["nodes"]] == [128 << 30, 128 << 30, 256 << 30, 256 << 30]
assert [n["hugepages_1g"]["reserved"] for n in d["nodes"]] == [16, 16, 0, 0]
assert [(a["device"], a["kind"], a["cpu_node"], a["memory_node"]) for a in d["advice"]] == [("0000:38:00.0", "accelerator", 0, 0), ("0000:b8:00.0", "gpu", 1, 1)]
assert d["advice"][1]["nvme"] == [] and d["advice"][0]["nvme"] == ["nvme0n1"]
assert [w["code"] for w in d["warnings"]] == ["gpu_nvme_remote", "device_node_unknown", "thp_never", "memory_only_nodes"]
assert [w["level"] for w in d["warnings"]] == ["warning", "warning", "warning", "note"]
assert d["transparent_hugepage"]["enabled"] == "never"
'
}

@test "a GPU whose node is unknown on a multi-node machine: no binding, interleave suggested" {
	cp -a "$SYSFS/cxl-memnodes" tree
	echo -1 > "tree/sys/bus/pci/devices/0000:b8:00.0/numa_node"
	run -0 numa-probe --sysfs-root tree
	assert_line "  0000:b8:00.0 gpu card1, node -1: numactl --cpunodebind=all --interleave=all"
	assert_line "    the kernel does not know this device's node: no binding to suggest"
	assert_line "  warning: gpu 0000:b8:00.0 (card1): the kernel does not know its NUMA node (numa_node -1): no binding to suggest; numactl --cpunodebind=all --interleave=all spreads the cost"
	refute_line --partial "warning: GPU on node 1"
	# a node the tree has no folder for (offline, or a capture that lost it)
	echo 5 > "tree/sys/bus/pci/devices/0000:b8:00.0/numa_node"
	run -0 numa-probe --sysfs-root tree
	assert_line "  0000:b8:00.0 gpu card1, node 5: numactl --cpunodebind=all --interleave=all"
	assert_line "  warning: gpu 0000:b8:00.0 (card1): the kernel does not know its NUMA node (numa_node 5, which is not a node): no binding to suggest; numactl --cpunodebind=all --interleave=all spreads the cost"
}

@test "a GPU on a memory-only node: CPUs and memory of the nearest node with CPUs" {
	cp -a "$SYSFS/cxl-memnodes" tree
	echo 3 > "tree/sys/bus/pci/devices/0000:b8:00.0/numa_node"
	run -0 numa-probe --sysfs-root tree
	assert_line "  0000:b8:00.0 gpu card1, node 3: numactl --cpunodebind=1 --membind=1"
	assert_line "    nearest to node 3: CPUs 4-7; NVMe on node 1: none; network on node 1: none"
	jcheck tree '
a = d["advice"][1]
assert (a["numa_node"], a["cpu_node"], a["memory_node"], a["cpus"]) == (3, 1, 1, "4-7")
'
}

@test "a GPU on a memory-only node whose distance row is missing or junk: the nearest node from the other rows" {
	cp -a "$SYSFS/cxl-memnodes" tree
	echo 3 > "tree/sys/bus/pci/devices/0000:b8:00.0/numa_node"
	local row=tree/sys/devices/system/node/node3/distance how
	for how in missing junk; do
		if [ $how = missing ]; then rm -f $row; else echo '24 x 26 10' > $row; fi
		run -0 --separate-stderr numa-probe --sysfs-root tree
		assert_line "  0000:b8:00.0 gpu card1, node 3: numactl --cpunodebind=1 --membind=1"
		assert_line "    nearest to node 3: CPUs 4-7; NVMe on node 1: none; network on node 1: none"
		assert_line --partial "note: nodes 2, 3 have memory but no CPUs (CXL or other far memory, distance 14-24 from the CPU nodes)"
	done
}

@test "missing files are normal: unknown fields, never a failure" {
	cp -a "$SYSFS/cxl-memnodes" tree
	rm tree/proc/cpuinfo tree/sys/kernel/mm/transparent_hugepage/enabled
	rm -r tree/sys/devices/system/cpu/cpu*/cache
	rm tree/sys/devices/system/node/node1/meminfo tree/sys/devices/system/node/node1/distance
	rm -r tree/sys/devices/system/node/node1/hugepages
	rm "tree/sys/bus/pci/devices/0000:b8:00.0/"{numa_node,max_link_speed,driver}
	rm "tree/sys/bus/pci/devices/0000:38:00.0/class"
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ]
	assert_line "  model:    unknown"
	assert_line "  1     4-7   -          -          cpus"
	assert_line "  1      -   -   -   -"
	assert_line "  1               -        -            -        -"
	assert_line "  transparent huge pages: unknown (defrag: never)"
	assert_line "  0000:b8:00.0  gpu       1002:740f  -       -     Gen4x16  ?x16     31.5  card1"
	refute_output --partial "0000:38:00.0"
	assert_output --partial "$(printf 'Caches\n  unknown\n')"
	# node 1's huge pages are unknown: not "reserved on node 0 only"
	refute_output --partial "reserved on node"
	# -v names each file it could not read, on stderr
	run -0 --separate-stderr numa-probe -v --sysfs-root tree
	grep -qxF "numa-probe: 'tree/proc/cpuinfo': No such file or directory" <<<"$stderr"
	grep -qxF "numa-probe: 'tree/sys/bus/pci/devices/0000:b8:00.0/numa_node': No such file or directory" <<<"$stderr"
	# the warning says the file is missing, not that it says -1
	assert_line "  warning: gpu 0000:b8:00.0 (card1): the kernel does not know its NUMA node (no numa_node file): no binding to suggest; numactl --cpunodebind=all --interleave=all spreads the cost"
	jcheck tree '
gpu = [p for p in d["pci_devices"] if p["address"] == "0000:b8:00.0"][0]
assert gpu["numa_node"] is None and gpu["driver"] is None
assert gpu["link"]["max"] == {"gt_s": None, "width": 16, "generation": None, "gb_per_s": None}
assert gpu["link"]["downgraded"] is False
assert d["cpu"]["model"] is None and d["caches"] == []
assert d["nodes"][1]["memory_bytes"] is None and d["nodes"][1]["distances"] == [None] * 4
assert d["nodes"][1]["hugepages_2m"] == {"reserved": None, "free": None}
assert d["transparent_hugepage"]["enabled"] is None
assert [w["code"] for w in d["warnings"]] == ["gpu_node_unknown", "device_node_unknown", "memory_only_nodes"]
'
}

@test "a FIFO or a folder in place of a file: unknown, read from never (no hang), named by -v" {
	cp -a "$SYSFS/cxl-memnodes" tree
	# A writer waiting on the FIFO gave the old code a model name to read; a FIFO is no
	# attribute: its open must not wait, nor its reads.
	rm tree/proc/cpuinfo
	mkfifo tree/proc/cpuinfo
	printf 'model name\t: from a FIFO\n' > tree/proc/cpuinfo &
	run -0 --separate-stderr numa-probe --sysfs-root tree
	kill $! 2>/dev/null || true
	wait $! 2>/dev/null || true
	assert_line "  model:    unknown"
	# FIFOs nobody writes to (the open of one blocked for ever), a folder for a file
	for f in sys/devices/system/cpu/online sys/devices/system/node/node1/meminfo \
		"sys/bus/pci/devices/0000:b8:00.0/class"; do
		rm "tree/$f"
		mkfifo "tree/$f"
	done
	rm tree/sys/kernel/mm/transparent_hugepage/enabled
	mkdir tree/sys/kernel/mm/transparent_hugepage/enabled
	run -0 --separate-stderr numa-probe -v --sysfs-root tree
	assert_line "  1     4-7   -          -          cpus"
	assert_line "  transparent huge pages: unknown (defrag: never)"
	refute_output --partial "0000:b8:00.0"
	grep -qxF "numa-probe: 'tree/proc/cpuinfo': not a regular file" <<<"$stderr"
	grep -qxF "numa-probe: 'tree/sys/devices/system/cpu/online': not a regular file" <<<"$stderr"
	grep -qxF "numa-probe: 'tree/sys/bus/pci/devices/0000:b8:00.0/class': not a regular file" <<<"$stderr"
	grep -qxF "numa-probe: 'tree/sys/kernel/mm/transparent_hugepage/enabled': Is a directory" <<<"$stderr"
	jcheck tree '
assert d["cpu"]["model"] is None and d["nodes"][1]["memory_bytes"] is None
assert d["cpu"]["count"] == 8 and d["transparent_hugepage"]["enabled"] is None
'
}

@test "CPU lists the kernel never writes: a warning naming the file and the text, then ignored" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local s=tree/sys/devices/system
	echo '0-3,5,7-' > $s/cpu/online
	echo 7-4 > $s/node/node1/cpulist
	echo a > $s/cpu/cpu2/topology/thread_siblings_list
	echo '0,,1' > $s/cpu/cpu1/cache/index3/shared_cpu_list
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/devices/system/cpu/online' holds '0-3,5,7-', not a CPU list: ignored; the cpuN folders name the CPUs instead"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu1/cache/index3/shared_cpu_list' holds '0,,1', not a CPU list: ignored; CPU 1 is taken to have the cache alone"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu2/topology/thread_siblings_list' holds 'a', not a CPU list: ignored; cores and threads are counted without it"
	assert_line "  warning: 'tree/sys/devices/system/node/node1/cpulist' holds '7-4', not a CPU list: ignored; node 1 is taken to have no CPUs"
	assert_line "  cpus:     8"
	assert_line "  1     -     128.0 GiB  110.0 GiB  memory-only"
	jcheck tree '
w = [x for x in d["warnings"] if x["code"] == "sysfs_invalid"]
assert len(w) == 4 and all(x["level"] == "warning" for x in w), w
assert d["cpu"]["online"] == "" and d["cpu"]["count"] == 8
assert d["nodes"][1]["cpus"] == "" and d["nodes"][1]["cpu_count"] == 0
'
	# blanks inside, a trailing comma, a range missing its start
	for bad in '0, 1' '0-7,' '-3' '0--3' '0:7' '1 2'; do
		printf '%s\n' "$bad" > $s/cpu/online
		run -0 numa-probe --sysfs-root tree
		assert_line "  warning: 'tree/sys/devices/system/cpu/online' holds '$bad', not a CPU list: ignored; the cpuN folders name the CPUs instead"
	done
	# a good list with the kernel's newline, and an empty one (a node without CPUs), are fine
	echo 0-7 > $s/cpu/online
	printf '\n' > $s/node/node1/cpulist
	run -0 numa-probe --sysfs-root tree
	assert_line "  cpus:     8 online (0-7)"
	refute_line --partial "tree/sys/devices/system/cpu/online"
	refute_line --partial "node1/cpulist"
	# a long text is quoted by its start only
	printf '0-1%s\n' "$(printf 'x%.0s' {1..200})" > $s/cpu/online
	run -0 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/devices/system/cpu/online' holds '0-1$(printf 'x%.0s' {1..61})...', not a CPU list: ignored; the cpuN folders name the CPUs instead"
}

@test "a CPU list of a million CPUs is refused at once, not read CPU by CPU" {
	cp -a "$SYSFS/cxl-memnodes" tree
	echo 0-1048575 > tree/sys/devices/system/cpu/online
	echo 4-7,8-1048575 > tree/sys/devices/system/node/node1/cpulist
	run -0 --separate-stderr timeout 120 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/devices/system/cpu/online' holds '0-1048575', more CPUs than a kernel has (ids 0 to 65535): ignored; the cpuN folders name the CPUs instead"
	assert_line "  warning: 'tree/sys/devices/system/node/node1/cpulist' holds '4-7,8-1048575', more CPUs than a kernel has (ids 0 to 65535): ignored; node 1 is taken to have no CPUs"
	assert_line "  cpus:     8"
	# a number past any integer type is the same, not an overflow into a small one
	echo 0-18446744073709551620 > tree/sys/devices/system/cpu/online
	run -0 timeout 120 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/devices/system/cpu/online' holds '0-18446744073709551620', more CPUs than a kernel has (ids 0 to 65535): ignored; the cpuN folders name the CPUs instead"
	assert_line "  cpus:     8"
}

@test "a CPU list longer than a page (a big machine's, every other CPU) is read whole" {
	cp -a "$SYSFS/vm-1node" tree
	python3 -c 'print(",".join(str(i) for i in range(0, 2048, 2)))' > tree/sys/devices/system/node/node0/cpulist
	python3 -c 'print(",".join(str(i) for i in range(0, 4096, 2)))' > tree/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list
	run -0 --separate-stderr numa-probe --sysfs-root tree
	assert_line "  L3     32.0 MiB       2       2048"
	refute_output --partial "warning:"
	jcheck tree '
n = d["nodes"][0]
assert n["cpu_count"] == 1024 and n["cpus"] == ",".join(str(i) for i in range(0, 2048, 2))
'
}

@test "node folders named as the kernel never does (node01 beside node1, node5000): warned, ignored" {
	cp -a "$SYSFS/cxl-memnodes" tree
	cp -a tree/sys/devices/system/node/node1 tree/sys/devices/system/node/node01
	mkdir tree/sys/devices/system/node/node5000
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/devices/system/node/node01': not a folder name the kernel writes (node0 to node1023, no leading zero): ignored"
	assert_line "  warning: 'tree/sys/devices/system/node/node5000': not a folder name the kernel writes (node0 to node1023, no leading zero): ignored"
	assert_line "  node   0   1   2   3"
	jcheck tree '
assert [n["id"] for n in d["nodes"]] == [0, 1, 2, 3]
assert [len(n["distances"]) for n in d["nodes"]] == [4] * 4
'
	# the cpuN folders (read without an online file) likewise
	rm tree/sys/devices/system/cpu/online
	cp -a tree/sys/devices/system/cpu/cpu1 tree/sys/devices/system/cpu/cpu01
	run -0 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu01': not a folder name the kernel writes (cpu0 to cpu65535, no leading zero): ignored"
	assert_line "  cpus:     8"
}

@test "cache files the kernel never writes (level, type, size): a warning naming the file and the text, the cache left out" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local c=tree/sys/devices/system/cpu
	echo x > $c/cpu0/cache/index0/level
	echo 0 > $c/cpu4/cache/index0/level
	echo Weird > $c/cpu1/cache/index1/type
	echo 48Q > $c/cpu2/cache/index0/size
	echo '48K 12' > $c/cpu3/cache/index0/size
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu0/cache/index0/level' holds 'x', not a cache level (1 to 9): ignored; the cache is left out"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu4/cache/index0/level' holds '0', not a cache level (1 to 9): ignored; the cache is left out"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu1/cache/index1/type' holds 'Weird', not a cache type (Data, Instruction or Unified): ignored; the cache is left out"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu2/cache/index0/size' holds '48Q', not a cache size (such as 32K): ignored; the cache is left out"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu3/cache/index0/size' holds '48K 12', not a cache size (such as 32K): ignored; the cache is left out"
	assert_line "  L1d    48.0 KiB      4          1"
	assert_line "  L1i    32.0 KiB      7          1"
	jcheck tree '
w = [x for x in d["warnings"] if x["code"] == "sysfs_invalid"]
assert len(w) == 5 and all(x["level"] == "warning" for x in w), w
'
}

@test "a PCI device's numa_node or class the kernel never writes: a warning naming the file and the text, the node unknown" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local p=tree/sys/bus/pci/devices
	echo abc > $p/0000:38:00.0/numa_node
	echo -7 > $p/0000:17:00.0/numa_node
	echo 99999999999 > $p/0000:b8:00.0/numa_node
	echo 0x12zz00 > $p/0000:6a:00.0/class
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:38:00.0/numa_node' holds 'abc', not a NUMA node (-1, or 0 to 1023): ignored; the device's node is unknown"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:17:00.0/numa_node' holds '-7', not a NUMA node (-1, or 0 to 1023): ignored; the device's node is unknown"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:b8:00.0/numa_node' holds '99999999999', not a NUMA node (-1, or 0 to 1023): ignored; the device's node is unknown"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:6a:00.0/class' holds '0x12zz00', not a PCI class (6 hexadecimal digits): ignored; the device is left out"
	assert_line "  warning: accelerator 0000:38:00.0: the kernel does not know its NUMA node (numa_node not a node number): no binding to suggest; numactl --cpunodebind=all --interleave=all spreads the cost"
	assert_line "  0000:38:00.0  accelerator  1da3:1020  habanalabs  -     Gen4x16  Gen4x16  31.5  -"
	refute_line --partial "0000:6a:00.0  ethernet"
	jcheck tree '
p = d["pci_devices"]
assert [x["address"] for x in p] == ["0000:17:00.0", "0000:38:00.0", "0000:b8:00.0"], p
assert all(x["numa_node"] is None for x in p), p
'
	# a class past 24 bits, and a vendor id that is not one, likewise
	echo 0 > $p/0000:38:00.0/numa_node
	echo 0x1200000 > $p/0000:6a:00.0/class
	echo 0x1da3f > $p/0000:38:00.0/vendor
	run -0 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:6a:00.0/class' holds '0x1200000', not a PCI class (6 hexadecimal digits): ignored; the device is left out"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:38:00.0/vendor' holds '0x1da3f', not a PCI vendor id (4 hexadecimal digits): ignored; the vendor is unknown"
	assert_line "  0000:38:00.0  accelerator  ffff:1020  habanalabs  0     Gen4x16  Gen4x16  31.5  -"
}

@test "device_node_unknown says why the node is unknown: numa_node -1, a node with no folder, no file, junk" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local p=tree/sys/bus/pci/devices
	echo -7 > $p/0000:17:00.0/numa_node
	rm $p/0000:6a:00.0/numa_node
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: the kernel does not know the NUMA node of 0000:6a:00.0 (ens801f0): there is no numa_node file"
	assert_line "  warning: the kernel does not know the NUMA node of 0000:17:00.0 (nvme0n1): numa_node holds what the kernel never writes there"
	refute_output --partial "firmware"
	echo 5 > $p/0000:17:00.0/numa_node
	echo -1 > $p/0000:6a:00.0/numa_node
	run -0 numa-probe --sysfs-root tree
	assert_line "  warning: the kernel does not know the NUMA node of 0000:6a:00.0 (ens801f0): numa_node is -1, the firmware does not give it"
	assert_line "  warning: the kernel does not know the NUMA node of 0000:17:00.0 (nvme0n1): numa_node names a node that has no folder (offline, or not captured)"
	jcheck tree '
assert [w["code"] for w in d["warnings"]].count("device_node_unknown") == 2
'
}

@test "a \"Device Minor:\" line of the NVIDIA driver's procfs the kernel never writes: a warning naming the file and the text, no /dev/nvidia name" {
	cp -a "$SYSFS/server-2s-8gpu" tree
	local g=tree/proc/driver/nvidia/gpus
	sed -i 's/^Device Minor:.*/Device Minor: \t x1/' $g/0000:65:00.0/information
	sed -i 's/^Device Minor:.*/Device Minor: -1/' $g/0000:98:00.0/information
	# a number, then junk past the first 32 bytes of the line
	sed -i "s/^Device Minor:.*/Device Minor: 6$(printf '%30s')x/" $g/0000:ca:00.0/information
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/proc/driver/nvidia/gpus/0000:65:00.0/information' holds 'Device Minor: \\t x1', not a device minor number (0 to 999999): ignored; the GPU's /dev/nvidia name is unknown"
	assert_line "  warning: 'tree/proc/driver/nvidia/gpus/0000:98:00.0/information' holds 'Device Minor: -1', not a device minor number (0 to 999999): ignored; the GPU's /dev/nvidia name is unknown"
	assert_line "  warning: 'tree/proc/driver/nvidia/gpus/0000:ca:00.0/information' holds 'Device Minor: 6$(printf '%30s')x', not a device minor number (0 to 999999): ignored; the GPU's /dev/nvidia name is unknown"
	assert_line "  0000:65:00.0 gpu, node 0: numactl --cpunodebind=0 --membind=0"
	assert_line "  0000:ca:00.0 gpu, node 1: numactl --cpunodebind=1 --membind=1"
	jcheck tree '
w = [x for x in d["warnings"] if x["code"] == "sysfs_invalid"]
assert len(w) == 3 and w[0]["message"].startswith("\x27tree/proc/driver/nvidia/gpus/0000:65:00.0/information\x27 holds \x27Device Minor: \t x1\x27"), w
assert [p["names"] for p in d["pci_devices"] if p["address"] == "0000:65:00.0"] == [[]]
'
}

@test "a node's distance row is read whole; one of the wrong length or with junk is a warning, the distances unknown" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local n=tree/sys/devices/system/node
	echo '14 24' > $n/node2/distance
	echo '24 14 x 10' > $n/node3/distance
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/devices/system/node/node2/distance' holds '14 24', 2 distances for 4 nodes: ignored; node 2's distances are unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node3/distance' holds '24 14 x 10', not a row of distances (0 to 255): ignored; node 3's distances are unknown"
	assert_line "  2      -   -   -   -"
	assert_line "  3      -   -   -   -"
	# a row running on past a page: read whole, not cut to the four it starts with
	{ printf '10 21 14 24'; printf ' %.0s' {1..5000}; printf '30\n'; } > $n/node0/distance
	echo '21 10 24 256' > $n/node1/distance
	echo '14 24 10 26 12' > $n/node2/distance
	echo ' 24 14 26 10' > $n/node3/distance
	run -0 numa-probe --sysfs-root tree
	assert_line "  warning: 'tree/sys/devices/system/node/node0/distance' holds '10 21 14 24$(printf ' %.0s' {1..53})...', 5 distances for 4 nodes: ignored; node 0's distances are unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node1/distance' holds '21 10 24 256', not a row of distances (0 to 255): ignored; node 1's distances are unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node2/distance' holds '14 24 10 26 12', 5 distances for 4 nodes: ignored; node 2's distances are unknown"
	assert_line "  3     24  14  26  10"
	refute_line --partial "node3/distance"
}

@test "meminfo, huge page counts, CPU model, THP settings, package ids, link files the kernel never writes: one warning per file" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local s=tree/sys/devices/system
	printf 'Node 0 MemTotal:       abc kB\nNode 0 MemFree:        12 MB\n' > $s/node/node0/meminfo
	printf 'Node 1 MemTotal:       134217728 kB\nNode 1 MemFree:        99999999999999999999 kB\n' > $s/node/node1/meminfo
	echo -3 > $s/node/node1/hugepages/hugepages-1048576kB/nr_hugepages
	echo 16x > $s/node/node0/hugepages/hugepages-1048576kB/free_hugepages
	printf 'processor\t: 0\nmodel name\t:\n' > tree/proc/cpuinfo
	echo 'always madvise never' > tree/sys/kernel/mm/transparent_hugepage/enabled
	echo '[always] [never]' > tree/sys/kernel/mm/transparent_hugepage/defrag
	echo zz > $s/cpu/cpu3/topology/physical_package_id
	local p=tree/sys/bus/pci/devices/0000:38:00.0
	echo fast > $p/current_link_speed
	echo 99 > $p/max_link_width
	run -0 --separate-stderr numa-probe --sysfs-root tree
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_line "  warning: 'tree/sys/devices/system/node/node0/meminfo' holds 'Node 0 MemTotal:       abc kB', not a number of kB for MemTotal: ignored; MemTotal is unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node1/meminfo' holds 'Node 1 MemFree:        99999999999999999999 kB', not a number of kB for MemFree: ignored; MemFree is unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages' holds '-3', not a count of pages: ignored; the count is unknown"
	assert_line "  warning: 'tree/sys/devices/system/node/node0/hugepages/hugepages-1048576kB/free_hugepages' holds '16x', not a count of pages: ignored; the count is unknown"
	assert_line "  warning: 'tree/proc/cpuinfo' holds 'model name\\t:', no CPU model after \"model name\": ignored; the CPU model is unknown"
	assert_line "  warning: 'tree/sys/kernel/mm/transparent_hugepage/enabled' holds 'always madvise never', not a setting (one word, or one in brackets among others): ignored; the setting is unknown"
	assert_line "  warning: 'tree/sys/kernel/mm/transparent_hugepage/defrag' holds '[always] [never]', not a setting (one word, or one in brackets among others): ignored; the setting is unknown"
	assert_line "  warning: 'tree/sys/devices/system/cpu/cpu3/topology/physical_package_id' holds 'zz', not a package id (-1, or 0 and up): ignored; sockets are counted without it"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:38:00.0/current_link_speed' holds 'fast', not a link speed (such as 16.0 GT/s PCIe): ignored; the speed is unknown"
	assert_line "  warning: 'tree/sys/bus/pci/devices/0000:38:00.0/max_link_width' holds '99', not a link width (0 to 63): ignored; the width is unknown"
	# node 0's meminfo is bad twice (MemTotal and MemFree): said once
	[ "$(grep -c "node0/meminfo" <<< "$output")" = 1 ] || fail "node0/meminfo warned more than once"
	assert_line "  0     0-3   -          -          cpus"
	assert_line "  1     4-7   128.0 GiB  -          cpus+memory"
	assert_line "  0               0        0           16        -"
	assert_line "  1               0        0            -       12"
	assert_line "  transparent huge pages: unknown (defrag: unknown)"
	jcheck tree '
assert d["cpu"]["model"] is None and d["transparent_hugepage"]["enabled"] is None
w = [x for x in d["warnings"] if x["code"] == "sysfs_invalid"]
assert len(w) == 10, w
'
	# what the kernel does write stays quiet: a link it cannot tell, a dead device's width,
	# the old kernels' speeds, a THP file of one word, a package id of -1
	echo Unknown > $p/current_link_speed
	echo 63 > $p/max_link_width
	echo '8 GT/s' > tree/sys/bus/pci/devices/0000:17:00.0/max_link_speed
	echo madvise > tree/sys/kernel/mm/transparent_hugepage/defrag
	echo -1 > $s/cpu/cpu3/topology/physical_package_id
	run -0 numa-probe --sysfs-root tree
	refute_line --partial "0000:38:00.0/"
	refute_line --partial "0000:17:00.0/"
	refute_line --partial "transparent_hugepage/defrag"
	refute_line --partial "physical_package_id"
	assert_line "  transparent huge pages: unknown (defrag: madvise)"
}

@test "a package id of -1 (the kernel's unknown) is no socket: the others are counted, or sockets are unknown" {
	cp -a "$SYSFS/cxl-memnodes" tree
	local c
	echo -1 > tree/sys/devices/system/cpu/cpu3/topology/physical_package_id
	run -0 --separate-stderr numa-probe --sysfs-root tree
	assert_line "  sockets:  2"
	assert_line "  cores:    8 (4 per socket)"
	for c in 0 1 2 4 5 6 7; do
		echo -1 > tree/sys/devices/system/cpu/cpu$c/topology/physical_package_id
	done
	run -0 --separate-stderr numa-probe --sysfs-root tree
	assert_equal "$stderr" ""
	assert_line "  sockets:  unknown"
	assert_line "  cores:    8"
	jcheck tree 'assert d["cpu"]["sockets"] is None and d["cpu"]["cores"] == 8, d["cpu"]'
}

@test "control characters in names from the tree are escaped in the text, kept in the JSON" {
	cp -a "$SYSFS/cxl-memnodes" tree
	printf 'processor\t: 0\nmodel name\t: Xeon \033[31mred\033]0;title\a\n' > tree/proc/cpuinfo
	local dev="tree/sys/bus/pci/devices/0000:6a:00.0"
	mv "$dev/net/ens801f0" "$dev/net/$(printf 'ens\033[2J\r\n0')"
	printf '[nev\033er] madvise\n' > tree/sys/kernel/mm/transparent_hugepage/defrag
	run -0 --separate-stderr numa-probe --sysfs-root tree
	refute_output --partial $'\033'
	refute_output --partial $'\r'
	assert_line '  model:    Xeon \x1b[31mred\x1b]0;title\a'
	assert_line '  0000:6a:00.0  ethernet     8086:1593  ice         -1    Gen4x16  Gen4x16  31.5  ens\x1b[2J\r\n0'
	assert_line "  warning: the kernel does not know the NUMA node of 0000:6a:00.0 (ens\\x1b[2J\\r\\n0): numa_node is -1, the firmware does not give it"
	assert_line '  transparent huge pages: never (defrag: nev\x1ber)'
	# the columns stay aligned on the escaped width
	assert_line '  0000:b8:00.0  gpu          1002:740f  amdgpu      1     Gen4x16  Gen4x16  31.5  card1'
	jcheck tree '
assert d["cpu"]["model"] == "Xeon \x1b[31mred\x1b]0;title\x07"
assert [p["names"] for p in d["pci_devices"] if p["address"] == "0000:6a:00.0"] == [["ens\x1b[2J\r\n0"]]
'
}

@test "a kernel without NUMA (no node folders): one node 0 from /proc/meminfo" {
	cp -a "$SYSFS/vm-1node" tree
	rm -r tree/sys/devices/system/node
	run -0 numa-probe --sysfs-root tree
	assert_line --regexp '^  0     0-1   [0-9.]+ GiB +[0-9.]+ GiB +cpus\+memory$'
	assert_line "  the kernel reports no NUMA nodes: one node 0 assumed"
	jcheck tree 'assert d["numa_known"] is False and d["nodes"][0]["cpu_count"] == 2 and d["nodes"][0]["memory_bytes"] > 0'
}

@test "symlinks in the tree never lead outside it" {
	cp -a "$SYSFS/vm-1node" tree
	# A GPU outside the tree, reached by an absolute link and by one climbing with ..
	mkdir -p outside/gpu
	echo 0x030200 > outside/gpu/class
	echo 0x10de > outside/gpu/vendor
	ln -s "$PWD/outside/gpu" "tree/sys/bus/pci/devices/0000:41:00.0"
	ln -s "../../../../../../../../../../../../../../..$PWD/outside/gpu" "tree/sys/bus/pci/devices/0000:42:00.0"
	# An absolute link is taken relative to the tree, as in a chroot.
	ln -s /sys/bus/pci/devices/0000:00:03.0 "tree/sys/bus/pci/devices/0000:43:00.0"
	run -0 --separate-stderr numa-probe --sysfs-root tree
	refute_output --partial "10de"
	refute_output --partial "0000:41:00.0"
	refute_output --partial "0000:42:00.0"
	assert_line "  0000:43:00.0  ethernet  1af4:1041  virtio-pci  -1    -     -    -     eth0"
}

# measure_or_skip ARGS...: numa-probe --measure ARGS on this machine; skip where the kernel
# refuses to bind memory (a sandbox without mbind) or there is no NUMA sysfs.
measure_or_skip() {
	[ -d /sys/devices/system/node/node0 ] || skip "no /sys/devices/system/node on this machine"
	run --separate-stderr numa-probe -q --measure "$@"
	if [ "$status" -ne 0 ] && [[ "$stderr" == *"cannot bind"* ]]; then
		skip "the kernel does not let this process bind memory: $stderr"
	fi
	[ "$status" -eq 0 ] || fail "numa-probe --measure exited $status: $stderr"
}

@test "--measure on this machine: a CPU-node x memory-node matrix of each, with the method" {
	measure_or_skip --size 1M --repeat 1
	local cpu_nodes mem_nodes
	cpu_nodes=$(for n in /sys/devices/system/node/node[0-9]*; do [ -n "$(cat "$n/cpulist")" ] && echo "${n##*node}"; done | sort -n | tr '\n' ' ')
	mem_nodes=$(for n in /sys/devices/system/node/node[0-9]*; do awk '/MemTotal/ { exit !($4 > 0) }' "$n/meminfo" && echo "${n##*node}"; done | sort -n | tr '\n' ' ')
	assert_line "Measurements"
	assert_line "    discarded, then 1 run of at least 0.20 s; median [min-max]"
	assert_line --regexp "^  method: a 1\.0 MiB buffer on each memory node \(mbind MPOL_BIND"
	assert_line --regexp "^  bandwidth GB/s( +node [0-9]+)+$"
	assert_line --regexp "^  latency ns( +node [0-9]+)+$"
	if [ -d /sys/devices/system/cpu/cpu0/cache ]; then
		assert_line --regexp "^  note: the 1\.0 MiB buffer is not well above the last-level caches"
	else
		assert_line "  note: the sizes of the caches are unknown (sysfs lists none): the 1.0 MiB buffer may be partly served by them"
	fi
	# one row per CPU node, a "median [min-max]" per memory node
	local cols rows
	cols=$(wc -w <<<"$mem_nodes")
	rows=$(grep -cE "^  node [0-9]+ +([0-9.]+ \[[0-9.]+-[0-9.]+\] *){$cols}$" <<<"$output")
	assert_equal "$rows" $((2 * $(wc -w <<<"$cpu_nodes")))
	if [ "$cols" -eq 1 ]; then
		assert_line --regexp "^  bandwidth GB/s  node 0$"
		assert_line --regexp "^  node 0 +[0-9.]+ \[[0-9.]+-[0-9.]+\]$"
	fi

	measure_or_skip --size 1M --repeat 2 --threads 1 --json
	python3 - "$output" "$cpu_nodes" "$mem_nodes" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
m = d["measurements"]
rows = [int(x) for x in sys.argv[2].split()]
cols = [int(x) for x in sys.argv[3].split()]
assert m["cpu_nodes"] == rows and m["memory_nodes"] == cols, (m["cpu_nodes"], m["memory_nodes"])
assert m["buffer_bytes"] == 1 << 20 and m["runs"] == 2 and m["warmup_runs"] == 1
assert m["line_bytes"] == 64 and m["bound"] is True and m["errors"] == []
assert m["cpu_busy_before"] is None or 0 <= m["cpu_busy_before"] <= 1
for key in ("bandwidth_gb_per_s", "latency_ns"):
    assert len(m[key]) == len(rows) and all(len(r) == len(cols) for r in m[key])
    for row in m[key]:
        for c in row:
            assert len(c["runs"]) == 2 and c["min"] <= c["median"] <= c["max"] and c["min"] > 0
assert all(c["threads"] == 1 for row in m["bandwidth_gb_per_s"] for c in row)
assert len(m["pages_on_node"]) == len(cols) and len(m["huge_page_share"]) == len(cols)
assert any("last-level caches" in n or "sizes of the caches are unknown" in n for n in m["notes"])
assert "nodes" in d and "advice" in d
PY
}

teardown() {
	memcg_remove
}

# In a container (a memory cgroup of 96 MiB here), a buffer the node has room for but the
# cgroup has not is not measured (filling it, the kernel would kill numa-probe): said per cell.
@test "--measure in a memory cgroup: a buffer over half of what it allows is not measured, and said so (root)" {
	memory_cgroup $((96 * 1024 * 1024))
	run -1 --separate-stderr in_memcg numa-probe --measure --size 128M --repeat 1
	assert_regex "$stderr" "^numa-probe: --measure: CPU node [0-9]+, memory node [0-9]+: a 128 MiB buffer is more than half of what the memory cgroup allows \([0-9]+(\.[0-9])? [KMG]iB\)\$"
	assert_line --regexp "^  not measured: CPU node [0-9]+, memory node [0-9]+: a 128 MiB buffer is more than half of what the memory cgroup allows \([0-9]+(\.[0-9])? [KMG]iB\)\$"
}
