"""``python -m harness``: the ``harness`` command (harness/launch.py, then harness/cli.py)."""
import sys

from harness.launch import main

sys.exit(main())
