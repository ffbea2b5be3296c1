"""Running one child process with a time limit.

Every program the grader starts (make, a lab binary, compute-sanitizer) runs in its own process
group, so a timeout kills the whole group: a student's code that forks, or a sanitizer with its
target, cannot outlive the case. Output goes to temporary files, not pipes, so a grandchild that
keeps a pipe open can never make the grader wait.

A lab binary's report comes on a private channel instead of stdout. A graded run (case=...) gets
`--grader` alone on its command line and a socket as its standard input: the grader writes the
case there (one line of options) and the harness writes its report back on it, so every graded
run has the same command line. The older form (report=True) passes a pipe as `--report-fd N`.
The channel is read only after the process group is gone, without blocking, so it cannot make
the grader wait either; one report is a few hundred bytes, far below a socket's buffer.
"""
import os
import signal
import socket
import subprocess
import tempfile
import time

OUTPUT_CAP = 256 * 1024  # bytes of stdout/stderr kept per stream


class Result:
    """What one run produced: returncode (negative: killed by that signal), stdout, stderr,
    timed_out, seconds."""

    def __init__(self, returncode, stdout, stderr, timed_out, seconds, report=None):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.seconds = seconds
        self.report = report  # what came on the report channel (None: no channel was given)

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
    """Whatever is in the pipe fd now (the writers are gone or stuck), without blocking."""
    os.set_blocking(fd, False)
    chunks, size = [], 0
    while size <= OUTPUT_CAP:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not data:
            break
        chunks.append(data)
        size += len(data)
    return b"".join(chunks)[:OUTPUT_CAP].decode("utf-8", errors="replace")


def _drain_socket(sock):
    """Whatever the child wrote on its end of the case socket, without blocking."""
    sock.setblocking(False)
    chunks, size = [], 0
    while size <= OUTPUT_CAP:
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
        size += len(data)
    return b"".join(chunks)[:OUTPUT_CAP].decode("utf-8", errors="replace")


def run(argv, timeout, cwd=None, env=None, report=False, case=None):
    """Runs argv with a wall-clock limit of timeout seconds; returns a Result. On a timeout the
    process group is killed and timed_out is True. With case (a line of lab options), the child
    gets `--grader` and a socket as stdin carrying the case, and Result.report holds the report
    it wrote back. With report=True, `--report-fd N` is added to argv instead. A program that
    cannot be started raises OSError (the caller decides whose problem that is)."""
    if case is not None:
        return _run_case(argv, timeout, cwd, env, case)
    rfd = wfd = None
    if report:
        rfd, wfd = os.pipe()
        argv = list(argv) + ["--report-fd", str(wfd)]
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.monotonic()
            p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd,
                                 env=env, start_new_session=True, pass_fds=(wfd,) if report else ())
            if wfd is not None:
                os.close(wfd)
                wfd = None
            timed_out = False
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(p.pid)
                p.wait()
            # Whatever the leader did, its group must not outlive the case (a forked child that is
            # still running after the leader exited is killed too).
            kill_group(p.pid)
            seconds = time.monotonic() - t0
            rep = _drain(rfd) if report else None
            return Result(p.returncode, _read(out), _read(err), timed_out, seconds, rep)
    finally:
        for fd in (rfd, wfd):
            if fd is not None:
                os.close(fd)


def _run_case(argv, timeout, cwd, env, case):
    """run() for a graded run: the case goes in and the report comes back on a socket (stdin)."""
    ours, theirs = socket.socketpair()
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.monotonic()
            p = subprocess.Popen(list(argv) + ["--grader"], stdout=out, stderr=err, stdin=theirs,
                                 cwd=cwd, env=env, start_new_session=True)
            theirs.close()
            theirs = None
            try:
                ours.sendall(case.encode() + b"\n")
                ours.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the child is already gone: its exit code says why
            timed_out = False
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(p.pid)
                p.wait()
            kill_group(p.pid)
            seconds = time.monotonic() - t0
            rep = _drain_socket(ours)
            return Result(p.returncode, _read(out), _read(err), timed_out, seconds, rep)
    finally:
        for s in (ours, theirs):
            if s is not None:
                s.close()
