#!/usr/bin/env python3
"""slabedit.py: craft one damaged or hostile .slab in place for a test: change bytes the
checksums cover, then make every checksum match again (header, table, trailer), so the rule
under test is the one a reader trips on, not a CRC. Built on crafted.py's Craft.

  slabedit.py FILE key OLD NEW             replace a key's bytes (same length) in the keys
  slabedit.py FILE key-copy FROM TO        sample TO's key becomes sample FROM's (as long)
  slabedit.py FILE field-name OLD NEW      replace a field name (same length) in the schema
  slabedit.py FILE options-fill            options text without a NUL: bytes 64..4095 = 'x'
  slabedit.py FILE field-offset I F OFF    field record (I, F): offset = OFF
  slabedit.py FILE field-size I F SIZE     field record (I, F): size = SIZE
  slabedit.py FILE field-flags I F FLAGS   field record (I, F): flags byte = FLAGS (0x.. too)
  slabedit.py FILE index-move              the last sample of a run of the key index moves
                                           on, past an empty slot
OLD and NEW are taken as Python bytes escapes ('a\\nb', '\\x1b').
"""
import struct
import sys

from crafted import Craft


def arg(s):
    return s.encode("utf-8", "surrogateescape").decode("unicode_escape").encode("latin-1")


def replace_in(c, rel, size, old, new):
    if len(old) != len(new):
        sys.exit("slabedit: OLD and NEW must have the same length")
    start = c.tb + rel
    at = bytes(c.b[start:start + size]).find(old)
    if at < 0:
        sys.exit("slabedit: %r not found" % old)
    c.put(start + at, "%ds" % len(new), new)


def key_place(c, i):
    off, length = struct.unpack_from("<QI", c.b, c.tb + c.samples + 32 * i + 16)
    return c.tb + c.keys + off, length


def main(argv):
    path, op, rest = argv[1], argv[2], argv[3:]
    c = Craft(open(path, "rb").read())
    if op == "key":
        replace_in(c, c.keys, c.keys_size, arg(rest[0]), arg(rest[1]))
    elif op == "key-copy":
        (src, n), (dst, m) = key_place(c, int(rest[0])), key_place(c, int(rest[1]))
        if n != m:
            sys.exit("slabedit: the two keys are not as long")
        c.put(dst, "%ds" % n, bytes(c.b[src:src + n]))
    elif op == "field-name":
        replace_in(c, c.schema, c.schema_size, arg(rest[0]), arg(rest[1]))
    elif op == "options-fill":
        c.put(64, "4032s", b"x" * 4032)
    elif op == "field-offset":
        i, f, off = (int(x) for x in rest)
        c.field(i, f, 0, "Q", off)
    elif op == "field-size":
        i, f, size = (int(x) for x in rest)
        c.field(i, f, 8, "Q", size)
    elif op == "field-flags":
        i, f, flags = (int(x, 0) for x in rest)
        c.field(i, f, 24, "B", flags)
    elif op == "index-move":
        slots, b = c.slots(), c.buckets
        h = next(h for h in range(b) if slots[h] and not slots[(h + 1) % b])
        c.slot((h + 2) % b, slots[h]).slot(h, 0)
    else:
        sys.exit("slabedit: unknown operation %s" % op)
    open(path, "wb").write(c.fix().bytes())


if __name__ == "__main__":
    main(sys.argv)
