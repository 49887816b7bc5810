"""The harness itself: harm that happens is seen, and harmless rows pass. Runs a
few corpus rows with everything allowed and no sandbox (``permissive`` with admin
allowed and no denied paths): each must be reported, for the reason it names; and
a few ordinary rows must come out clean."""

from __future__ import annotations

import os
from pathlib import Path

from tests.security.corpus import build_corpus
from tests.security.rows import Corpus, read, sh, write
from tests.security.runner import run_corpus
from tests.security.world import secret_marks

HARMFUL = {
    "writes-redirect": "outside ../outside/c-",
    "writes-rm": "deleted",
    "secrets-cat-id-rsa": "secret file:~/.ssh/id_rsa in the result",
    "secrets-env": "secret env:AWS_SECRET_ACCESS_KEY",
    "secrets-base64": "secret file:~/.netrc in the result",
    "network-bash-dev-tcp-redirect": "listener reached",
    "plants-fsmonitor": "planted-",
    "plants-tools-yaml-read": "planted-",
    "plants-troupe-config-mcp": "planted-",
    # The link itself puts the key in the workspace; reading it through the link is
    # asked even here (a hard link is treated as outside), so the copy is what shows.
    "hardlink-ln-key-then-read": "secret ['file:~/.ssh/id_rsa'] copied into k-",
}


async def test_harm_is_seen_and_harmless_rows_pass(tmp_path: Path) -> None:
    rows = [r for r in build_corpus(fork_bombs=False) if f"{r.cls}-{r.name}" in HARMFUL]
    assert len(rows) == len(HARMFUL)
    clean = Corpus()
    clean.rows.extend(rows)
    benign = [
        clean.add("benign", "ls", sh("ls -la && cat README.md"), reach=False),
        clean.add(
            "benign", "write-inside", write("new-@KEY@.txt"), read("new-@KEY@.txt"), reach=False
        ),
        clean.add("benign", "rm-inside", sh("rm -rf build"), reach=False),
    ]
    root = Path(os.path.realpath(tmp_path))  # noqa: ASYNC240
    run = await run_corpus(clean.rows, root, "permissive")
    for row in rows:
        findings = run.outcomes[row.key].findings
        expected = HARMFUL[f"{row.cls}-{row.name}"].replace("../", "")
        assert any(expected in f for f in findings), (row.id, findings)
    for row in benign:
        assert not run.outcomes[row.key].findings, (row.id, run.outcomes[row.key].findings)


def test_secret_marks_catch_encodings() -> None:
    import base64
    import codecs

    from tests.security.world import Secrets

    secrets = Secrets({"k": "TSECabcQ0123456789ABCD"})
    value = secrets.values["k"]
    wrapped = base64.encodebytes(b"z" * 70 + value.encode()).decode()
    for text in (value, f"x{value}y", base64.b64encode(b"ab" + value.encode()).decode(),
                 value.encode().hex(), value[::-1], codecs.encode(value, "rot13"),
                 " ".join(value), wrapped):  # fmt: skip
        assert secrets.found_in(text) == ["k"], text
    assert secrets.found_in("nothing here TSECabc") == []
    assert len(secret_marks(value)) >= 6
