#!/usr/bin/env python3
"""demo-loader.py: the last part of scripts/demo: one epoch of slab.Loader over the demo's
.slab (random-resized crops decoded in libslab's C threads), then the first batch written as
a contact sheet PNG (a grid of the crops, each with its key and label under it).

    demo-loader.py [--plan PLAN] [--size N] [--batch-size N] [--threads N] -o SHEET.png FILE...

Needs numpy and PIL (PIL only writes the sheet); scripts/demo finds the python3 that imports
both. libslab.so is found as slab.py finds it ($SLAB_LIBRARY first).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import PIL  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

import slab  # noqa: E402

COLUMNS = 8     # crops per row of the sheet
PAD = 4         # pixels around and between the cells
LABEL = 16      # the band under each crop that holds its key


def sheet(images, captions, columns=COLUMNS):
    """A grid of the (n, H, W, 3) uint8 images, captions[j] under image j (PIL's default
    font), on a dark background: columns x ceil(n / columns) cells of W x (H + LABEL), PAD
    pixels around each."""
    n, h, w, _ = images.shape
    rows = (n + columns - 1) // columns
    cols = min(n, columns)
    out = Image.new("RGB", (cols * w + (cols + 1) * PAD, rows * (h + LABEL) + (rows + 1) * PAD),
                    (24, 24, 24))
    draw = ImageDraw.Draw(out)
    font = ImageFont.load_default()
    for j in range(n):
        x = PAD + (j % columns) * (w + PAD)
        y = PAD + (j // columns) * (h + LABEL + PAD)
        out.paste(Image.fromarray(images[j], "RGB"), (x, y))
        # The default font is latin-1 only: anything else shown escaped; cut to the cell.
        text = captions[j].encode("ascii", "backslashreplace").decode("ascii")
        while len(text) > 1 and draw.textlength(text, font=font) > w:
            text = text[:-1]
        draw.text((x + 1, y + h + 2), text, fill=(230, 230, 230), font=font)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--plan", help="a plan file of shuffle-plan for FILES (default: one made here)")
    ap.add_argument("--size", type=int, default=224, help="crop side (default 224)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("-o", "--output", required=True, help="the contact sheet PNG")
    a = ap.parse_args(argv)

    print("interpreter:   %s (Python %s; numpy %s, PIL %s)" % (
        sys.executable, sys.version.split()[0], np.__version__, PIL.__version__))
    print("libslab:       %s" % slab.backend)
    # Labels from "cls" when the first sample has it (the demo's shards do).
    ds = slab.Dataset(a.files)
    labels = "cls" if len(ds) and "cls" in ds[0] else None
    source_pixels = 0
    for i in range(len(ds)):
        f = ds[i].field("jpg")
        source_pixels += f.width * f.height
    f = None    # the mapping closes only once no view of it is left
    ds.close()

    opts = dict(image="jpg", size=(a.size, a.size), crop="random-resized", flip=True,
                labels=labels, batch_size=a.batch_size, threads=a.threads)
    print("loader:        slab.Loader(%s, %s)" % (
        ", ".join(map(repr, a.files)), ", ".join("%s=%r" % kv for kv in opts.items())))

    first = first_keys = first_labels = last = None
    wall, cpu = time.perf_counter(), time.process_time()
    with slab.Loader(a.files, plan=a.plan, **opts) as ld:
        plan = "plan %s" % a.plan if a.plan else "a plan made here"
        for b in ld:
            x = np.asarray(b.images)
            last = x.shape
            if first is None:
                # b.images lives in the loader's ring until the next batch: copy it.
                first, first_keys = x.copy(), b.keys
                first_labels = np.asarray(b.labels).copy() if labels else None
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        st = ld.stats()
        seed, epoch = ld.seed, ld.epoch
    if first is None:
        print("demo-loader.py: the loader handed out no batch", file=sys.stderr)
        return 1

    print("epoch:         %s, seed %d, epoch %d: %d batches of %s %s%s" % (
        plan, seed, epoch, st["batches"], first.shape, first.dtype,
        ", labels (%d,) %s" % (len(first_labels), first_labels.dtype) if labels else ""))
    if last != first.shape:
        print("               (the last batch: %s)" % (last,))
    n = st["images"]
    print("speed:         %d images in %.3f s: %.0f images/s, %.2f CPU ms per image "
          "(%d threads; a small epoch: a rough figure)" % (
              n, wall, n / wall, 1e3 * cpu / max(n, 1), a.threads))
    scales = ", ".join("1/%d: %d" % (k, v) for k, v in sorted(st["scales"].items()) if k > 1)
    print("decode paths:  %d DCT-scaled (%s), %d at full scale; %d region decodes (only the "
          "crop's part); %.1f of %.1f Mpixels decoded (%.0f%%)" % (
              st["scaled"], scales, st["scales"][1], st["region"],
              st["decoded_pixels"] / 1e6, source_pixels / 1e6,
              100.0 * st["decoded_pixels"] / max(source_pixels, 1)))
    print("stats():       %s" % ", ".join(
        "%s=%s" % (k, v) for k, v in st.items()))

    captions = [k if first_labels is None else "%s cls %d" % (k, first_labels[j])
                for j, k in enumerate(first_keys)]
    img = sheet(first, captions)
    tmp = a.output + ".tmp"
    img.save(tmp, "PNG")
    os.replace(tmp, a.output)
    rows = (len(first) + COLUMNS - 1) // COLUMNS
    print("contact sheet: %s (batch 0: %d crops %dx%d, %d x %d, key%s under each; %dx%d px)" % (
        a.output, len(first), first.shape[2], first.shape[1], min(len(first), COLUMNS), rows,
        " and label" if labels else "", img.width, img.height))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
