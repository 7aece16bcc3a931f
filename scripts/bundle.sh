#!/usr/bin/env bash
# Builds the app bundle with the Tauri CLI pinned in packaging/ (npm, a prebuilt binary).
#
#   scripts/bundle.sh [--debug] [--target TRIPLE] [--bundles LIST]
#
# First builds `tidings` and `tidings-mcp` and copies them to src-tauri/binaries/<name>-<triple>,
# where `bundle.externalBin` (src-tauri/tauri.bundle.json, passed only here) expects them, so a
# plain `cargo build` never needs them. --target universal-apple-darwin builds both Mac
# architectures and merges each binary with lipo. Default bundles: a .deb on Linux, the .app
# and a .dmg on macOS. Output: target/[TRIPLE/]{debug,release}/bundle/.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
target=""
bundles=""
while (($#)); do
  case "$1" in
    --debug) profile=debug ;;
    --target) target="${2:?--target needs a triple}"; shift ;;
    --bundles) bundles="${2:?--bundles needs a list, e.g. deb or app,dmg}"; shift ;;
    *) echo "bundle: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done

host=$(rustc -vV | sed -n 's/^host: //p')
triple=${target:-$host}
if [ -z "$bundles" ]; then
  case "$triple" in
    *-apple-darwin) bundles=app,dmg ;;
    *) bundles=deb ;;
  esac
fi

# The settings window (embedded at build time) and the Tauri CLI.
[ -f ui/dist/index.html ] || make ui
if [ ! -x packaging/node_modules/.bin/tauri ]; then
  (cd packaging && npm ci --no-audit --no-fund --loglevel=error)
fi

cargo_profile=()
[ "$profile" = release ] && cargo_profile=(--release)

# Builds both binaries for one triple and prints the directory they landed in.
build_sidecars() {
  local t=$1
  if [ "$t" = "$host" ]; then
    cargo build --locked "${cargo_profile[@]}" -p tidings-cli -p tidings-shim >&2
    echo "target/$profile"
  else
    cargo build --locked "${cargo_profile[@]}" --target "$t" -p tidings-cli -p tidings-shim >&2
    echo "target/$t/$profile"
  fi
}

mkdir -p src-tauri/binaries
if [ "$triple" = universal-apple-darwin ]; then
  arm=$(build_sidecars aarch64-apple-darwin)
  x86=$(build_sidecars x86_64-apple-darwin)
  for bin in tidings tidings-mcp; do
    lipo -create -output "src-tauri/binaries/$bin-$triple" "$arm/$bin" "$x86/$bin"
  done
else
  dir=$(build_sidecars "$triple")
  for bin in tidings tidings-mcp; do
    cp -f "$dir/$bin" "src-tauri/binaries/$bin-$triple"
  done
fi

args=(build --ci --bundles "$bundles" --config tauri.bundle.json)
[ "$profile" = debug ] && args+=(--debug)
[ -n "$target" ] && args+=(--target "$target")
echo "== tauri ${args[*]}" >&2
cd src-tauri && exec ../packaging/node_modules/.bin/tauri "${args[@]}"
