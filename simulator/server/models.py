"""Pydantic models of the server's requests and responses (they feed the OpenAPI schema).

Provider objects are open models (Stripe adds fields over time; the world's snapshots
carry ``hookproof_version`` too), so only the fields every answer has are declared.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class StripeObject(BaseModel):
    """Any Stripe object or event: ``id``, ``object`` and the object's own fields."""

    model_config = ConfigDict(extra="allow")
    id: str
    object: str


class StripeList(BaseModel):
    """Stripe's list shape: ``{"object": "list", "data": [...], "has_more": bool, "url": str}``."""

    object: Literal["list"]
    data: list[dict[str, Any]]
    has_more: bool
    url: str


class StripeErrorDetail(BaseModel):
    """Stripe's error object (docs.stripe.com/api/errors)."""

    model_config = ConfigDict(extra="allow")
    type: str
    message: str
    code: str | None = None
    param: str | None = None


class StripeErrorBody(BaseModel):
    """``{"error": {"type", "message", "code", "param"}}``."""

    error: StripeErrorDetail






class EffectIn(BaseModel):
    """``POST /sink/effects`` body: the effect to apply (extra fields are kept in the
    idempotency comparison but not stored)."""

    model_config = ConfigDict(extra="allow")
    business_key: str = Field(min_length=1, max_length=500)
    amount: int | None = None
    detail: Any = None


class EffectOut(BaseModel):
    """The sink's answer to an applied effect (``created``: unix seconds)."""

    id: str
    object: Literal["effect"]
    business_key: str
    amount: int | None
    detail: Any = None
    idempotency_key: str | None
    created: float
    path: str = "/effects"  # the path called under /sink


class EffectRow(BaseModel):
    """One row of ``GET /sink/effects`` (``at``: unix seconds)."""

    id: str
    business_key: str
    amount: int | None
    idempotency_key: str | None
    detail: Any = None
    at: float
    path: str = "/effects"  # the path called under /sink


class EffectListing(BaseModel):
    """``GET /sink/effects``: every applied effect and the count per business key."""

    effects: list[EffectRow]
    counts: dict[str, int]


class SwitchIn(BaseModel):
    """``POST /_hookproof/switches``: install a switch (``object_id`` null: global)."""

    model_config = ConfigDict(extra="forbid")
    object_id: str | None = None
    stale: bool = False
    not_found: bool = False
    status: int | None = None
    slow_s: float = 0.0
    rate_limit_per_s: int | None = None
    times: int | None = None


class SinkFaultIn(BaseModel):
    """``POST /_hookproof/sink/faults``: arm faults for one business key."""

    model_config = ConfigDict(extra="forbid")
    business_key: str
    fail_times: int = 0
    fail_status: int = 503
    drop_times: int = 0
    delay_s: float = 0.0


#: The error answers every provider's routes document in the OpenAPI schema (each in its
#: provider's own body shape; the request-validation 400 included).
PROVIDER_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "invalid parameters (a path parameter of the wrong type)"},
    401: {"description": "missing or invalid API key or token"},
    403: {"description": "the key may not perform this request"},
    404: {"description": "not found, or not visible yet (an injected switch)"},
    429: {"description": "rate limited (Retry-After)"},
    500: {"description": "injected server error"},
    502: {"description": "injected server error"},
    503: {"description": "injected server error"},
}
