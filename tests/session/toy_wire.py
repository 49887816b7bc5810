"""A toy provider wire, as another package would add one: an adapter and its
descriptor, nothing else. It speaks Chat Completions under the name ``toy_chat``
and marks every request it builds, so a test can tell it was this adapter that
spoke. Offered under the ``troupe.wires`` entry-point group by the test that
installs it (see test_toy_wire.py); nothing in Troupe names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actors.models.adapter import HttpCall
from actors.models.openai_chat import OpenAIChatAdapter
from actors.provider_wires import WireDescriptor

MARK = "x-toy-wire"


class ToyAdapter(OpenAIChatAdapter):
    def build(self, request: Any, *, stream: bool) -> HttpCall:
        call = super().build(request, stream=stream)
        return HttpCall(call.method, call.url, {**call.headers, MARK: "spoken"}, call.body)


DESCRIPTOR = WireDescriptor(
    "toy_chat",
    "tests.session.toy_wire:ToyAdapter",
    "https://toy.invalid/v1",
    ("TOY_API_KEY", "TOY_TOKEN"),
    "TOY_BASE_URL",
    command_line="toy-chat",
    spellings=("toy",),
)


def install(site: Path) -> Path:
    """The toy package installed in ``site`` as pip leaves a distribution: its
    ``.dist-info`` with the entry point (the module itself is this file)."""
    info = site / "toy_wire-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-wire\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[troupe.wires]\ntoy = tests.session.toy_wire:DESCRIPTOR\n"
    )
    return site
