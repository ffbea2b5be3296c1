"""Grading one submission, stage by stage: build and static checks (CPU, parallel:
stage_build), then the correctness cases and the sanitizer runs (GPU, a few processes at a time:
stage_cases), then speed (GPU, one process at a time, student and reference interleaved:
stage_speed); scoring.py decides the points. Each stage returns its own outcome (outcomes.py);
the Grader only orchestrates: it says what each stage gets and composes the outcomes into a
LabResult.

A submission is a mapping lab id -> path of its scan.cu (None: not submitted). A lab's result
becomes a plain dict (LabResult.to_dict) that every output format is written from.
"""
import concurrent.futures as cf
import dataclasses
import os
import shutil
import time

from . import build as buildmod
from . import cores
from . import evaluate as ev
from . import feedback
from . import proc, runuser, scheduling
from . import resources
from . import scoring
from . import case_outcomes, stage_build, stage_cases
from .build import InfraError, NoGpu
from .outcomes import LabResult, SpeedOutcome
from .stage_build import BuildStage
from .gpu_guard import GpuGuard
from .stage_speed import GPU_BUSY, SpeedStage
from .status import Status

NOT_IMPLEMENTED_SUMMARY = "not implemented (the TODO(student) parts are not written)"


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


def build_reference(builder, root, work, lab, bases=None):
    """lab's reference binary (its object beside it, scan.o), built by builder from its source or
    a student release's object (build.reference_source), rebuilt unless its build stamp shows the
    same source, the same harness objects and flags, and an unchanged object and binary
    (Builder.build reuse). bases: {lab: the folder of its reference build} for a lab built on
    others. A grade's references, and the objects tools/student_release.py ships."""
    src = buildmod.reference_source(root, lab, builder.mode)
    with builder.locked("ref-" + lab):  # a shared cache: one session builds, the rest reuse
        res = builder.build(src, builder.reference_dir(lab, work), os.path.relpath(src, root),
                            reuse=True, lab=lab, bases=stage_build.base_objects(bases))
        if res.ok:
            os.chmod(res.binary, 0o555)  # a reminder more than a guard: the hash is the check
            ev.mark_reference(res.binary)  # run copies executable, not readable; never under a tool
    return res


def gpu_visible():
    """A cheap first look for an NVIDIA GPU, before anything is built."""
    if any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg")):
        return True
    smi = shutil.which("nvidia-smi")
    if smi:
        r = proc.run([smi, "-L"], 30)
        return r.returncode == 0 and "GPU" in r.stdout
    return False


def finish_lab(result, settings):
    """The result with its score (scoring.score_lab) and, for a lab that was graded, its summary."""
    scored = dataclasses.replace(result, score=scoring.score_lab(result, settings))
    return dataclasses.replace(scored, summary=scored.summary_line())


def _base_unwritten(plans, runs):
    """True when a report of the lab's plans said the scan it runs on is not written (lab 10:
    the reason base_unwritten, common/contract.json)."""
    return any(runs[p.lab].reason == "base_unwritten" for p in plans)


def device_mismatch_hint(msg):
    """Why a reference fails at n = 1 on a GPU that works, when CUDA's error says it: the build
    has no code for this GPU (the Makefile's ARCH, or a container's, names other GPUs), or the
    driver is older than the toolkit. '' for any other failure."""
    if "NoKernelImageForDevice" in msg or "no kernel image" in msg:
        return (" (the course was built for other GPUs: the Makefile's ARCH, or the container's --build-arg "
                "ARCH, must name this GPU's architecture, e.g. sm_80 for an A100, or list several, "
                "ARCH=\"sm_80 sm_90\"; then build again)")
    if "UnsupportedPtxVersion" in msg or "InsufficientDriver" in msg:
        return (" (this GPU's driver is older than the CUDA toolkit the course was built with: CUDA 13 needs "
                "driver 580 or newer)")
    return ""


class Grader:
    """Grades submissions against the course in root. mode 'gpu' or 'cpu'."""

    def __init__(self, root, config, work, mode="gpu", seed=None, jobs=None, gpu_jobs=None,
                 labs=None, progress=None, sanitizer=True, isolated=False):
        self.root = root
        self.config = config
        feedback.configure(getattr(config, "feedback", None))  # the limits on quoted program output
        self.work = os.path.abspath(work)
        self.mode = mode
        self.seed = seed
        # the container's real CPU quota and memory (resources.py), not the host's core count
        self.jobs = jobs or resources.jobs()
        self.gpu_jobs = gpu_jobs or resources.jobs(most=10)
        self.labs = labs if labs is not None else course_labs(root)
        self.progress = progress or (lambda msg: None)
        self.want_sanitizer = sanitizer
        self.isolated = isolated  # one process per graded run (else several runs per process)
        self.builder = buildmod.Builder(root, os.path.join(self.work, "build"), mode,
                                        config.lab(None)["timeouts"]["build_s"])
        self.refs = {}       # lab -> (binary, LabInfo)
        self.ref_hashes = {}  # lab -> hash of the reference binary, checked before each use
        self.symbol_builder = None  # CPU mode: an nvcc build, for the static checks on its object
        self.cpu_builder = None  # a GPU grade: CPU mode's Builder, for the ordering cases (ordering_labs)
        self.notes = []      # what the result should say about this session (missing tools)
        self.serial_cache = {}
        self.device = None
        self.sanitizer = None
        self.timings = {}
        self.build_seconds = {}  # submission name -> its build time (builds run ahead of grading)
        self.skeletons = {}  # lab -> sha256 of the course's skeleton scan.cu, or None (skeleton_key)
        self.unwritten = {}  # skeleton_key -> the LabResult of a skeleton graded unwritten
        self.gpu_guard = None  # gpu_guard.GpuGuard, made at the first speed stage
        self.regrade = None  # the command that grades this again (grade.py sets it), for GPU_BUSY
        runuser.set_run_user(config.sandbox["user"])  # who lab runs run as when the grader is root

    # ---- once per grading session ----------------------------------------------------------

    def prepare(self):
        """Builds the harness and the reference solutions and checks the device. Raises
        InfraError when grading is impossible on this machine."""
        if self.mode == "gpu" and not gpu_visible():
            raise NoGpu("no GPU: no NVIDIA device or driver is visible on this machine")
        self.build_course()
        self._check_device()
        if self.mode == "gpu" and any(not info.device for _, info in self.refs.values()):
            core = cores.reserve()  # the host lab's timed runs get a core no build shares
            if core is not None:
                self.progress(f"CPU {core} kept for timing the host lab; everything else runs on the other cores")
        if self.mode == "gpu" and self.want_sanitizer:
            self.sanitizer = buildmod.find_tool("compute-sanitizer", self.builder.nvcc)

    def build_course(self):
        """The harness and the reference solutions, built (or found built) in the work folder;
        needs no GPU (grade.py --prepare-only: a container or Gradescope image built ahead)."""
        try:  # lab runs never run as root: no user to run them as is an infrastructure error
            runuser.run_user()
        except runuser.RunUserError as e:
            raise InfraError(str(e))
        ev.private_folder(self.work)  # builds, private copies of scan.cu, results: not the run user's
        buildmod.hold_work(self.work)  # one grade.py at a time in a work folder
        if self.builder.shared:
            ev.private_folder(os.path.dirname(self.builder.common))
        self.progress(f"building the harness ({self.mode} mode)")
        self.builder.prepare()
        if self.mode == "cpu":
            self._prepare_symbol_builder()
        elif self.ordering_labs() or self.algorithm_labs():
            self._prepare_cpu_builder()
        self.progress("building the reference solutions")
        todo = [lab for lab in self.labs if buildmod.reference_source(self.root, lab, self.mode)]
        # a lab built on others (lab 10) links their reference objects: those first, also when
        # they are not graded themselves
        first = [lab for lab in todo if not self.built_on(lab)] + self.bases_of(todo)
        results = {}
        with cf.ThreadPoolExecutor(self.jobs) as pool:
            futs = {lab: pool.submit(self._build_reference, lab) for lab in first}
            results.update((lab, f.result()) for lab, f in futs.items())

            def ref_dir(b):
                return self.builder.reference_dir(b, self.work)

            futs = {lab: pool.submit(self._build_reference, lab,
                                     {b: ref_dir(b) if results.get(b) and results[b].ok else None
                                      for b in self.built_on(lab)})
                    for lab in todo if self.built_on(lab)}
            results.update((lab, f.result()) for lab, f in futs.items())
        for lab in todo:
            res = results[lab]
            if not res.ok:
                raise InfraError(f"the reference solution of {lab} does not build: {res.message}")
            self.ref_hashes[lab] = buildmod.sha256_file(res.binary)
            info, why = ev.describe(res.binary)
            if info is None:
                raise InfraError(f"the reference solution of {lab}: {why}")
            self.refs[lab] = (res.binary, info)

    def _prepare_symbol_builder(self):
        """CPU mode: every static check runs on what CPU mode itself compiles (no nvcc needed,
        the GPU path's verdicts: stage_build, checks/cpu.py). Where nvcc is installed, each lab is
        also built with nvcc (never run) and nvcc's checks run on that object too, which adds one
        verdict CPU mode alone cannot give: code that nvcc does not compile."""
        if not buildmod.find_nvcc():
            return
        sb = buildmod.Builder(self.root, os.path.join(self.work, "build"), "gpu",
                              self.config.lab(None)["timeouts"]["build_s"])
        self.progress("building the harness with nvcc too (code that nvcc does not compile fails here too)")
        sb.prepare()  # nvcc is there but the harness does not build with it: an infrastructure error
        self.symbol_builder = sb

    def ordering_labs(self):
        """The labs a GPU grade also builds in CPU mode: those whose config has
        correctness.cpu_ordering (their multi-tile cases run on CPU mode's scheduler too,
        stage_cases.cpu_plans), and the labs they are built on (their CPU-mode objects). (Every
        grade also builds the labs with an algorithm case in CPU mode: algorithm_labs.)"""
        wanted = [lab for lab in self.labs if self.config.lab(lab)["correctness"].get("cpu_ordering")]
        return sorted(set(wanted) | {b for lab in wanted for b in self.built_on(lab)})

    def algorithm_labs(self):
        """The labs with an algorithm case: a graded variant of the course's (its reference's
        --describe) asks for an algorithm. Before the references are built, every lab that could
        have one: a GPU grade then builds CPU mode's harness."""
        if not self.refs:
            return list(self.labs)
        return [lab for lab in self.labs if lab in self.refs and self.asked(lab)]

    def asked(self, lab):
        """{variant: algorithm} of the course's variants of lab that ask for one (the reference's
        --describe: the course's descriptor, which a submission's binary could misdescribe)."""
        info = self.refs[lab][1] if lab in self.refs else None
        return {v.name: v.algorithm for v in info.variants if v.algorithm != "none"} if info else {}

    def _prepare_cpu_builder(self):
        """A GPU grade: CPU mode's harness, for the ordering cases. Where it cannot be built (no
        host compiler, an old one), the cases are left out and the result says so: never an
        infrastructure error, and no student loses a point for it."""
        cb = buildmod.Builder(self.root, os.path.join(self.work, "build"), "cpu",
                              self.config.lab(None)["timeouts"]["build_s"])
        self.progress("building the harness in CPU mode too (the single-pass labs' ordering cases run there)")
        try:
            cb.prepare()
        except InfraError as e:
            self.notes.append(f"the single-pass labs' ordering cases in CPU mode were not run: {e}")
            return
        self.cpu_builder = cb

    def bases_of(self, labs):
        """The labs the given ones are built on that are not among them (sorted)."""
        return sorted({b for lab in labs for b in self.built_on(lab)} - set(labs))

    def built_on(self, lab):
        """The labs whose objects lab's binary links (contract.json built_on: lab 10's are 08, 07)."""
        return list(self.config.lab(lab).get("built_on") or [])

    def _build_reference(self, lab, bases=None):
        return build_reference(self.builder, self.root, self.work, lab, bases)

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
            if kind == Status.NO_DEVICE:
                raise NoGpu(f"no GPU: {msg}") if self.mode == "gpu" else InfraError(msg)
            if rep:
                self.device = rep.get("device")
                if self.mode == "cpu" and rep.get("mode") != "cpu":
                    raise InfraError("CPU mode is not available in this checkout: `make CPU=1` still "
                                     "builds GPU binaries")
            if kind != Status.OK:
                raise InfraError(f"the reference solution of {lab} fails at n=1: {msg}{device_mismatch_hint(msg)}")
            return

    # ---- one submission --------------------------------------------------------------------

    def build_submission(self, name, sources, labs=None, why_missing=None):
        """CPU part: builds and statically checks every lab of a submission (stage_build).
        Returns {lab: BuiltLab}; a lab that may run has its binary and LabInfo there. why_missing:
        why the labs without a source were not found (uploads.Found.problem), their summary."""
        base = os.path.join(self.work, "submissions", buildmod.work_tag(name))
        stage = BuildStage(self.builder, self.symbol_builder, self.config.static, self.mode, self.refs,
                           self.cpu_builder, self.ordering_labs() if self.cpu_builder else (), self.algorithm_labs())
        t0 = time.monotonic()

        wanted = list(self.labs if labs is None else labs)
        # labs built on others (lab 10) after them: they link the objects of this submission's
        # labs 08 and 07 when those built and passed the static checks (the course's stubs
        # otherwise); a base lab that is not graded is built apart (base-NN_name/), only for that
        dirs = {lab: os.path.join(base, lab) for lab in wanted}
        dirs.update((b, os.path.join(base, "base-" + b)) for b in self.bases_of(wanted))

        bg = scheduling.in_background()  # the pool's threads start the builds as this thread would

        def one(lab):
            with scheduling.background(bg):
                return one_lab(lab)

        def one_lab(lab):
            if sources.get(lab) is None and why_missing:
                return stage_build.missing(lab, summary="not found: " + why_missing, message=why_missing)
            bases = {b: dirs[b] if done[b].binary is not None else None
                     for b in self.built_on(lab)} if self.built_on(lab) else None
            return stage.run(lab, sources.get(lab), dirs[lab], bases)
        done = {}
        # a lab built on others waits for those only, not for every other lab (lab 10 is the
        # longest build: it starts as soon as 07 and 08 are done, while 09 still builds). The
        # labs without bases are queued first (the bases, then the later and larger labs), so a
        # waiting lab never holds the worker one it waits for needs
        gate = {b for lab in dirs for b in self.built_on(lab)}
        free = [lab for lab in dirs if not self.built_on(lab)]
        first = (sorted(lab for lab in free if lab in gate)
                 + sorted((lab for lab in free if lab not in gate), reverse=True))
        with cf.ThreadPoolExecutor(self.jobs) as pool:
            futs = {lab: pool.submit(one, lab) for lab in first}

            def after_bases(lab):
                for b in self.built_on(lab):
                    done[b] = futs[b].result()
                return one(lab)
            futs.update((lab, pool.submit(after_bases, lab)) for lab in dirs if self.built_on(lab))
            done.update((lab, f.result()) for lab, f in futs.items())
        self.build_seconds[name] = self.timings["build_s"] = round(time.monotonic() - t0, 1)
        return {lab: self._keyed(done[lab], sources, done) for lab in wanted}

    def skeleton_key(self, lab, sources, done):
        """For a lab whose scan.cu is the course's skeleton byte for byte (labs/<lab>/scan.cu of
        the course being graded against): a key of everything its verdict can depend on, its
        file and those of the labs it is built on (lab 10 links 08 and 07), each with whether it
        built (done: {lab: BuiltLab}; the course's stub replaces one that did not), else "". Two
        labs of one key are the same program, run on the same cases (the seed, the lab, n:
        case_seed), so the same verdict."""
        if self.isolated or sources.get(lab) is None:
            return ""
        if lab not in self.skeletons:
            path = os.path.join(self.root, "labs", lab, "scan.cu")
            self.skeletons[lab] = buildmod.sha256_file(path) if os.path.isfile(path) else None
        try:
            own = buildmod.sha256_file(sources[lab])
        except OSError:
            return ""
        if self.skeletons[lab] is None or own != self.skeletons[lab]:
            return ""
        parts = [f"{lab}:{own}"]
        for base in self.built_on(lab):
            try:
                own = buildmod.sha256_file(sources[base]) if sources.get(base) else "-"
            except OSError:
                return ""
            parts.append(f"{base}:{own}:{'built' if done.get(base) and done[base].binary else 'stub'}")
        return "\0".join(parts)

    def _keyed(self, built, sources, done):
        """built with its skeleton_key, when it may run."""
        if built.binary is None:
            return built
        key = self.skeleton_key(built.lab, sources, done)
        return dataclasses.replace(built, skeleton_key=key) if key else built

    def evaluate(self, built, name=None):
        """GPU part: correctness, sanitizers and speed for the labs that built ({lab: BuiltLab}),
        then the points. Returns the lab results as plain dicts (LabResult.to_dict), in lab order."""
        if name in self.build_seconds:  # this submission's, not the one building meanwhile
            self.timings["build_s"] = self.build_seconds.pop(name)
        labs = sorted(built)
        runnable = [lab for lab in labs if built[lab].binary is not None]
        t0 = time.monotonic()
        checked = self._check(built, runnable)
        self.timings["correctness_and_sanitizer_s"] = round(time.monotonic() - t0, 1)
        timed = [lab for lab in runnable if checked[lab].status != Status.STATIC_CHECK_FAILED]
        speed = self._speed(built, checked, timed)
        out = []
        for lab in labs:
            res = checked.get(lab) or self._stopped(built[lab])
            if lab in speed:
                res = dataclasses.replace(res, speed=speed[lab])
            out.append(finish_lab(res, self.config.lab(lab)).to_dict())
        return out

    def _stopped(self, b):
        """The result of a lab that stopped at its build (missing, build failed, static check)."""
        return LabResult.blank(b.lab, self.config.lab(b.lab), self.mode, status=b.status, summary=b.summary,
                               build=b.build, static=b.static)

    def _check(self, built, runnable):
        """Stages 3 and 4 for every runnable lab in one pool of processes: {lab: LabResult} with
        the correctness and sanitizer outcomes, and the lab's status once its code has run: not
        implemented, or failing the static check deferred until then (it launches no kernel)."""
        out = {}
        for lab in runnable:  # an untouched skeleton already graded unwritten in this session
            b = built[lab]
            known = self.unwritten.get(b.skeleton_key) if b.skeleton_key else None
            if known is not None:
                self.progress(f"correctness: {lab}: the course's skeleton, untouched: not implemented, "
                              f"as the same files were earlier in this session (nothing run again)")
                out[lab] = dataclasses.replace(known, title=b.title, build=b.build, static=b.static)
        runnable = [lab for lab in runnable if lab not in out]
        by_lab = {lab: stage_cases.plan_lab(lab, built[lab].binary, built[lab].info, self.config.lab(lab),
                                            self.seed, self.mode, self.want_sanitizer, self.sanitizer)
                  for lab in runnable}
        if self.mode == "gpu":  # the single-pass labs' ordering cases in CPU mode too
            by_lab = {lab: plans + stage_cases.cpu_plans(plans, built[lab].cpu_binary, self.config.lab(lab),
                                                         self.seed)
                      for lab, plans in by_lab.items()}
        by_lab = {lab: plans + stage_cases.algorithm_plans(plans, built[lab].profile_binary, self.seed,
                                                           self.asked(lab))
                  for lab, plans in by_lab.items()}
        plans = {p.lab: p for lab in runnable for p in by_lab[lab]}
        runs = stage_cases.run_plans(plans, self.gpu_jobs, self.sanitizer, self.seed, self.progress, self.isolated)
        for lab in runnable:
            b = built[lab]
            correctness, sanitizer = case_outcomes.lab_outcomes(by_lab[lab], runs, self.mode)
            res = LabResult.blank(lab, self.config.lab(lab), self.mode, title=b.title, build=b.build,
                                  static=b.static, correctness=correctness, sanitizer=sanitizer)
            if correctness.stopped_by == Status.NOT_IMPLEMENTED:
                why = NOT_IMPLEMENTED_SUMMARY
                if self.built_on(lab) and _base_unwritten(by_lab[lab], runs):  # the scan it runs on
                    why = (f"not implemented: it runs on your lab {' or '.join(b[:2] for b in self.built_on(lab))} "
                           f"scan, and both return LAB_NOT_IMPLEMENTED: finish one of them first")
                elif len(correctness.variants) > 1:
                    why = (f"not implemented: none of its graded variants is written "
                           f"({', '.join(v.name for v in correctness.variants if v.graded)} return "
                           f"LAB_NOT_IMPLEMENTED)")
                res = dataclasses.replace(res, status=Status.LAB_NOT_IMPLEMENTED, summary=why)
                if b.skeleton_key:
                    self.unwritten[b.skeleton_key] = res
            elif b.cpu_note and (self.config.lab(lab)["correctness"].get("cpu_ordering")
                                 or self.asked(lab)):  # not a base's
                note = "; ".join(x for x in (correctness.note, b.cpu_note) if x)
                res = dataclasses.replace(res, correctness=dataclasses.replace(correctness, note=note))
            if b.static.deferred and res.status != Status.LAB_NOT_IMPLEMENTED:
                res = dataclasses.replace(res, static=b.static.refused(b.static.deferred),
                                          status=Status.STATIC_CHECK_FAILED,
                                          summary="static check failed: " + b.static.deferred[0])
            out[lab] = res
        return out

    def _speed(self, built, checked, labs):
        """Stage 5 for labs: {lab: SpeedOutcome}. On a GPU, the student's time against the
        reference's, the order alternating from lab to lab; in CPU mode, not graded."""
        if self.mode != "gpu":
            return {lab: SpeedOutcome(Status.NOT_GRADED, "speed not graded: no GPU") for lab in labs}
        if self.gpu_guard is None:
            self.gpu_guard = GpuGuard(self.notes)
        stage = SpeedStage(self.config, self.refs, self._ref_binary, self.seed, self.mode, self.progress,
                           self.serial_cache, self.isolated, guard=self.gpu_guard, regrade=self.regrade)
        t0 = time.monotonic()
        out = {}

        def one(i, lab):
            out[lab] = stage.run(lab, built[lab].binary, checked[lab].correctness, student_first=i % 2 == 0)

        # a host lab (the serial one) uses no GPU: it is measured in a thread of its own, on the
        # core the grader keeps for it (cores.py: no build, case or other timed run shares it;
        # its rounds alternate with the reference's), beside the GPU labs' timed runs (only its
        # confirmation of a loss holds them off: SpeedStage._quiet); it never waits for the GPU
        host = {lab for lab in labs if lab in self.refs and not self.refs[lab][1].device}

        def on_its_core(i, lab):  # the core no build shares, where the grader kept one (cores.py)
            with proc.pinned(cores.kept()):
                one(i, lab)
        with cf.ThreadPoolExecutor(1) as aside:
            beside = [aside.submit(on_its_core, i, lab) for i, lab in enumerate(labs) if lab in host]
            for i, lab in enumerate(labs):
                if lab not in host:
                    one(i, lab)
                    if out[lab].note.startswith(GPU_BUSY):  # the machine, not the student: not a grade
                        raise InfraError(f"{lab}: {out[lab].note}")
            for f in beside:
                f.result()
        self.timings["speed_s"] = round(time.monotonic() - t0, 1)
        return out
