"""Argument parsing shared by the bench scripts: ``--help``, and one line for a bad argument.

`parser(doc)` is an `argparse.ArgumentParser` whose description is the script's docstring
and whose errors are one line on stderr (``name.py: error: <what> (see --help)``) with exit
status 2, instead of argparse's usage block: a bench run by `all.py` shows its last line.
`positive_int` and `positive_float` are argument types that refuse zero and negatives.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser that refuses a bad argument with one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser(doc: str | None) -> OneLineParser:
    """The parser of a bench script whose docstring is `doc` (shown by ``--help``)."""
    return OneLineParser(prog=sys.argv[0].rsplit("/", 1)[-1], description=doc,
                         formatter_class=argparse.RawDescriptionHelpFormatter)


def positive_int(text: str) -> int:
    """`text` as an int >= 1; raises argparse.ArgumentTypeError otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def positive_float(text: str) -> float:
    """`text` as a float > 0; raises argparse.ArgumentTypeError otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text!r}")
    return value


__all__ = ["OneLineParser", "parser", "positive_float", "positive_int"]
