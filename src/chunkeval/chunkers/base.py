"""The chunker base class and the chunker registry.

Building a chunker from a spec (:func:`~chunkeval.chunkers.lookup.get_chunker`) lives in
:mod:`chunkeval.chunkers.lookup`, above this module and the external adapters, so that
neither imports the other.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from chunkeval._params import Params
from chunkeval.errors import UsageError
from chunkeval.registry import Registry
from chunkeval.text import count_words
from chunkeval.tokenizers import Tokenizer, get_tokenizer
from chunkeval.types import Chunk, Document

#: Entry point group through which installed packages add chunkers.
ENTRY_POINT_GROUP = "chunkeval.chunkers"


@dataclass(frozen=True)
class PluginFactory:
    """A plug-in entry point naming a callable that returns a splitter or a chunker.

    ``NAME(arg=1)`` then builds ``python:TARGET(arg=1)`` (see
    :mod:`chunkeval.chunkers.external_specs`).

    Attributes
    ----------
    target : str
        The entry point's ``"module:attribute"``.
    """

    target: str


def _plugin_entry(name: str, obj: Any, target: str) -> type[Chunker] | PluginFactory:
    """What a ``chunkeval.chunkers`` entry point registers.

    A Chunker subclass under its entry point name, or any other callable as a
    :class:`PluginFactory`.
    """
    if isinstance(obj, type) and issubclass(obj, Chunker):
        obj.name = name
        return obj
    if callable(obj):
        return PluginFactory(target)
    raise TypeError(
        f"expected a Chunker subclass or a callable returning a splitter, got {type(obj).__name__}"
    )


CHUNKERS: Registry[type[Chunker] | PluginFactory] = Registry(
    "chunker", entry_point_group=ENTRY_POINT_GROUP, adapt=_plugin_entry
)

#: The built-in families: name -> ``"module:Class"``. A name resolves by importing its own
#: module alone (whose ``@register_chunker`` registers the class), on its first look-up; the
#: listing (:meth:`~chunkeval.registry.Registry.names`) imports none.
BUILTIN_CHUNKERS = {
    "fixed": "chunkeval.chunkers.fixed:FixedChunker",
    "sentence": "chunkeval.chunkers.sentence:SentenceChunker",
    "paragraph": "chunkeval.chunkers.paragraph:ParagraphChunker",
    "token_budget": "chunkeval.chunkers.budget:TokenBudgetChunker",
    "balanced": "chunkeval.chunkers.budget:BalancedChunker",
    "semantic": "chunkeval.chunkers.semantic:SemanticChunker",
    "kamradt": "chunkeval.chunkers.kamradt:KamradtChunker",
    "cluster": "chunkeval.chunkers.cluster:ClusterChunker",
}
for _name, _target in BUILTIN_CHUNKERS.items():
    CHUNKERS.add_lazy(_name, _target)


class Chunker(Params):
    """Base class of every chunker: turns a text into chunks with exact offsets.

    Subclasses store their constructor parameters unchanged (so
    ``get_params`` feeds result manifests, as in scikit-learn, without
    importing it: see :class:`chunkeval._params.Params`), check them in
    :meth:`_check_params` and implement :meth:`spans`.

    Invariants, checked for every registered chunker by one test battery:
    ``chunk.text == text[chunk.start:chunk.end]``; every non-whitespace
    character lies in some chunk; starts strictly increase; no chunk is empty
    or whitespace-only (such windows carry no text and are left out); chunks respect :attr:`size_limit` except a single
    unit (sentence, paragraph word, token) that alone exceeds it.
    """

    #: Registry name, set by :func:`register_chunker`.
    name: str = ""
    #: The ``tokenizer`` value ``tokenizer_`` was resolved from (set by ``_check_tokenizer``).
    _tokenizer_spec_: str | Tokenizer | None
    #: Parameters added after configurations were recorded: left out of :attr:`spec` and
    #: :meth:`describe` while at their default, so that the configurations of earlier runs and
    #: baselines keep their names (``cluster``'s ``method``).
    later_params: tuple[str, ...] = ()

    def _check_params(self) -> None:
        """Raise ``ValueError`` naming the parameter and its allowed range."""

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Half-open code-point ranges of the chunks of ``text``, in order."""
        raise NotImplementedError

    @property
    def size_limit(self) -> tuple[int | None, str]:
        """``(limit, unit)``: the configured chunk size limit and its unit."""
        raise NotImplementedError

    def measure(self, text: str) -> int:
        """Size of ``text`` in this chunker's unit (characters, words or tokens)."""
        unit = self.size_limit[1]
        if unit == "chars":
            return len(text)
        if unit == "words":
            return count_words(text)
        return self._tokenizer().count(text)

    def measure_many(self, texts: list[str]) -> np.ndarray:
        """:meth:`measure` of each text, for texts measured once (nothing is cached).

        Parameters
        ----------
        texts : list of str

        Returns
        -------
        ndarray of int64, shape (len(texts),)
            Sizes in this chunker's unit; token counts come from
            :func:`chunkeval.tokenizers.count_many`.
        """
        if type(self).measure is not Chunker.measure:  # a chunker that measures its own way
            return np.fromiter(map(self.measure, texts), dtype=np.int64, count=len(texts))
        unit = self.size_limit[1]
        if unit == "chars":
            return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        if unit == "words":
            return np.fromiter(map(count_words, texts), dtype=np.int64, count=len(texts))
        from chunkeval.tokenizers import count_many

        return count_many(self._tokenizer(), texts)

    def _check_tokenizer(self) -> None:
        """Resolve ``self.tokenizer`` (once per value), turning a bad spec into ``ValueError``."""
        spec = getattr(self, "tokenizer", "regex")
        if getattr(self, "tokenizer_", None) is not None and self._tokenizer_spec_ is spec:
            return
        try:
            self.tokenizer_ = get_tokenizer(spec)
        except (ValueError, TypeError, OSError) as error:
            raise UsageError(f"tokenizer: {error}") from None
        self._tokenizer_spec_ = spec

    def _tokenizer(self) -> Tokenizer:
        # Resolved once per instance (its count cache lives there); the spec stays in get_params().
        self._check_tokenizer()
        return self.tokenizer_

    def chunk(self, text: str, doc_id: str = "") -> list[Chunk]:
        """Chunk ``text``.

        Parameters
        ----------
        text : str
            The document text.
        doc_id : str, default ""
            Id stored in every chunk.

        Returns
        -------
        list of Chunk
            In document order, ``chunk.text == text[chunk.start:chunk.end]``.

        Raises
        ------
        ValueError
            When a parameter is out of its allowed range, or (external
            splitters) a piece cannot be located.
        TypeError
            When ``text`` is not a string.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        self._check_params()
        return chunks_from_spans(text, doc_id, self.spans(text))

    def chunk_document(self, document: Document) -> list[Chunk]:
        """Chunk ``document.text`` with ``document.id`` as the chunks' ``doc_id``."""
        return self.chunk(document.text, document.id)

    @property
    def spec(self) -> str:
        """Spec string that :func:`get_chunker` turns back into an equal chunker.

        Parameters are listed in constructor order; non-literal values (an
        embedder or tokenizer object) appear as their ``repr``.
        """
        names = list(inspect.signature(type(self).__init__).parameters)[1:]
        params = self._recorded_params()
        body = ", ".join(f"{key}={params[key]!r}" for key in names if key in params)
        return f"{self.name}({body})"

    def describe(self) -> dict[str, Any]:
        """The configuration recorded in run manifests.

        ``get_params(deep=False)`` without the :attr:`later_params` at their default
        (subclasses wrapping objects replace them by their class and parameters).
        """
        return self._recorded_params()

    def _recorded_params(self) -> dict[str, Any]:
        """``get_params(deep=False)`` without the :attr:`later_params` that are at their default."""
        params = self.get_params(deep=False)
        if not self.later_params:
            return params
        signature = inspect.signature(type(self).__init__).parameters
        return {
            key: value
            for key, value in params.items()
            if key not in self.later_params or value != signature[key].default
        }

    def __repr__(self) -> str:
        return self.spec


def chunks_from_spans(text: str, doc_id: str, spans: Iterable[tuple[int, int]]) -> list[Chunk]:
    """The chunks a chunker gives for its ``spans`` of ``text``: whitespace-only spans left out.

    Parameters
    ----------
    text : str
        The document text.
    doc_id : str
        Id stored in every chunk.
    spans : iterable of (int, int)
        Half-open code-point ranges into ``text``, in order.

    Returns
    -------
    list of Chunk
        Numbered from 0 in order, ``chunk.text == text[chunk.start:chunk.end]``.
    """
    # each span's text sliced once; "not piece.isspace()" is "piece.strip()" without its copy
    pieces = ((s, e, text[s:e]) for s, e in spans)
    kept = ((s, e, piece) for s, e, piece in pieces if piece and not piece.isspace())
    return [Chunk(doc_id, index, start, end, piece) for index, (start, end, piece) in enumerate(kept)]


def is_external_spec(spec: str) -> bool:
    """Whether ``spec`` names an external splitter (``langchain:``, ``chonkie:``, ``python:``, ``semchunk``)."""
    head = spec.strip()
    return head.split("(", 1)[0].strip() == "semchunk" or head.split(":", 1)[0] in (
        "langchain",
        "chonkie",
        "llama_index",
        "python",
    )


def register_chunker(name: str):
    """Class decorator registering a :class:`Chunker` subclass under ``name``.

    Raises
    ------
    ValueError
        If ``name`` is taken.
    """

    def decorate(cls: type[Chunker]) -> type[Chunker]:
        cls.name = name
        CHUNKERS.add(name, cls)
        return cls

    return decorate
