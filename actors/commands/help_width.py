"""argparse's help formatter, with the terminal's width read through ``os``.

argparse makes a formatter to check every argument as it is added, and its
formatter asks ``shutil`` for the width; importing ``shutil`` (with zlib, bz2 and
lzma) is a fifth of the interpreter's start, which every ``troupe`` command paid
before reading a word of its line. The width is found as ``shutil`` finds it:
``$COLUMNS``, else the terminal of standard output, else 80 columns.
"""

from __future__ import annotations

import argparse
import os
import sys

FALLBACK_COLUMNS = 80


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing ``shutil``."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or FALLBACK_COLUMNS


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs kept as written (their line breaks are meant), as
    wide as the terminal, less the two columns argparse leaves."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)
