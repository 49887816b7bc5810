"""One place per provider wire (issue #32): no product module outside the wires'
descriptors (``actors/provider_wires.py``) compares a wire's name or keeps a table
keyed by one. What differs between wires is a fact of the wire's descriptor, read
where it is needed, so adding a wire is its adapter plus its descriptor.

Checked over the source with ``ast``: a comparison (``==``, ``!=``, ``in``,
``not in``, a ``match`` case) with a wire's name in any spelling as a string
constant, or a dict literal keyed by one, is a finding unless the allow-list below
names the place and says why."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from actors.provider_wires import BUILTIN

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("actors", "environments", "protocol")


def _spellings() -> frozenset[str]:
    names: set[str] = set()
    for wire in BUILTIN:
        for name in (wire.name, wire.command_line or wire.name, *wire.spellings):
            names.update({name, name.replace("_", "-"), name.replace("-", "_")})
    return frozenset(names)


WIRE_NAMES = _spellings()

ALLOWED: dict[str, str] = {
    "actors/provider_wires.py": "the descriptors themselves",
}
"""Files (or folders, ending in /) where wire names may be compared, and why."""

ALLOWED_TABLES: dict[str, str] = {
    "actors/session/profiles.py": "PROFILES is keyed by profile names (openai, anthropic, "
    "gemini), which a wire's descriptor names as the profile it serves",
    "actors/mockllm/wires.py": "the scripted provider's own table of the wires it speaks, "
    "one entry per wire with its encoders and readers: it plays the providers' side and "
    "speaks each wire on its own (a mock that read the client's descriptors could not "
    "catch the client's mistakes), and its wires are not Troupe's (Bedrock InvokeModel is "
    "a wire to the mock, a platform to Troupe)",
}
"""Files where a dict keyed by these names is a table of something else, and why."""


def _constants(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {value for element in node.elts for value in _constants(element)}
    return set()


COMPARING = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def findings(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """(line, kind, source) of every comparison with a wire name and every table
    keyed by one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, COMPARING) for op in node.ops):
            named = set().union(*(_constants(side) for side in (node.left, *node.comparators)))
            if named & WIRE_NAMES:
                yield node.lineno, "comparison", ast.unparse(node)
        elif isinstance(node, ast.MatchValue) and _constants(node.value) & WIRE_NAMES:
            yield node.lineno, "comparison", f"case {ast.unparse(node.value)}"
        elif isinstance(node, ast.Dict):
            keys = {v for key in node.keys if key is not None for v in _constants(key)}
            if keys & WIRE_NAMES:
                yield node.lineno, "table", f"{{{', '.join(sorted(keys & WIRE_NAMES))}: ...}}"


def _allowed(path: str, kind: str) -> bool:
    if any(path == place or (place.endswith("/") and path.startswith(place)) for place in ALLOWED):
        return True
    return kind == "table" and path in ALLOWED_TABLES


def _product_files() -> Iterator[tuple[str, ast.AST]]:
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path))


def test_no_module_outside_the_descriptors_compares_a_wire_name() -> None:
    found = [
        f"{path}:{line}: {kind} {source}"
        for path, tree in _product_files()
        for line, kind, source in findings(tree)
        if not _allowed(path, kind)
    ]
    assert found == [], "read the wire's descriptor (actors/provider_wires.py) instead:\n" + (
        "\n".join(found)
    )


def test_every_allowed_place_is_still_there() -> None:
    """An allow-list entry whose place no longer names a wire goes, so it cannot
    hide a new one later."""
    hits = {path for path, tree in _product_files() if next(findings(tree), None)}
    for place in (*ALLOWED, *ALLOWED_TABLES):
        if place == "actors/provider_wires.py":
            continue  # the descriptors need not compare anything
        assert any(hit == place or hit.startswith(place) for hit in hits), place


def test_the_scan_sees_comparisons_memberships_cases_and_tables() -> None:
    source = """
if wire == "openai_chat": pass
if endpoint.wire != "gemini": pass
if name in ("openai-chat", "other"): pass
match wire:
    case "bedrock_converse": pass
TABLE = {"anthropic": 1}
if kind == "text": pass
OTHER = {"model": 1}
"""
    kinds = sorted((line, kind) for line, kind, _ in findings(ast.parse(source)))
    assert kinds == [
        (2, "comparison"),
        (3, "comparison"),
        (4, "comparison"),
        (6, "comparison"),
        (7, "table"),
    ]
