"""Display labels are computed from the label and spec strings, without building a chunker."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from chunkeval.labels import BUILTIN_DEFAULTS, compact_display_label, display_label


def test_builtin_defaults_match_the_chunkers_signatures():
    from chunkeval.chunkers import get_chunker

    for name, defaults in BUILTIN_DEFAULTS.items():
        chunker = get_chunker(name)
        params = chunker.get_params(deep=False)
        signature = inspect.signature(type(chunker).__init__).parameters
        assert defaults == {k: p.default for k, p in signature.items() if k in params}, name


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("fixed(chunk_size=128, chunk_overlap=0, unit='tokens', tokenizer='regex')", "fixed(128)"),
        ("fixed(chunk_size=80, chunk_overlap=20, unit='chars')", "fixed(80, 20, chars)"),
        (
            "semantic(embedder='hashing', threshold=0.1, window_size=3, max_chars=600, overlap_sentences=0)",
            "semantic(…, 600)",
        ),
        ("balanced(max_tokens=128, tokenizer='regex')", "balanced(128)"),
        ("fixed", "fixed(200)"),
        (
            "langchain:RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0)",
            "langchain:Recur…(800, 0)",
        ),
    ],
)
def test_compact_display_label(spec, expected):
    assert compact_display_label(spec, spec, 24) == expected


def test_a_users_label_is_kept_and_display_label_drops_names():
    assert compact_display_label("mine", "fixed(chunk_size=64)", 24) == "mine"
    assert display_label("fixed(chunk_size=200, chunk_overlap=0, unit='tokens')") == "fixed(200, 0, tokens)"


def test_labels_import_no_chunker():
    code = (
        "import sys, chunkeval.labels as L; "
        "L.compact_display_label('fixed', 'fixed', 24); "
        "assert not any(m.startswith('chunkeval.chunkers') for m in sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
