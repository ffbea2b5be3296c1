"""How the grader's own runs share the machine: its background work (the builds of the next
submissions, made while one is timed), which quiet() stops for a measurement that must not share
the machine with the grader's compilers; and the Gate, which lets runs go on side by side except
one that must run alone. proc.run asks in_background() of every run it starts, enlists a
background one (enlist, discharge) and does not count the time it was stopped (paused_s)."""
import contextlib
import os
import signal
import threading
import time

_lock = threading.Lock()


@contextlib.contextmanager
def for_this_thread(local, name, value, default):
    """local.name (a threading.local's) set to value while the block runs, then as it was."""
    old = getattr(local, name, default)
    setattr(local, name, value)
    try:
        yield
    finally:
        setattr(local, name, old)


_bg = threading.local()  # .on: the processes this thread starts are background work
_background = set()  # process groups of the background runs going on now
_quiet = {"depth": 0, "since": 0.0, "total": 0.0}  # quiet(): how deep, since when, seconds so far


def background(on=True):
    """The processes this thread starts meanwhile are background work (with on): the builds of
    the next submissions, made while this one has the GPU (batch.py). quiet() stops them."""
    return for_this_thread(_bg, "on", on, False)


def in_background():
    """Whether the processes this thread starts now are background work (background())."""
    return getattr(_bg, "on", False)


def _signal_background(sig):
    for pgid in _background:
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass


@contextlib.contextmanager
def quiet():
    """The grader's background work stopped while this lasts (SIGSTOP to each background run's
    process group; one started meanwhile is stopped as it starts), then continued (SIGCONT).
    For a measurement that must not share the machine with the grader's own compilers: a speed
    loss is confirmed this way (stage_speed). Nests; a stopped run's wall-clock limit does not
    count the time it was stopped (paused_s)."""
    with _lock:
        if _quiet["depth"] == 0:
            _quiet["since"] = time.monotonic()
            _signal_background(signal.SIGSTOP)
        _quiet["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _quiet["depth"] -= 1
            if _quiet["depth"] == 0:
                _quiet["total"] += time.monotonic() - _quiet["since"]
                _signal_background(signal.SIGCONT)


def paused_s():
    """Seconds the grader's background work has been stopped so far (quiet()), the stop going
    on now included."""
    with _lock:
        ongoing = time.monotonic() - _quiet["since"] if _quiet["depth"] else 0.0
        return _quiet["total"] + ongoing


def enlist(pgid):
    """A background run just started: quiet() stops and continues it; stopped now if quiet."""
    with _lock:
        _background.add(pgid)
        if _quiet["depth"]:
            try:
                os.killpg(pgid, signal.SIGSTOP)
            except OSError:
                pass


def discharge(pgid):
    with _lock:
        _background.discard(pgid)


class Gate:
    """Lets runs go on side by side (shared()) except one that must run alone (alone()): it
    waits until the runs in flight have ended, and none starts until it is done; a run waiting
    to be alone goes before runs that ask after it. A thread never asks for alone() while it
    holds shared()."""

    def __init__(self):
        self._cond = threading.Condition()
        self._active = 0
        self._exclusive = False
        self._waiting = 0

    @contextlib.contextmanager
    def shared(self):
        with self._cond:
            while self._exclusive or self._waiting:
                self._cond.wait()
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def alone(self):
        with self._cond:
            self._waiting += 1
            while self._exclusive or self._active:
                self._cond.wait()
            self._waiting -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._cond:
                self._exclusive = False
                self._cond.notify_all()
