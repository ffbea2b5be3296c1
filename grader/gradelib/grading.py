"""Grading one submission: build (CPU, parallel), then cases and sanitizers (GPU, a few processes
at a time), then speed (GPU, one process at a time, student and reference interleaved).

A submission is a mapping lab id -> path of its scan.cu (None: not submitted). The result is a
plain dict (see lab_result_template) that every output format is written from.
"""
import concurrent.futures as cf
import os
import shutil
import threading
import time

from . import batch as batchmod
from . import build as buildmod
from . import evaluate as ev
from . import proc
from .build import InfraError, NoGpu
from .scoring import correctness_points, median, round_points, speed_fraction

CASE_KINDS_STOP = ("not_implemented", "timeout")  # after one of these, a lab's other cases are moot
# A scan reads and writes every element, so it cannot beat a device-to-device copy of the same
# bytes; the fastest reference (lab 08) runs at ~0.9x a copy's speed. A time under this fraction
# of the copy time measured in the reference's run is a forged measurement.
PLAUSIBLE_FRACTION_OF_COPY = 0.75


def refuse(res, violations):
    """Marks a lab result as failing its static checks (violations: one line each); returns it.
    Nothing of such a lab is run."""
    res["static"].update(ok=False, violations=violations)
    res["status"] = "static check failed"
    res["summary"] = "static check failed: " + violations[0]
    return res


def course_labs(root):
    """The course's lab ids: labs/NN_name folders (the Makefile discovers them the same way)."""
    d = os.path.join(root, "labs")
    return sorted(x for x in os.listdir(d) if len(x) > 3 and x[:2].isdigit() and x[2] == "_"
                  and os.path.isdir(os.path.join(d, x)))


def select_labs(all_labs, wanted):
    """Filters lab ids by a list like ['03', '05_blelloch']; raises ValueError on an unknown one."""
    if wanted is None:
        return list(all_labs)
    if not wanted or any(not w.strip() for w in wanted):
        raise ValueError(f"--labs needs lab names such as 03 or 03_kogge_stone, not an empty one "
                         f"(labs: {', '.join(all_labs)})")
    out = []
    for w in wanted:
        hits = [lab for lab in all_labs if lab == w or lab[:2] == w or lab.startswith(w)]
        if not hits:
            raise ValueError(f"no lab matches '{w}' (labs: {', '.join(all_labs)})")
        out.extend(h for h in hits if h not in out)
    return sorted(out)


def gpu_visible():
    """A cheap first look for an NVIDIA GPU, before anything is built."""
    if any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg")):
        return True
    smi = shutil.which("nvidia-smi")
    if smi:
        r = proc.run([smi, "-L"], 30)
        return r.returncode == 0 and "GPU" in r.stdout
    return False


def _positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def lab_result_template(lab_id, settings, mode):
    p = settings["points"]
    gpu = mode == "gpu"
    return {
        "lab": lab_id,
        "title": "",
        "status": "graded",
        "summary": "",
        "points": 0.0,
        "max_points": p["correctness"] + (p["sanitizer"] + p["speed"] if gpu else 0),
        "build": {"ok": False, "seconds": 0.0, "message": ""},
        "static": {"ok": False, "violations": []},
        "correctness": {"passed": 0, "total": 0, "points": 0.0, "max": p["correctness"],
                        "failures": [], "note": ""},
        "sanitizer": {"status": "not run", "points": 0.0, "max": p["sanitizer"] if gpu else 0,
                      "checks": [], "note": ""},
        "speed": {"status": "not run", "points": 0.0, "max": p["speed"] if gpu else 0, "ratio": None,
                  "metric": None, "student_ms": None, "reference_ms": None, "gbps": None,
                  "serial_ms": None, "speedup_vs_serial": None, "bench_n": None, "note": ""},
    }


class Grader:
    """Grades submissions against the course in root. mode 'gpu' or 'cpu'."""

    def __init__(self, root, config, work, mode="gpu", seed=None, jobs=None, gpu_jobs=None,
                 labs=None, progress=None, sanitizer=True):
        self.root = root
        self.config = config
        self.work = os.path.abspath(work)
        self.mode = mode
        self.seed = seed
        self.jobs = jobs or max(1, os.cpu_count() or 1)
        self.gpu_jobs = gpu_jobs or max(1, min(10, os.cpu_count() or 1))
        self.labs = labs if labs is not None else course_labs(root)
        self.progress = progress or (lambda msg: None)
        self.want_sanitizer = sanitizer
        self.builder = buildmod.Builder(root, os.path.join(self.work, "build"), mode,
                                        config.lab(None)["timeouts"]["build_s"])
        self.refs = {}       # lab -> (binary, LabInfo)
        self.ref_hashes = {}  # lab -> hash of the reference binary, checked before each use
        self.symbol_builder = None  # CPU mode: an nvcc build, for the static checks on its object
        self.notes = []      # what the result should say about this session (missing tools)
        self.serial_cache = {}
        self.device = None
        self.sanitizer = None
        self.timings = {}
        self._lock = threading.Lock()

    # ---- once per grading session ----------------------------------------------------------

    def prepare(self):
        """Builds the harness and the reference solutions and checks the device. Raises
        InfraError when grading is impossible on this machine."""
        if self.mode == "gpu" and not gpu_visible():
            raise NoGpu("no GPU: no NVIDIA device or driver is visible on this machine")
        self.progress(f"building the harness ({self.mode} mode)")
        self.builder.prepare()
        if self.mode == "cpu":
            self._prepare_symbol_builder()
        self.progress("building the reference solutions")
        todo = [lab for lab in self.labs if os.path.isfile(os.path.join(self.root, "solutions", lab, "scan.cu"))]
        with cf.ThreadPoolExecutor(self.jobs) as pool:
            futs = {lab: pool.submit(self._build_reference, lab) for lab in todo}
        for lab, fut in futs.items():
            res = fut.result()
            if not res.ok:
                raise InfraError(f"the reference solution of {lab} does not build: {res.message}")
            self.ref_hashes[lab] = buildmod.sha256_file(res.binary)
            info, why = ev.describe(res.binary)
            if info is None:
                raise InfraError(f"the reference solution of {lab}: {why}")
            self.refs[lab] = (res.binary, info)
        self._check_device()
        if self.mode == "gpu" and self.want_sanitizer:
            self.sanitizer = buildmod.find_tool("compute-sanitizer", self.builder.nvcc)

    def _prepare_symbol_builder(self):
        """CPU mode: the static checks that need nvcc (the symbol allowlist, calls through
        pointers, at least one kernel, the CUDA runtime linked statically, every header the
        compiler reads, inline assembly in host code) still run when nvcc is installed: each lab
        is also built with nvcc, never run. Without nvcc, a note says so."""
        what = ("the static checks that need an nvcc object (the symbol allowlist: no host memory, "
                "no host/device copies, no streams; at least one kernel launch; the headers the "
                "compiler reads; inline assembly in host code) were not run")
        if not buildmod.find_nvcc():
            self.notes.append(f"nvcc not found: {what}")
            return
        sb = buildmod.Builder(self.root, os.path.join(self.work, "build"), "gpu",
                              self.config.lab(None)["timeouts"]["build_s"])
        self.progress("building the harness with nvcc too (for the static checks)")
        try:
            sb.prepare()
        except InfraError as e:
            self.notes.append(f"{e}; {what}")
            return
        self.symbol_builder = sb

    def _build_reference(self, lab):
        """The reference binary, rebuilt unless its build stamp shows the same source, the same
        harness objects and flags, and an unchanged object and binary (Builder.build reuse)."""
        src = os.path.join(self.root, "solutions", lab, "scan.cu")
        res = self.builder.build(src, os.path.join(self.work, "ref-" + self.mode, lab),
                                 f"solutions/{lab}/scan.cu", reuse=True)
        if res.ok:
            os.chmod(res.binary, 0o555)  # a reminder more than a guard: the hash is the check
        return res

    def _ref_binary(self, lab):
        """The reference binary of lab, after checking that it is still the one that was built:
        the student's code runs as the same user, and a run must not alter it unnoticed."""
        binary = self.refs[lab][0]
        want = self.ref_hashes.get(lab)
        try:
            same = want is None or buildmod.sha256_file(binary) == want
        except OSError:
            same = False
        if not same:
            raise InfraError(f"the reference binary of {lab} ({binary}) changed after it was built "
                             f"(a graded submission may have written to it): remove "
                             f"{os.path.dirname(os.path.dirname(binary))} and grade again")
        return binary

    def _check_device(self):
        """Runs one reference GPU lab at n = 1: no device is an infrastructure error."""
        for lab, (binary, info) in self.refs.items():
            if not info.device:
                continue
            kind, msg, rep = ev.run_case(self._ref_binary(lab), 1, "ones", 1, 60)
            if kind == "no_device":
                raise NoGpu(f"no GPU: {msg}") if self.mode == "gpu" else InfraError(msg)
            if rep:
                self.device = rep.get("device")
                if self.mode == "cpu" and rep.get("mode") != "cpu":
                    raise InfraError("CPU mode is not available in this checkout: `make CPU=1` still "
                                     "builds GPU binaries")
            if kind != "ok":
                raise InfraError(f"the reference solution of {lab} fails at n=1: {msg}")
            return

    # ---- one submission --------------------------------------------------------------------

    def build_submission(self, name, sources, labs=None):
        """CPU part: builds and statically checks every lab of a submission. Returns
        {lab: result dict} with build/static filled, and the binaries in result['_binary']."""
        results = {}
        base = os.path.join(self.work, "submissions", batchmod.work_tag(name))

        def one(lab):
            settings = self.config.lab(lab)
            res = lab_result_template(lab, settings, self.mode)
            src = sources.get(lab)
            if src is None:
                res["status"] = "missing"
                res["summary"] = "not submitted"
                res["build"]["message"] = "no scan.cu for this lab in the submission"
                return lab, res
            shown = f"{lab}/scan.cu"
            try:
                with open(src, "rb") as f:
                    text = f.read(2_000_000).decode("utf-8", errors="replace")
            except OSError as e:
                text = None
                why = e.strerror
            if text is None or os.path.islink(src):
                res["status"] = "build failed"
                res["build"]["message"] = f"{shown}: " + ("a symbolic link" if os.path.islink(src) else why)
                res["summary"] = "build failed: " + res["build"]["message"]
                return lab, res
            if not text.strip():
                res["status"] = "build failed"
                res["build"]["message"] = f"{shown} is empty"
                res["summary"] = "build failed: the file is empty"
                return lab, res
            static = self.config.static
            # First pass, on the text: the #include lines written out (quick, with line numbers).
            violations = buildmod.check_source(text, static, self.builder.harness_headers())
            if violations:  # before the build: a forbidden #include may not even compile
                return lab, refuse(res, violations)
            out_dir = os.path.join(base, lab)
            ref = self.refs.get(lab)
            device_lab = ref[1].device if ref else True
            notes = []
            # The checks on what nvcc makes of the source (every header it reads, inline assembly
            # in host code) run on the private copy of the nvcc build, just before it compiles;
            # a violation there skips the build. In CPU mode that is the nvcc build made for the
            # static checks, done first; without nvcc they are skipped (Grader.notes says so).
            nvb = self.builder if self.mode == "gpu" else self.symbol_builder
            precheck = (lambda priv: nvb.source_checks(priv, static)) if nvb is not None else None
            nb = None
            nvcc_dir = os.path.join(out_dir, "nvcc")
            if self.mode == "gpu":
                b = pre = self.builder.build(src, out_dir, shown, precheck=precheck)
            else:
                if nvb is not None:
                    nb = nvb.build(src, nvcc_dir, shown, reuse=True, precheck=precheck)
                pre = nb
                b = None if nb is not None and nb.violations else self.builder.build(src, out_dir, shown)
            if pre is not None and pre.note:
                notes.append(pre.note)
            if pre is not None and pre.violations:
                if notes:
                    res["static"]["note"] = "; ".join(notes)
                return lab, refuse(res, pre.violations)
            res["build"].update(ok=b.ok, seconds=round(b.seconds + (nb.seconds if nb else 0), 2),
                                message=b.message)
            imports = self.builder.harness_imports()
            # The objects checked, also when the link failed (a shadowed runtime function is then
            # the likely cause): the build's own, and in CPU mode the nvcc object as well, so that
            # CPU mode enforces the GPU build's rules. The symbol allowlist and the check for calls
            # through pointers read nvcc objects only; system calls, constructors and shadowing
            # are checked in both.
            objects = []
            if os.path.exists(os.path.join(out_dir, "scan.o")):
                objects.append((os.path.join(out_dir, "scan.o"), self.mode == "gpu"))
            if nb is not None:
                if os.path.exists(os.path.join(nvcc_dir, "scan.o")):
                    objects.append((os.path.join(nvcc_dir, "scan.o"), True))
                gpu_imports = nvb.harness_imports()
                if gpu_imports is not None:
                    imports = (imports or set()) | gpu_imports
            code = buildmod.strip_comments(text)
            for obj, gpu_build in objects:
                found, note = buildmod.check_object(obj, static, device_lab, gpu_build, imports, code)
                if note and note not in notes:
                    notes.append(note)
                for v in found:
                    if v not in violations:
                        violations.append(v)
            if notes:
                res["static"]["note"] = "; ".join(notes)
            # A skeleton launches nothing yet either: "no kernel" only counts once the code runs.
            no_kernel = [v for v in violations if v.startswith("launches no kernel")]
            violations = [v for v in violations if not v.startswith("launches no kernel")]
            failed = None
            if not b.ok:
                failed = b.message
            elif nb is not None and not nb.ok:
                failed = "the nvcc build (the GPU's, which CPU mode must match) fails: " + nb.message
            if failed is not None and not violations:
                res["status"] = "build failed"
                res["build"].update(ok=False, message=failed)
                first = failed.splitlines()[0] if failed else ""
                res["summary"] = "build failed: " + first
                return lab, res
            if self.mode == "gpu" and b.ok:
                violations += buildmod.check_binary(b.binary)
            elif nb is not None and nb.ok:
                violations += buildmod.check_binary(nb.binary)
            if violations:  # nothing of a submission that failed a static check is ever run
                return lab, refuse(res, violations)
            info, why = ev.describe(b.binary)
            if info is None:
                violations.append(f"the LAB descriptor is unusable: {why}")
            elif ref:
                rinfo = ref[1]
                for field in ("id", "type", "shape", "bench_n", "max_n"):
                    if getattr(info, field) != getattr(rinfo, field):
                        violations.append(f"LAB.{field} is {getattr(info, field)}, the course's is "
                                          f"{getattr(rinfo, field)}: keep the descriptor as handed out")
            res["static"]["ok"] = not violations
            res["static"]["violations"] = violations
            if violations:
                return lab, refuse(res, violations)
            res["title"] = info.title
            res["_no_kernel"] = no_kernel
            res["_binary"] = b.binary
            res["_info"] = info
            return lab, res

        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(self.jobs) as pool:
            for lab, res in pool.map(one, self.labs if labs is None else labs):
                results[lab] = res
        self.timings["build_s"] = round(time.monotonic() - t0, 1)
        return results

    def evaluate(self, built):
        """GPU part: correctness, sanitizers and speed for labs that built; fills points and
        status. Returns the list of lab results in lab order."""
        labs = sorted(built)
        runnable = [lab for lab in labs if "_binary" in built[lab]]
        t0 = time.monotonic()
        self._correctness(built, runnable)
        self.timings["correctness_and_sanitizer_s"] = round(time.monotonic() - t0, 1)
        for lab in runnable:
            res = built[lab]
            if res.get("_no_kernel") and res["status"] != "not implemented":
                refuse(res, res["_no_kernel"])
        runnable = [lab for lab in runnable if built[lab]["status"] != "static check failed"]
        if self.mode == "gpu":
            t0 = time.monotonic()
            for i, lab in enumerate(runnable):
                self._speed(built[lab], lab, student_first=i % 2 == 0)
            self.timings["speed_s"] = round(time.monotonic() - t0, 1)
        else:
            for lab in runnable:
                built[lab]["sanitizer"].update(status="not graded", note="not graded in CPU mode")
                built[lab]["speed"].update(status="not graded", note="speed not graded: no GPU")
        out = []
        for lab in labs:
            res = built[lab]
            self._finish(res)
            res.pop("_binary", None)
            res.pop("_info", None)
            for k in [k for k in res if k.startswith("_")]:
                res.pop(k)
            out.append(res)
        return out

    # ---- correctness and sanitizers -------------------------------------------------------------
    # One pool of processes on the GPU: every lab's cases first, then the sanitizer runs, so the
    # slow sanitizer runs of one lab overlap the cases of another. A lab's remaining work is
    # skipped once it is known to be unimplemented or to hang.

    def _case_tasks(self, built, lab):
        res = built[lab]
        settings = self.config.lab(lab)
        cpu_limit = None
        if self.mode == "cpu":  # fibers on a CPU: a sixteenth of a size-limited lab's limit
            max_n = self.refs[lab][1].max_n if lab in self.refs else res["_info"].max_n
            cpu_limit = max_n // 16 if max_n else (1 << 20) + 1
        cases = ev.make_cases(res["_info"], settings, self.seed, cpu_limit, self.mode)
        if lab in self.refs:  # the course's sizes, whatever the student's descriptor says
            rinfo = self.refs[lab][1]
            cases = [c for c in cases if not rinfo.max_n or c[0] <= rinfo.max_n]
        res["correctness"]["total"] = len(cases)
        return [("case", lab, c, settings["timeouts"]["case_s"]) for c in cases]

    def _sanitizer_tasks(self, built, lab):
        res = built[lab]
        s = res["sanitizer"]
        settings = self.config.lab(lab)
        info = res["_info"]
        if self.mode != "gpu":
            s.update(status="not graded", note="not graded in CPU mode")
            return []
        if not info.device:
            s.update(status="passed", note="host lab: no device code; the harness's canary words check its memory")
            return []
        if not self.want_sanitizer:
            s.update(status="skipped", note="skipped (--no-sanitizer)")
            return []
        if not self.sanitizer:
            s.update(status="skipped", note="compute-sanitizer not found: memory and race checks skipped")
            return []
        sizes = ev.sanitizer_sizes(info)
        return [("sanitizer", lab, (tool, n), settings["timeouts"]["sanitizer_s"])
                for tool in settings["sanitizer"]["tools"] for n in sizes[tool]]

    def _correctness(self, built, labs):
        tasks = []
        for lab in labs:
            built[lab]["_stop"] = None
            built[lab]["_cases"] = []
            built[lab]["_checks"] = []
            tasks += self._case_tasks(built, lab)
        for lab in labs:
            tasks += self._sanitizer_tasks(built, lab)
        n_cases = sum(1 for t in tasks if t[0] == "case")
        done = [0, 0]

        def one(task):
            what, lab, arg, timeout = task
            res = built[lab]
            with self._lock:
                if res["_stop"]:
                    return
            if what == "case":
                n, dist, seed, options = arg
                kind, msg, _ = ev.run_case(res["_binary"], n, dist, seed, timeout, options)
                with self._lock:
                    done[0] += 1
                    if done[0] % 50 == 0 or done[0] == n_cases:
                        self.progress(f"correctness: {done[0]}/{n_cases} cases")
                    res["_cases"].append((n, dist, seed, options, kind, msg))
                    if kind in CASE_KINDS_STOP + ("no_device",) and not res["_stop"]:
                        res["_stop"] = kind
            else:
                tool, n = arg
                verdict, detail = ev.run_sanitizer(self.sanitizer, tool, res["_binary"], n,
                                                   ev.case_seed(self.seed, lab, n, tool), timeout,
                                                   res["_info"])
                with self._lock:
                    done[1] += 1
                    self.progress(f"sanitizer: {done[1]} runs ({lab} {tool} n={n}: {verdict})")
                    res["_checks"].append((tool, n, verdict, detail))

        with cf.ThreadPoolExecutor(self.gpu_jobs) as pool:
            list(pool.map(one, tasks))
        for lab in labs:
            res = built[lab]
            cases = sorted(res["_cases"])
            if any(k == "no_device" for *_, k, _ in cases):
                raise InfraError("the GPU disappeared while grading (a case reported no CUDA device)")
            c, s = res["correctness"], res["sanitizer"]
            if res["_stop"] == "not_implemented":
                res["status"] = "not implemented"
                res["summary"] = "not implemented (the TODO(student) parts are not written)"
                c["note"] = "not implemented"
                s.update(status="not graded", note="not implemented")
                continue
            c["passed"] = sum(1 for *_, k, _ in cases if k == "ok")
            for n, dist, seed, options, kind, msg in cases:
                if kind != "ok":
                    c["failures"].append({"n": n, "dist": dist, "seed": seed, "kind": kind,
                                          "options": " ".join(options), "message": msg,
                                          "reproduce": ev.reproduce_cmd(lab, n, dist, seed, self.mode, options)})
            if res["_stop"] == "timeout":
                hung = next(f for f in c["failures"] if f["kind"] == "timeout")
                limit = self.config.lab(lab)["timeouts"]["case_s"]
                not_run = c["total"] - len(cases)
                c["note"] = (f"hangs: the case n={hung['n']} dist={hung['dist']} timed out after {limit:g} s "
                             f"(the per-case limit)" +
                             (f"; the lab's other {not_run} cases were not run" if not_run else ""))
                if s["status"] == "not run" and not res["_checks"]:
                    s.update(status="failed", note="not run: the code hangs (a correctness case timed out)")
            checks = sorted(res["_checks"], key=lambda x: (x[0], x[1]))
            if checks:
                s["checks"] = [{"tool": t, "n": n, "verdict": v, "detail": d} for t, n, v, d in checks]
                bad = [d for _, _, v, d in checks if v == "errors"]
                slow = [d for _, _, v, d in checks if v == "timeout"]
                s["status"] = "failed" if bad else "passed"
                if bad:
                    s["note"] = bad[0]
                elif slow:  # only the sanitizer's exit code means "errors"; a hang is caught above
                    s["note"] = "inconclusive, not held against you: " + slow[0]
                else:
                    s["note"] = "memcheck and racecheck found no errors"

    # ---- speed -----------------------------------------------------------------------------

    def _serial_ms(self, n, settings):
        """Median time of the reference serial lab (01) at n, measured once per session."""
        serial = next((lab for lab in self.refs if not self.refs[lab][1].device), None)
        if serial is None:
            return None
        if n not in self.serial_cache:
            kind, msg, rep = ev.run_timed(self._ref_binary(serial), n, settings["speed"]["serial_reps"], 1,
                                          1, settings["timeouts"]["speed_s"])
            self.serial_cache[n] = rep["ms"] if kind == "ok" and _positive(rep.get("ms")) else None
        return self.serial_cache[n]

    def _speed(self, res, lab, student_first=True):
        sp = res["speed"]
        c = res["correctness"]
        if res["status"] == "not implemented":
            sp.update(status="not graded", note="not implemented")
            return
        if c["passed"] < c["total"]:
            sp.update(status="not graded", note="not graded: correctness cases failed")
            return
        if lab not in self.refs:
            sp.update(status="not graded", note="not graded: the course has no reference solution for this lab")
            return
        settings = self.config.lab(lab)
        spc, to = settings["speed"], settings["timeouts"]["speed_s"]
        rinfo = self.refs[lab][1]
        n = rinfo.bench_n
        metric = "tile_ms" if rinfo.shape == "tile" else "ms"
        sp.update(bench_n=n, metric=metric)
        seed = ev.case_seed(self.seed, lab, n, "bench")
        self.progress(f"speed: {lab} at n={n}")

        def timed(binary, reps, warmup, size=n):
            kind, msg, rep = ev.run_timed(binary, size, reps, warmup, seed, to)
            val = rep.get(metric) if rep and kind == "ok" else None
            if kind == "ok" and not _positive(val):
                val = rep.get("ms")
            if kind == "ok" and not _positive(val):  # a report without a time: never a TypeError
                kind, msg, val = "error", (f"the report of a timed run at n={size} has no time "
                                           f"({metric}: {rep.get(metric)!r}, ms: {rep.get('ms')!r})"), None
            return kind, msg, rep, val

        # A cheap probe at a sixteenth of the size first, so that a hopelessly slow kernel (one
        # thread doing everything, say) is not run 20 times at the full size.
        probe_n = max(min(n, 1 << 20), n // 16)
        kind, msg, rep, s_probe = timed(res["_binary"], 3, 1, probe_n)
        if kind == "ok":
            rkind, rmsg, _, r_probe = timed(self._ref_binary(lab), 3, 1, probe_n)
            if rkind != "ok":
                raise InfraError(f"the reference solution of {lab} fails at n={probe_n}: {rmsg}")
            zero_at = spc["zero_at"]
            if r_probe and s_probe / r_probe > 2 * zero_at:
                sp.update(status="graded", ratio=round(s_probe / r_probe, 3), student_ms=s_probe,
                          reference_ms=r_probe, points=0.0, bench_n=probe_n,
                          note=f"too slow to time in full: {s_probe / r_probe:.1f}x the reference's time at n={probe_n}")
                serial = self._serial_ms(probe_n, settings)
                if serial and _positive(rep.get("ms")):
                    sp["serial_ms"] = serial
                    sp["speedup_vs_serial"] = round(serial / rep["ms"], 3)
                return
        zero_at, full_at = spc["zero_at"], spc["full_at"]
        s_vals, r_vals, s_full, r_copy = [], [], [], []
        for rnd in range(spc["rounds"]):
            order = ("s", "r") if (rnd % 2 == 0) == student_first else ("r", "s")
            for who in order:
                binary = res["_binary"] if who == "s" else self._ref_binary(lab)
                kind, msg, rep, val = timed(binary, spc["reps"], spc["warmup"])
                if who == "r":
                    if kind != "ok":
                        raise InfraError(f"the reference solution of {lab} fails while timed: {msg}")
                    r_vals.append(val)
                    if _positive(rep.get("memcpy_ms")):
                        r_copy.append(rep["memcpy_ms"])
                    continue
                if kind != "ok":  # a failure at the full size, or found when re-validated after timing
                    sp.update(status="failed", note=f"at the benchmark size n={n}: {msg}")
                    c["failures"].append({"n": n, "dist": "small", "seed": seed, "kind": kind,
                                          "options": "timed run", "message": msg,
                                          "reproduce": ev.reproduce_cmd(lab, n, "small", seed, self.mode)})
                    c["passed"] = max(0, c["passed"] - 1)
                    return
                s_vals.append(val)
                s_full.append(rep["ms"] if _positive(rep.get("ms")) else val)
        s_ms, r_ms, full_ms = median(s_vals), median(r_vals), median(s_full)
        copy_ms = median(r_copy) if r_copy else None
        if copy_ms and s_ms < PLAUSIBLE_FRACTION_OF_COPY * copy_ms:
            sp.update(status="failed", student_ms=s_ms, reference_ms=r_ms, points=0.0,
                      note=(f"timing not plausible: {s_ms:.4f} ms is faster than a copy of the same "
                            f"bytes ({copy_ms:.4f} ms, timed in the reference's run): a scan must "
                            f"read and write every element, so the measurement was tampered with"))
            return
        ratio = s_ms / r_ms if r_ms else None
        frac = speed_fraction(ratio, full_at, zero_at)
        serial = self._serial_ms(n, settings)
        speedup = serial / full_ms if serial and full_ms else None
        note = (f"{ratio:.2f}x the reference's {'tile pass' if metric == 'tile_ms' else 'time'} "
                f"(full points at <= {full_at:g}x, none at >= {zero_at:g}x)")
        if spc["min_speedup"] is not None and speedup is not None and speedup < spc["min_speedup"]:
            frac = 0.0
            note = f"speedup {speedup:.1f}x over the serial lab is below this lab's minimum of {spc['min_speedup']:g}x"
        sp.update(status="graded", ratio=round(ratio, 3) if ratio else None, student_ms=s_ms,
                  reference_ms=r_ms, gbps=round(ev.contract.bytes_moved(n) / (full_ms * 1e6), 2) if full_ms else None,
                  serial_ms=serial, speedup_vs_serial=round(speedup, 3) if speedup else None,
                  points=round_points(sp["max"] * frac), note=note)

    # ---- points ----------------------------------------------------------------------------

    def _finish(self, res):
        c, s, sp = res["correctness"], res["sanitizer"], res["speed"]
        if res["status"] in ("missing", "build failed", "static check failed", "not implemented"):
            c["points"] = s["points"] = sp["points"] = 0.0
            res["points"] = 0.0
            return
        c["points"] = round_points(correctness_points(c["passed"], c["total"], c["max"]))
        s["points"] = s["max"] if s["status"] in ("passed",) and c["passed"] > 0 else 0.0
        if s["status"] == "skipped" and c["passed"] > 0:
            s["points"] = s["max"]  # the machine lacks the tool: never the student's loss
        if sp["status"] != "graded":
            sp["points"] = 0.0
        res["points"] = round_points(c["points"] + s["points"] + sp["points"])
        parts = []
        if c["passed"] < c["total"]:
            if c.get("note", "").startswith("hangs:"):
                parts.append(f"{c['note']} ({c['passed']} of {c['total']} cases passed)")
            else:
                first = c["failures"][0]["message"] if c["failures"] else ""
                parts.append(f"{c['total'] - c['passed']} of {c['total']} cases failed: {first}")
        if s["status"] == "failed":
            parts.append("sanitizer: " + s["note"])
        if sp["status"] in ("graded", "failed") and sp["points"] < sp["max"]:
            parts.append("speed: " + sp["note"])
        res["summary"] = "; ".join(parts) if parts else "all checks passed"
