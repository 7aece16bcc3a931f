# Homebrew cask for Tidings: the menu-bar app, with the `tidings` CLI and the `tidings-mcp`
# shim linked from inside it. The release workflow (.github/workflows/release.yml) attaches a
# copy with this release's version and the .zip's sha256 filled in; this file is its template.
# Paths are crates/platform/src/paths.rs's (the bundle id names every folder).
cask "tidings" do
  version "0.1.0"
  sha256 :no_check # release.yml writes the .zip's sha256 here

  url "https://github.com/tidings-dev/tidings/releases/download/v#{version}/Tidings-#{version}.zip"
  name "Tidings"
  desc "Tells local AI clients when new mail or a new message arrives"
  homepage "https://github.com/tidings-dev/tidings"

  depends_on macos: ">= :ventura"

  app "Tidings.app"
  binary "#{appdir}/Tidings.app/Contents/MacOS/tidings"
  binary "#{appdir}/Tidings.app/Contents/MacOS/tidings-mcp"

  # Stop the LaunchAgent first (launchctl bootout of the label), or launchd restarts what
  # `quit` ends; then the socket, whose folder also holds settings (kept until zap).
  uninstall launchctl: "dev.tidings.Tidings",
            quit:      "dev.tidings.Tidings",
            delete:    [
              "~/Library/Application Support/dev.tidings.Tidings/run/tidings.sock",
              "~/Library/LaunchAgents/dev.tidings.Tidings.plist",
            ]

  # Settings and data (settings.toml, cursors), logs, caches and the webview's storage.
  # The HTTP token stays in the login Keychain (service dev.tidings.Tidings): Keychain Access
  # removes it; `tidings token` shows it.
  zap trash: [
    "~/Library/Application Support/dev.tidings.Tidings",
    "~/Library/Caches/dev.tidings.Tidings",
    "~/Library/HTTPStorages/dev.tidings.Tidings",
    "~/Library/Logs/Tidings",
    "~/Library/Logs/dev.tidings.Tidings",
    "~/Library/Preferences/dev.tidings.Tidings.plist",
    "~/Library/Saved Application State/dev.tidings.Tidings.savedState",
    "~/Library/WebKit/dev.tidings.Tidings",
  ]
end
