#!/usr/bin/env bash
# Builds the Debian package from this build (cpack -G DEB) into a temporary folder and checks
# its control fields and contents; then unpacks it elsewhere and runs the unpacked program.
#   $1 build folder
set -euo pipefail
build=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out" >/dev/null)
deb=$(ls "$work"/out/attention-lab_*.deb)
version=$("$build/app/attention-lab" --version | head -n 1)
version=${version#attention-lab }
[[ $(basename "$deb") == "attention-lab_${version}_"*.deb ]] || fail "package file name $(basename "$deb")"

field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = attention-lab ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version $(field Version) is not the program's $version"
[ "$(field Section)" = science ] || fail "Section: $(field Section)"
[[ $(field Maintainer) == *"<"*"@"*">" ]] || fail "Maintainer has no address: $(field Maintainer)"
[ -n "$(dpkg-deb --info "$deb" | sed -n '/^ Description:/,$p' | sed -n 2p)" ] || fail "no long description"
# From dpkg-shlibdeps: the libraries the binary links, with versions.
for lib in libc6 "libstdc\\+\\+6" libglfw3 libepoxy0 libfontconfig1 libgomp1; do
  field Depends | grep -Eq "(^|, )$lib \(>= " || fail "Depends lacks $lib: $(field Depends)"
done
field Depends | grep -Eq "(^|, )libgl1(,|$)" || fail "Depends lacks libgl1 (dlopened by libepoxy)"
field Recommends | grep -q fonts-noto-cjk || fail "Recommends lacks fonts-noto-cjk"

id=io.github.attentionlab.AttentionLab
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in ./usr/bin/attention-lab ./usr/share/applications/$id.desktop ./usr/share/metainfo/$id.metainfo.xml \
         ./usr/share/mime/packages/$id.xml ./usr/share/man/man1/attention-lab.1.gz \
         ./usr/share/icons/hicolor/48x48/apps/$id.png ./usr/share/attention-lab/shaders/heatmap.frag; do
  grep -qx -- "$f" <<<"$contents" || fail "the package lacks $f"
done
grep -v '^\./usr/' <<<"$contents" | grep -qv '^\./$' && fail "files outside /usr: $(grep -v '^\./usr/' <<<"$contents")"

dpkg-deb -x "$deb" "$work/root"
mkdir -p "$work/home"
env -i HOME="$work/home" PATH=/usr/bin:/bin "$work/root/usr/bin/attention-lab" trace default --summary | grep -q weights \
  || fail "the packaged program does not trace"
echo "package OK: $(basename "$deb")"
