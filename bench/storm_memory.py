"""Storm memory: resident set size of the Locust master and workers, for storms of growing size.

For each size N (attempts), a distributed storm as ``hookproof storm --workers 2`` runs
it (a Locust master and two workers, ``loadtests/locustfile.py``) against the null
receiver (bench/null_receiver.py) on loopback, without duplicates, waves, related bursts,
older redeliveries or late events (one attempt per send: the load shape offers sends, and a
related burst is two or three events; the null receiver acks all), at an offered rate the
machine sustains, for as long as N attempts take at that rate (so a storm of N sends about
N attempts, fewer only when the machine falls behind). Every 0.25 s the script reads each process's RSS
from ``/proc/<pid>/status`` (VmRSS) and prints, per size: the attempts actually sent,
each process's peak RSS while the storm sends (workers stream their records every
second; the master appends them to ``history.sqlite``), the workers' RSS at each 100k
attempts sent (each fifth of a storm under 200k) with its growth per 100k (a storm the
loaded machine could not send in full still shows its slope), and the master's peak over the
whole run, which includes the checks: they read the history from disk as columns in one
pass (`scenarios.check_index.expectations_and_index`, `HistoryFile.column_chunks`),
keeping numpy columns per attempt and per event, key and object code (the events' fields,
`scenarios.world_columns`, and the expectations, `scenarios.expectation_views`, as
columns; the acked latencies read again from disk for ``ack_latency`` alone); the storm's
events are read again from disk on each pass over them
(`loadtests.verdict.SpooledEvents`), the observation stays in memory (its effect rows as
columns, `scenarios.observations.effect_rows`, as the observers read a storm's).

The observer (`every_effect_once`) reports what a correct receiver shows: every event's
effect once, so the storm passes and the figure is the checks' own. With
``--nothing-applied`` it reports nothing (the null receiver applies nothing): every key is
then a ``lost`` finding, and the master's peak is that of rendering one finding per key
into the reports.

Run: ``python bench/storm_memory.py [--keep DIR] [--rate R] [--nothing-applied] [N ...]``
(default sizes 10000 100000; 1000000 takes N / R seconds, about 8 min at 2000/s; ``--keep``
keeps each storm's spec and files in DIR). ``python bench/storm_memory.py --replay DIR [K]``
runs the master's end alone (`loadtests.verdict.finish_spooled`: settle, checks, reports)
on K copies (default 10) of the storm kept in DIR, each copy's ids renamed, in a child
process (with ``--nothing-applied``, under the observer that reports nothing; with
``--reports OUT``, its report files copied to OUT, to compare two replays' reports byte
for byte), and prints its RSS before the end, its peak (VmHWM) and its peak in each phase
of the end (VmHWM read at the phase's end and reset at its start through
``/proc/self/clear_refs``; sampled every 20 ms by a thread where that is not allowed): the
master of a 1M storm from a 100k one. With ``--rerender`` it then runs
``hookproof report --history`` over the replayed history (re-rendering every report from
it, as a team does after the run) in another child and prints that process's peak RSS
(its own VmHWM, read as it ends) and its seconds. Linux only (``/proc``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_args import parser, positive_float, positive_int
from null_receiver import start as start_null_receiver

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECRET = "whsec_bench_storm_memory_0123456789"
#: The environment variable naming the storm's history file, for `every_effect_once`.
HISTORY_ENV = "HOOKPROOF_BENCH_HISTORY"
_APPLIED: list[object] = []  # every_effect_once's observation, read once
#: Seconds between two RSS samples.
SAMPLE_S = 0.25


def rss_mb(pid: int) -> float | None:
    """The resident set size of `pid` in MB (VmRSS), or None once it has exited."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        return None
    return None


@dataclass
class Peaks:
    """Peak RSS (MB) per process name, while sending and over the whole run, and the
    workers' RSS as the storm went: (requests the master counted so far, MB per worker
    name) per sample while it sends."""

    sending: dict[str, float] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    curve: list[tuple[int, dict[str, float]]] = field(default_factory=list)


def _step(attempts: int) -> int:
    """Attempts between two points of the RSS curve: 100k from storms of 200k on, else a fifth."""
    return 100_000 if attempts >= 200_000 else max(1, attempts // 5)


def slope(curve: list[tuple[int, dict[str, float]]], step: int) -> tuple[list[tuple[int, dict[str, float]]], dict[str, float]]:
    """The workers' RSS at each multiple of `step` requests sent (the first sample at or past
    it) and each worker's growth in MB per `step` from the first point to the last (0 with
    fewer than two points): a flat memory is a slope near 0, whatever the storm's size."""
    points: list[tuple[int, dict[str, float]]] = []
    mark = step
    for sent, mbs in curve:
        while sent >= mark:
            if not points or points[-1][0] != mark:
                points.append((mark, mbs))
            mark += step
    growth: dict[str, float] = {}
    if len(points) >= 2:
        (first, a), (last, b) = points[0], points[-1]
        growth = {name: (b[name] - a[name]) / ((last - first) / step) for name in b if name in a}
    return points, growth


def every_effect_once() -> object:
    """The bench's observer, run in the master: a receiver that applied each event it was
    sent once. Its effects are the business keys of the storm's events, read once from
    the history file the master spools them to (the ``storm_events`` table)."""
    import sqlite3
    import time

    from hookproof.scenarios.observations import Observation, effect_rows

    if not _APPLIED:
        with sqlite3.connect(os.environ[HISTORY_ENV]) as db:
            keys = dict.fromkeys(json.loads(wire).get("business_key") for (wire,) in
                                 db.execute("SELECT wire FROM storm_events"))
        keys.pop(None, None)
        # the rows as an observer reads them (`effect_rows`: columns for a storm's)
        _APPLIED.append(effect_rows([key for key in keys if key is not None]))
    # it reads no state (the null receiver keeps none): the state checks do not apply
    return Observation(time.time(), _APPLIED[0], state_kinds=frozenset())  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _progress(progress: Path) -> tuple[str, int]:
    """(phase, requests counted so far) of the master's progress file (("", 0) before one)."""
    try:
        data = json.loads(progress.read_text())
        return str(data.get("phase", "")), int(data.get("requests") or 0)
    except (OSError, ValueError, TypeError):
        return "", 0


def storm(url: str, attempts: int, rate: float, tmp: Path, applied: bool = True) -> tuple[int, float, Peaks, str]:
    """Run one storm of about `attempts` attempts; (attempts sent, seconds, peaks, verdict)."""
    from hookproof.commands.storm import master_command, worker_command
    from hookproof.loadtests.spec import SECRETS_ENV, SPEC_ENV, StormSpec, secrets_to_env

    users = 20
    duration = max(2.0, attempts / rate)
    out = tmp / f"storm-{attempts}"
    progress = tmp / f"progress-{attempts}.json"
    # one attempt per send: the load shape offers sends (groups), and a related burst (2 or 3 events), an older
    # redelivery (one more) would make N / rate seconds send more than N attempts (1.59M for a "1M" storm)
    spec = StormSpec(target_url=url, users=users, rate_per_s=rate, duration_s=duration, duplicates=0.0, waves=0,
                     related=0.0, older_redelivery=0.0, late=0.0,
                     observer={"kind": "python", "callable": "storm_memory:every_effect_once" if applied
                               else "storm_throughput:no_effects"}, out_dir=str(out),
                     settle_window_s=0.1, settle_deadline_s=5.0, progress_path=str(progress), seed=7)
    spec_path = tmp / f"spec-{attempts}.json"
    spec_path.write_text(spec.to_json(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")]), "PYTHONUNBUFFERED": "1"}
    master_env = {**env, SPEC_ENV: str(spec_path), SECRETS_ENV: secrets_to_env([SECRET]),
                  HISTORY_ENV: str(out / "history.sqlite")}
    port = _free_port()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    peaks = Peaks()
    started = time.monotonic()
    with open(tmp / f"locust-{attempts}.log", "wb") as log:
        try:
            procs["master"] = subprocess.Popen(
                master_command(spec, workers=2, spawn_rate=users, bind_host="127.0.0.1", port=port),
                env=master_env, stdout=log, stderr=subprocess.STDOUT)
            for i in (1, 2):
                procs[f"worker {i}"] = subprocess.Popen(worker_command("127.0.0.1", port), env=env, stdout=log,
                                                        stderr=subprocess.STDOUT)
            deadline = started + duration + 600
            while procs["master"].poll() is None and time.monotonic() < deadline:
                phase, requests = _progress(progress)
                sending = phase in ("storm", "stopping", "collecting", "checking workers")
                workers: dict[str, float] = {}
                for name, proc in procs.items():
                    mb = rss_mb(proc.pid)
                    if mb is None:
                        continue
                    peaks.overall[name] = max(peaks.overall.get(name, 0.0), mb)
                    if sending:
                        peaks.sending[name] = max(peaks.sending.get(name, 0.0), mb)
                        if name != "master":
                            workers[name] = mb
                if phase == "storm" and workers:
                    peaks.curve.append((requests, workers))
                time.sleep(SAMPLE_S)
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait(5)
    seconds = time.monotonic() - started
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # the master did not finish in time: keep the peaks measured
        return 0, seconds, peaks, f"no report (the master did not finish within {seconds:.0f} s)"
    stats = next(c for c in report["scenarios"][0]["checks"] if c["check_id"] == "ack_latency")["stats"]
    return int(stats["sent"]), seconds, peaks, str(report["verdict"])


#: Ids the replay renames per copy: a prefix, then at least six letters or digits with a digit.
_ID = re.compile(r"(?<![A-Za-z0-9])([a-z]{2,6}_)(?=[A-Za-z]*[0-9])([A-Za-z0-9]{6,})(?![A-Za-z0-9])")


def replicate(kept: Path, times: int, out: Path) -> Path:
    """A history of `times` copies of the kept storm's (`kept`, a storm's history.sqlite),
    each copy's ids renamed (``<prefix>_<id>`` gets ``z<copy>`` appended; the first copy
    keeps its own), spooled into `out` as the master spools a storm's records; returns
    the spool's path (not finalized)."""
    import sqlite3

    from hookproof.loadtests.records import COLUMNS
    from hookproof.loadtests.spool import Spool

    spool = Spool(out)
    texts = [i for i, name in enumerate(COLUMNS) if name in ("event_id", "delivery_id", "business_key", "object_id")]
    with sqlite3.connect(kept) as db:
        wires = [wire for (wire,) in db.execute("SELECT wire FROM storm_events")]
        rows = [list(row) for row in db.execute(f"SELECT {', '.join(COLUMNS)} FROM attempts ORDER BY idx")]
    for copy in range(times):
        def rename(text: str, suffix: str = f"z{copy}" if copy else "") -> str:
            return _ID.sub(lambda m: m.group(0) + suffix, text) if suffix else text

        events = [json.loads(rename(w)) for w in wires]
        copied = []
        for row in rows:
            row = list(row)
            for i in texts:
                if isinstance(row[i], str):
                    row[i] = rename(row[i])
            row[COLUMNS.index("faults")] = json.loads(row[COLUMNS.index("faults")])
            copied.append(row)
        problems = spool.add((), events, rows=copied)
        if problems:
            raise SystemExit(f"replay: {problems[0]}")
    spool._db.commit()
    spool.close()
    return out


def replay(kept_dir: Path, times: int, applied: bool = True, reports: Path | None = None,
           rerender: bool = False) -> None:
    """The master's end (`loadtests.verdict.finish_spooled`) of `times` copies of a kept
    storm (`--keep`'s folder: its ``spec-N.json`` and ``storm-N/history.sqlite``), in a
    child process; prints the child's RSS before the end and its peak (VmHWM), MB. With
    `applied` False the observer reports nothing applied (``storm_throughput:no_effects``);
    with `reports`, the end's report files are copied there (to compare two replays); with
    `rerender`, the peak RSS and seconds of ``hookproof report`` re-rendering the replayed
    history are printed too (`rerender_peak`)."""
    spec_path = next(kept_dir.glob("spec-*.json"))
    kept = kept_dir / f"storm-{spec_path.stem.split('-')[1]}" / "history.sqlite"
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "replay" / "history.sqlite"
        started = time.monotonic()
        replicate(kept, times, out)
        built_s = time.monotonic() - started
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")]), HISTORY_ENV: str(out)}
        load = os.getloadavg()[0]
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--replay-child", str(spec_path),
                               str(out), "applied" if applied else "nothing-applied"],
                              env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode:
            raise SystemExit(done.stdout + done.stderr)
        if reports is not None:
            import shutil

            reports.mkdir(parents=True, exist_ok=True)
            for made in out.parent.iterdir():
                if made.is_file() and not made.name.startswith("history.sqlite"):
                    shutil.copy2(made, reports / made.name)
        print(f"replay of {kept_dir.name} x{times} (built in {built_s:.0f} s): {done.stdout.strip()}, "
              f"{time.monotonic() - started:.0f} s; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        if rerender:
            load = os.getloadavg()[0]
            mb, seconds = rerender_peak(out, Path(d) / "rerendered")
            print(f"hookproof report --history over it: peak {mb:.0f} MB (its VmHWM), {seconds:.0f} s; "
                  f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")


#: The re-render's child: ``hookproof report`` run in-process (`hookproof.cli.main`), then this
#: process's own peak (VmHWM of /proc/self/status, kB) as the last line of its stderr.
_RERENDER = """
import sys
from hookproof.cli import main
try:
    main(sys.argv[1:])
finally:
    hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print("vmhwm_kb", hwm.split()[1], file=sys.stderr, flush=True)
"""


def rerender_peak(history: Path, out: Path) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of ``hookproof report --history history --out out`` in a
    child process: the child's own VmHWM, read by itself as it ends (`_RERENDER`). Not
    ``ru_maxrss``: a child that subprocess starts with vfork takes over, at its exec, the
    peak of this process (which built the replayed history in memory) as its own. Raises
    SystemExit with its output when it fails."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _RERENDER, "report", "--history", str(history), "--out", str(out)],
                          capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    if done.returncode or not lines or not lines[-1].startswith("vmhwm_kb "):
        raise SystemExit(f"hookproof report failed ({done.returncode}): {done.stdout}{done.stderr}")
    return int(lines[-1].split()[1]) / 1024.0, time.monotonic() - started


def _replay_child(spec_path: Path, history: Path, applied: bool = True) -> None:
    """The replay's child: `finish_spooled` over `history`, then its RSS figures (with
    `applied` False, under the observer that reports nothing applied)."""
    import sqlite3

    from hookproof.loadtests.spec import StormSpec
    from hookproof.loadtests.spool import Spool
    from hookproof.loadtests.verdict import finish_spooled

    spec = StormSpec.from_json(spec_path.read_text(encoding="utf-8"))
    spec = spec.model_copy(update={"out_dir": str(history.parent), "progress_path": None})
    if not applied:
        spec = spec.model_copy(update={"observer": {"kind": "python", "callable": "storm_throughput:no_effects"}})
    with sqlite3.connect(history) as db:
        first, last = db.execute("SELECT min(sent_at), max(sent_at) FROM storm_incoming").fetchone()
        n = db.execute("SELECT count(*) FROM storm_incoming").fetchone()[0]
    spool = Spool.__new__(Spool)  # the spool as the storm left it (not re-created: that empties the file)
    spool.path, spool.attempts, spool._finalized, spool._faults_json = history, n, False, {}
    spool._db = sqlite3.connect(str(history), check_same_thread=False)
    base = rss_mb(os.getpid())
    by_phase = PhasePeaks()
    outcome = finish_spooled(spec, spool, started_at=first, stopped_at=last, on_phase=by_phase.enter)
    by_phase.stop()
    hwm = by_phase.peak() if not by_phase.sampled else (_status_mb("VmHWM") or 0.0)
    how = "VmHWM reset per phase" if not by_phase.sampled else "sampled every 20 ms"
    print(f"{n:,} attempts, master RSS {base:.0f} MB before its end, peak {hwm:.0f} MB "
          f"(by phase, {how}: {by_phase.summary()}), verdict {outcome.report.verdict}")


class PhasePeaks:
    """This process's peak RSS (MB) in each phase `finish_spooled` reports (`enter`).

    Where the kernel lets a process reset its peak (writing ``5`` to
    ``/proc/self/clear_refs`` sets VmHWM back to the current RSS, Linux 4.0 on), each
    phase's peak is VmHWM read when the next phase starts, then reset: exact, and no
    thread of the bench's own in the measured process (a sampler's allocations and its
    malloc arena made the peak some 9 MB taller). Elsewhere, a daemon thread samples
    VmRSS every 20 ms until `stop` (`sampled` is then True)."""

    def __init__(self) -> None:
        import threading

        self.phase = "start"
        self.peaks: dict[str, float] = {}
        self.sampled = not _reset_peak()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.sampled:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()

    def enter(self, phase: str) -> None:
        """Record from now on under `phase`."""
        self._take()
        self.phase = phase
        if not self.sampled:
            _reset_peak()

    def _take(self) -> None:
        mb = (rss_mb(os.getpid()) if self.sampled else _status_mb("VmHWM")) or 0.0
        self.peaks[self.phase] = max(self.peaks.get(self.phase, 0.0), mb)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self._take()

    def stop(self) -> None:
        """End the last phase (and stop sampling, after one last sample)."""
        self._take()
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def peak(self) -> float:
        """The highest of the phases' peaks, MB."""
        return max(self.peaks.values(), default=0.0)

    def summary(self) -> str:
        """``phase MB`` pairs, in order."""
        return ", ".join(f"{phase} {mb:.0f}" for phase, mb in self.peaks.items())


def _status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` field given in kB (VmRSS, VmHWM), in MB; None when absent."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return None


def _reset_peak() -> bool:
    """Set this process's VmHWM back to its current RSS (``5`` to ``/proc/self/clear_refs``);
    False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def main(argv: list[str]) -> None:
    if argv[:1] == ["--replay-child"]:  # the replay's own child process (see `replay`)
        return _replay_child(Path(argv[1]), Path(argv[2]), argv[3:4] != ["nothing-applied"])
    cli = parser(__doc__)
    cli.add_argument("sizes", nargs="*", type=positive_int, metavar="N", help="storm sizes, attempts (default 10000 100000)")
    cli.add_argument("--rate", type=positive_float, default=2000.0, help="offered attempts/s (default 2000)")
    cli.add_argument("--nothing-applied", action="store_true", help="the observer reports nothing applied")
    cli.add_argument("--keep", type=Path, metavar="DIR", help="keep each storm's files (spec, history) in DIR")
    cli.add_argument("--replay", nargs="+", metavar=("DIR", "K"),
                     help="the master's end alone on K copies (default 10) of a storm kept with --keep in DIR")
    cli.add_argument("--reports", type=Path, metavar="DIR", help="with --replay: copy the end's reports to DIR")
    cli.add_argument("--rerender", action="store_true",
                     help="with --replay: then the peak RSS of 'hookproof report' re-rendering the replayed history")
    args = cli.parse_args(argv)
    if args.replay:
        if len(args.replay) > 2 or (len(args.replay) == 2 and not (args.replay[1].isdigit() and int(args.replay[1]) > 0)):
            cli.error("--replay takes DIR and at most one K, a whole number above 0")
        return replay(Path(args.replay[0]), int(args.replay[1]) if len(args.replay) > 1 else 10,
                      applied=not args.nothing_applied, reports=args.reports, rerender=args.rerender)
    rate, applied, keep = args.rate, not args.nothing_applied, args.keep
    sizes = args.sizes or [10_000, 100_000]
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    server, url = start_null_receiver()
    try:
        print(f"storm memory: a Locust master and 2 workers, 20 users, offered {rate:g} attempts/s, "
              f"{'every effect applied once' if applied else 'nothing applied (a lost finding per key)'}, "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'attempts':>10}{'sent':>10}{'wall s':>8}{'master MB':>11}{'worker 1 MB':>13}{'worker 2 MB':>13}"
              f"{'master MB, checks incl.':>25}  verdict")
        curves: list[tuple[int, int, Peaks]] = []
        with tempfile.TemporaryDirectory() as d:
            for n in sizes:
                sent, seconds, peaks, verdict = storm(url, n, rate, keep or Path(d), applied)
                s = peaks.sending
                print(f"{n:>10}{sent:>10}{seconds:>8.0f}{s.get('master', 0):>11.0f}{s.get('worker 1', 0):>13.0f}"
                      f"{s.get('worker 2', 0):>13.0f}{peaks.overall.get('master', 0):>25.0f}  {verdict}", flush=True)
                curves.append((n, sent, peaks))
        for n, sent, peaks in curves:  # the workers' RSS as the storm went: flat is the claim
            step = _step(n)
            points, growth = slope(peaks.curve, step)
            shown = ", ".join(f"{k / 1000:g}k: " + "/".join(f"{mbs[w]:.0f}" for w in sorted(mbs)) for k, mbs in points)
            print(f"{n}: workers' MB by attempts sent (1/2) {shown or 'fewer than one step'}; growth per "
                  f"{step / 1000:g}k sent from the first point: "
                  + (", ".join(f"{w} {g:+.1f} MB" for w, g in sorted(growth.items())) or "n/a")
                  + (f"; {sent} of {n} sent" if sent < n else ""))
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        print("MB: peak resident set size while the storm sends (and, last column, the master's peak over the "
              "whole run, the checks and the reports included); the workers' curve counts the requests the master's "
              "Locust statistics had received (a few seconds behind the workers).")
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    main(sys.argv[1:])
