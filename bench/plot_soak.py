#!/usr/bin/env python3
"""Draws the long soak's samples (bench/scale.py, `make bench-scale-soak`) as an SVG.

    plot_soak.py SAMPLES.csv OUT.svg [CAPTION]

The CSV has seconds, rss_kb, wal_bytes, database_bytes per sample. Three panels share the time
axis: resident memory (MB), WAL size (MB) and database size (MB). The SVG is written by hand, so
nothing needs installing and the output is the same on every machine.
"""

import csv
import sys
from xml.sax.saxutils import escape

WIDTH, PANEL, GAP, LEFT, RIGHT, TOP = 760, 150, 46, 70, 20, 56
SERIES = [
    ("rss_kb", 1 / 1024, "resident memory (MB)", "#1f6feb"),
    ("wal_bytes", 1 / 1e6, "WAL (MB)", "#d97706"),
    ("database_bytes", 1 / 1e6, "database file (MB)", "#16a34a"),
]


def nice_ceiling(value):
    """A round axis maximum at or above value (1, 2, 5 x a power of ten)."""
    if value <= 0:
        return 1.0
    step = 10 ** len(str(int(value))) / 100 if value >= 1 else 0.01
    for factor in (1, 2, 5, 10, 20, 50, 100):
        if step * factor >= value:
            return step * factor
    return value


def main():
    source, target = sys.argv[1:3]
    with open(source, newline="") as handle:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]
    if not rows:
        raise SystemExit("plot_soak: no samples")
    end = max(r["seconds"] for r in rows) or 1
    height = TOP + len(SERIES) * (PANEL + GAP) + 10
    plot_width = WIDTH - LEFT - RIGHT
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{LEFT}" y="18" font-size="14">pushward-bridge soak: {len(rows)} samples over '
        f'{end / 60:.0f} min</text>',
        # The caption on a line of its own: with the commit in it, it is longer than the title's line.
        f'<text x="{LEFT}" y="34">{escape(sys.argv[3]) if len(sys.argv) > 3 else ""}</text>',
    ]
    for index, (key, scale, label, colour) in enumerate(SERIES):
        top = TOP + index * (PANEL + GAP)
        values = [r[key] * scale for r in rows]
        ceiling = nice_ceiling(max(values) * 1.1)
        x = lambda s: LEFT + plot_width * s / end
        y = lambda v: top + PANEL - PANEL * v / ceiling
        out.append(f'<text x="{LEFT}" y="{top - 6}" font-weight="bold">{label}: first {values[0]:.1f}, '
                   f'last {values[-1]:.1f}, max {max(values):.1f}</text>')
        out.append(f'<rect x="{LEFT}" y="{top}" width="{plot_width}" height="{PANEL}" fill="none" stroke="#999"/>')
        for fraction in (0, 0.25, 0.5, 0.75, 1):
            value = ceiling * fraction
            out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_width}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                       f'stroke="#eee"/>')
            out.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:g}</text>')
        for fraction in (0, 0.25, 0.5, 0.75, 1):
            seconds = end * fraction
            out.append(f'<text x="{x(seconds):.1f}" y="{top + PANEL + 14}" text-anchor="middle">'
                       f'{seconds / 60:.3g} min</text>')
        points = " ".join(f"{x(r['seconds']):.1f},{y(v):.1f}" for r, v in zip(rows, values))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
    out.append("</svg>")
    with open(target, "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
