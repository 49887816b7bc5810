"""One environment fixture, parametrized over every kind the behaviour suite covers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from actors.kernel import ActorRef, Runtime
from environments.local import LocalEnvironment


@dataclass(frozen=True)
class EnvUnderTest:
    """An environment actor plus where its working directory is on this host."""

    kind: str
    ref: ActorRef
    workdir: Path


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(grace=2.0) as rt:
        yield rt


@pytest.fixture(params=["local"])
async def env(request: pytest.FixtureRequest, runtime: Runtime, tmp_path: Path) -> EnvUnderTest:
    workdir = tmp_path / "work"
    workdir.mkdir()
    ref = await runtime.spawn(LocalEnvironment(workdir), name="environments/local")
    return EnvUnderTest("local", ref, workdir)
