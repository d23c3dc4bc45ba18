"""report.json: the run model as versioned JSON, and back (`reports/schema.md`).

`render_json` writes every field of the model in the dataclasses' field order with
``schema_version`` first, indented by 2, so two runs diff line by line. `load_json`
validates the document against the run model with pydantic (strict: an integer is not a
boolean or text) and explains, with the path of the offending value, why a document
cannot be read. Free-form values (``stats``, ``expected``, ``actual``) are
written as JSON values: tuples come back as lists, sets as sorted lists, and anything
JSON has no word for as its ``str``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterator, Union

from pydantic import TypeAdapter, ValidationError

from hookproof.reports.errors import ReportFormatError, SchemaVersionError
from hookproof.reports.model import SCHEMA_VERSION, FindingView, LogExcerpt, RunReport, ScenarioReport

__all__ = ["finding_json", "finding_of", "iter_json", "load_json", "render_json", "report_document", "scenario_document"]

#: How non-finite floats are spelled (strict JSON has no NaN or Infinity).
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def render_json(report: RunReport) -> str:
    """The report as report.json text (UTF-8 safe, ends with a newline)."""
    return "".join(iter_json(report)) + "\n"


def iter_json(report: RunReport, *, indent: int | None = 2, ensure_ascii: bool = False) -> Iterator[str]:
    """report.json's document as text, in pieces: a finding or an attempt at a time, so a
    storm's hundred thousand findings are never one tree of JSON values nor one text.

    With the defaults, the pieces joined are `render_json`'s text (without its last
    newline); ``indent=None, ensure_ascii=True`` gives ``json.dumps(report_document(report))``
    (the history meta's form). Each piece is what `json.dumps` writes for its part, indented
    to its depth.
    """
    dump = functools.partial(json.dumps, indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)
    return _pieces(report, 0, dump, indent)


def finding_json(finding: FindingView) -> str:
    """One finding as one line of ASCII JSON text: what ``iter_json(..., indent=None,
    ensure_ascii=True)`` writes for it (a history keeps a report's findings so, a row each:
    `simulator.delivery.history.HistoryFile.set_report`). Raises ValueError for a non-finite
    float among its free-form values (as `iter_json` does; `_encode` spells the model's)."""
    return json.dumps(_encode(finding), ensure_ascii=True, allow_nan=False)


def finding_of(text: str | bytes) -> FindingView:
    """The finding `finding_json` wrote, as the view it was (its free-form ``expected`` and
    ``actual`` as report.json reads them back). Raises ValueError (``json.JSONDecodeError``,
    KeyError's message as one) when `text` is not such a finding."""
    d = json.loads(text)
    try:
        log = d["log"]
        return FindingView(d["check_id"], d["key"], d["message"], d["severity"], tuple(d["attempts"]), d["expected"],
                           d["actual"], d["count"], LogExcerpt(log["path"], log["tail"]) if log is not None else None)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a finding as report.json writes one ({type(exc).__name__}: {exc})") from None


def _pieces(value: Any, level: int, dump: Callable[[Any], str], indent: int | None) -> Iterator[str]:
    """`value` encoded (`_encode`) and dumped by `dump`, at depth `level`: the report (at depth
    0), a dataclass holding a sequence of dataclasses, or such a sequence, member by member;
    anything else whole."""
    close = "\n" + " " * (indent * level) if indent is not None else ""
    step = "\n" + " " * (indent * (level + 1)) if indent is not None else ""
    comma = "," + step if indent is not None else ", "
    if level == 0 or _has_parts(value):  # the report itself always: its schema_version first
        names = [f.name for f in dataclasses.fields(value)]
        if "schema_version" in names:  # first, as `report_document` puts it
            names.remove("schema_version")
            names.insert(0, "schema_version")
        yield "{" + step
        for i, name in enumerate(names):
            yield (comma if i else "") + dump(name) + ": "
            yield from _pieces(getattr(value, name), level + 1, dump, indent)
        yield close + "}"
    elif _is_parts(value):
        yield "[" + step
        for i, item in enumerate(value):
            if i:
                yield comma
            yield from _pieces(item, level + 1, dump, indent)
        yield close + "]"
    else:
        text = dump(_encode(value))
        yield text.replace("\n", close) if indent is not None and level else text


def _is_parts(value: Any) -> bool:
    """A non-empty sequence of dataclasses, a list or tuple or one read an item at a time (a
    storm's findings, `model.CheckView.findings`): written item by item."""
    return isinstance(value, Sequence) and not isinstance(value, str) and len(value) > 0 \
        and dataclasses.is_dataclass(value[0]) and not isinstance(value[0], type)


def _has_parts(value: Any) -> bool:
    """A dataclass with a field holding `_is_parts` (written field by field)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type) \
        and any(_is_parts(getattr(value, f.name)) for f in dataclasses.fields(value))


def report_document(report: RunReport,
                    scenario_document: Callable[[ScenarioReport], dict[str, Any]] | None = None) -> dict[str, Any]:
    """report.json's document as JSON values (dicts, lists, str, int, float, bool, None): what
    ``json.loads(render_json(report))`` reads, built without the text.

    `scenario_document(s)` gives each scenario's part (default: encoded here); a caller that
    stores the report again and again as its scenarios end passes one that remembers the parts
    it made (`scenario_document` here makes one), so each scenario is encoded once. The parts
    are shared, not copied: the caller must not change them.
    """
    encode = scenario_document or _encode_dataclass
    document: dict[str, Any] = {"schema_version": report.schema_version}
    for f in dataclasses.fields(report):
        if f.name == "scenarios":
            document[f.name] = [encode(s) for s in report.scenarios]
        elif f.name != "schema_version":
            document[f.name] = _encode(getattr(report, f.name))
    return document


def scenario_document(s: ScenarioReport) -> dict[str, Any]:
    """One scenario's part of report.json's document (`report_document`), as JSON values."""
    return _encode_dataclass(s)


def load_json(text: str | bytes) -> RunReport:
    """Rebuild a `RunReport` from report.json text.

    Raises:
        SchemaVersionError: ``schema_version`` is missing or not the one this version reads.
        ReportFormatError: the text is not JSON, or a field is missing or has the wrong type
            (the error's ``path`` names it, e.g. ``scenarios[0].attempts[2].sent_at``).
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReportFormatError(f"not a JSON document: {exc}") from exc
    if not isinstance(data, dict):
        raise ReportFormatError(f"expected a JSON object at the top level, got {_kind(data)}")
    _check_version(data)
    return _decode_report(data)


# ---- encoding ------------------------------------------------------------------------


def _encode_dataclass(obj: Any) -> dict[str, Any]:
    return {f.name: _encode(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name != "schema_version"}


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_dataclass(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return [_encode(v) for v in sorted(value, key=repr)]
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):  # a storm's findings
        return [_encode(v) for v in value]
    return str(value)


# ---- decoding ------------------------------------------------------------------------


def _check_version(data: dict[str, Any]) -> None:
    found = data.get("schema_version")
    if "schema_version" not in data:
        raise SchemaVersionError("missing: this is not a hookproof report.json (or one older than "
                                 "version 1)", found=None, supported=SCHEMA_VERSION)
    if isinstance(found, bool) or not isinstance(found, int):
        raise SchemaVersionError(f"expected an integer, got {_kind(found)}", found=found,
                                 supported=SCHEMA_VERSION)
    if found != SCHEMA_VERSION:
        hint = "upgrade hookproof to read it" if found > SCHEMA_VERSION else "re-run to get a current report"
        raise SchemaVersionError(f"version {found} is not supported (this hookproof reads version "
                                 f"{SCHEMA_VERSION}; {hint})", found=found, supported=SCHEMA_VERSION)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


#: report.json's documents validated against the run model (JSON input, strict: integers
#: are integers, not booleans or text; arrays become the model's tuples).
_REPORT: TypeAdapter[RunReport] = TypeAdapter(RunReport)
_WORDS = {"int_type": "expected an integer", "int_from_float": "expected an integer",
          "float_type": "expected a number", "string_type": "expected a string",
          "bool_type": "expected true or false", "tuple_type": "expected an array", "list_type": "expected an array",
          "dict_type": "expected an object"}


def _finite(node: Any, tp: Any) -> Any:
    """`node` (parsed JSON) with the spellings of non-finite numbers turned into floats where
    the model says number, so the strict validation sees floats there (and only there)."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(node, dict):
            return node
        hints = _hints(tp)
        return {k: _finite(v, hints[k]) if k in hints else v for k, v in node.items()}
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [t for t in typing.get_args(tp) if t is not type(None)]
        return _finite(node, inner[0]) if len(inner) == 1 else node
    if origin is tuple and isinstance(node, list):
        return [_finite(v, typing.get_args(tp)[0]) for v in node]
    if origin in (Mapping, dict) and isinstance(node, dict):
        return {k: _finite(v, typing.get_args(tp)[1]) for k, v in node.items()}
    if tp is float and isinstance(node, str) and node in _NON_FINITE:
        return _NON_FINITE[node]
    return node


def _class_at(loc: tuple[Any, ...]) -> str:
    """The name of the model class at `loc` (RunReport at the top)."""
    tp: Any = RunReport
    for part in loc:
        if isinstance(part, int):
            tp = typing.get_args(tp)[0]
            continue
        tp = _hints(tp)[part]
        if typing.get_origin(tp) in (Union, types.UnionType):
            tp = next(t for t in typing.get_args(tp) if t is not type(None))
    return getattr(tp, "__name__", str(tp))


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _decode_report(data: dict[str, Any]) -> RunReport:
    """`data` (report.json parsed, version checked) as the model, or the first problem as a
    ReportFormatError naming its path."""
    try:
        return _REPORT.validate_json(json.dumps(_finite(data, RunReport), allow_nan=True), strict=True)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = tuple(error["loc"])
        if error["type"] == "missing":
            raise ReportFormatError(f"missing required field of {_class_at(loc[:-1])}", path=_path(loc)) from None
        if error["type"] in ("dataclass_type", "model_type", "dataclass_exact_type"):
            raise ReportFormatError(f"expected an object ({_class_at(loc)}), got {_kind(error['input'])}",
                                    path=_path(loc)) from None
        words = _WORDS.get(error["type"], error["msg"])
        raise ReportFormatError(f"{words}, got {_kind(error['input'])}", path=_path(loc)) from None


def _kind(value: Any) -> str:
    """A short description of a parsed JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return "an array"
    return "an object"
