"""python3 -m slab [--verify] FILE...: each .slab file's summary, or a check of every byte
(the command line of scripts/slab.py, which this package's __init__.py is)."""
import sys

from . import main

sys.exit(main(sys.argv[1:]))
