"""The command tables the shell classifier reads: which programs only look,
which administer the system, which reach the network, which paths the system owns."""

from __future__ import annotations

import re

# fmt: off

READ_ONLY = frozenset({
    "[", "ack", "ag", "basename", "cat", "cksum", "cmp", "column", "comm", "cut", "date", "df",
    "diff", "dirname", "du", "echo", "egrep", "env", "expr", "false", "fgrep", "file", "fold",
    "free", "grep", "head", "hexdump", "hostname", "id", "jq", "less", "ll", "ls", "lsof",
    "md5sum", "more", "nl", "nproc", "od", "paste", "printenv", "printf", "ps", "pwd",
    "readlink", "realpath", "rev", "rg", "seq", "sha1sum", "sha256sum", "sleep", "sort",
    "stat", "strings", "tac", "tail", "test", "tr", "tree", "true", "type", "uname", "uniq",
    "uptime", "wc", "whereis", "which", "whoami", "xxd",
})

PRIVILEGE = frozenset({
    "doas", "pkexec", "runuser", "su", "sudo",
})

SYSTEM_ADMIN = frozenset({
    "apk", "apt", "apt-get", "cfdisk", "chpasswd", "chroot", "crontab", "dd", "dnf", "dpkg",
    "fdisk", "groupadd", "groupdel", "halt", "init", "insmod", "ip6tables", "iptables",
    "killall", "losetup", "mkfs", "mkswap", "modprobe", "mount", "nft", "pacman", "parted",
    "passwd", "pkill", "poweroff", "reboot", "rmmod", "service", "sfdisk", "shred", "shutdown",
    "snap", "swapoff", "swapon", "sysctl", "systemctl", "telinit", "ufw", "umount", "useradd",
    "userdel", "usermod", "visudo", "wipefs", "yum", "zypper",
})

NETWORK = frozenset({
    "aria2c", "curl", "ftp", "http", "https", "nc", "ncat", "netcat", "rsync", "scp", "sftp",
    "socat", "ssh", "telnet", "wget",
})

SHELLS = frozenset({
    "bash", "busybox", "dash", "ksh", "mksh", "sh", "zsh",
})

WRITERS = frozenset({
    "chgrp", "chmod", "chown", "cp", "install", "ln", "mkdir", "mv", "rm", "rmdir", "sed",
    "tee", "touch", "truncate", "unlink",
})

DESTINATION_LAST = frozenset({
    "cp", "install", "ln", "mv",
})

GIT_READ = frozenset({
    "blame", "branch", "cat-file", "config", "describe", "diff", "grep", "log", "ls-files",
    "ls-tree", "reflog", "remote", "rev-parse", "shortlog", "show", "stash-list", "status",
    "tag",
})

GIT_NETWORK = frozenset({
    "clone", "fetch", "ls-remote", "pull", "push", "submodule",
})

SYSTEM_PATHS = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc",
    "/dev", "/var", "/opt", "/root", "/srv", "/snap",
)

HARMLESS_DEVICES = frozenset({
    "/dev/null", "/dev/stderr", "/dev/stdout", "/dev/tty", "/dev/zero",
})

SENSITIVE_HOME = (
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gcloud", "~/.kube",
)

LOOPBACK = re.compile(r"^(localhost|127(\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)

_CURL_VALUE_OPTIONS = frozenset({
    "--config", "--connect-timeout", "--cookie", "--cookie-jar", "--data", "--data-binary",
    "--data-raw", "--data-urlencode", "--directory-prefix", "--form", "--header",
    "--header-file", "--max-time", "--output", "--output-dir", "--range", "--referer",
    "--request", "--retry", "--upload-file", "--user", "--user-agent", "--write-out", "-A",
    "-F", "-H", "-K", "-O", "-P", "-T", "-X", "-b", "-c", "-d", "-e", "-m", "-o", "-r", "-u",
    "-w",
})

# fmt: on
