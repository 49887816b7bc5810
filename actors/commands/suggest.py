"""``troupe rnu`` or ``troupe run --modle x``: argparse's error with a "did you
mean" (Python 3.11's argparse has none)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, NoReturn

from actors.commands.help_width import HelpFormatter


def _close_matches(word: str, possibilities: list[str], n: int, cutoff: float) -> list[str]:
    """:func:`difflib.get_close_matches`, imported only when a word is wrong (it
    compiles patterns on import, which every command would pay)."""
    import difflib

    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {s for s in parser._option_string_actions if s.startswith("--")}
    for child in _subparsers(parser).values():
        found |= _options(child)
    return found


def suggestion(parser: argparse.ArgumentParser, message: str) -> str | None:
    """The closest known command or flag to what the message says was wrong."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice is not None:
        names = re.findall(r"'([^']*)'", choice.group(2))
        close = _close_matches(choice.group(1), names, n=1, cutoff=0.5)
        if not close:
            return None
        return f"troupe {close[0]}" if "COMMAND" in message else close[0]
    unknown = re.search(r"unrecognized arguments: (\S+)", message)
    if unknown is not None and unknown.group(1).startswith("-"):
        flag = unknown.group(1).split("=", 1)[0]
        close = _close_matches(flag, sorted(_options(parser)), n=1, cutoff=0.6)
        return close[0] if close else None
    return None


class SuggestingParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors end with "did you mean X?"."""

    complete: Callable[[], argparse.ArgumentParser] | None = None
    """Builds the parser with every command's arguments, where this one has only
    some (``actors.cli.build_parser``'s ``only``): the suggestion searches them all."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)  # no shutil (help_width)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        close = suggestion(self if self.complete is None else self.complete(), message)
        if close is not None:
            message = f"{message}; did you mean {close}?"
        super().error(message)
