"""The abbreviations the sentence splitter knows, and the labels that follow some of them.

Tables read by :mod:`chunkeval.text.sentences` (rule 1 of its module docstring): which
abbreviations never end a sentence, which only before a number or a capital-letter label, which
only before a lower-case word, and which may end one. Words are matched lower-cased, without
their period.

References
----------
Read, J. et al. (2012), "Sentence Boundary Detection: A Long Solved Problem?", COLING 2012
Posters, pp. 985-994 (rule-based abbreviation lists).
"""

from __future__ import annotations

import re

__all__ = [
    "ALWAYS",
    "BEFORE_LOWER",
    "BEFORE_NUMBER",
    "LABELLED",
    "LABEL_ABBREVIATIONS",
    "MAY_END",
    "NUMERO",
    "TITLES",
    "is_label",
]

#: Titles written before a name: never end a sentence when capitalised ("Dr.", "DR.").
TITLES = frozenset(
    "mr mrs ms messrs mmes mme mlle dr prof rev hon gen col lt capt cmdr sgt cpl "
    "gov sen rep pres supt insp st mt".split()
)
#: Abbreviations that never end a sentence, in any case (with German "vgl." and "bzw.", Russian
#: "см." and "ср.", Turkish "bkz.": see, compare, respectively).
ALWAYS = frozenset("vs v cf viz e.g i.e eg ie approx ca resp incl esp vgl bzw см ср bkz".split())
#: Abbreviations of a figure, number, equation, section, chapter, volume, page, table ...
#: written before their label, by language (the languages whose sentences end with ``.``).
#: Before a number they never end a sentence; before a capital-letter label (:func:`is_label`:
#: "S3", "A1", "IV", "A") neither.
LABEL_ABBREVIATIONS = {
    "en": "no nos fig figs vol vols p pp ch chap sec sect eq eqs art tab ref refs op app",
    "de": "abb nr kap bd gl tab abschn",
    "es": "fig núm cap sec ec vol pág tab",
    "fr": "fig éq chap vol",
    "ro": "fig nr cap vol pag ec",
    "ru": "рис табл гл разд т ур",
    "el": "σχ εικ κεφ αρ σελ",
    "tr": "şek",
}
#: Every abbreviation of :data:`LABEL_ABBREVIATIONS`.
LABELLED = frozenset(w for words in LABEL_ABBREVIATIONS.values() for w in words.split())
#: Abbreviations of "number": "No. A" may be the word "No." before a sentence, so only a label
#: with a digit or a Roman numeral of two or more letters follows them.
NUMERO = frozenset("no nos nr núm αρ".split())
#: Abbreviations used before a number (labels and months): no break when a digit follows.
BEFORE_NUMBER = LABELLED | frozenset("jan feb mar apr jun jul aug sep sept oct nov dec".split())
#: Abbreviations that are not English words: written capitalised ("Sept.", "Fig.") they continue
#: the sentence before a lower-case word. (Lower-case "sec." or "no." may be the word "no" or an
#: acronym such as the SEC in lower-cased text, so those still end a sentence.)
BEFORE_LOWER = frozenset(
    "jan feb mar apr jun jul aug sep sept oct nov dec fig figs vol vols pp ch chap sect eq eqs".split()
)
#: Abbreviations that also end sentences: a break only before an upper-case word.
MAY_END = frozenset(
    "etc inc ltd co corp llc plc bros jr sr al a.m p.m am pm ft oz lb lbs min max dept est univ".split()
)

# a label: letters and digits, then any ".2" or "-2" parts ("A.1", "SI-2")
_LABEL_TOKEN = re.compile(r"[^\W_]+(?:[.-]\d+)*")
_ROMAN = re.compile(r"[IVXLCDM]{2,}")


def is_label(text: str, pos: int, numero: bool) -> bool:
    """Whether the word at ``pos`` is a capital-letter label (``S3``, ``A1``, ``A.2``, ``IV``, ``A``).

    Parameters
    ----------
    text : str
        The text.
    pos : int
        Where the word after the abbreviation starts (code points).
    numero : bool
        Whether the abbreviation means "number" (:data:`NUMERO`): then a lone capital letter is
        not a label.

    Returns
    -------
    bool
        True when the word starts with an upper-case letter, holds no lower-case one, and is
        letters with a digit (``S3``, ``SI2``, ``A.1``: at most 8 characters), a Roman numeral
        of two or more letters (``IV``), or, unless ``numero``, one capital letter alone
        (``Fig. A``).
    """
    m = _LABEL_TOKEN.match(text, pos)
    if m is None:
        return False
    token = m.group()
    if not token[0].isupper() or any(c.islower() for c in token):
        return False
    if any(c.isdigit() for c in token):
        return len(token) <= 8
    if _ROMAN.fullmatch(token):
        return True
    return len(token) == 1 and not numero
