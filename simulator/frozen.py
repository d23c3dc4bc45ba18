"""Fast construction of frozen slots dataclasses, for values made once per attempt.

A frozen dataclass's ``__init__`` stores each field with ``object.__setattr__`` (its own
``__setattr__`` refuses): for `Attempt`'s 20 fields that is 4.5 µs, where storing them
directly takes 0.4. `fast_init` gives a constructor that builds the value in a plain
twin class of the same slots (made from the dataclass's own fields, defaults included)
and then makes it an instance of the frozen class (``__class__`` assignment, which
CPython allows between two classes of one layout): the same value, equal, hashed and
shown alike, and as frozen afterwards.
"""

from __future__ import annotations

from dataclasses import MISSING, field, fields, is_dataclass, make_dataclass
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> Callable[..., T]:
    """A constructor of `cls` taking ``cls(...)``'s arguments (positional or by name).

    `cls` must be a frozen dataclass with ``slots=True``, every field in ``__init__``
    and no ``__post_init__``; raises TypeError otherwise (a value the twin could not
    build alike).
    """
    params = getattr(cls, "__dataclass_params__", None)
    if not is_dataclass(cls) or params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen slots dataclass")
    if hasattr(cls, "__post_init__") or not all(f.init for f in fields(cls)):
        raise TypeError(f"{cls.__name__} has a __post_init__ or a field outside __init__")
    spec: list[tuple[str, Any, Any]] = [
        (f.name, f.type, field(default=f.default) if f.default is not MISSING
         else field(default_factory=f.default_factory) if f.default_factory is not MISSING else field())
        for f in fields(cls)]
    twin = make_dataclass(f"_{cls.__name__}Slots", spec, slots=True, eq=False, repr=False, match_args=False)

    def make(*args: Any, **kwargs: Any) -> T:
        made = twin(*args, **kwargs)
        made.__class__ = cls
        return made  # type: ignore[no-any-return]

    make.__doc__ = f"`{cls.__name__}(...)`, built without its frozen __init__ (`simulator.frozen.fast_init`)."
    return make


__all__ = ["fast_init"]
