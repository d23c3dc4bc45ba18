"""``hookproof send``: one event type, with faults, to a URL (like ``stripe trigger``)."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from hookproof.errors import HookproofError
from hookproof.terminal import (
    console,
    err_console,
    fail,
    read_secret,
)

if TYPE_CHECKING:
    from hookproof.simulator.delivery.history import Attempt

#: What send sends, for the loopback guard's refusal (`hookproof.loopback`).
SENDS = "signed events with their copies and retries"


def _target_defaults(config: str | None, url: str | None, secret: list[str] | None,
                     live: bool) -> tuple[str, list[str], str | None, bool, str | None]:
    """(url, secrets, account, live, Stripe API version) of a send: the flags, else the
    ``--config``'s target (``url``, ``secret``, ``account``, ``environment``, ``api_version``).
    Raises UsageError naming the flag that is missing, or ConfigError for a config that cannot
    be read."""
    from hookproof.errors import UsageError

    if config is None:
        if url is None or not secret:
            raise UsageError(f"{'--url' if url is None else '--secret'}: missing (give it, or --config with a [target])")
        return url, [read_secret(s) for s in secret], None, live, None
    from hookproof.config import load_config

    cfg = load_config(config)
    target = cfg.target
    if url is None:
        if target.url is None:
            raise UsageError(f"--url: {config}'s target names no url; give the receiver's URL with --url")
        if "{port}" in target.url:
            raise UsageError(f"--url: {config}'s target.url names {{port}}, the port hookproof picks when it starts "
                             "the receiver; give the receiver's URL with --url")
        url = target.url
    values = [read_secret(s) for s in secret] if secret else target.secrets(cfg.base_dir)
    version = target.api_version if target.profile == "stripe" else None  # Shopify's one version is its bodies'
    return url, values, target.account, live or target.environment == "live", version


def _headline(attempts: list["Attempt"], secret: list[str] | None, config: str | None, profile: str,
              profile_given: bool = False) -> str | None:
    """certify's headline (`hookproof.headline`) for send's `attempts`: every valid one refused
    with 401/403, or with 400 (its first answer quoted); where the secret came from
    (`--secret`, else the config's ``target.secret``), never its value, and where the profile
    was chosen (`--profile` when `profile_given` or without a config, else ``target.profile``)."""
    from hookproof.headline import first_answer, secret_sources, status_headline

    statuses: dict[int, int] = {}
    for a in attempts:
        if a.valid and a.status is not None:
            statuses[a.status] = statuses.get(a.status, 0) + 1
    if secret:
        setting, sources = "--secret", secret_sources(secret, literal="given on the command line")
    else:
        from hookproof.config import load_config

        setting, sources = "target.secret", secret_sources(load_config(config, secrets=False).target.secret) \
            if config is not None else "none given"
    profile_setting = "--profile" if profile_given or config is None else "target.profile"
    return status_headline(statuses, sources, profile, quote=first_answer(attempts), setting=setting,
                           profile_setting=profile_setting)


def _api_version(value: str, profile: str) -> str:
    """``--api-version``'s `value` for a send under `profile`; raises UsageError naming the flag:
    only the stripe profile's events have versions, written ``YYYY-MM-DD[.name]``."""
    from hookproof.config_model import stripe_api_version
    from hookproof.errors import UsageError

    if profile != "stripe":
        raise UsageError(f"--api-version: only the stripe profile's events have API versions, not {profile}'s")
    try:
        return stripe_api_version(value)
    except ValueError as exc:
        raise UsageError(f"--api-version: {exc}") from None


def _with_secret_encoding(prof: Any, encoding: str) -> Any:
    """`prof` signing with the secret `encoding` (``--secret-encoding``: ``base64`` or ``raw``),
    standard-webhooks and svix alone. Raises UsageError naming the flag."""
    import copy

    from hookproof.errors import UsageError
    from hookproof.simulator.errors import ProfileError
    from hookproof.simulator.profiles.standard_webhooks import StandardWebhooksProfile, load_standard_settings

    if not isinstance(prof, StandardWebhooksProfile):
        raise UsageError(f"--secret-encoding: only standard-webhooks and svix take it; the {prof.name} profile "
                         "keys its HMAC as its provider does")
    try:
        settings = load_standard_settings({"secret_encoding": encoding}, prof.name)
    except ProfileError:
        raise UsageError(f"--secret-encoding: base64 (whsec_ and base64, the spec's) or raw (the secret's own "
                         f"bytes, as Polar keys), not {encoding!r}") from None
    chosen = copy.copy(prof)  # a config's profile may be shared: this send's alone signs so
    chosen.settings = settings
    return chosen


def register(app: typer.Typer) -> None:
    """Add ``hookproof send`` to `app`."""

    @app.command()
    def send(
        url: Annotated[Optional[str], typer.Option("--url", help="The receiver's webhook URL (default: the --config's target.url).", show_default=False)] = None,
        secret: Annotated[Optional[list[str]], typer.Option("--secret", help="Signing secret: literal, env:NAME or file:PATH. Repeat for rotation (default: the --config's target.secret).", show_default=False)] = None,
        profile: Annotated[Optional[str], typer.Option("--profile", help="Provider profile (default: the --config's target.profile, else stripe).", show_default=False)] = None,
        secret_encoding: Annotated[Optional[str], typer.Option("--secret-encoding", help="standard-webhooks and svix: how the secret becomes the HMAC key: base64 (whsec_ and base64, decoded: the spec's) or raw (the secret's own bytes as given: Polar). Default: the --config's target.signing.secret_encoding, else base64.", show_default=False)] = None,
        event: Annotated[Optional[str], typer.Option("--event", help="Event type: the provider's own name (see 'hookproof events --profile P') or the world type it is made from. Default: the profile's default event.")] = None,
        checkout_mode: Annotated[Optional[str], typer.Option("--checkout-mode", help="With a checkout.session.* --event (stripe, and the profiles sending its billing world): the mode of the Checkout Session it comes from, payment (the default) or subscription (a plan bought through Checkout: the session completes naming its subscription and first invoice, as Stripe's subscriptions guide provisions on it).", show_default=False)] = None,
        copies: Annotated[int, typer.Option("--copies", min=1, max=1000, help="Deliveries of each event.")] = 1,
        concurrent: Annotated[bool, typer.Option("--concurrent", help="Release the copies together.")] = False,
        reverse: Annotated[bool, typer.Option("--reverse", help="Deliver the events in reverse order.")] = False,
        objects: Annotated[int, typer.Option("--objects", min=1, max=1000, help="How many objects emit the event: one event each (the latest of that type about it).")] = 1,
        drop_response: Annotated[bool, typer.Option("--drop-response", help="Discard the first answer of each delivery and retry.")] = False,
        sender_timeout: Annotated[Optional[float], typer.Option("--sender-timeout", min=0.001, max=600, help="Seconds to wait for an answer, at most 600 (default: the profile's).")] = None,
        seed: Annotated[Optional[int], typer.Option("--seed", help="World seed (ids, amounts): each event type gets its own world of it.")] = None,
        live: Annotated[bool, typer.Option("--live", help="Send live-mode events (only to a live receiver).")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the attempts as JSON.")] = False,
        config: Annotated[Optional[str], typer.Option("--config", help="A hookproof.toml whose profile is sent as certify sends it: its catalog table (your own event types: generic-hmac, standard-webhooks, svix), or the event names it lists (standard-webhooks, svix); its target's url, secret, account, environment and api_version are the defaults.")] = None,
        api_version: Annotated[Optional[str], typer.Option("--api-version", help="stripe: the API version the endpoint is pinned to (2024-06-20, 2025-03-31.basil): the events take that version's shapes, as certify's target.api_version (default: the --config's, else the latest hookproof models).", show_default=False)] = None,
        serve_api: Annotated[Optional[int], typer.Option("--serve-api", min=0, max=65535, metavar="PORT", help="Serve the sent objects on the provider API at 127.0.0.1:PORT (0: a free port), for a receiver that fetches them (Mercado Pago's thin notifications, a Stripe receiver that retrieves, GitHub REST), from before the first attempt until 2 s after the last.", show_default=False)] = None,
        api_key: Annotated[Optional[str], typer.Option("--api-key", help="The key (access token) the served provider API accepts: literal, env:NAME or file:PATH (default: the simulator's, as certify's provider.api_key).", show_default=False)] = None,
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop sending after this long (90s, 15m, 1h; default 15m, certify's default), print the attempts made and exit 1.", show_default=False)] = None,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on this machine (loopback).")] = False,
    ) -> None:
        """Deliver signed events to a receiver, with faults, and print every attempt.

        The profile's retry schedule is compressed: a run takes about (1 + retries) × the
        sender timeout per copy against a receiver that never answers. A target off this
        machine is refused unless --allow-remote, before anything is sent. --max-duration
        bounds the whole run: then no attempt starts, the attempts made are printed with one
        line saying why, and the exit code is 1 (as certify's at its deadline).
        """
        from hookproof.catalog_file import profile_for
        from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
        from hookproof.loopback import check_loopback_url
        from hookproof.send import SendInterrupted, SendOptions, attempt_line, first_line
        from hookproof.send import send as do_send
        from hookproof.simulator.delivery import History
        from hookproof.simulator.errors import SimulatorError
        from hookproof.simulator.profiles import get_profile
        from hookproof.terminal import duration_s

        stopped: str | None = None
        try:
            limit_s = duration_s("--max-duration", max_duration)
            prof = get_profile(profile or "stripe") if config is None else profile_for(profile, config)
            if secret_encoding is not None:
                prof = _with_secret_encoding(prof, secret_encoding)
            field = "--url" if url is not None else "target.url"
            url, secret_values, account, live, pinned = _target_defaults(config, url, secret, live)
            check_loopback_url(url, allow_remote, field=field, command="send", sends=SENDS)
            if api_version is not None:
                pinned = _api_version(api_version, prof.name)
            options = SendOptions(
                profile=prof, url=url, event=event, copies=copies, concurrent=concurrent, reverse=reverse, objects=objects,
                drop_response=drop_response, sender_timeout_s=sender_timeout, seed=seed, live=live,
                max_duration_s=limit_s, serve_api_port=serve_api, account=account, checkout_mode=checkout_mode,
                api_version=pinned,
            )
            from hookproof.unsent import later_version_note

            if pinned is not None and (later := later_version_note(
                    pinned, "--api-version" if api_version is not None else "target.api_version")) is not None:
                err_console.print(f"send: {later}", markup=False, soft_wrap=True)
            if api_key is not None:
                options = dataclasses.replace(options, api_key=read_secret(api_key, "--api-key"))
            history = History()
            shown = [0]

            def news() -> str:
                """On a terminal: each attempt ended since the last call, one line each."""
                done = history.attempts()
                lines = [attempt_line(a) for a in done[shown[0]:]]
                shown[0] = len(done)
                return "\n".join(lines)

            def tally() -> str:
                done = history.attempts()
                acked_so_far = sum(a.completion.value == "ok" for a in done)
                return f"send: {len(done)} attempt(s) so far, {acked_so_far} acknowledged, {beat.elapsed_s:.0f} s"

            live = err_console.is_interactive
            try:
                with Heartbeat(news if live else tally,
                               lambda text: err_console.print(text, markup=False, soft_wrap=True) if text else None,
                               TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
                    try:
                        attempts = do_send(options, secret_values, history, serving=lambda base: err_console.print(
                            f"send: serving the sent objects on the provider API at {base}", markup=False),
                            noting=lambda note: err_console.print(f"send: {note}", markup=False, soft_wrap=True))
                    except SendInterrupted as stop:
                        if stop.reason is None:
                            raise
                        attempts, stopped = stop.attempts, stop.reason
            finally:  # the heartbeat has stopped: the attempts that ended since its last line
                rest = news() if live else ""
                if rest:
                    err_console.print(rest, markup=False, soft_wrap=True)
        except (HookproofError, SimulatorError) as exc:
            flag = {"profile": "--profile: ", "secret": "--secret: "}.get(getattr(exc, "field", None) or "", "")
            raise fail(f"{flag}{exc}" if flag and not str(exc).startswith("--") else str(exc)) from None
        except SendInterrupted as exc:
            raise fail(f"send interrupted; {len(exc.attempts)} attempt(s) made", 130) from None
        if as_json:
            sys.stdout.write(json.dumps([a.to_dict() for a in attempts], indent=2) + "\n")
        else:
            table = Table(title=f"{prof.title} deliveries to {url}", title_justify="left")
            for col in ("#", "event", "try", "status", "outcome", "ms", "note"):
                table.add_column(col, overflow="fold")
            for a in attempts:
                answer = first_line(a.response_excerpt) if a.outcome.value != "acked" else ""
                note = ", ".join(filter(None, [",".join(a.faults), a.error, answer]))
                table.add_row(str(a.index + 1), escape(f"{a.event_type}\n{a.event_id}"), str(a.attempt),
                              str(a.status or "-"), f"{a.outcome.value} ({a.completion.value})", f"{a.latency_ms:.0f}",
                              escape(note))
            console.print(table)
        acked = sum(a.completion.value == "ok" for a in attempts)
        if stopped is not None:  # the run's deadline: what was sent is above, why it stopped here
            err_console.print(f"send {stopped}; {len(attempts)} attempt(s) finished before it, {acked} acknowledged; exit 1",
                              markup=False, soft_wrap=True)
            raise typer.Exit(1)
        if not as_json:
            dropped = sum(a.outcome.value == "dropped" and a.status is not None and prof.is_success(a.status)
                          for a in attempts)
            why = "the receiver acknowledged none of them"
            if dropped and not prof.retry_schedule_s:
                why = (f"the receiver answered {dropped} with a 2xx, discarded by --drop-response, and "
                       f"{prof.title} sends no retry")
            console.print(f"{len(attempts)} attempt(s), {acked} acknowledged" + ("" if acked else f"; exit 1: {why}"),
                          markup=False)
            headline = None if acked else _headline(attempts, secret, config, prof.name, profile_given=profile is not None)
            if headline is not None:
                console.print(headline, markup=False, soft_wrap=True)
        if not acked:
            raise typer.Exit(1)
