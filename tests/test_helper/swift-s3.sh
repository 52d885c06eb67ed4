#!/bin/bash
# swift-s3.sh DIR PORT KEY_ID SECRET: an S3 server for the tests that checks SigV4 signatures
# as AWS does: OpenStack Swift with its S3 layer (s3api), from Debian's swift-proxy,
# swift-account, swift-container and swift-object, on 127.0.0.1 only.
#
#   DIR      everything of this server: etc/ (swift.conf, the four servers' configs, the
#            rings), data/d1/ (the one "disk": accounts, buckets, objects; kept when DIR is
#            used again), log/{proxy,account,container,object}.log (each server's own log,
#            made afresh at each start)
#   PORT     the S3 (proxy) port; the account, container and object servers take PORT+1,
#            PORT+2 and PORT+3, all on 127.0.0.1
#   KEY_ID   the access key id, ACCOUNT:USER (Swift's tempauth user USER of account ACCOUNT:
#            the colon is part of the key id); the user is the account's admin
#   SECRET   its secret access key
#
# The four servers run in the foreground, children of this script, in its process group:
# whoever started it stops them all by signalling the group (servers.bash's _spawn puts it
# in a session of its own, and stop_servers signals that). When one of them ends (a port it
# could not bind, a bad config), the script stops the others and exits 1, its log saying
# why. It prints nothing while they serve; readiness is for the caller to check: GET
# /healthcheck on every port answers 200 "OK" once its server serves (the caller should also
# make sure the ports are this server's: another process may hold one, and this server's
# own then fails to bind within a second).
#
# S3 requests: path style http://127.0.0.1:PORT/BUCKET/KEY, or virtual-host style
# http://BUCKET.s3.localhost:PORT/KEY (storage_domain s3.localhost); region us-east-1.
# Buckets are made by the client (a signed PUT /BUCKET): s3api keeps them as containers of
# the account AUTH_ACCOUNT, made on first use.
set -euo pipefail

if [ $# -ne 4 ] || [[ ! $2 =~ ^[0-9]+$ ]] || [[ ! $3 =~ ^[A-Za-z0-9]+:[A-Za-z0-9]+$ ]] ||
	[ -z "$4" ]; then
	echo "usage: swift-s3.sh DIR PORT ACCOUNT:USER SECRET (ACCOUNT and USER alphanumeric)" >&2
	exit 2
fi
P=$2
KEY_ID=$3
SECRET=$4
mkdir -p "$1"
D=$(cd "$1" && pwd)
mkdir -p "$D/etc" "$D/data/d1" "$D/log"
# Debian's swift is a module of Debian's python3: not of whatever python3 comes first on PATH.
PY=/usr/bin/python3

cat >"$D/etc/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = slab-test-suffix
swift_hash_path_prefix = slab-test-prefix
[storage-policy:0]
name = Policy-0
default = yes
EOF

# What every server's [DEFAULT] has. workers = 0: the server serves in its own process
# (no forked workers that a signal to its pid alone would leave behind). bind_timeout = 1:
# a port already taken fails the start within a second, not after the default 30. Logging:
# swift always logs to syslog too, to log_address when that is a socket, else over UDP;
# log_udp_host sends it to the discard port on loopback (not to the machine's syslog); -v
# below copies every line to the server's stderr, which is its log file here.
common() {
	cat <<EOF
[DEFAULT]
swift_dir = $D/etc
devices = $D/data
mount_check = false
disable_fallocate = true
bind_ip = 127.0.0.1
bind_port = $1
bind_timeout = 1
workers = 0
log_udp_host = 127.0.0.1
log_udp_port = 9
EOF
}

# The account, container and object servers, with a healthcheck of their own (the caller
# can tell when each serves), and the rings that place everything on the one disk, d1, at
# their ports. The rings are remade at each start (the ports may have changed): with one
# partition and one disk, whatever data/d1 holds stays where the new rings look for it.
i=1
for n in account container object; do
	{
		common $((P + i))
		cat <<EOF
[pipeline:main]
pipeline = healthcheck $n-server
[app:$n-server]
use = egg:swift#$n
[filter:healthcheck]
use = egg:swift#healthcheck
EOF
	} >"$D/etc/$n-server.conf"
	i=$((i + 1))
done
# (swift-ring-builder's create, add and rebalance, in one python instead of nine)
"$PY" - "$D/etc" "$P" <<'EOF'
import sys
from swift.common.ring import RingBuilder
etc, port = sys.argv[1], int(sys.argv[2])
for i, name in enumerate(("account", "container", "object"), 1):
    b = RingBuilder(0, 1, 1)
    b.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": port + i,
               "device": "d1", "weight": 1})
    b.rebalance()
    b.get_ring().save("%s/%s.ring.gz" % (etc, name))
EOF

# The proxy: s3api in front of tempauth. The cache filter must be there for them (they keep
# tokens and account info in it) but no memcached runs: it would log that it cannot reach
# one a few times a request, so it logs critical errors only. There is one proxy-logging,
# before s3api: a line a client request in the proxy's log (the usual pipeline has another
# before proxy-server, for the requests the middlewares make of their own).
{
	common "$P"
	cat <<EOF
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo versioned_writes proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
# (its info lines, such as each account it makes, would come between the requests' lines)
log_level = WARNING
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
storage_domain = s3.localhost
[filter:tempauth]
use = egg:swift#tempauth
reseller_prefix = AUTH
user_${KEY_ID%%:*}_${KEY_ID#*:} = $SECRET .admin
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
log_msg_template = {method} {domain} {path} {status_int} {bytes_recvd} {bytes_sent} {transaction_id}
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:11211
log_level = CRITICAL
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
EOF
} >"$D/etc/proxy-server.conf"
# (the secret is in it)
chmod 600 "$D/etc/proxy-server.conf"

# Each server as /usr/bin/swift-NAME-server runs it, but for one thing: a swift server calls
# setsid() as it starts, as daemons do, which would take it out of this process group (a
# stop of the group would leave it running); os.setsid is made to do nothing for it.
# A signal to the group reaches each of them; this script then waits for them, so that they
# are gone (reaped) when it is: left to init, they could linger as zombies for a while.
names=(account container object proxy)
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait; exit 143' TERM INT HUP
for n in "${names[@]}"; do
	"$PY" -c 'import os, runpy, sys
os.setsid = lambda: None
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' \
		"/usr/bin/swift-$n-server" "$D/etc/$n-server.conf" -v >"$D/log/$n.log" 2>&1 &
	pids+=($!)
done
# Serve until one of them ends, then stop the others and say which ended.
status=0
wait -n || status=$?
for i in "${!pids[@]}"; do
	kill -0 "${pids[i]}" 2>/dev/null ||
		echo "swift-s3.sh: the ${names[i]} server ended (status $status): see $D/log/${names[i]}.log" >&2
done
kill -TERM "${pids[@]}" 2>/dev/null || true
wait || true
exit 1
