"""JSON: the whole result, per lab, with every failing case and the phase timings (what batch
mode stores as <student>.json)."""
import json

from . import Format


def render(result, colour=False):
    return json.dumps(result, indent=2, sort_keys=False) + "\n"


FORMAT = Format("json", "the whole result as JSON", render)
