"""Progress on stderr: log lines stamped with the seconds since the grader started, and a
progress bar (batch mode) that a log line never runs on from.
"""
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
    with an ETA: the mean time per submission graded in this run so far (from start(), after
    the references are built; submissions skipped as already graded take no time) times the
    submissions left."""

    def __init__(self, total, stream=None, width=24, clock=time.monotonic):
        self.total = max(1, total)
        self.done = 0
        self.graded = 0
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = ""
        self.clock = clock
        self.t0 = clock()

    def start(self):
        """The grading starts now (the ETA's clock)."""
        self.t0 = self.clock()

    def eta(self):
        """' ETA 3m20s' from the mean time of the submissions graded so far, or ''."""
        if not self.graded or self.done >= self.total:
            return ""
        left = max(0.0, (self.clock() - self.t0) / self.graded * (self.total - self.done))
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

    def advance(self, skipped=False):
        """One more submission done: graded now, or skipped (already graded)."""
        self.done += 1
        if not skipped:
            self.graded += 1

    def close(self):
        if self.tty:
            if self in _DRAWN:
                _DRAWN.remove(self)
            self.stream.write("\n")
            self.stream.flush()
