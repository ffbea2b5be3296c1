"""Spreading a class over GPUs and machines: shards, one worker per GPU, and Slurm job arrays.

A batch is a list of submissions (submissions.list_submissions, sorted by name). Three ways to split it:

- `--shard I/N`: this process grades submissions k with k % N == I (any scheduler can start N of
  them); the results folder is shared, and `--merge` writes the class files afterwards.
- `--gpus 0,1,...` (or `all`): this process starts one worker per listed GPU, each a grade.py of
  its own with CUDA_VISIBLE_DEVICES set to that GPU, so every lab process it starts sees that GPU
  alone. Workers take submissions from one queue: each claims the next unclaimed one with a file
  created O_EXCL in a claim folder of this run (claim), so a worker that draws quick submissions
  takes more, and none is graded twice. The parent shows one progress line and writes the class
  files when all are done. A GPU id may repeat ("0,0": two workers on one GPU).
- `--slurm`: writes a job array (one task per shard, one GPU each) and a merge job that depends
  on it, next to the results, and submits both with sbatch.
"""
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

from gradelib import cores, proc, resources
from gradelib.build import work_tag

from .settings import SLURM_DEFAULTS


class ClusterError(Exception):
    """A request that cannot be carried out (one line; grade.py exits with its usage code)."""


class ClusterInfraError(ClusterError):
    """A well-formed request the machine or the cluster could not carry out: no nvidia-smi or no
    GPU to count, no sbatch, sbatch refusing a job (one line; grade.py exits with its
    infrastructure code, 3, as for any other infrastructure error)."""


def parse_shard(text):
    """(i, n) from 'I/N' with 0 <= I < N; raises ClusterError."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ClusterError(f"--shard {text}: expected I/N, e.g. 0/4 (shard 0 of 4)")
    if n < 1 or not 0 <= i < n:
        raise ClusterError(f"--shard {text}: need 0 <= I < N")
    return i, n


def shard_of(subs, i, n):
    """The submissions of shard i of n: every n-th, starting at i (sorted input, stable)."""
    return [s for k, s in enumerate(subs) if k % n == i]


def visible_gpus():
    """The GPUs of CUDA_VISIBLE_DEVICES when it is set (a scheduler's allocation), else the
    indices nvidia-smi lists; raises ClusterError when it cannot tell."""
    given = [x.strip() for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip()]
    if given:
        return given
    smi = shutil.which("nvidia-smi")
    if not smi:
        raise ClusterInfraError("--gpus all: nvidia-smi not found, so the GPUs cannot be counted; list them "
                                "instead (--gpus 0,1)")
    r = proc.run([smi, "-L"], 30)
    ids = [ln.split(":")[0].split()[-1] for ln in r.stdout.splitlines() if ln.startswith("GPU ")]
    if r.returncode != 0 or not ids:
        raise ClusterInfraError(f"--gpus all: nvidia-smi -L lists no GPU ({(r.stderr or r.stdout).strip()[:120]})")
    return ids


def parse_gpus(text):
    """['0', '2', ...] from 'all' or a comma-separated list of GPU ids (repeats allowed)."""
    if text == "all":
        return visible_gpus()
    ids = [x.strip() for x in text.split(",")]
    if not ids or any(not x or not (x.isdigit() or x.startswith(("GPU-", "MIG-"))) for x in ids):
        raise ClusterError(f"--gpus {text}: expected all, or GPU ids such as 0,1 (or UUIDs)")
    return ids


def claim(claim_dir, student):
    """True when this process claimed the submission (no other worker of the run has)."""
    name = work_tag(student)
    try:
        fd = os.open(os.path.join(claim_dir, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    os.write(fd, f"{os.getpid()}\n".encode())
    os.close(fd)
    return True


# Options a worker or shard task gets as the parent had them (grade.py's names).
FORWARD_FLAGS = ("cpu", "gpu", "no_sanitizer", "force", "only_submitted", "isolated")
FORWARD_VALUES = ("format", "config", "case_timeout", "gpu_jobs", "roster",
                  "extensions", "gradebook_format")  # the term's (policy.py, lms.py): stamped by the workers


def forwarded(args):
    """The grade.py options that a worker must share with its parent: the same labs, mode,
    config, seed and format, so that every student is graded alike."""
    out = []
    for name in FORWARD_FLAGS:
        if getattr(args, name, False):
            out.append("--" + name.replace("_", "-"))
    for name in FORWARD_VALUES:
        v = getattr(args, name, None)
        if v is not None:
            out += ["--" + name.replace("_", "-"),
                    os.path.abspath(v) if name in ("config", "roster", "extensions") else str(v)]
    if args.labs:
        out += ["--labs", *args.labs]
    return out


class Workers:
    """One grade.py worker per GPU (see the module comment). run() returns the workers' worst
    exit code; stop() (Ctrl-C) ends them all within a second or two."""

    def __init__(self, grade_py, args, seed, gpus, results_dir, work, jobs, log):
        self.grade_py, self.args, self.seed, self.gpus = grade_py, args, seed, gpus
        self.results_dir, self.work, self.log = results_dir, work, log
        self.jobs = jobs
        self.claims = os.path.join(results_dir, ".claims", f"run-{int(time.time())}-{os.getpid()}")
        self.procs = []

    def argv(self, k):
        jobs = max(1, self.jobs // len(self.gpus))
        return [sys.executable, self.grade_py, "--submissions", self.args.submissions, "--results",
                self.results_dir, "--claim", self.claims, "--seed", str(self.seed), "--jobs", str(jobs),
                "--work", os.path.join(self.work, f"worker-{k}"), *forwarded(self.args)]

    def start(self):
        os.makedirs(self.claims, exist_ok=True)
        logs = os.path.join(self.results_dir, ".logs")
        os.makedirs(logs, exist_ok=True)
        try:  # a core each for timing the host lab, which every worker's other work stays off (cores.py)
            kept = cores.for_workers(os.sched_getaffinity(0), len(self.gpus))
        except (AttributeError, OSError):
            kept = [{} for _ in self.gpus]
        for k, gpu in enumerate(self.gpus):
            # one build of the harness and references for all the workers (build.py: the cache)
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu,
                       LAB_GRADER_CACHE=os.environ.get("LAB_GRADER_CACHE") or os.path.join(self.work, "cache"),
                       **kept[k])
            with open(os.path.join(logs, f"worker-{k}.log"), "w") as f:
                p = subprocess.Popen(self.argv(k), env=env, stdout=subprocess.DEVNULL, stderr=f,
                                     start_new_session=True)
            proc.track(p.pid)
            self.procs.append(p)
            self.log(f"worker {k}: GPU {gpu} (CUDA_VISIBLE_DEVICES={gpu}), log {f.name}")

    def claimed(self):
        try:
            return len(os.listdir(self.claims))
        except OSError:
            return 0

    def wait(self, progress):
        """Waits for every worker, calling progress(claimed) now and then; the worst exit code."""
        left = list(self.procs)
        while left:
            for p in [p for p in left if p.poll() is not None]:
                proc.untrack(p.pid)  # at once: a reaped worker's pid may be reused (guardian.py)
                left.remove(p)
            if left:
                progress(self.claimed())
                time.sleep(1.0)
        codes = [p.returncode for p in self.procs]
        return max(codes, key=lambda c: (c != 0, c if c > 0 else 255))

    def stop(self):
        """SIGINT to every worker (each writes nothing more and kills its own lab processes),
        then SIGKILL to what is left after 1.5 s."""
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline and any(p.poll() is None for p in self.procs):
            time.sleep(0.05)
        for p in self.procs:
            proc.kill_group(p.pid)


def _directives(slurm, keys):
    """#SBATCH lines of the config's "slurm" settings among keys (None: not written)."""
    return "".join(f"#SBATCH --{k}={slurm[k]}\n" for k in keys if slurm.get(k) is not None)


def _prologue(slurm):
    """The config's prologue lines, run before grade.py; a line that fails ends the job (exit 3,
    the grader's infrastructure code) saying which."""
    lines = slurm.get("prologue") or []
    lines = [lines] if isinstance(lines, str) else lines
    if not lines:
        return ""
    out = "# the site's environment (the config's slurm.prologue; before set -u, which module scripts trip)\n"
    for ln in lines:
        out += f"{ln} || {{ echo {shlex.quote('prologue failed: ' + ln)} >&2; exit 3; }}\n"
    return out


def _cache_lines(slurm, results_dir):
    """The array script's lines that give every task one shared build of the harness and the
    references (build.py's shared cache, LAB_GRADER_CACHE): the config's slurm.cache, else the
    LAB_GRADER_CACHE of the --slurm run, else RESULTS/cache, which the merge job already needs
    every node to reach. One task builds, the others wait for it on the cache's lock; nodes of
    another GPU kind (another ARCH) get their own build there. false: each task builds its own."""
    cache = slurm.get("cache")
    if cache is False:
        return ""
    path = os.path.abspath(cache or os.environ.get("LAB_GRADER_CACHE") or os.path.join(results_dir, "cache"))
    return ("# one build of the harness and references for every task (each GPU kind its own):\n"
            f"export LAB_GRADER_CACHE={shlex.quote(path)}\n"
            "mkdir -p -m 700 \"$LAB_GRADER_CACHE\" || exit 3\n")


def sbatch_scripts(grade_py, args, seed, shards, results_dir, work, sbatch_args):
    """(array script, merge script) texts for --slurm: the array has one task per shard, each
    grading `--shard $SLURM_ARRAY_TASK_ID/N` on one GPU (none in CPU mode), the merge job writes
    the class files (and --report). Both are plain bash an instructor can read and submit again.
    The config's "slurm" section (args.slurm_settings) gives the array its time, mem, account,
    partition and throttle (%N), the merge job its account, and both the prologue and the
    Python that runs grade.py; --sbatch-args go to the array only, --merge-sbatch-args to the
    merge job only. The tasks share one build of the harness and references (_cache_lines); a
    task grades in a fresh folder of the node's ($TMPDIR) and removes it when grade.py
    succeeds; a failed task keeps it and names it in its log."""
    slurm = dict(SLURM_DEFAULTS, **(getattr(args, "slurm_settings", None) or {}))
    # the Python that ran --slurm, unless the config names the one the nodes have after the
    # prologue ("python3" after "module load python/3.11")
    python = slurm.get("python") or sys.executable
    common = [python, grade_py, "--submissions", os.path.abspath(args.submissions), "--results", results_dir,
              "--seed", str(seed)] + forwarded(args)
    # a task on a node without a GPU is an infrastructure error, never a quiet CPU-mode grade
    task = common + (["--gpu"] if not args.cpu and not args.gpu else [])
    report = []
    if getattr(args, "report", None):
        report = ["--report", os.path.abspath(args.report)] + (["--similarity"] if args.similarity else [])
    q = " ".join(shlex.quote(x) for x in common + report)
    extra = "".join(f"#SBATCH {x}\n" for x in shlex.split(sbatch_args or ""))
    # a --gres of --sbatch-args (a GPU type: --gres=gpu:h100:1) replaces the default one
    gres = "" if args.cpu or "#SBATCH --gres" in extra else "#SBATCH --gres=gpu:1\n"
    merge_extra = "".join(f"#SBATCH {x}\n" for x in shlex.split(getattr(args, "merge_sbatch_args", None) or ""))
    throttle = f"%{slurm['throttle']}" if slurm.get("throttle") else ""
    logs = os.path.join(results_dir, "logs")
    array = (f"#!/bin/bash\n"
             f"# Grades one shard of {args.submissions} per array task (grade.py --slurm wrote this;\n"
             f"# sbatch it again to regrade: finished submissions are skipped unless --force).\n"
             f"#SBATCH --job-name=scan-grade\n#SBATCH --array=0-{shards - 1}{throttle}\n{gres}"
             f"#SBATCH --cpus-per-task={min(8, resources.usable_cpus())}\n"
             f"{_directives(slurm, ('time', 'mem', 'account', 'partition'))}"
             f"#SBATCH --output={logs}/grade-%A_%a.out\n{extra}"
             f"{_prologue(slurm)}set -u\n{_cache_lines(slurm, results_dir)}"
             f"# builds go to a fresh folder of the node's own: removed after success, kept after a failure\n"
             f"work=$(mktemp -d \"${{TMPDIR:-/tmp}}/scan-grade-${{SLURM_ARRAY_JOB_ID:-${{SLURM_JOB_ID:-0}}}}_"
             f"${{SLURM_ARRAY_TASK_ID:-0}}.XXXXXX\") || exit 3\n"
             f"{' '.join(shlex.quote(x) for x in task)} --shard \"$SLURM_ARRAY_TASK_ID/{shards}\" --work \"$work\"\n"
             f"rc=$?\n"
             f"if [ \"$rc\" -eq 0 ]; then rm -rf \"$work\"; "
             f"else echo \"grade.sbatch: grade.py exited with $rc; "
             f"its work folder is kept: $(hostname):$work\" >&2; fi\n"
             f"exit \"$rc\"\n")
    merge = (f"#!/bin/bash\n"
             f"# Writes class.csv (and the gradebook) once every shard has finished.\n"
             f"#SBATCH --job-name=scan-grade-merge\n{_directives(slurm, ('account',))}"
             f"#SBATCH --output={logs}/merge-%j.out\n{merge_extra}"
             f"{_prologue(slurm)}set -u\nexec {q} --merge\n")
    return array, merge


def submit_slurm(array_path, merge_path, log):
    """Submits the array, then the merge job after it (afterany: a failed shard still gets its
    students listed, as 'no result'). Returns (array id, merge id); raises ClusterInfraError."""
    sbatch = shutil.which("sbatch")
    if not sbatch:
        raise ClusterInfraError("--slurm: sbatch not found (is this a Slurm login node?); the job scripts "
                                f"are in {os.path.dirname(array_path)}")
    r = subprocess.run([sbatch, "--parsable", array_path], capture_output=True, text=True)
    if r.returncode != 0:
        raise ClusterInfraError(f"--slurm: sbatch refused the array: {r.stderr.strip()[:300]}")
    array_id = r.stdout.strip().split(";")[0]
    r = subprocess.run([sbatch, "--parsable", f"--dependency=afterany:{array_id}", merge_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise ClusterInfraError(f"--slurm: sbatch refused the merge job: {r.stderr.strip()[:300]}")
    merge_id = r.stdout.strip().split(";")[0]
    log(f"submitted job array {array_id} and merge job {merge_id}; watch with squeue -j {array_id},{merge_id}, "
        f"cancel with scancel {array_id} {merge_id}")
    return array_id, merge_id
