"""The scoring rules, as plain functions of measured numbers (tested on their own)."""


def speed_fraction(ratio, full_at, zero_at):
    """Share of the speed points for a time ratio (student / reference): 1 at or below full_at,
    0 at or above zero_at, linear in between."""
    if ratio is None:
        return 0.0
    if ratio <= full_at:
        return 1.0
    if ratio >= zero_at:
        return 0.0
    return (zero_at - ratio) / (zero_at - full_at)


def correctness_points(passed, total, points):
    """Points for passing `passed` of `total` correctness cases (proportional)."""
    if total <= 0:
        return 0.0
    return points * passed / total


def median(values):
    """Median of a non-empty list of numbers."""
    v = sorted(values)
    if not v:
        raise ValueError("median of nothing")
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def round_points(x):
    return round(x + 0.0, 2)
