"""Which labs/NN_name/scan.cu files are still the untouched skeletons (a helper module of the
skeleton checks in tests/test_skeletons.py and tests/test_handouts.py; not a test itself).

tests/skeletons.sha256 records the SHA-256 of every skeleton as it is shipped, in the format of
`sha256sum labs/*/scan.cu` (after editing a skeleton on purpose, run that command again with
`> tests/skeletons.sha256`). A file whose hash differs is a student's work in progress: the checks
that need the pristine skeleton skip it, saying so, instead of failing. They also skip every lab
when the suite runs against the student's code (LAB_TEST_SRC=labs, set by make test TEST_SRC=labs).
"""
import hashlib
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "tests", "skeletons.sha256")


def recorded(manifest=MANIFEST):
    """{path relative to the root: hex digest} from the manifest ({} when it does not exist)."""
    if not os.path.exists(manifest):
        return {}
    out = {}
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                digest, path = line.split(None, 1)
                out[path.lstrip("*")] = digest
    return out


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def student_mode():
    return os.environ.get("LAB_TEST_SRC") == "labs"


def skip_reason(lab, root=ROOT, manifest=MANIFEST):
    """Why the skeleton checks must leave lab (e.g. "03_kogge_stone") alone, or None when its
    labs/ file is the recorded skeleton (or is not recorded at all: test_skeletons fails then)."""
    if student_mode():
        return ("skeleton checks belong to the repository's suite (make test); "
                "TEST_SRC=labs tests your code instead")
    rel = "labs/%s/scan.cu" % lab
    want = recorded(manifest).get(rel)
    path = os.path.join(root, rel)
    if want is None or not os.path.exists(path):
        return None
    if digest(path) != want:
        return ("%s is no longer the untouched skeleton of tests/skeletons.sha256 (your work: "
                "make test TEST_SRC=labs tests it; a skeleton edited on purpose: see tests/README.md)"
                % rel)
    return None
