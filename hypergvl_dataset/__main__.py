"""`python -m hypergvl_dataset` is the `hypergvl` command."""
import sys

from .cli import main

sys.exit(main())
