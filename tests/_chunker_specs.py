"""Chunker configurations with small limits, shared by the contract tests and the runner's
end-to-end tests (tests/chunkers, tests/datasets)."""

# Small limits so that random texts produce many chunks. A new chunker is
# tested by adding its name here; test_every_registered_chunker_is_covered fails until then.
CONFIGS = {
    "fixed": [
        "fixed(chunk_size=12, chunk_overlap=4, unit='chars')",
        "fixed(chunk_size=5, chunk_overlap=2, unit='tokens')",
        "fixed(chunk_size=1, chunk_overlap=0, unit='chars')",
    ],
    "sentence": ["sentence(max_chars=40)", "sentence(max_chars=60, overlap_sentences=2)"],
    "paragraph": ["paragraph(max_words=6)"],
    "token_budget": ["token_budget(max_tokens=10)", "token_budget(max_tokens=12, overlap_tokens=6)"],
    "balanced": ["balanced(max_tokens=10)"],
    "semantic": [
        "semantic(threshold=0.3, max_chars=50, overlap_sentences=1)",
        "semantic(embedder='lsa', threshold=0.0, window_size=2, max_chars=80)",
        "semantic(threshold='p30', max_chars=60)",
    ],
    "kamradt": ["kamradt(percentile=70)", "kamradt(buffer_size=0, max_tokens=12)"],
    "cluster": [
        "cluster(max_tokens=20, piece_tokens=6)",
        "cluster(embedder='lsa', max_tokens=12, piece_tokens=3)",
        "cluster(max_tokens=12, piece_tokens=4, method='chroma')",
    ],
}
ALL_SPECS = [spec for specs in CONFIGS.values() for spec in specs]
