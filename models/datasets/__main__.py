"""``python -m hypergvl.models.datasets``: an alias of ``hypergvl datasets`` (:mod:`hypergvl.models.datasets_command`)."""
import sys

from hypergvl.models.datasets_command import main

if __name__ == "__main__":
    sys.exit(main())
