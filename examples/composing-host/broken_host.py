#!/usr/bin/env python3
"""The example composing host with one deliberate bug: it skips the
per-provider audit and composes every provider's raw reply. A provider that
floods the host with frames (B4) is therefore re-admitted, and
`ctxkit conform composition --exec python3 examples/composing-host/broken_host.py`
fails the composition-quarantine check, naming it.
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the example
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import host  # noqa: E402

# The bug: every leg counts as honest.
host.leg_is_honest = lambda frames, query: True

if __name__ == "__main__":
    host.main()
