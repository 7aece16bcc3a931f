#!/usr/bin/env bash
# Installs the pinned host CLIs of integrations/host-clis (Claude Code, Codex, Gemini CLI) with
# npm ci in DIR, beside the scripted model API, and prints DIR. Used by the Rust test
# crates/cli/tests/daemon/real_hosts/; reinstalls only when the lockfile changed.
# Usage: scripts/host-clis.sh DIR
set -euo pipefail
dir=${1:?usage: host-clis.sh DIR}
src="$(cd "$(dirname "$0")/.." && pwd)/integrations/host-clis"
# Codex's launcher, Gemini CLI (which asks for 20) and the scripted model API run on node;
# Claude Code is a native binary.
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  found=$(node --version 2>/dev/null || echo none)
  echo "host-clis.sh: node 20 or later is needed (found $found); get it from nodesource or nvm" >&2
  exit 1
fi
mkdir -p "$dir"
if [ ! -d "$dir/node_modules" ] || ! cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  # Claude Code's postinstall puts its native binary in place of bin/claude.exe. A failed
  # install drops the lockfile copy, so the next run installs again.
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
    rm -f "$dir/package-lock.json"
    exit 1
  }
fi
# A missing platform package or a skipped postinstall leaves a stub: say so here, not in the test.
for cli in claude codex gemini; do
  if ! "$dir/node_modules/.bin/$cli" --version >/dev/null 2>&1; then
    echo "host-clis.sh: $dir/node_modules/.bin/$cli --version fails; remove $dir and run again" >&2
    exit 1
  fi
done
cp "$src/scripted_model_api.mjs" "$dir/"
echo "$dir"
