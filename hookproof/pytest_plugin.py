"""hookproof's pytest plugin: run the catalog and the state machine from a team's own tests.

Registered through the ``pytest11`` entry point (``hookproof = "hookproof.pytest_plugin"``).
Only pytest is imported at load time; the harness is imported when a fixture is used.

- Options (group ``hookproof``): ``--hookproof-config`` (ini ``hookproof_config``),
  ``--hookproof-max-examples``, ``--hookproof-seed``, ``--hookproof-out``.
- Marker ``hookproof(max_examples=None, seed=None, scenarios=None)``: per-test defaults.
- Fixtures: ``hookproof_config`` (session, the parsed ``hookproof.toml``),
  ``hookproof_target`` (session, the receiver as the state machine drives it),
  ``hookproof_provider`` (session, the simulated provider's state), and
  ``hookproof_checks`` (function: ``.explore()`` and ``.catalog()``, which fail the test
  with the shrunk schedule or the findings).

A few lines in a team's suite::

    pytestmark = pytest.mark.hookproof(max_examples=50)

    def test_webhooks_survive_the_state_machine(hookproof_checks):
        hookproof_checks.explore()

    def test_webhooks_pass_the_catalog(hookproof_checks):
        hookproof_checks.catalog(["duplicate-sequential", "reorder"])
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

_DEFAULT_MAX_EXAMPLES = 50


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``hookproof`` option group and the ``hookproof_config`` ini key."""
    group = parser.getgroup("hookproof", "hookproof: certify webhook receivers")
    group.addoption("--hookproof-config", dest="hookproof_config", default=None, metavar="PATH",
                    help="hookproof.toml of the receiver under test (default: ini hookproof_config).")
    group.addoption("--hookproof-max-examples", dest="hookproof_max_examples", type=int, default=None, metavar="N",
                    help=f"state-machine programs per test (default: the marker's, else {_DEFAULT_MAX_EXAMPLES}).")
    group.addoption("--hookproof-seed", dest="hookproof_seed", type=int, default=None, metavar="S",
                    help="seed of the world and of Hypothesis (default: the config's run.seed, else random).")
    group.addoption("--hookproof-allow-remote", dest="hookproof_allow_remote", action="store_true", default=False,
                    help="allow a target that is not on this machine (loopback), as certify's --allow-remote.")
    group.addoption("--hookproof-out", dest="hookproof_out", default=None, metavar="DIR",
                    help="where reports and failing schedules go (default: a temporary directory).")
    parser.addini("hookproof_config", "path of hookproof.toml, relative to the ini file", default="hookproof.toml")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hookproof(max_examples=None, seed=None, scenarios=None): defaults for the hookproof_checks fixture.",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    path = config.getoption("hookproof_config")
    if path is None:
        return None
    seed = config.getoption("hookproof_seed")
    return f"hookproof: config {path}, seed {seed if seed is not None else 'random'}"


def _config_path(config: pytest.Config) -> Path:
    given = config.getoption("hookproof_config")
    if given is not None:
        return Path(given)
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return base / str(config.getini("hookproof_config"))


@pytest.fixture(scope="session")
def hookproof_config(pytestconfig: pytest.Config) -> Any:
    """The parsed ``hookproof.toml`` (a `hookproof.config.Config`)."""
    from hookproof.config import load_config
    from hookproof.errors import ConfigError

    try:
        return load_config(_config_path(pytestconfig))
    except ConfigError as exc:
        pytest.fail(f"hookproof: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def _hookproof_session(hookproof_config: Any, pytestconfig: pytest.Config) -> Iterator[tuple[Any, Any]]:
    """The running target; a receiver that cannot be started or reached, or a target off
    this machine without ``--hookproof-allow-remote`` (`hookproof.loopback`, before anything
    is started or sent), fails the fixture with hookproof's one-line message (file:line:
    field: ...), not a traceback."""
    from hookproof.chaos.errors import ChaosError
    from hookproof.commands.explore import explore_target
    from hookproof.config import locate
    from hookproof.errors import ConfigError, HookproofError
    from hookproof.loopback import check_loopback_url
    from hookproof.simulator.errors import SimulatorError

    with contextlib.ExitStack() as stack:
        problem: Exception | None = None
        try:
            check_loopback_url(hookproof_config.target.url, pytestconfig.getoption("hookproof_allow_remote"),
                               command="the hookproof plugin", sends="concurrent duplicate bursts and certify's catalog",
                               flag="--hookproof-allow-remote")
            pair = stack.enter_context(explore_target(hookproof_config))
        except (HookproofError, SimulatorError, ChaosError) as exc:
            problem = locate(exc, hookproof_config) if isinstance(exc, ConfigError) else exc
        if problem is not None:  # failed outside the except block: no chained traceback
            pytest.fail(f"hookproof: {problem}", pytrace=False)
        yield pair


@pytest.fixture(scope="session")
def hookproof_target(_hookproof_session: tuple[Any, Any]) -> Any:
    """The receiver as the state machine drives it (a `scenarios.statemachine.ExploreTarget`)."""
    return _hookproof_session[0]


@pytest.fixture(scope="session")
def hookproof_provider(_hookproof_session: tuple[Any, Any]) -> Any:
    """The simulated provider's state (`simulator.server.state.ServerState`): worlds, switches, sink."""
    return _hookproof_session[1]


@dataclass
class HookproofChecks:
    """What a test asks of hookproof; each method fails the test on a finding."""

    config: Any
    target: Any
    provider: Any
    out_dir: Path
    max_examples: int
    seed: int | None
    scenarios: Sequence[str] | None
    allow_remote: bool = False  # --hookproof-allow-remote: the session let a remote target past the guard

    def explore(self, *, max_examples: int | None = None, seed: int | None = None) -> Any:
        """Run the state machine; on a finding write the shrunk schedule and fail with it.
        A search in which no valid delivery was acknowledged fails too (it proved nothing)."""
        from hookproof.commands.replay import replay_command
        from hookproof.scenarios.statemachine import NOTHING_ACKNOWLEDGED, explore, schedule_lines, write_schedule

        result = explore(self.target, max_examples=max_examples or self.max_examples,
                         seed=seed if seed is not None else self.seed, provider_state=self.provider)
        if result.failure is not None:
            path = write_schedule(result.failure, self.out_dir / "failing-schedule.json", target=self.target.describe,
                                  profile=self.target.profile.name, config=self.config.source)
            lines = [f"hookproof explore: {result.failure.summary()}", "shrunk schedule:"]
            lines += ["  " + s for s in schedule_lines(result.failure)]
            lines.append(f"replay: {replay_command(path, self.config.source)}")
            pytest.fail("\n".join(lines), pytrace=False)
        if result.acked == 0:  # silence is not a pass: the search proved nothing
            pytest.fail(f"hookproof explore: {NOTHING_ACKNOWLEDGED.format(attempts=result.attempts)}", pytrace=False)
        return result

    def catalog(self, scenarios: Sequence[str] | None = None) -> Any:
        """Run catalog scenarios (default: the marker's, else the config's); fail on findings."""
        from hookproof.certify import certify

        result = certify(self.config, scenarios=list(scenarios or self.scenarios or []) or None,
                         out_dir=self.out_dir / "catalog", allow_remote=self.allow_remote)
        report = result.report
        if report.verdict != "pass":
            lines = [f"hookproof catalog: verdict {report.verdict}"]
            for s in report.scenarios:
                for f in s.findings:
                    lines.append(f"  {s.id}: {f.check_id}: {f.key}: {f.message}")
                if s.verdict == "error":
                    lines.append(f"  {s.id}: error: {s.reason}")
            lines.append(f"report: {result.paths.get('html')}")
            pytest.fail("\n".join(lines), pytrace=False)
        return report


@pytest.fixture
def hookproof_checks(request: pytest.FixtureRequest, hookproof_config: Any, hookproof_target: Any,
                     hookproof_provider: Any, tmp_path: Path) -> HookproofChecks:
    """hookproof's checks for this test, configured by options, then the marker, then the config."""
    marker = request.node.get_closest_marker("hookproof")
    kwargs = dict(marker.kwargs) if marker else {}
    opt = request.config.getoption
    out = opt("hookproof_out")
    out_dir = Path(out) / request.node.name if out else tmp_path / "hookproof"
    seed = opt("hookproof_seed")
    if seed is None:
        seed = kwargs.get("seed", hookproof_config.run.seed)
    return HookproofChecks(
        config=hookproof_config, target=hookproof_target, provider=hookproof_provider, out_dir=out_dir,
        max_examples=opt("hookproof_max_examples") or kwargs.get("max_examples") or _DEFAULT_MAX_EXAMPLES,
        seed=seed, scenarios=kwargs.get("scenarios"), allow_remote=bool(opt("hookproof_allow_remote")),
    )
