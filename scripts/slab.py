#!/usr/bin/env python3
"""slab.py: read .slab datasets from Python with the standard library alone.

Written from man/slab.5 and man/slab-plan.5 only. Fields come back as memoryviews into a
read-only mapping of the file: nothing is copied until you copy it.

    import slab
    ds = slab.Dataset(["train-000.slab", "train-001.slab"])
    len(ds)                       # samples in all files, numbered in the order given
    s = ds[12]                    # a Sample: s.key, s.fields (name -> memoryview)
    jpg = ds.by_key("train-000", "sample000003")["jpg"]
    order = slab.read_plan("epoch3.plan", ds)   # [(file, sample), ...] from shuffle-plan

Command line: `python3 slab.py FILE...` prints each file's summary; `--verify` also checks
every CRC-32C (slow in pure Python: meant for tests, not for training).
"""
import mmap
import os
import struct
import sys

MAGIC = b"\x89SLAB\r\n\x1a"
TABLE_MAGIC = b"SLABTABL"
TRAILER_MAGIC = b"SLABTAIL"
PLAN_MAGIC = b"SLABPLAN"
HEADER_SIZE = 4096
TRAILER_SIZE = 64
FIELD_PRESENT = 0x01
FIELD_JPEG = 0x02

_CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli) of bytes-like data; crc32c(b"123456789") == 0xE3069283."""
    crc ^= 0xFFFFFFFF
    table = _CRC_TABLE
    for b in bytes(data):
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class SlabError(Exception):
    """A file that is not a .slab, or a damaged one."""


class Field:
    """One field of one sample: .data is a memoryview into the file's mapping."""

    __slots__ = ("name", "data", "offset", "crc", "width", "height", "flags", "order")

    def __init__(self, name, data, offset, crc, width, height, flags, order):
        self.name, self.data, self.offset, self.crc = name, data, offset, crc
        self.width, self.height, self.flags, self.order = width, height, flags, order

    @property
    def is_jpeg(self):
        return bool(self.flags & FIELD_JPEG)


class Sample:
    __slots__ = ("key", "file", "index", "offset", "size", "page", "_fields")

    def __init__(self, key, file, index, offset, size, page, fields):
        self.key, self.file, self.index = key, file, index
        self.offset, self.size, self.page, self._fields = offset, size, page, fields

    @property
    def fields(self):
        """name -> memoryview of the bytes."""
        return {f.name: f.data for f in self._fields}

    def field(self, name):
        for f in self._fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def __getitem__(self, name):
        return self.field(name).data

    def __contains__(self, name):
        return any(f.name == name for f in self._fields)


class SlabFile:
    """One .slab file, mapped read-only. Checks header, trailer and layout on open; a table
    checksum check is optional (check_table=True) because pure-Python CRC-32C is slow."""

    def __init__(self, path, check_table=False):
        self.path = path
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                raise SlabError("%s: not a slab file (%d bytes)" % (path, size))
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        m = self._mv = memoryview(self._map)
        if bytes(m[:8]) != MAGIC:
            raise SlabError("%s: not a slab file (bad magic number)" % path)
        if size < HEADER_SIZE + TRAILER_SIZE:
            raise SlabError("%s: truncated" % path)
        major, minor, hsize, self.page_size, self.data_offset = struct.unpack_from("<HHIQQ", m, 8)
        if major != 1:
            raise SlabError("%s: format version %d.%d is not supported" % (path, major, minor))
        self.version = (major, minor)
        self.header_crc = struct.unpack_from("<I", m, 36)[0]
        header = bytearray(m[:HEADER_SIZE])
        header[36:40] = b"\0\0\0\0"
        if crc32c(header) != self.header_crc:
            raise SlabError("%s: header checksum mismatch" % path)
        opts = bytes(m[64:HEADER_SIZE]).split(b"\0", 1)[0].decode("utf-8", "replace")
        self.options = dict(line.split("=", 1) for line in opts.splitlines() if "=" in line)

        t = size - TRAILER_SIZE
        if bytes(m[t:t + 8]) != TRAILER_MAGIC:
            raise SlabError("%s: truncated or damaged: no trailer" % path)
        if crc32c(m[t:t + 60]) != struct.unpack_from("<I", m, t + 60)[0]:
            raise SlabError("%s: trailer checksum mismatch" % path)
        (self.table_offset, self.table_size, file_size, count,
         self.table_crc, hcrc) = struct.unpack_from("<QQQQII", m, t + 8)
        if file_size != size or hcrc != self.header_crc:
            raise SlabError("%s: trailer does not match the file" % path)
        if (self.table_offset % 4096 or self.table_offset < self.data_offset
                or self.table_offset + self.table_size != t):
            raise SlabError("%s: table does not fit the file" % path)
        if check_table and crc32c(m[self.table_offset:t]) != self.table_crc:
            raise SlabError("%s: table checksum mismatch" % path)
        tb = self.table_offset
        if bytes(m[tb:tb + 8]) != TABLE_MAGIC:
            raise SlabError("%s: bad table magic" % path)
        (n, self.page_count, nf, _r, schema_off, schema_size, samples_off, fields_off,
         keys_off, keys_size, index_off, buckets) = struct.unpack_from("<QQIIQQQQQQQQ", m, tb + 8)
        if n != count:
            raise SlabError("%s: sample counts disagree" % path)
        end = self.table_size

        def inside(off, length):
            return 0 <= off <= end and length <= end - off

        if not (inside(schema_off, schema_size) and inside(samples_off, n * 32)
                and inside(fields_off, n * nf * 32) and inside(keys_off, keys_size)
                and inside(index_off, buckets * 8)):
            raise SlabError("%s: table sections outside the table" % path)
        self.count = n
        self.names = []
        p = tb + schema_off
        for _ in range(nf):
            (length,) = struct.unpack_from("<H", m, p)
            self.names.append(bytes(m[p + 2:p + 2 + length]).decode("utf-8", "surrogateescape"))
            p += 2 + length
        self._samples = tb + samples_off
        self._fields = tb + fields_off
        self._keys = tb + keys_off
        self._keys_size = keys_size
        self._index = tb + index_off
        self._buckets = buckets
        self._size = size

    def __len__(self):
        return self.count

    def close(self):
        self._mv.release()
        self._map.close()

    def key(self, i):
        m = self._mv
        off, klen = struct.unpack_from("<QI", m, self._samples + i * 32 + 16)
        if off + klen > self._keys_size:
            raise SlabError("%s: sample %d: key outside the key area" % (self.path, i))
        return bytes(m[self._keys + off:self._keys + off + klen]).decode("utf-8", "surrogateescape")

    def sample(self, i):
        if not 0 <= i < self.count:
            raise IndexError(i)
        m = self._mv
        offset, size, _koff, _klen, page = struct.unpack_from("<QQQII", m, self._samples + i * 32)
        fields = []
        nf = len(self.names)
        base = self._fields + i * nf * 32
        for f in range(nf):
            foff, fsize, crc, w, h, flags, _ss, _cs, order = struct.unpack_from(
                "<QQIHHBBBB", m, base + f * 32)
            if not flags & FIELD_PRESENT:
                continue
            if foff < self.data_offset or foff + fsize > self.table_offset:
                raise SlabError("%s: sample %d field %s outside the data" % (self.path, i, self.names[f]))
            fields.append(Field(self.names[f], m[foff:foff + fsize], foff, crc, w, h, flags, order))
        fields.sort(key=lambda x: x.order)
        return Sample(self.key(i), None, i, offset, size, page, fields)

    def find(self, key):
        """The index of the sample with this key, through the file's hash index, or None."""
        kb = key.encode("utf-8", "surrogateescape")
        mask = self._buckets - 1
        h = fnv1a64(kb) & mask
        for _ in range(self._buckets):
            (v,) = struct.unpack_from("<Q", self._mv, self._index + h * 8)
            if v == 0:
                return None
            if self.key(v - 1).encode("utf-8", "surrogateescape") == kb:
                return v - 1
            h = (h + 1) & mask
        return None

    def verify(self):
        """Check every field's CRC-32C; raise SlabError at the first mismatch."""
        for i in range(self.count):
            for f in self.sample(i)._fields:
                if crc32c(f.data) != f.crc:
                    raise SlabError("%s: sample %d field %s: checksum mismatch" % (self.path, i, f.name))


class Dataset:
    """Several .slab files as one dataset: samples numbered across files in the order given."""

    def __init__(self, paths, check_table=False):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.files = [SlabFile(p, check_table) for p in paths]
        self._starts = []
        total = 0
        for f in self.files:
            self._starts.append(total)
            total += f.count
        self._total = total

    def __len__(self):
        return self._total

    def locate(self, i):
        """Global index -> (file index, sample index)."""
        if i < 0:
            i += self._total
        if not 0 <= i < self._total:
            raise IndexError(i)
        lo, hi = 0, len(self.files)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._starts[mid] <= i:
                lo = mid
            else:
                hi = mid
        return lo, i - self._starts[lo]

    def __getitem__(self, i):
        f, j = self.locate(i)
        return self.sample(f, j)

    def sample(self, file, index):
        s = self.files[file].sample(index)
        s.file = file
        return s

    def by_key(self, key, file=None):
        """The sample with this key (in one file, or the first file that has it)."""
        for f in ([file] if file is not None else range(len(self.files))):
            j = self.files[f].find(key)
            if j is not None:
                return self.sample(f, j)
        raise KeyError(key)

    def identities(self):
        return [(f._size, f.count, f.header_crc, f.table_crc) for f in self.files]

    def close(self):
        for f in self.files:
            f.close()


def read_plan(path, dataset=None):
    """Entries of a binary plan from shuffle-plan as a list of (file, sample). With a Dataset,
    refuse a plan made for other files."""
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < 128 or data[:8] != PLAN_MAGIC:
        raise SlabError("%s: not a plan file (bad magic number)" % path)
    version, _minor, hsize = struct.unpack_from("<HHI", data, 8)
    if version != 1:
        raise SlabError("%s: plan format version %d is not supported" % (path, version))
    n, = struct.unpack_from("<Q", data, 64)
    nfiles, entries_crc, header_crc = struct.unpack_from("<III", data, 88)
    if hsize > len(data) or len(data) - hsize != n * 8:
        raise SlabError("%s: truncated plan" % path)
    head = bytearray(data[:hsize])
    head[96:100] = b"\0\0\0\0"
    if crc32c(head) != header_crc:
        raise SlabError("%s: plan header checksum mismatch" % path)
    if crc32c(data[hsize:]) != entries_crc:
        raise SlabError("%s: plan entries checksum mismatch" % path)
    ids = [struct.unpack_from("<QQII", data, 128 + 32 * k) for k in range(nfiles)]
    if dataset is not None and ids != dataset.identities():
        raise SlabError("%s: plan does not belong to these files" % path)
    flat = struct.unpack_from("<%dI" % (2 * n), data, hsize)
    return list(zip(flat[0::2], flat[1::2]))


def main(argv):
    verify = "--verify" in argv
    paths = [a for a in argv if a != "--verify"]
    if not paths:
        print("usage: slab.py [--verify] FILE...", file=sys.stderr)
        return 2
    status = 0
    for p in paths:
        try:
            f = SlabFile(p, check_table=verify)
            if verify:
                f.verify()
            print("%s: %d samples, fields %s, page size %d%s" % (
                p, f.count, ",".join(f.names), f.page_size, ", verified" if verify else ""))
            f.close()
        except (SlabError, OSError) as e:
            print("slab.py: %s" % e, file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
