"""Exceptions of the front door (CLI and configuration).

Tree::

    HookproofError
    ├── UsageError (ValueError)     a bad flag value; exit code 2
    └── ConfigError (ValueError)    a bad hookproof.toml; names the field and the line; exit code 2
"""

from __future__ import annotations


class HookproofError(Exception):
    """Root of the errors the CLI turns into one line and an exit code."""

    exit_code = 2


class UsageError(HookproofError, ValueError):
    """A flag or argument value that cannot be used."""


class ConfigError(HookproofError, ValueError):
    """A configuration file that cannot be used.

    Attributes:
        path: the file.
        field: the dotted field path (``target.url``), or None for the whole file.
        line: the 1-based line of the field in the file, or None when unknown.
        message: what is wrong, without the file, line and field.
    """

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None, line: int | None = None) -> None:
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        if field:
            where += f"{field}: "
        super().__init__(where + message)
        self.message = message
        self.path = path
        self.field = field
        self.line = line
