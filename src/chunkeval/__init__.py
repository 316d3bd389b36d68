"""chunkeval: measure how a chunking strategy changes retrieval of known evidence."""

from chunkeval.types import Chunk, Document, EvidenceSpan, Question

__version__ = "0.1.0"

__all__ = ["Chunk", "Document", "EvidenceSpan", "Question", "__version__"]
