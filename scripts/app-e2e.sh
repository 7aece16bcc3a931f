#!/usr/bin/env bash
# End-to-end test of the menu-bar app (issue 11): the real `tidings-app` debug binary on demo
# stores, under a private D-Bus session, Xvfb and trayer (an XEmbed tray host).
# Checks: a data directory others can enter is refused with its fix, exit 1
# and no panic; the tray icon appears; the menu opens (screenshot); a second
# launch hands over to the first and opens the settings window, a child process of its own
# that maps WebKitGTK while the app does not, whose page asks the app for its state and
# paints it; driven by the keyboard (xdotool), the window gets past the
# first-run sheet, and turning Mail off in its Event types section ends a client's
# `mail.received` stream over the socket with `terminated` and is saved in settings.toml, and
# turning it on again shows in `tidings status`; turning Mail off in the menu ends a stream
# the same way; Pause all pauses the engine; killing the window's process leaves the engine
# serving and Settings… in the menu starts a new one; Quit exits 0, removes both sockets and
# ends the window's process; the app's
# log file (under a temporary XDG state home) holds its info lines, no address, and the one
# warning for the missing notification server the first client's notice met. Last, with
# trayer stopped (no tray host at all), a start that is not a first run finds its icon hidden
# and opens Settings by itself, whose page says so; SIGTERM quits it. Then, on a demo home of
# its own whose settings allow one Messages sender and no group, the window's sender picker
# adds the Contacts group Family (keyboard only); a message from a member reaches a running
# `tidings tail` with her name; taken out of the group in Contacts, her next message is not
# delivered while a later one from the still-allowed sender is. Last, on a demo home whose
# settings say `[agents] new = "ask"`, a `tidings tail` with no grant waits while the window
# shows its question above every section; Allow (keyboard) saves its grant, the tail gets a
# live mail.received, and the Clients section lists the agent (TIDINGS_E2E_ONLY=agents runs
# just this; with SHOTS_DIR the two shots are kept as app-agents-*-$THEME.png).
# Updates: a feed on 127.0.0.1 made by scripts/release-feed.sh (the release's own step) with a
# throwaway key the app is given; the demo never asks it by itself (its daily check is off);
# Check for Updates… in the menu downloads, checks and keeps 9.9.9 and the menu says so; Install
# and Restart checks the kept archive again and, on Linux, stops there (said in the log); the
# feed re-signed with another key is refused and said so.
#
# Every wait polls for a condition with a generous bound; nothing asserts on timing.
# Env: SHOTS_DIR=DIR also writes the menu's screenshot there as menu-$THEME.png (make
# screenshots); THEME=dark runs GTK's dark theme. Artifacts (logs, screenshots) go to
# target/app-e2e/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# A private session bus: appindicator, single-instance and the keychain all want one.
if [ -z "${TIDINGS_E2E_IN_BUS:-}" ]; then
  exec env TIDINGS_E2E_IN_BUS=1 dbus-run-session -- "$0" "$@"
fi

theme=${THEME:-light}
[ "$theme" = dark ] && export GTK_THEME=Adwaita:dark
out=$root/target/app-e2e/$theme
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d /tmp/tidings-e2e.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "app-e2e: FAIL: $*" >&2
  echo "app-e2e: the app's log (target/app-e2e/$theme/app.log):" >&2
  tail -n 40 "$out/app.log" >&2 || true
  exit 1
}
# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, else fails naming WHAT.
wait_for() {
  local bound=$1 what=$2; shift 2
  local deadline=$((SECONDS + bound))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "no $what within ${bound}s"
    sleep 0.2
  done
}

echo "== app-e2e ($theme): building" >&2
cargo build --locked -q -p tidings-app -p tidings-cli -p tidings-fixtures
app=$root/target/debug/tidings-app
cli=$root/target/debug/tidings
fixtures=$root/target/debug/tidings-fixtures
for tool in Xvfb trayer xdotool xwininfo import; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/install-deps.sh"
done

# A free display, chosen by Xvfb itself.
Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$work/display" 2>"$out/xvfb.log" &
pids+=($!)
wait_for 20 "Xvfb display" test -s "$work/display"
export DISPLAY=:$(head -n1 "$work/display")

trayer --edge top --align right --widthtype pixel --width 120 --height 32 \
  --heighttype pixel --transparent false --tint 0xe8e8e8 --SetDockType false 2>"$out/trayer.log" &
trayer_pid=$!
pids+=($trayer_pid)
wait_for 20 "trayer window" xdotool search --onlyvisible --name '^panel$'
panel=$(xdotool search --onlyvisible --name '^panel$' | head -n1)

demo=$work/demo
# The platform's log directory resolves under this temporary XDG state home.
state=$work/state
sock=$demo/tidings.sock
app_pid=
settings=
tail_pid=
window_pid=

# ---- helpers -------------------------------------------------------------------------------

# The tray icon: a viewable window of a real size nested in trayer's panel (the XEmbed socket
# trayer made for the app's icon).
icon_window() {
  local w
  for w in $(xwininfo -tree -id "$panel" | awk '/^ +0x/ && $0 ~ / [0-9]+x[0-9]+\+/ {
      for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+/) { split($i, g, /[x+]/);
        if (g[1] >= 8 && g[2] >= 8) print $1 } }'); do
    if xwininfo -id "$w" | grep -q 'Map State: IsViewable'; then echo "$w"; return 0; fi
  done
  return 1
}
# GTK's popup menu: a viewable override-redirect window of ours.
menu_window() {
  local w
  for w in $(xdotool search --onlyvisible --classname '^tidings-app$' 2>/dev/null); do
    xwininfo -id "$w" | grep -q 'Override Redirect State: yes' && { echo "$w"; return 0; }
  done
  return 1
}
menu_closed() { ! menu_window; }
# Opens the menu by clicking the icon; waits for the popup.
open_menu() {
  xdotool mousemove --window "$icon" 8 8 click 1
  wait_for 20 "menu after clicking the tray icon" menu_window
}
# proc_gone PID: no such process, or only its exit status is left (a zombie).
proc_gone() {
  local stat
  stat=$(ps -o stat= -p "$1") || return 0
  [[ $stat == Z* ]]
}
streams() { "$cli" status --socket "$sock" --json | grep -Eq '"streams": *[1-9]'; }
# type_enabled TYPE true|false: what `tidings status --json` says is configured for TYPE.
type_enabled() {
  "$cli" status --socket "$sock" --json | python3 -c '
import json, sys
state = json.load(sys.stdin)
sys.exit(0 if [t["enabled"] for t in state["types"] if t["name"] == sys.argv[1]] == [sys.argv[2] == "true"] else 1)
' "$1" "$2"
}
# mail_in_file true|false: the `enabled` line under [mail] in settings.toml.
mail_in_file() {
  grep -Eq "^enabled *= *$1" <(sed -n '/^\[mail\]/,/^\[/p' "$demo/settings.toml")
}
# How many times the page called COMMAND (each call is logged by name at -v).
command_count() { grep -c "command=\"$1\"" "$out/app.log" || true; }
command_count_above() { (($(command_count "$1") > $2)); }

# start_mail_tail NAME: a client's stream of mail.received over the socket, open and counted
# by the app before it returns (output in tail-NAME.out/.err); sets tail_pid.
start_mail_tail() {
  "$cli" tail mail.received --socket "$sock" >"$out/tail-$1.out" 2>"$out/tail-$1.err" &
  tail_pid=$!
  pids+=($tail_pid)
  wait_for 30 "the client's stream ($1) in the app's state" streams
}
# expect_terminated NAME WHY: the stream ends, and `tidings tail` reports
# `notifications/events/terminated` as "the daemon ended the stream" with its error:
# NotFound (-32023), the type was turned off.
expect_terminated() {
  tail_ended() { ! kill -0 "$tail_pid" 2>/dev/null; }
  wait_for 30 "the stream ($1) to end after $2" tail_ended
  grep -q 'ended the stream.*-32023' "$out/tail-$1.err" \
    || fail "the stream ($1) did not end with terminated NotFound: $(cat "$out/tail-$1.err")"
}

# ---- steps ---------------------------------------------------------------------------------

# A data directory others can enter is refused at start: the app says which and how to fix
# it, exits 1 and leaves no socket (Tauri would panic on an error from its setup hook).
refuses_an_open_data_dir() {
  local open=$work/open-demo
  mkdir -p "$open"
  chmod 755 "$open"
  local code=0
  RUST_BACKTRACE=1 XDG_STATE_HOME="$state" timeout 60 "$app" --demo --data-dir "$open" \
    >"$out/open-dir.log" 2>&1 || code=$?
  [ "$code" -eq 1 ] || fail "an app on a 0755 data directory exited $code, not 1: $(cat "$out/open-dir.log")"
  grep -q 'chmod 700' "$out/open-dir.log" || fail "the refusal does not name the fix: $(cat "$out/open-dir.log")"
  ! grep -q 'panicked' "$out/open-dir.log" || fail "the app panicked on a start-up error: $(cat "$out/open-dir.log")"
  [ ! -e "$open/tidings.sock" ] || fail "a refused start left a socket"
}

start_app() {
  RUST_BACKTRACE=1 XDG_STATE_HOME="$state" "$app" --demo --data-dir "$demo" --simulate 1 -v \
    --update-feed "http://127.0.0.1:$feed_port/latest.json" --update-pubkey "$(cat "$feed/good.key.pub")" \
    >"$out/app.log" 2>&1 &
  app_pid=$!
  pids+=($app_pid)
  wait_for 60 "socket from the app" "$cli" status --socket "$sock" --json
}

tray_icon_appears() {
  wait_for 30 "tray icon in trayer" icon_window
  icon=$(icon_window)
  echo "== tray icon: window $icon" >&2
  # The app's own launch check agrees (trayer is an XEmbed tray: src-tauri/src/menu_bar.rs).
  wait_for 30 "the launch check to find the icon shown" grep -q 'the menu-bar icon is shown' "$out/app.log"
}

menu_opens() {
  open_menu
  local menu
  menu=$(menu_window)
  import -window root "$out/screen-menu.png"
  import -window "$menu" "$out/menu.png"
  if [ -n "${SHOTS_DIR:-}" ]; then
    mkdir -p "$SHOTS_DIR" && cp "$out/menu.png" "$SHOTS_DIR/menu-$theme.png"
  fi
  xdotool key Escape
  wait_for 20 "menu to close" menu_closed
}

# A second launch hands over to the running app, which opens Settings; the second exits 0.
# The page ran and asked the app for real data.
second_launch_opens_settings() {
  "$app" --demo --data-dir "$demo" >"$out/second.log" 2>&1 || fail "the second launch exited non-zero"
  wait_for 30 "settings window after a second launch" xdotool search --onlyvisible --name '^Tidings Settings$'
  local command
  for command in get_state get_settings; do
    wait_for 30 "$command from the settings window" grep -q "command=\"$command\"" "$out/app.log"
  done
  settings=$(xdotool search --onlyvisible --name '^Tidings Settings$' | head -n1)
}

# The window is a process of its own, the app's child `tidings-settings`, which maps WebKitGTK;
# the app (tray and engine) never does. Sets window_pid.
window_is_its_own_process() {
  window_pid=$(pgrep -P "$app_pid" -f "/tidings-settings\$" | head -n1) \
    || fail "no tidings-settings child of the app while the window is open"
  grep -q libwebkit2gtk "/proc/$window_pid/maps" \
    || fail "the window process (pid $window_pid) does not map WebKitGTK"
  ! grep -q libwebkit2gtk "/proc/$app_pid/maps" \
    || fail "the app process maps WebKitGTK: the window belongs in tidings-settings"
}

# settled NAME: the window is painted and settled: not one flat colour, and the same in two
# shots in a row (the page has filled in what the commands returned). The last shot is the
# artifact NAME.png.
settled() {
  local shot=$out/$1.png last=$work/last-$1.png
  import -window "$settings" "$shot" || return 1
  [ "$(convert "$shot" -format '%[fx:standard_deviation>0.02]' info:)" = 1 ] || return 1
  if [ -f "$last" ] && compare -metric AE "$last" "$shot" null: 2>/dev/null; then
    return 0
  fi
  cp "$shot" "$last"
  sleep 0.5
  return 1
}
settings_window_paints() {
  wait_for 30 "the settings window to paint its page" settled settings
}

# The window is driven with the keyboard only. There is no window manager under Xvfb, so
# xdotool sets the X input focus on the window itself; `xdotool key` then types through XTEST
# into whatever the page has focused.
#
# The demo directory is new, so this is a first run and the page shows the first-run sheet
# (a modal dialog), whose focus starts on its Type select. Tab goes to the allowlist entry, the
# names switch, the snippet and Copy snippet (Turn on is disabled while the entry is empty),
# then Done (a control added to the sheet changes this count; the wait below then fails
# naming Done).
window_finishes_first_run() {
  xdotool windowfocus --sync "$settings"
  xdotool key Tab Tab Tab Tab Tab Return
  wait_for 30 "finish_first_run after Done in the first-run sheet" \
    grep -q 'command="finish_first_run"' "$out/app.log"
  # The page closes the sheet when the command returns: wait for that before typing on.
  sheet_gone() {
    settled settings-status && ! compare -metric AE "$out/settings.png" "$out/settings-status.png" null: 2>/dev/null
  }
  wait_for 30 "the first-run sheet to close" sheet_gone
}

# From the closed sheet, keyboard focus goes on from where Done was, after everything else in
# the page: Shift+Tab reaches the Status section's last control (Pause all), again the
# selected section's tab (Status); Down selects Event types and focuses its tab; Tab reaches
# the section's first control, Mail's switch. (Tab forward from there would leave the web
# view, and WebKitGTK gives it no keyboard focus back without a click.)
window_focuses_mail_switch() {
  xdotool key shift+Tab shift+Tab Down Tab
}

# window_presses_switch WHAT: Space on the focused switch; waits for the page's command.
window_presses_switch() {
  local before
  before=$(command_count set_type_enabled)
  xdotool key space
  wait_for 20 "set_type_enabled from the window ($1)" command_count_above set_type_enabled "$before"
}

# Mail off in the window: a client's stream of mail.received ends with `terminated` and
# settings.toml says so; Mail on again in the window: the engine's state says it is on.
window_toggle_reaches_the_socket() {
  start_mail_tail window
  window_focuses_mail_switch
  window_presses_switch "Mail off"
  expect_terminated window "turning Mail off in the window"
  wait_for 20 "enabled = false under [mail] in settings.toml after the window's toggle" mail_in_file false
  wait_for 30 "the settings window to settle after Mail off" settled settings-types
  window_presses_switch "Mail on"
  wait_for 20 "mail.received enabled in tidings status after the window's toggle" type_enabled mail.received true
}

# Mail off through the menu: the first item that takes focus (GTK skips disabled items) is the
# Mail check item.
menu_toggle_reaches_the_socket() {
  start_mail_tail menu
  open_menu
  xdotool key Down Return
  wait_for 20 "menu to close after the toggle" menu_closed
  expect_terminated menu "turning Mail off in the menu"
  mail_in_file false || fail "settings.toml still has mail enabled after the menu's toggle"
}

# Pause all for 1 hour: the third item that takes focus (after Mail and Messages); the
# engine's state then says until when, and the menu's status line says so too.
menu_pauses_all() {
  open_menu
  xdotool key Down Down Down Return
  wait_for 20 "menu to close after Pause" menu_closed
  paused() { "$cli" status --socket "$sock" --json | grep -Eq '"pausedUntilMs": *[0-9]'; }
  wait_for 30 "pausedUntilMs in the state after Pause all" paused
  open_menu
  import -window "$(menu_window)" "$out/menu-paused.png"
  xdotool key Escape
  wait_for 20 "menu to close" menu_closed
}

# The window process dying (a crash, a kill) leaves the engine serving, and Settings… in the
# menu (the fourth item that takes focus) starts a new one, whose page asks for the state.
window_process_can_die() {
  kill -9 "$window_pid"
  wait_for 30 "the killed window process to end" proc_gone "$window_pid"
  kill -0 "$app_pid" 2>/dev/null || fail "the app exited when its window process was killed"
  "$cli" status --socket "$sock" --json >/dev/null || fail "the engine stopped serving with the window's process"
  local before
  before=$(command_count get_state)
  open_menu
  xdotool key Down Down Down Down Return
  wait_for 20 "menu to close after Settings…" menu_closed
  new_window() { pgrep -P "$app_pid" -f "/tidings-settings\$" >/dev/null; }
  wait_for 30 "a new tidings-settings after Settings… in the menu" new_window
  wait_for 30 "get_state from the new window" command_count_above get_state "$before"
  window_pid=$(pgrep -P "$app_pid" -f "/tidings-settings\$" | head -n1)
}

# Quit Tidings: the last item (Up from the top wraps to it). Exits 0 and removes the socket.
menu_quits() {
  open_menu
  xdotool key Up Return
  app_done() { ! kill -0 "$app_pid" 2>/dev/null; }
  wait_for 30 "the app to exit after Quit" app_done
  local code=0
  wait "$app_pid" || code=$?
  [ "$code" -eq 0 ] || fail "Quit exited $code"
  [ ! -e "$sock" ] || fail "the socket is still there after Quit"
  [ ! -e "$sock.app" ] || fail "the hand-over socket is still there after Quit"
  wait_for 30 "the window process to end after Quit" proc_gone "$window_pid"
  ! grep -q 'panicked' "$out/app.log" || fail "the app panicked"
}

# The app's own log file (the daemon's, in the platform log directory): info lines from the
# engine and the window's commands, none of the demo's senders, and the first client's
# notice shown through the desktop notifier: with no notification server on this private
# bus, that is said exactly once as a warning (later notices at debug), and the app goes on.
log_file_written() {
  local logs=$state/tidings/logs
  compgen -G "$logs/tidings.*.log" >/dev/null || fail "no log file in $logs"
  cat "$logs"/tidings.*.log >"$out/logfile.log"
  grep -q 'engine started' "$out/logfile.log" || fail "the log file lacks the engine's start"
  grep -q 'command="get_state"' "$out/logfile.log" || fail "the log file lacks the window's commands"
  ! grep -q '@' "$out/logfile.log" || fail "an address in the log file: $(grep '@' "$out/logfile.log" | head -n1)"
  (($(grep -c 'notifications are unavailable' "$out/logfile.log" || true) == 1)) \
    || fail "a missing notification server was not logged exactly once (the notices reach the notifier)"
}

# With no tray host at all (trayer stopped; this bus has no StatusNotifier watcher), the icon
# cannot be shown: a start that is not a first run (the demo directory has its settings now)
# opens Settings by itself once the launch check gives up on the icon (5 s after it is made),
# and the page shows where to allow it (target/app-e2e/<theme>/hidden-icon.png). Its own log
# and state directory, so the log file checked above is the first run's alone. No icon to
# click: SIGTERM quits it, as launchd or systemd would.
hidden_icon_opens_settings() {
  kill "$trayer_pid"
  wait_for 20 "trayer to exit" proc_gone "$trayer_pid"
  local log=$out/app-hidden.log
  XDG_STATE_HOME="$work/state-hidden" "$app" --demo --data-dir "$demo" -v >"$log" 2>&1 &
  app_pid=$!
  pids+=($app_pid)
  wait_for 30 "the settings window to open by itself with no tray host" \
    xdotool search --onlyvisible --name '^Tidings Settings$'
  local hidden opened
  hidden=$(grep -n 'the menu-bar icon is hidden' "$log" | head -n1 | cut -d: -f1)
  opened=$(grep -n 'settings window opened' "$log" | head -n1 | cut -d: -f1)
  [ -n "$hidden" ] && [ -n "$opened" ] && ((hidden < opened)) \
    || fail "the window did not open because the icon was found hidden: $(cat "$log")"
  wait_for 30 "get_state from the window the hidden icon opened" grep -q 'command="get_state"' "$log"
  settings=$(xdotool search --onlyvisible --name '^Tidings Settings$' | head -n1)
  wait_for 30 "the window with the hidden icon's notice to paint" settled hidden-icon
  kill -TERM "$app_pid"
  app_done() { ! kill -0 "$app_pid" 2>/dev/null; }
  wait_for 30 "the app to exit on SIGTERM" app_done
  local code=0
  wait "$app_pid" || code=$?
  [ "$code" -eq 0 ] || fail "SIGTERM exited $code"
  ! grep -q 'panicked' "$log" || fail "the app panicked: $(cat "$log")"
}

# ---- updates: a signed feed on 127.0.0.1 --------------------------------------------------

feed=$work/feed
feed_port=
# The feed's server (python's, its requests logged in feed.log), two throwaway keys made by the
# Tauri CLI the release uses (good: the app is given its public half; other: not), and a
# stand-in app archive. The feed is signed with the good key.
serve_feed() {
  mkdir -p "$feed/www" "$feed/app/Tidings.app/Contents/MacOS"
  echo stand-in >"$feed/app/Tidings.app/Contents/MacOS/tidings-app"
  tar -czf "$feed/www/Tidings-9.9.9.app.tar.gz" -C "$feed/app" Tidings.app
  printf 'Fixes the Mail reader.\nStarts faster.\nA third line.\n' >"$feed/notes.md"
  local k
  for k in good other; do
    packaging/node_modules/.bin/tauri signer generate --ci -p "" -w "$feed/$k.key" >/dev/null 2>&1 \
      || fail "tauri signer generate failed: run scripts/install-deps.sh (npm ci in packaging/)"
  done
  python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$feed/www" >"$out/feed.log" 2>&1 &
  pids+=($!)
  wait_for 20 "the feed server's port" grep -q ' port ' "$out/feed.log"
  feed_port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$out/feed.log" | head -n1)
  make_feed good
}
# make_feed KEY: latest.json for this machine, as the release writes it, signed with KEY.
make_feed() {
  TAURI_SIGNING_PRIVATE_KEY="$(cat "$feed/$1.key")" scripts/release-feed.sh --version 9.9.9 \
    --archive "$feed/www/Tidings-9.9.9.app.tar.gz" \
    --url "http://127.0.0.1:$feed_port/Tidings-9.9.9.app.tar.gz" --out "$feed/www/latest.json" \
    --notes "$feed/notes.md" --platform "linux-$(uname -m)" --pubkey "$(cat "$feed/$1.key.pub")" \
    2>>"$out/feed-make.log" || fail "release-feed.sh failed: $(cat "$out/feed-make.log")"
}
# last_check OUTCOME VERSION|REASON: the app's record of its last check says so.
last_check() {
  python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c["outcome"] == sys.argv[2] and sys.argv[3] in (c.get("version"), c.get("reason")) else 1)
' "$demo/updates/last-check.json" "$@"
}

# The demo's daily check is off, so nothing has asked the feed. Check for Updates… (the sixth
# item that takes focus: the update line above it is disabled) asks it; 9.9.9 is downloaded,
# its signature checked and kept, and the menu says it is ready with its notes' first lines
# (target/app-e2e/<theme>/menu-update.png). Install and Restart (the seventh, enabled now)
# checks the kept archive again and on Linux stops there; the app goes on serving. The feed
# re-signed with the other key is refused: the log and the record say why.
menu_checks_for_updates() {
  ! grep -q 'GET /' "$out/feed.log" || fail "the demo asked the update feed by itself: $(cat "$out/feed.log")"
  [ ! -e "$demo/updates/last-check.json" ] || fail "a check ran before any was asked for"
  open_menu
  xdotool key Down Down Down Down Down Down Return
  wait_for 20 "menu to close after Check for Updates…" menu_closed
  wait_for 60 "the check to keep 9.9.9 (updates/last-check.json)" last_check ready 9.9.9
  grep -q 'GET /Tidings-9.9.9.app.tar.gz' "$out/feed.log" || fail "the archive was not downloaded"
  wait_for 30 "the check's line in the app's log" grep -q 'update check: Tidings 9.9.9 is ready to install' "$out/app.log"
  # The doctor reads the same record (its exit code is the other checks' business).
  "$cli" doctor --demo-dir "$demo" >"$out/doctor-update.txt" 2>&1 || true
  grep -q '9.9.9 is ready' "$out/doctor-update.txt" \
    || fail "tidings doctor does not report the ready update: $(cat "$out/doctor-update.txt")"
  open_menu
  import -window "$(menu_window)" "$out/menu-update.png"
  if [ -n "${SHOTS_DIR:-}" ]; then cp "$out/menu-update.png" "$SHOTS_DIR/menu-update-$theme.png"; fi
  xdotool key Down Down Down Down Down Down Down Return
  wait_for 20 "menu to close after Install and Restart" menu_closed
  wait_for 60 "the install to stop on Linux after its checks" \
    grep -q '9.9.9 checks out, but on Linux Tidings is updated by the package' "$out/app.log"
  kill -0 "$app_pid" 2>/dev/null || fail "the app exited after Install and Restart on Linux"
  "$cli" status --socket "$sock" --json >/dev/null || fail "the engine stopped serving after the install"

  make_feed other
  open_menu
  xdotool key Down Down Down Down Down Down Return
  wait_for 20 "menu to close after Check for Updates…" menu_closed
  wait_for 60 "the check to refuse the other key" last_check failed signature
  wait_for 30 "the refusal in the app's log" grep -q 'does not match the key built into Tidings' "$out/app.log"
}

# ---- people: the sender picker, a group, names, a Contacts change -------------------------

# The demo Contacts' ids (fixtures/src/contacts/demo.rs) and the numbers (the simulator's).
FAMILY_ID=5D1E0A11-0000-4000-8000-00000000FA11:ABGroup
ANA_ID=5D1E0A11-0000-4000-8000-000000000A4A:ABPerson
ANA=+12025550101 # Ana Ruiz, in Family; her card writes it (202) 555-0101
BOB=+12025550143 # Bob Stone, allowed by number
people=$work/people
people_sock=$people/tidings.sock
# Settings of its own, written before the app lays out the demo (which keeps them): no group
# entry, so the picker really adds it, and no `+120255501*`, so nothing else covers Ana.
# Messages only: Mail has no allowlist entries, so its card has no Remove buttons (the Tab
# count below depends on it). Every program is let in, as in the demo: this step is about
# people, and the agents step asks.
PEOPLE_SETTINGS='[mail]
enabled = true
allow = []

[messages]
enabled = true
allow = ["+12025550143"]
contact_names = true

[agents]
new = "allow"
'

# messages_allow_groups N: `tidings status` counts N group entries in force for Messages.
messages_allow_groups() {
  "$cli" status --socket "$people_sock" --json | python3 -c '
import json, sys
state = json.load(sys.stdin)
t = [t for t in state["types"] if t["name"] == "messages.received"][0]
sys.exit(0 if t["allowlist"]["groups"] == int(sys.argv[1]) else 1)
' "$1"
}
# tail_lines FROM [CONTACT]: how many events in the people tail's output are from FROM (and,
# given, carry CONTACT as from.contact).
tail_lines() {
  python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    event = json.loads(line)
    data = event.get("data", event)
    sender = data.get("from", {})
    if sender.get("handle", sender.get("address")) == sys.argv[2] or sys.argv[2] in json.dumps(sender):
        if len(sys.argv) < 4 or sender.get("contact") == sys.argv[3]:
            n += 1
print(n)
' "$out/tail-people.out" "$@"
}
tail_has() { (($(tail_lines "$@") > 0)); }
contacts_reads() { grep -c 'contacts read' "$out/app-people.log" || true; }
contacts_reads_above() { (($(contacts_reads) > $1)); }

# The app on its own demo home with the settings above, its window opened at start.
start_people_app() {
  mkdir -p "$people" && chmod 700 "$people"
  printf '%s' "$PEOPLE_SETTINGS" >"$people/settings.toml"
  XDG_STATE_HOME="$work/state-people" "$app" --demo --data-dir "$people" --simulate off \
    --open-settings -v >"$out/app-people.log" 2>&1 &
  app_pid=$!
  pids+=($app_pid)
  wait_for 60 "socket from the people app" "$cli" status --socket "$people_sock" --json
  wait_for 30 "the people app's settings window" xdotool search --onlyvisible --name '^Tidings Settings$'
  wait_for 30 "get_settings from the people app's window" grep -q 'command="get_settings"' "$out/app-people.log"
  settings=$(xdotool search --onlyvisible --name '^Tidings Settings$' | head -n1)
  wait_for 30 "the people app's window to paint" settled people
}

# Keyboard only. Not a first run, so no sheet: the first Tab reaches the selected section's
# tab (Status), Down selects Event types, Tab its first control, Mail's switch. From there
# Tab passes Mail's allowlist field (Add is disabled while it is empty), Mail's picker
# button, Mail's names switch, Mail's four category boxes, Mail's backfill field, Messages'
# switch, the Remove button of Bob's entry and Messages' allowlist field: twelve Tabs to
# Messages' "Pick senders…". Down opens the picker with focus in its search field;
# Shift+Tab reaches the Contacts tab, Right selects Groups (which asks for list_groups),
# Down enters its list, Down makes Family (the demo's one group) active, Enter picks it.
picker_adds_family() {
  xdotool windowfocus --sync "$settings"
  xdotool key Tab Down Tab
  xdotool key Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab
  xdotool key Down
  wait_for 30 "the picker to open and settle" settled picker-open
  xdotool key shift+Tab
  wait_for 30 "the picker's Contacts tab focused" settled picker-tab
  xdotool key Right
  wait_for 20 "list_groups from the picker" grep -q 'command="list_groups"' "$out/app-people.log"
  wait_for 30 "the Groups list to settle" settled picker-groups
  xdotool key Down Down Return
  has_family() { grep -Eq "\"group: Family \[$FAMILY_ID\]\"" "$people/settings.toml"; }
  wait_for 30 "the Family group entry in settings.toml after picking it" has_family
  grep -q '+12025550143' "$people/settings.toml" || fail "picking Family dropped Bob's entry"
  wait_for 30 "the group entry in force (tidings status)" messages_allow_groups 1
  wait_for 30 "the window to settle after the pick" settled picker-added
}

# A member's message reaches a running `tidings tail` with her Contacts name.
member_message_delivered_with_name() {
  "$cli" tail messages.received --socket "$people_sock" >"$out/tail-people.out" 2>"$out/tail-people.err" &
  tail_pid=$!
  pids+=($tail_pid)
  people_streams() { "$cli" status --socket "$people_sock" --json | grep -Eq '"streams": *[1-9]'; }
  wait_for 30 "the people tail's stream in the app's state" people_streams
  "$fixtures" message --home "$people" --from "$ANA" --text "Dinner at eight?" >/dev/null
  wait_for 60 "Ana's message in the tail" tail_has "$ANA"
  tail_has "$ANA" "Ana Ruiz" \
    || fail "Ana's event lacks from.contact \"Ana Ruiz\" (contact_names is on): $(cat "$out/tail-people.out")"
}

# Ana leaves Family in Contacts: once the app has read the change, her next message is not
# delivered, and a later one from Bob (allowed by number) is. The rows are read in order, so
# Bob's event arriving means Ana's row was passed over.
removed_member_not_delivered() {
  local reads
  reads=$(contacts_reads)
  "$fixtures" remove-member --home "$people" --group "$FAMILY_ID" --person "$ANA_ID"
  wait_for 30 "the app to read the changed Contacts" contacts_reads_above "$reads"
  "$fixtures" message --home "$people" --from "$ANA" --text "Still on for Sunday?" >/dev/null
  "$fixtures" message --home "$people" --from "$BOB" --text "On my way" >/dev/null
  wait_for 60 "Bob's message in the tail" tail_has "$BOB"
  tail_has "$BOB" "Bob Stone" || fail "Bob's event lacks from.contact \"Bob Stone\": $(cat "$out/tail-people.out")"
  (($(tail_lines "$ANA") == 1)) \
    || fail "Ana's message was delivered after she left Family: $(cat "$out/tail-people.out")"
  kill "$tail_pid"
  kill -TERM "$app_pid"
  app_done() { ! kill -0 "$app_pid" 2>/dev/null; }
  wait_for 30 "the people app to exit on SIGTERM" app_done
  ! grep -q 'panicked' "$out/app-people.log" || fail "the people app panicked"
  ! grep -q 'Ana Ruiz\|Bob Stone\|Family' "$out/app-people.log" \
    || fail "a contact or group name in the app's log: $(grep 'Ana Ruiz\|Bob Stone\|Family' "$out/app-people.log" | head -n1)"
}

people_steps() {
  start_people_app
  picker_adds_family
  member_message_delivered_with_name
  removed_member_not_delivered
}

# ---- agents: a program with no grant asks, the window allows it -------------------------

agents=$work/agents
agents_sock=$agents/tidings.sock
agents_status() { "$cli" status --socket "$agents_sock" --json; }
# agent_access ACCESS: some agent in `tidings status` has this access (asking, allowed, ...).
agent_access() {
  agents_status | python3 -c '
import json, sys
sys.exit(0 if any(a["access"] == sys.argv[1] for a in json.load(sys.stdin)["agents"]) else 1)
' "$1"
}
new_agents_ask() { agents_status | grep -Eq '"new_agents": *"ask"|"newAgents": *"ask"'; }
agents_tail_has_mail() { grep -q '"mail.received"\|"subject"\|"from"' "$out/tail-agents.out"; }

# The demo's allowlists with `[agents] new = "ask"` (the demo writes "allow"), written before
# the app lays out the demo, which keeps them: not a first run, so no sheet over the window.
AGENTS_SETTINGS='[mail]
enabled = true
allow = ["example.com", "example.org", "example.net"]

[messages]
enabled = true
allow = ["+120255501*"]

[agents]
new = "ask"
'

# The demo app with its window open and mail arriving every second.
start_agents_app() {
  mkdir -p "$agents" && chmod 700 "$agents"
  printf '%s' "$AGENTS_SETTINGS" >"$agents/settings.toml"
  XDG_STATE_HOME="$work/state-agents" "$app" --demo --data-dir "$agents" --simulate 1 \
    --open-settings -v >"$out/app-agents.log" 2>&1 &
  app_pid=$!
  pids+=($app_pid)
  wait_for 60 "socket from the agents app" agents_status
  wait_for 30 "the agents app's settings window" xdotool search --onlyvisible --name '^Tidings Settings$'
  settings=$(xdotool search --onlyvisible --name '^Tidings Settings$' | head -n1)
  wait_for 30 "new = \"ask\" in force" new_agents_ask
}

# A client with no grant asks: its request waits, the window shows the question above every
# section; Tab (the selected section's tab), Tab (Don't Allow), Tab (Allow), Return.
window_allows_asking_agent() {
  "$cli" tail mail.received --socket "$agents_sock" >"$out/tail-agents.out" 2>"$out/tail-agents.err" &
  tail_pid=$!
  pids+=($tail_pid)
  wait_for 30 "the client asking (tidings status)" agent_access asking
  wait_for 30 "the question in the window" settled agents-ask
  [ -n "${SHOTS_DIR:-}" ] && cp "$out/agents-ask.png" "$SHOTS_DIR/app-agents-ask-$theme.png"
  xdotool windowfocus --sync "$settings"
  xdotool key Tab Tab Tab Return
  wait_for 30 "the agent allowed (tidings status)" agent_access allowed
  grep -q '^\[agents\.known\.' "$agents/settings.toml" || fail "Allow saved no grant in settings.toml"
  grep -Eq '^access = "allow"' "$agents/settings.toml" || fail "Allow saved no access = \"allow\""
  wait_for 60 "a live mail.received in the allowed client's tail" agents_tail_has_mail
  kill -0 "$tail_pid" 2>/dev/null || fail "the allowed client's tail ended: $(cat "$out/tail-agents.err")"
}

# The Clients section lists the agent by its program. The answered row hands focus back to
# the selected tab (Status); Down Down selects Clients.
window_lists_the_agent() {
  agents_status | python3 -c '
import json, sys
agents = json.load(sys.stdin)["agents"]
ok = [a for a in agents if a["access"] == "allowed" and a["connections"] >= 1 and a["streams"] >= 1]
sys.exit(0 if ok and all(a["name"] and a["identity"] for a in ok) else 1)
' || fail "no allowed agent with its identity and stream: $(agents_status)"
  xdotool key Down Down
  wait_for 30 "the Clients section with the agent" settled agents-clients
  [ -n "${SHOTS_DIR:-}" ] && cp "$out/agents-clients.png" "$SHOTS_DIR/app-agents-clients-$theme.png"
  kill "$tail_pid"
  kill -TERM "$app_pid"
  app_done() { ! kill -0 "$app_pid" 2>/dev/null; }
  wait_for 30 "the agents app to exit on SIGTERM" app_done
  ! grep -q 'panicked' "$out/app-agents.log" || fail "the agents app panicked"
}

agents_steps() {
  start_agents_app
  window_allows_asking_agent
  window_lists_the_agent
}

# TIDINGS_E2E_ONLY=agents runs just these steps.
if [ "${TIDINGS_E2E_ONLY:-}" = agents ]; then
  agents_steps
  echo "== app-e2e ($theme): agents ok (artifacts in target/app-e2e/$theme)" >&2
  exit 0
fi

# TIDINGS_E2E_ONLY=people runs just these steps (quicker while working on them).
if [ "${TIDINGS_E2E_ONLY:-}" = people ]; then
  people_steps
  echo "== app-e2e ($theme): people ok (artifacts in target/app-e2e/$theme)" >&2
  exit 0
fi

refuses_an_open_data_dir
serve_feed
start_app
tray_icon_appears
menu_opens
second_launch_opens_settings
window_is_its_own_process
settings_window_paints
window_finishes_first_run
window_toggle_reaches_the_socket
menu_toggle_reaches_the_socket
menu_pauses_all
menu_checks_for_updates
window_process_can_die
menu_quits
log_file_written
hidden_icon_opens_settings
people_steps
agents_steps
echo "== app-e2e ($theme): ok (artifacts in target/app-e2e/$theme)" >&2
