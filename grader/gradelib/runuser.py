"""The unprivileged user lab code runs as when the grader is root.

A lab run (proc.run with contain=True, and every proc.Session) never runs as root: when the
grader is root, the child drops to the run user (run_user: the config's sandbox.user,
`scan-run` as setup.sh and the Dockerfile create it, else `nobody`) between fork and exec
(popen_kwargs: Popen's user/group/extra_groups, so setgroups([]), setgid, setuid). When the
grader is not root (a student's own machine) there is nothing to drop: the child runs as the
grader's user. No run user at all (neither exists) is a RunUserError, never a run as root.
"""
import os
import pwd
import threading

DEFAULT_RUN_USER = "scan-run"  # grader/config.json "sandbox": {"user": ...}; deploy/setup.sh makes it
FALLBACK_RUN_USER = "nobody"


class RunUserError(Exception):
    """The grader is root and has no unprivileged user to run lab code as (one line)."""


class RunUser:
    """The user a lab run drops to: name, uid, gid (its primary group; no other groups)."""

    def __init__(self, name, uid, gid):
        self.name, self.uid, self.gid = name, uid, gid

    def __repr__(self):
        return f"RunUser({self.name!r}, uid={self.uid}, gid={self.gid})"


_run_user_lock = threading.Lock()
_run_user_name = DEFAULT_RUN_USER
_run_user = None  # resolved on first use


def set_run_user(name):
    """The user lab runs drop to when the grader is root (the config's sandbox.user); resolved
    at the next run (run_user)."""
    global _run_user_name, _run_user
    with _run_user_lock:
        _run_user_name, _run_user = name or DEFAULT_RUN_USER, None


def run_user():
    """The RunUser lab runs run as, or None when the grader is not root (nothing to drop: they
    run as the grader's own user). Root: the configured user, else `nobody`; a user with uid 0
    is never taken. Raises RunUserError when neither exists."""
    global _run_user
    if os.geteuid() != 0:
        return None
    with _run_user_lock:
        if _run_user is None:
            for name in dict.fromkeys((_run_user_name, FALLBACK_RUN_USER)):
                try:
                    pw = pwd.getpwnam(name)
                except KeyError:
                    continue
                if pw.pw_uid != 0 and pw.pw_gid != 0:
                    _run_user = RunUser(name, pw.pw_uid, pw.pw_gid)
                    break
            else:
                raise RunUserError(f"the grader runs as root and neither the run user "
                                   f"'{_run_user_name}' nor '{FALLBACK_RUN_USER}' exists (or has a "
                                   f"non-root uid and group): create one (grader/deploy/setup.sh: "
                                   f"useradd --system {DEFAULT_RUN_USER}); lab code never runs as root")
        return _run_user


def popen_kwargs(user):
    """Popen's keyword arguments that make the child run as user (None: as the grader)."""
    if user is None:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}
