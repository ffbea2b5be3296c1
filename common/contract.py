#!/usr/bin/env python3
"""contract.py — writes common/contract.h and common/contract.mk from common/contract.json, the
facts C, make and Python share.

  python3 common/contract.py           rewrite contract.h and contract.mk (make contract does this)
  python3 common/contract.py --check   exit 1, with a one-line summary, when either is stale

The C side (lab.h's neighbours: inputs, options, report, the harness, the tests) includes the
generated header; the Makefile includes contract.mk (the labs built on other labs); the Python
side (grader/gradelib/contract.py) reads the JSON itself. Exit codes: 0 done (or up to date),
1 stale (--check), 2 the JSON is malformed or a bad command line.
Standard library only.
"""
import argparse
import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
JSON_PATH = os.path.join(HERE, "contract.json")
HEADER_PATH = os.path.join(HERE, "contract.h")

# contract.h stays within the project's 100 columns; the help text's exit-code summary (printed
# by lab_print_usage) is wrapped to HELP_WIDTH.
WIDTH = 100
HELP_WIDTH = 80


class ContractError(Exception):
    """contract.json does not have the shape this generator expects."""


def load(path=JSON_PATH):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _need(data, key, kind, where="contract.json"):
    if key not in data or not isinstance(data[key], kind):
        raise ContractError(f"{where}: '{key}' is missing or not a {kind.__name__}")
    return data[key]


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _c_comment(s):
    return s.replace("*/", "* /")


def _initializer(items):
    return "{" + ", ".join(items) + "}"


def _define_list(name, items):
    """#define name {a, b, ...}, continued over lines (backslashes) to stay within WIDTH columns."""
    items = list(items)
    one = f"#define {name} {_initializer(items)}"
    if len(one) <= WIDTH:
        return [one]
    lines, cur = [f"#define {name} {{ \\"], "   "
    for i, it in enumerate(items):
        piece = f" {it}" + ("," if i + 1 < len(items) else "")
        if len(cur) + len(piece) > WIDTH - 2:
            lines.append(cur + " \\")
            cur = "   "
        cur += piece
    lines.append(cur + " \\")
    lines.append("    }")
    return lines


def _member(code, comment, indent=4):
    """An enumerator with its comment: trailing when it fits WIDTH, else on the lines above."""
    line = f"{' ' * indent}{code} /* {_c_comment(comment)} */"
    if len(line) <= WIDTH:
        return [line]
    body = textwrap.wrap(_c_comment(comment), WIDTH - indent - 6)
    out = [f"{' ' * indent}/* {body[0]}"] + [f"{' ' * indent} * {b}" for b in body[1:]]
    out[-1] += " */"
    return out + [f"{' ' * indent}{code}"]


def _exit_codes(data):
    codes = _need(data, "exit_codes", list)
    for e in codes:
        if not isinstance(e.get("name"), str) or not isinstance(e.get("value"), int):
            raise ContractError(f"contract.json: exit code {e!r} needs a name and an integer value")
    lines = ["/* ---- exit codes of a lab binary (README.md documents them; the grader relies on "
             "them) */", "enum {"]
    for e in codes:
        lines += _member(f"LAB_EXIT_{e['name']} = {e['value']},", e["meaning"])
    lines.append("};")
    # each "N first-word" stays on one line (a non-breaking placeholder while wrapping)
    items = [f"{e['value']}\0{e['brief']}" for e in codes]
    wrapped = textwrap.wrap("exit codes: " + ", ".join(items), HELP_WIDTH, subsequent_indent="  ",
                            break_long_words=False, break_on_hyphens=False)
    wrapped = [w.replace("\0", " ") for w in wrapped]
    lines += ["", "/* The exit codes in one paragraph, for --help. */",
              "#define LAB_EXIT_CODES_HELP \\"]
    for i, w in enumerate(wrapped):
        lines.append(f"    {_c_string(w + chr(10))}" + (" \\" if i + 1 < len(wrapped) else ""))
    return lines, {e["name"] for e in codes}


def _statuses(data, exit_names):
    sts = _need(data, "statuses", list)
    for s in sts:
        if s.get("exit") not in exit_names:
            raise ContractError(f"contract.json: status {s.get('name')!r} names exit code "
                                f"{s.get('exit')!r}, which exit_codes does not define")
    lines = ["/* ---- outcomes of a run, as printed (status) and as exit codes ---- */",
             "typedef enum {"]
    for s in sts:
        lines += _member(f"ST_{s['c']},", f"\"{s['name']}\": {s['meaning']}")
    lines += ["    ST_COUNT", "} lab_status;", "",
              "/* Indexed by lab_status: the name printed in reports, and the exit code. */"]
    lines += _define_list("LAB_STATUS_NAMES", (_c_string(s["name"]) for s in sts))
    lines += _define_list("LAB_STATUS_EXIT_CODES", (f"LAB_EXIT_{s['exit']}" for s in sts))
    return lines


def _reasons(data):
    rs = _need(data, "not_implemented_reasons", list)
    if not rs or rs[0].get("name") != "todo":
        raise ContractError("contract.json: not_implemented_reasons must start with \"todo\" (the usual one, 0)")
    lines = ["/* ---- why a variant returned LAB_NOT_IMPLEMENTED (lab.h: lab_not_implemented_why) ---- */",
             "typedef enum {"]
    for r in rs:
        lines += _member(f"WHY_{r['c']},", f"\"{r['name']}\": {r['meaning']}")
    lines += ["    WHY_COUNT", "} lab_why;", "", "/* Indexed by lab_why: the name a report gives (\"reason\"). */"]
    lines += _define_list("LAB_WHY_NAMES", (_c_string(r["name"]) for r in rs))
    return lines


def _distributions(data):
    ds = _need(data, "distributions", list)
    lines = ["/* ---- input distributions: each a deterministic function of (seed, index), gen.h "
             "---- */", "typedef enum {"]
    for d in ds:
        lines += _member(f"DIST_{d['c']},", f"\"{d['name']}\": {d['meaning']}")
    lines += ["    DIST_COUNT", "} lab_dist;", "",
              "/* Indexed by lab_dist; and the same names as one phrase for messages. */"]
    lines += _define_list("LAB_DIST_NAMES", (_c_string(d["name"]) for d in ds))
    lines.append("#define LAB_DIST_NAMES_TEXT " + _c_string(", ".join(d["name"] for d in ds)))
    return lines


def _names(data):
    lines = ["/* ---- the names of lab.h's enums scan_type and lab_shape, in their order; build "
             "modes */"]
    types = _need(data, "scan_types", list)
    lines += _define_list("LAB_SCAN_TYPE_NAMES", (_c_string(t) for t in types))
    lines += _define_list("LAB_SHAPE_NAMES", (_c_string(t) for t in _need(data, "shapes", list)))
    for m in _need(data, "modes", list):
        lines.append(f"#define LAB_MODE_{m.upper()} {_c_string(m)}")
    return lines


def _edge_sizes(data):
    e = _need(data, "edge_sizes", dict)
    fixed = _need(e, "fixed", list, "edge_sizes")
    rel = _need(e, "tile_relative", list, "edge_sizes")
    ks = _need(e, "pow2_exponents", list, "edge_sizes")
    large = _need(e, "large", dict, "edge_sizes")
    lines = ["/* ---- the edge sizes every lab is tested and graded at (contract.json: edge_sizes) "
             "---- */",
             f"#define LAB_DEFAULT_TILE ((size_t){int(e['default_tile'])}) /* for a lab without a "
             "tile */"]
    lines += _define_list("LAB_EDGE_FIXED", (str(int(n)) for n in fixed))
    lines.append("/* 2^k - 1 and 2^k + 1 for each k */")
    lines += _define_list("LAB_EDGE_POW2_EXPONENTS", (str(int(k)) for k in ks))
    lines += ["", "/* n = tiles * tile + plus: " + ", ".join(r["name"] for r in rel) + " */",
              "typedef struct {", "    size_t tiles;", "    long plus;", "} lab_tile_size;"]
    lines += _define_list("LAB_EDGE_TILE_RELATIVE",
                          (f"{{{int(r['tiles'])}, {int(r['plus'])}}}" for r in rel))
    lines.append(f"#define LAB_EDGE_LARGE_N ((size_t){int(large['n'])}) /* \"{large['name']}\" */")
    return lines


def render(data):
    """The text of contract.h for the parsed contract.json."""
    version = _need(data, "version", int)
    element = _need(data, "element", dict)
    traffic = _need(data, "traffic", dict)
    exit_lines, exit_names = _exit_codes(data)
    out = [
        "/* contract.h — generated from contract.json by contract.py — do not edit.",
        " *",
        " * The facts the harness and the tests (C) share with the grader and the Python tests:",
        " * change common/contract.json, then run `make contract` (python3 common/contract.py).",
        " * tests/test_contract.py fails when this file is stale or a fact is copied elsewhere.",
        " */",
        "/* formatted by its generator, so clang-format leaves it alone: */",
        "/* clang-format off */",
        "#ifndef SCAN_CONTRACT_H",
        "#define SCAN_CONTRACT_H",
        "",
        "#include <stddef.h>",
        "",
        f"#define LAB_CONTRACT_VERSION {version}",
        "",
        "/* ---- the element, the operator and the traffic model ---- */",
        f"#define LAB_ELEMENT_NAME {_c_string(_need(element, 'type', str, 'element'))}",
        f"#define LAB_ELEMENT_BYTES {int(element['bytes'])}",
        f"#define LAB_OPERATOR_NAME {_c_string(_need(data, 'operator', str))}",
        "/* A scan must at the least read every element once and write every element once. */",
        f"#define LAB_TRAFFIC_READS {int(traffic['reads'])}",
        f"#define LAB_TRAFFIC_WRITES {int(traffic['writes'])}",
        "",
        *exit_lines,
        "",
        *_statuses(data, exit_names),
        "",
        *_reasons(data),
        "",
        *_distributions(data),
        "",
        *_names(data),
        "",
        *_edge_sizes(data),
        "",
        "#endif /* SCAN_CONTRACT_H */",
        "/* clang-format on */",
    ]
    return "\n".join(out) + "\n"


def render_make(data):
    """The text of contract.mk: for each lab built on others, LAB_BASES_<lab> (the labs its binary
    links, in order), and for each base lab BASE_KEEP_<lab> (its entry points that stay global);
    LAB_EXIT_<code>, each exit code's brief meaning."""
    b = _need(data, "built_on", dict)
    labs, keep = _need(b, "labs", dict, "built_on"), _need(b, "keep", dict, "built_on")
    for lab, bases in labs.items():
        for base in bases:
            if base not in keep:
                raise ContractError(f"contract.json: built_on.labs.{lab} names {base!r}, which "
                                    "built_on.keep does not list")
    out = ["# contract.mk — generated from contract.json (built_on) by contract.py — do not edit.",
           "# The labs built on other labs, for the Makefile: LAB_BASES_<lab>, the labs a lab's binary",
           "# links, in order; BASE_KEEP_<lab>, the entry points of a base lab's object that stay global."]
    out += [f"LAB_BASES_{lab} := {' '.join(bases)}" for lab, bases in labs.items()]
    out += [f"BASE_KEEP_{lab} := {' '.join(names)}" for lab, names in keep.items()]
    out += ["# LAB_EXIT_<code>: what a lab binary's exit code means, in a few words (make run's last line)."]
    for e in _need(data, "exit_codes", list):
        brief = str(e.get("brief", e.get("name", ""))).replace("$", "$$").replace("#", "\\#")
        out.append(f"LAB_EXIT_{int(e['value'])} := {brief}")
    return "\n".join(out) + "\n"


def stale_summary(want, have, name="common/contract.h"):
    """One line saying how have (the file) differs from want (generated), or '' when equal."""
    if want == have:
        return ""
    if have is None:
        return f"{name} is missing: run make contract"
    a, b = want.splitlines(), have.splitlines()
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    differ = sum(1 for x, y in zip(a, b) if x != y) + abs(len(a) - len(b))
    return (f"{name} is stale: {differ} line{'s' if differ != 1 else ''} differ from "
            f"contract.json's (first at line {first + 1}): run make contract")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write: exit 1 with a one-line summary when contract.h is stale")
    ap.add_argument("--json", default=JSON_PATH, help=argparse.SUPPRESS)
    ap.add_argument("--header", default=HEADER_PATH, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        data = load(args.json)
        outputs = [(args.header, render(data), "common/contract.h"),
                   (os.path.splitext(args.header)[0] + ".mk", render_make(data), "common/contract.mk")]
    except (OSError, ValueError, ContractError, KeyError, TypeError) as e:
        print(f"contract.py: cannot read {args.json}: {e}", file=sys.stderr)
        return 2
    stale = 0
    for path, want, name in outputs:
        try:
            with open(path, encoding="utf-8") as f:
                have = f.read()
        except FileNotFoundError:
            have = None
        if args.check:
            why = stale_summary(want, have, name)
            if why:
                print(f"contract.py: {why}", file=sys.stderr)
                stale = 1
        elif have != want:
            with open(path, "w", encoding="utf-8") as f:
                f.write(want)
            print(f"contract.py: wrote {os.path.relpath(path)}", file=sys.stderr)
    return stale


if __name__ == "__main__":
    sys.exit(main())
