#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots bench_planner_fit's learning curve as an SVG, with plain python.

usage: plot_curve.py CSV OUT.svg [COLUMN,COLUMN...]

One panel per column (default: oom_rate, mean_overalloc_mem,
agg_overalloc_mem) against claims_seen, one line per allocator, a legend.
"""
import csv
import sys
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
W, PH, ML, MR, MT, MB = 760, 220, 70, 170, 30, 40  # sizes in px


def nice_max(v):
    """The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) >= v."""
    if v <= 0:
        return 1.0
    k = 1.0
    while k * 10 <= v:
        k *= 10
    while k > v:
        k /= 10
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * k >= v:
            return m * k
    return 10 * k


def load(path, cols):
    series = {}  # allocator -> [(x, {col: y})]
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                x = float(row["claims_seen"])
                ys = {c: float(row[c]) for c in cols}
            except (KeyError, ValueError):
                continue  # a malformed row is skipped, not fatal
            series.setdefault(row.get("allocator", "?"), []).append((x, ys))
    return series


def panel(out, top, col, series, xmax):
    ymax = nice_max(max((p[1][col] for s in series.values() for p in s), default=1))
    pw = W - ML - MR
    sx = lambda x: ML + pw * x / xmax
    sy = lambda y: top + PH - PH * y / ymax
    out.append(f'<rect x="{ML}" y="{top}" width="{pw}" height="{PH}" '
               'fill="none" stroke="#444"/>')
    for i in range(6):  # y ticks and grid
        y = ymax * i / 5
        out.append(f'<line x1="{ML}" x2="{ML + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
                   'stroke="#ddd"/>')
        label = f"{y * 100:.0f}%" if "rate" in col else f"{y:g}"
        out.append(f'<text x="{ML - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{label}</text>')
    for i in range(6):  # x ticks
        x = xmax * i / 5
        out.append(f'<text x="{sx(x):.1f}" y="{top + PH + 16}" text-anchor="middle">{x:.0f}</text>')
    out.append(f'<text x="{ML}" y="{top - 8}" font-weight="bold">{escape(col)}</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{sx(x):.1f},{sy(ys[col]):.1f}" for x, ys in sorted(pts, key=lambda p: p[0]))
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, ys in pts:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(ys[col]):.1f}" r="2.5" fill="{color}"/>')


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cols = argv[3].split(",") if len(argv) > 3 else [
        "oom_rate", "mean_overalloc_mem", "agg_overalloc_mem"]
    series = load(argv[1], cols)
    if not series:
        sys.stderr.write(f"plot_curve: no usable rows with {cols} in {argv[1]}\n")
        return 1
    xmax = max(p[0] for s in series.values() for p in s) or 1
    height = MT + len(cols) * (PH + MB + MT)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{height}" fill="white"/>']
    for k, col in enumerate(cols):
        panel(out, MT + k * (PH + MB + MT), col, series, xmax)
    out.append(f'<text x="{ML + (W - ML - MR) / 2}" y="{height - 6}" '
               'text-anchor="middle">claims seen</text>')
    for i, name in enumerate(sorted(series)):  # legend
        y = MT + 10 + 18 * i
        out.append(f'<line x1="{W - MR + 15}" x2="{W - MR + 40}" y1="{y}" y2="{y}" '
                   f'stroke="{COLORS[i % len(COLORS)]}" stroke-width="3"/>')
        out.append(f'<text x="{W - MR + 46}" y="{y + 4}">{escape(name)}</text>')
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
