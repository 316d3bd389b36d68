"""Where the repository and the read-only evaluation data (``../shared``) are, for every test."""

from pathlib import Path

import pytest

#: The repository's root folder.
REPO = Path(__file__).resolve().parents[1]
#: ``../shared`` beside the repository: real evaluation data and field cases (read-only).
SHARED = REPO.parent / "shared"


def shared_path(*parts: str) -> Path:
    """Path under ../shared (beside the repository); skip the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared evaluation data lives beside the repository as ../shared")
    return path
