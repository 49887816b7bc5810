"""docs/extending.md, "Add an environment kind", its built-in way, followed on copies
of the project: docs/environment-kinds.md's toy kind is planted as the page shows
it, its spec moves into ``protocol/environment_specs.py`` and joins
``AnyEnvironmentSpec``, and its ``KIND`` joins ``builtin_kinds()`` in
``environments/builtin_kinds.py``. A real server then takes it over the WebSocket
(kind_program.py). The embedder's way, ``Kinds([*builtin_kinds(), KIND])`` with no
file of the project changed, is tests/environments/test_kind_example.py."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_files import plant
from tests.extending.patching import REPO, copy_packages, edit, run_program

KINDS_PAGE = REPO / "docs" / "environment-kinds.md"
UNION = re.compile(r"^AnyEnvironmentSpec = .*$", re.MULTILINE)
BUILTIN = re.compile(r"return Kinds\(\[(.*)\]\)")
"""The union of the specs the wire knows, and the list of built-in kinds."""
SPEC = re.compile(r"^class ProcessSpec\(.*?(?=^\S)", re.DOTALL | re.MULTILINE)


def follow_the_recipe(root: Path) -> None:
    copy_packages(root, "protocol", "environments")
    assert sorted(plant(KINDS_PAGE, root)) == ["toykind/environment.py", "toykind/kind.py"]
    kind = root / "toykind" / "kind.py"
    spec = SPEC.search(kind.read_text())
    assert spec is not None, "the page's kind.py defines ProcessSpec"
    edit(kind, spec.group(0), "")  # the spec moves to the protocol, where the wire sees it
    edit(kind, "from protocol.environment_specs import EnvironmentSpec",
         "from protocol.environment_specs import ProcessSpec")  # fmt: skip
    specs = root / "protocol" / "environment_specs.py"
    union = UNION.search(specs.read_text())
    assert union is not None
    edit(specs, union.group(0), f"{spec.group(0).rstrip()}\n\n\n{union.group(0)} | ProcessSpec")
    builtin = root / "environments" / "builtin_kinds.py"
    registry = "from environments.kinds import Kinds"
    edit(builtin, registry, f"{registry}\nfrom toykind.kind import KIND as PROCESS")
    kinds = BUILTIN.search(builtin.read_text())
    assert kinds is not None
    edit(builtin, kinds.group(0), f"return Kinds([{kinds.group(1)}, PROCESS])")


def test_a_built_in_kind_is_added_over_the_wire_and_kept(tmp_path: Path) -> None:
    follow_the_recipe(tmp_path)
    out = run_program(tmp_path, "-m", "tests.extending.kind_program", str(tmp_path)).stdout
    box = tmp_path / "box"
    assert "refused: invalid_request: root must be an absolute path" in out, out
    assert "added: /environments/process/toy process" in out, out
    assert f"ran: 'hi\\n{box}\\n' 0" in out, out
    assert "('/environments/process/toy', 'process')" in out.split("after a restart:")[1], out
    assert f"ran again: '{box}\\n'" in out, out
