//! Tauri's build step (embeds `tauri.conf.json` and the settings window's `ui/dist`), after
//! checking that `ui/dist` was built: tauri-build's own message for a missing dist is vague.

fn main() {
    let dist = std::path::Path::new("../ui/dist/index.html");
    println!("cargo:rerun-if-changed=../ui/dist");
    assert!(
        dist.is_file(),
        "ui/dist/index.html is missing: the settings window is built from ui/ with Vite. \
         Run `make ui` (npm ci && npm run build in ui/) first."
    );
    tauri_build::build();
}
