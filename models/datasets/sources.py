"""Where raw dataset files come from: one base location, one code path for URLs and local folders.

A :class:`RawSource` is an upstream repository (HyperGCN, AllSet, ...). A file of it is addressed by a path
relative to the source, e.g. ``data/cocitation/cora/features.pickle`` of HyperGCN. The base location is

1. ``raw_root=`` when given, else the environment variable ``HYPERGVL_RAW_ROOT``: a folder (or URL) laid out
   like ``../shared/data``, i.e. ``<raw_root>/<source.local_dir>/<path>``
   (``<raw_root>/HyperGCN/data/cocitation/cora/features.pickle``);
2. otherwise the upstream URL ``<source.url>/<path>``.

Both resolve to one location string, read by :func:`read_location`: ``http(s)://`` and ``file://`` through
``urllib`` (HTTP downloads are cached under ``HYPERGVL_CACHE``, default ``~/.cache/hypergvl/raw``, written via a
temporary file and a rename), anything else with ``open``. A missing file raises ``FileNotFoundError`` naming
the exact location.
"""
from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from hypergvl.atomic import write_bytes

__all__ = ["RawSource", "RawReader", "read_location", "RAW_ROOT_ENV", "is_url"]

RAW_ROOT_ENV = "HYPERGVL_RAW_ROOT"
CACHE_ENV = "HYPERGVL_CACHE"
_URL_SCHEMES = ("http", "https", "file")


def is_url(location: str) -> bool:
    return urllib.parse.urlparse(str(location)).scheme in _URL_SCHEMES


def _join(base: str, *parts: str) -> str:
    if is_url(base):
        return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])
    return str(Path(base, *parts))


@dataclass(frozen=True)
class RawSource:
    """An upstream repository of raw files.

    Args:
        name: short name used in messages and dataset cards.
        local_dir: the folder of this source inside a local raw root (``HyperGCN``,
            ``AllSet/data/AllSet_all_raw_data``).
        url: the upstream base URL files are fetched from by default, or ``None`` when upstream only
            distributes an archive (then a raw root is required).
        homepage: the human-facing page of the source (for cards and error messages).
    """

    name: str
    local_dir: str
    url: str | None
    homepage: str


class RawReader:
    """Reads the files of one :class:`RawSource` from a resolved base location.

    >>> reader = RawReader(RawSource("X", "X", None, ""), raw_root="/data")
    >>> reader.location("a/b.txt")
    '/data/X/a/b.txt'
    """

    def __init__(self, source: RawSource, raw_root: str | os.PathLike | None = None):
        self.source = source
        root = raw_root if raw_root is not None else os.environ.get(RAW_ROOT_ENV) or None
        if root is not None:
            self.base = _join(str(root), source.local_dir)
        elif source.url is not None:
            self.base = source.url
        else:
            self.base = None

    def location(self, relpath: str) -> str:
        if self.base is None:
            raise FileNotFoundError(
                f"{self.source.name} raw file '{relpath}' has no download URL (upstream distributes it only as an "
                f"archive, see {self.source.homepage}); put it at <raw_root>/{self.source.local_dir}/{relpath} and "
                f"pass raw_root= or set {RAW_ROOT_ENV}")
        return _join(self.base, relpath)

    def read_bytes(self, relpath: str) -> bytes:
        return read_location(self.location(relpath))


def _cache_path(url: str) -> Path:
    parsed = urllib.parse.urlparse(url)
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hypergvl" / "raw")
    return root / parsed.netloc / parsed.path.lstrip("/")


def read_location(location: str) -> bytes:
    """The bytes at ``location`` (URL or local path); ``FileNotFoundError`` names it when it is missing."""
    if not is_url(location):
        path = Path(location)
        if not path.is_file():
            raise FileNotFoundError(f"raw file missing: {path}")
        return path.read_bytes()
    scheme = urllib.parse.urlparse(location).scheme
    cached = _cache_path(location) if scheme in ("http", "https") else None
    if cached is not None and cached.is_file():
        return cached.read_bytes()
    try:
        with urllib.request.urlopen(location, timeout=60) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            chunks = []
            with tqdm(total=total, unit="B", unit_scale=True, desc=f"download {Path(location).name}",
                      disable=True if scheme == "file" else None, leave=False) as bar:
                while chunk := response.read(1 << 20):
                    chunks.append(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise FileNotFoundError(f"raw file missing: {location} (HTTP 404)") from None
        raise OSError(f"could not download {location}: HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, FileNotFoundError) or scheme == "file":
            raise FileNotFoundError(f"raw file missing: {location}") from None
        raise OSError(f"could not download {location} ({err.reason}); offline? Point raw_root= or "
                      f"{RAW_ROOT_ENV} at a local copy laid out like <root>/<source>/<path>") from None
    data = b"".join(chunks)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(cached, data)
    return data
