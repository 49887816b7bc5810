"""tell, ask, backpressure, deadlines and errors for messages between actors."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from actors.kernel import (
    ActorFailedError,
    AskTimeoutError,
    DeadActorError,
    InvalidAddressError,
    Runtime,
    UnhandledMessageError,
    UnknownAddressError,
)
from tests.kernel.sample_actors import Add, Boom, Hang, Received, Recorder, Total, Unknown

HANG_GUARD = 10


async def test_tell_then_ask_sees_every_tell() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder(), name="recorder")
        for value in range(1, 11):
            await ref.tell(Add(value))
        assert await ref.ask(Total()) == 55
        assert rt.ref("/recorder").address == "/recorder"


async def test_backpressure_delivers_100k_messages_in_order_through_mailbox_of_16() -> None:
    count = 100_000
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder(mailbox_size=16))
        with trio.fail_after(HANG_GUARD * 3):
            for value in range(count):
                await ref.tell(Add(value))
            received = await ref.ask(Received())
    assert received == list(range(count))


async def test_tell_waits_while_the_mailbox_is_full() -> None:
    gate = trio.Event()
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder(mailbox_size=2, gate=gate))
        await ref.tell(Add(0))  # taken by the handler, which waits on the gate
        await trio.testing.wait_all_tasks_blocked()
        await ref.tell(Add(1))
        await ref.tell(Add(2))  # the mailbox is now full
        delivered = trio.Event()

        async def third_tell() -> None:
            await ref.tell(Add(3))
            delivered.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(third_tell)
            await trio.testing.wait_all_tasks_blocked()
            assert not delivered.is_set(), "tell must wait while the mailbox is full"
            gate.set()
        assert await ref.ask(Received()) == [0, 1, 2, 3]


async def test_ask_past_its_deadline_raises_a_typed_timeout() -> None:
    async with Runtime(grace=0.1) as rt:
        ref = await rt.spawn(Recorder(), name="slow")
        await ref.tell(Hang())
        with trio.fail_after(HANG_GUARD), pytest.raises(AskTimeoutError) as caught:
            await ref.ask(Total(), timeout=0.05)
        assert caught.value.address == "/slow"
        assert caught.value.message_type == "Total"


async def test_unknown_address_fails_at_once() -> None:
    async with Runtime() as rt:
        with pytest.raises(UnknownAddressError):
            rt.ref("/sessions/none")
        with pytest.raises(InvalidAddressError):
            rt.ref("/bad name/")


async def test_dead_actor_fails_at_once_for_tell_and_ask() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder(), name="short-lived")
        await rt.stop(ref)
        assert not ref.alive
        with trio.fail_after(HANG_GUARD):
            with pytest.raises(DeadActorError):
                await ref.tell(Add(1))
            with pytest.raises(DeadActorError):
                await ref.ask(Total())
        with pytest.raises(UnknownAddressError):
            rt.ref("/short-lived")


async def test_sender_blocked_on_a_full_mailbox_is_released_when_the_actor_stops() -> None:
    gate = trio.Event()
    async with Runtime(grace=0.1) as rt:
        ref = await rt.spawn(Recorder(mailbox_size=1, gate=gate))
        await ref.tell(Add(0))
        await trio.testing.wait_all_tasks_blocked()
        await ref.tell(Add(1))
        outcome: list[BaseException] = []

        async def blocked_sender() -> None:
            try:
                await ref.tell(Add(2))
            except DeadActorError as exc:
                outcome.append(exc)

        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(blocked_sender)
                await trio.testing.wait_all_tasks_blocked()
                await rt.stop(ref)
        assert len(outcome) == 1


async def test_queued_ask_of_a_cancelled_actor_gets_a_dead_actor_error() -> None:
    async with Runtime(grace=0.05) as rt:
        ref = await rt.spawn(Recorder(), name="stuck")
        await ref.tell(Hang())
        errors: list[BaseException] = []

        async def queued_ask() -> None:
            try:
                await ref.ask(Total(), timeout=HANG_GUARD)
            except DeadActorError as exc:
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(queued_ask)
            await trio.testing.wait_all_tasks_blocked()
            await rt.stop(ref)
        assert len(errors) == 1


async def test_message_without_handler_is_refused_with_a_typed_error() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder())
        with pytest.raises(UnhandledMessageError):
            await ref.tell(Unknown())
        with pytest.raises(UnhandledMessageError):
            await ref.ask(Unknown())
        assert await ref.ask(Total()) == 0


async def test_handler_failure_answers_the_ask_with_the_error_and_stops_the_actor() -> None:
    async with Runtime() as rt:
        ref = await rt.spawn(Recorder(), name="fragile")
        with pytest.raises(ActorFailedError) as caught:
            await ref.ask(Boom("disk on fire"))
        assert caught.value.error_type == "RuntimeError"
        assert caught.value.message == "disk on fire"
        with trio.fail_after(HANG_GUARD):
            await ref.wait_stopped()
        with pytest.raises(DeadActorError):
            await ref.tell(Add(1))
