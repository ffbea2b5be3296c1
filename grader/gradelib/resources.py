"""The CPUs and memory this process may really use: in a container (Gradescope, PrairieLearn, a
Slurm task) os.cpu_count() is the host's cores, not the quota, and 30 parallel jobs on half a
CPU and 768 MB is how a grade runs out of memory.

usable_cpus() = min(the CPUs of the affinity mask, ceil(cgroup v2 cpu.max quota / period),
ceil(cgroup v1 cpu.cfs_quota_us / cfs_period_us)); memory_limit() = cgroup v2 memory.max, or v1
memory.limit_in_bytes (None: no limit found). jobs() caps a number of parallel jobs by both:
about JOB_MEMORY bytes per job (the largest CPU-mode lab process measured, 194 MB, rounded down
for the processes that are smaller; the review of 2026-11-25, section 2.4).

root is the filesystem root the cgroup files are read under ("/"; tests pass a folder of fake
files). The process's own cgroup comes from <root>/proc/self/cgroup; where that path cannot be
read, the cgroup root's own files count (a container sees its cgroup as /sys/fs/cgroup).
"""
import math
import os

JOB_MEMORY = 150 * 1024 * 1024  # bytes per parallel lab process or build, for jobs()
MEMORY_RESERVE = 100 * 1024 * 1024  # for the grader itself (Python, the page cache of its files)
NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a huge number (9223372036854771712)


def _read(path):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _cgroup_paths(root):
    """{controller or "" (v2): the process's cgroup path} from <root>/proc/self/cgroup."""
    text = _read(os.path.join(root, "proc", "self", "cgroup")) or ""
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for c in (controllers.split(",") if controllers else [""]):
            out[c] = path
    return out


def _candidates(root, mount, path):
    """The folders to read a controller's files in: the process's cgroup and its ancestors up to
    the mount (a limit set on a parent applies too), and the mount itself."""
    base = os.path.join(root, "sys", "fs", "cgroup", mount) if mount else os.path.join(root, "sys", "fs", "cgroup")
    dirs = []
    p = (path or "/").strip("/")
    while p:
        dirs.append(os.path.join(base, p))
        p = os.path.dirname(p)
    dirs.append(base)
    return dirs


def _v2_cpus(root, paths):
    best = None
    for d in _candidates(root, "", paths.get("")):
        text = _read(os.path.join(d, "cpu.max"))
        if not text:
            continue
        quota, _, period = text.partition(" ")
        if quota == "max":
            continue
        try:
            q, p = int(quota), int(period or 100000)
        except ValueError:
            continue
        if q > 0 and p > 0:
            n = math.ceil(q / p)
            best = n if best is None else min(best, n)
    return best


def _v1_cpus(root, paths):
    best = None
    for mount in ("cpu,cpuacct", "cpu", "cpuacct,cpu"):
        for d in _candidates(root, mount, paths.get("cpu")):
            q, p = _read(os.path.join(d, "cpu.cfs_quota_us")), _read(os.path.join(d, "cpu.cfs_period_us"))
            try:
                q, p = int(q), int(p)
            except (TypeError, ValueError):
                continue
            if q > 0 and p > 0:
                n = math.ceil(q / p)
                best = n if best is None else min(best, n)
    return best


def _affinity():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def usable_cpus(root="/", affinity=None):
    """The CPUs this process may use: the affinity mask (affinity: that count instead, for tests)
    capped by the cgroup's CPU quota (v2 and v1), rounded up; at least 1."""
    n = _affinity() if affinity is None else affinity
    paths = _cgroup_paths(root)
    for quota in (_v2_cpus(root, paths), _v1_cpus(root, paths)):
        if quota is not None:
            n = min(n, quota)
    return max(1, n)


def memory_limit(root="/"):
    """The cgroup's memory limit in bytes (the lowest of the process's cgroup and its
    ancestors, v2 memory.max or v1 memory.limit_in_bytes), or None when there is none."""
    paths = _cgroup_paths(root)
    best = None
    files = [(d, "memory.max") for d in _candidates(root, "", paths.get(""))]
    files += [(d, "memory.limit_in_bytes") for d in _candidates(root, "memory", paths.get("memory"))]
    for d, name in files:
        text = _read(os.path.join(d, name))
        if not text or text == "max":
            continue
        try:
            v = int(text)
        except ValueError:
            continue
        if 0 < v < NO_LIMIT:
            best = v if best is None else min(best, v)
    return best


def jobs(cpus=None, memory=None, most=None, root="/"):
    """How many jobs to run at once: one per usable CPU (cpus: that count instead), at most
    `most`, and no more than the memory limit allows at JOB_MEMORY each after MEMORY_RESERVE
    (memory: that limit instead; None: read it); at least 1."""
    n = usable_cpus(root) if cpus is None else cpus
    if most is not None:
        n = min(n, most)
    mem = memory_limit(root) if memory is None else memory
    if mem:
        n = min(n, (mem - MEMORY_RESERVE) // JOB_MEMORY)
    return max(1, int(n))


def describe(root="/"):
    """One line for the log: the CPUs and memory found, and where they come from."""
    cpus, mem = usable_cpus(root), memory_limit(root)
    return (f"{cpus} usable CPU{'s' if cpus != 1 else ''} (affinity {_affinity()}, cgroup quota applied), "
            f"memory limit {'none' if mem is None else f'{mem / 2**20:.0f} MiB'}")
