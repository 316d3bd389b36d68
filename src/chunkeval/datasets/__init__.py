"""Datasets: documents plus questions with character-span evidence.

Load one with :func:`load` and a spec string (``"builtin"``, ``"jsonl:FOLDER"``,
``"chroma:FOLDER"``, ``"files:FOLDER"``, ``"squad:FILE?evidence=sentence"``,
``"synthetic:n_docs=100,seed=0"``; see :mod:`chunkeval.datasets.loaders`),
list the formats with :func:`available_loaders`, export any dataset to the
native format with :func:`save_jsonl`. Every loader validates before
returning and reports all problems in one :class:`DatasetError`.
"""

from chunkeval.datasets.chroma import load_chroma
from chunkeval.datasets.dataset import Dataset, DatasetError
from chunkeval.datasets.files import load_files
from chunkeval.datasets.jsonl import load_jsonl, save_jsonl
from chunkeval.datasets.loaders import available_loaders, load, load_builtin, load_documents, register_loader
from chunkeval.datasets.quotes import QuoteError, QuoteResolver
from chunkeval.datasets.squad import load_squad
from chunkeval.datasets.synthetic import generate_synthetic

__all__ = [
    "Dataset",
    "DatasetError",
    "QuoteError",
    "QuoteResolver",
    "available_loaders",
    "generate_synthetic",
    "load",
    "load_builtin",
    "load_chroma",
    "load_documents",
    "load_files",
    "load_jsonl",
    "load_squad",
    "register_loader",
    "save_jsonl",
]
