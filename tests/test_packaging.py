"""The distribution: one top-level package, every module shipped, a light pytest plugin,
and `hookproof demo` from a plain `pip install` with no extra."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: repository folder -> installed package (pyproject's [tool.setuptools.package-dir])
MAPPED = {"hookproof": "hookproof", "simulator": "hookproof/simulator", "scenarios": "hookproof/scenarios",
          "chaos": "hookproof/chaos", "loadtests": "hookproof/loadtests", "reports": "hookproof/reports"}
SOURCES = ["pyproject.toml", "README.md", "LICENSE", *MAPPED]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources (the work tree gets no build/ or egg-info)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules"))
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(src)], check=True, capture_output=True, timeout=300)
    (found,) = out.glob("hookproof-*.whl")
    return found


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"hookproof"}
    assert "hookproof/py.typed" in names and "hookproof/reports/templates/report.html.j2" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") or name.endswith(".dist-info/LICENSE") for name in names)
    entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "hookproof = hookproof.pytest_plugin" in text and "hookproof = hookproof.cli:main" in text


def test_the_wheel_ships_every_module_of_every_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"{installed}/{path.relative_to(ROOT / folder).as_posix()}"
                for folder, installed in MAPPED.items()
                for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts}
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"


def test_the_plugin_imports_only_pytest() -> None:
    probe = ("import json, sys; before = set(sys.modules); import hookproof.pytest_plugin; "
             "print(json.dumps(sorted(set(sys.modules) - before)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                                       timeout=60).stdout)
    heavy = {"aiohttp", "httpx", "faker", "jinja2", "sqlalchemy", "hypothesis", "pydantic", "fastapi", "rich",
             "typer", "hookproof.simulator", "hookproof.scenarios", "hookproof.certify"}
    assert not heavy & set(loaded), sorted(heavy & set(loaded))
    assert "hookproof.pytest_plugin" in loaded


PROJECT_TEST = '''
import examples, reports, scenarios


def test_our_packages_are_ours(request):
    assert (reports.OWNER, scenarios.OWNER, examples.OWNER) == ("team", "team", "team")
    assert request.config.pluginmanager.hasplugin("hookproof")
    assert request.config.getoption("hookproof_config") is None
'''


def test_a_project_with_its_own_reports_scenarios_and_examples_packages(tmp_path: Path) -> None:
    for name in ("reports", "scenarios", "examples"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text('OWNER = "team"\n')
    (tmp_path / "test_team.py").write_text(PROJECT_TEST)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_team.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@pytest.mark.slow
def test_a_plain_install_runs_the_demo_with_no_extra(wheel: Path, tmp_path: Path) -> None:
    """`pip install hookproof` into a fresh venv (dependencies from the package index): the demo works
    as the README describes it (both verdicts printed, the broken receiver's duplicate named, each
    receiver's report in the run's own folder, its go-live checklist agreeing with its evidence)."""
    from tests.test_readme import assert_checklist_agrees

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True, env=env,
                   capture_output=True, timeout=900)
    probe = subprocess.run([str(bin_dir / "python"), "-c",
                            "import importlib.util as u; print([m for m in ('flask', 'locust', 'docker', 'standardwebhooks', "
                            "'simulator', 'scenarios', 'reports', 'examples') if u.find_spec(m)])"],
                           check=True, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert probe.stdout.strip() == "[]"
    version = subprocess.run([str(bin_dir / "hookproof"), "--version"], check=True, env=env, capture_output=True,
                             text=True, timeout=60)
    assert version.stdout.startswith("hookproof ")
    demo = subprocess.run([str(bin_dir / "hookproof"), "demo"], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "the correct receiver passed and the broken one failed" in demo.stdout
    assert "verdict: PASS" in demo.stdout and "verdict: FAIL" in demo.stdout
    assert re.search(r"duplicated: (license|fulfillment|renewal|dunning|refund):", demo.stdout)
    (run_dir,) = [p for p in (tmp_path / "hookproof-reports").iterdir() if p.name.startswith("demo-")]
    for name in ("inbox_sync", "check_then_insert"):
        assert (run_dir / name / "report.html").is_file()
        assert_checklist_agrees((run_dir / name / "report.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("module", ["hookproof.scenarios.checks", "hookproof.simulator.world",
                                    "hookproof.simulator.faults", "hookproof.reports.model"])
def test_the_pure_core_imports_no_io_library(module: str) -> None:
    """Packages re-export lazily (PEP 562): importing a pure module pulls no HTTP, web or search library."""
    probe = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                                           text=True, timeout=60).stdout))
    heavy = {"aiohttp", "httpx", "fastapi", "uvicorn", "jinja2", "hypothesis", "sqlalchemy", "typer"}
    assert not heavy & loaded, sorted(heavy & loaded)
