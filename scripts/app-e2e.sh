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
# and opens Settings by itself, whose page says so; SIGTERM quits it.
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
cargo build --locked -q -p tidings-app -p tidings-cli
app=$root/target/debug/tidings-app
cli=$root/target/debug/tidings
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
  RUST_BACKTRACE=1 XDG_STATE_HOME="$state" "$app" --demo --data-dir "$demo" --simulate 1 -v >"$out/app.log" 2>&1 &
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
# snippet and Copy snippet (Turn on is disabled while the entry is empty), then Done (a control
# added to the sheet changes this count; the wait below then fails naming Done).
window_finishes_first_run() {
  xdotool windowfocus --sync "$settings"
  xdotool key Tab Tab Tab Tab Return
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

refuses_an_open_data_dir
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
window_process_can_die
menu_quits
log_file_written
hidden_icon_opens_settings
echo "== app-e2e ($theme): ok (artifacts in target/app-e2e/$theme)" >&2
