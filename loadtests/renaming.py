"""Fresh ids for the replayed stories of any world, each id renamed in its own format.

A storm replays a few world stories many times, every replay (a *copy*) about fresh
objects. The billing world's ids share one shape and are renamed by a pattern
(`loadtests.stories.renamed`). The other worlds' ids do not: Mercado Pago's are numbers
(payments, merchant orders, notifications), GitHub's are delivery GUIDs, numeric ids
with their base64 node ids and a repository name inside every URL and key, Paddle's
are ULIDs (``txn_01…``). `IdRenamer.of(world)` lists the ids of a template world (its
objects and events, the ids the world made inside their bodies (`RecordWorld.fresh_ids`: a
Mercado Pago refund's, a Shopify line item's, a Paddle customer's), and for GitHub the ids
inside its payloads) and renames each in its format:

- a number of at most `PREFIX_DIGITS` digits, at most W (the longest of those over the
  template): ``copy * 10**W + n``; still a number, unique per copy, and below 2**53 (exact in
  JavaScript's JSON) for every copy under `IdRenamer.max_copies`;
- a longer number (a Shopify line item's 14 digits): its last `TAIL_CHARS` digits replaced by
  the copy number (the same length; 10**6 copies);
- a GUID, a ULID or another id ending in 6 alphanumerics: those 6 characters replaced by
  the copy number in the id's own alphabet (hex, lowercase Crockford base32, base 62);
- a name (a GitHub repository's, a world's own account: Shopify's own shop, whose domain
  ``<name>.myshopify.com`` stays a hostname): ``<name>-<copy, 6 base-36 digits>``;
- a GitHub node id: re-encoded around its object's renamed number.

`original(renamed_id)` goes back to the template id and the copy number: the provider API
serves a renamed object from its template (`loadtests.storm_truth`). Ids the template
shares across copies (the seller account, the App's own installation, people) are kept. A
world's own account (`RecordWorld.copied_accounts`: a Shopify shop no config named) is not
shared: its ids (the shop id) are renamed, so its name is too, ``Event.account`` included,
and each copy is one shop of its own (one shop id per ``X-Shopify-Shop-Domain``); a named
shop is every copy's, its id kept (`RecordWorld.shared_ids`).
Pure; no Locust import.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from hookproof.simulator.events import Event

#: Characters of an id's tail the copy number replaces.
TAIL_CHARS = 6
#: Numbers of at most this many digits are renamed ``copy * 10**W + n``; longer ones by their
#: last `TAIL_CHARS` digits (a 14-digit id prefixed would leave room for 90 copies under 2**53).
PREFIX_DIGITS = 12
#: JavaScript's largest exact integer: renamed numbers stay at or below it.
MAX_SAFE_INT = 2**53 - 1
_HEX = "0123456789abcdef"
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ULID = re.compile(r"^[a-z]+_01[0-9a-hjkmnp-tv-z]{24}$")
_NODE = re.compile(r"^(\d\d):([A-Za-z]+)(\d+)$")
#: What may not touch an id on either side (so ``123`` is not renamed inside ``91234``).
_EDGE = "A-Za-z0-9_\\-"
#: GitHub node types whose ids are shared by every copy (people and organizations, and the App
#: itself: a check suite's or run's ``app``, the same App as every delivery's hook headers name).
_SHARED_NODES = frozenset({"User", "Organization", "Bot", "App"})


def _encode(number: int, alphabet: str, width: int = TAIL_CHARS) -> str:
    base = len(alphabet)
    if not 0 <= number < base ** width:
        raise ValueError(f"copy number {number} does not fit {width} characters of base {base}")
    out = ""
    for _ in range(width):
        number, r = divmod(number, base)
        out = alphabet[r] + out
    return out


def _decode(text: str, alphabet: str) -> int | None:
    number = 0
    for ch in text:
        i = alphabet.find(ch)
        if i < 0:
            return None
        number = number * len(alphabet) + i
    return number


def _alphabet(token: str) -> str | None:
    """The alphabet of `token`'s tail, or None when its tail is not 6 alphanumerics."""
    if _UUID.match(token):
        return _HEX
    if _ULID.match(token):
        return _CROCKFORD
    tail = token[-TAIL_CHARS:]
    if len(token) <= TAIL_CHARS + 2 or not tail.isalnum() or not tail.isascii():
        return None
    return _BASE62


def _node_id(raw: str) -> tuple[str, str] | None:
    """(type, number) of a GitHub legacy node id, or None."""
    try:
        text = base64.b64decode(raw, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    m = _NODE.match(text)
    return (m.group(2), m.group(3)) if m and int(m.group(1)) == len(m.group(2)) else None


def _encode_node(kind: str, number: str) -> str:
    return base64.b64encode(f"{len(kind):02d}:{kind}{number}".encode("ascii")).decode("ascii")


@dataclass(frozen=True)
class IdRenamer:
    """The ids of one template world and how each is renamed (see the module docstring).

    Attributes:
        numbers: template ids made of digits.
        tails: template id -> the alphabet its last 6 characters are renamed in.
        names: template names renamed ``<name>-<copy>``.
        nodes: GitHub node id -> (node type, the template number it encodes).
    """

    numbers: frozenset[str]
    tails: Mapping[str, str]
    names: frozenset[str] = frozenset()
    nodes: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    _width: int = field(init=False, repr=False, compare=False)
    _pattern: "re.Pattern[str] | None" = field(init=False, repr=False, compare=False)
    _by_head: dict[str, str] = field(init=False, repr=False, compare=False)
    _names_back: "re.Pattern[str] | None" = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        nodes = self.nodes
        width = max((len(n) for n in self.numbers if len(n) <= PREFIX_DIGITS), default=0)
        object.__setattr__(self, "_width", width)
        tokens = sorted({*self.numbers, *self.tails, *self.names, *nodes}, key=lambda t: (-len(t), t))
        pattern = f"(?<![{_EDGE}])(?:" + "|".join(re.escape(t) for t in tokens) + f")(?![{_EDGE}])"
        object.__setattr__(self, "_pattern", re.compile(pattern) if tokens else None)
        object.__setattr__(self, "_by_head", {t[:-TAIL_CHARS]: t for t in (
            *self.tails, *(n for n in self.numbers if len(n) > PREFIX_DIGITS))})
        names = sorted(self.names, key=lambda t: (-len(t), t))
        back = f"(?<![{_EDGE}])(" + "|".join(re.escape(n) for n in names) + f")-([0-9a-z]{{{TAIL_CHARS}}})(?![{_EDGE}])"
        object.__setattr__(self, "_names_back", re.compile(back) if names else None)

    @property
    def max_copies(self) -> int:
        """Copy numbers below this are renamed faithfully (numbers stay JavaScript-exact)."""
        limits = [len(a) ** TAIL_CHARS for a in set(self.tails.values())]
        if self.names:
            limits.append(len(_BASE36) ** TAIL_CHARS)
        width = self._width
        if any(len(n) <= PREFIX_DIGITS for n in self.numbers):
            limits.append(MAX_SAFE_INT // 10 ** width)
        if any(len(n) > PREFIX_DIGITS for n in self.numbers):
            limits.append(10 ** TAIL_CHARS)
        return min(limits, default=2**31)

    # ---- forward ---------------------------------------------------------------------
    def token(self, token: str, copy_no: int) -> str:
        """One template id under `copy_no` (`token` unchanged when it is not one of ours)."""
        if token in self.numbers:
            if len(token) > PREFIX_DIGITS:
                return token[:-TAIL_CHARS] + f"{copy_no:0{TAIL_CHARS}d}"
            return str(copy_no * 10 ** self._width + int(token))
        alphabet = self.tails.get(token)
        if alphabet is not None:
            return token[:-TAIL_CHARS] + _encode(copy_no, alphabet)
        if token in self.names:
            return f"{token}-{_encode(copy_no, _BASE36)}"
        node = self.nodes.get(token)
        if node is not None:
            kind, number = node
            renamed = self.token(number, copy_no) if number in self.numbers else number
            return _encode_node(kind, renamed)
        return token

    def text(self, text: str, copy_no: int) -> str:
        """`text` with every template id in it renamed to `copy_no`."""
        pattern = self._pattern
        if pattern is None:
            return text
        return pattern.sub(lambda m: self.token(m.group(0), copy_no), text)

    def cut(self, text: str) -> tuple[str, ...]:
        """`text` split around the template ids in it: literal text at even positions, an
        id at odd ones; `join` renames it to any copy as `text` would, without a search."""
        pattern = self._pattern
        if pattern is None:
            return (text,)
        parts, start = [], 0
        for m in pattern.finditer(text):
            parts += [text[start:m.start()], m.group(0)]
            start = m.end()
        parts.append(text[start:])
        return tuple(parts)

    def join(self, parts: tuple[str, ...], copy_no: int) -> str:
        """`text(t, copy_no)` of the `t` that `cut` split into `parts`."""
        if len(parts) == 1:
            return parts[0]
        return "".join(p if i % 2 == 0 else self.token(p, copy_no) for i, p in enumerate(parts))

    def joiner(self, copy_no: int) -> Callable[[tuple[str, ...]], str]:
        """`join` for one copy."""
        return lambda parts: self.join(parts, copy_no)

    def value(self, value: Any, copy_no: int) -> Any:
        """A JSON value (an object snapshot) with every template id renamed."""
        return json.loads(self.text(json.dumps(value), copy_no))

    def events(self, story: Iterable[Event], copy_no: int) -> list[Event]:
        """`story` about fresh objects: ids renamed in the event id, object id, business
        key, account, snapshot, previous attributes, request id and extras alike."""
        out = []
        for e in story:
            payload = self.value([e.object, e.previous_attributes, dict(e.extra)], copy_no)
            out.append(replace(e, id=self.text(e.id, copy_no), object_id=self.text(e.object_id, copy_no),
                               object=payload[0], previous_attributes=payload[1], extra=payload[2],
                               business_key=self.text(e.business_key, copy_no) if e.business_key else None,
                               request_id=self.text(e.request_id, copy_no) if e.request_id else None,
                               account=self.text(e.account, copy_no) if e.account else e.account))
        return out

    # ---- back --------------------------------------------------------------------------
    def original(self, renamed_id: str) -> tuple[str, int] | None:
        """(template id, copy number) of a renamed id, or None when it is not one."""
        width = self._width
        if renamed_id.isdigit() and self.numbers and len(renamed_id) > width:
            copy_no, number = divmod(int(renamed_id), 10 ** width)
            if str(number) in self.numbers and len(str(number)) <= PREFIX_DIGITS and copy_no >= 1:
                return str(number), copy_no
            long = self._by_head.get(renamed_id[:-TAIL_CHARS]) if len(renamed_id) > PREFIX_DIGITS else None
            if long is not None and long.isdigit() and (copy_no := int(renamed_id[-TAIL_CHARS:])) >= 1:
                return long, copy_no
            return None
        by_head = self._by_head
        template = by_head.get(renamed_id[:-TAIL_CHARS]) if len(renamed_id) > TAIL_CHARS else None
        if template is not None:
            copy_no = _decode(renamed_id[-TAIL_CHARS:], self.tails[template])
            return (template, copy_no) if copy_no else None
        back = self._names_back
        if back is not None:
            copies: set[int] = set()

            def name(m: re.Match[str]) -> str:
                copies.add(_decode(m.group(2), _BASE36) or 0)
                return m.group(1)

            template_id = back.sub(name, renamed_id)
            if len(copies) == 1 and (copy_no := copies.pop()) >= 1:
                return template_id, copy_no
        return None

    # ---- of a world ----------------------------------------------------------------------
    @classmethod
    def of(cls, world: Any) -> "IdRenamer":
        """The renamer of a template `world` after its stories were played: a
        `RecordWorld` (its objects and events, and a user catalog's world's `fresh_ids`) or a `GitHubWorld` (also the ids and node
        ids inside its payloads, and its repository's name)."""
        from hookproof.simulator.world.github import GitHubWorld

        if isinstance(world, GitHubWorld):
            return cls._of_github(world)
        # a user catalog's world also makes ids inside its bodies (key fields: a refund's id)
        ids = [*world.objects(), *(e.id for e in world.events), *getattr(world, "fresh_ids", ())]
        # a world's own accounts, renamed with its ids (Shopify's own shops: each copy's its own);
        # the ids every copy shares kept (a named shop's id: one shop id per shop domain)
        shared: set[str] = getattr(world, "shared_ids", set())
        return cls._sorted([i for i in ids if i not in shared], names=frozenset(getattr(world, "copied_accounts", ())))

    @classmethod
    def _sorted(cls, ids: Iterable[str], **extra: Any) -> "IdRenamer":
        numbers, tails = set(), {}
        for token in ids:
            if token.isdigit():
                numbers.add(token)
            elif (alphabet := _alphabet(token)) is not None:
                tails[token] = alphabet
        return cls(frozenset(numbers), tails, **extra)

    @classmethod
    def _of_github(cls, world: Any) -> "IdRenamer":
        shared = {str(world.installation_id)}
        ids: list[str] = [e.id for e in world.events]
        nodes: dict[str, tuple[str, str]] = {}

        def walk(value: Any) -> None:
            if isinstance(value, dict):
                node, number = value.get("node_id"), value.get("id")
                if isinstance(node, str) and isinstance(number, int) and (decoded := _node_id(node)) is not None:
                    kind, digits = decoded
                    if kind not in _SHARED_NODES and str(number) not in shared and digits == str(number):
                        ids.append(digits)
                        nodes[node] = (kind, digits)
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        for e in world.events:
            walk(dict(e.extra))
        ids += [oid for oid in world.objects() if oid.isdigit() and oid not in shared]
        return cls._sorted(ids, names=frozenset({world.repository()["name"]}), nodes=nodes)


__all__ = ["IdRenamer", "MAX_SAFE_INT", "TAIL_CHARS"]
