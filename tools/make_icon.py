#!/usr/bin/python3
"""Draws the window icon, assets/icons/attention-lab-<size>.png and the scalable
assets/icons/attention-lab.svg (the desktop's menu icon): the causal attention
weights of a 4-token sequence as the app shows them (viridis cells, masked cells
grey). Run once after changing the picture; the files are committed.

Needs Debian's python3-pil (not a build or test dependency).
"""
import math
import pathlib

from PIL import Image, ImageDraw

# The viridis stops of shaders/heatmap.frag, so the icon looks like the heatmaps.
VIRIDIS = [(68, 1, 84), (72, 40, 120), (62, 73, 137), (49, 104, 142), (38, 130, 142),
           (31, 158, 137), (53, 183, 121), (110, 206, 88), (181, 222, 43), (253, 231, 37)]
MASKED = (102, 102, 102)
BACKGROUND = (30, 30, 46)


def viridis(t):
    x = min(max(t, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(x), len(VIRIDIS) - 2)
    f = x - i
    return tuple(round(a + (b - a) * f) for a, b in zip(VIRIDIS[i], VIRIDIS[i + 1]))


def causal_weights(n):
    """softmax over the visible keys of scores that favour the newest key."""
    rows = []
    for i in range(n):
        scores = [0.6 * j for j in range(i + 1)]
        total = sum(math.exp(s) for s in scores)
        rows.append([math.exp(s) / total for s in scores])
    return rows


def cells(size, n=4):
    """(x0, y0, cell side, colour) of each heatmap cell in a size x size icon."""
    margin = size / 8
    gap = max(1.0, size / 40)
    cell = (size - 2 * margin - (n - 1) * gap) / n
    for i, row in enumerate(causal_weights(n)):
        for j in range(n):
            colour = viridis(row[j]) if j < len(row) else MASKED
            yield margin + j * (cell + gap), margin + i * (cell + gap), cell, colour


def draw(size):
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    pen = ImageDraw.Draw(image)
    pen.rounded_rectangle((0, 0, size - 1, size - 1), radius=size // 6, fill=BACKGROUND + (255,))
    for x0, y0, cell, colour in cells(size):
        pen.rectangle((round(x0), round(y0), round(x0 + cell) - 1, round(y0 + cell) - 1),
                      fill=colour + (255,))
    return image


def svg(size=128):
    def hex_colour(rgb):
        return "#%02x%02x%02x" % rgb
    shapes = [f'<rect width="{size}" height="{size}" rx="{size // 6}" fill="{hex_colour(BACKGROUND)}"/>']
    shapes += [f'<rect x="{x0:g}" y="{y0:g}" width="{cell:g}" height="{cell:g}" fill="{hex_colour(colour)}"/>'
               for x0, y0, cell, colour in cells(size)]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
            f'viewBox="0 0 {size} {size}">\n  ' + "\n  ".join(shapes) + "\n</svg>\n")


if __name__ == "__main__":
    out = pathlib.Path(__file__).resolve().parent.parent / "assets" / "icons"
    out.mkdir(parents=True, exist_ok=True)
    for size in (16, 32, 48, 64, 128, 256):
        draw(size).save(out / f"attention-lab-{size}.png", optimize=True)
    (out / "attention-lab.svg").write_text(svg())
