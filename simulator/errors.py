"""Exceptions of the simulator package.

Tree::

    SimulatorError
    ├── ProfileError (ValueError)        unknown profile, bad profile settings
    │   └── SecretError                  a secret that cannot be used (empty, wrong encoding)
    ├── WorldError (ValueError)          an illegal transition or unknown object
    ├── FaultPlanError (ValueError)      a fault plan that cannot be scheduled
    └── DeliveryError                    the dispatcher could not run (bad target, closed history)
        └── TargetError (ValueError)     a target URL or app that cannot be used

Each subclass carries its context as attributes; messages never contain a secret.
"""

from __future__ import annotations


class SimulatorError(Exception):
    """Root of every error the simulator raises on purpose."""


class ProfileError(SimulatorError, ValueError):
    """A profile name or profile setting that cannot be used."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class SecretError(ProfileError):
    """A secret that the profile cannot sign with (the secret itself is never in the message)."""


class WorldError(SimulatorError, ValueError):
    """An illegal lifecycle transition or a reference to an unknown object."""

    def __init__(self, message: str, *, object_id: str | None = None) -> None:
        super().__init__(message)
        self.object_id = object_id


class FaultPlanError(SimulatorError, ValueError):
    """A fault plan whose values cannot be scheduled (negative counts, unknown mutation)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class DeliveryError(SimulatorError):
    """The dispatcher could not run."""


class TargetError(DeliveryError, ValueError):
    """A target (URL or in-process app) that cannot be delivered to."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.target = target
