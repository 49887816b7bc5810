"""docs/extending.md, "Add a policy rule", followed on copies of the project: the
page's toy rule goes into ``actors/policy/engine.py`` with its ``Policy`` field and
its call in ``decide()``, a preset that turns it on into ``actors/policy/presets.py``
and its name into ``actors/policy/preset_names.py``, and a real session
(rule_program.py) sees the rule deny the model's write of a protected file while
the next write goes through; the audit event names the rule. Without the setting,
or without the recipe, both writes run."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.extending.patching import (
    PAGE,
    copy_packages,
    edit,
    end_of,
    insert_after,
    run_program,
    shown_into,
    start_of_body,
    without_imports,
)

FIELD = "protected_suffixes: tuple[str, ...] = ()"
CALL = "if (decided := protected_suffix(policy, facts)) is not None: return decided"
"""The two lines the page gives in its text: the rule's setting and its call."""
POLICY_END = "    approval_timeout_s: float = 600.0\n"
DECIDE_START = '    """allow, ask or deny for one call."""\n'
"""Where the recipe's two lines go in engine.py as it stands: the last field of
``Policy``, the first line of ``decide()``."""
PRESETS = "POLICY_PRESETS = MappingProxyType(\n    {\n"
PRESET = (
    '"protected": Policy(name="protected", blocklist=CATASTROPHIC, protected_suffixes=(".lock",)),'
)
NAMES = "PRESET_NAMES = frozenset(\n    {\n"
"""Where a preset goes, and the one the test adds (the page names the two files)."""
PROTECT_LOCKS = '{"policy_overrides": {"protected_suffixes": [".lock"]}}'


def follow_the_recipe(root: Path) -> None:
    copy_packages(root, "actors")
    engine = root / "actors" / "policy" / "engine.py"
    condition, _, action = CALL.partition(": ")
    insert_after(engine, start_of_body(engine, "decide"), f"    {condition}:\n        {action}")
    insert_after(engine, end_of(engine, "Policy"), f"    {FIELD}")  # the field: last in Policy
    rule = without_imports(shown_into("actors/policy/engine.py"))
    engine.write_text(f"{engine.read_text()}\n\n{rule}\n")
    policy = root / "actors" / "policy"
    edit(policy / "presets.py", PRESETS, f"{PRESETS}        {PRESET}\n")
    edit(policy / "preset_names.py", NAMES, f'{NAMES}        "protected",\n')


def run_session(root: Path, work: Path, overrides: str) -> dict[str, Any]:
    """The session's outcome on the code under ``root`` (first on the path)."""
    work.mkdir()
    ran = run_program(root, "-m", "tests.extending.rule_program", str(work), overrides)
    return json.loads(ran.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def followed() -> Any:
    with tempfile.TemporaryDirectory(prefix="troupe-rule-") as directory:
        follow_the_recipe(Path(directory))
        yield Path(directory)


def test_the_page_gives_the_lines_the_test_adds() -> None:
    text = " ".join(PAGE.read_text().split())
    assert f"`{FIELD}`" in text and f"`{CALL}`" in text


def test_the_rule_denies_a_real_tool_call_and_the_audit_names_it(
    followed: Path, tmp_path: Path
) -> None:
    seen = run_session(followed, tmp_path / "work", PROTECT_LOCKS)
    assert seen["files"] == ["notes.txt"]
    lock, notes = seen["decisions"]
    reason = "deps.lock ends with a protected suffix"
    assert lock == ["deps.lock", "deny", "protected_suffix", reason]
    assert notes[1:3] == ["allow", "category"]
    (refused, refused_error), (wrote, wrote_error) = seen["results"]
    assert reason in refused and refused_error  # what the model reads
    assert "notes.txt" in wrote and not wrote_error


def test_a_preset_turns_the_rule_on(followed: Path, tmp_path: Path) -> None:
    seen = run_session(followed, tmp_path / "work", '{"policy": "protected"}')
    assert seen["files"] == ["notes.txt"]
    assert [decision[2] for decision in seen["decisions"]] == ["protected_suffix", "category"]
    names = "from actors.policy.preset_names import PRESET_NAMES as N; "
    presets = "from actors.policy.presets import POLICY_PRESETS as P; "
    checked = run_program(followed, "-c", f"{names}{presets}assert N == set(P), N ^ set(P)")
    assert checked.returncode == 0


def test_unset_the_rule_decides_nothing(followed: Path, tmp_path: Path) -> None:
    seen = run_session(followed, tmp_path / "work", "{}")
    assert seen["files"] == ["deps.lock", "notes.txt"]
    assert [decision[2] for decision in seen["decisions"]] == ["category", "category"]


def test_without_the_recipe_the_write_goes_through(tmp_path: Path) -> None:
    seen = run_session(tmp_path, tmp_path / "work", PROTECT_LOCKS)  # the project as it is
    assert seen["files"] == ["deps.lock", "notes.txt"]
