#!/usr/bin/env bash
# `make bench [PART=...]`: benchmarks, each reporting ratios against a baseline measured in the
# same run (release builds). They report and never fail a test run; they are not in `make test`.
#
# PART (comma-separated; default all):
#   push fanout sustained catchup maxage idle startup app webhook
#                                                          crates/cli/benches/figures/
#   drain                                                  crates/core/benches/drain.rs
#   latency                                                crates/cli/benches/latency.rs
# The figures bench prints a summary table and writes its tables into docs/benchmarks.md
# (TIDINGS_BENCH_DOCS=0 leaves the file alone); logs and the summary go to target/bench/.
# The 1,000,000-message store is built once and cached under target/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."

figures=(push fanout sustained catchup maxage idle startup app webhook)
part=${PART:-all}
[ "$part" = all ] && part=$(IFS=,; echo "${figures[*]},drain,latency")

wanted_figures=()
run_drain=no
run_latency=no
IFS=, read -r -a names <<<"$part"
for name in "${names[@]}"; do
  case $name in
    drain) run_drain=yes ;;
    latency) run_latency=yes ;;
    push | fanout | sustained | catchup | maxage | idle | startup | app | webhook) wanted_figures+=("$name") ;;
    *) echo "bench: unknown PART '$name'; parts: ${figures[*]} drain latency" >&2; exit 2 ;;
  esac
done

status=0
if [ ${#wanted_figures[@]} -gt 0 ]; then
  # The app part needs the release app, which needs the display stack to build and to run
  # (TIDINGS_BENCH_APP_BIN=PATH runs that build of the app instead, and builds nothing).
  if [[ " ${wanted_figures[*]} " == *" app "* ]] && [ -z "${TIDINGS_BENCH_APP_BIN:-}" ]; then
    if command -v Xvfb >/dev/null && command -v dbus-daemon >/dev/null \
      && pkg-config --exists webkit2gtk-4.1 2>/dev/null; then
      echo "== building the release app (tidings-app)" >&2
      cargo build --release -p tidings-app || echo "bench: the app did not build; its part will be skipped" >&2
    fi
  fi
  cargo bench -p tidings-cli --bench figures -- "${wanted_figures[@]}" || status=$?
fi
if [ $run_drain = yes ]; then
  cargo bench -p tidings-core --bench drain || status=$?
fi
if [ $run_latency = yes ]; then
  # Idle CPU is the figures bench's `idle` part; the slow-flush table is this bench's own.
  TIDINGS_BENCH_IDLE_SECS=${TIDINGS_BENCH_IDLE_SECS:-0} cargo bench -p tidings-cli --bench latency || status=$?
fi
exit $status
