"""Where each key of a TOML text is set: the line behind a config error.

`TomlLines(text)` indexes every key path once: a table header (``[target]``,
``[[x]]``), a key under it (``url = …``), a dotted key (``target.url = …`` at the top
level or ``start.command = …`` under ``[target]``), quoted keys (``"charge.succeeded" =
…``), and every prefix of each path (``target`` is where ``target.url`` is first set when
no ``[target]`` header exists). Lines inside multi-line strings are not keys. tomllib
itself reports no positions, hence this index; it reads text that tomllib accepted.
"""

from __future__ import annotations

import re

_BARE = r"[A-Za-z0-9_\-]+"
_BASIC = r'"(?:[^"\\]|\\.)*"'
_LITERAL = r"'[^']*'"
_PART = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_KEY = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")
_HEADER = re.compile(rf"^\s*\[\[?\s*({_PART}(?:\s*\.\s*{_PART})*)\s*\]\]?\s*(?:#.*)?$")
_SPLIT = re.compile(rf"\s*({_PART})\s*(?:\.|$)")


def key_parts(key: str) -> list[str]:
    """The parts of a (possibly dotted, possibly quoted) TOML key, unquoted."""
    parts = []
    for match in _SPLIT.finditer(key.strip()):
        part = match.group(1)
        if part[0] == '"':
            part = part[1:-1].encode("utf-8").decode("unicode_escape") if "\\" in part else part[1:-1]
        elif part[0] == "'":
            part = part[1:-1]
        parts.append(part)
    return parts


class TomlLines:
    """The first 1-based line on which each key path (and each of its prefixes) is set."""

    def __init__(self, text: str) -> None:
        self._first: dict[tuple[str, ...], int] = {}
        self._at: dict[int, tuple[str, ...]] = {}
        self._headers: dict[tuple[str, ...], list[int]] = {}
        table: tuple[str, ...] = ()
        open_quote: str | None = None
        string_path: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            if open_quote is not None:  # inside a multi-line string: the line belongs to its key
                self._at[number] = string_path
                if line.count(open_quote) % 2 == 1:
                    open_quote = None
                continue
            header = _HEADER.match(line)
            if header:
                table = tuple(key_parts(header.group(1)))
                self._note(table, number)
                self._headers.setdefault(table, []).append(number)
                continue
            key = _KEY.match(line)
            if key:
                string_path = table + tuple(key_parts(key.group(1)))
                self._note(string_path, number)
                rest = line[key.end():]
                for quote in ('"""', "'''"):
                    if rest.count(quote) % 2 == 1:
                        open_quote = quote
                        break
            elif table:
                self._at.setdefault(number, table)

    def _note(self, path: tuple[str, ...], number: int) -> None:
        self._at[number] = path
        for end in range(1, len(path) + 1):
            self._first.setdefault(path[:end], number)

    def line_of(self, *path: str) -> int | None:
        """The line where `path` is set, else where its longest set prefix is, else None."""
        for end in range(len(path), 0, -1):
            if path[:end] in self._first:
                return self._first[path[:end]]
        return None

    def header_line(self, path: tuple[str, ...], nth: int) -> int | None:
        """The line of the `nth` (from 1) header opening table `path` (``[[x]]`` opens one
        table of the array each time), or None."""
        lines = self._headers.get(path, [])
        return lines[nth - 1] if 0 < nth <= len(lines) else None

    def path_at(self, number: int) -> tuple[str, ...] | None:
        """The key path set (or the table opened, or the table a line belongs to) on `number`."""
        return self._at.get(number)
