"""The command's one error boundary: every expected failure becomes one line.

Exceptions reach :func:`explain` from anywhere in a command, often wrapped in
trio's ExceptionGroups by the nurseries they crossed; it finds the leaf that
matters and says what went wrong and what to do about it. Exit codes: 2 for bad
input or configuration, 1 for a failure at run time, 130 for an interrupt. A
traceback is printed only with ``--debug`` or ``TROUPE_DEBUG=1``.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_TURN_LIMIT = 53
EXIT_TIMEOUT = 124
"""``troupe run --timeout`` ran out (GNU ``timeout``'s code, which harnesses know)."""
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """An expected failure, already worded for the person at the terminal."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) ExceptionGroups, in order."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def primary(error: BaseException) -> BaseException:
    """The leaf that explains the failure: an interrupt first, then a worded error,
    then the first one that is not a cancellation caused by the others."""
    found = leaves(error)
    for kind in (KeyboardInterrupt, CommandError):
        for leaf in found:
            if isinstance(leaf, kind):
                return leaf
    trio = sys.modules.get("trio")  # not imported: nothing was cancelled by trio
    real = [leaf for leaf in found if trio is None or not isinstance(leaf, trio.Cancelled)]
    return (real or found)[0]


def debugging(flag: bool = False) -> bool:
    return flag or os.environ.get("TROUPE_DEBUG", "") not in ("", "0")


def explain(error: BaseException) -> CommandError:
    """Any exception as the one line a user should see."""
    leaf = primary(error)
    if isinstance(leaf, CommandError):
        return leaf
    if isinstance(leaf, KeyboardInterrupt):
        return CommandError("interrupted", EXIT_INTERRUPTED)
    worded = _from_protocol(leaf) or _from_connection(leaf, None) or _from_models(leaf)
    if worded is not None:
        return worded
    return CommandError(
        f"unexpected error: {type(leaf).__name__}: {leaf} "
        "(run with --debug or TROUPE_DEBUG=1 for the traceback, and please report it)",
        EXIT_ERROR,
    )


def unreachable(error: BaseException, url: str) -> CommandError | None:
    """A failure to connect to ``url``, worded with the reason, or None if the
    error is something else."""
    return _from_connection(primary(error), url)


def _from_protocol(leaf: BaseException) -> CommandError | None:
    from protocol.client_errors import RequestError

    if not isinstance(leaf, RequestError):
        return None
    message = leaf.error.message
    if leaf.code == "not_found":
        return CommandError(f"{message} (`troupe sessions` lists them)", EXIT_BAD_INPUT)
    if leaf.code == "model_unavailable":
        return CommandError(f"no model configured: {message}{KEY_HINT}", EXIT_BAD_INPUT)
    if leaf.code in ("invalid_request", "unknown_type", "bad_frame"):
        return CommandError(message, EXIT_BAD_INPUT)
    return CommandError(f"{leaf.code}: {message}", EXIT_ERROR)


KEY_HINT = (
    "; set the provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY), "
    "or give --base-url for a local OpenAI-compatible server"
)


def _from_connection(leaf: BaseException, url: str | None) -> CommandError | None:
    from trio_websocket import ConnectionClosed, ConnectionRejected, HandshakeError

    from protocol.client import ConnectionRefused

    where = f" at {url}" if url else ""
    token_hint = "; pass --token or set TROUPE_TOKEN (the server keeps it in <data-dir>/token)"
    if isinstance(leaf, ConnectionRejected):
        body = (leaf.body or b"").decode(errors="replace").strip()
        if leaf.status_code == 401:
            return CommandError(f"the server{where} refused the token{token_hint}", EXIT_BAD_INPUT)
        return CommandError(
            f"the server{where} refused the connection (HTTP {leaf.status_code}: {body})",
            EXIT_ERROR,
        )
    if isinstance(leaf, ConnectionRefused):
        if leaf.code == "unauthorized":
            return CommandError(f"the server{where} refused the token{token_hint}", EXIT_BAD_INPUT)
        return CommandError(f"the server{where} refused the connection: {leaf}", EXIT_BAD_INPUT)
    if isinstance(leaf, HandshakeError):
        cause = leaf.__cause__ or leaf.__context__
        if cause is not None:
            underneath = _from_connection(primary(cause), url)
            if underneath is not None:
                return underneath
        what = "no answer in time" if "Timeout" in type(leaf).__name__ else "handshake failed"
        return CommandError(f"cannot reach the server{where}: {what}", EXIT_ERROR)
    if isinstance(leaf, ConnectionClosed):
        reason = leaf.reason
        said = ""
        if reason is not None:
            said = f" ({reason.code} {reason.name}{': ' + reason.reason if reason.reason else ''})"
        return CommandError(f"the server{where} closed the connection{said}", EXIT_ERROR)
    if isinstance(leaf, OSError):
        return CommandError(_os_reason(leaf, where), EXIT_ERROR)
    return None


def _os_reason(error: OSError, where: str) -> str:
    code = error.errno
    if code is None and isinstance(error.__cause__, BaseException):
        causes = [c for c in leaves(error.__cause__) if isinstance(c, OSError)]
        code = causes[0].errno if causes else None
    if code == errno.ECONNREFUSED:
        return f"cannot reach the server{where}: nothing is listening (is `troupe serve` running?)"
    if code == errno.EADDRINUSE:
        return f"the address is already in use: {error.strerror or error}"
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename:
        reason = f"{error.filename}: {reason}"
    return f"cannot reach the server{where}: {reason}" if where else reason


def _from_models(leaf: BaseException) -> CommandError | None:
    from actors.models.errors import ConfigurationError, ModelError

    if isinstance(leaf, ConfigurationError):
        return CommandError(f"no model configured: {leaf}{KEY_HINT}", EXIT_BAD_INPUT)
    if isinstance(leaf, ModelError):
        return CommandError(f"the model failed: {leaf}", EXIT_ERROR)
    return None


def report(command: str, error: BaseException, debug: bool = False) -> int:
    """Print ``error`` as one line on stderr (and the traceback when debugging);
    return the exit code."""
    worded = explain(error)
    if debugging(debug):
        traceback.print_exception(error, file=sys.stderr)
    print(f"troupe {command}: {worded.message}", file=sys.stderr, flush=True)
    return worded.exit_code
