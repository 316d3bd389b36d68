"""Claim an output folder for one run, stage its files, and publish them at the end.

Two ``chunkeval run --out X`` started together must not both write ``X``. The
folder is claimed by creating a marker file in it with ``O_CREAT | O_EXCL``,
which the operating system grants to one process only; the marker also says
that the run has not finished. Results are written into a staging folder inside
``X`` and moved into place at the end; the marker is removed last. A folder
therefore holds either a complete result set, or the marker (a run that is still
going, or was killed). :meth:`chunkeval.results.folder.Results.load` refuses
a folder with the marker.

This module imports nothing from :mod:`chunkeval`, so any module may use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from chunkeval._moments import moment
from chunkeval.errors import FolderBusy, UsageError

__all__ = [
    "STAGING_DIR",
    "UNFINISHED_MARKER",
    "FolderBusy",
    "FolderClaim",
    "claim_folder",
    "claim_new_folder",
    "move_into",
    "new_staging_dir",
    "refuse_symlink",
    "signals_held",
    "staging_dir",
]

#: Present while a run writes the folder; left behind when it is killed.
UNFINISHED_MARKER = "RUN-NOT-FINISHED.json"
#: Hidden folder inside the output folder where a run writes before publishing.
STAGING_DIR = ".chunkeval-staging"


def claim_folder(folder: str | os.PathLike, note: dict | None = None) -> FolderClaim:
    """Claim ``folder`` for one run: create it (or take an existing empty one) and mark it unfinished.

    Parameters
    ----------
    folder : str or path-like
        The output folder; created with its parents when missing. An existing
        folder must be empty.
    note : dict, optional
        JSON-serialisable facts written into the marker (command line ...);
        the process id and start time are added.

    Returns
    -------
    FolderClaim
        Holding the folder: write into ``staging``, then :meth:`FolderClaim.publish`,
        or :meth:`FolderClaim.release` on failure.

    Raises
    ------
    FolderBusy
        Another run holds the folder (its marker is named), it is not empty, or it is a file.
    OSError
        The folder cannot be created or written (permission, read-only, disk full).
    """
    claim = FolderClaim(folder)
    claim.take(note or {})
    return claim


#: How many suffixes :func:`claim_new_folder` tries (``NAME``, ``NAME-2`` ... ``NAME-1000``).
MAX_SUFFIX = 1000


def claim_new_folder(base: str | os.PathLike, note: dict | None = None) -> FolderClaim:
    """Claim a folder that this call creates: ``base``, or the next free ``base-2``, ``base-3`` ...

    For default output folder names: two runs started in the same second each get a folder
    of their own, because creating a folder succeeds for one process only.

    Parameters
    ----------
    base : str or path-like
    note : dict, optional
        As for :func:`claim_folder`.

    Returns
    -------
    FolderClaim

    Raises
    ------
    FolderBusy
        :data:`MAX_SUFFIX` names are all taken.
    """
    base = Path(base)
    for n in range(1, MAX_SUFFIX + 1):
        claim = FolderClaim(base if n == 1 else base.with_name(f"{base.name}-{n}"))
        try:
            claim.take(note or {}, new=True)
        except FileExistsError:
            continue
        return claim
    raise FolderBusy(f"{base} and {MAX_SUFFIX - 1} numbered variants of it exist; choose --out")


class FolderClaim:
    """Exclusive use of an output folder by one run (made by :func:`claim_folder`).

    Parameters
    ----------
    folder : str or path-like
        The output folder.

    Attributes
    ----------
    folder : pathlib.Path
    staging : pathlib.Path
        ``folder/.chunkeval-staging/<folder name>``: write everything here, then
        call :meth:`publish`. (The last component keeps the folder's name, so a
        report that shows its folder's name shows the right one.)
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.marker = self.folder / UNFINISHED_MARKER
        self.staging = staging_dir(self.folder)
        self._created = False
        self._claimed = False

    def take(self, note: dict, new: bool = False) -> None:
        """Claim the folder: create it if needed and the marker with ``O_EXCL``.

        Create the folder if needed and the marker with ``O_EXCL`` (see :func:`claim_folder`);
        with ``new``, a folder that exists already raises FileExistsError (nothing is claimed).
        """
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.folder.mkdir()
            self._created = True
        except FileExistsError:
            if new:
                raise
            if not self.folder.is_dir():
                raise FolderBusy(
                    f"{self.folder} is an existing file, not a folder; choose another --out"
                ) from None
        info = {
            **note,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "meaning": "a chunkeval run is writing this folder, or was killed before it finished; "
            "if no such process runs, delete the folder and run again",
        }
        try:
            fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            if _holder_is_gone(self.marker):
                raise FolderBusy(
                    f"output folder {self.folder} holds an unfinished run ({_describe(self.marker)}, "
                    "no longer running); delete the folder, or choose another --out"
                ) from None
            raise FolderBusy(
                f"output folder {self.folder} is in use by another chunkeval run "
                f"({_describe(self.marker)}); choose another --out"
            ) from None
        except OSError:
            self._remove_if_created()
            raise
        self._claimed = True  # from here on, release() must undo the claim
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(info, ensure_ascii=False) + "\n")
            others = [p.name for p in self.folder.iterdir() if p.name != UNFINISHED_MARKER]
            if others:
                raise FolderBusy(
                    f"output folder {self.folder} already exists and is not empty "
                    f"(it holds {others[0]!r}); choose another --out"
                )
            self.staging.mkdir(parents=True)
        except BaseException:
            self.release()
            raise

    def publish(self) -> None:
        """Move every staged file into the folder, then remove the marker.

        ``manifest.json`` moves last among the files, the marker after it; each
        move is a rename within one file system (no data is copied). SIGINT and SIGTERM are
        held meanwhile: a Ctrl-C during the moves arrives after them, on a complete
        result set, instead of leaving some files moved and the marker gone.
        """
        with signals_held():  # a Ctrl-C between two moves would leave half a result set
            move_into(self.staging, self.folder, last="manifest.json")
            shutil.rmtree(self.folder / STAGING_DIR, ignore_errors=True)
            self.marker.unlink()
            self._claimed = False

    def discard(self, names: tuple[str, ...]) -> None:
        """Remove staged files or folders ``names`` (e.g. a half-written report)."""
        for name in names:
            p = self.staging / name
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the folder back after a failure: staged files, marker and (if this run made it) the folder go."""
        if not self._claimed:
            return
        shutil.rmtree(self.folder / STAGING_DIR, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.marker.unlink()
        self._claimed = False
        self._remove_if_created()

    def _remove_if_created(self) -> None:
        if self._created:
            with contextlib.suppress(OSError):
                self.folder.rmdir()  # only while empty: never removes someone else's files


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends (main thread; elsewhere a no-op).

    A signal that arrives meanwhile is recorded, and the handler it would have met (Ctrl-C's
    ``KeyboardInterrupt``, the CLI's own) runs when the block ends, never between two of its
    steps. Python handlers, not a signal mask: Python runs them in the main thread whichever
    thread the operating system delivered the signal to.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[signal.Signals] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {
        sig: signal.signal(sig, lambda signum, frame: caught.append(signal.Signals(signum))) for sig in wanted
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            handler = previous[caught[0]]
            if callable(handler):
                handler(caught[0], None)
            elif handler in (signal.SIG_DFL, None):
                signal.raise_signal(caught[0])


def staging_dir(folder: Path) -> Path:
    """The staging folder of ``folder``.

    ``folder/.chunkeval-staging/<name of folder>``: the last component keeps the
    folder's name, so a report that shows its folder's name shows the right one.
    """
    return folder / STAGING_DIR / (folder.resolve().name or "results")


def move_into(source: Path, dest: Path, last: str | None = None) -> None:
    """Move every entry of ``source`` into ``dest`` by renaming, replacing entries of the same name.

    Parameters
    ----------
    source, dest : pathlib.Path
        Folders on one file system (renames copy no data).
    last : str, optional
        An entry moved after all others (``manifest.json``: it says the set is complete).
    """
    names = sorted(p.name for p in source.iterdir())
    names.sort(key=lambda n: n == last)
    for n, name in enumerate(names):
        target = dest / name
        if target.is_symlink():
            target.unlink()  # replace the link itself, never what it points to
        elif target.is_dir():
            shutil.rmtree(target)  # os.replace cannot replace a folder that has files
        os.replace(source / name, target)
        if n == 0:
            moment("publish.move")  # one entry moved, the others not yet


def new_staging_dir(folder: Path) -> tuple[Path, Path]:
    """A staging folder of this process only, inside ``folder``: ``(top, inner)``.

    ``top`` is created fresh (``mkdtemp``, never an existing folder or a link planted at a
    fixed name), so two commands writing into one results folder at once never share it; write
    into ``inner`` (which keeps ``folder``'s name, see :func:`staging_dir`), move its entries
    into ``folder``, then remove ``top``.

    Parameters
    ----------
    folder : pathlib.Path

    Returns
    -------
    tuple of pathlib.Path
    """
    top = Path(tempfile.mkdtemp(prefix=f"{STAGING_DIR}-", dir=folder))
    inner = top / (folder.resolve().name or "results")
    inner.mkdir()
    return top, inner


def refuse_symlink(path: Path, what: str) -> None:
    """Refuse to write ``what`` into ``path`` when it is a symbolic link.

    Raises
    ------
    UsageError
        Naming the path and where it points.
    """
    if path.is_symlink():
        raise UsageError(
            f"{path} is a symbolic link (to {os.readlink(path)}); chunkeval never writes {what} "
            "through a link: remove it, or choose another output folder"
        )


def _holder_is_gone(marker: Path) -> bool:
    """Whether the process named in a marker no longer runs on this machine (False if unsure)."""
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        pid = int(info.get("pid"))
        if info.get("host") not in (None, socket.gethostname()):
            return False  # another machine's run: cannot tell
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    return False


def _describe(marker: Path) -> str:
    """Who holds a marker: its pid, start time and command, as far as it can be read."""
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        argv = " ".join(info.get("argv") or [])
        return f"pid {info.get('pid')}, started {info.get('started_at')}" + (f": {argv}" if argv else "")
    except (OSError, ValueError, AttributeError):
        return f"see {marker}"
