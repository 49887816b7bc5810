"""Seeded random apply_patch cases: a small tree of files and a patch for it.

The cases aim at the places where two implementations of codex's apply_patch can
disagree: context copied imperfectly (trailing or leading whitespace, typographic
dashes, quotes and spaces in either direction), CRLF, lone CR and mixed line
endings, files without a final newline or with blank last lines, ``@@``
change-context lines, ``*** End of File`` markers (where they belong and where they
do not), moves (to new paths, over existing files and directories; never onto
themselves, the one deliberate difference), deletes of files, directories, links
and missing paths, adds over existing files, directories and dangling links,
paths spelled with ``./``, spaces and accents, files that are not UTF-8 or hold
NUL bytes, executable files, stray ``***`` lines, early ``*** End Patch``, padded
markers, heredoc wrappers and CRLF patch text.

Most patches fit their tree, some are broken on purpose, so both outcomes are
covered. Every case is a pure function of ``(seed, index)``: a failure replays
from the two numbers alone.
"""

from __future__ import annotations

import random

import msgspec

# Lines files are made of: code, blank lines, odd whitespace, and typographic
# punctuation (what models tend to copy as plain ASCII).
VOCABULARY = (
    "def main():",
    "    return 0",
    "    x = compute(a, b)",
    "",
    "",
    "class Thing:",
    "    pass",
    "# a comment - with a dash",
    'print("hello")',
    "if x - 1 > 0:",
    "        y = 'it is'",
    "}",
    "{",
    "fn run() -> Result<()> {",
    '    let s = "quoted";',
    "\tindented with a tab",
    "trailing spaces   ",
    "trailing tab\t",
    "x = 1",
    "x = 1",
    "    x = 1",
    "end",
    "say \u201chi\u201d \u2014 it\u2019s fine",
    "range 1\u201310 and \u2212 5",
    "non\u00a0breaking\u2009thin",
    "\u3000ideographic space\u3000",
    "\u2018single\u2019 \u201alow\u201b quotes",
    "\u201edouble low\u201f quote",
    "hyphen\u2010non\u2011break\u2012figure\u2015bar",
    "spaces\u2002en\u2003em\u2004three\u2005four\u2006six\u2007fig\u2008punct\u200ahair",
    "narrow\u202fnbsp\u205fmath",
    "ellipsis\u2026 and \u00abguillemets\u00bb",
    "fullwidth\uff0dminus \u2032prime\u2033",
    "zero\u200bwidth",
    "\u00a0leading nbsp",
    "caf\u00e9 na\u00efve \u65e5\u672c",
    "*** not a marker inside a file",
    "-starts with a dash",
    "+starts with a plus",
    "@@ looks like a hunk",
    "tab\tin the middle",
    "\x0bvertical tab\x0c",
    "mid\rline carriage return",
    "ends in a carriage return\r",
    "\ufeffbyte order mark",
    "   ",
    "\t",
)

NEW_LINES = (
    "added line",
    "    inserted = True",
    "",
    "return \u201cnew\u201d",
    "trailing space ",
    "\ttabbed",
    "x = 2",
    "}",
)

NOT_UTF8_FILES = (
    ("binary.dat", b"\xff\xfe\x00bad\n"),
    ("latin1.txt", b"caf\xe9 au lait\n"),
    ("cut.txt", b"abc\xe2\x82"),
    ("emoji.txt", b"ok\xf0\x9f\x98z\n"),
)
PATHS = ("a.txt", "b.py", "src/c.rs", "docs/d.md", "e", "deep/er/f.txt", "sp ace/na\u00efve.md")
NEW_PATHS = ("new.txt", "fresh/new.py", "src/added.rs", "g.md", "new dir/\u00e9t\u00e9.txt")

# Typographic lookalikes of ASCII characters: those codex folds, and a few it may
# not (the last of each group), so both sides of the boundary are tried.
LOOKALIKES = {
    "-": "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d",
    "'": "\u2018\u2019\u201a\u201b\u2032",
    '"': "\u201c\u201d\u201e\u201f\u2033",
    " ": "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\u2001",
}
TO_ASCII = {variant: ascii_ for ascii_, variants in LOOKALIKES.items() for variant in variants}
ODD_SPACES = (" ", "  ", "\t", "\u00a0", "\u3000", "\u2003", "\x0b", "\x0c", "\u2028")
STRAY_LINES = (
    "***",
    "*** ",
    "*** Stray",
    "**** End of File",
    "*** End of File",
    "*** End of file",
    "*** Move to: elsewhere.txt",
    "*** Update File:",
    "***End Patch",
    " *** End Patch",
)


class PatchCase(msgspec.Struct, frozen=True):
    """A tree and a patch: files with their exact bytes, empty directories,
    symbolic links (path, target) and the files that are executable (mode 755)."""

    seed: int
    index: int
    files: tuple[tuple[str, bytes], ...]
    directories: tuple[str, ...]
    patch: str
    symlinks: tuple[tuple[str, str], ...] = ()
    executables: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"seed={self.seed} case={self.index}"


class _SourceFile(msgspec.Struct):
    """A generated file: its lines and the ending after each ('' for none)."""

    lines: list[str]
    endings: list[str]

    def data(self) -> bytes:
        return "".join(a + b for a, b in zip(self.lines, self.endings, strict=True)).encode()


def generate_cases(seed: int, count: int) -> list[PatchCase]:
    """``count`` cases from ``seed``; case ``i`` is ``generate_case(seed, i)``."""
    return [generate_case(seed, index) for index in range(count)]


def generate_case(seed: int, index: int) -> PatchCase:
    rng = random.Random(f"{seed}/{index}")
    files = {path: _source_file(rng) for path in rng.sample(PATHS, rng.randint(1, 4))}
    if rng.random() < 0.03:
        files["nul.txt"] = _SourceFile(["a\x00b", "c"], ["\n", "\n"])  # NUL is valid UTF-8
    directories: list[str] = []
    if rng.random() < 0.15:
        directories.append(rng.choice(("empty", "src/empty")))
    # What the operations may name: the files, plus odd entries that are not
    # UTF-8 files (their lines are what a model might guess).
    visible = dict(files)
    tree = [(path, source.data()) for path, source in files.items()]
    if rng.random() < 0.06:
        path, data = rng.choice(NOT_UTF8_FILES)
        tree.append((path, data))
        visible[path] = _source_file(rng)
    symlinks: list[tuple[str, str]] = []
    if rng.random() < 0.12:
        target = rng.choice([*files, "missing-target.txt"])
        symlinks.append(("link.txt", target))  # at the top, so the target is relative
        visible["link.txt"] = files.get(target) or _source_file(rng)
    executables = [path for path in files if rng.random() < 0.05]
    touched: set[str] = set()
    count = rng.choice((1, 1, 2, 2, 3))
    operations = [_operation(rng, visible, directories, touched) for _ in range(count)]
    body = [line for operation in operations for line in operation]
    if rng.random() < 0.06:
        body.insert(rng.randint(0, len(body)), rng.choice(STRAY_LINES))
    patch = _envelope(rng, body)
    return PatchCase(
        seed,
        index,
        tuple(sorted(tree)),
        tuple(directories),
        patch,
        tuple(symlinks),
        tuple(executables),
    )


def _source_file(rng: random.Random) -> _SourceFile:
    count = rng.choice((0, 1, 2, 3, 4, 5, 6, 8, 10, 12))
    lines = [rng.choice(VOCABULARY) for _ in range(count)]
    style = rng.choices(("lf", "crlf", "mixed"), weights=(6, 3, 1))[0]
    endings = [_ending(rng, style) for _ in lines]
    if lines and rng.random() < 0.2:
        lines += [""] * rng.choice((1, 1, 2))  # blank last lines
        endings += [_ending(rng, style) for _ in range(len(lines) - len(endings))]
    if lines and rng.random() < 0.25:
        endings[-1] = ""  # no final newline
    return _SourceFile(lines, endings)


def _ending(rng: random.Random, style: str) -> str:
    if style == "mixed":
        return rng.choice(("\n", "\r\n"))
    return "\r\n" if style == "crlf" else "\n"


def _operation(
    rng: random.Random, files: dict[str, _SourceFile], directories: list[str], touched: set[str]
) -> list[str]:
    """One file operation. Paths an earlier operation changed (``touched``) are
    mostly avoided, since the generator writes every patch against the original
    tree."""
    kind = rng.choices(("update", "add", "delete"), weights=(7, 2, 2))[0]
    if kind == "add":
        return _add(rng, files, directories)
    untouched = [path for path in files if path not in touched]
    if kind == "delete":
        path = _existing_or_not(rng, files, directories)
        if path in touched and untouched and rng.random() < 0.8:
            path = rng.choice(untouched)
        touched.add(path)
        return [_header(rng, "Delete File", path)]
    path = rng.choice(untouched if untouched and rng.random() < 0.85 else list(files))
    touched.add(path)
    if rng.random() < 0.05:
        path = rng.choice(("missing.txt", *directories, *NEW_PATHS))
    lines = files[path].lines if path in files else [rng.choice(VOCABULARY) for _ in range(3)]
    section = [_header(rng, "Update File", path)]
    if rng.random() < 0.15:
        # Never onto itself: there Troupe keeps the file and codex deletes it (a
        # deliberate difference, pinned by its own test).
        destinations = [
            p for p in (*NEW_PATHS, *files, *directories, "moved/deeper/x.txt") if p != path
        ]
        padding = rng.choice(("", "", "", " ", "\t", "  "))
        section.append(f"*** Move to: {rng.choice(destinations)}{padding}")
    elif rng.random() < 0.01:
        section.append("*** Move to: ")  # no path: not a move line at all
    section += _chunks(rng, lines)
    return section


def _existing_or_not(
    rng: random.Random, files: dict[str, _SourceFile], directories: list[str]
) -> str:
    roll = rng.random()
    if roll < 0.7:
        return rng.choice(list(files))
    if roll < 0.85 and directories:
        return rng.choice(directories)
    return rng.choice(("missing.txt", "src", *NEW_PATHS))


def _add(rng: random.Random, files: dict[str, _SourceFile], directories: list[str]) -> list[str]:
    roll = rng.random()
    if roll < 0.55:
        path = rng.choice(NEW_PATHS)
    elif roll < 0.9:
        path = rng.choice(list(files))  # over an existing file
    elif roll < 0.95 and directories:
        path = rng.choice(directories)
    else:
        path = rng.choice(list(files)) + "/under.txt"  # parent is a file
    contents = [rng.choice((*NEW_LINES, *VOCABULARY)) for _ in range(rng.randint(0, 4))]
    return [_header(rng, "Add File", path), *(f"+{line}" for line in contents)]


def _header(rng: random.Random, kind: str, path: str) -> str:
    if rng.random() < 0.03:
        path = "./" + path  # the same file, spelled differently
    header = f"*** {kind}: {path}"
    if rng.random() < 0.05:
        header = rng.choice(ODD_SPACES[:3]) + header + rng.choice(ODD_SPACES[:3])
    return header


def _chunks(rng: random.Random, lines: list[str]) -> list[str]:
    """One to three chunks over disjoint regions of ``lines``, in file order."""
    if not lines or rng.random() < 0.08:
        return ["@@", *(f"+{rng.choice(NEW_LINES)}" for _ in range(rng.randint(1, 3)))]
    cuts = sorted(rng.sample(range(len(lines) + 1), min(len(lines) + 1, rng.choice((2, 2, 4, 6)))))
    regions = list(zip(cuts[::2], cuts[1::2], strict=False))
    out: list[str] = []
    floor = 0  # where the previous chunk's lines end
    for number, (start, end) in enumerate(regions):
        if number and rng.random() < 0.3:
            out.append("")  # blank lines may separate chunks
        ceiling = regions[number + 1][0] if number + 1 < len(regions) else len(lines)
        if rng.random() < 0.1:
            floor, ceiling = 0, len(lines)  # contexts may overlap (and then fail)
        lines_used, chunk = _chunk(rng, lines, (floor, start, end, ceiling), first=number == 0)
        floor = max(floor, lines_used)
        out += chunk
    return out


def _chunk(
    rng: random.Random, lines: list[str], bounds: tuple[int, int, int, int], *, first: bool
) -> tuple[int, list[str]]:
    """A chunk replacing ``lines[start:end]``, its context within
    ``lines[floor:ceiling]``; returns where its lines end, and the chunk."""
    floor, start, end, ceiling = bounds
    context_start = max(floor, start - rng.choice((0, 1, 1, 2, 3)))
    context_end = max(end, min(ceiling, end + rng.choice((0, 1, 1, 2, 3))))
    removed = lines[start:end]
    if not removed and start == end and context_start == context_end:
        # A chunk needs at least one old or new line; give it some context.
        context_end = min(len(lines), end + 1)
    out: list[str] = []
    if rng.random() < 0.25 and context_start > floor:
        anchor = lines[rng.randrange(floor, context_start)]
        out.append("@@ " + (_fuzz(rng, anchor) if rng.random() < 0.5 else anchor))
    elif rng.random() < 0.03:
        out.append("@@ no such anchor line" + rng.choice(("", *ODD_SPACES[:3])))
    elif not (first and rng.random() < 0.2):
        out.append("@@" + (rng.choice(ODD_SPACES[:3]) if rng.random() < 0.05 else ""))
    elif rng.random() < 0.1:
        # Before a first chunk without its @@: codex ignores an End of File marker
        # and reads blank lines as empty context lines.
        out.append(rng.choice(("*** End of File", "", "  ")))
    out += [_context_line(rng, line) for line in lines[context_start:start]]
    added = [f"+{rng.choice(NEW_LINES)}" for _ in range(rng.choice((0, 1, 1, 2, 3)))]
    minus = [f"-{_fuzz(rng, line)}" for line in removed]
    out += added + minus if rng.random() < 0.15 else minus + added
    if not removed and not added and start == end:
        out.append(f"+{rng.choice(NEW_LINES)}")
    out += [_context_line(rng, line) for line in lines[end:context_end]]
    if rng.random() < 0.1:
        out.append(rng.choice(("+", " ", "")))  # a blank line added or kept at the end
    at_end = context_end == len(lines)
    if (at_end and rng.random() < 0.4) or rng.random() < 0.04:
        out.append("*** End of File")
    if rng.random() < 0.04:
        out.insert(rng.randint(1, len(out)), rng.choice(STRAY_LINES))
    return context_end, out


def _context_line(rng: random.Random, line: str) -> str:
    fuzzed = _fuzz(rng, line)
    if fuzzed == "" and rng.random() < 0.5:
        return ""  # an empty context line written without its space
    return " " + fuzzed


def _fuzz(rng: random.Random, line: str) -> str:
    """The line as a model might copy it: usually exact, sometimes a little off."""
    roll = rng.random()
    if roll < 0.55:
        return line
    if roll < 0.63:
        return line + rng.choice(ODD_SPACES)
    if roll < 0.70:
        return line.rstrip(" \t")
    if roll < 0.76:
        return rng.choice(ODD_SPACES[:4]) + line.lstrip(" \t")
    if roll < 0.88:
        return "".join(TO_ASCII.get(char, char) for char in line)
    if roll < 0.985:
        return "".join(
            rng.choice(LOOKALIKES[char]) if char in LOOKALIKES and rng.random() < 0.5 else char
            for char in line
        )
    return line + " (changed)"


def _envelope(rng: random.Random, body: list[str]) -> str:
    begin, end = "*** Begin Patch", "*** End Patch"
    if rng.random() < 0.08:
        begin = rng.choice(ODD_SPACES[:3]) + begin + rng.choice(ODD_SPACES[:3])
        end = end + rng.choice(ODD_SPACES[:3])
    if rng.random() < 0.04:
        # An early End Patch: codex stops there when only blank lines follow it.
        body = [*body, rng.choice((end, " " + end, end + "\t")), *rng.choice(([], [""], ["", "x"]))]
    lines = [begin, *body, end]
    if rng.random() < 0.04:
        lines = [rng.choice(("<<EOF", "<<'EOF'", '<<"EOF"')), *lines, "EOF"]
    newline = "\r\n" if rng.random() < 0.05 else "\n"
    text = newline.join(lines)
    if rng.random() < 0.7:
        text += newline
    if rng.random() < 0.05:
        text = "\n" + text + "\n\n"
    return text
