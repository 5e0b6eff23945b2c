"""``python -m sssp``: the ``sssp`` command line (see :mod:`sssp.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
