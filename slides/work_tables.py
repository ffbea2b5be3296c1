"""The work tables in the handouts: the formulas and values of their "additions" and "steps" rows
(tests/test_diagrams.py compares the formulas with scan_networks' counts, tests/test_handouts.py
every number in such a row with its formula).
"""
import re

# ---- the work tables in the handouts ------------------------------------------------------------
# A handout's "Work and steps" section holds a Markdown table whose rows named "additions" (or
# "additions, total", or parts "additions, phase 1", ...) and "steps" (or "levels") give a formula
# in one size variable (n, or e.g. T for a tile) and the
# values for concrete sizes under headers such as "n = 8" or "n = 2^16":
#     | quantity | formula | n = 8 | n = 16 |
#     | additions | n·log2 n − (n − 1) | 17 | 49 |
# tests/test_diagrams.py compares those formulas with the counts of the networks above, and
# tests/test_handouts.py checks every number in such a row against its formula.

WORK_ROWS = ("additions", "steps")   # also "additions, phase 1" etc.: the phases add up


class FormulaError(ValueError):
    pass


def _tokens(text):
    """Splits a formula written for people (n·log2 n − (n − 1), n(n+1)/2, 2^16) into tokens."""
    t = text.strip().strip("`$").replace("**", "")
    for a, b in (("\u2212", "-"), ("\u2013", "-"), ("\u00b7", "*"), ("\u22c5", "*"),
                 ("\u00d7", "*"), ("\u00b2", "^2"), ("\u00b3", "^3"), ("\\cdot", "*"),
                 ("\\times", "*"), ("\\log_2", "log2"), ("log_2", "log2"), ("log\u2082", "log2"),
                 ("lg", "log2"), ("{", "("), ("}", ")"), ("`", ""), ("$", ""), (",", ""),
                 ("\u2009", ""), ("\u202f", ""), ("_", "")):
        t = t.replace(a, b)
    out, i = [], 0
    while i < len(t):
        c = t[i]
        if c.isspace():
            i += 1
        elif t.startswith("log2", i):
            out.append(("log2", None))
            i += 4
        elif c.isdigit():
            j = i
            while j < len(t) and (t[j].isdigit() or t[j] == "."):
                j += 1
            out.append(("num", t[i:j]))
            i = j
        elif c.isalpha():
            j = i
            while j < len(t) and t[j].isalpha():
                j += 1
            if j - i != 1:      # "T or 2T" is prose, not a product of T, o and r
                raise FormulaError("%r is not a formula variable in %r" % (t[i:j], text))
            out.append(("var", c))
            i += 1
        elif c in "+-*/^()":
            out.append((c, None))
            i += 1
        else:
            raise FormulaError("unexpected %r in %r" % (c, text))
    return out


def parse_formula(text):
    """Returns (variables used, f) where f(env) evaluates the formula exactly (a Fraction); env
    maps each variable to its value, or is one number given to every variable. Raises
    FormulaError when it cannot read the text."""
    from fractions import Fraction
    toks = _tokens(text)
    pos = [0]
    used = set()

    def peek():
        return toks[pos[0]][0] if pos[0] < len(toks) else None

    def take(kind=None):
        if pos[0] >= len(toks) or (kind and toks[pos[0]][0] != kind):
            raise FormulaError("cannot read %r" % text)
        pos[0] += 1
        return toks[pos[0] - 1]

    def expr():
        f = term()
        while peek() in ("+", "-"):
            op = take()[0]
            g = term()
            f = (lambda a, b: lambda v: a(v) + b(v))(f, g) if op == "+" else \
                (lambda a, b: lambda v: a(v) - b(v))(f, g)
        return f

    def term():
        f = unary()
        while peek() in ("*", "/", "num", "var", "(", "log2"):
            op = take()[0] if peek() in ("*", "/") else "*"   # 2(n - 1): implicit product
            g = unary()
            f = (lambda a, b: lambda v: a(v) * b(v))(f, g) if op == "*" else \
                (lambda a, b: lambda v: a(v) / b(v))(f, g)
        return f

    def unary():
        if peek() == "-":
            take()
            g = unary()
            return lambda v: -g(v)
        return power()

    def power():
        f = primary()
        if peek() == "^":
            take()
            g = unary()
            return lambda v: f(v) ** int(g(v))
        return f

    def primary():
        kind, val = take()
        if kind == "num":
            c = Fraction(val)
            return lambda v: c
        if kind == "var":
            used.add(val)

            def var(v, name=val):
                if isinstance(v, dict):
                    if name not in v:
                        raise FormulaError("no value for %s in %r" % (name, text))
                    return Fraction(v[name])
                return Fraction(v)
            return var
        if kind == "(":
            f = expr()
            take(")")
            return f
        if kind == "log2":
            g = power()

            def log2(v):
                x = g(v)
                k = int(x).bit_length() - 1
                if x.denominator != 1 or x <= 0 or 1 << k != x:
                    raise FormulaError("log2 of %s is not a whole number" % x)
                return Fraction(k)
            return log2
        raise FormulaError("cannot read %r" % text)

    f = expr()
    if pos[0] != len(toks):
        raise FormulaError("cannot read %r" % text)
    return used, f


def parse_number(cell):
    """A table cell as an integer ("1,048,576", "2^16", "67108863"), or None if it is not one."""
    try:
        used, f = parse_formula(cell)
    except FormulaError:
        return None
    if used:
        return None
    v = f(0)
    return int(v) if v.denominator == 1 else None


def markdown_section(text, title):
    """The body of the level-2 section whose heading starts with title, or None."""
    lines = text.splitlines()
    body, inside = [], False
    for line in lines:
        if line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip().lower().startswith(title.lower())
            continue
        if inside:
            body.append(line)
    return "\n".join(body) if inside or body else None


def parse_sizes(header):
    """A column header such as "n = 8", "n = 2^16" or "B = 256, C = 8" as {variable: value},
    or None when it is not one."""
    env = {}
    for part in header.replace("`", "").replace("*", "").split(","):
        m = re.match(r"^\s*([A-Za-z])\s*=\s*(.+?)\s*$", part)
        if not m:
            return None
        v = parse_number(m.group(2))
        if v is None:
            return None
        env[m.group(1)] = v
    return env or None


def work_rows(section, every=False):
    """Rows of the section's Markdown tables named "additions", "steps", or "additions, <part>":
    a list of dicts with name, formula, vars (its variables), f (f(env)), error (why the formula
    could not be read, else None) and cells [(env, text)] for every column whose header names
    the sizes ("n = 8", "B = 256, C = 8"). every=True also returns the table's other rows whose
    second column is a formula this module can read (memory bytes, barriers, ...)."""
    rows = []
    header = None
    for line in section.splitlines():
        s = line.strip()
        if not s.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        name = cells[0].replace("*", "").replace("`", "").strip().lower()
        if name == "levels" or name.endswith("(steps)"):
            name = "steps"      # "levels", "levels (steps)": the same count
        marked = name in WORK_ROWS or name.startswith("additions,")
        if not (marked or every) or len(cells) < 2:
            continue
        row = {"name": name, "formula": cells[1], "vars": set(), "f": None, "error": None,
               "cells": []}
        try:
            used, f = parse_formula(cells[1])
            if not used:
                raise FormulaError("the formula uses no size variable")
            row["vars"], row["f"] = used, f
        except FormulaError as e:
            if not marked:
                continue        # a remark, not a formula ("T or 2T", "4: after the load")
            row["error"] = str(e)
        for h, c in zip(header[2:], cells[2:]):
            env = parse_sizes(h)
            if env and row["vars"] <= set(env):
                row["cells"].append((env, c))
        rows.append(row)
    return rows
