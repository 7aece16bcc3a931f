#!/usr/bin/env bash
# Signs an updater archive with the pinned Tauri CLI and writes the feed Tauri's updater plugin
# reads (latest.json). Refuses a signature made with a key other than the app's, so a release
# can never publish an update its users' copies would reject. docs/updates-feed.md says more.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/release-feed.sh --version V --archive PATH --url URL --out FILE
                               [--notes FILE] [--changelog FILE] [--platform P]... [--pubkey B64]

  --version V       the release's version (semver, no leading v); bound into the signature
  --archive PATH    the updater archive to sign (Tidings-V.app.tar.gz); PATH.sig is written
  --url URL         where the archive is downloaded from (https://, or http:// on loopback)
  --out FILE        the feed to write (latest.json)
  --notes FILE      the release notes; default: CHANGELOG.md's section ## [V]
  --changelog FILE  the changelog to take the notes from (default: CHANGELOG.md)
  --platform P      a platform key such as darwin-aarch64 (repeatable); default:
                    darwin-aarch64 and darwin-x86_64 (one universal archive)
  --pubkey B64      the public key the signature must match (base64 of the minisign .pub
                    file); default: plugins.updater.pubkey in src-tauri/tauri.conf.json

The private key comes from TAURI_SIGNING_PRIVATE_KEY (the key file's text) or
TAURI_SIGNING_PRIVATE_KEY_PATH, its password from TAURI_SIGNING_PRIVATE_KEY_PASSWORD.
EOF
}

die() {
  echo "release-feed: $*" >&2
  exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
tauri="$root/packaging/node_modules/.bin/tauri"

version="" archive="" url="" out="" notes="" changelog="$root/CHANGELOG.md" pubkey=""
platforms=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --version | --archive | --url | --out | --notes | --changelog | --platform | --pubkey)
      [ $# -ge 2 ] || die "$1 needs a value (--help lists the arguments)"
      case "$1" in
        --version) version=$2 ;;
        --archive) archive=$2 ;;
        --url) url=$2 ;;
        --out) out=$2 ;;
        --notes) notes=$2 ;;
        --changelog) changelog=$2 ;;
        --platform) platforms+=("$2") ;;
        --pubkey) pubkey=$2 ;;
      esac
      shift 2
      ;;
    *) die "unknown argument '$1' (--help lists the arguments)" ;;
  esac
done

for required in version archive url out; do
  [ -n "${!required}" ] || die "--$required is required (--help lists the arguments)"
done

semver='^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
[[ $version =~ $semver ]] ||
  die "--version '$version' is not a semver version such as 0.2.0 (no leading v)"
[[ -f $archive && -s $archive ]] ||
  die "--archive $archive is not a non-empty file: make the updater archive first (tar of the stapled app)"
# The updater plugin downloads over https only, unless the app allows insecure transport;
# plain http is accepted for a feed on this machine (tests, a fork trying its feed locally).
loopback='^http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]+)?/[^[:space:]]*$'
[[ $url =~ ^https://[^[:space:]/]+/[^[:space:]]*$ || $url =~ $loopback ]] ||
  die "--url '$url' must be an https:// URL (or http:// on 127.0.0.1, localhost or [::1])"
[ -d "$(dirname "$out")" ] || die "--out $out: the folder $(dirname "$out") does not exist"

((${#platforms[@]})) || platforms=(darwin-aarch64 darwin-x86_64)
platform_re='^(darwin|linux|windows)-(x86_64|aarch64|i686|armv7|riscv64)(-[a-z]+)?$'
for p in "${platforms[@]}"; do
  [[ $p =~ $platform_re ]] ||
    die "--platform '$p' is not an updater platform key such as darwin-aarch64 or linux-x86_64 (OS-ARCH)"
done

notes_file=$(mktemp)
trap 'rm -f "$notes_file"' EXIT
if [ -n "$notes" ]; then
  [[ -f $notes && -r $notes ]] || die "--notes $notes is not a readable file"
  cp "$notes" "$notes_file"
else
  [ -f "$changelog" ] || die "no --notes and the changelog $changelog does not exist: pass --notes FILE"
  # The same section release.yml takes the GitHub release's notes from.
  awk -v v="$version" '/^## \[/ { on = index($0, "[" v "]") > 0; next } on' "$changelog" >"$notes_file"
fi
grep -q '[^[:space:]]' "$notes_file" ||
  die "the notes for $version are empty: add a section ## [$version] to $changelog or pass --notes FILE"

if [ -z "$pubkey" ]; then
  conf="$root/src-tauri/tauri.conf.json"
  pubkey=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["plugins"]["updater"]["pubkey"])' \
    "$conf" 2>/dev/null) ||
    die "no --pubkey and $conf has no plugins.updater.pubkey: put the public key there or pass --pubkey"
fi

[ -n "${TAURI_SIGNING_PRIVATE_KEY:-}${TAURI_SIGNING_PRIVATE_KEY_PATH:-}" ] ||
  die "set TAURI_SIGNING_PRIVATE_KEY to the private key's text (the secret of that name in release.yml; 'tauri signer generate' makes one)"
[ -x "$tauri" ] || die "$tauri is missing: run scripts/install-deps.sh (npm ci in packaging/)"

sig="$archive.sig"
rm -f "$sig"
log=$(mktemp)
trap 'rm -f "$notes_file" "$log"' EXIT
# --app-version binds the version into the signature's trusted comment, so a feed cannot pair
# this archive with another version number.
if ! "$tauri" signer sign --app-version "$version" "$archive" </dev/null >"$log" 2>&1; then
  cat "$log" >&2
  die "tauri signer sign failed: check TAURI_SIGNING_PRIVATE_KEY and TAURI_SIGNING_PRIVATE_KEY_PASSWORD"
fi
[ -s "$sig" ] || die "tauri signer sign wrote no $sig"

# Checks the signature against the public key, then writes the feed (atomically, so a refusal
# leaves no feed behind); on a refusal the .sig goes too, so it is never attached by mistake.
if ! python3 - "$pubkey" "$sig" "$version" "$url" "$out" "$notes_file" "${platforms[@]}" <<'PY'; then
import base64, binascii, datetime, json, os, sys

pubkey_b64, sig_path, version, url, out, notes_path, *platforms = sys.argv[1:]


def fail(message):
    print(f"release-feed: {message}", file=sys.stderr)
    sys.exit(1)


def unbase64(text, what):
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        fail(f"{what} is not base64")


def minisign_text(b64, what):
    try:
        return unbase64(b64, what).decode("utf-8").splitlines()
    except UnicodeDecodeError:
        fail(f"{what} is not base64 of a minisign text file")


def key_id(raw):
    # minisign prints the 8-byte key id as a little-endian number.
    return raw[2:10][::-1].hex().upper()


pub = minisign_text(pubkey_b64, "the public key")
if len(pub) < 2 or not pub[0].startswith("untrusted comment:"):
    fail("the public key is not a minisign public key (base64 of the .pub file 'tauri signer generate' writes)")
pub_raw = unbase64(pub[1], "the public key's key line")
if len(pub_raw) != 42 or pub_raw[:2] != b"Ed":
    fail("the public key's key line is not an Ed25519 minisign key (2 bytes 'Ed', key id, key)")

sig_text = open(sig_path, encoding="utf-8").read().strip()
sig = minisign_text(sig_text, f"{sig_path}")
if len(sig) < 4 or not sig[2].startswith("trusted comment: "):
    fail(f"{sig_path} is not a minisign signature")
sig_raw = unbase64(sig[1], "the signature line")
if len(sig_raw) != 74 or sig_raw[:2] not in (b"Ed", b"ED"):
    fail(f"{sig_path}: the signature line is not an Ed25519 minisign signature")

if sig_raw[2:10] != pub_raw[2:10]:
    fail(
        f"the archive was signed with key {key_id(sig_raw)} but the app trusts key {key_id(pub_raw)}: "
        "no installed copy would accept this update. Set TAURI_SIGNING_PRIVATE_KEY to the private "
        "key of plugins.updater.pubkey in src-tauri/tauri.conf.json (or pass that key's --pubkey)"
    )
fields = sig[2][len("trusted comment: "):].split("\t")
if f"version:{version}" not in fields:
    fail(f"the signature's trusted comment ({sig[2]}) does not carry version:{version}: the Tauri CLI must support --app-version (packaging/package.json)")

feed = {
    "version": version,
    "notes": open(notes_path, encoding="utf-8").read().strip(),
    "pub_date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "platforms": {p: {"signature": sig_text, "url": url} for p in platforms},
}
tmp = out + ".tmp"
with open(tmp, "w", encoding="utf-8") as f:
    json.dump(feed, f, indent=2, ensure_ascii=False)
    f.write("\n")
os.replace(tmp, out)
print(f"release-feed: wrote {out}: {version} for {', '.join(platforms)}, signed by key {key_id(sig_raw)}", file=sys.stderr)
PY
  rm -f "$sig"
  exit 1
fi
