#!/usr/bin/env bash
# Checks the release workflow's two scripts on Linux (run by lint-packaging.sh, so `make test`
# runs it): release-feed.sh signs with a throwaway key and writes a feed of the shape Tauri's
# updater reads, and refuses a key that is not the app's and bad arguments; release-identity.sh
# passes equal designated requirements and refuses different ones (a fake codesign).
set -euo pipefail
cd "$(dirname "$0")/.."

tauri=packaging/node_modules/.bin/tauri
[ -x "$tauri" ] ||
  { echo "check-release-feed: $tauri is missing: run scripts/install-deps.sh (npm ci in packaging/)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "check-release-feed: FAIL: $*" >&2
  failures=$((failures + 1))
}

# Runs "$@" and expects it to fail with $2 in its output; $1 names the case.
expect_refusal() {
  local what=$1 snippet=$2 out
  shift 2
  if out=$("$@" 2>&1); then
    fail "$what: succeeded, expected a refusal"
  elif ! grep -qF -- "$snippet" <<<"$out"; then
    fail "$what: the refusal does not say '$snippet': $out"
  fi
}

# Two throwaway keys without a password; key 1 plays the app's key.
for k in 1 2; do
  "$tauri" signer generate --ci -p "" -w "$tmp/key$k" >/dev/null 2>&1
done
pub1=$(cat "$tmp/key1.pub")
key1=$(cat "$tmp/key1")
key2=$(cat "$tmp/key2")
export TAURI_SIGNING_PRIVATE_KEY_PASSWORD=""

mkdir "$tmp/app"
echo "not really an app" >"$tmp/app/payload"
tar -czf "$tmp/Tidings-0.2.0.app.tar.gz" -C "$tmp" app
archive="$tmp/Tidings-0.2.0.app.tar.gz"
printf '### Fixed\n\n- The menu says when an update is ready.\n' >"$tmp/notes.md"
printf '# Changelog\n\n## [Unreleased]\n\n- later\n\n## [0.2.0] - 2026-12-01\n\n- from the changelog\n\n## [0.1.0]\n\n- older\n' \
  >"$tmp/CHANGELOG.md"

# The feed's shape, the signature's key id and the version bound into the signature.
validate() {
  python3 - "$@" <<'PY'
import base64, datetime, json, re, sys

feed_path, sig_path, pub_b64, version, url, notes, *platforms = sys.argv[1:]
feed = json.load(open(feed_path, encoding="utf-8"))
problems = []
if set(feed) != {"version", "notes", "pub_date", "platforms"}:
    problems.append(f"keys {sorted(feed)}")
if feed.get("version") != version:
    problems.append(f"version {feed.get('version')!r}")
if feed.get("notes") != notes:
    problems.append(f"notes {feed.get('notes')!r}, expected {notes!r}")
pub_date = feed.get("pub_date", "")
if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", pub_date):
    problems.append(f"pub_date {pub_date!r} is not RFC 3339")
else:
    datetime.datetime.fromisoformat(pub_date.replace("Z", "+00:00"))
sig_text = open(sig_path, encoding="utf-8").read().strip()
if sorted(feed.get("platforms", {})) != sorted(platforms):
    problems.append(f"platforms {sorted(feed.get('platforms', {}))}, expected {sorted(platforms)}")
for name, entry in feed.get("platforms", {}).items():
    if set(entry) != {"signature", "url"}:
        problems.append(f"{name}: keys {sorted(entry)}")
    if entry.get("url") != url:
        problems.append(f"{name}: url {entry.get('url')!r}")
    if entry.get("signature") != sig_text:
        problems.append(f"{name}: the signature is not the .sig file's content")
sig = base64.b64decode(sig_text).decode().splitlines()
pub = base64.b64decode(pub_b64).decode().splitlines()
sig_raw, pub_raw = base64.b64decode(sig[1]), base64.b64decode(pub[1])
if pub_raw[:2] != b"Ed" or sig_raw[:2] not in (b"Ed", b"ED"):
    problems.append("the key or the signature is not Ed25519 minisign")
if sig_raw[2:10] != pub_raw[2:10]:
    problems.append("the signature's key id is not the public key's")
if f"version:{version}" not in sig[2].split("\t"):
    problems.append(f"the trusted comment {sig[2]!r} lacks version:{version}")
if problems:
    print("; ".join(problems))
    sys.exit(1)
PY
}

echo "== release-feed.sh: a feed for one platform on 127.0.0.1 (the e2e's way)" >&2
url="http://127.0.0.1:8123/Tidings-0.2.0.app.tar.gz"
if TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version 0.2.0 --archive "$archive" \
  --url "$url" --out "$tmp/latest.json" --notes "$tmp/notes.md" --platform linux-x86_64 \
  --pubkey "$pub1" 2>"$tmp/err"; then
  out=$(validate "$tmp/latest.json" "$archive.sig" "$pub1" 0.2.0 "$url" \
    "$(cat "$tmp/notes.md")" linux-x86_64) || fail "the one-platform feed: $out"
else
  fail "release-feed.sh refused a good key: $(cat "$tmp/err")"
fi

echo "== release-feed.sh: the default platforms and the changelog's notes" >&2
url="https://github.com/tidings-dev/tidings/releases/download/v0.2.0/Tidings-0.2.0.app.tar.gz"
if TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version 0.2.0 --archive "$archive" \
  --url "$url" --out "$tmp/default.json" --changelog "$tmp/CHANGELOG.md" --pubkey "$pub1" 2>"$tmp/err"; then
  out=$(validate "$tmp/default.json" "$archive.sig" "$pub1" 0.2.0 "$url" "- from the changelog" \
    darwin-aarch64 darwin-x86_64) || fail "the default feed: $out"
else
  fail "release-feed.sh with the default platforms: $(cat "$tmp/err")"
fi

echo "== release-feed.sh: refusals" >&2
rm -f "$archive.sig"
feed_args=(--version 0.2.0 --archive "$archive" --url "$url" --notes "$tmp/notes.md")
# A throwaway key is not the app's (tauri.conf.json's key id 0341E9528739D6B5).
expect_refusal "a key that is not the app's" "but the app trusts key 0341E9528739D6B5" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh "${feed_args[@]}" --out "$tmp/refused.json"
expect_refusal "a key that is not --pubkey's" "no installed copy would accept this update" \
  env TAURI_SIGNING_PRIVATE_KEY="$key2" scripts/release-feed.sh "${feed_args[@]}" --out "$tmp/refused.json" \
  --pubkey "$pub1"
[ ! -e "$tmp/refused.json" ] || fail "a refused signature still wrote the feed"
[ ! -e "$archive.sig" ] || fail "a refused signature left $archive.sig behind"
expect_refusal "no signing key" "set TAURI_SIGNING_PRIVATE_KEY" \
  env -u TAURI_SIGNING_PRIVATE_KEY scripts/release-feed.sh "${feed_args[@]}" --out "$tmp/x.json"
expect_refusal "a plain-http URL off this machine" "must be an https:// URL" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version 0.2.0 --archive "$archive" \
  --url http://example.com/a.tar.gz --notes "$tmp/notes.md" --out "$tmp/x.json"
expect_refusal "a version with a v" "is not a semver version" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version v0.2.0 --archive "$archive" \
  --url "$url" --notes "$tmp/notes.md" --out "$tmp/x.json"
expect_refusal "no notes for the version" "add a section ## [0.3.0]" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version 0.3.0 --archive "$archive" \
  --url "$url" --changelog "$tmp/CHANGELOG.md" --out "$tmp/x.json" --pubkey "$pub1"
expect_refusal "an unknown platform" "is not an updater platform key" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh "${feed_args[@]}" --out "$tmp/x.json" \
  --platform macos-arm64
expect_refusal "a missing archive" "is not a non-empty file" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh --version 0.2.0 --archive "$tmp/none.tar.gz" \
  --url "$url" --notes "$tmp/notes.md" --out "$tmp/x.json"
expect_refusal "a public key that is not one" "is not a minisign public key" \
  env TAURI_SIGNING_PRIVATE_KEY="$key1" scripts/release-feed.sh "${feed_args[@]}" --out "$tmp/x.json" \
  --pubkey "$(printf 'hello\nworld\n' | base64 | tr -d '\n')"
[ ! -e "$tmp/x.json" ] || fail "a refused run wrote a feed"

echo "== release-identity.sh with a fake codesign" >&2
# The fake prints what `codesign -d -r- APP` prints: the executable on stderr, the designated
# requirement on stdout; an app without a requirement file is "not signed at all".
cat >"$tmp/codesign" <<'SH'
#!/usr/bin/env bash
[ "$1 $2" = "-d -r-" ] || { echo "fake codesign: unexpected arguments $*" >&2; exit 2; }
echo "Executable=$3/Contents/MacOS/tidings-app" >&2
[ -f "$3/requirement" ] || { echo "$3: code object is not signed at all" >&2; exit 1; }
echo "designated => $(cat "$3/requirement")"
SH
chmod +x "$tmp/codesign"
team='identifier "dev.tidings.Tidings" and anchor apple generic and certificate leaf[subject.OU] = "ABCDE12345"'
other='identifier "dev.tidings.Tidings" and anchor apple generic and certificate leaf[subject.OU] = "ZZZZZ99999"'
for app in previous same other unsigned; do mkdir -p "$tmp/$app/Tidings.app"; done
echo "$team" >"$tmp/previous/Tidings.app/requirement"
echo "$team" >"$tmp/same/Tidings.app/requirement"
echo "$other" >"$tmp/other/Tidings.app/requirement"
CODESIGN="$tmp/codesign" scripts/release-identity.sh "$tmp/previous/Tidings.app" "$tmp/same/Tidings.app" \
  2>"$tmp/err" >/dev/null || fail "release-identity.sh refused the same requirement: $(cat "$tmp/err")"
expect_refusal "a different team" "would lose Full Disk Access" \
  env CODESIGN="$tmp/codesign" scripts/release-identity.sh "$tmp/previous/Tidings.app" "$tmp/other/Tidings.app"
expect_refusal "the annotation" "::error title=Signing identity changed::" \
  env CODESIGN="$tmp/codesign" scripts/release-identity.sh "$tmp/previous/Tidings.app" "$tmp/other/Tidings.app"
expect_refusal "an unsigned app" "code object is not signed at all" \
  env CODESIGN="$tmp/codesign" scripts/release-identity.sh "$tmp/previous/Tidings.app" "$tmp/unsigned/Tidings.app"
expect_refusal "a missing app" "is not an app bundle" \
  env CODESIGN="$tmp/codesign" scripts/release-identity.sh "$tmp/nowhere/Tidings.app" "$tmp/same/Tidings.app"

if ((failures)); then
  echo "check-release-feed: $failures failure(s)" >&2
  exit 1
fi
echo "check-release-feed: ok" >&2
