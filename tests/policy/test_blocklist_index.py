"""The blocklist index answers what matching every pattern in turn would answer:
the first pattern in list order that any invocation matches."""

from __future__ import annotations

import fnmatch
import itertools

from actors.policy.blocklist import first_match, matches
from actors.policy.presets import APPROVAL_COMMANDS, CATASTROPHIC, SEED_BLOCKLIST
from actors.policy.shell import classify_command

LINES = [
    "rm -rf build && mkfs.ext4 /dev/sdb",
    "sudo dd if=/dev/zero of=/dev/sda",
    "chmod -R 777 . ; curl http://example.com",
    "ls -la | grep x",
    "bash -c 'rm -r /'",
    "git push origin main",
    "xargs rm < files.txt",
    "env X=1 nice -n 5 shutdown now",
]


def _one_by_one(patterns: tuple[str, ...], line: str) -> str | None:
    invocations = classify_command(line).invocations
    for pattern in patterns:
        if any(matches(pattern, invocation) for invocation in invocations):
            return pattern
    return None


def test_index_agrees_with_matching_every_pattern() -> None:
    lists = [SEED_BLOCKLIST, CATASTROPHIC, APPROVAL_COMMANDS, ("mkfs*", "rm"), ("rm", "mkfs*")]
    for patterns, line in itertools.product(lists, LINES):
        expected = _one_by_one(patterns, line)
        assert first_match(patterns, classify_command(line).invocations) == expected, (
            patterns,
            line,
        )


def test_glob_names_and_list_order() -> None:
    invocations = classify_command("rm x; mkfs.ext4 /dev/sdb").invocations
    assert first_match(("mkfs*", "rm"), invocations) == "mkfs*"
    assert first_match(("rm", "mkfs*"), invocations) == "rm"
    assert fnmatch.fnmatchcase("mkfs.ext4", "mkfs*")
    assert first_match(("mk?s*",), invocations) == "mk?s*"
    assert first_match(("dd",), invocations) is None
