"""Reading /proc: a process's stat line (its parent, group, session, state and start), every
process of the machine, a process's environment (a run's tag) and its CPU time. proc.py (a run's
containment, its CPU-time limit) and guardian.py (the cleanup after a grader that was killed) read
it here."""
import os

TAG_VAR = "LAB_RUN_TAG"  # the environment variable that marks every process of one lab run (proc.py)
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def read(path):
    """The bytes of a small /proc file, or None when it cannot be read (gone, or not ours)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    chunks = []
    try:
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                return b"".join(chunks)
            chunks.append(data)
    except OSError:
        return None
    finally:
        os.close(fd)


class ProcInfo:
    """One line of /proc/PID/stat: ppid, pgid, sid, state, start (clock ticks since boot), and
    the command name, printable."""

    def __init__(self, ppid, pgid, sid, state, start, raw_name):
        self.ppid, self.pgid, self.sid = ppid, pgid, sid
        self.state, self.start, self.raw_name = state, start, raw_name

    @property
    def name(self):
        text = self.raw_name.decode("utf-8", "replace")
        return "".join(c if c.isprintable() else "?" for c in text)


def proc_info(pid):
    """The ProcInfo of pid, or None when it is gone (or there is no /proc)."""
    data = read(f"/proc/{pid}/stat")
    if not data:
        return None
    head, _, rest = data.rpartition(b")")  # the name may hold spaces and parentheses
    fields = rest.split()
    try:
        return ProcInfo(int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(),
                        int(fields[19]), head.split(b"(", 1)[1])
    except (IndexError, ValueError):
        return None


def processes():
    """{pid: ProcInfo} of every process on the machine now."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    out = {}
    for e in names:
        if e.isdigit():
            info = proc_info(int(e))
            if info is not None:
                out[int(e)] = info
    return out


def has_tag(pid, entry):
    """True when the environment pid started with holds the exact entry (b'LAB_RUN_TAG=...')."""
    env = read(f"/proc/{pid}/environ") or b""  # gone, or not ours to read: no tag
    return entry in env.split(b"\0")


def cpu_seconds(pid, depth=3):
    """The CPU time (user + system, all its threads, its children it has waited for and, to
    depth levels, those still running: a judge's lab process, a tool's target) that process pid
    has used, in seconds, from /proc/PID/stat; None when it cannot be read (gone, no /proc). The
    grader is root when lab runs run as another user, and root reads every stat; a process's own
    stat is readable by anyone anyway."""
    data = read(f"/proc/{pid}/stat")
    if not data:
        return None
    fields = data.rpartition(b")")[2].split()
    try:  # fields[0] is the state (field 3): utime, stime, cutime, cstime are fields 14 to 17
        total = sum(int(x) for x in fields[11:15]) / TICK
    except ValueError:
        return None
    if depth > 0:
        for child in (read(f"/proc/{pid}/task/{pid}/children") or b"").split():
            used = cpu_seconds(int(child), depth - 1)
            total += used or 0.0
    return total
