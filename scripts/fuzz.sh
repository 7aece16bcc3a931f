#!/usr/bin/env bash
# Fuzz the parsers that take input from outside (docs/security.md): each cargo-fuzz target in
# fuzz/ runs for FUZZ_SECONDS (default 60), starting from the kept seeds in
# fuzz/corpus/<target>/ plus what earlier runs found (fuzz/work/<target>/, never committed).
# Needs the nightly toolchain; installs cargo-fuzz from crates.io when missing. Not part of
# `make test` or CI. Usage: scripts/fuzz.sh [target...]; exit 1 when any target crashed (the
# input is in fuzz/artifacts/<target>/: make it a unit test in the owning crate, then fix).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
all=(cursor arguments settings frames)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  case " ${all[*]} " in
    *" $t "*) ;;
    *) echo "fuzz: no target named '$t'; the targets are: ${all[*]}" >&2; exit 2 ;;
  esac
done

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: the nightly toolchain is missing; install it with: rustup toolchain install nightly" >&2
  exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

cd fuzz
echo "== building the fuzz targets" >&2
cargo +nightly fuzz build

failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "work/$t" "artifacts/$t"
  log="work/$t.log"
  echo "== fuzzing $t for ${seconds}s" >&2
  # The first corpus directory receives new inputs, so the kept seeds stay as committed.
  start=$(date +%s)
  if cargo +nightly fuzz run "$t" "work/$t" "corpus/$t" -- \
      -max_total_time="$seconds" -print_final_stats=1 -max_len=16384 >"$log" 2>&1; then
    status=ok
  else
    status=CRASH
    failed+=("$t")
    grep -E 'panicked at|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
  fi
  took=$(($(date +%s) - start))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  corpus=$(find "work/$t" "corpus/$t" -type f | wc -l)
  summary+=("$(printf '%-10s %-5s %6ss %12s execs %6s corpus files' "$t" "$status" "$took" "$execs" "$corpus")")
done

printf '%s\n' "== fuzz summary" "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
