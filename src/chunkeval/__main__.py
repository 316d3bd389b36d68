"""``python -m chunkeval``: the same as the ``chunkeval`` command."""

import sys

from chunkeval.cli import main

if __name__ == "__main__":
    sys.exit(main())
