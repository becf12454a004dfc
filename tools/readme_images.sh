#!/usr/bin/env bash
# Re-renders the README's pictures of the teaching views and labs into docs/images/
# at 1280x800 (under Xvfb when there is no display), then shrinks them to a
# 256-colour palette so the repository stays small.
# usage: tools/readme_images.sh [path/to/attention-lab]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-$root/build/app/attention-lab}
images=$root/docs/images
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Own settings and recovery folders: a lesson edits the session, and a recovery
# file would open a dialog over the picture.
export XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state

shrink() {  # a 256-colour palette: a tenth of the size, no visible change
  /usr/bin/python3 - "$1" <<'PY'
import sys
from PIL import Image
path = sys.argv[1]
Image.open(path).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE).save(path, optimize=True)
PY
  echo "$(basename "$1") $(du -k "$1" | cut -f1) KiB"
}

shot() {  # name source stage [options...]
  local name=$1 source=$2 stage=$3
  shift 3
  local run=("$binary" screenshot "$source" --stage "$stage" --size 1280x800 --out "$images/$name.png" "$@")
  if [ -n "${DISPLAY:-}" ]; then "${run[@]}"; else xvfb-run -a -s "-screen 0 1280x800x24" "${run[@]}"; fi
  shrink "$images/$name.png"
}

# Seed 003 with one value of V changed, for the diff against the original.
/usr/bin/python3 - "$root/assets/presets/seed-003-example.json" "$work/seed-003-v-edited.json" <<'PY'
import json, sys
session = json.load(open(sys.argv[1]))
session["v"][1][1] = 2.5
json.dump(session, open(sys.argv[2], "w"))
PY

# Two helpers: shrink FILE, shot NAME SOURCE STAGE [OPTIONS].
shot explain-cell seed-003-example weights --open explain --pin weights:0:0:1:2
shot token-lines default weights --open token_lines
shot heads-reshape default concat --open heads
shot snapshot-diff "$work/seed-003-v-edited.json" context --snapshot seed-003-example
shot lab-sqrt-dk default scaled --open sqrt_dk
shot labs-mask-fill default masked --open mask_fill
shot lab-linear default weights --open linear
shot lab-fused-qkv-zh seed-004-fused q --lang zh --open fused_qkv --open explain --pin q:0:0:1:2
shot quiz default scores --open quiz
shot lessons default masked --lesson 7
shot export default weights --open export --pin weights:0:0:1:2

# Two labs after a click: the FlashAttention lab at its last tile ("To the end"),
# the stability lab with its scores ×100 (Ctrl+click on the slider, type 100).
# The app runs under xdotool and Ctrl+Q writes the last frame to --out.
cat > "$work/live.py" <<'PY'
import json, subprocess, sys, time
binary, lab, out, widgets = sys.argv[1:5]
app = subprocess.Popen([binary, "default", "--size", "1280x800", "--open", lab, "--widgets-out", widgets, "--out", out])
def state(predicate, what):
    for _ in range(300):
        try:
            s = json.load(open(widgets))
            if predicate(s):
                return s
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    app.kill()
    raise SystemExit(f"the {lab} lab did not show {what}")
def xdotool(*args):
    return subprocess.run(["xdotool", *map(str, args)], check=True, capture_output=True, text=True).stdout
def keys(*names):  # held a moment: ImGui 1.86 misses a key pressed and released within one frame
    for name in names:
        xdotool("keydown", name)
    time.sleep(0.15)
    for name in reversed(names):
        xdotool("keyup", name)
    time.sleep(0.2)
def move_to(rect):
    xdotool("mousemove", "--window", window, int(rect["x"] + rect["w"] / 2), int(rect["y"] + rect["h"] / 2))
    time.sleep(0.2)
button = {"flash": "flash_lab.to_end", "softmax_stability": "labs.stability.scale"}[lab]
s = state(lambda s: button in s["widgets"], "its controls")
window = xdotool("search", "--sync", "--onlyvisible", "--name", "Attention Lab").split()[0]
move_to(s["widgets"][button])
if lab == "flash":
    xdotool("click", 1)
    state(lambda s: "flash_lab.result" in s["widgets"], "its result")
else:
    xdotool("keydown", "ctrl")
    time.sleep(0.1)
    xdotool("click", 1)
    time.sleep(0.2)
    xdotool("keyup", "ctrl")
    time.sleep(0.2)
    xdotool("type", "--delay", 60, "100")
    keys("Return")
    state(lambda s: s.get("labs.stability.naive_broken") == "yes", "the naive softmax broken")
xdotool("mousemove", "--window", window, 5, 790)  # no hover tooltip in the picture
time.sleep(0.3)
xdotool("keydown", "ctrl", "keydown", "q")
time.sleep(0.15)
subprocess.run(["xdotool", "keyup", "q", "keyup", "ctrl"])  # may fail: the window is gone by then
app.wait(timeout=30)
PY
if [ -n "${DISPLAY:-}" ]; then run=(); else run=(xvfb-run -a -s "-screen 0 1280x800x24"); fi
"${run[@]}" /usr/bin/python3 "$work/live.py" "$binary" flash "$images/flash-lab.png" "$work/flash.json"
shrink "$images/flash-lab.png"
"${run[@]}" /usr/bin/python3 "$work/live.py" "$binary" softmax_stability "$images/lab-softmax-stability.png" "$work/stability.json"
shrink "$images/lab-softmax-stability.png"
