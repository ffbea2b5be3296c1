"""The guardian: nothing the grader started outlives it, however it ends.

proc kills a run's process group (and whatever else carries the run's tag) when the run ends or
times out, and kill_tracked kills every group still running when the grader is stopped (Ctrl-C,
SIGTERM). A grader killed outright runs none of that: SIGKILL, the OOM killer, a batch system or
a remote shell that ends the grader's process group. Every lab process lives in a session of its
own, so it is not in that group and goes on. Seen on an H200: a killed grader's hung lab
(`scan --grader`, a kernel that never ends) kept its GPU at 100 % for ten minutes, and would
have kept it until the machine was restarted; the next grading on that GPU waits for it, then
reports the GPU busy.

So the first tracked run starts a guardian: a small process in a session of its own (a signal
to the grader's process group does not reach it) that reads from a pipe only the grader holds
which process groups and run tags are live, one line each: "+g PGID", "-g PGID", "+t TAG",
"-t TAG". The pipe ends when the grader ends, whatever way. The guardian then SIGKILLs every
group still live and every process whose environment carries a live tag (proc's sweep test: a
process that left its group with setsid), and exits. A grader that ends normally has nothing
live by then, and its guardian exits with nothing to do.

Where the guardian cannot be started, grading goes on without it (what it adds is cleanup after
a crash, not a check).
"""
import os
import signal
import subprocess
import sys
import threading

from . import procfs

_lock = threading.Lock()
_pipe = None  # the write end of the guardian's pipe; False when it could not be started
_proc = None  # the guardian's Popen (tests read its pid)

GRADER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _start():
    """Starts the guardian; returns the pipe's write end, or False."""
    global _proc
    r, w = os.pipe()  # not inherited by anything the grader starts (PEP 446): only it holds w
    try:
        p = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                              "from gradelib import guardian; guardian.main()", GRADER_DIR],
                             stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    except OSError:
        os.close(w)
        return False
    finally:
        os.close(r)
    _proc = p
    return w


def tell(*lines):
    """Sends lines to the guardian in one write, starting it first when there is none."""
    global _pipe
    with _lock:
        if _pipe is None:
            _pipe = _start()
        if _pipe is not False:  # an fd (never 0: the read end, opened first, takes the lowest)
            try:
                os.write(_pipe, "".join(line + "\n" for line in lines).encode())
            except OSError:  # the guardian is gone: grading goes on without it
                os.close(_pipe)
                _pipe = False


def kill_all(groups, tags):
    """SIGKILLs the process groups, and every process whose environment carries one of tags
    (a few passes: one may fork while the others die)."""
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    entries = [f"{procfs.TAG_VAR}={t}".encode() for t in tags]
    for _ in range(3 if entries else 0):
        found = [pid for pid in procfs.processes() if pid != os.getpid()
                 and any(procfs.has_tag(pid, e) for e in entries)]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def main():
    """The guardian process: follows the lines until the grader's end of the pipe closes, then
    kills what is still live."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the grader's to handle
    groups, tags = set(), set()
    for raw in sys.stdin.buffer:
        sign, kind, value = raw[:1], raw[1:2], raw[3:].strip().decode("ascii", "replace")
        live = groups if kind == b"g" else tags if kind == b"t" else None
        if live is None or not value:
            continue
        if kind == b"g" and not value.isdigit():
            continue
        item = int(value) if kind == b"g" else value
        if sign == b"+":
            live.add(item)
        elif sign == b"-":
            live.discard(item)
    kill_all(groups, tags)
