"""chunkeval: measure how a chunking strategy changes retrieval of known evidence."""

from chunkeval.types import Chunk, Document, EvidenceSpan, Question

#: The one place the version is written; ``pyproject.toml`` reads it from here.
__version__ = "0.2.0.dev0"

__all__ = ["Chunk", "Document", "EvidenceSpan", "Question", "__version__"]
