#!/usr/bin/env bash
# The settings window's tests (ui/): installs the pinned npm packages with `npm ci` (the npm
# registry), builds ui/dist, and drives it in Debian's headless chromium against a fake
# bridge (ui/tests/). With --screenshots, regenerates docs/screenshots/ instead of testing
# (`make screenshots`). Installs nothing else: scripts/install-deps.sh brings node, npm and
# chromium. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../ui"

need() { command -v "$1" >/dev/null || { echo "ui-test: $1 is missing: run scripts/install-deps.sh (apt: $2)" >&2; exit 1; }; }
need node nodejs
need npm npm
chromium="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "ui-test: $chromium is missing: run scripts/install-deps.sh (apt: chromium) or set CHROMIUM" >&2; exit 1; }
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 18 ] || { echo "ui-test: node $(node --version) is too old: ui/ needs node 18 or newer" >&2; exit 1; }

echo "== ui: npm ci" >&2
npm ci --no-audit --no-fund --loglevel=error
echo "== ui: build" >&2
npm run --silent build
if [ "${1:-}" = "--screenshots" ]; then
  echo "== ui: screenshots" >&2
  npm run --silent screenshots
else
  echo "== ui: browser tests" >&2
  npm test
fi
