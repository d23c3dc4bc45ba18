"""A secret given by reference: literally, as ``env:NAME`` or as ``file:PATH``.

One type for every place a secret is named (``--secret`` flags, ``target.secret`` in
hookproof.toml): `SecretRef.parse` checks the form, `SecretRef.resolve` reads the value.
Errors (`SecretRefError`, a ValueError) name the source, never the value, and the
reference's ``repr`` shows only its source (``env:NAME``, ``file:PATH`` or ``literal``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


class SecretRefError(ValueError):
    """A secret reference that is malformed or cannot be resolved (the message names its source only)."""


@dataclass(frozen=True)
class SecretRef:
    """Where a secret comes from. `kind` ``literal`` keeps the value in `text` (never shown)."""

    kind: Literal["literal", "env", "file"]
    text: str = field(repr=False)

    @classmethod
    def parse(cls, value: str) -> SecretRef:
        """The reference `value` spells. Raises SecretRefError for a blank value, or an
        ``env:``/``file:`` without a name or path."""
        if value.startswith("env:"):
            if not value[4:].strip():
                raise SecretRefError("the environment variable's name is missing (write env:NAME)")
            return cls("env", value[4:])
        if value.startswith("file:"):
            if not value[5:].strip():
                raise SecretRefError("the secret file's path is missing (write file:PATH)")
            return cls("file", value[5:])
        if not value.strip():
            raise SecretRefError("the secret is empty or blank")
        return cls("literal", value)

    @property
    def source(self) -> str:
        """``env:NAME``, ``file:PATH`` or ``literal``: what may be shown of this reference."""
        return "literal" if self.kind == "literal" else f"{self.kind}:{self.text}"

    def __repr__(self) -> str:
        return f"SecretRef({self.source})"

    def resolve(self, base_dir: Path | None = None) -> str:
        """The secret's value; a relative ``file:`` path is read from `base_dir` (default: the
        current directory). Raises SecretRefError when the variable is unset or blank, or the
        file cannot be read or is empty."""
        if self.kind == "env":
            secret = os.environ.get(self.text)
            if not secret or not secret.strip():
                raise SecretRefError(f"environment variable {self.text} is not set or empty")
            return secret
        if self.kind == "file":
            path = Path(self.text)
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            try:
                secret = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise SecretRefError(f"cannot read secret file {path} ({type(exc).__name__})") from None
            if not secret:
                raise SecretRefError(f"secret file {path} is empty")
            return secret
        return self.text
