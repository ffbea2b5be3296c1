"""A core of its own for timing the host lab (the serial lab, 01).

A GPU lab's time is the GPU's; the serial lab's is one CPU core's, and in batch mode the grader
builds the next submissions (nvcc on every core) while it times this one. Two graders on one
H200 host (16 cores each, 2026-11-28): the same reference serial scan took 3.9 to 7.2 ms from
one submission to the next, and an honest submission, byte for byte the reference, was timed
at 1.54x the reference and lost 5 points. Interleaving the rounds and keeping each side's best
does not help when every round shares a core with a compiler.

So in GPU mode, when a host lab is graded and there are cores to spare, the grader keeps one
core for it: the grader itself, and so everything it starts (builds, cases, the sanitizer, the
GPU labs' timed runs), runs on the other cores, and the host lab's timed runs (the student's and
the reference's) are pinned to the kept one (proc.pinned). With --gpus, the workers of one host
keep one core each, and every worker stays off all of them (cluster.py sets HOST_CPUS and
HOST_CPU for each). On a 16-core machine this leaves 15 for the builds. Graders started apart
on one host (several classes, or the test suites) each take a host-wide lock on the core they
keep, so no two time their host lab on the same one.
"""
import fcntl
import os
import tempfile

MIN_OTHER_CPUS = 7  # keep a core only where at least this many are left for everything else
ENV_CPUS = "LAB_GRADER_HOST_CPUS"  # the kept cores of every worker on this host ("14,15")
ENV_CPU = "LAB_GRADER_HOST_CPU"  # this worker's

_kept = None  # the core this grader keeps for its host lab, once reserve() has chosen it


def _parse(text):
    try:
        return [int(x) for x in (text or "").split(",") if x.strip()]
    except ValueError:
        return []


def plan(affinity, env, free=lambda core: True):
    """(the kept core, the cores for everything else) for a grader allowed affinity, with the
    workers' choice in env (cluster.py), or None when there are too few cores to keep one. A
    grader on its own tries its last cores in turn, at most a quarter of them, and keeps the first
    that free(core) takes (lock: graders started apart on one host, the tests' say, keep
    different ones); none free, it keeps none."""
    mine = sorted(affinity)
    kept_all = [c for c in _parse(env.get(ENV_CPUS)) if c in mine]
    own = _parse(env.get(ENV_CPU))
    if kept_all:
        tries = [own[0] if own and own[0] in kept_all else kept_all[0]]
    else:
        tries = mine[::-1][:max(1, len(mine) // 4)]
    for core in tries:
        rest = [c for c in mine if c not in kept_all and c != core]
        if len(rest) < MIN_OTHER_CPUS:
            return None
        if free(core):
            return core, rest
    return None


_held = []  # the open lock file of the kept core, held for the grader's life


def lock(core):
    """Takes this user's host-wide lock on core (a file in the temporary folder, flock: let go
    when the grader ends, however); False when another grader holds it. Where there are no
    locks, True."""
    path = os.path.join(tempfile.gettempdir(), f"lab-grader-cpu-{os.getuid()}-{core}.lock")
    try:
        f = open(path, "a")
    except OSError:
        return True
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return False
    except OSError:
        f.close()
        return True
    _held.append(f)
    return True


def for_workers(affinity, workers):
    """The environment each of workers grade.py processes on one host gets: a core each to keep,
    the last ones of affinity; {} for all when there are too few."""
    mine = sorted(affinity)
    if len(mine) - workers < MIN_OTHER_CPUS * workers:
        return [{} for _ in range(workers)]
    kept = mine[-workers:]
    cpus = ",".join(str(c) for c in kept)
    return [{ENV_CPUS: cpus, ENV_CPU: str(c)} for c in kept]


def reserve():
    """Keeps a core for the host lab (plan), moving every thread of the grader off it, so that
    whatever it starts from now on runs on the others; returns the kept core, or None (too few
    cores, or no affinity to set: grading goes on as before)."""
    global _kept
    if _kept is not None:
        return _kept
    try:
        chosen = plan(os.sched_getaffinity(0), os.environ, lock)
        if chosen is None:
            return None
        core, rest = chosen
        for tid in os.listdir("/proc/self/task"):  # a thread's mask is its own; new ones inherit
            try:
                os.sched_setaffinity(int(tid), rest)
            except OSError:
                pass
    except (AttributeError, OSError):
        return None
    _kept = core
    return core


def kept():
    """The core reserve() kept, or None."""
    return _kept
