"""A colour bar with nothing to scale says so (under Xvfb).

The default example with every key padded: the masked scores have no unmasked cell, and with a
fill of -inf every weight and every later value is NaN. Their colour bars read -1 ... 1 (or 0 ... 1)
before, a range no cell takes a colour from; they now say "no finite value". Checked on the
widgets' facts and on the pixels: under such a bar there is no number at its right end (the
right third of the text line is background), where the unpadded example prints its high end."""
import json
import os
import sys

from gui_test_util import Failures, output_dir, screenshots

binary = sys.argv[1]
source = sys.argv[2]
out = output_dir("colour-bar-no-finite")
failures = Failures()

session = json.load(open(os.path.join(source, "assets", "presets", "default.json")))
length = len(session["tokens"])
session["config"]["mask"]["key_padding"] = [0] * length
padded = os.path.join(out, "all-padded.json")
json.dump(session, open(padded, "w"))


def right_end_ink(image, bar, font):
    """Pixels brighter than the background in the text line under the bar's right third."""
    _, _, rows = image
    top, bottom = int(bar["y"] + bar["h"] + 0.1 * font), int(bar["y"] + bar["h"] + 1.1 * font)
    left, right = int(bar["x"] + 2 * bar["w"] / 3), int(bar["x"] + bar["w"])
    return sum(1 for y in range(top, bottom) for x in range(left, right) if max(rows[y][x]) > 120)


stages = ["masked", "weights", "output"]
for label, path, finite in (("example", "default", True), ("all-padded", padded, False)):
    shots = screenshots(binary, path, stages, out, label)
    for stage in stages:
        image, widgets = shots[stage]
        name = "output" if stage == "output" else f"{stage}.h0"
        bar = widgets["widgets"].get("colorbar." + name)
        failures.check(bar is not None, f"[{label}] the colour bar of {name} is on screen")
        if bar is None:
            continue
        font = widgets["widgets"]["stepper.next"]["h"]
        failures.check(bar["finite"] == (1.0 if finite else 0.0),
                       f"[{label}] {name}: the bar {'has' if finite else 'has no'} finite values to scale: {bar}")
        ink = right_end_ink(image, bar, font)
        failures.check((ink > 0) == finite,
                       f"[{label}] {name}: {'a number' if finite else 'no number'} at the bar's right end ({ink} lit pixels)")
failures.finish()
