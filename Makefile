# Tidings: one entry point for the common jobs. Each target is a thin wrapper over cargo or a
# script in scripts/, so the commands work the same without make.

.PHONY: demo test check bench fmt build fuzz ui-test screenshots

# The main job on a machine without Mail: the demo daemon on fixture stores.
demo: build
	./target/debug/tidings serve --demo --data-dir ./demo

# Every check CI runs: installs what the tests need, then fmt, clippy and every test, then
# the settings window's browser tests.
test:
	scripts/test.sh
	$(MAKE) ui-test

# The settings window (ui/) in headless chromium against a fake bridge.
ui-test:
	scripts/ui-test.sh

# Regenerate docs/screenshots/<section>-{light,dark}.png from the fake bridge (committed; not
# part of `make test`).
screenshots:
	scripts/ui-test.sh --screenshots

# The same checks without installing anything (for a machine that already has it all).
check:
	TIDINGS_SKIP_INSTALL=1 scripts/test.sh

build:
	cargo build -p tidings-server -p tidings-shim

bench:
	scripts/bench.sh

# Each fuzz target for FUZZ_SECONDS (default 60) from the kept seeds; nightly only, not in CI.
fuzz:
	scripts/fuzz.sh

fmt:
	cargo fmt --all
