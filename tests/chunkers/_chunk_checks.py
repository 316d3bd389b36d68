"""Shared assertion for chunkers whose size rule is their own (tiktoken windows, external splitters)."""


def assert_exact_and_complete(text, chunks, *, shared_starts=False):
    """Offsets give the chunk text, no chunk is blank, starts increase, every non-space character is kept.

    With ``shared_starts`` (an external splitter, reported as the library splits), two chunks
    may start at one offset, as LangChain's overlap makes a piece and a longer one after it
    (``"😀🎉"``, then ``"😀🎉 \r\n 你好…"``); starts still never decrease and no span repeats.
    """
    assert all(c.text == text[c.start : c.end] and c.text.strip() for c in chunks)
    starts = [c.start for c in chunks]
    if shared_starts:
        spans = [(c.start, c.end) for c in chunks]
        assert starts == sorted(starts) and len(set(spans)) == len(spans)
    else:
        assert starts == sorted(set(starts))
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
