"""The SSH check for hosts without python3 (environments/shell/exact.py): the shell
script that runs just before the SFTP operation, run here by a real bash."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from environments.errors import HardLinkRefused, LinkInPath
from environments.shell import exact


def check(path: Path, hard_links: bool = False) -> int:
    script = exact.check_script(str(path), hard_links)
    return subprocess.run(["bash", "-c", script], check=False).returncode


def test_the_fallback_check_refuses_links_on_the_way_and_hard_links(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "dir").mkdir()
    (real / "dir" / "f").write_text("x")
    (real / "via").symlink_to(real / "dir")
    (real / "shared").write_text("y")
    os.link(real / "shared", real / "h")
    assert check(real / "dir" / "f") == 0
    assert check(real / "dir" / "new") == 0  # missing: nothing to refuse
    assert check(real / "d i r*") == 0  # no word splitting or globbing
    assert isinstance(exact.check_refusal("p", check(real / "via" / "f")), LinkInPath)
    assert isinstance(exact.check_refusal("p", check(real / "via")), LinkInPath)
    assert isinstance(exact.check_refusal("p", check(real / "h")), HardLinkRefused)
    assert check(real / "h", hard_links=True) == 0
