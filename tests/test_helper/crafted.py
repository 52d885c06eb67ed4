#!/usr/bin/env python3
"""crafted.py: damaged and crafted variants of a valid .slab file, for the checks of slab(5),
WHAT A READER CHECKS, each with the header, table and trailer CRCs recomputed so that the
check under test is the one that fires; and of a valid plan, for those of slab-plan(5).

    crafted.py slab SMALL.SLAB OUTDIR

writes OUTDIR/NAME.slab for each case and OUTDIR/cases.tsv, one line per case:
NAME, the slab(5) check number, the start of slab.py's message (after "PATH: "), and a part
of inspect's message.

    crafted.py plan PLAN OUTDIR

does the same for a plan (see plan_cases): OUTDIR/NAME.plan and cases.tsv lines of NAME and
the message that slab.py's read_plan and prefetch give after "PATH: ".

SMALL.SLAB is tests/test_helper/common.bash's small.slab: samples d/a (cls, txt), d/b (txt),
d/c (cls, empty), fields cls and txt, 2 MiB pages; the cases read its layout from it.
Standard library only.
"""
import os
import struct
import sys

HEADER, TRAILER = 4096, 64
MASK64 = (1 << 64) - 1


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


class Craft:
    """A copy of the file to change, with the places of its parts."""

    def __init__(self, data):
        self.b = bytearray(data)
        z = len(self.b)
        self.tb = struct.unpack_from("<Q", self.b, z - TRAILER + 8)[0]
        (self.n, self.p, self.nf, _r, self.schema, self.schema_size, self.samples, self.fields,
         self.keys, self.keys_size, self.index, self.buckets) = struct.unpack_from(
            "<QQIIQQQQQQQQ", self.b, self.tb + 8)

    def put(self, off, fmt, *v):
        struct.pack_into("<" + fmt, self.b, off, *v)
        return self

    def header(self, off, fmt, *v):
        return self.put(off, fmt, *v)

    def table(self, off, fmt, *v):
        return self.put(self.tb + off, fmt, *v)

    def trailer(self, off, fmt, *v):
        return self.put(len(self.b) - TRAILER + off, fmt, *v)

    def sample(self, i, off, fmt, *v):
        return self.table(self.samples + 32 * i + off, fmt, *v)

    def field(self, i, f, off, fmt, *v):
        return self.table(self.fields + 32 * (i * self.nf + f) + off, fmt, *v)

    def slot(self, h, v):
        return self.table(self.index + 8 * h, "Q", v)

    def slots(self):
        return list(struct.unpack_from("<%dQ" % self.buckets, self.b, self.tb + self.index))

    def schema_names(self, names, size=None):
        """Replace the schema by these names (bytes), in its own space."""
        raw = b"".join(struct.pack("<H", len(n)) + n for n in names)
        room = self.samples - self.schema      # up to the next section
        assert len(raw) <= room, (names, room)
        self.table(self.schema, "%ds" % room, raw)
        return self.table(40, "Q", len(raw) if size is None else size)

    def fix(self, header=True, table=True, trailer=True):
        """Recompute the CRCs: the header's (and its copy in the trailer), the table's where
        the trailer places the table inside the file, the trailer's."""
        b, t = self.b, len(self.b) - TRAILER
        if header:
            h = bytearray(b[:HEADER])
            h[36:40] = bytes(4)
            crc = crc32c(h)
            self.header(36, "I", crc)
            self.trailer(44, "I", crc)
        if table:
            tb, ts = struct.unpack_from("<QQ", b, t + 8)
            if tb + ts <= t:
                self.trailer(40, "I", crc32c(b[tb:tb + ts]))
        if trailer:
            self.trailer(60, "I", crc32c(b[t:t + 60]))
        return self

    def bytes(self):
        return bytes(self.b)


def cases(base):
    """(name, check, bytes, slab.py's message, inspect's message or None)."""
    z = len(base)
    c = Craft(base)
    tb, t = c.tb, z - TRAILER
    data_end = tb                     # the data area is [4096, table offset)
    out = []

    def case(name, check, craft, py, cmsg):
        out.append((name, check, craft if isinstance(craft, bytes) else craft.bytes(), py, cmsg))

    def new():
        return Craft(base)

    # 1, 2: the magic; files too short
    case("magic", 1, new().header(1, "B", ord("X")), "not a slab file (bad magic number)",
         "not a slab file (bad magic number)")
    case("cut-7", 1, base[:7], "not a slab file (7 bytes)", "not a slab file (7 bytes)")
    case("cut-4100", 2, base[:4100], "truncated: 4100 bytes", "truncated: 4100 bytes")
    # 3
    # (major and minor at once: version 2.0, whatever minor the base file has)
    case("major-2", 3, new().header(8, "I", 2).fix(), "format version 2.0 is not supported",
         "format version 2.0 is not supported")
    # 4: a reserved header byte changed, the CRC not recomputed
    case("header-crc", 4, new().header(40, "B", 1), "header checksum mismatch",
         "header checksum mismatch")
    # 5
    case("header-size", 5, new().header(12, "I", 4095).fix(), "header size 4095 is not 4096",
         "header size 4095 is not 4096")
    # 6
    for name, ps in (("0", 0), ("3000", 3000), ("2048", 2048), ("6144", 6144), ("2^31", 1 << 31),
                     ("2^63", 1 << 63), ("2^64-1", MASK64)):
        case("page-size-" + name, 6, new().header(16, "Q", ps).fix(), "bad page size %d" % ps,
             "bad page size %d" % ps)
    # 7
    for name, d in (("unaligned", 4097), ("zero", 0), ("past-end", (z + 4095) // 4096 * 4096),
                    ("2^63", 1 << 63), ("2^64-4096", MASK64 - 4095)):
        case("data-offset-" + name, 7, new().header(24, "Q", d).fix(), "bad data offset %d" % d,
             "bad data offset %d" % d)
    # 8: an options text that fills the header, without a NUL after it
    opts = (b"tool=crafted\n" + b"x" * HEADER)[:HEADER - 64]
    case("options-no-nul", 8, new().put(64, "%ds" % len(opts), opts).fix(),
         "options text in the header has no end", "options text in the header has no NUL terminator")
    # 9: no trailer at the end: cut short, or something appended
    case("cut-last-byte", 9, base[:-1], "truncated or damaged: no trailer", "no trailer")
    case("appended", 9, base + bytes(100), "truncated or damaged: no trailer", "no trailer")
    # 10: a reserved trailer byte changed, the CRC not recomputed
    case("trailer-crc", 10, new().trailer(48, "B", 1), "trailer checksum mismatch",
         "trailer checksum mismatch")
    # 11: a second copy of the trailer appended; the trailer's file size is wrong
    case("trailer-twice", 11, base + base[t:], "file is %d bytes but its trailer says %d" % (z + 64, z),
         "truncated or appended to")
    case("file-size", 11, new().trailer(24, "Q", z + 4096).fix(),
         "file is %d bytes but its trailer says %d" % (z, z + 4096), "truncated or appended to")
    # 12: the header of another file (its CRC copy in the trailer differs)
    case("header-copy", 12, new().trailer(44, "I", 0x12345678).fix(header=False),
         "trailer does not belong to this header", "trailer does not belong to this header")
    # 13: the table's place
    ts = t - tb
    for name, off, size in (("unaligned", tb + 8, ts - 8), ("before-data", 0, t),
                            ("past-end", tb + 4096, ts), ("2^63", 1 << 63, (t - (1 << 63)) & MASK64),
                            ("size-short", tb, ts - 8), ("size-2^64-1", tb, MASK64)):
        case("table-" + name, 13, new().trailer(8, "QQ", off, size).fix(),
             "table offset %d and size %d do not fit the file" % (off, size),
             "table offset %d and size %d do not fit the file" % (off, size))
    # a table smaller than its header: the file rebuilt with 64 bytes of table
    small = Craft(base[:tb] + b"SLABTABL" + bytes(56) + base[t:])
    small.trailer(16, "Q", 64).trailer(24, "Q", tb + 128).trailer(32, "Q", 0).fix()
    case("table-size-64", 13, small, "table offset %d and size 64 do not fit the file" % tb,
         "table offset %d and size 64 do not fit the file" % tb)
    # 14: a reserved table byte changed, the CRC not recomputed: slab.py finds it on open
    # with check_table, else in verify()
    case("table-crc", 14, new().table(28, "B", 1), "table checksum mismatch",
         "table checksum mismatch")
    # 15
    case("table-magic", 15, new().table(7, "B", ord("X")).fix(), "bad table magic",
         "bad table magic")
    # 16
    case("count-disagree", 16, new().trailer(32, "Q", c.n + 1).fix(),
         "trailer and table disagree on the sample count", "disagree on the sample count")
    # 17
    for name, off, size in (("offset", ts, 2), ("size", c.schema, ts), ("size-2^64-1", c.schema, MASK64),
                            ("offset-2^64-1", MASK64, 10)):
        case("schema-outside-" + name, 17, new().table(32, "QQ", off, size).fix(),
             "schema outside the table", "schema outside the table")
    # 18: huge sample counts with a matching trailer (N x 32 wraps to 32 in 64 bits for the
    # second), and a sample records offset past the table
    for name, n in (("2^60", 1 << 60), ("2^59+1", (1 << 59) + 1), ("2^64-1", MASK64), ("12", 12)):
        case("samples-" + name, 18, new().table(8, "Q", n).trailer(32, "Q", n).fix(),
             "sample records outside the table (%d samples)" % n, "sample records outside the table")
    case("samples-offset", 18, new().table(48, "Q", ts - 64).fix(),
         "sample records outside the table", "sample records outside the table")
    # 19: more fields than the table holds records for, or records past the table
    case("fields-count", 19, new().table(24, "I", 0xFFFFFFFF).fix(),
         "field records outside the table", "field records outside the table")
    case("fields-5-samples", 19, new().table(8, "Q", 5).trailer(32, "Q", 5).fix(),
         "field records outside the table", "field records outside the table")
    case("fields-offset", 19, new().table(56, "Q", ts - 32).fix(),
         "field records outside the table", "field records outside the table")
    # 20
    for name, off, size in (("offset", ts + 8, 0), ("size", c.keys, ts), ("size-2^64-1", c.keys, MASK64)):
        case("keys-outside-" + name, 20, new().table(64, "QQ", off, size).fix(),
             "keys outside the table", "keys outside the table")
    # 21: B not a power of two, too small, too large for the table; the index past the table
    for b in (0, 1, 6, 4):
        case("buckets-%d" % b, 21, new().table(88, "Q", b).fix(),
             "key index of %d slots for 3 samples" % b, "key index outside the table")
    for b in (1 << 20, 1 << 61, 1 << 63):
        case("buckets-%d" % b, 21, new().table(88, "Q", b).fix(),
             "key index outside the table", "key index outside the table")
    case("index-offset", 21, new().table(80, "Q", ts - 32).fix(),
         "key index outside the table", "key index outside the table")
    # 22
    for p in (2, 1 << 40, MASK64):
        case("pages-%d" % p, 22, new().table(16, "Q", p).fix(),
             "page count %d does not fit the file" % p, "page count %d does not fit the file" % p)
    # 23: more names than the schema holds (with no samples, so that the field records fit)
    case("schema-short", 23, new().table(24, "I", 6).table(8, "Q", 0).trailer(32, "Q", 0).fix(),
         "schema too short for 6 fields", "schema too short for 6 fields")
    case("schema-short-2^32-1", 23,
         new().table(24, "I", 0xFFFFFFFF).table(8, "Q", 0).trailer(32, "Q", 0).fix(),
         "schema too short for 4294967295 fields", "schema too short for 4294967295 fields")
    case("schema-truncated", 23, new().table(24, "I", 3).table(8, "Q", 0).trailer(32, "Q", 0).fix(),
         "schema truncated at field 2", "schema truncated at field 2")
    case("schema-name-long", 23, new().schema_names([b"cls", b"txt"]).table(c.schema + 5, "H", 200).fix(),
         "schema truncated at field 1", "schema truncated at field 1")
    case("schema-size-cut", 23, new().schema_names([b"cls", b"txt"], size=9).fix(),
         "schema truncated at field 1", "schema truncated at field 1")
    # 24
    case("name-empty", 24, new().schema_names([b"", b"txt"]).fix(),
         "schema field 0 has an empty name", "schema field 0 is empty, out of order or repeated")
    case("name-nul", 24, new().schema_names([b"cls", b"t\0t"]).fix(),
         "schema field 1: the name has a NUL byte", "schema field 1 is empty, out of order or repeated")
    case("name-slash", 24, new().schema_names([b"cls", b"t/t"]).fix(),
         "schema field 1: the name t/t has a '/'", "schema field 1 has a '/' in its name")
    # 25
    for name, names in (("unsorted", [b"txt", b"cls"]), ("repeated", [b"cls", b"cls"]),
                        ("prefix-after", [b"clsx", b"cls"])):
        case("names-" + name, 25, new().schema_names(names).fix(),
             "schema field 1 is out of order or repeated",
             "schema field 1 is empty, out of order or repeated")
    # 26: sample 1's key runs past the keys, or starts at 2^64-1
    case("key-outside", 26, new().sample(1, 16, "Q", c.keys_size - 1).fix(),
         "sample 1: key at %d, 3 bytes, outside the key area" % (c.keys_size - 1),
         "sample #1: key outside the key area")
    case("key-length", 26, new().sample(2, 24, "I", 0xFFFFFFFF).fix(),
         "sample 2: key at 6, 4294967295 bytes, outside the key area",
         "sample #2: key outside the key area")
    case("key-offset-2^64-1", 26, new().sample(0, 16, "Q", MASK64).fix(),
         "sample 0: key at %d, 3 bytes, outside the key area" % MASK64,
         "sample #0: key outside the key area")
    # 27: a sample's bytes in the table, before the data area, wrapping around 2^64
    for name, i, off, size in (("in-table", 2, data_end, 1), ("in-header", 0, 100, 4),
                               ("wrap", 1, MASK64, 2)):
        case("sample-outside-" + name, 27, new().sample(i, 0, "QQ", off, size).fix(),
             "sample %d '%s': bytes at offset %d, size %d outside the data area"
             % (i, ("d/a", "d/b", "d/c")[i], off, size),
             "sample #%d '%s': bytes at offset %d, size %d outside the data area"
             % (i, ("d/a", "d/b", "d/c")[i], off, size))
    # 28: field txt of sample 0 across the table's start, in the header, of size 2^64-1
    for name, off, size in (("across-table", data_end - 2, 3), ("in-header", 64, 3),
                            ("size-2^64-1", 4097, MASK64)):
        case("field-outside-" + name, 28, new().field(0, 1, 0, "QQ", off, size).fix(),
             "sample 0 field txt: offset %d, size %d outside the data area" % (off, size),
             "sample #0 field 'txt': offset %d, size %d outside the data area" % (off, size))
    # 29: a used slot past N
    slots = c.slots()
    used = slots.index(2)             # sample 1's slot
    empty = slots.index(0)
    case("slot-past-n", 29, new().slot(used, 4).fix(),
         "key index slot %d holds 4, past the 3 samples" % used,
         "key index slot %d points past the samples" % used)
    case("slot-used-2^64-1", 29, new().slot(used, MASK64).fix(),
         "key index slot %d holds %d, past the 3 samples" % (used, MASK64),
         "key index slot %d points past the samples" % used)
    # 30: no empty slot: every lookup ends after B probes
    full = new()
    for h in range(c.buckets):
        full.slot(h, 1)
    case("index-full", 30, full.fix(), "sample 1 'd/b': key index does not lead to it",
         "sample #1 'd/b': key index does not lead to it")
    # 31 to 41, found by a full verification; not 33 (the page rules): with 2 MiB pages and
    # a data area of one 4 KiB block, no sample can cross a page boundary and stay inside
    # the data area (check 27)
    case("overlap", 31, new().sample(1, 0, "Q", 4096).fix(),
         "sample 1 'd/b' at offset 4096 overlaps the sample before it",
         "sample #1 'd/b' at offset 4096 overlaps the sample before it")
    case("page-recorded", 32, new().sample(1, 28, "I", 1).fix(),
         "sample 1 'd/b': page 1 recorded, offset 4100 is in page 0",
         "sample #1 'd/b': page 1 recorded, offset 4100 is in page 0")
    case("padding", 34, new().put(5000, "B", 1), "non-zero padding byte at offset 5000 (before sample 3)",
         "non-zero padding byte at offset 5000 (before sample #3)")
    case("absent-record", 35, new().field(1, 0, 28, "B", 1).fix(),
         "sample 1 'd/b': record of absent field cls is not zero",
         "sample #1 'd/b': record of absent field 'cls' is not zero")
    case("field-crc", 35, new().put(4097, "B", ord("O")),
         "sample 0 field txt: checksum mismatch (bytes at offset 4097, size 3)",
         "sample #0 'd/a' field 'txt': checksum mismatch")
    case("order-bytes", 36, new().field(0, 0, 27, "B", 1).field(0, 1, 27, "B", 0).fix(),
         "sample 0 'd/a' field cls: order byte 1, expected 0",
         "sample #0 'd/a' field 'cls': order byte 1, expected 0")
    # (with the CRC of the bytes it now names, so that the tiling check is the one to fire)
    case("tiling", 36, new().field(0, 1, 0, "QQI", 4098, 3, crc32c(base[4098:4101])).fix(),
         "sample 0 'd/a' field txt at offset 4098: fields do not tile the sample",
         "sample #0 'd/a' field 'txt' at offset 4098: fields do not tile the sample")
    case("sample-size", 36, new().sample(0, 8, "Q", 3).fix(),
         "sample 0 'd/a': fields sum to 4 bytes, record says 3",
         "sample #0 'd/a': fields sum to 4 bytes, record says 3")
    # 37: a key that would leave the folder on export ("d/b" -> "/db", "..")
    keys = bytes(c.b[tb + c.keys:tb + c.keys + c.keys_size])
    at = tb + c.keys + keys.index(b"d/b")
    case("key-absolute", 37, new().put(at, "3s", b"/db").fix(),
         "sample 1: key '/db' is not a safe member name",
         "sample #1: key '/db' is not a safe member name (absolute, or with a '..' component)")
    case("key-dotdot", 37, new().put(at, "3s", b"../").fix(),
         "sample 1: key '../' is not a safe member name",
         "sample #1: key '../' is not a safe member name (absolute, or with a '..' component)")
    case("index-moved", 38, new().slot(used, 0).slot(empty, 2).fix(),
         "sample 1 'd/b': key index does not lead to it",
         "sample #1 'd/b': key index does not lead to it")
    case("pages-0", 39, new().table(16, "Q", 0).fix(), "table says 0 pages, the samples use 1",
         "table says 0 pages, the samples use 1")
    # 40: a slot that no sample's lookup reaches holds a value past N
    case("slot-2^64-1", 40, new().slot(empty, MASK64).fix(),
         "key index slot %d holds %d, past the 3 samples" % (empty, MASK64),
         "key index slot %d points past the samples" % empty)
    case("slot-extra", 41, new().slot(empty, 1).fix(), "key index has 4 entries for 3 samples",
         "key index has 4 entries for 3 samples")
    # 42 to 45: format 1.3's video records (small.slab has none)
    tsize = t - tb
    case("videos-outside", 42, new().table(96, "QQ", tsize, 1).fix(),
         "video records outside the table (1 record)", "video records outside the table")
    case("video-past", 43, new().field(0, 0, 24, "B", 0x41).field(0, 0, 28, "I", 9).fix(),
         "sample 0 field cls: video record 9, past the 0 records",
         "sample #0 field 'cls': video record 9, past the 0 records")
    case("video-reserved", 44, new().field(0, 1, 28, "I", 1).fix(),
         "sample 0 'd/a' field txt: reserved record bytes are not zero",
         "sample #0 'd/a' field 'txt': reserved record bytes are not zero")
    case("videos-unused", 45, new().table(96, "QQ", 0, 1).fix(),
         "table has 1 video record, the fields use 0", "table has 1 video record, the fields use 0")
    # 46: two image flags on one field
    case("image-flags", 46, new().field(0, 1, 24, "B", 0x0b).fix(),
         "sample 0 'd/a' field txt: flags 0x0b: more than one of JPEG, PNG, WEBP and VIDEO",
         "sample #0 'd/a' field 'txt': flags 0x0b: more than one of JPEG, PNG, WEBP and VIDEO")
    return out


def plan_cases(base):
    """(name, bytes, the message of slab.py and of the C reader) for a plan of 6 samples over
    two files of 3 samples each, drop-last, world size 1. The cases follow slab-plan(5),
    WHAT A READER CHECKS, in its order; each recomputes the entries CRC (offset 92) and the
    header CRC (offset 96) unless a CRC is what it tests."""
    hsize = struct.unpack_from("<I", base, 12)[0]
    n = struct.unpack_from("<Q", base, 64)[0]
    assert n == 6 and len(base) == hsize + 8 * n
    out = []

    def craft(changes, data=None, fix=True):
        b = bytearray(base if data is None else data)
        for off, fmt, v in changes:
            struct.pack_into("<" + fmt, b, off, v)
        if fix:
            h = struct.unpack_from("<I", b, 12)[0]
            if h <= len(b):
                struct.pack_into("<I", b, 92, crc32c(b[h:]))
                head = bytearray(b[:h])
                head[96:100] = bytes(4)
                struct.pack_into("<I", b, 96, crc32c(head))
        return bytes(b)

    def case(name, data, msg):
        out.append((name, data, msg))

    case("magic", craft([(0, "B", ord("X"))]), "not a plan file (bad magic number)")
    case("cut-7", base[:7], "not a plan file (bad magic number)")
    case("cut-100", base[:100], "truncated or damaged plan header")
    case("version-2", craft([(8, "H", 2)]), "plan format version 2 is not supported")
    case("files-2^24+1", craft([(88, "I", (1 << 24) + 1)]), "truncated or damaged plan header")
    case("files-200", craft([(88, "I", 200)]), "truncated or damaged plan header")
    case("files-2^32-1", craft([(88, "I", 0xFFFFFFFF)]), "truncated or damaged plan header")
    case("header-size", craft([(12, "I", 8192)]), "truncated or damaged plan header")
    case("header-crc", craft([(100, "B", 1)], fix=False), "plan header checksum mismatch")
    # the header's numbers agree before any entry is read: an entry count that is not L - K
    # is an inconsistent header, not a short file
    for name, off, fmt, v in (("mode-3", 16, "I", 3), ("flags-4", 20, "I", 4), ("world-0", 44, "I", 0),
                              ("rank-1-of-1", 40, "I", 1), ("total-7", 80, "Q", 7),
                              ("length-5", 72, "Q", 5), ("start-1", 56, "Q", 1),
                              ("file-samples-2^32", 128 + 8, "Q", 1 << 32),
                              ("count-7", 64, "Q", 7), ("count-2^61", 64, "Q", 1 << 61)):
        case(name, craft([(off, fmt, v)]), "inconsistent plan header")
    # N above 2^32 - 1 (no dataset has more samples), every other number agreeing with it
    case("total-2^32", craft([(128 + 8, "Q", (1 << 32) - 3), (80, "Q", 1 << 32),
                              (72, "Q", 1 << 32), (64, "Q", 1 << 32)]),
         "inconsistent plan header")
    case("cut-entry", base[:-8], "truncated plan: 6 entries announced, 40 bytes of entries")
    case("trailing", base + bytes(8), "trailing bytes after the plan (6 entries announced)")
    case("trailing-1", base + b"x", "trailing bytes after the plan (6 entries announced)")
    case("entries-crc", craft([(hsize, "B", base[hsize] ^ 1)], fix=False),
         "plan entries checksum mismatch")
    case("entry-file", craft([(hsize + 8 * 2, "I", 2)]),
         "entry 2 names sample %d of file 2, which does not exist"
         % struct.unpack_from("<I", base, hsize + 8 * 2 + 4))
    case("entry-file-2^32-1", craft([(hsize, "I", 0xFFFFFFFF)]),
         "entry 0 names sample %d of file 4294967295, which does not exist"
         % struct.unpack_from("<I", base, hsize + 4))
    case("entry-sample", craft([(hsize + 8 * 5 + 4, "I", 3)]),
         "entry 5 names sample 3 of file %d, which does not exist"
         % struct.unpack_from("<I", base, hsize + 8 * 5))
    return out


def main(argv):
    """crafted.py slab SMALL.SLAB OUTDIR, or crafted.py plan PLAN OUTDIR."""
    kind, src, outdir = argv[1:4]
    base = open(src, "rb").read()
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "cases.tsv"), "w") as tsv:
        if kind == "slab":
            for name, check, data, py, cmsg in cases(base):
                with open(os.path.join(outdir, name + ".slab"), "wb") as f:
                    f.write(data)
                tsv.write("%s\t%d\t%s\t%s\n" % (name, check, py, cmsg))
        else:
            for name, data, msg in plan_cases(base):
                with open(os.path.join(outdir, name + ".plan"), "wb") as f:
                    f.write(data)
                tsv.write("%s\t%s\n" % (name, msg))


if __name__ == "__main__":
    main(sys.argv)
