"""Exceptions of the scenarios package.

Tree::

    ScenarioError
    └── ObserverError             an observer cannot read the receiver (bad URL, bad query,
                                  unreachable endpoint, malformed answer)

Each subclass carries its context as attributes; messages never contain a secret
(database passwords are masked).
"""

from __future__ import annotations


class ScenarioError(Exception):
    """Root of every error the scenarios package raises on purpose."""


class ObserverError(ScenarioError):
    """An observer could not produce an observation.

    Attributes:
        observer: the observer kind (``"sql"``, ``"http"``, ``"sink"``, ``"python"``).
        target: what it read (URL with the password masked, or a callable's name), or None.
        query: which query failed (``"effects"`` or ``"state"``), or None.
    """

    def __init__(self, message: str, *, observer: str, target: str | None = None, query: str | None = None) -> None:
        super().__init__(message)
        self.observer = observer
        self.target = target
        self.query = query
