"""report.schema.json: published, equal to what the model generates, and every report
hookproof writes (the renderers' sample, the golden file, a real certify run) is valid."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.reports import render_json
from hookproof.reports.schema import SCHEMA_PATH, report_schema, schema_text
from tests.reports.sample import sample_report

GOLDEN = Path(__file__).with_name("golden") / "report.json"
VALIDATOR = jsonschema.Draft202012Validator(report_schema())


def problems(document: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(document)]


def test_the_published_schema_is_the_models() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), \
        "report.schema.json is stale: python -m hookproof.reports.schema > reports/report.schema.json"
    jsonschema.Draft202012Validator.check_schema(report_schema())


def test_the_sample_and_the_golden_report_are_valid() -> None:
    assert problems(json.loads(render_json(sample_report()))) == []
    assert problems(json.loads(GOLDEN.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(("path", "value", "message"), [
    (("schema_version",), 99, "1 was expected"),
    (("seed",), "seven", "'seven' is not of type 'integer'"),
    (("scenarios", 0, "attempts", 0, "latency_ms"), "slow", "'slow' is not valid under any of the given schemas"),
])
def test_a_wrong_value_is_named(path: tuple[object, ...], value: object, message: str) -> None:
    document = json.loads(render_json(sample_report()))
    node = document
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    found = problems(document)
    assert found and found[0].endswith(message) and found[0].startswith("/".join(map(str, path)))


def test_a_real_certify_report_is_valid(tmp_path: Path) -> None:
    config = receiver_config("inbox_sync", tmp_path, "whsec_schema_0123456789abcdef", seed=7,
                             scenarios=["duplicate-sequential", "reorder", "sender-timeout"])
    certify(config, out_dir=tmp_path / "out")
    document = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert [s["id"] for s in document["scenarios"]] == ["duplicate-sequential", "reorder", "sender-timeout"]
    assert problems(document) == []
