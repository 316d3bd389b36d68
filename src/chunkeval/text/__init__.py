r"""Offset-preserving sentence, paragraph and word splitting, Markdown-aware.

Every function here returns (or is built on) half-open ``(start, end)``
spans of Python ``str`` indices (Unicode code points) into the input text,
so ``text[start:end]`` is the piece. Sentence and paragraph spans share three
invariants that the chunkers rely on:

* each span is stripped: ``text[start:end]`` neither starts nor ends with
  whitespace (whitespace as in ``str.isspace``, which is also regex ``\s``);
* spans are in order and do not overlap;
* together they cover every non-whitespace character of the text.

The splitters are regex and array driven (no per-character Python loop), so
they run in linear time on long documents. Line patterns (list items,
headings, table rows, blank lines) are tried only at the lines whose first
character can begin them, found with one array pass; a Python loop runs only
over the candidate sentence ends (terminators followed by whitespace), and
most of those -- a period after an ordinary word -- are decided once per
distinct word.

One module per concern: :mod:`~chunkeval.text.sentences` (sentence boundaries; its
docstring lists the rules), :mod:`~chunkeval.text.paragraphs`, :mod:`~chunkeval.text.words`,
:mod:`~chunkeval.text.graphemes` (grapheme cluster boundaries, UAX #29),
:mod:`~chunkeval.text.markdown` (the blocks sentence splitting keeps whole) and
:mod:`~chunkeval.text.lines` (the Markdown line patterns and the line index they run on);
this package exports their public functions.
"""

from chunkeval.text.graphemes import cluster_at, is_cluster_boundary, snap_forward
from chunkeval.text.markdown import fenced_code_spans, markdown_block_spans
from chunkeval.text.paragraphs import paragraph_spans, split_paragraphs
from chunkeval.text.sentences import sentence_spans, split_sentences
from chunkeval.text.words import count_words, word_bounds, word_spans

__all__ = [
    "cluster_at",
    "count_words",
    "fenced_code_spans",
    "is_cluster_boundary",
    "markdown_block_spans",
    "paragraph_spans",
    "sentence_spans",
    "snap_forward",
    "split_paragraphs",
    "split_sentences",
    "word_bounds",
    "word_spans",
]
