"""A user's event catalog: the ``[catalog]`` table of `hookproof.toml` and the OpenAPI 3.1
``webhooks`` document it may name, read into a `simulator.world.user_catalog.UserCatalog`.

``[catalog]`` (`CatalogConfig`) gives ``openapi`` (a YAML or JSON OpenAPI 3.1 document
whose ``webhooks`` are the event types), ``type_field`` (where the body names its type)
and ``[catalog.events."<type>"]`` entries (`CatalogEventConfig`): a JSON Schema and/or an
example (a file, relative to the config, or an inline table) and the paths the world
fills in. An entry for a type the document has overrides its fields; a type the
document lacks is added.

In the document, each webhook's operation (``post``) gives its request body's
``application/json`` schema and ``example``/``examples``; ``x-hookproof-*`` extensions on
the operation (or its path item) say where things live: ``x-hookproof-event-type`` (the
type's name, default the webhook's), ``-object-type``, ``-object-id``, ``-event-id``,
``-ordering``, ``-status``, ``-state``, ``-key``, ``-amount``, and ``x-hookproof-refs`` (a
mapping: path -> the kind of the object whose id the body holds there, ``refs`` in the
config); ``x-hookproof-type-field`` at the top level. The document is validated with ``openapi-spec-validator`` (the
maintained validator of the OpenAPI Initiative's schemas); ``$ref``s, local or to other
files beside it, are resolved with ``referencing`` (the resolver ``jsonschema`` itself
uses, so a schema means here what it means to the validator): the document's structure
inlined, each schema bundled (its targets in its own ``$defs``, a recursive one kept a
reference). Twelve 60 KB schemas sharing their definitions load in about a second of CPU: JSON
read by ``json``, the metaschema checked once per distinct definition.

Every problem is one `ConfigError` naming the file, the webhook or type, and the field:
no schema and no example, an unresolvable ``$ref``, an invalid document, a path or key
template naming a field the schema does not have, a reference (``refs``) at a path the
body lacks or at the object's own id, or to a kind no type of the catalog makes, an example or a made body that the
schema refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hookproof.errors import ConfigError

#: The profiles that send a user's catalog (they have no event catalog of their own).
CATALOG_PROFILES: tuple[str, ...] = ("generic-hmac", "standard-webhooks", "svix")
#: The largest catalog, schema or example file read, in bytes.
MAX_FILE_BYTES = 5_000_000
#: Operation extensions -> `EventSpec` fields.
EXTENSIONS: Mapping[str, str] = {
    "x-hookproof-object-type": "object_type", "x-hookproof-object-id": "object_id",
    "x-hookproof-event-id": "event_id", "x-hookproof-ordering": "ordering", "x-hookproof-status": "status",
    "x-hookproof-state": "state", "x-hookproof-key": "key", "x-hookproof-amount": "amount",
}
_PATH_FIELDS = ("object_id", "event_id", "ordering", "status", "amount")


class CatalogEventConfig(BaseModel):
    """``[catalog.events."<type>"]``: one event type (fields as `EventSpec`'s).

    `schema` and `example` are a file (relative to the config; JSON or YAML) or an inline table.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    json_schema: str | dict[str, Any] | None = Field(default=None, alias="schema")
    example: str | dict[str, Any] | None = None
    object_type: str | None = None
    object_id: str | None = None
    event_id: str | None = None
    ordering: str | None = None
    status: str | None = None
    state: str | None = None
    key: str | None = None
    amount: str | None = None
    #: path -> the kind of the object whose id the body holds there (``{ "data.user_id" = "user" }``)
    refs: dict[str, str] | None = None


class CatalogConfig(BaseModel):
    """``[catalog]``: the user's event types (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    openapi: str | None = None
    type_field: str | None = "type"
    #: The path of the body's test-mode flag, true for a test event (Lemon Squeezy's
    #: ``meta.test_mode``): every type's example or schema must have it.
    test_mode: str | None = None
    events: dict[str, CatalogEventConfig] = Field(default_factory=dict)


def _read(path: Path, shown: str, field: str | None = None) -> Any:
    """A YAML or JSON file's content. Raises ConfigError naming `shown`; one that cannot be
    opened, when a config `field` names it, names that field instead (its line is the config's)."""
    import yaml

    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if field is not None:
            raise ConfigError(f"cannot read {shown}: {exc.strerror or exc}", field=field) from None
        raise ConfigError(f"cannot read it: {exc.strerror or exc}", path=shown) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"larger than {MAX_FILE_BYTES} bytes", path=shown)
    try:
        text = raw.decode("utf-8")
        if text.lstrip()[:1] in ("{", "["):  # JSON (YAML's subset) is read by json: a 60 KB schema in ms, not a second
            try:
                return json.loads(text)
            except ValueError:
                pass
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"not YAML or JSON{where}: {problem}", path=shown) from None


#: Keywords whose value is data, not a schema: a ``$ref`` in it is the data's own.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})
#: Keywords whose value maps names (a property's, a definition's) to schemas.
_NAMED_KEYWORDS = frozenset({"properties", "patternProperties", "dependentSchemas"})
#: Keywords a bundled schema drops: the containers of definitions (the ones it uses are in
#: its own ``$defs``) and what would move the base of its references.
_DROPPED_KEYWORDS = frozenset({"$defs", "definitions", "$id", "$anchor"})


class _Refs:
    """Resolves the ``$ref``s of one document (and files beside it) with ``referencing``:
    inlines the document's structure around schemas (`inline`), bundles each schema
    (`bundle`)."""

    def __init__(self, doc: Any, path: Path, shown: str | None) -> None:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self.shown = shown
        files: dict[str, Resource[Any]] = {}  # each file beside it read once: one object per target

        def retrieve(uri: str) -> Resource[Any]:
            if not uri.startswith("file://"):
                raise LookupError(uri)
            from urllib.parse import unquote, urlparse

            if uri not in files:
                target = Path(unquote(urlparse(uri).path))
                files[uri] = Resource.from_contents(_read(target, target.name), default_specification=DRAFT202012)
            return files[uri]

        base = path.resolve().as_uri()
        registry: Registry[Any] = Registry(retrieve=retrieve)  # type: ignore[call-arg]
        registry = registry.with_resource(base, Resource.from_contents(doc, default_specification=DRAFT202012))
        self.root = registry.resolver(base)

    def _lookup(self, ref: str, resolver: Any, where: str) -> Any:
        from referencing.exceptions import Unresolvable

        try:
            return resolver.lookup(ref)
        except (Unresolvable, LookupError, ConfigError):
            raise ConfigError(f"{where}: $ref {ref!r} cannot be resolved", path=self.shown) from None

    def inline(self, node: Any, where: str, resolver: Any = None, seen: tuple[int, ...] = ()) -> Any:
        """`node` (a document's structure: a webhook's path item) with every ``$ref`` replaced by
        its target (a cycle becomes ``{}``), but for the JSON Schemas in it (under ``schema``),
        each bundled (`bundle`). Raises ConfigError naming `where` and the reference."""
        resolver = resolver or self.root
        if isinstance(node, list):
            return [self.inline(n, where, resolver, seen) for n in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        rest = {k: self.bundle(v, where, resolver) if k == "schema" else self.inline(v, where, resolver, seen)
                for k, v in node.items() if k != "$ref"}
        if not isinstance(ref, str):
            return rest
        resolved = self._lookup(ref, resolver, where)
        if id(resolved.contents) in seen:
            return {}
        target = self.inline(resolved.contents, where, resolved.resolver, (*seen, id(resolved.contents)))
        return {**target, **rest} if isinstance(target, Mapping) else target

    def bundle(self, schema: Any, where: str, resolver: Any = None) -> Any:
        """`schema` as one self-contained JSON Schema: each schema a ``$ref`` in it reaches (in
        the document, or in a file beside it) is an entry of the result's ``$defs``, and the
        ``$ref`` names it there (``#/$defs/Filter``; ``#`` for `schema` itself), so a recursive
        schema stays recursive, each target held once (a schema 60 KB long stays so, where
        inlining would copy its definitions into every use). Raises ConfigError naming
        `where` and a reference that cannot be resolved."""
        names: dict[int, str] = {}  # id of a target -> its name in $defs
        held: list[Any] = [schema]  # the targets named, kept alive while their ids are keys
        defs: dict[str, Any] = {}
        todo: list[tuple[str, Any, Any]] = []

        def named(ref: str, res: Any) -> str:
            resolved = self._lookup(ref, res, where)
            target = resolved.contents
            if target is schema:
                return "#"
            if id(target) not in names:
                from urllib.parse import unquote

                file, _, fragment = ref.partition("#")
                tail = fragment.rstrip("/").rsplit("/", 1)[-1] if fragment.strip("/") else Path(file).stem
                tail = unquote(tail).replace("~1", "/").replace("~0", "~")
                base = re.sub(r"[^A-Za-z0-9_.-]+", "_", tail).strip("_") or "def"
                name, n = base, 1
                while name in defs:
                    n += 1
                    name = f"{base}_{n}"
                names[id(target)] = name
                held.append(target)
                defs[name] = None
                todo.append((name, target, resolved.resolver))
            return "#/$defs/" + names[id(target)]

        def walk(value: Any, res: Any, top: bool = False) -> Any:
            if isinstance(value, list):
                return [walk(v, res) for v in value]
            if not isinstance(value, Mapping):
                return value
            out: dict[str, Any] = {}
            for key, sub in value.items():
                if key in _DROPPED_KEYWORDS or (key == "$schema" and not top):
                    continue
                if key in _DATA_KEYWORDS:
                    out[key] = sub
                elif key in _NAMED_KEYWORDS and isinstance(sub, Mapping):
                    out[key] = {name: walk(v, res) for name, v in sub.items()}
                elif key == "$ref" and isinstance(sub, str):
                    out[key] = named(sub, res)
                else:
                    out[key] = walk(sub, res)
            return out

        out = walk(schema, resolver or self.root, top=True)
        while todo:
            name, target, res = todo.pop(0)
            defs[name] = walk(target, res)
        if defs and isinstance(out, dict):
            out["$defs"] = defs
        return out


def _openapi_specs(path: Path, shown: str) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Per event type, the `EventSpec` fields a document's webhooks give; and its
    ``x-hookproof-type-field``. Raises ConfigError naming the file, webhook and field."""
    from openapi_spec_validator import OpenAPIV31SpecValidator

    doc = _read(path, shown, "catalog.openapi")
    if not isinstance(doc, Mapping) or not str(doc.get("openapi", "")).startswith("3.1"):
        found = doc.get("openapi") if isinstance(doc, Mapping) else None
        raise ConfigError(f"openapi: not an OpenAPI 3.1 document (openapi is {found!r}; webhooks need 3.1)",
                          path=shown)
    error = next(iter(OpenAPIV31SpecValidator(doc).iter_errors()), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        named = re.match(r"^webhooks\.(.+?)\.(post|put|get|patch|delete)(\.|$)", where)
        lead = f"webhook {named.group(1)}: " if named else ""
        raise ConfigError(f"{lead}not a valid OpenAPI 3.1 document at {where or 'the top'}: "
                          f"{error.message.splitlines()[0][:200]}", path=shown)
    webhooks = doc.get("webhooks")
    if not isinstance(webhooks, Mapping) or not webhooks:
        raise ConfigError("webhooks: the document has no webhooks", path=shown)
    refs = _Refs(doc, path, shown)
    out: dict[str, dict[str, Any]] = {}
    for name, item in webhooks.items():
        where = f"webhook {name}"
        item = refs.inline(item, where)
        op_name, op = next(((m, o) for m, o in item.items() if m in ("post", "put", "patch")), (None, None))
        if op is None:
            raise ConfigError(f"{where}: no post operation", path=shown)
        where_op = f"{where}: {op_name}"
        content = (op.get("requestBody") or {}).get("content") or {}
        media = content.get("application/json") or next(
            (v for k, v in content.items() if k.endswith("+json")), None)
        if media is None:
            raise ConfigError(f"{where_op}.requestBody: no application/json content", path=shown)
        fields: dict[str, Any] = {"schema": media.get("schema"), "example": _example(media),
                                  "source": f"{shown}: {where}"}
        for ext, attr in EXTENSIONS.items():
            value = op.get(ext, item.get(ext))
            if value is not None:
                fields[attr] = str(value)
        named = op.get("x-hookproof-refs", item.get("x-hookproof-refs"))
        if named is not None:
            if not isinstance(named, Mapping) or not named or not all(
                    isinstance(k, str) and isinstance(v, str) and v for k, v in named.items()):
                raise ConfigError(f"{where}: x-hookproof-refs: a mapping of paths to object kinds "
                                  f"({{data.user_id: user}}), not {named!r:.80}", path=shown)
            fields["refs"] = dict(named)
        event_type = str(op.get("x-hookproof-event-type", item.get("x-hookproof-event-type", name)))
        out[event_type] = {**fields, "where": where}
    type_field = doc.get("x-hookproof-type-field", "type")
    return out, (str(type_field) if type_field is not None else None)


def _example(media: Mapping[str, Any]) -> Any:
    """A media type's ``example``, else the ``value`` of its first ``examples`` entry."""
    if "example" in media:
        return media["example"]
    for entry in (media.get("examples") or {}).values():
        if isinstance(entry, Mapping) and "value" in entry:
            return entry["value"]
    return None


def load_catalog(catalog: CatalogConfig, base_dir: Path) -> Any:
    """The `UserCatalog` of `catalog` (files relative to `base_dir`), checked: every path and
    key template against the schema, the examples and the bodies of a lifecycle against it.
    On a terminal, a live status line says what it reads and checks (`_status`).

    Raises ConfigError naming the file (None: the config's entry, named by `field`), the
    webhook or type, and the field.
    """
    with _status("Reading the catalog") as say:
        return _load_catalog(catalog, base_dir, say)


@contextmanager
def _status(text: str) -> Iterator[Callable[[str], None]]:
    """A Rich status line on stderr, when it is a terminal, for what a catalog's load is doing
    (twelve schemas of 60 KB take seconds), gone when it ends; the function to update its text
    (nothing off a terminal, or under another live display)."""
    from rich.errors import LiveError

    from hookproof.terminal import err_console

    if not err_console.is_terminal:
        yield lambda _: None
        return
    try:
        status = err_console.status(text)
        status.start()
    except LiveError:
        yield lambda _: None
        return
    try:
        yield status.update
    finally:
        status.stop()


def _load_catalog(catalog: CatalogConfig, base_dir: Path, say: Callable[[str], None]) -> Any:
    from hookproof.scenarios.business_keys import render
    from hookproof.simulator.errors import WorldError
    from hookproof.simulator.world.user_catalog import EventSpec, UserCatalog

    raw: dict[str, dict[str, Any]] = {}
    type_field = catalog.type_field
    if catalog.openapi is not None:
        say(f"Reading the catalog: {catalog.openapi}")
        raw, doc_type_field = _openapi_specs(base_dir / catalog.openapi, catalog.openapi)
        if "type_field" not in catalog.model_fields_set:
            type_field = doc_type_field
    for n, (name, entry) in enumerate(catalog.events.items(), 1):
        field = f'catalog.events."{name}"'
        say(f"Reading the catalog: {name} ({n}/{len(catalog.events)})")
        fields = dict(raw.get(name) or {"source": field, "where": field})
        for attr in ("object_type", *_PATH_FIELDS, "state", "key", "refs"):
            value = getattr(entry, attr)
            if value is not None:
                fields[attr] = value
        for attr, value in (("schema", entry.json_schema), ("example", entry.example)):
            if isinstance(value, str):
                content = _read(base_dir / value, value, f"{field}.{attr}")
                value = _Refs(content, base_dir / value, value).bundle(content, f"{field}.{attr}") \
                    if attr == "schema" else content
            if value is not None:
                fields[attr] = value
        raw[name] = fields
    specs = []
    for name, fields in raw.items():
        shown, where = _origin(fields)
        if fields.get("schema") is None and fields.get("example") is None:
            _fail("neither a schema nor an example: hookproof cannot make its body", shown, where)
        kwargs = {k: v for k, v in fields.items() if k != "where" and v is not None}
        spec = EventSpec(type=name, **kwargs)
        _check_paths(spec, shown, where)
        specs.append(spec)
    _check_refs(specs)
    if catalog.test_mode is not None:  # every type's body carries the flag: hookproof adds no field
        from hookproof.simulator.world.json_instances import dotted, parse_path

        try:
            flag = parse_path(catalog.test_mode)
        except ValueError as exc:
            raise ConfigError(f"{exc}", field="catalog.test_mode") from None
        for spec in specs:
            if not _has(spec, flag):
                raise ConfigError(f"{spec.type}: {_lacks(spec, dotted(flag))}", field="catalog.test_mode")
    try:
        user = UserCatalog(tuple(specs), type_field=type_field, render_key=render,
                           name=catalog.openapi or "catalog", test_mode=catalog.test_mode)
    except WorldError as exc:
        raise ConfigError(str(exc), field="catalog") from None
    _check_bodies(user, say)
    return user


def _fail(message: str, shown: str | None, where: str) -> None:
    """Raise the ConfigError of a catalog entry: in a document (`shown`: the file, `where`: the
    webhook) or in the config (`shown` None, `where`: the entry's field)."""
    if shown is None:
        raise ConfigError(message, field=where)
    raise ConfigError(f"{where}: {message}", path=shown)


def _origin(fields: Mapping[str, Any]) -> tuple[str | None, str]:
    """(the document to name, or None for the config; the webhook or the config entry)."""
    source = str(fields.get("source", ""))
    shown = source.split(": ", 1)[0] if ": " in source else None
    return shown, str(fields.get("where", source))


def _has(spec: Any, path: tuple[str, ...]) -> bool:
    from hookproof.simulator.world.json_instances import has_path, schema_at

    if spec.schema is not None and schema_at(spec.schema, path) is not None:
        return True
    return spec.example is not None and has_path(spec.example, path)


def _check_paths(spec: Any, shown: str | None, where: str) -> None:
    """Every path and key-template field of `spec` is one its schema (or example) has."""
    from hookproof.simulator.world.json_instances import dotted, parse_path

    def name(attr: str) -> str:  # the extension in a document, the key in the config
        return "x-hookproof-" + attr.replace("_", "-") if shown is not None else attr

    for attr in _PATH_FIELDS:
        value = getattr(spec, attr)
        if value is None:
            continue
        try:
            path = parse_path(value)
        except ValueError as exc:
            _fail(f"{name(attr)}: {exc}", shown, where)
        # the world writes the object id, event id, ordering and status only where the body has
        # them: a field the provider's body lacks (Clerk's deleted-user stub has no updated_at)
        # would be one hookproof adds and the provider never sends
        if not _has(spec, path):
            _fail(f"{name(attr)}: {_lacks(spec, dotted(path))}{_settable_hint(attr, spec)}", shown, where)
    if spec.key is not None:
        for field in re.findall(r"\{([^{}]*)\}", spec.key):
            if not field.strip():
                _fail(f"{name('key')}: {spec.key}: an empty {{}} names no field", shown, where)
            elif not _has(spec, tuple(field.strip().split("."))):
                _fail(f"{name('key')}: {spec.key}: {_lacks(spec, field.strip())}", shown, where)


def _check_refs(specs: list[Any]) -> None:
    """Each reference (`EventSpec.refs`) is at a path the type's schema or example has, other
    than the object's own id, and names a kind some type of the catalog makes."""
    from hookproof.simulator.wording import a_or_an
    from hookproof.simulator.world.json_instances import dotted, parse_path

    kinds = list(dict.fromkeys(s.kind for s in specs))
    for spec in specs:
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        named = "x-hookproof-refs" if shown is not None else "refs"
        for text, kind in (spec.refs or {}).items():
            try:
                path = parse_path(text)
            except ValueError as exc:
                _fail(f"{named}: {exc}", shown, where)
            if path == parse_path(spec.object_id):
                _fail(f"{named}: {dotted(path)} is the object's own id (object_id), not another object's; "
                      f"a reference names an object the world made before", shown, where)
            if not _has(spec, path):
                _fail(f"{named}: {dotted(path)}: {_lacks(spec, dotted(path))}", shown, where)
            if kind not in kinds:
                _fail(f"{named}: {dotted(path)}: no type of the catalog makes {a_or_an(kind)} object, the kind "
                      f"{kind!r} names (its kinds: {', '.join(kinds)}; a type's kind is its object_type, else the "
                      "type without its last part)", shown, where)


def _lacks(spec: Any, field: str) -> str:
    """How a path error says what the entry gave lacks `field`: the schema, the example, or both."""
    if spec.schema is not None and spec.example is not None:
        return f"neither the schema nor the example has a field {field}"
    return f"the {'schema' if spec.schema is not None else 'example'} has no field {field}"


def _settable_hint(attr: str, spec: Any) -> str:
    """What to do about an ordering or status path its body lacks (hookproof would add it)."""
    if attr not in ("ordering", "status"):
        return ""
    return (f": {spec.type}'s body as the provider sends it has no such field, and hookproof sends only fields it "
            f"has; leave {attr} out for this type, or add the field to its example or schema")


def _check_state(spec: Any, validator: Any, named: str, shown: str | None, where: str) -> None:
    """`spec`'s state is a value its schema allows at its status path (a misspelt
    ``cancelled`` where the enum says ``canceled``): else one error naming the state.
    `validator` is the type's (the status's schema checked with the references of the whole)."""
    from hookproof.simulator.world.json_instances import dotted, parse_path, schema_at

    at = schema_at(spec.schema, parse_path(spec.status))
    if at is None:
        return
    error = next(iter(validator.evolve(schema=at).iter_errors(spec.state)), None)
    if error is not None:
        _fail(f"{named}: {spec.state!r} is not a status the schema allows at {dotted(parse_path(spec.status))}: "
              f"{error.message[:160]}", shown, where)


def _check_schema(schema: Any, checked: set[str], shown: str | None, where: str) -> None:
    """`schema` is a JSON Schema (draft 2020-12's metaschema): the schema without its ``$defs``
    and each of them checked apart, once per content in `checked` (a catalog's types share
    most of their definitions: twelve 60 KB schemas are checked in their distinct parts)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if not isinstance(schema, Mapping):
        parts: list[tuple[str, Any]] = [("", schema)]
    else:
        defs = schema.get("$defs")
        parts = [("", {k: v for k, v in schema.items() if k != "$defs"})]
        parts += [(f"$defs/{name}", sub) for name, sub in defs.items()] if isinstance(defs, Mapping) else \
            [("$defs", defs)] if "$defs" in schema else []
    meta = _META.get("validator")
    if meta is None:
        meta = _META["validator"] = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    for place, part in parts:
        text = json.dumps(part, sort_keys=True, default=str)
        if text in checked:
            continue
        error = best_match(meta.iter_errors(part))
        if error is not None:
            inside = "/".join(str(p) for p in error.absolute_path)
            at = "/".join(p for p in (place, inside) if p)
            _fail(f"schema: not a JSON Schema{f' at {at}' if at else ''}: {error.message[:160]}", shown, where)
        checked.add(text)


#: The metaschema's validator, made once.
_META: dict[str, Any] = {}


def _check_bodies(user: Any, say: Callable[[str], None] = lambda _: None) -> None:
    """Each schema is one, each example validates against its schema, and so does each body a
    world makes (a whole lifecycle; the world checks each body it makes, `UserCatalog.check_body`)."""
    from hookproof.scenarios.business_keys import TemplateError
    from hookproof.simulator.errors import WorldError
    from hookproof.simulator.world.user_catalog import CannotMake, InvalidBody, UserCatalogWorld

    checked: set[str] = set()
    for n, spec in enumerate(user.events, 1):
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        if spec.schema is None:
            continue
        say(f"Checking the catalog's schemas: {spec.type} ({n}/{len(user.events)})")
        _check_schema(spec.schema, checked, shown, where)
        if spec.example is not None:
            _validate(user, spec, spec.example, "the example")
        if spec.state is not None and spec.status is not None:
            _check_state(spec, user.validator(spec.type), "x-hookproof-state" if shown is not None else "state",
                         shown, where)
    say("Checking the catalog: a body of each type against its schema")
    try:
        UserCatalogWorld(1, catalog=user).lifecycle()
    except TemplateError as exc:
        spec = user.spec(next(s.type for s in user.events if s.key == exc.template))
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        _fail(f"key: {exc}", shown, where)
    except InvalidBody as exc:
        spec = user.spec(exc.event_type)
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        _fail(f"the body hookproof made (give an example) does not match the schema at {exc.at}: {exc.reason}",
              shown, where)
    except CannotMake as exc:
        spec = user.spec(exc.event_type)
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        _fail(f"hookproof cannot make a body from the schema ({exc.reason}): give an example", shown, where)
    except WorldError as exc:
        raise ConfigError(str(exc), field="catalog") from None


def _validate(user: Any, spec: Any, body: Any, what: str) -> None:
    from hookproof.simulator.world.user_catalog import schema_error

    error = next(iter(user.validator(spec.type).iter_errors(body)), None)
    if error is not None:
        shown, where = _origin({"source": spec.source, "where": spec.source.split(": ", 1)[-1]})
        at, reason = schema_error(error)
        _fail(f"{what} does not match the schema at {at}: {reason}", shown, where)


_CACHE: dict[str, Any] = {}


def cached_catalog(catalog: CatalogConfig, base_dir: Path) -> Any:
    """`load_catalog`, once per content of the config table and its files (their mtimes)."""
    files = [base_dir / f for f in [catalog.openapi, *[v for e in catalog.events.values()
                                                        for v in (e.json_schema, e.example) if isinstance(v, str)]]
             if f]
    stamp = [(str(f), f.stat().st_mtime_ns if f.exists() else 0) for f in files]
    key = json.dumps([catalog.model_dump(mode="json"), str(base_dir), stamp], sort_keys=True)
    if key not in _CACHE:
        _CACHE[key] = load_catalog(catalog, base_dir)
    return _CACHE[key]


def catalog_profile(profile_name: str, catalog: CatalogConfig, base_dir: Path, settings: Any = None) -> Any:
    """The profile `profile_name` sending the user's catalog, generic-hmac signing with
    `settings` (a validated `GenericHmacSettings`, ``[target.signing]``; None: its defaults).
    Raises ConfigError."""
    return profile_of(profile_name, cached_catalog(catalog, base_dir), settings)


def profile_of(profile_name: str, user: Any, settings: Any = None) -> Any:
    """The profile `profile_name` sending the loaded `UserCatalog` `user` (generic-hmac with
    `settings`, as `catalog_profile`). Raises ConfigError for a profile that sends its
    provider's own events."""
    from hookproof.simulator.errors import ProfileError
    from hookproof.simulator.profiles.registry import profile_with_catalog

    try:
        return profile_with_catalog(profile_name, user, settings=settings)
    except ProfileError as exc:
        signing = settings is not None and exc.field not in ("catalog", None)  # the settings' own problem
        raise ConfigError(str(exc), field="target.signing" if signing else "catalog") from None


def check_catalog(config: Any, text: str, source: str) -> None:
    """`parse_config`'s check of ``[catalog]`` and of a catalog profile's ``enabled_events``:
    raises ConfigError with the config file and the line (or the catalog file's name)."""
    from hookproof.toml_lines import TomlLines

    lines = TomlLines(text)
    if config.catalog is not None:
        if config.target.profile not in CATALOG_PROFILES:
            raise ConfigError(f"the {config.target.profile} profile sends its provider's own events; a catalog "
                              f"is for {', '.join(CATALOG_PROFILES)}", path=source, field="catalog",
                              line=lines.line_of("catalog") or 1)
        try:
            profile = config.profile()
        except ConfigError as exc:
            if exc.path is not None:  # a document's problem: its file, webhook and field
                raise
            field = exc.field or "catalog"
            parts = [p.strip('"') for p in re.findall(r'"[^"]*"|[^.]+', field)]
            raise ConfigError(exc.message, path=source, field=field,
                              line=lines.line_of(*parts) or lines.line_of("catalog") or 1) from None
    elif config.target.profile in CATALOG_PROFILES:
        from hookproof.simulator.profiles import get_profile

        profile = get_profile(config.target.profile)
    else:
        return
    if config.target.enabled_events is not None:
        types = profile.event_types()
        names = set(types) | set(types.values())
        unknown = [e for e in config.target.enabled_events if e not in names]
        if unknown:
            known = ", ".join(sorted(set(types.values())))
            raise ConfigError(f"the {profile.title} profile sends no event {unknown[0]!r} (known: {known})", path=source,
                              field="target.enabled_events", line=lines.line_of("target", "enabled_events") or 1)


def profile_for(profile_name: str | None, config_path: str | None, *, secrets: bool = True) -> Any:
    """The profile `profile_name` (None: the config's ``target.profile``, else ``stripe``),
    sending the ``[catalog]`` of the config at `config_path` when it has one, else, for the
    config's own profile, `Config.profile` (standard-webhooks and svix: the names the config
    lists) (``hookproof events`` and ``send`` with ``--config``). `secrets` False: the
    config's secrets are not resolved (`load_config`).

    Raises ConfigError for a config that cannot be read, ProfileError for an unknown profile.
    """
    from hookproof.simulator.profiles import get_profile

    if config_path is None:
        return get_profile(profile_name or "stripe")
    from hookproof.config import load_config

    config = load_config(config_path, secrets=secrets)
    profile_name = profile_name or config.target.profile
    if config.catalog is None:  # the config's own profile is the one it builds (its names: `Config.profile`)
        return config.profile() if profile_name == config.target.profile else get_profile(profile_name)
    get_profile(profile_name)  # an unknown name is the same error as without --config
    try:
        if profile_name == config.target.profile:  # [target.signing] too
            return config.profile()
        return catalog_profile(profile_name, config.catalog, config.base_dir)
    except ConfigError as exc:
        raise ConfigError(exc.message, path=exc.path or config_path, field=exc.field) from None


def with_renderer(user: Any) -> Any:
    """`user` with hookproof's key renderer (a catalog built by hand, e.g. in a test)."""
    from hookproof.scenarios.business_keys import render

    return replace(user, render_key=render)


__all__ = ["CATALOG_PROFILES", "CatalogConfig", "CatalogEventConfig", "cached_catalog", "catalog_profile",
           "check_catalog", "load_catalog", "profile_for", "with_renderer"]
