"""The output formats of a grading result, in a registry: each format is one module of this
package that defines FORMAT (a Format), and one line of MODULES below. grade.py takes its
--format choices, their help and the batch side files' names from here.

A result (what grade.py writes, outcomes.GradeResult.to_dict) is a dict:
  {"grader": ..., "course": ..., "mode": "gpu"|"cpu", "device": ..., "seed": ..., "status": ...,
   "message": ..., "points": ..., "max_points": ..., "elapsed_s": ..., "timings": ...,
   "labs": [lab result, ...]}  (outcomes.LabResult.to_dict; status: graded, or status.NOT_GRADED)
A format's render(result, colour=False) returns the text; colour is only ever asked of formats
meant for a terminal.
"""
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

# The registry: one line per format, in the order --format lists them.
MODULES = (
    "table",
    "json_result",
    "gradescope",
    "junit",
    "prairielearn",
)
DEFAULT = "table"  # what --format is unless given, and what a terminal gets beside --out
STORED = "json"    # what batch mode stores as <student>.json (and reads back to resume)


@dataclass(frozen=True)
class Format:
    """name: the --format value; help: one line for --help; render(result, colour=False) -> text;
    side_file: in batch mode, the extension of the student's side file written in this format
    (<student>.<side_file>) beside the JSON result, or None; colour: render can colour its text."""
    name: str
    help: str
    render: Callable
    side_file: Optional[str] = None
    colour: bool = False


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


def render(result, name, stream=None, to_terminal=True):
    """The result in format name; coloured when the format can be, to_terminal is set and
    stream (default: stdout) is a terminal that wants colour (use_colour)."""
    fmt = get(name)
    colour = fmt.colour and to_terminal and use_colour(sys.stdout if stream is None else stream)
    return fmt.render(result, colour=colour)


for _module in MODULES:
    register(importlib.import_module(f"{__name__}.{_module}").FORMAT)
