"""Test-wide configuration: the markers' meaning and which tests a marker adds automatically.

Markers (declared in ``pyproject.toml``):

* ``slow``: more than ~1.5 s, or a full suite / real dataset; the default selection
  (``python -m pytest``) leaves them out, CI runs them (``python -m pytest -m "slow or not
  slow"``). Set by hand, with ``@pytest.mark.slow`` or a module's ``pytestmark``, and added
  here to every test that uses one of :data:`SLOW_FIXTURES` (a real run per module).
* ``needs_shared_data``: reads ``../shared`` (skips with a reason when it is absent). Added
  here to every test that reaches :data:`_shared.SHARED` or :func:`_shared.shared_path`.
* ``needs_extra``: needs an optional extra (skips with a reason when it is not installed).
  Added here to every test that reaches ``pytest.importorskip`` of an extra's module.
* ``browser``: drives a real headless Chromium. Set by hand.

"Reaches" follows the names a test's code uses: the test function, its fixtures, and the
helper functions of the test folder they call, transitively; a module-level constant that
is a path under ``../shared`` counts as ``SHARED``, and a module-level
``pytest.importorskip`` of an extra marks the whole module.
"""

from __future__ import annotations

import ast
import inspect
import signal
import textwrap
import types
from functools import cache
from pathlib import Path

import pytest

from _shared import SHARED, shared_path

TESTS = Path(__file__).resolve().parent

#: The timing report of the slowest phases and the opt-in budget check (see ``_timing``).
pytest_plugins = ["_timing"]


def _stop_signals_as_a_terminal_gives_them() -> None:
    """Give SIGINT and SIGTERM their usual actions in the test processes and what they start.

    A suite started in the background of a shell without job control (``pytest &``, ``nohup``,
    a CI runner's script) inherits SIGINT ignored, and every command a test starts inherits
    it in turn; the tests of Ctrl-C would then see a run that never stops.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


_stop_signals_as_a_terminal_gives_them()

#: Import names of the optional extras' packages (``pyproject.toml``'s optional dependencies).
EXTRA_MODULES = frozenset(
    {
        "tiktoken",
        "tiktoken_ext",
        "tokenizers",
        "pyarrow",
        "dask",
        "distributed",
        "langchain_text_splitters",
        "chonkie",
        "semchunk",
        "yaml",
        "sentence_transformers",
        "httpx",
    }
)


#: Fixtures that make a real run (seconds even on a quiet machine): a test using one is slow.
SLOW_FIXTURES = frozenset({"run_results", "report_folder", "suite_run"})


def _under_shared(value: object) -> bool:
    if value is SHARED or value is shared_path:
        return True
    if isinstance(value, (str, Path)) and str(value).startswith(str(SHARED)):
        return True
    return isinstance(value, (tuple, list, frozenset, set)) and any(map(_under_shared, value))


def _names(code: types.CodeType) -> set[str]:
    """Global and attribute names a code object uses, nested functions and lambdas included."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _test_function(func: object) -> types.FunctionType | None:
    """The plain function behind a test or fixture (unwrapping hypothesis' ``@given``)."""
    inner = getattr(getattr(func, "hypothesis", None), "inner_test", None)
    func = inspect.unwrap(inner or func)
    return func if isinstance(func, types.FunctionType) else None


def _in_tests(func: types.FunctionType) -> bool:
    return _file_in_tests(func.__code__.co_filename)


@cache
def _file_in_tests(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(TESTS)


@cache
def _extras_skipped_in(func: types.FunctionType) -> frozenset[str]:
    """Extra modules that ``func``'s own source passes to ``pytest.importorskip``."""
    if "importorskip" not in _names(func.__code__):
        return frozenset()  # most functions: no source to read and parse
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    return (
        frozenset(
            node.args[0].value.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        )
        & EXTRA_MODULES
    )


def _reach(func: types.FunctionType, seen: set[types.FunctionType]) -> tuple[bool, bool]:
    """``(reads ../shared, skips on an extra)`` for ``func`` and the test-folder helpers it calls."""
    seen.add(func)
    shared, extra = False, bool(_extras_skipped_in(func))
    for name in _names(func.__code__):
        value = func.__globals__.get(name)
        if _under_shared(value):
            shared = True
        helper = _test_function(value) if callable(value) else None
        if helper is not None and helper not in seen and _in_tests(helper):
            more = _reach(helper, seen)
            shared, extra = shared or more[0], extra or more[1]
    return shared, extra


@cache
def _module_skips_on_an_extra(path: Path) -> bool:
    """Whether a test module calls ``pytest.importorskip`` of an extra at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        call = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if (
            isinstance(call, ast.Call)
            and getattr(call.func, "attr", None) == "importorskip"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and str(call.args[0].value).split(".")[0] in EXTRA_MODULES
        ):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add ``slow``, ``needs_shared_data`` and ``needs_extra`` where a test reaches them (see above)."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        funcs = [getattr(item, "function", None)]
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info else ():
            funcs += [fixture.func for fixture in defs]
        shared = extra = False
        seen: set[types.FunctionType] = set()
        for func in filter(None, map(_test_function, funcs)):
            if func not in seen and _in_tests(func):
                more = _reach(func, seen)
                shared, extra = shared or more[0], extra or more[1]
        path = getattr(item, "path", None)
        extra = extra or (path is not None and path.suffix == ".py" and _module_skips_on_an_extra(path))
        if shared and not item.get_closest_marker("needs_shared_data"):
            item.add_marker(pytest.mark.needs_shared_data)
        if extra and not item.get_closest_marker("needs_extra"):
            item.add_marker(pytest.mark.needs_extra)
        if item.get_closest_marker("needs_shared_data") and not SHARED.is_dir():
            item.add_marker(
                pytest.mark.skip(
                    reason=f"{SHARED} is absent: the shared evaluation data lives beside the repository as ../shared"
                )
            )
