"""Abbreviations before a label (Fig. S3, Sec. IV) and Thai sentences ended by a space."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkeval.text import split_sentences
from chunkeval.text.abbreviations import LABEL_ABBREVIATIONS as _LABEL_ABBREVIATIONS
from chunkeval.text.abbreviations import NUMERO as _NUMERO

# (language, text, sentences): one row per abbreviation kind and language the splitter lists
TABLE = [
    ("en", "See Fig. S3 for the fit. It is poor.", ["See Fig. S3 for the fit.", "It is poor."]),
    ("en", "As Fig. A shows, it rises. Then it falls.", ["As Fig. A shows, it rises.", "Then it falls."]),
    ("en", "Sample No. A5 failed. We stopped.", ["Sample No. A5 failed.", "We stopped."]),
    ("en", "By Eq. A1 the sum is 2. Done.", ["By Eq. A1 the sum is 2.", "Done."]),
    ("en", "Sec. IV lists them. Sec. 4 too.", ["Sec. IV lists them.", "Sec. 4 too."]),
    ("en", "In Vol. II and Ch. XII it ends. Yes.", ["In Vol. II and Ch. XII it ends.", "Yes."]),
    ("en", "See Tab. B2 and Eq. 2.1 here. No.", ["See Tab. B2 and Eq. 2.1 here.", "No."]),
    ("de", "Siehe Abb. 3 und Nr. 5 oben. Dann Kap. B.", ["Siehe Abb. 3 und Nr. 5 oben.", "Dann Kap. B."]),
    ("de", "Vgl. Abb. S2 unten. Gut.", ["Vgl. Abb. S2 unten.", "Gut."]),
    ("es", "Ver la Fig. 2 y el Cap. IV. Bien.", ["Ver la Fig. 2 y el Cap. IV.", "Bien."]),
    ("es", "Véase Núm. 7 y Pág. 12. Listo.", ["Véase Núm. 7 y Pág. 12.", "Listo."]),
    ("fr", "Voir Éq. 3 et Chap. II. Fin.", ["Voir Éq. 3 et Chap. II.", "Fin."]),
    ("ro", "Vezi Fig. 4 și Nr. 6. Gata.", ["Vezi Fig. 4 și Nr. 6.", "Gata."]),
    ("ru", "См. Рис. 3 и Табл. 2. Да.", ["См. Рис. 3 и Табл. 2.", "Да."]),
    ("ru", "Гл. II и Разд. 4 ниже. Да.", ["Гл. II и Разд. 4 ниже.", "Да."]),
    ("el", "Δες Σχ. 2 και Κεφ. 3. Ναι.", ["Δες Σχ. 2 και Κεφ. 3.", "Ναι."]),
    ("tr", "Bkz. Şek. 3 ve Şek. A altta. Tamam.", ["Bkz. Şek. 3 ve Şek. A altta.", "Tamam."]),
]


@pytest.mark.parametrize(
    ("lang", "text", "sentences"), TABLE, ids=[f"{r[0]}-{i}" for i, r in enumerate(TABLE)]
)
def test_abbreviation_before_a_label_is_no_sentence_end(lang, text, sentences):
    assert split_sentences(text) == sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Was it? No. I think not.", ["Was it?", "No.", "I think not."]),  # "No." the word
        ("Was it? No. A dog did.", ["Was it?", "No.", "A dog did."]),
        ("It was late Jan. A new year began.", ["It was late Jan.", "A new year began."]),
        ("We met them. Fig trees grow. Sec. Then.", ["We met them.", "Fig trees grow.", "Sec.", "Then."]),
    ],
)
def test_no_label_no_change(text, sentences):
    assert split_sentences(text) == sentences


ABBREVIATIONS = sorted({w for words in _LABEL_ABBREVIATIONS.values() for w in words.split()})
LABELS = st.one_of(
    st.builds(lambda a, n: f"{a}{n}", st.sampled_from("ABCDS"), st.integers(1, 99)),
    st.sampled_from(["II", "III", "IV", "VI", "XII"]),
    st.builds(str, st.integers(1, 999)),
)


@given(st.sampled_from(ABBREVIATIONS), LABELS, st.booleans())
def test_any_listed_abbreviation_keeps_its_label(abbreviation, label, upper):
    word = abbreviation.capitalize() if upper else abbreviation
    text = f"Text {word}. {label} stays. Next."
    assert split_sentences(text) == [f"Text {word}. {label} stays.", "Next."]


@given(st.sampled_from(sorted(set(ABBREVIATIONS) - _NUMERO)), st.sampled_from("ABCDEFGHJKLMS"))
def test_a_single_capital_label_stays_except_after_number(abbreviation, letter):
    text = f"See {abbreviation.capitalize()}. {letter} here. Next."
    assert split_sentences(text) == [f"See {abbreviation.capitalize()}. {letter} here.", "Next."]


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("ไปแล้ว ฉันกลับบ้าน", ["ไปแล้ว", "ฉันกลับบ้าน"]),
        ("ในปี 2020 บริษัท Apple ขายดี", ["ในปี 2020 บริษัท Apple ขายดี"]),  # digits, Latin: no cut
        ("ไปแล้ว\nฉันกลับบ้าน", ["ไปแล้ว\nฉันกลับบ้าน"]),  # a line break inside a paragraph
        ("ໄປແລ້ວ ຂ້ອຍກັບບ້ານ", ["ໄປແລ້ວ", "ຂ້ອຍກັບບ້ານ"]),  # Lao
        ("ที่นี่  ที่นั่น", ["ที่นี่", "ที่นั่น"]),  # a tone mark before the space
    ],
)
def test_thai_and_lao_sentences_end_at_a_space_between_letters(text, sentences):
    assert split_sentences(text) == sentences
