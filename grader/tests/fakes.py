"""Fake lab binaries and a fake compute-sanitizer for the grader's tests: small Python scripts
that answer --describe and print harness-style JSON (common/report.c: lab_print_describe,
lab_print_report_json) with the harness's exit codes (common/contract.json), so the grader's
pipeline runs without nvcc or a GPU. They are a second implementation of the harness's protocol,
so they serve only where a real lab binary (built in CPU mode: test_grader_pipeline.RealHarness)
cannot: times and speed points, compute-sanitizer, hangs and escapes in a 2 s limit, and a lab
that breaks the protocol on purpose. escape=PIDFILE
makes a run leave a `sleep` behind in a session of its own (its pid appended to PIDFILE).
The grader runs a copy of a fake (rundir.RunDir), as its run user when the tests run as root:
what a fake writes (log=, cwd_log=, escape=, ...) must go to a folder that user can write to
(shared_tmp).
`scan --grader` reads cases until its input ends or one is not ok, as the harness does;
fail_after=K makes the cases after the K-th of one process wrong (state kept between cases),
crash_after=K crash (SIGSEGV),
exit_at_end=CODE its exit code after the last case, cap_first=True a call larger than the first
call of its process wrong (a buffer sized once, by the first call). Status "hang" sleeps (a hang
that uses no CPU time), "spin" loops (one that does); spin_once=PATH makes the first run that finds
no file PATH create it and spin, and every later run behave as told."""
import json
import os
import shutil
import stat
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
if GRADER not in sys.path:
    sys.path.insert(0, GRADER)

from gradelib import contract  # noqa: E402 (the path above first)

# A fake is a script, not a lab binary: it has no judge (common/harness/port.h), so the grader
# runs it unjudged, as one process, in the tests that use fakes (gradelib.rundir.judge_for).
# A real binary built beside its judge is still judged.
os.environ.setdefault("LAB_GRADER_UNJUDGED", "1")

FAKE_LAB = r'''#!PYTHON
import json, os, sys, time
B = json.loads(BEHAVIOUR)
argv = sys.argv[1:]
pending = b""
CAP = 0
def next_case():  # one line from stdin (a socket), as common/harness/session.c reads its cases (read_grader_case)
    global pending
    while b"\n" not in pending:
        chunk = os.read(0, 4096)
        if not chunk:
            line, pending = pending, b""
            return line.decode() if line else None
        pending += chunk
    line, _, pending = pending.partition(b"\n")
    return line.decode()
def one(a, report_fd, k):
    def opt(name, default):
        return a[a.index(name) + 1] if name in a else default
    if B.get("cwd_log"):
        with open(B["cwd_log"], "a") as f: f.write(os.getcwd() + "\n")
    if "--describe" in a:
        print(B["describe"]); return 0
    n = int(opt("--n", B.get("bench_n", 1000))); seed = int(opt("--seed", 1)); reps = int(opt("--reps", 20))
    dist = opt("--dist", "small")
    if B.get("escape"):  # fork, setsid, fork again: a sleeper in a session of its own, left running
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open(B["escape"], "a") as f: f.write("%d\n" % os.getpid())
                os.execvp("sleep", ["sleep", "300"])
            os._exit(0)
        os.close(w)
        os.read(r, 1)  # end of file once the sleeper runs: the pipe is closed on exec
    if B.get("log"):
        with open(B["log"], "a") as f: f.write(json.dumps({"n": n, "reps": reps, "dist": dist, "tag": B.get("tag"),
                                                            "report_fd": report_fd, "case_in_process": k,
                                                            "queues": os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS"),
                                                            "cpus": sorted(os.sched_getaffinity(0))}) + "\n")
    st = B.get("by_n", {}).get(str(n), B.get("status", "ok"))
    st = B.get("by_variant", {}).get(opt("--variant", ""), st)  # "": the default variant
    time.sleep(B.get("sleep_by_variant", {}).get(opt("--variant", ""), 0))  # a slow case of that variant
    if B.get("fail_after") is not None and k >= B["fail_after"]:  # state: fails after K cases in one process
        st = "wrong"
    if B.get("crash_after") is not None and k >= B["crash_after"]:  # crashes after K cases in one process
        st = "segv"
    sizes = [int(x) for x in opt("--sizes", str(n)).split(",")]
    global CAP
    if k == 0:
        CAP = sizes[0]
    if B.get("cap_first") and max(sizes) > CAP:  # state sized by the process's first call
        st = "wrong"
    if B.get("spin_once") and not os.path.exists(B["spin_once"]):  # the first run only: a CPU hang
        open(B["spin_once"], "w").close()
        st = "spin"
    if st == "spin":  # a hang that computes: it burns CPU time until it is killed
        while True:
            pass
    if st == "hang":
        if B.get("grandchild_pidfile"):
            pid = os.fork()
            if pid == 0:
                time.sleep(300); os._exit(0)
            with open(B["grandchild_pidfile"], "w") as f: f.write(str(pid))
        time.sleep(300)
    if st == "segv":
        os.kill(os.getpid(), 11)
    if st == "garbage":
        print("no json here"); return 9
    codes = B["status_exit"]
    msgs = {"ok": "", "wrong": "out[5] expected 6, got 7 (n=%d, inclusive scan)" % n,
            "out_of_bounds": "wrote past the end of the output: out[%d] changed (n=%d)" % (n, n),
            "input_modified": "modified the input: in[0] was 1, is now 0 (n=%d)" % n,
            "not_implemented": "the lab's code returns LAB_NOT_IMPLEMENTED: write the TODO(student) parts",
            "cuda_error": "CUDA error cudaErrorIllegalAddress (an illegal memory access was encountered) in x",
            "no_device": "no CUDA device: fake"}
    timed = reps > 0 and st in ("ok", "no_ms")
    ms = B.get("ms", 1.0) if timed and st != "no_ms" else None
    tile = B.get("tile_ms") if timed else None
    rep = {"lab": B.get("id", "99_fake"), "variant": "v", "mode": B.get("mode", "gpu"), "device": "Fake GPU",
           "n": n, "seed": seed, "dist": dist, "status": "ok" if st == "no_ms" else st, "message": msgs.get(st, ""),
           "mismatch": {"index": 5, "expected": 6, "got": 7} if st == "wrong" else None,
           "reps": reps if timed else 0, "ms": ms, "tile_ms": tile, "memcpy_ms": 0.1 if timed else None,
           "gbps": (B["bytes_per_element"] * n / (ms * 1e6)) if ms else None, "pct_memcpy": None}
    line = json.dumps(rep) + "\n"
    if st == "forge_stdout":  # a result of its own on stdout, then exit(0) as if the harness had no check
        print(json.dumps(dict(rep, status="ok"))); sys.exit(0)
    if st == "tamper":        # the harness's atexit check caught an exit() from the lab's code
        print(json.dumps(dict(rep, status="ok"))); sys.exit(B["exit_tampered"])
    if st == "wrong_echo":    # a report for another case
        line = json.dumps(dict(rep, status="ok", seed=seed + 1)) + "\n"
    if st == "two_reports":
        line = json.dumps(dict(rep, status="ok")) + "\n" + json.dumps(dict(rep, status="wrong")) + "\n"
    if report_fd >= 0:
        os.write(report_fd, line.encode())
    else:
        sys.stdout.write(line)
    return (0 if st in ("wrong_echo", "two_reports", "no_ms") else codes.get(st, codes["wrong"]))

if argv != ["--grader"]:  # a run of its own: the report on stdout
    sys.exit(one(argv, -1, 0))
k, code = 0, 0
while code == 0:  # the harness's loop: cases until the input ends or one is not ok
    line = next_case()
    if line is None:
        break
    code = one(line.split(), 0, k)
    k += 1
sys.exit(code if code else B.get("exit_at_end", 0))
'''

FAKE_SANITIZER = r'''#!PYTHON
import os, subprocess, sys
a = sys.argv[1:]
log = a[a.index("--log-file") + 1]
code = int(a[a.index("--error-exitcode") + 1])
tool = a[a.index("--tool") + 1]
i = 0
while a[i].startswith("--"):
    i += 2
binary, rest = a[i], a[i + 1:]
p = subprocess.run([binary] + rest)
marker = [ln for ln in open(binary).read().splitlines() if ln.startswith("# SANITIZER_ERRORS=")]
if marker and tool in marker[0]:
    with open(log, "w") as f:
        f.write("========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n"
                "=========     at fake_kernel+0x10\n========= ERROR SUMMARY: 1 error\n")
    sys.exit(code)
sys.exit(p.returncode)
'''


NO_NVCC = "/nonexistent/nvcc"  # NVCC pointing nowhere: build.find_nvcc, and the Makefile's CPU mode, see none


def nvcc_hidden_module():
    """(setUpModule, tearDownModule) of a test module whose CPU-mode grades are not about nvcc's
    checks: nvcc hidden from the process and what it starts while the module runs. Where nvcc is
    installed, CPU mode also builds every lab with it (the static checks' nvcc verdict, tested in
    test_static_parity and test_fixtures), which cost these modules about half their time (make
    test on a 2-core machine)."""
    saved = []

    def set_up():
        saved.append(os.environ.get("NVCC"))
        os.environ["NVCC"] = NO_NVCC

    def tear_down():
        old = saved.pop()
        if old is None:
            os.environ.pop("NVCC", None)
        else:
            os.environ["NVCC"] = old
    return set_up, tear_down


def shared_tmp():
    """A temporary folder for a test's files that fakes write to: world-writable (sticky) when
    the tests run as root, since the grader then runs the fakes as its unprivileged run user."""
    d = tempfile.mkdtemp()
    if os.geteuid() == 0:
        os.chmod(d, 0o1777)
    return d


def batch_folders(test):
    """For a batch test with a fake grader: grade.py as test.grade, and in a shared_tmp folder,
    test.tmp, test.subs (made) and test.results; the folder goes when the test ends."""
    import grade
    test.grade = grade
    test.tmp = shared_tmp()
    test.subs = os.path.join(test.tmp, "subs")
    test.results = os.path.join(test.tmp, "results")
    os.makedirs(test.subs)
    test.addCleanup(shutil.rmtree, test.tmp, ignore_errors=True)


def use_prepared_grader(test, make):
    """session.prepared_grader (what batch mode grades with) is make, a fake grader's factory, until
    the test ends."""
    from gradelib import session
    saved = session.prepared_grader
    session.prepared_grader = make
    test.addCleanup(setattr, session, "prepared_grader", saved)


def _interpreter():
    """The Python the fakes run with: this one, or when the tests run as root (the grader then
    runs the fakes as its run user) the first one every user can run (/root/.pyenv's cannot)."""
    if os.geteuid() != 0:
        return sys.executable
    from gradelib import evaluate
    for exe in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(exe, os.X_OK) and evaluate._traversable(os.path.dirname(os.path.realpath(exe))) \
                and os.stat(os.path.realpath(exe)).st_mode & 0o001:
            return exe
    return sys.executable


def _write_script(path, text):
    with open(path, "w") as f:
        f.write(text.replace("#!PYTHON", "#!" + _interpreter(), 1))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def describe_text(lab_id="02_fake", shape="whole", tile=0, bench_n=65536, max_n=0,
                  scan_type="inclusive", variants=(("v", "fake"),), mode="gpu", work_tiles=()):
    """What `scan --describe` prints (common/report.c: lab_print_describe). variants: (name,
    summary) pairs, or (name, summary, compare) for a design the reference keeps for comparison."""
    return json.dumps({"contract": contract.VERSION, "id": lab_id, "title": "Fake lab",
                       "shape": shape, "type": scan_type, "tile": tile if shape == "tile" else 0,
                       "bench_n": bench_n, "max_n": max_n, "element": contract.ELEMENT,
                       "operator": contract.OPERATOR, "mode": mode,
                       "variants": [{"name": v[0], "summary": v[1], "temp": False,
                                     "compare": bool(v[2]) if len(v) > 2 else False}
                                    for v in variants], "work_tiles": list(work_tiles)})


def lab_info(*args, **kwargs):
    """The LabInfo the grader makes of describe_text(*args, **kwargs)."""
    from gradelib import evaluate
    info, why = evaluate.parse_describe(describe_text(*args, **kwargs))
    assert info is not None, why
    return info


def fake_lab(folder, name, sanitizer_errors="", **behaviour):
    """Writes an executable fake lab binary folder/name/scan; returns its path."""
    d = os.path.join(folder, name)
    os.makedirs(d, exist_ok=True)
    behaviour.setdefault("describe", describe_text())
    behaviour.update(status_exit=contract.STATUS_EXIT, exit_tampered=contract.EXIT["TAMPERED"],
                     bytes_per_element=contract.bytes_moved(1))
    path = os.path.join(d, "scan")
    text = FAKE_LAB.replace("BEHAVIOUR", repr(json.dumps(behaviour)))
    if sanitizer_errors:  # the fake sanitizer reads it from the copy of the binary it runs
        text += f"# SANITIZER_ERRORS={sanitizer_errors}\n"
    _write_script(path, text)
    return path


def fake_sanitizer(folder):
    return _write_script(os.path.join(folder, "compute-sanitizer"), FAKE_SANITIZER)
