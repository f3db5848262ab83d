"""``python -m optitree``: the same command line as the ``optitree`` program."""

import sys

from optitree.cli import main

if __name__ == "__main__":
    sys.exit(main())
