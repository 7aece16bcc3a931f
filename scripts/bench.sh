#!/usr/bin/env bash
# Benchmarks, each reporting ratios against a baseline measured in the same run; the figures
# are kept in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p tidings-core --bench drain
if [ -f crates/server/benches/latency.rs ]; then
  cargo bench -p tidings-server --bench latency
fi
