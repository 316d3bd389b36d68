"""Markdown-aware sentence segmentation: tables, fences, headings, emphasis, footnotes, initials.

The small inputs are the field faults T-09..T-12 of ../shared/cases/text_faults.jsonl (copied here
with hand-computed spans, so the tests run without the shared folder); the hypothesis test
generates Markdown documents of the same kinds and checks that no sentence span starts or ends
strictly inside a table row or a fenced code block.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkeval.chunkers import get_chunker
from chunkeval.text import (
    fenced_code_spans,
    markdown_block_spans,
    paragraph_spans,
    sentence_spans,
    split_sentences,
)

TABLE = "| Name | Note |\n|---|---|\n| Dr. Smith | arrived 2 p.m. Left early. |\n| Ann | ok. Fine |"
FENCE = "Intro text here.\n\n```python\n# compute total\nx = 1. \ny = 2\n```\nAfter code. Done."


def test_table_rows_are_units_t09():
    # line ends: "| Name | Note |" is 15 characters, "|---|---|" 9, the Dr. Smith row 42, the last 18.
    # (The case file states 14, 24, 63, 81, which are not line ends of its own text: off by 1-6.)
    assert sentence_spans(TABLE) == [(0, 15), (16, 25), (26, 68), (69, 87)]
    for max_chars in (10, 20, 45, 60, 200):
        chunks = get_chunker("sentence", max_chars=max_chars).chunk(TABLE)
        assert {c.end for c in chunks} <= {15, 25, 68, 87}
        assert {c.start for c in chunks} <= {0, 16, 26, 69}
    assert [(c.start, c.end) for c in get_chunker("sentence", max_chars=45).chunk(TABLE)] == [
        (0, 25),
        (26, 68),
        (69, 87),
    ]


def test_table_without_outer_pipes_and_pipe_led_rows():
    text = "a | b\n--|--\nc. d | e. f\nno pipe. Here.\n\n  | x. y |\r| z. w |"
    assert split_sentences(text) == [
        "a | b",
        "--|--",
        "c. d | e. f",
        "no pipe.",
        "Here.",
        "| x. y |",
        "| z. w |",
    ]


def test_code_fence_is_one_unit_t10():
    assert sentence_spans(FENCE) == [(0, 16), (18, 61), (62, 73), (74, 79)]
    assert FENCE[18:61] == "```python\n# compute total\nx = 1. \ny = 2\n```"
    chunks = get_chunker("sentence", max_chars=30).chunk(FENCE)
    assert [(c.start, c.end) for c in chunks] == [(0, 16), (18, 61), (62, 79)]
    assert all(c.text.count("```") % 2 == 0 for c in chunks)


def test_fence_variants():
    # tildes, longer fences (a shorter inner fence does not close), indentation, blank lines inside
    text = "See:\n  ~~~~\n  a. B\n\n  ~~~\n  ~~~~~\nThen. End."
    assert fenced_code_spans(text) == [(5, 33)]
    assert split_sentences(text) == ["See:", "~~~~\n  a. B\n\n  ~~~\n  ~~~~~", "Then.", "End."]
    assert paragraph_spans(text) == [(0, 44)]  # the blank line inside the fence splits nothing
    # a backtick fence's info string has no backtick: "```a```" is inline code, not a fence
    assert fenced_code_spans("```a```\nx. Y.\n```") == []
    # an opening fence that is never closed is an ordinary line
    assert split_sentences("```\nOne. Two.") == ["```\nOne.", "Two."]


def test_terminators_inside_emphasis_and_before_footnotes_t11():
    text = "**Note.** The server restarts nightly. *Warning!* Save first."
    assert sentence_spans(text) == [(0, 9), (10, 38), (39, 49), (50, 61)]
    assert split_sentences("It grew 4%.[1] Then it fell.[^note] Later _maybe._ Done.") == [
        "It grew 4%.[1]",
        "Then it fell.[^note]",
        "Later _maybe._",
        "Done.",
    ]
    assert split_sentences("~~Old.~~ New text. **e.g.** this stays.") == [
        "~~Old.~~",
        "New text.",
        "**e.g.** this stays.",
    ]


def test_setext_and_atx_headings_stand_alone_t12():
    text = "Installation\n============\nRun the installer. Reboot.\n\nUsage\n-----\nStart the app."
    assert split_sentences(text) == [
        "Installation\n============",
        "Run the installer.",
        "Reboot.",
        "Usage\n-----",
        "Start the app.",
    ]
    assert sentence_spans(text) == [(0, 25), (26, 44), (45, 52), (54, 65), (66, 80)]
    assert split_sentences("## Dr. Who. Series 2\nText here.") == ["## Dr. Who. Series 2", "Text here."]
    # a list item above a dash line is not a setext heading
    assert split_sentences("- one\n---\nNext.") == ["- one", "---\nNext."]


def test_quoted_and_bracketed_initials():
    assert split_sentences('Matthew Stephen "M." Ward was born. He left.') == [
        'Matthew Stephen "M." Ward was born.',
        "He left.",
    ]
    assert split_sentences("Written by John (Q.) Public in 1990. It sold.") == [
        "Written by John (Q.) Public in 1990.",
        "It sold.",
    ]
    # a quoted letter before a sentence starter still ends the sentence
    assert split_sentences('He picked "A." Then he left.') == ['He picked "A."', "Then he left."]


def test_blocks_inside_a_fence_belong_to_it():
    text = "```\n# not a heading\n| a | b |\n|---|---|\n```"
    assert markdown_block_spans(text) == [(0, len(text))]
    assert sentence_spans(text) == [(0, len(text))]


# --------------------------------------------------------------------------- generated Markdown
WORDS = ["alpha", "Beta", "gamma", "Dr.", "e.g.", "2.5", "p.m.", "U.S.", "J.", "ok", "Note", "x"]


def _sentence(draw):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
    end = draw(st.sampled_from([".", "!", "?", ".**", "._", ".[1]", ".[^n]", '."', "", "..."]))
    lead = draw(st.sampled_from(["", "**", "*", '"']))
    return lead + " ".join(words) + end


@st.composite
def markdown_document(draw):
    """A Markdown text plus the spans of its table rows and fences (where no cut may fall)."""
    parts: list[str] = []
    protected: list[tuple[int, int]] = []
    position = 0

    def add(text, keep=False):
        nonlocal position
        parts.append(text)
        if keep:  # from the first non-blank character (indentation is stripped from spans)
            protected.append((position + len(text) - len(text.lstrip()), position + len(text)))
        position += len(text)

    for i in range(draw(st.integers(1, 6))):
        if i:
            add(draw(st.sampled_from(["\n\n", "\n", "\n \n"])))
        kind = draw(st.sampled_from(["paragraph", "table", "fence", "heading", "list"]))
        if kind == "paragraph":
            sentences = [_sentence(draw) for _ in range(draw(st.integers(1, 4)))]
            add(draw(st.sampled_from([" ", "\n"])).join(sentences))
        elif kind == "table":
            outer = draw(st.booleans())
            cols = draw(st.integers(1, 3))

            def row(cells, outer=outer, cols=cols):
                body = " | ".join(cells)
                return f"| {body} |" if outer or cols == 1 else body

            add(row([_sentence(draw) for _ in range(cols)]), keep=True)
            add("\n")
            add(row(["---"] * cols), keep=True)
            for _ in range(draw(st.integers(0, 3))):
                add("\n")
                add(row([_sentence(draw) for _ in range(cols)]), keep=True)
        elif kind == "fence":
            char = draw(st.sampled_from("`~"))
            n = draw(st.integers(3, 5))
            indent = draw(st.sampled_from(["", "  "]))
            lines = [indent + char * n + draw(st.sampled_from(["", "python", " sh"]))]
            lines += draw(
                st.lists(
                    st.sampled_from(
                        [
                            "x = 1. ",
                            "",
                            "# comment. Next",
                            "- item. More",
                            "| a. | b |",
                            "|---|",
                            "1. one",
                            "Dr. A. B. Ok.",
                            "``",
                        ]
                    ),
                    max_size=5,
                )
            )
            lines.append(indent + char * draw(st.integers(n, n + 2)))
            add("\n".join(lines), keep=True)
        elif kind == "heading":
            title = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
            add(draw(st.sampled_from([f"# {title}", f"### {title}", f"{title}\n=====", f"{title}\n---"])))
        else:
            items = [_sentence(draw) for _ in range(draw(st.integers(1, 3)))]
            add("\n".join(f"{draw(st.sampled_from(['-', '*', '1.']))} {item}" for item in items))
    return "".join(parts), protected


def _strictly_inside(pos, region):
    return region[0] < pos < region[1]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=markdown_document(), max_chars=st.integers(5, 120))
def test_no_span_starts_or_ends_inside_a_row_or_fence(doc, max_chars):
    text, protected = doc
    spans = sentence_spans(text)
    for region in protected:
        a, b = region
        assert not any(_strictly_inside(s, region) or _strictly_inside(e, region) for s, e in spans), (
            text[a:b],
            [text[s:e] for s, e in spans],
        )
        assert (a, b) in spans  # the block stands alone
    fences = [r for r in protected if re.match(r"\s*(```|~~~)", text[r[0] : r[1]])]
    for spec in (f"sentence(max_chars={max_chars})", f"token_budget(max_tokens={max_chars // 4 + 1})"):
        for chunk in get_chunker(spec).chunk(text):
            assert not any(
                _strictly_inside(chunk.start, r) or _strictly_inside(chunk.end, r) for r in protected
            )
            whole = sum(1 for a, b in fences if chunk.start <= a and b <= chunk.end)
            fence_lines = len(re.findall(r"(?m)^\s*(?:```|~~~)", chunk.text))
            assert fence_lines == 2 * whole  # every chunk holds whole fences: an even number of fence lines
