"""Shared assertion for chunkers whose size rule is their own (tiktoken windows, external splitters)."""


def assert_exact_and_complete(text, chunks):
    """Offsets give the chunk text, no chunk is blank, starts increase, every non-space character is kept."""
    assert all(c.text == text[c.start : c.end] and c.text.strip() for c in chunks)
    starts = [c.start for c in chunks]
    assert starts == sorted(set(starts))
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
