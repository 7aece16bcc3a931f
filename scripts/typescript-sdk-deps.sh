#!/usr/bin/env bash
# Lays out examples/typescript with its pinned TypeScript MCP SDKs installed (npm ci) in DIR,
# and prints DIR. Used by crates/cli/tests/daemon/sdk_clients.rs; reinstalls only when the
# lockfile changed. The script is copied beside node_modules because node resolves packages
# from the script's own directory. Usage: scripts/typescript-sdk-deps.sh DIR
set -euo pipefail
dir=${1:?usage: typescript-sdk-deps.sh DIR}
src="$(cd "$(dirname "$0")/.." && pwd)/examples/typescript"
# The v2 client (@modelcontextprotocol/client) needs node 20; say so rather than fail inside it.
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "typescript-sdk-deps.sh: node 20 or later is needed (found $(node --version 2>/dev/null || echo none)); install it from nodesource or nvm" >&2
  exit 1
fi
mkdir -p "$dir"
if [ ! -d "$dir/node_modules" ] || ! cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
cp "$src"/*.mjs "$dir/"
echo "$dir"
