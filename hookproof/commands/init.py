"""``hookproof init``: write the commented hookproof.toml template."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hookproof.terminal import (
    console,
    fail,
    os_error,
)

if TYPE_CHECKING:
    pass


#: The template's lines about Stripe's built-in keys, replaced for another profile.
_STRIPE_KEYS = """# Business keys your effects must carry, per Stripe event: license:{payment_intent},
# renewal:{invoice}, fulfillment:{checkout_session}, provision:{checkout_session} (a
# subscription-mode session), dunning:{invoice}:{attempt_count},
# refund:{charge}:{amount_refunded} (see the README).
"""


_STRIPE_STATE = """# Optional: object_id, status[, version] of each stateful object.
state = "SELECT object_id, status, version FROM subscription_states"
"""
_STRIPE_STATES = """# [observer.states]
# invoice = "SELECT id AS object_id, status FROM invoices"
"""
_STRIPE_FIELDS = """# Optional (sql): a state query's columns beyond status that are part of the state, each with its
# path in the event as sent (Stripe: a subscription's plan is its price); compared with the status.
# [observer.state_fields]
# subscription = { price = "data.object.items.data[0].price.id" }
"""
#: The template's commented examples of a team's own keys and counter (Stripe's paths).
_STRIPE_KEY_EXAMPLES = """# [business_keys]
# "charge.succeeded" = "payment:{data.object.payment_intent}"
# "invoice.paid" = "renewal:{data.object.id}"
"""
_STRIPE_COUNTER_EXAMPLE = """# [counters."invoice.paid"]
# key = "{data.object.customer}"
# amount = "data.object.amount_paid"
"""

#: Per profile (other than stripe): (event type as the profile names it, key template) of the
#: commented ``[business_keys]``, and the commented ``[counters]`` entry as (event type, key
#: template, amount path or a fixed amount: 1 counts the events), or a comment line saying why the
#: profile has none. Every path is one the profile's events carry (tests/test_readme.py loads each
#: uncommented).
KEY_EXAMPLES: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, str, str | int] | str]] = {
    "generic-hmac": ((("charge.succeeded", "payment:{data.object.payment_intent}"),
                      ("invoice.paid", "renewal:{data.object.id}")),
                     ("invoice.paid", "{data.object.customer}", "data.object.amount_paid")),
    "standard-webhooks": ((("charge.succeeded", "payment:{data.payment_intent}"),
                           ("invoice.paid", "renewal:{data.id}")),
                          ("invoice.paid", "{data.customer}", "data.amount_paid")),
    "svix": ((("charge.succeeded", "payment:{data.payment_intent}"),
              ("invoice.paid", "renewal:{data.id}")),
             ("invoice.paid", "{data.customer}", "data.amount_paid")),
    "paddle": ((("transaction.completed", "fulfil:{data.id}"),
                ("subscription.canceled", "deprovision:{data.id}")),
               ("transaction.completed", "{data.customer_id}", "data.details.totals.total")),
    "shopify": ((("orders/paid", "fulfil:{id}"),
                 ("refunds/create", "refund:{id}"),
                 ("customers/redact", "redact:{customer.id}")),  # a compliance topic: named, it is sent
                ("orders/paid", "{customer.id}", "total_price")),
    "mercadopago": ((("payment.created", "payment:{data.id}"),),
                    "Mercado Pago's notifications carry the payment's id, not its amount (the receiver "
                    "fetches the payment): no counter example."),
    "github": ((("issue_comment.created", "comment:{comment.id}"),
                ("pull_request.closed", "closed:{repository.full_name}#{pull_request.number}")),
               ("issue_comment.created", "{repository.full_name}#{issue.number}", 1)),
}


#: Profiles whose events carry no money amount: their effects query reads the keys alone (an
#: ``amount`` column a team's table need not have would fail the query).
NO_AMOUNTS: frozenset[str] = frozenset({"github"})
_EFFECTS_QUERY = 'effects = "SELECT business_key, amount FROM effects"\n'


def _key_examples(profile: str) -> tuple[str, str]:
    """The commented ``[business_keys]`` and ``[counters]`` examples for `profile`, in the
    template's form (`KEY_EXAMPLES`)."""
    keys, counter = KEY_EXAMPLES[profile]
    business = "# [business_keys]\n" + "".join(f'# "{name}" = "{template}"\n' for name, template in keys)
    if isinstance(counter, str):
        return business, "".join(f"# {line}\n" for line in textwrap.wrap(f"({counter})", 94))
    name, key, amount = counter
    shown = amount if isinstance(amount, int) else f'"{amount}"'  # a fixed amount counts the events
    return business, f'# [counters."{name}"]\n# key = "{key}"\n# amount = {shown}\n'


_STRIPE_API_KEY = 'api_key = "sk_test_51HookproofSimulatorKey000000000000"\n'
_STRIPE_VERSION = """# Stripe: the API version the receiver's endpoint is pinned to (default: hookproof's latest);
# events and the provider API's answers take that version's shapes.
# api_version = "2024-06-20"
"""
_STRIPE_ENV = 'env = { STRIPE_WEBHOOK_SECRET = "{secret}", STRIPE_API_BASE = "{api_base}", STRIPE_API_KEY = "{api_key}" }'
_STRIPE_BASE_NOTE = "# simulator's provider API, no /v1: stripe-python's stripe.api_base takes it as is), {sink_url},\n"


#: GitHub's template: the check runs' states, read from a CI App sent the checks' events alone.
_GITHUB_CHECK_RUNS = ("# A CI App whose enabled_events lists check_suite and check_run: its check runs' last status too\n"
                      '# check_run = "SELECT object_id, status FROM check_run_states"\n')


def render_template(profile: str) -> str:
    """The commented hookproof.toml for `profile` (its name set, its built-in keys shown).

    For a profile other than stripe, every Stripe-only line is the profile's own: a provider
    world's stateful kinds' state queries (`[observer.states]`, from its state story),
    no Stripe API key (the simulator's default key applies), neutral variable names in the
    receiver examples, and no Stripe API version. Raises ProfileError naming the known profiles.
    """
    from hookproof.catalog_file import CATALOG_PROFILES
    from hookproof.commands.events import example_keys
    from hookproof.simulator.profiles import get_profile

    chosen = get_profile(profile)
    template = (Path(__file__).resolve().parent.parent / "init_template.toml").read_text(encoding="utf-8")
    if chosen.name == "stripe":
        return template
    names = chosen.event_types()
    shown = [f"#   {names.get(t, t)}: {', '.join(keys)}" for t, keys in example_keys(chosen.name).items()]
    lines = (f"# Business keys your effects must carry (hookproof's built-in keys, examples from a sample\n"
             f"# {chosen.title} world; `hookproof events --profile {chosen.name} --keys` lists them):\n"
             + "\n".join(shown) + "\n")
    own = (f"# {chosen.name} sends the billing world's events until a [catalog] table (at the end of\n"
           "# this file) names your provider's own types: Clerk's user.created, Resend's email.sent...\n"
           if chosen.name in CATALOG_PROFILES else "")  # profiles that take a [catalog]
    swaps = {
        'profile = "stripe"\n': f'profile = "{chosen.name}"\n{own}',
        _STRIPE_KEYS: lines,
        _STRIPE_API_KEY: ("# The key (access token) the provider API accepts from the receiver (default: the\n"
                          '# simulator\'s own; it reaches a started receiver as HOOKPROOF_API_KEY).\n# api_key = "..."\n'),
        _STRIPE_VERSION: "",
        _STRIPE_FIELDS: "",
        _STRIPE_KEY_EXAMPLES: _key_examples(chosen.name)[0],
        _STRIPE_COUNTER_EXAMPLE: _key_examples(chosen.name)[1],
        "--stripe-api-base {api_base}": "--api-base {api_base}",
        _STRIPE_ENV: 'env = { WEBHOOK_SECRET = "{secret}", API_BASE = "{api_base}", API_KEY = "{api_key}" }',
        _STRIPE_BASE_NOTE: "# simulator's provider API, no /v1), {sink_url},\n",
    }
    if chosen.name in NO_AMOUNTS:
        swaps[_EFFECTS_QUERY] = 'effects = "SELECT business_key FROM effects"\n'
    kinds = state_kinds(chosen.name)
    if kinds:  # a provider world of its own: its kinds' states (a billing world's are Stripe's subscriptions)
        swaps[_STRIPE_STATE] = ""
        swaps[_STRIPE_STATES] = ("[observer.states]\n"
                                 + "".join(f'{kind} = "SELECT object_id, status FROM {kind}_states"\n' for kind in kinds)
                                 + (_GITHUB_CHECK_RUNS if chosen.name == "github" else ""))
    for old, new in swaps.items():
        if old not in template:  # the template and this function change together
            raise AssertionError(f"init_template.toml no longer holds {old[:60]!r}")
        template = template.replace(old, new, 1)
    return template


def state_kinds(profile: str) -> list[str]:
    """The object kinds whose states `profile`'s world walks (each kind its state story gives a
    status: GitHub's installations beside its issues and pull requests, Paddle's transactions
    beside its subscriptions), sorted; empty for the billing world (its states are the
    subscriptions' `state` query)."""
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import new_world

    world = new_world(get_profile(profile).world, 1)
    story = getattr(world, "state_story", None)
    return sorted({e.object_type for e in story() if e.status is not None}) if story is not None else []


def register(app: typer.Typer) -> None:
    """Add ``hookproof init`` to `app`."""

    @app.command()
    def init(
        path: Annotated[Path, typer.Argument(help="Where to write the template.")] = Path("hookproof.toml"),
        force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
        profile: Annotated[str, typer.Option("--profile", help="The provider profile the template is for.")] = "stripe",
    ) -> None:
        """Write a commented hookproof.toml template."""
        from hookproof.simulator.errors import ProfileError

        try:
            template = render_template(profile)
        except ProfileError as exc:
            raise fail(f"--profile: {exc}") from None
        if path.exists() and not force:
            raise fail(f"{path} exists (use --force to overwrite)")
        try:
            path.write_text(template, encoding="utf-8")
        except OSError as exc:
            raise fail(os_error(exc)) from None
        console.print(f"wrote {path}", markup=False)
