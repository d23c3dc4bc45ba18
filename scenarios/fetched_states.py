"""What a fetching receiver was served, in its ``lost`` findings: why it applied nothing.

A receiver that decides on the object it fetches (Mercado Pago: credit when the fetched
payment is ``approved``) sees the object's status at the time it fetches, which after a late
or redelivered notification may be a later one (``charged_back``). The check sees an
acknowledged key never applied; the provider API's served log (`simulator.server.served`)
sees what the receiver was answered. `with_fetched` adds that to each acknowledged ``lost``
finding whose object was fetched (``when the receiver fetched 123, the provider API served it
as charged_back``), so report.json, summary.md and report.html all say it; `with_fetch_advice`
replaces, in a state finding of an object the receiver fetched, the provider's advice to fetch
with what it was served and the lock that keeps an earlier fetch's answer from landing last; `with_mode` words
an applied event of the other mode for the endpoint's own (``applied a live-mode event on a
test-mode endpoint``); `with_unsettled` says, in each acknowledged ``lost`` finding of a
scenario whose settle reached its deadline, which setting bounded the wait; `with_hurried`, in
each such finding and each ``stale`` one of a scenario that settled on the window alone because
an earlier one fell short, how to tell late from lost; `with_unexplained`
says, of an acknowledged ``lost`` finding nothing else explains, what a receiver does that
answers 2xx and applies nothing, naming the provider's identity of an event and the last
earlier event of the same object acknowledged before it; `with_missing_answers` quotes how the
receiver answered the attempts of a ``stale`` finding's missing object. Pure.
"""

from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Callable, Sequence

from hookproof.reports.model import AttemptView, FindingView, ScenarioReport
from hookproof.scenarios.state_words import OBJECT_MISSING

#: The start of an acknowledged ``lost`` finding's message (`key_loops.lost_finding`).
ACKED_LOST = "acknowledged "


def with_fetched(report: ScenarioReport, statuses: Callable[[str], Sequence[str]]) -> ScenarioReport:
    """`report` with each acknowledged ``lost`` finding saying what the provider API served for
    its object (`statuses`: object id → statuses served, oldest first); unchanged when none was."""
    objects = {a.index: a.object_id for a in report.attempts}

    def served(f: FindingView) -> str | None:
        ids = list(dict.fromkeys(o for i in f.attempts if (o := objects.get(i)) is not None))
        notes = [f"when the receiver fetched {o}, the provider API served it as {', then '.join(s)}"
                 for o in ids if (s := list(dict.fromkeys(statuses(o))))]
        return f"{f.message} ({'; '.join(notes)})" if f.message.startswith(ACKED_LOST) and notes else None

    return _with_lost_messages(report, served)


def with_fetch_advice(report: ScenarioReport, statuses: Callable[[str], Sequence[str]], advice: str) -> ScenarioReport:
    """`report` with the provider's ordering `advice` (`EventClock.advice`: Stripe's "fetch the
    object from the API when an event arrives"), where a state finding gives it, replaced by what
    the receiver that did fetch its object was served (`statuses`: object id → statuses served,
    oldest first) and what keeps an earlier fetch's answer from being written last: one lock per
    object over the fetch and the write (the statuses in the order the fetches were read, a repeat
    in a row said once). A finding none of whose objects was fetched is unchanged."""
    objects = {a.index: a.object_id for a in report.attempts}

    def fetched(f: FindingView) -> str | None:
        if advice not in f.message:
            return None
        ids = list(dict.fromkeys(o for i in f.attempts if (o := objects.get(i)) is not None))
        served = [(o, [x for n, x in enumerate(s) if n == 0 or s[n - 1] != x]) for o in ids if (s := statuses(o))]
        if not served:
            return None
        said = "; ".join(f"{o}, served as {', then '.join(s)}" for o, s in served)
        return f.message.replace(advice, (
            f"the receiver did fetch it from the provider API ({said}), and an earlier fetch's answer was written "
            "last: fetch and write under one lock per object (a row lock, select_for_update, or an advisory lock), so "
            "the answer of the latest fetch is the one kept"))

    return _with_lost_messages(report, fetched, frozenset({"stale", "regressed"}))


def _with_lost_messages(report: ScenarioReport, rewrite: Callable[[FindingView], str | None],
                        check_ids: AbstractSet[str] = frozenset({"lost"})) -> ScenarioReport:
    """`report` with each ``lost`` finding's message (each of the `check_ids` checks') as
    `rewrite` gives it (None: unchanged); `report` itself when none changed."""
    changed = False
    checks = []
    for check in report.checks:
        if check.check_id not in check_ids:
            checks.append(check)
            continue
        findings = []
        for f in check.findings:
            message = rewrite(f)
            if message is not None:
                f = replace(f, message=message)
                changed = True
            findings.append(f)
        checks.append(replace(check, findings=tuple(findings)))
    return replace(report, checks=tuple(checks)) if changed else report


def with_mode(report: ScenarioReport, message: str) -> ScenarioReport:
    """`report` with each ``unexpected`` finding about an event of the other mode
    (`key_loops.UNEXPECTED_OTHER_MODE`) worded for the endpoint's own mode (`message`:
    `key_loops.other_mode_message`)."""
    from hookproof.scenarios.key_loops import UNEXPECTED_OTHER_MODE

    if not any(f.message.startswith(UNEXPECTED_OTHER_MODE) for c in report.checks for f in c.findings):
        return report
    checks = tuple(replace(c, findings=tuple(
        replace(f, message=message + f.message[len(UNEXPECTED_OTHER_MODE):])
        if f.message.startswith(UNEXPECTED_OTHER_MODE) else f for f in c.findings)) for c in report.checks)
    return replace(report, checks=checks)


def with_unsettled(report: ScenarioReport, deadline_s: float) -> ScenarioReport:
    """`report` with each acknowledged ``lost`` finding saying that settling reached its
    deadline (`deadline_s`, seconds: ``[settle] deadline_s``) before the receiver's reads
    showed the effect, when the scenario did not settle; unchanged otherwise. A receiver
    that applies after it answers (a worker, a queue) lagging more than that is judged on
    what it showed by then."""
    if report.settled:
        return report
    note = (f"; settling reached its deadline ([settle] deadline_s = {deadline_s:g} s) before the receiver's "
            "reads showed it: a receiver that applies after it answers (a worker, a queue) needs a deadline "
            "above its lag")
    return _with_lost_messages(report, lambda f: f.message + note if f.message.startswith(ACKED_LOST) else None)


def with_hurried(report: ScenarioReport, window_s: float, short_in: str, command: str) -> ScenarioReport:
    """`report` with each acknowledged ``lost`` finding and each ``stale`` one of an object
    missing saying that the scenario settled on the window alone (`window_s`, seconds: ``[settle] window_s``), short of
    what the receiver owes, because another scenario of the run (`short_in`) fell short of it
    before this one settled (`runner.Runner._settle`; scenarios side by side: it may be listed
    after this one), and how to tell a late effect from a lost one: certify the scenario alone (`command`), which waits for it,
    with a fresh database (a run of the same seed on the one this run kept finds its keys there:
    `scenarios.leftovers`); unchanged when there is none. Not a ``stale``
    finding of an object the receiver holds in an older state: a receiver keeping states in
    arrival order fails so in every scenario after the first it fell short in, and the note told
    each of its findings of a lag it does not have."""
    note = (f"; this scenario settled on the window alone ([settle] window_s = {window_s:g} s), not "
            f"waiting for what the receiver owes, because another scenario of this run ({short_in}), which "
            "settled before this one, fell short of it: an effect or a state a receiver applies later than "
            f"that after it answers (a worker, a queue) reads as missing here; certify this scenario alone ({command}) "
            "with a fresh database, not the one this run kept, which already holds its business keys, to tell late "
            "from lost")

    def hurried(f: FindingView) -> str | None:
        late = f.message.startswith(ACKED_LOST) or (f.check_id == "stale" and f.message.startswith(OBJECT_MISSING))
        return f.message + note if late else None

    return _with_lost_messages(report, hurried, frozenset({"lost", "stale"}))


#: At most this many of a missing object's attempts are quoted (`with_missing_answers`).
MISSING_QUOTED = 4


def with_missing_answers(report: ScenarioReport, answers: Callable[[int], str]) -> ScenarioReport:
    """`report` with each ``stale`` finding of an object missing saying how the receiver answered
    the attempts it names (`answers`: attempt index → the start of its answer body): ``; its
    attempts: 500 "internal error" (#188), 200 "{"duplicate":true}" (#189)`` (at most
    `MISSING_QUOTED`); and, when an attempt of an event failed (a 5xx, a timeout) and a later one of
    the same event was acknowledged, that a receiver recording an event as handled before its work
    commits answers the provider's retry as a duplicate and never does the work (dj-stripe #832).
    Unchanged when the finding names no attempt."""
    from hookproof.scenarios.answer_quote import answer_quote

    by_index = {a.index: a for a in report.attempts}

    def words(f: FindingView) -> str | None:
        if not f.message.startswith(OBJECT_MISSING):
            return None
        own = sorted((by_index[i] for i in f.attempts if i in by_index), key=lambda a: (a.sent_at, a.index))
        if not own:
            return None
        said = []
        for a in own[:MISSING_QUOTED]:
            quote = answer_quote(answers(a.index)) if a.status is not None else ""
            answered = (f'{a.status} "{quote}"' if quote else str(a.status)) if a.status is not None \
                else a.outcome.replace("_", " ")
            said.append(f"{answered} (#{a.index})")
        more = f" and {len(own) - MISSING_QUOTED} more" if len(own) > MISSING_QUOTED else ""
        text = f"{f.message}; its attempts: {', '.join(said)}{more}"
        failed = {a.event_id for a in own if a.outcome in ("server_error", "timeout", "connection_error")}
        if any(a.outcome == "acked" and a.event_id in failed
               and any(b.event_id == a.event_id and b.sent_at < a.sent_at and b.outcome != "acked" for b in own)
               for a in own):
            text += (": the retry of a failed attempt was acknowledged and nothing was stored, as a receiver that "
                     "records an event as handled before its work commits does: the retry finds it handled")
        return text

    return _with_lost_messages(report, words, frozenset({"stale"}))


#: The chaos operations (`chaos.nemesis.Nemesis`, a history's fault ops) after which the receiver's start
#: command runs again: a killed receiver is started, a restarted one too, a new replica starts.
RESTARTING_OPS = frozenset({"kill", "restart", "scale"})

#: How an acknowledged ``lost`` finding's message ends when nothing was added to it (`key_loops.lost_finding`).
ACKED_LOST_END = "but not applied by the end of settling"


def with_unexplained(report: ScenarioReport, event_id_name: str, *, restarted: bool = False,
                     answers: Callable[[int], str] | None = None,
                     shared_id: Callable[[str], tuple[str, str] | None] | None = None,
                     unowed: AbstractSet[str] = frozenset()) -> ScenarioReport:
    """`report` with each acknowledged ``lost`` finding that nothing else explained (its message
    still ends as `key_loops.lost_finding` made it: no fetched status; the runner adds a settle's
    deadline or hurried window after these words, `with_unsettled`, `with_hurried`) saying
    that the receiver answered 2xx and applied nothing, and what does that: taking the event for
    one already handled (deduplicating on something other than `event_id_name`, the provider's
    identity of an event: ``X-GitHub-Delivery``), skipping it, or answering before the work
    commits; when an earlier event of the same object (another event id) was acknowledged before
    the finding's first attempt was sent, the last such one is named (``after evt_1
    (customer.subscription.created), an earlier event of the same object, was acknowledged``). When
    the scenario `restarted` the receiver (a chaos kill, restart or new replica: its start command
    ran again), a restart that loses committed rows (a start command resetting the database) is
    named first, beside answering before the work commits. `answers` (attempt index → the start
    of its answer body, `Attempt.response_excerpt`) quotes what the first acknowledged attempt
    answered (``the receiver answered 200 "duplicate" and applied nothing``). `shared_id` (the
    profile's `Profile.shared_id`) reads the id an event's identity shares with other events
    (Shopify's ``X-Shopify-Event-Id``, one per merchant action): when another event sharing it was
    acknowledged first, it is named, in the provider's words, before the earlier event of the
    same object. `unowed`: the keys the receiver applied that no event of the scenario owed; one
    naming the lost key's object (its last ``:`` part: ``sale:platform:pi_1`` for
    ``sale:acct_1:pi_1``) is named first: the effect was applied under a key made otherwise."""
    by_index = {a.index: a for a in report.attempts}
    return _with_lost_messages(report, lambda f: f.message + (_elsewhere(f.key, unowed) or _unexplained_words(
        f.attempts, by_index, report, event_id_name, restarted, answers, shared_id))
        if f.message.startswith(ACKED_LOST) and f.message.endswith(ACKED_LOST_END) else None)


def _elsewhere(key: str | None, unowed: AbstractSet[str]) -> str:
    """``; the receiver applied sale:platform:pi_1 instead, a key no event owed that names the
    same pi_1`` when one of the `unowed` keys ends in `key`'s last ``:`` part (an id), else ""."""
    if not key or not unowed or ":" not in key:
        return ""
    tail = key.rsplit(":", 1)[1]
    if not tail:
        return ""
    near = sorted(k for k in unowed if k != key and (k == tail or k.endswith(":" + tail)))
    if not near:
        return ""
    more = f" (and {len(near) - 1} more)" if len(near) > 1 else ""
    return (f"; the receiver applied {near[0]}{more} instead, a key no event owed that names the same {tail}: "
            "its key is made from other fields than the config's template says")


def _unexplained_words(attempts: Sequence[int], by_index: dict[int, AttemptView], report: ScenarioReport,
                       event_id_name: str, restarted: bool, answers: Callable[[int], str] | None,
                       shared_id: Callable[[str], tuple[str, str] | None] | None = None) -> str:
    """The words `with_unexplained` adds to one finding whose attempts are `attempts` (indices)."""
    from hookproof.scenarios.answer_quote import answer_quote

    own = [by_index[i] for i in attempts if i in by_index]
    answered = "2xx"
    acked = [a for a in own if a.outcome == "acked" and a.status is not None]
    if acked and answers is not None and (quote := answer_quote(answers(acked[0].index))):
        answered = f'{acked[0].status} "{quote}"'
    earlier = words = ""
    if own:
        first_sent = min(a.sent_at for a in own)
        objects = {a.object_id for a in own if a.object_id is not None}
        events = {a.event_id for a in own}
        before = [a for a in report.attempts if a.object_id in objects and a.event_id not in events
                  and a.outcome == "acked" and a.answered_at <= first_sent]
        shared = [s for a in own if shared_id is not None and (s := shared_id(a.event_id)) is not None][:1]
        sharing = [a for a in report.attempts if shared and a.event_id not in events and a.outcome == "acked"
                   and a.answered_at <= first_sent and shared_id is not None
                   and (s := shared_id(a.event_id)) is not None and s[0] == shared[0][0]]
        if sharing:
            last = max(sharing, key=lambda a: a.answered_at)
            earlier = f", after {last.event_id} ({last.event_type}), another event sharing its id, was acknowledged"
            words = f"; {shared[0][1]}"
        elif before:
            last = max(before, key=lambda a: a.answered_at)
            earlier = (f", after {last.event_id} ({last.event_type}), an earlier event of the same object, "
                       "was acknowledged")
    if restarted:
        return (f"; the receiver answered {answered} and nothing was applied by the end{earlier}: this scenario restarted "
                "the receiver, which loses what a receiver answering before its work commits had not committed, and "
                "every committed row when its start command resets its database (each restart runs it again) or "
                "its storage is not kept; a receiver taking the event for one it already handled (deduplicating on "
                f"something other than {event_id_name}) or skipping it applies nothing too; and a queue whose "
                "killed worker's job comes back only once its lock expires applies it after settling ended "
                f"(raise [settle] stall_s above that delay){words}")
    return (f"; the receiver answered {answered} and applied nothing{earlier}: a receiver does that when it takes the "
            f"event for one it already handled (deduplicating on something other than {event_id_name}), skips "
            f"it, or answers before its work commits{words}")


__all__ = ["ACKED_LOST", "ACKED_LOST_END", "RESTARTING_OPS", "with_fetched", "with_hurried", "with_missing_answers",
           "with_mode", "with_unexplained",
           "with_unsettled"]
