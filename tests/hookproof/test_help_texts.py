"""Every command's help says what its source says: no word lost to the help's markup."""

from __future__ import annotations

import re
from typing import Any, Iterator

import typer
from rich.text import Text

from hookproof.cli import app
from hookproof.simulator.wording import a_or_an


def _texts(command: Any, path: str) -> Iterator[tuple[str, str]]:
    yield path, command.help or ""
    for param in command.params:
        yield f"{path} {param.name}", getattr(param, "help", None) or ""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _texts(sub, f"{path} {name}")


def test_no_help_text_loses_a_bracketed_word_to_markup() -> None:
    """Typer renders help as Rich markup: ``[catalog]`` is read as a style and vanishes
    ("A hookproof.toml whose  gives ..."). Help texts name such tables without brackets."""
    lost = [(where, part) for where, text in _texts(typer.main.get_command(app), "hookproof")
            for part in re.findall(r"\[[^\]\n]*\]", text) if Text.from_markup(part).plain != part]
    assert lost == []


def test_send_help_names_the_catalog_table(capsys: Any) -> None:
    import os

    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["send", "--help"], env={**os.environ, "COLUMNS": "250"})
    assert result.exit_code == 0
    assert "its catalog table (your own event types" in result.output
    assert "its  (your" not in result.output and "its (your" not in result.output


def test_a_or_an() -> None:
    assert [a_or_an(w) for w in ("explore", "invoice", "certify", "storm", "Order", "")] == [
        "an explore", "an invoice", "a certify", "a storm", "an Order", "a "]


def test_serve_help_says_which_world_it_serves() -> None:
    """`hookproof serve` serves one Stripe billing world: its help says so, and that the other
    providers' routes hold no objects there (it once named "Stripe and Mercado Pago shapes")."""
    import os

    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["serve", "--help"], env={**os.environ, "COLUMNS": "400"})
    assert result.exit_code == 0
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    assert "Serve the provider API and the effect sink over one Stripe billing world (from --seed)." in text
    assert ("Mercado Pago's, Paddle's, Shopify's and GitHub's routes answer too, but hold no objects here: their "
            "worlds are served while certify, explore and storm run, and by send --serve-api.") in text
    assert "Mercado Pago shapes" not in text


def test_each_help_paragraph_wraps_at_the_terminal_not_at_the_source() -> None:
    """Typer's rich help kept a docstring's line breaks: at 100 columns explore's second
    paragraph broke after "run.max_duration_s," and "and a", mid-sentence. Each prose paragraph
    of every command is one line now, which the terminal wraps; storm's example commands keep
    their lines."""
    import os

    from typer.testing import CliRunner

    wide = {**os.environ, "COLUMNS": "400"}
    result = CliRunner().invoke(app, ["explore", "--help"], env=wide)
    assert result.exit_code == 0
    lines = [line.strip() for line in result.output.splitlines()]
    assert ("The whole run is bounded by --max-duration (default: the config's run.max_duration_s, 15 minutes), as "
            "certify's: then the search stops, the receiver is stopped, and a partial report says why; the exit code "
            "is 1.") in lines
    storm = [line.strip() for line in CliRunner().invoke(app, ["storm", "--help"], env=wide).output.splitlines()]
    assert "hookproof storm-worker --master-host 10.0.0.1                      # on 10.0.0.2 and 10.0.0.3" in storm
    for command in app.registered_commands:  # no prose paragraph keeps a line break
        for paragraph in (command.help or "").split("\n\n")[1:]:
            assert "\n" not in paragraph or any(line[:1].isspace() for line in paragraph.splitlines()), paragraph
