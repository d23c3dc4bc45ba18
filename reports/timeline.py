"""Geometry of a business key's timeline: plain numbers the HTML template draws as SVG.

x is time (relative to the key's first attempt or effect), one row per delivery with a
bar per attempt from sent to answered, coloured by outcome, and a last row with the
moments the observer saw 1, 2, ... effects for the key. Pure: no drawing, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hookproof.reports._format import OUTCOMES
from hookproof.reports.model import AttemptView, EffectPoint

__all__ = ["Bar", "EffectMark", "Row", "Tick", "Timeline", "layout_timeline"]

WIDTH = 960  # viewBox units; the SVG scales to the page width
LABEL_W = 170  # left column with the delivery ids
PLOT_LEFT = LABEL_W + 10
PLOT_RIGHT = WIDTH - 60  # room for the last bar's label
TOP = 28  # room for the axis labels
ROW_H = 28
BAR_H = 14
MIN_BAR_W = 3.0


@dataclass(frozen=True)
class Tick:
    """A vertical grid line at `x` with its time label."""

    x: float
    label: str


@dataclass(frozen=True)
class Row:
    """One delivery's lane (or the effects lane)."""

    y: float  # top of the lane
    label: str
    title: str


@dataclass(frozen=True)
class Bar:
    """One attempt: from sent (x) to answered (x + w)."""

    x: float
    y: float
    w: float
    outcome: str  # CSS class suffix; "other" for an outcome this version does not know
    label: str
    title: str


@dataclass(frozen=True)
class EffectMark:
    """The observer saw `count` effects for the key at `x`."""

    x: float
    y: float
    count: int
    duplicate: bool
    title: str


@dataclass(frozen=True)
class Timeline:
    """Everything the template needs to draw one key's timeline."""

    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    row_h: float
    bar_h: float
    ticks: tuple[Tick, ...]
    rows: tuple[Row, ...]
    bars: tuple[Bar, ...]
    effects: tuple[EffectMark, ...]
    outcomes: tuple[str, ...]  # the outcomes present, in legend order


def layout_timeline(attempts: tuple[AttemptView, ...], effects: tuple[EffectPoint, ...]) -> Timeline | None:
    """The timeline of one key's attempts and effect points, or None when both are empty."""
    times = [t for a in attempts for t in (a.sent_at, a.answered_at)] + [e.at for e in effects]
    times = [t for t in times if math.isfinite(t)]
    if not times:
        return None
    t0, t1 = min(times), max(times)
    span = max(t1 - t0, 0.001)
    step = _nice_step(span / 6)
    span = max(math.ceil(span / step - 1e-9), 1) * step  # the axis ends on a tick

    def x(t: float) -> float:
        if not math.isfinite(t):
            t = t0
        return round(PLOT_LEFT + (t - t0) / span * (PLOT_RIGHT - PLOT_LEFT), 1)

    deliveries = list(dict.fromkeys(a.delivery_id for a in attempts))
    lane = {d: i for i, d in enumerate(deliveries)}
    event_of = {a.delivery_id: a.event_type for a in attempts}
    rows = [Row(TOP + i * ROW_H, _lane_label(d, event_of[d]), f"delivery {d} ({event_of[d]})")
            for i, d in enumerate(deliveries)]
    effects_y = TOP + len(deliveries) * ROW_H
    rows.append(Row(effects_y, "effects seen", "when the observer first saw 1, 2, ... effects for the key"))
    bars = []
    for a in attempts:
        left, right = x(a.sent_at), x(a.answered_at)
        status = str(a.status) if a.status is not None else "-"
        title = (f"attempt #{a.index}: delivery {a.delivery_id}, try {a.attempt}, event {a.event_id} "
                 f"({a.event_type}); {a.outcome} (status {status}, {a.completion}) after {a.latency_ms:.0f} ms"
                 + (f"; faults: {', '.join(a.faults)}" if a.faults else "")
                 + ("" if a.valid else "; invalid request")
                 + (f"; error: {a.error}" if a.error else ""))
        bars.append(Bar(left, TOP + lane[a.delivery_id] * ROW_H + (ROW_H - BAR_H) / 2,
                        max(right - left, MIN_BAR_W), a.outcome if a.outcome in OUTCOMES else "other",
                        f"#{a.index}", title))
    marks = tuple(
        EffectMark(x(e.at), effects_y + ROW_H / 2, e.count, e.count > 1,
                   f"{e.count} effect(s) seen for {e.business_key} at +{(e.at - t0) * 1000:.0f} ms")
        for e in effects
    )
    ticks = tuple(Tick(x(t0 + i * step), _tick_label(i * step, step)) for i in range(int(span / step + 1e-9) + 1))
    present = {a.outcome for a in attempts}
    return Timeline(
        width=WIDTH, height=int(effects_y + ROW_H + 8), plot_left=PLOT_LEFT, plot_right=PLOT_RIGHT,
        plot_top=TOP, plot_bottom=effects_y + ROW_H, row_h=ROW_H, bar_h=BAR_H, ticks=ticks, rows=tuple(rows), bars=tuple(bars),
        effects=marks, outcomes=tuple(o for o in OUTCOMES if o in present),
    )


def _nice_step(raw_s: float) -> float:
    """The smallest of 1, 2, 5 x 10^k seconds at least `raw_s`."""
    exponent = math.floor(math.log10(raw_s))
    for factor in (1, 2, 5, 10):
        step = factor * 10.0**exponent
        if step >= raw_s * (1 - 1e-9):
            return step
    return 10.0 ** (exponent + 1)  # pragma: no cover (the loop always returns)


def _lane_label(delivery_id: str, event_type: str) -> str:
    """A lane's label that tells copies apart: the event type and the copy number.

    Delivery ids end in ``_<copy>`` (``dlv_<event id>_<copy>``); others are shortened.
    """
    head, _, copy = delivery_id.rpartition("_")
    if head and copy.isdigit():
        return _short(f"{event_type} #{copy}", 22)
    return _short(delivery_id, 22)


def _tick_label(offset_s: float, step_s: float) -> str:
    if step_s < 1:
        return f"+{offset_s * 1000:.0f} ms"
    return f"+{offset_s:.0f} s" if step_s >= 1 and float(step_s).is_integer() else f"+{offset_s:.1f} s"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
