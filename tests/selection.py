"""How the suite is run, decided in one place (tests/conftest.py calls it):

- ``style``: ruff and pyright (tests/test_style.py) are a CI step of their own
  (``pytest -m style``, see .ci/run), so the main run leaves them out unless its
  ``-m`` names them or a path names their file.
- ``slow``: tests that boot something heavy (a dockerd, chromium, PostgreSQL, the
  security corpus, a ``troupe`` process) or that take long by what they check.
  ``pytest -m "not slow"`` is the inner loop; the full run keeps every test.
- pytest-xdist runs with ``--dist loadfile``: the tests of one file stay on one
  worker, so a module-scoped fixture (every doc block run at once, the codex
  differential) or the session's security corpus run is set up once, not on each
  worker. (``loadgroup`` would group finer, but xdist 3.8 writes the group into a
  node id pytest 9.2 no longer reads, so its groups are silently ignored.)
"""

from __future__ import annotations

import os

import pytest

STYLE_FILE = "tests/test_style.py"

SLOW_FIXTURES = frozenset(
    {
        "docker", "browser", "page", "start_web", "default_run", "sandbox_off_run",
        "postgres", "postgres_url", "sshd", "sshd_with", "home", "troupe_serve",
    }
)  # fmt: skip
"""Fixtures that boot a daemon, a browser, an sshd, PostgreSQL, a corpus run, or that
run ``troupe`` as a process (``home``: tests/cli/conftest.py)."""

SLOW_PARAMS = {"env": {"docker", "ssh-root", "ssh-user"}, "store_setting": {"postgresql"}}
"""Parametrized fixtures whose value reaches for the same heavy parts at run time
(``request.getfixturevalue``, which ``item.fixturenames`` cannot see)."""

SLOW_PATHS = (
    "tests/acp/",  # the official ACP client on Node.js driving `troupe acp`
    "tests/embed/",  # asyncio hosts, `troupe serve` and `troupe mock-llm` processes
    "tests/web/",  # chromium
    "tests/security/",  # the corpus and its worlds, through the real sandbox
    "tests/fuzz/",  # hypothesis against a real server
    "tests/harness/",  # batch runs of `troupe run`
    "tests/cli/",  # `troupe` as a process
    "tests/tools/test_apply_patch_differential.py",  # the real codex
    "tests/test_demo.py",  # `troupe demo`
    "tests/test_selection.py",  # pytest --collect-only as a process
)
"""Files and directories whose tests each take seconds by what they do (from
``--durations``): a process started per test, a browser, a real kill."""


def _wants_style(config: pytest.Config) -> bool:
    markexpr = config.option.markexpr or ""
    if "style" in markexpr:
        return True
    return any(STYLE_FILE in os.path.abspath(arg).replace(os.sep, "/") for arg in config.args)


def _uses(item: pytest.Item) -> set[str]:
    """The fixtures an item reaches for, including those chosen by a parameter."""
    used: set[str] = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for name, values in SLOW_PARAMS.items():
            value = callspec.params.get(name)
            if value in values:
                used.add(f"{name}={value}")
        if callspec.params.get("env") == "docker":
            used.add("docker")
    return used


def _is_slow(item: pytest.Item, used: set[str]) -> bool:
    if used & SLOW_FIXTURES or any("=" in name for name in used):
        return True
    return item.nodeid.startswith(SLOW_PATHS)


def mark_and_select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow``, and leave the style checks out of a main run."""
    wants_style = _wants_style(config)
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker("style") is not None and not wants_style:
            deselected.append(item)
            continue
        used = _uses(item)
        if _is_slow(item, used):
            item.add_marker(pytest.mark.slow)
        kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
