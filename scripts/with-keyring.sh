#!/bin/sh
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring-daemon (the
# Secret Service), in a throwaway HOME and XDG dirs, with TIDINGS_TEST_SECRET_SERVICE=1 so the
# real keychain tests run instead of printing their skip line. Installs nothing: it needs
# dbus-run-session and gnome-keyring-daemon (apt: dbus dbus-user-session gnome-keyring).
#
#   scripts/with-keyring.sh cargo test -p tidings-platform keychain
set -eu

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 64
fi
for tool in dbus-run-session gnome-keyring-daemon; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$0: $tool not found; install: apt-get install -y dbus dbus-user-session gnome-keyring" >&2
        exit 69
    fi
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tidings-keyring.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
mkdir -p "$scratch/home" "$scratch/data" "$scratch/config" "$scratch/cache" "$scratch/run"
chmod 700 "$scratch/run"

# Keep cargo and rustup where they were: only the keyring's own files go to the scratch HOME.
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export CARGO_HOME RUSTUP_HOME
HOME="$scratch/home" XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config" \
XDG_CACHE_HOME="$scratch/cache" XDG_RUNTIME_DIR="$scratch/run" \
dbus-run-session -- sh -c '
    # The password creates (first run) and unlocks the login keyring in the scratch HOME.
    eval "$(printf "tidings-test" | gnome-keyring-daemon --unlock --components=secrets)"
    export GNOME_KEYRING_CONTROL
    export TIDINGS_TEST_SECRET_SERVICE=1
    exec "$@"
' with-keyring "$@"
