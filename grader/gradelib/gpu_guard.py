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

NVML in the grader's own process (the default; LAB_GRADER_NVML=0 turns it off). Each
nvidia-smi question is a process that opens the driver and every GPU, and on a host busy creating
CUDA contexts (a class on several GPUs) that is slow, and it sits between the timed runs. With
NVML, the grader loads libnvidia-ml.so.1 once and asks it instead: the same list (the
compute processes of each GPU, by the v1 call, nvmlDeviceGetComputeRunningProcesses, whose
16-byte record is the library's stable ABI), filtered the same way. The first answer that names
another job is asked of nvidia-smi too, and when the two disagree NVML is dropped for the
session (a note says so) and nvidia-smi answers from then on; a failed NVML call also falls back
to nvidia-smi. Both kinds of question are in the grader's trace (kinds `nvidia-smi`, `nvml`), and so
is every wait for another job to leave the GPU (kind `gpu-wait`).
Measured on an H200 (2026-11-28): a whole grade of the solutions asked 19 times through nvidia-smi, 0.48
s in all, and 18 times through NVML, under 1 ms in all, with the same 1000/1000; busy_gpu_check passed with NVML
answering (it named the load's pid, name and memory as nvidia-smi does).
"""
import ctypes
import os
import shutil
import struct
import time

from . import proc, procfs
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


NVML_VAR = "LAB_GRADER_NVML"  # "0": start nvidia-smi for every ask instead of asking NVML (above)


class Nvml:
    """The compute processes of every GPU through libnvidia-ml.so.1 in this process (the v1 call,
    its record: unsigned int pid, 4 bytes of padding, unsigned long long usedGpuMemory). open()
    gives None where the library or a GPU is missing; apps() gives None when a call fails."""

    RECORD = struct.Struct("=I4xQ")  # nvmlProcessInfo_v1_t
    SLOTS = 256                      # records asked for; the buffer holds 4x the bytes (room for
    BUFFER = SLOTS * 64              # a library that wrote a larger record: never past the end)
    NOT_AVAILABLE = (1 << 64) - 1    # NVML_VALUE_NOT_AVAILABLE

    def __init__(self, lib, devices):
        self.lib, self.devices = lib, devices  # devices: [(uuid, handle)]

    @classmethod
    def open(cls, name="libnvidia-ml.so.1"):
        try:
            lib = ctypes.CDLL(name)
            for fn in ("nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
                       "nvmlDeviceGetUUID", "nvmlDeviceGetComputeRunningProcesses",
                       "nvmlSystemGetProcessName"):
                getattr(lib, fn).restype = ctypes.c_int
        except (OSError, AttributeError):
            return None
        lib.nvmlDeviceGetHandleByIndex_v2.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
        lib.nvmlDeviceGetUUID.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint]
        lib.nvmlDeviceGetComputeRunningProcesses.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint),
                                                             ctypes.c_void_p]
        lib.nvmlSystemGetProcessName.argtypes = [ctypes.c_uint, ctypes.c_char_p, ctypes.c_uint]
        count = ctypes.c_uint(0)
        if lib.nvmlInit_v2() != 0 or lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or not count.value:
            return None
        devices = []
        for i in range(count.value):
            h, uuid = ctypes.c_void_p(), ctypes.create_string_buffer(96)
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != 0 or lib.nvmlDeviceGetUUID(h, uuid, 96) != 0:
                return None
            devices.append((uuid.value.decode(errors="replace"), h))
        return cls(lib, devices)

    @classmethod
    def records(cls, buf, count):
        """[(pid, memory)] of the first count v1 records of buf ("N/A" when NVML has no figure)."""
        out = []
        for k in range(min(count, cls.SLOTS)):
            pid, used = cls.RECORD.unpack_from(buf, k * cls.RECORD.size)
            out.append((pid, "N/A" if used == cls.NOT_AVAILABLE else f"{used >> 20} MiB"))
        return out

    def name(self, pid):
        buf = ctypes.create_string_buffer(256)
        if self.lib.nvmlSystemGetProcessName(pid, buf, 256) == 0 and buf.value:
            return buf.value.decode(errors="replace")
        return "?"

    def apps(self):
        """[(gpu_uuid, pid, name, memory)] as parse_apps gives for nvidia-smi, or None."""
        out = []
        for uuid, h in self.devices:
            count, buf = ctypes.c_uint(self.SLOTS), ctypes.create_string_buffer(self.BUFFER)
            if self.lib.nvmlDeviceGetComputeRunningProcesses(h, ctypes.byref(count), buf) != 0:
                return None  # NVML_ERROR_INSUFFICIENT_SIZE (more than SLOTS) too: nvidia-smi answers
            out += [(uuid, pid, self.name(pid), mem) for pid, mem in self.records(buf.raw, count.value)]
        return out


def descends_from(pid, ancestor, info=procfs.proc_info):
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
                 env=None, poll_s=POLL_S, nvml=None):
        self.notes = notes
        self.smi = shutil.which("nvidia-smi") if smi is None else smi
        self.run = run or (lambda argv, timeout: proc.run(argv, timeout))
        self.sleep, self.clock, self.poll_s = sleep, clock, poll_s
        self.ours = ours or (lambda pid: descends_from(pid, os.getpid()))
        self.env = os.environ if env is None else env
        self.noted = False
        self._gpu = None  # the UUID prefix of the grader's GPU ("" : every GPU counts)
        # NVML in-process (the module's last paragraph): an object with apps() (tests give one),
        # opened here unless NVML_VAR is "0"; None: nvidia-smi answers
        if nvml is None and self.env.get(NVML_VAR, "1") != "0" and self.smi:
            nvml = Nvml.open()
        self.nvml = nvml
        self.nvml_confirmed = False

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
        or None when nvidia-smi cannot tell (noted once). NVML answers instead when it is on and
        agrees with nvidia-smi (the module's last paragraph)."""
        if not self.smi:
            return self._unavailable("nvidia-smi not found")
        if self.nvml is not None:
            t0 = time.monotonic()
            apps = self.nvml.apps()
            trace("nvml", ["nvml"], time.monotonic() - t0, case="compute processes")
            if apps is None:
                return self._drop_nvml("an NVML call failed")
            found = self._mine(apps)
            if found and not self.nvml_confirmed:
                smi = self._smi_others()
                if smi is not None and sorted(f[0] for f in smi) != sorted(f[0] for f in found):
                    return self._drop_nvml(f"NVML named pids {sorted(f[0] for f in found)} where nvidia-smi "
                                           f"named {sorted(f[0] for f in smi)}", smi)
                self.nvml_confirmed = smi is not None
            return found
        return self._smi_others()

    def _drop_nvml(self, why, answer=False):
        """NVML stops answering for the session (a note says why); nvidia-smi's answer (asked now
        unless given) is returned."""
        self.nvml = None
        self.notes.append(f"the GPU's other users asked of nvidia-smi, not NVML: {why}")
        return self._smi_others() if answer is False else answer

    def _mine(self, apps):
        """The (pid, name, memory) of apps on the grader's GPU that are not the grader's."""
        gpu = self._our_gpu()
        return [(pid, name, mem) for uuid, pid, name, mem in apps
                if (not gpu or uuid.startswith(gpu)) and not self.ours(pid)]

    def _smi_others(self):
        text, why = self._query(QUERY)
        if text is None:
            return self._unavailable(why)
        return self._mine(parse_apps(text))

    def wait_idle(self, wait_s, progress=lambda msg: None):
        """"" when no other process uses the GPU (at once, or within wait_s seconds, asking every
        poll_s), or when that cannot be checked; else what was using it at the end, in words
        ("pid 4242 'python3' 1200 MiB")."""
        start = self.clock()
        deadline = start + wait_s
        said = False
        while True:
            found = self.others()
            if not found:
                self._trace_wait(start, said, "free")
                return ""
            what = describe(found)
            left = deadline - self.clock()
            if left <= 0:
                self._trace_wait(start, said, what)
                return what
            if not said:
                progress(f"speed: the GPU is in use by {what}: waiting up to {wait_s:g} s for it")
                said = True
            self.sleep(min(self.poll_s, left))

    def _trace_wait(self, start, waited, end):
        """A wait for another job to leave the GPU, in the grader's trace (kind `gpu-wait`, its
        seconds, and how it ended: "free" or what was still there); nothing when none was needed."""
        if waited:
            trace("gpu-wait", ["gpu-wait"], self.clock() - start, case=end)
