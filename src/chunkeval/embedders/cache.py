"""The embedding cache: each vector computed once per process, optionally once ever, never a wrong one.

A vector is looked up by ``(namespace, prefix, text)``. The *namespace* is the sha256 of
everything that changes a vector apart from the text and prefix (:func:`cache_namespace` of
the embedder's identity: weights digest, architecture config, tokenizer, window, pooling and
normalisation for a local model; model name, host and request parameters for an endpoint),
so vectors of two models, or of one model read two ways, never mix.

In memory the cache is the process cache ``encoders.vectors`` of :mod:`chunkeval.caches`
(first in, first out, bounded by :data:`MAX_VECTORS`). On disk (``--cache DIR``, or the
environment variable :data:`CACHE_ENV`) each batch of fresh vectors is written, as soon as it
is computed, to a new file ``DIR/<namespace[:32]>/<random>.vec`` under a temporary name moved
into place: concurrent runs never read a half-written file and never write the same one, and
an interrupted run keeps every batch it finished. The oldest files are removed once the folder
passes its size bound (:data:`CACHE_BYTES_ENV`, default 1 GiB).

A ``.vec`` file is checked whole before any of its vectors is used (:func:`read_vector_file`):
its magic line, a JSON header naming its namespace, count, dimension and the sha256 of the
rest, the exact length that implies, and that checksum. A file that fails (another model's
entry, truncated, a flipped byte) or does not belong (a foreign or oddly named file) is moved
to ``DIR/set-aside/`` with one :class:`CacheWarning` line, and its vectors are recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chunkeval._atomic import atomic_write_path
from chunkeval.caches import store
from chunkeval.errors import CacheWarning, EnvironmentFailure, UsageError

__all__ = [
    "CACHE_BYTES_ENV",
    "CACHE_ENV",
    "MAX_VECTORS",
    "CacheWarning",
    "cache_namespace",
    "cached_vectors",
    "check_cache_folder",
    "disk_cache_dir",
    "read_vector_file",
]

#: Environment variable naming the on-disk cache folder (set by ``chunkeval run --cache DIR``;
#: an environment variable reaches pool workers too).
CACHE_ENV = "CHUNKEVAL_EMBEDDING_CACHE"
#: Environment variable bounding the on-disk cache, in bytes.
CACHE_BYTES_ENV = "CHUNKEVAL_EMBEDDING_CACHE_BYTES"
#: Vectors kept in memory (384 float32 each for MiniLM: about 200 MB at the bound).
MAX_VECTORS = 131_072
#: The folder, inside the cache folder, that bad files are moved to.
SET_ASIDE = "set-aside"
_DEFAULT_BYTES = 1 << 30
_MAGIC = b"chunkeval-vectors 1\n"
_MAX_HEADER = 4096
_KEY_BYTES = 32  # a raw sha256 of prefix and text
_FILE_NAME = re.compile(r"[0-9a-f]{32}\.vec")
_TEMP_NAME = re.compile(r"\.[0-9a-f]{32}\.vec\..+\.tmp")
_STALE_TEMP_S = 3600  # a temporary file this old belongs to a run that died

_VECTORS: dict = store("encoders.vectors")
# (folder, namespace) -> read into memory; (folder, "") -> the folder checked usable
_DISK_LOADED: dict = store("encoders.disk_loaded")


def cache_namespace(identity: Mapping[str, Any]) -> str:
    """The namespace of an embedder's vectors: sha256 of its identity as canonical JSON.

    Parameters
    ----------
    identity : mapping
        JSON-serialisable; everything that changes a vector besides the text and its prefix.

    Returns
    -------
    str
        64 lower-case hex digits.
    """
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def disk_cache_dir() -> Path | None:
    """The on-disk cache folder in force, or None."""
    value = os.environ.get(CACHE_ENV)
    return Path(value) if value else None


def check_cache_folder(folder: str | os.PathLike) -> Path:
    """Make sure ``folder`` can hold the cache: a folder (created when absent) this process can write.

    Parameters
    ----------
    folder : str or path-like

    Returns
    -------
    Path
        The folder.

    Raises
    ------
    UsageError
        It is a file, cannot be created, or cannot be written; the message names it.
    """
    path = Path(folder)
    if _DISK_LOADED.get((str(path), "")):
        return path
    if path.exists() and not path.is_dir():
        raise UsageError(f"embedding cache {path} is a file, not a folder; give a folder with --cache DIR")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise UsageError(
            f"embedding cache folder {path} cannot be used ({error.strerror or error}); give a "
            "folder you can write with --cache DIR"
        ) from None
    _DISK_LOADED[(str(path), "")] = True
    return path


def _key_hash(prefix: str, text: str) -> bytes:
    return hashlib.sha256(f"{prefix}\0{text}".encode("utf-8", "surrogatepass")).digest()


def _remember(key: tuple[str, bytes], vector: np.ndarray) -> None:
    _VECTORS[key] = vector
    while len(_VECTORS) > MAX_VECTORS:
        del _VECTORS[next(iter(_VECTORS))]  # dicts keep insertion order: the oldest goes


# -- the file format ---------------------------------------------------------------------------


def _encode_file(namespace: str, keys: Sequence[bytes], vectors: np.ndarray) -> bytes:
    """The bytes of a ``.vec`` file: magic line, JSON header line, keys, float32 vectors."""
    body = b"".join(keys) + np.ascontiguousarray(vectors, dtype="<f4").tobytes()
    header = {
        "namespace": namespace,
        "count": len(keys),
        "dim": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    return _MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + body


class _BadFile(ValueError):
    """Why a cache file cannot be used."""


def read_vector_file(data: bytes, namespace: str) -> tuple[list[bytes], np.ndarray]:
    r"""The keys and vectors of a ``.vec`` file's bytes, checked whole.

    Parameters
    ----------
    data : bytes
        The file's content.
    namespace : str
        The namespace the file must belong to.

    Returns
    -------
    keys : list of bytes, length n
        32-byte sha256 of ``prefix + "\0" + text`` each.
    vectors : ndarray of float32, shape (n, dim)

    Raises
    ------
    ValueError
        Naming the first check that fails: magic, header, namespace, length, checksum,
        non-finite values (the message continues "the file ...").
    """
    if not data.startswith(_MAGIC):
        raise _BadFile("is not a chunkeval vector file")
    end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _MAX_HEADER)
    try:
        header = json.loads(data[len(_MAGIC) : end]) if end > 0 else None
        if not isinstance(header, dict):
            raise TypeError
        count, dim, digest = int(header["count"]), int(header["dim"]), str(header["sha256"])
    except (ValueError, TypeError, KeyError):
        raise _BadFile("has an unreadable header") from None
    if header.get("namespace") != namespace:
        raise _BadFile("belongs to another model or configuration")
    body = data[end + 1 :]
    if count < 0 or dim < 0 or len(body) != count * (_KEY_BYTES + 4 * dim):
        raise _BadFile(f"has {len(body):,} bytes of data where its header announces {count} vectors of {dim}")
    if hashlib.sha256(body).hexdigest() != digest:
        raise _BadFile("fails its checksum (damaged)")
    keys = [body[i * _KEY_BYTES : (i + 1) * _KEY_BYTES] for i in range(count)]
    vectors = np.frombuffer(body, dtype="<f4", offset=count * _KEY_BYTES).reshape(count, dim)
    if not np.isfinite(vectors).all():
        raise _BadFile("holds non-finite values")
    return keys, vectors.astype(np.float32)


# -- the folder --------------------------------------------------------------------------------


def _set_aside(folder: Path, path: Path, why: str) -> None:
    """Move a bad cache file to ``folder/set-aside`` and warn once.

    Move a bad file to ``folder/set-aside`` and warn once; a file already moved (by a
    concurrent run) is left to that run's warning.
    """
    target = folder / SET_ASIDE / f"{uuid.uuid4().hex[:8]}-{path.parent.name}-{path.name}"
    try:
        target.parent.mkdir(exist_ok=True)
        os.replace(path, target)
    except FileNotFoundError:
        return
    except OSError as error:
        raise EnvironmentFailure(f"embedding cache: cannot set aside {path} ({error.strerror})") from None
    warnings.warn(
        CacheWarning(f"embedding cache file {path} {why}; moved to {target}, its vectors are recomputed"),
        stacklevel=3,
    )


def _load_disk(folder: Path, namespace: str) -> None:
    """Read every good file of ``folder/<namespace[:32]>`` into memory, once per process."""
    if _DISK_LOADED.get((str(folder), namespace)):
        return
    _DISK_LOADED[(str(folder), namespace)] = True
    here = folder / namespace[:32]
    if not here.is_dir():
        return
    for path in sorted(here.iterdir()):
        if _TEMP_NAME.fullmatch(path.name):
            continue  # another run is writing it
        if not _FILE_NAME.fullmatch(path.name) or not path.is_file():
            _set_aside(folder, path, "is not a file the cache writes")
            continue
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # pruned by a concurrent run
            continue
        except OSError as error:
            raise EnvironmentFailure(f"embedding cache: cannot read {path} ({error.strerror})") from None
        try:
            keys, vectors = read_vector_file(data, namespace)
        except _BadFile as bad:
            _set_aside(folder, path, str(bad))
            continue
        for k, v in zip(keys, vectors, strict=True):
            _remember((namespace, k), v)


def _save_disk(folder: Path, namespace: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
    target = folder / namespace[:32]
    data = _encode_file(namespace, keys, vectors)

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    try:
        target.mkdir(parents=True, exist_ok=True)
        atomic_write_path(target / f"{uuid.uuid4().hex}.vec", write)
    except OSError as error:
        raise EnvironmentFailure(
            f"embedding cache: cannot write to {target} ({error.strerror or error})"
        ) from None
    _prune(folder, int(os.environ.get(CACHE_BYTES_ENV, _DEFAULT_BYTES)))


def _prune(folder: Path, max_bytes: int) -> None:
    """Remove the oldest files until the folder holds at most ``max_bytes``.

    Set-aside files and dead runs' temporary files go first.
    """
    files = []
    now = time.time()
    for p in folder.glob("*/*"):
        try:
            st = p.stat()
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # a folder set aside: its files are not the cache's
        if _TEMP_NAME.fullmatch(p.name):
            if now - st.st_mtime < _STALE_TEMP_S:
                continue  # being written
            p.unlink(missing_ok=True)
            continue
        first = p.parent.name != SET_ASIDE  # set-aside files go first
        files.append((first, st.st_mtime_ns, st.st_size, p))
    total = sum(size for _, _, size, _ in files)
    for _, _, size, p in sorted(files):
        if total <= max_bytes:
            break
        p.unlink(missing_ok=True)
        total -= size


# -- the look-up -------------------------------------------------------------------------------

#: What ``compute`` may return: all vectors at once, or batches ``(positions, vectors)`` as
#: they arrive (each cached at once).
Computed = np.ndarray | Iterable[tuple[Sequence[int], np.ndarray]]


def cached_vectors(
    namespace: str, prefix: str, texts: Sequence[str], compute: Callable[[list[str]], Computed]
) -> np.ndarray:
    """Vectors of ``prefix + text`` for each text, computing only those never seen.

    Parameters
    ----------
    namespace : str
        :func:`cache_namespace` of the embedder's identity (vectors of different namespaces
        never mix).
    prefix : str
        The prefix the model reads before each text (``"query: "``), part of the key.
    texts : sequence of str, length n
    compute : callable(list of str) -> ndarray (m, d) or iterable of (positions, ndarray)
        Embeds the m distinct unseen texts, given *with* their prefix: all at once, or in
        batches of ``(positions into that list, vectors)``, each cached (on disk too) as soon
        as it is yielded, so an interrupted call keeps what it finished.

    Returns
    -------
    ndarray of float32, shape (n, d)

    Raises
    ------
    UsageError
        The cache folder cannot be used, or vectors of one namespace differ in dimension (the
        model behind one name changed: clear the cache folder).
    EnvironmentFailure
        The cache folder cannot be read or written.
    """
    folder = disk_cache_dir()
    if folder is not None:
        check_cache_folder(folder)
        _load_disk(folder, namespace)
    keys = [(namespace, _key_hash(prefix, t)) for t in texts]
    found = {k: _VECTORS[k] for k in keys if k in _VECTORS}  # before inserting evicts any
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        computed = compute([prefix + text_of[k] for k in missing])
        batches = [(range(len(missing)), computed)] if isinstance(computed, np.ndarray) else computed
        for positions, vectors in batches:
            fresh = np.asarray(vectors, dtype=np.float32)
            batch = [missing[i] for i in positions]
            for k, v in zip(batch, fresh, strict=True):
                _remember(k, v)
                found[k] = v
            if folder is not None and batch:
                _save_disk(folder, namespace, [k[1] for k in batch], fresh)
    rows = [found[k] for k in keys]
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    if len({len(r) for r in rows}) > 1:
        dims = sorted({len(r) for r in rows})
        where = f" in {folder}" if folder is not None else ""
        raise UsageError(
            f"embedding cache{where}: vectors of one model have dimensions {dims}; the model behind "
            "the same name changed: remove the cache folder and run again"
        )
    return np.stack(rows)
