"""Write the generated tables of ``docs/*.md`` into the committed Markdown.

Each page keeps its generated blocks (the metrics table and formulas, the results format's
tables) between ``<!-- begin generated NAME ... -->`` and ``<!-- end generated NAME -->``
lines, so that it reads on a code host, not only on the built site. The generators are those
of the documentation build (``docs/hooks.py``); this script only writes their output into the
files. ``tests/test_docs.py`` fails when a committed block is stale.

Usage::

    python tools/docs_tables.py            # rewrite every stale block
    python tools/docs_tables.py --check    # exit 1 naming the stale pages, write nothing
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def load_hooks() -> ModuleType:
    """``docs/hooks.py`` as a module (it is no package's module)."""
    spec = importlib.util.spec_from_file_location("chunkeval_docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages_with_blocks(hooks: ModuleType) -> list[Path]:
    """The pages of ``docs/`` that hold a generated block."""
    return [p for p in sorted(DOCS.glob("*.md")) if hooks.block_names(p.read_text(encoding="utf-8"))]


def stale_pages(hooks: ModuleType, write: bool) -> list[str]:
    """The pages whose blocks differ from what the code generates now (rewritten when ``write``)."""
    stale = []
    for page in pages_with_blocks(hooks):
        text = page.read_text(encoding="utf-8")
        fresh = hooks.fill(text, page.name)
        if fresh != text:
            stale.append(page.name)
            if write:
                page.write_text(fresh, encoding="utf-8")
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    args = parser.parse_args()
    stale = stale_pages(load_hooks(), write=not args.check)
    for name in stale:
        print(f"docs/{name}: {'stale' if args.check else 'written'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
