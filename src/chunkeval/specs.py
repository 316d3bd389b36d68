"""The spec grammars: how a chunker, retriever, embedder or tokenizer is named in one string.

``name`` or ``name(key=literal, ...)`` (:func:`parse_spec`), with Python literals as values.
"""

from __future__ import annotations

import ast
from typing import Any

from chunkeval._limits import check_spec_length

__all__ = ["parse_spec"]


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"name"`` or ``"name(key=literal, ...)"`` into ``(name, params)``.

    Values must be Python literals (numbers, strings, booleans, None, tuples, lists).

    Returns
    -------
    name : str
    params : dict[str, object]

    Raises
    ------
    ValueError
        When the string is not of that form, naming the offending part.
    """
    check_spec_length(spec, "chunker")
    text = spec.strip()
    try:
        tree = ast.parse(text, mode="eval").body
    except (RecursionError, MemoryError):
        raise ValueError(f"cannot parse spec {spec[:40]!r}...: nested too deeply") from None
    except SyntaxError as error:
        raise ValueError(
            f"cannot parse spec {spec!r}: {error.msg}; expected name(key=value, ...), "
            "e.g. \"fixed(chunk_size=200, chunk_overlap=0, unit='tokens')\""
        ) from None
    if isinstance(tree, ast.Name):
        return tree.id, {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)) or tree.args:
        raise ValueError(
            f"cannot parse spec {spec!r}: expected name(key=value, ...) with keyword arguments only"
        )
    params: dict[str, Any] = {}
    for keyword in tree.keywords:
        if keyword.arg is None:
            raise ValueError(f"spec {spec!r}: **kwargs are not allowed")
        if keyword.arg in params:
            raise ValueError(f"spec {spec!r}: parameter {keyword.arg!r} is given twice")
        try:
            params[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise ValueError(
                f"spec {spec!r}: value of {keyword.arg!r} must be a literal "
                "(number, quoted string, True/False/None)"
            ) from None
    return tree.func.id, params
