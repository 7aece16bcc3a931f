#!/usr/bin/env bash
# The project's one test command (README, `make test`, `.ci/run`): installs what the tests
# need, then checks formatting, lints with clippy and runs every test in the workspace, the
# keychain tests inside a private D-Bus session with an unlocked gnome-keyring; then the
# packaging checks: actionlint and the cask (lint-packaging.sh), the .deb (check-bundle.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -n "${TIDINGS_SKIP_INSTALL:-}" ] || scripts/install-deps.sh

# The settings window's bundle (ui/dist), which the app embeds at build time.
if [ ! -f ui/dist/index.html ] && [ -f ui/package.json ]; then
  echo "== make ui" >&2
  make ui
fi

echo "== cargo fmt --check" >&2
cargo fmt --all --check

echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets --locked -- -D warnings

# No crate's modules import each other in a cycle.
echo "== module cycles" >&2
python3 scripts/module-cycles.py

scripts/check-macos.sh

# actionlint on both workflows, `ruby -c` on the Homebrew cask.
scripts/lint-packaging.sh

echo "== cargo test" >&2
if [ -x scripts/with-keyring.sh ]; then
  scripts/with-keyring.sh cargo test --workspace --locked
else
  cargo test --workspace --locked
fi

echo "== the menu-bar app end to end" >&2
scripts/app-e2e.sh

# The .deb from `tauri build --debug`, which reuses the test build's artifacts: it must hold
# the app and both binaries, and they must run.
echo "== the bundle (.deb)" >&2
scripts/check-bundle.sh
