"""JSON: the whole result, per lab, with every failing case and the phase timings (what batch
mode stores as <student>.json)."""
import json

from .. import feedback
from .base import Format


def render(result, colour=False):
    """The result as JSON, cut to the config's feedback.results_max_bytes (feedback.fit)."""
    return feedback.fit(result, lambda r: json.dumps(r, indent=2, sort_keys=False) + "\n")


FORMAT = Format("json", "the whole result as JSON", render)
