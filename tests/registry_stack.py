"""A server's session registry on a real store, without the server around it: for
tests that put the registry or a subscription at one exact moment of a store call
(tests/fleet/test_load_race.py, tests/wire/test_replay_after_outage.py,
tests/fleet/test_forward_take_over.py)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import trio

from actors.kernel import Runtime
from actors.server.environments import Environments
from actors.server.leftovers import process_ledger
from actors.server.models import Models, ModelSettings
from actors.server.registry import SessionRegistry
from actors.store import Store, open_store
from protocol.session import SessionConfig


@asynccontextmanager
async def registry_on_store(
    data_dir: Path, store_setting: str = ""
) -> AsyncIterator[tuple[SessionRegistry, Store]]:
    """The registry and its store, as ``troupe serve`` makes them, for the block
    (``store_setting``: a ``postgresql://`` URL, or empty for SQLite in ``data_dir``)."""
    async with (
        open_store(data_dir, store_setting) as store,
        Runtime() as runtime,
        trio.open_nursery() as nursery,
    ):
        environments = Environments(runtime, data_dir, store, process_ledger(data_dir))
        models = Models(runtime, ModelSettings())
        yield SessionRegistry(runtime, store, environments, models, nursery), store
        nursery.cancel_scope.cancel()


def store_session(store: Store, session_id: str, working_dir: Path) -> bytes:
    """Queue a stored session's row (the local environment, the default config);
    returns the config as stored."""
    encoded = msgspec.json.encode(SessionConfig())
    store.put_session(
        session_id, "openai", "gpt", "/environments/local", str(working_dir), encoded,
        created=time.time(),
    )  # fmt: skip
    return encoded
