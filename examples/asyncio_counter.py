import asyncio

import msgspec

from actors import Actor, handler
from actors.embed import RuntimeThread


class Add(msgspec.Struct, frozen=True):
    value: int


class Total(msgspec.Struct, frozen=True):
    pass


class Counter(Actor):  # an ordinary actor: it runs on trio, on the runtime's thread
    def __init__(self) -> None:
        self.total = 0

    @handler
    async def add(self, message: Add) -> None:
        self.total += message.value

    @handler
    async def report(self, message: Total) -> int:
        return self.total


async def main() -> None:
    async with RuntimeThread() as runtime:  # trio on its own thread; exit runs the ladder
        counter = await runtime.spawn(Counter(), name="counters/c-1")
        await counter.tell(Add(40))  # awaits on asyncio's loop, never blocks it
        await counter.tell(Add(2))
        print("total:", await counter.ask(Total(), timeout=5))


asyncio.run(main())
