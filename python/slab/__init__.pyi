# Types of slab's public API (scripts/slab.py, this package's __init__.py), for editors and
# type checkers: the module itself stays plain Python that runs on any Python 3. The
# descriptions are the module's docstrings. tests/pypkg.bats checks that this file names
# every public name of the module and of its classes, with the same parameters.
import os
from types import TracebackType
from typing import Any, Final, Iterable, Iterator, Literal, NamedTuple, Sequence, SupportsIndex, Union

_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]
_Bytes = Union[bytes, bytearray, memoryview]
_Size = Union[int, str]             # a byte count, or "4G" (K, M, G, T: powers of 1024)

__version__: Final[str]              # slab's version, as slab.h's and the package metadata's
MAGIC: Final[bytes]
TABLE_MAGIC: Final[bytes]
TRAILER_MAGIC: Final[bytes]
PLAN_MAGIC: Final[bytes]
PLAN_HEADER_FIXED: Final[int]
PLAN_ID_SIZE: Final[int]
PLAN_ENTRY_SIZE: Final[int]
PLAN_PAD: Final[int]
PLAN_MEMORY: Final[int]
PLAN_SUBSET: Final[int]
HEADER_SIZE: Final[int]
OPTIONS_OFFSET: Final[int]
TRAILER_SIZE: Final[int]
TABLE_HEADER_SIZE: Final[int]
SAMPLE_RECORD: Final[int]
FIELD_RECORD: Final[int]
ALIGN: Final[int]
MIN_PAGE_SIZE: Final[int]
MAX_PAGE_SIZE: Final[int]
FIELD_PRESENT: Final[int]
FIELD_JPEG: Final[int]
FIELD_TRANSCODED: Final[int]
FIELD_PNG: Final[int]
FIELD_WEBP: Final[int]
FIELD_RESTART: Final[int]
FIELD_VIDEO: Final[int]
VIDEO_RECORD: Final[int]
LIBSLAB_MAJOR: Final[int]
SLAB_ERR_IO: Final[int]
SLAB_ERR_NOTFOUND: Final[int]
MAX_IMAGE_PIXELS: Final[int]
MAX_VIDEO_FRAMES: Final[int]
USAGE: Final[str]
HELP: Final[str]

# The library in use: "libslab 0.1.0 (/path)" or "python", and why.
backend: str
backend_reason: str

def crc32c(data: _Bytes, crc: int = ...) -> int: ...
def fnv1a64(data: _Bytes) -> int: ...
def is_url(path: object) -> bool: ...

class SlabError(Exception): ...

class VideoInfo(NamedTuple):
    width: int
    height: int
    frames: int
    duration: float
    fps_num: int
    fps_den: int
    codec: str
    def count(self, value: Any, /) -> int: ...
    def index(self, value: Any, start: SupportsIndex = ..., stop: SupportsIndex = ..., /) -> int: ...

class Field:
    name: str
    data: memoryview
    offset: int
    crc: int
    width: int
    height: int
    flags: int
    order: int
    video: VideoInfo | None
    def __init__(self, name: str, data: memoryview, offset: int, crc: int, width: int,
                 height: int, flags: int, order: int, video: VideoInfo | None = ...) -> None: ...
    @property
    def is_jpeg(self) -> bool: ...
    @property
    def format(self) -> Literal["jpeg", "png", "webp", "video"] | None: ...

class Sample:
    key: str
    file: int | None                # None from a SlabFile, the file's number from a Dataset
    index: int
    offset: int
    size: int
    page: int
    def __init__(self, key: str, file: int | None, index: int, offset: int, size: int,
                 page: int, fields: Sequence[Field]) -> None: ...
    @property
    def fields(self) -> dict[str, memoryview]: ...
    def field(self, name: str) -> Field: ...
    def __getitem__(self, name: str) -> memoryview: ...
    def __contains__(self, name: object) -> bool: ...

class SlabFile:
    path: _Path
    version: tuple[int, int]
    page_size: int
    data_offset: int
    header_crc: int
    options: dict[str, str]
    names: list[str]
    count: int
    page_count: int
    table_offset: int
    table_size: int
    table_crc: int
    def __init__(self, path: _Path, check_table: bool = ..., *, cache_dir: _Path | None = ...,
                 endpoint: str | None = ..., profile: str | None = ..., region: str | None = ...,
                 addressing: Literal["path", "virtual", "auto"] | None = ...,
                 anonymous: bool = ..., connections: int | None = ..., retries: int | None = ...,
                 timeout: float | None = ...) -> None: ...
    def __len__(self) -> int: ...
    def close(self) -> None: ...
    def __getitem__(self, i: int) -> Sample: ...
    def key(self, i: int) -> str: ...
    def sample(self, i: int) -> Sample: ...
    def find(self, key: str) -> int | None: ...
    def video(self, i: int, name: str) -> VideoInfo | None: ...
    def verify(self) -> None: ...

class Dataset:
    files: list[SlabFile]
    def __init__(self, paths: _Path | Iterable[_Path], check_table: bool = ..., *,
                 cache_dir: _Path | None = ..., endpoint: str | None = ...,
                 profile: str | None = ..., region: str | None = ...,
                 addressing: Literal["path", "virtual", "auto"] | None = ...,
                 anonymous: bool = ..., connections: int | None = ..., retries: int | None = ...,
                 timeout: float | None = ...) -> None: ...
    def __len__(self) -> int: ...
    def locate(self, i: int) -> tuple[int, int]: ...
    def __getitem__(self, i: int) -> Sample: ...
    def sample(self, file: int, index: int) -> Sample: ...
    def by_key(self, key: str, file: int | None = ...) -> Sample: ...
    def identities(self) -> list[tuple[int, int, int, int]]: ...
    def close(self) -> None: ...

def read_plan(path: _Path, dataset: Dataset | None = ...) -> list[tuple[int, int]]: ...

class Batch:
    number: int
    skipped: int
    images: memoryview | None       # (n, H, W, C) or (n, C, H, W), "B"; video: (n, T, H, W, 3)
                                    # or (n, 3, T, H, W); None in raw mode
    labels: memoryview | None       # (n,), "q" (int64); None without labels=
    def __init__(self, ld: Loader, h: int, own: Any) -> None: ...
    def __len__(self) -> int: ...
    def image(self, j: int) -> memoryview: ...
    @property
    def clips(self) -> memoryview | None: ...
    @property
    def samples(self) -> list[tuple[int, int]]: ...
    @property
    def positions(self) -> list[int]: ...
    @property
    def keys(self) -> list[str]: ...
    @property
    def fields(self) -> dict[str, list[memoryview | None]]: ...
    def release(self) -> None: ...

class Loader:
    seed: int
    epoch: int
    batch_size: int
    fields: list[str]
    def __init__(self, paths: _Path | Iterable[_Path], plan: _Path | None = ...,
                 batch_size: int = ..., threads: int = ..., fields: Iterable[str] | None = ...,
                 image: str | None = ..., size: tuple[int, int] = ...,
                 crop: Literal["random-resized", "center", "none"] | None = ...,
                 flip: bool = ..., seed: int | None = ..., epoch: int | None = ...,
                 chw: bool = ..., scale: tuple[float, float] = ...,
                 ratio: tuple[float, float] = ..., drop_last: bool = ...,
                 ahead: int | None = ..., release: bool = ..., verify: bool = ...,
                 on_error: Literal["raise", "skip"] = ..., ring: int | None = ...,
                 order: Literal["sequential", "random", "quasi"] = ..., window: int | None = ...,
                 rank: int = ..., world_size: int = ..., start: int = ...,
                 subset: Iterable[int | str | bytes] | None = ..., memory: _Size = ...,
                 next_plans: _Path | Iterable[_Path] = ...,
                 cache_policy: Literal["belady", "fixed"] = ..., max_pixels: int | None = ...,
                 max_scans: int | None = ..., labels: str | None = ...,
                 center_ratio: float = ..., channels: Literal[1, 3, 4] | None = ...,
                 alpha: Literal["drop", "composite", "keep"] | None = ...,
                 background: tuple[int, int, int] | None = ...,
                 resize: Literal["bilinear", "nearest"] = ..., disk: _Size = ...,
                 video: str | None = ..., frames: int = ..., stride: int = ...,
                 fps: float | None = ...,
                 clip_start: Literal["random", "center", "begin"] = ...,
                 on_short: Literal["pad", "loop", "error"] = ...,
                 max_frames: int | None = ..., *,
                 cache_dir: _Path | None = ..., endpoint: str | None = ...,
                 profile: str | None = ..., region: str | None = ...,
                 addressing: Literal["path", "virtual", "auto"] | None = ...,
                 anonymous: bool = ..., connections: int | None = ..., retries: int | None = ...,
                 timeout: float | None = ...) -> None: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> Loader: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...
    def next_batch(self) -> Batch | None: ...
    def __iter__(self) -> Iterator[Batch]: ...
    def __next__(self) -> Batch: ...
    @property
    def skipped(self) -> int: ...
    @property
    def error(self) -> str: ...
    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...

def main(argv: Sequence[str]) -> int: ...
