"""What a shell command line would do, and from that its category (``read``,
``write`` or ``admin``).

The classifier parses or asks: a line is ``read`` or ``write`` only when every
command in it is understood after the shell's own expansions. The line is parsed
with a real shell parser (``bashlex``); each simple command's name must be literal
(no substitution, glob or brace expansion), be in the tables or be a wrapper that
is unwrapped (``env``, ``timeout``, ``taskset``, ``script -qc``, ``xargs``,
``bash -c`` ...), and its options are read with the program's own grammar
(``curl -xhost``, ``sort -o f``). Writes are judged by where they land, resolved
against the session's working directory and home: outside the working directory
(or somewhere known only at run time) is ``admin``, as is any read of a hidden path
(credentials, Troupe's own files, ``/proc/<pid>/environ``). Unknown commands,
``eval``, aliases, ``git -c`` and lines bashlex cannot parse are ``admin``.

Classification decides what to ask; it is not the boundary. What it cannot see (a
script's contents, a program that deletes files itself) is bounded by the OS
sandbox (docs/decisions.md).
"""

from __future__ import annotations

import functools
import posixpath
import re
from urllib.parse import urlsplit

import msgspec

from actors.policy.argv import WRAPPERS, Parsed, is_world_writable, name_of, parse
from actors.policy.categories import Category, worst
from actors.policy.command_tables import (
    BUILD_TOOLS,
    CURL,
    CURL_OUTPUT,
    CURL_PROXY,
    DANGEROUS_VARIABLES,
    GIT,
    GIT_NETWORK,
    GIT_READ,
    GIT_SAFE_CONFIG_KEYS,
    GIT_WRITE,
    HARMLESS_DEVICES,
    LOOPBACK,
    NC,
    NETWORK,
    PLAIN,
    PRIVILEGE,
    READ_ONLY,
    SHELLS,
    STANDARD_BIN_DIRS,
    SYSTEM_ADMIN,
    WGET,
    WGET_OUTPUT,
    WRITER_GRAMMARS,
    WRITERS,
    Grammar,
    is_interpreter,
)
from actors.policy.paths import inside
from actors.policy.shell_parse import (
    FunctionDef,
    SimpleCommand,
    Unparsed,
    Word,
    expand_braces,
    parse_line,
)
from actors.policy.shell_paths import (
    ShellContext,
    hidden_entry,
    names_hidden,
    resolve,
    write_refusal,
)

MAX_NESTING = 8
"""``bash -c "bash -c ..."`` deeper than this is refused as admin, not recursed."""

FORK_BOMB = "\x00fork-bomb"
"""The name of the invocation a fork bomb adds (no real program can have it: argv
cannot hold NUL), so a blocklist entry spelled as a fork bomb matches every one."""


class Invocation(msgspec.Struct, frozen=True):
    """One simple command as it would run: its argument vector after unwrapping
    (``env X=1 timeout 5 rm x`` is ``("rm", "x")``)."""

    argv: tuple[str, ...]


class ShellVerdict(msgspec.Struct, frozen=True):
    """The category of a command line and why; ``invocations`` feed the blocklist."""

    category: Category
    reasons: tuple[str, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    fully_parsed: bool = True
    cwd_after: str | None = None
    """The directory the shell is in after the line (None: not known), which a
    persistent terminal keeps for its next call."""


def split_flags(args: tuple[str, ...] | list[str]) -> set[str]:
    """``-rf`` counts as ``-r`` and ``-f``; long options stay whole."""
    flags: set[str] = set()
    for arg in args:
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(f"-{letter}" for letter in arg[1:])
    return flags


def is_loopback(host: str | None) -> bool:
    return bool(host) and LOOPBACK.match(host or "") is not None


CACHED_LINE_CHARS = 2048
"""Lines up to this long are remembered, the last 32 of them: models run the same
few commands again and again. A bigger cache costs more than it saves: every
verdict it holds is more for the garbage collector to walk."""


def classify_command(command: str, context: ShellContext | None = None) -> ShellVerdict:
    """The category of ``command`` run in ``context`` (default: this process's
    working directory and home), and the reasons for it."""
    if context is None:
        context = ShellContext.local()
    if len(command) <= CACHED_LINE_CHARS:
        return _classify_remembered(command, context)
    return _Classifier(context).run(command)


@functools.lru_cache(maxsize=32)
def _classify_remembered(command: str, context: ShellContext) -> ShellVerdict:
    """The verdict is pure data of the line and its context: a repeat costs a lookup."""
    return _Classifier(context).run(command)


_LEADING_TIME = re.compile(r"^\s*time(\s+-p)?\s+(?=\S)")
_RECURSIVE_ALWAYS = frozenset({"rg", "ag", "ack", "tar", "zip", "7z", "rsync", "fd", "fdfind"})
_PATHISH = re.compile(r"[/~$*?\[{]|^\.")
_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy", "ftp_proxy"})
_SED_WRITES = re.compile(r"(^|[;{}\n])\s*[0-9,$/^!]*\s*[wWe](\s|$)|/[gpIiMme0-9]*[we](\s|;|$)")
_SHELL_GRAMMAR = Grammar(values="oO", long_values=frozenset({"init-file", "rcfile"}))
_TARGET_VALUES = ("-t", "--target-directory")


class _Classifier:
    def __init__(self, context: ShellContext) -> None:
        self.context = context
        self.category: Category = "read"
        self.reasons: list[str] = []
        self.invocations: list[Invocation] = []
        self.fully_parsed = True
        self.cwd: str | None = context.cwd if context.start == "" else context.start
        self.functions: set[str] = set()
        self.venv = False
        """A virtual environment inside the working directory was activated."""
        self.proxies: list[str] = []

    def raise_to(self, category: Category, reason: str | None = None) -> None:
        self.category = worst(self.category, category)
        if reason and reason not in self.reasons:
            self.reasons.append(reason)

    def admin(self, reason: str) -> None:
        self.raise_to("admin", reason)

    def run(self, command: str) -> ShellVerdict:
        self.feed(command, depth=0)
        if self.context.persistent and (self.cwd is None or not inside(self.cwd, self.context.cwd)):
            self.admin("leaves the persistent terminal outside the working directory")
        return ShellVerdict(
            self.category, tuple(self.reasons), tuple(self.invocations), self.fully_parsed,
            self.cwd,
        )  # fmt: skip

    # --- lines and simple commands ------------------------------------------------

    def feed(self, command: str, depth: int) -> None:
        if depth > MAX_NESTING:
            self.admin("shell commands nested too deeply to follow")
            return
        if not command.strip():
            return
        command = _LEADING_TIME.sub("", command, count=1)
        try:
            items = parse_line(command)
        except Unparsed as exc:
            self.fully_parsed = False
            self.admin(f"not fully parsed (the shell parser cannot read it: {exc})")
            self.invocations.extend(_guessed_invocations(command))
            return
        for item in items:
            if isinstance(item, FunctionDef):
                self.function(item, depth)
            else:
                self.simple(item, depth)

    def function(self, definition: FunctionDef, depth: int) -> None:
        self.functions.add(definition.name)
        calls = [s for s in definition.body if s.words and s.words[0].text == definition.name]
        if len(calls) >= 2 or any(call.background for call in calls):
            self.invocations.append(Invocation((FORK_BOMB, definition.name)))
            self.admin(f"fork bomb (function {definition.name} starts itself again and again)")
        for simple in definition.body:
            if simple.words and simple.words[0].text == definition.name:
                continue
            self.simple(simple, depth)

    def simple(self, simple: SimpleCommand, depth: int) -> None:
        for assignment in simple.assignments:
            self.assignment(assignment)
        fed_stdin = self.redirects(simple)
        if simple.words:
            self.words(list(simple.words), depth, via=None, stdin=fed_stdin or simple.background)

    def assignment(self, word: Word) -> None:
        name, _, value = word.text.partition("=")
        if name in DANGEROUS_VARIABLES or name.startswith(("BASH_FUNC", "GIT_CONFIG", "LD_")):
            self.admin(f"sets {name}, which changes what later programs run or read")
        if name.lower() in _PROXY_VARIABLES:
            self.proxies.append(_host_of(value) if not word.substituted else "")
        self.scan_hidden([word], recursive=False)

    def redirects(self, simple: SimpleCommand) -> bool:
        """Judge the redirections; True when the command's input is fed from the
        line (a here-document, here-string or file)."""
        fed = False
        for redirect in simple.redirects:
            op, target = redirect.op, redirect.target
            text = target.text if target is not None else ""
            if "/dev/tcp/" in text or "/dev/udp/" in text:
                self.admin(f"network access through a redirection ({text})")
                continue
            if op == "<>":
                self.admin(f"opens a file for reading and writing (<> {text})")
            if op in ("<<", "<<-", "<<<", "<"):
                fed = True
                if op == "<" and target is not None:
                    self.scan_hidden([target], recursive=False)
                continue
            if target is None or (op == ">&" and (text.isdigit() or text == "-")):
                continue
            if op in (">", ">>", ">|", "&>", "&>>", ">&", "<>"):
                harmless = text in HARMLESS_DEVICES or text.startswith("/dev/fd/")
                if not self.write_target(target) and not harmless:
                    self.raise_to("write", "redirects output to a file")
        return fed

    def words(self, words: list[Word], depth: int, via: str | None, stdin: bool) -> None:
        first = words[0]
        args = words[1:]
        if first.substituted:
            self.invocations.append(Invocation(tuple(w.text for w in words)))
            self.admin(f"command name computed at run time ({first.text})")
            return
        if first.pattern:
            expanded = expand_braces(first.text) or [first.text]
            argv = tuple(expanded) + tuple(w.text for w in args)
            self.invocations.append(Invocation((name_of(Word(argv[0])), *argv[1:])))
            self.admin(f"command name is a glob or brace expansion ({first.text})")
            return
        name = first.text
        in_workspace_program = False
        if "/" in name or name.startswith("~"):
            paths = resolve(first, self.cwd, self.context)
            if paths is None:
                self.invocations.append(Invocation(tuple(w.text for w in words)))
                self.admin(f"runs a program whose path is known only at run time ({name})")
                return
            path = paths[0]
            base = posixpath.basename(path)
            if inside(path, self.context.cwd):
                in_workspace_program = True
                if not (posixpath.basename(posixpath.dirname(path)) == "bin" and _known(base)):
                    self.invocations.append(Invocation((base, *(w.text for w in args))))
                    self.scan_hidden(args, recursive=False)
                    self.raise_to("write", f"runs a program from the working directory ({name})")
                    return
            elif posixpath.dirname(path) not in STANDARD_BIN_DIRS:
                self.invocations.append(Invocation((base, *(w.text for w in args))))
                self.admin(f"runs a program outside the working directory ({name})")
                return
            name = base
        self.invocations.append(Invocation((name, *(w.text for w in args))))
        self.scan_hidden(args, recursive=_recursive(name, args))
        self.dispatch(name, args, depth, via, stdin, in_workspace_program)

    # --- what each kind of program does -----------------------------------------------

    def dispatch(self, name: str, args: list[Word], depth: int, via: str | None, stdin: bool,
                 in_workspace_program: bool) -> None:  # fmt: skip
        if name in self.functions:
            return  # its body was judged where the line defined it
        if name in WRAPPERS:
            self.wrapper(name, args, depth, via, stdin)
        elif name in SHELLS:
            self.shell(name, args, depth, stdin)
        elif name == "eval":
            self.feed(" ".join(w.text for w in args), depth + 1)
            self.admin("eval runs text put together at run time")
        elif name in ("source", "."):
            self.script_file(args[0] if args else None, name)
            if args and args[0].text.endswith("/bin/activate") and self.category != "admin":
                self.venv = True
        elif name == "alias":
            if any("=" in w.text for w in args):
                for word in args:
                    self.feed(word.text.partition("=")[2], depth + 1)
                self.admin("defines an alias (what it runs is not followed)")
        elif name in ("cd", "pushd", "popd", "chdir"):
            self.cd(name, args)
        elif name in ("export", "declare", "typeset", "local", "readonly"):
            for word in args:
                if "=" in word.text and not word.text.startswith("-"):
                    self.assignment(word)
        elif name == "trap":
            if args and not args[0].text.startswith("-"):
                self.feed(args[0].text, depth + 1)
        elif name == "find":
            self.find(args, depth)
        elif name == "git":
            self.git(args)
        elif name in ("pip", "pip3"):
            self.pip(args, venv=in_workspace_program or self.venv)
        elif name in NETWORK:
            self.network(name, args)
        elif name in SYSTEM_ADMIN or name.startswith("mkfs"):
            self.admin(f"system administration or another host ({name})")
        elif name in WRITERS:
            self.writer(name, args, via)
        elif name in READ_ONLY:
            self.reader(name, args, via)
        elif is_interpreter(name):
            self.interpreter(name, args, depth, stdin, in_workspace_program)
        elif name in BUILD_TOOLS:
            self.build(name, args)
        elif name in ("fd", "fdfind"):
            if split_flags([w.text for w in args]) & {"-x", "-X", "--exec", "--exec-batch"}:
                self.admin(f"{name} runs a command on what it finds")
        else:
            self.admin(f"unknown command ({name})")

    def wrapper(self, name: str, args: list[Word], depth: int, via: str | None,
                stdin: bool) -> None:  # fmt: skip
        spec = WRAPPERS[name]
        parsed = parse(args, spec.grammar, stop_at_operand=True)
        rest = list(parsed.rest)
        if name in PRIVILEGE:
            self.admin(f"privilege escalation ({name})")
        if any(option in spec.no_command for option, _ in parsed.options):
            self.raise_to("write", f"{name} changes a running process")
            return
        saved_cwd = self.cwd
        if name == "env":
            if parsed.has("-S", "--split-string"):
                for value in parsed.values("-S", "--split-string"):
                    self.feed(value.text, depth + 1)
                self.admin("env -S splits a string into a command")
                return
            for directory in parsed.values("-C", "--chdir"):
                self.cd("cd", [directory])
            while rest and "=" in rest[0].text and re.match(r"^[A-Za-z_]\w*=", rest[0].text):
                self.assignment(rest.pop(0))
        elif name in ("script", "flock", "su", "runuser") and parsed.has("-c", "--command"):
            for value in parsed.values("-c", "--command"):
                if value.substituted:
                    self.admin(f"{name} -c runs a command built at run time")
                self.feed(value.text, depth + 1)
            for target in rest[:1] if name in ("script", "flock") else []:
                self.write_target(target)
            return
        elif name in ("script", "su", "runuser"):
            self.admin(f"{name} starts an interactive shell")
            return
        elif name == "watch":
            self.feed(" ".join(w.text for w in rest), depth + 1)
            return
        elif name == "time":
            for target in parsed.values("-o", "--output"):
                self.write_target(target)
        elif name == "command" and parsed.has("-v", "-V"):
            return
        elif name == "xargs":
            for source in parsed.values("-a", "--arg-file"):
                self.scan_hidden([source], recursive=False)
            inner = rest or [Word("echo")]
            self.words(inner, depth, via="xargs", stdin=False)
            return
        if name == "flock" and rest:
            self.write_target(rest[0])
        rest = rest[spec.skip :]
        if not rest:
            if name in ("unshare", "sudo", "doas", "pkexec", "run0", "nsenter"):
                self.admin(f"{name} starts an interactive shell")
            self.cwd = saved_cwd if name != "env" else self.cwd
            return
        self.words(rest, depth, via, stdin)
        if name == "env":
            self.cwd = saved_cwd

    def shell(self, name: str, args: list[Word], depth: int, stdin: bool) -> None:
        parsed = parse(args, _SHELL_GRAMMAR, stop_at_operand=True)
        if parsed.has("--rcfile", "--init-file"):
            self.admin(f"{name} reads a startup file")
        if parsed.has("-c"):
            if not parsed.rest:
                self.admin(f"{name} -c without a command")
                return
            script = parsed.rest[0]
            if script.substituted:
                self.admin(f"{name} -c runs a command built at run time")
            self.feed(script.text, depth + 1)
            return
        if parsed.has("-s", "-i") or not parsed.rest:
            self.admin(f"{name} reads commands from its input")
            return
        self.script_file(parsed.rest[0], name)

    def script_file(self, word: Word | None, how: str) -> None:
        """``source FILE``, ``bash FILE``, ``python FILE``: the file's contents are
        not seen; a literal file inside the working directory is ``write``."""
        if word is None:
            self.admin(f"{how} without a file")
            return
        paths = resolve(word, self.cwd, self.context)
        if word.substituted or word.pattern or paths is None:
            self.admin(f"{how} of a file known only at run time ({word.text})")
        elif not all(inside(p, self.context.cwd) for p in paths):
            self.admin(f"{how} of a file outside the working directory ({word.text})")
        else:
            self.raise_to("write", f"runs {word.text} (its contents are not classified)")

    def interpreter(self, name: str, args: list[Word], depth: int, stdin: bool,
                    in_workspace_program: bool) -> None:  # fmt: skip
        if name in ("awk", "gawk", "mawk", "nawk"):
            self.raise_to("write", f"{name} runs a program")
            return
        index = 0
        while index < len(args):
            text = args[index].text
            if text == "-m" and name.startswith(("python", "pypy")) and index + 1 < len(args):
                self.python_module(args[index + 1].text, args[index + 2 :], in_workspace_program)
                return
            if text.startswith("-m") and len(text) > 2 and name.startswith(("python", "pypy")):
                self.python_module(text[2:], args[index + 1 :], in_workspace_program)
                return
            if text in ("-c", "-e", "-E", "-r", "-p", "--eval", "--print") or (
                text.startswith("-") and not text.startswith("--") and text[-1:] in "ce"
                and len(text) > 1
            ):  # fmt: skip
                if name == "perl" and "i" in text:
                    self.raise_to("write", "perl -i edits files in place")
                    for target in args[index + 2 :]:
                        self.write_target(target)
                self.raise_to("write", f"{name} runs code given inline")
                return
            if text == "-" or not text.startswith("-"):
                break
            index += 1
        if index >= len(args) and {w.text for w in args} & {"-V", "--version", "-h", "--help"}:
            self.raise_to("write")
            return
        if index >= len(args) or args[index].text == "-":
            self.admin(f"{name} runs code from its input")
            return
        self.script_file(args[index], name)

    def python_module(self, module: str, rest: list[Word], venv: bool) -> None:
        if module == "pip":
            self.pip(rest, venv or self.venv)
        elif module in ("venv", "virtualenv"):
            for target in [w for w in rest if not w.text.startswith("-")]:
                self.write_target(target)
            self.raise_to("write", "creates a virtual environment")
        else:
            self.raise_to("write", f"runs the module {module}")

    def pip(self, args: list[Word], venv: bool) -> None:
        parsed = parse(args, _PIP)
        sub = parsed.operands[0].text if parsed.operands else ""
        if sub == "config":
            self.admin("pip config writes configuration outside the working directory")
            return
        if parsed.has("--proxy"):
            self.admin("pip through a proxy")
        if sub in ("install", "uninstall"):
            if parsed.has("--user"):
                self.admin("pip --user installs outside the working directory")
            targets = parsed.values("-t", "--target", "--prefix", "--root")
            for target in targets:
                self.write_target(target)
            if not venv and not targets:
                self.admin(f"pip {sub} outside a virtual environment of the working directory")
        self.raise_to("write")

    def build(self, name: str, args: list[Word]) -> None:
        texts = [w.text for w in args]
        words = [t for t in texts if not t.startswith("-")]
        sub = words[0] if words else ""
        if name in ("npm", "yarn", "pnpm") and (
            {"-g", "--global", "--location=global"} & set(texts)
            or sub in ("publish", "login", "adduser", "logout", "owner", "unpublish",
                       "deprecate", "token", "access", "dist-tag", "team", "org", "hook")
            or (sub == "config" and len(words) > 1 and words[1] in ("set", "delete", "edit"))
        ):  # fmt: skip
            self.admin(f"{name} {sub or 'global'} changes things outside the working directory")
            return
        if name in ("cargo", "go", "gem", "uv", "poetry", "pipenv", "hatch", "pdm") and (
            sub in ("install", "publish", "login", "owner", "yank", "push", "upload")
            and not (name == "uv" and words[:2] == ["pip", "install"] and "--system" not in texts)
            and not (name in ("poetry", "pipenv", "pdm") and sub == "install")
        ):
            self.admin(f"{name} {sub} installs or publishes outside the working directory")
            return
        if name == "go" and sub == "env" and "-w" in texts:
            self.admin("go env -w writes configuration outside the working directory")
            return
        if name in ("make", "gmake"):
            parsed = parse(args, Grammar(values="CfIjlo", long_values=frozenset({"directory"})))
            for directory in parsed.values("-C", "--directory"):
                paths = resolve(directory, self.cwd, self.context)
                if paths is None or not all(inside(p, self.context.cwd) for p in paths):
                    self.admin(
                        f"make in a directory outside the working directory ({directory.text})"
                    )
        self.raise_to("write")

    def cd(self, name: str, args: list[Word]) -> None:
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if name == "popd" or (operands and operands[0].text == "-"):
            self.cwd = None
            return
        if not operands:
            self.cwd = self.context.home
            return
        paths = resolve(operands[0], self.cwd, self.context)
        self.cwd = paths[0] if paths and len(paths) == 1 and "*" not in paths[0] else None

    def find(self, args: list[Word], depth: int) -> None:
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
            self.admin("find -delete removes files")
        start_paths: list[str] = []
        known = True
        for start in starts or [Word(".")]:
            paths = resolve(start, self.cwd, self.context)
            if paths is None:
                known = False
            else:
                start_paths.extend(paths)
        placeholder = start_paths[0] if known and len(start_paths) == 1 else None
        for position, word in enumerate(expression):
            if word.text in ("-fprint", "-fprint0", "-fprintf", "-fls") and position + 1 < len(
                expression
            ):
                self.write_target(expression[position + 1])
            if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
                self.scan_hidden(starts, recursive=True)
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
                    self.words(inner, depth, via="find", stdin=False)

    def writer(self, name: str, args: list[Word], via: str | None) -> None:
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
                self.admin("recursive delete (rm -r)")
            elif via is not None:
                self.admin("deletes files listed at run time")
            targets = operands
        elif name in ("rmdir", "unlink", "touch", "mkdir", "truncate", "sponge", "tee"):
            targets = operands
        elif name in ("cp", "mv", "ln", "install"):
            targets = self.copy_targets(name, parsed, operands)
        elif name in ("chmod", "chown", "chgrp"):
            if not parsed.has("--reference"):
                mode, operands = (operands[0], operands[1:]) if operands else (None, [])
                if name == "chmod" and mode is not None and is_world_writable(mode.text):
                    self.admin("makes files writable by everyone (chmod)")
            if name != "chmod" and recursive:
                self.admin(f"recursive ownership change ({name})")
            targets = operands
        elif name == "patch":
            targets = parsed.values("-o", "--output") + operands[:1]
        elif name == "tar":
            if flags & {"-P", "--absolute-names"}:
                self.admin("tar with absolute names writes anywhere")
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
            self.network(name, args)
            return
        if via is not None and name != "rm":
            targets = [Word(t.text, substituted=True) if via == "xargs" else t for t in targets]
            if via == "xargs":
                self.admin(f"{name} of files listed at run time")
        for target in targets:
            self.write_target(target, recursive=recursive)
        self.raise_to("write")

    def copy_targets(self, name: str, parsed: Parsed, operands: list[Word]) -> list[Word]:
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
        if hard_link:
            for source in sources:
                paths = resolve(source, self.cwd, self.context)
                if paths is None or not all(inside(p, self.context.cwd) for p in paths):
                    self.admin(f"hard link to a file outside the working directory ({source.text})")
        if directory:
            return directory
        if name == "ln" and len(operands) == 1:
            return [Word(posixpath.basename(operands[0].text.rstrip("/")) or ".")]
        return operands[-1:]

    def reader(self, name: str, args: list[Word], via: str | None) -> None:
        parsed = parse(args, READ_ONLY[name])
        operands = parsed.operands
        if name == "sort":
            for target in parsed.values("-o", "--output"):
                self.write_target(target)
                self.raise_to("write", "sort -o writes a file")
        elif name in ("uniq", "xxd") and len(operands) >= 2:
            self.write_target(operands[1])
            self.raise_to("write", f"{name} writes its second operand")
        elif name == "sed":
            scripts = parsed.values("-e", "--expression")
            files = list(operands)
            if not scripts and not parsed.values("-f", "--file") and files:
                scripts = [files.pop(0)]
            if any(_SED_WRITES.search(s.text) for s in scripts):
                self.admin("sed script writes a file or runs a command (w, e)")
            if parsed.has("-i", "--in-place"):
                for target in files:
                    self.write_target(target)
                self.raise_to("write", "sed -i edits files in place")
        elif name == "date" and parsed.has("-s", "--set"):
            self.admin("date --set changes the system clock")
        elif name == "hostname" and operands:
            self.admin("hostname NAME changes the host's name")
        elif name == "rg" and any(o.startswith("--pre") for o, _ in parsed.options):
            self.admin("rg --pre runs a program on every file")
        if via is not None:
            self.raise_to("write", f"{name} of arguments given at run time")

    def network(self, name: str, args: list[Word]) -> None:
        hosts: list[str] = list(self.proxies)
        if name == "curl":
            parsed = parse(args, CURL)
            if parsed.has("-K", "--config"):
                self.admin("curl reads its options from a file")
            if parsed.has("--unix-socket", "--abstract-unix-socket"):
                self.admin("curl talks to a local socket")
            hosts += [_host_of(w.text) if not w.substituted else "" for w in parsed.operands]
            hosts += [_host_of(w.text) for w in parsed.values(*CURL_PROXY)]
            for value in parsed.values("--connect-to"):
                parts = value.text.split(":")
                hosts += [parts[0], parts[2] if len(parts) > 2 else ""]
            for value in parsed.values("--resolve"):
                hosts += value.text.split(":", 2)[-1].strip("[]").split(",")
            for target in parsed.values(*CURL_OUTPUT):
                self.write_target(target)
        elif name == "wget":
            parsed = parse(args, WGET)
            if parsed.has("-e", "--execute", "-i", "--input-file", "--config"):
                self.admin("wget runs settings or reads addresses given elsewhere (-e, -i)")
            hosts += [_host_of(w.text) if not w.substituted else "" for w in parsed.operands]
            for target in parsed.values(*WGET_OUTPUT):
                self.write_target(target)
        elif name in ("nc", "ncat", "netcat"):
            parsed = parse(args, NC)
            if parsed.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec", "-l", "--listen"):
                self.admin(f"{name} runs a program on a connection or listens for one")
            hosts += [w.text if not w.substituted else "" for w in parsed.operands[:1]]
        elif name == "rsync":
            parsed = parse(args, WRITER_GRAMMARS["rsync"])
            remote = [
                w for w in parsed.operands if re.match(r"^([^/]*@)?[^/:]+:|^rsync://", w.text)
            ]
            if parsed.has("-e", "--rsh", "--rsync-path") or remote:
                self.admin(f"network access (rsync to {', '.join(w.text for w in remote)})")
                return
            for target in parsed.operands[-1:]:
                self.write_target(target, recursive=True)
            self.raise_to("write")
            return
        elif name in ("dig", "nslookup", "host", "ping", "ping6", "traceroute", "tracepath",
                      "whois", "mtr"):  # fmt: skip
            hosts += [w.text.lstrip("@") for w in args if not w.text.startswith("-")]
        else:
            self.admin(f"network access ({name})")
            return
        if hosts and all(is_loopback(host) for host in hosts):
            self.raise_to("write", f"{name} to loopback only")
            return
        shown = ", ".join(sorted({h for h in hosts if h})) or "an unknown host"
        self.admin(f"network access ({name} to {shown})")

    def git(self, args: list[Word]) -> None:
        parsed = parse(args, GIT, stop_at_operand=True)
        saved = self.cwd
        for option, value in parsed.options:
            if option in ("-c", "--config-env"):
                self.admin("git -c sets configuration for this call (aliases, hooks, programs)")
            elif option in ("--git-dir", "--work-tree", "--exec-path", "--namespace"):
                self.admin(f"git {option} works on another repository or programs")
            elif option == "-C" and value is not None:
                self.cd("cd", [value])
        rest = list(parsed.rest)
        try:
            if rest:
                self.git_subcommand(rest[0], rest[1:])
        finally:
            self.cwd = saved

    def git_subcommand(self, word: Word, args: list[Word]) -> None:
        sub = word.text
        texts = [w.text for w in args]
        operands = [t for t in texts if not t.startswith("-")]
        outside = self.cwd is None or not inside(self.cwd, self.context.cwd)
        for index, text in enumerate(texts):
            if text.startswith("--output="):
                self.write_target(Word(text[9:], args[index].substituted))
            elif text == "--output" and index + 1 < len(args):
                self.write_target(args[index + 1])
        if word.substituted or word.pattern:
            self.admin(f"git subcommand computed at run time ({sub})")
        elif sub in GIT_NETWORK or (sub == "remote" and operands[:1] in (["update"], ["prune"],
                                                                         ["show"])):  # fmt: skip
            self.admin(f"git {sub} talks to another host or runs configured programs")
        elif sub == "archive" and any(t.startswith("--remote") for t in texts):
            self.admin("git archive --remote talks to another host")
        elif sub == "config":
            self.git_config(args)
        elif sub in GIT_READ:
            if sub == "grep" and ({"-O", "--open-files-in-pager"} & set(texts)
                                  or any(t.startswith("--open-files") for t in texts)):  # fmt: skip
                self.admin("git grep -O runs a pager program")
            if sub == "diff" and "--ext-diff" in texts:
                self.admin("git diff --ext-diff runs the configured diff program")
        elif sub in GIT_WRITE:
            self.git_write(sub, args, texts, operands, outside)
        else:
            self.admin(f"unknown git subcommand {sub} (a git alias can run anything)")

    def git_write(self, sub: str, args: list[Word], texts: list[str], operands: list[str],
                  outside: bool) -> None:  # fmt: skip
        listing = (
            sub in ("branch", "tag", "remote", "stash")
            and (not operands or operands[:1] == ["list"] or (sub == "remote" and operands == []))
            and not set(texts) & {"-d", "-D", "-m", "-M", "--delete", "-f", "--force"}
        )
        if (listing and sub != "stash") or (
            sub == "stash" and operands[:1] in (["list"], ["show"])
        ):
            return
        if outside:
            self.admin(f"git {sub} changes a repository outside the working directory")
        if sub == "reset" and "--hard" in texts:
            self.admin("git reset --hard discards work")
        elif sub == "clean" and split_flags(texts) & {"-f", "--force"}:
            self.admin("git clean -f deletes untracked files")
        elif sub in ("checkout", "restore") and ("." in operands or "--" in texts):
            self.admin(f"git {sub} discards changes")
        elif sub in ("worktree", "init") and operands:
            for word in args:
                if word.text == operands[-1]:
                    self.write_target(word)
        elif sub == "format-patch":
            parsed = parse(args, Grammar(values="ov", long_values=frozenset({"output-directory"})))
            for target in parsed.values("-o", "--output-directory"):
                self.write_target(target)
        elif sub in ("archive", "bundle"):
            parsed = parse(args, Grammar(values="o", long_values=frozenset({"output"})))
            for target in parsed.values("-o", "--output") + (
                list(parsed.operands[1:2]) if sub == "bundle" else []
            ):
                self.write_target(target)
        self.raise_to("write")

    def git_config(self, args: list[Word]) -> None:
        parsed = parse(args, Grammar(values="f", long_values=frozenset(
            {"file", "blob", "type", "default", "comment", "value"})))  # fmt: skip
        operands = [w.text for w in parsed.operands]
        if operands[:1] in (["get"], ["list"]) or parsed.has(
            "--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch",
            "--get-color", "--get-colorbool", "--show-origin", "--name-only"
        ) or (len(operands) <= 1 and not parsed.has(
            "--unset", "--unset-all", "--remove-section", "--rename-section", "-e", "--edit"
        )):  # fmt: skip
            return
        if parsed.has("-e", "--edit"):
            self.admin("git config --edit runs an editor")
            return
        if parsed.has("--global", "--system", "-f", "--file"):
            self.admin("git config writes configuration outside the working directory")
            return
        key = (operands[1] if operands[:1] in (["set"], ["unset"]) else operands[0]).lower()
        if key not in GIT_SAFE_CONFIG_KEYS:
            self.admin(f"git config {key} can run programs or name hosts later")
            return
        self.raise_to("write", "git config sets a repository setting")

    # --- paths ----------------------------------------------------------------------

    def write_target(self, word: Word, recursive: bool = False) -> bool:
        """Judge one written path; True when it is ``admin``."""
        refusal = write_refusal(resolve(word, self.cwd, self.context), word.text, self.context,
                                recursive)  # fmt: skip
        if refusal is not None:
            self.admin(refusal)
            return True
        return False

    def scan_hidden(self, words: list[Word], recursive: bool) -> None:
        """A word that names a hidden path (or, with ``recursive``, a directory
        holding one) makes the line ``admin``."""
        for word in words:
            text = word.text
            if not _PATHISH.search(text):
                continue
            for candidate in _candidates(word):
                paths = resolve(candidate, self.cwd, self.context)
                if paths is None:
                    entry = names_hidden(candidate.text, self.context)
                else:
                    entry = next(
                        (e for p in paths if (e := hidden_entry(p, self.context, recursive))),
                        None,
                    )
                if entry is not None:
                    self.admin(f"reads a hidden path ({entry}): {text}")
                    return


_PIP = Grammar(
    values="rcietd",
    long_values=frozenset({
        "requirement", "constraint", "index-url", "extra-index-url", "editable", "target",
        "prefix", "root", "src", "find-links", "trusted-host", "python-version", "platform",
        "implementation", "abi", "upgrade-strategy", "progress-bar", "cache-dir", "log",
        "proxy", "cert", "client-cert", "timeout", "retries", "exists-action", "dest",
    }),
)  # fmt: skip


def _known(name: str) -> bool:
    return (
        name in READ_ONLY
        or name in BUILD_TOOLS
        or name in WRITERS
        or is_interpreter(name)
        or name in NETWORK
        or name in WRAPPERS
    )


def _recursive(name: str, args: list[Word]) -> bool:
    if name in _RECURSIVE_ALWAYS:
        return True
    if name in ("grep", "egrep", "fgrep", "cp", "diff", "scp", "zip", "chmod", "chown", "du"):
        return bool(split_flags([w.text for w in args if not w.substituted])
                    & {"-r", "-R", "--recursive", "-a", "--archive"})  # fmt: skip
    return False


def _candidates(word: Word) -> list[Word]:
    """The word, and the parts of it a program may read as a path: after ``=``,
    ``@`` or ``:`` (``--file=~/.ssh/x``, ``-d @~/.aws/credentials``), and a short
    option's glued value (``-f~/.netrc``)."""
    text = word.text
    found = [word]
    for index, char in enumerate(text[:-1]):
        if char in "=@:,":
            found.append(Word(text[index + 1 :], word.substituted, word.parameters, word.pattern))
    if text.startswith("-") and not text.startswith("--") and len(text) > 2:
        found.append(Word(text[2:], word.substituted, word.parameters, word.pattern))
    return found


def _host_of(text: str) -> str:
    try:
        if "://" in text:
            return urlsplit(text).hostname or ""
    except ValueError:
        return ""
    host = text.split("/", 1)[0].rsplit("@", 1)[-1]
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.split(":", 1)[0]


_GUESS_SEPARATORS = re.compile(r"\|\||&&|[;|&()\n`{}]|\$\(")


def _guessed_invocations(command: str) -> list[Invocation]:
    """For a line bashlex cannot parse (already ``admin``): the commands a word
    splitter sees, so the blocklist still refuses ``rm -rf /`` in it."""
    import shlex

    found: list[Invocation] = []
    for segment in _GUESS_SEPARATORS.split(command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            words = segment.split()
        words = [w for w in words if w not in ("then", "do", "else", "fi", "done", "esac", "!")]
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
            words.pop(0)
        if words:
            found.append(Invocation((posixpath.basename(words[0]), *words[1:])))
    return found
