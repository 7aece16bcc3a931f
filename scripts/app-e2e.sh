#!/usr/bin/env bash
# End-to-end test of the menu-bar app (issue 11): the real `tidings-app` debug binary on demo
# stores, under a private D-Bus session, Xvfb and trayer (an XEmbed tray host; spec
# desktop.md 2.2). Checks: the tray icon appears; the menu opens (screenshot); a second
# launch hands over to the first and opens the settings window, whose page asks the app for
# its state; turning Mail off in the menu ends a client's `mail.received` stream over the
# socket with `terminated`; Pause all pauses the engine; Quit exits 0 and removes the socket.
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
cargo build --locked -q -p tidings-app -p tidings-server
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
pids+=($!)
wait_for 20 "trayer window" xdotool search --onlyvisible --name '^panel$'
panel=$(xdotool search --onlyvisible --name '^panel$' | head -n1)

demo=$work/demo
sock=$demo/tidings.sock
RUST_BACKTRACE=1 "$app" --demo --data-dir "$demo" --simulate 1 -v >"$out/app.log" 2>&1 &
app_pid=$!
pids+=($app_pid)
wait_for 60 "socket from the app" "$cli" status --socket "$sock" --json

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
wait_for 30 "tray icon in trayer" icon_window
icon=$(icon_window)
echo "== tray icon: window $icon" >&2

# Opens the menu by clicking the icon; waits for GTK's popup (a new viewable window of ours).
menu_window() {
  local w
  for w in $(xdotool search --onlyvisible --classname '^tidings-app$' 2>/dev/null); do
    xwininfo -id "$w" | grep -q 'Override Redirect State: yes' && { echo "$w"; return 0; }
  done
  return 1
}
menu_closed() { ! menu_window; }
open_menu() {
  xdotool mousemove --window "$icon" 8 8 click 1
  wait_for 20 "menu after clicking the tray icon" menu_window
}

open_menu
menu=$(menu_window)
import -window root "$out/screen-menu.png"
import -window "$menu" "$out/menu.png"
if [ -n "${SHOTS_DIR:-}" ]; then
  mkdir -p "$SHOTS_DIR" && cp "$out/menu.png" "$SHOTS_DIR/menu-$theme.png"
fi
xdotool key Escape
wait_for 20 "menu to close" menu_closed

# A second launch hands over to the running app, which opens Settings; the second exits 0.
"$app" --demo --data-dir "$demo" >"$out/second.log" 2>&1 || fail "the second launch exited non-zero"
wait_for 30 "settings window after a second launch" xdotool search --onlyvisible --name '^Tidings Settings$'
# The page ran and asked the app for real data (commands are logged by name at -v).
for command in get_state get_settings; do
  wait_for 30 "$command from the settings window" grep -q "command=\"$command\"" "$out/app.log"
done
settings=$(xdotool search --onlyvisible --name '^Tidings Settings$' | head -n1)
# Painted and settled: not one flat colour, and the same in two shots in a row (the page has
# filled in what the commands returned). The last shot is the artifact settings.png.
painted() {
  import -window "$settings" "$out/settings.png" || return 1
  [ "$(convert "$out/settings.png" -format '%[fx:standard_deviation>0.02]' info:)" = 1 ] || return 1
  if [ -f "$work/last.png" ] && compare -metric AE "$work/last.png" "$out/settings.png" null: 2>/dev/null; then
    return 0
  fi
  cp "$out/settings.png" "$work/last.png"
  sleep 0.5
  return 1
}
wait_for 30 "the settings window to paint its page" painted

# A client's stream of mail.received, open before the toggle.
"$cli" tail mail.received --socket "$sock" >"$out/tail.out" 2>"$out/tail.err" &
tail_pid=$!
pids+=($tail_pid)
streams() { "$cli" status --socket "$sock" --json | grep -Eq '"streams": *[1-9]'; }
wait_for 30 "the client's stream in the app's state" streams

# Mail off through the menu: the first item that takes focus is the Mail check item.
open_menu
xdotool key Down Return
wait_for 20 "menu to close after the toggle" menu_closed
tail_ended() { ! kill -0 "$tail_pid" 2>/dev/null; }
wait_for 30 "the stream to end after turning Mail off" tail_ended
# `tidings tail` reports `notifications/events/terminated` as "the daemon ended the stream"
# with its error: NotFound (-32023), the type was turned off.
grep -q 'ended the stream.*-32023' "$out/tail.err" \
  || fail "the stream did not end with terminated NotFound: $(cat "$out/tail.err")"
grep -Eq '^enabled *= *false' <(sed -n '/^\[mail\]/,/^\[/p' "$demo/settings.toml") \
  || fail "settings.toml still has mail enabled"

# Pause all for 1 hour: the third item that takes focus (after Mail and Messages); the
# engine's state then says until when, and the menu's status line says so too.
open_menu
xdotool key Down Down Down Return
wait_for 20 "menu to close after Pause" menu_closed
paused() { "$cli" status --socket "$sock" --json | grep -Eq '"pausedUntilMs": *[0-9]'; }
wait_for 30 "pausedUntilMs in the state after Pause all" paused
open_menu
import -window "$(menu_window)" "$out/menu-paused.png"
xdotool key Escape
wait_for 20 "menu to close" menu_closed

# Quit Tidings: the last item (Up from the top wraps to it).
open_menu
xdotool key Up Return
app_done() { ! kill -0 "$app_pid" 2>/dev/null; }
wait_for 30 "the app to exit after Quit" app_done
code=0
wait "$app_pid" || code=$?
[ "$code" -eq 0 ] || fail "Quit exited $code"
[ ! -e "$sock" ] || fail "the socket is still there after Quit"
! grep -q 'panicked' "$out/app.log" || fail "the app panicked"
echo "== app-e2e ($theme): ok (artifacts in target/app-e2e/$theme)" >&2
