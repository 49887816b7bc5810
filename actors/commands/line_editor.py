"""The interactive conversation's input line: prompt_toolkit, beside trio.

prompt_toolkit runs on asyncio. Each prompt runs in a worker thread
(``trio.to_thread``), where ``PromptSession.prompt`` starts and ends its own asyncio
loop, so trio's loop never blocks and asyncio never meets trio (design.md: asyncio
only behind a bridge; the thread is that bridge). A prompt is cancellable: when
the trio side is cancelled, the prompt's application is told to exit from its own
loop (``call_soon_threadsafe``) and the thread is waited for, so the terminal is
back in its normal mode before anything else prints.

Editing: Enter sends; Alt-Enter inserts a new line, and so does Enter after a
backslash; a paste keeps its new lines. Ctrl-J sends like Enter: a line typed
ahead, while the terminal was still in line mode, arrives ending in one. History is kept in a file
(the data directory's ``history``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import trio
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

EXIT_POLL_S = 0.05
"""How often a cancelled prompt is told again to exit while its loop starts up."""


@dataclass(frozen=True)
class Typed:
    """What the prompt gave: a text, an end of input (Ctrl-D), or a Ctrl-C."""

    text: str = ""
    end: bool = False
    interrupted: bool = False


def _bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    @bindings.add("c-j")  # a line typed ahead, before the prompt, ends in a new line
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):  # a continued line
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


def _history(path: Path | None) -> History:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:  # a read-only data directory: history for this run only
        return InMemoryHistory()
    return FileHistory(str(path))


class LineEditor:
    """One prompt at a time; :meth:`read` is the trio side."""

    def __init__(self, history: Path | None = None) -> None:
        self._session: PromptSession[str] = PromptSession(
            history=_history(history),
            multiline=True,  # Enter is bound to send; the buffer may hold new lines
            key_bindings=_bindings(),
            prompt_continuation=lambda width, line, wrap: "… ".rjust(width),
            enable_history_search=False,
            reserve_space_for_menu=0,
            erase_when_done=True,  # the session shows each input as it takes it
        )

    async def read(self, message: str = "> ", default: str = "") -> Typed:
        """The next input (``default``: text already in the buffer, to edit); Ctrl-D on
        an empty line ends, Ctrl-C gives ``interrupted``."""
        done = threading.Event()

        def prompt() -> Typed:
            try:
                return Typed(self._session.prompt(message, default=default))
            except EOFError:
                return Typed(end=True)
            except KeyboardInterrupt:
                return Typed(interrupted=True)
            finally:
                done.set()

        try:
            return await trio.to_thread.run_sync(prompt, abandon_on_cancel=True)
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._stop, done)
            raise

    def _stop(self, done: threading.Event) -> None:
        """Tell the prompt's application to exit until its thread is done (it may
        not have started its loop yet when the cancellation came)."""
        app = self._session.app
        while not done.is_set():
            loop = app.loop
            if app.is_running and loop is not None:

                def leave() -> None:
                    if app.is_running and app.future is not None and not app.future.done():
                        app.exit(exception=EOFError())

                loop.call_soon_threadsafe(leave)
            done.wait(EXIT_POLL_S)


__all__ = ["LineEditor", "Typed"]
