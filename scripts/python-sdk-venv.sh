#!/usr/bin/env bash
# Creates (or reuses) a venv with the pinned Python MCP SDK for examples/python, and prints
# its python. Used by the Rust test crates/cli/tests/daemon/sdk_clients.rs; reinstalls only when
# examples/python/requirements.txt changed. Usage: scripts/python-sdk-venv.sh DIR
set -euo pipefail
venv=${1:?usage: python-sdk-venv.sh DIR}
req="$(cd "$(dirname "$0")/.." && pwd)/examples/python/requirements.txt"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/.requirements"; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  cp "$req" "$venv/.requirements"
fi
echo "$venv/bin/python"
