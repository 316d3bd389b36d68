"""Test helpers for a project's own suite: a quality gate and the public contract batteries.

* :func:`assert_no_regression` fails a test when a run's chunk quality falls below a
  committed baseline.
* :func:`check_chunker` and :func:`check_retriever` run the contract every built-in chunker
  and retriever keeps (the invariants of the offset contract, determinism, parameter round
  trips, result shapes and order) over a plugin's own class, as scikit-learn's
  ``check_estimator`` does for estimators. chunkeval's test suite runs them over every
  registered chunker and retriever.

Example (pytest)::

    from chunkeval.benchmarks import run
    from chunkeval.testing import assert_no_regression, check_chunker

    def test_chunking_quality():
        results = run("jsonl:eval/questions", ["pipeline=sentence(max_chars=800)"])
        assert_no_regression(results, "eval/baseline.json", "answerable@5:0.02,answerability:2%")

    def test_my_chunker_keeps_the_contract():
        check_chunker(MyChunker(max_chars=300))
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

import numpy as np

if TYPE_CHECKING:
    from chunkeval.gate.checks import Check
    from chunkeval.gate.comparison import Comparison
    from chunkeval.results import Results
    from chunkeval.types import Chunk

__all__ = [
    "CHUNKER_TEXTS",
    "RETRIEVER_CHUNKS",
    "RETRIEVER_QUERIES",
    "assert_no_regression",
    "check_chunker",
    "check_retriever",
]


class _Chunking(Protocol):
    """What :func:`check_chunker` needs of a chunker.

    ``get_params``, ``size_limit``/``measure``, ``spec`` and ``chunk_document`` are checked
    when present.
    """

    def chunk(self, text: str, doc_id: str) -> list[Chunk]: ...


class _Retrieving(Protocol):
    """What :func:`check_retriever` needs of a retriever; ``lexical`` is read when present."""

    def fit(self, chunk_texts: list[str]) -> Self: ...

    def search(self, queries: list[str], k: int) -> tuple[np.ndarray, np.ndarray]: ...


R = TypeVar("R", bound=_Retrieving)


def assert_no_regression(
    results: Results | str | os.PathLike[str],
    baseline: Results | str | os.PathLike[str],
    checks: str | Sequence[Check | str] | None = None,
    *,
    strict: bool = False,
) -> Comparison:
    """Fail with the table of regressions when ``results`` regresses against ``baseline``.

    Parameters
    ----------
    results : Results or results folder
        The run under test.
    baseline : Results, results folder or baseline file
        What it must not fall below (a committed file from ``chunkeval baseline save``).
    checks : str or sequence of Check or str, optional
        As in :func:`chunkeval.gate.comparison.compare` (``"answerable@5:0.02,..."``);
        default: headline ``answerable@k``, ``recall@k`` and ``stored_token_overhead`` at
        tolerance 0.
    strict : bool, default False
        Count changes beyond the tolerance even when their paired interval includes 0.

    Returns
    -------
    Comparison
        The comparison, when it passes (for further assertions).

    Raises
    ------
    AssertionError
        On a regression, a missing configuration or incomparable runs; the message is the
        comparison's verdict and its table of the failing rows.
    ValueError, FileNotFoundError
        A corrupt or missing side, or a check naming an unknown metric.
    """
    __tracebackhide__ = True  # pytest shows the caller's line and the message, not this function
    from chunkeval.gate.comparison import compare

    cmp = compare(baseline, results, checks, strict=strict)
    if cmp.exit_code != 0:
        loud = ["regressed", "missing", "incomparable", *(["inconclusive"] if strict else [])]
        failing = cmp.rows["outcome"].isin(loud) & cmp.rows["checked"]
        shown = dataclasses.replace(cmp, rows=cmp.rows[failing])
        what = (
            "chunk quality regressed against the baseline"
            if cmp.exit_code == 1
            else "chunk quality could not be compared with the baseline"
        )
        raise AssertionError(what + "\n" + shown.to_text(all_rows=True))
    return cmp


# -- the chunker contract

#: The texts :func:`check_chunker` uses by default: sentence traps (abbreviations, decimals,
#: ellipses, quotes), line endings, Markdown, scripts without spaces, emoji, an oversized
#: sentence, blank-only text, sentence ends of other scripts, grapheme clusters (flags, ZWJ
#: sequences, combining marks), and a long text that gives several chunks at default sizes.
CHUNKER_TEXTS: tuple[str, ...] = (
    "One.",
    'Stay calm. Dr. Smith paid $2.50 at 3 p.m. Wait... what? "Stop." (Yes.) e.g. this. U.S. policy.',
    "a\r\nb\r\n\r\nc\rd",
    "# Heading\n\n- list item\n- second item\n\n1. first\n2. second\n\nA closing paragraph.",
    "你好。世界！ Ünïcödé wörds 😀🎉 and a tab\there.",
    "no punctuation at all " * 40,
    "x" * 3000 + ". Then a short one.",
    "\t  \n \r\n",
    # other scripts' sentence ends, flags, ZWJ sequences, skin tones, combining marks
    "नमस्ते दुनिया। यह दूसरा वाक्य है॥ ¿Qué tal? Բարեւ։ ሰላም። 重さは２．５キロです。「はい。」次。",
    "🇯🇵🇰🇷 flags 👩🏽‍💻👨‍👩‍👧‍👦 and e\u0301 n\u0303o\u0308 x\u20dd; 🏳️‍🌈 ok.\r\nNext line. 🇺🇸🇬🇧🇫🇷",
    (
        "The harbour master signs the papers. Ships leave at dawn, and the tide decides when.\n\n"
        "Charts are printed each spring; the keeper logs every passing ship in a notebook. "
        "Fog closes the port about ten days a year.\n\n"
    )
    * 40,
)


def _show(text: str) -> str:
    """A short, unambiguous form of an input text for a failure message."""
    if len(text) <= 60:
        return repr(text)
    return f"{text[:50]!r}... ({len(text)} characters)"


def _params(obj: object) -> dict[str, Any]:
    return obj.get_params(deep=False) if hasattr(obj, "get_params") else {}


def _says_overlapping(params: dict[str, Any]) -> bool:
    """Whether a parameter named like ``*overlap*`` is set (also inside a dict parameter)."""
    for key, value in params.items():
        if isinstance(value, dict) and _says_overlapping(value):
            return True
        if "overlap" in key and value not in (None, False, 0):
            return True
    return False


def _chunk_fields(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """Chunks are :class:`chunkeval.types.Chunk` with the given ``doc_id``, numbered 0, 1, ..."""
    from chunkeval.types import Chunk

    if not isinstance(chunks, list):
        raise AssertionError(f"chunk() must return a list, got {type(chunks).__name__}")
    for i, chunk in enumerate(chunks):
        if not isinstance(chunk, Chunk):
            raise AssertionError(f"chunk {i} is a {type(chunk).__name__}, not a chunkeval.types.Chunk")
        if chunk.doc_id != "doc" or chunk.index != i:
            raise AssertionError(
                f"chunk {i} has doc_id={chunk.doc_id!r}, index={chunk.index}; expected 'doc', {i}"
            )


def _provenance(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """``0 <= start < end <= len(text)`` and ``chunk.text == text[chunk.start:chunk.end]``."""
    for chunk in chunks:
        if not 0 <= chunk.start < chunk.end <= len(text):
            raise AssertionError(
                f"chunk {chunk.index} has offsets [{chunk.start}, {chunk.end}) outside the text"
            )
        if chunk.text != text[chunk.start : chunk.end]:
            raise AssertionError(
                f"chunk {chunk.index}: text {_show(chunk.text)} != text[{chunk.start}:{chunk.end}] "
                f"{_show(text[chunk.start : chunk.end])}"
            )


def _no_blank_chunk(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """No chunk is empty or whitespace only (such a window carries no text)."""
    blank = [chunk.index for chunk in chunks if not chunk.text.strip()]
    if blank:
        raise AssertionError(f"chunks {blank} are empty or whitespace only")


def _in_order(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """Chunk starts strictly increase: chunks come in document order, none twice."""
    starts = [chunk.start for chunk in chunks]
    for before, after in itertools.pairwise(starts):
        if after <= before:
            raise AssertionError(f"starts do not strictly increase: {before} then {after}")


def _no_loss(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """Every non-whitespace character of the text lies inside at least one chunk."""
    covered = bytearray(len(text))
    for chunk in chunks:
        covered[chunk.start : chunk.end] = b"\x01" * max(0, chunk.end - chunk.start)
    lost = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    if lost:
        raise AssertionError(
            f"{len(lost)} non-whitespace characters are in no chunk, first at offset {lost[0]}: "
            f"{[text[i] for i in lost[:10]]}"
        )


def _disjoint(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """A chunker without overlap gives disjoint chunks: each ends before the next starts."""
    for before, after in itertools.pairwise(chunks):
        if after.start < before.end:
            raise AssertionError(
                f"chunks {before.index} [{before.start}, {before.end}) and {after.index} "
                f"[{after.start}, {after.end}) overlap, and the chunker has no overlap parameter set "
                "(pass overlapping=True to check_chunker if it overlaps on purpose)"
            )


def _fits_before_its_last_cluster(measure: Callable[[str], int], text: str, limit: int) -> bool:
    """Whether ``text`` cut before its last grapheme cluster measures at most ``limit``.

    ``measure`` is the chunker's: a text's size in the unit of its ``size_limit``.

    Whether ``text`` cut at the start of its last extended grapheme cluster, or inside
    it, measures at most ``limit`` (where a window's cut was before it moved to the
    cluster's end).
    """
    from chunkeval.text.graphemes import cluster_at

    last = cluster_at(text, len(text) - 1)[0]
    return any(measure(text[:cut]) <= limit for cut in range(last, len(text)))


def _within_size_limit(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """A chunk over ``size_limit`` (in its unit, by ``measure``) is one sentence that alone exceeds it.

    A chunker with ``cluster_slack = True`` (windows whose cuts move forward to a grapheme
    cluster boundary: ``fixed``) may also exceed it by its last cluster: the chunk cut at
    that cluster's start or inside it is within the limit.
    """
    limit = getattr(chunker, "size_limit", (None, ""))[0]
    if limit is None or not hasattr(chunker, "measure"):
        return
    from chunkeval.text import sentence_spans

    sentences = set(sentence_spans(text))
    slack = getattr(chunker, "cluster_slack", False)
    for chunk in chunks:
        size = chunker.measure(chunk.text)
        if size > limit and slack and _fits_before_its_last_cluster(chunker.measure, chunk.text, limit):
            continue  # a window whose end moved to the end of a grapheme cluster
        if size > limit and (chunk.start, chunk.end) not in sentences:
            raise AssertionError(
                f"chunk {chunk.index} [{chunk.start}, {chunk.end}) measures {size} > the limit {limit} "
                "and is not a single sentence"
            )


def _on_cluster_boundaries(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """Check that no chunk starts or ends inside an extended grapheme cluster.

    No chunk starts or ends inside an extended grapheme cluster (Unicode UAX #29): never
    between the two regional indicators of a flag, next to a joiner inside a ZWJ sequence,
    before a combining mark or between CR and LF.
    """
    from chunkeval.text.graphemes import every_position_is_a_boundary, is_cluster_boundary

    if every_position_is_a_boundary(text):
        return
    for chunk in chunks:
        for name, pos in (("start", chunk.start), ("end", chunk.end)):
            if not is_cluster_boundary(text, pos):
                raise AssertionError(
                    f"chunk {chunk.index} [{chunk.start}, {chunk.end}) has its {name} inside a grapheme "
                    f"cluster: {text[max(0, pos - 3) : pos]!r} | {text[pos : pos + 3]!r}"
                )


def _deterministic(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """A second call on the same text gives the same chunks."""
    again = chunker.chunk(text, "doc")
    if again != chunks:
        raise AssertionError(f"a second call gives {len(again)} different chunks (first call: {len(chunks)})")


def _same_as_rebuilt(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """A chunker rebuilt from ``get_params(deep=False)`` gives the same chunks."""
    if not hasattr(chunker, "get_params"):
        return
    rebuilt = type(chunker)(**chunker.get_params(deep=False))
    if rebuilt.chunk(text, "doc") != chunks:
        raise AssertionError("type(chunker)(**chunker.get_params(deep=False)) chunks this text differently")


def _chunk_document_agrees(chunker: _Chunking, text: str, chunks: list[Chunk]) -> None:
    """``chunk_document(Document("doc", text))`` equals ``chunk(text, "doc")``."""
    if not hasattr(chunker, "chunk_document"):
        return
    from chunkeval.types import Document

    if chunker.chunk_document(Document("doc", text)) != chunks:
        raise AssertionError('chunk_document(Document("doc", text)) differs from chunk(text, "doc")')


def _empty_text(chunker: _Chunking) -> None:
    """An empty or whitespace-only text gives no chunks."""
    for text in ("", " \n\t "):
        got = chunker.chunk(text, "doc")
        if got != []:
            raise AssertionError(f"chunk({text!r}) gives {got!r}, expected []")


def _refuses_non_text(chunker: _Chunking) -> None:
    """``chunk`` of something that is not a ``str`` raises ``TypeError``."""
    try:
        chunker.chunk(b"bytes are not text", "doc")  # type: ignore[arg-type]  # the wrong type on purpose
    except TypeError:
        return
    except Exception as error:
        raise AssertionError(f"chunk(b'...') raises {type(error).__name__}, expected TypeError") from error
    raise AssertionError("chunk(b'...') returns instead of raising TypeError")


def _params_round_trip(chunker: _Chunking) -> None:
    """Check that constructor parameters are stored unchanged and the spec round-trips.

    Constructor parameters are stored unchanged: rebuilding from ``get_params`` gives the same
    parameters, and a registered chunker's ``spec`` string builds an equal chunker.
    """
    if not hasattr(chunker, "get_params"):
        return
    import ast

    params = chunker.get_params(deep=False)
    rebuilt = _params(type(chunker)(**params))
    if rebuilt != params:
        raise AssertionError(f"get_params() gives {params}, a chunker built from them {rebuilt}")
    from chunkeval.chunkers import available_chunkers, get_chunker

    def literal(value: object) -> bool:
        try:
            return ast.literal_eval(repr(value)) == value
        except (ValueError, SyntaxError):
            return False

    name = getattr(type(chunker), "name", "")
    if name in available_chunkers() and all(map(literal, params.values())):
        spec: str = chunker.spec  # type: ignore[attr-defined]  # a registered family's chunker has one
        respelled = _params(get_chunker(spec))
        if respelled != params:
            raise AssertionError(f"get_chunker({spec!r}) has parameters {respelled}, not {params}")


_ONCE_CHECKS = (_empty_text, _refuses_non_text, _params_round_trip)
_TEXT_CHECKS = (
    _chunk_fields,
    _provenance,
    _no_blank_chunk,
    _in_order,
    _no_loss,
    _within_size_limit,
    _on_cluster_boundaries,
    _deterministic,
    _same_as_rebuilt,
    _chunk_document_agrees,
)


def _check_name(check: Callable[..., None]) -> str:
    return check.__name__.lstrip("_")


def check_chunker(
    chunker: _Chunking | str, texts: Sequence[str] | None = None, *, overlapping: bool | None = None
) -> None:
    """Check that a chunker keeps the chunk contract of every built-in chunker.

    Run it in a plugin's own test suite, as scikit-learn's ``check_estimator``::

        from chunkeval.testing import check_chunker

        def test_my_chunker():
            check_chunker(MyChunker(max_chars=300))

    Checked once: an empty or whitespace-only text gives no chunks (``empty_text``); a
    non-``str`` input raises ``TypeError`` (``refuses_non_text``); a chunker rebuilt from
    ``get_params(deep=False)`` has the same parameters, and for a registered chunker with
    literal parameters ``get_chunker(chunker.spec)`` too (``params_round_trip``). Checked on
    every text: chunks are ``Chunk`` objects of the given ``doc_id`` numbered from 0
    (``chunk_fields``); ``0 <= start < end <= len(text)`` and ``chunk.text ==
    text[start:end]`` (``provenance``); no chunk is blank (``no_blank_chunk``); starts
    strictly increase (``in_order``); every non-whitespace character is in some chunk
    (``no_loss``); without overlap, chunks are disjoint (``disjoint``); a chunk over
    ``size_limit`` is a single sentence (``within_size_limit``); no chunk starts or ends
    inside an extended grapheme cluster (``on_cluster_boundaries``); a second call, a chunker
    rebuilt from its parameters and ``chunk_document`` give the same chunks
    (``deterministic``, ``same_as_rebuilt``, ``chunk_document_agrees``).

    Parameters
    ----------
    chunker : Chunker or str
        The chunker under test (anything with ``chunk(text, doc_id) -> list[Chunk]``; the
        checks of ``get_params``, ``size_limit``/``measure`` and ``chunk_document`` run when
        it has them), or a spec for :func:`chunkeval.chunkers.get_chunker`.
    texts : sequence of str, optional
        Texts to chunk; default :data:`CHUNKER_TEXTS`. Small size limits make more chunks
        per text, so more boundaries are checked.
    overlapping : bool or None, default None
        Whether consecutive chunks may overlap. ``None``: they may when a parameter whose
        name contains ``overlap`` is set (``chunk_overlap=50``, ``overlap_sentences=1``,
        ``overlapping=True``, also inside a ``params`` dict); otherwise chunks must be
        disjoint.

    Raises
    ------
    AssertionError
        At the first failing check, naming the check, the chunker and the input text (an
        exception raised by the chunker itself is reported the same way, chained).
    """
    if isinstance(chunker, str):
        from chunkeval.chunkers import get_chunker

        chunker = get_chunker(chunker)
    if overlapping is None:
        overlapping = _says_overlapping(_params(chunker))
    text_checks = _TEXT_CHECKS if overlapping else (*_TEXT_CHECKS[:5], _disjoint, *_TEXT_CHECKS[5:])

    def failed(check: str, where: str, error: BaseException) -> AssertionError:
        detail = (
            str(error) if isinstance(error, AssertionError) else f"raises {type(error).__name__}: {error}"
        )
        return AssertionError(f"check_chunker: {check} failed for {chunker!r}{where}: {detail}")

    for once in _ONCE_CHECKS:
        try:
            once(chunker)
        except Exception as error:
            raise failed(_check_name(once), "", error) from error
    for text in CHUNKER_TEXTS if texts is None else texts:
        where = f" on text {_show(text)}"
        try:
            chunks = chunker.chunk(text, "doc")
        except Exception as error:
            raise failed("chunk", where, error) from error
        for check in text_checks:
            try:
                check(chunker, text, chunks)
            except Exception as error:
                raise failed(_check_name(check), where, error) from error


# -- the retriever contract

#: Chunk texts of :func:`check_retriever`: shared and distinct terms, two identical chunks
#: (their scores tie, so the lower index must come first) and a text without spaces.
RETRIEVER_CHUNKS: tuple[str, ...] = (
    "The lighthouse keeper logs every passing ship in a leather notebook.",
    "Tidal charts for the northern harbour are printed each spring.",
    "Copper kettles whistle when the water boils.",
    "The harbour master signs the departure papers of every ship.",
    "Bees collect nectar from clover and lavender fields.",
    "Copper kettles whistle when the water boils.",
    "A leather notebook keeps better in dry weather than a paper one.",
    "Spring tides are higher than neap tides.",
    "The kettle, the notebook and the charts sit on one shelf.",
    "港口的灯塔每晚都亮着。",
)
#: Queries of :func:`check_retriever`: ordinary ones, an empty one, one whose terms no chunk
#: has, and one repeating chunk 4 word for word.
RETRIEVER_QUERIES: tuple[str, ...] = (
    "leather notebook",
    "which ship leaves the harbour",
    "tides in spring",
    "kettle",
    "",
    "zyxwv qqqq",
    "Bees collect nectar from clover and lavender fields.",
)
_VERBATIM = 4  # RETRIEVER_QUERIES[-1] is RETRIEVER_CHUNKS[_VERBATIM]


def _fresh(retriever: R) -> R:
    """An unfitted copy with the same parameters (``sklearn.base.clone`` when it applies)."""
    if hasattr(retriever, "get_params"):
        from sklearn.base import clone

        return clone(retriever)
    import copy

    return copy.deepcopy(retriever)


def _same_ranking(
    indices: np.ndarray, scores: np.ndarray, other: np.ndarray, other_scores: np.ndarray
) -> bool:
    """Whether two rankings agree up to rounding.

    Scores equal within 1e-9 (relative) or 1e-12, and chunks change places only among near-equal
    scores.

    Scores computed along another path (a matrix product of another shape) may differ in the last bits, which reorders chunks whose scores differ
    by that much only.
    """
    if indices.shape != other.shape or not np.allclose(scores, other_scores, rtol=1e-9, atol=1e-12):
        return False
    for row, col in zip(*np.nonzero(indices != other), strict=True):
        value = scores[row, col]
        near = np.isclose(other_scores[row], value, rtol=1e-9, atol=1e-12)
        at_the_cut = np.isclose(other_scores[row, -1], value, rtol=1e-9, atol=1e-12)
        if indices[row, col] not in other[row][near] and not at_the_cut:
            return False
    return True


def _search(retriever: _Retrieving, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    indices, scores = retriever.search(list(queries), k)
    return np.asarray(indices), np.asarray(scores)


def _fit_returns_self(retriever: _Retrieving) -> None:
    """``fit`` returns the retriever itself."""
    fitted = _fresh(retriever)
    if fitted.fit(list(RETRIEVER_CHUNKS)) is not fitted:
        raise AssertionError("fit(chunk_texts) must return self")


def _unfitted_search_raises(retriever: _Retrieving) -> None:
    """``search`` before ``fit`` raises (``RuntimeError`` in :class:`Retriever`), never answers."""
    try:
        _fresh(retriever).search(["a query"], 3)
    except Exception:
        return
    raise AssertionError("search() before fit() returns results instead of raising")


def _negative_k_raises(retriever: _Retrieving) -> None:
    """``search(queries, k)`` with ``k < 0`` raises ``ValueError``."""
    fitted = _fresh(retriever).fit(list(RETRIEVER_CHUNKS))
    try:
        fitted.search(["kettle"], -1)
    except ValueError:
        return
    raise AssertionError("search(queries, -1) does not raise ValueError")


def _empty_index(retriever: _Retrieving) -> None:
    """Fitted on no chunks, ``search`` gives ``(n_queries, 0)`` arrays."""
    indices, scores = _search(_fresh(retriever).fit([]), RETRIEVER_QUERIES, 3)
    if indices.shape != (len(RETRIEVER_QUERIES), 0) or scores.shape != indices.shape:
        raise AssertionError(f"an empty index gives shapes {indices.shape}, {scores.shape}; expected (n, 0)")


def _no_queries(retriever: _Retrieving) -> None:
    """An empty list of queries gives ``(0, min(k, n_chunks))`` arrays."""
    indices, scores = _search(_fresh(retriever).fit(list(RETRIEVER_CHUNKS)), [], 3)
    if indices.shape != (0, 3) or scores.shape != (0, 3):
        raise AssertionError(f"no queries give shapes {indices.shape}, {scores.shape}; expected (0, 3)")


def _shapes(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Indices (integers) and scores (floats) both have shape ``(n_queries, min(k, n_chunks))``."""
    want = (len(RETRIEVER_QUERIES), min(k, len(RETRIEVER_CHUNKS)))
    if indices.shape != want or scores.shape != want:
        raise AssertionError(f"shapes {indices.shape} and {scores.shape}, expected {want}")
    if not np.issubdtype(indices.dtype, np.integer) or not np.issubdtype(scores.dtype, np.floating):
        raise AssertionError(
            f"dtypes {indices.dtype}, {scores.dtype}; expected integer indices, float scores"
        )


def _indices_in_range(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Every index is a chunk position in ``[0, n_chunks)``, none twice in a row."""
    n = len(RETRIEVER_CHUNKS)
    for row, ranked in enumerate(indices.tolist()):
        if any(not 0 <= i < n for i in ranked) or len(set(ranked)) != len(ranked):
            raise AssertionError(f"query {row} ({RETRIEVER_QUERIES[row]!r}) gets chunk indices {ranked}")


def _scores_ordered(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Scores are finite and non-increasing along each row (best first)."""
    if not np.isfinite(scores).all():
        raise AssertionError(f"non-finite scores: {scores[~np.isfinite(scores)][:5].tolist()}")
    for row, values in enumerate(scores.tolist()):
        if any(b > a for a, b in itertools.pairwise(values)):
            raise AssertionError(f"query {row} ({RETRIEVER_QUERIES[row]!r}): scores not best first: {values}")


def _ties_to_lower_index(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Equal scores are ordered by chunk index, lower first (no dependence on sort stability)."""
    for row, (ranked, values) in enumerate(zip(indices.tolist(), scores.tolist(), strict=True)):
        for j in range(len(ranked) - 1):
            if values[j] == values[j + 1] and ranked[j] > ranked[j + 1]:
                raise AssertionError(
                    f"query {row} ({RETRIEVER_QUERIES[row]!r}): chunks {ranked[j]} and {ranked[j + 1]} "
                    f"tie at {values[j]} but the higher index comes first"
                )


def _top_k_is_a_prefix(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """The top ``k`` is the first ``k`` of the full ranking."""
    full = _search(retriever, RETRIEVER_QUERIES, len(RETRIEVER_CHUNKS))[0]
    if (full[:, : indices.shape[1]] != indices).any():
        raise AssertionError(f"top {k} is not the start of the full ranking")


def _deterministic_search(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Searching again, and with a fresh copy fitted on the same chunks, gives the same arrays."""
    for what, fitted in (("a second search", retriever), ("a refitted copy", _fresh(retriever))):
        if fitted is not retriever:
            fitted.fit(list(RETRIEVER_CHUNKS))
        again, again_scores = _search(fitted, RETRIEVER_QUERIES, k)
        if not _same_ranking(again, again_scores, indices, scores):
            raise AssertionError(f"{what} ranks differently: {again.tolist()} vs {indices.tolist()}")


def _lexical_zero_without_terms(
    retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int
) -> None:
    """Check that a ``lexical`` retriever scores 0 for a query with no term in any chunk.

    A ``lexical`` retriever scores 0 for a query with no term in any chunk (the runner then
    counts nothing as retrieved).
    """
    if not getattr(retriever, "lexical", False):
        return
    for row in (RETRIEVER_QUERIES.index(""), RETRIEVER_QUERIES.index("zyxwv qqqq")):
        if scores[row].any():
            raise AssertionError(
                f"query {RETRIEVER_QUERIES[row]!r} has no chunk term but scores {scores[row].tolist()}"
            )


def _finds_a_verbatim_chunk(retriever: _Retrieving, indices: np.ndarray, scores: np.ndarray, k: int) -> None:
    """A query repeating a chunk word for word ranks that chunk first."""
    if k and indices[-1, 0] != _VERBATIM:
        raise AssertionError(
            f"query {RETRIEVER_QUERIES[-1]!r} (chunk {_VERBATIM} verbatim) ranks chunks {indices[-1].tolist()}"
        )


_INDEX_CHECKS = (_fit_returns_self, _unfitted_search_raises, _negative_k_raises, _empty_index, _no_queries)
_SEARCH_CHECKS = (
    _shapes,
    _indices_in_range,
    _scores_ordered,
    _ties_to_lower_index,
    _deterministic_search,
    _top_k_is_a_prefix,
    _lexical_zero_without_terms,
    _finds_a_verbatim_chunk,
)


def check_retriever(retriever: _Retrieving | str) -> None:
    """Check that a retriever keeps the search contract of every built-in retriever.

    The retriever is copied (``sklearn.base.clone`` when it has ``get_params``), fitted on
    :data:`RETRIEVER_CHUNKS` and searched with :data:`RETRIEVER_QUERIES` (an empty query and
    one matching no chunk among them) at ``k`` = more than the number of chunks, that
    number, 3, 1 and 0.

    Checked on the index: ``fit`` returns self (``fit_returns_self``); ``search`` before
    ``fit`` raises (``unfitted_search_raises``); ``k < 0`` raises ``ValueError``
    (``negative_k_raises``); an empty index and an empty query list give empty arrays of the
    right shape (``empty_index``, ``no_queries``). Checked at every ``k``: shapes ``(n_queries,
    min(k, n_chunks))`` with integer indices and float scores (``shapes``); indices are chunk
    positions, none twice per query (``indices_in_range``); scores finite and best first
    (``scores_ordered``); ties go to the lower chunk index (``ties_to_lower_index``); searching
    again and refitting rank the same (``deterministic_search``); the top k is the start of
    the full ranking (``top_k_is_a_prefix``); a ``lexical`` retriever scores 0 when no query term is in
    the index (``lexical_zero_without_terms``); a query repeating a chunk ranks it first
    (``finds_a_verbatim_chunk``).

    Parameters
    ----------
    retriever : Retriever or str
        The retriever under test, unfitted (anything with ``fit(chunk_texts)`` and
        ``search(queries, k) -> (indices, scores)``, see
        :class:`chunkeval.retrieval.Retriever`), or a spec for
        :func:`chunkeval.retrieval.get_retriever`. It is not changed.

    Raises
    ------
    AssertionError
        At the first failing check, naming the check, the retriever and the input (an
        exception raised by the retriever itself is reported the same way, chained).
    """
    if isinstance(retriever, str):
        from chunkeval.retrieval import get_retriever

        retriever = get_retriever(retriever)

    def failed(check: str, where: str, error: BaseException) -> AssertionError:
        detail = (
            str(error) if isinstance(error, AssertionError) else f"raises {type(error).__name__}: {error}"
        )
        return AssertionError(f"check_retriever: {check} failed for {retriever!r}{where}: {detail}")

    where = f" fitted on the {len(RETRIEVER_CHUNKS)} RETRIEVER_CHUNKS, searched with RETRIEVER_QUERIES"
    try:
        fitted = _fresh(retriever).fit(list(RETRIEVER_CHUNKS))
    except Exception as error:
        raise failed("fit", where, error) from error
    for check in _INDEX_CHECKS:
        try:
            check(retriever)
        except Exception as error:
            raise failed(_check_name(check), "", error) from error
    n = len(RETRIEVER_CHUNKS)
    for k in (n + 4, n, 3, 1, 0):  # a wrong order shows first in the longest ranking
        at = f"{where} at k={k}"
        try:
            indices, scores = _search(fitted, RETRIEVER_QUERIES, k)
        except Exception as error:
            raise failed("search", at, error) from error
        for search_check in _SEARCH_CHECKS:
            try:
                search_check(fitted, indices, scores, k)
            except Exception as error:
                raise failed(_check_name(search_check), at, error) from error
