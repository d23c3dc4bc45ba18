"""Helpers for the chaos tests: certify a reference receiver under a fault injector."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

from hookproof.certify import CertifyResult, certify
from hookproof.config import (
    ChaosConfig,
    Config,
    DockerTargetConfig,
    ObserverConfig,
    ProcessTargetConfig,
    RunConfig,
    SettleConfig,
    TargetConfig,
)
from hookproof.simulator.serving import free_port
from tests.support import RECEIVERS_IMAGE

REPO = Path(__file__).resolve().parents[2]
SECRET = "whsec_chaos_" + "0" * 24
MATRIX_FILE = Path(__file__).with_name("chaos_matrix.json")
#: Receiver tuning for short runs: a 0.5 s slow effect, a 0.3 s lease on claimed inbox rows
#: (a row a killed worker had claimed is taken up again well within the settle window), and
#: an in-memory queue worker that gets to an event 0.1 s after it was acknowledged (so a
#: kill right after the answer loses it whatever the machine's load).
OPTIONS = "--option effect_delay_s=0.5 --option lease_s=0.3 --option apply_delay_s=0.1"
#: Smaller than the defaults, to keep the suite short.
CHAOS = ChaosConfig(events=3, kill_trials=2, replicas=3)


def load_matrix() -> dict[str, Any]:
    """The expected chaos matrix (tests/chaos/chaos_matrix.json)."""
    return json.loads(MATRIX_FILE.read_text(encoding="utf-8"))


def chaos_config(receiver: str, db_dir: Path, *, backend: str = "process", scenarios: Sequence[str] = (),
                 image: str = RECEIVERS_IMAGE) -> Config:
    """A config that runs `examples.receivers.<receiver>` under hookproof's control."""
    port = free_port()
    host_db = db_dir / f"{receiver}.sqlite"
    observer = ObserverConfig(kind="sql", url=f"sqlite:///{host_db}", effects="SELECT business_key, amount FROM effects",
                              state="SELECT object_id, status, version FROM subscription_states")
    if backend == "process":
        command = (f"{sys.executable} -m examples.receivers.{receiver} --port {{port}} --db sqlite:///{host_db} "
                   f"--secret {SECRET} {OPTIONS}")
        control: dict[str, Any] = {"process": ProcessTargetConfig(command=command, cwd=str(REPO))}
    else:
        command = (f"python -m examples.receivers.{receiver} --port {{port}} --db sqlite:////data/{host_db.name} "
                   f"--secret {SECRET} {OPTIONS}")
        control = {"docker": DockerTargetConfig(image=image, command=command, volumes={str(db_dir): "/data"})}
    return Config(
        target=TargetConfig(url=f"http://127.0.0.1:{port}/webhooks", secret=SECRET, **control),
        observer=observer, run=RunConfig(seed=7, scenarios=None), settle=SettleConfig(window_s=0.8, deadline_s=10.0),
        chaos=CHAOS,
    )


def run_chaos(receiver: str, tmp_path: Path, scenarios: Sequence[str], *, backend: str = "process") -> CertifyResult:
    """Certify `receiver` on the chaos `scenarios` only."""
    db_dir = tmp_path / "db"
    db_dir.mkdir(parents=True, exist_ok=True)
    config = chaos_config(receiver, db_dir, backend=backend)
    return certify(config, scenarios=list(scenarios), out_dir=tmp_path / "out", chaos=True)


def outcomes(result: CertifyResult) -> dict[str, str]:
    """scenario id -> ``pass`` or ``fail:<check>[,<check>]`` (or another verdict with its reason)."""
    out = {}
    for s in result.report.scenarios:
        if s.verdict == "fail":
            failed = sorted({c.check_id for c in s.checks if c.verdict == "invalid"})
            out[s.id] = "fail:" + ",".join(failed)
        elif s.verdict == "pass":
            out[s.id] = "pass"
        else:
            out[s.id] = f"{s.verdict}: {s.reason}"
    return out
