"""The `hookproof` command line (Typer): the app, --version, and `main`. Every command is a
module of `hookproof.commands` that registers itself (`register(app)`); each is a thin
wrapper over a module.

Exit codes: 0 success; 1 a finding or a failed delivery; 2 a usage or config error.
"""

from __future__ import annotations

import inspect
import sys
from typing import Annotated, Any

import typer

from hookproof.terminal import console, err_console, fail, print_report, read_secret  # noqa: F401 - the commands' names

app = typer.Typer(
    name="hookproof",
    help="Certify webhook receivers: sign like the real providers, deliver at least once with faults, check the effects.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        import hookproof

        console.print(f"hookproof {hookproof.__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print hookproof's version and exit.")] = False,
) -> None:
    """hookproof: certify webhook receivers before go-live."""


from hookproof.commands import register_all  # noqa: E402

register_all(app)


def _reflowed(doc: str) -> str:
    """A command's docstring as its help: each prose paragraph one line, which the terminal
    wraps at its own width (Typer's rich help keeps the source's line breaks, so a paragraph
    broke mid-sentence at the source's column); a paragraph opening with ``\\b`` or holding an
    indented line (an example command) is kept as written."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") or any(line[:1].isspace() for line in p.splitlines())
                       else " ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


for _command in app.registered_commands:
    if (_doc := _command.help or inspect.getdoc(_command.callback)) is not None:
        _command.help = _reflowed(_doc)


def _history_default(argv: list[str]) -> list[str]:
    """`hookproof report --history` with no value means the newest run: click options take
    no optional values, so the default folder is put in (`hookproof.rundirs.DEFAULT_ROOT`)."""
    if "report" not in argv or "--history" not in argv:
        return argv
    at = argv.index("--history")
    if at + 1 < len(argv) and not argv[at + 1].startswith("-"):
        return argv
    from hookproof.rundirs import DEFAULT_ROOT

    return [*argv[:at + 1], str(DEFAULT_ROOT), *argv[at + 1:]]


def usage_prefix(ctx: Any) -> str:
    """The one prefix of a usage error in click context `ctx` (None: before any command):
    ``hookproof:`` as on every error, and the subcommand it is about, e.g. ``hookproof: certify:``,
    however the program was invoked (``hookproof``, ``python -m hookproof.cli``, a path)."""
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:  # the root's own name is how it was invoked
        names.append(str(ctx.info_name))
        ctx = ctx.parent
    return "".join(f"{name}: " for name in ["hookproof", *reversed(names)])


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Usage errors (unknown flags, bad values) print one line naming the flag and exit 2,
    instead of click's multi-line box.
    """
    try:
        from typer._click import exceptions as click_exceptions  # typer >= 0.20 vendors click
    except ImportError:  # pragma: no cover - older typer on click
        from click import exceptions as click_exceptions  # type: ignore[no-redef]

    abort = getattr(click_exceptions, "Abort", KeyboardInterrupt)
    try:
        code = app(args=_history_default(sys.argv[1:] if argv is None else argv), standalone_mode=False)
    except click_exceptions.UsageError as exc:
        message = exc.format_message()
        if message:
            err_console.print(f"{usage_prefix(exc.ctx)}{message}",
                              markup=False, soft_wrap=True)
        sys.exit(2)
    except click_exceptions.ClickException as exc:
        err_console.print(f"hookproof: {exc.format_message()}", markup=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except (abort, KeyboardInterrupt):
        err_console.print("hookproof: interrupted", markup=False)
        sys.exit(130)
    except BrokenPipeError:  # e.g. `hookproof --help | head`
        sys.stderr.close()
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
