"""The classifier's rules for the programs it knows by name: readers whose
options can write (``sort -o``, ``uniq IN OUT``, ``sed -i``), writers and where
they write (``cp``, ``mv``, ``ln``, ``tee``, ``tar`` ...), ``find`` and what its
``-exec`` runs, interpreters, ``pip`` and build tools.

Each rule takes the classifier (:class:`actors.policy.shell._Classifier`) and
raises its category with a reason.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from actors.policy.argv import Parsed, is_world_writable, parse
from actors.policy.command_tables import PLAIN, READ_ONLY, WRITER_GRAMMARS, Grammar
from actors.policy.paths import inside
from actors.policy.shell_network import network
from actors.policy.shell_paths import resolve
from actors.policy.shell_words import Word

if TYPE_CHECKING:
    from actors.policy.shell import _Classifier as Classifier

_SED_WRITES = re.compile(r"(^|[;{}\n])\s*[0-9,$/^!]*\s*[wWe](\s|$)|/[gpIiMme0-9]*[we](\s|;|$)")
_AWK_ESCAPES = re.compile(r"system|[|>]|getline|ENVIRON|PROCINFO")
_PIP_NETWORK = frozenset({"install", "download", "wheel", "index", "search"})
_TAR_PROGRAMS = frozenset(
    {
        "--to-command",
        "-I",
        "--use-compress-program",
        "--info-script",
        "-F",
        "--new-volume-script",
        "--rmt-command",
        "--rsh-command",
    }
)
_BUILD_NO_CODE = frozenset(
    {
        "gcc",
        "g++",
        "cc",
        "c++",
        "clang",
        "clang++",
        "ld",
        "as",
        "ar",
        "javac",
        "rustc",
        "ruff",
        "black",
        "isort",
        "tsc",
        "prettier",
    }
)
"""Build tools that compile or format without running the project's code."""
_TARGET_VALUES = ("-t", "--target-directory")
_PIP = Grammar(
    values="rcietd",
    long_values=frozenset({
        "requirement", "constraint", "index-url", "extra-index-url", "editable", "target",
        "prefix", "root", "src", "find-links", "trusted-host", "python-version", "platform",
        "implementation", "abi", "upgrade-strategy", "progress-bar", "cache-dir", "log",
        "proxy", "cert", "client-cert", "timeout", "retries", "exists-action", "dest",
    }),
)  # fmt: skip


def interpreter(c: Classifier, name: str, args: list[Word], depth: int, stdin: bool,
                in_workspace_program: bool) -> None:  # fmt: skip
    if name in ("awk", "gawk", "mawk", "nawk"):
        c.raise_to("write", f"{name} runs a program")
        if any(_AWK_ESCAPES.search(w.text) or w.substituted for w in args) or any(
            w.text in ("-f", "--file", "-E", "--exec", "-l", "--load") for w in args
        ):
            c.runs(f"{name} program runs commands or writes files (system, pipes, >, -f)")
        return
    if name == "perl" and any(
        w.text.startswith("-") and not w.text.startswith("--") and "i" in w.text[1:] for w in args
    ):
        c.raise_to("write", "perl -i edits files in place")
        c.runs("perl -i runs code on files")
        code = next(
            (i for i, w in enumerate(args) if w.text.startswith("-") and w.text[-1:] in "eE"),
            None,
        )
        first = code + 2 if code is not None else 1
        for target in args[first:]:
            if not target.text.startswith("-"):
                c.write_target(target)
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "-m" and name.startswith(("python", "pypy")) and index + 1 < len(args):
            python_module(c, args[index + 1].text, args[index + 2 :], in_workspace_program)
            return
        if text.startswith("-m") and len(text) > 2 and name.startswith(("python", "pypy")):
            python_module(c, text[2:], args[index + 1 :], in_workspace_program)
            return
        if text in ("-c", "-e", "-E", "-r", "-p", "--eval", "--print") or (
            text.startswith("-") and not text.startswith("--") and text[-1:] in "ce"
            and len(text) > 1
        ):  # fmt: skip
            c.raise_to("write", f"{name} runs code given inline")
            c.runs(f"{name} runs code given inline")
            return
        if text == "-" or not text.startswith("-"):
            break
        index += 1
    if index >= len(args) and {w.text for w in args} & {"-V", "--version", "-h", "--help"}:
        c.raise_to("write")
        return
    if index >= len(args) or args[index].text == "-":
        c.admin(f"{name} runs code from its input")
        return
    c.script_file(args[index], name)


def python_module(c: Classifier, module: str, rest: list[Word], venv: bool) -> None:
    if module == "pip":
        pip(c, rest, venv or c.venv)
    elif module in ("venv", "virtualenv"):
        for target in [w for w in rest if not w.text.startswith("-")]:
            c.write_target(target)
        c.raise_to("write", "creates a virtual environment")
    else:
        c.raise_to("write", f"runs the module {module}")
        c.runs(f"runs the module {module}")


def pip(c: Classifier, args: list[Word], venv: bool) -> None:
    parsed = parse(args, _PIP)
    sub = parsed.operands[0].text if parsed.operands else ""
    if sub == "config":
        c.admin("pip config writes configuration outside the working directory")
        return
    if parsed.has("--proxy"):
        c.admin("pip through a proxy")
    if sub in _PIP_NETWORK:
        c.reaches(f"pip {sub} downloads packages")
    if sub in ("install", "uninstall"):
        if parsed.has("--user"):
            c.admin("pip --user installs outside the working directory")
        targets = parsed.values("-t", "--target", "--prefix", "--root")
        for target in targets:
            c.write_target(target)
        if not venv and not targets:
            c.admin(f"pip {sub} outside a virtual environment of the working directory")
    c.raise_to("write")


def build(c: Classifier, name: str, args: list[Word]) -> None:
    texts = [w.text for w in args]
    words = [t for t in texts if not t.startswith("-")]
    sub = words[0] if words else ""
    if name in ("npm", "yarn", "pnpm") and (
        {"-g", "--global", "--location=global"} & set(texts)
        or sub in ("publish", "login", "adduser", "logout", "owner", "unpublish",
                   "deprecate", "token", "access", "dist-tag", "team", "org", "hook")
        or (sub == "config" and len(words) > 1 and words[1] in ("set", "delete", "edit"))
    ):  # fmt: skip
        c.admin(f"{name} {sub or 'global'} changes things outside the working directory")
        return
    if name in ("cargo", "go", "gem", "uv", "poetry", "pipenv", "hatch", "pdm") and (
        sub in ("install", "publish", "login", "owner", "yank", "push", "upload")
        and not (name == "uv" and words[:2] == ["pip", "install"] and "--system" not in texts)
        and not (name in ("poetry", "pipenv", "pdm") and sub == "install")
    ):
        c.admin(f"{name} {sub} installs or publishes outside the working directory")
        return
    if name == "go" and sub == "env" and "-w" in texts:
        c.admin("go env -w writes configuration outside the working directory")
        return
    if name not in _BUILD_NO_CODE:
        c.runs(f"{name} runs the project's code or scripts")
    if name in ("make", "gmake"):
        parsed = parse(args, Grammar(values="CfIjlo", long_values=frozenset({"directory"})))
        for directory in parsed.values("-C", "--directory"):
            paths = resolve(directory, c.cwd, c.context)
            if paths is None or not all(inside(p, c.context.cwd) for p in paths):
                c.admin(f"make in a directory outside the working directory ({directory.text})")
    c.raise_to("write")


def find(c: Classifier, args: list[Word], depth: int) -> None:
    index = 0
    while index < len(args) and args[index].text in ("-H", "-L", "-P", "-D", "-O"):
        index += 2 if args[index].text == "-D" else 1
    starts: list[Word] = []
    while index < len(args) and not args[index].text.startswith(("-", "(", "!")):
        starts.append(args[index])
        index += 1
    expression = args[index:]
    texts = [w.text for w in expression]
    if "-delete" in texts:
        c.admin("find -delete removes files")
    start_paths: list[str] = []
    known = True
    for start in starts or [Word(".")]:
        paths = resolve(start, c.cwd, c.context)
        if paths is None:
            known = False
        else:
            start_paths.extend(paths)
    placeholder = start_paths[0] if known and len(start_paths) == 1 else None
    for position, word in enumerate(expression):
        if word.text in ("-fprint", "-fprint0", "-fprintf", "-fls") and position + 1 < len(
            expression
        ):
            c.write_target(expression[position + 1])
        if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
            c.scan_hidden(starts, recursive=True)
            inner: list[Word] = []
            for part in expression[position + 1 :]:
                if part.text in (";", "+", "\\;"):
                    break
                if "{}" in part.text:
                    part = (
                        Word(part.text.replace("{}", placeholder))
                        if placeholder is not None
                        else Word(part.text, substituted=True)
                    )
                inner.append(part)
            if inner:
                c.words(inner, depth, via="find", stdin=False)


def writer(c: Classifier, name: str, args: list[Word], via: str | None) -> None:
    grammar = WRITER_GRAMMARS.get(name, PLAIN)
    if name == "tar" and args and not args[0].text.startswith("-"):
        args = [Word("-" + args[0].text), *args[1:]]
    parsed = parse(args, grammar)
    operands = list(parsed.operands)
    flags = {option for option, _ in parsed.options}
    recursive = bool(flags & {"-r", "-R", "--recursive"})
    targets: list[Word] = []
    if name == "rm":
        if recursive:
            c.admin("recursive delete (rm -r)")
        elif via is not None:
            c.admin("deletes files listed at run time")
        targets = operands
    elif name in ("rmdir", "unlink", "touch", "mkdir", "truncate", "sponge", "tee"):
        targets = operands
    elif name in ("cp", "mv", "ln", "install"):
        targets = copy_targets(c, name, parsed, operands)
    elif name in ("chmod", "chown", "chgrp"):
        if not parsed.has("--reference"):
            mode, operands = (operands[0], operands[1:]) if operands else (None, [])
            if name == "chmod" and mode is not None and is_world_writable(mode.text):
                c.admin("makes files writable by everyone (chmod)")
        if name != "chmod" and recursive:
            c.admin(f"recursive ownership change ({name})")
        targets = operands
    elif name == "patch":
        targets = parsed.values("-o", "--output") + operands[:1]
    elif name == "tar":
        actions = parsed.values("--checkpoint-action")
        if flags & _TAR_PROGRAMS or any(a.text.startswith("exec") for a in actions):
            c.runs("tar runs a program (--to-command, -I, --info-script ...)")
        if flags & {"-P", "--absolute-names"}:
            c.admin("tar with absolute names writes anywhere")
        if flags & {"-c", "-r", "-u", "-A", "--create", "--append", "--update"}:
            targets = parsed.values("-f", "--file")
        elif flags & {"-x", "--extract", "--get"}:
            targets = parsed.values("-C", "--directory") or [Word(".")]
    elif name in ("zip", "7z", "7za"):
        targets = operands[:1] if name == "zip" else operands[1:2]
    elif name == "unzip":
        targets = parsed.values("-d") or [Word(".")]
    elif name in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4"):
        if not flags & {"-c", "--stdout", "-l", "--list", "-t", "--test"}:
            targets = operands + parsed.values("-o", "--output")
    elif name == "split":
        targets = operands[1:2] or [Word("x")]
    elif name == "csplit":
        targets = parsed.values("-f", "--prefix") or [Word("xx")]
    elif name == "rsync":
        network(c, name, args)
        return
    if via is not None and name != "rm":
        targets = [Word(t.text, substituted=True) if via == "xargs" else t for t in targets]
        if via == "xargs":
            c.admin(f"{name} of files listed at run time")
    for target in targets:
        c.write_target(target, recursive=recursive)
    c.raise_to("write")


def copy_targets(c: Classifier, name: str, parsed: Parsed, operands: list[Word]) -> list[Word]:
    flags = {option for option, _ in parsed.options}
    directory = parsed.values(*_TARGET_VALUES)
    if name == "install" and flags & {"-d", "--directory"}:
        return operands
    if name == "mv":
        return directory + operands
    hard_link = (name == "ln" and not flags & {"-s", "--symbolic"}) or (
        name == "cp" and flags & {"-l", "--link"}
    )
    sources = operands if directory else operands[:-1]
    if name == "ln" and len(operands) == 1 and not directory:
        sources = operands
    if name == "ln" and not hard_link:
        for source in sources:
            if not source.text.startswith("/") and not source.substituted:
                base = posixpath.dirname(_link_name(operands, directory) or ".")
                paths = resolve(source, posixpath.join(c.cwd, base) if c.cwd else None,
                                c.context)  # fmt: skip
            else:
                paths = resolve(source, c.cwd, c.context)
            if paths is None or not all(inside(p, c.context.cwd) for p in paths):
                c.links_out(f"symbolic link to a path outside the working directory "
                            f"({source.text})")  # fmt: skip
    if hard_link:
        for source in sources:
            paths = resolve(source, c.cwd, c.context)
            if paths is None or not all(inside(p, c.context.cwd) for p in paths):
                c.admin(f"hard link to a file outside the working directory ({source.text})")
    if directory:
        return directory
    if name == "ln" and len(operands) == 1:
        return [Word(posixpath.basename(operands[0].text.rstrip("/")) or ".")]
    return operands[-1:]


def _link_name(operands: list[Word], directory: list[Word]) -> str | None:
    """Where ``ln -s`` puts the link (relative targets are read from there)."""
    if directory:
        return directory[0].text + "/x"
    if len(operands) >= 2:
        return operands[-1].text
    return None


def reader(c: Classifier, name: str, args: list[Word], via: str | None) -> None:
    parsed = parse(args, READ_ONLY[name])
    operands = parsed.operands
    if name == "sort":
        for target in parsed.values("-o", "--output"):
            c.write_target(target)
            c.raise_to("write", "sort -o writes a file")
    elif name in ("uniq", "xxd") and len(operands) >= 2:
        c.write_target(operands[1])
        c.raise_to("write", f"{name} writes its second operand")
    elif name == "sed":
        scripts = parsed.values("-e", "--expression")
        files = list(operands)
        if not scripts and not parsed.values("-f", "--file") and files:
            scripts = [files.pop(0)]
        if any(_SED_WRITES.search(s.text) for s in scripts):
            c.admin("sed script writes a file or runs a command (w, e)")
        if parsed.has("-i", "--in-place"):
            for target in files:
                c.write_target(target)
            c.raise_to("write", "sed -i edits files in place")
    elif name == "date" and parsed.has("-s", "--set"):
        c.admin("date --set changes the system clock")
    elif name == "hostname" and operands:
        c.admin("hostname NAME changes the host's name")
    elif name == "rg" and any(o.startswith("--pre") for o, _ in parsed.options):
        c.admin("rg --pre runs a program on every file")
    if via is not None:
        c.raise_to("write", f"{name} of arguments given at run time")
