"""report.json: golden output, round trip, and errors that name what is wrong."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof import reports
from hookproof.reports import (
    SCHEMA_VERSION,
    AttemptView,
    ChecklistItem,
    CheckView,
    EffectPoint,
    Evidence,
    FindingView,
    ReportError,
    ReportFormatError,
    RunReport,
    ScenarioReport,
    SchemaVersionError,
    iter_json,
    load_json,
    render_json,
    report_document,
    scenario_document,
)


def test_golden(run_report: RunReport, golden: Callable[[str, str], None]) -> None:
    golden("report.json", render_json(run_report))


def test_round_trip_is_equal(run_report: RunReport) -> None:
    assert load_json(render_json(run_report)) == run_report


def test_round_trip_of_bytes_and_defaults() -> None:
    minimal = RunReport("0.1.0", "app:asgi", "github", "test", 1, 0.0, 0.0, "pass", (), ())
    assert load_json(render_json(minimal).encode()) == minimal


def test_schema_version_comes_first_and_indent_is_2(run_report: RunReport) -> None:
    text = render_json(run_report)
    assert text.startswith('{\n  "schema_version": 1,\n  "tool_version": ')
    assert list(json.loads(text))[:3] == ["schema_version", "tool_version", "target"]


def test_free_form_values_become_json_values(run_report: RunReport) -> None:
    odd = FindingView("counter", "k", "m", "finding", expected={"b": (1, 2), "a": {3}}, actual=math.inf)
    scenario = replace(run_report.scenarios[1], checks=(replace(run_report.scenarios[1].checks[0], findings=(odd,)),))
    report = replace(run_report, scenarios=(scenario,))
    loaded = load_json(render_json(report)).scenarios[0].checks[0].findings[0]
    assert loaded.expected == {"a": [3], "b": [1, 2]}
    assert loaded.actual == "Infinity"  # free-form: kept as the JSON spelling


def test_report_document_is_what_the_text_reads(run_report: RunReport) -> None:
    odd = FindingView("counter", "k", "m", "finding", expected={"b": (1, 2), "a": {3}}, actual=math.nan)
    scenario = replace(run_report.scenarios[1], checks=(replace(run_report.scenarios[1].checks[0], findings=(odd,)),))
    report = replace(run_report, scenarios=(*run_report.scenarios, scenario), finished_at=-math.inf)
    document = report_document(report)
    assert json.dumps(document) == json.dumps(json.loads(render_json(report)))
    assert list(document)[0] == "schema_version"
    made: list[ScenarioReport] = []

    def remembered(s: ScenarioReport) -> dict:
        made.append(s)
        return scenario_document(s)

    assert report_document(report, remembered) == document
    assert made == list(report.scenarios)


def test_iter_json_pieces_are_the_text_and_the_document(run_report: RunReport) -> None:
    odd = FindingView("counter", "k", "m\u00e9\n", "finding", expected={"b": (1, 2), "a": {3}}, actual=math.nan)
    scenario = replace(run_report.scenarios[1], checks=(replace(run_report.scenarios[1].checks[0], findings=(odd,)),
                                                        replace(run_report.scenarios[1].checks[0], findings=())))
    report = replace(run_report, scenarios=(*run_report.scenarios, scenario), finished_at=-math.inf)
    document = report_document(report)
    assert "".join(iter_json(report)) + "\n" == json.dumps(document, indent=2, ensure_ascii=False,
                                                            allow_nan=False) + "\n" == render_json(report)
    assert "".join(iter_json(report, indent=None, ensure_ascii=True)) == json.dumps(document)
    assert len(list(iter_json(report))) > len(report.scenarios[1].attempts)  # an attempt at a time at least


def test_non_finite_typed_floats_round_trip(run_report: RunReport) -> None:
    report = replace(run_report, finished_at=math.inf)
    assert load_json(render_json(report)).finished_at == math.inf


def _doc(run_report: RunReport) -> dict:
    return json.loads(render_json(run_report))


def _set(doc: dict, path: tuple, value: object) -> dict:
    target = doc
    for part in path[:-1]:
        target = target[part]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_DELETE = object()

BAD_DOCUMENTS = [
    # (what is changed, new value, error path, words in the message)
    (("schema_version",), _DELETE, "schema_version", "missing"),
    (("schema_version",), SCHEMA_VERSION + 1, "schema_version", "upgrade hookproof"),
    (("schema_version",), 0, "schema_version", "not supported"),
    (("schema_version",), "1", "schema_version", "expected an integer"),
    (("seed",), True, "seed", "expected an integer, got boolean true"),
    (("verdict",), _DELETE, "verdict", "missing required field of RunReport"),
    (("scenarios",), {}, "scenarios", "expected an array"),
    (("scenarios", 1, "checks", 0, "verdict"), 3, "scenarios[1].checks[0].verdict", "expected a string"),
    (("scenarios", 1, "attempts", 2, "sent_at"), "soon", "scenarios[1].attempts[2].sent_at",
     "expected a number, got string 'soon'"),
    (("scenarios", 0, "checks", 0, "stats"), [], "scenarios[0].checks[0].stats", "expected an object"),
    (("scenarios", 2, "reason"), 5, "scenarios[2].reason", "expected a string"),
    (("checklist", 0), "duplicates-tested", "checklist[0]", "expected an object (ChecklistItem)"),
]


@pytest.mark.parametrize(("where", "value", "path", "words"), BAD_DOCUMENTS,
                         ids=[".".join(map(str, b[0])) + ("=<deleted>" if b[1] is _DELETE else f"={b[1]!r}"[:30])
                              for b in BAD_DOCUMENTS])  # ids alike in every process (xdist's workers)
def test_bad_document_names_the_field(run_report: RunReport, where: tuple, value: object, path: str,
                                      words: str) -> None:
    text = json.dumps(_set(_doc(run_report), where, value))
    with pytest.raises(ReportFormatError) as info:
        load_json(text)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")
    assert words in str(info.value)


@pytest.mark.parametrize(("text", "words"), [
    ("", "not a JSON document"),
    ("{\"schema_version\": 1,", "not a JSON document"),
    (b"\xff\xfe{", "not a JSON document"),
    ("[1, 2]", "expected a JSON object at the top level, got an array"),
    ("null", "got null"),
])
def test_not_a_report(text: str | bytes, words: str) -> None:
    with pytest.raises(ReportFormatError, match=words) as info:
        load_json(text)
    assert info.value.path == ""


def test_version_error_carries_versions(run_report: RunReport) -> None:
    text = json.dumps(_set(_doc(run_report), ("schema_version",), 7))
    with pytest.raises(SchemaVersionError) as info:
        load_json(text)
    assert (info.value.found, info.value.supported) == (7, SCHEMA_VERSION)


def test_error_tree() -> None:
    assert issubclass(SchemaVersionError, ReportFormatError)
    assert issubclass(ReportFormatError, ReportError)
    assert issubclass(ReportFormatError, ValueError)


def test_unknown_fields_are_ignored(run_report: RunReport) -> None:
    doc = _doc(run_report)
    doc["added_later"] = {"x": 1}
    doc["scenarios"][0]["added_later"] = 1
    assert load_json(json.dumps(doc)) == run_report


def test_schema_md_documents_every_field() -> None:
    text = (Path(reports.__file__).parent / "schema.md").read_text(encoding="utf-8")
    sections = {"Top level": RunReport, "Scenario": ScenarioReport, "Check": CheckView, "Finding": FindingView,
                "Attempt": AttemptView, "Effect point": EffectPoint, "Checklist item": ChecklistItem,
                "Evidence": Evidence}
    for title, cls in sections.items():
        body = re.split(r"^## ", text.split(f"\n## {title}", 1)[1], flags=re.M)[0]
        documented = re.findall(r"^\| `(\w+)` \|", body, flags=re.M)
        fields = [f.name for f in dataclasses.fields(cls)]
        if cls is RunReport:
            fields = ["schema_version", *(f for f in fields if f != "schema_version")]
        assert documented == fields, title
