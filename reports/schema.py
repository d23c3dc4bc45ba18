"""report.json's JSON Schema, generated from the run model (`reports.model`).

`report_schema()` is the schema of the documents `render_json` writes: the model's
dataclasses as pydantic sees them, plus ``schema_version`` (a constant), with every float
field also accepting the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (strict
JSON has no word for them; `render_json` spells them so). The published copy is
``report.schema.json`` beside this module; a test keeps it equal to what this builds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from hookproof.reports.model import SCHEMA_VERSION, RunReport

#: The published schema file (package data).
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
_NON_FINITE = {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]}


def _widen_floats(node: Any) -> Any:
    """Let every ``number`` in the schema also be a non-finite float's spelling."""
    if isinstance(node, dict):
        node = {key: _widen_floats(value) for key, value in node.items()}
        if node.get("type") == "number":
            rest = {key: value for key, value in node.items() if key not in ("type", "title")}
            title = {"title": node["title"]} if "title" in node else {}
            return {**title, "anyOf": [{"type": "number", **rest}, _NON_FINITE]}
        return node
    if isinstance(node, list):
        return [_widen_floats(value) for value in node]
    return node


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of report.json at `SCHEMA_VERSION`."""
    schema = _widen_floats(TypeAdapter(RunReport).json_schema(mode="serialization"))
    schema["properties"] = {**schema["properties"], "schema_version": {"const": SCHEMA_VERSION}}
    schema["required"] = ["schema_version", *(f for f in schema.get("required", []) if f != "schema_version")]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"hookproof report.json, schema version {SCHEMA_VERSION}", **schema}


def schema_text() -> str:
    """`report_schema()` as the text of report.schema.json (sorted keys, newline at the end)."""
    return json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m hookproof.reports.schema > reports/report.schema.json
    print(schema_text(), end="")
