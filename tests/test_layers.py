"""The design's one rule about arrows, checked over the source: imports point down
only (protocol <- the actor kernel <- environments <- the rest of actors), and no
two modules, nor two of actors' packages, import each other in a circle. Every
import counts, also one inside a function (it runs, just later); only imports under
``if TYPE_CHECKING:`` do not, since they never run."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOP = ("protocol", "actors", "environments")


def modules(root: Path) -> dict[str, Path]:
    """Every module of the three top-level packages, by dotted name."""
    found = {}
    for path in sorted(root.glob("*/**/*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[0] not in TOP:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (i for child in node.orelse for i in _runtime_imports_of(child))
            continue
        yield from _runtime_imports_of(node)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _runtime_imports(node)


def imports(found: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (a name imported from a package
    counts as its submodule when there is one)."""

    def owner(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(t for a in node.names if (t := owner(a.name)))
                continue
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            for alias in node.names:
                target = owner(f"{base}.{alias.name}") or owner(base)
                if target:
                    targets.add(target)
        graph[name] = targets - {name}
    return graph


def floor(module: str) -> int:
    if module.split(".")[0] == "protocol":
        return 0
    if module == "actors.kernel" or module.startswith("actors.kernel."):
        return 1
    if module.split(".")[0] == "environments":
        return 2
    return 3


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same arrows between actors' packages (``actors.server``, ``actors.web``...)."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    result: dict[str, set[str]] = {}
    for source, targets in graph.items():
        if source.startswith("actors."):
            result.setdefault(package(source), set()).update(
                package(t)
                for t in targets
                if t.startswith("actors.") and package(t) != package(source)
            )
    return result


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return imports(modules(REPO))


def test_imports_point_down_only(graph: dict[str, set[str]]) -> None:
    upward = sorted(f"{source} -> {target}" for source, targets in graph.items()
                    for target in targets if floor(target) > floor(source))  # fmt: skip
    assert not upward


def test_no_two_modules_import_each_other_in_a_circle(graph: dict[str, set[str]]) -> None:
    assert not circles(graph)


def test_no_two_of_actors_packages_import_each_other(graph: dict[str, set[str]]) -> None:
    assert not circles(package_graph(graph))


def test_the_checks_see_an_upward_import_a_lazy_circle_and_skip_type_checking(
    tmp_path: Path,
) -> None:
    """The checks above can fail: on a small tree with each fault, they find it."""
    files = {
        "protocol/__init__.py": "",
        "protocol/words.py": "from environments.local import X\n",
        "environments/__init__.py": "",
        "environments/local.py": "def later():\n    from environments import remote\n",
        "environments/remote.py": "from . import local\n",
        "actors/__init__.py": "",
        "actors/kernel/__init__.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from actors.server import a\n",
        "actors/server/__init__.py": "",
        "actors/server/a.py": "from actors.web.b import page\n",
        "actors/web/__init__.py": "",
        "actors/web/b.py": "import actors.server.c\n",
        "actors/server/c.py": "import protocol.words\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    toy = imports(modules(tmp_path))
    assert toy["protocol.words"] == {"environments.local"} and floor("environments.local") == 2
    assert circles(toy) == [["environments.local", "environments.remote"]]
    assert toy["actors.kernel"] == set()
    assert circles(package_graph(toy)) == [["actors.server", "actors.web"]]


SCRIPTED = "actors.mockllm"
"""The scripted provider: a tool for tests, benchmarks and the demo, in a room of its
own that no product module imports (the demo runs it as a process and talks HTTP)."""
NAMES_THE_SCRIPTED_COMMAND = {"actors.cli"}
"""The CLI's table of commands found by name (``troupe mock-llm``)."""


def _is_scripted(name: str) -> bool:
    return name == SCRIPTED or name.startswith(SCRIPTED + ".")


def scripted_uses(found: dict[str, Path]) -> list[str]:
    """Product modules that import the scripted provider (any import, also a lazy one
    or one under ``TYPE_CHECKING``), or name it as a string outside the CLI's table."""
    uses = []
    for name, path in found.items():
        if _is_scripted(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                uses += [f"{name} imports {a.name}" for a in node.names if _is_scripted(a.name)]
            elif isinstance(node, ast.ImportFrom) and _is_scripted(node.module or ""):
                uses.append(f"{name} imports from {node.module}")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _is_scripted(node.value)
                and name not in NAMES_THE_SCRIPTED_COMMAND
            ):
                uses.append(f"{name} names {node.value!r}")
    return sorted(uses)


def test_no_product_module_imports_the_scripted_provider() -> None:
    assert not scripted_uses(modules(REPO))


def test_the_check_sees_each_way_of_reaching_the_scripted_provider(tmp_path: Path) -> None:
    files = {
        "actors/__init__.py": "",
        "actors/mockllm/__init__.py": "from actors.mockllm.server import serve\n",
        "actors/mockllm/server.py": "import actors.kernel\n",
        "actors/commands/__init__.py": "",
        "actors/commands/demo.py": "def later():\n    from actors.mockllm import serve\n",
        "actors/commands/bench.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import actors.mockllm.server\n",
        "actors/commands/sly.py": "import importlib\nimportlib.import_module('actors.mockllm')\n",
        "actors/cli.py": "ELSEWHERE = {'mock-llm': 'actors.mockllm.main'}\n",
        "actors/kernel.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert scripted_uses(modules(tmp_path)) == [
        "actors.commands.bench imports actors.mockllm.server",
        "actors.commands.demo imports from actors.mockllm",
        "actors.commands.sly names 'actors.mockllm'",
    ]
