#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab needs, only those missing.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libeigen3-dev nlohmann-json3-dev libstb-dev doctest-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libepoxy-dev libgl-dev libgl1-mesa-dri libglx-mesa0
  libfontconfig-dev fonts-noto-cjk fonts-dejavu-core
  xvfb xauth xdotool x11-utils python3-xlib  # python3-xlib: the drag-and-drop test's XDND source
  python3 python3-numpy python3-pil  # python3-pil: tools/readme_images.sh shrinks the README's pictures
  clang libclang-rt-14-dev libomp-14-dev  # tools/fuzz.sh: libFuzzer and OpenMP for clang
  python3-torch libopenblas0-pthread  # the PyTorch proof test and peer benchmark; OpenBLAS makes torch a fair peer
  python3-matplotlib  # its published viridis and RdBu tables check the heatmap colours (test_colormap_tables.py)
  desktop-file-utils appstream shared-mime-info man-db strace  # the install test's validators and its file watch
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
