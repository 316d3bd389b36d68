r"""Unicode-aware text analysis shared by the lexical retrievers and the regex tokenizer.

Two things live here:

* the *word pattern*: a word is a run of Unicode word characters (``re``
  ``\w``: letters, digits, underscore) together with the combining marks
  (categories Mn, Mc, Me) that follow them, so ``हिन्दी`` (vowel signs and a
  virama between its letters) and ``cafe`` + U+0301 are one word each.
  Python's ``\w`` alone excludes marks and cuts such words apart;
* :class:`UnicodeAnalyzer`, the term analyzer of ``tfidf`` and ``bm25``:
  NFKC normalisation and case folding of the whole text, then word terms,
  plus overlapping character bigrams for runs of Han, Hiragana, Katakana
  and Hangul, and of Thai, Lao, Myanmar and Khmer, which are written
  without spaces between words.

Normalisation is only for matching and counting: nothing here changes the
text of a chunk or any offset (the tokenizer's spans index the original
text; the analyzer returns terms, not spans).

References
----------
.. [1] Unicode Standard Annex #15, "Unicode Normalization Forms" (NFKC), and
   the Unicode Standard, section 3.13 (default case folding).
.. [2] Apache Lucene ``CJKBigramFilter`` / ``CJKAnalyzer``: overlapping
   bigrams over Han, Hiragana, Katakana and Hangul runs, a lone character
   kept as a unigram.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import Any

from chunkeval.errors import MissingDependency, UsageError
from chunkeval.text.ignorable import IGNORABLE_SOURCE, strip_ignorable

__all__ = [
    "BIGRAM_CHARS",
    "CJK_BIGRAM_CHARS",
    "SEPARATORS",
    "SOUTHEAST_ASIAN_CHARS",
    "UnicodeAnalyzer",
    "marks_class",
    "normalize",
    "word_regex",
]

#: Scripts the analyzer turns into bigrams: Hangul Jamo, CJK radicals and
#: symbols' kana, Hiragana, Katakana (and phonetic extensions), Hangul
#: compatibility Jamo, CJK ideographs (extension A, unified, compatibility,
#: extensions B onwards), Hangul syllables, half-width Katakana/Hangul.
CJK_BIGRAM_CHARS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uffdc\U00020000-\U0003134f"
)
#: The scripts of South-East Asia written without spaces between words (a space there ends a
#: phrase or a sentence): Thai, Lao, Myanmar, Khmer, each whole block, its vowel signs and tone
#: marks included, so a bigram is two code points (``ที่`` -> ``ที``, ``ี่``).
SOUTHEAST_ASIAN_CHARS = "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
#: Every script the analyzer turns into overlapping character bigrams.
BIGRAM_CHARS = CJK_BIGRAM_CHARS + SOUTHEAST_ASIAN_CHARS


@functools.cache
def marks_class() -> str:
    """Body of a regex character class matching every combining mark.

    Returns
    -------
    str
        Ranges (``a-b``) of all code points whose Unicode general category is
        Mn, Mc or Me in this Python's ``unicodedata`` (its version is
        ``unicodedata.unidata_version``). Built once, on first use (~0.1 s),
        so importing chunkeval stays cheap.
    """
    category = unicodedata.category
    marks = [c for c in range(sys.maxunicode + 1) if category(chr(c))[0] == "M"]
    ranges: list[list[int]] = []
    for c in marks:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


def word_regex(exclude: str = "", min_chars: int = 1) -> str:
    r"""Regex source for one word: word characters with their combining marks.

    Parameters
    ----------
    exclude : str, default ""
        Body of a character class (e.g. a CJK range) whose characters never
        belong to a word; they are left for the caller to handle.
    min_chars : int, default 1
        Fewest word characters (marks not counted) a word must have; shorter
        words are not matched at all.

    Returns
    -------
    str
        ``W+(?:M+W*)*`` with ``W`` = ``\w`` minus ``exclude`` and ``M`` the
        combining marks: a word starts with a word character and keeps every
        mark that follows a letter (an unrolled loop, so matching stays
        linear), preceded by a lookahead for ``min_chars`` word characters.
        A mark with no base letter before it is not part of a word.
    """
    w = f"[^\\W{exclude}]"
    m = f"[{marks_class()}]"
    head = f"(?={w}(?:{m}*+{w}){{{min_chars - 1}}})" if min_chars > 1 else ""
    return f"{head}{w}++(?:{m}++{w}*+)*+"


@functools.cache
def _analyzer_regexes() -> tuple[re.Pattern[str], re.Pattern[str]]:
    cjk = BIGRAM_CHARS
    # words outside the scripts written without spaces, and a lone CJK character (a run of one)
    terms = re.compile(f"{word_regex(cjk, min_chars=2)}|(?<![{cjk}])[{cjk}](?![{cjk}])")
    # every overlapping pair of CJK characters: a zero-width match per start
    bigrams = re.compile(f"(?=([{cjk}][{cjk}]))")
    return terms, bigrams


def normalize(text: str) -> str:
    r"""NFKC_Casefold of ``text``: normalised, case-folded, invisible format characters removed.

    NFKC normalisation plus case folding, without invisible format characters, as
    Unicode's NFKC_Casefold does.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        ``NFKC(casefold(NFKC(strip_ignorable(text))))``: the default-ignorable code points
        (soft hyphen, zero-width space, joiners, word joiner, an inner byte-order mark ...:
        :mod:`chunkeval.text.ignorable`, the table tolerant quote matching ignores too)
        removed, so ``com\u00adpany`` is ``company``; the outer NFKC recomposes the few
        characters whose case folding is not normalised (e.g. ``ǰ``). The same string for
        a text in any normalisation form (NFC, NFD, NFKC, NFKD), and for upper- or
        lower-case spellings.
    """
    visible = strip_ignorable(text)
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())


# scikit-learn's default token pattern; equal to the analyzer's word rule on ASCII text
_ASCII_WORDS = re.compile(r"\b\w\w+\b", re.ASCII)

#: ASCII whitespace: no term of :class:`UnicodeAnalyzer` holds one, and the analysis of a text
#: is the analysis of its pieces between them (:meth:`UnicodeAnalyzer.words_and_bigrams`).
SEPARATORS = " \t\n\r\x0b\x0c"


class UnicodeAnalyzer:
    r"""Terms of a text for lexical retrieval: normalised words and CJK bigrams.

    Applied alike to chunks and queries (a callable for scikit-learn's
    ``TfidfVectorizer(analyzer=...)`` and ``CountVectorizer``):

    1. :func:`normalize` (NFKC + case folding, invisible format characters
       removed), so ``café`` matches ``cafe`` + U+0301, ``ＡＢＣ`` matches
       ``abc`` and ``com\u00adpany`` (a soft hyphen) matches ``company``;
    2. words: runs of ``\w`` with their combining marks (:func:`word_regex`)
       holding at least two word characters, outside the CJK scripts below;
       punctuation and symbols are not terms. As in scikit-learn's default
       pattern (``\b\w\w+\b``), one-letter words are dropped: in
       alphabetic scripts they are mostly articles and clitic fragments
       (``a``, the ``s`` of ``it's``), which only add noise to the ranking.
       On ASCII text the terms are exactly scikit-learn's default ones;
    3. Han, Hiragana, Katakana and Hangul runs give their overlapping
       character bigrams (``東京都`` -> ``東京``, ``京都``) and a lone such
       character itself, as Lucene's ``CJKBigramFilter`` does. Runs of Thai,
       Lao, Myanmar and Khmer (:data:`SOUTHEAST_ASIAN_CHARS`) are treated the
       same way: they separate words by no space either, so a whitespace-
       delimited run is a phrase, not a word. Bigrams, not a dictionary
       segmenter, because they need no dependency and on XQuAD Thai they
       raise BM25 answerable@5 from 0.23 (phrases as terms) to the level of
       the other languages (docs: Public datasets).

    4. optionally (``stemmer="english"``, or another Snowball language), every word
       is reduced to its Snowball stem, so ``resized`` and ``resize`` are one term
       (as Lucene's English analyzer, bm25s and Pyserini offer); CJK terms are
       left as they are. Off by default.

    Terms come in no particular order (bag of words): first the words and
    lone CJK characters in text order, then the bigrams in text order.

    Parameters
    ----------
    stemmer : str or None, default None
        A language of the ``snowballstemmer`` package (``"english"``, ``"german"``,
        ``"french"`` ...: ``snowballstemmer.algorithms()``), or None for no stemming.
        Needs the ``stemming`` extra.

    Raises
    ------
    MissingDependency
        At first use with a stemmer, when ``snowballstemmer`` is not installed.
    UsageError
        At first use, for a language the package does not have.

    Examples
    --------
    >>> UnicodeAnalyzer()("Café 東京の")
    ['café', '東京', '京の']

    References
    ----------
    .. [1] M. F. Porter, "Snowball: A language for stemming algorithms" (2001),
       https://snowballstem.org/texts/introduction.html.
    """

    name = "unicode"

    def __init__(self, stemmer: str | None = None) -> None:
        self.stemmer = stemmer

    def check(self) -> UnicodeAnalyzer:
        """Check the stemmer now and return the analyzer.

        Raise now (not inside a vectorizer, which may swallow a ``ValueError``) for a
        stemmer that cannot be used; return the analyzer.

        Raises
        ------
        MissingDependency, UsageError
            As the class says.
        """
        if self.stemmer is not None:
            self._stem()
        return self

    def _stem(self) -> Any:
        """The Snowball stemmer of :attr:`stemmer` (built once), with a memo of its stems."""
        stem = self.__dict__.get("_stemmer")
        if stem is None:
            stem = self._stemmer = _snowball(str(self.stemmer))
            self._stems: dict[str, str] = {}
        return stem

    def _stemmed(self, words: list[str]) -> list[str]:
        stem, stems = self._stem(), self._stems
        new = [w for w in dict.fromkeys(words) if w not in stems]
        if new:
            stems.update(zip(new, stem.stemWords(new), strict=True))
        return [stems[w] for w in words]

    def __call__(self, text: str) -> list[str]:
        """Terms of ``text``.

        Parameters
        ----------
        text : str
            A chunk or a query.

        Returns
        -------
        list of str
            Its terms, with repeats (term frequency counts them).
        """
        words, bigrams = self.words_and_bigrams(text)
        return words + bigrams if bigrams else words

    def words_and_bigrams(self, text: str) -> tuple[list[str], list[str]]:
        """The terms of ``text`` in two lists: ``self(text) == words + bigrams``.

        Parameters
        ----------
        text : str
            A chunk, a query or a piece of either.

        Returns
        -------
        words : list of str
            Words and lone CJK characters, in text order.
        bigrams : list of str
            CJK bigrams, in text order (empty for text without CJK).

        Notes
        -----
        Neither kind of term contains an ASCII whitespace character (:data:`SEPARATORS`),
        and normalisation neither changes one nor joins characters across one, so the
        terms of ``a + sep + b`` are ``words(a) + words(b)`` and ``bigrams(a) +
        bigrams(b)``.
        """
        if text.isascii():
            # ASCII needs no normalisation and holds no CJK: lower-casing and scikit-learn's
            # word pattern give the same terms, several times faster (most corpora are ASCII)
            words, pairs = _ASCII_WORDS.findall(text.lower()), []
        else:
            terms, bigrams = _analyzer_regexes()
            norm = normalize(text)
            words, pairs = terms.findall(norm), bigrams.findall(norm)
        if self.stemmer is not None:
            words = self._stemmed(words)  # a lone CJK character has no stem: it stays
        return words, pairs

    def describe(self) -> dict[str, Any]:
        """What the analyzer does, for a run's manifest.

        Returns
        -------
        dict
            ``name``, ``normalization``, ``case``, ``words``, ``cjk``, the
            ``unicode_version`` whose mark categories and normalisation
            tables are used, and ``ignorable``: the table of the characters removed
            before analysis and its source.
        """
        info = {
            "name": self.name,
            "normalization": "NFKC",
            "case": "casefold",
            "words": "\\w runs with combining marks (Mn, Mc, Me), 2+ word characters",
            "cjk": "overlapping bigrams of Han, Hiragana, Katakana, Hangul, Thai, Lao, Myanmar, Khmer "
            "runs; a lone character as unigram",
            "unicode_version": unicodedata.unidata_version,
            "ignorable": f"removed: {IGNORABLE_SOURCE}",
        }
        if self.stemmer is not None:  # absent without one: manifests of earlier runs stay equal
            info["stemmer"] = f"snowball {self.stemmer}"
        return info

    def __repr__(self) -> str:
        return "UnicodeAnalyzer()" if self.stemmer is None else f"UnicodeAnalyzer(stemmer={self.stemmer!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"stemmer": self.stemmer}  # the stemmer object is rebuilt where it is used

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.stemmer == self.stemmer  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.stemmer))


def _snowball(language: str) -> Any:
    """The ``snowballstemmer`` stemmer of ``language``.

    Raises
    ------
    MissingDependency
        When the package is not installed.
    UsageError
        For a language it does not have.
    """
    try:
        import snowballstemmer
    except ImportError:
        raise MissingDependency(
            f"stemmer={language!r} needs the snowballstemmer package: pip install 'chunkeval[stemming]'"
        ) from None
    languages = snowballstemmer.algorithms()
    if language not in languages:
        raise UsageError(f"stemmer must be one of {', '.join(sorted(languages))} or None, got {language!r}")
    return snowballstemmer.stemmer(language)
