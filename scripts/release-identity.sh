#!/usr/bin/env bash
# Refuses a release whose code signature would cost its users Full Disk Access: macOS keeps the
# grant for the app's designated requirement (its bundle identifier and Developer ID team), so
# the new app's requirement must be the previous release's. Used by release.yml; CODESIGN
# overrides the codesign binary (scripts/check-release-feed.sh passes a fake one on Linux).
set -euo pipefail

usage() {
  echo "usage: scripts/release-identity.sh PREVIOUS_APP NEW_APP  (two .app bundles)" >&2
  exit 2
}

# One line for GitHub's log (an annotation) and one for a terminal.
refuse() {
  echo "::error title=$1::$2"
  echo "release-identity: $2" >&2
  exit 1
}

[ $# -eq 2 ] || usage
codesign=${CODESIGN:-codesign}

# Sets the variable named $2 to the designated requirement of the app $1.
requirement() {
  local app=$1 out req
  [ -d "$app" ] || refuse "Not an app" "$app is not an app bundle (a folder such as Tidings.app)"
  out=$("$codesign" -d -r- "$app" 2>&1) ||
    refuse "Unreadable signature" "$codesign -d -r- $app failed: ${out//$'\n'/ }"
  req=$(sed -n 's/^designated => //p' <<<"$out" | head -1)
  [ -n "$req" ] ||
    refuse "Not signed" "$app has no designated requirement (is it code-signed?): ${out//$'\n'/ }"
  printf -v "$2" '%s' "$req"
}

previous="" new=""
requirement "$1" previous
requirement "$2" new

if [ "$previous" != "$new" ]; then
  refuse "Signing identity changed" "$2 is signed for '$new' but the previous release $1 for '$previous': users would lose Full Disk Access on updating (macOS keeps the grant for the previous requirement). Sign with the previous release's Developer ID and bundle identifier."
fi
echo "release-identity: same designated requirement as the previous release: $new" >&2
