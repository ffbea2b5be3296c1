"""Before a lab is timed: is another process using the GPU?

A time measured while another job shares the GPU is noise, so before the speed stage times a lab
it asks nvidia-smi which processes use the GPU (`nvidia-smi --query-compute-apps=gpu_uuid,pid,
process_name,used_memory --format=csv,noheader`), waits (up to timeouts.gpu_wait_s, polling) until
none but the grader's own are left, and otherwise says the GPU was busy: the lab's speed is then
not graded, never scored.

Which processes are "ours". The speed stage is the last stage of a submission (Grader.evaluate:
every correctness case and sanitizer run of the submission has ended before it starts), it times
one lab at a time, and the check runs before that lab's two timing processes (the student's and
the reference's, evaluate.Timer) are started, after the previous lab's have ended. What else the
grader may run meanwhile is the next submission's build in batch mode (grade.py: make and nvcc,
and `scan --describe`, none of which uses the GPU). So at the moment of the check the grader has
no process on the GPU of its own; a process is still counted as ours, and ignored, when its pid
is one of this machine's processes (this PID namespace) that descends from the grader (a lab run
that has not quite gone yet). Every other pid counts as another job: one of another user, and
also a pid that is not a process here at all. In a container with a PID namespace of its own,
nvidia-smi shows the host's pids, and ours would look foreign too; since the grader has none on
the GPU when it checks, a foreign-looking pid there is indeed someone else's (a driver that hides
other containers' processes shows none, and then there is nothing this check can see).

Which GPU. With CUDA_VISIBLE_DEVICES set (grade.py --gpus gives each worker one), only
processes on that GPU count: its first entry, a UUID (GPU-...) or an index as nvidia-smi numbers
the GPUs. Without it, a process on any GPU of the machine counts (the CUDA default device is not
necessarily nvidia-smi's GPU 0).

While a lab is timed. The speed stage asks again between the lab's timed runs, at most once a
second, and after the last (SpeedStage._timed, _look): a job that came while the lab was being
timed may have slowed the student's runs or the reference's, so its whole measurement is made
again once the GPU is free; a job found again then gives GPU_BUSY. (A job that comes and goes
between two asks is not seen; the median over the rounds absorbs one disturbed run.)

Without nvidia-smi (or when it fails), the check cannot be made: the grading session's notes say
so once, and the lab is timed anyway.
"""
import os
import shutil
import time

from . import proc
from .evaluate import trace

QUERY = ["--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader"]
POLL_S = 5.0  # how often a busy GPU is asked again


def parse_apps(text):
    """[(gpu_uuid, pid, name, memory)] of nvidia-smi's compute-apps lines (CSV, no header); a
    line that is not one ("No running processes found") is skipped."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[1].isdigit():
            continue
        out.append((parts[0], int(parts[1]), ",".join(parts[2:-1]), parts[-1]))
    return out


def descends_from(pid, ancestor, info=proc.proc_info):
    """True when pid is ancestor or one of its descendants in this PID namespace."""
    seen = set()
    while pid and pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        p = info(pid)
        if p is None:
            return False
        pid = p.ppid
    return False


def describe(found):
    """Processes others() found, in words: "pid 4242 'python3' 1200 MiB" (four at most named)."""
    what = ", ".join(f"pid {pid} '{name}' {mem}" for pid, name, mem in found[:4])
    return what + (f" and {len(found) - 4} more" if len(found) > 4 else "")


class GpuGuard:
    """Asks nvidia-smi whether processes other than the grader's use the GPU (see the module).
    run(argv, timeout) -> proc.Result, sleep, clock and ours(pid) -> bool can be replaced (tests).
    notes: the grading session's notes (Grader.notes), which get one line when the check cannot
    be made."""

    def __init__(self, notes, smi=None, run=None, sleep=time.sleep, clock=time.monotonic, ours=None,
                 env=None, poll_s=POLL_S):
        self.notes = notes
        self.smi = shutil.which("nvidia-smi") if smi is None else smi
        self.run = run or (lambda argv, timeout: proc.run(argv, timeout))
        self.sleep, self.clock, self.poll_s = sleep, clock, poll_s
        self.ours = ours or (lambda pid: descends_from(pid, os.getpid()))
        self.env = os.environ if env is None else env
        self.noted = False
        self._gpu = None  # the UUID prefix of the grader's GPU ("" : every GPU counts)

    def _unavailable(self, why):
        if not self.noted:
            self.notes.append(f"GPU use not checked before timing ({why}): labs were timed without "
                              f"knowing whether another job shared the GPU")
            self.noted = True
        return None

    def _query(self, args):
        t0 = time.monotonic()
        try:
            r = self.run([self.smi] + args, 30)
        except OSError as e:
            return None, f"nvidia-smi cannot run: {e.strerror}"
        finally:  # in the grader's trace (LAB_GRADER_TRACE) beside the lab processes: what the
            # watch costs, which on a machine busy starting CUDA processes is not nothing
            trace("nvidia-smi", [self.smi or "nvidia-smi"], time.monotonic() - t0, case=args[0])
        if r.timed_out or r.returncode != 0:
            why = (r.stderr or r.stdout).strip().splitlines()
            return None, f"nvidia-smi failed: {why[-1] if why else 'exit code %s' % r.returncode}"
        return r.stdout, ""

    def _our_gpu(self):
        """The UUID (or its prefix) of the GPU CUDA_VISIBLE_DEVICES names first, "" when it names
        none (every GPU counts), None when it names an index nvidia-smi does not list."""
        if self._gpu is None:
            first = self.env.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
            if first.startswith("GPU-") or first.startswith("MIG-"):
                self._gpu = first
            elif first.isdigit():
                text, _ = self._query(["--query-gpu=index,uuid", "--format=csv,noheader"])
                found = dict(tuple(x.strip() for x in ln.split(",", 1)) for ln in (text or "").splitlines()
                             if "," in ln)
                self._gpu = found.get(first, "")
            else:
                self._gpu = ""
        return self._gpu

    def others(self):
        """[(pid, name, memory)] of the processes on the grader's GPU that are not the grader's,
        or None when nvidia-smi cannot tell (noted once)."""
        if not self.smi:
            return self._unavailable("nvidia-smi not found")
        text, why = self._query(QUERY)
        if text is None:
            return self._unavailable(why)
        gpu = self._our_gpu()
        return [(pid, name, mem) for uuid, pid, name, mem in parse_apps(text)
                if (not gpu or uuid.startswith(gpu)) and not self.ours(pid)]

    def wait_idle(self, wait_s, progress=lambda msg: None):
        """"" when no other process uses the GPU (at once, or within wait_s seconds, asking every
        poll_s), or when that cannot be checked; else what was using it at the end, in words
        ("pid 4242 'python3' 1200 MiB")."""
        deadline = self.clock() + wait_s
        said = False
        while True:
            found = self.others()
            if not found:
                return ""
            what = describe(found)
            left = deadline - self.clock()
            if left <= 0:
                return what
            if not said:
                progress(f"speed: the GPU is in use by {what}: waiting up to {wait_s:g} s for it")
                said = True
            self.sleep(min(self.poll_s, left))
