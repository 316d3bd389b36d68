"""The embedding cache: each vector computed once per process, and optionally once ever.

A vector is looked up by ``(model digest, prefix, text)``: the same text under the same
weights and prefix has the same vector whoever asks -- every chunker configuration of a run,
the ``semantic`` chunker's sentences, the queries. In memory it is the process cache
``encoders.vectors`` of :mod:`chunkeval.caches` (first in, first out, bounded by
:data:`MAX_VECTORS`). On disk (``--cache DIR``, or the environment variable
:data:`CACHE_ENV`), vectors computed by a run are written as one new ``.npz`` file per call,
under a temporary name moved into place, so concurrent runs never see a half-written file and
never write the same file; the oldest files are removed once the folder passes its size bound
(:data:`CACHE_BYTES_ENV`, default 1 GiB).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from chunkeval._atomic import atomic_write_path
from chunkeval.caches import store

__all__ = ["CACHE_BYTES_ENV", "CACHE_ENV", "MAX_VECTORS", "cached_vectors", "disk_cache_dir"]

#: Environment variable naming the on-disk cache folder (set by ``chunkeval run --cache DIR``;
#: an environment variable reaches pool workers too).
CACHE_ENV = "CHUNKEVAL_EMBEDDING_CACHE"
#: Environment variable bounding the on-disk cache, in bytes.
CACHE_BYTES_ENV = "CHUNKEVAL_EMBEDDING_CACHE_BYTES"
#: Vectors kept in memory (384 float32 each for MiniLM: about 200 MB at the bound).
MAX_VECTORS = 131_072
_DEFAULT_BYTES = 1 << 30

_VECTORS: dict = store("encoders.vectors")
_DISK_LOADED: dict = store("encoders.disk_loaded")  # (folder, digest) -> loaded?


def disk_cache_dir() -> Path | None:
    """The on-disk cache folder in force, or None."""
    value = os.environ.get(CACHE_ENV)
    return Path(value) if value else None


def _key_hash(prefix: str, text: str) -> str:
    return hashlib.sha256(f"{prefix}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _remember(key: tuple[str, str], vector: np.ndarray) -> None:
    _VECTORS[key] = vector
    while len(_VECTORS) > MAX_VECTORS:
        del _VECTORS[next(iter(_VECTORS))]  # dicts keep insertion order: the oldest goes


def _load_disk(folder: Path, digest: str) -> None:
    """Read every file of ``folder/<digest>`` into memory, once per process."""
    if _DISK_LOADED.get((str(folder), digest)):
        return
    _DISK_LOADED[(str(folder), digest)] = True
    for path in sorted((folder / digest[:32]).glob("*.npz")):
        try:
            with np.load(path) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):  # removed by another run's pruning, or foreign
            continue
        for k, v in zip(keys.tolist(), vectors, strict=True):
            _remember((digest, k), v)


def _save_disk(folder: Path, digest: str, keys: list[str], vectors: np.ndarray) -> None:
    target = folder / digest[:32]
    target.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, keys=np.array(keys), vectors=vectors)

    atomic_write_path(target / f"{uuid.uuid4().hex}.npz", write)
    _prune(folder, int(os.environ.get(CACHE_BYTES_ENV, _DEFAULT_BYTES)))


def _prune(folder: Path, max_bytes: int) -> None:
    """Remove the oldest files until the folder holds at most ``max_bytes``."""
    files = []
    for p in folder.glob("*/*.npz"):
        try:
            st = p.stat()
        except FileNotFoundError:
            continue
        files.append((st.st_mtime_ns, st.st_size, p))
    total = sum(size for _, size, _ in files)
    for _, size, p in sorted(files):
        if total <= max_bytes:
            break
        p.unlink(missing_ok=True)
        total -= size


def cached_vectors(
    digest: str, prefix: str, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """Vectors of ``prefix + text`` for each text, computing only those never seen.

    Parameters
    ----------
    digest : str
        The weights' sha256 (vectors of different weights never mix).
    prefix : str
        The prefix the model reads before each text (``"query: "``), part of the key.
    texts : sequence of str, length n
    compute : callable(list of str) -> ndarray (m, d)
        Embeds the distinct unseen texts, given *with* their prefix.

    Returns
    -------
    ndarray of float32, shape (n, d)
    """
    folder = disk_cache_dir()
    if folder is not None:
        _load_disk(folder, digest)
    keys = [(digest, _key_hash(prefix, t)) for t in texts]
    found = {k: _VECTORS[k] for k in keys if k in _VECTORS}  # before inserting evicts any
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        fresh = np.asarray(compute([prefix + text_of[k] for k in missing]), dtype=np.float32)
        for k, v in zip(missing, fresh, strict=True):
            _remember(k, v)
            found[k] = v
        if folder is not None:
            _save_disk(folder, digest, [k[1] for k in missing], fresh)
    rows = [found[k] for k in keys]
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(rows)
