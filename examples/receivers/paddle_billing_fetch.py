"""paddle_billing_fetch: `paddle_billing` reading each subscription it is told about through Paddle's API.

On a ``subscription.*`` event it fetches ``GET /subscriptions/{id}`` (the subscription as
Paddle has it now) and stores that status unless a newer ``updated_at`` is stored; when the API
fails it answers 503 before claiming the event, so Paddle's retry applies it. Dedupe and
effects are `paddle_billing`'s.
"""

from __future__ import annotations

from examples.receivers.paddle_billing import main

if __name__ == "__main__":
    main(fetch=True)
