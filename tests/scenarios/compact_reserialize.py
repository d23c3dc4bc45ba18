"""A receiver verifying the signature over its own compact re-dump of the JSON.

Exactly inbox_sync, except that the verifier is handed
``json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False)``: byte for byte the
body a provider sends compact (``generic-hmac``), so every first delivery verifies, and a
retry whose JSON was re-serialised (other key order or escapes, still correctly signed) is
refused with a 4xx after its event was acknowledged. The provider then retries it for days.
Stripe sends its bodies pretty-printed, so under ``stripe`` every genuine delivery is refused.
"""

from __future__ import annotations

import json
from typing import Any

from examples.receivers.reserialize_before_verify import ReserializeBeforeVerify
from hookproof.receivers import ReceiverConfig, make_app, run_cli


class CompactReserialize(ReserializeBeforeVerify):
    """reserialize_before_verify with a compact re-dump of the body."""

    name = "compact_reserialize"

    def redump(self, payload: Any) -> bytes:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(CompactReserialize(config))


if __name__ == "__main__":
    run_cli(create_app, CompactReserialize.name)
