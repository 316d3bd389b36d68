"""Shared test helpers: where the read-only evaluation data lives."""

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


def shared_path(*parts: str) -> Path:
    """Path under ../shared (beside the repository); skip the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared evaluation data lives beside the repository as ../shared")
    return path
