"""Stripe's own oracle for the Stripe profile's objects: the OpenAPI fixtures and stripe-python's types.

`compare` walks one of our objects beside Stripe's example object of the same resource
(``resources.<object>`` of `stripe-fixtures3.json`, from the public ``stripe/openapi``
repository) and lists every difference: a missing or extra key, another JSON type, an
id where Stripe sends an object or an object where it sends an id. Where the fixture's
example is null it carries no type, and nothing is asserted there. Where ours is null
and the fixture's is not, stripe-python's type of the field decides: ``Optional[...]``
fields are nullable. The differences hookproof keeps on purpose are in
`StripeProfile`'s `DOCUMENTED_DIFFERENCES`, each with its reason.
"""

from __future__ import annotations

import json
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from stripe import StripeObject
from stripe._object_classes import OBJECT_CLASSES

from hookproof.simulator.profiles.stripe import DOCUMENTED_DIFFERENCES
from tests.support import require_service

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT.parent / "shared" / "reference" / "stripe-fixtures3.json"


@lru_cache(maxsize=1)
def resources() -> Mapping[str, Any]:
    """``resources`` of Stripe's fixtures; skips (fails under CI) when the file is missing."""
    if not FIXTURES.is_file():
        require_service("stripe-fixtures3.json", f"Stripe's OpenAPI fixtures are not at {FIXTURES}")
    data: Mapping[str, Any] = json.loads(FIXTURES.read_text(encoding="utf-8"))["resources"]
    return data


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _sdk_class(object_type: str) -> type | None:
    spec = OBJECT_CLASSES.get(object_type)
    if spec is None:
        return None
    module, name = spec
    import importlib

    cls = getattr(importlib.import_module(module), name, None)
    return cls if isinstance(cls, type) else None


def _field(cls: type | None, key: str) -> tuple[bool, type | None]:
    """(nullable, class of the field's object) per stripe-python's annotation of `key` on `cls`."""
    if cls is None:
        return False, None
    ann = None
    for klass in cls.__mro__:
        ann = vars(klass).get("__annotations__", {}).get(key)
        if ann is not None:
            break
    if ann is None:
        return False, None
    nullable = False
    todo = [ann]
    inner: type | None = None
    while todo:
        t = todo.pop()
        if t is type(None):
            nullable = True
            continue
        args = typing.get_args(t)
        if args:
            todo.extend(args)
        elif isinstance(t, type) and issubclass(t, StripeObject):
            inner = t
    return nullable, inner


#: Hashes whose keys are the integration's own (docs.stripe.com/metadata): compared as a
#: hash of strings, since the fixture's example keys are not fields.
FREE_MAPS = frozenset({"metadata"})


def _documented(root: str, rel: str) -> bool:
    last = rel.rsplit(".", 1)[-1]
    return f"{root}.{rel}" in DOCUMENTED_DIFFERENCES or f"*.{last}" in DOCUMENTED_DIFFERENCES


def compare(ours: Any, object_type: str) -> list[str]:
    """Every difference between `ours` and Stripe's example `object_type` (empty: same shape)."""
    fixture = resources().get(object_type)
    if fixture is None:
        return [f"{object_type}: Stripe's fixtures have no such resource"]
    out: list[str] = []
    _walk(ours, fixture, object_type, "", _sdk_class(object_type), out)
    return out


def _walk(ours: Any, ref: Any, root: str, rel: str, cls: type | None, out: list[str]) -> None:
    where = f"{root}.{rel}" if rel else root
    if rel and _documented(root, rel):
        return
    if ref is None:
        return
    if ours is None:  # nullability is decided by the parent, which knows the field's type
        return
    if isinstance(ours, dict) and isinstance(ref, str) and ours.get("object") in resources():
        _walk(ours, resources()[ours["object"]], ours["object"], "", _sdk_class(ours["object"]), out)  # expanded
        return
    if _json_type(ours) != _json_type(ref):
        out.append(f"{where}: {_json_type(ours)} where Stripe sends {_json_type(ref)} ({json.dumps(ref)[:60]})")
        return
    if rel.rsplit(".", 1)[-1] in FREE_MAPS:  # the integration's own keys, not Stripe's fields
        if not all(isinstance(v, str) for v in ours.values()):
            out.append(f"{where}: a value that is not a string")
        return
    if isinstance(ours, dict):
        if isinstance(ours.get("object"), str) and rel and ours["object"] in resources() \
                and ours["object"] == ref.get("object"):
            root, rel, cls = ours["object"], "", _sdk_class(ours["object"])
            where = root
        for key in sorted(set(ref) - set(ours)):
            if not _documented(root, f"{rel}.{key}".lstrip(".")):
                out.append(f"{where}.{key}: missing (Stripe sends it)")
        for key in sorted(set(ours) - set(ref)):
            if not _documented(root, f"{rel}.{key}".lstrip(".")):
                out.append(f"{where}.{key}: not in Stripe's object")
        for key in sorted(set(ours) & set(ref)):
            child_rel = f"{rel}.{key}".lstrip(".")
            nullable, inner = _field(cls, key)
            if ours[key] is None and ref[key] is not None and not nullable and not _documented(root, child_rel):
                out.append(f"{root}.{child_rel}: null where Stripe sends {_json_type(ref[key])} "
                           f"and stripe-python types it not Optional")
                continue
            _walk(ours[key], ref[key], root, child_rel, inner, out)
    elif isinstance(ours, list):
        for item in ours:
            if ref:
                _walk(item, ref[0], root, f"{rel}[]", cls, out)
            elif isinstance(item, dict) and item.get("object") in resources():
                _walk(item, resources()[item["object"]], item["object"], "", _sdk_class(item["object"]), out)
