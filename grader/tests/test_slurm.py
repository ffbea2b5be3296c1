"""grade.py --slurm on a real Slurm cluster: a small class (a copy of the solutions, a copy of the
skeletons, one that does not compile) in CPU mode, labs 01 and 02, two array tasks and the merge
job; the merged class.csv is checked, and the config's "slurm" section for real (a prologue line
in each task's log, a throttle of 1, --merge-sbatch-args), the class report the merge job writes,
and that no task's work folder is left behind. About a minute or two.

As root, the test brings up a one-node cluster of its own on localhost: it installs Debian's
slurmctld, slurmd and munge with apt-get when they are missing, writes a private slurm.conf (CPU
only, no gres; the node's CPUs and memory from `slurmd -C`; its own ports, state folders and
munge socket and key, so that a cluster already on the machine is left alone), starts munged,
slurmctld and slurmd directly (no systemd), and stops them at the end. Not root, it uses the
cluster that answers `sinfo` (the class then goes under build/, which the nodes must see), and
skips, saying why, when none does. With LAB_TEST_SLURM=required (.ci/run) it fails instead of
skipping."""
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GRADE = os.path.join(ROOT, "grader", "grade.py")
REQUIRED = os.environ.get("LAB_TEST_SLURM") == "required"
PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
JOB_LIMIT_S = 900


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return f"({path}: none)\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_answers(env=None):
    if not shutil.which("sinfo"):
        return False
    try:
        return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=20, env=env).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def install_packages():
    """apt-get install what is missing; a one-line reason when that is impossible, else None."""
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "sbatch", "munged")):
        return None
    if not shutil.which("apt-get"):
        return "slurmctld, slurmd or munge missing and no apt-get (not Debian/Ubuntu)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + PACKAGES
    print(f"test_slurm: installing {' '.join(PACKAGES)}", file=sys.stderr, flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return f"apt-get install {' '.join(PACKAGES)} failed: {(r.stderr.strip() or r.stdout.strip())[-200:]}"
    return None


class LocalCluster:
    """A one-node Slurm cluster in folder d: munged, slurmctld and slurmd as plain processes."""

    def __init__(self, d):
        self.d = d
        self.procs = []
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(d, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def node_line(self):
        """NodeName=... with the hardware slurmd -C finds (CPUs, sockets, cores, memory)."""
        r = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=60)
        fields = dict(kv.split("=", 1) for kv in r.stdout.split() if "=" in kv)
        keep = ["CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"]
        hw = " ".join(f"{k}={fields[k]}" for k in keep if k in fields)
        self.cpus = fields.get("CPUs", "?")
        return f"NodeName={self.host} NodeAddr=127.0.0.1 {hw} State=UNKNOWN"

    def write_conf(self):
        d = self.d
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub))
        ports = [free_port()]
        while len(ports) < 2:
            ports += [p for p in [free_port()] if p != ports[0]]
        lines = [
            "ClusterName=gradetest",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            f"SlurmdPort={ports[1]}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={d}/munge.sock",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "ReturnToService=2",
            self.node_line(),
            "PartitionName=grade Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def spawn(self, name, argv):
        out = open(os.path.join(self.d, name + ".out"), "w")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env, start_new_session=True)
        out.close()
        self.procs.append((name, p))
        return p

    def start(self):
        d = self.d
        os.chmod(d, 0o711)
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o600)
        self.spawn("munged", ["munged", "--foreground", "--force", f"--socket={d}/munge.sock",
                              f"--key-file={key}", f"--pid-file={d}/munged.pid", f"--seed-file={d}/munged.seed",
                              f"--log-file={d}/munged.log"])
        self.wait_for(lambda: os.path.exists(os.path.join(d, "munge.sock")), "munged's socket", "munged")
        self.write_conf()
        self.spawn("slurmctld", ["slurmctld", "-D", "-c", "-f", self.conf])
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf])
        self.wait_for(self.node_idle, "the node to be idle in sinfo", "slurmctld", "slurmd")

    def node_idle(self):
        r = subprocess.run(["sinfo", "-h", "-o", "%T", "-n", self.host], capture_output=True, text=True,
                           env=self.env, timeout=20)
        return r.returncode == 0 and r.stdout.strip() == "idle"

    def wait_for(self, ready, what, *names, limit=60):
        deadline = time.monotonic() + limit
        while not ready():
            dead = [n for n, p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{dead[0]} exited with code {dict(self.procs)[dead[0]].returncode}" if dead else "timed out"
                logs = "".join(f"--- {n}.out:\n{tail(os.path.join(self.d, n + '.out'))}" for n in names)
                raise RuntimeError(f"waiting for {what}: {why}\n{logs}")
            time.sleep(0.3)

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


class SlurmClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = None
        cls.tmp = None
        why = cls.choose()
        if why:
            if REQUIRED:
                raise RuntimeError(f"LAB_TEST_SLURM=required, but: {why}")
            raise unittest.SkipTest(why)

    @classmethod
    def choose(cls):
        """Sets up the cluster (cls.env) and the class folder; the reason to skip, or None."""
        if os.geteuid() != 0:
            if not cluster_answers():
                return "Slurm test: not root (cannot start a cluster) and no Slurm cluster answers sinfo"
            cls.env = dict(os.environ)
            build = os.path.join(ROOT, "build")
            os.makedirs(build, exist_ok=True)
            cls.tmp = tempfile.mkdtemp(prefix="test-slurm-", dir=build)  # the nodes must see it
            return None
        why = install_packages()
        if why:
            return f"Slurm test: {why}"
        cls.tmp = tempfile.mkdtemp(prefix="test-slurm-")
        cls.cluster = LocalCluster(os.path.join(cls.tmp, "cluster"))
        os.makedirs(cls.cluster.d)
        try:
            cls.cluster.start()
        except Exception:
            cls.tearDownClass()
            raise
        cls.env = cls.cluster.env
        return None

    @classmethod
    def tearDownClass(cls):
        if cls.cluster is not None:
            cls.cluster.stop()
        if cls.tmp:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def make_class(self):
        subs = os.path.join(self.tmp, "class")
        for student, tree in (("full", "solutions"), ("skeleton", "labs"), ("broken", "solutions")):
            for lab in ("01_serial", "02_naive"):
                os.makedirs(os.path.join(subs, student, lab))
                shutil.copy(os.path.join(ROOT, tree, lab, "scan.cu"), os.path.join(subs, student, lab))
        with open(os.path.join(subs, "broken", "02_naive", "scan.cu"), "a") as f:
            f.write("\nthis line does not compile\n")
        return subs

    def wait(self, jobs):
        deadline = time.monotonic() + JOB_LIMIT_S
        while True:
            r = subprocess.run(["squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T",
                                "-t", "PENDING,CONFIGURING,RUNNING,COMPLETING,SUSPENDED,REQUEUED"],
                               capture_output=True, text=True, env=self.env, timeout=30)
            if (r.returncode == 0 and not r.stdout.strip()) or "Invalid job id" in r.stderr:
                return
            if time.monotonic() > deadline:
                subprocess.run(["scancel"] + jobs, env=self.env)
                self.fail(f"the jobs did not end within {JOB_LIMIT_S} s: {r.stdout.strip()}")
            time.sleep(2)

    def test_a_class_through_slurm(self):
        subs = self.make_class()
        results = os.path.join(self.tmp, "results")
        t0 = time.monotonic()
        with open(os.path.join(ROOT, "grader", "config.json")) as f:  # the config's slurm section, for real
            cfg = dict(json.load(f), slurm={"time": "30", "throttle": 1,
                                            "prologue": ["echo prologue ran on $(hostname)"]})
        config = os.path.join(self.tmp, "config.json")
        with open(config, "w") as f:
            json.dump(cfg, f)
        page = os.path.join(results, "class.html")
        # without a LAB_GRADER_CACHE of its own, the tasks share RESULTS/cache (cluster._cache_lines)
        env = {k: v for k, v in self.env.items() if k != "LAB_GRADER_CACHE"}
        r = subprocess.run([sys.executable, GRADE, "--submissions", subs, "--results", results, "--labs", "01", "02",
                            "--cpu", "--jobs", "1", "--slurm", "--shards", "2", "--sbatch-args", "--time=30",
                            "--merge-sbatch-args", "--time=10", "--config", config, "--report", page],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        grade_job, merge_job = r.stdout.split()
        self.wait([grade_job, merge_job])
        seconds = time.monotonic() - t0
        logs = os.path.join(results, "logs")
        merge_log = os.path.join(logs, f"merge-{merge_job}.out")
        shard_logs = [os.path.join(logs, f"grade-{grade_job}_{i}.out") for i in (0, 1)]
        context = "".join(f"--- {p}:\n{tail(p)}" for p in shard_logs + [merge_log])
        self.assertTrue(os.path.exists(os.path.join(results, "class.csv")), context)
        with open(os.path.join(results, "class.csv")) as f:
            rows = {(x["student"], x["lab"]): x for x in csv.DictReader(f)}
        total = {s: (float(rows[s, "TOTAL"]["points"]), float(rows[s, "TOTAL"]["max_points"]))
                 for s in ("full", "skeleton", "broken")}
        self.assertEqual(total["full"], (120.0, 120.0), context)
        self.assertEqual(total["skeleton"], (0.0, 120.0), context)
        self.assertEqual(rows["skeleton", "02_naive"]["status"], "not implemented", context)
        self.assertEqual(rows["broken", "02_naive"]["status"], "build failed", context)
        self.assertEqual(total["broken"], (60.0, 120.0), context)
        self.assertIn("merged 3 of 3 submissions", tail(merge_log), context)
        for i, p in enumerate(shard_logs):
            self.assertIn(f"shard {i}/2:", tail(p), context)
            self.assertIn("prologue ran on ", tail(p, 10000), context)
        self.assertIn("class report: ", tail(merge_log), context)
        self.assertTrue(os.path.isfile(page), context)
        tmpdir = self.env.get("TMPDIR", "/tmp")
        left = [x for x in os.listdir(tmpdir) if x.startswith(f"scan-grade-{grade_job}_")]
        self.assertEqual(left, [], "work folders left after the tasks succeeded")
        # one build of the harness and references for both tasks, in the shared cache
        cache = os.path.join(results, "cache")
        builds = sorted(x for x in os.listdir(cache) if x.startswith("common-cpu-")) if os.path.isdir(cache) else []
        self.assertEqual(len(builds), 1, (builds, context))
        self.assertEqual(sorted(os.listdir(os.path.join(cache, builds[0], "ref"))), ["01_serial", "02_naive"], context)
        where = f"a one-node cluster of its own on {self.cluster.host} ({self.cluster.cpus} CPUs)" \
            if self.cluster else "the cluster sinfo answers"
        print(f"\ntest_slurm: {where}: array job {grade_job} (2 tasks) and merge job {merge_job} in "
              f"{seconds:.0f} s; class.csv: full {total['full'][0]:g}/{total['full'][1]:g}, skeleton "
              f"{total['skeleton'][0]:g}/{total['skeleton'][1]:g}, broken {total['broken'][0]:g}/"
              f"{total['broken'][1]:g} (02 build failed)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    unittest.main()
