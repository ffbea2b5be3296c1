"""Running one child process with a time limit.

Every program the grader starts (make, a lab binary, compute-sanitizer) runs in its own process
group, so a timeout kills the whole group: a student's code that forks, or a sanitizer with its
target, cannot outlive the case. Output goes to temporary files, not pipes, so a grandchild that
keeps a pipe open can never make the grader wait.

A lab binary's report comes on a private channel instead of stdout (report=True): a pipe whose
write end the child gets as `--report-fd N` (common/harness.h). The pipe is read only after the
process group is gone, without blocking, so it cannot make the grader wait either; one report
is a few hundred bytes, far below a pipe's buffer.
"""
import os
import signal
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


def run(argv, timeout, cwd=None, env=None, report=False):
    """Runs argv with a wall-clock limit of timeout seconds; returns a Result. On a timeout the
    process group is killed and timed_out is True. With report=True, `--report-fd N` is added to
    argv and Result.report holds what the child wrote there. A program that cannot be started
    raises OSError (the caller decides whether that is the grader's problem or the student's)."""
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
