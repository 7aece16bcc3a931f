# Tidings: one entry point for the common jobs. Each target is a thin wrapper over cargo or a
# script in scripts/, so the commands work the same without make.

.PHONY: demo test check bench fmt build fuzz ui ui-test screenshots app app-demo app-e2e screenshots-menu bundle

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
	cargo build -p tidings-cli -p tidings-shim

# Benchmarks (release); PART=fanout (or push,sustained,...) runs some: scripts/bench.sh.
bench:
	PART="$(PART)" scripts/bench.sh

# Each fuzz target for FUZZ_SECONDS (default 60) from the kept seeds; nightly only, not in CI.
fuzz:
	scripts/fuzz.sh

fmt:
	cargo fmt --all

# The settings window's bundle, ui/dist, which the app embeds.
ui:
	cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build

# The menu-bar app (needs scripts/install-deps.sh's packages and ui/dist: `make ui`).
app:
	cargo build -p tidings-app

# The app bundle (release): a .deb on Linux, Tidings.app and a .dmg on macOS, each with
# `tidings` and `tidings-mcp` inside, in target/release/bundle/ (docs/decisions/bundle.md).
bundle:
	scripts/bundle.sh

# The menu-bar app on demo stores, with its settings window open.
app-demo: app
	./target/debug/tidings-app --demo --data-dir ./demo --open-settings

# The app end to end under Xvfb + trayer (part of `make test`).
app-e2e:
	scripts/app-e2e.sh

# Screenshots for the README: the tray menu in light and dark (GTK's themes under Xvfb).
screenshots: screenshots-menu

screenshots-menu:
	SHOTS_DIR=docs/screenshots THEME=light scripts/app-e2e.sh
	SHOTS_DIR=docs/screenshots THEME=dark scripts/app-e2e.sh
