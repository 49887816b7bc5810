import trio

from actors import Runtime
from actors.models import endpoint_from_env, open_gateway
from actors.session import SessionActor, Steer, Submit, Subscribe, anthropic_profile
from environments import LocalEnvironment


async def main() -> None:
    endpoint = endpoint_from_env("anthropic")  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
    async with Runtime() as runtime, open_gateway(runtime, endpoint) as gateway:
        env = await runtime.spawn(LocalEnvironment("."), name="environments/local")
        session = await runtime.spawn(SessionActor(anthropic_profile(), env, gateway))
        events = await session.ask(Subscribe())  # an async iterator of events
        await session.tell(Submit("Fix the failing test in tests/test_parse.py"))
        await session.tell(Steer("Don't touch the public API."))  # after the current round
        async for event in events:
            print(event.seq, event.kind)
            if event.kind == "processing_end":
                break


trio.run(main)
