import msgspec
import trio

from actors import Actor, Runtime, handler


class Add(msgspec.Struct, frozen=True):
    value: int


class Total(msgspec.Struct, frozen=True):
    pass


class Counter(Actor):
    def __init__(self) -> None:
        self.total = 0

    @handler
    async def add(self, message: Add) -> None:
        self.total += message.value

    @handler
    async def report(self, message: Total) -> int:
        return self.total


async def main() -> None:
    async with Runtime() as runtime:  # shuts every actor down on exit
        counter = await runtime.spawn(Counter(), name="counters/c-1")
        await counter.tell(Add(40))  # waits only if the mailbox is full
        await counter.tell(Add(2))
        print("total:", await counter.ask(Total(), timeout=5))


trio.run(main)
