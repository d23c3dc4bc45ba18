"""Exceptions of the reports package.

Tree::

    ReportError
    ├── ReportFormatError (ValueError)    a report.json that cannot be read back
    │   └── SchemaVersionError            its schema_version is missing or not supported
    └── ReportWriteError (OSError)        a report file that could not be written

Each subclass carries its context as attributes (`path` inside the document, the
versions involved, the file that failed); the message names what is wrong.
"""

from __future__ import annotations

from pathlib import Path


class ReportError(Exception):
    """Root of every error the reports package raises on purpose."""


class ReportFormatError(ReportError, ValueError):
    """A report document that is not valid JSON or does not match the schema.

    Attributes:
        path: where in the document the problem is, e.g. ``scenarios[1].checks[0].verdict``
            (``""`` for the document itself).
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class SchemaVersionError(ReportFormatError):
    """A report whose ``schema_version`` is missing, malformed or not supported.

    Attributes:
        found: the version in the document (None when absent).
        supported: the version this hookproof reads.
    """

    def __init__(self, message: str, *, found: object, supported: int) -> None:
        super().__init__(message, path="schema_version")
        self.found = found
        self.supported = supported


class ReportWriteError(ReportError, OSError):
    """A report file that could not be written (the directory or the file itself).

    Attributes:
        file: the file (or directory) that failed.
    """

    def __init__(self, message: str, *, file: Path) -> None:
        super().__init__(message)
        self.file = file
