"""Stage 1 and 2: build one lab of a submission and run the static checks on it (CPU only).

BuildStage.run returns a BuiltLab: the BuildOutcome and StaticOutcome, and when the lab may run,
its binary and the course's LabInfo. A lab that fails a static check is never run (not even for
`scan --describe`). The order: the checks on the text (a forbidden #include may not even compile),
the checks on what the compiler makes of the source (nvcc's around its one compile: the headers
before it, the files it kept after it; or in CPU mode CPU mode's own, which need no nvcc, just
before it compiles), the compile, the checks
on the objects (also when the link failed: a shadowed runtime function is then the likely
cause) and on the binary.
"""
import concurrent.futures as cf
import dataclasses
import hashlib
import os
import threading
import types
from dataclasses import dataclass
from typing import Optional

from . import evaluate as ev
from . import scheduling
from .checks import cpu as cpu_checks
from .checks import nvcc as nvcc_checks
from .checks.lexer import strip_comments
from .checks import registry
from .checks.objects import check_object
from .outcomes import BuildOutcome, StaticOutcome
from .status import Status

NO_KERNEL = "launches no kernel"  # how check_object words the deferred violation
MAX_SOURCE_READ = 2_000_000


@dataclass(frozen=True)
class BuiltLab:
    """The build stage's outcome for one lab. status: graded (it may run), or why it stopped
    (missing, build failed, static check failed) with summary. binary and info (the course's
    LabInfo) only when it may run."""
    lab: str
    build: BuildOutcome
    static: StaticOutcome
    status: Status = Status.GRADED
    summary: str = ""
    title: str = ""
    binary: Optional[str] = None
    info: object = None
    skeleton_key: str = ""  # the lab's own scan.cu is the course's skeleton, untouched: Grader.unwritten
    cpu_binary: Optional[str] = None  # a GPU grade's CPU-mode build of it, for its CPU-mode cases
    cpu_note: str = ""  # why a GPU grade has no CPU-mode build of a lab that wants one
    profile_binary: Optional[str] = None  # its CPU-mode build with the counting hooks: the algorithm case's


def refused(lab, build, static, violations):
    """A lab that failed its static checks (violations: one line each)."""
    return BuiltLab(lab, build, static.refused(violations), Status.STATIC_CHECK_FAILED,
                    "static check failed: " + violations[0])


def build_failed(lab, message, summary, build=None, static=None):
    """A lab that did not build (message: the compiler's, or why there was nothing to build)."""
    build = BuildOutcome(ok=False, seconds=build.seconds if build else 0.0, message=message)
    return BuiltLab(lab, build, static or StaticOutcome(), Status.BUILD_FAILED, summary)


def missing(lab, summary="not submitted", message="no scan.cu for this lab in the submission"):
    """A lab that the submission does not contain."""
    return BuiltLab(lab, BuildOutcome(message=message), StaticOutcome(), Status.MISSING, summary)


def base_objects(bases, sub=""):
    """Builder.build's bases from {lab: the folder it was built in, or None}: {lab: its object
    folder/sub/scan.o, or None when there is none (the course's stub is linked)}; None for None."""
    if bases is None:
        return None
    out = {}
    for b, d in bases.items():
        obj = os.path.join(d, sub, "scan.o") if d else None
        out[b] = obj if obj and os.path.isfile(obj) else None
    return out


def _why_not(b):
    """The first line of why a BuildResult cannot be used: its first violation, else its message."""
    return b.violations[0] if b.violations else (b.message.splitlines() or ["the build failed"])[0]


@dataclass(frozen=True)
class _Compiled:
    """What the compile step gives the checks after it: the build of this mode (None when nvcc's
    source checks refused the lab in CPU mode), CPU mode's nvcc build (or None) and the nvcc
    builder it came from, and the notes on checks that could not run."""
    build: object
    nvcc_build: object
    nvcc_builder: object
    violations: list
    notes: list


class BuildStage:
    """Builds and checks labs. builder: this mode's Builder; symbol_builder: CPU mode's nvcc
    Builder (or None: the checks that need nvcc are skipped); refs: {lab: (binary, LabInfo)} of
    the course's reference solutions."""

    def __init__(self, builder, symbol_builder, static, mode, refs, cpu_builder=None, cpu_labs=(), profile_labs=()):
        self.builder = builder
        self.symbol_builder = symbol_builder
        self.static = static
        self.mode = mode
        self.refs = refs
        self.cpu_builder = cpu_builder  # a GPU grade's CPU-mode Builder, or None
        self.cpu_labs = set(cpu_labs)  # the labs it builds: those with ordering cases, and their bases
        self.profile_labs = set(profile_labs)  # the labs with an algorithm case (_with_profile_build)
        self._prechecked = {}  # (builder, sha256 of a source) -> CPU mode's checks' verdict on it
        nvb = builder if mode == "gpu" else symbol_builder  # nvcc's checks, one for every lab's build
        self._nvcc_precheck = nvcc_checks.precheck(nvb, static) if nvb is not None else None
        self._lock = threading.Lock()

    def _cpu_precheck(self, builder):
        """CPU mode's source checks (checks/cpu.py) as builder's precheck, made once per source
        text: a lab's profile build compiles the same scan.cu with the same builder as its other
        CPU-mode build, and the checks' verdict depends on nothing else (their messages name
        scan.cu, never the private copy's path)."""
        def pre(priv):
            with open(priv, "rb") as f:
                key = (id(builder), hashlib.sha256(f.read()).hexdigest())
            with self._lock:
                found = self._prechecked.get(key)
            if found is None:
                found = cpu_checks.source_checks(builder, priv, self.static)
                with self._lock:
                    self._prechecked[key] = found
            return found
        return pre

    def run(self, lab, src, out_dir, bases=None):
        """The BuiltLab of lab from src (None: not submitted), built in out_dir. bases: for a lab
        built on others (lab 10), {lab: the folder where this stage built that lab of the same
        submission, or None when it did not build or was refused}: their objects are linked in,
        a missing one replaced by the course's stub."""
        if src is None:
            return missing(lab)
        shown = f"{lab}/scan.cu"
        text, stop = self._read(lab, src, shown)
        if stop is not None:
            return stop
        # First pass, on the text: the #include lines written out (quick, with line numbers).
        violations = registry.run("text", "source", text, types.SimpleNamespace(
            static=self.static, harness_headers=self.builder.harness_headers()))
        if violations:  # before the build: a forbidden #include may not even compile
            return refused(lab, BuildOutcome(), StaticOutcome(), violations)
        side = self._side_builds(lab, src, out_dir, shown, bases)
        if side is None:  # CPU mode (its profile build after the build), or nothing more to build
            built = self._built(lab, text, src, out_dir, shown, bases)
            if built.binary is not None and lab in self.profile_labs:
                built = self._with_profile_build(built, self._profile_build(lab, src, out_dir, shown))
            return built
        with cf.ThreadPoolExecutor(1) as pool:
            # a GPU grade: its CPU-mode builds (another compiler, other files) while nvcc builds;
            # they are used only once the lab has passed every check of the GPU's build
            builds = pool.submit(side)
            built = self._built(lab, text, src, out_dir, shown, bases)
            cpu, profile = builds.result()
        if built.binary is not None and cpu is not None:
            built = self._with_cpu_build(built, cpu)
        if built.binary is not None and lab in self.profile_labs:
            built = self._with_profile_build(built, profile)
        return built

    def _built(self, lab, text, src, out_dir, shown, bases):
        """The lab compiled and checked (its BuiltLab, before any CPU-mode build of a GPU grade)."""
        comp = self._compile(lab, src, out_dir, shown, bases)
        if comp.violations:
            return refused(lab, BuildOutcome(), StaticOutcome(note="; ".join(comp.notes)), comp.violations)
        return self._check(lab, text, out_dir, comp)

    def _side_builds(self, lab, src, out_dir, shown, bases):
        """A GPU grade: a function that makes lab's CPU-mode builds, the one its ordering cases run
        (when it has them) and then its profile build (when it has an algorithm case), and
        returns (that build's BuildResult or None, the profile build's or None); None in CPU
        mode, or when the lab wants neither. One after the other: the second takes the first's
        verdict of CPU mode's checks (_cpu_precheck) instead of checking the same text at once."""
        if self.mode == "cpu":
            return None
        want_cpu = self.cpu_builder is not None and lab in self.cpu_labs
        want_profile = lab in self.profile_labs
        if not want_cpu and not want_profile:
            return None
        bg = scheduling.in_background()  # the builds of a submission graded ahead stay background work

        def side():
            with scheduling.background(bg):
                cpu = self._cpu_build(lab, src, out_dir, shown, bases) if want_cpu else None
                return cpu, (self._profile_build(lab, src, out_dir, shown) if want_profile else None)
        return side

    def _profile_build(self, lab, src, out_dir, shown):
        """lab's CPU-mode build for its algorithm case (out_dir/profile): the same scan.cu compiled
        with CPU mode's counting hooks (Builder.build banks), which the graded binary never has
        (the hooks add a constructor, and slow every access down), CPU mode's source checks run on
        it first, as on every CPU-mode build. None: a GPU grade without CPU mode's harness."""
        cb = self.builder if self.mode == "cpu" else self.cpu_builder
        if cb is None:
            return None
        return cb.build(src, os.path.join(out_dir, "profile"), shown, precheck=self._cpu_precheck(cb), lab=lab,
                        banks=True)

    def _with_profile_build(self, built, b):
        """A lab that passed its checks, with its profile build b (_profile_build) for its
        algorithm case. None (this machine cannot build CPU mode) or a build that failed or was
        refused: no algorithm case, and the lab's points go to its cases (scoring.algorithm_award)."""
        unchecked = "its algorithm was not checked (not held against you): "
        if b is None:
            return dataclasses.replace(built, cpu_note=unchecked + "this machine cannot build CPU mode")
        if b.ok and not b.violations:
            return dataclasses.replace(built, profile_binary=b.binary)
        why = _why_not(b)
        return dataclasses.replace(built, cpu_note=unchecked + f"CPU mode could not build it ({why})")

    def _cpu_build(self, lab, src, out_dir, shown, bases):
        """A GPU grade's CPU-mode build of lab (in out_dir/cpu, its bases' CPU-mode objects linked)
        for its CPU-mode cases (stage_cases.cpu_plans), CPU mode's own checks first."""
        return self.cpu_builder.build(src, os.path.join(out_dir, "cpu"), shown,
                                      precheck=self._cpu_precheck(self.cpu_builder), lab=lab,
                                      bases=base_objects(bases, "cpu"))

    def _with_cpu_build(self, built, b):
        """A GPU grade's lab that passed its checks, with its CPU-mode build b (_cpu_build), or the
        reason there is none. A refusal or a failed build there costs no points (the GPU's build
        and checks decide those): the ordering cases do not run, and the result says why."""
        if b.ok and not b.violations:
            return dataclasses.replace(built, cpu_binary=b.binary)
        why = _why_not(b)
        return dataclasses.replace(built, cpu_note=f"its CPU-mode cases (ordering, algorithm) did not run: CPU "
                                                   f"mode could not build it ({why}); not held against you")

    @staticmethod
    def _read(lab, src, shown):
        """(text, None), or (None, the BuiltLab of a file that cannot be read or is empty)."""
        why = ""
        try:
            with open(src, "rb") as f:
                text = f.read(MAX_SOURCE_READ).decode("utf-8", errors="replace")
        except OSError as e:
            text, why = None, e.strerror
        if text is None or os.path.islink(src):
            message = f"{shown}: " + ("a symbolic link" if os.path.islink(src) else why)
            return None, build_failed(lab, message, "build failed: " + message)
        if not text.strip():
            return None, build_failed(lab, f"{shown} is empty", "build failed: the file is empty")
        return text, None

    def _compile(self, lab, src, out_dir, shown, bases=None):
        """Compiles the lab. The checks on what the compiler makes of the source (every header it
        reads, inline assembly in host code, clocks read in device code) run on the private copy
        and what its compile makes; a violation there skips the build (or what is left of it:
        nothing is linked or run). On the GPU path, nvcc's (checks/nvcc.py: the headers before
        the compile, the rest on the files that one compile kept). In CPU mode, CPU mode's own on
        the C++ it compiles (checks/cpu.py: no nvcc needed, the same verdicts), and where nvcc is
        installed, nvcc's too, on an nvcc build made first for the static checks."""
        nvb = self.builder if self.mode == "gpu" else self.symbol_builder
        precheck = self._nvcc_precheck
        nb = None
        own = base_objects(bases)
        if self.mode == "gpu":
            b = self.builder.build(src, out_dir, shown, precheck=precheck, lab=lab, bases=own)
            done = [b]
        else:
            if nvb is not None:
                nb = nvb.build(src, os.path.join(out_dir, "nvcc"), shown, reuse=True, precheck=precheck,
                               lab=lab, bases=base_objects(bases, "nvcc"))
            refused = nb is not None and nb.violations
            b = None if refused else self.builder.build(src, out_dir, shown, precheck=self._cpu_precheck(self.builder),
                                                        lab=lab, bases=own)
            done = [nb, b]
        notes, violations = [], []
        for r in done:
            if r is not None and r.note and r.note not in notes:
                notes.append(r.note)
            if r is not None:
                violations += [v for v in r.violations if v not in violations]
        return _Compiled(b, nb, nvb, violations, notes)

    def _objects(self, out_dir, comp):
        """[(object, is an nvcc object)] to check, and the names the harness imports. The build's
        own object, and in CPU mode the nvcc object as well, so that CPU mode enforces the GPU
        build's rules."""
        imports = self.builder.harness_imports()
        objects = []
        if os.path.exists(os.path.join(out_dir, "scan.o")):
            objects.append((os.path.join(out_dir, "scan.o"), "gpu" if self.mode == "gpu" else "cpu"))
        if comp.nvcc_build is not None:
            if os.path.exists(os.path.join(out_dir, "nvcc", "scan.o")):
                objects.append((os.path.join(out_dir, "nvcc", "scan.o"), "gpu"))
            gpu_imports = comp.nvcc_builder.harness_imports()
            if gpu_imports is not None:
                imports = (imports or set()) | gpu_imports
        return objects, imports

    def _object_violations(self, lab, text, out_dir, comp):
        """The violations the objects show, and the notes (comp.notes extended): every check on
        nvcc's object and on CPU mode's (check_object with cpu_build: the same allowlist, CPU
        mode's runtime besides)."""
        ref = self.refs.get(lab)
        device_lab = ref[1].device if ref else True
        objects, imports = self._objects(out_dir, comp)
        code = strip_comments(text)
        violations, notes = [], list(comp.notes)
        for obj, kind in objects:
            found, note = check_object(obj, self.static, device_lab, kind == "gpu", imports, code,
                                       cpu_build=kind == "cpu")
            if note and note not in notes:
                notes.append(note)
            violations += [v for v in found if v not in violations]
        return violations, notes

    def _check(self, lab, text, out_dir, comp):
        """The checks after the compile, and the BuiltLab."""
        b, nb = comp.build, comp.nvcc_build
        build = BuildOutcome(ok=b.ok, seconds=round(b.seconds + (nb.seconds if nb else 0), 2), message=b.message)
        violations, notes = self._object_violations(lab, text, out_dir, comp)
        static = StaticOutcome(note="; ".join(notes))
        # A skeleton launches nothing yet either: "no kernel" only counts once the code runs.
        deferred = tuple(v for v in violations if v.startswith(NO_KERNEL))
        violations = [v for v in violations if not v.startswith(NO_KERNEL)]
        failed = None
        if not b.ok:
            failed = b.message
        elif nb is not None and not nb.ok:
            failed = "the nvcc build (the GPU's, which CPU mode must match) fails: " + nb.message
        if failed is not None and not violations:
            first = failed.splitlines()[0] if failed else ""
            return build_failed(lab, failed, "build failed: " + first, build, static)
        linked = b.binary if self.mode == "gpu" and b.ok else nb.binary if nb is not None and nb.ok else None
        if linked is not None:
            registry.run("binary", "binary", linked, None, violations)
        if violations:  # nothing of a submission that failed a static check is ever run
            return refused(lab, build, static, violations)
        info = self._info(lab, b.binary)
        if isinstance(info, str):
            return build_failed(lab, info, "build failed: " + info, build, static)
        return BuiltLab(lab, build, StaticOutcome(ok=True, note=static.note, deferred=deferred),
                        title=info.title, binary=b.binary, info=info)

    def _info(self, lab, binary):
        """The course's LabInfo of lab (its reference solution's: the descriptor is the course's,
        not the student's), or, for a lab the course has no reference for, what the binary says;
        a string when it cannot say."""
        ref = self.refs.get(lab)
        if ref is not None:
            return ref[1]
        info, why = ev.describe(binary)
        return info if info is not None else f"the lab binary cannot describe itself: {why}"
