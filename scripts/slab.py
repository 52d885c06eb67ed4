#!/usr/bin/env python3
"""slab.py: read .slab datasets from Python with the standard library alone.

Written from man/slab.5 and man/slab-plan.5 only. Fields come back as memoryviews into a
read-only mapping of the file: nothing is copied until you copy it.

    import slab
    ds = slab.Dataset(["train-000.slab", "train-001.slab"])
    len(ds)                       # samples in all files, numbered in the order given
    s = ds[12]                    # a Sample: s.key, s.fields (name -> memoryview)
    jpg = ds.by_key("sample000003")["jpg"]   # by key: the first file holding it (file=F: in F)
    order = slab.read_plan("epoch3.plan", ds)   # [(file, sample), ...] from shuffle-plan

    # Batches loaded (and images decoded, cropped, resized) by libslab's C threads:
    for b in slab.Loader(paths, plan="epoch3.plan", batch_size=256, image="jpg"):
        b.images, b.fields["cls"], b.keys     # (256, 224, 224, 3) uint8 buffer, zero-copy

Command line: `python3 slab.py FILE...` (or `python3 -m slab FILE...`) prints each file's
summary; `--verify` also checks the whole file as inspect --verify does, every CRC-32C
included (slow in pure Python: meant for tests, not for training); `--version` prints
slab.__version__, slab's version (slab.h's, the tools' and the package metadata's). File
names, field names and messages are escaped as the tools escape them (inspect(1)).

One file, or a package: this file is the whole reader, and can be copied alone. It is also
the package slab's __init__.py (python/slab/: with __main__.py, and __init__.pyi and
py.typed for editors), which `make install` puts where the system python3 imports it and
`pip install .` puts in an environment with its own copy of libslab.

A damaged or crafted file raises SlabError, never another exception: the reader makes the
numbered checks of slab(5), WHAT A READER CHECKS, and read_plan those of slab-plan(5).

Loader needs libslab.so (below); everything else works without it.

libslab: when it finds libslab.so, the module makes the checks, lookups and the verification
through it (ctypes), else in Python; results are the same either way. It looks, in order:
  1. $SLAB_LIBRARY: a path to libslab.so; empty or "none" means pure Python;
  2. the package's own copy, beside this file: libslab.so.0 (what `pip install .` puts there);
  3. the build tree this file is part of, from its real path: <scripts>/../build/libslab.so,
     where <scripts>/.. is a source tree (its lib/slab.h is there): a copy of this file in
     some folder, or a package in site-packages, never loads a stray ../build/libslab.so;
  4. installed: in the LIBDIR `make install` recorded (slab/_paths.py), then
     ctypes.util.find_library("slab"), then libslab.so.0.
The first that loads, has major version 0 (LIBSLAB_MAJOR) and is not a sanitizer build is used;
slab.backend says which ("libslab 0.1.0 (/path)" or "python") and slab.backend_reason why.

The file is mapped once, by Python; libslab reads that mapping (slab_open_mem) through a
buffer export held until close(), or until the SlabFile is let go (then libslab's reader is
closed and the mapping unmapped, as without libslab), so the mapping cannot go away under it,
and fields are memoryviews of Python's mapping, which refuses to close while one is alive. When libslab
finds damage, the same access is made again in Python so that the message is the one the
pure reader gives (a verification is redone in Python only from the last point libslab
reported checked). A file libslab refuses to open is refused: the pure reader opens it again,
the table checksum included whatever check_table says, for its message (libslab's when the
pure reader finds nothing), never to read the records of a table libslab found damaged.
"""
import array
import collections
import ctypes
import ctypes.util
import mmap
import operator
import os
import signal
import stat
import struct
import sys
import threading
import weakref

MAGIC = b"\x89SLAB\r\n\x1a"
TABLE_MAGIC = b"SLABTABL"
TRAILER_MAGIC = b"SLABTAIL"
PLAN_MAGIC = b"SLABPLAN"
PLAN_HEADER_FIXED = 128
PLAN_ID_SIZE = 32
PLAN_ENTRY_SIZE = 8
PLAN_PAD = 0x1
PLAN_MEMORY = 0x2
PLAN_SUBSET = 0x4
HEADER_SIZE = 4096
OPTIONS_OFFSET = 64
TRAILER_SIZE = 64
TABLE_HEADER_SIZE = 128
SAMPLE_RECORD = 32
FIELD_RECORD = 32
ALIGN = 4096
MIN_PAGE_SIZE = 4096
MAX_PAGE_SIZE = 1 << 30
FIELD_PRESENT = 0x01
FIELD_JPEG = 0x02
FIELD_TRANSCODED = 0x04
FIELD_PNG = 0x08
FIELD_WEBP = 0x10
FIELD_RESTART = 0x20    # a JPEG given restart markers by pack --jpeg-restart (format 1.2)
FIELD_VIDEO = 0x40      # a video: its frames, duration, rate and codec in a video record (1.3)
VIDEO_RECORD = 32

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


# ---- libslab through ctypes ------------------------------------------------------------------

__version__ = "0.1.0"           # slab's version: slab.h's SLAB_VERSION_* (tests/pypkg.bats)
LIBSLAB_MAJOR = 0               # the slab.h major version this module is written against
_LOADER_WAITING = 2             # slab.h's SLAB_LOADER_WAITING: slab_loader_next_timed()'s
                                # "nothing yet"
_WAIT_MS = 100                  # how long one such wait is: a Ctrl-C's delay at most
SLAB_ERR_IO = -1                # from a reader's accessors: the file could not be read (a
                                # fault: truncated while in use), not to be read again in Python
SLAB_ERR_NOTFOUND = -5


class _CSample(ctypes.Structure):
    _fields_ = [("key", ctypes.c_void_p), ("key_len", ctypes.c_size_t), ("offset", ctypes.c_uint64),
                ("size", ctypes.c_uint64), ("page", ctypes.c_uint64)]


class _CField(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("offset", ctypes.c_uint64), ("size", ctypes.c_uint64),
                ("crc", ctypes.c_uint32), ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("flags", ctypes.c_uint), ("subsamp", ctypes.c_uint), ("colorspace", ctypes.c_uint),
                ("order", ctypes.c_uint)]


_LOG = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class _CRemoteOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("cache_dir", ctypes.c_char_p),
                ("s3_endpoint", ctypes.c_char_p), ("profile", ctypes.c_char_p),
                ("region", ctypes.c_char_p), ("addressing", ctypes.c_int),
                ("anonymous", ctypes.c_int), ("connections", ctypes.c_uint),
                ("retries", ctypes.c_int), ("timeout", ctypes.c_double),
                ("log", _LOG), ("log_arg", ctypes.c_void_p)]


_REMOTE_KEYS = ("cache_dir", "endpoint", "profile", "region", "addressing", "anonymous",
                "connections", "retries", "timeout")
_ADDRESSING = {None: 0, "auto": 0, "path": 1, "virtual": 2}


def is_url(path):
    """Is path a URL slab reads through libslab and a local cache (http://, https://,
    s3://, the scheme in any case, as slab_is_url() has it), rather than a file?"""
    if isinstance(path, (bytes, bytearray)):
        path = bytes(path).decode("utf-8", "surrogateescape")
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://", "s3://"))


def _c_string(name, v, b):
    """b, argument v's bytes bound for libslab as a C string: ValueError naming the argument
    when it holds a NUL byte, where C would read a shorter name (another file's, another
    field's)."""
    if b"\0" in b:
        raise ValueError("%s must not hold a NUL byte, not %r" % (name, v))
    return b


def _flag(name, v):
    """A yes-or-no option as a bool: TypeError naming it for a str or bytes, which bool()
    takes as yes whatever it says (drop_last="false", chw="no")."""
    if isinstance(v, (str, bytes, bytearray)):
        raise TypeError("%s must be True or False, not %r" % (name, v))
    return bool(v)


def _known(v, table):
    """Is v one of table's keys (an option's words)? False, not a TypeError that names no
    option, for a value that cannot be one: a list or a dict is unhashable."""
    try:
        return v in table
    except TypeError:
        return False


def _url_shown(url):
    """A URL as a message names it when libslab, which masks it finely, is not loaded: its
    user information and its whole query (an http(s) URL's; an s3:// key may hold a '?')
    shown as '***'. Over-masks rather than shows a password or a signature."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    query = -1 if scheme.lower() == "s3" else rest.find("?")
    head = rest if query < 0 else rest[:query]
    at = head.rfind("@")
    if at >= 0:
        rest, query = rest[at + 1:], query - at - 1 if query >= 0 else -1
        scheme += "://***@"
    else:
        scheme += "://"
    if query >= 0:
        frag = rest.find("#", query)
        rest = rest[:query] + "?***" + (rest[frag:] if frag >= 0 else "")
    return scheme + rest


def _remote_options(remote):
    """The C options for URLs from keyword arguments (see Dataset): a _CRemoteOptions and
    the bytes objects it points to (keep both alive), or raise ValueError/TypeError."""
    unknown = set(remote) - set(_REMOTE_KEYS)
    if unknown:
        raise TypeError("unknown option %s" % ", ".join(sorted(unknown)))
    o = _CRemoteOptions()
    o.size = ctypes.sizeof(_CRemoteOptions)
    keep = []

    def text(name, v):
        if v is None:
            return None
        if not isinstance(v, (str, bytes, os.PathLike)) or not v:
            raise ValueError("%s must be a non-empty string, not %r" % (name, v))
        b = _c_string(name, v, os.fsencode(v))
        keep.append(b)
        return b
    o.cache_dir = text("cache_dir", remote.get("cache_dir"))
    o.s3_endpoint = text("endpoint", remote.get("endpoint"))
    if o.s3_endpoint and not o.s3_endpoint[:8].lower().startswith((b"http://", b"https://")):
        raise ValueError("endpoint must be an http:// or https:// URL, not %r"
                         % (remote.get("endpoint"),))
    o.profile = text("profile", remote.get("profile"))
    o.region = text("region", remote.get("region"))
    if not _known(remote.get("addressing"), _ADDRESSING):
        raise ValueError("addressing must be 'path', 'virtual' or 'auto', not %r"
                         % (remote.get("addressing"),))
    o.addressing = _ADDRESSING[remote.get("addressing")]
    o.anonymous = 1 if _flag("anonymous", remote.get("anonymous")) else 0
    if remote.get("connections") is not None:
        o.connections = _int("connections", remote["connections"], 1, 256)
    if remote.get("retries") is not None:
        r = _int("retries", remote["retries"], 0, 100)
        o.retries = r if r else -1
    if remote.get("timeout") is not None:
        t = remote["timeout"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 604800:
            raise ValueError("timeout must be a number of seconds above 0 and at most 604800 "
                             "(a week), not %r" % (t,))
        o.timeout = float(t)
    return o, keep


class _PyBuffer(ctypes.Structure):
    """CPython's Py_buffer: the address of a read-only mmap, which ctypes' from_buffer refuses."""
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p)
_SANITIZERS = (b"__asan_init", b"__tsan_init", b"__msan_init")


def _sanitizer_refusal(path):
    """Why a library built with a sanitizer cannot be loaded here, or None: the ASan runtime
    must come first in the process, and aborts it when loaded later."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None             # ctypes will say what is wrong
    found = [n.decode() for n in _SANITIZERS if n in data]
    if not found:
        return None
    try:
        with open("/proc/self/maps") as fh:
            maps = fh.read()
    except OSError:
        maps = ""
    if any(r in maps for r in ("libasan", "libtsan", "libmsan")):
        return None
    return "built with a sanitizer (%s) whose runtime this process lacks" % found[0]


def _load(path):
    """(ctypes library, description) or raise OSError with the reason."""
    why = _sanitizer_refusal(path)
    if why:
        raise OSError(why)
    lib = ctypes.CDLL(path)
    try:
        lib.slab_version.restype = ctypes.c_uint
        lib.slab_version_string.restype = ctypes.c_char_p
        version = lib.slab_version()
        if version // 10000 != LIBSLAB_MAJOR:
            raise OSError("version %s, this module reads major version %d"
                          % (lib.slab_version_string().decode(), LIBSLAB_MAJOR))
        u64, vp = ctypes.c_uint64, ctypes.c_void_p
        for name, res, args in (
                ("slab_new", vp, []),
                ("slab_open_mem", ctypes.c_int, [vp, vp, ctypes.c_size_t, ctypes.c_char_p]),
                ("slab_close", None, [vp]),
                ("slab_error", ctypes.c_char_p, [vp]),
                ("slab_count", u64, [vp]),
                ("slab_field_count", ctypes.c_uint, [vp]),
                ("slab_sample", ctypes.c_int, [vp, u64, ctypes.POINTER(_CSample)]),
                ("slab_get", ctypes.c_int, [vp, u64, ctypes.c_uint, ctypes.POINTER(_CField)]),
                ("slab_find", ctypes.c_int, [vp, ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.POINTER(u64)]),
                ("slab_verify", ctypes.c_int, [vp, _PROGRESS, vp]),
                ("slab_open_ex", ctypes.c_int, [vp, ctypes.c_char_p, vp]),
                ("slab_local_path", ctypes.c_char_p, [vp]),
                ("slab_path", ctypes.c_char_p, [vp]),
                ("slab_base", vp, [vp]),
                ("slab_file_size", u64, [vp])):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        buffers = (ctypes.pythonapi.PyObject_GetBuffer, ctypes.pythonapi.PyBuffer_Release)
    except AttributeError as e:
        raise OSError("not usable here: %s" % e)
    buffers[0].argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    buffers[0].restype = ctypes.c_int
    buffers[1].argtypes = [ctypes.POINTER(_PyBuffer)]
    buffers[1].restype = None
    return lib, "libslab %s (%s)" % (lib.slab_version_string().decode(), path)


def _installed_libdir():
    """The LIBDIR make install put libslab in, as it recorded it beside the package
    (slab/_paths.py), or None: a copied slab.py, a clone or a pip install has none."""
    if not __package__:
        return None
    try:
        from ._paths import LIBDIR
    except ImportError:
        return None
    return LIBDIR


def _find_library():
    """(library or None, backend, reason) in the order the module docstring gives."""
    env = os.environ.get("SLAB_LIBRARY")
    if env is not None:
        if env in ("", "none"):
            return None, "python", "SLAB_LIBRARY=%s" % env
        candidates = [("SLAB_LIBRARY", env)]
    else:
        soname = "libslab.so.%d" % LIBSLAB_MAJOR
        # The package's own copy is beside this file's path as imported; the build tree is
        # found from its real path (in a clone, python/slab/__init__.py links to this file).
        own = os.path.join(os.path.dirname(os.path.abspath(__file__)), soname)
        here = os.path.dirname(os.path.realpath(__file__))
        root = os.path.dirname(here)
        build = None
        if (os.path.basename(here) == "scripts" and
                os.path.exists(os.path.join(root, "lib", "slab.h"))):
            build = os.path.join(root, "build", "libslab.so")
        libdir = _installed_libdir()
        recorded = os.path.join(libdir, soname) if libdir else None
        candidates = [(where, path) for where, path in (
            ("package", own), ("build tree", build), ("installed", recorded))
            if path and os.path.exists(path)]
        # find_library runs ldconfig: asked only when all the above fail
        candidates += [("installed", lambda: ctypes.util.find_library("slab") or soname)]
    reasons = []
    for where, path in candidates:
        if callable(path):
            path = path()
        try:
            lib, what = _load(path)
            return lib, what, "%s: %s" % (where, path)
        except OSError as e:
            reasons.append("%s: %s: %s" % (where, path, e))
    return None, "python", "; ".join(reasons)


_lib, backend, backend_reason = _find_library()


VideoInfo = collections.namedtuple("VideoInfo", "width height frames duration fps_num fps_den codec")
VideoInfo.__doc__ = """What pack recorded of a video field (format 1.3): frame width and height
(0 x 0 when a side is over 65535), frames in the stream, duration in seconds (to the
microsecond), the frame rate fps_num / fps_den (0/0 unknown), and FFmpeg's codec name ("h264",
"vp9", ...; its first 8 bytes)."""


class Field:
    """One field of one sample: .data is a memoryview into the file's mapping; .video a
    VideoInfo for a video field, else None."""

    __slots__ = ("name", "data", "offset", "crc", "width", "height", "flags", "order", "video")

    def __init__(self, name, data, offset, crc, width, height, flags, order, video=None):
        self.name, self.data, self.offset, self.crc = name, data, offset, crc
        self.width, self.height, self.flags, self.order = width, height, flags, order
        self.video = video

    @property
    def is_jpeg(self):
        return bool(self.flags & FIELD_JPEG)

    @property
    def format(self):
        """The image format pack found in the bytes: "jpeg", "png", "webp", "video" (see
        .video), or None (not an image, or packed without its header read). width x height
        are its size then; 0 x 0 when a side is over 65535 pixels."""
        for flag, name in ((FIELD_JPEG, "jpeg"), (FIELD_PNG, "png"), (FIELD_WEBP, "webp"),
                           (FIELD_VIDEO, "video")):
            if self.flags & flag:
                return name
        return None


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


def _inside(off, length, lo, hi):
    """Is [off, off + length) inside [lo, hi)? Written as the C reader writes it, so that
    the same test would not overflow in a language whose integers do."""
    return lo <= off <= hi and length <= hi - off


def _plural(n, one, many):
    """The noun for a count: one for 1, else many ("1 entry", "2 entries")."""
    return one if n == 1 else many


def _show(key):
    """A key for a message: at most 200 bytes, undecodable bytes escaped."""
    return key[:200].decode("utf-8", "backslashreplace")


def _c_release(h, buf):
    """Close a SlabFile's libslab reader and let go of the buffer export it reads (the
    mapping's, which cannot be unmapped while it is held)."""
    _lib.slab_close(h)
    if buf is not None:
        ctypes.pythonapi.PyBuffer_Release(ctypes.byref(buf))


def _c_finalizer(f, h, buf):
    """What closes f's libslab reader: close(), or f's collection when it is let go without
    one, which would otherwise keep the reader and the file's mapping for the life of the
    process. Not at exit: a thread still reading through f then would meet a freed reader."""
    fin = weakref.finalize(f, _c_release, h, buf)
    fin.atexit = False
    return fin


# The SlabFiles of this process: a fork() child gives each a new lock (see _after_fork).
_slab_files = weakref.WeakSet()


def _after_fork():
    """In a fork() child, before anything else runs: a SlabFile's lock that a thread of the
    parent held as fork() ran (inside a call: verify(), sample()...) is held in the child
    too, by a thread the child does not have, and the child's first call would wait for it
    for ever. The child is one thread: it takes each file over with a lock of its own."""
    for f in list(_slab_files):
        f._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class SlabFile:
    """One .slab file, mapped read-only. Checks header, trailer and layout on open; a table
    checksum check is optional (check_table=True) because pure-Python CRC-32C is slow.
    Through libslab it is always made: a file libslab refuses raises SlabError on open.

    The checks are those of slab(5), WHAT A READER CHECKS, in its order; the comment at each
    gives its number there. A damaged or crafted file raises SlabError: on open, on the
    access that meets the damage (sample, key, find), or in verify().

    A file truncated while it is open: with libslab, sample(), key(), find() and verify()
    raise SlabError naming it ("... the file is N bytes now, M when it was opened (truncated
    while in use)"). The fields' data are views of the mapping, read by whoever reads them:
    bytes a truncation cut off end the process with SIGBUS there, as any mmap does (and any
    read of the pure Python reader, without libslab). slab.Loader guards its reads.

    fork(): a child process may go on using the SlabFiles (and Datasets) its parent opened,
    even one that another thread of the parent was inside a call of as fork() ran."""

    def __init__(self, path, check_table=False, **remote):
        self.path = path
        self._shown = path              # what messages name (a URL: its credential masked)
        self._map = self._mv = None
        self._c = self._cbuf = None
        self._cbase = 0
        self._crc = 0                   # libslab's last error code
        self._c_refused = None          # libslab's SlabError when it refused to open the file
        self._ident = None              # (st_dev, st_ino) of a local file, as opened
        self._lock = threading.Lock()
        _slab_files.add(self)
        local = path
        if is_url(path):
            local = self._url_open(path, remote)
        elif remote:
            unknown = set(remote) - set(_REMOTE_KEYS)
            if unknown:
                raise TypeError("unknown option %s" % ", ".join(sorted(unknown)))
        fd = os.open(local, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise self._error("not a regular file (a .slab is read through mmap)")
            size = st.st_size
            if self._c is None:
                self._ident = (st.st_dev, st.st_ino)
            # 1: at least 8 bytes (the magic is checked below, once mapped)
            if size < 8:
                raise self._error("not a slab file (%d %s)", size, _plural(size, "byte", "bytes"))
            try:
                self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as e:
                raise self._error("mmap: %s", e)
        finally:
            os.close(fd)
        try:
            self._mv = memoryview(self._map)
            if self._c is not None:
                # a URL: libslab opened it (checks 1 to 25) and fetches each sample's bytes
                # into the local cache before they are read through this mapping of it
                self._open(len(self._map), False, trusted=True)
                self._table_checked = True
            elif _lib is not None and self._c_open():
                # libslab made checks 1 to 25, the table checksum among them
                self._open(len(self._map), False, trusted=True)
                self._table_checked = True
            else:
                # a file libslab refused: the pure code meets the damage again, for its
                # message, the table checksum included (libslab's refusal may be that one),
                # and never opens what libslab found damaged
                refused = self._c_refused
                self._open(len(self._map), check_table or refused is not None)
                if refused is not None:
                    raise refused
        except BaseException:
            try:
                self.close()
            except BufferError:
                pass
            raise

    def _error(self, fmt, *args):
        return SlabError("%s: %s" % (self._shown, fmt % args if args else fmt))

    def _url_open(self, url, remote):
        """Open a URL in libslab, whose local cache file this object then maps; its path."""
        if _lib is None:
            raise SlabError("%s: a URL is read through libslab.so, which was not loaded (%s)"
                            % (_url_shown(url), backend_reason))
        opts, self._keep = _remote_options(remote)
        h = _lib.slab_new()
        if not h:
            raise MemoryError("out of memory")
        self._cname = os.fsencode(url)
        if _lib.slab_open_ex(h, self._cname, ctypes.byref(opts)) < 0:
            msg = _lib.slab_error(h).decode("utf-8", "backslashreplace")
            _lib.slab_close(h)
            raise SlabError(msg)
        self._c, self._cbase = h, _lib.slab_base(h)
        self._c_free = _c_finalizer(self, h, None)
        self._csmp, self._cfld, self._cidx = _CSample(), _CField(), ctypes.c_uint64()
        # libslab names a URL with its credentials masked: so do this object's messages
        self._cname = _lib.slab_path(h)
        self._shown = os.fsdecode(self._cname)
        return os.fsdecode(_lib.slab_local_path(h))

    def _c_open(self):
        """Open the mapping in libslab: True, or False (with nothing held) when libslab
        refuses it, so that the pure reader opens it and gives its own message."""
        buf = _PyBuffer()
        if ctypes.pythonapi.PyObject_GetBuffer(self._map, ctypes.byref(buf), 0) != 0:
            return False
        h = _lib.slab_new()
        if not h:
            ctypes.pythonapi.PyBuffer_Release(ctypes.byref(buf))
            return False
        name = self._cname = os.fsencode(self.path)
        if _lib.slab_open_mem(h, buf.buf, buf.len, name) < 0:
            msg = _lib.slab_error(h)
            head = b"'" + name + b"': "
            if msg.startswith(head):
                msg = msg[len(head):]
            self._c_refused = self._error("%s", msg.decode("utf-8", "backslashreplace"))
            _lib.slab_close(h)
            ctypes.pythonapi.PyBuffer_Release(ctypes.byref(buf))
            return False
        self._c, self._cbuf, self._cbase = h, buf, buf.buf
        self._c_free = _c_finalizer(self, h, buf)
        self._csmp, self._cfld, self._cidx = _CSample(), _CField(), ctypes.c_uint64()
        return True

    def _c_error(self):
        """libslab's last message as a SlabError, its "'name': " put as this module puts it."""
        msg = _lib.slab_error(self._c)
        head = b"'" + self._cname + b"': "
        if msg.startswith(head):
            msg = msg[len(head):]
        return self._error("%s", msg.decode("utf-8", "backslashreplace"))

    def _open(self, size, check_table, trusted=False):
        m = self._mv
        # 1: the magic
        if bytes(m[:8]) != MAGIC:
            raise self._error("not a slab file (bad magic number)")
        # 2
        if size < HEADER_SIZE + TRAILER_SIZE:
            raise self._error("truncated: %d bytes, shorter than header and trailer", size)
        major, minor, hsize, self.page_size, self.data_offset = struct.unpack_from("<HHIQQ", m, 8)
        # 3: before the header CRC, as another major version may lay the header out otherwise
        if major != 1:
            raise self._error("format version %d.%d is not supported (this reader reads 1.x)",
                              major, minor)
        self.version = (major, minor)
        # 4
        self.header_crc = struct.unpack_from("<I", m, 36)[0]
        header = bytearray(m[:HEADER_SIZE])
        header[36:40] = b"\0\0\0\0"
        if not trusted and crc32c(header) != self.header_crc:
            raise self._error("header checksum mismatch")
        # 5
        if hsize != HEADER_SIZE:
            raise self._error("header size %d is not %d", hsize, HEADER_SIZE)
        # 6
        ps = self.page_size
        if not (MIN_PAGE_SIZE <= ps <= MAX_PAGE_SIZE and ps & (ps - 1) == 0):
            raise self._error("bad page size %d in header", ps)
        # 7
        d = self.data_offset
        if d < HEADER_SIZE or d % ALIGN or d > size - TRAILER_SIZE:
            raise self._error("bad data offset %d in header", d)
        # 8
        opts = bytes(header[OPTIONS_OFFSET:])
        if b"\0" not in opts:
            raise self._error("options text in the header has no end (no NUL byte in bytes %d to %d)",
                              OPTIONS_OFFSET, HEADER_SIZE - 1)
        opts = opts[:opts.index(b"\0")].decode("utf-8", "replace")
        self.options = dict(line.split("=", 1) for line in opts.split("\n") if "=" in line)

        t = size - TRAILER_SIZE
        # 9
        if bytes(m[t:t + 8]) != TRAILER_MAGIC:
            raise self._error("truncated or damaged: no trailer")
        # 10
        if crc32c(m[t:t + 60]) != struct.unpack_from("<I", m, t + 60)[0]:
            raise self._error("trailer checksum mismatch at offset %d", t)
        (self.table_offset, self.table_size, file_size, count,
         self.table_crc, hcrc) = struct.unpack_from("<QQQQII", m, t + 8)
        # 11
        if file_size != size:
            raise self._error("file is %d bytes but its trailer says %d (truncated or appended to)",
                              size, file_size)
        # 12
        if hcrc != self.header_crc:
            raise self._error("trailer does not belong to this header")
        # 13
        tb, tsize = self.table_offset, self.table_size
        if (tb % ALIGN or tb < d or not _inside(tb, tsize, 0, t) or tb + tsize != t
                or tsize < TABLE_HEADER_SIZE):
            raise self._error("table offset %d and size %d do not fit the file", tb, tsize)
        # 14: optional, as it reads the whole table; verify() makes it when open did not
        self._table_checked = False
        if check_table:
            self._check_table_crc()
        # 15
        if bytes(m[tb:tb + 8]) != TABLE_MAGIC:
            raise self._error("bad table magic at offset %d", tb)
        (n, self.page_count, nf, _r, schema_off, schema_size, samples_off, fields_off,
         keys_off, keys_size, index_off, buckets) = struct.unpack_from("<QQIIQQQQQQQQ", m, tb + 8)
        # 16
        if n != count:
            raise self._error("trailer and table disagree on the sample count (%d and %d)", count, n)
        # 17
        if not _inside(schema_off, schema_size, 0, tsize):
            raise self._error("schema outside the table")
        # 18: n is bounded first, so that n * 32 stays small
        if n > tsize // SAMPLE_RECORD or not _inside(samples_off, n * SAMPLE_RECORD, 0, tsize):
            raise self._error("sample records outside the table (%d %s)", n,
                              _plural(n, "sample", "samples"))
        # 19
        if (nf and n > tsize // FIELD_RECORD // nf
                or not _inside(fields_off, n * nf * FIELD_RECORD, 0, tsize)):
            raise self._error("field records outside the table (%d %s, %d %s)", n,
                              _plural(n, "sample", "samples"), nf, _plural(nf, "field", "fields"))
        # 20
        if not _inside(keys_off, keys_size, 0, tsize):
            raise self._error("keys outside the table")
        # 21
        if buckets < 2 or buckets & (buckets - 1) or buckets // 2 < n:
            raise self._error("key index of %d slots for %d samples (a power of two, at least 2 "
                              "and at least twice the samples)", buckets, n)
        if buckets > tsize // 8 or not _inside(index_off, buckets * 8, 0, tsize):
            raise self._error("key index outside the table")
        # 42: the video records (1.3; none before)
        videos_off, nvideos = struct.unpack_from("<QQ", m, tb + 96)
        if nvideos > tsize // VIDEO_RECORD or not _inside(videos_off, nvideos * VIDEO_RECORD, 0, tsize):
            raise self._error("video records outside the table (%d %s)", nvideos,
                              _plural(nvideos, "record", "records"))
        self._videos, self._nvideos = tb + videos_off, nvideos
        # 22
        if self.page_count > (size - d) // ps + 1:
            raise self._error("page count %d does not fit the file", self.page_count)
        # 23: F names, each a u16 length and the bytes, inside the schema
        if nf > schema_size // 2:
            raise self._error("schema too short for %d %s", nf, _plural(nf, "field", "fields"))
        self.names = []
        p, left, prev = tb + schema_off, schema_size, None
        for f in range(nf):
            if left < 2:
                raise self._error("schema truncated at field %d", f)
            (length,) = struct.unpack_from("<H", m, p)
            if left - 2 < length:
                raise self._error("schema truncated at field %d", f)
            name = bytes(m[p + 2:p + 2 + length])
            # 24
            if not name:
                raise self._error("schema field %d has an empty name", f)
            if b"\0" in name:
                raise self._error("schema field %d: the name has a NUL byte", f)
            if b"/" in name:
                raise self._error("schema field %d: the name %s has a '/'", f, _show(name))
            # 25: bytes compare as memcmp with shorter-is-smaller, as slab(5) sorts them
            if prev is not None and prev >= name:
                raise self._error("schema field %d is out of order or repeated", f)
            prev = name
            self.names.append(name.decode("utf-8", "surrogateescape"))
            p += 2 + length
            left -= 2 + length
        self.count = n
        self._samples = tb + samples_off
        self._fields = tb + fields_off
        self._keys = tb + keys_off
        self._keys_size = keys_size
        self._index = tb + index_off
        self._buckets = buckets
        self._size = size

    def _check_table_crc(self):
        # 14
        tb = self.table_offset
        if crc32c(self._mv[tb:tb + self.table_size]) != self.table_crc:
            raise self._error("table checksum mismatch (table at offset %d)", tb)
        self._table_checked = True

    def __len__(self):
        return self.count

    def close(self):
        with self._lock:
            if self._c is not None:
                self._c = self._cbuf = None
                self._c_free()
        if self._mv is not None:
            self._mv.release()
        if self._map is not None:
            self._map.close()

    def _record(self, i):
        """Sample i's record, checked (26, 27): (offset, size, key bytes, page)."""
        m = self._mv
        offset, size, koff, klen, page = struct.unpack_from("<QQQII", m, self._samples + i * SAMPLE_RECORD)
        # 26
        if not _inside(koff, klen, 0, self._keys_size):
            raise self._error("sample %d: key at %d, %d bytes, outside the key area (%d bytes)",
                              i, koff, klen, self._keys_size)
        key = bytes(m[self._keys + koff:self._keys + koff + klen])
        # 27
        if not _inside(offset, size, self.data_offset, self.table_offset):
            raise self._error("sample %d '%s': bytes at offset %d, size %d outside the data area",
                              i, _show(key), offset, size)
        return offset, size, key, page

    def _video(self, i, f, rec):
        """The VideoInfo of field f of sample i, whose record rec is (w, h, flags, vindex),
        checked (43); None for a field that is not a video."""
        w, h, flags, k = rec
        if not flags & FIELD_VIDEO:
            return None
        # 43
        if k >= self._nvideos:
            raise self._error("sample %d field %s: video record %d, past the %d %s",
                              i, self.names[f], k, self._nvideos,
                              _plural(self._nvideos, "record", "records"))
        us, frames, num, den, codec = struct.unpack_from("<QQII8s", self._mv,
                                                         self._videos + k * VIDEO_RECORD)
        return VideoInfo(w, h, frames, us / 1e6, num, den,
                         codec.rstrip(b"\0").decode("utf-8", "backslashreplace"))

    def video(self, i, name):
        """Sample i's field name as a VideoInfo (format 1.3), or None when the sample lacks
        it or it is not a video."""
        self._check_index(i)
        f = self.names.index(name) if name in self.names else None
        if f is None:
            return None
        r = self._field(i, f)
        return None if r is None else self._video(i, f, (r[3], r[4], r[5], r[7]))

    def _field(self, i, f):
        """Field f of sample i: None when absent, else the record's values, checked (28),
        and the video record's index (bytes 28 to 31)."""
        foff, fsize, crc, w, h, flags, _ss, _cs, order, vindex = struct.unpack_from(
            "<QQIHHBBBBI", self._mv, self._fields + (i * len(self.names) + f) * FIELD_RECORD)
        if not flags & FIELD_PRESENT:
            return None
        # 28
        if not _inside(foff, fsize, self.data_offset, self.table_offset):
            raise self._error("sample %d field %s: offset %d, size %d outside the data area",
                              i, self.names[f], foff, fsize)
        return foff, fsize, crc, w, h, flags, order, vindex

    def _check_index(self, i):
        if not 0 <= i < self.count:
            raise IndexError(i)

    def __getitem__(self, i):
        """f[i]: sample i, counting from the end when negative."""
        i = operator.index(i)
        if i < 0:
            i += self.count
        return self.sample(i)

    # With libslab, an access that meets damage is made again by the pure code, which raises
    # its own message; only when it finds nothing is libslab's raised.

    def _handle(self):
        """The libslab handle, or None on the pure path (and once closed: the pure code then
        meets the released mapping). Call with self._lock held."""
        return self._c

    def _c_record(self, i):
        """Sample i through libslab: (offset, size, key bytes, page), or None when libslab
        finds damage (the caller then asks the pure code, for its message)."""
        smp = self._csmp
        self._crc = _lib.slab_sample(self._c, i, smp)
        if self._crc < 0:
            return None
        ko = smp.key - self._cbase
        return smp.offset, smp.size, bytes(self._mv[ko:ko + smp.key_len]), smp.page

    def key(self, i):
        self._check_index(i)
        with self._lock:
            if self._handle() is not None:
                r = self._c_record(i)
                if r is not None:
                    return r[2].decode("utf-8", "surrogateescape")
                err = self._c_error()
            else:
                err = None
        if err is not None:
            if self._crc != SLAB_ERR_IO:
                self._record(i)
            raise err
        return self._record(i)[2].decode("utf-8", "surrogateescape")

    def sample(self, i):
        self._check_index(i)
        with self._lock:
            if self._handle() is not None:
                s = self._c_sample(i)
                if s is not None:
                    return s
                err = self._c_error()
            else:
                err = None
        if err is not None:
            if self._crc != SLAB_ERR_IO:
                self._py_sample(i)
            raise err
        return self._py_sample(i)

    def _c_sample(self, i):
        r = self._c_record(i)
        if r is None:
            return None
        offset, size, key, page = r
        m, fld, h, get = self._mv, self._cfld, self._c, _lib.slab_get
        fields = []
        for f, name in enumerate(self.names):
            got = get(h, i, f, fld)
            if got < 0:
                self._crc = got
                return None
            if got:
                o = fld.offset
                video = None
                if fld.flags & FIELD_VIDEO:
                    (k,) = struct.unpack_from("<I", m, self._fields + (i * len(self.names) + f) * FIELD_RECORD + 28)
                    if k >= self._nvideos:
                        return None
                    video = self._video(i, f, (fld.width, fld.height, fld.flags, k))
                fields.append(Field(name, m[o:o + fld.size], o, fld.crc, fld.width, fld.height,
                                    fld.flags, fld.order, video))
        fields.sort(key=lambda x: x.order)
        return Sample(key.decode("utf-8", "surrogateescape"), None, i, offset, size, page, fields)

    def _py_sample(self, i):
        m = self._mv
        offset, size, key, page = self._record(i)
        fields = []
        for f in range(len(self.names)):
            r = self._field(i, f)
            if r is None:
                continue
            foff, fsize, crc, w, h, flags, order, vindex = r
            fields.append(Field(self.names[f], m[foff:foff + fsize], foff, crc, w, h, flags, order,
                                self._video(i, f, (w, h, flags, vindex))))
        fields.sort(key=lambda x: x.order)
        return Sample(key.decode("utf-8", "surrogateescape"), None, i, offset, size, page, fields)

    def _find(self, kb):
        mask = self._buckets - 1
        h = fnv1a64(kb) & mask
        # 30: at most every slot once, so a damaged index with no empty slot cannot loop
        for _ in range(self._buckets):
            (v,) = struct.unpack_from("<Q", self._mv, self._index + h * 8)
            if v == 0:
                return None
            # 29
            if v > self.count:
                raise self._error("key index slot %d holds %d, past the %d %s", h, v, self.count,
                                  _plural(self.count, "sample", "samples"))
            if self._record(v - 1)[2] == kb:
                return v - 1
            h = (h + 1) & mask
        return None

    def find(self, key):
        """The index of the sample with this key, through the file's hash index, or None."""
        kb = key.encode("utf-8", "surrogateescape")
        with self._lock:
            if self._handle() is not None:
                r = _lib.slab_find(self._c, kb, len(kb), self._cidx)
                if r == 0:
                    return self._cidx.value
                if r == SLAB_ERR_NOTFOUND:
                    return None
                err = self._c_error()
                if r == SLAB_ERR_IO:
                    raise err
            else:
                err = None
        found = self._find(kb)
        if err is not None:
            raise err
        return found

    def _check_zero(self, start, end, i):
        # 34: padding is zero
        chunk = 1 << 20
        for a in range(start, end, chunk):
            b = bytes(self._mv[a:min(a + chunk, end)])
            if b.count(0) != len(b):
                o = a + len(b) - len(b.lstrip(b"\0"))
                raise self._error("non-zero padding byte at offset %d (before sample %d)", o, i)

    def verify(self):
        """Check the whole file, as inspect --verify does (slab(5), checks 31 to 41, and the
        table CRC if open did not check it), in time linear in its size whatever its keys are;
        raise SlabError at the first problem."""
        with self._lock:
            if self._handle() is not None:
                done = [0]

                def progress(n, _total, _arg):
                    done[0] = n
                # the GIL is released during the call; the lock keeps close() waiting
                r = _lib.slab_verify(self._c, _PROGRESS(progress), None)
                if r == 0:
                    self._check_size()
                    return
                err = self._c_error()
                if r == SLAB_ERR_IO:
                    raise err
            else:
                err = None
        if err is None:
            self._py_verify()
            self._check_size()
            return
        # libslab checked the samples that end before data offset + done whole, each CRC
        # included: Python redoes the rest, every check but those CRCs, for its message
        self._py_verify(self.data_offset + done[0])
        raise err

    def _check_size(self):
        """A file cut inside its last OS page reads as zeros there, not as a fault: after a
        verify, its size says whether what was checked is still the file (a file renamed
        over it leaves the mapping whole)."""
        if self._ident is None:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            return
        if (st.st_dev, st.st_ino) == self._ident and st.st_size < self._size:
            raise self._error("the file is %d bytes now, %d when it was opened "
                              "(truncated while in use)", st.st_size, self._size)

    def _py_verify(self, checked_to=0):
        if not self._table_checked:
            self._check_table_crc()
        m = self._mv
        ps, d, nf = self.page_size, self.data_offset, len(self.names)
        pos = min_next = d
        next_video = 0
        pages_used = 0
        keys = []
        for i in range(self.count):
            offset, size, key, page = self._record(i)
            who = "sample %d '%s'" % (i, _show(key))
            # 31
            if offset < min_next:
                raise self._error("%s at offset %d overlaps the sample before it or its pages",
                                  who, offset)
            rel = offset - d
            # 32
            if page != rel // ps:
                raise self._error("%s: page %d recorded, offset %d is in page %d",
                                  who, page, offset, rel // ps)
            # 33
            if (rel % ps != 0) if size > ps else (rel % ps + size > ps):
                raise self._error("%s at offset %d, size %d breaks the page rule", who, offset, size)
            # 34
            self._check_zero(pos, offset, i)
            spans = []
            for f in range(nf):
                r = self._field(i, f)
                if r is None:
                    # 35: an absent field's record is zero
                    rec = self._fields + (i * nf + f) * FIELD_RECORD
                    if any(m[rec:rec + FIELD_RECORD]):
                        raise self._error("%s: record of absent field %s is not zero",
                                          who, self.names[f])
                    continue
                foff, fsize, crc, _w, _h, flags, order, vindex = r
                # 43
                self._video(i, f, (_w, _h, flags, vindex))
                # 44: bytes 28 to 31 of a field that is not a video are zero
                if not flags & FIELD_VIDEO and vindex:
                    raise self._error("%s field %s: reserved record bytes are not zero",
                                      who, self.names[f])
                # 46: at most one of the image flags, and none with VIDEO
                kind = flags & (FIELD_JPEG | FIELD_PNG | FIELD_WEBP | FIELD_VIDEO)
                if kind & (kind - 1):
                    raise self._error("%s field %s: flags 0x%02x: more than one of JPEG, PNG, "
                                      "WEBP and VIDEO", who, self.names[f], flags)
                # 35: the field's CRC (unless libslab checked it)
                if ((size == 0 or offset + size > checked_to)
                        and crc32c(m[foff:foff + fsize]) != crc):
                    raise self._error("sample %d field %s: checksum mismatch (bytes at offset %d, size %d)",
                                      i, self.names[f], foff, fsize)
                spans.append((foff, order, f, fsize, vindex if flags & FIELD_VIDEO else None))
            # 36: the fields tile the sample, in the order of their order bytes
            spans.sort()
            end = offset
            for k, (foff, order, f, fsize, vindex) in enumerate(spans):
                if order != k:
                    raise self._error("%s field %s: order byte %d, expected %d",
                                      who, self.names[f], order, k)
                if foff != end:
                    raise self._error("%s field %s at offset %d: fields do not tile the sample",
                                      who, self.names[f], foff)
                # 44: the video records, one per video field, in the fields' order
                if vindex is not None:
                    if vindex != next_video:
                        raise self._error("%s field %s: video record %d, expected %d",
                                          who, self.names[f], vindex, next_video)
                    next_video += 1
                end += fsize
            if end != offset + size:
                raise self._error("%s: fields sum to %d bytes, record says %d",
                                  who, end - offset, size)
            # 37: a key that is safe as a member name on export
            if key.startswith(b"/") or b"\0" in key or b".." in key.split(b"/"):
                raise self._error("sample %d: key '%s' is not a safe member name", i, _show(key))
            # and so is KEY.FIELD: a key "" or ending in '/' with a field '.' is KEY..
            if key.split(b"/")[-1] == b"" and any(self.names[sp[2]] == "." for sp in spans):
                raise self._error("sample %d: key '%s' with its field '.' is not a safe member "
                                  "name ('%s..' has a '..' component)", i, _show(key), _show(key))
            keys.append(key)
            pos = min_next = offset + size
            # a large sample takes its pages whole: nothing may follow it in its last page
            if size > ps:
                last = page + (size + ps - 1) // ps
                min_next = d + last * ps
            else:
                last = rel // ps + 1
            pages_used = max(pages_used, last)
        # 34: after the last sample
        self._check_zero(pos, self.table_offset, self.count)
        # 45
        if next_video != self._nvideos:
            raise self._error("table has %d video %s, the fields use %d", self._nvideos,
                              _plural(self._nvideos, "record", "records"), next_video)
        # 39
        if pages_used != self.page_count:
            raise self._error("table says %d %s, the samples use %d", self.page_count,
                              _plural(self.page_count, "page", "pages"), pages_used)
        self._verify_index(keys)

    def _verify_index(self, keys):
        """Checks 40, 41 and 38 of the key index, keys[i] being sample i's, in time linear in
        its size whatever the keys, as libslab makes them and in its order: a lookup per
        sample walks a whole cluster each time, quadratic on keys that share a home slot."""
        n, B = self.count, self._buckets
        mask = B - 1
        # u64 slots, 8 bytes each in memory as in the file
        slots = array.array("Q")
        slots.frombytes(self._mv[self._index:self._index + B * 8])
        if sys.byteorder == "big":
            slots.byteswap()
        seen = bytearray(n)
        found, empty = 0, None
        for h, v in enumerate(slots):
            if not v:
                if empty is None:
                    empty = h
                continue
            # 40
            if v > n:
                raise self._error("key index slot %d holds %d, past the %d %s", h, v, n,
                                  _plural(n, "sample", "samples"))
            seen[v - 1] = 1
            found += 1
        # 38: every sample is in a slot
        if n and seen.count(0):
            i = seen.index(0)
            raise self._error("sample %d '%s': key index does not lead to it", i, _show(keys[i]))
        # 41
        if found != n:
            raise self._error("key index has %d %s for %d %s", found,
                              _plural(found, "entry", "entries"), n, _plural(n, "sample", "samples"))
        # 38: keys are unique, or a lookup would find the first of two
        first = {}
        for i, key in enumerate(keys):
            j = first.setdefault(key, i)
            if j != i:
                raise self._error("sample %d '%s': same key as sample %d", i, _show(key), j)
        # 38: a lookup probes from the key's home slot to the first empty one, so the sample
        # in slot h is found when no empty slot lies between its home and h: one walk round
        # from the slot after an empty one (B >= 2N leaves one), a run of filled slots at a
        # time, t counting slots from there; a home must lie in the run before its slot
        if empty is None:
            raise self._error("key index has no empty slot")
        run = 0
        for t in range(B):
            v = slots[(empty + 1 + t) & mask]
            if not v:
                run = t + 1
                continue
            home = (fnv1a64(keys[v - 1]) - (empty + 1)) & mask
            if home < run or home > t:
                raise self._error("sample %d '%s': key index does not lead to it",
                                  v - 1, _show(keys[v - 1]))


class Dataset:
    """Several .slab files as one dataset: samples numbered across files in the order given."""

    def __init__(self, paths, check_table=False, **remote):
        """paths: files and URLs (http://, https://, s3://bucket/key: read through libslab and
        a local cache; see slab(5) REMOTE FILES). remote: how URLs are reached, each
        optional: cache_dir (default $SLAB_CACHE_DIR, else $XDG_CACHE_HOME/slab, else
        ~/.cache/slab), endpoint (S3; default $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL,
        else the profile's endpoint_url, else AWS), profile, region,
        addressing ("path", "virtual" or "auto"), anonymous (unsigned requests),
        connections, retries, timeout (seconds)."""
        # one name, as Loader takes it: bytes too, which a loop would take byte by byte
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        paths = _list("paths", paths, "paths")
        self.files = []
        try:
            for p in paths:
                self.files.append(SlabFile(p, check_table, **remote))
        except BaseException:
            for f in self.files:
                try:
                    f.close()
                except BufferError:
                    pass
            raise
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


def _plan_header_size(nfiles):
    """slab-plan(5): 128 + 32 x F rounded up to a multiple of 4096."""
    return (PLAN_HEADER_FIXED + nfiles * PLAN_ID_SIZE + ALIGN - 1) // ALIGN * ALIGN


def _read_upto(fh, n):
    """Up to n bytes of fh, fewer only at its end, read in pieces of at most 1 MiB: memory
    follows the bytes that come, not the n a header asks for."""
    out = bytearray()
    while len(out) < n:
        piece = fh.read(min(n - len(out), 1 << 20))
        if not piece:
            break
        out += piece
    return out


def read_plan(path, dataset=None):
    """Entries of a binary plan from shuffle-plan as a list of (file, sample). With a Dataset,
    refuse a plan made for other files. A damaged plan raises SlabError: the checks are
    those of slab-plan(5), WHAT A READER CHECKS, in its order. The header is read and checked
    first, then exactly the entries it declares: a file that is not a plan (a .slab given by
    mistake, /dev/zero) is refused after its first 128 bytes. A subset plan (shuffle-plan
    --subset, format 1.1) reads as any other: its entries are the subset's samples."""

    def bad(fmt, *args):
        return SlabError("%s: %s" % (path, fmt % args if args else fmt))

    with open(path, "rb") as fh:
        # a regular file's size refuses early what its header cannot hold
        st = os.fstat(fh.fileno())
        remaining = st.st_size - fh.tell() if stat.S_ISREG(st.st_mode) else None
        data = _read_upto(fh, PLAN_HEADER_FIXED)
        # the magic (not a plan file)
        if len(data) < 8 or data[:8] != PLAN_MAGIC:
            raise bad("not a plan file (bad magic number)")
        # shorter than 128 bytes (truncated or damaged plan header)
        if len(data) < PLAN_HEADER_FIXED:
            raise bad("truncated or damaged plan header")
        # the version
        version, _minor, hsize = struct.unpack_from("<HHI", data, 8)
        if version != 1:
            raise bad("plan format version %d is not supported", version)
        # H is 128 + 32 x F rounded up to 4096, F at most 2^24, the file at least H long
        # (truncated or damaged plan header)
        (mode, flags, _seed, _epoch, rank, world, _window, start, n, length, total, nfiles,
         entries_crc, header_crc) = struct.unpack_from("<IIQQIIQQQQQIII", data, 16)
        subset, subset_crc = struct.unpack_from("<QI", data, 104)
        if (nfiles > 1 << 24 or hsize != _plan_header_size(nfiles)
                or (remaining is not None and hsize > remaining)):
            raise bad("truncated or damaged plan header")
        data += _read_upto(fh, hsize - PLAN_HEADER_FIXED)
        if len(data) < hsize:
            raise bad("truncated or damaged plan header")
        # the header CRC
        head = bytearray(data)
        head[96:100] = b"\0\0\0\0"
        if crc32c(head) != header_crc:
            raise bad("plan header checksum mismatch")
        # mode, flags, rank and world, N the sum of the files' counts and at most 2^32 - 1,
        # a subset's S at most N (its fields zero without one), L from S or N, K + n = L
        # (inconsistent plan header): so n is bounded before an entry is read
        ids = [struct.unpack_from("<QQII", data, PLAN_HEADER_FIXED + PLAN_ID_SIZE * k)
               for k in range(nfiles)]
        counts = [c for _size, c, _h, _t in ids]
        shared = subset if flags & PLAN_SUBSET else total
        if not world or not shared:
            per = 0
        elif flags & PLAN_PAD:
            per = (shared + world - 1) // world
        else:
            per = shared // world
        if (mode > 2 or flags & ~(PLAN_PAD | PLAN_MEMORY | PLAN_SUBSET) or world < 1
                or rank >= world or total != sum(counts) or total > 0xFFFFFFFF
                or shared > total
                or (not flags & PLAN_SUBSET and (subset or subset_crc)) or length != per
                or start > length or length - start != n):
            raise bad("inconsistent plan header")
        # exactly H + 8 x n bytes (truncated plan, trailing bytes after the plan)
        want = n * PLAN_ENTRY_SIZE
        if remaining is not None and remaining - hsize > want:
            raise bad("trailing bytes after the plan (%d %s announced)", n,
                      _plural(n, "entry", "entries"))
        if remaining is not None and remaining - hsize < want:
            raise bad("truncated plan: %d %s announced, %d %s of entries",
                      n, _plural(n, "entry", "entries"), remaining - hsize,
                      _plural(remaining - hsize, "byte", "bytes"))
        body = _read_upto(fh, want)
        if len(body) < want:
            raise bad("truncated plan: %d %s announced, %d %s of entries", n,
                      _plural(n, "entry", "entries"), len(body), _plural(len(body), "byte", "bytes"))
        if fh.read(1):
            raise bad("trailing bytes after the plan (%d %s announced)", n,
                      _plural(n, "entry", "entries"))
    # the entries CRC
    if crc32c(body) != entries_crc:
        raise bad("plan entries checksum mismatch")
    # each entry names a file below F and a sample below that file's count
    flat = struct.unpack_from("<%dI" % (2 * n), body, 0)
    entries = list(zip(flat[0::2], flat[1::2]))
    for j, (f, i) in enumerate(entries):
        if f >= nfiles or i >= counts[f]:
            raise bad("entry %d names sample %d of file %d, which does not exist", j, i, f)
    if dataset is not None and ids != dataset.identities():
        raise bad("plan does not belong to these files")
    return entries


def _find_error(lib, dataset, key):
    """Why slab_dataset_find() failed on key (neither found nor absent: a file that could not
    be read), in the words of the file's reader: the lookup made again, file by file."""
    index = ctypes.c_uint64()
    for f in range(lib.slab_dataset_files(dataset)):
        h = lib.slab_dataset_file(dataset, f)
        rc = lib.slab_find(h, key, len(key), ctypes.byref(index))
        if rc < 0 and rc != SLAB_ERR_NOTFOUND:
            return lib.slab_error(h).decode("utf-8", "backslashreplace")
    return "looking up the key %r failed" % key


def _subset_globals(lib, dataset, subset):
    """Loader(subset=...): the global indexes of a list of sample indexes and keys, checked
    as shuffle-plan --subset checks its lines (ValueError naming the item)."""
    total = lib.slab_dataset_count(dataset)
    seen = bytearray(total // 8 + 1)
    out = []
    f, index, g = ctypes.c_size_t(), ctypes.c_uint64(), ctypes.c_uint64()
    for i, item in enumerate(subset):
        key = None
        if isinstance(item, (str, bytes)):
            key = item.encode("utf-8") if isinstance(item, str) else item
            rc = lib.slab_dataset_find(dataset, key, len(key), ctypes.byref(f), ctypes.byref(index))
            if rc == -5:        # SLAB_ERR_NOTFOUND
                raise ValueError("subset[%d]: no sample has the key %r" % (i, item))
            if rc < 0:
                raise SlabError("subset[%d]: %s" % (i, _find_error(lib, dataset, key)))
            if lib.slab_dataset_global(dataset, f.value, index.value, ctypes.byref(g)) < 0:
                raise SlabError("subset[%d]: looking up the key %r failed" % (i, item))
            v = g.value
        else:
            try:
                if isinstance(item, bool):
                    raise TypeError
                v = operator.index(item)
            except TypeError:
                raise TypeError("subset[%d] must be a sample index (int) or a key (str or bytes), "
                                "not %r" % (i, item)) from None
            if not 0 <= v < total:
                raise ValueError("subset[%d]: sample %d is out of range (the dataset has %d samples)"
                                 % (i, v, total))
        if seen[v >> 3] >> (v & 7) & 1:
            what = "sample %d" % v if key is None else "key %r (sample %d)" % (item, v)
            raise ValueError("subset[%d]: %s is already subset[%d]" % (i, what, out.index(v)))
        seen[v >> 3] |= 1 << (v & 7)
        out.append(v)
    return out


USAGE = "usage: slab.py [--verify] [--] FILE...\n       slab.py --version"
HELP = USAGE + """

Print each .slab file's summary, once its header, trailer and table checksums
match (as inspect's); with --verify, check the whole file as inspect --verify
does, every CRC-32C included. --version prints the module's version
(slab.__version__).

libslab.so, when found, makes the checks (much faster); else Python does.
Looked for in this order: $SLAB_LIBRARY (a path; empty or "none" for pure
Python), the package's own libslab.so.0 (pip install),
<scripts>/../build/libslab.so in a source tree, installed (the LIBDIR make
install recorded, find_library("slab"), libslab.so.0). A library of another
major version than %d, or built with a sanitizer, is passed over.
"""


# ---- the batch loader: libslab's worker threads, batches handed to Python ------------------

class _CLoaderSample(ctypes.Structure):
    _fields_ = [("pos", ctypes.c_uint64), ("file", ctypes.c_uint32), ("index", ctypes.c_uint64),
                ("key", ctypes.c_void_p), ("key_len", ctypes.c_size_t)]


class _CImageSpec(ctypes.Structure):
    _fields_ = [("out_w", ctypes.c_uint32), ("out_h", ctypes.c_uint32), ("crop", ctypes.c_int),
                ("scale_min", ctypes.c_double), ("scale_max", ctypes.c_double),
                ("ratio_min", ctypes.c_double), ("ratio_max", ctypes.c_double),
                ("flip", ctypes.c_int), ("chw", ctypes.c_int), ("exact", ctypes.c_int),
                ("center_ratio", ctypes.c_double), ("channels", ctypes.c_uint),
                ("alpha", ctypes.c_int), ("background", ctypes.c_uint8 * 3),
                ("resize", ctypes.c_int)]


class _CVideoSpec(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("image", _CImageSpec), ("frames", ctypes.c_uint),
                ("stride", ctypes.c_uint), ("fps", ctypes.c_double), ("start", ctypes.c_int),
                ("on_short", ctypes.c_int), ("codec_threads", ctypes.c_uint)]


class _CPlanParams(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("mode", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("epoch", ctypes.c_uint64), ("rank", ctypes.c_uint32), ("world", ctypes.c_uint32),
                ("window", ctypes.c_uint64), ("flags", ctypes.c_uint)]


class _CLoaderOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("batch", ctypes.c_size_t), ("threads", ctypes.c_uint),
                ("fields", ctypes.POINTER(ctypes.c_char_p)), ("nfields", ctypes.c_size_t),
                ("drop_last", ctypes.c_int), ("ring", ctypes.c_uint), ("ahead", ctypes.c_uint64),
                ("release", ctypes.c_int), ("verify", ctypes.c_int), ("skip", ctypes.c_int),
                ("transform", ctypes.c_void_p), ("transform_arg", ctypes.c_void_p),
                ("transform_field", ctypes.c_char_p), ("out_size", ctypes.c_size_t),
                ("image", ctypes.POINTER(_CImageSpec)), ("seed", ctypes.c_uint64),
                ("epoch", ctypes.c_uint64), ("memory", ctypes.c_uint64),
                ("cache_policy", ctypes.c_int), ("next_plans", ctypes.POINTER(ctypes.c_void_p)),
                ("nnext", ctypes.c_size_t), ("max_pixels", ctypes.c_uint64),
                ("max_scans", ctypes.c_uint), ("label_field", ctypes.c_char_p),
                ("disk", ctypes.c_uint64), ("video", ctypes.POINTER(_CVideoSpec)),
                ("max_frames", ctypes.c_uint64)]


class _CLoaderStats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("batches", ctypes.c_uint64),
                ("samples", ctypes.c_uint64), ("skipped", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("images", ctypes.c_uint64),
                ("scaled", ctypes.c_uint64 * 4), ("region", ctypes.c_uint64),
                ("decoded_pixels", ctypes.c_uint64), ("clips", ctypes.c_uint64),
                ("video_decoded", ctypes.c_uint64), ("video_converted", ctypes.c_uint64)]


_CROPS = {None: 0, "none": 0, "center": 1, "random-resized": 2}
_ALPHAS = {"drop": 0, "composite": 1, "keep": 0}
_RESIZES = {"bilinear": 0, "nearest": 1}
_POLICIES = {"belady": 0, "fixed": 1}
_CLIP_STARTS = {"random": 0, "center": 1, "begin": 2}
_ON_SHORT = {"pad": 0, "loop": 1, "error": 2}


def _size(v, name="memory"):
    """A byte count: an int, or a string with an optional K, M, G or T suffix (powers of
    1024), as the tools' --memory takes it; name is the option's, for the message."""
    if isinstance(v, int):
        n = v
    else:
        t = str(v).strip()
        mult = 1
        if t[-1:].upper() in "KMGT" and t[-1:]:
            mult = 1024 ** ("KMGT".index(t[-1].upper()) + 1)
            t = t[:-1]
        try:
            n = int(float(t) * mult) if "." in t else int(t) * mult
        except (ValueError, OverflowError):
            raise ValueError("%s must be a byte count such as 4G, not %r" % (name, v))
    if n < 0:
        raise ValueError("%s must be a byte count such as 4G, not %r" % (name, v))
    return n
_ORDERS = {"sequential": 0, "random": 1, "quasi": 2}
_loader_api = None
_U32, _U64 = (1 << 32) - 1, (1 << 64) - 1
# PIL's Image.MAX_IMAGE_PIXELS, as libslab's SLAB_IMAGE_MAX_PIXELS.
MAX_IMAGE_PIXELS = 178956970
# libslab's SLAB_VIDEO_MAX_FRAMES: the most frames a video may declare or hold.
MAX_VIDEO_FRAMES = 10000000


def _int(name, v, lo, hi):
    """v as an int in [lo, hi]: TypeError for a non-integer (1.5, "3"), ValueError out of
    range; ctypes would wrap or truncate either silently."""
    if isinstance(v, bool):
        raise TypeError("%s must be an integer, not %r" % (name, v))
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError("%s must be an integer, not %r" % (name, v)) from None
    if n < lo:
        raise ValueError("%s must be at least %d, not %d" % (name, lo, n))
    if n > hi:
        raise ValueError("%s must be at most %d, not %d" % (name, hi, n))
    return n


def _list(name, v, what):
    """v, an argument that takes several things, as a list: TypeError naming the argument
    for a value that is not a collection (5, None), which list() or a for loop would
    report without naming it."""
    try:
        return list(v)
    except TypeError:
        raise TypeError("%s must be a list of %s, not %r" % (name, what, v)) from None


def _path(name, v):
    """A file's name (str, bytes or os.PathLike) as bytes for libslab: TypeError naming the
    argument for anything else."""
    try:
        b = os.fsencode(v)
    except TypeError:
        raise TypeError("%s must be a path (str, bytes or os.PathLike), not %r"
                        % (name, v)) from None
    return _c_string(name, v, b)


def _range(name, v, hi):
    """A (min, max) pair of finite floats with 0 < min <= max (<= hi when hi is set)."""
    try:
        lo_, hi_ = (float(x) for x in v)
    except (TypeError, ValueError):
        raise ValueError("%s must be a pair of numbers (min, max), not %r" % (name, v)) from None
    ok = 0 < lo_ <= hi_ and hi_ < float("inf") and (hi is None or hi_ <= hi)
    if not ok:     # NaN fails every comparison
        raise ValueError("%s must be (min, max) with 0 < min <= max%s, not %r" % (
            name, " <= %g" % hi if hi is not None else ", finite", v))
    return lo_, hi_


def _center_ratio(v):
    """center_ratio as a float in (0, 1]."""
    r = None
    if not isinstance(v, (str, bytes, bool)):
        try:
            r = float(v)
        except (TypeError, ValueError):
            pass
    if r is None or not 0 < r <= 1:     # NaN fails too
        raise ValueError("center_ratio must be a number with 0 < center_ratio <= 1, not %r" % (v,))
    return r


def _channels(channels, alpha, background, resize):
    """(channels, alpha, background, resize) checked and resolved: channels 1, 3 or 4 (None:
    4 with alpha="keep", else 3); alpha "drop", "composite" or "keep" (None: "keep" with 4
    channels, else "drop"); background (r, g, b) for "composite" alone (None: white)."""
    if channels is not None:
        try:    # numpy.int64(1) is 1 (it shapes b.images); 1.0 and True are not
            c = None if isinstance(channels, bool) else operator.index(channels)
        except TypeError:
            c = None
        if c not in (1, 3, 4):
            raise ValueError("channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not %r" % (channels,))
        channels = c
    if alpha is not None and (not isinstance(alpha, str) or alpha not in _ALPHAS):
        raise ValueError("alpha must be 'drop', 'composite' or 'keep', not %r" % (alpha,))
    if not isinstance(resize, str) or resize not in _RESIZES:
        raise ValueError("resize must be 'bilinear' or 'nearest', not %r" % (resize,))
    if alpha == "keep" and channels not in (None, 4):
        raise ValueError("alpha='keep' needs channels=4, not channels=%r" % (channels,))
    if channels == 4 and alpha not in (None, "keep"):
        raise ValueError("channels=4 keeps the alpha: alpha must be 'keep' or None, not %r"
                         % (alpha,))
    if channels is None:
        channels = 4 if alpha == "keep" else 3
    if alpha is None:
        alpha = "keep" if channels == 4 else "drop"
    if background is not None:
        bg = None
        if not isinstance(background, (str, bytes)):
            try:
                items = tuple(background)
                if not any(isinstance(v, bool) for v in items):
                    bg = tuple(operator.index(v) for v in items)
            except TypeError:
                pass
        if bg is None or len(bg) != 3 or not all(0 <= v <= 255 for v in bg):
            raise ValueError("background must be (r, g, b), each an integer from 0 to 255, "
                             "not %r" % (background,))
        if alpha != "composite":
            raise ValueError("background needs alpha='composite', not alpha=%r" % (alpha,))
        background = bg
    return channels, alpha, background or (255, 255, 255), resize


def _given(v, default):
    """Is v, an integer option of a plan made here, other than its default (numpy's
    integers too)?"""
    try:
        return isinstance(v, bool) or operator.index(v) != default
    except TypeError:
        return True


def _loader_lib():
    """libslab with the loader's functions declared, or raise SlabError saying why not."""
    global _loader_api
    if _loader_api is not None:
        return _lib
    if _lib is None:
        raise SlabError("slab.Loader needs libslab.so, which was not loaded (%s)" % backend_reason)
    u64, vp, i, sz = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    pp = ctypes.POINTER(ctypes.c_void_p)
    try:
        for name, res, args in (
                ("slab_dataset_new", vp, []),
                ("slab_dataset_open", i, [vp, ctypes.POINTER(ctypes.c_char_p), sz]),
                ("slab_dataset_open_ex", i, [vp, ctypes.POINTER(ctypes.c_char_p), sz, vp]),
                ("slab_dataset_close", None, [vp]),
                ("slab_dataset_error", ctypes.c_char_p, [vp]),
                ("slab_dataset_files", sz, [vp]),
                ("slab_dataset_file", vp, [vp, sz]),
                ("slab_dataset_count", u64, [vp]),
                ("slab_dataset_plan_make", i, [vp, ctypes.POINTER(_CPlanParams), u64, pp]),
                ("slab_dataset_plan_read", i, [vp, ctypes.c_char_p, pp]),
                ("slab_dataset_plan_make_subset", i, [vp, ctypes.POINTER(_CPlanParams),
                                                      ctypes.POINTER(u64), sz, u64, pp]),
                ("slab_dataset_find", i, [vp, ctypes.c_char_p, sz, ctypes.POINTER(sz),
                                          ctypes.POINTER(u64)]),
                ("slab_dataset_global", i, [vp, sz, u64, ctypes.POINTER(u64)]),
                ("slab_plan_free", None, [vp]),
                ("slab_plan_count", u64, [vp]),
                ("slab_plan_params", ctypes.POINTER(_CPlanParams), [vp]),
                ("slab_base", vp, [vp]),
                ("slab_file_size", u64, [vp]),
                ("slab_loader_new", vp, []),
                ("slab_loader_open", i, [vp, vp, vp, ctypes.POINTER(_CLoaderOptions)]),
                ("slab_loader_batches", u64, [vp]),
                ("slab_loader_field_count", ctypes.c_uint, [vp]),
                ("slab_loader_field_name", ctypes.c_char_p, [vp, ctypes.c_uint]),
                ("slab_loader_next", i, [vp, pp]),
                ("slab_loader_next_timed", i, [vp, pp, ctypes.c_uint]),
                ("slab_loader_release", None, [vp, vp]),
                ("slab_loader_skipped", u64, [vp]),
                ("slab_loader_error", ctypes.c_char_p, [vp]),
                ("slab_loader_close", None, [vp]),
                ("slab_loader_stop", None, [vp]),
                ("slab_loader_stats", None, [vp, ctypes.POINTER(_CLoaderStats)]),
                ("slab_loader_batch_number", u64, [vp]),
                ("slab_loader_batch_count", sz, [vp]),
                ("slab_loader_batch_skipped", sz, [vp]),
                ("slab_loader_batch_samples", ctypes.POINTER(_CLoaderSample), [vp]),
                ("slab_loader_batch_column", i, [vp, ctypes.c_uint, ctypes.POINTER(vp),
                                                 ctypes.POINTER(u64)]),
                ("slab_loader_batch_out", vp, [vp, sz]),
                ("slab_loader_batch_labels", vp, [vp])):
            fn = getattr(_lib, name)
            fn.restype, fn.argtypes = res, args
    except AttributeError as e:
        raise SlabError("slab.Loader: %s lacks the loader (%s)" % (backend, e))
    _loader_api = True
    return _lib


class _Owner:
    """The C dataset, plan and loader, closed when the last thing that can reach their
    memory is gone: the Loader (until close()) and every memoryview handed out, which hold
    this object through the ctypes arrays they view. So a view kept past close() stays
    readable (it may show another batch's pixels), never dangling."""

    def __init__(self, lib):
        self.lib, self.dataset, self.plan, self.loader = lib, None, None, None
        self.next_plans = []

    def __del__(self):
        lib = self.lib
        if self.loader:
            lib.slab_loader_close(self.loader)
        if self.plan:
            lib.slab_plan_free(self.plan)
        for p in self.next_plans:
            lib.slab_plan_free(p)
        self.next_plans = []
        if self.dataset:
            lib.slab_dataset_close(self.dataset)
        self.loader = self.plan = self.dataset = None


_memory_types = {}


def _view(owner, address, size, readonly):
    """A flat uint8 memoryview of size bytes at address, keeping owner alive."""
    arr_type = _memory_types.get(size)
    if arr_type is None:
        if len(_memory_types) >= 64:
            _memory_types.clear()
        # A subclass: its instances take the owner attribute, the base type's do not.
        arr_type = _memory_types[size] = type("_Memory", (ctypes.c_ubyte * size,), {})
    arr = arr_type.from_address(address)
    arr.owner = owner
    m = memoryview(arr).cast("B")
    return m.toreadonly() if readonly else m


class Batch:
    """One batch of a Loader: len(b) samples (those of the plan's entries
    [b.number * batch_size, ...), less any skipped), in plan order. A batch holds at least
    one sample: with on_error="skip", a batch whose every sample was skipped is not handed
    out (its samples count in loader.skipped), so an epoch may have fewer than len(loader).

      b.images      image mode: a memoryview of shape (n, H, W, C) (or (n, C, H, W) with
                    chw=True; C the Loader's channels, 1 too), format "B", writable:
                    numpy.asarray(b.images) and
                    torch.from_numpy(...) wrap it without a copy. None in raw mode.
                    b.image(j): sample j's alone, flat.
                    Video mode: the clips, shape (n, T, H, W, 3) (or (n, 3, T, H, W) with
                    chw=True), the same memory; also b.clips (None in other modes).
      b.labels      with labels=FIELD: a memoryview of shape (n,), format "q" (int64), the
                    sample's field parsed as an integer, in the ring like the images
                    (numpy.asarray(b.labels), torch.from_numpy(...): no copy). None without.
      b.fields      name -> list of n read-only memoryviews of the sample's bytes (None
                    where a sample lacks the field), zero-copy into the files' mappings
      b.keys        list of n keys (str; undecodable bytes as surrogate escapes)
      b.samples     list of n (file, index): the sample's file (in the order the paths were
                    given) and its index there
      b.positions   list of n positions in the plan
      b.number, b.skipped

    Memory: the images and labels live in the loader's ring and are reused: they are valid
    until the loader hands out the next batch (iteration releases the previous batch then) or
    b.release() is called; copy them (numpy.array(...), tensor.clone(), a transfer to a
    device) to keep them longer. The raw fields point into the files and stay valid until the
    loader is closed. No view ever dangles: memory a live view reaches is freed only once
    the view is gone, but a released batch's images may show a later batch's pixels. After
    the loader's close(), b.fields, b.keys, b.samples and b.positions raise
    SlabError("loader closed"); views taken before stay readable.

    A file truncated while in use: the loader's threads read it under a guard, and its
    size is checked as each batch is handed out; SlabError names the file and the offset a
    read failed at, or its size now and when it was opened, and no batch is handed out after
    that; but the raw fields of a batch already handed out are read by you, and a page cut off after
    the hand-over still ends the process with SIGBUS there."""

    __slots__ = ("_ld", "_h", "_n", "number", "skipped", "images", "_flat", "labels",
                 "_lflat", "_fields", "_samples", "__weakref__")

    @property
    def clips(self):
        """Video mode: b.images under the name it reads best by, (n, T, H, W, 3) or
        (n, 3, T, H, W); None otherwise."""
        return self.images if self._ld._video else None

    def __init__(self, ld, h, own):
        # _h, the slot this batch holds, is set by the loader once the batch is handed over
        # for good (Loader._take): a Batch dropped before that releases nothing. own: the
        # loader's _Owner, which the views keep (ld._owner may be gone: a close() meanwhile).
        lib = ld._lib
        self._ld, self._h = ld, None
        self._n = lib.slab_loader_batch_count(h)
        self.number = lib.slab_loader_batch_number(h)
        self.skipped = lib.slab_loader_batch_skipped(h)
        self._fields = self._samples = None
        self.images = self._flat = None
        if ld._image_shape is not None:
            # n >= 1: the loader hands out no empty batch.
            self._flat = _view(own, lib.slab_loader_batch_out(h, 0),
                               self._n * ld._image_bytes, False)
            self.images = self._flat.cast("B", (self._n,) + ld._image_shape)
        self.labels = self._lflat = None
        if ld._labels:
            self._lflat = _view(own, lib.slab_loader_batch_labels(h), self._n * 8, False)
            self.labels = self._lflat.cast("q")

    def __len__(self):
        return self._n

    def __reduce_ex__(self, protocol):
        # A copy would give the batch's slot back a second time, taking it from the batch
        # handed out in it next.
        raise TypeError("a slab.Batch cannot be pickled or copied: it is a slot of its "
                        "Loader's ring; copy what it holds (numpy.array(b.images), b.keys, "
                        "bytes(v) of b.fields)")

    def image(self, j):
        """Sample j's image (or clip: T x H x W x 3) as a flat memoryview of H x W x C bytes
        (memoryview cannot index a sub-array of b.images; numpy.asarray(b.images)[j] can)."""
        if not 0 <= j < self._n or self._flat is None:
            raise IndexError(j)
        size = self._ld._image_bytes
        return self._flat[j * size:(j + 1) * size]

    def _live(self):
        """The loader's _Owner, the slot, and its files' views and addresses, taken together:
        the caller's locals keep them while it reads the slot, whatever another thread's
        close() does meanwhile."""
        ld = self._ld
        own = ld._handle()
        files, bases = ld._files, ld._bases
        if files is None:
            raise SlabError("loader closed")
        h = self._h
        if h is None:
            raise SlabError("batch %d was released" % self.number)
        return own, h, files, bases

    def _sample_records(self):
        own, h, _, _ = self._live()
        if self._samples is None:
            p = self._ld._lib.slab_loader_batch_samples(h)
            self._samples = [(p[j].pos, p[j].file, p[j].index, p[j].key, p[j].key_len)
                             for j in range(self._n)]
        return self._samples

    @property
    def samples(self):
        return [(f, i) for _, f, i, _, _ in self._sample_records()]

    @property
    def positions(self):
        return [pos for pos, _, _, _, _ in self._sample_records()]

    @property
    def keys(self):
        own, _, views, bases = self._live()
        recs = self._sample_records()
        return [bytes(views[f][k - bases[f]:k - bases[f] + kl]).decode("utf-8", "surrogateescape")
                for _, f, _, k, kl in recs]

    @property
    def fields(self):
        own, h, views, bases = self._live()
        if self._fields is None:
            ld, n = self._ld, self._n
            recs = self._sample_records()
            data, size = ld._thread().columns(ld._most)
            out = {}
            for f, name in enumerate(ld.fields):
                if ld._lib.slab_loader_batch_column(h, f, data, size) < 0:
                    raise SlabError("batch %d: field %d: out of range" % (self.number, f))
                col = []
                for j in range(n):
                    p = data[j]
                    if p is None:
                        col.append(None)
                    else:
                        fi = recs[j][1]
                        o = p - bases[fi]
                        col.append(views[fi][o:o + size[j]])
                out[name] = col
            self._fields = out
        return self._fields

    def _drop_views(self):
        for m in (self.images, self._flat, self.labels, self._lflat):
            if m is not None:
                try:
                    m.release()
                except BufferError:
                    pass    # wrapped by an array: still readable, as the class says

    def _give_back(self):
        # The handle is taken before the C call, with nothing between that an exception
        # (a Ctrl-C) could interrupt: the slot is released exactly once.
        ld = self._ld
        own = ld._owner
        loader = own.loader if own is not None and not ld._closed and \
            ld._pid == os.getpid() else None
        h, self._h = self._h, None
        if h is not None and loader:
            ld._lib.slab_loader_release(loader, h)

    def release(self):
        """Give the batch's slot back to the loader now (iteration does it when the next
        batch is taken). Its images may then be overwritten."""
        if self._h is not None:
            self._give_back()
            self._drop_views()

    def __del__(self):
        # A batch dropped unreleased (its thread ended, a next_batch() result let go)
        # gives its slot back rather than leaving it held for good.
        try:
            if self._h is not None:
                self._give_back()
        except Exception:
            pass


class _ThreadState:
    """What one consumer thread has of a Loader: the batch iteration handed it last (released
    when it asks for the next; a weak reference, since a batch holds its loader: a strong one
    would make a cycle that keeps a loader dropped mid-epoch, its ring, threads and files,
    until the cyclic collector happens to run), and the C hand-over's out-pointer, kept here rather than in
    a local so that a batch the C side handed over is never lost to an exception (a Ctrl-C)
    raised between the hand-over and its return: the next call delivers it. And the arrays
    Batch.fields reads a batch's columns into, so that threads need no lock there."""

    __slots__ = ("out", "held", "_columns")

    def __init__(self):
        self.out = ctypes.c_void_p()
        self.held = None
        self._columns = None

    def columns(self, most):
        """This thread's arrays for slab_loader_batch_column(): data and sizes of a field."""
        if self._columns is None:
            self._columns = ((ctypes.c_void_p * most)(), (ctypes.c_uint64 * most)())
        return self._columns


class Loader:
    """Batches of a plan, loaded (and decoded) by libslab's worker threads; see Batch.

        ld = slab.Loader(paths, plan="epoch3.plan", batch_size=256, threads=2,
                         image="jpg", size=(224, 224), crop="random-resized", flip=True,
                         labels="cls")
        for b in ld:
            x = torch.from_numpy(numpy.asarray(b.images))   # (n, 224, 224, 3) uint8
            y = torch.from_numpy(numpy.asarray(b.labels))   # (n,) int64

    paths: .slab files, one dataset in this order (a plan from shuffle-plan must have been
      made for these files, in this order).
    plan: a plan file's path, or None for a plan made here as shuffle-plan would make it:
      order ("sequential", "random" or "quasi"), window (quasi alone: live pages, default 64), seed, epoch,
      rank and world_size (drop-last across ranks), start (resume at this position), and
      subset: None (every sample), or the samples to train on alone, without repacking
      (FFCV's indices=): global sample indexes (ints; file order, then index in the file)
      and keys (str, UTF-8, or bytes; the first file holding a key wins), each sample once,
      in any order. The plan is shuffle-plan --subset's: the same for the same set.
      With a plan file, these (but seed and epoch, which also seed the crops) are a
      ValueError: the file has its own (shuffle-plan --start K makes a resumed plan).
    batch_size, threads (worker threads, 1-1024), ring (batches in flight, default 2 x
      threads, at most 4096), drop_last (no short last batch). The yes-or-no options
      (drop_last, flip, chw, release, verify, anonymous) take True or False; a string, which
      would read as yes whatever it says, is a TypeError.
    fields: the fields wanted, by name (None: every field of any file). Raw mode hands them
      out zero-copy.
    image: an image field to decode in C (JPEG, PNG or WebP, found by their bytes; PNG
      and WebP alpha dropped unless alpha says otherwise, 16-bit PNG samples rounded to 8
      bits): cropped (crop "random-resized" with scale and ratio as
      torchvision's RandomResizedCrop, "center", or None for the whole image), flipped
      horizontally with probability 1/2 (flip=True), resized to size=(H, W) with an
      antialiased bilinear filter, uint8 RGB, HWC or CHW (chw=True). Crop and flip depend on
      (seed, epoch, the sample's global index) only: the same batches with any thread count,
      and on resume. seed and epoch default to the plan file's own (0 and 0 for a plan made
      here). scale and ratio are checked here: (min, max), 0 < min <= max, scale at most 1.
    center_ratio: crop="center" takes the largest centred box of the output's aspect, each
      side times center_ratio, 0 < center_ratio <= 1 (ValueError otherwise; another value
      than 1 needs crop="center"). 1 (the default) is the whole short side, as before;
      224/256 is ImageNet evaluation's Resize(256) + CenterCrop(224) (FFCV's
      CenterCropRGBImageDecoder(ratio=224/256)). For a W x H image the box's side along the
      limiting dimension is floor(side * center_ratio + 0.5) (round half up; a square
      output: floor(min(W, H) * center_ratio + 0.5) square), the other side follows from
      the output's aspect as at 1, and it is centred at the floor of half the margin. That
      is torchvision's box in exact arithmetic (for W >= H: 224/256 H square at
      ((W - 224/256 H) / 2, H / 16)), rounded: mapped back to the source, torchvision's own
      box (it rounds the resized size and the crop's offset) is within 0.75 source pixel
      of it on the short side, and that plus one resized pixel (min(W, H) / 256 source
      pixels) on the long side.
    channels, alpha, background, resize: what the pixels become (ValueError for anything
      else). channels=3 (RGB; the default), 1 (grey: PIL's convert("L"), so a grey image's
      values come through unchanged; a palette PNG gives its palette indices, as
      numpy.array(Image.open(f)) does for mode "P", the labels of a segmentation mask) or 4
      (RGBA, alpha 255 where the image has none); b.images is then (n, H, W, C), or
      (n, C, H, W) with chw, (n, H, W, 1) for grey. alpha="drop" (default with 1 or 3
      channels: the colour as stored), "composite" (over background=(r, g, b), default
      white (255, 255, 255), as PIL's alpha_composite at full size before the resize) or
      "keep" (the same as channels=4, and its default). resize="bilinear" (default; 4
      channels are resized premultiplied by alpha, as PIL resizes RGBA) or "nearest" (PIL's
      NEAREST: each output pixel is one source pixel, so label values stay exact; the image
      is then decoded at full scale). A segmentation mask: channels=1, resize="nearest".
      Pixels come as stored: an EXIF orientation is not applied (as PIL's Image.open and
      torchvision's decode_jpeg leave it).
    video: a video field to make clips of in C (MP4, WebM/Matroska, AVI, MPEG-TS/PS, FLV, GIF found
      by their bytes; FFmpeg's libraries decode them from the mapping), instead of image
      (ValueError with both): for each sample, frames=T frames (1-65535, default 16),
      stride frames apart (1-65535, default 1), or fps=F: 1/F seconds apart by the frames'
      timestamps (stride then stays 1); the clip starts at clip_start="random" (uniform
      over the starts where it fits, from (seed, epoch, the sample's global index) only:
      the same clips with any thread count and on resume, other clips in another epoch),
      "center" or "begin". Each frame is cropped with one crop and flip drawn for the whole
      clip (crop, scale, ratio, center_ratio, flip as for images), resized to size=(H, W)
      (resize as for images), uint8 RGB: b.images (also b.clips) is (n, T, H, W, 3), or
      (n, 3, T, H, W) with chw=True, zero-copy as images are. channels, alpha and
      background go with image= alone, frames, stride, fps, clip_start and on_short with
      video= alone (ValueError). A video of fewer frames than the clip
      spans: on_short="pad" (default: the clip from the first frame, the last frame
      repeated to fill it), "loop" (from the first frame, on from the first frame again
      after the last) or "error" (a bad sample, on_error). A corrupt, truncated or
      unsupported video is a bad sample too, its error naming the file, the sample, its
      key and the field with the decoder's words ("... field 'mp4': corrupt video: ...").
      max_frames: a video declaring or holding more frames (default MAX_VIDEO_FRAMES =
      10,000,000; None: no limit), or frames of more than max_pixels pixels, is refused
      before anything is allocated for it: a bad sample.
    labels: a field (such as "cls") parsed in C as an ASCII decimal integer (blanks around
      it, newline included, and a sign allowed; within int64) into b.labels, one int64 per
      sample; loaded whether or not it is among fields (added to them). A sample that lacks
      it, or whose text is anything else (empty, junk, out of range), is a bad sample
      (on_error), its error naming the key, the field and the text:
      "'a.slab': sample #3 'k3': field 'cls': not an integer: 'abc'". Raw and image mode.
    max_pixels, max_scans: decompression bombs. An image declaring more pixels than
      max_pixels (default MAX_IMAGE_PIXELS = 178,956,970, PIL's limit; None: no limit) or a
      progressive JPEG of more than max_scans scans (default 500; None: no limit) is refused
      before it is decoded: a bad sample (on_error). So is a strip (40000000 x 1) whose
      resize would take more memory than max_pixels pixels (6 a pixel of each side). So is an image the worker cannot find the
      memory for.
    ahead (pages read ahead of the workers; default 16, for URLs 4 x connections), release (drop pages from the page cache once
      used, and at close() before the plan's end the pages read ahead), verify (check each field's CRC32C).
    memory, next_plans, cache_policy: for datasets larger than memory, the page cache the
      dataset may take (bytes, or "4G"), what stays in it chosen from this plan and the plan
      files of the epochs that follow (next_plans: known, not loaded), by cache_policy
      "belady" (keep the pages needed soonest) or "fixed"; prefetch(1) --memory explains.
      The read-ahead over the ring's batches counts in it: a budget not much larger than
      ring x batch_size samples keeps little.
    URLs: paths may be http://, https:// or s3://bucket/key URLs (see Dataset for the
      keyword arguments that say how they are reached: cache_dir, endpoint, profile, region,
      addressing, anonymous, connections, retries, timeout). Each file is mirrored into a
      sparse local cache file, page by page as the plan reaches it: the read-ahead (ahead)
      asks for the plan's next pages over several connections, a page is used only once
      its bytes matched their CRC-32C, and processes on one node share the cache. disk: the
      bytes of the dataset the local cache may keep (or "40G"), chosen as memory chooses
      for the page cache (not with memory); 0: every page fetched stays.
    on_error: "raise" (a sample that fails raises SlabError naming it, from the iteration) or
      "skip" (left out of its batch; counted in b.skipped and loader.skipped, the first
      error in loader.error). A file that cannot be read any more (truncated while in use)
      raises either way.

    Threads: iterating one Loader from several Python threads is safe: each batch goes to one
      thread, exactly once, in plan order of the calls; iteration releases the batch it gave
      the same thread before (so each thread holds one; the ring must have room for that).
    Ctrl-C: a KeyboardInterrupt during iteration loses nothing: iterating on after catching it
      yields every batch exactly once, in order.
    fork(): the worker threads do not exist in a child process. There, using the Loader
      raises SlabError saying it was created in another process (make a new one in the
      child); letting it go or closing it is safe; the parent's Loader is unaffected.
      Pickling or copying a Loader or a Batch (a spawned process's argument, a DataLoader
      worker's dataset) raises TypeError: make a Loader in each process.
    One pass: a Loader walks its plan once (len() batches); iterating it again after the
      end yields nothing. Make one per epoch (epoch=, or the epoch's plan).
    The threads run in C without the GIL. Use as a context manager or call close(), which
      stops the threads at once (a worker in the middle of a batch stops after the sample
      in hand); only the memory that views still reach outlives it. close() may come from
      another thread: a thread waiting in the iteration then gets SlabError("loader
      closed"). A
      Loader let go without close() is closed once nothing it handed out is held any more."""

    def __init__(self, paths, plan=None, batch_size=256, threads=2, fields=None, image=None,
                 size=(224, 224), crop="random-resized", flip=False, seed=None, epoch=None,
                 chw=False, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), drop_last=False,
                 ahead=None, release=False, verify=False, on_error="raise", ring=None,
                 order="sequential", window=None, rank=0, world_size=1, start=0, subset=None,
                 memory=0, next_plans=(), cache_policy="belady",
                 max_pixels=MAX_IMAGE_PIXELS, max_scans=500, labels=None, center_ratio=1.0,
                 channels=None, alpha=None, background=None, resize="bilinear", disk=0,
                 video=None, frames=16, stride=1, fps=None, clip_start="random",
                 on_short="pad", max_frames=MAX_VIDEO_FRAMES, **remote):
        self._owner = None
        self._closed = True
        self._closing = threading.RLock()
        self._pid = os.getpid()
        lib = self._lib = _loader_lib()
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        paths = [_path("paths[%d]" % i, p)
                 for i, p in enumerate(_list("paths", paths, "paths"))]
        if not paths:
            raise ValueError("slab.Loader: no files")
        if on_error not in ("raise", "skip"):
            raise ValueError("on_error must be 'raise' or 'skip', not %r" % (on_error,))
        if image is not None and video is not None:
            raise ValueError("image and video exclude each other: give one")
        if video is None:
            # (as prefetch's --frames ... without --video: taken silently, they would give
            # images, or raw fields, where clips were meant)
            for what, v, default in (("frames", frames, 16), ("stride", stride, 1)):
                if _given(v, default):
                    raise ValueError("%s goes with video= (clips), not %r without it"
                                     % (what, v))
            for what, v, default in (("fps", fps, None), ("clip_start", clip_start, "random"),
                                     ("on_short", on_short, "pad")):
                if not (v is default or (isinstance(v, str) and v == default)):
                    raise ValueError("%s goes with video= (clips), not %r without it"
                                     % (what, v))
        if video is not None:
            if not isinstance(video, str) or not video:
                raise ValueError("video must be a field name such as 'mp4', not %r" % (video,))
            if channels not in (None, 3) or alpha is not None or background is not None:
                raise ValueError("video clips are RGB: channels, alpha and background go with "
                                 "image=")
            frames = _int("frames", frames, 1, 65535)
            stride = _int("stride", stride, 1, 65535)
            if fps is not None:
                if isinstance(fps, (str, bytes, bool)):
                    raise ValueError("fps must be a number of frames a second, not %r" % (fps,))
                try:
                    fps = float(fps)
                except (TypeError, ValueError):
                    raise ValueError("fps must be a number of frames a second, not %r" % (fps,)) from None
                if not 1e-6 <= fps <= 1e6:     # NaN fails too
                    raise ValueError("fps must be a number with 0.000001 <= fps <= 1000000, not %r" % (fps,))
                if stride != 1:
                    raise ValueError("stride and fps exclude each other: give one")
            if not _known(clip_start, _CLIP_STARTS):
                raise ValueError("clip_start must be 'random', 'center' or 'begin', not %r"
                                 % (clip_start,))
            if not _known(on_short, _ON_SHORT):
                raise ValueError("on_short must be 'pad', 'loop' or 'error', not %r" % (on_short,))
        max_frames = _U64 if max_frames is None else _int("max_frames", max_frames, 1, _U64)
        self._video = video is not None
        media = video if video is not None else image
        if media is not None and not _known(crop, _CROPS):
            raise ValueError("crop must be 'random-resized', 'center' or None, not %r" % (crop,))
        if plan is not None and subset is not None:
            raise ValueError("subset applies to a plan made here (plan=None), not to a plan file")
        # A plan file has its own order, rank and position: these would be ignored (a resume
        # at start=K replaying the epoch from its start, every rank loading the same plan).
        if plan is not None and _given(start, 0):
            raise ValueError("start applies to a plan made here (plan=None), not to a plan "
                             "file: resume with the plan shuffle-plan --start %s makes" % (start,))
        if plan is not None and (_given(rank, 0) or _given(world_size, 1)):
            raise ValueError("rank and world_size apply to a plan made here (plan=None), not "
                             "to a plan file: make each rank's with shuffle-plan --rank R "
                             "--world-size N")
        if plan is not None and order != "sequential":
            raise ValueError("order applies to a plan made here (plan=None), not to a plan "
                             "file: shuffle-plan --mode made it")
        if isinstance(subset, (str, bytes, bytearray)):
            raise TypeError("subset must be a list of sample indexes and keys, not a %s"
                            % type(subset).__name__)
        # field names are str: a bare string would be taken letter by letter
        if isinstance(fields, (str, bytes, bytearray)):
            raise TypeError("fields must be a list of field names, not a %s"
                            % type(fields).__name__)
        fields = None if fields is None else _list("fields", fields, "field names")
        subset = None if subset is None else _list("subset", subset, "sample indexes and keys")
        for what, v in (("image", image), ("video", video)) + \
                tuple(("fields", f) for f in (fields or ())):
            if v is not None and not isinstance(v, str):
                raise TypeError("%s must name a field (a str), not %r" % (what, v))
            if v is not None:
                _c_string(what, v, v.encode("utf-8", "surrogateescape"))
        flip, chw = _flag("flip", flip), _flag("chw", chw)
        drop_last, release = _flag("drop_last", drop_last), _flag("release", release)
        verify = _flag("verify", verify)
        if plan is None and not _known(order, _ORDERS):
            raise ValueError("order must be 'sequential', 'random' or 'quasi', not %r" % (order,))
        if not _known(cache_policy, _POLICIES):
            raise ValueError("cache_policy must be 'belady' or 'fixed', not %r" % (cache_policy,))
        memory = _int("memory", _size(memory), 0, _U64)
        disk = _int("disk", _size(disk, "disk"), 0, _U64)
        if memory and disk:
            raise ValueError("memory and disk exclude each other: give one")
        ropts, rkeep = _remote_options(remote)
        batch_size = _int("batch_size", batch_size, 1, _U64 >> 1)
        threads = _int("threads", threads, 1, 1024)
        ring = 0 if ring is None else _int("ring", ring, 1, 4096)
        if ahead is None:
            # over a network the window is the requests in flight: a few per connection
            # keep the link busy (prefetch(1) --ahead)
            urls = any(is_url(p) for p in paths)
            ahead = 4 * (remote.get("connections") or 16) if urls else 16
        ahead = _int("ahead", ahead, 0, _U64)
        # as shuffle-plan --window: a quasi plan's, made here
        if window is not None and (plan is not None or order != "quasi"):
            raise ValueError("window applies to order='quasi' alone (a plan made here)")
        window = 64 if window is None else _int("window", window, 1, _U64)
        rank = _int("rank", rank, 0, _U32)
        world_size = _int("world_size", world_size, 1, _U32)
        if rank >= world_size:
            raise ValueError("rank must be below world_size (%d), not %d" % (world_size, rank))
        start = _int("start", start, 0, _U64)
        seed = None if seed is None else _int("seed", seed, 0, _U64)
        epoch = None if epoch is None else _int("epoch", epoch, 0, _U64)
        max_pixels = _U64 if max_pixels is None else _int("max_pixels", max_pixels, 1, _U64)
        max_scans = _U32 if max_scans is None else _int("max_scans", max_scans, 1, _U32)
        center_ratio = _center_ratio(center_ratio)
        channels, alpha, background, resize = _channels(channels, alpha, background, resize)
        if media is not None and center_ratio != 1.0 and crop != "center":
            raise ValueError("center_ratio needs crop='center', not crop=%r" % (crop,))
        if labels is not None and (not isinstance(labels, str) or not labels):
            raise ValueError("labels must be a field name such as 'cls', not %r" % (labels,))
        if labels is not None:
            _c_string("labels", labels, labels.encode("utf-8", "surrogateescape"))
        if media is not None:
            try:
                h, w = size
            except (TypeError, ValueError):
                raise ValueError("size must be (height, width), not %r" % (size,)) from None
            h, w = _int("size[0]", h, 1, 65535), _int("size[1]", w, 1, 65535)
            scale = _range("scale", scale, 1.0)
            ratio = _range("ratio", ratio, None)
        plan = None if plan is None else _path("plan", plan)
        if isinstance(next_plans, (str, bytes, os.PathLike)):
            next_plans = [next_plans]
        next_plans = [_path("next_plans[%d]" % i, p)
                      for i, p in enumerate(_list("next_plans", next_plans, "plan files"))]
        own = self._owner = _Owner(lib)
        own.dataset = lib.slab_dataset_new()
        if not own.dataset:
            raise MemoryError("slab.Loader: out of memory")
        own.remote = (ropts, rkeep)
        if lib.slab_dataset_open_ex(own.dataset, (ctypes.c_char_p * len(paths))(*paths),
                                    len(paths), ctypes.byref(ropts)) < 0:
            raise SlabError(lib.slab_dataset_error(own.dataset).decode("utf-8", "replace"))
        out = ctypes.c_void_p()
        if plan is not None:
            rc = lib.slab_dataset_plan_read(own.dataset, plan, ctypes.byref(out))
        else:
            pp = _CPlanParams(ctypes.sizeof(_CPlanParams), _ORDERS[order], seed or 0,
                              epoch or 0, rank, world_size, window, 0)
            if subset is None:
                rc = lib.slab_dataset_plan_make(own.dataset, ctypes.byref(pp), start,
                                                ctypes.byref(out))
            else:
                members = _subset_globals(lib, own.dataset, subset)
                arr = (ctypes.c_uint64 * max(1, len(members)))(*members)
                rc = lib.slab_dataset_plan_make_subset(own.dataset, ctypes.byref(pp), arr,
                                                       len(members), start, ctypes.byref(out))
        if rc < 0:
            raise SlabError(lib.slab_dataset_error(own.dataset).decode("utf-8", "replace"))
        own.plan = out.value
        for p in next_plans:
            nxt = ctypes.c_void_p()
            if lib.slab_dataset_plan_read(own.dataset, p, ctypes.byref(nxt)) < 0:
                raise SlabError(lib.slab_dataset_error(own.dataset).decode("utf-8", "replace"))
            own.next_plans.append(nxt.value)
        params = lib.slab_plan_params(own.plan).contents
        self.seed = params.seed if seed is None else seed
        self.epoch = params.epoch if epoch is None else epoch
        self.batch_size = batch_size

        wanted = list(fields) if fields is not None else None
        if media is not None and wanted is not None and media not in wanted:
            wanted.insert(0, media)
        if labels is not None and wanted is not None and labels not in wanted:
            wanted.append(labels)
        o = _CLoaderOptions()
        o.size = ctypes.sizeof(o)
        o.batch, o.threads = self.batch_size, threads
        if wanted is not None:
            names = [n.encode() for n in wanted]
            self._names = (ctypes.c_char_p * max(1, len(names)))(*names)
            o.fields, o.nfields = self._names, len(names)
        o.drop_last, o.ring, o.ahead = drop_last, ring, ahead
        o.release, o.verify, o.skip = release, verify, on_error == "skip"
        o.seed, o.epoch = self.seed, self.epoch
        o.memory, o.cache_policy, o.disk = memory, _POLICIES[cache_policy], disk
        o.max_pixels, o.max_scans, o.max_frames = max_pixels, max_scans, max_frames
        self._labels = labels is not None
        if labels is not None:
            self._label_field = labels.encode()
            o.label_field = self._label_field
        if own.next_plans:
            self._next = (ctypes.c_void_p * len(own.next_plans))(*own.next_plans)
            o.next_plans, o.nnext = self._next, len(own.next_plans)
        self._image_shape = None
        if image is not None:
            self._spec = _CImageSpec(w, h, _CROPS[crop], scale[0], scale[1], ratio[0], ratio[1],
                                     flip, chw, 0, center_ratio, channels,
                                     _ALPHAS[alpha], (ctypes.c_uint8 * 3)(*background),
                                     _RESIZES[resize])
            self._image_field = image.encode()
            o.image, o.transform_field = ctypes.pointer(self._spec), self._image_field
            self._image_shape = (channels, h, w) if chw else (h, w, channels)
            self._image_bytes = h * w * channels
        if video is not None:
            image_spec = _CImageSpec(w, h, _CROPS[crop], scale[0], scale[1], ratio[0], ratio[1],
                                     flip, chw, 0, center_ratio, 3, 0,
                                     (ctypes.c_uint8 * 3)(255, 255, 255), _RESIZES[resize])
            self._vspec = _CVideoSpec(ctypes.sizeof(_CVideoSpec), image_spec, frames, stride,
                                      fps or 0.0, _CLIP_STARTS[clip_start], _ON_SHORT[on_short], 0)
            self._image_field = video.encode()
            o.video, o.transform_field = ctypes.pointer(self._vspec), self._image_field
            self._image_shape = (3, frames, h, w) if chw else (frames, h, w, 3)
            self._image_bytes = frames * h * w * 3
        own.loader = lib.slab_loader_new()
        if not own.loader:
            raise MemoryError("slab.Loader: out of memory")
        if lib.slab_loader_open(own.loader, own.dataset, own.plan, ctypes.byref(o)) < 0:
            raise SlabError(lib.slab_loader_error(own.loader).decode("utf-8", "replace"))
        self.fields = [lib.slab_loader_field_name(own.loader, f).decode()
                       for f in range(lib.slab_loader_field_count(own.loader))]
        self._batches = lib.slab_loader_batches(own.loader)
        # Each file's mapping as one read-only view: raw fields and keys are slices of it.
        self._bases, self._files = [], []
        for f in range(lib.slab_dataset_files(own.dataset)):
            s = lib.slab_dataset_file(own.dataset, f)
            base, length = lib.slab_base(s), lib.slab_file_size(s)
            self._bases.append(base)
            self._files.append(_view(own, base, length, True))
        # No batch holds more samples than the plan has.
        most = max(1, min(self.batch_size, lib.slab_plan_count(own.plan)))
        self._most = most
        self._lock = threading.Lock()
        self._threads = threading.local()
        self._closed = False

    def __len__(self):
        """Batches in the epoch (at most: with on_error="skip", a batch whose every sample
        was skipped is not handed out)."""
        return self._batches

    def __reduce_ex__(self, protocol):
        # pickle, copy and deepcopy: a copy would share (and close, and release) the C
        # loader's threads and ring, and another process has none of them.
        raise TypeError("a slab.Loader cannot be pickled or copied: its threads and ring are "
                        "this process's; make a Loader where it is used (in each worker "
                        "process, with the same arguments)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        """The _Owner, for a call into the C loader (own.loader): held in a local by the
        caller until the call's results are read, so that a close() from another thread,
        which lets go of the Loader's reference, frees nothing under the call."""
        own = self._owner
        if own is not None and self._pid != os.getpid():
            raise SlabError("slab.Loader: created in process %d, used in process %d (after "
                            "fork()): the loader's threads are not in this process; make a "
                            "new Loader here" % (self._pid, os.getpid()))
        if self._closed or own is None or not own.loader:
            raise SlabError("loader closed")
        return own

    def _thread(self):
        st = getattr(self._threads, "st", None)
        if st is None:
            st = self._threads.st = _ThreadState()
        return st

    def _take(self, iterating):
        """The next batch from C, or None at the end. An exception (a Ctrl-C) raised between
        any two steps loses nothing: a batch C handed over stays in st.out until the steps
        after the last call here, which nothing can interrupt (attribute stores only),
        hand it over for good; the next call delivers it otherwise."""
        own = self._handle()
        h = own.loader
        st = self._thread()
        lib = self._lib
        out = st.out
        self._lock.acquire()
        try:
            if not out.value:
                held = st.held() if st.held is not None else None
                if iterating and held is not None:
                    st.held = None
                    held._give_back()
                    held._drop_views()
                # In short waits, so that a Ctrl-C (delivered to Python between two calls,
                # never inside one) is not held up by a batch slow to come (a URL's fetch
                # stalled and retried: minutes); nothing is taken until one is ready.
                rc = lib.slab_loader_next_timed(h, ctypes.byref(out), _WAIT_MS)
                while rc == _LOADER_WAITING:
                    rc = lib.slab_loader_next_timed(h, ctypes.byref(out), _WAIT_MS)
                if rc < 0:
                    raise SlabError(lib.slab_loader_error(h).decode("utf-8", "replace"))
                if rc == 0:
                    return None
            b = Batch(self, out.value, own)
        finally:
            self._lock.release()
        # Every call before the hand-over: Python takes a pending signal as a call made
        # from C code returns (weakref.ref() too), and one taken between b._h's store and
        # out.value's would drop b, releasing its slot, while the next call delivered the
        # slot again (by then maybe another batch's).
        ref = weakref.ref(b) if iterating else None
        b._h = out.value
        out.value = None
        if iterating:
            st.held = ref
        return b

    def next_batch(self):
        """The next Batch in plan order, or None after the last one, without releasing any
        (at most ring - 1 may be held; a batch let go unreleased is released when it is
        freed). Raises SlabError when a sample fails (on_error "raise") or the read-ahead
        does."""
        return self._take(False)

    def __iter__(self):
        return self

    def __next__(self):
        """The next batch; the one handed to this thread before is released first (see
        Batch)."""
        b = self._take(True)
        if b is None:
            raise StopIteration
        return b

    def _last(self):
        """What close() kept of the counts (skipped, error, stats), or None while open (and
        in a fork() child, which has none of its own)."""
        return getattr(self, "_final", None) if self._closed else None

    @property
    def skipped(self):
        """Samples skipped so far (on_error="skip"); after close(), in the whole run."""
        last = self._last()
        if last is not None:
            return last[0]
        own = self._handle()
        return self._lib.slab_loader_skipped(own.loader)

    @property
    def error(self):
        """The first skipped sample's error, or the failure's ("" when none); after close(),
        as it was then."""
        last = self._last()
        if last is not None:
            return last[1]
        own = self._handle()
        return self._lib.slab_loader_error(own.loader).decode("utf-8", "replace")

    def stats(self):
        """What the batches handed out so far held: batches, samples, skipped, bytes (of the
        wanted fields), images, scaled (DCT-scaled decodes: at 1/2, 1/4 or 1/8), scales
        ({1: n, 2: n, 4: n, 8: n}), region (decodes of only the crop's region),
        decoded_pixels; and for video, clips (made), video_decoded (frames decoded for
        them, sampled or not) and video_converted (frames sampled, cropped and resized).
        After close(), the run's (so that a `with` block's end can be logged)."""
        last = self._last()
        if last is not None:
            return dict(last[2], scales=dict(last[2]["scales"]))
        return self._stats(self._handle())

    def _stats(self, own):
        st = _CLoaderStats()
        st.size = ctypes.sizeof(st)
        self._lib.slab_loader_stats(own.loader, ctypes.byref(st))
        scales = {1 << k: st.scaled[k] for k in range(4)}
        return {"batches": st.batches, "samples": st.samples, "skipped": st.skipped,
                "bytes": st.bytes, "images": st.images, "scaled": st.images - st.scaled[0],
                "scales": scales, "region": st.region, "decoded_pixels": st.decoded_pixels,
                "clips": st.clips, "video_decoded": st.video_decoded,
                "video_converted": st.video_converted}

    def close(self):
        """Stop the threads now (joined before this returns; their file descriptors and
        decoders freed); the ring, files and plan are freed once no view handed out reaches
        them any more (at once when none does). Batches then raise SlabError("loader
        closed"). In a fork() child, only lets go (the threads are the parent's)."""
        # A fork() child has no thread to stop, and would wait for ever for the lock below
        # if a thread of its parent's was in close() as fork() ran: it lets go alone.
        if self._pid != os.getpid():
            self._closed = True
            self._files = self._bases = self._owner = None
            return
        # One close at a time: two threads' (or a signal handler's: reentrant) would stop
        # the C loader twice at once. Not the iteration's lock, which a waiting
        # next() holds.
        with self._closing:
            if self._closed:
                return
            self._closed = True
            own = self._owner
            if own is not None and own.loader and self._pid == os.getpid():
                self._lib.slab_loader_stop(own.loader)
                # the threads stopped: the counts are final; kept for skipped, error and
                # stats() after the close
                self._final = (self._lib.slab_loader_skipped(own.loader),
                               self._lib.slab_loader_error(own.loader).decode("utf-8",
                                                                             "replace"),
                               self._stats(own))
            self._files = self._bases = None
            self._owner = None


def _escaped(text):
    """text for a terminal, escaped as the tools' cli_fput_escaped() escapes it: backslash as
    \\\\, \\a \\b \\t \\n \\v \\f \\r by name; the other control characters (C0, DEL, C1), the
    bidirectional controls (U+202A..U+202E, U+2066..U+2069) and bytes that are not UTF-8
    (surrogate escapes) as the \\xHH of their bytes; the rest as it is."""
    out = []
    for ch in text:
        c = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0x07 <= c <= 0x0d:
            out.append("\\" + "abtnvfr"[c - 0x07])
        elif c < 0x20 or 0x7f <= c <= 0x9f or 0x202a <= c <= 0x202e or 0x2066 <= c <= 0x2069 \
                or 0xd800 <= c <= 0xdfff:
            b = bytes([c - 0xdc00]) if 0xdc80 <= c <= 0xdcff else ch.encode("utf-8", "surrogatepass")
            out.append("".join("\\x%02x" % x for x in b))
        else:
            out.append(ch)
    return "".join(out)


def _main(argv, state):
    # after --, --help, -h and --version are file names
    opts = argv[:argv.index("--") if "--" in argv else len(argv)]
    if "--help" in opts or "-h" in opts:
        print(HELP % LIBSLAB_MAJOR, end="")
        print("Reading through: %s (%s)" % (backend, backend_reason))
        return 0
    if "--version" in opts:
        print("slab.py (slab) %s" % __version__)
        return 0
    verify, paths, options = False, [], True
    for a in argv:
        if options and a == "--":
            options = False
        elif options and a == "--verify":
            verify = True
        elif options and a.startswith("-") and a != "-":
            print("slab.py: unknown option '%s'\n%s" % (_escaped(a), USAGE), file=sys.stderr)
            return 2
        else:
            paths.append(a)
    if not paths:
        print(USAGE, file=sys.stderr)
        return 2
    for p in paths:
        try:
            # the table's checksum whatever the mode, as inspect and libslab check it on
            # open: a summary does not show what a damaged table says
            f = SlabFile(p, check_table=True)
            if verify:
                f.verify()
            line = "%s: %d %s, fields %s, page size %d%s" % (
                p, f.count, _plural(f.count, "sample", "samples"), ",".join(f.names),
                f.page_size, ", verified" if verify else "")
            f.close()
        except (SlabError, OSError) as e:
            # a file name, a key or a field name in it: escaped, as the tools' messages are
            if isinstance(e, OSError) and e.filename is not None and e.strerror:
                e = "'%s': %s" % (e.filename, e.strerror)
            print("slab.py: %s" % _escaped(str(e)), file=sys.stderr)
            state["status"] = 1
            continue
        print(_escaped(line))
    return state["status"]


def _std_fds_open():
    # Started with fd 0, 1 or 2 closed ("2>&-", ">&-"), Python sets sys.stderr or sys.stdout
    # to None, and print(file=None) writes to sys.stdout: the messages would go into the data
    # (or, stdout closed too, nowhere, and the last flush would raise AttributeError). As the
    # tools' cli_init() does: /dev/null on the closed number, opened the other way, so no file
    # opened later takes it and writes to it fail as they did ("Bad file descriptor");
    # messages for a closed stderr are dropped.
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        nfd = os.open(os.devnull, os.O_WRONLY if fd == 0 else os.O_RDONLY)
        if nfd != fd:
            os.dup2(nfd, fd)
            os.close(nfd)
    if sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def main(argv):
    # A failing standard output is not a file's fault: it ends the run, once (--help and
    # --version too).
    state = {"status": 0}
    _std_fds_open()
    try:
        status = _main(argv, state)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader has had enough: stop quietly (and leave the exit's flush nothing to fail)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return state["status"]
    except OSError as e:
        print("slab.py: write error: %s" % e.strerror, file=sys.stderr)
        # the failed flush leaves its bytes in stdout's buffer, on which the exit's flush
        # would fail again (exit 120, "Exception ignored in: <stdout>"): they go nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        # Ctrl-C (a --verify of a big file): the lines printed go out, then the process dies
        # of SIGINT as the tools do, so that a shell sees 130 and stops its loop; no
        # traceback
        try:
            sys.stdout.flush()
        except OSError:
            pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
