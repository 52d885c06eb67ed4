#!/usr/bin/env python3
"""tarcmp.py A B: exit 0 when both tars hold the same regular members (names and bytes) in
the same order; else print the first difference and exit 1. Options: --sorted compares
regardless of order; --wds keeps only members whose names WebDataset makes fields of."""
import sys
import tarfile

def wds_split(name):
    base = name.rsplit("/", 1)[-1]
    dot = base.find(".")
    if dot <= 0 or dot == len(base) - 1:
        return None
    return name[: len(name) - len(base) + dot], base[dot + 1:]


def members(path, wds):
    out = []
    with tarfile.open(path, "r:*") as t:
        for m in t:
            if not m.isreg():
                continue
            if wds and wds_split(m.name) is None:
                continue
            out.append((m.name, t.extractfile(m).read()))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = set(a for a in sys.argv[1:] if a.startswith("--"))
    a, b = members(args[0], "--wds" in flags), members(args[1], "--wds" in flags)
    if "--sorted" in flags:
        a.sort()
        b.sort()
    if len(a) != len(b):
        print("member count differs: %d vs %d" % (len(a), len(b)))
    for (na, da), (nb, db) in zip(a, b):
        if na != nb:
            print("name differs: %r vs %r" % (na, nb))
            return 1
        if da != db:
            print("bytes of %r differ (%d vs %d bytes)" % (na, len(da), len(db)))
            return 1
    return 0 if len(a) == len(b) else 1


if __name__ == "__main__":
    sys.exit(main())
