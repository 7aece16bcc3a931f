//! The stores the parts run on: an empty demo home, and a 1,000,000-message Envelope Index
//! built once and cached under `target/bench/` (about 20 s to build, reused by every run).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tidings_fixtures::{
    AccountKind, BulkSpec, MacHome, MailFixture, MailProfile, MessagesFixture, MessagesProfile,
    bulk_mail,
};

use crate::daemon::tidings_bin;

/// The domain 1% of the bulk messages come from (inside the demo allowlist's example.com).
pub const BULK_DOMAIN: &str = "bench.example.com";

/// `target/bench`: logs, the cached store, the summary.
pub fn bench_dir() -> PathBuf {
    let release = tidings_bin();
    let target = release
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("target"), Path::to_path_buf);
    target.join("bench")
}

/// Writes the demo settings, so a daemon or app on `home` finds no first run.
pub fn settings(home: &Path) -> Result<()> {
    std::fs::write(
        home.join("settings.toml"),
        tidings_server::demo::DEMO_SETTINGS,
    )
    .context("write the demo settings")
}

fn private_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("create {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// A demo home with both stores empty (an account and its INBOX, no message).
pub fn empty(home: &Path) -> Result<()> {
    private_dir(home)?;
    let mac = MacHome::new(home);
    let mut mail = MailFixture::create(&mac, MailProfile::V10Macos26)?;
    let account = mail.add_account("bench@example.com", AccountKind::Imap)?;
    mail.add_mailbox(&account, "INBOX")?;
    MessagesFixture::create(&mac, MessagesProfile::Tahoe)?;
    settings(home)
}

/// The cached demo home with `TIDINGS_BENCH_MESSAGES` (default 1,000,000) mails, 1% from
/// [`BULK_DOMAIN`], built on first use. Parts only read it.
pub fn million() -> Result<(PathBuf, u64)> {
    let messages = crate::stats::env_or("TIDINGS_BENCH_MESSAGES", 1_000_000);
    let home = bench_dir().join(format!("store-{messages}"));
    let ready = home.join("ready");
    if ready.exists() {
        return Ok((home, messages));
    }
    let building = bench_dir().join(format!("store-{messages}.building"));
    let _ = std::fs::remove_dir_all(&building);
    private_dir(&building)?;
    println!(
        "building the {messages}-message store once (cached in {})",
        home.display()
    );
    let mac = MacHome::new(&building);
    let spec = BulkSpec {
        messages,
        target_domain: BULK_DOMAIN.into(),
        target_fraction: 0.01,
        seed: 1,
    };
    let report = bulk_mail(&mac, MailProfile::V10Macos26, &spec)?;
    MessagesFixture::create(&mac, MessagesProfile::Tahoe)?;
    settings(&building)?;
    println!("built in {:.1} s", report.seconds);
    std::fs::write(building.join("ready"), format!("{messages}\n"))?;
    let _ = std::fs::remove_dir_all(&home);
    std::fs::rename(&building, &home).context("move the built store into place")?;
    Ok((home, messages))
}
