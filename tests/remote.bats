#!/usr/bin/env bats
# Files at URLs: every tool on http:// (nginx) and s3:// (Swift's S3 API, which checks SigV4
# signatures) gives what it gives on the local file; the local cache fetches each page group
# once, checks it, survives faults and kills, and keeps its budget. Servers run on 127.0.0.1
# only and stop after each test (tests/test_helper/servers.bash).

load test_helper/common
load test_helper/servers

# A dataset of 60 samples on 64 KiB pages, several of them larger than a page (page groups
# of several pages), served from www/ by nginx; the cache in cache/.
setup() {
	mkdir -p www cache
	mkwds --count 60 --jpeg-bytes 8K:150K --seed 5 -o in.tar
	pack -q --page-size 64K -o www/d.slab in.tar
	export SLAB_CACHE_DIR=$PWD/cache
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE
	export HOME=$PWD/home
	mkdir -p "$HOME"
}

# The ranges nginx was asked for more than once (none: each page fetched once).
twice() {
	awk '$1 == "GET" { print $3 }' "$NGINX_LOG" | sort | uniq -d
}

@test "inspect, shuffle-plan and prefetch on an http:// URL give the local file's bytes" {
	start_nginx www
	u=$HTTP_URL/d.slab
	inspect --list www/d.slab >list.local
	inspect --list "$u" >list.url
	cmp list.local list.url
	inspect --list --json www/d.slab >json.local
	inspect --list --json "$u" >json.url
	cmp json.local json.url
	inspect --tar www/d.slab >tar.local
	inspect --tar "$u" >tar.url
	cmp tar.local tar.url
	key=$(inspect --list www/d.slab | awk 'NR == 7 { print $2 }')
	inspect --get "$key" --field jpg www/d.slab >get.local
	inspect --get "$key" --field jpg "$u" >get.url
	cmp get.local get.url
	run inspect --verify "$u"
	assert_success
	assert_output "$u: ok, 60 samples, $(inspect www/d.slab | sed -n 's/^file size: *\([^(]*\) (.*/\1/p' | sed 's/ *$//') checked"
	shuffle-plan -q --mode quasi --window 4 --seed 9 -o p.local www/d.slab
	shuffle-plan -q --mode quasi --window 4 --seed 9 -o p.url "$u"
	cmp p.local p.url
	for fmt in tar raw; do
		prefetch -q --plan p.local --emit --emit-format $fmt www/d.slab >emit.local
		prefetch -q --plan p.local --emit --emit-format $fmt "$u" >emit.url
		cmp emit.local emit.url
	done
	prefetch -q --plan p.local --emit --emit-format frames --image jpg --size 32x32 www/d.slab >frames.local
	prefetch -q --plan p.local --emit --emit-format frames --image jpg --size 32x32 "$u" >frames.url
	cmp frames.local frames.url
	# every group was fetched once, however many tools read it
	run twice
	assert_output ""
}

@test "http_proxy sends requests through a proxy, and no_proxy names the hosts that go direct (libcurl's variables)" {
	start_nginx www
	inspect --list www/d.slab >list.local
	# nginx takes a proxy's absolute-form request for a name that resolves nowhere, and
	# serves the path: only through the proxy can this URL be read
	http_proxy=$HTTP_URL no_proxy= NO_PROXY= run -0 --separate-stderr inspect --list http://slab-proxied.invalid/d.slab
	assert_output "$(cat list.local)"
	http_proxy=$HTTP_URL no_proxy=slab-other.invalid NO_PROXY=slab-other.invalid \
		run -0 --separate-stderr inspect --list http://slab-proxied.invalid/d.slab
	assert_output "$(cat list.local)"
	http_proxy=$HTTP_URL no_proxy=.invalid NO_PROXY=.invalid \
		run -1 --separate-stderr inspect --list http://slab-proxied.invalid/d.slab
	assert_output ""
	assert_regex "$stderr" "^inspect: 'http://slab-proxied.invalid/d.slab': "
}

@test "a URL's pages are fetched once: a second reader sends one HEAD and nothing else" {
	start_nginx www
	u=$HTTP_URL/d.slab
	inspect --tar "$u" >/dev/null
	n=$(wait_lines "$NGINX_LOG" 1)
	inspect --tar "$u" >tar.url
	wait_lines "$NGINX_LOG" $((n + 1)) >/dev/null
	run sed -n "$((n + 1)),\$p" "$NGINX_LOG"
	assert_output "HEAD /d.slab - 200 0"
	inspect --tar www/d.slab | cmp - tar.url
	run prefetch --status "$u"
	assert_success
	assert_line --index 1 --regexp " 100\.0% $u\$"
}

@test "prefetch --warm fetches a URL into the local cache, --evict empties it, --status says how much is there" {
	start_nginx www
	u=$HTTP_URL/d.slab
	pages=$(inspect www/d.slab | awk '$1 == "pages:" { sub(",", "", $2); print $2 }')
	# opening fetches the header and the last MiB (the trailer, the table and, in a file
	# this small, some pages, which are kept once they pass their checks): not all of it
	run prefetch --status --json "$u"
	assert_success
	refute_line --partial "\"resident_pages\": $pages,"
	assert_line --partial "\"pages\": $pages,"
	assert_line --partial '"method": "local cache"'
	prefetch -q --warm "$u"
	run prefetch --status --json "$u"
	assert_line --partial "\"resident_pages\": $pages,"
	assert_line --partial '"percent": 100'
	data=$(find cache -name '*-d.slab' -type f)
	[ "$(du -B1 "$data" | cut -f1)" -gt 1000000 ]
	# -v says what stayed, as for a local file (it said nothing)
	run -0 --separate-stderr prefetch -v --evict "$u"
	assert_equal "${stderr_lines[-1]}" "prefetch: '$u': evicted, 0 of $pages pages still in the local cache"
	run prefetch --status --json "$u"
	assert_line --partial '"resident_pages": 0,'
	# the bytes are gone from the disk too (punched out), header and table stay
	[ "$(du -B1 "$data" | cut -f1)" -lt 200000 ]
	inspect --tar www/d.slab >tar.local
	inspect --tar "$u" | cmp - tar.local
}

# A relative XDG_CACHE_HOME made the cache under wherever the process ran.
# --evict of a URL punched out pages another process was reading: its stream carried zeros
# in place of the samples' bytes, exit status 0.
@test "prefetch --evict of a URL another process is reading is refused; the reader's bytes are the object's" {
	start_nginx www
	u=$HTTP_URL/d.slab
	shuffle-plan -q --seed 3 --mode random -o p www/d.slab
	prefetch -q --plan p --emit www/d.slab >emit.local
	prefetch -q --warm "$u"
	mkfifo fifo
	prefetch -q --plan p --emit "$u" >fifo &
	pid=$!
	exec 4<fifo
	# a byte of the stream: the reader has the URL open and is writing it
	head -c 1 <&4 >emit.url
	run -1 --separate-stderr prefetch --evict "$u"
	assert_equal "$stderr" "prefetch: '$u': not evicted: another process is reading it from the local cache"
	cat <&4 >>emit.url
	exec 4<&-
	wait "$pid"
	cmp emit.url emit.local
	run prefetch --status --json "$u"
	assert_line --partial '"percent": 100'
	# once no other process has it open, it goes
	run -0 --separate-stderr prefetch --evict "$u"
	assert_equal "$stderr" ""
	run prefetch --status --json "$u"
	assert_line --partial '"resident_pages": 0,'
}

@test "the default cache folder: XDG_CACHE_HOME when absolute, else ~/.cache/slab" {
	start_nginx www
	u=$HTTP_URL/d.slab
	unset SLAB_CACHE_DIR
	mkdir run
	(cd run && XDG_CACHE_HOME=rel/cache prefetch -q --warm "$u")
	[ -z "$(ls -A run)" ] || fail "made in the working folder: $(ls -A run)"
	[ -n "$(find "$HOME/.cache/slab" -name '*-d.slab' -type f)" ]
	XDG_CACHE_HOME=$PWD/xdg prefetch -q --warm "$u"
	[ -n "$(find xdg/slab -name '*-d.slab' -type f)" ]
}

# The folders the cache made were 0755 under a umask of 022: the bytes of a private bucket's
# objects, fetched with the user's credentials, were readable by every user of the machine.
@test "the folders the local cache makes are the user's alone; those already there stay as they are" {
	start_nginx www
	u=$HTTP_URL/d.slab
	unset SLAB_CACHE_DIR XDG_CACHE_HOME
	chmod 0755 cache
	(umask 022 && prefetch -q --warm "$u" && prefetch -q --warm --cache-dir cache "$u")
	run stat -c '%a %n' "$HOME/.cache" "$HOME/.cache/slab" "$HOME"/.cache/slab/127.0.0.1_* cache cache/127.0.0.1_*
	assert_output "700 $HOME/.cache
700 $HOME/.cache/slab
700 $(echo "$HOME"/.cache/slab/127.0.0.1_*)
755 cache
700 $(echo cache/127.0.0.1_*)"
}

@test "8 processes reading one URL through one cache fetch each page once" {
	start_nginx www
	u=$HTTP_URL/d.slab
	shuffle-plan -q --mode random --seed 4 -o p.plan www/d.slab
	prefetch -q --plan p.plan --emit --emit-format raw www/d.slab >emit.local
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		prefetch -q --plan p.plan --emit --emit-format raw --connections 4 "$u" >"emit.$i" 2>"err.$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	for i in 1 2 3 4 5 6 7 8; do
		cmp emit.local "emit.$i"
		[ ! -s "err.$i" ]
	done
	run twice
	assert_output ""
	[ "$(grep -c '^HEAD /d.slab ' "$NGINX_LOG")" -eq 8 ]
}

@test "a byte flipped in transit is caught by the CRC-32C and fetched again" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	# the header, the tail (trailer and table), then a data page: one of each flipped
	proxy_rules '[{"method": "GET", "range": true, "skip": 0, "times": 1, "action": "flip:-1"},
		      {"method": "GET", "range": true, "skip": 3, "times": 1, "action": "flip:-1"}]'
	inspect --tar "$u" >tar.url
	inspect --tar www/d.slab | cmp - tar.url
	run inspect --verify "$u"
	assert_success
	# the first request and the fourth were asked again, once each
	run awk '$1 == "GET" { print $3 }' "$PROXY_LOG"
	first=$(awk '$1 == "GET" { print $3; exit }' "$PROXY_LOG")
	[ "$(grep -c "^GET /d.slab $first " "$PROXY_LOG")" -eq 2 ]
	[ "$(awk '$1 == "GET" { print $3 }' "$PROXY_LOG" | sort | uniq -d | wc -l)" -eq 2 ]
	[ "$(grep -c ' flip:-1 ' "$PROXY_LOG")" -eq 2 ]
}

@test "503, 500, 429, dropped connections, short bodies and a wrong Content-Range are retried" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	inspect --tar www/d.slab >tar.local
	for action in status:503 status:500 status:429 drop truncate:100 bad-content-range; do
		rm -rf cache
		proxy_rules "[{\"method\": \"GET\", \"range\": true, \"skip\": 2, \"times\": 2, \"action\": \"$action\"}]"
		inspect -v --tar "$u" >tar.url 2>err
		cmp tar.local tar.url
		grep -q 'retrying' err || {
			echo "$action: no retry in:"
			cat err
			cat "$PROXY_LOG"
			false
		}
		# one retry for each of the two failures, and no more (a dropped connection that
		# was a reused one, libcurl itself tries again once on a new one)
		n=$(grep -c 'retrying' err)
		[ "$n" -eq 2 ] || { [ "$action" = drop ] && [ "$n" -eq 1 ]; } || {
			echo "$action:"
			cat err
			false
		}
	done
}

# A server that never honours Range (nginx with max_ranges 0 answers 200 and the whole object)
# will not start to: the first such answer fails the read, no retries. It was asked 9 times.
@test "a server that ignores Range fails at its first answer, not after the retries" {
	NGINX_SERVER_CONF='max_ranges 0;' start_nginx www
	u=$HTTP_URL/d.slab
	run -1 --separate-stderr inspect --list "$u"
	assert_equal "$stderr" "inspect: '$u': server ignored the Range header (bytes 0-4095)"
	wait_lines "$NGINX_LOG" 2 >/dev/null
	run awk '{ print $1, $2, $3, $4 }' "$NGINX_LOG"
	assert_output "HEAD /d.slab - 200
GET /d.slab bytes=0-4095 200"
}

# A body that stops half way: the attempt has stalled once it moves less than a byte a second
# for a quarter of --timeout (2 s of 8), and is retried within the budget. libcurl's own
# low-speed check noticed it about 6 s late, the budget gone: exit 1 after one attempt.
@test "a transfer that stalls half way is retried after a quarter of --timeout" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	inspect --tar www/d.slab >tar.local
	proxy_rules '[{"method": "GET", "range": true, "skip": 2, "times": 1, "action": "stall:1000"}]'
	run -0 --separate-stderr bash -c "inspect -v --timeout 8 --connections 1 --tar '$u' >tar.url"
	cmp tar.local tar.url
	[[ "$stderr" == *"stalled: less than a byte a second for 2 s"*retrying* ]] || fail "$stderr"
	[ "$(grep -c ' stall:1000 ' "$PROXY_LOG")" -eq 1 ]
}

@test "a server that keeps failing: one line naming the URL, the byte range, the attempts and the last status" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	proxy_rules '[{"method": "GET", "range": true, "times": 1000, "action": "status:503"}]'
	run inspect --retries 2 --list "$u"
	assert_failure 1
	assert_output --regexp "^inspect: '$u': bytes 0-4095: gave up after 3 attempts in [0-9.]+ s: last: HTTP 503 SlowDown\$"
	[ "$(grep -c '^GET ' "$PROXY_LOG")" -eq 3 ]
	# the data failing (the header and table came): the reader waiting for a background
	# fetch of its bytes takes that fetch's failure; it asked 6 times, the request over
	# with a budget of its own
	rm -rf cache
	: >"$PROXY_LOG"
	proxy_rules '[{"method": "GET", "range": true, "skip": 2, "times": 1000, "action": "status:503"}]'
	run inspect --retries 2 --tar "$u"
	assert_failure 1
	assert_output --regexp "^inspect: '$u': bytes 4096-69631: gave up after 3 attempts in [0-9.]+ s: last: HTTP 503 SlowDown\$"
	[ "$(grep -c '^GET /d.slab bytes=4096-69631 ' "$PROXY_LOG")" -eq 3 ]
}

# A reader closed while its background fetches are still on their way (the output failed, or
# the consumer went away): the fetches finish against the table before its mapping goes. It
# crashed (SIGSEGV) where the fetchers checked their bytes against an unmapped table.
@test "closing a URL with fetches in flight: the tools' own errors and exits, no crash" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	proxy_rules '[{"method": "GET", "range": true, "skip": 3, "action": "delay:0.5"}]'
	run -1 --separate-stderr bash -c "inspect --tar '$u' >/dev/full"
	assert_equal "$stderr" "inspect: tar output: write error: No space left on device"
	shuffle-plan -q --mode sequential -o p.plan www/d.slab
	rm -rf cache
	run -0 bash -c "set -o pipefail; prefetch -q --plan p.plan --emit '$u' | head -c 300000 >/dev/null"
}

# A damaged object at a URL is the URL's damage: the messages name it, not the cache file.
@test "a URL's truncated or damaged object: the message names the URL" {
	head -c 400000 www/d.slab >www/t.slab
	cp www/d.slab www/f.slab
	size=$(stat -c %s www/f.slab)
	printf '\xff' | dd of=www/f.slab bs=1 seek=$((size - 30)) conv=notrunc status=none
	start_nginx www
	run -1 --separate-stderr inspect --list "$HTTP_URL/t.slab"
	assert_equal "$stderr" "inspect: '$HTTP_URL/t.slab': truncated or damaged: no trailer at offset 399936"
	run -1 --separate-stderr inspect --list "$HTTP_URL/f.slab"
	assert_equal "$stderr" "inspect: '$HTTP_URL/f.slab': trailer checksum mismatch at offset $((size - 64))"
}

@test "a missing file fails at once with the server's 404, a closed port after the retries" {
	start_nginx www
	run inspect --list "$HTTP_URL/none.slab"
	assert_failure 1
	assert_output --regexp "^inspect: '$HTTP_URL/none.slab': .*HTTP 404"
	[ "${#lines[@]}" -eq 1 ]
	[ "$(wait_lines "$NGINX_LOG" 1)" -le 2 ]
	port=$(free_port)
	run inspect --retries 1 --list "http://127.0.0.1:$port/d.slab"
	assert_failure 1
	assert_output --regexp "^inspect: 'http://127.0.0.1:$port/d.slab': .*gave up after 2 attempts .*Connection refused"
	[ "${#lines[@]}" -eq 1 ]
	# neither left anything in the cache folder (not even a lock file)
	run find "$SLAB_CACHE_DIR" -mindepth 1
	assert_output ""
	run inspect --list "$HTTP_URL/in.tar"
	assert_failure 1
	printf 'not a slab\n' >www/junk.slab
	run inspect --list "$HTTP_URL/junk.slab"
	assert_failure 1
	assert_output "inspect: '$HTTP_URL/junk.slab': not a slab file (11 bytes)"
}

@test "a fetch killed half way leaves a cache the next run completes and checks" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	proxy_rules '[{"method": "GET", "range": true, "skip": 3, "times": 1000, "action": "delay:0.2"}]'
	prefetch -q --warm --connections 2 "$u" &
	pid=$!
	wait_lines "$PROXY_LOG" 8 >/dev/null
	kill -9 "$pid"
	wait "$pid" || true
	run prefetch --status --json "$u"
	assert_success
	refute_line --partial '"percent": 100'
	proxy_rules '[]'
	run inspect --verify "$u"
	assert_success
	inspect --tar www/d.slab >tar.local
	inspect --tar "$u" | cmp - tar.local
}

# A state file that said the metadata was there was trusted as it stood: cut short, its page
# bytes past the end faulted (SIGBUS); a page size of 0 in it divided by zero (SIGFPE).
@test "a state file cut short or damaged by hand is not used: the cache is made again" {
	start_nginx www
	u=$HTTP_URL/d.slab
	prefetch -q --warm "$u"
	state=$(find cache -name '*.state')
	inspect --tar www/d.slab >tar.local
	truncate -s 4096 "$state"
	run -0 --separate-stderr prefetch --status "$u"
	assert_equal "$stderr" ""
	inspect --tar "$u" | cmp - tar.local
	prefetch -q --warm "$u"
	# the page size, then the page count, zeroed and too large
	printf '\0\0\0\0\0\0\0\0' | dd of="$state" bs=1 seek=16 conv=notrunc status=none
	run -0 --separate-stderr prefetch --status "$u"
	assert_equal "$stderr" ""
	inspect --tar "$u" | cmp - tar.local
	printf '\0\0\0\0\0\0\1\0' | dd of="$state" bs=1 seek=40 conv=notrunc status=none
	run -0 --separate-stderr prefetch --status "$u"
	assert_equal "$stderr" ""
	inspect --verify -q "$u"
	inspect --tar "$u" | cmp - tar.local
}

# A header or table damaged in the local cache was reported as the URL's own damage (the
# object on the server is fine) and the URL could not be read until the cache was removed.
@test "a header or table damaged in the local cache is fetched again, not blamed on the URL" {
	start_nginx www
	u=$HTTP_URL/d.slab
	prefetch -q --warm "$u"
	data=$(find cache -name '*-d.slab' -type f)
	size=$(filesize "$data")
	inspect --tar www/d.slab >tar.local
	inspect www/d.slab >summary.local
	for at in 40 $((size - 200)); do
		printf 'X' | dd of="$data" bs=1 seek="$at" conv=notrunc status=none
		run -0 --separate-stderr inspect "$u"
		assert_equal "$stderr" ""
		inspect --tar "$u" | cmp - tar.local
	done
	# damaged on the server too: the URL's error, as before
	printf 'X' | dd of=www/d.slab bs=1 seek=40 conv=notrunc status=none
	rm -rf cache
	run -1 --separate-stderr inspect "$u"
	assert_equal "$stderr" "inspect: '$u': header checksum mismatch at offset 0"
}

@test "an object replaced on the server: the old cache is not used, and a change during a run is an error" {
	start_nginx www
	u=$HTTP_URL/d.slab
	inspect --tar "$u" >/dev/null
	mkwds --count 40 --jpeg-bytes 8K:150K --seed 6 -o in2.tar
	pack -q --page-size 64K -o new.slab in2.tar
	touch -d '2020-01-02 03:04:05' new.slab
	mv new.slab www/d.slab
	inspect --tar www/d.slab >tar.new
	inspect --tar "$u" | cmp - tar.new
	# replaced again while a slow reader is half way
	start_proxy "$HTTP_URL"
	pu=$PROXY_URL/d.slab
	rm -rf cache
	proxy_rules '[{"method": "GET", "range": true, "skip": 3, "times": 1000, "action": "delay:0.3"}]'
	inspect --tar --connections 1 "$pu" >/dev/null 2>err &
	pid=$!
	wait_lines "$PROXY_LOG" 5 >/dev/null
	pack -q --page-size 64K -o www/d.slab.new in.tar
	mv www/d.slab.new www/d.slab
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	run cat err
	assert_output --regexp "^inspect: '$pu': the object changed while in use \(ETag \".*\", was \".*\"\)\$"
	# the same from a server that sends no ETag: the size in each answer's Content-Range
	# tells (it was a CRC-32C mismatch, "damaged on the server?")
	rm -rf cache
	: >"$PROXY_LOG"
	proxy_rules '[{"action": "no-etag"},
		      {"method": "GET", "range": true, "skip": 3, "times": 1000, "action": "delay:0.3"}]'
	was=$(stat -c %s www/d.slab)
	inspect --tar --connections 1 "$pu" >/dev/null 2>err &
	pid=$!
	wait_lines "$PROXY_LOG" 5 >/dev/null
	pack -q --page-size 64K -o www/d.slab.new in2.tar
	now=$(stat -c %s www/d.slab.new)
	mv www/d.slab.new www/d.slab
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	! grep -q ' pass ' "$PROXY_LOG" || fail "an answer with its ETag: $(cat "$PROXY_LOG")"
	run cat err
	assert_output --regexp "^inspect: '$pu': the object changed while in use \($now bytes, was $was\)\$"
}

# Replaced by a shorter object half way, the ranges still to come are past its end: the server
# answers 416, which was taken for a failure of its own ("HTTP 416", naming a byte range), not
# for the change it is. nginx says the new size in Content-Range; Swift's S3 says none.
@test "an object replaced by a shorter one during a run: the object changed, not an HTTP 416" {
	start_nginx www
	start_proxy "$HTTP_URL"
	pu=$PROXY_URL/d.slab
	was=$(stat -c %s www/d.slab)
	head -c 100000 www/d.slab >short.slab
	proxy_rules '[{"method": "GET", "range": true, "skip": 3, "times": 1000, "action": "delay:0.3"}]'
	inspect --tar --connections 1 "$pu" >/dev/null 2>err &
	pid=$!
	wait_lines "$PROXY_LOG" 5 >/dev/null
	cp short.slab www/d.slab.new
	mv www/d.slab.new www/d.slab
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	run cat err
	assert_output "inspect: '$pu': the object changed while in use (100000 bytes, was $was)"
	grep -q ' 416 ' "$PROXY_LOG"
	# S3, through the proxy
	start_s3 s3data bkt
	pack -q --page-size 64K -o s3://bkt/d.slab in.tar
	start_proxy "$AWS_ENDPOINT_URL"
	proxy_rules '[{"method": "GET", "range": true, "skip": 3, "times": 1000, "action": "delay:0.3"}]'
	rm -rf cache
	AWS_ENDPOINT_URL=$PROXY_URL inspect --tar --connections 1 s3://bkt/d.slab >/dev/null 2>err &
	pid=$!
	wait_lines "$PROXY_LOG" 5 >/dev/null
	run s3_curl -s -o /dev/null -w '%{http_code}' -T short.slab "$AWS_ENDPOINT_URL/bkt/d.slab"
	assert_output 200
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	run cat err
	assert_output "inspect: 's3://bkt/d.slab': the object changed while in use (shorter than the $was bytes it was)"
	grep -q ' 416 ' "$PROXY_LOG"
}

@test "a cache made for another URL is not used, though its object has the same size and ETag" {
	# b's d.slab: a's with one label changed, the same size; nginx's ETag is the mtime and the
	# size, so with the same mtime the two answer alike to HEAD
	python3 - in.tar in2.tar <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1]) as a, tarfile.open(sys.argv[2], "w") as b:
    for m in a:
        d = a.extractfile(m).read()
        if m.name == "sample000000.cls":
            d = bytes([d[0] ^ 1])
        b.addfile(m, io.BytesIO(d))
EOF
	mkdir -p www/a www/b
	cp www/d.slab www/a/d.slab
	pack -q --page-size 64K -o www/b/d.slab in2.tar
	[ "$(stat -c %s www/a/d.slab)" = "$(stat -c %s www/b/d.slab)" ]
	! cmp -s www/a/d.slab www/b/d.slab
	touch -d '2020-01-02 03:04:05' www/a/d.slab www/b/d.slab
	start_nginx www
	[ "$(curl -sI "$HTTP_URL/a/d.slab" | grep -i '^etag')" = "$(curl -sI "$HTTP_URL/b/d.slab" | grep -i '^etag')" ]
	inspect --tar www/b/d.slab >tar.b
	inspect --tar "$HTTP_URL/a/d.slab" >/dev/null
	a=$(ls cache/*/*-d.slab)
	inspect --list "$HTTP_URL/b/d.slab" >/dev/null
	b=$(ls cache/*/*-d.slab | grep -vxF "$a")
	# as if the two URLs' names hashed alike: b's files are a's, a's whole object in them
	cp "$a" "$b"
	cp "$a.state" "$b.state"
	inspect --tar "$HTTP_URL/b/d.slab" | cmp - tar.b
}

@test "prefetch --disk keeps the local cache within its budget over several epochs" {
	start_nginx www
	u=$HTTP_URL/d.slab
	for e in 0 1 2; do
		shuffle-plan -q --mode quasi --window 4 --seed $e -o "p$e.plan" www/d.slab
	done
	run prefetch -v --plan p0.plan --plan p1.plan --plan p2.plan --ahead 2 --disk 256K "$u"
	assert_success
	run prefetch --status --json "$u"
	bytes=$(printf '%s\n' "$output" | sed -n 's/.*"resident_bytes": \([0-9]*\),/\1/p' | head -1)
	[ "$bytes" -gt 0 ]
	[ "$bytes" -le $((256 * 1024)) ]
	data=$(find cache -name '*-d.slab' -type f)
	# beside the budget: the header, the table and the trailer (file size less the pages)
	meta=$(inspect --json www/d.slab | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["file_size"] - d["data_bytes"] - d["padding_bytes"])')
	[ "$(du -B1 "$data" | cut -f1)" -le $((256 * 1024 + meta + 8192)) ]
	run prefetch --plan p0.plan --disk 256K --memory 1M "$u"
	assert_failure 2
	assert_output --partial "--disk and --memory exclude each other"
}

# Pages in the local cache that the plans do not use (another rank's share, a --warm) were
# not counted: a walk of rank 0's quarter under --disk 1M left 5.8 MiB in the cache.
@test "prefetch --disk counts the cached pages its plans do not use, and keeps the budget" {
	start_nginx www
	u=$HTTP_URL/d.slab
	shuffle-plan -q --mode sequential --world-size 4 --rank 0 -o p0.plan www/d.slab
	for policy in belady fixed; do
		prefetch -q --warm "$u"
		run -0 prefetch -q --plan p0.plan --ahead 4 --disk 1M --cache-policy $policy "$u"
		run prefetch --status --json "$u"
		bytes=$(printf '%s\n' "$output" | sed -n 's/.*"resident_bytes": \([0-9]*\),/\1/p' | head -1)
		[ "$bytes" -gt 0 ]
		[ "$bytes" -le $((1024 * 1024)) ] || fail "$policy: $bytes bytes in the local cache"
	done
	inspect --tar www/d.slab >tar.local
	inspect --tar "$u" | cmp - tar.local
}

@test "pack -o http://... uploads the .slab as it writes it; a failed pack leaves no object" {
	start_nginx www
	pack -q --page-size 64K -o "$HTTP_URL/put/up.slab" in.tar
	cmp www/d.slab www/put/up.slab
	printf 'not a tar at all, and longer than one block of a tar is: %0600d' 0 >bad.tar
	run pack -q -o "$HTTP_URL/put/bad.slab" bad.tar
	assert_failure 1
	[ ! -e www/put/bad.slab ]
}

@test "shuffle-plan -o http://... uploads the plan; one that fails leaves no object" {
	start_nginx www
	shuffle-plan -q --seed 3 -o local.plan www/d.slab
	shuffle-plan -q --seed 3 -o "$HTTP_URL/put/p.plan" "$HTTP_URL/d.slab"
	cmp local.plan www/put/p.plan
	run -1 --separate-stderr shuffle-plan -q -o "$HTTP_URL/put/bad.plan" www/missing.slab
	[ ! -e www/put/bad.plan ]
}

@test "slab.Dataset and slab.Loader read a URL through libslab as they read the local file" {
	need_libslab
	start_nginx www
	run pyslab - "$HTTP_URL/d.slab" "$PWD/pycache" <<'EOF'
import sys, slab
url, cache = sys.argv[1], sys.argv[2]
d, l = slab.Dataset(url, cache_dir=cache), slab.Dataset("www/d.slab")
assert len(d) == len(l) == 60
for i in range(len(d)):
    a, b = d[i], l[i]
    assert a.key == b.key and a.fields == b.fields
    assert all(bytes(a[f]) == bytes(b[f]) for f in a.fields), i
d.files[0].verify()
kw = dict(batch_size=7, order="quasi", window=4, seed=3, fields=["jpg", "cls"])
n = 0
with slab.Loader([url], cache_dir=cache, connections=3, **kw) as r, slab.Loader(["www/d.slab"], **kw) as t:
    for x, y in zip(r, t):
        assert x.keys == y.keys
        assert [bytes(v) for v in x.fields["jpg"]] == [bytes(v) for v in y.fields["jpg"]]
        n += 1
print(n, "batches")
try:
    slab.Dataset(url + ".none", cache_dir=cache)
except slab.SlabError as e:
    print("error:", e)
try:
    slab.Loader([url], retries=-1)
except ValueError as e:
    print("error:", e)
for t in (float("inf"), 604801, float("nan"), 0):
    try:
        slab.Loader([url], timeout=t)
    except ValueError as e:
        print("error:", e)
with slab.Loader([url], cache_dir=cache, timeout=604800, **kw) as r:
    print(len(next(r)), "in a batch")
EOF
	assert_success
	assert_line "9 batches"
	assert_line --regexp "^error: '$HTTP_URL/d.slab.none': .*HTTP 404"
	assert_line "error: retries must be at least 0, not -1"
	assert_line "error: timeout must be a number of seconds above 0 and at most 604800 (a week), not inf"
	assert_line "error: timeout must be a number of seconds above 0 and at most 604800 (a week), not 604801"
	assert_line "error: timeout must be a number of seconds above 0 and at most 604800 (a week), not nan"
	assert_line "error: timeout must be a number of seconds above 0 and at most 604800 (a week), not 0"
	assert_line "7 in a batch"
}

# A Python consumer waits for a batch whose fetch stalls (retried within a long --timeout):
# a Ctrl-C reaches it then, not when the batch comes (or the timeout ends), and close() cuts
# the fetch off rather than waiting for it. The wait in C is made in short waits, between
# which Python delivers the signal.
@test "Ctrl-C reaches slab.Loader's consumer while a batch's fetch is stalled" {
	need_libslab
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"method": "GET", "range": true, "skip": 2, "times": 100000, "action": "stall:1000"}]'
	# (timeout: a hang guard; without the short waits the consumer waits for ever, and
	# without close() cutting the fetch off, close() does)
	run -0 --separate-stderr timeout 120 env PYTHONPATH="$SLAB_ROOT/scripts" \
		SLAB_LIBRARY="$LIBSLAB" python3 - "$PROXY_URL/d.slab" <<'EOF'
import os, signal, sys, threading, slab
ld = slab.Loader([sys.argv[1]], batch_size=60, fields=["jpg"], timeout=3600, connections=1)
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    print("batch", len(next(ld)))
except KeyboardInterrupt:
    print("interrupted after", ld.stats()["batches"], "batches")
ld.close()
print("closed")
EOF
	assert_output "interrupted after 0 batches
closed"
	grep -q ' stall:1000 ' "$PROXY_LOG"
}

# A reader that stops early while fetches of the pages ahead stall: the tool closes at once,
# cutting them off, rather than waiting for them (retried within --timeout: an hour here).
@test "prefetch --emit into a reader that stops early while the fetches ahead stall: exit 0 at once" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u=$PROXY_URL/d.slab
	shuffle-plan -q --mode sequential -o seq.plan www/d.slab
	# HEAD, the header, the table (the file's last MiB) and the data groups before 256 KiB
	# (more than the pipe holds: prefetch waits to write, not for a fetch) pass, in whatever
	# order the fetches come; every fetch of a group after them stalls. The reader takes 1000
	# bytes and goes once a fetch ahead has stalled.
	proxy_rules "[{\"method\": \"GET\", \"first\": [262144, $(($(filesize www/d.slab) - 1048576))], \"action\": \"stall:1000\"}]"
	# (timeout: a hang guard)
	run -0 --separate-stderr timeout 120 bash -c "set -o pipefail; prefetch -q --timeout 3600 --ahead 64 --plan seq.plan --emit '$u' | python3 -c '
import sys, time
n = len(sys.stdin.buffer.read(1000))
while \" stall:1000 \" not in open(sys.argv[1]).read():
    time.sleep(0.05)
print(n)' '$PROXY_LOG'"
	assert_output 1000
	assert_equal "$stderr" ""
}

# www/v.slab: four H.264 videos of 2 s (64 to 112 pixels wide, keyframes 10 to 25 apart) with
# a cls each, on 16 KiB pages; nginx serving www/.
video_www() {
	command -v ffmpeg >/dev/null 2>&1 || skip "no ffmpeg (Debian package ffmpeg)"
	mkdir v
	local k
	for k in 0 1 2 3; do
		ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=$((64 + 16 * k))x48:rate=25" \
			-t 2 -c:v libx264 -pix_fmt yuv420p -g $((10 + 5 * k)) v/v$k.mp4
		echo $k > v/v$k.cls
	done
	(cd v && tar --format=gnu -cf ../v.tar v0.cls v0.mp4 v1.cls v1.mp4 v2.cls v2.mp4 v3.cls v3.mp4)
	pack -q --page-size 16K -o www/v.slab v.tar
	start_nginx www
}

@test "video clips of an http:// URL are the local file's: prefetch's frames stream" {
	video_www
	shuffle-plan -q --seed 4 -o v.plan www/v.slab
	prefetch -q --plan v.plan --emit --emit-format frames --video mp4 --frames 4 --stride 3 \
		--size 24x16 --crop random-resized www/v.slab > frames.local
	prefetch -q --plan v.plan --emit --emit-format frames --video mp4 --frames 4 --stride 3 \
		--size 24x16 --crop random-resized "$HTTP_URL/v.slab" > frames.url
	# four clips of 4 x 16 x 24 x 3 bytes and their headers
	[ "$(filesize frames.local)" -gt $((4 * 4 * 16 * 24 * 3)) ] || fail "a short frames stream"
	cmp frames.local frames.url
}

@test "video clips of an http:// URL are the local file's: slab.Loader" {
	need_libslab
	video_www
	run -0 pyslab - "$HTTP_URL/v.slab" <<'PY'
import sys, slab
kw = dict(batch_size=3, video="mp4", frames=5, stride=2, size=(16, 16), seed=2, fields=["cls"])
n = 0
with slab.Loader([sys.argv[1]], **kw) as r, slab.Loader(["www/v.slab"], **kw) as t:
    for x, y in zip(r, t):
        assert x.keys == y.keys and bytes(x.images) == bytes(y.images)
        n += len(x.keys)
print(n, "clips")
PY
	assert_output "4 clips"
}

@test "fork() children of a process that opened a URL (DataLoader workers) read it through their own connections" {
	need_libslab_any
	start_nginx www
	run pyslab_any - "$HTTP_URL/d.slab" <<'EOF'
import os, sys, slab
url = sys.argv[1]
local = slab.Dataset("www/d.slab")
want = [[bytes(s[f]) for f in s.fields] for s in (local[i] for i in range(len(local)))]
d = slab.Dataset(url)
d[0]                                    # connections open in the parent before the fork
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        ok = True
        try:
            for i in list(range(len(d)))[k::3] + list(range(len(d))):
                s = d[i]
                ok = ok and [bytes(s[f]) for f in s.fields] == want[i]
        except BaseException as e:
            print("child:", e, flush=True)   # os._exit() does not flush a buffered stdout
            ok = False
        os._exit(0 if ok else 1)
    kids.append(pid)
for i in reversed(range(len(d))):       # the parent goes on reading at the same time
    s = d[i]
    assert [bytes(s[f]) for f in s.fields] == want[i], i
codes = [os.waitpid(p, 0)[1] for p in kids]
print("children", codes)
d.files[0].verify()
EOF
	assert_success
	assert_output "children [0, 0, 0]"
	run twice
	assert_output ""
}

# A presigned URL carries its credential in the query: the signature (a bearer's pass to the
# object until it expires), the key id and maybe a session token. They were shown whole in
# every message, every -v line, the cache's file names and its state file.
@test "a presigned URL's signature, key id and token are never shown: messages, -v, the cache's files" {
	NGINX_SERVER_CONF="location /r/ { return 302 gopher://h/?sig=SIGgopher; }" start_nginx www
	q='X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAFOO%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=600&X-Amz-Security-Token=TOKbar&X-Amz-Signature=SIGdeadbeef'
	shown='X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Expires=600&X-Amz-Security-Token=***&X-Amz-Signature=***'
	run -0 --separate-stderr inspect -v --list "$HTTP_URL/d.slab?$q"
	inspect --list www/d.slab | cmp - <(printf '%s\n' "${lines[@]}")
	assert_equal "${stderr_lines[0]}" "inspect: HEAD $HTTP_URL/d.slab?$shown: 200, ${stderr_lines[0]##*: 200, }"
	run -1 --separate-stderr inspect --list "$HTTP_URL/none.slab?$q#frag"
	assert_equal "$stderr" "inspect: '$HTTP_URL/none.slab?$shown#frag': HTTP 404"
	run -1 --separate-stderr inspect --retries 0 --list "$HTTP_URL/r/d.slab?a=1;key=KEYzzz&b="
	assert_equal "$stderr" "inspect: '$HTTP_URL/r/d.slab?a=1;key=***&b=': redirected to 'gopher://h/?sig=***', not followed (http:// and https:// are, and from https:// only https://)"
	# the cache's files: named by the path, the query's credentials in none of them
	run find cache -type f -name '*-d.slab'
	assert_output --regexp '^cache/127\.0\.0\.1_[0-9]+/[0-9a-f]{16}-d\.slab$'
	run grep -rlaE 'AKIAFOO|TOKbar|SIGdeadbeef' cache
	assert_output ""
	run bash -c "find cache | grep -E 'AKIAFOO|TOKbar|SIGdeadbeef'"
	assert_output ""
}

# The reader named a URL's file by the URL as given, user:password@ and presigned signature and
# all, in its messages (a key not found, a field's failed fetch), in slab.Dataset's and in
# slab.Loader's: the transport's messages masked them, the reader's did not.
@test "a URL's password and signature are masked in the reader's, slab.Dataset's and slab.Loader's messages" {
	need_libslab
	start_nginx www
	start_proxy "$HTTP_URL"
	u="http://joe:pw1234@${PROXY_URL#http://}/d.slab?X-Amz-Signature=SIGxyz"
	shown="http://***@${PROXY_URL#http://}/d.slab?X-Amz-Signature=***"
	re=$(printf '%s' "$shown" | sed 's/[.*?]/\\&/g')
	run -1 --separate-stderr inspect --get nokey "$u"
	assert_equal "$stderr" "inspect: '$shown': no sample with key 'nokey'"
	# every GET refused once the Dataset is open
	run pyslab - "$u" "$PWD/pycache" "$PROXY_RULES" <<'EOF'
import os, sys, slab
url, cache, rules = sys.argv[1], sys.argv[2], sys.argv[3]
d = slab.Dataset(url, cache_dir=cache, retries=0)
assert d.files[0].path == url
with open(rules + ".tmp", "w") as f:
    f.write('[{"method": "GET", "range": true, "action": "status:403"}]')
os.rename(rules + ".tmp", rules)
try:
    bytes(d[5]["jpg"])
except slab.SlabError as e:
    print("dataset:", e)
try:
    with slab.Loader([url], cache_dir=cache, retries=0, batch_size=4) as r:
        for b in r:
            pass
except slab.SlabError as e:
    print("loader:", e)
EOF
	assert_success
	assert_line --regexp "^dataset: $re: HTTP 403 AccessDenied: Access Denied \(bytes [0-9]+-[0-9]+\)\$"
	assert_line --regexp "^loader: '$re': HTTP 403 AccessDenied: Access Denied \(bytes [0-9]+-[0-9]+\)\$"
	refute_output --partial pw1234
	refute_output --partial SIGxyz
}

# The tools named their inputs and outputs by the arguments as given: inspect's summary,
# --verify and --json, prefetch's --warm, --status and --evict, shuffle-plan -v and pack's
# last line showed a URL's user:password@ and presigned signature, which every message of
# the library masks.
@test "the tools' output, messages and -v lines never show a URL's password or signature" {
	start_nginx www
	u="http://joe:pw1234@${HTTP_URL#http://}/d.slab?X-Amz-Signature=SIGxyz"
	shown="http://***@${HTTP_URL#http://}/d.slab?X-Amz-Signature=***"
	run -0 inspect --verify "$u"
	assert_output --regexp "^$(printf '%s' "$shown" | sed 's/[.*?]/\\&/g'): ok, 60 samples, "
	run -0 inspect "$u"
	assert_line --index 0 "file:         $shown"
	run -0 inspect --json "$u"
	assert_line --index 1 "  \"file\": \"$shown\","
	{
		prefetch -v --warm "$u"
		prefetch --status --json "$u"
		prefetch --status "$u"
		prefetch -v --evict "$u"
		shuffle-plan -v -o p.plan "$u"
		pack -v -o "http://joe:pw1234@${HTTP_URL#http://}/put/x.slab?sig=SIGxyz" in.tar
		pack -o "http://joe:pw1234@${HTTP_URL#http://}/nop/x.slab?sig=SIGxyz" in.tar || true
	} >out 2>&1
	run grep -c -e pw1234 -e SIGxyz out
	assert_output 0
	run cat out
	assert_line "prefetch: '$shown': evicted, 0 of 102 pages still in the local cache"
	assert_line --partial "shuffle-plan: file 0 '$shown': 60 samples,"
	assert_line --partial "pack: 'http://***@${HTTP_URL#http://}/put/x.slab?sig=***': 60 samples,"
	assert_line "pack: 'http://***@${HTTP_URL#http://}/nop/x.slab?sig=***': PUT: HTTP 405"
}

# A presigned URL is signed for one method: a server answers its HEAD 403 (S3:
# SignatureDoesNotMatch), and a plain server's 403 to HEAD failed the open at once, so a
# presigned GET URL could not be read at all. A refused HEAD is followed by the GET of the
# first byte, whose answer gives the size, or, refused too, the server's code in its body.
@test "an http(s) URL whose HEAD is refused (a presigned GET URL) is read through a GET" {
	start_nginx www
	start_proxy "$HTTP_URL"
	u="$PROXY_URL/d.slab?X-Amz-Expires=600&X-Amz-Signature=SIGxyz"
	proxy_rules '[{"method": "HEAD", "action": "status:403:SignatureDoesNotMatch"}]'
	inspect --list www/d.slab >list.local
	run -0 --separate-stderr inspect --list "$u"
	cmp list.local <(printf '%s\n' "${lines[@]}")
	run awk 'NR <= 2 { print $1, $3, $4 }' "$PROXY_LOG"
	assert_output "HEAD - 403
GET bytes=0-0 206"
	# the GET refused too: what the server said in its body
	rm -rf cache
	proxy_rules '[{"action": "status:403:AccessDenied"}]'
	run -1 --separate-stderr inspect --list "$u"
	assert_equal "$stderr" "inspect: '$PROXY_URL/d.slab?X-Amz-Expires=600&X-Amz-Signature=***': HTTP 403 AccessDenied: An error the fault proxy was told to give."
	# a 404 to HEAD is still the answer: no GET
	: >"$PROXY_LOG"
	proxy_rules '[{"method": "HEAD", "action": "status:404:NoSuchKey"}]'
	run -1 --separate-stderr inspect --list "$u"
	assert_equal "$stderr" "inspect: '$PROXY_URL/d.slab?X-Amz-Expires=600&X-Amz-Signature=***': HTTP 404"
	run awk '{ print $1 }' "$PROXY_LOG"
	assert_output "HEAD"
}

@test "https://: the server's certificate is checked (AWS_CA_BUNDLE names the CAs to trust)" {
	NGINX_TLS=1 start_nginx www
	u=$HTTP_URL/d.slab
	run inspect --retries 0 --list "$u"
	assert_failure 1
	assert_output --regexp "^inspect: '$u': .*(certificate|SSL)"
	inspect --list www/d.slab >list.local
	AWS_CA_BUNDLE=$NGINX_CERT inspect --list "$u" | cmp - list.local
	AWS_CA_BUNDLE=$NGINX_CERT inspect --tar "$u" >tar.url
	inspect --tar www/d.slab | cmp - tar.url
}

@test "https://: a redirect is followed to https:// only, never down to http://" {
	start_nginx www
	plain=$HTTP_URL plain_log=$NGINX_LOG
	NGINX_TLS=1 NGINX_SERVER_CONF="location /r/ { return 302 $plain/d.slab; } location /s/ { return 302 /d.slab; }" start_nginx www
	export AWS_CA_BUNDLE=$NGINX_CERT
	inspect --list www/d.slab >list.local
	inspect --list "$HTTP_URL/s/d.slab" | cmp - list.local
	run inspect --retries 0 --list "$HTTP_URL/r/d.slab"
	assert_failure 1
	assert_output "inspect: '$HTTP_URL/r/d.slab': redirected to '$plain/d.slab', not followed (http:// and https:// are, and from https:// only https://)"
	# the plain server was never asked
	[ ! -s "$plain_log" ]
}

@test "bad URLs and options: clear usage errors" {
	run inspect --list s3://bucket-only
	assert_failure 1
	assert_output --partial "no key in S3 URL"
	run inspect --connections 0 --list www/d.slab
	assert_failure 2
	assert_line --index 0 "inspect: --connections '0': not a number from 1 to 256"
	run prefetch --retries x www/d.slab
	assert_failure 2
	assert_line --index 0 "prefetch: --retries 'x': not a number from 0 to 100"
	run shuffle-plan --s3-endpoint ftp://x www/d.slab
	assert_failure 2
	assert_line --index 0 "shuffle-plan: --s3-endpoint 'ftp://x': not an http:// or https:// URL"
	# a query string, a fragment or a user name would be dropped from every request
	run inspect --s3-endpoint 'http://127.0.0.1:9/?x=1' --list s3://b/k
	assert_failure 2
	assert_line --index 0 "inspect: --s3-endpoint 'http://127.0.0.1:9/?x=1': a query string has no place in it (want http://HOST[:PORT][/PATH] or https://...)"
	run inspect --s3-endpoint 'http://127.0.0.1:9/#x' --list s3://b/k
	assert_failure 2
	assert_line --index 0 "inspect: --s3-endpoint 'http://127.0.0.1:9/#x': a fragment has no place in it (want http://HOST[:PORT][/PATH] or https://...)"
	run inspect --s3-endpoint 'http://joe:pw1234@127.0.0.1:9' --list s3://b/k
	assert_failure 2
	assert_line --index 0 "inspect: --s3-endpoint 'http://***@127.0.0.1:9': a user name has no place in it: credentials come from the environment or a profile (want http://HOST[:PORT][/PATH] or https://...)"
	# a password with a '#' not encoded: a bad URL, its message without the password
	run inspect --list 'http://joe:pw#1234@127.0.0.1:9/d.slab'
	assert_failure 1
	assert_output "inspect: 'http://***@127.0.0.1:9/d.slab': bad URL: Port number was not a decimal number between 0 and 65535"
	AWS_ENDPOINT_URL='http://127.0.0.1:9/?x=1' run inspect --retries 0 --list s3://b/k
	assert_failure 1
	assert_output "inspect: 's3://b/k': bad S3 endpoint 'http://127.0.0.1:9/?x=1': a query string has no place in it (want http://HOST[:PORT][/PATH] or https://...)"
	run prefetch --disk 1M www/d.slab
	assert_failure 2
	assert_line --index 0 "prefetch: --disk goes with --plan"
}

# ---- S3: Swift's S3 API on 127.0.0.1, which checks every request's SigV4 signature -----------

@test "pack -o s3://... uploads (multipart), then every tool reads s3://... as the local file" {
	start_s3 s3data bkt
	# more than one 8 MiB part
	mkwds --count 120 --jpeg-bytes 80K:150K --seed 7 -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	pack -q --page-size 64K -o s3://bkt/sets/big.slab big.tar
	run s3_curl -s -o got.slab -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/sets/big.slab"
	assert_output 200
	cmp big.slab got.slab
	u=s3://bkt/sets/big.slab
	run inspect --verify "$u"
	assert_success
	inspect --list big.slab >list.local
	inspect --list "$u" | cmp - list.local
	inspect --tar big.slab >tar.local
	inspect --tar "$u" | cmp - tar.local
	shuffle-plan -q --mode quasi --seed 2 -o p.plan big.slab
	prefetch -q --plan p.plan --emit --emit-format raw big.slab >emit.local
	rm -rf cache
	prefetch -q --plan p.plan --emit --emit-format raw "$u" | cmp - emit.local
	# virtual-host addressing: the bucket in the host name (*.localhost is loopback)
	rm -rf cache
	inspect --s3-endpoint "http://s3.localhost:$S3_PORT" --s3-addressing virtual --tar "$u" |
		cmp - tar.local
}

@test "S3 errors are one line with the server's code: wrong secret, unknown key, missing bucket or key" {
	start_s3 s3data bkt
	pack -q --page-size 64K -o s3://bkt/d.slab in.tar
	run inspect --list s3://bkt/none.slab
	assert_failure 1
	assert_output --regexp "^inspect: 's3://bkt/none.slab': HTTP 404 NoSuchKey"
	[ "${#lines[@]}" -eq 1 ]
	# a '?' in an S3 key is the key's, not a query with values to mask
	run -1 inspect --list 's3://bkt/a?key=v&token=t.slab'
	assert_output "inspect: 's3://bkt/a?key=v&token=t.slab': HTTP 404 NoSuchKey"
	run inspect --list s3://nobucket/d.slab
	assert_failure 1
	assert_output --regexp "^inspect: 's3://nobucket/d.slab': HTTP 404 NoSuchBucket"
	secret=$AWS_SECRET_ACCESS_KEY
	AWS_SECRET_ACCESS_KEY=not-the-secret run inspect --list s3://bkt/d.slab
	assert_failure 1
	assert_output --regexp "^inspect: 's3://bkt/d.slab': HTTP 403 SignatureDoesNotMatch"
	[ "${#lines[@]}" -eq 1 ]
	AWS_ACCESS_KEY_ID=nobody:none run inspect --list s3://bkt/d.slab
	assert_failure 1
	assert_output --regexp "^inspect: 's3://bkt/d.slab': HTTP 403 (SignatureDoesNotMatch|InvalidAccessKeyId)"
	# unsigned: refused (Swift answers 400 where AWS says 403 AccessDenied)
	run inspect --no-sign-request --list s3://bkt/d.slab
	assert_failure 1
	assert_output --regexp "^inspect: 's3://bkt/d.slab': HTTP 40[03]"
	refute_output --partial "sent unsigned"
	# unsigned for want of credentials: the refusal says where there were none
	(unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; HOME=$PWD/nohome run inspect --list s3://bkt/d.slab
	 assert_failure 1
	 assert_output --regexp "^inspect: 's3://bkt/d.slab': HTTP 40[03]( .*)? \\(sent unsigned: no credentials for profile 'default' in the environment, '$PWD/nohome/.aws/credentials' or '$PWD/nohome/.aws/config'\\)$"
	 [ "${#lines[@]}" -eq 1 ])
	# a failed upload is aborted: nothing appears
	printf 'not a tar at all, and longer than one block of a tar is: %0600d' 0 >bad.tar
	run pack -q -o s3://bkt/bad.slab bad.tar
	assert_failure 1
	run s3_curl -s -o /dev/null -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/bad.slab"
	assert_output 404
	# the secret is in no message, no -v line, no file of the cache
	inspect -v --tar s3://bkt/d.slab >/dev/null 2>verbose
	grep -q "GET $AWS_ENDPOINT_URL/bkt/d.slab bytes=" verbose
	run grep -rlF "$secret" verbose cache
	assert_output ""
}

@test "pack -o s3://... killed by SIGTERM or SIGINT mid-upload aborts its multipart upload, keeps the old object and dies of the signal" {
	start_s3 s3data bkt
	mkwds --count 200 --jpeg-bytes 100K:200K --seed 3 -o big.tar
	pack -q --page-size 64K -o s3://bkt/k.slab in.tar
	s3_curl -sSf -o old.slab "$AWS_ENDPOINT_URL/bkt/k.slab"
	for sig in TERM INT; do
		rm -f fifo
		mkfifo fifo
		n0=$(wc -l <"$S3_LOG")
		# (a background job starts with SIGINT ignored: pack gets its default action back)
		python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' pack -q -o s3://bkt/k.slab - <fifo 2>err &
		pid=$!
		exec 5>fifo
		# 20 MB of the tar and no end: pack waits mid-upload, a part or two sent
		head -c 20000000 big.tar >&5
		for ((i = 0; i < 600; i++)); do
			tail -n +$((n0 + 1)) "$S3_LOG" | grep -q '^proxy-server: PUT .*/bkt/k.slab%3FpartNumber%3D1%26.* 200 ' && break
			sleep 0.1
		done
		kill -"$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		exec 5>&-
		[ "$rc" -eq $((128 + $(kill -l "$sig"))) ]
		run cat err
		assert_output ""
		# the upload aborted on the server: none left, its parts gone
		run bash -c "tail -n +$((n0 + 1)) '$S3_LOG' | grep -c '^proxy-server: DELETE .*/bkt/k.slab%3FuploadId%3D.* 204 '"
		assert_output 1
		run s3_curl -sSf "$AWS_ENDPOINT_URL/bkt?uploads="
		assert_success
		assert_output --partial "<ListMultipartUploadsResult"
		refute_output --partial "<Upload>"
		s3_curl -sSf -o now.slab "$AWS_ENDPOINT_URL/bkt/k.slab"
		cmp old.slab now.slab
	done
}

@test "pack -o s3://...: a CompleteMultipartUpload answered NoSuchUpload when sent again is done if the object is the parts', else an error" {
	start_s3 s3data bkt
	s3=$AWS_ENDPOINT_URL
	start_proxy "$AWS_ENDPOINT_URL"
	export AWS_ENDPOINT_URL=$PROXY_URL
	mkwds --count 120 --jpeg-bytes 80K:150K --seed 7 -o big.tar
	pack -q --page-size 64K -o big.slab big.tar
	# The first complete reaches the server, which completes the upload; its answer is cut
	# off. Sent again, it is answered as AWS answers it then (this server completes it again).
	proxy_rules '[{"method": "POST", "path": "uploadId=", "times": 1, "action": "truncate:0"},
		      {"method": "POST", "path": "uploadId=", "skip": 1, "times": 1, "action": "status:404:NoSuchUpload"}]'
	pack -q --page-size 64K -o s3://bkt/k.slab big.tar
	grep -q '^POST /bkt/k.slab?uploadId=.* 404 .* status:404:NoSuchUpload ' "$PROXY_LOG"
	grep -q '^HEAD /bkt/k.slab - 200 ' "$PROXY_LOG"
	s3_curl -sSf -o got.slab "$s3/bkt/k.slab"
	cmp big.slab got.slab
	# The first never reaches the server (libcurl sends it again itself: the 404 comes at
	# what is the first attempt to us): the object there is another (the one before), the
	# error stays, the upload is aborted and the object left as it was.
	pack -q --page-size 64K -o s3://bkt/k.slab in.tar
	s3_curl -sSf -o old.slab "$s3/bkt/k.slab"
	: >"$PROXY_LOG"
	proxy_rules '[{"method": "POST", "path": "uploadId=", "times": 1, "action": "drop"},
		      {"method": "POST", "path": "uploadId=", "skip": 1, "times": 1, "action": "status:404:NoSuchUpload"}]'
	run pack -q --page-size 64K -o s3://bkt/k.slab big.tar
	assert_failure 1
	assert_output "pack: 's3://bkt/k.slab': HTTP 404 NoSuchUpload (CompleteMultipartUpload)"
	grep -q '^HEAD /bkt/k.slab - 200 ' "$PROXY_LOG"
	grep -q '^DELETE /bkt/k.slab?uploadId=.* 204 ' "$PROXY_LOG"
	s3_curl -sSf -o now.slab "$s3/bkt/k.slab"
	cmp old.slab now.slab
}

@test "S3 credentials and region from ~/.aws profiles; the endpoint from the command line" {
	start_s3 s3data bkt
	pack -q --page-size 64K -o s3://bkt/d.slab in.tar
	mkdir -p "$HOME/.aws"
	printf '[default]\naws_access_key_id = nobody:none\naws_secret_access_key = wrong\n\n[train]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
		"$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$HOME/.aws/credentials"
	printf '[profile train]\nregion = us-east-1\n' >"$HOME/.aws/config"
	endpoint=$AWS_ENDPOINT_URL key=$AWS_ACCESS_KEY_ID secret=$AWS_SECRET_ACCESS_KEY
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_ENDPOINT_URL AWS_REGION
	inspect --list www/d.slab >list.local
	run inspect --s3-endpoint "$endpoint" --list s3://bkt/d.slab
	assert_failure 1
	assert_output --partial "HTTP 403"
	inspect --s3-endpoint "$endpoint" --profile train --list s3://bkt/d.slab | cmp - list.local
	AWS_PROFILE=train AWS_ENDPOINT_URL=$endpoint inspect --list s3://bkt/d.slab | cmp - list.local
	run inspect --s3-endpoint "$endpoint" --profile nosuch --list s3://bkt/d.slab
	assert_failure 1
	assert_output --partial "nosuch"
	# a credentials file that starts with a UTF-8 byte order mark (Windows editors)
	printf '\357\273\277[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
		"$key" "$secret" >"$HOME/.aws/credentials"
	inspect --s3-endpoint "$endpoint" --list s3://bkt/d.slab | cmp - list.local
}

@test "slab.Loader reads s3:// with endpoint= and a local cache budget" {
	need_libslab
	start_s3 s3data bkt
	pack -q --page-size 64K -o s3://bkt/d.slab in.tar
	endpoint=$AWS_ENDPOINT_URL
	unset AWS_ENDPOINT_URL
	run pyslab - "$endpoint" <<'EOF'
import sys, slab
kw = dict(batch_size=8, order="quasi", window=4, seed=1, fields=["jpg"], ahead=2)
with slab.Loader(["s3://bkt/d.slab"], endpoint=sys.argv[1], disk="512K", **kw) as r, \
        slab.Loader(["www/d.slab"], **kw) as t:
    n = 0
    for x, y in zip(r, t):
        assert [bytes(v) for v in x.fields["jpg"]] == [bytes(v) for v in y.fields["jpg"]]
        n += 1
print(n, "batches")
EOF
	assert_success
	assert_output "8 batches"
}

@test "inspect --get without --field on a sample of several fields fetches none of its bytes" {
	start_nginx www
	u=$HTTP_URL/d.slab
	inspect "$u" >/dev/null        # the header, the table and the trailer, in the cache
	key=$(inspect --list www/d.slab | awk '$5 != "" { print $2; exit }')
	run -2 --separate-stderr inspect -v --get "$key" "$u"
	assert_equal "${#stderr_lines[@]}" 2
	assert_equal "${stderr_lines[0]%%: 200, *}" "inspect: HEAD $u"
	assert_equal "${stderr_lines[1]}" "inspect: '$u': sample '$key' has several fields: choose one with --field"
}

@test "prefetch --warm of a URL counts what is in the local cache, also what opening fetched" {
	mkdir -p small
	mkwds --count 4 --jpeg-bytes 2K:4K --seed 2 -o s.tar
	pack -q --page-size 64K -o small/s.slab s.tar
	start_nginx small
	u=$HTTP_URL/s.slab
	# a file under 1 MiB is all fetched when it is opened: --warm fetches nothing more
	run -0 --separate-stderr prefetch --warm "$u"
	run -0 prefetch --status "$u"
	assert_line --index 1 --regexp " 100\.0% $u\$"
	res=$(awk 'NR == 2 { print $1, $2 }' <<<"$output")
	[ "$res" != "0 B" ]
	run -0 --separate-stderr prefetch --warm "$u"
	assert_regex "$stderr" "^prefetch: warmed 1 file, $res in [0-9.]+ s, [0-9.]+ MB/s\$"
	run -0 --separate-stderr prefetch -v --warm --connections 1 "$u"
	assert_equal "$(grep -c "^prefetch: '$u': $res in " <<<"$stderr")" 1
}
