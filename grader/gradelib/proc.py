"""Running one child process with a time limit.

Size: about 580 lines, over the house's 400, because containment is one mechanism: the process
group, the private report channel, the tagged sweep of escaped processes and the limits all act
between one fork and one reap (run), and the sweep must run before the leader is reaped. The
rest (Session, the tracked groups Ctrl-C kills) are the same mechanism kept open. Who a run runs
as (runuser.py) and how runs share the machine (scheduling.py) are modules of their own.

Every program the grader starts (make, a lab binary, compute-sanitizer) runs in its own process
group, so a timeout kills the whole group: a student's code that forks, or a sanitizer with its
target, cannot outlive the case. Output goes to temporary files, not pipes, so a grandchild that
keeps a pipe open can never make the grader wait.

A lab binary's report comes on a private channel instead of stdout. A graded run (case=...) gets
`--grader` alone on its command line and a socket as its standard input: the grader writes the
case there (one line of options) and the harness writes its report back on it, so every graded
run has the same command line.
The channel is read only after the process group is gone, without blocking, so it cannot make
the grader wait either; one report is a few hundred bytes, far below a socket's buffer.

A lab run (contain=True) is also contained beyond its process group, which a process leaves with
setsid() or setpgid(): it gets LAB_RUN_TAG=<128 random bits> in its environment, which every
process it starts inherits. After the run (its end, or its timeout), and before the leader is
reaped (so that its pid, process group and session id cannot be reused meanwhile), every process
that carries the tag, is in the leader's process group or session, or descends from one of
those is killed, again and again until none is left (one may fork while the others die), and
those that were still running are named in Result.escaped. On Linux the grader is a child
subreaper (prctl), so such a process becomes the grader's child when its parent ends, and the
grader reaps the ones it killed (and only those: other threads wait for their own children).
A process that clears the tag from its environment and leaves the session is not found.

A lab run (contain=True, and every Session) never runs as root: when the grader is root, the child
drops to the run user (runuser.py) between fork and exec, after it has left for its own session,
so it keeps its process group, its report channel (its stdin) and is still found and reaped by
the sweep. Background runs (the next submissions' builds) are stopped and continued as
scheduling.py says, and their wall-clock limit does not count the time they were stopped.
"""
import ctypes
import errno
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from . import guardian, procfs, runuser, scheduling

OUTPUT_CAP = 256 * 1024  # bytes of stdout/stderr kept per stream
TAG_VAR = procfs.TAG_VAR  # the environment variable that marks every process of one lab run
SWEEP_S = 10.0  # at most this long to kill and reap what a run left behind
PR_SET_CHILD_SUBREAPER = 36


def _popen(argv, **kwargs):
    """subprocess.Popen, tried again for a while on ETXTBSY: a run's binary is a fresh copy
    (rundir.RunDir), and a process another thread forks while the copy is still open for
    writing holds that descriptor until its own exec."""
    for attempt in range(100):
        try:
            return subprocess.Popen(argv, **kwargs)
        except OSError as e:
            if e.errno != errno.ETXTBSY or attempt == 99:
                raise
            time.sleep(0.01)


_live_lock = threading.Lock()
_live = set()  # process groups of the runs going on now (kill_tracked ends them all)


_pin = threading.local()  # .cpu: the core the processes this thread starts run on (pinned)


def pinned(cpu):
    """The processes this thread starts meanwhile run on cpu alone (None: where the grader
    does): the host lab's timed runs, on the core the grader keeps for them (cores.py)."""
    return scheduling.for_this_thread(_pin, "cpu", cpu, None)


def _pin_child(pid):
    """Moves a process just started to this thread's pinned core, if any (its first instants
    may run elsewhere: a timed run warms up before it is timed)."""
    cpu = getattr(_pin, "cpu", None)
    if cpu is not None:
        try:
            os.sched_setaffinity(pid, {cpu})
        except (AttributeError, OSError):
            pass


def track(pgid, tag=None):
    """pgid (and the run's tag) is live: kill_tracked ends it, and so does the guardian when the
    grader ends without running kill_tracked (guardian.py)."""
    with _live_lock:
        _live.add(pgid)
    guardian.tell(f"+g {pgid}", *([f"+t {tag}"] if tag else []))


def untrack(pgid, tag=None):
    with _live_lock:
        _live.discard(pgid)
    guardian.tell(f"-g {pgid}", *([f"-t {tag}"] if tag else []))


def kill_tracked():
    """SIGKILL every process group the grader has running now (Ctrl-C: nothing it started may
    keep the GPU or a core busy after it stops); returns how many there were."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        kill_group(pgid)
    return len(groups)


class Result:
    """What one run produced: returncode (negative: killed by that signal), stdout, stderr,
    timed_out, seconds, report, escaped."""

    def __init__(self, returncode, stdout, stderr, timed_out, seconds, report=None, escaped=None,
                 limit=None, cpu_s=None):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.seconds = seconds
        self.report = report  # what came on the report channel (None: no channel was given)
        # [(pid, name)] of the processes of a contained run still running after it ended (after
        # its group was killed, on a timeout), which the grader then killed; sorted by pid
        self.escaped = list(escaped or [])
        # on a timeout, the limit it met: "cpu" (its CPU time) or "wall" (the wall-clock cap);
        # cpu_s: the CPU time the process had used when it ended or was killed (None: unknown)
        self.limit = limit if timed_out else None
        self.cpu_s = cpu_s

    def signal_name(self):
        """'SIGSEGV' when the process died of a signal, else None."""
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


def _read(f):
    f.seek(0)
    data = f.read(OUTPUT_CAP + 1)
    text = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    if len(data) > OUTPUT_CAP:
        text += "\n[output truncated]"
    return text


def kill_group(pgid):
    """SIGKILL every process of group pgid; a group already gone is fine."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(fd):
    """Whatever is in the pipe or socket fd now (the writers are gone or stuck), without
    blocking."""
    os.set_blocking(fd, False)
    chunks, size = [], 0
    while size <= OUTPUT_CAP:
        try:
            data = os.read(fd, 65536)
        except OSError:  # nothing more now (BlockingIOError), or the child reset a socket
            break
        if not data:
            break
        chunks.append(data)
        size += len(data)
    return b"".join(chunks)[:OUTPUT_CAP].decode("utf-8", errors="replace")


_subreaper_lock = threading.Lock()
_subreaper = None  # None: not tried yet; then whether the grader is a child subreaper


def become_subreaper():
    """Makes the grader a child subreaper (Linux), once, so that a process a run leaves behind
    becomes the grader's child when its parent ends and can be reaped after it is killed; True
    when the grader is one (False elsewhere, or when prctl fails)."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            _subreaper = False
            if sys.platform.startswith("linux"):
                try:
                    libc = ctypes.CDLL(None, use_errno=True)
                    _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
                except (OSError, AttributeError):
                    pass
    return _subreaper


def _attributed(procs, tag, leader, since):
    """The pids of procs that belong to the run led by leader: those whose environment holds its
    tag (only processes started since the leader can), those in its process group or session,
    and their descendants; never the leader itself or the grader. Without a tag (a run that is
    not contained): the members of its process group only."""
    if tag is None:
        return {pid for pid, p in procs.items() if p.pgid == leader and pid != leader}
    entry = f"{TAG_VAR}={tag}".encode()
    roots = {pid for pid, p in procs.items()
             if p.pgid == leader or p.sid == leader
             or (p.start >= since and p.state not in "ZX" and procfs.has_tag(pid, entry))}
    children = {}
    for pid, p in procs.items():
        children.setdefault(p.ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    found.discard(leader)
    found.discard(os.getpid())
    return found


def _reap(killed):
    """Reaps the processes in killed ({pid: start}) that ended as the grader's children, and
    forgets those that are gone or that another process will reap; the start time makes sure
    a pid is still the process that was killed, never a reused one."""
    me = os.getpid()
    for pid, start in list(killed.items()):
        p = procfs.proc_info(pid)
        if p is None or p.start != start:
            del killed[pid]
        elif p.state in "ZX" and p.ppid == me:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    del killed[pid]
            except ChildProcessError:
                del killed[pid]
        elif p.state in "ZX" and p.ppid not in killed:
            del killed[pid]  # its parent, not one of these, reaps it


def sweep(tag, leader, since=0, in_group_ok=False):
    """Kills every process of the run led by leader (see _attributed) until none is left, and
    reaps those that become the grader's children; returns [(pid, name)] of the ones that were
    still running, sorted, leaving out those of the leader's group when in_group_ok (after a
    timeout killed the group, its members are dying already, not escaped)."""
    escaped, killed = {}, {}
    me = os.getpid()
    deadline = time.monotonic() + SWEEP_S
    while time.monotonic() < deadline:
        procs = procfs.processes()
        mine = _attributed(procs, tag, leader, since)
        live = [pid for pid in mine if procs[pid].state not in "ZX"]
        for pid in mine - set(live):  # ended by itself, then left to the grader: reaped too
            if procs[pid].ppid == me:
                killed.setdefault(pid, procs[pid].start)
        for pid in live:
            p = procs[pid]
            if not (in_group_ok and p.pgid == leader):
                escaped.setdefault(pid, p.name)
            killed.setdefault(pid, p.start)
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap(killed)
        if not live and not killed:
            break
        time.sleep(0.002)
    return sorted(escaped.items())


def _wait_exit(p, timeout):
    """Waits up to timeout seconds (None: no limit) for p to end, without reaping it where the
    system allows (Linux), so that its pid, and with it its process group and session id, stays
    taken while the grader cleans up after it; True when it ended."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        fd = os.pidfd_open(p.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if poller.poll(None if left is None else int(left * 1000) + 1):
                    return True
                if left is not None and time.monotonic() >= deadline:
                    return False
        finally:
            os.close(fd)
    if not hasattr(os, "waitid"):  # no way to wait without reaping: reap
        try:
            p.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    delay = 0.0005
    while os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(delay if deadline is None else min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.05)
    return True


CPU_POLL_S = 0.05  # how often a CPU-time limit is checked
PAUSE_POLL_S = 0.5  # how often a background run's wall-clock limit is checked (it waits out pauses)


def _wait_limited(p, wall_s, cpu_s=None, cpu0=0.0, paused=None):
    """Waits for p to end (without reaping it, as _wait_exit) for at most wall_s seconds of wall
    time and, when cpu_s is given, cpu_s seconds of its CPU time beyond cpu0. With paused (a
    background run: paused_s), the seconds it was stopped meanwhile do not count. Returns None
    when it ended, else the limit it met: "cpu" or "wall"."""
    if cpu_s is None and (paused is None or wall_s is None):
        return None if _wait_exit(p, wall_s) else "wall"
    t0 = time.monotonic()
    p0 = paused() if paused else 0.0
    poll = CPU_POLL_S if cpu_s is not None else PAUSE_POLL_S

    def left():
        return wall_s - (time.monotonic() - t0) + (paused() - p0 if paused else 0.0)
    while True:
        if _wait_exit(p, max(0.0, min(poll, left()))):
            return None
        if cpu_s is not None:
            used = procfs.cpu_seconds(p.pid)
            if used is not None and used - cpu0 >= cpu_s:
                return "cpu"
        if left() <= 0:
            return "wall"


LAB_OUTPUT_LIMIT = 64 << 20  # bytes a judged lab process may write to each of stdout and stderr


def judge_argv(judge, binary, wrap=()):
    """The command line of a judged run: the judge (build/judge/<lab>/judge), the lab binary it
    runs as its lab process, the run user it drops that process to when the grader is root, the
    limit on what that process writes (LAB_OUTPUT_LIMIT per file: stdout's and stderr's, so a
    lab run's output takes at most twice that of the grader's disk), and wrap (a tool and its
    options, e.g. compute-sanitizer's) in front of the lab binary."""
    argv = [judge, "--judge", binary, "--output-cap", str(LAB_OUTPUT_LIMIT)]
    user = runuser.run_user()
    if user is not None:
        argv += ["--run-as", f"{user.uid}:{user.gid}"]
    if wrap:
        argv += ["--wrap", " ".join(wrap)]
    return argv


def _tagged(env, tag):
    """env with LAB_RUN_TAG=tag (first, replacing one that was there)."""
    return {TAG_VAR: tag, **{k: v for k, v in env.items() if k != TAG_VAR}}


def _channel(argv, case):
    """(argv, stdin, ours, theirs) of a run: with case, `--grader` and a socket pair (theirs is
    the child's stdin); else none, and no stdin."""
    if case is not None:
        ours, theirs = socket.socketpair()
        return list(argv) + ["--grader"], theirs, ours, theirs
    return argv, subprocess.DEVNULL, None, None


def run(argv, timeout, cwd=None, env=None, contain=False, case=None, cpu_limit=None, judged=False):
    """Runs argv with a wall-clock limit of timeout seconds and, with cpu_limit, a limit of
    cpu_limit seconds of the process's CPU time (cpu_seconds, polled every CPU_POLL_S); returns a
    Result. On a timeout the process group is killed, timed_out is True and Result.limit says
    which limit it met. With case (a line of lab options), the child
    gets `--grader` and a socket as stdin carrying the case, and Result.report holds the report
    it wrote back on it. With contain=True (a lab run) the
    child's environment (env, or the grader's) gets LAB_RUN_TAG, and every process of the run
    still running after it ended is killed and named in Result.escaped (see sweep), and when the
    grader is root the child runs as run_user() (RunUserError when there is none). A program
    that cannot be started raises OSError (the caller decides whether that is the grader's
    problem or the student's). Over 60 lines: every step from the fork to the reap is here, in
    the order containment needs (the sweep before the leader is reaped), rather than spread
    over helpers that would each need the open process. judged=True: argv is a judge (the
    grader's own code, common/harness/port.h), which stays the grader's user and drops the lab
    process it starts to the run user itself (judge_argv's --run-as)."""
    become_subreaper()
    user = runuser.run_user() if contain and not judged else None
    tag = secrets.token_hex(16) if contain else None
    if contain:
        env = _tagged(os.environ if env is None else env, tag)
    argv, stdin, ours, theirs = _channel(argv, case)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.monotonic()
            p = _popen(argv, stdout=out, stderr=err, stdin=stdin, cwd=cwd, env=env,
                       start_new_session=True, **runuser.popen_kwargs(user))
            _pin_child(p.pid)
            track(p.pid, tag)
            bg = scheduling.in_background()
            if bg:
                scheduling.enlist(p.pid)
            if theirs is not None:
                theirs.close()
                theirs = None
                try:
                    ours.sendall(case.encode() + b"\n")
                    ours.shutdown(socket.SHUT_WR)
                except OSError:
                    pass  # the child is already gone: its exit code says why
            leader = procfs.proc_info(p.pid) if contain else None
            limit = _wait_limited(p, timeout, cpu_limit, paused=scheduling.paused_s if bg else None)
            timed_out = limit is not None
            cpu_used = procfs.cpu_seconds(p.pid)  # still there: not reaped yet
            if timed_out:
                kill_group(p.pid)
                _wait_exit(p, None)
            seconds = time.monotonic() - t0
            escaped = []
            if contain:
                escaped = sweep(tag, p.pid, leader.start if leader else 0, in_group_ok=timed_out)
            # Whatever the leader did, its group must not outlive the case (a forked child that is
            # still running after the leader exited is killed too), nor stay a zombie of the
            # grader (a subreaper) when its parent is gone.
            kill_group(p.pid)
            if not contain:
                sweep(None, p.pid)
            if bg:
                scheduling.discharge(p.pid)
            untrack(p.pid, tag)  # before the reap: a reaped leader's pid (its group's id) may be reused
            p.wait()
            rep = _drain(ours.fileno()) if ours is not None else None
            return Result(p.returncode, _read(out), _read(err), timed_out, seconds, rep, escaped, limit, cpu_used)
    finally:
        for sock in (ours, theirs):
            if sock is not None:
                sock.close()


def _has_ended(p):
    """True when p has ended, without reaping it (the cleanup needs its pid kept, _wait_exit)."""
    try:
        return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class Session:
    """A lab process that runs several graded cases, one at a time: `argv --grader` with a socket
    as its standard input, to which ask() writes one case line and from which it reads the one
    report line the harness writes back; the harness then reads the next case, and ends at the
    end of the input (finish) or after a case that is not ok. Contained like run(contain=True):
    its own process group and session, LAB_RUN_TAG in its environment, and everything of it still
    running when it ends is killed and named in the final Result.escaped. stdout and stderr go to
    files; stderr_since(offset) reads what was written after a case began. As run(contain=True),
    it runs as run_user() when the grader is root, unless judged (run's judged)."""

    def __init__(self, argv, cwd=None, env=None, judged=False):
        become_subreaper()
        user = None if judged else runuser.run_user()
        self.tag = secrets.token_hex(16)
        env = _tagged(os.environ if env is None else env, self.tag)
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.ours, theirs = socket.socketpair()
        self.buf = b""
        self.t0 = time.monotonic()
        try:
            self.p = _popen(list(argv) + ["--grader"], stdout=self.out, stderr=self.err, stdin=theirs,
                            cwd=cwd, env=env, start_new_session=True, **runuser.popen_kwargs(user))
        except OSError:
            self._close_files()
            raise
        finally:
            theirs.close()
        _pin_child(self.p.pid)
        track(self.p.pid, self.tag)
        self.leader = procfs.proc_info(self.p.pid)
        self.limit, self.cpu_used = None, None  # of the last ask() that timed out
        self.result = None  # the final Result, once the process is gone

    def _close_files(self):
        for f in (self.ours, self.out, self.err):
            f.close()

    def err_offset(self):
        """Where stderr ends now (stderr_since reads from there)."""
        return os.fstat(self.err.fileno()).st_size

    def stderr_since(self, offset):
        self.err.seek(offset)
        data = self.err.read(OUTPUT_CAP + 1)
        return data[:OUTPUT_CAP].decode("utf-8", errors="replace")

    def pending(self):
        """Bytes on the channel beyond the reports read so far (without waiting)."""
        extra = self.buf
        self.buf = b""
        os.set_blocking(self.ours.fileno(), False)
        try:
            while len(extra) <= OUTPUT_CAP:
                data = self.ours.recv(65536)
                if not data:
                    break
                extra += data
        except OSError:
            pass
        finally:
            os.set_blocking(self.ours.fileno(), True)
        return extra

    def ask(self, line, timeout, cpu_limit=None):
        """Sends one case and waits up to timeout seconds (and, with cpu_limit, up to cpu_limit
        seconds of the process's CPU time from now) for its report: ("report", text), or
        ("ended", None) when the process closed the channel or ended first, or ("timeout", None);
        after a timeout self.limit says which limit it met ("cpu" or "wall") and self.cpu_used
        the CPU time the case used."""
        self.limit, self.cpu_used = None, None
        cpu0 = procfs.cpu_seconds(self.p.pid) or 0.0
        try:
            self.ours.sendall(line.encode() + b"\n")
        except OSError:
            return "ended", None
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self.ours.fileno(), select.POLLIN)
        step = 0.5 if cpu_limit is None else CPU_POLL_S
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            used = procfs.cpu_seconds(self.p.pid) if cpu_limit is not None else None
            if used is not None:
                self.cpu_used = used - cpu0
            if left <= 0 or (used is not None and used - cpu0 >= cpu_limit):
                self.limit = "wall" if left <= 0 else "cpu"
                return "timeout", None
            if not poller.poll(int(min(left, step) * 1000) + 1):
                if _has_ended(self.p) and not self._readable():
                    return "ended", None
                continue
            try:
                data = self.ours.recv(65536)
            except OSError:
                data = b""
            if not data:
                return "ended", None
            self.buf += data
        text, _, self.buf = self.buf.partition(b"\n")
        return "report", text.decode("utf-8", errors="replace")

    def _readable(self):
        return bool(select.select([self.ours], [], [], 0)[0])

    def finish(self, timeout, kill=False):
        """Ends the session: closes the input (the harness exits after its last case), waits up
        to timeout seconds (kill=True: kills it at once, after a case timed out), kills the
        process group and whatever else of the run is left (sweep), and returns the Result of
        the whole process; its report holds what was left on the channel."""
        if self.result is not None:
            return self.result
        try:
            self.ours.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        timed_out = kill or not _wait_exit(self.p, timeout)
        if timed_out:
            kill_group(self.p.pid)
            _wait_exit(self.p, None)
        escaped = sweep(self.tag, self.p.pid, self.leader.start if self.leader else 0, in_group_ok=timed_out)
        kill_group(self.p.pid)
        untrack(self.p.pid, self.tag)  # before the reap, as in run()
        self.p.wait()
        leftover = self.pending()
        self.result = Result(self.p.returncode, _read(self.out), _read(self.err), timed_out,
                             time.monotonic() - self.t0, leftover.decode("utf-8", errors="replace"), escaped)
        return self.result

    def release(self):
        """Closes the session's files (after finish, once its output has been read)."""
        self.finish(0, kill=True)
        self._close_files()
