"""imgcrop --batch from Python: one imgcrop process for many runs of the image pipeline.

    with ImgCrop() as ic:
        code, text = ic.run("--size", "24x16", "--exact", "in.webp", "out.rgb")

code is the exit status the run would have had alone, text its output line (code 0) or what it
would have written on standard error less the last line break (otherwise). Arguments must not
hold white space (the batch splits lines at it). mae() compares two of its RGB outputs.
"""
import atexit
import os
import re
import subprocess
import sys


class ImgCrop:
    def __init__(self, exe="imgcrop", env=None):
        """env: variables to set for the process (SLAB_JPEG_RESTART=require, say)."""
        full = dict(os.environ, **env) if env else None
        self.p = subprocess.Popen([exe, "--batch"], stdin=subprocess.PIPE, env=full,
                                  stdout=subprocess.PIPE, text=True, errors="replace")

    def run(self, *args):
        args = [str(a) for a in args]
        for a in args:
            assert a and not any(c.isspace() for c in a), "argument with white space: %r" % a
        self.p.stdin.write(" ".join(args) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("imgcrop --batch ended (exit %s) at %r" % (self.p.wait(), args))
        line = line.rstrip("\n")
        if line.startswith("exit "):
            code, _, msg = line[5:].partition(": ")
            return int(code), re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], msg)
        return 0, line

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait()
        if rc != 0:
            raise RuntimeError("imgcrop --batch exited %d" % rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_shared = {}


def run(*args, env=None):
    """ImgCrop(env=env).run(*args) on one batch for each env, kept for the script's life and
    ended at its exit (where a failed end, a leak the sanitizers report, say, fails the
    script: exit 1)."""
    key = tuple(sorted(env.items())) if env else ()
    if key not in _shared:
        _shared[key] = ImgCrop(env=env)
    return _shared[key].run(*args)


@atexit.register
def _end_shared():
    for b in _shared.values():
        try:
            b.close()
        except RuntimeError as e:
            print(e, file=sys.stderr)
            os._exit(1)


def mae(a, b):
    """The largest per-channel mean absolute error of two RGB files of the same size."""
    a, b = open(a, "rb").read(), open(b, "rb").read()
    assert len(a) == len(b) and len(a) % 3 == 0, (len(a), len(b))
    n = len(a) // 3
    return max(sum(abs(x - y) for x, y in zip(a[c::3], b[c::3])) / n for c in range(3))
