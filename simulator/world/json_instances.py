"""JSON documents a user describes: paths into them, and instances made from a JSON Schema.

A user's event catalog (`simulator.world.user_catalog`) says where things live in a
payload with a path: dotted (``data.object.id``, list items by index, the syntax of
`scenarios.business_keys` templates) or a JSON Pointer (``/data/object/id``, RFC 6901).
`parse_path` reads both; `get_path`/`set_path` read and write a document;
`schema_at` finds the subschema that describes a path.

`InstanceMaker` makes a value that a JSON Schema (draft 2020-12, its common keywords)
accepts, deterministically from a `random.Random`: ``const``, ``enum``, ``examples``
and ``default`` first (an example or default only when the schema without it allows it,
`allows`: Speakeasy-generated models give optional nullable fields the sentinel string
``"~?~unset~?~sentinel~?~"`` as their default, an integer's too); then by ``type``: objects with every property, arrays of
``minItems`` (at least one) items, strings of the schema's ``format`` (``date-time``,
``date``, ``uuid`` and ``uuid4``…, `uuid_version`; ``email``, ``uri``…) and length, numbers within their bounds.
``allOf`` is merged, ``oneOf``/``anyOf`` take their first branch. It does not solve
``pattern``: an optional field with one is left out, a required one needs an example (the
catalog loader validates every made payload and says so). A ``$ref`` is local to the schema
given (``#`` or a JSON Pointer into it, ``#/$defs/Filter``: the loader bundles every other
one under the root's ``$defs``) and followed where it is used (`deref`), so a recursive
schema (a filter whose clauses are filters) stays what it is: each reference is followed
at most `MAX_RECURSION` more times inside itself; past that, or past `MAX_DEPTH`, a value
is made without it: the first ``anyOf``/``oneOf`` branch that does not need it, an empty
array where ``minItems`` allows, an optional property left out (`TooDeep` when the schema
leaves no such way out). Not hypothesis-jsonschema: a Hypothesis strategy draws
from Hypothesis's own engine, not from a world's seed, and a world must be the same for
the same seed (one example body per type is then all the world needs: it refreshes ids,
states and ordering fields itself).
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, MutableMapping
from datetime import datetime, timezone
from typing import Any

Path = tuple[str, ...]

_TOKEN = string.ascii_letters + string.digits
#: Nesting deeper than this makes no more values inside (a deep schema stays finite).
MAX_DEPTH = 12
#: How many more times a ``$ref`` is followed inside its own expansion (a recursive schema's
#: ``Filter`` in a ``Filter``'s clauses): once, then the value is made without it.
MAX_RECURSION = 1


def uuid_version(fmt: Any) -> int | None:
    """The UUID version a string ``format`` asks for: 4 for JSON Schema's ``uuid``, N for
    ``uuidN`` (pydantic's ``UUID1``…``UUID5`` write ``uuid1``…``uuid5``, Polar's OpenAPI ids
    ``uuid4``); None for any other format."""
    if fmt == "uuid":
        return 4
    if isinstance(fmt, str) and len(fmt) == 5 and fmt.startswith("uuid") and fmt[4] in "12345678":
        return int(fmt[4])
    return None


class TooDeep(ValueError):
    """No value of a schema within `MAX_DEPTH` and `MAX_RECURSION`: every way the schema
    leaves (a branch, an empty array, an optional property) needs the bound's reference."""


def deref(schema: Any, root: Any) -> Any:
    """`schema` with its ``$ref`` (``#`` or a JSON Pointer into `root`) followed, its other
    keywords kept beside the target's (a target's own ``$ref`` followed in turn); `schema`
    itself when it has none. Raises KeyError naming a reference `root` lacks."""
    seen: set[str] = set()
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if ref in seen:  # a reference to itself and nothing else: any value
            return {k: v for k, v in schema.items() if k != "$ref"}
        seen.add(ref)
        target = pointer(root, ref)
        if len(schema) == 1:  # the reference alone: its target as it is, not a copy
            schema = target
            continue
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest} if isinstance(target, Mapping) else rest
    return schema


def pointer(root: Any, ref: str) -> Any:
    """The value a local reference (``#``, ``#/$defs/A~1B``) names in `root`. Raises KeyError."""
    from urllib.parse import unquote

    if not ref.startswith("#") or (ref[1:] and not ref.startswith("#/")):  # another document, an anchor
        raise KeyError(ref)
    node = root
    for raw in ref[1:].split("/")[1:] if ref[1:] else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(ref)
    return node


def parse_path(path: str) -> Path:
    """The segments of a dotted path (``data.id``) or a JSON Pointer (``/data/id``).

    Raises ValueError for an empty path or an empty segment.
    """
    if path.startswith("/"):
        parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/"))
    else:
        parts = tuple(path.split("."))
    if not path or any(not p for p in parts):
        raise ValueError(f"{path!r} is not a path (write data.id or /data/id)")
    return parts


def dotted(parts: Path) -> str:
    """`parts` as a dotted path."""
    return ".".join(parts)


def get_path(doc: Any, parts: Path) -> Any:
    """The value at `parts` in `doc`. Raises KeyError naming the first missing segment."""
    value = doc
    for part in parts:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(part)
    return value


def has_path(doc: Any, parts: Path) -> bool:
    """True when `doc` has a value at `parts`."""
    try:
        get_path(doc, parts)
    except KeyError:
        return False
    return True


def set_path(doc: MutableMapping[str, Any], parts: Path, value: Any) -> None:
    """Set the value at `parts` in `doc`, making the missing objects on the way.

    Raises KeyError when a segment crosses a value that is not an object (or a list index
    out of range).
    """
    node: Any = doc
    for part in parts[:-1]:
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            continue
        if not isinstance(node, MutableMapping):
            raise KeyError(part)
        if not isinstance(node.get(part), (MutableMapping, list)):
            node[part] = {}
        node = node[part]
    last = parts[-1]
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value
    elif isinstance(node, MutableMapping):
        node[last] = value
    else:
        raise KeyError(last)


def with_flags(doc: Any, name: str, value: bool) -> Any:
    """`doc` with every boolean field called `name`, at any depth (in objects and arrays), set
    to `value`: a copy of the objects and arrays on the way to a changed one, the rest shared;
    `doc` itself (unchanged) when none differs. A field of that name holding anything but a
    boolean stays as it is. A provider's mode flag is such a field: Stripe's ``livemode`` on an
    event and on every object inside it, Lemon Squeezy's ``test_mode`` in ``meta`` and on each
    object ("A boolean indicating if the object was created within test mode", the Order,
    Subscription, Subscription invoice and License key objects, docs.lemonsqueezy.com/api)."""
    if isinstance(doc, Mapping):
        changed: dict[str, Any] | None = None
        for key, item in doc.items():
            if key == name and isinstance(item, bool):
                new = value
            elif isinstance(item, (Mapping, list)):
                new = with_flags(item, name, value)
            else:
                continue
            if new is not item:
                if changed is None:
                    changed = dict(doc)
                changed[key] = new
        return doc if changed is None else changed
    if isinstance(doc, list):
        items = [with_flags(item, name, value) if isinstance(item, (Mapping, list)) else item for item in doc]
        return doc if all(a is b for a, b in zip(items, doc)) else items
    return doc


def schema_at(schema: Mapping[str, Any] | None, parts: Path,
              root: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """The subschema describing `parts` (through ``properties``, ``items``, ``prefixItems``,
    ``allOf``/``oneOf``/``anyOf`` branches, and the ``$ref``s on the way, local to `root`:
    default `schema` itself), or None when the schema does not describe it."""
    if schema is None:
        return None
    if root is not None and root is not schema:
        return _schema_at(schema, parts, root, frozenset())
    held = _AT.get(id(schema))
    if held is None or held[0] is not schema:
        if len(_AT) >= _AT_SCHEMAS:
            _AT.clear()
        held = _AT[id(schema)] = (schema, {})
    found = held[1]
    if parts not in found:  # a world asks each path of each body again: once per schema and path
        found[parts] = _schema_at(schema, parts, schema, frozenset())
    return found[parts]


#: id of a root schema -> (the schema, kept so its id stays its own; path -> `schema_at`'s answer)
_AT: dict[int, tuple[Any, dict[Path, Mapping[str, Any] | None]]] = {}
#: The root schemas `_AT` remembers answers for (then it starts again).
_AT_SCHEMAS = 256


def _schema_at(schema: Any, parts: Path, root: Any, seen: frozenset[str]) -> Mapping[str, Any] | None:
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        if schema["$ref"] in seen:  # a branch leading back to itself without a step: no new answer
            return None
        seen = seen | {schema["$ref"]}
        try:
            schema = deref(schema, root)
        except KeyError:
            return None
    if not isinstance(schema, Mapping):
        return None
    if not parts:
        return schema
    head, rest = parts[0], parts[1:]
    props = schema.get("properties")
    if isinstance(props, Mapping) and head in props:
        return _schema_at(props[head], rest, root, frozenset())
    if head.isdigit():
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and int(head) < len(prefix):
            return _schema_at(prefix[int(head)], rest, root, frozenset())
        if isinstance(schema.get("items"), Mapping):
            return _schema_at(schema["items"], rest, root, frozenset())
    for combinator in ("allOf", "oneOf", "anyOf"):
        for branch in schema.get(combinator) or ():
            found = _schema_at(branch, parts, root, seen) if isinstance(branch, Mapping) else None
            if found is not None:
                return found
    return None


def schema_type(schema: Mapping[str, Any] | None) -> str | None:
    """The JSON type a schema asks for (the first non-null one of a list), or None."""
    if schema is None:
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
        for key in ("const", "default"):
            if key in schema:
                return _json_type(schema[key])
        if schema.get("enum"):
            return _json_type(schema["enum"][0])
    return kind if isinstance(kind, str) else None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else "null"


def merged(schema: Mapping[str, Any], root: Any = None, _seen: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`schema` with its ``allOf`` branches merged in (properties and required united; a
    branch's ``$ref`` followed in `root`, once on each way down)."""
    out = {k: v for k, v in schema.items() if k != "allOf"}
    for branch in schema.get("allOf") or ():
        seen = _seen
        if root is not None and isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str):
            if branch["$ref"] in seen:
                continue
            seen = seen | {branch["$ref"]}
            branch = _deref_or_none(branch, root)
        if not isinstance(branch, Mapping):
            continue
        branch = merged(branch, root, seen)
        for key, value in branch.items():
            if key == "properties":
                out["properties"] = {**(out.get("properties") or {}), **value}
            elif key == "required":
                out["required"] = [*(out.get("required") or []), *value]
            else:
                out.setdefault(key, value)
    return out


#: The digits a number's first digit is drawn from (`InstanceMaker.like`).
_NONZERO = "123456789"


#: The fewest distinct values a fresh id's shape must allow (`widened`): a nine-digit number's,
#: 9 * 10**8. One run draws a few hundred to a few thousand ids at random; from a shape allowing
#: so many, two of them are the same about once in ten thousand runs, where a one-digit example
#: (Lemon Squeezy's documented ``"id": "1"``) allowed 9 and a 7-digit one 9 * 10**6. A nine-digit
#: number is still below 2**31: a receiver storing the id in a 32-bit integer column holds it.
MIN_ID_SPACE = 9 * 10**8


def shape_space(text: str) -> int:
    """How many distinct strings `InstanceMaker.like` can draw for `text` (1 for a `text` without
    letters or digits): its alphabet's size to the power of its letters and digits, a number
    written as a string keeping its first digit other than 0."""
    alphabet = shape_alphabet(text)
    count = sum(1 for ch in text if ch.isascii() and ch.isalnum())
    if not alphabet:
        return 1
    if text.isascii() and text.isdigit() and text[0] != "0":
        return int(9 * 10 ** (count - 1))
    return int(len(alphabet) ** count)


def widened(text: str, minimum: int = MIN_ID_SPACE) -> str:
    """`text` lengthened until its shape allows at least `minimum` values (`shape_space`), by
    characters of its own alphabet at its end: ``"1"`` → ``"199999999"`` (nine digits, a first
    other than 0), ``"ab12"`` → ``"ab12ffff"`` (hex stays hex); `text` itself when it allows as
    many already, or has no letter or digit to widen."""
    alphabet = shape_alphabet(text)
    if not alphabet:
        return text
    while shape_space(text) < minimum:
        text += alphabet[-1]
    return text


def shape_alphabet(text: str) -> str:
    """The characters an id like `text` draws from (see `InstanceMaker.like`); "" when it has
    no ASCII letter or digit."""
    chars = {ch for ch in text if ch.isascii() and ch.isalnum()}
    digits, lower, upper = (any(ch.isdigit() for ch in chars), any(ch.islower() for ch in chars),
                            any(ch.isupper() for ch in chars))
    if digits and lower != upper and chars <= set(string.digits + "abcdefABCDEF"):
        return string.digits + ("abcdef" if lower else "ABCDEF")
    return ((string.digits if digits else "") + (string.ascii_lowercase if lower else "")
            + (string.ascii_uppercase if upper else ""))


def _deref_or_none(schema: Any, root: Any) -> Any:
    """`deref(schema, root)`, or None for a reference `root` lacks."""
    try:
        return deref(schema, root)
    except KeyError:
        return None


def _without(schema: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """`schema` without `key` (itself when it has none)."""
    return {k: v for k, v in schema.items() if k != key} if key in schema else schema


def allows(schema: Any, value: Any, root: Any) -> bool:
    """Whether `schema` (its ``$ref``s local to `root`) allows `value`, ``format``s checked
    (draft 2020-12): a schema's own ``default`` or ``examples`` may not (the sentinel string
    Speakeasy-generated models give an optional nullable integer as its default)."""
    from jsonschema import Draft202012Validator

    held = _VALIDATORS.get(id(root))
    if held is None or held[0] is not root:
        if len(_VALIDATORS) >= _AT_SCHEMAS:
            _VALIDATORS.clear()
        held = _VALIDATORS[id(root)] = (root, Draft202012Validator(
            root if isinstance(root, (Mapping, bool)) else {}, format_checker=Draft202012Validator.FORMAT_CHECKER))
    try:
        return bool(held[1].evolve(schema=schema).is_valid(value))
    except Exception:  # a reference the root lacks: the value is not known to be refused
        return True


#: id of a root schema -> (the schema, its validator): `allows`
_VALIDATORS: dict[int, tuple[Any, Any]] = {}


def _unsolvable(schema: Any, root: Any) -> bool:
    """True for a string schema with a ``pattern`` and no value to copy (const, enum, an example or
    default it allows)."""
    if not isinstance(schema, Mapping) or "pattern" not in schema:
        return False
    if any(k in schema for k in ("const", "enum")):
        return False
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and allows(_without(schema, "examples"), examples[0], root):
        return False
    return not ("default" in schema and allows(_without(schema, "default"), schema["default"], root))


class InstanceMaker:
    """Makes instances of JSON Schemas from `rng` (see the module docstring).

    Args:
        rng: the only source of randomness (a world's seeded generator).
        now_us: the time ``date-time`` values show, unix microseconds.
    """

    def __init__(self, rng: random.Random, now_us: int) -> None:
        self.rng = rng
        self.now_us = now_us

    def token(self, length: int = 24) -> str:
        """`length` random letters and digits."""
        return "".join(self.rng.choice(_TOKEN) for _ in range(length))

    def like(self, text: str) -> str:
        """A random string of `text`'s shape: as long, each letter or digit replaced by a random
        character of `text`'s alphabet, every other character kept (``2Tq7-x9`` → ``8Kd1-p3``).

        The alphabet is the classes `text` uses: digits, lowercase, uppercase letters; letters
        and digits within ``a-f`` (or ``A-F``) alone are hex. A `text` without letters or
        digits comes back unchanged. A number written as a string (``"2470311"``: a JSON:API
        id, Lemon Squeezy's) keeps a first digit other than 0 when `text` has one, as an
        integer's digits do: a receiver storing it as a number would drop a leading zero.
        """
        alphabet = shape_alphabet(text)
        if not alphabet:
            return text
        if text.isascii() and text.isdigit() and text[0] != "0":
            return self.rng.choice(_NONZERO) + "".join(self.rng.choice(alphabet) for _ in text[1:])
        return "".join(self.rng.choice(alphabet) if ch.isascii() and ch.isalnum() else ch for ch in text)

    def uuid(self, version: int = 4) -> str:
        """A random UUID of `version` (its version digit and RFC 4122 variant), lowercase."""
        h = "%032x" % self.rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-{version:x}{h[13:16]}-{'89ab'[self.rng.randrange(4)]}{h[17:20]}-{h[20:]}"

    def make(self, schema: Mapping[str, Any] | bool | None, depth: int = 0, root: Any = None) -> Any:
        """A value `schema` accepts, its ``$ref``s local to `root` (default: `schema` itself).

        Raises TooDeep when the schema leaves no value within `MAX_DEPTH` and `MAX_RECURSION`,
        KeyError naming a ``$ref`` `root` lacks.
        """
        inside = {"#": 1} if root is None or root is schema else {}  # the root is being made: "#" is in it
        return self._make(schema, depth, schema if root is None else root, inside)

    @staticmethod
    def _enter(schema: Any, root: Any, active: Mapping[str, int]) -> tuple[Any, Mapping[str, int]]:
        """`schema` with its ``$ref`` followed (`deref`), and the references being made with it
        counted; TooDeep past `MAX_RECURSION` followings of one inside itself."""
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            return schema, active
        ref = schema["$ref"]
        if active.get(ref, 0) > MAX_RECURSION:
            raise TooDeep(f"{ref} needs itself past {MAX_RECURSION} nesting: no other branch, optional property "
                          "or empty array ends it")
        return deref(schema, root), {**active, ref: active.get(ref, 0) + 1}

    def _make(self, schema: Any, depth: int, root: Any, active: Mapping[str, int]) -> Any:
        schema, active = self._enter(schema, root, active)
        if schema is None or isinstance(schema, bool) or not isinstance(schema, Mapping):
            return self.token(8)
        schema = merged(schema, root) if "allOf" in schema else schema
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return self.rng.choice(list(schema["enum"]))
        if isinstance(schema.get("examples"), list) and schema["examples"] \
                and allows(_without(schema, "examples"), schema["examples"][0], root):
            return schema["examples"][0]
        if "default" in schema and allows(_without(schema, "default"), schema["default"], root):
            return schema["default"]
        schema = _without(_without(schema, "examples"), "default")  # one its schema refuses: as if none
        for combinator in ("oneOf", "anyOf"):
            branches = [b for b in schema.get(combinator) or () if isinstance(b, (Mapping, bool))]
            if branches:
                base = {k: v for k, v in schema.items() if k != combinator}
                failed: TooDeep | None = None
                for branch in branches:  # the first that needs no reference past its bound
                    try:
                        resolved, inner = self._enter(branch, root, active)
                        return self._make({**base, **resolved} if isinstance(resolved, Mapping) else base,
                                          depth, root, inner)
                    except TooDeep as exc:
                        failed = failed or exc
                assert failed is not None
                raise failed
        kind = schema_type(schema)
        if kind == "object":
            return self._object(schema, depth, root, active)
        if kind == "array":
            return self._array(schema, depth, root, active)
        if kind == "integer":
            return int(self._number(schema, integer=True))
        if kind == "number":
            return self._number(schema, integer=False)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(schema)

    def _object(self, schema: Mapping[str, Any], depth: int, root: Any, active: Mapping[str, int]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        required = set(schema.get("required") or ())
        if depth >= MAX_DEPTH:
            if required:
                raise TooDeep(f"an object with required properties deeper than {MAX_DEPTH}")
            return out
        props = schema.get("properties") or {}
        for name, sub in props.items():
            if name not in required and _unsolvable(_deref_or_none(sub, root), root):  # an optional field we cannot fill
                continue
            try:
                out[name] = self._make(sub, depth + 1, root, active)
            except TooDeep:
                if name in required:
                    raise
                # an optional field needing a reference past its bound: left out
        for name in schema.get("required") or ():
            if name not in out:
                out[name] = self._make(None, depth + 1, root, active)
        return out

    def _array(self, schema: Mapping[str, Any], depth: int, root: Any, active: Mapping[str, int]) -> list[Any]:
        least = int(schema.get("minItems", 0))
        if depth >= MAX_DEPTH:
            if least > 0 or schema.get("prefixItems"):
                raise TooDeep(f"an array of at least one item deeper than {MAX_DEPTH}")
            return []
        prefix = [self._make(s, depth + 1, root, active) for s in schema.get("prefixItems") or ()]
        count = max(int(schema.get("minItems", 1)), len(prefix))
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        items = schema.get("items")
        if items is False:
            return prefix[:count]
        try:
            return prefix + [self._make(items if isinstance(items, Mapping) else None, depth + 1, root, active)
                             for _ in range(count - len(prefix))]
        except TooDeep:
            if len(prefix) >= least:  # items needing a reference past its bound: none
                return prefix
            raise

    def _number(self, schema: Mapping[str, Any], *, integer: bool) -> float:
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            low = low + (1 if integer else 0.01)
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 0) + 10_000))
        if "exclusiveMaximum" in schema and "maximum" not in schema:
            high = high - (1 if integer else 0.01)
        step = schema.get("multipleOf")
        if integer:
            import math

            value: float = self.rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
        else:
            value = round(self.rng.uniform(float(low), float(high)), 2)
        if step:
            value = (value // step) * step
            if value < low:
                value += step
        return value

    def _string(self, schema: Mapping[str, Any]) -> str:
        fmt = schema.get("format")
        moment = datetime.fromtimestamp(self.now_us / 1_000_000, tz=timezone.utc)
        formatted = {
            "date-time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "date": moment.strftime("%Y-%m-%d"),
            "time": moment.strftime("%H:%M:%SZ"),
            "uuid": None,
            "email": f"{self.token(8).lower()}@example.com",
            "uri": f"https://example.com/{self.token(8)}",
            "uri-reference": f"https://example.com/{self.token(8)}",
            "iri": f"https://example.com/{self.token(8)}",
            "idn-email": f"{self.token(8).lower()}@example.com",
            "url": f"https://example.com/{self.token(8)}",
            "hostname": "example.com",
            "ipv4": f"192.0.2.{self.rng.randrange(1, 255)}",
        }
        version = uuid_version(fmt)
        if version is not None:
            return self.uuid(version)
        if isinstance(fmt, str) and formatted.get(fmt):
            return str(formatted[fmt])
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 16)))
        return self.token(max(low, min(high, 16)))


__all__ = ["InstanceMaker", "allows", "MAX_DEPTH", "MAX_RECURSION", "Path", "TooDeep", "deref", "dotted", "get_path", "has_path",
           "merged", "parse_path", "pointer", "schema_at", "schema_type", "set_path", "shape_alphabet", "uuid_version",
           "with_flags"]
