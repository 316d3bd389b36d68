"""Give freed heap memory back to the operating system between the runner's stages."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

__all__ = ["release_freed_memory"]


@functools.cache
def _malloc_trim():  # type: ignore[no-untyped-def]
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_freed_memory() -> None:
    """Return the heap memory freed so far to the operating system, where the C library can.

    glibc keeps freed blocks for reuse, and a configuration's many mid-sized arrays and
    objects differ in size from the next one's, so a long run's resident memory grew by
    about 120 MB at 100 MB of corpus without holding more data. ``malloc_trim(0)`` (glibc)
    releases it, as Dask's workers do; elsewhere this does nothing.

    Returns
    -------
    None
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
