"""The team's webhook receiver, as its tests import it (here: hookproof's correct `inbox_sync`).

In a real project this module is your own app factory; hookproof only needs an ASGI or
WSGI app object and a way to observe its effects and states.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from hookproof.receivers import inbox_sync
from hookproof.receivers.config import ReceiverConfig
from hookproof.receivers.web import receiver_of

#: The endpoint secret the tests sign with (a test-only value).
SECRET = "whsec_pytest_project_test_only"

#: The receiver's database folder, removed when the test process exits.
_db_dir = tempfile.TemporaryDirectory(prefix="pytest-project-")
_db = os.path.join(_db_dir.name, "receiver.db")

#: The app under test. Provider API calls go to HOOKPROOF_API_BASE (hookproof routes it in process).
app = inbox_sync.create_app(ReceiverConfig(db_url=f"sqlite:///{_db}", secrets=(SECRET,),
                                           api_base=os.environ.get("HOOKPROOF_API_BASE")))


def observe() -> dict[str, Any]:
    """Effects and states, in the shape hookproof's python observer reads."""
    return receiver_of(app).observe()
