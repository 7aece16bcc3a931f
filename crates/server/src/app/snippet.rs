//! The JSON snippet the window shows for connecting a host that Tidings cannot configure.

use std::path::{Path, PathBuf};

/// The JSON snippet that connects a client (the common `mcpServers` shape): the shim beside
/// the running executable, else the installed app's, else the one on `PATH`, else its bare
/// name; naming `socket` when a host's shim would not find it on its own (the demo's, or
/// any but the platform default).
pub fn connect_snippet(socket: &Path) -> String {
    let shim = tidings_platform::hosts::current_shim()
        .unwrap_or_else(|| PathBuf::from(tidings_platform::hosts::SHIM));
    snippet_for(&shim, socket, &|name| std::env::var_os(name))
}

pub(super) fn snippet_for(
    shim: &Path,
    socket: &Path,
    env: &impl Fn(&str) -> Option<std::ffi::OsString>,
) -> String {
    use tidings_platform::{Host, Launch, Mode, hosts};
    // The common shape's hosts are taken to pass the narrowest environment.
    let launch = Launch::reaching_in(Host::ClaudeDesktop, shim, Mode::Tools, socket, env);
    hosts::generic_snippet(&launch)
}
