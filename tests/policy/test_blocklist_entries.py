"""Every blocklist entry of every preset matches what it names, in the spellings a
model tries, and leaves the near misses alone (issue 30: the fork bomb ran, and
``dd of=/dev/sda`` was asked rather than refused)."""

from __future__ import annotations

import pytest

from actors.policy.blocklist import first_match
from actors.policy.engine import decide, facts_for
from actors.policy.presets import APPROVAL_COMMANDS, CATASTROPHIC, POLICY_PRESETS, SEED_BLOCKLIST
from actors.policy.shell import classify_command
from actors.policy.shell_paths import ShellContext

CONTEXT = ShellContext("/work/repo", "/home/dev")

MATCHING: dict[str, list[str]] = {
    "rm -r /": [
        "rm -rf /",
        "rm -fr //",
        "sudo rm -r --no-preserve-root /",
        "rm -rf /.",
        "bash -c 'rm -rf /'",
        "env X=1 rm -R /",
        "{rm,-rf,/}",
    ],
    "rm -r /*": ["rm -rf /*", "rm -r -f /*"],
    "rm -r ~": ["rm -rf ~", "rm -rf ~/", "rm -rf $HOME", 'rm -rf "$HOME"/', "rm -rf ${HOME}"],
    "rm -r ~/*": ["rm -rf ~/*"],
    "mkfs*": ["mkfs.ext4 /dev/sdb1", "/sbin/mkfs -t ext4 /dev/sdb", "sudo mkfs.xfs /dev/nvme0n1"],
    "wipefs": ["wipefs -a /dev/sda"],
    "shutdown": ["shutdown -h now", "sudo shutdown -r +1"],
    "reboot": ["reboot", "sudo reboot -f"],
    "halt": ["halt"],
    "poweroff": ["poweroff"],
    "systemctl poweroff": ["systemctl poweroff", "sudo systemctl poweroff -i"],
    "systemctl reboot": ["systemctl reboot"],
    "systemctl halt": ["systemctl halt"],
    "init 0": ["init 0"],
    "init 6": ["init 6"],
    "chmod -R 777 /": ["chmod -R 777 /", "chmod -fR 777 /", "sudo chmod -R 777 //"],
    ":(){ :|:& };:": [
        ":(){ :|:& };:",
        ":(){ :|: & };:",
        "bomb(){ bomb|bomb& };bomb",
        "f() { f & f; }; f",
        "bash -c ':(){ :|:& };:'",
    ],
    "rm": ["rm x", "/bin/rm -f x"],
    "sudo": ["sudo ls"],
    "dd": ["dd if=a of=b"],
    "chmod 777": ["chmod 777 x", "chmod -R 777 dir"],
    "rm -r": ["rm -r x", "rm -fr x"],
    "rm -rf": ["rm -rf x", "rm -r -f x"],
    "su": ["su -c id"],
    "curl": ["curl http://x"],
    "wget": ["wget http://x"],
    "scp": ["scp a b:"],
    "rsync": ["rsync -a a b"],
}
for disk in ("sda", "hda", "vda", "xvda", "nvme0n1", "mmcblk0", "disk0", "dm-0", "md0", "loop0"):
    pattern = next(p for p in CATASTROPHIC if p.startswith("dd ") and disk.startswith(p[11:-1]))
    MATCHING.setdefault(pattern, []).extend(
        [f"dd if=/dev/zero of=/dev/{disk}", f"sudo dd of=/dev/{disk} bs=1M if=x.img"]
    )

NOT_MATCHING: dict[str, list[str]] = {
    "rm -r /": ["rm -rf /tmp/x", "rm -f /", "rm -rf ./", "echo rm -rf /"],
    "rm -r /*": ["rm -rf /tmp/*"],
    "rm -r ~": ["rm -rf ~/project/build", "rm ~/x"],
    "rm -r ~/*": ["rm -rf ~/project/*"],
    "mkfs*": ["echo mkfs", "man mkfs"],
    "dd of=/dev/sd*": ["dd if=/dev/sda of=disk.img", "dd if=/dev/zero of=/dev/null"],
    "shutdown": ["echo shutdown"],
    ":(){ :|:& };:": ["f() { ls; }; f", "f() { echo f; }; f f"],
    "chmod -R 777 /": ["chmod -R 777 build", "chmod 755 /"],
    "init 0": ["init 3"],
}

ALL_ENTRIES = sorted(set(CATASTROPHIC) | set(SEED_BLOCKLIST) | set(APPROVAL_COMMANDS))


def invocations(line: str):
    return classify_command(line, CONTEXT).invocations


def test_every_entry_has_matching_lines() -> None:
    missing = [entry for entry in ALL_ENTRIES if entry not in MATCHING]
    assert not missing, missing


@pytest.mark.parametrize(
    ("entry", "line"), [(e, line) for e in ALL_ENTRIES for line in MATCHING.get(e, [])]
)
def test_entry_matches(entry: str, line: str) -> None:
    assert first_match((entry,), invocations(line)) == entry


@pytest.mark.parametrize(
    ("entry", "line"), [(e, line) for e, lines in NOT_MATCHING.items() for line in lines]
)
def test_entry_leaves_near_misses(entry: str, line: str) -> None:
    assert first_match((entry,), invocations(line)) is None


@pytest.mark.parametrize(
    "line", ["dd of=/dev/sda if=/dev/zero", ":(){ :|:& };:", "rm -rf ~", "mkfs.ext4 /dev/sdb1",
             "rm -rf /", "sudo rm -rf --no-preserve-root /"],
)  # fmt: skip
def test_default_policy_refuses_rather_than_asks(line: str) -> None:
    facts = facts_for(
        "shell", "write", {"command": line}, "/work/repo", home="/home/dev", shell=True
    )
    decision = decide(POLICY_PRESETS["interactive"], facts)
    assert (decision.action, decision.rule) == ("deny", "blocklist"), decision
