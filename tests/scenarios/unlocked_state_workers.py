"""unlocked_state_check served by several uvicorn worker processes over one SQLite file.

The multi-process form of `tests.scenarios.unlocked_state_check` (gunicorn's or uvicorn's
``--workers``): each worker process builds the app from the receiver's flags in
``UNLOCKED_STATE_ARGS`` (``--db sqlite:///… --profile stripe --option stored_only=1``…), and
SQLite's ``BEGIN IMMEDIATE`` locks the file across them, so ``--option locked=1`` is as correct
here as in one process. Run as ``UNLOCKED_STATE_ARGS='…' python -m uvicorn
tests.scenarios.unlocked_state_workers:app --workers 3 --port N`` from the repository root.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from hookproof.receivers.cli import parse_args
from tests.scenarios.unlocked_state_check import UnlockedStateCheck, create_app

#: The environment variable holding the receiver's flags (`hookproof.receivers.cli.parse_args`).
ARGS = "UNLOCKED_STATE_ARGS"

app: Any = create_app(parse_args(UnlockedStateCheck.name, shlex.split(os.environ.get(ARGS, "")))[1])
