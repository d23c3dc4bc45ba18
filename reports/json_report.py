"""report.json: the run model as versioned JSON, and back (`reports/schema.md`).

`render_json` writes every field of the model in the dataclasses' field order with
``schema_version`` first, indented by 2, so two runs diff line by line. `load_json`
rebuilds the `RunReport` and explains, with the path of the offending value, why a
document cannot be read. Free-form values (``stats``, ``expected``, ``actual``) are
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
from collections.abc import Mapping
from typing import Any, Union

from hookproof.reports.errors import ReportFormatError, SchemaVersionError
from hookproof.reports.model import SCHEMA_VERSION, RunReport

__all__ = ["load_json", "render_json"]

#: How non-finite floats are spelled (strict JSON has no NaN or Infinity).
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def render_json(report: RunReport) -> str:
    """The report as report.json text (UTF-8 safe, ends with a newline)."""
    document = {"schema_version": report.schema_version, **_encode_dataclass(report)}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


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
    report = _decode(RunReport, data, "")
    assert isinstance(report, RunReport)
    return report


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


def _decode(tp: Any, value: Any, path: str) -> Any:
    """`value` (parsed JSON) as type `tp`, or a `ReportFormatError` at `path`."""
    if tp is Any:
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, value, path)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        inner = [t for t in options if t is not type(None)]
        if len(inner) == 1:
            return _decode(inner[0], value, path)
        raise TypeError(f"unsupported union {tp!r} in the report model")  # programmer error
    if origin is tuple:
        item_type = typing.get_args(tp)[0]
        if not isinstance(value, list):
            raise ReportFormatError(f"expected an array, got {_kind(value)}", path=path)
        return tuple(_decode(item_type, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict):
        if not isinstance(value, dict):
            raise ReportFormatError(f"expected an object, got {_kind(value)}", path=path)
        value_type = typing.get_args(tp)[1]
        return {k: _decode(value_type, v, f"{path}.{k}") for k, v in value.items()}
    return _decode_scalar(tp, value, path)


def _decode_scalar(tp: Any, value: Any, path: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ReportFormatError(f"expected true or false, got {_kind(value)}", path=path)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ReportFormatError(f"expected an integer, got {_kind(value)}", path=path)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str) and value in _NON_FINITE:
            return _NON_FINITE[value]
        raise ReportFormatError(f"expected a number, got {_kind(value)}", path=path)
    if tp is str:
        if isinstance(value, str):
            return value
        raise ReportFormatError(f"expected a string, got {_kind(value)}", path=path)
    raise TypeError(f"unsupported type {tp!r} in the report model")  # programmer error


def _decode_dataclass(cls: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise ReportFormatError(f"expected an object ({cls.__name__}), got {_kind(value)}", path=path)
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        where = f"{path}.{f.name}" if path else f.name
        if f.name in value:
            kwargs[f.name] = _decode(hints[f.name], value[f.name], where)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ReportFormatError(f"missing required field of {cls.__name__}", path=where)
    return cls(**kwargs)


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
