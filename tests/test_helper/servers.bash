# servers.bash: real servers on 127.0.0.1 for the tests of slab's remote I/O; loaded after
# common:
#
#   load test_helper/common
#   load test_helper/servers
#
#   start_nginx ROOT          HTTP_URL, NGINX_LOG: ROOT read-only, ROOT/put/ takes PUT
#   start_s3 DIR BUCKET...    AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
#                             AWS_REGION, S3_PORT, S3_LOG: Swift's S3 layer, SigV4 checked
#   s3_curl ARGS...           curl signed with those (the key id has a colon: not -u)
#   start_proxy UPSTREAM_URL  PROXY_URL, PROXY_RULES, PROXY_LOG: faults between the two
#   stop_servers              every server this test started, gone
#
# Every server listens on 127.0.0.1 at a free port (the S3 server at four in a row: its
# backends too), and is stopped by stop_servers, which the teardown() defined here calls: a
# bats file that has a teardown of its own calls stop_servers in it (bats runs teardown on
# failure too). Servers started in setup_file (shared by the file's tests) are the file's:
# teardown_file calls stop_servers for them. A start skips the test, with the reason, when
# its server is not installed (scripts/install-deps installs them), and fails it, with the
# server's own log, when the server does not come up. Start them in the test itself or in
# setup(), not under `run` (whose subshell would lose the exports).
#
# Through the fault proxy: start the server, then the proxy in front of it, then point the
# client at PROXY_URL. The Host header goes upstream as the client sent it, so an S3
# signature made for the proxy's address holds:
#
#   start_s3 s3data bkt
#   start_proxy "$AWS_ENDPOINT_URL"
#   export AWS_ENDPOINT_URL=$PROXY_URL
#   proxy_rules '[{"method": "GET", "range": true, "times": 1, "action": "status:503"}]'
#
# See faultproxy.py for the rules and the log (one line a request:
# METHOD TARGET RANGE STATUS BYTES ACTION CONN).

SERVERS_WAIT=300 # tenths of a second a server has to come up, or to go, before it is killed

# _servers_dir: where this test's servers keep their files (in setup_file: the file's).
_servers_dir() {
	echo "${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:?servers.bash: not in a bats test}}"
}

# Loopback needs no proxy, whatever the machine's environment says.
export no_proxy="127.0.0.1,localhost,.localhost${no_proxy:+,$no_proxy}"
export NO_PROXY="$no_proxy"

# free_port: a TCP port free on 127.0.0.1 now (the kernel's pick for port 0). Another process
# may take it before the caller binds it: start_nginx checks and tries again.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# _spawn NAME LOG CMD...: CMD in the background in a session of its own (its whole process
# group is stopped with it), stdin from /dev/null, stdout and stderr to LOG, bats' fd 3
# closed; its pid recorded for stop_servers and left in SPAWNED.
_spawn() {
	local name=$1 log=$2
	shift 2
	: >>"$log"
	setsid "$@" </dev/null >>"$log" 2>&1 3>&- &
	SPAWNED=$!
	echo "$SPAWNED $name" >>"$(_servers_dir)/servers.pids"
}

# _alive PID: the process is there and not a zombie.
_alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# _stop PID: TERM to its process group, wait for it (KILL when it takes too long), reap it.
_stop() {
	local pid=$1 i
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < SERVERS_WAIT; i++)); do
		_alive "$pid" || pgrep -g "$pid" >/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	for ((i = 0; i < SERVERS_WAIT; i++)); do
		pgrep -g "$pid" >/dev/null || break
		sleep 0.1
	done
	return 0
}

# stop_servers: stop every server this test started and wait until each is gone.
stop_servers() {
	local pid name pids
	pids="$(_servers_dir)/servers.pids"
	[ -f "$pids" ] || return 0
	while read -r pid name; do
		[ -n "$pid" ] && _stop "$pid"
	done <"$pids"
	rm -f "$pids"
}

teardown() {
	stop_servers
}

# _http_get PORT PATH: the answer (status line, headers, body) to a GET, over bash's /dev/tcp;
# what came in 1 s when the other end neither answers nor closes (not ours, then).
_http_get() {
	(
		local reply=""
		exec 9<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$2" "$1" >&9
		IFS= read -r -d '' -t 1 reply <&9
		printf '%s' "$reply"
	) 2>/dev/null
}

# wait_lines FILE N: wait until FILE has at least N lines (nginx writes its access log line
# just after the answer's last byte: a client can be quicker), then print how many it has.
wait_lines() {
	local i n=0
	for ((i = 0; i < SERVERS_WAIT; i++)); do
		n=$(wc -l <"$1" 2>/dev/null || echo 0)
		[ "$n" -ge "$2" ] && break
		sleep 0.1
	done
	echo "$n"
}

# start_nginx ROOT: nginx serving the folder ROOT at HTTP_URL=http://127.0.0.1:PORT: GET and
# HEAD with real Range and ETag answers (sendfile), and under /put/ PUT too (into ROOT/put/,
# folders made as needed, any size). Its access log NGINX_LOG has one line a request:
#   METHOD REQUEST_URI RANGE STATUS BODY_BYTES      (RANGE: the Range header, or '-')
# Also exported: NGINX_PORT, NGINX_DIR (its prefix: conf, pid, temp and error log).
# With NGINX_TLS=1: HTTPS (HTTP_URL=https://127.0.0.1:PORT) with a certificate for 127.0.0.1
# made here and signed by itself, in NGINX_CERT (a client trusts it through AWS_CA_BUNDLE).
# NGINX_SERVER_CONF: more of the server block, as nginx.conf has it (a redirect, say:
# 'location /r/ { return 302 http://127.0.0.1:PORT/d.slab; }').
start_nginx() {
	local root dir port conf pid token tries i user="" tls="" scheme=http
	command -v nginx >/dev/null 2>&1 || skip "nginx is not installed (scripts/install-deps installs nginx-light)"
	root=$(cd "$1" 2>/dev/null && pwd) || {
		fail "start_nginx: no folder '$1'"
		return 1
	}
	dir=$(mktemp -d "$(_servers_dir)/nginx.XXXXXX")
	mkdir -p "$dir/tmp" "$dir/logs"
	if [ "${NGINX_TLS:-0}" = 1 ]; then
		command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
			-addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" -out "$dir/cert.pem" \
			>/dev/null 2>&1 || {
			fail "start_nginx: openssl could not make a certificate"
			return 1
		}
		tls="ssl_certificate \"$dir/cert.pem\"; ssl_certificate_key \"$dir/key.pem\";"
		scheme=https
	fi
	token="slab-nginx-$RANDOM$RANDOM-$$"
	# As root, nginx would hand its workers to nobody, who may not read ROOT nor write ROOT/put.
	[ "$(id -u)" -eq 0 ] && user="user $(id -un) $(id -gn);"
	for ((tries = 0; tries < 5; tries++)); do
		port=$(free_port)
		conf="$dir/nginx.conf"
		cat >"$conf" <<EOF
$user
daemon off;
master_process on;
worker_processes 1;
pid "$dir/nginx.pid";
error_log "$dir/logs/error.log" warn;
events { worker_connections 256; }
http {
	default_type application/octet-stream;
	sendfile on;
	etag on;
	keepalive_timeout 75s;
	keepalive_requests 100000;
	client_max_body_size 0;
	client_body_temp_path "$dir/tmp/body";
	proxy_temp_path "$dir/tmp/proxy";
	fastcgi_temp_path "$dir/tmp/fastcgi";
	uwsgi_temp_path "$dir/tmp/uwsgi";
	scgi_temp_path "$dir/tmp/scgi";
	log_format slab '\$request_method \$request_uri \$http_range \$status \$body_bytes_sent';
	access_log "$dir/logs/access.log" slab;
	server {
		listen 127.0.0.1:$port${tls:+ ssl};
		$tls
		root "$root";
		location /put/ {
			dav_methods PUT;
			create_full_put_path on;
			dav_access user:rw group:r all:r;
		}
		${NGINX_SERVER_CONF:-}
		location = /.slab-ready {
			access_log off;
			return 200 "$token";
		}
	}
}
EOF
		: >"$dir/logs/access.log"
		: >"$dir/logs/error.log"
		: >"$dir/logs/stderr"
		rm -f "$dir/nginx.pid"
		_spawn nginx "$dir/logs/stderr" nginx -p "$dir" -c "$conf" -e "$dir/logs/error.log"
		pid=$SPAWNED
		for ((i = 0; i < SERVERS_WAIT; i++)); do
			# (its port taken in between: it says so before it answers, and quits later)
			grep -qs 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" && break
			# its pid file comes once it has bound its port; then it must answer with the token
			if [ "$(cat "$dir/nginx.pid" 2>/dev/null)" = "$pid" ] &&
				if [ -n "$tls" ]; then
					curl -s --cacert "$dir/cert.pem" "https://127.0.0.1:$port/.slab-ready"
				else
					_http_get "$port" /.slab-ready
				fi | grep -qF "$token"; then
				export HTTP_URL="$scheme://127.0.0.1:$port" NGINX_PORT=$port NGINX_DIR=$dir
				[ -z "$tls" ] || export NGINX_CERT="$dir/cert.pem"
				export NGINX_LOG="$dir/logs/access.log"
				return 0
			fi
			_alive "$pid" || break
			sleep 0.1
		done
		_stop "$pid"
		# a port taken in between: another one
		grep -qs 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" || break
	done
	fail "start_nginx: nginx did not come up on 127.0.0.1:$port; its logs:
$(cat "$dir/logs/stderr" "$dir/logs/error.log" 2>/dev/null)"
}

# _wait_port_file FILE PID WHAT LOG: wait until the server PID has written its port to FILE
# (it does once it listens); print the port. Fail with LOG when it dies or takes too long.
_wait_port_file() {
	local i
	for ((i = 0; i < SERVERS_WAIT; i++)); do
		if [ -s "$1" ]; then
			cat "$1"
			return 0
		fi
		_alive "$2" || break
		sleep 0.1
	done
	_stop "$2"
	echo "$3 did not come up; its log:" >&2
	cat "$4" >&2
	return 1
}

# _free_ports N: a port P such that P..P+N-1 are all free on 127.0.0.1 now (P the kernel's
# pick for port 0). As with free_port, another process may take one before the caller binds
# it: the caller checks and tries again.
_free_ports() {
	python3 -c 'import socket, sys
n = int(sys.argv[1])
while True:
    socks = [socket.socket()]
    socks[0].bind(("127.0.0.1", 0))
    p = socks[0].getsockname()[1]
    try:
        for q in range(p + 1, p + n):
            socks.append(socket.socket())
            socks[-1].bind(("127.0.0.1", q))
    except (OSError, OverflowError):  # (taken, or past 65535)
        continue
    finally:
        for s in socks:
            s.close()
    print(p)
    break' "$1"
}

# _listens_in_group PGID PORT: a process of the process group PGID listens on 127.0.0.1:PORT
# (and not another process that took the port first: its answers would not be ours).
_listens_in_group() {
	local inode pid
	# /proc/net/tcp: local address as hex IP (in the machine's byte order) : hex port; state
	# 0A is LISTEN; field 10 is the socket's inode, which the owner's /proc/PID/fd links to.
	inode=$(awk -v a="$(printf '0100007F:%04X' "$2")" -v b="$(printf '7F000001:%04X' "$2")" \
		'($2 == a || $2 == b) && $4 == "0A" { print $10; exit }' /proc/net/tcp 2>/dev/null)
	[ -n "$inode" ] || return 1
	for pid in $(pgrep -g "$1"); do
		[ -n "$(find "/proc/$pid/fd" -maxdepth 1 -lname "socket:\[$inode\]" -print -quit 2>/dev/null)" ] &&
			return 0
	done
	return 1
}

# s3_curl ARGS...: curl signing as S3 clients do (SigV4 for AWS_REGION, the payload unsigned)
# with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY as they are now. The two go to curl in a
# netrc, not as -u KEY:SECRET: curl cuts -u at its first colon, and the key ids of start_s3's
# server (Swift's ACCOUNT:USER) have one.
s3_curl() {
	curl --netrc-file <(printf 'default login %s password %s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY") \
		--aws-sigv4 "aws:amz:${AWS_REGION:-us-east-1}:s3" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

# start_s3 DATADIR BUCKET...: an S3 server that checks SigV4 signatures as AWS does:
# OpenStack Swift with its S3 layer, s3api (Debian's swift-proxy, swift-account,
# swift-container and swift-object, started by swift-s3.sh here: see there), on 127.0.0.1,
# keeping everything in DATADIR (configs, data, logs; made if missing, and the data kept when
# a test starts it again on the same DATADIR), with each BUCKET made. Exports
# AWS_ENDPOINT_URL=http://127.0.0.1:S3_PORT (path-style; virtual-host style works too, as
# http://BUCKET.s3.localhost:S3_PORT/KEY, i.e. endpoint http://s3.localhost:S3_PORT),
# AWS_ACCESS_KEY_ID=slab:tester (a colon in it: see s3_curl), AWS_SECRET_ACCESS_KEY,
# AWS_REGION=us-east-1 (and unsets AWS_SESSION_TOKEN and AWS_PROFILE); any other key id or
# secret gets 403 SignatureDoesNotMatch. S3_LOG is the proxy's log: one line a request,
#   proxy-server: METHOD HOST PATH STATUS BYTES_IN BYTES_OUT TRANSACTION_ID
# (HOST the Host header's name, without its port; PATH with its query; '-' for none; the
# healthchecks are not logged), and between them only warnings and errors (lines ending in
# "(txn: TRANSACTION_ID)"). It takes 2 to 3 s to start: four servers, each a Python of its
# own. Its backends listen on S3_PORT+1..+3, their logs beside S3_LOG.
# Everything the S3 server is starts here: swap it here.
start_s3() {
	local data pid port="" i tries n ready p b out
	[ $# -ge 2 ] || {
		fail "usage: start_s3 DATADIR BUCKET..."
		return 1
	}
	for n in proxy account container object; do
		command -v "swift-$n-server" >/dev/null 2>&1 ||
			skip "swift-$n-server is not installed (scripts/install-deps installs swift-proxy, swift-account, swift-container and swift-object)"
	done
	command -v curl >/dev/null 2>&1 || skip "curl is not installed (start_s3 makes the buckets with it)"
	mkdir -p "$1/log"
	data=$(cd "$1" && pwd)
	shift
	export AWS_ACCESS_KEY_ID=slab:tester AWS_SECRET_ACCESS_KEY=k8Qz1secretTESTING AWS_REGION=us-east-1
	unset AWS_SESSION_TOKEN AWS_PROFILE
	for ((tries = 0; tries < 5; tries++)); do
		port=$(_free_ports 4)
		_spawn swift-s3 "$data/log/swift-s3.log" "$HELPERS/swift-s3.sh" "$data" "$port" \
			"$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"
		pid=$SPAWNED
		ready=0
		for ((i = 0; i < SERVERS_WAIT && ready == 0; i++)); do
			_alive "$pid" || break
			sleep 0.1
			# each of the four listens on its port (not another process there first) and
			# answers its healthcheck
			ready=1
			for ((p = port; p < port + 4; p++)); do
				if ! _listens_in_group "$pid" "$p" ||
					! curl -sf -o /dev/null --max-time 10 "http://127.0.0.1:$p/healthcheck"; then
					ready=0
					break
				fi
			done
		done
		[ $ready = 1 ] && break
		_stop "$pid"
		# a port taken in between (the server that could not bind it says so, and the
		# script stops the others): other ports
		grep -qs 'Could not bind' "$data"/log/*.log || break
	done
	if [ $ready = 0 ]; then
		fail "start_s3: swift did not come up on 127.0.0.1:$port..$((port + 3)); its logs:
$(tail -n 30 "$data"/log/*.log 2>/dev/null)"
		return 1
	fi
	export S3_PORT=$port AWS_ENDPOINT_URL="http://127.0.0.1:$port" S3_LOG="$data/log/proxy.log"
	for b in "$@"; do
		# (one there already, from a start before on the same DATADIR, is as good)
		if ! out=$(s3_curl -sS --fail-with-body --max-time 30 -X PUT "$AWS_ENDPOINT_URL/$b" 2>&1) &&
			[[ $out != *'<Code>BucketAlreadyOwnedByYou</Code>'* ]]; then
			fail "start_s3: could not make the bucket '$b': $out
the proxy's log:
$(tail -n 30 "$S3_LOG")"
			return 1
		fi
	done
}

# start_proxy UPSTREAM_URL: faultproxy.py on 127.0.0.1 in front of UPSTREAM_URL (http://HOST:PORT);
# exports PROXY_URL=http://127.0.0.1:PORT, PROXY_PORT, PROXY_RULES (its rules file, "[]" to
# begin with: write it, best with proxy_rules, whenever the faults are to change) and
# PROXY_LOG (one line a request).
start_proxy() {
	local dir pid port
	[ $# -eq 1 ] || {
		fail "usage: start_proxy UPSTREAM_URL"
		return 1
	}
	dir=$(mktemp -d "$(_servers_dir)/proxy.XXXXXX")
	echo '[]' >"$dir/rules.json"
	: >"$dir/requests.log"
	_spawn faultproxy "$dir/stderr" python3 "$HELPERS/faultproxy.py" --upstream "$1" \
		--rules "$dir/rules.json" --log "$dir/requests.log" --port 0 --port-file "$dir/port"
	pid=$SPAWNED
	port=$(_wait_port_file "$dir/port" "$pid" faultproxy "$dir/stderr") || {
		fail "start_proxy: faultproxy did not come up"
		return 1
	}
	export PROXY_URL="http://127.0.0.1:$port" PROXY_PORT=$port
	export PROXY_RULES="$dir/rules.json" PROXY_LOG="$dir/requests.log"
}

# proxy_rules JSON: the proxy's rules, replaced whole at once (the counts start afresh).
proxy_rules() {
	printf '%s\n' "$1" >"$PROXY_RULES.tmp" && mv -f "$PROXY_RULES.tmp" "$PROXY_RULES"
}
