"""Every ``python`` and ``sh`` block of README.md and docs/*.md runs, as a user would
run it (issue 31): python blocks as programs (one that defines ``test_*``
functions under pytest), sh blocks under ``bash -e -o pipefail``, each in a fresh
git checkout with a change in it (for ``git diff``), its own HOME, config and data
directories, the installed ``troupe`` first on PATH, stdin from /dev/null, and the
variables the README documents pointing at one scripted provider (``troupe
mock-llm``) for the whole module: ``OPENAI_API_KEY``/``OPENAI_BASE_URL``, and the
same for Anthropic and Gemini. Ollama's URL in the local-model tour
(``http://localhost:11434``) stands for a local model server: the scripted one's.

A block that cannot run here says so just above it, with its reason, in an HTML
comment: ``<!-- doc-test: skip: REASON -->`` (an installer, a server that runs until
stopped, a host or daemon that is not here). The list of skips is kept short and
each names what covers the block instead. A block that is a file's content rather
than a program (``<!-- file: PATH -->`` above it, as docs/hooks.md's hook scripts)
is written out and run, with the page's other files, by a test that reads its page
(checked here: such a test exists for every page that has file blocks). The blocks
run concurrently, a few at a time; the other kinds of block (TOML, JSON, YAML, the
commands parsing) are checked by tests/cli/test_doc_blocks.py.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.conftest import KEYS, REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
SKIP = re.compile(r"<!-- doc-test: skip: (?P<reason>.+?) -->")
FILE = re.compile(r"<!-- file: (?P<path>\S+) -->")
RUNNABLE = ("python", "sh")
MAX_SKIPS = 10
BLOCK_GUARD = 600
"""Seconds one block may take before it counts as hung (never a timing assertion)."""
LOCAL_MODEL = "http://localhost:11434"
PARALLEL = 4


@dataclass(frozen=True)
class Block:
    where: str
    kind: str
    code: str
    skip: str | None
    file: str | None = None


def blocks() -> list[Block]:
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            if match.group(2) not in RUNNABLE:
                continue
            indent = len(match.group(1))
            code = "\n".join(line[indent:] for line in match.group(3).splitlines()) + "\n"
            before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
            marker = SKIP.search(before)
            line = text[: match.start()].count("\n") + 1
            where = f"{path.relative_to(REPO)}:{line}"
            file = FILE.search(before)
            found.append(
                Block(
                    where, match.group(2), code, marker and marker["reason"], file and file["path"]
                )
            )
    return found


BLOCKS = blocks()
TO_RUN = [block for block in BLOCKS if block.skip is None and block.file is None]


@dataclass(frozen=True)
class Ran:
    done: subprocess.CompletedProcess[str] | None
    seconds: float


def is_test_module(code: str) -> bool:
    return any(
        isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name.startswith("test_")
        for node in ast.parse(code).body
    )


def checkout(root: Path) -> Path:
    """A git repository with one commit and an uncommitted change."""
    work = root / "work"
    work.mkdir(parents=True)
    (work / "app.py").write_text("print('hello')\n")
    git = ["git", "-c", "user.name=Doc Test", "-c", "user.email=doc@test.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "app.py"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=work, check=True)
    (work / "app.py").write_text("print('hello, world')\n")
    return work


def environment(root: Path, provider: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.startswith("PYTEST")}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "share"),
        TROUPE_DATA_DIR=str(root / "data"),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO),
        NO_COLOR="1",
        OPENAI_API_KEY="sk-doc-test",
        OPENAI_BASE_URL=provider,
        ANTHROPIC_API_KEY="sk-ant-doc-test",
        ANTHROPIC_BASE_URL=provider,
        GEMINI_API_KEY="doc-test",
        GEMINI_BASE_URL=provider,
    )
    for directory in ("home", "config", "share", "data"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    return env


def run_block(block: Block, root: Path, provider: str) -> Ran:
    started = time.monotonic()
    work = checkout(root)
    env = environment(root, provider)
    code = block.code.replace(LOCAL_MODEL, provider)
    if block.kind == "sh":
        argv = ["bash", "-e", "-o", "pipefail", "-c", code]
    else:
        program = root / ("test_block.py" if is_test_module(code) else "block.py")
        program.write_text(code)
        argv = [sys.executable, str(program)]
        if is_test_module(code):
            argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-o", "trio_mode=true", "--rootdir", str(root), str(program)]  # fmt: skip
    try:
        done = subprocess.run(
            argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=BLOCK_GUARD,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        done = None
    return Ran(done, time.monotonic() - started)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``troupe mock-llm``: every request gets a short answer, as often as asked."""
    script = tmp_path_factory.mktemp("mock") / "script.yaml"
    script.write_text("turns:\n  - text: 'Done: the doc block ran.'\nrepeat: true\n")
    mock = subprocess.Popen(
        [sys.executable, "-m", "actors.cli", "mock-llm", "--script", str(script)],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert mock.stdout is not None
    url = mock.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    yield url
    mock.terminate()
    mock.wait()


@pytest.fixture(scope="module")
def ran(provider: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """Every runnable block, run once, a few at a time; the total is printed."""
    started = time.monotonic()
    longest_first = sorted(TO_RUN, key=lambda block: -block.code.count("troupe "))
    roots = [tmp_path_factory.mktemp("block") for _ in longest_first]
    with ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(lambda b, r: run_block(b, r, provider), longest_first, roots))
    total = time.monotonic() - started
    print(f"\n{len(TO_RUN)} doc blocks ran in {total:.1f} s ({PARALLEL} at a time)")
    for block, result in zip(longest_first, results, strict=True):
        print(f"  {block.where}: {result.seconds:.1f} s")
    return {block.where: result for block, result in zip(longest_first, results, strict=True)}


@pytest.mark.parametrize("block", TO_RUN, ids=[b.where for b in TO_RUN])
def test_the_block_runs(block: Block, ran: dict[str, Ran]) -> None:
    result = ran[block.where]
    assert result.done is not None, f"{block.where} still running after {BLOCK_GUARD} s"
    done = result.done
    assert done.returncode == 0, (
        f"{block.where} exited {done.returncode}:\n{block.code}\n"
        f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr


def test_the_skips_are_few_and_each_says_why() -> None:
    skipped = [block for block in BLOCKS if block.skip is not None]
    assert len(skipped) <= MAX_SKIPS, [b.where for b in skipped]
    for block in skipped:
        assert block.skip is not None and len(block.skip.split()) >= 4, block.where
    assert len(TO_RUN) >= 12, "most blocks run"
    for path in DOCS:  # a marker not just above a block would silently skip nothing
        text = path.read_text()
        for marker in SKIP.finditer(text):
            after = text[marker.end() :].lstrip("\n")
            assert after.startswith("```"), f"{path.name}: a skip marker is not above a block"


def test_every_page_with_file_blocks_has_a_test_that_runs_them() -> None:
    pages = {block.where.rsplit(":", 1)[0] for block in BLOCKS if block.file is not None}
    sources = [path.read_text() for path in (REPO / "tests").rglob("test_*.py")]
    for page in pages:
        name = Path(page).name
        # tests/docs_files.plant writes a page's <!-- file: --> blocks out
        assert any(name in source and "docs_files import plant" in source for source in sources), (
            f"{page} has <!-- file: --> blocks but no test writes them out and runs them"
        )
