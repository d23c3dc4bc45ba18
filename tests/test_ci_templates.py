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


#: The image a template's `docker run` names (a CI variable the team sets).
IMAGE_VARIABLE = "$HOOKPROOF_IMAGE"


def commands(lines: list[str]) -> list[list[str]]:
    """The `hookproof …` commands among shell lines (one command per line, `&&` split), and
    the hookproof arguments of a `docker run … $HOOKPROOF_IMAGE …` line."""
    found = []
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] == "hookproof":
                found.append(words[1:])
            elif words[:2] == ["docker", "run"] and IMAGE_VARIABLE in words:
                found.append(words[words.index(IMAGE_VARIABLE) + 1:])
    return found


def installs(lines: list[str]) -> list[str]:
    """The `pip install` lines among shell lines."""
    return [line.strip() for line in lines if line.strip().startswith("pip install")]


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
    assert f"{out}/receiver.log" in upload["with"]["path"].split()  # the receiver it started: its own log
    # the receiver is started by certify ([target.start]): --chaos tests that an acked delivery survives a kill
    assert "--chaos" in found[0]
    assert "WEBHOOK_SECRET" in doc["jobs"]["certify"]["env"]
    # hookproof is not on PyPI: a bare `pip install hookproof` would take whatever holds that name
    assert installs(runs) == ['pip install "$HOOKPROOF_SPEC"']
    assert doc["jobs"]["certify"]["env"]["HOOKPROOF_SPEC"] == "${{ vars.HOOKPROOF_SPEC }}"


def test_github_actions_image_template_runs_the_readme_s_docker_line() -> None:
    """For a receiver in another language: no Python on the runner, certify from the image
    with the README's own `docker run` flags (host network, the user's uid, the folder
    mounted, the secret by name), the receiver started by the job before it."""
    doc: dict[Any, Any] = yaml.safe_load((TEMPLATES / "github-actions-image.yml").read_text())
    job = doc["jobs"]["certify"]
    steps = job["steps"]
    assert not any(step.get("uses", "").startswith("actions/setup-python") for step in steps)
    runs = [line for step in steps if "run" in step for line in step["run"].splitlines()]
    assert installs(runs) == []
    found = commands(runs)
    assert [args[0] for args in found] == ["certify"]
    for args in found:
        check_command(args)
    docker = next(shlex.split(line) for line in runs if line.strip().startswith("docker run"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = next(shlex.split(line) for line in readme.splitlines() if line.startswith("docker run"))
    assert docker[:docker.index(IMAGE_VARIABLE)] == shown[:shown.index("hookproof/hookproof")]
    assert docker.index(IMAGE_VARIABLE) == len(docker) - len(found[0]) - 1
    names = [step.get("name", "") for step in steps]
    assert names.index("Start your receiver") < names.index("Wait for your receiver") < names.index("Certify")
    out = out_dir(found[0])
    assert any(f"{out}/{REPORT_FILES['markdown']}" in line and "GITHUB_STEP_SUMMARY" in line for line in runs)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert {f"{out}/{REPORT_FILES[kind]}" for kind in ("junit", "html")} <= set(upload["with"]["path"].split())
    assert set(job["env"]) == {"WEBHOOK_SECRET", "HOOKPROOF_IMAGE"}


def test_gitlab_ci_template() -> None:
    doc: dict[str, Any] = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())
    job = doc["certify-webhooks"]
    found = commands(job["script"])
    assert [args[0] for args in found] == ["certify"]
    for args in found:
        check_command(args)
    assert job["artifacts"]["reports"]["junit"] == f"{out_dir(found[0])}/{REPORT_FILES['junit']}"
    assert job["artifacts"]["when"] == "always"
    assert "--chaos" in found[0] and job["artifacts"]["paths"] == [f"{out_dir(found[0])}/"]
    assert installs(job["script"]) == ['pip install "$HOOKPROOF_SPEC"']


@pytest.mark.parametrize("args", [["certify", "--no-such-flag"], ["certfy"]])
def test_the_command_check_catches_a_wrong_flag_or_command(args: list[str]) -> None:
    with pytest.raises(UsageError):
        check_command(args)
