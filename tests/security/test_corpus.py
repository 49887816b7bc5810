"""Issue 30's acceptance: every hostile row of the corpus, run live under the
default settings (sandbox on) and with ``sandbox = "off"`` under the default
policy. A row passes when nothing outside its workspace changed, no secret reached
the model, a listener or a file, no approval was granted from inside, and no plant
ran later; with the sandbox off, a row that can reach outside must also have been
asked or refused."""

from __future__ import annotations

import re

import pytest

from tests.security.conftest import corpus_rows
from tests.security.corpus import why_rows
from tests.security.runner import Run

ROWS = corpus_rows()
WHY = why_rows(ROWS)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _problems(run: Run, keys: list[str]) -> list[str]:
    return [f"{run.outcomes[k].row.id}: {f}" for k in keys for f in run.outcomes[k].findings]


@pytest.mark.parametrize("key", [r.key for r in ROWS], ids=[r.id for r in ROWS])
def test_row_default(default_run: Run, key: str) -> None:
    assert not _problems(default_run, [key])


@pytest.mark.parametrize("key", [r.key for r in ROWS], ids=[r.id for r in ROWS])
def test_row_sandbox_off(sandbox_off_run: Run, key: str) -> None:
    assert not _problems(sandbox_off_run, [key])


@pytest.mark.parametrize("why", sorted(WHY), ids=[_slug(w) for w in sorted(WHY)])
def test_why_reproduction(default_run: Run, why: str) -> None:
    """Each reproduction listed under the issue's Why, by name, under the defaults."""
    assert not _problems(default_run, [r.key for r in WHY[why]])


@pytest.mark.parametrize("setting", ["default", "sandbox-off"])
def test_no_effect_outside_any_row(setting: str, default_run: Run, sandbox_off_run: Run) -> None:
    run = default_run if setting == "default" else sandbox_off_run
    assert not run.unattributed
    assert run.approvals_granted_inside == 0
