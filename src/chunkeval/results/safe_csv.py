"""CSV cells that a spreadsheet cannot run as formulas, with an exact way back.

A cell starting with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return,
which some spreadsheets skip before such a character) is run as a formula by
Excel, LibreOffice and Google Sheets: a question id ``=HYPERLINK(...)`` in
``per_question.csv`` becomes a live link. OWASP's recommendation for "CSV
injection" is to prefix such cells with a single quote, which spreadsheets show
as text. To make :func:`restore` exact, a cell that already starts with a
single quote gets one more, so removing one leading quote always gives back the
original string.

References
----------
OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

import pandas as pd

__all__ = ["TRIGGERS", "neutralise", "neutralise_frame", "restore", "restore_frame"]

#: First characters that make a spreadsheet evaluate a cell (plus the quote itself, for the round trip).
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "'")


def neutralise(value: object) -> object:
    """``"'" + value`` when ``value`` is a string starting with one of :data:`TRIGGERS`."""
    if isinstance(value, str) and value.startswith(TRIGGERS):
        return "'" + value
    return value


def restore(value: object) -> object:
    """Undo :func:`neutralise`: drop one leading single quote of a string."""
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    return value


def _text_columns(df: pd.DataFrame) -> list:
    return [c for c in df.columns if df[c].dtype == object or pd.api.types.is_string_dtype(df[c].dtype)]


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells are :func:`neutralise`-d (numbers are left alone).

    Parameters
    ----------
    df : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Same shape, columns and dtypes.
    """
    out = df.copy()
    for c in _text_columns(out):
        out[c] = out[c].map(neutralise)
    return out


def restore_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`neutralise_frame` in place on the text columns of ``df``; returns ``df``.

    Only the cells that start with a quote are rewritten (found in one vectorised pass:
    most tables have none).
    """
    for c in _text_columns(df):
        try:
            quoted = df[c].str.startswith("'").fillna(False).to_numpy(dtype=bool)
        except (AttributeError, TypeError):  # an object column of no strings at all
            continue
        if quoted.any():
            df.loc[quoted, c] = df.loc[quoted, c].map(restore)
    return df
