#!/usr/bin/env python3
"""planref.py: shuffle-plan's algorithm written again from man/shuffle-plan.1 and slab(5)
alone, to show that the pages say enough to reproduce a plan in another language.

  planref.py plan [--mode M] [--seed S] [--epoch E] [--rank R] [--world-size W] [--pad]
                  [--window PAGES | --memory BYTES] [--start K] [--subset LIST]
                  [--binary] FILE...
      prints the plan as text, one "FILE_INDEX SAMPLE_INDEX" line per entry; with --binary
      writes the plan file of slab-plan(5) instead. LIST holds one global sample index or
      key:KEY a line (shuffle-plan(1), --subset); it is not checked as shuffle-plan does
  planref.py batch FILE... < CONFIGS
      one line of plan options per line of standard input; for each, a line "== OPTIONS"
      then the plan (one process for many plans)
  planref.py decode PLAN
      decodes a binary plan (slab-plan(5)): the header as "key: value" lines, a line
      "entries:", then the entries as text; checks both CRCs
"""
import argparse
import struct
import sys

M64 = (1 << 64) - 1


# ---- CRC-32C (slab(5)) -------------------------------------------------------------------

def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# ---- the generator -------------------------------------------------------------------------

def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Rng:
    def __init__(self, dataset, seed, epoch, stream):
        x = mix(mix(mix(mix(dataset) ^ seed) ^ epoch) ^ stream)
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            self.s.append(mix(x))

    def next(self):
        s = self.s
        out = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return out

    def below(self, n):
        m = self.next() * n
        low = m & M64
        if low < n:
            t = ((1 << 64) - n) % n
            while low < t:
                m = self.next() * n
                low = m & M64
        return m >> 64

    def shuffle(self, a, lo, n):
        for i in range(n, 1, -1):
            j = self.below(i)
            a[lo + i - 1], a[lo + j] = a[lo + j], a[lo + i - 1]

    def permutation(self, n):
        buckets = [[] for _ in range(256)]
        for i in range(n):
            buckets[self.next() >> 56].append(i)
        out = []
        for b in buckets:
            lo = len(out)
            out.extend(b)
            self.shuffle(out, lo, len(b))
        return out


# ---- .slab files (slab(5)) ------------------------------------------------------------------

class Slab:
    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.page_size, self.data_offset = struct.unpack_from("<QQ", data, 16)
        self.header_crc = struct.unpack_from("<I", data, 36)[0]
        tr = len(data) - 64
        table, _, self.file_size, self.count, self.table_crc = struct.unpack_from("<QQQQI", data, tr + 8)
        samples_off = struct.unpack_from("<Q", data, table + 48)[0]
        keys_off = struct.unpack_from("<Q", data, table + 64)[0]
        records = [struct.unpack_from("<QQQI", data, table + samples_off + 32 * i)
                   for i in range(self.count)]
        self.samples = [(off, size) for off, size, _, _ in records]
        keys = table + keys_off
        self.keys = [data[keys + ko:keys + ko + kl] for _, _, ko, kl in records]

    def identity(self):
        return struct.pack("<QQII8x", self.file_size, self.count, self.header_crc, self.table_crc)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


# ---- the plan -------------------------------------------------------------------------------

def read_subset(path, files):
    """The global indexes a subset list names: a decimal index, or key:KEY looked up in the
    files in order (the first holding it wins)."""
    first, base = {}, 0
    for f in files:
        for i, k in enumerate(f.keys):
            first.setdefault(k, base + i)
        base += f.count
    out = []
    with open(path, "rb") as fh:
        for line in fh.read().split(b"\n"):
            if line:
                out.append(first[line[4:]] if line.startswith(b"key:") else int(line))
    return out


def plan(a):
    """The entries of the plan, and what its file's header records about the samples
    planned: the subset's size and CRC (None without a subset)."""
    files = [Slab(p) for p in a.files]
    dataset = fnv1a64(b"".join(f.identity() for f in files))
    where = []                      # global index -> (file, sample)
    units = []                      # (global indexes, pages, page size)
    for fi, f in enumerate(files):
        last = None
        for si, (off, size) in enumerate(f.samples):
            page = (off - f.data_offset) // f.page_size
            pages = -(-size // f.page_size) if size > f.page_size else 1
            if pages > 1 or page != last:
                units.append(([], pages, f.page_size))
            units[-1][0].append(len(where))
            last = None if pages > 1 else page
            where.append((fi, si))
    # the samples planned, in file order: all of them, or the subset's; the units those
    # that hold some of them, with those only
    subset = None
    members = list(range(len(where)))
    if a.subset is not None:
        members = sorted(read_subset(a.subset, files))
        keep = set(members)
        units = [(u, pages, ps) for u, pages, ps in
                 (([g for g in gs if g in keep], pages, ps) for gs, pages, ps in units) if u]
        subset = (len(members), crc32c(struct.pack("<%dI" % len(members), *members)))
    n = len(members)
    mode = a.mode
    rng = Rng(dataset, a.seed, a.epoch, 1)
    unit_of = {}
    if mode == "sequential":
        order = members
    elif mode == "random":
        order = [members[k] for k in rng.permutation(n)]
    else:
        order = []
        for u in rng.permutation(len(units)):
            for g in units[u][0]:
                unit_of[g] = u
            order.extend(units[u][0])
    per = 0 if n == 0 else (-(-n // a.world_size) if a.pad else n // a.world_size)
    share = [order[(a.rank * per + i) % n] for i in range(per)]
    if mode == "quasi":
        share = interleave(a, share, unit_of, units, Rng(dataset, a.seed, a.epoch, 2 + a.rank))
    return [where[g] for g in share[a.start:]], (files, len(where), per, subset)


def encode(a, entries, info):
    """The plan file (slab-plan(5)) of these entries."""
    files, total, length, subset = info
    hsize = (128 + 32 * len(files) + 4095) // 4096 * 4096
    body = b"".join(struct.pack("<II", f, i) for f, i in entries)
    flags = (1 if a.pad else 0) | (2 if a.memory else 0) | (4 if subset else 0)
    head = bytearray(hsize)
    struct.pack_into("<8sHHIIIQQIIQQQQQII", head, 0, b"SLABPLAN", 1, 1 if subset else 0, hsize,
                     ["sequential", "random", "quasi"].index(a.mode), flags, a.seed, a.epoch,
                     a.rank, a.world_size, a.memory if a.memory else a.window, a.start,
                     len(entries), length, total, len(files), crc32c(body))
    if subset:
        struct.pack_into("<QI", head, 104, *subset)
    for i, f in enumerate(files):
        head[128 + 32 * i:160 + 32 * i] = f.identity()
    struct.pack_into("<I", head, 96, crc32c(head))
    return bytes(head) + body


def interleave(a, share, unit_of, units, rng):
    groups = []                     # [samples (global), cost, next to emit]
    for g in share:
        u = unit_of[g]
        if not groups or groups[-1][3] != u:
            pages, ps = units[u][1], units[u][2]
            groups.append([[], pages * ps if a.memory else pages, 0, u])
        groups[-1][0].append(g)
    window = a.memory if a.memory else a.window
    wheel = {}                      # slot -> stack of groups (last put, first taken)
    live = cost = now = nxt = 0
    out = []
    for _ in range(len(share)):
        first = nxt
        while nxt < len(groups) and (live == 0 or cost + groups[nxt][1] <= window):
            cost += groups[nxt][1]
            live += 1
            nxt += 1
        for k in range(first, nxt):
            rng.shuffle(groups[k][0], 0, len(groups[k][0]))
            wheel.setdefault(now + rng.below(live), []).append(k)
        while not wheel.get(now):
            now += 1
        k = wheel[now].pop()
        grp = groups[k]
        out.append(grp[0][grp[2]])
        grp[2] += 1
        if grp[2] == len(grp[0]):
            cost -= grp[1]
            live -= 1
        else:
            wheel.setdefault(now + live // 2 + rng.below(live), []).append(k)
    return out


# ---- the binary plan (slab-plan(5)) ----------------------------------------------------------

def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"SLABPLAN":
        sys.exit("not a plan")
    (version, minor, hsize, mode, flags, seed, epoch, rank, world, window, start, n, length,
     total, nfiles, entries_crc, header_crc) = struct.unpack_from("<HHIIIQQIIQQQQQIII", data, 8)
    subset, subset_crc = struct.unpack_from("<QI", data, 104)
    header = bytearray(data[:hsize])
    header[96:100] = b"\0\0\0\0"
    if crc32c(header) != header_crc:
        sys.exit("header CRC mismatch")
    if crc32c(data[hsize:]) != entries_crc or len(data) != hsize + 8 * n:
        sys.exit("entries CRC or size mismatch")
    ids = [struct.unpack_from("<QQII", data, 128 + 32 * i) for i in range(nfiles)]
    out = ["version: %d" % version, "minor_version: %d" % minor, "header_size: %d" % hsize,
           "mode: %s" % ["sequential", "random", "quasi"][mode], "flags: %d" % flags,
           "seed: %d" % seed, "epoch: %d" % epoch, "rank: %d" % rank, "world_size: %d" % world,
           "window: %d" % window, "start: %d" % start, "entries: %d" % n, "length: %d" % length,
           "samples: %d" % total, "files: %d" % nfiles]
    if flags & 4:
        out += ["subset: %d" % subset, "subset_crc: %08x" % subset_crc]
    for i, (size, count, hcrc, tcrc) in enumerate(ids):
        out.append("file %d: size %d, samples %d, header crc %08x, table crc %08x"
                   % (i, size, count, hcrc, tcrc))
    out.append("entries:")
    for i in range(n):
        out.append("%d %d" % struct.unpack_from("<II", data, hsize + 8 * i))
    print("\n".join(out))


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="quasi")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epoch", type=int, default=0)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world-size", type=int, default=1)
    p.add_argument("--pad", action="store_true")
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--memory", type=int, default=0)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--subset")
    p.add_argument("--binary", action="store_true")
    p.add_argument("files", nargs="+")
    return p


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "decode":
        decode(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "plan":
        a = parser().parse_args(sys.argv[2:])
        entries, info = plan(a)
        if a.binary:
            sys.stdout.buffer.write(encode(a, entries, info))
        else:
            sys.stdout.write("".join("%d %d\n" % e for e in entries))
    elif len(sys.argv) > 2 and sys.argv[1] == "batch":
        for line in sys.stdin:
            if line.strip():
                a = parser().parse_args(line.split() + sys.argv[2:])
                sys.stdout.write("== %s\n" % line.strip())
                sys.stdout.write("".join("%d %d\n" % e for e in plan(a)[0]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
