"""frames.py: strict readers of prefetch's --emit-format frames and raw streams, written from
prefetch(1) (FRAMES FORMAT, RAW FORMAT), for the tests. Standard library only.

read_frames(path) -> (header, records, end): header a dict of the header's fields, records a
list of Frame, end (written, skipped) from the end record, or None when the stream stops
before it (cut short; what came before is returned). Anything else that is not as documented
(bad magic, nonzero padding or reserved bytes, lengths that are not multiples of 8, bytes
after the end record) raises AssertionError.
read_raw(path) -> list of Raw."""
import struct
from collections import namedtuple

Frame = namedtuple("Frame", "file index pos key image fields raw")
Raw = namedtuple("Raw", "file index pos key fields")
ABSENT = 2**64 - 1


def read_frames(path):
    data = open(path, "rb").read()
    if len(data) < 16:
        return None, [], None
    magic, version, hsize = struct.unpack_from("<8sII", data, 0)
    assert magic == b"SLABFRMS", magic
    assert version in (1, 2), version
    assert hsize % 8 == 0 and hsize >= 88, hsize
    if len(data) < hsize:
        return None, [], None
    (count, width, height, channels, layout, image_bytes, image_block, seed, epoch, crop, flip,
     nfields, zero) = struct.unpack_from("<QIIIIQQQQIIII", data, 16)
    assert zero == 0
    # version 1: RGB; 2: grey or RGBA, the same layout
    assert (version, channels) in ((1, 3), (2, 1), (2, 4)), (version, channels)
    assert image_bytes == width * height * channels, (image_bytes, width, height, channels)
    assert image_block == (image_bytes + 7) // 8 * 8, image_block
    names, at = [], 88
    for _ in range(nfields):
        (n,) = struct.unpack_from("<H", data, at)
        names.append(data[at + 2:at + 2 + n].decode())
        at += 2 + n
    assert at <= hsize and hsize - at < 8, (at, hsize)
    assert data[at:hsize] == bytes(hsize - at), "header padding not zero"
    header = dict(header_size=hsize, count=count, width=width, height=height,
                  channels=channels, layout=layout, image_bytes=image_bytes,
                  image_block=image_block, seed=seed, epoch=epoch, crop=crop, flip=flip,
                  fields=names)
    records = []
    at = hsize
    while True:
        if len(data) < at + 40:
            return header, records, None
        head = data[at:at + 40]
        if head[:4] == b"DONE":
            z, written, skipped = struct.unpack_from("<IQQ", head, 4)
            assert z == 0 and head[24:] == bytes(16), head
            assert at + 40 == len(data), ("bytes after the end record", len(data) - at - 40)
            assert written == len(records), (written, len(records))
            return header, records, (written, skipped)
        magic, file, index, pos, tail_len, klen, z = struct.unpack("<4sIQQQII", head)
        assert magic == b"FRAM", (at, magic)
        assert z == 0 and tail_len % 8 == 0, (z, tail_len)
        end = at + 40 + image_block + tail_len
        if len(data) < end:
            return header, records, None
        img = data[at + 40:at + 40 + image_block]
        assert img[image_bytes:] == bytes(image_block - image_bytes), "image padding not zero"
        tail = data[at + 40 + image_block:end]
        key = tail[:klen].decode()
        fields, t = {}, klen
        for name in names:
            (size,) = struct.unpack_from("<Q", tail, t)
            t += 8
            if size == ABSENT:
                fields[name] = None
            else:
                fields[name] = tail[t:t + size]
                assert len(fields[name]) == size
                t += size
        assert tail_len - t < 8 and tail[t:] == bytes(tail_len - t), "tail padding"
        records.append(Frame(file, index, pos, key, img[:image_bytes], fields, data[at:end]))
        at = end


def read_raw(path):
    data = open(path, "rb").read()
    assert data[:8] == b"SLABEMIT"
    at, out = 24, []
    while data[at:at + 4] == b"SMPL":
        _, f, i, pos, klen, nf = struct.unpack_from("<4sIQQII", data, at)
        at += 32
        key = data[at:at + klen].decode()
        at += klen
        fields = {}
        for _ in range(nf):
            (nlen,) = struct.unpack_from("<H", data, at)
            name = data[at + 2:at + 2 + nlen].decode()
            (size,) = struct.unpack_from("<Q", data, at + 2 + nlen)
            at += 2 + nlen + 8
            fields[name] = data[at:at + size]
            at += size
        out.append(Raw(f, i, pos, key, fields))
    assert data[at:at + 4] == b"DONE"
    return out
