"""The CI templates in examples/ci/: valid YAML of each system's shape, whose hookproof
commands exist with the flags they use, and whose artifact paths are files certify writes."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from hookproof.cli import app
from hookproof.reports import REPORT_FILES

try:
    from typer._click.exceptions import UsageError  # typer >= 0.20 vendors click
except ImportError:  # pragma: no cover - older typer on click
    from click.exceptions import UsageError  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "examples" / "ci"


def commands(lines: list[str]) -> list[list[str]]:
    """The `hookproof …` commands among shell lines (one command per line, `&&` split)."""
    found = []
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] == "hookproof":
                found.append(words[1:])
    return found


def check_command(args: list[str]) -> None:
    """Parse `args` as the hookproof CLI would (no command runs); raises UsageError."""
    group: Any = typer.main.get_command(app)
    name, command, rest = group.resolve_command(group.context_class(group), args)
    assert command is not None, f"no command {args[0]!r}"
    command.make_context(name, list(rest))


def out_dir(args: list[str]) -> str:
    return args[args.index("--out") + 1]


def test_github_actions_template() -> None:
    doc: dict[Any, Any] = yaml.safe_load((TEMPLATES / "github-actions.yml").read_text())
    assert set(doc[True]) == {"push", "pull_request"}  # YAML 1.1 reads the key `on` as True
    steps = doc["jobs"]["certify"]["steps"]
    runs = [line for step in steps if "run" in step for line in step["run"].splitlines()]
    found = commands(runs)
    assert [args[0] for args in found] == ["certify"]
    for args in found:
        check_command(args)
    out = out_dir(found[0])
    assert any(f"{out}/{REPORT_FILES['markdown']}" in line and "GITHUB_STEP_SUMMARY" in line for line in runs)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert {f"{out}/{REPORT_FILES[kind]}" for kind in ("junit", "html")} <= set(upload["with"]["path"].split())
    assert "WEBHOOK_SECRET" in doc["jobs"]["certify"]["env"]


def test_gitlab_ci_template() -> None:
    doc: dict[str, Any] = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())
    job = doc["certify-webhooks"]
    found = commands(job["script"])
    assert [args[0] for args in found] == ["certify"]
    for args in found:
        check_command(args)
    assert job["artifacts"]["reports"]["junit"] == f"{out_dir(found[0])}/{REPORT_FILES['junit']}"
    assert job["artifacts"]["when"] == "always"


@pytest.mark.parametrize("args", [["certify", "--no-such-flag"], ["certfy"]])
def test_the_command_check_catches_a_wrong_flag_or_command(args: list[str]) -> None:
    with pytest.raises(UsageError):
        check_command(args)
