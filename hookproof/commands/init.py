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


def register(app: typer.Typer) -> None:
    """Add ``hookproof init`` to `app`."""

    @app.command()
    def init(
        path: Annotated[Path, typer.Argument(help="Where to write the template.")] = Path("hookproof.toml"),
        force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    ) -> None:
        """Write a commented hookproof.toml template."""
        if path.exists() and not force:
            raise fail(f"{path} exists (use --force to overwrite)")
        template = (Path(__file__).resolve().parent.parent / "init_template.toml").read_text(encoding="utf-8")
        try:
            path.write_text(template, encoding="utf-8")
        except OSError as exc:
            raise fail(os_error(exc)) from None
        console.print(f"wrote {path}", markup=False)
