#!/usr/bin/env bash
# Installs the build into a temporary prefix, moves the installed tree somewhere else and runs
# it there with a clean environment: trace, --list-presets and a screenshot must work, and the
# program must open nothing from the source or build tree (strace). Then every installed
# desktop file passes its validator.
#   $1 build folder   $2 source folder
set -euo pipefail
build=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/staged/usr" >/dev/null
mv "$work/staged" "$work/moved"  # the prefix it was installed for no longer exists
prefix=$work/moved/usr
id=io.github.attentionlab.AttentionLab

for f in bin/attention-lab share/applications/$id.desktop share/metainfo/$id.metainfo.xml \
         share/mime/packages/$id.xml share/man/man1/attention-lab.1.gz \
         share/icons/hicolor/scalable/apps/$id.svg \
         share/attention-lab/shaders/heatmap.frag share/attention-lab/assets/i18n/files.zh.json; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
for size in 16 32 48 64 128 256; do
  [ -f "$prefix/share/icons/hicolor/${size}x${size}/apps/$id.png" ] || fail "no ${size}x${size} icon"
done

# A clean environment: no variables from the build, a fresh home, the binary by its new path.
mkdir -p "$work/home"
run() { env -i HOME="$work/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
cd "$work"
version=$(run "$prefix/bin/attention-lab" --version | head -n 1)
[[ $version == "attention-lab "* ]] || fail "--version printed '$version'"
run "$prefix/bin/attention-lab" --list-presets | grep -q '^default ' || fail "--list-presets has no default"
run "$prefix/bin/attention-lab" trace default --summary | grep -q weights || fail "trace has no weights stage"

run strace -f -qq -e trace=open,openat -o "$work/opened.log" \
  xvfb-run -a -s "-screen 0 1280x800x24" \
  "$prefix/bin/attention-lab" screenshot default --stage weights --size 800x600 --out "$work/shot.png" --lang zh
[ -s "$work/shot.png" ] || fail "no screenshot"
grep -q "$prefix/share/attention-lab/shaders/heatmap.frag" "$work/opened.log" \
  || fail "the installed program did not read its shaders from $prefix/share/attention-lab"
if grep -E "\"($source_dir|$build)/" "$work/opened.log"; then
  fail "the installed program looked into the source or build tree (above)"
fi

# Validators: each fails the test on an error or warning.
desktop-file-validate "$prefix/share/applications/$id.desktop"
appstreamcli validate --no-net "$prefix/share/metainfo/$id.metainfo.xml"
grep -q "<release version=\"${version#attention-lab }\"" "$prefix/share/metainfo/$id.metainfo.xml" \
  || fail "AppStream release is not the program's version"
update-mime-database "$prefix/share/mime"
grep -q 'application/x-attention-lab-session:\*\.attention\.json' "$prefix/share/mime/globs2" \
  || fail "the MIME database has no *.attention.json glob"

# The man page is gzip'd as Debian policy asks (max compression, no name or time stamp in the
# header), renders without groff warnings and lists every command of --help.
man_gz=$prefix/share/man/man1/attention-lab.1.gz
gzip -t "$man_gz" || fail "the man page is not a valid gzip file"
[ "$(od -An -tu1 -j3 -N1 "$man_gz" | tr -d ' ')" = 0 ] || fail "the man page's gzip header keeps a name (use gzip -n)"
[ "$(od -An -tu4 -j4 -N4 "$man_gz" | tr -d ' ')" = 0 ] || fail "the man page's gzip header keeps a time stamp (use gzip -n)"
[ "$(od -An -tu1 -j8 -N1 "$man_gz" | tr -d ' ')" = 2 ] || fail "the man page is not compressed with -9"
page=$(MANWIDTH=100 man --warnings -l "$man_gz" 2>"$work/man.err")
[ ! -s "$work/man.err" ] || { cat "$work/man.err"; fail "groff warnings in the man page"; }
for word in trace export-torch screenshot --list-presets --help --version --summary --export-heatmap; do
  grep -q -- "$word" <<<"$page" || fail "the man page does not mention $word"
done
echo "install tree OK: $prefix"
