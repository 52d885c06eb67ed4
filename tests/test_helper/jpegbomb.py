#!/usr/bin/env python3
"""jpegbomb.py: JPEG decompression bombs (and cheap large JPEGs) for the tests, written marker
by marker with the standard library only. Every picture is flat grey (all coefficients 0), so
its entropy-coded data is a few bits a block.

  jpegbomb.py pixels W H OUT         progressive greyscale, W x H declared, a few bytes of
                                     scan data after the header (the 987-byte bomb)
  jpegbomb.py header W H OUT         baseline YCbCr 4:2:0, W x H declared, a few bytes of scan
                                     data: a header that asks for W x H x 3 bytes
  jpegbomb.py scans W H N OUT        progressive greyscale W x H with N scans: a DC scan, then
                                     AC scans of one coefficient each, each coefficient's first
                                     scan at Al 13 and 13 refinements (883 scans without a
                                     libjpeg warning), then the refinements again (warned
                                     about, but still scans) up to N
  jpegbomb.py flat W H OUT           baseline greyscale W x H, whole and valid: large but
                                     cheap to decode (2 bits a block)
"""
import struct
import sys


def segment(marker, payload):
    return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload


SOI, EOI = b"\xff\xd8", b"\xff\xd9"
# One quantisation table of ones, 8-bit.
DQT = segment(0xDB, b"\x00" + b"\x01" * 64)


def dht(cls_id, lengths, symbols):
    """A Huffman table: class << 4 | id, the count of codes of each length 1..16, symbols."""
    counts = [0] * 16
    for n in lengths:
        counts[n - 1] += 1
    return segment(0xC4, bytes([cls_id]) + bytes(counts) + bytes(symbols))


# DC table 0: category 0 (a difference of 0) is the 1-bit code "0".
DHT_DC = dht(0x00, [1], [0x00])
# AC table 0 for baseline: EOB (0x00) is the 1-bit code "0".
DHT_AC_EOB = dht(0x10, [1], [0x00])
# AC table 0 for progressive scans: EOBn runs, symbols 0x00 .. 0xE0, 4 bits each (15 codes of
# length 4: 0000 .. 1110; libjpeg refuses an all-ones code).
EOB_SYMBOLS = [r << 4 for r in range(15)]
DHT_AC_RUNS = dht(0x10, [4] * 15, EOB_SYMBOLS)


class Bits:
    """MSB-first bit writer with JPEG byte stuffing; the last byte padded with ones."""

    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, value, nbits):
        for i in range(nbits - 1, -1, -1):
            self.acc = self.acc << 1 | (value >> i & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc = self.n = 0

    def done(self):
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)
        return bytes(self.out)


def eob_runs(blocks):
    """Entropy-coded data of an AC scan (first or refinement) that ends every block's band at
    once: EOB runs of up to 32767 blocks, nothing to correct."""
    b = Bits()
    while blocks:
        run = min(blocks, 32767)
        r = run.bit_length() - 1
        b.put(EOB_SYMBOLS.index(r << 4), 4)
        if r:
            b.put(run - (1 << r), r)
        blocks -= run
    return b.done()


def sof(marker, w, h, comps):
    """comps: (id, h_samp, v_samp, quant table) each."""
    payload = struct.pack(">BHHB", 8, h, w, len(comps))
    for cid, hs, vs, tq in comps:
        payload += bytes([cid, hs << 4 | vs, tq])
    return segment(marker, payload)


def sos(comps, ss, se, ah, al):
    """comps: (id, dc table, ac table) each."""
    payload = bytes([len(comps)])
    for cid, td, ta in comps:
        payload += bytes([cid, td << 4 | ta])
    return segment(0xDA, payload + bytes([ss, se, ah << 4 | al]))


def blocks(w, h):
    return ((w + 7) // 8) * ((h + 7) // 8)


def pixels_bomb(w, h):
    grey = [(1, 1, 1, 0)]
    return (SOI + DQT + sof(0xC2, w, h, grey) + DHT_DC + sos([(1, 0, 0)], 0, 0, 0, 0) +
            b"\x00" * 16 + EOI)


def header_bomb(w, h):
    ycc = [(1, 2, 2, 0), (2, 1, 1, 0), (3, 1, 1, 0)]
    return (SOI + DQT + sof(0xC0, w, h, ycc) + DHT_DC + DHT_AC_EOB +
            sos([(1, 0, 0), (2, 0, 0), (3, 0, 0)], 0, 63, 0, 0) + b"\x00" * 16 + EOI)


def scans_bomb(w, h, nscans):
    grey = [(1, 1, 1, 0)]
    nb = blocks(w, h)
    # The DC scan: one "0" bit a block (category 0), so whole zero bytes.
    parts = [SOI, DQT, sof(0xC2, w, h, grey), DHT_DC, DHT_AC_RUNS,
             sos([(1, 0, 0)], 0, 0, 0, 0), b"\x00" * ((nb + 7) // 8)]
    data = eob_runs(nb)
    n = 1
    sequence = []
    for k in range(1, 64):
        sequence.append((k, 0, 13))
        sequence += [(k, a, a - 1) for a in range(13, 0, -1)]
    # After the warning-free ones, the refinements again: libjpeg warns (inconsistent
    # progression) but takes each scan in all the same.
    again = [(k, 1, 0) for k in range(1, 64)]
    while n < nscans:
        k, ah, al = sequence[n - 1] if n - 1 < len(sequence) else again[(n - 1 - len(sequence)) % 63]
        parts.append(sos([(1, 0, 0)], k, k, ah, al))
        parts.append(data)
        n += 1
    parts.append(EOI)
    return b"".join(parts)


def flat(w, h):
    grey = [(1, 1, 1, 0)]
    nb = blocks(w, h)
    # A block is DC "0" and EOB "0": two zero bits.
    return (SOI + DQT + sof(0xC0, w, h, grey) + DHT_DC + DHT_AC_EOB +
            sos([(1, 0, 0)], 0, 63, 0, 0) + b"\x00" * ((2 * nb + 7) // 8) + EOI)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    kind, args = argv[1], argv[2:]
    try:
        if kind == "scans":
            w, h, n = (int(a) for a in args[:3])
            data, out = scans_bomb(w, h, n), args[3]
        elif kind in ("pixels", "header", "flat"):
            w, h = (int(a) for a in args[:2])
            data = {"pixels": pixels_bomb, "header": header_bomb, "flat": flat}[kind](w, h)
            out = args[2]
        else:
            raise ValueError("unknown kind " + repr(kind))
    except (ValueError, IndexError) as e:
        sys.stderr.write("jpegbomb.py: %s\n" % e)
        return 2
    with open(out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
