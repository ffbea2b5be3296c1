"""Progress on stderr: log lines stamped with the seconds since the grader started, and a
progress bar (batch mode) that a log line never runs on from.
"""
import statistics
import sys
import time

T0 = time.monotonic()  # the grader's start (this module is imported as grade.py starts)


def log(msg):
    """One line of progress on stderr."""
    clear_line()  # a progress bar drawn in place on a terminal
    print(f"grade: [{time.monotonic() - T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


_DRAWN = []  # the Progress whose line is drawn on a terminal without its newline (at most one)


def clear_line():
    """Before a log line: wipes a progress bar drawn in place on a terminal (the next show()
    draws it again), so that the log line does not run on from it."""
    while _DRAWN:
        bar = _DRAWN.pop()
        bar.stream.write("\r\033[K")
        bar.stream.flush()


class Progress:
    """A progress bar on stderr (redrawn in place on a terminal, one line per step otherwise)
    with an ETA: the median time per submission really graded in this run so far (the time from
    the previous one's end, or from start(), after the references are built) times the
    submissions left. Submissions skipped as already graded, and those done at once with nothing
    to grade (no labs found), are not counted: they would pull the estimate down."""

    def __init__(self, total, stream=None, width=24, clock=time.monotonic):
        self.total = max(1, total)
        self.done = 0
        self.graded = 0
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = ""
        self.clock = clock
        self.t0 = self.last = clock()
        self.times = []  # seconds per submission really graded

    def start(self):
        """The grading starts now (the ETA's clock)."""
        self.t0 = self.last = self.clock()

    def eta(self):
        """' ETA 3m20s' from the median time of the submissions really graded so far, or ''."""
        if not self.times or self.done >= self.total:
            return ""
        left = max(0.0, statistics.median(self.times) * (self.total - self.done))
        return f" ETA {int(left // 60)}m{int(left % 60):02d}s"

    def show(self, msg):
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        line = f"[{bar}] {self.done}/{self.total}{self.eta()} {self.label}: {msg}"
        if self.tty:
            self.stream.write("\r\033[K" + line[:160])
            if self not in _DRAWN:
                _DRAWN.append(self)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def step(self, label):
        self.label = label

    def advance(self, skipped=False, counted=True):
        """One more submission done: graded now, or skipped (already graded); counted: its time
        counts in the ETA (not for one with nothing to grade)."""
        self.done += 1
        if not skipped:
            self.graded += 1
            now = self.clock()
            if counted:
                self.times.append(now - self.last)
            self.last = now

    def close(self):
        if self.tty:
            if self in _DRAWN:
                _DRAWN.remove(self)
            self.stream.write("\n")
            self.stream.flush()
