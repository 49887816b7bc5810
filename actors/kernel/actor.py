"""The Actor base class and the ``@handler`` decorator that builds its dispatch table.

An actor is a plain object whose state nothing else touches: the kernel feeds it one
message at a time from its mailbox and calls the handler declared for the message's
type. Handlers are found from type annotations (or listed explicitly), so the table
is built once per class and dispatch is a single dict lookup on ``type(message)``.
"""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

import msgspec

from actors.kernel.restart import RestartPolicy
from protocol.supervision import ChildFailed

if TYPE_CHECKING:
    from actors.kernel.cell import Cell

log = logging.getLogger("troupe.actors")

_HANDLER_ATTR = "__troupe_handles__"
_TABLE_ATTR = "_troupe_dispatch_table"

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
HandlerFunction = Callable[[Any, Any], Awaitable[Any]]


class _Declaration:
    """What ``@handler`` recorded on a method: its message types and how it runs."""

    __slots__ = ("concurrent", "types")

    def __init__(self, types: tuple[object, ...], concurrent: bool) -> None:
        self.types = types
        self.concurrent = concurrent


@overload
def handler(fn: F, /) -> F: ...
@overload
def handler(*message_types: type[msgspec.Struct], concurrent: bool = False) -> Callable[[F], F]: ...
def handler(*args: Any, concurrent: bool = False) -> Any:
    """Mark an async method as the handler of one or more message types.

    ``@handler`` alone reads the types from the annotation of the message parameter
    (a Struct, or a union of Structs); ``@handler(A, B)`` lists them explicitly, which
    also works for Structs defined inside functions where annotations cannot be
    resolved. The method's return value is the reply to an ``ask``.

    ``concurrent=True`` runs each message as its own task in the actor's nursery, so
    slow requests (a command, a file transfer) do not queue behind each other. Such a
    handler must not rely on running alone, and when the asker gives up (deadline
    or cancellation) its task is cancelled: abandoning a request stops its work.
    """
    if len(args) == 1 and inspect.isfunction(args[0]):
        setattr(args[0], _HANDLER_ATTR, _Declaration((), concurrent))
        return args[0]
    explicit = tuple(args)

    def mark(fn: F) -> F:
        setattr(fn, _HANDLER_ATTR, _Declaration(explicit, concurrent))
        return fn

    return mark


class _MessageHint:
    """What :func:`typing.get_type_hints` reads of a handler, with the message's
    annotation alone: the others (the reply's type) are left unevaluated, each one
    a compile and an eval on every start (issue 36)."""

    __slots__ = ("__annotations__", "__globals__")

    def __init__(self, fn: Callable[..., Any], param: str) -> None:
        annotations = fn.__annotations__
        self.__annotations__ = {param: annotations[param]} if param in annotations else {}
        self.__globals__ = getattr(fn, "__globals__", {})


def _parameters(fn: Callable[..., Any]) -> list[str]:
    """The names ``inspect.signature`` would list, from the code object where the
    function is a plain one (the signature machinery is slow to start)."""
    code = getattr(fn, "__code__", None)
    if code is None or hasattr(fn, "__wrapped__"):
        return list(inspect.signature(fn).parameters)
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])


def _annotated_types(fn: Callable[..., Any]) -> tuple[object, ...]:
    params = _parameters(fn)
    if len(params) != 2:
        raise TypeError(f"handler {fn.__qualname__} must take (self, message)")
    hint = typing.get_type_hints(_MessageHint(fn, params[1])).get(params[1])
    if hint is None:
        raise TypeError(f"handler {fn.__qualname__} needs a type annotation on its message")
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(hint)
    return (hint,)


class DispatchTable:
    """Per class: the handler function of each message type, and which run concurrently."""

    __slots__ = ("concurrent", "functions")

    def __init__(self, functions: dict[type, HandlerFunction], concurrent: frozenset[type]):
        self.functions = functions
        self.concurrent = concurrent


def dispatch_table(cls: type[Actor]) -> DispatchTable:
    """The dispatch table of ``cls``, computed once and cached on it.

    Built lazily (on first spawn) so that annotations may name classes defined later
    in the module. Subclasses override both methods and type registrations. One
    table is shared by every instance of the class, which keeps idle actors small.
    """
    cached = cls.__dict__.get(_TABLE_ATTR)
    if cached is not None:
        return cached
    names: dict[type, str] = {}
    concurrent: set[type] = set()
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            declaration = getattr(member, _HANDLER_ATTR, None)
            if not isinstance(declaration, _Declaration):
                continue
            for message_type in declaration.types or _annotated_types(member):
                if not (
                    isinstance(message_type, type) and issubclass(message_type, msgspec.Struct)
                ):
                    raise TypeError(
                        f"{cls.__qualname__}.{name} handles {message_type!r}, "
                        "but messages must be msgspec Structs"
                    )
                names[message_type] = name
                if declaration.concurrent:
                    concurrent.add(message_type)
                else:
                    concurrent.discard(message_type)
    functions = {message_type: getattr(cls, name) for message_type, name in names.items()}
    table = DispatchTable(functions, frozenset(concurrent))
    setattr(cls, _TABLE_ATTR, table)
    return table


class Actor:
    """Base class of every actor.

    Subclasses declare handlers with :func:`handler` and may override the lifecycle
    hooks. ``self.ctx`` (set by the kernel before ``on_start``) is the actor's
    :class:`~actors.kernel.cell.Cell`: its address, its ref, and the means to spawn
    children, stop them and own OS processes.
    """

    mailbox_size: int = 64
    """Capacity of the mailbox; ``tell`` waits while it is full (a class may set
    its own, an instance too, before it is spawned)."""
    restart_policy: ClassVar[RestartPolicy | None] = None
    """Restart in place on failure (one-for-one); a spawn may give its own."""

    ctx: Cell

    async def on_start(self) -> None:
        """Runs before the actor is reachable; raising here fails the spawn."""

    async def on_stop(self) -> None:
        """Runs after the mailbox is drained and every child has stopped."""

    async def on_failure(self, error: Exception) -> None:
        """Runs after the actor failed (its tasks and children are gone), before it
        is restarted or reported to its parent: the place to tell those waiting on
        it. Bounded by the runtime's grace period; must not rely on its nursery."""

    @handler
    async def on_child_failed(self, message: ChildFailed) -> None:
        """Default: log it. Override to turn a child's failure into a result."""
        log.warning(
            "%s: child %s failed: %s: %s",
            self.ctx.address,
            message.address,
            message.error_type,
            message.message,
        )
