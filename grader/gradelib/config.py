"""The course's grading configuration (grader/config.json): loading, defaults, validation.

"defaults" holds the settings of every lab; "labs" maps a lab id to overrides of any of them
(merged key by key). "static" holds the anti-cheat lists. Unknown keys are errors, so a typo in
the file is caught instead of silently ignored.

Size: a little over 400 lines: every section of the file with its defaults and its checks, in
the file's order, so that a key and the rule about it are read together.
"""
import copy
import json
import math
import os
import re

from . import contract, feedback

DISTS = contract.DISTS
SANITIZER_TOOLS = ("memcheck", "racecheck")
SIZE_NAMES = contract.SIZE_NAMES  # the edge sizes that all_dists_sizes may name


# The shape of "defaults" (and of each lab's overrides): key -> checker.
def _number(lo=0.0, allow_none=False, integer=False, lo_open=False):
    def check(v, where):
        if v is None and allow_none:
            return
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
            raise ConfigError(f"{where} must be a number (got {json.dumps(v)})")
        if integer and int(v) != v:
            raise ConfigError(f"{where} must be a whole number (got {json.dumps(v)})")
        if v < lo or (lo_open and v == lo):
            raise ConfigError(f"{where} must be {'>' if lo_open else '>='} {lo:g} (got {json.dumps(v)})")
    return check


def _list_of(choices):
    def check(v, where):
        if not isinstance(v, list) or not v:
            raise ConfigError(f"{where} must be a non-empty list")
        for x in v:
            if x not in choices:
                raise ConfigError(f"{where}: unknown entry {json.dumps(x)} (choose from {', '.join(choices)})")
    return check


def _tool_list(v, where):
    if not isinstance(v, list):
        raise ConfigError(f"{where} must be a list (may be empty)")
    for x in v:
        if x not in SANITIZER_TOOLS:
            raise ConfigError(f"{where}: unknown tool {json.dumps(x)} (choose from {', '.join(SANITIZER_TOOLS)})")


def _variant_points(v, where):
    if not isinstance(v, dict):
        raise ConfigError(f"{where} must be an object mapping variant names to points")
    for name, pts in v.items():
        _number(0.0)(pts, f"{where}.{name}")


def _variants(v, where):
    if v in ("default", "all"):
        return
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{where} must be \"default\", \"all\" or a non-empty list of variant "
                          f"names (got {json.dumps(v)})")


def _stress(v, where):
    """correctness.stress: null, or {"sms": SMs the lab's kernels keep, "calls": calls a case makes
    at one n, "tiles": [how many of the lab's largest tiles, one case each]}."""
    if v is None:
        return
    if not isinstance(v, dict) or set(v) != {"sms", "calls", "tiles"}:
        raise ConfigError(f'{where} must be null or {{"sms": N, "calls": N, "tiles": [N, ...]}} '
                          f"(got {json.dumps(v)})")
    for k in ("sms", "calls"):
        if not isinstance(v[k], int) or isinstance(v[k], bool) or not 1 <= v[k] <= 1000:
            raise ConfigError(f"{where}.{k} must be a whole number from 1 to 1000 (got {json.dumps(v[k])})")
    if not isinstance(v["tiles"], list) or not v["tiles"] or not all(
            isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= 1 << 20 for t in v["tiles"]):
        raise ConfigError(f"{where}.tiles must be a non-empty list of whole numbers from 1 to 2^20 "
                          f"(got {json.dumps(v['tiles'])})")


def _cpu_ordering(v, where):
    """correctness.cpu_ordering: null, or {"max_n": the largest n of the cases run in CPU mode}."""
    if v is None:
        return
    if not isinstance(v, dict) or set(v) != {"max_n"}:
        raise ConfigError(f'{where} must be null or {{"max_n": N}} (got {json.dumps(v)})')
    _number(1, integer=True)(v["max_n"], f"{where}.max_n")
    if v["max_n"] > 1 << 22:
        raise ConfigError(f"{where}.max_n must be at most 2^22 = 4194304: CPU mode runs every GPU "
                          f"thread as a fiber (got {json.dumps(v['max_n'])})")


def _variant_name(v, where):
    if v is not None and not (isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_]+", v)):
        raise ConfigError(f"{where} must be null or a variant's name (got {json.dumps(v)})")


def _variant_dists(v, where):
    if not isinstance(v, dict):
        raise ConfigError(f"{where} must be an object mapping variant names to lists of distributions")
    for name, dists in v.items():
        _list_of(DISTS)(dists, f"{where}.{name}")


VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")  # Gradescope's words
MODES = ("auto", "gpu", "cpu")
# "gradescope" (top level, optional): numbers: whether tests carry a number (lab.part, e.g. "3.2");
# stdout_visibility: who sees the grader's stdout (it prints the whole table, every part's points
# included); "auto" gives it the visibility of the least visible part (formats/gradescope.py).
# public_cases: {"max_n": N, "visibility": V}: one more test per lab, worth 0, that shows the
# correctness cases with n <= N (a public smoke set) with visibility V, while the correctness test
# itself keeps the lab's visibility (the full matrix, e.g. after_due_date); null: none.
GRADESCOPE_DEFAULTS = {"numbers": True, "stdout_visibility": "auto", "public_cases": None}
# "feedback" (top level, optional): how much of what a submission prints reaches the feedback, in
# bytes (gradelib/feedback.py: the quoted end of a program's output in a case message, a whole case
# message, one test's or lab's output, one results document). Gradescope renders poorly past about
# 1 MB and PrairieLearn refuses results over 1 MB: results_max_bytes stays well under both.
FEEDBACK_DEFAULTS = dict(feedback.DEFAULTS)
FEEDBACK_MIN = {"case_tail_bytes": 40, "case_message_bytes": 200, "lab_output_bytes": 1000,
                "results_max_bytes": 50000}
FEEDBACK_MAX = 1000000


def _one_of(choices):
    def check(v, where):
        if v not in choices:
            raise ConfigError(f"{where} must be one of {', '.join(choices)} (got {json.dumps(v)})")
    return check


SCHEMA = {
    "points": {"correctness": _number(), "sanitizer": _number(), "speed": _number()},
    "speed": {
        "full_at": _number(1.0),
        "zero_at": _number(1.0, lo_open=True),
        "min_speedup": _number(0.0, allow_none=True),
        # timed calls a timed run makes: at least 4, and at least 20 over a lab's rounds (fewer
        # make the median noise); a host lab takes many short rounds so that its time and the
        # reference's are measured interleaved, call group by call group
        "reps": _number(4, integer=True),
        "warmup": _number(0, integer=True),
        "rounds": _number(1, integer=True),
        "confirm_rounds": _number(1, integer=True),  # rounds more, at most, before a loss counts
        "serial_reps": _number(1, integer=True),
        "n": _number(1, integer=True, allow_none=True),  # null: the lab's benchmark size
        # the variant timed, the same on both sides: null, the lab's first; a name, that one (labs
        # 09 and 10: the design the handout asks for, which the reference keeps beside its faster
        # default and a submission runs as its own default through the course's fallback)
        "variant": _variant_name,
    },
    # case_s counts a case's CPU time (wall-clock cap: evaluate.CASE_WALL_FACTOR times it);
    # gpu_wait_s: how long the speed stage waits for other jobs to leave the GPU (0: not at all)
    "timeouts": {"build_s": _number(1), "case_s": _number(1), "sanitizer_s": _number(1),
                 "speed_s": _number(1), "gpu_wait_s": _number(0)},
    "correctness": {"dists": _list_of(DISTS), "large_n": _number(1, integer=True),
                    "all_dists_sizes": None,
                    # "default": variants[0] is graded, every other variant is checked at small
                    # sizes and reported, not graded; "all": every variant is graded on the
                    # whole matrix; [names]: those variants graded on the whole matrix (labs 09
                    # and 10, whose variants are different operators and applications), the
                    # others checked and reported (lab 09's *_two_pass)
                    "variants": _variants,
                    # {variant: points}: each graded variant's share of points.correctness (lab
                    # 10: partial credit per application); {}: the cases of all count alike
                    "variant_points": _variant_points,
                    # {variant: [dist]}: distributions a variant also gets at all_dists_sizes
                    # (lab 09: all-negative input for max, all-positive for min)
                    "variant_dists": _variant_dists,
                    # CPU mode (kernels as fibers, correctness only) grades sizes up to this n
                    # (optional; stage_cases.CPU_MAX_N, 2^20 + 1, when absent)
                    "cpu_max_n": _number(1, integer=True),
                    # the single-pass labs' stress cases on a GPU (cases.make_cases): null, or
                    # {"sms": 4, "calls": 6, "tiles": [64, 400]}
                    "stress": _stress,
                    # a GPU grade also runs the lab's multi-tile cases up to max_n in CPU mode,
                    # whose scheduler suspends a block between any two of its steps (ordering
                    # bugs a GPU shows by luck fail there every time): null, or {"max_n": 65537}
                    "cpu_ordering": _cpu_ordering,
                    # the part of points.correctness that goes to the algorithm the variant asks
                    # for (labs 03-08: CPU mode's profile of its first call names it;
                    # cases.algorithm_case), the graded variants sharing it; 0: the algorithm
                    # is reported, not graded. A lab whose variants ask for none, or whose
                    # variant_points share the points (lab 10), gives them all to its cases.
                    "algorithm_points": _number(0)},
    "sanitizer": {"tools": _tool_list},
    # who sees each part's result on Gradescope, and when (results.json "visibility")
    "visibility": {"correctness": _one_of(VISIBILITIES), "sanitizer": _one_of(VISIBILITIES),
                   "speed": _one_of(VISIBILITIES)},
}

# "static": what the static checks allow (grader/README.md, "Static checks"). The symbol
# allowlist: allowed_symbols (every lab), allowed_gpu_lab_symbols (GPU labs too),
# allowed_symbol_patterns (regular expressions matched against the whole name); of those,
# registration_only_symbols only from nvcc's registration_functions (mangled names, also the
# only functions .init_array may hold). forbidden_header_patterns: regular expressions on a
# header's path below its system include folder; lab_headers: the headers of common/ a lab may
# include (paths below common/, glob patterns such as course/*.h allowed). cpu_runtime_symbols and
# cpu_runtime_symbol_patterns: what an object CPU mode compiled may call besides (CPU mode's
# runtime, standing in for what nvcc generates; grader/gradelib/checks/cpu.py).
# shadow_names/shadow_patterns/allowed_definitions: definitions that would replace a
# runtime or harness function.
STATIC_KEYS = {
    "allowed_symbols": list, "allowed_gpu_lab_symbols": list, "allowed_symbol_patterns": list,
    "registration_only_symbols": list, "registration_functions": list,
    "cpu_runtime_symbols": list, "cpu_runtime_symbol_patterns": list,
    "forbidden_header_patterns": list, "lab_headers": list,
    "shadow_names": list, "shadow_patterns": list, "allowed_definitions": list,
    "max_source_bytes": int,
}
# The course's headers a lab may include when the config lists none (static.lab_headers): the
# one default every check reads through Config.static
STATIC_DEFAULTS = {"lab_headers": ["lab.h", "cuda_check.h", "course/*.h"]}
STATIC_PATTERNS = ("allowed_symbol_patterns", "forbidden_header_patterns", "shadow_patterns",
                   "cpu_runtime_symbol_patterns")


# Keys a full section ("defaults") may leave out: their code has a default.
OPTIONAL_KEYS = ("cpu_max_n",)


# keys a config written for an earlier course may still have: {old: (what changed, new key)}
RENAMED = {"reference_variant": ("the variant is timed on both sides now, the submission's too "
                                 "(grader/README.md, speed.variant)", "variant")}


class ConfigError(Exception):
    """A one-line description of what is wrong in the config file."""


def _check_section(obj, schema, where, partial):
    if not isinstance(obj, dict):
        raise ConfigError(f"{where} must be an object")
    for k, v in obj.items():
        if k in RENAMED and RENAMED[k][1] in schema:
            raise ConfigError(f"{where}.{k} is now {where}.{RENAMED[k][1]}: {RENAMED[k][0]}")
        if k not in schema:
            raise ConfigError(f"{where}: unknown key {json.dumps(k)} (known: {', '.join(schema)})")
        sub = schema[k]
        if isinstance(sub, dict):
            _check_section(v, sub, f"{where}.{k}", partial)
        elif sub is not None:
            sub(v, f"{where}.{k}")
        elif k == "all_dists_sizes":
            if not isinstance(v, list) or any(x not in SIZE_NAMES for x in v):
                raise ConfigError(f"{where}.{k} must be a list of {', '.join(SIZE_NAMES)}")
    if not partial:
        for k, sub in schema.items():
            if k not in obj and k not in OPTIONAL_KEYS:
                raise ConfigError(f"{where}: missing key {json.dumps(k)}")


def _check_gradescope(g):
    if not isinstance(g, dict):
        raise ConfigError("gradescope must be an object")
    for k, v in g.items():
        if k == "numbers":
            if not isinstance(v, bool):
                raise ConfigError(f"gradescope.numbers must be true or false (got {json.dumps(v)})")
        elif k == "stdout_visibility":
            _one_of(("auto",) + VISIBILITIES)(v, "gradescope.stdout_visibility")
        elif k == "public_cases":
            if v is not None and (not isinstance(v, dict) or set(v) != {"max_n", "visibility"}):
                raise ConfigError("gradescope.public_cases must be null or {\"max_n\": N, \"visibility\": V}")
            if v is not None:
                _number(1, integer=True)(v["max_n"], "gradescope.public_cases.max_n")
                _one_of(VISIBILITIES)(v["visibility"], "gradescope.public_cases.visibility")
        else:
            raise ConfigError(f"gradescope: unknown key {json.dumps(k)} (known: {', '.join(GRADESCOPE_DEFAULTS)})")


def section_items(section, obj, known):
    """(key, value) of a config section that must be an object of the keys of known, each key
    checked as it comes (ConfigError naming the section, the key and the known ones)."""
    if not isinstance(obj, dict):
        raise ConfigError(f"{section} must be an object")
    for k, v in obj.items():
        if k not in known:
            raise ConfigError(f"{section}: unknown key {json.dumps(k)} (known: {', '.join(known)})")
        yield k, v


def _check_feedback(f):
    for k, v in section_items("feedback", f, FEEDBACK_DEFAULTS):
        _number(FEEDBACK_MIN[k], integer=True)(v, f"feedback.{k}")
        if v > FEEDBACK_MAX:
            raise ConfigError(f"feedback.{k} must be at most {FEEDBACK_MAX} (got {json.dumps(v)})")
    s = dict(FEEDBACK_DEFAULTS, **f)
    if not s["case_tail_bytes"] < s["case_message_bytes"] <= s["lab_output_bytes"] < s["results_max_bytes"]:
        raise ConfigError("feedback: the limits must grow: case_tail_bytes < case_message_bytes <= "
                          "lab_output_bytes < results_max_bytes")


# "sandbox" (top level, optional): user: the unprivileged user lab runs drop to when the grader
# runs as root (grader/deploy/setup.sh and the Dockerfile create it; `nobody` when it is missing).
SANDBOX_DEFAULTS = {"user": "scan-run"}


def _check_sandbox(s):
    for _, v in section_items("sandbox", s, SANDBOX_DEFAULTS):
        if not isinstance(v, str) or not re.fullmatch(r"[a-z_][a-z0-9_-]*\$?", v) or v == "root":
            raise ConfigError(f"sandbox.user must be the name of an unprivileged user such as "
                              f"\"scan-run\" (got {json.dumps(v)})")


# The sections of the config that the classroom reads (grader/classroom/settings.py checks them
# and gives each its defaults, through register_section, once the classroom is loaded): "late",
# "gradebook" and "rate_limit" (the term's policies), "similarity" and "slurm". The engine only
# names them, so that a course's config loads where no class is graded (a fixture run, a bench);
# there each is kept as written, unchecked, and nothing of the engine reads it.
CLASSROOM_SECTIONS = ("late", "gradebook", "rate_limit", "similarity", "slurm")
TOP_KEYS = ("course", "mode", "defaults", "labs", "static", "gradescope", "feedback", "sandbox")
_SECTIONS = {}  # name -> check(the section as written, or None) -> Config.<name>


def register_section(name, check):
    """The classroom's check of one of CLASSROOM_SECTIONS: it raises ConfigError (or ValueError)
    on a bad section and returns what Config keeps as config.<name>, defaults filled in."""
    if name not in CLASSROOM_SECTIONS:
        raise ValueError(f"{name} is not one of the config's classroom sections ({', '.join(CLASSROOM_SECTIONS)})")
    _SECTIONS[name] = check


def contract_labs():
    """The course's lab ids (common/course/NN_name.h), or None when they cannot be listed."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "common", "course")
    try:
        return sorted(f[:-2] for f in os.listdir(folder) if f.endswith(".h") and re.fullmatch(r"\d\d_\w+\.h", f))
    except OSError:
        return None


def _merge(base, over):
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _check_static(static):
    """Raises ConfigError unless static (the config's "static" section) is an object of known
    keys with values of the right kind, valid regular expressions, and registration-only
    symbols that are on an allowlist."""
    if not isinstance(static, dict):
        raise ConfigError("static must be an object")
    for k, v in static.items():
        if k not in STATIC_KEYS:
            raise ConfigError(f"static: unknown key {json.dumps(k)}")
        want = STATIC_KEYS[k]
        if want is list and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise ConfigError(f"static.{k} must be a list of strings")
        if want is int and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ConfigError(f"static.{k} must be a non-negative whole number")
    for key in STATIC_PATTERNS:
        for k in static.get(key, []):
            try:
                re.compile(k)
            except re.error as e:
                raise ConfigError(f"static.{key}: {json.dumps(k)} is not a regular expression: {e}")
    allowed = set(static.get("allowed_symbols", [])) | set(static.get("allowed_gpu_lab_symbols", []))
    for name in static.get("registration_only_symbols", []):
        if name not in allowed:
            raise ConfigError(f"static.registration_only_symbols: {json.dumps(name)} is in neither "
                              f"allowed_symbols nor allowed_gpu_lab_symbols")


class Config:
    """A validated config. lab(lab_id) returns the merged settings of one lab."""

    def __init__(self, data, path="config"):
        self.path = path
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be an object")
        for k in data:
            if k not in TOP_KEYS + CLASSROOM_SECTIONS:
                raise ConfigError(f"{path}: unknown key {json.dumps(k)} "
                                  f"(known: {', '.join(TOP_KEYS + CLASSROOM_SECTIONS)})")
        _one_of(MODES)(data.get("mode", "auto"), "mode")
        _check_gradescope(data.get("gradescope", {}))
        _check_feedback(data.get("feedback", {}))
        _check_sandbox(data.get("sandbox", {}))
        if "defaults" not in data:
            raise ConfigError(f"{path}: missing key \"defaults\"")
        _check_section(data["defaults"], SCHEMA, "defaults", partial=False)
        labs = data.get("labs", {})
        if not isinstance(labs, dict):
            raise ConfigError("labs must be an object mapping lab ids to overrides")
        for lab_id, over in labs.items():
            if not re.fullmatch(r"[0-9][0-9]_[A-Za-z0-9_]+", lab_id):
                raise ConfigError(f"labs: {json.dumps(lab_id)} is not a lab id such as \"03_kogge_stone\"")
            _check_section(over, SCHEMA, f"labs.{lab_id}", partial=True)
        static = data.get("static", {})
        _check_static(static)
        self.course = data.get("course", "")
        # auto: the GPU when there is one, else CPU mode (a student's own machine); gpu: no GPU is
        # an infrastructure error, never CPU mode (a deployment); cpu: CPU mode, correctness only
        self.mode = data.get("mode", "auto")
        self.gradescope = dict(GRADESCOPE_DEFAULTS, **data.get("gradescope", {}))
        # the limits on program output in the feedback (feedback.configure takes them)
        self.feedback = dict(FEEDBACK_DEFAULTS, **data.get("feedback", {}))
        self.sandbox = dict(SANDBOX_DEFAULTS, **data.get("sandbox", {}))
        for name in CLASSROOM_SECTIONS:  # the classroom's (settings.py), checked where it is loaded
            check = _SECTIONS.get(name)
            try:
                setattr(self, name, check(data.get(name)) if check else data.get(name))
            except ValueError as e:
                raise ConfigError(str(e))
        self.defaults = data["defaults"]
        self.labs = labs
        self.static = dict(copy.deepcopy(STATIC_DEFAULTS), **static)
        for lab_id in list(labs) + [None]:
            s = self.lab(lab_id)
            where = 'labs.' + lab_id if lab_id else 'defaults'
            if not s["sanitizer"]["tools"] and s["points"]["sanitizer"]:
                raise ConfigError(f"{where}: sanitizer.tools is empty but points.sanitizer is "
                                  f"{s['points']['sanitizer']:g}: no student could earn them; set "
                                  "points.sanitizer to 0 (and give the points to another part) or "
                                  "list a tool")
            vp = s["correctness"]["variant_points"]
            if vp and abs(sum(vp.values()) - s["points"]["correctness"]) > 1e-9:
                raise ConfigError(f"{where}.correctness.variant_points add up to {sum(vp.values()):g}, "
                                  f"not points.correctness ({s['points']['correctness']:g})")
            ap = s["correctness"]["algorithm_points"]
            if ap > s["points"]["correctness"]:
                raise ConfigError(f"{where}.correctness.algorithm_points ({ap:g}) must be at most "
                                  f"points.correctness ({s['points']['correctness']:g})")
            if vp and s["correctness"]["variants"] == "default":
                raise ConfigError(f"{where}.correctness.variant_points needs variants \"all\" or a list")
            if s["speed"]["reps"] * s["speed"]["rounds"] < 20:
                raise ConfigError(f"{where}.speed: reps x rounds is {s['speed']['reps'] * s['speed']['rounds']}, "
                                  f"under 20: fewer timed calls make the median noise")
            if s["speed"]["full_at"] >= s["speed"]["zero_at"]:
                raise ConfigError(f"{'labs.' + lab_id if lab_id else 'defaults'}.speed: full_at "
                                  f"({s['speed']['full_at']}) must be below zero_at ({s['speed']['zero_at']})")

    def lab(self, lab_id):
        """The settings of lab_id: defaults merged with its overrides, and built_on: the labs whose
        objects its binary links (lab 10 runs on the student's lab 08, or 07), in order; [] for
        every other lab. built_on is a fact of the course, not a setting: common/contract.json."""
        return dict(_merge(self.defaults, self.labs.get(lab_id, {}) if lab_id else {}),
                    built_on=list(contract.BUILT_ON.get(lab_id, [])))


def load(path):
    """Reads and validates path; raises ConfigError with a one-line reason."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}")
    try:
        return Config(data, path)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}")
