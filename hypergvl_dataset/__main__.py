"""`python -m hypergvl` is the `hypergvl` command."""
import sys

from .cli import main

sys.exit(main())
