"""The course's contract, common/contract.json: the facts the grader and the Python tests share with
the harness (the C side reads the same file as common/contract.h, which common/contract.py
generates). Loaded once, at import; every name below comes from the file, none is typed here.

  VERSION            the contract's version; `scan --describe` names the one a binary was built with
  EXIT               {name: code} of a lab binary ("OK", "WRONG", ..., "SANDBOX")
  EXIT_MEANING       {name: one line}
  STATUSES           the statuses a report can hold, in the harness's order
  STATUS_EXIT        {status: exit code}
  NOT_IMPLEMENTED_REASONS  why a variant is not implemented, as a report's "reason" names it
  DISTS              the input distributions, in the harness's order
  SCAN_TYPES, SHAPES, MODES, ELEMENT, ELEMENT_BYTES, OPERATOR
  DEFAULT_TILE       the tile the edge sizes assume for a lab without one
  LARGE_N            the edge sizes' "large" n
  SIZE_NAMES         the names of the edge sizes every lab has (tile+1, ..., 2^16+1, large)
  SANITIZER_EXIT     the --error-exitcode the grader gives compute-sanitizer
  BUILT_ON           {lab: [the labs its binary links, in order]} for the labs built on others
                     (lab 10); the Makefile reads the same facts from common/contract.mk
  bytes_moved(n), edge_sizes(tile, large_n, limit)
"""
import json
import os

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "common", "contract.json")

with open(PATH, encoding="utf-8") as _f:
    DATA = json.load(_f)

VERSION = DATA["version"]
EXIT = {e["name"]: e["value"] for e in DATA["exit_codes"]}
EXIT_MEANING = {e["name"]: e["meaning"] for e in DATA["exit_codes"]}
STATUSES = tuple(s["name"] for s in DATA["statuses"])
STATUS_EXIT = {s["name"]: EXIT[s["exit"]] for s in DATA["statuses"]}
NOT_IMPLEMENTED_REASONS = tuple(r["name"] for r in DATA["not_implemented_reasons"])
DISTS = tuple(d["name"] for d in DATA["distributions"])
SCAN_TYPES = tuple(DATA["scan_types"])
SHAPES = tuple(DATA["shapes"])
MODES = tuple(DATA["modes"])
ELEMENT = DATA["element"]["type"]
ELEMENT_BYTES = DATA["element"]["bytes"]
OPERATOR = DATA["operator"]
SANITIZER_EXIT = DATA["sanitizer_exit"]
BUILT_ON = {lab: list(bases) for lab, bases in DATA["built_on"]["labs"].items()}

_EDGE = DATA["edge_sizes"]
DEFAULT_TILE = _EDGE["default_tile"]
LARGE_N = _EDGE["large"]["n"]
# The edge sizes every lab has, whatever its tile, by name (the grader's config can name them).
SIZE_NAMES = tuple(r["name"] for r in _EDGE["tile_relative"]) + tuple(_EDGE["pinned"]) + (
    _EDGE["large"]["name"],)


def bytes_moved(n):
    """Bytes a scan of n elements must move at the least (read each once, write each once)."""
    t = DATA["traffic"]
    return (t["reads"] + t["writes"]) * ELEMENT_BYTES * n


def _pow2_sizes():
    """{name: n} of the 2^k - 1 and 2^k + 1 family, in the contract's order."""
    out = {}
    for k in _EDGE["pow2_exponents"]:
        out[f"2^{k}-1"] = (1 << k) - 1
        out[f"2^{k}+1"] = (1 << k) + 1
    return out


def edge_sizes(tile, large_n=None, limit=None):
    """The edge sizes of a lab with this tile (0: none, DEFAULT_TILE stands in) as {n: name},
    sorted by n, the large size large_n (None: LARGE_N) among them, none over limit (None: no
    limit). When families name the same n, the later one in contract.json wins; pinned names
    always survive (the grader's config refers to them)."""
    t = tile or DEFAULT_TILE
    pow2 = _pow2_sizes()
    named = {}
    for n in _EDGE["fixed"]:
        named[n] = str(n)
    for name, n in pow2.items():
        named[n] = name
    for r in _EDGE["tile_relative"]:
        named[r["tiles"] * t + r["plus"]] = r["name"]
    for name in _EDGE["pinned"]:
        named[pow2[name]] = name
    named[LARGE_N if large_n is None else large_n] = _EDGE["large"]["name"]
    return {n: name for n, name in sorted(named.items()) if limit is None or n <= limit}
