"""``python -m chunkeval``: the same as the ``chunkeval`` command."""

import os
import signal
import sys

if __name__ == "__main__":
    # Ctrl-C or SIGTERM while Python imports the command is held back, then delivered once
    # main() handles it (one line, exit 130 or 143); numpy turns an interrupted import of its
    # own into an ImportError with a page of advice
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from chunkeval.cli import main

    code = main()
    if code in (130, 143):
        # an interrupted import can leave CPython's "unhandled KeyboardInterrupt" mark set
        # although main() handled it, and Python then ends by killing itself with SIGINT;
        # the run's pools and clusters are already closed, so end with the code main() chose
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
