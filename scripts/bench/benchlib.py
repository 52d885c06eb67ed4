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
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{y}" '
           f'font-family="sans-serif" font-size="12">\n'
           f'<rect width="100%" height="100%" fill="white"/>\n'
           f'<text x="10" y="22" font-size="15" font-weight="bold">{esc(title)}</text>\n'
           + "\n".join(parts) + "\n</svg>\n")
    with open(path + ".tmp", "w") as f:
        f.write(svg)
    os.replace(path + ".tmp", path)


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
