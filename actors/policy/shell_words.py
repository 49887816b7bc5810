"""The shell line's parts as the classifier sees them: words (with what the shell
would still expand in them), redirections, simple commands, function definitions.
Both readers (the fast one and bashlex's walk) give these."""

from __future__ import annotations

import msgspec


class Word(msgspec.Struct, frozen=True):
    """One word after quote removal. ``text`` keeps what the shell would still
    expand (``$HOME/x``, ``~/x``, ``*.py``); the flags say which expansions are in it."""

    text: str
    substituted: bool = False
    """A parameter, command or process substitution: the value is known only at run time."""
    parameters: tuple[str, ...] = ()
    """The names of the parameters in it (``HOME`` for ``$HOME/x``)."""
    pattern: bool = False
    """An unquoted glob (``*?[``) or brace expansion (``{a,b}``)."""
    tilde: bool = False


class Redirect(msgspec.Struct, frozen=True):
    """``op`` is the operator (``>``, ``>>``, ``<``, ``<>``, ``<<<``, ``<<``, ``>&``);
    ``target`` the word after it, None when it is a file descriptor (``2>&1``)."""

    op: str
    target: Word | None


class SimpleCommand(msgspec.Struct, frozen=True):
    """One simple command of a line, before any wrapper is unwrapped."""

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    background: bool = False
    """Run with ``&`` or as one side of a pipeline (a new process either way)."""

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(word.text for word in self.words)


class FunctionDef(msgspec.Struct, frozen=True):
    """``name() { body }``: the body's commands are judged where it is defined."""

    name: str
    body: tuple[SimpleCommand, ...]


Item = SimpleCommand | FunctionDef
