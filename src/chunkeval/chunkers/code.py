"""Which code outside chunkeval a chunker runs, so that a later run can tell it is the same code.

A configuration is re-run faithfully from its spec only when the code behind it is the same:
chunkeval's own chunkers are fixed by their parameters (and by chunkeval's version, which a
comparison notes), but an external splitter (``langchain:``, ``chonkie:``, ``llama_index:``,
``semchunk``) is fixed by its library's version, and a ``python:`` plug-in or a registered
plug-in chunker by its package's version or, for a module of no installed distribution (a
module in the repository), by the SHA-256 of its source file; an embedding chunker's neural
model (``semantic(embedder='minilm')``, ``bert:PATH``) by its model id, revision and weights'
SHA-256 (:meth:`chunkeval.embedders.models.ModelFolder.identity`). :func:`code_identity`
records them; a run's manifest keeps it per configuration (``configs[].code``).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunkeval.protocols import ChunkerLike

__all__ = ["code_identity"]


@cache
def _distributions() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def _module_identity(module: str) -> dict[str, str] | None:
    """``{"version": ...}`` of the module's distribution, else ``{"sha256": ...}`` of its file."""
    top = module.split(".")[0]
    if top == "chunkeval":
        return None
    for dist in _distributions().get(top, []):
        try:
            return {"version": f"{dist} {metadata.version(dist)}"}
        except metadata.PackageNotFoundError:  # pragma: no cover - a stale mapping
            continue
    loaded = sys.modules.get(module)
    path = getattr(loaded, "__file__", None)
    if path and Path(path).is_file():
        return {"sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}
    return {"version": "unknown"}


def _module_of(obj: object) -> str | None:
    target = obj if inspect.isroutine(obj) or inspect.isclass(obj) else type(obj)
    module = getattr(target, "__module__", None)
    return module if isinstance(module, str) else None


def _model_identity(chunker: object) -> dict[str, str | None] | None:
    """The identity of an embedding chunker's neural model (never its folder), else None."""
    spec = getattr(chunker, "embedder", None)
    if spec is None:
        return None
    from chunkeval.embedders import get_embedder
    from chunkeval.embedders.bert import BertEmbedder
    from chunkeval.embedders.models import resolve_model

    try:
        embedder = get_embedder(spec)
    except Exception:  # an object get_embedder does not take: it ran, so it has no spec to check
        return None
    if not isinstance(embedder, BertEmbedder) or not isinstance(embedder.model, str):
        return None  # lexical embedders are chunkeval's code; an endpoint's model is in its spec
    try:
        return resolve_model(embedder.model).identity()
    except Exception as exc:  # the model is gone: recorded as such, so a comparison says so
        return {"unavailable": " ".join(str(exc).split())[:120]}


def code_identity(chunker: ChunkerLike, spec: str | None = None) -> dict[str, dict[str, str | None]]:
    """The code outside chunkeval that ``chunker`` runs: each module with its version or file digest.

    Parameters
    ----------
    chunker : Chunker or chunker-like object
        A built chunker (an external one holds its splitter in ``splitter``, one built from a
        spec in ``splitter_`` once used).
    spec : str, optional
        The spec it was built from; a ``python:MODULE:FACTORY`` spec adds the factory's module.

    Returns
    -------
    dict of str to dict
        Module name -> ``{"version": "DIST VERSION"}`` (the installed distribution that provides
        it) or ``{"sha256": HEX}`` (the source file of a module no distribution provides), and
        ``"model"`` -> ``{"model_id", "revision", "sha256"}`` for a neural model; empty for a
        chunker that runs only chunkeval's code.
    """
    # the splitter an ExternalChunker holds, or a SpecChunker built (and LlamaIndex's parser)
    parts = [chunker, getattr(chunker, "splitter", None), getattr(chunker, "splitter_", None)]
    parts += [getattr(p, "parser", None) for p in parts[1:] if p is not None]
    modules = [_module_of(p) for p in parts if p is not None]
    for text in (spec or "", str(getattr(chunker, "target", "") or "")):
        if text.strip().startswith("python:"):
            modules.append(text.strip()[len("python:") :].split(":", 1)[0].strip())
    out: dict[str, dict[str, str | None]] = {}
    for module in dict.fromkeys(m for m in modules if m and m != "builtins"):
        found = _module_identity(module)
        if found is not None:
            out[module] = dict(found)
    model = _model_identity(chunker)
    if model is not None:
        out["model"] = model
    return out
