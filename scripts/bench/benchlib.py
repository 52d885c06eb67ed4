"""Helpers shared by the benchmark scripts in scripts/bench/ (Python standard library only).

Paths, cached generated data under bench/data/, page-cache warming, timed child processes
with their CPU time and peak RSS, statistics, the machine context, a plain-text table and an
SVG chart of grouped bars.
"""

import math
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD") or os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "bin")
DATA = os.path.join(ROOT, "bench", "data")
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")

MB = 1e6       # throughput unit: MB/s = 10^6 bytes per second
MIB = 1 << 20


class Failed(Exception):
    """A benchmark step could not run (a command failed, data is wrong, ...)."""


def rel(path):
    """path relative to the project root when inside it, for shorter messages."""
    r = os.path.relpath(path, ROOT)
    return path if r.startswith("..") else r


def tool(name):
    """Absolute path of a built tool in $BUILD/bin; Failed if it is not there."""
    path = os.path.join(BIN, name)
    if not os.access(path, os.X_OK):
        raise Failed(f"'{path}': not built (run make first)")
    return path


def reps(default):
    """Repetitions per row: 1 with BENCH_QUICK, else BENCH_REPS or default."""
    if QUICK:
        return 1
    value = os.environ.get("BENCH_REPS", "")
    if value:
        if not value.isdigit() or int(value) < 1:
            raise Failed(f"BENCH_REPS='{value}': want a positive integer")
        return int(value)
    return default


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def mkwds_tar(name, args, min_bytes=0):
    """bench/data/NAME made by `mkwds ARGS`, generated once and cached.

    The arguments are kept in NAME.args next to it; the tar is made again when it is missing
    or the arguments differ. It is written under a temporary name and renamed when complete,
    so an interrupted generation leaves no half tar behind.
    """
    path = os.path.join(DATA, name)
    stamp = path + ".args"
    want = " ".join(args) + "\n"
    try:
        with open(stamp) as f:
            have = f.read()
    except FileNotFoundError:
        have = None
    if have == want and os.path.isfile(path):
        return path
    os.makedirs(DATA, exist_ok=True)
    remove(stamp)
    why = "missing" if not os.path.isfile(path) else "generator arguments changed"
    print(f"generating {rel(path)} ({why}): mkwds {' '.join(args)}", flush=True)
    tmp = path + ".tmp"
    t0 = time.perf_counter()
    rc = subprocess.call([tool("mkwds"), *args, "-o", tmp])
    dt = time.perf_counter() - t0
    if rc != 0:
        remove(tmp)
        raise Failed(f"mkwds exited {rc}")
    size = os.path.getsize(tmp)
    if size < min_bytes:
        remove(tmp)
        raise Failed(f"mkwds made {size} bytes, want at least {min_bytes}: raise --count")
    os.replace(tmp, path)
    with open(stamp + ".tmp", "w") as f:
        f.write(want)
    os.replace(stamp + ".tmp", stamp)
    print(f"generated {rel(path)}: {size / MB:.0f} MB ({size / MIB:.0f} MiB) "
          f"in {dt:.1f} s ({size / MB / dt:.0f} MB/s)", flush=True)
    return path


def read_all(path, chunk=1 << 20):
    """Read the whole file and discard it; return the seconds it took."""
    t0 = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = bytearray(chunk)
        while os.readv(fd, [buf]) > 0:
            pass
    finally:
        os.close(fd)
    return time.perf_counter() - t0


def resident(path):
    """Fraction of the file in the page cache (util-linux fincore), or None if unknown."""
    if not shutil.which("fincore"):
        return None
    try:
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                             capture_output=True, text=True, check=True).stdout.split()
        size = os.path.getsize(path)
        return int(out[0]) / size if size else 1.0
    except (subprocess.CalledProcessError, ValueError, IndexError):
        return None


def warm(path, times=2):
    """Read the file `times` times so it sits in the page cache; print how it went."""
    size = os.path.getsize(path)
    dts = [read_all(path) for _ in range(times)]
    res = resident(path)
    where = "" if res is None else f"; {res * 100:.1f}% resident (fincore)"
    print(f"warmed {rel(path)}: read {times}x, last read {size / MB / dts[-1]:.0f} MB/s{where}",
          flush=True)
    return res


def run(argv, stdout=None):
    """Run argv as a child, waiting for it with wait4.

    stdout: None inherits ours, else a path opened for writing (e.g. /dev/null). stderr is
    inherited so that errors show. Returns dict(wall, user, sys, maxrss) in seconds and KiB
    (maxrss is the child's and its waited-for descendants' peak). Raises Failed on non-zero exit.
    """
    actions = []
    if stdout is not None:
        actions.append((os.POSIX_SPAWN_OPEN, 1, stdout,
                        os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise Failed(f"{' '.join(argv)}: exit status {rc}")
    return {"wall": wall, "user": ru.ru_utime, "sys": ru.ru_stime, "maxrss": ru.ru_maxrss}


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def gnu_time():
    """/usr/bin/time if it is GNU time with -v (Debian package `time`), else None."""
    path = "/usr/bin/time"
    if not os.access(path, os.X_OK):
        return None
    try:
        r = subprocess.run([path, "-v", "true"], capture_output=True, text=True)
    except OSError:
        return None
    return path if "Maximum resident set size" in r.stderr else None


def gnu_time_maxrss(report):
    """Peak RSS in KiB from a `/usr/bin/time -v -o REPORT` file."""
    with open(report) as f:
        for line in f:
            if "Maximum resident set size" in line:
                return int(line.rsplit(":", 1)[1])
    raise Failed(f"'{report}': no 'Maximum resident set size' line")


def version(argv):
    """First line of `argv` (e.g. ['cp', '--version']), or 'unknown'."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()
        return out[0].strip() if out else "unknown"
    except OSError:
        return "unknown"


def spread(values):
    return statistics.median(values), min(values), max(values)


def machine():
    """Lines describing the machine: CPU, cores, memory, kernel, load."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, v = line.split(":", 1)
                mem[k] = int(v.split()[0]) * 1024
    except (OSError, ValueError):
        pass
    nproc = len(os.sched_getaffinity(0))
    u = os.uname()
    lines = [
        f"cpu:    {model}, nproc {nproc} (online {os.cpu_count()})",
        f"memory: {mem.get('MemTotal', 0) / (1 << 30):.1f} GiB total, "
        f"{mem.get('MemAvailable', 0) / (1 << 30):.1f} GiB available",
        f"kernel: Linux {u.release} {u.machine}",
        f"load:   {loadavg()} (1, 5, 15 min)",
    ]
    if free_page_reporting():
        lines.append("vm:     virtio-balloon free page reporting is on: memory the guest frees goes "
                     "back to the host,\n        so writing into fresh page cache sometimes costs "
                     "host page faults (noisy write rows: see min-max)")
    return lines


def free_page_reporting():
    """True in a VM whose virtio balloon has VIRTIO_BALLOON_F_REPORTING (feature bit 5)."""
    base = "/sys/bus/virtio/devices"
    try:
        for d in os.listdir(base):
            with open(os.path.join(base, d, "device")) as f:
                if int(f.read().strip(), 16) != 5:
                    continue
            with open(os.path.join(base, d, "features")) as f:
                bits = f.read().strip()
            if len(bits) > 5 and bits[5] == "1":
                return True
    except (OSError, ValueError):
        pass
    return False


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def filesystem(path):
    """`df -T PATH` as 'type, device, size, free, mounted on', or 'unknown'."""
    try:
        out = subprocess.run(["df", "-T", "-h", path], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        f = out[-1].split()
        return f"{f[1]} on {f[0]} mounted at {f[6]} ({f[2]} size, {f[4]} free)"
    except (subprocess.CalledProcessError, OSError, IndexError):
        return "unknown"


def table(header, rows, align):
    """Plain-text table; align is a string of 'l' / 'r' per column."""
    cells = [header] + rows
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]

    def line(r):
        out = []
        for i, c in enumerate(r):
            c = str(c)
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "  " + "  ".join(out).rstrip()

    rule = "  " + "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule] + [line(r) for r in rows])


def write_svg(path, width, height, title, parts):
    """An SVG document of the given size: white background, the title, then parts (through
    path.tmp, so a reader never sees half a chart)."""
    esc = (lambda t: str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">\n'
           f'<rect width="100%" height="100%" fill="white"/>\n'
           f'<text x="10" y="22" font-size="15" font-weight="bold">{esc(title)}</text>\n'
           + "\n".join(parts) + "\n</svg>\n")
    with open(path + ".tmp", "w") as f:
        f.write(svg)
    os.replace(path + ".tmp", path)


def svg_grouped_bars(path, title, groups, series, refs=(), unit="", footnote=""):
    """Write an SVG chart of horizontal bars on a linear scale from 0 (through path.tmp).

    groups: [(label, [value or None per series], note)]: one group of bars per label, one bar
    per series (None: no bar, "-" printed), note printed at the group's right; series:
    [(name, colour)] for the bars and the legend; refs: [(value, label, colour)] drawn as
    dashed vertical lines across every group; unit follows each value printed.
    """
    BARW, BARH, GAP = 440, 13, 8
    # room for the longest label and note (about 6.6 and 6 px a character at these sizes)
    LABEL = 20 + int(6.6 * max([len(str(g[0])) for g in groups] + [10]))
    W = LABEL + BARW + 60 + int(6 * max([len(str(g[2] or "")) for g in groups] + [0]))
    esc = (lambda s: str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    values = [v for _, vs, _ in groups for v in vs if v is not None] + [v for v, _, _ in refs]
    top = max(values + [1e-9]) * 1.08

    def x(v):
        return LABEL + BARW * max(v, 0) / top

    parts = []
    y0 = y = 48
    for label, vs, note in groups:
        h = BARH * len(series)
        parts.append(f'<text x="{LABEL - 8}" y="{y + h / 2 + 4:.1f}" text-anchor="end">'
                     f'{esc(label)}</text>')
        for (_, colour), v in zip(series, vs):
            if v is not None:
                parts.append(f'<rect x="{LABEL}" y="{y + 1}" width="{x(v) - LABEL:.1f}" '
                             f'height="{BARH - 2}" fill="{colour}"/>')
            parts.append(f'<text x="{(x(v) if v is not None else LABEL) + 4:.1f}" '
                         f'y="{y + BARH - 3}" font-size="10">'
                         f'{"-" if v is None else f"{v:.2f}{unit}"}</text>')
            y += BARH
        if note:
            parts.append(f'<text x="{LABEL + BARW + 50}" y="{y - h / 2 + 4:.1f}" fill="#555" '
                         f'font-size="11">{esc(note)}</text>')
        y += GAP
    for i, (v, label, colour) in enumerate(sorted(refs)):
        # labels alternately left and right of their line, so that close ones do not overlap
        anchor, dx = ("end", -3) if i % 2 == 0 else ("start", 3)
        parts.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="{y0 - 6}" y2="{y}" '
                     f'stroke="{colour}" stroke-dasharray="4,3"/>')
        parts.append(f'<text x="{x(v) + dx:.1f}" y="{y0 - 10}" text-anchor="{anchor}" '
                     f'fill="{colour}" font-size="11">{esc(label)}</text>')
    step = 10 ** math.floor(math.log10(top / 2)) if top > 0 else 1
    if top / step > 8:
        step *= 2
    tick = 0.0
    while tick <= top:
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{y}" y2="{y + 4}" '
                     f'stroke="#555"/><text x="{x(tick):.1f}" y="{y + 16}" '
                     f'text-anchor="middle" fill="#555" font-size="11">{tick:g}{unit}</text>')
        tick = round(tick + step, 10)
    parts.append(f'<line x1="{LABEL}" x2="{LABEL + BARW}" y1="{y}" y2="{y}" stroke="#555"/>')
    y += 34
    lx = 10
    for name, colour in series:
        parts.append(f'<rect x="{lx}" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{lx + 16}" y="{y}">{esc(name)}</text>')
        lx += 30 + 7 * len(name)
    if footnote:
        y += 20
        parts.append(f'<text x="10" y="{y}" fill="#555" font-size="11">{esc(footnote)}</text>')
    y += 14
    write_svg(path, W, y, title, parts)


def main(body):
    """Run body(); turn Failed and KeyboardInterrupt into a message and exit status 1."""
    try:
        body()
    except Failed as e:
        print(f"bench: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        sys.exit(130)


def say(msg=""):
    print(msg, flush=True)


def si(x):
    """A rate with 3 significant digits and a thousands separator: 12,300 / 1.23M."""
    if x >= 1e6:
        return f"{x / 1e6:.3g}M"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


# ---------------------------------------------------------------------------------------------
# Python interpreters and child programs

def find_python(module):
    """(interpreter, version) of the first python3 that imports module, or (None, None)."""
    seen = []
    for exe in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if not exe or exe in seen or not os.access(exe, os.X_OK):
            continue
        seen.append(exe)
        r = subprocess.run([exe, "-c", f"import {module}; print({module}.__version__)"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return exe, r.stdout.strip()
    return None, None


def python_version(exe):
    return subprocess.run([exe, "-c", "import sys; print(sys.version.split()[0])"],
                          capture_output=True, text=True).stdout.strip()


def run_json(argv, out):
    """run() with stdout to the file `out`; returns (run dict, the JSON the child printed last)."""
    import json
    r = run(argv, stdout=out)
    with open(out) as f:
        text = f.read().strip()
    try:
        return r, json.loads(text.splitlines()[-1])
    except (ValueError, IndexError):
        raise Failed(f"{' '.join(argv[:3])}...: printed no JSON result: {text[:200]!r}")


# ---------------------------------------------------------------------------------------------
# Cold runs: eviction with prefetch --evict, residency with prefetch --json

def xargs(argv_head, listfile, stdout=None):
    """argv_head + every path of listfile (one per line), through xargs."""
    return run(["xargs", "-d", "\\n", "-a", listfile, *argv_head], stdout=stdout)


def evict(paths, listfile=None):
    """Drop the files (paths, or every path listed in listfile) from the page cache."""
    if listfile:
        xargs([tool("prefetch"), "-q", "--evict"], listfile)
    else:
        run([tool("prefetch"), "-q", "--evict", *paths])


def residency(paths, listfile=None):
    """Resident share of the files (prefetch --status --json), 0..1."""
    import json
    argv = [tool("prefetch"), "--json"]
    if listfile:
        argv = ["xargs", "-d", "\\n", "-a", listfile, *argv]
    else:
        argv += paths
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failed(f"{' '.join(argv[:4])}...: exit status {r.returncode}")
    text = r.stdout
    dec = json.JSONDecoder()
    res = size = 0
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        res += obj["total"]["resident_bytes"]
        size += obj["total"]["size"]
    return res / size if size else 1.0


# ---------------------------------------------------------------------------------------------
# Cached data derived from other data: a stamp file PATH.args holds what it was made from

def stamp_ok(path, want):
    try:
        with open(path + ".args") as f:
            return f.read() == want and os.path.exists(path)
    except FileNotFoundError:
        return False


def stamp_write(path, want):
    with open(path + ".args.tmp", "w") as f:
        f.write(want)
    os.replace(path + ".args.tmp", path + ".args")


def identity(path):
    st = os.stat(path)
    return f"{os.path.basename(path)} {st.st_size} {st.st_mtime_ns}"


def make_slab(tar, path, args=()):
    """PATH packed from tar by `pack -q ARGS`, made again when the tar, ARGS or pack change."""
    want = " ".join(["pack", "-q", *args, identity(tar),
                     version([tool("pack"), "--version"])]) + "\n"
    if stamp_ok(path, want):
        return path
    remove(path + ".args")
    say(f"packing {rel(tar)} -> {rel(path)}" + (f" ({' '.join(args)})" if args else ""))
    t0 = time.perf_counter()
    run([tool("pack"), "-q", *args, "-o", path, tar])
    stamp_write(path, want)
    say(f"packed in {time.perf_counter() - t0:.1f} s")
    return path


def tar_samples(tar):
    """(key, {field: bytes}) of a WebDataset tar, in its order, streamed."""
    import tarfile
    key, fields = None, {}
    with tarfile.open(tar, "r|") as t:
        for m in t:
            if not m.isfile():
                continue
            k, dot, field = m.name.partition(".")
            if k != key and fields:
                yield key, fields
                fields = {}
            key = k
            fields[field] = t.extractfile(m).read()
    if fields:
        yield key, fields


def slab_samples(path):
    """(key, {field: bytes}) of a .slab file through scripts/slab.py, in its order."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import slab
    ds = slab.Dataset([path])
    try:
        for i in range(len(ds)):
            s = ds[i]
            key, fields = s.key, {k: bytes(v) for k, v in s.fields.items()}
            del s       # slab.py cannot close a mapping while memoryviews into it are alive
            yield key, fields
    finally:
        ds.close()


def class_folders(path, source):
    """PATH/<cls>/<key>.jpg from the samples of source (a .tar or a .slab): one pass, written
    to PATH.tmp, synced and renamed; made again when source changes."""
    if source.endswith(".slab"):
        want = f"class folders of jpg by cls, from slab {identity(source)}\n"
        samples = slab_samples(source)
    else:
        want = f"class folders of jpg by cls, {identity(source)}\n"
        samples = tar_samples(source)
    if stamp_ok(path, want):
        return path
    remove(path + ".args")
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    say(f"writing {rel(path)}/<cls>/<key>.jpg from {rel(source)}")
    t0 = time.perf_counter()
    n = 0
    for key, fields in samples:
        if "jpg" not in fields or "cls" not in fields:
            raise Failed(f"{source}: sample '{key}' has no jpg or no cls")
        d = os.path.join(tmp, fields["cls"].decode().strip())
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, key + ".jpg"), "wb") as f:
            f.write(fields["jpg"])
        n += 1
    os.sync()
    if os.path.exists(path):
        shutil.rmtree(path)
    os.replace(tmp, path)
    stamp_write(path, want)
    say(f"wrote {n} files in {time.perf_counter() - t0:.1f} s")
    return path


# The peers dataset (scripts/bench/peers, shared by scripts/bench/loader): 20,000 real JPEGs of
# 100-200 KB with a cls field, as a WebDataset tar, a .slab and class folders, in
# bench/data/peers/ (BENCH_QUICK=1: 1,000 in bench/data/peers-quick/).
PEERS_SEED = 11
PEERS_CLASSES = 10
PEERS_COUNT = 1000 if QUICK else 20000
PEERS_DIR = os.path.join(DATA, "peers-quick" if QUICK else "peers")
PEERS_MKWDS = ["--count", str(PEERS_COUNT), "--jpeg-bytes", "100K:200K",
               "--seed", str(PEERS_SEED), "--classes", str(PEERS_CLASSES)]


def peers_data():
    """(tar, slab, files folder) of the peers dataset, made when missing or stale."""
    os.makedirs(PEERS_DIR, exist_ok=True)
    sub = os.path.basename(PEERS_DIR)
    tar = mkwds_tar(f"{sub}/peers.tar", PEERS_MKWDS, min_bytes=PEERS_COUNT * 100_000)
    slabf = make_slab(tar, os.path.join(PEERS_DIR, "peers.slab"))
    files = class_folders(os.path.join(PEERS_DIR, "files"), tar)
    return tar, slabf, files


# ---------------------------------------------------------------------------------------------
# An SVG chart of horizontal bars, one panel per section, log scale

def svg_bars(path, title, panels, legend, footnote):
    """Write an SVG bar chart to path (through path.tmp).

    panels: [(panel title, [bar]...)], bar = dict(label, value, lo, hi, colour, note): the bar
    is the median, the whisker lo..hi, note is printed after the value. legend: [(colour,
    text, x)] on one line below; footnote: one line of grey text under it.
    """
    import math
    W, LABEL, BARW, ROWH = 1000, 400, 420, 20
    parts = []
    y = 40
    esc = (lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    for name, bars in panels:
        if not bars:
            continue
        lo = min(b["lo"] for b in bars)
        hi = max(b["hi"] for b in bars)
        d0 = math.floor(math.log10(lo)) if lo > 0 else 0
        d1 = math.ceil(math.log10(hi)) if hi > 0 else 1
        if d1 <= d0:
            d1 = d0 + 1

        def x(v):
            return LABEL + BARW * (math.log10(max(v, 10 ** d0)) - d0) / (d1 - d0)

        parts.append(f'<text x="10" y="{y}" font-weight="bold">{esc(name)}</text>')
        y += 10
        top = y
        for b in bars:
            parts.append(f'<text x="{LABEL - 6}" y="{y + 14}" text-anchor="end">'
                         f'{esc(b["label"])}</text>')
            parts.append(f'<rect x="{LABEL}" y="{y + 3}" width="{x(b["value"]) - LABEL:.1f}" '
                         f'height="{ROWH - 6}" fill="{b["colour"]}"/>')
            parts.append(f'<line x1="{x(b["lo"]):.1f}" x2="{x(b["hi"]):.1f}" y1="{y + ROWH / 2}" '
                         f'y2="{y + ROWH / 2}" stroke="black"/>')
            parts.append(f'<text x="{LABEL + BARW + 8}" y="{y + 14}">{esc(b["note"])}</text>')
            y += ROWH
        for dec in range(d0, d1 + 1):
            gx = x(10 ** dec)
            parts.append(f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{top}" y2="{y}" stroke="#999" '
                         f'stroke-dasharray="2,3"/>')
            parts.append(f'<text x="{gx:.1f}" y="{y + 14}" text-anchor="middle" fill="#555">'
                         f'{si(10 ** dec)}</text>')
        y += 36
    parts.append("".join(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{colour}"/>'
                         f'<text x="{lx + 16}" y="{y + 11}">{esc(text)}</text>'
                         for colour, text, lx in legend))
    y += 24
    parts.append(f'<text x="10" y="{y + 6}" fill="#555">{esc(footnote)}</text>')
    y += 16
    write_svg(path, W, y, title, parts)
