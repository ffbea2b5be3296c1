"""make bench's plot (grader/bench.py): bench.svg, GB/s against n, one line per lab, with CUB
and a device memcpy as reference lines. Standard library only: the SVG is written as text."""
import math

# Line colours for the plot (labs cycle through them).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]


def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _y_axis(pts):
    """(top of the GB/s axis, its grid step): a round step, at most 8 lines."""
    ymax = max(g for _, g in pts) * 1.08
    step = 10 ** math.floor(math.log10(ymax / 5)) if ymax > 0 else 1
    for m in (1, 2, 5, 10):
        if ymax / (step * m) <= 8:
            step *= m
            break
    return math.ceil(ymax / step) * step, step


def svg_plot(series, memcpy, title, anchor="cub"):
    """GB/s against log2(n): one polyline per series ({name: [(n, GB/s)]}), the anchor's (CUB)
    dashed, memcpy ([(n, GB/s)], timed in the anchor's own process) dotted. Standard library
    only: the SVG is written as text."""
    W, H, L, R, T, B = 900, 540, 70, 230, 50, 60
    pts = [p for s in series.values() for p in s] + memcpy
    if not pts:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="120">'
                f'<text x="20" y="60">{esc(title)}: no results</text></svg>\n')
    xs = [math.log2(n) for n, _ in pts]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    if x1 == x0:
        x1 = x0 + 1
    ymax, step = _y_axis(pts)

    def px(n):
        return L + (math.log2(n) - x0) / (x1 - x0) * (W - L - R)

    def py(g):
        return T + (1 - g / ymax) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="28" font-size="16">{esc(title)}</text>']
    y = 0.0
    while y <= ymax + 1e-9:
        out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    for k in range(x0, x1 + 1):
        out.append(f'<line x1="{px(1 << k):.1f}" y1="{T}" x2="{px(1 << k):.1f}" y2="{H - B}" '
                   f'stroke="#eee"/>')
        out.append(f'<text x="{px(1 << k):.1f}" y="{H - B + 16}" text-anchor="middle">2^{k}</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" '
               f'stroke="#444"/>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 18}" text-anchor="middle">'
               f'n (int32 elements, log scale)</text>')
    out.append(f'<text transform="translate(18 {(T + H - B) / 2:.0f}) rotate(-90)" '
               f'text-anchor="middle">GB/s (8n bytes / time)</text>')
    out += _plot_lines(series, memcpy, px, py, W - R, anchor)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _plot_lines(series, memcpy, px, py, right, anchor):
    """The SVG of each series (a polyline with its points) and the legend right of x = right."""
    out, legend = [], []
    labs = [k for k in series if k != anchor]
    styles = [(name, PALETTE[i % len(PALETTE)], "", 2) for i, name in enumerate(labs)]
    if anchor in series:
        styles.append((anchor, "#000", "8 4", 2.5))
    lines = dict(series)
    if memcpy:
        lines["memcpy"] = memcpy
        styles.append(("memcpy", "#888", "2 3", 2.5))
    for name, colour, dash, width in styles:
        p = sorted(lines[name])
        d = " ".join(f"{px(n):.1f},{py(g):.1f}" for n, g in p)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr} '
                   f'points="{d}"><title>{esc(name)}</title></polyline>')
        for n, g in p:
            out.append(f'<circle cx="{px(n):.1f}" cy="{py(g):.1f}" r="2.5" fill="{colour}"/>')
        legend.append((name, colour, dash, width))
    for i, (name, colour, dash, width) in enumerate(legend):
        yy = 50 + 10 + 20 * i
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        label = {anchor: "CUB DeviceScan", "memcpy": "device memcpy"}.get(name, name)
        out.append(f'<line x1="{right + 15}" y1="{yy}" x2="{right + 45}" y2="{yy}" '
                   f'stroke="{colour}" stroke-width="{width}"{dash_attr}/>')
        out.append(f'<text x="{right + 52}" y="{yy + 4}">{esc(label)}</text>')
    return out
