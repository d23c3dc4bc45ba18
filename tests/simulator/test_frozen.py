"""`simulator.frozen.fast_init`: the same frozen value as the class's own constructor."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from hookproof.simulator.delivery.history import Attempt, Completion, Outcome, new_attempt
from hookproof.simulator.frozen import fast_init
from hookproof.simulator.profiles.base import SignedRequest, new_signed_request


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    tags: tuple[str, ...] = ()
    extra: dict[str, int] = field(default_factory=dict)


FIELDS = ("evt_1", "dlv_1", 2, "renewal:in_1", "in_1", 3, "invoice.paid", ("drop-response",), True, 1.5, 2.5,
          200, Outcome.DROPPED, Completion.UNKNOWN, 1000.0, "ok", None, 1200, "dup", 7)


def test_new_attempt_is_the_same_frozen_value() -> None:
    made, plain = new_attempt(*FIELDS), Attempt(*FIELDS)
    assert type(made) is Attempt
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert made.to_dict() == plain.to_dict()
    assert pickle.loads(pickle.dumps(made)) == plain
    assert dataclasses.replace(made, index=8) == dataclasses.replace(plain, index=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.status = 500  # type: ignore[misc]


def test_defaults_and_keywords_as_the_constructor_gives_them() -> None:
    make = fast_init(_Point)
    assert make(1) == _Point(1) and make(1).extra is not make(1).extra
    assert make(x=2, tags=("a",)) == _Point(2, ("a",))
    assert new_signed_request({"a": "b"}, b"{}") == SignedRequest({"a": "b"}, b"{}")
    with pytest.raises(TypeError):
        make()  # the constructor's own error for a missing field
    with pytest.raises(dataclasses.FrozenInstanceError):
        make(1).x = 2  # type: ignore[misc]


@dataclass(slots=True)
class _Unfrozen:
    x: int


@dataclass(frozen=True)
class _NoSlots:
    x: int


@dataclass(frozen=True, slots=True)
class _PostInit:
    x: int

    def __post_init__(self) -> None:  # a check the twin would skip
        if self.x < 0:
            raise ValueError("x < 0")


@pytest.mark.parametrize("cls", [_Unfrozen, _NoSlots, _PostInit, int])
def test_refuses_classes_it_cannot_build_alike(cls: type) -> None:
    with pytest.raises(TypeError):
        fast_init(cls)
