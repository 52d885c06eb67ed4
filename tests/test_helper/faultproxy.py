#!/usr/bin/env python3
"""faultproxy: an HTTP/1.1 proxy for the tests, between a client and one upstream server, that
passes every request through unchanged unless a fault rule says otherwise.

    faultproxy.py --upstream http://127.0.0.1:PORT --rules FILE --log FILE
                  [--port 0] [--port-file FILE]

It listens on 127.0.0.1 (on --port; 0, the default, picks a free one and writes it to
--port-file once it listens). Client connections are kept alive, as a server's would be, so a
client's connection reuse is exercised; each request goes to the upstream on a connection of
its own. The request line, every header (Host too: an S3 signature covers it, so the client
addresses the proxy as it would the server, e.g. AWS_ENDPOINT_URL set to the proxy's URL) and
the body (Content-Length or chunked) go upstream as they came; the response comes back with
its status, its headers and its body, streamed.

Each request is one line of --log, written (and flushed) before the response's last byte is
sent, so a client that has its whole answer finds the line there:

    METHOD TARGET RANGE STATUS BYTES ACTION CONN

TARGET is the request target as sent (path and query), RANGE the Range header without blanks
or '-', STATUS the status sent to the client or '-' (dropped), BYTES the body bytes sent to
the client, ACTION 'pass' or the rule's action (or 'upstream-error': 502 when the upstream
could not be reached; 'rules-error': 400 when the rules file is not valid JSON or has a rule
this proxy cannot apply, unknown keys included; the reason on stderr), CONN the
number of the client connection (1, 2, ...: equal numbers are one reused connection).

Rules: the JSON file --rules, read again whenever it changes (a missing or empty file: no
rules). A list of objects (one object alone is taken as a list of one):

    {"method": "GET",     optional: only this method (or a list of methods)
     "path": "part",      optional: only targets holding this substring (path and query)
     "range": true,       optional: true only requests with a Range header, false only without
     "first": [A, B],     optional: only requests with a Range header "bytes=F-..." whose F is
                          at A or after and before B: a filter by position, where "skip"
                          counts in whatever order concurrent requests come
     "skip": K,           optional: let the first K requests that match through
     "times": N,          optional: then apply to N requests, then the rule is spent;
                          without it, to every matching request after the skipped ones
     "action": "..."}

Every rule counts the requests that match its filters, whatever the other rules do; a request
gets the action of the first rule that is active for it (past its skip, not spent), else
passes. Counts start afresh whenever the file is written again. Actions:

    drop               read the request, then close the connection without an answer
    status:NNN[:CODE]  answer NNN with an S3-style XML error body, its Code CODE (letters and
                       digits) or by NNN (503: SlowDown, 500: InternalError, 429: SlowDown,
                       403: AccessDenied, others: FaultProxy), Retry-After: 0 with 503 and
                       429; the request is not forwarded
    delay:SECONDS      wait, then forward
    truncate:N         forward; send the headers (real Content-Length) and N body bytes, close
    flip:K             forward; invert every bit of body byte K (-1: the middle byte, len//2)
    stall:N            forward; send the headers (real Content-Length) and N body bytes, then
                       nothing more until the client goes away (at most 10 minutes), close
    ignore-range       forward without the Range (and If-Range) header: the whole object, 200
    bad-content-range  forward; Content-Range "bytes A-B/T" sent as "bytes A+4096-B+4096/T"
    no-etag            the answer without its ETag header, as a server that sends none; this
                       one does not end the search: the first later rule active for the
                       request gives its action too (else it passes)
"""

import argparse
import http.client
import http.server
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

BLOCK = 64 * 1024
PAGE = 4096

XML_CODES = {
    503: ("SlowDown", "Please reduce your request rate."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
    429: ("SlowDown", "Please reduce your request rate."),
    403: ("AccessDenied", "Access Denied"),
}


def check_rule(r):
    """ValueError unless r is a rule this proxy knows how to apply."""
    try:
        kind, colon, arg = str(r["action"]).partition(":")
        if kind == "status":
            num, _, code = arg.partition(":")
            assert 100 <= int(num) <= 599 and (not _ or re.fullmatch(r"[A-Za-z0-9]+", code))
        elif kind == "delay":
            assert float(arg) >= 0
        elif kind in ("truncate", "flip", "stall"):
            assert int(arg) >= (-1 if kind == "flip" else 0)
        else:
            assert kind in ("drop", "ignore-range", "bad-content-range", "no-etag") and not colon
        assert int(r.get("skip", 0)) >= 0 and int(r.get("times", 0)) >= 0
        if "first" in r:
            a, b = r["first"]
            assert 0 <= int(a) <= int(b)
        assert set(r) <= {"method", "path", "range", "first", "skip", "times", "action"}
    except (KeyError, ValueError, TypeError, AssertionError):
        raise ValueError("a rule this proxy cannot apply: %s" % json.dumps(r)) from None


class Rules:
    """The rules file, re-read when its stat changes, and each rule's count of matches."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.sig = None
        self.rules = []
        self.seen = []

    def _load(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            sig = None
        else:
            sig = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)
        if sig == self.sig and sig is not None:
            return
        if sig is None:
            rules = []
        else:
            # A writer may be half-way (a test should write the file whole, by rename):
            # retry a parse error for a while before calling the file bad.
            for _ in range(25):
                try:
                    with open(self.path, "rb") as f:
                        text = f.read().decode()
                    rules = json.loads(text) if text.strip() else []
                    break
                except (ValueError, OSError) as e:
                    err = e
                    time.sleep(0.02)
                    st = os.stat(self.path)
                    sig = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)
            else:
                raise ValueError("rules file %s: %s" % (self.path, err))
            if isinstance(rules, dict):
                rules = [rules]
            if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
                raise ValueError("rules file %s: not a list of objects" % self.path)
            for r in rules:
                check_rule(r)
        self.sig = sig
        self.rules = rules
        self.seen = [0] * len(rules)

    def action(self, method, target, rng):
        """The action for this request (its Range header rng, or None), counting it, or None;
        and whether a no-etag rule applies to it."""
        at = re.match(r"\s*bytes\s*=\s*(\d+)\s*-", rng or "")
        first = int(at.group(1)) if at else None
        with self.lock:
            self._load()
            chosen, no_etag = None, False
            for i, r in enumerate(self.rules):
                m = r.get("method")
                if m is not None:
                    ms = [m] if isinstance(m, str) else m
                    if method.upper() not in (x.upper() for x in ms):
                        continue
                if "path" in r and r["path"] not in target:
                    continue
                if "range" in r and bool(r["range"]) != (rng is not None):
                    continue
                if "first" in r and (first is None or not
                                     int(r["first"][0]) <= first < int(r["first"][1])):
                    continue
                self.seen[i] += 1
                n = self.seen[i]
                skip = int(r.get("skip", 0))
                times = r.get("times")
                if n <= skip or (times is not None and n > skip + int(times)):
                    continue
                if str(r["action"]) == "no-etag":
                    no_etag = True
                elif chosen is None:
                    chosen = str(r["action"])
            return chosen, no_etag


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"

    def log_message(self, fmt, *args):  # no stderr noise per request
        pass

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.conns += 1
            self.conn_no = self.server.conns

    # -- the log ---------------------------------------------------------------------------

    def log_line(self, status, nbytes, action):
        rng = self.headers.get("Range")
        rng = re.sub(r"\s+", "", rng) if rng else "-"
        line = "%s %s %s %s %d %s %d\n" % (
            self.command, self.path, rng or "-", status, nbytes, action, self.conn_no)
        with self.server.lock:
            self.server.log.write(line)
            self.server.log.flush()

    # -- the request body ------------------------------------------------------------------

    def body_chunks(self):
        """The request body as raw pieces to send upstream as they are (chunk framing kept)."""
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            rf = self.rfile
            while True:
                line = rf.readline(65537)
                if not line:
                    raise ConnectionError("client closed in a chunked body")
                size = int(line.split(b";", 1)[0].strip(), 16)
                yield line
                if size == 0:
                    while True:  # trailers, up to the blank line
                        t = rf.readline(65537)
                        if not t:
                            raise ConnectionError("client closed in chunked trailers")
                        yield t
                        if t in (b"\r\n", b"\n"):
                            return
                left = size
                while left:
                    b = rf.read(min(BLOCK, left))
                    if not b:
                        raise ConnectionError("client closed in a chunk")
                    left -= len(b)
                    yield b
                crlf = rf.readline(3)
                yield crlf
        else:
            left = int(self.headers.get("Content-Length") or 0)
            while left:
                b = self.rfile.read(min(BLOCK, left))
                if not b:
                    raise ConnectionError("client closed in the body")
                left -= len(b)
                yield b

    def drain(self):
        for _ in self.body_chunks():
            pass

    # -- answering -------------------------------------------------------------------------

    def send_head(self, status, reason, headers):
        out = ["HTTP/1.1 %d %s\r\n" % (status, reason)]
        for k, v in headers:
            out.append("%s: %s\r\n" % (k, v))
        out.append("\r\n")
        self.wfile.write("".join(out).encode("latin-1"))

    def answer_error(self, status, action, why=None):
        self.drain()
        code, msg = why or XML_CODES.get(status, ("FaultProxy", "An error the fault proxy was told to give."))
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code><Message>%s'
                '</Message><Resource>%s</Resource><RequestId>faultproxy</RequestId></Error>'
                % (code, msg, self.path.split("?")[0])).encode()
        headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
        if status in (503, 429):
            headers.append(("Retry-After", "0"))
        if self.close_connection:
            headers.append(("Connection", "close"))
        reason = http.client.responses.get(status, "Fault")
        self.send_head(status, reason, headers)
        sent = 0 if self.command == "HEAD" else len(body)
        self.log_line(status, sent, action)
        if sent:
            self.wfile.write(body)

    def handle_any(self):
        try:
            self.relay()
        except (ConnectionError, BrokenPipeError, socket.timeout, OSError):
            self.close_connection = True

    def relay(self):
        try:
            action, self.no_etag = self.server.rules.action(self.command, self.path,
                                                            self.headers.get("Range"))
        except ValueError as e:
            # not a status a client retries: the test is to fail, not to pass by luck
            sys.stderr.write("faultproxy: %s\n" % e)
            self.answer_error(400, "rules-error", ("FaultProxyRulesError", str(e)))
            return
        if action is None:
            action = "no-etag" if self.no_etag else "pass"
        kind, _, arg = action.partition(":")

        if kind == "drop":
            self.drain()
            self.log_line("-", 0, action)
            self.close_connection = True
            return
        if kind == "status":
            num, _, code = arg.partition(":")
            self.answer_error(int(num), action, (code, "An error the fault proxy was told to give.")
                              if code else None)
            return
        if kind == "delay":
            time.sleep(float(arg))

        # Forward, on an upstream connection of this request's own.
        up = self.server.upstream
        conn = http.client.HTTPConnection(up.hostname, up.port or 80)
        try:
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    if kind == "ignore-range" and k.lower() in ("range", "if-range"):
                        continue
                    conn.putheader(k, v)
                conn.endheaders()
                for piece in self.body_chunks():
                    conn.send(piece)
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException) as e:
                sys.stderr.write("faultproxy: upstream: %s\n" % e)
                self.close_connection = True
                body = ("faultproxy: upstream: %s\n" % e).encode()
                self.send_head(502, "Bad Gateway", [("Content-Type", "text/plain"),
                                                    ("Content-Length", str(len(body))),
                                                    ("Connection", "close")])
                self.log_line(502, len(body), "upstream-error")
                self.wfile.write(body)
                return
            self.respond(resp, kind, arg, action)
        finally:
            conn.close()

    def respond(self, resp, kind, arg, action):
        headers = list(resp.msg.items())
        if self.no_etag:
            headers = [(k, v) for k, v in headers if k.lower() != "etag"]
        length = resp.getheader("Content-Length")
        length = int(length) if length is not None and length.strip().isdigit() else None
        chunked = bool(resp.chunked)
        no_body = self.command == "HEAD" or resp.status in (204, 304) or resp.status < 200
        until_close = not no_body and not chunked and length is None
        conn_hdr = (resp.getheader("Connection") or "").lower()
        if until_close or "close" in conn_hdr:
            self.close_connection = True
            if "close" not in conn_hdr:
                headers = [(k, v) for k, v in headers if k.lower() != "connection"]
                headers.append(("Connection", "close"))
        if kind == "bad-content-range":
            fixed = []
            for k, v in headers:
                if k.lower() == "content-range":
                    m = re.match(r"\s*bytes\s+(\d+)-(\d+)/(\S+)\s*$", v)
                    if m:
                        v = "bytes %d-%d/%s" % (int(m.group(1)) + PAGE, int(m.group(2)) + PAGE,
                                                m.group(3))
                fixed.append((k, v))
            headers = fixed

        def stream():
            if no_body:
                return
            while True:
                b = resp.read1(BLOCK)
                if not b:
                    return
                yield b

        blocks = stream()
        flip_at = None
        if kind == "flip":
            flip_at = int(arg)
            if flip_at < 0:
                if length is None and not no_body:
                    # flip:-1 of a body of unknown length: it is needed whole
                    data = resp.read()
                    blocks = iter([data])
                    flip_at = len(data) // 2
                else:
                    flip_at = (length or 0) // 2
        limit = None
        if kind in ("truncate", "stall"):
            limit = int(arg)
            self.close_connection = True

        def emit(b):
            if chunked:
                self.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n")
            else:
                self.wfile.write(b)

        self.send_head(resp.status, resp.reason, headers)
        sent = 0
        pending = b""  # the last block is held back until the log line is written
        for b in blocks:
            if flip_at is not None and sent <= flip_at < sent + len(b):
                b = bytearray(b)
                b[flip_at - sent] ^= 0xFF
                b = bytes(b)
            if limit is not None and sent + len(b) >= limit:
                b = b[: limit - sent]
                sent += len(b)
                self.log_line(resp.status, sent, action)
                for x in (pending, b):
                    if x:
                        emit(x)
                if kind == "stall":
                    # hold the connection open, sending nothing, until the client closes it
                    self.wfile.flush()
                    self.connection.settimeout(600)
                    try:
                        while self.connection.recv(4096):
                            pass
                    except OSError:
                        pass
                return  # and close: the client is left short of Content-Length
            sent += len(b)
            if pending:
                emit(pending)
            pending = b
        self.log_line(resp.status, sent, action)
        if pending:
            emit(pending)
        if chunked and limit is None:
            self.wfile.write(b"0\r\n\r\n")

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = handle_any
    do_OPTIONS = do_PATCH = handle_any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="http://HOST:PORT of the server")
    ap.add_argument("--rules", required=True, help="the JSON rules file")
    ap.add_argument("--log", required=True, help="the request log")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", help="where to write the port once listening")
    a = ap.parse_args()
    up = urllib.parse.urlsplit(a.upstream)
    if up.scheme != "http" or not up.hostname:
        ap.error("--upstream: an http://HOST:PORT URL")
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.upstream = up
    srv.rules = Rules(a.rules)
    srv.lock = threading.Lock()
    srv.conns = 0
    srv.log = open(a.log, "a", encoding="utf-8")
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
