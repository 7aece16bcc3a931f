#!/usr/bin/env bash
# Type-checks the macOS side of the workspace's crates with `cargo check --target
# aarch64-apple-darwin`. No Apple SDK is here, so no C or Objective-C can be compiled for the
# target: SQLite is taken as linked, not bundled, for the check
# (LIBSQLITE3_SYS_USE_PKG_CONFIG; a check links nothing), and the server and the CLI are
# checked without `desktop-notifications` (its macOS backend compiles Objective-C). Where a
# build script must compile C, scripts/check-macos/no-cc stands in for the C compiler (a
# check never uses the object): for the server and the CLI, ring (webhook delivery's TLS,
# through tidings-webhook) compiles its C and assembly; for the app (tidings-app and
# tidings-settings), its macOS stack (tao, tray-icon, Tauri) needs objc2-exception-helper,
# whose build script compiles one Objective-C file. Needs ui/dist
# (tauri-build embeds it; `make ui`). Skips with a clear message when the target cannot be
# installed.
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-apple-darwin
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  # Bounded: a download that hangs must not hold up the test run.
  if ! timeout 180 rustup target add "$target" >/dev/null 2>&1; then
    echo "check-macos: skipped: the $target standard library is not installed and cannot be fetched" >&2
    exit 0
  fi
fi
echo "== cargo check --target $target (platform, shim, connect, core, server, cli)" >&2
cargo check --locked --target "$target" --all-targets -p tidings-platform -p tidings-shim \
  -p tidings-connect
CC_aarch64_apple_darwin="$PWD/scripts/check-macos/no-cc" LIBSQLITE3_SYS_USE_PKG_CONFIG=1 \
  cargo check --locked --target "$target" --all-targets \
  -p tidings-core -p tidings-server -p tidings-cli --no-default-features
echo "== cargo check --target $target (the app: tidings-app, tidings-settings)" >&2
CC_aarch64_apple_darwin="$PWD/scripts/check-macos/no-cc" LIBSQLITE3_SYS_USE_PKG_CONFIG=1 \
  cargo check --locked --target "$target" --all-targets -p tidings-app
