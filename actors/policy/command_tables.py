"""The command tables the shell classifier reads: which programs only look, which
change the working directory, which administer the system or reach the network,
and each one's option grammar (which options take a value) so a glued value
(``-xhost``, ``--output=f``) is read as the program reads it.

A command in no table is unknown, and an unknown command is ``admin``.
"""

from __future__ import annotations

import re

import msgspec

# fmt: off


class Grammar(msgspec.Struct, frozen=True):
    """How a program reads its options. ``values``: short option letters that take
    a value (glued ``-ofile`` or the next word); ``optional``: letters whose value
    can only be glued (``sed -i.bak``); ``long_values``: long options taking a
    value (``--output=f`` or ``--output f``); ``abbreviations``: GNU getopt accepts
    a unique prefix of a long option (``--out=f``)."""

    values: str = ""
    optional: str = ""
    long_values: frozenset[str] = frozenset()
    abbreviations: bool = True


PLAIN = Grammar()


def _g(values: str = "", long_values: str = "", optional: str = "",
       abbreviations: bool = True) -> Grammar:
    return Grammar(values, optional, frozenset(long_values.split()), abbreviations)


READ_ONLY: dict[str, Grammar] = {
    name: PLAIN for name in (
        "[", "basename", "cal", "cksum", "cmp", "comm", "date", "df", "dirname", "du",
        "echo", "expand", "false", "file", "fold", "free", "groups", "hexdump", "id",
        "less", "locale", "ls", "ll", "lsof", "md5sum", "more", "nl", "nproc", "od", "paste",
        "printenv", "printf", "ps", "pwd", "readlink", "realpath", "rev", "seq", "sha1sum",
        "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "sleep", "stat",
        "strings", "sum", "tac", "test", "tr", "tree", "true", "tty", "type", "uname",
        "unexpand", "uptime", "wc", "whereis", "which", "whoami", "yes", ":", "getconf",
        "column", "fmt", "join", "base64", "base32", "basenc", "iconv", "numfmt", "tsort",
        "pr", "look", "cut", "head", "tail", "cat", "bat", "batcat", "diff", "jq", "yq",
        "shellcheck", "tput", "stty", "dircolors", "env", "hostname", "users", "who", "w",
        "last", "top", "htop", "vmstat", "iostat", "pgrep", "pidof", "lscpu", "lsblk",
        "lsmod", "lsb_release", "journalctl", "man", "info", "help", "cloc", "tokei",
        "unset", "shift", "wait", "jobs", "dirs", "read", "mapfile", "readarray", "getopts",
        "let", "ulimit", "umask", "set", "shopt", "caller", "times", "unalias", "sha1",
        "compgen", "exit", "return", "break", "continue", "disown", "fg", "bg",
        "logout", "hash", "shuf", "nm", "objdump", "readelf", "size", "zcat", "zgrep",
        "xzcat", "bzcat", "zstdcat", "nproc", "arch", "factor", "tty",
    )
}
READ_ONLY.update({
    "grep": _g("efmABCD", "regexp file max-count after-context before-context context "
               "label devices directories binary-files include exclude exclude-from "
               "exclude-dir color colour"),
    "egrep": _g("efmABCD"), "fgrep": _g("efmABCD"),
    "rg": _g("efgtTmABCMjEr", "regexp file glob iglob type type-not max-count "
             "after-context before-context context max-columns threads encoding replace "
             "sort sortr type-add type-clear max-depth max-filesize color colors "
             "context-separator field-match-separator path-separator ignore-file pre-glob "
             "dfa-size-limit regex-size-limit engine hostname-bin hyperlink-format",
             abbreviations=False),
    "ag": _g("ABCGgmp", "after before context file-search-regex max-count path-to-ignore"),
    "ack": _g("ABCm", "type match output"),
    "sort": _g("kotSTy", "key output field-separator buffer-size temporary-directory "
               "parallel batch-size compress-program files0-from random-source sort"),
    "uniq": _g("fsw", "skip-fields skip-chars check-chars group all-repeated"),
    "xxd": _g("cgloOns", "cols groupsize len offset seek name"),
    "sed": _g("efl", "expression file line-length", optional="i"),
    "od": _g("AjNtSw", "address-radix skip-bytes read-bytes format strings width"),
    "head": _g("nc", "lines bytes"),
    "tail": _g("ncs", "lines bytes pid sleep-interval max-unchanged-stats"),
    "cut": _g("bcdf", "bytes characters delimiter fields output-delimiter"),
    "tr": PLAIN, "wc": _g("", "files0-from"),
    "diff": _g("CUDFIWxXSL", "context unified ifdef show-function-line ignore-matching-lines "
               "width exclude exclude-from starting-file label from-file to-file "
               "old-line-format new-line-format line-format palette color horizon-lines "
               "tabsize"),
    "du": _g("BdtX", "block-size max-depth threshold exclude-from exclude time-style files0-from"),
    "ls": _g("ITw", "ignore hide tabsize width block-size color format indicator-style "
             "quoting-style sort time time-style"),
    "tree": _g("LIPo", "filelimit timefmt sort charset"),
    "stat": _g("c", "format printf"), "date": _g("dfrI", "date file reference iso-8601 rfc-3339"),
    "jq": _g("", "arg argjson slurpfile rawfile args jsonargs indent from-file",
             abbreviations=False),
    "file": _g("eFfmP", "exclude exclude-quiet separator files-from magic-file parameter"),
    "ps": _g("opCUuGgtN", "format sort pid ppid user group cols columns rows"),
    "hexdump": _g("enfsL", ""), "column": _g("cstoNOElHWRTdr", ""),
    "nl": _g("bdfhilnsvw", ""), "fold": _g("w", "width"), "paste": _g("d", "delimiters"),
    "join": _g("aejot12", ""), "pr": _g("hwlNoW", ""), "base64": _g("w", "wrap"),
    "printf": _g("v", ""), "read": _g("adinNptu", ""), "mapfile": _g("dnOsuCc", ""),
    "readarray": _g("dnOsuCc", ""), "ulimit": PLAIN,
    "pgrep": _g("dgGPstuUF", "delimiter group parent session terminal euid uid pidfile ns nslist"),
    "journalctl": _g("unpSUoDMtbcI", "unit priority since until output directory machine "
                     "identifier boot cursor lines field"),
})

PRIVILEGE = frozenset({"doas", "pkexec", "runuser", "su", "sudo", "sudoedit", "run0"})

SYSTEM_ADMIN = frozenset({
    "apk", "apt", "apt-get", "aptitude", "at", "batch", "blkdiscard", "cfdisk", "chattr",
    "chpasswd", "chroot", "crontab", "cryptsetup", "dd", "debugfs", "dnf", "docker",
    "docker-compose", "dpkg", "e2fsck", "fdisk", "fsck", "gdisk", "groupadd", "groupdel",
    "groupmod", "halt", "hdparm", "hostnamectl", "hwclock", "ifconfig", "init", "insmod",
    "ip", "ip6tables", "iptables", "kexec", "kubectl", "helm", "killall", "launchctl",
    "ldconfig", "loginctl", "losetup", "lvcreate", "lvremove", "mdadm", "mkfs", "mknod",
    "mkswap", "modprobe", "mount", "nft", "nsenter", "pacman", "parted", "passwd", "pivot_root",
    "pkill", "podman", "poweroff", "reboot", "rmmod", "route", "service", "setcap", "setfacl",
    "sfdisk", "shred", "shutdown", "snap", "swapoff", "swapon", "sysctl", "systemctl",
    "systemd-run", "tc", "telinit", "timedatectl", "tune2fs", "ufw", "umount",
    "update-alternatives",
    "useradd", "userdel", "usermod", "visudo", "vgcreate", "wipefs", "yum", "zypper", "brew",
    "flatpak", "xdg-open", "open", "gio", "dbus-send", "gsettings", "capsh", "fc", "enable",
    "complete", "bind", "strace", "ltrace", "gdb", "lldb", "perf", "bpftrace", "ptrace",
    "aws", "gcloud", "gsutil", "az", "terraform", "pulumi", "ansible", "ansible-playbook",
    "heroku", "flyctl", "fly", "vercel", "netlify", "gh", "glab", "hub", "twine", "crictl",
    "minikube", "kind", "vagrant", "virsh", "qemu-system-x86_64", "firejail", "bwrap",
    "unshare-root", "parallel", "expect", "tmux", "screen", "nohup-root", "sshpass",
    "keyctl", "secret-tool", "security", "pass", "gpg", "gpg2", "ssh-add", "ssh-keygen",
    "ssh-agent", "ssh-copy-id", "vim", "vi", "nvim", "nano", "emacs", "ed", "ex",
})

NETWORK = frozenset({
    "aria2c", "curl", "ftp", "http", "https", "nc", "ncat", "netcat", "rsync", "scp", "sftp",
    "socat", "ssh", "telnet", "wget", "dig", "nslookup", "host", "ping", "ping6", "whois",
    "traceroute", "tracepath", "mtr", "nmap", "lftp", "smbclient", "mosh", "openssl",
    "xh", "httpie", "websocat", "wscat", "grpcurl", "tftp", "fetch",
})

SHELLS = frozenset({"bash", "dash", "ksh", "mksh", "sh", "zsh", "ash", "fish", "tcsh", "csh",
                    "rbash", "yash", "posh"})

INTERPRETERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "perl", "ruby", "php",
    "lua", "luajit", "deno", "bun", "Rscript", "R", "irb", "tclsh", "wish", "gawk", "mawk",
    "nawk", "awk", "julia", "groovy", "scala", "kotlin", "java", "jshell", "ipython", "ts-node",
    "tsx", "osascript", "pwsh", "powershell", "guile", "racket", "sbcl", "clojure", "elixir",
    "erl", "escript",
})
"""Programs that run code given inline, in a file or on their input."""

_PY_VERSION = re.compile(r"python\d(\.\d+)?|pypy\d?(\.\d+)?")

BUILD_TOOLS = frozenset({
    "make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "buck", "scons", "rustc",
    "rustup", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "ar", "javac", "mvn",
    "gradle", "gradlew", "ant", "sbt", "npm", "npx", "yarn", "pnpm", "pnpx", "corepack",
    "pytest", "py.test", "tox", "nox", "ruff", "black", "isort", "mypy", "pyright", "flake8",
    "pylint", "bandit", "eslint", "prettier", "tsc", "jest", "vitest", "mocha", "ava",
    "coverage", "pre-commit", "uv", "uvx", "poetry", "pipenv", "hatch", "pdm", "pip", "pip3",
    "virtualenv", "bundle", "bundler", "rake", "rspec", "composer", "phpunit", "swiftc", "zig",
    "gofmt", "golangci-lint", "staticcheck", "clippy-driver", "rustfmt", "cargo-clippy",
    "sqlite3", "diff3", "maturin", "twine-check", "sphinx-build", "mkdocs", "hugo", "jekyll",
    "webpack", "vite", "esbuild", "rollup", "parcel", "next", "nuxt", "ng", "vue-cli-service",
    "nodemon", "pm2-dev", "autoreconf", "autoconf", "automake", "configure", "libtool",
    "pkg-config", "protoc", "buf", "flutter", "dart", "gem", "mix", "rebar3", "stack", "cabal",
    "ghc", "opam", "dune", "nim", "crystal", "v", "odin", "zigcc", "bc", "dc", "clear",
    "reset", "ctags", "pandoc", "convert", "magick", "ffmpeg", "ffprobe", "xmllint",
    "nproc", "getent", "mktemp", "mkfifo", "watchman", "kill", "go", "cargo", "dotnet",
    "swift",
})
"""Programs that build, test, format or package what is in the working directory:
``write`` (they run the project's code; the sandbox bounds them)."""

WRITERS = frozenset({
    "chgrp", "chmod", "chown", "cp", "install", "ln", "mkdir", "mv", "rm", "rmdir", "tee",
    "touch", "truncate", "unlink", "patch", "tar", "zip", "unzip", "gzip", "gunzip", "bzip2",
    "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "split", "csplit", "sponge", "rsync",
    "7z", "7za",
})

WRITER_GRAMMARS: dict[str, Grammar] = {
    "cp": _g("tS", "target-directory suffix backup sparse reflink preserve no-preserve "
             "update"),
    "mv": _g("tS", "target-directory suffix backup update"),
    "ln": _g("tS", "target-directory suffix backup"),
    "install": _g("tSmogC", "target-directory suffix backup mode owner group strip-program "
                  "context"),
    "rm": _g("", "interactive"), "rmdir": PLAIN, "unlink": PLAIN,
    "mkdir": _g("mZ", "mode context"), "touch": _g("drt", "date reference time"),
    "tee": _g("", "output-error"), "truncate": _g("sr", "size reference"),
    "chmod": _g("", "reference"), "chown": _g("", "reference from"),
    "chgrp": _g("", "reference"), "patch": _g("pdiorDFBVYzgS", "strip directory input "
                                             "output reject-file ifdef fuzz prefix "
                                             "version-control basename-prefix suffix "
                                             "get backup-if-mismatch quoting-style "
                                             "reject-format read-only"),
    "split": _g("abClnt", "suffix-length bytes line-bytes lines number separator "
                "additional-suffix filter numeric-suffixes hex-suffixes"),
    "csplit": _g("bfn", "suffix-format prefix digits"),
    "unzip": _g("dxP", ""), "zip": _g("bnitxPZ", ""), "tar": _g("fCbHKLNTVX", "file directory "
          "blocking-factor format starting-file tape-length newer newer-mtime files-from "
          "label exclude exclude-from transform xform use-compress-program owner group mode "
          "mtime atime-preserve sort to-command info-script new-volume-script checkpoint "
          "checkpoint-action index-file"),
    "gzip": _g("S", "suffix"), "gunzip": _g("S", "suffix"), "bzip2": PLAIN, "bunzip2": PLAIN,
    "xz": _g("CFT", "check format threads memlimit"), "unxz": PLAIN,
    "zstd": _g("oDT", "output dict threads"), "unzstd": _g("oD", "output"), "lz4": PLAIN,
    "sponge": PLAIN, "rsync": _g("eBfT", "rsh rsync-path filter exclude include "
                                 "exclude-from include-from files-from temp-dir "
                                 "compare-dest copy-dest link-dest partial-dir log-file "
                                 "log-file-format backup-dir suffix chmod chown usermap "
                                 "groupmap out-format password-file bwlimit port "
                                 "address sockopts outbuf max-size min-size timeout "
                                 "contimeout modify-window skip-compress info debug "
                                 "stop-after stop-at"),
    "7z": PLAIN, "7za": PLAIN,
}

CURL = _g("AbcCdDEeFHKmoPQrTtuUwXxyYz",
          "abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers "
          "config connect-timeout connect-to continue-at cookie cookie-jar create-file-mode "
          "crlfile curves data data-ascii data-binary data-raw data-urlencode delegation "
          "dns-interface dns-ipv4-addr dns-ipv6-addr dns-servers doh-url dump-header "
          "egd-file engine etag-compare etag-save expect100-timeout form form-string "
          "ftp-account ftp-alternative-to-user ftp-method ftp-port ftp-ssl-ccc-mode "
          "happy-eyeballs-timeout-ms haproxy-clientip header help hostpubmd5 hostpubsha256 "
          "hsts interface ipfs-gateway json keepalive-time key key-type krb libcurl "
          "limit-rate local-port login-options mail-auth mail-from mail-rcpt max-filesize "
          "max-redirs max-time netrc-file noproxy oauth2-bearer output output-dir pass "
          "pinnedpubkey preproxy proto proto-default proto-redir proxy proxy-cacert "
          "proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile "
          "proxy-header proxy-key proxy-key-type proxy-pass proxy-pinnedpubkey "
          "proxy-service-name proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword "
          "proxy-tlsuser proxy-user proxy1.0 pubkey quote random-file range rate referer "
          "request request-target resolve retry retry-delay retry-max-time sasl-authzid "
          "service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname "
          "speed-limit speed-time stderr telnet-option tftp-blksize time-cond "
          "tls-max tls13-ciphers tlsauthtype tlspassword tlsuser trace trace-ascii "
          "trace-config unix-socket upload-file url url-query user user-agent variable "
          "write-out expand-url expand-data", abbreviations=False)
CURL_PROXY = frozenset({"-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5",
                        "--socks5-hostname", "--proxy1.0", "--doh-url", "--url"})
CURL_OUTPUT = frozenset({"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar",
                         "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save",
                         "--hsts", "--alt-svc", "--output-dir"})

WGET = _g("OoaPeiItTwUQlARDXYBbd",
          "output-document output-file append-output directory-prefix execute input-file "
          "tries timeout wait user-agent quota level accept reject domains exclude-directories "
          "base config post-data post-file body-data body-file method header user password "
          "http-user http-password proxy-user proxy-password referer load-cookies save-cookies "
          "ca-certificate certificate private-key bind-address limit-rate waitretry "
          "dns-timeout connect-timeout read-timeout restrict-file-names local-encoding "
          "remote-encoding cut-dirs default-page adjust-extension warc-file rejected-log "
          "progress secure-protocol include-directories")
WGET_OUTPUT = frozenset({"-O", "--output-document", "-o", "--output-file", "-a",
                         "--append-output", "-P", "--directory-prefix", "--save-cookies",
                         "--warc-file", "--rejected-log"})

NC = _g("ipsqwWXxOITVKceP", "")

GIT = _g("Cc", "git-dir work-tree namespace exec-path config-env super-prefix list-cmds "
         "attr-source", abbreviations=False)

GIT_READ = frozenset({
    "blame", "cat-file", "check-attr", "check-ignore", "check-mailmap", "cherry", "count-objects",
    "describe", "diff", "diff-files", "diff-index", "diff-tree", "for-each-ref", "fsck",
    "grep", "help", "log", "ls-files", "ls-tree", "merge-base", "name-rev", "range-diff",
    "reflog", "rev-list", "rev-parse", "shortlog", "show", "show-branch", "show-ref", "status",
    "var", "verify-commit", "verify-tag", "version", "whatchanged", "annotate", "get-tar-commit-id",
})

GIT_WRITE = frozenset({
    "add", "am", "apply", "archive", "bisect", "branch", "bundle", "checkout", "cherry-pick",
    "clean", "commit", "commit-tree", "format-patch", "gc", "hash-object", "init", "merge",
    "mergetool-no", "mv", "notes", "pack-refs", "prune", "read-tree", "rebase", "remote",
    "repack", "replace", "reset", "restore", "revert", "rm", "sparse-checkout", "stash",
    "switch", "symbolic-ref", "tag", "update-index", "update-ref", "worktree", "write-tree",
    "checkout-index", "mktag", "mktree", "maintenance", "rerere", "config", "merge-file",
    "merge-tree", "stripspace", "interpret-trailers", "column", "fmt-merge-msg", "mailinfo",
    "mailsplit", "patch-id", "unpack-objects", "index-pack", "pack-objects", "verify-pack",
})

GIT_NETWORK = frozenset({
    "clone", "fetch", "fetch-pack", "http-fetch", "http-push", "ls-remote", "pull", "push",
    "receive-pack", "request-pull", "send-email", "send-pack", "submodule", "svn", "p4",
    "upload-archive", "upload-pack", "cvsimport", "cvsexportcommit", "cvsserver", "daemon",
    "instaweb", "lfs", "remote-http", "remote-https", "remote-ext", "remote-fd", "imap-send",
    "credential", "credential-store", "credential-cache", "difftool", "mergetool", "web--browse",
    "filter-branch", "shell",
})
"""git subcommands that talk to another host, or run programs of the user's
configuration: ``admin``."""

GIT_SAFE_CONFIG_KEYS = frozenset({
    "user.name", "user.email", "init.defaultbranch", "core.autocrlf", "core.filemode",
    "pull.rebase", "commit.gpgsign", "tag.gpgsign", "advice.detachedhead", "color.ui",
    "core.ignorecase", "merge.ff", "push.default",
})
"""Keys a model may set in the repository's own config without a question: none
of them runs a program or names a host."""

SYSTEM_PATHS = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc",
    "/dev", "/var", "/opt", "/root", "/srv", "/snap",
)

STANDARD_BIN_DIRS = frozenset({
    "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
})
"""A command named by its path in one of these is the program of that name."""

HARMLESS_DEVICES = frozenset({
    "/dev/null", "/dev/stderr", "/dev/stdout", "/dev/tty", "/dev/zero", "/dev/stdin",
})

LOOPBACK = re.compile(r"^(localhost|127(\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)

DANGEROUS_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PROMPT_COMMAND", "IFS",
    "PS4", "HOME", "CDPATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS", "GIT_PROXY_COMMAND",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE_DIR", "PAGER", "EDITOR", "VISUAL", "BROWSER",
    "SSH_ASKPASS", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "RUBYOPT", "PYTHONSTARTUP",
    "PYTHONINSPECT", "BASH_FUNC", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE", "FIGNORE", "TMPDIR",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "NPM_CONFIG_PREFIX", "npm_config_prefix",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "CURL_HOME", "WGETRC", "SSH_AUTH_SOCK",
})
"""Variables that make a later program run other code, read other config, reach
another host or see ``~`` elsewhere: setting one in the line is ``admin``."""

# fmt: on


def is_interpreter(name: str) -> bool:
    return name in INTERPRETERS or _PY_VERSION.fullmatch(name) is not None
