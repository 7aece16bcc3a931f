#!/usr/bin/env bash
# Proves the bundle on Linux (issue 13 item 2): builds the .deb with `scripts/bundle.sh --debug`
# (reusing the test build's debug artifacts), then checks with dpkg-deb that it holds the app
# (the tray and engine, and its settings window) and both binaries, and that all four
# packaged executables run and print "<version> (<commit>)".
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bundle.sh --debug --bundles deb

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
deb=$(ls target/debug/bundle/deb/Tidings_"${version}"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "check-bundle: no target/debug/bundle/deb/Tidings_${version}_*.deb" >&2; exit 1; }

contents=$(dpkg-deb -c "$deb")
for path in usr/bin/tidings-app usr/bin/tidings-settings usr/bin/tidings usr/bin/tidings-mcp; do
  grep -Eq " (\./)?$path\$" <<<"$contents" || { echo "check-bundle: $deb lacks /$path" >&2; exit 1; }
done

unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
for bin in tidings-app tidings-settings tidings tidings-mcp; do
  # --version is answered before any window or display is touched.
  out=$("$unpacked/usr/bin/$bin" --version)
  re="^$bin ${version//./\\.} \\(([0-9a-f]+|unknown)\\)\$"
  [[ $out =~ $re ]] ||
    { echo "check-bundle: packaged $bin --version printed '$out'" >&2; exit 1; }
done
echo "check-bundle: $deb holds tidings-app, tidings-settings, tidings and tidings-mcp; all four run"
