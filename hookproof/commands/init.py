"""``hookproof init``: write the commented hookproof.toml template."""

from __future__ import annotations

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
# renewal:{invoice}, fulfillment:{checkout_session}, dunning:{invoice}:{attempt_count},
# refund:{charge}:{amount_refunded} (see the README).
"""


def render_template(profile: str) -> str:
    """The commented hookproof.toml for `profile` (its name set, its built-in keys shown).
    Raises ProfileError naming the known profiles."""
    from hookproof.commands.events import example_keys
    from hookproof.simulator.profiles import get_profile

    chosen = get_profile(profile)
    template = (Path(__file__).resolve().parent.parent / "init_template.toml").read_text(encoding="utf-8")
    if chosen.name == "stripe":
        return template
    template = template.replace('profile = "stripe"', f'profile = "{chosen.name}"', 1)
    names = chosen.event_types()
    shown = [f"#   {names.get(t, t)}: {', '.join(keys)}" for t, keys in example_keys(chosen.name).items()]
    lines = (f"# Business keys your effects must carry (hookproof's built-in keys, examples from a sample\n"
             f"# {chosen.title} world; `hookproof events --profile {chosen.name} --keys` lists them):\n"
             + "\n".join(shown) + "\n")
    return template.replace(_STRIPE_KEYS, lines, 1)


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
