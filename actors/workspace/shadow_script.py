"""The shell scripts behind workspace snapshots: one ``bash -c`` per operation.

Each operation is one :class:`~protocol.environment.ExecCommand` in the
environment, so it costs one round trip over SSH and needs nothing on the host but
bash, git (2.26 or later: ``--pathspec-from-file``) and the usual POSIX tools
(find, mkdir, tr, wc). Every value from Troupe is quoted with :func:`shlex.quote`;
every path that comes from the tree travels NUL-separated and is used only as a
literal pathspec, so no file name can be read as an option, a glob or a command.

Git runs against a shadow repository (``GIT_DIR``) with the working tree as
``GIT_WORK_TREE``: the user's own ``.git`` is never read for content nor written.
What git would take from elsewhere is switched off: every ``GIT_*`` variable of the
environment is dropped, the system and global config files are not read (so no
filter, fsmonitor or hook the user's config names can run), the shadow's own
config is written by Troupe, and ``info/attributes`` in the shadow (which wins over
the tree's ``.gitattributes``) turns off filters, end-of-line conversion, ident and
working-tree encodings, so content is stored and restored byte for byte and a
planted ``.gitattributes`` can name no program. Only plumbing and ``add``/``rm``/
``read-tree`` run, none of which runs hooks.
"""

from __future__ import annotations

import shlex

ERROR_MARK = "#troupe-error"
SNAPSHOT_MARK = "#troupe-snapshot"
RESTORE_MARK = "#troupe-restore"
MATERIALIZE_MARK = "#troupe-materialize"

SAFE_OPTIONS = (
    "--no-pager",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.symlinks=true",
    "-c", "core.filemode=true",
    "-c", "core.ignorecase=false",
    "-c", "core.sparseCheckout=false",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.sshCommand=false",
    "-c", "diff.external=",
    "-c", "credential.helper=",
    "-c", "protocol.allow=never",
    "-c", "submodule.recurse=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)  # fmt: skip
"""Options before every shadow git command: belt and braces over the shadow's own
config (which Troupe writes), in case that config was changed behind its back."""

SHADOW_CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\thooksPath = /dev/null
\tuntrackedCache = true
\tlogAllRefUpdates = false
[index]
\tversion = 4
[gc]
\tauto = 0
[maintenance]
\tauto = false
"""

SHADOW_ATTRIBUTES = "* -text -crlf !eol -filter -ident !working-tree-encoding -diff -merge\n"
"""Highest-precedence attributes: bytes in, the same bytes out, no program named."""

_PREAMBLE = r"""
set -u
fail() { printf '\n%s %s %s\n' '#troupe-error' "$1" "$2"; exit 3; }
command -v git >/dev/null 2>&1 || fail git-missing "git is not installed on this host"
troupe_gv=$(git version 2>/dev/null)
if ! [[ $troupe_gv =~ ^git\ version\ ([0-9]+)\.([0-9]+) ]] || [ "${BASH_REMATCH[1]}" -lt 2 ] \
    || { [ "${BASH_REMATCH[1]}" -eq 2 ] && [ "${BASH_REMATCH[2]}" -lt 26 ]; }; then
  fail git-old "$troupe_gv is too old (workspace snapshots need git 2.26 or later)"
fi
cd -P -- "$troupe_root" 2>/dev/null || fail no-root "cannot enter $troupe_root"
troupe_root=$PWD  # physical after cd -P; no subshell (each process here is time on a start)
for troupe_v in ${!GIT_@}; do
  unset "$troupe_v"
done
troupe_read() {  # the file's content into troupe_got, without a process
  troupe_got=
  [ ! -f "$1" ] || IFS= read -r -d '' troupe_got < "$1" || :
}
# The user's ignore rules that live outside the tree: the global excludes file
# (read here, before the global config is switched off) and the repository's
# info/exclude (asked of the user's git with its programs off).
troupe_gex=$(git --no-pager config --global --path --get core.excludesFile 2>/dev/null) \
  || troupe_gex=
troupe_uex=
if [ -d .git ] && [ ! -L .git ]; then
  troupe_uex="$troupe_root/.git/info/exclude"
elif [ -e .git ]; then  # a worktree's or submodule's .git file: its common directory's
  troupe_uex=$(git --no-pager -c core.fsmonitor= -c core.hooksPath=/dev/null \
    rev-parse --git-path info/exclude 2>/dev/null) || troupe_uex=
  case $troupe_uex in ""|/*) ;; *) troupe_uex="$troupe_root/$troupe_uex";; esac
fi
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null
export GIT_ATTR_NOSYSTEM=1 GIT_NO_REPLACE_OBJECTS=1 GIT_TERMINAL_PROMPT=0 GIT_PAGER=cat PAGER=cat
export GIT_AUTHOR_NAME=Troupe GIT_AUTHOR_EMAIL=troupe@localhost
export GIT_COMMITTER_NAME=Troupe GIT_COMMITTER_EMAIL=troupe@localhost
troupe_home=${HOME:-}
if [ -z "$troupe_base" ]; then
  [ -n "${XDG_CACHE_HOME:-}$troupe_home" ] || fail shadow "HOME is not set: give a shadow directory"
  troupe_base="${XDG_CACHE_HOME:-$troupe_home/.cache}/troupe/shadow"
fi
case $troupe_base in
  "~") troupe_base=$troupe_home;; "~/"*) troupe_base="$troupe_home/${troupe_base#"~/"}";;
esac
troupe_shadow="$troupe_base${troupe_key:+/$troupe_key}"
export GIT_DIR="$troupe_shadow" GIT_WORK_TREE="$troupe_root"
g() { git OPTIONS "$@"; }
if [ ! -f "$troupe_shadow/HEAD" ]; then
  mkdir -p -- "$troupe_shadow" 2>/dev/null && chmod 700 -- "$troupe_shadow" \
    || fail shadow "cannot create $troupe_shadow"
  git init -q --template= >/dev/null 2>&1 || fail shadow "git init failed in $troupe_shadow"
  printf '%s' "$troupe_config" > "$troupe_shadow/config" || fail shadow "cannot write its config"
  git symbolic-ref HEAD refs/heads/troupe
fi
if [ ! -d "$troupe_shadow/troupe-files" ]; then
  mkdir -p -- "$troupe_shadow/info" "$troupe_shadow/troupe-skipped" \
    "$troupe_shadow/troupe-files" || fail shadow "cannot write in $troupe_shadow"
fi
printf '%s' "$troupe_attributes" > "$troupe_shadow/info/attributes"
troupe_locked=
if command -v flock >/dev/null 2>&1; then
  exec 9>"$troupe_shadow/troupe.lock"
  flock -w 120 9 || fail busy "another snapshot of this tree is still running"
  troupe_locked=1
  # Holding the lock, no Troupe snapshot runs here: a git lock is a leftover of one killed.
  [ ! -e "$troupe_shadow/index.lock" ] || rm -f -- "$troupe_shadow/index.lock"
  for troupe_v in "$troupe_shadow"/troupe-tmp.*; do
    [ ! -e "$troupe_v" ] || rm -rf -- "$troupe_v"
  done
fi
if [ -n "$troupe_locked" ]; then
  # One snapshot at a time here: its scratch files are reused (each written afresh),
  # neither made nor removed by a process of its own.
  troupe_tmp="$troupe_shadow/troupe-work"
  [ -d "$troupe_tmp" ] || mkdir -- "$troupe_tmp" || fail shadow "cannot write in $troupe_shadow"
else
  troupe_tmp="$troupe_shadow/troupe-tmp.$$"
  [ ! -e "$troupe_tmp" ] || rm -rf -- "$troupe_tmp"
  mkdir -- "$troupe_tmp" || fail shadow "cannot write in $troupe_shadow"
  trap 'rm -rf -- "$troupe_tmp"' EXIT
fi
troupe_ex=
if [ -n "$troupe_gex" ]; then troupe_read "$troupe_gex"; troupe_ex+="$troupe_got"$'\n'; fi
if [ -n "$troupe_uex" ]; then troupe_read "$troupe_uex"; troupe_ex+="$troupe_got"$'\n'; fi
troupe_read "$troupe_shadow/info/exclude"
if [ "$troupe_ex" != "$troupe_got" ]; then
  printf '%s' "$troupe_ex" > "$troupe_shadow/info/exclude"
fi

# snapshot: leaves $troupe_commit, $troupe_count, $troupe_addrc and the skip list
# in $troupe_tmp/skipped (NUL-separated, L<path> for a large file, R<path> for a
# nested repository).
troupe_snapshot() {
  # Candidates for the size cap: what git sees as new (ignore rules applied, so an
  # ignored node_modules costs nothing) or changed since the last snapshot; and
  # what it sees as a repository of its own (``dir/``, with a .git inside).
  : > "$troupe_tmp/found"
  {
    g ls-files -z -o --exclude-standard 2>/dev/null
    g diff-files -z --name-only 2>/dev/null
  } > "$troupe_tmp/candidates"
  local e p kind
  while IFS= read -r -d '' p; do
    case $p in
      */) [ ! -e "$p.git" ] || printf 'R%s\0' "${p%/}" >> "$troupe_tmp/found";;
      *) printf './%s\0' "$p";;
    esac
  done < "$troupe_tmp/candidates" > "$troupe_tmp/sized"
  if [ -s "$troupe_tmp/sized" ]; then
    xargs -0 sh -c \
      'exec find "$@" -prune -type f -size +'"$troupe_cap"'c -exec printf "L%s\0" {} +' sh \
      < "$troupe_tmp/sized" >> "$troupe_tmp/found" 2>/dev/null
  fi
  printf '.\0' > "$troupe_tmp/add"
  : > "$troupe_tmp/rm"; : > "$troupe_tmp/paths"
  : > "$troupe_tmp/ignored"; : > "$troupe_tmp/skipped"
  local -a kinds=() paths=()
  while IFS= read -r -d '' e; do
    kind=${e:0:1}; p=${e:1}; p=${p#./}
    [ "$kind" = R ] && p=${p%/.git}
    kinds+=("$kind"); paths+=("$p")
    printf ':(literal)%s\0' "$p" >> "$troupe_tmp/rm"
    printf '%s\0' "$p" >> "$troupe_tmp/paths"
  done < "$troupe_tmp/found"
  if [ ${#paths[@]} -gt 0 ]; then
    # What the ignore rules leave out anyway is neither reported nor excluded
    # again (git refuses a pathspec naming an ignored file).
    g check-ignore -z --stdin --no-index < "$troupe_tmp/paths" > "$troupe_tmp/ignored" 2>/dev/null
    # check-ignore answers in the order it was asked (no associative array: bash 3.2).
    local -a ignored=()
    while IFS= read -r -d '' p; do ignored+=("$p"); done < "$troupe_tmp/ignored"
    local i j=0
    for i in "${!paths[@]}"; do
      if [ "$j" -lt ${#ignored[@]} ] && [ "${ignored[$j]}" = "${paths[$i]}" ]; then
        j=$((j + 1))
        continue
      fi
      printf '%s%s\0' "${kinds[$i]}" "${paths[$i]}" >> "$troupe_tmp/skipped"
      printf ':(exclude,literal)%s\0' "${paths[$i]}" >> "$troupe_tmp/add"
    done
    g rm -r -q --cached --ignore-unmatch --pathspec-from-file="$troupe_tmp/rm" --pathspec-file-nul \
      >/dev/null 2>&1
  fi
  g add -A --ignore-errors --pathspec-from-file="$troupe_tmp/add" --pathspec-file-nul \
    2> "$troupe_tmp/adderr" >/dev/null
  troupe_addrc=$?
  local tree parent parent_tree
  tree=$(g write-tree 2>>"$troupe_tmp/adderr") \
    || fail write-tree "$(head -c 2000 "$troupe_tmp/adderr")"
  # The last snapshot and, beside it, its file count and tree (no git process).
  local parent= parent_count= parent_tree=
  [ ! -f "$troupe_shadow/refs/heads/troupe" ] || read -r parent < "$troupe_shadow/refs/heads/troupe"
  if [ -n "$parent" ] && [ -f "$troupe_shadow/troupe-files/$parent" ]; then
    read -r parent_count parent_tree < "$troupe_shadow/troupe-files/$parent"
  fi
  local same=
  if [ -n "$parent" ] && [ "$parent_tree" = "$tree" ]; then
    if [ ! -s "$troupe_tmp/skipped" ]; then
      [ -s "$troupe_shadow/troupe-skipped/$parent" ] || same=1
    elif command -v cmp >/dev/null 2>&1 \
        && cmp -s -- "$troupe_tmp/skipped" "$troupe_shadow/troupe-skipped/$parent"; then
      same=1
    fi
  fi
  if [ -n "$same" ]; then
    troupe_commit=$parent
    troupe_count=$parent_count
  else
    if [ -n "$parent" ]; then
      troupe_commit=$(printf 'troupe workspace snapshot\n' | g commit-tree "$tree" -p "$parent") \
        || fail commit "git commit-tree failed"
    else
      troupe_commit=$(printf 'troupe workspace snapshot\n' | g commit-tree "$tree") \
        || fail commit "git commit-tree failed"
    fi
    g update-ref refs/heads/troupe "$troupe_commit" || fail commit "git update-ref failed"
    if [ -s "$troupe_tmp/skipped" ]; then
      cp -- "$troupe_tmp/skipped" "$troupe_shadow/troupe-skipped/$troupe_commit"
    fi
    # The index's entry count is in its header (bytes 8 to 11, big-endian).
    set --
    ! command -v od >/dev/null 2>&1 \
      || set -- $(od -An -tu1 -j8 -N4 -- "$troupe_shadow/index" 2>/dev/null)
    if [ $# -eq 4 ]; then
      troupe_count=$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 ))
    else
      troupe_count=$(g ls-files -z | tr -cd '\0' | wc -c)
      troupe_count=${troupe_count//[^0-9]/}
    fi
    printf '%s %s\n' "$troupe_count" "$tree" > "$troupe_shadow/troupe-files/$troupe_commit"
  fi
}
"""


def _preamble(root: str, base: str, key: str, cap: int) -> str:
    values = (
        f"troupe_root={shlex.quote(root)}\n"
        f"troupe_base={shlex.quote(base)}\n"
        f"troupe_key={shlex.quote(key)}\n"
        f"troupe_cap={int(cap)}\n"
        f"troupe_config={shlex.quote(SHADOW_CONFIG)}\n"
        f"troupe_attributes={shlex.quote(SHADOW_ATTRIBUTES)}\n"
    )
    return values + _PREAMBLE.replace("OPTIONS", shlex.join(SAFE_OPTIONS))


def snapshot_script(root: str, base: str, key: str, cap: int) -> str:
    """Record the tree; print the skip list, then ``#troupe-snapshot COMMIT COUNT RC
    SHADOW`` on the last line (the output's tail survives any capture cap)."""
    return _preamble(root, base, key, cap) + (
        "troupe_snapshot\n"
        '[ ! -s "$troupe_tmp/skipped" ] || cat -- "$troupe_tmp/skipped"\n'
        "printf '\\n%s ' '#troupe-adderr'\n"
        '[ ! -s "$troupe_tmp/adderr" ] || head -c 2000 "$troupe_tmp/adderr" | tr "\\0\\n" "  "\n'
        "printf '\\n%s %s %s %s %s\\n' "
        f"'{SNAPSHOT_MARK}' "
        '"$troupe_commit" "$troupe_count" "$troupe_addrc" "$troupe_shadow"\n'
    )


def restore_script(root: str, base: str, key: str, cap: int, commit: str) -> str:
    """Snapshot the tree as it is now (so the restore can be undone), then bring the
    tree back to ``commit``: print the changes (``git diff-index`` of the index as it
    is now against the target, NUL-separated), then ``#troupe-restore BEFORE``.

    What the target skipped (large files, nested repositories) is taken out of the
    index first, so the restore leaves it alone, whatever it has become."""
    return _preamble(root, base, key, cap) + f"troupe_target={shlex.quote(commit)}\n" + _RESTORE


_RESTORE = r"""
g cat-file -e "$troupe_target^{commit}" 2>/dev/null \
  || fail unknown "no snapshot $troupe_target in $troupe_shadow"
troupe_snapshot
troupe_before=$troupe_commit
troupe_keep="$troupe_shadow/troupe-skipped/$troupe_target"
if [ -s "$troupe_keep" ]; then
  : > "$troupe_tmp/keep"
  while IFS= read -r -d '' e; do
    printf ':(literal)%s\0' "${e:1}" >> "$troupe_tmp/keep"
  done < "$troupe_keep"
  g rm -r -q --cached --ignore-unmatch --pathspec-from-file="$troupe_tmp/keep" \
    --pathspec-file-nul >/dev/null 2>&1
fi
g diff-index --cached -z --no-renames --name-status "$troupe_target" > "$troupe_tmp/diff" \
  || fail diff "git diff-index failed"
g read-tree -u --reset "$troupe_target" 2> "$troupe_tmp/rterr" \
  || fail read-tree "$(head -c 2000 "$troupe_tmp/rterr")"
cat -- "$troupe_tmp/diff"
printf '\n%s %s\n' '#troupe-restore' "$troupe_before"
"""


def materialize_script(root: str, base: str, key: str, commit: str, dest: str) -> str:
    """Write the tree of ``commit`` into ``dest`` (new or empty), with an index of
    its own so the shadow's index stays the tree's; prints ``#troupe-materialize
    COUNT DEST``."""
    return (
        _preamble(root, base, key, 0)
        + f"troupe_target={shlex.quote(commit)}\ntroupe_dest={shlex.quote(dest)}\n"
        + _MATERIALIZE
    )


_MATERIALIZE = r"""
g cat-file -e "$troupe_target^{commit}" 2>/dev/null \
  || fail unknown "no snapshot $troupe_target in $troupe_shadow"
if [ -e "$troupe_dest" ] || [ -L "$troupe_dest" ]; then
  [ -d "$troupe_dest" ] && [ ! -L "$troupe_dest" ] \
    || fail dest "$troupe_dest exists and is not a directory"
  [ -z "$(ls -A -- "$troupe_dest")" ] || fail dest "$troupe_dest is not empty"
fi
mkdir -p -- "$troupe_dest" || fail dest "cannot create $troupe_dest"
troupe_dest=$(cd -P -- "$troupe_dest" && pwd -P) || fail dest "cannot enter $troupe_dest"
rm -f -- "$troupe_tmp/index"  # its own index, fresh: the scratch directory may be reused
GIT_INDEX_FILE="$troupe_tmp/index" GIT_WORK_TREE="$troupe_dest" \
  g read-tree -u --reset "$troupe_target" 2> "$troupe_tmp/rterr" \
  || fail read-tree "$(head -c 2000 "$troupe_tmp/rterr")"
troupe_count=$(GIT_INDEX_FILE="$troupe_tmp/index" g ls-files -z | tr -cd '\0' | wc -c | tr -d ' ')
printf '\n%s %s %s\n' '#troupe-materialize' "$troupe_count" "$troupe_dest"
"""
