import msgspec
import trio

from actors import Actor, Runtime, handler


class Shout(msgspec.Struct, frozen=True):
    text: str


class Echo(Actor):
    @handler
    async def shout(self, message: Shout) -> str:
        return message.text.upper()


async def main() -> None:
    async with trio.open_nursery() as nursery:  # the host program's own nursery
        runtime = await nursery.start(Runtime().run)
        echo = await runtime.spawn(Echo(), name="echo")
        print("reply:", await runtime.ref("/echo").ask(Shout("hello"), timeout=5))
        await echo.ask(Shout("still here"))
        await runtime.shutdown()  # the ladder; run() then returns and so can the nursery


trio.run(main)
