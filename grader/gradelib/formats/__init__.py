"""The output formats of a grading result, in a registry: each format is one module of this
package that defines FORMAT (a Format), and one line of MODULES below. grade.py takes its
--format choices, their help and the batch side files' names from here.

A result (what grade.py writes, outcomes.GradeResult.to_dict) is a dict:
  {"grader": ..., "course": ..., "mode": "gpu"|"cpu", "device": ..., "seed": ..., "status": ...,
   "message": ..., "points": ..., "max_points": ..., "elapsed_s": ..., "timings": ...,
   "labs": [lab result, ...]}  (outcomes.LabResult.to_dict; status: graded, or status.NOT_GRADED)
A format's render(result, colour=False) returns the text; colour is only ever asked of formats
meant for a terminal. Who sees what (each lab's "visibility", the config's "gradescope" options)
is the platform's presentation: render sets it from the config as it renders (present), on a result
graded now or stored earlier, never when a result is assembled.
"""
import copy
import importlib
import os
import sys

from ..config import GRADESCOPE_DEFAULTS
from .base import Format

# The registry: one line per format, in the order --format lists them.
MODULES = (
    "table",
    "json_result",
    "gradescope",
    "junit",
    "prairielearn",
)
__all__ = ("Format", "DEFAULT", "STORED", "register", "unregister", "names", "get", "side_files", "help_text",
           "use_colour", "present", "render")
DEFAULT = "table"  # what --format is unless given, and what a terminal gets beside --out
STORED = "json"    # what batch mode stores as <student>.json (and reads back to resume)


_REGISTRY = {}


def register(fmt):
    """Makes fmt selectable (replacing a format of the same name); returns it."""
    _REGISTRY[fmt.name] = fmt
    return fmt


def unregister(name):
    """Removes a format (for tests that register one of their own)."""
    _REGISTRY.pop(name, None)


def names():
    """The --format choices, in registry order."""
    return tuple(_REGISTRY)


def get(name):
    """The Format called name; KeyError when there is none."""
    return _REGISTRY[name]


def side_files():
    """{format name: side file extension} of the formats that write one in batch mode."""
    return {f.name: f.side_file for f in _REGISTRY.values() if f.side_file}


def help_text():
    """The --format help: every format and what it writes."""
    return "; ".join(f"{f.name}: {f.help}" + (" (the default)" if f.name == DEFAULT else "")
                     for f in _REGISTRY.values())


def use_colour(stream):
    """Colour only on a terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb."""
    if "NO_COLOR" in os.environ:
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def present(result, config):
    """A copy of result with what config says about who sees what: each lab's "visibility", and
    the "gradescope" options when they are not the defaults. These settings are not part of the
    grading key, so changing them regrades nobody: a stored result gets today's."""
    out = copy.deepcopy(result)
    for lab in out.get("labs", []):
        if isinstance(lab, dict) and lab.get("lab"):
            lab["visibility"] = dict(config.lab(lab["lab"])["visibility"])
    options = {k: v for k, v in config.gradescope.items() if GRADESCOPE_DEFAULTS.get(k) != v}
    if options:
        out["gradescope"] = options
    else:
        out.pop("gradescope", None)
    return out


def render(result, name, stream=None, to_terminal=True, config=None):
    """The result in format name, presented as config says (present; config None: as it is);
    coloured when the format can be, to_terminal is set and stream (default: stdout) is a
    terminal that wants colour (use_colour)."""
    fmt = get(name)
    colour = fmt.colour and to_terminal and use_colour(sys.stdout if stream is None else stream)
    return fmt.render(present(result, config) if config is not None else result, colour=colour)


for _module in MODULES:
    register(importlib.import_module(f"{__name__}.{_module}").FORMAT)
