"""A receiver's configuration: what its CLI flags and environment variables set."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

#: Where a receiver keeps its tables when no database URL is given (relative to the cwd).
DEFAULT_DB_URL = "sqlite:///receiver.db"


@dataclass(frozen=True)
class ReceiverConfig:
    """Everything a reference receiver needs to run.

    Attributes:
        db_url: SQLAlchemy URL of the receiver's own database (SQLite file or PostgreSQL).
        profile: the provider profile it verifies (``stripe`` or ``standard-webhooks``).
        secrets: endpoint secrets; a request signed by any of them passes (secret rotation).
        live: True to accept only live-mode events, False for test-mode only.
        account: when set, events of any other provider account are refused.
        api_base: base URL of the provider API (receivers that fetch current state).
        api_key: the provider API key sent as ``Authorization: Bearer``.
        sink_url: base URL of the downstream effect sink (receivers whose effect is a call).
        options: per-receiver tuning (e.g. ``{"effect_delay_s": 0.1}``), documented by each receiver.
    """

    db_url: str = DEFAULT_DB_URL
    profile: str = "stripe"
    secrets: tuple[str, ...] = ()
    live: bool = False
    account: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    sink_url: str | None = None
    options: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.secrets or any(not s for s in self.secrets):
            raise ValueError("a receiver needs at least one non-empty webhook secret")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "ReceiverConfig":
        """Read the configuration from environment variables (the twelve-factor way).

        ``DATABASE_URL``, ``WEBHOOK_PROFILE``, ``WEBHOOK_SECRET`` (several separated by
        spaces), ``WEBHOOK_LIVE`` (``1``/``true``), ``WEBHOOK_ACCOUNT``, ``PROVIDER_API_BASE``
        (or hookproof's ``HOOKPROOF_API_BASE``), ``PROVIDER_API_KEY``, ``EFFECT_SINK_URL``
        (or ``HOOKPROOF_SINK_URL``).
        """
        env = os.environ if environ is None else environ
        return cls(
            db_url=env.get("DATABASE_URL", DEFAULT_DB_URL),
            profile=env.get("WEBHOOK_PROFILE", "stripe"),
            secrets=tuple(env.get("WEBHOOK_SECRET", "").split()),
            live=env.get("WEBHOOK_LIVE", "").lower() in ("1", "true", "yes"),
            account=env.get("WEBHOOK_ACCOUNT") or None,
            api_base=env.get("PROVIDER_API_BASE") or env.get("HOOKPROOF_API_BASE") or None,
            api_key=env.get("PROVIDER_API_KEY") or None,
            sink_url=env.get("EFFECT_SINK_URL") or env.get("HOOKPROOF_SINK_URL") or None,
        )

    def option(self, name: str, default: float) -> float:
        """A tuning option, or `default`."""
        return float(self.options.get(name, default))
