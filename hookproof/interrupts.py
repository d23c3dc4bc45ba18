"""One way every long command takes SIGTERM and Ctrl-C: as KeyboardInterrupt, in the main thread.

``caught = Interrupts.install()`` (or ``with Interrupts() as caught:``) makes SIGTERM raise
KeyboardInterrupt where the command is, as Ctrl-C (SIGINT, Python's own handler) does,
so its ``finally`` blocks stop what it started, heal faults and write a partial report;
`caught.exit_code` is then ``128 + signum`` (130 for Ctrl-C, 143 for SIGTERM), as shells
expect. The previous handlers come back when the block ends (`restore`). A signal whose
KeyboardInterrupt Python dropped (raised inside a weakref callback) is raised again by
`check`, where the run moves on.
"""

from __future__ import annotations

import signal
from types import FrameType, TracebackType
from typing import Any


class Interrupts:
    """The signals a command caught (`received`), and the handlers it replaced."""

    def __init__(self, *, sigint: bool = False) -> None:
        self.received: list[int] = []
        self._sigint = sigint
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        raise KeyboardInterrupt

    @classmethod
    def install(cls, *, sigint: bool = False) -> Interrupts:
        """Catch the signals from now on (a command's whole run); `restore` gives them back.
        `sigint`: record Ctrl-C too (for a command that must tell it from its own stop)."""
        return cls(sigint=sigint).__enter__()

    def restore(self) -> None:
        """Put the replaced handlers back."""
        self.__exit__(None, None, None)

    def __enter__(self) -> Interrupts:
        # SIGINT keeps Python's own handler unless asked: asyncio.run only turns Ctrl-C into a
        # clean cancellation while that handler is in place (and it raises KeyboardInterrupt too).
        self._previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, self._handle)
        if self._sigint and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def check(self) -> None:
        """Raise KeyboardInterrupt again when a signal came and the run goes on: Python drops a
        KeyboardInterrupt the handler raised inside a weakref callback or a ``__del__`` ("Exception
        ignored in ..."), and the run would not stop. Call it where the run moves on (each example)."""
        if self.received:
            raise KeyboardInterrupt

    @property
    def signalled(self) -> bool:
        """Whether a signal came (a KeyboardInterrupt may also come from a plain Ctrl-C)."""
        return bool(self.received)

    @property
    def stopped_by(self) -> str | None:
        """The last signal's name (``"SIGTERM"``, ``"SIGINT"``), None when none was recorded."""
        return signal.Signals(self.received[-1]).name if self.received else None

    @property
    def exit_code(self) -> int:
        """``128 + signum`` of the last signal (Ctrl-C's 130 when none was recorded)."""
        return 128 + (self.received[-1] if self.received else signal.SIGINT)
