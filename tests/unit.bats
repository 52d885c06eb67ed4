#!/usr/bin/env bats
# The C unit tests of lib/ (tests/unit/test_*.c), one bats test each.

load test_helper/common

run_unit() {
	local bin="$SLAB_BUILD/unit/$1"
	[ -x "$bin" ] || fail "unit test $1 not built (run make)"
	SLAB_CORPUS="$CORPUS" run -0 "$bin"
}

@test "unit: sizes, numbers and messages (test_cli)" { run_unit test_cli; }
@test "unit: JSON writer (test_json)" { run_unit test_json; }
@test "unit: JPEG header, check and downscale (test_jpeg)" { run_unit test_jpeg; }
@test "unit: image pipeline: crop parameters, decode paths, colour spaces, corrupt input (test_image)" { run_unit test_image; }
@test "unit: the image pipeline's portable path, built without SSE2 (test_image-scalar)" { run_unit test_image-scalar; }
@test "unit: format writer and reader API (test_format)" { run_unit test_format; }
@test "unit: key set, key index and its check on colliding keys (test_keys)" { run_unit test_keys; }
@test "unit: epoch plans, rank shares, window bound, plan file (test_plan)" { run_unit test_plan; }
@test "unit: page cache residency, advice, warming, O_DIRECT reads (test_pagecache)" { run_unit test_pagecache; }
@test "unit: following a plan: window, release, O_DIRECT with and without AIO (test_follow)" { run_unit test_follow; }
@test "unit: several files as one dataset: numbering, keys, plans (test_dataset)" { run_unit test_dataset; }
@test "unit: batch loader: plan order, ring, held batches, fields, corrupt samples, threads (test_loader)" { run_unit test_loader; }
@test "unit: error codes and texts, sized structs, two writers finishing at once (test_errors)" { run_unit test_errors; }
@test "unit: bench-tlb's verdict on synthetic latency curves, the memory cgroup's limit, sysfs number readers (test_memlat)" { run_unit test_memlat; }
@test "unit: HTTP(S)/S3 transport: URLs, AWS configuration, retries, answers checked (test_net)" { run_unit test_net; }
@test "unit: video pipeline: clip parameters, frames picked, rows-only conversion, limits, corrupt input (test_video)" { run_unit test_video; }
