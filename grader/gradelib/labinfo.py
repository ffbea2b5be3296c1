"""What a lab binary says it is (`scan --describe`): its variants, its tiles, its limits."""
import dataclasses
import json

from . import contract


@dataclasses.dataclass(frozen=True)
class Variant:
    """One variant of a lab, as `scan --describe` lists it (variants[0] is graded)."""
    name: str
    summary: str
    temp: bool  # it asks the harness for scratch memory
    algorithm: str = "none"  # the algorithm it asks for, as CPU mode's profile names it
    compare: bool = False  # a design the reference keeps for comparison, which a student does not write


# A whole-array lab's reported tiles above this are ignored (sizes of several such tiles would only
# run out of memory); its multi-tile sizes span at least MIN_BIG_TILE elements whatever it reports.
MAX_WORK_TILE = 1 << 20
MIN_BIG_TILE = 4096


@dataclasses.dataclass(frozen=True)
class LabInfo:
    """What `scan --describe` says about a lab (common/harness/session.c)."""
    contract: int
    id: str
    title: str
    shape: str       # one of contract.SHAPES (host arrays, the whole scan, tile by tile)
    type: str        # one of contract.SCAN_TYPES
    tile: int        # 0 unless shape == "tile"
    bench_n: int
    max_n: int       # 0: no limit
    element: str
    operator: str
    variants: tuple  # of Variant
    mode: str        # one of contract.MODES: how the binary was built
    work_tiles: tuple = ()  # a whole-array lab's internal tiles (lab.h: lab_work_tiles), () unknown

    @property
    def device(self):
        return self.shape != "host"

    @property
    def tiles(self):
        """The tiles the sizes are made from: a tile lab's tile (the course's); a whole-array
        lab's internal tiles as it reports them (lab 10: its own and its scan's; up to
        MAX_WORK_TILE), then contract.DEFAULT_TILE. A lab 07 or 08 reports its own tile from its
        scan.cu, so a report can only add sizes: the default tile's sizes stay, and the multi-tile
        sizes span at least MIN_BIG_TILE (big_tile)."""
        if self.tile:
            return (self.tile,)
        reported = tuple(t for t in self.work_tiles if t <= MAX_WORK_TILE)
        return reported + ((contract.DEFAULT_TILE,) if contract.DEFAULT_TILE not in reported else ())

    @property
    def tile_or_default(self):
        """The tile the edge sizes are made from (the first of tiles)."""
        return self.tiles[0]

    @property
    def big_tile(self):
        """The largest of tiles, at least MIN_BIG_TILE for a whole-array lab (whose tiles are its
        own report): the multi-tile sizes are multiples of it."""
        return max(self.tiles) if self.tile else max(self.tiles + (MIN_BIG_TILE,))


def parse_describe(text):
    """(LabInfo, "") from the output of `scan --describe`, or (None, why) when it is not one JSON
    object of that form, or names another contract version than the grader's."""
    try:
        d = json.loads(text)
    except ValueError:
        return None, "not JSON"
    if not isinstance(d, dict):
        return None, "not a JSON object"
    if d.get("contract") != contract.VERSION:
        return None, (f"built against contract version {d.get('contract')!r}, the grader has "
                      f"{contract.VERSION}: rebuild the lab")
    fields = {"id": str, "title": str, "shape": str, "type": str, "tile": int, "bench_n": int,
              "max_n": int, "element": str, "operator": str, "variants": list, "mode": str}
    for key, kind in fields.items():
        if not isinstance(d.get(key), kind) or isinstance(d.get(key), bool):
            return None, f"'{key}' is missing or not a {kind.__name__}"
    for key, allowed in (("shape", contract.SHAPES), ("type", contract.SCAN_TYPES),
                         ("mode", contract.MODES), ("element", (contract.ELEMENT,)),
                         ("operator", (contract.OPERATOR,))):
        if d[key] not in allowed:
            return None, f"{key} {d[key]!r} is not one of {', '.join(allowed)}"
    variants = []
    for v in d["variants"]:
        if not (isinstance(v, dict) and isinstance(v.get("name"), str)
                and isinstance(v.get("summary"), str) and isinstance(v.get("temp"), bool)):
            return None, f"variant {v!r} needs a name, a summary and temp"
        if not isinstance(v.get("algorithm", "none"), str):
            return None, f"variant {v['name']!r}: 'algorithm' is not a string"
        if not isinstance(v.get("compare", False), bool):
            return None, f"variant {v['name']!r}: 'compare' is not true or false"
        variants.append(Variant(v["name"], v["summary"], v["temp"], v.get("algorithm", "none"),
                                v.get("compare", False)))
    if not variants:
        return None, "no variants"
    work = d.get("work_tiles", [])
    if not isinstance(work, list) or any(isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in work):
        return None, "'work_tiles' is not a list of positive whole numbers"
    return LabInfo(d["contract"], d["id"], d["title"], d["shape"], d["type"], d["tile"],
                   d["bench_n"], d["max_n"], d["element"], d["operator"], tuple(variants),
                   d["mode"], tuple(work)), ""
