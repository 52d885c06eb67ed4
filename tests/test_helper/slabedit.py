#!/usr/bin/env python3
"""slabedit.py: craft a damaged or hostile .slab for tests: change bytes the checksums
cover, then make every checksum match again (header, table, trailer), so the rule under test
is the one a reader trips on, not a CRC. Layout from man/slab.5.

  slabedit.py FILE key OLD NEW             replace a key's bytes (same length) in the keys
  slabedit.py FILE field-name OLD NEW      replace a field name (same length) in the schema
  slabedit.py FILE options-fill            options text without a NUL: bytes 64..4095 = 'x'
  slabedit.py FILE field-offset I F OFF    field record (I, F): offset = OFF
Values are taken as Python bytes escapes ('a\\nb', '\\x1b').
"""
import struct
import sys

from planref import crc32c


def table(d):
    t = len(d) - 64
    off, size = struct.unpack_from("<QQ", d, t + 8)
    return off, size


def section(d, rel_at):
    tb, _ = table(d)
    return tb + struct.unpack_from("<Q", d, tb + rel_at)[0], struct.unpack_from("<Q", d, tb + rel_at + 8)[0]


def replace_in(d, start, size, old, new):
    if len(old) != len(new):
        sys.exit("slabedit: OLD and NEW must have the same length")
    at = bytes(d[start:start + size]).find(old)
    if at < 0:
        sys.exit("slabedit: %r not found" % old)
    d[start + at:start + at + len(old)] = new


def fix_crcs(d):
    struct.pack_into("<I", d, 36, 0)
    hcrc = crc32c(bytes(d[:4096]))
    struct.pack_into("<I", d, 36, hcrc)
    tb, tsize = table(d)
    t = len(d) - 64
    struct.pack_into("<I", d, t + 40, crc32c(bytes(d[tb:tb + tsize])))
    struct.pack_into("<I", d, t + 44, hcrc)
    struct.pack_into("<I", d, t + 60, crc32c(bytes(d[t:t + 60])))


def arg(s):
    return s.encode("utf-8", "surrogateescape").decode("unicode_escape").encode("latin-1")


def main(argv):
    path, op, rest = argv[1], argv[2], argv[3:]
    d = bytearray(open(path, "rb").read())
    if op == "key":
        start, size = section(d, 64)
        replace_in(d, start, size, arg(rest[0]), arg(rest[1]))
    elif op == "field-name":
        start, size = section(d, 32)
        replace_in(d, start, size, arg(rest[0]), arg(rest[1]))
    elif op == "options-fill":
        d[64:4096] = b"x" * (4096 - 64)
    elif op == "field-offset":
        i, f, off = (int(x) for x in rest)
        tb, _ = table(d)
        nf = struct.unpack_from("<I", d, tb + 24)[0]
        fields = tb + struct.unpack_from("<Q", d, tb + 56)[0]
        struct.pack_into("<Q", d, fields + (i * nf + f) * 32, off)
    else:
        sys.exit("slabedit: unknown operation %s" % op)
    fix_crcs(d)
    open(path, "wb").write(d)


if __name__ == "__main__":
    main(sys.argv)
