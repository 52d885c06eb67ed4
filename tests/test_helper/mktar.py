#!/usr/bin/env python3
"""mktar.py: write a random WebDataset tar for tests: sizes from 0 bytes to several pages,
many fields, missing fields, long keys, keys with directories and dots. Deterministic per seed."""
import argparse
import io
import random
import sys
import tarfile


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--max-size", type=int, default=20000,
                    help="largest field in bytes (a few get up to 3x this)")
    ap.add_argument("--format", choices=["gnu", "pax", "ustar"], default="pax")
    ap.add_argument("--fields", default="jpg,cls,json,seg.png,TXT,a.b.c")
    args = ap.parse_args()

    rnd = random.Random(args.seed)
    fields = args.fields.split(",")
    fmt = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT,
           "ustar": tarfile.USTAR_FORMAT}[args.format]
    out = sys.stdout.buffer if args.output == "-" else open(args.output, "wb")
    with tarfile.open(fileobj=out, mode="w|", format=fmt) as tar:
        for i in range(args.samples):
            kind = rnd.random()
            if kind < 0.1 and args.format != "ustar":
                key = "long/" + "k" * rnd.randint(100, 180) + "%05d" % i
            elif kind < 0.3:
                key = "dir.with.dots/sub/s%05d" % i
            elif kind < 0.4:
                key = "./plain%05d" % i
            else:
                key = "sample%05d" % i
            chosen = [f for f in fields if rnd.random() < 0.6] or [fields[0]]
            rnd.shuffle(chosen)
            for f in chosen:
                r = rnd.random()
                if r < 0.1:
                    size = 0
                elif r < 0.15:
                    size = rnd.randint(args.max_size, 3 * args.max_size)
                else:
                    size = rnd.randint(1, args.max_size)
                data = rnd.randbytes(size)
                ti = tarfile.TarInfo(key + "." + f)
                ti.size = size
                ti.mode = 0o644
                ti.mtime = 0
                tar.addfile(ti, io.BytesIO(data))
    if out is not sys.stdout.buffer:
        out.close()


if __name__ == "__main__":
    main()
