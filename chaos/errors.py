"""Exceptions of the chaos package.

Tree::

    ChaosError
    ├── ProcessError        a receiver process that would not start, got unhealthy or died
    ├── ContainerError      a container operation that failed (docker)
    ├── ProxyError          the fault proxy could not listen
    └── HealError           a fault that could not be healed (the receiver is not back)
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
    """A docker operation that failed.

    Attributes:
        operation: what was attempted (``run``, ``kill``, ``pause``…).
        container: the container's name or id, when known.
        log_tail: the last lines of the container's output, when known.
    """

    def __init__(self, message: str, *, operation: str = "", container: str = "", log_tail: str = "") -> None:
        super().__init__(message + (f"\n--- last lines of its output ---\n{log_tail}" if log_tail else ""))
        self.operation = operation
        self.container = container
        self.log_tail = log_tail


class ProxyError(ChaosError):
    """The fault proxy could not start."""


class HealError(ChaosError):
    """A fault could not be healed: the receiver did not come back.

    Attributes:
        failures: one line per heal step that failed.
    """

    def __init__(self, failures: list[str]) -> None:
        super().__init__("could not heal: " + "; ".join(failures))
        self.failures = failures
