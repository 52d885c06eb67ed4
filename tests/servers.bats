#!/usr/bin/env bats
# servers: the test harness for remote I/O itself (test_helper/servers.bash), with curl: nginx
# answers ranges byte-exact and takes PUT under /put/ only; the S3 server (Swift's s3api)
# round-trips objects (simple and multipart) signed as S3 clients sign, refuses a bad
# signature and answers S3's errors; the fault proxy passes bytes, headers and
# connections through unchanged, each fault does what it says, its counts hold, its log has a
# line a request; stop_servers leaves no process behind.

load test_helper/common
load test_helper/servers

setup() {
	not_twice
	command -v curl >/dev/null 2>&1 || skip "curl is not installed"
}

# s3curl ARGS...: curl signing as an S3 client does (SigV4, unsigned payload), failing on HTTP
# errors.
s3curl() {
	s3_curl -sS --fail-with-body "$@"
}

# bytes FILE START COUNT: COUNT bytes of FILE from START.
bytes() {
	dd if="$1" iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none
}

# data: www/f.bin, 1 MiB + 123 bytes of random data, and the same as ref.bin.
data() {
	mkdir -p www
	head -c $((1024 * 1024 + 123)) /dev/urandom >www/f.bin
	cp www/f.bin ref.bin
}

# status URL CURL_ARGS...: the HTTP status curl got (000: none), the body to out.bin.
status() {
	local url=$1
	shift
	curl -sS -o out.bin -w '%{http_code}' "$@" "$url" || true
}

# fields N: field N of each line of the proxy's log
fields() {
	awk -v n="$1" '{print $n}' "$PROXY_LOG" | tr '\n' ' '
}

@test "nginx: ranged GETs answer exactly the bytes asked, with ETag and 206; the log has a line a request" {
	data
	start_nginx www
	[[ $HTTP_URL == http://127.0.0.1:* ]]
	curl -sS --fail -o whole.bin "$HTTP_URL/f.bin"
	cmp whole.bin ref.bin
	curl -sS --fail -D h1 -r 1000-5999 -o part.bin "$HTTP_URL/f.bin"
	bytes ref.bin 1000 5000 | cmp - part.bin
	grep -q '^HTTP/1.1 206' h1
	grep -qi '^Content-Range: bytes 1000-5999/1048699' h1
	grep -qi '^ETag: "' h1
	curl -sS --fail -r 1048600- -o tail.bin "$HTTP_URL/f.bin"
	bytes ref.bin 1048600 99 | cmp - tail.bin
	run curl -sS -o /dev/null -w '%{http_code}' -r 2000000-2000010 "$HTTP_URL/f.bin"
	assert_output 416
	[ "$(wait_lines "$NGINX_LOG" 4)" -eq 4 ]
	run cat "$NGINX_LOG"
	assert_line -n 0 "GET /f.bin - 200 1048699"
	assert_line -n 1 "GET /f.bin bytes=1000-5999 206 5000"
	assert_line -n 2 "GET /f.bin bytes=1048600- 206 99"
	assert_line -n 3 --regexp '^GET /f.bin bytes=2000000-2000010 416 '
}

@test "nginx: PUT under /put/ writes into ROOT/put/ (folders made, chunked too); elsewhere it is refused" {
	data
	start_nginx www
	run curl -sS -o /dev/null -w '%{http_code}' -T ref.bin "$HTTP_URL/put/a/b/x.slab"
	assert_output 201
	cmp www/put/a/b/x.slab ref.bin
	curl -sS --fail -o back.bin "$HTTP_URL/put/a/b/x.slab"
	cmp back.bin ref.bin
	# from a pipe: no length, a chunked body
	run curl -sS -o /dev/null -w '%{http_code}' -T - "$HTTP_URL/put/c.bin" <ref.bin
	assert_output 201
	cmp www/put/c.bin ref.bin
	run curl -sS -o /dev/null -w '%{http_code}' -T ref.bin "$HTTP_URL/y.slab"
	assert_output 405
	[ ! -e www/y.slab ]
}

@test "s3: a PUT and a ranged GET signed with SigV4, path-style and virtual-host style; a line a request" {
	data
	start_s3 s3data bkt other
	[ "$AWS_ENDPOINT_URL" = "http://127.0.0.1:$S3_PORT" ]
	[ "$AWS_ACCESS_KEY_ID" = slab:tester ] && [ "$AWS_REGION" = us-east-1 ]
	[ -n "$AWS_SECRET_ACCESS_KEY" ] && [[ $AWS_SECRET_ACCESS_KEY != *"$AWS_ACCESS_KEY_ID"* ]]
	s3curl -T ref.bin -o /dev/null "$AWS_ENDPOINT_URL/bkt/d/x.slab"
	s3curl -D h -r 4096-8191 -o part.bin "$AWS_ENDPOINT_URL/bkt/d/x.slab"
	bytes ref.bin 4096 4096 | cmp - part.bin
	grep -q '^HTTP/1.1 206' h
	grep -qi '^Content-Range: bytes 4096-8191/1048699' h
	# the bucket known from the Host header only (curl takes *.localhost for loopback)
	s3curl -o whole.bin "http://bkt.s3.localhost:$S3_PORT/d/x.slab"
	cmp whole.bin ref.bin
	run s3curl "$AWS_ENDPOINT_URL/other/d/x.slab"
	assert_failure
	assert_output --partial NoSuchKey
	# the buckets' PUTs, then ours (each line written once its answer is sent: it may come
	# just after the client has it)
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(grep -vc '(txn: ' "$S3_LOG")" -ge 6 ] && break
		sleep 0.1
	done
	run grep -v '(txn: ' "$S3_LOG"
	assert_equal "${#lines[@]}" 6
	assert_line -n 0 --regexp "^proxy-server: PUT 127.0.0.1 /bkt 200 "
	assert_line -n 1 --regexp "^proxy-server: PUT 127.0.0.1 /other 200 "
	assert_line -n 2 --regexp "^proxy-server: PUT 127.0.0.1 /bkt/d/x.slab 200 1048699 - tx"
	assert_line -n 3 --regexp "^proxy-server: GET 127.0.0.1 /bkt/d/x.slab 206 - 4096 tx"
	assert_line -n 4 --regexp "^proxy-server: GET bkt.s3.localhost /d/x.slab 200 - 1048699 tx"
	assert_line -n 5 --regexp "^proxy-server: GET 127.0.0.1 /other/d/x.slab 404 "
}

@test "s3: a wrong secret or an unknown key id gets 403, a missing key or bucket 404, each with S3's code" {
	start_s3 s3data bkt
	echo data >f
	s3curl -T f -o /dev/null "$AWS_ENDPOINT_URL/bkt/f"
	AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}x run s3curl -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/f"
	assert_failure
	assert_output --regexp '<Code>SignatureDoesNotMatch</Code>.*403$'
	# (Swift's tempauth does not tell an unknown key id from a wrong secret, as AWS does with
	# InvalidAccessKeyId)
	AWS_ACCESS_KEY_ID=slab:nobody run s3curl -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/f"
	assert_failure
	assert_output --regexp '<Code>(InvalidAccessKeyId|SignatureDoesNotMatch)</Code>.*403$'
	AWS_ACCESS_KEY_ID=nobody run s3curl -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/f"
	assert_failure
	assert_output --regexp '<Code>(InvalidAccessKeyId|SignatureDoesNotMatch)</Code>.*403$'
	run s3curl -w '%{http_code}' "$AWS_ENDPOINT_URL/bkt/nokey"
	assert_failure
	assert_output --regexp '<Code>NoSuchKey</Code>.*404$'
	run s3curl -w '%{http_code}' "$AWS_ENDPOINT_URL/nobkt/f"
	assert_output --regexp '<Code>NoSuchBucket</Code>.*404$'
	run s3curl -w '%{http_code}' "http://nobkt.s3.localhost:$S3_PORT/f"
	assert_output --regexp '<Code>NoSuchBucket</Code>.*404$'
	# and the right ones still work
	run s3curl "$AWS_ENDPOINT_URL/bkt/f"
	assert_success
	assert_output data
}

@test "s3: a multipart upload (create, two parts, complete) gives the object back whole" {
	data
	start_s3 s3data bkt
	local url="$AWS_ENDPOINT_URL/bkt/m.slab" id e1 e2
	# "uploads=", not "uploads": curl 7.88 signs a query parameter without '=' wrongly
	s3curl -X POST -o create.xml "$url?uploads="
	id=$(sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p' create.xml)
	[ -n "$id" ]
	head -c $((5 * 1024 * 1024)) /dev/urandom >p1
	bytes ref.bin 0 1000 >p2
	e1=$(s3curl -T p1 -D - -o /dev/null "$url?partNumber=1&uploadId=$id" | sed -n 's/^[Ee][Tt]ag: *\([^\r]*\).*/\1/p')
	e2=$(s3curl -T p2 -D - -o /dev/null "$url?partNumber=2&uploadId=$id" | sed -n 's/^[Ee][Tt]ag: *\([^\r]*\).*/\1/p')
	[ -n "$e1" ] && [ -n "$e2" ]
	printf '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part><Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>' \
		"$e1" "$e2" >done.xml
	s3curl -X POST --data-binary @done.xml -o complete.xml "$url?uploadId=$id"
	grep -q CompleteMultipartUploadResult complete.xml
	s3curl -o back.bin "$url"
	cat p1 p2 | cmp - back.bin
}

@test "proxy: bytes, statuses, headers and keep-alive connections pass through unchanged; a line a request" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	[[ $PROXY_URL == http://127.0.0.1:* ]] && [ "$PROXY_URL" != "$HTTP_URL" ]
	# two requests on one connection, then a ranged one, a HEAD, a 404, PUTs with a length and chunked
	curl -sS --fail -D h1 -o a.bin "$PROXY_URL/f.bin" --next -sS --fail -D h2 -o b.bin -r 10-20 "$PROXY_URL/f.bin"
	cmp a.bin ref.bin
	bytes ref.bin 10 11 | cmp - b.bin
	curl -sS --fail -D direct -o /dev/null "$HTTP_URL/f.bin"
	grep -i '^ETag:' direct >etag.direct
	grep -i '^ETag:' h1 | cmp - etag.direct
	grep -qi '^Content-Range: bytes 10-20/1048699' h2
	run curl -sS -I "$PROXY_URL/f.bin"
	assert_output --regexp 'Content-Length: 1048699'
	run status "$PROXY_URL/nope"
	assert_output 404
	run status "$PROXY_URL/put/p.bin" -T ref.bin
	assert_output 201
	cmp www/put/p.bin ref.bin
	run status "$PROXY_URL/put/q.bin" -T - <ref.bin
	assert_output 201
	cmp www/put/q.bin ref.bin
	run cat "$PROXY_LOG"
	assert_equal "${#lines[@]}" 6
	assert_line -n 0 --regexp '^GET /f.bin - 200 1048699 pass [0-9]+$'
	assert_line -n 1 --regexp '^GET /f.bin bytes=10-20 206 11 pass [0-9]+$'
	assert_line -n 2 --regexp '^HEAD /f.bin - 200 0 pass '
	assert_line -n 3 --regexp '^GET /nope - 404 [0-9]+ pass '
	assert_line -n 4 --regexp '^PUT /put/p.bin - 201 0 pass '
	assert_line -n 5 --regexp '^PUT /put/q.bin - 201 0 pass '
	# the client's connection was kept for its second request, and not shared with another client
	local conns
	read -ra conns <<<"$(fields 7)"
	[ "${conns[0]}" = "${conns[1]}" ]
	[ "${conns[1]}" != "${conns[2]}" ]
	# upstream saw every request once, as sent
	[ "$(wait_lines "$NGINX_LOG" 7)" -eq 7 ] # and the direct GET
	grep -q '^GET /f.bin bytes=10-20 206 11$' "$NGINX_LOG"
}

@test "proxy: status:503 answers S3's SlowDown with Retry-After: 0, for 'times' requests; 500, 429, 403 too; a code given" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"method": "GET", "path": "f.bin", "times": 2, "action": "status:503"}]'
	run status "$PROXY_URL/f.bin" -D h
	assert_output 503
	grep -q '<Code>SlowDown</Code>' out.bin
	grep -qi '^Retry-After: 0' h
	run status "$PROXY_URL/f.bin"
	assert_output 503
	run status "$PROXY_URL/f.bin"
	assert_output 200
	cmp out.bin ref.bin
	local code
	for code in 500 429 403; do
		proxy_rules "{\"action\": \"status:$code\"}"
		run status "$PROXY_URL/f.bin"
		assert_output "$code"
	done
	grep -q '<Code>AccessDenied</Code>' out.bin
	# S3's code given
	proxy_rules '{"action": "status:404:NoSuchUpload"}'
	run status "$PROXY_URL/f.bin"
	assert_output 404
	grep -q '<Code>NoSuchUpload</Code>' out.bin
	run fields 6
	assert_output "status:503 status:503 pass status:500 status:429 status:403 status:404:NoSuchUpload "
	run fields 4
	assert_output "503 503 200 500 429 403 404 "
	# none of the faulted requests reached nginx
	[ "$(wait_lines "$NGINX_LOG" 1)" -eq 1 ]
}

@test "proxy: flip inverts exactly one byte (K, or the middle one for -1), in full and ranged answers" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"path": "f.bin", "action": "flip:70000"}]'
	run status "$PROXY_URL/f.bin"
	assert_output 200
	run cmp -l out.bin ref.bin
	assert_equal "${#lines[@]}" 1
	[[ ${lines[0]} =~ ^\ *70001\  ]]
	[ "$(filesize out.bin)" -eq "$(filesize ref.bin)" ]
	proxy_rules '[{"range": true, "action": "flip:-1"}]'
	run status "$PROXY_URL/f.bin" -r 100-199
	assert_output 206
	bytes ref.bin 100 100 >want.bin
	run cmp -l out.bin want.bin
	assert_equal "${#lines[@]}" 1
	[[ ${lines[0]} =~ ^\ *51\  ]]
	# the rule was for ranged requests only
	run status "$PROXY_URL/f.bin"
	cmp out.bin ref.bin
}

@test "proxy: truncate sends the real Content-Length and N bytes, then closes" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"times": 1, "action": "truncate:100000"}]'
	run curl -sS -D h -o out.bin "$PROXY_URL/f.bin"
	assert_equal "$status" 18 # partial file
	grep -qi '^Content-Length: 1048699' h
	[ "$(filesize out.bin)" -eq 100000 ]
	bytes ref.bin 0 100000 | cmp - out.bin
	run status "$PROXY_URL/f.bin"
	cmp out.bin ref.bin
	run fields 5
	assert_output "100000 1048699 "
}

@test "proxy: stall sends the real Content-Length and N bytes, then nothing while the client waits" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"times": 1, "action": "stall:100000"}]'
	run curl -sS -m 2 -D h -o out.bin "$PROXY_URL/f.bin"
	assert_equal "$status" 28 # timed out, still connected
	grep -qi '^Content-Length: 1048699' h
	[ "$(filesize out.bin)" -eq 100000 ]
	bytes ref.bin 0 100000 | cmp - out.bin
	run status "$PROXY_URL/f.bin"
	cmp out.bin ref.bin
	run fields 6
	assert_output "stall:100000 pass "
}

@test "proxy: drop closes without an answer; delay answers after the delay" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"method": "GET", "times": 1, "action": "drop"}, {"method": "HEAD", "action": "delay:0.3"}]'
	run curl -sS -o out.bin "$PROXY_URL/f.bin"
	assert_equal "$status" 52 # empty reply
	local t0 t1
	t0=$(date +%s%N)
	run curl -sS -I -o /dev/null -w '%{http_code}' "$PROXY_URL/f.bin"
	t1=$(date +%s%N)
	assert_output 200
	[ $((t1 - t0)) -ge 300000000 ] # at least the delay: a bound below, never above
	run status "$PROXY_URL/f.bin"
	assert_output 200
	run fields 6
	assert_output "drop delay:0.3 pass "
	run fields 4
	assert_output "- 200 200 "
}

@test "proxy: ignore-range answers 200 with the whole object; bad-content-range shifts Content-Range a page" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"times": 1, "action": "ignore-range"}, {"skip": 1, "action": "bad-content-range"}]'
	run status "$PROXY_URL/f.bin" -r 5-9
	assert_output 200
	cmp out.bin ref.bin
	run status "$PROXY_URL/f.bin" -r 5-9 -D h
	assert_output 206
	bytes ref.bin 5 5 | cmp - out.bin
	grep -qi '^Content-Range: bytes 4101-4105/1048699' h
	[ "$(wait_lines "$NGINX_LOG" 2)" -eq 2 ]
	run cat "$NGINX_LOG"
	assert_line -n 0 "GET /f.bin - 200 1048699"
	assert_line -n 1 "GET /f.bin bytes=5-9 206 5"
}

@test "proxy: no-etag takes the ETag off the answer and lets the next active rule act too" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	run status "$HTTP_URL/f.bin" -r 5-9 -D h0
	grep -qi '^ETag: ' h0
	proxy_rules '[{"action": "no-etag"}, {"skip": 1, "action": "status:503"}]'
	run status "$PROXY_URL/f.bin" -r 5-9 -D h1
	assert_output 206
	bytes ref.bin 5 5 | cmp - out.bin
	! grep -qi '^ETag: ' h1
	grep -qi '^Content-Range: bytes 5-9/1048699' h1
	run status "$PROXY_URL/f.bin" -r 5-9
	assert_output 503
	run cut -d' ' -f6 "$PROXY_LOG"
	assert_output "no-etag
status:503"
}

@test "proxy: skip and times count each rule's matches (method, path, range); a rewrite starts afresh" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"method": "GET", "path": "f.bin", "skip": 2, "times": 2, "action": "status:500"},
		{"method": "PUT", "action": "status:403"}, {"range": false, "path": "nope", "action": "status:429"}]'
	local seq="" _
	for _ in 1 2 3 4 5 6; do
		seq="$seq$(status "$PROXY_URL/f.bin" -r 0-9) "
	done
	assert_equal "$seq" "206 206 500 500 206 206 "
	run status "$PROXY_URL/put/x" -T ref.bin
	assert_output 403
	[ ! -e www/put/x ]
	run status "$PROXY_URL/nope" -r 0-1
	assert_output 404
	run status "$PROXY_URL/nope"
	assert_output 429
	[ "$(wc -l <"$PROXY_LOG")" -eq 9 ]
	# the same rules written again: counted from nothing again
	proxy_rules '[{"method": "GET", "path": "f.bin", "skip": 2, "times": 2, "action": "status:500"}]'
	seq=""
	for _ in 1 2 3; do
		seq="$seq$(status "$PROXY_URL/f.bin") "
	done
	assert_equal "$seq" "200 200 500 "
}

@test "proxy: first matches ranged requests by the range's first byte, in [A, B), whatever their order" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	proxy_rules '[{"first": [100, 200], "action": "status:500"}]'
	local seq="" r
	for r in 150-160 0-99 99-150 100-100 199-300 200-210 -50; do
		seq="$seq$(status "$PROXY_URL/f.bin" -r "$r") "
	done
	assert_equal "$seq" "500 206 206 500 500 206 206 "
	run status "$PROXY_URL/f.bin"
	assert_output 200
}

@test "proxy: a rules file it cannot apply (bad JSON, unknown action or key) answers 400 to every request" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	local rules
	for rules in '[{"action": "status:503"' '[{"action": "explode"}]' '[{"time": 1, "action": "drop"}]' '{"action": "flip:x"}' '{"first": [5, 1], "action": "drop"}'; do
		proxy_rules "$rules"
		run status "$PROXY_URL/f.bin"
		assert_output 400
		grep -q FaultProxyRulesError out.bin
	done
	proxy_rules '[]'
	run status "$PROXY_URL/f.bin"
	assert_output 200
	run fields 6
	assert_output "rules-error rules-error rules-error rules-error rules-error pass "
}

@test "proxy: in front of the S3 server, signed requests and the Host header (virtual-host style) go through" {
	data
	start_s3 s3data bkt
	start_proxy "$AWS_ENDPOINT_URL"
	export AWS_ENDPOINT_URL=$PROXY_URL
	s3curl -T ref.bin -o /dev/null "$AWS_ENDPOINT_URL/bkt/x.slab"
	# the bucket is known from the Host header only
	s3curl -r 0-4095 -o part.bin "http://bkt.s3.localhost:$PROXY_PORT/x.slab"
	bytes ref.bin 0 4096 | cmp - part.bin
	proxy_rules '[{"method": "GET", "times": 1, "action": "status:503"}]'
	run s3curl -o out.bin "$AWS_ENDPOINT_URL/bkt/x.slab"
	assert_failure
	grep -q SlowDown out.bin
	s3curl -o out.bin "$AWS_ENDPOINT_URL/bkt/x.slab"
	cmp out.bin ref.bin
	run fields 1
	assert_output "PUT GET GET GET "
	run fields 4
	assert_output "200 206 503 200 "
}

@test "stop_servers: every server is gone, its process group too, and its port closed" {
	data
	start_nginx www
	start_proxy "$HTTP_URL"
	local pids pid n=2 s3=0 p
	# the S3 server too, where it is installed: its script and its four servers in one group
	if command -v swift-proxy-server >/dev/null 2>&1; then
		start_s3 s3data bkt
		n=3 s3=1
		[ "$(pgrep -g "$(tail -1 "$BATS_TEST_TMPDIR/servers.pids" | awk '{print $1}')" | wc -l)" -eq 5 ]
	fi
	pids=$(awk '{print $1}' "$BATS_TEST_TMPDIR/servers.pids")
	[ "$(echo "$pids" | wc -l)" -eq $n ]
	for pid in $pids; do
		pgrep -g "$pid" >/dev/null
	done
	# nginx's master has a worker
	[ "$(pgrep -g "$(head -1 <<<"$pids")" | wc -l)" -ge 2 ]
	stop_servers
	for pid in $pids; do
		run pgrep -g "$pid"
		assert_failure
		[ ! -e "/proc/$pid" ]
	done
	run curl -sS "$HTTP_URL/f.bin"
	assert_equal "$status" 7 # could not connect
	run curl -sS "$PROXY_URL/f.bin"
	assert_equal "$status" 7
	if [ $s3 = 1 ]; then
		for ((p = S3_PORT; p < S3_PORT + 4; p++)); do
			run curl -sS "http://127.0.0.1:$p/healthcheck"
			assert_equal "$status" 7
		done
	fi
	[ ! -e "$BATS_TEST_TMPDIR/servers.pids" ]
}
