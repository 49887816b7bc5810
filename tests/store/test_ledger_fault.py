"""The process ledger is one of the small files beside the store (issue 37): a
group record that cannot be written is the store's typed fault, not only a line
in the log. A real ``troupe serve``, on each backend, whose ledger directory is
replaced by a file mid-session (every record then fails with ENOTDIR, whatever
the user; the store itself can still write): the server stays up, the subscriber
is told ``store_unavailable`` naming the ledger, the running input stops as
interrupted, a new input is refused with the same typed error; once the
directory is back, ``store_available`` comes by itself and the session takes a
new input, its command recorded again."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CreateSession, InterruptSession, SubmitInput
from tests.wire.conftest import events_until, shell_turns, subscribe, troupe_serve
from tests.wire.store_fault_helpers import refused


@pytest.mark.parametrize("store_setting", ["sqlite", "postgresql"], indirect=True)
async def test_a_ledger_that_cannot_be_written_is_the_store_s_typed_fault(
    tmp_path: Path, store_setting: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    work, data_dir = root / "work", root / "data"
    work.mkdir()
    script = msgspec.convert(shell_turns(*["sleep 0.1; echo step"] * 40), Script)
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(data_dir, work, mock.base_url, store_setting) as serve,
    ):
        token = (data_dir / "token").read_text().strip()
        async with connect(serve.url, token) as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            ledger = data_dir / "process-groups"
            shutil.rmtree(ledger)
            ledger.write_text("not a directory\n")  # no record can go in it now
            await client.request(SubmitInput, session=session, text="keep going")
            received = await events_until(client, "store_unavailable")
            assert "process ledger" in received[-1].data["message"]
            await refused(client, SubmitInput, session=session, text="more")
            assert serve.process.returncode is None

            ledger.unlink()
            ledger.mkdir()
            await events_until(client, "store_available", into=received)
            await events_until(client, "processing_end", into=received)
            kinds = [event.kind for event in received]
            assert "interrupted" in kinds, " ".join(kinds)

            await client.request(SubmitInput, session=session, text="after")
            await events_until(client, "tool_call_end", into=received)
            await client.request(InterruptSession, session=session)
            await events_until(client, "processing_end", into=received)
        assert serve.process.returncode is None
