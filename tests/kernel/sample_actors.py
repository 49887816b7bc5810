"""Small actors the kernel tests drive; real actors, nothing mocked."""

from __future__ import annotations

import msgspec
import trio

from actors.kernel import Actor, handler
from protocol.supervision import ChildFailed, ChildStopped


class Add(msgspec.Struct, frozen=True):
    value: int


class Total(msgspec.Struct, frozen=True):
    pass


class Received(msgspec.Struct, frozen=True):
    pass


class Boom(msgspec.Struct, frozen=True):
    text: str = "boom"


class Hang(msgspec.Struct, frozen=True):
    pass


class Unknown(msgspec.Struct, frozen=True):
    pass


class Recorder(Actor):
    """Keeps every value it is told, in arrival order; can be made to fail or hang."""

    def __init__(self, mailbox_size: int | None = None, gate: trio.Event | None = None) -> None:
        if mailbox_size is not None:
            self.mailbox_size = mailbox_size
        self.values: list[int] = []
        self.gate = gate

    @handler
    async def add(self, message: Add) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.values.append(message.value)

    @handler
    async def total(self, message: Total) -> int:
        return sum(self.values)

    @handler
    async def received(self, message: Received) -> list[int]:
        return list(self.values)

    @handler
    async def boom(self, message: Boom) -> None:
        raise RuntimeError(message.text)

    @handler
    async def hang(self, message: Hang) -> None:
        await trio.sleep_forever()


class Parent(Recorder):
    """A Recorder that also keeps the supervision notices it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.notices: list[ChildFailed | ChildStopped] = []
        self.notified = trio.Event()

    @handler
    async def on_child_failed(self, message: ChildFailed) -> None:
        self.notices.append(message)
        self.notified.set()

    @handler
    async def on_child_stopped(self, message: ChildStopped) -> None:
        self.notices.append(message)
        self.notified.set()


class StopLog(Actor):
    """Appends its address to a shared list when it stops, to observe ordering."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def on_stop(self) -> None:
        self.log.append(self.ctx.address)


class Stubborn(Actor):
    """Ignores the stop request: its on_stop never returns unless cancelled."""

    def __init__(self) -> None:
        self.cancelled = False

    async def on_stop(self) -> None:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled = True
            raise
