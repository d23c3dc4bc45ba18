"""Exceptions of the chaos package.

Tree::

    ChaosError
    ├── ProcessError        a receiver process that would not start, got unhealthy or died
    └── ContainerError      a container operation that failed (docker)
"""

from __future__ import annotations


class ChaosError(Exception):
    """Root of the fault injectors' errors."""


class ProcessError(ChaosError):
    """A receiver process that would not start or become healthy.

    Attributes:
        command: the command (with secrets masked), exit code when it exited, and the
        tail of its log.
    """

    def __init__(self, message: str, *, command: str = "", returncode: int | None = None, log_tail: str = "") -> None:
        super().__init__(message + (f"\n--- last lines of its output ---\n{log_tail}" if log_tail else ""))
        self.command = command
        self.returncode = returncode
        self.log_tail = log_tail


class ContainerError(ChaosError):
    """A docker operation that failed."""
