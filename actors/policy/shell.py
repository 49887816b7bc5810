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

import msgspec

from actors.policy.argv import WRAPPERS, name_of, parse, split_flags
from actors.policy.categories import Category, worst
from actors.policy.command_tables import (
    BUILD_TOOLS,
    DANGEROUS_VARIABLES,
    HARMLESS_DEVICES,
    NETWORK,
    PRIVILEGE,
    READ_ONLY,
    SHELLS,
    STANDARD_BIN_DIRS,
    SYSTEM_ADMIN,
    WRITERS,
    Grammar,
    is_interpreter,
)
from actors.policy.paths import inside
from actors.policy.shell_network import git, host_of, is_loopback, network
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
from actors.policy.shell_programs import build, find, interpreter, pip, reader, writer

__all__ = [
    "FORK_BOMB",
    "Invocation",
    "ShellContext",
    "ShellVerdict",
    "classify_command",
    "is_loopback",
    "split_flags",
]

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
    runs_code: bool = False
    """The line runs code it does not show (``python -c``, a script, ``make``, npm
    scripts, ``awk`` with ``system()``, ``tar --to-command``, a changed ``PATH``):
    only the OS sandbox confines what that code does."""
    network: bool = False
    """The line reaches the network, loopback included (loopback stands in for
    another host, and the Troupe server itself listens there)."""
    links_outside: bool = False
    """The line makes a symbolic link to a target outside the working directory
    (or one known only at run time): a later write through it lands outside."""
    writes: tuple[str, ...] = ()
    """The paths inside the working directory the line writes, as the words name
    them (a symlink among them may lead outside: without the sandbox the gate has
    the environment resolve them)."""
    unconfined: tuple[str, ...] = ()
    """Why the line is ``admin`` when it runs without the OS sandbox (the reasons
    behind ``runs_code``, ``network`` and ``links_outside``)."""


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
_GLOB_CHARS = re.compile(r"[*?\[]")
_SECRET_TAIL = re.compile(r"/(environ|mem|map_files)(/|$)")
"""The end of a path known only at run time that reads another process's secrets
(``$p/environ`` in ``for p in /proc/[0-9]*``)."""
_CODE_PATH_VARIABLES = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "NODE_PATH",
        "RUBYLIB",
        "PERLLIB",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "BASH_ENV",
        "ENV",
    }
)
_SHELL_GRAMMAR = Grammar(values="oO", long_values=frozenset({"init-file", "rcfile"}))


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
        self.runs_code = False
        self.network = False
        self.links_outside = False
        self.unconfined: list[str] = []
        self.written: list[str] = []

    def runs(self, reason: str) -> None:
        """Code the line does not show runs: ``write`` under the sandbox, a fact the
        engine turns into ``admin`` without it."""
        self.runs_code = True
        self._unconfined(reason)

    def reaches(self, reason: str) -> None:
        """The line uses the network (loopback included)."""
        self.network = True
        self._unconfined(reason)

    def links_out(self, reason: str) -> None:
        """The line makes a symbolic link that leads outside the working directory."""
        self.links_outside = True
        self._unconfined(reason)

    def _unconfined(self, reason: str) -> None:
        if reason not in self.unconfined:
            self.unconfined.append(reason)

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
            self.cwd, self.runs_code, self.network, self.links_outside,
            tuple(self.written), tuple(self.unconfined),
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
        if name in _CODE_PATH_VARIABLES:
            self.runs(f"sets {name}, which chooses the programs that run")
        if name.lower() in _PROXY_VARIABLES:
            self.proxies.append(host_of(value) if not word.substituted else "")
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
                self.reaches(f"network access through a redirection ({text})")
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
                    self.runs(f"runs a program from the working directory ({name})")
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
            find(self, args, depth)
        elif name == "git":
            git(self, args)
        elif name in ("pip", "pip3"):
            pip(self, args, venv=in_workspace_program or self.venv)
        elif name in NETWORK:
            network(self, name, args)
        elif name in SYSTEM_ADMIN or name.startswith("mkfs"):
            self.admin(f"system administration or another host ({name})")
        elif name in WRITERS:
            writer(self, name, args, via)
        elif name in READ_ONLY:
            reader(self, name, args, via)
        elif is_interpreter(name):
            interpreter(self, name, args, depth, stdin, in_workspace_program)
        elif name in BUILD_TOOLS:
            build(self, name, args)
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
            self.runs(f"{how} runs {word.text}")

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

    # --- paths ----------------------------------------------------------------------

    def write_target(self, word: Word, recursive: bool = False) -> bool:
        """Judge one written path; True when it is ``admin``."""
        paths = resolve(word, self.cwd, self.context)
        refusal = write_refusal(paths, word.text, self.context, recursive)
        if refusal is not None:
            self.admin(refusal)
            return True
        for path in paths or ():
            if (
                inside(path, self.context.cwd)
                and path != self.context.cwd
                and not (_GLOB_CHARS.search(path) or path in self.written)
            ):
                self.written.append(path)
        return False

    def scan_hidden(self, words: list[Word], recursive: bool) -> None:
        """A word that names a hidden path (or, with ``recursive``, a directory
        holding one) makes the line ``admin``."""
        for word in words:
            text = word.text
            if not _PATHISH.search(text):
                continue
            named = names_hidden(text, self.context)
            if named is not None:
                self.admin(f"names a hidden path ({named}): {text}")
                return
            for candidate in _candidates(word):
                paths = resolve(candidate, self.cwd, self.context)
                if paths is None:
                    entry = names_hidden(candidate.text, self.context)
                    if entry is None and candidate.substituted:
                        if _SECRET_TAIL.search(candidate.text):
                            entry = "/proc/<pid>/environ, mem ..."
                    elif entry is None and candidate.pattern:
                        # ~/.*/* : what can the pattern reach? (``*`` may match ``..``
                        # in some shells, which makes the place unknown, not harmless)
                        reach = resolve(candidate, self.cwd, self.context, reach=True) or []
                        entry = next(
                            (
                                e
                                for p in reach
                                if (e := hidden_entry(p, self.context, recursive, True))
                            ),
                            None,
                        )
                else:
                    entry = next(
                        (e for p in paths if (e := hidden_entry(p, self.context, recursive))),
                        None,
                    )
                if entry is not None:
                    self.admin(f"reads a hidden path ({entry}): {text}")
                    return


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
