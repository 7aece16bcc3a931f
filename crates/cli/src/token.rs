//! `tidings token show|rotate`: the HTTP endpoint's bearer token, straight from the OS
//! keychain. `rotate` writes a fresh token there, then tells a running daemon
//! (`tidings/token/rotate` on the socket) to re-read it; the daemon ends streams opened with
//! the old one. The token itself never crosses the socket (see `http/auth.rs`).
//!
//! `tidings token create|list|revoke NAME`: one token per agent, kept as hashes in the file
//! beside settings.toml (`tidings_server::http::agent_tokens`). `revoke` sends the same
//! `tidings/token/rotate`, so a running daemon reads the file again and ends that agent's
//! streams at once; a new token needs no call (the daemon reads the file when it changes).

use std::sync::Arc;

use anyhow::Context;
use serde::Deserialize;
use serde_json::{Value, json};
use tidings_platform::KeyringKeychain;
use tidings_platform::keychain::SERVICE;
use tidings_protocol::methods::TOKEN_ROTATE;
use tidings_protocol::payloads::{Rotation, rotation};
use tidings_server::http::token;

use tidings_server::http::agent_tokens;

use super::args::{RotateArgs, TokenCommand, TokenListArgs, TokenNameArgs};
use super::client::{Client, ClientError};
use super::exit_code::{Coded, FAILURE};
use super::{resolve_config, resolve_socket};

/// What to do when the keychain cannot be used, said before what the keychain said.
#[cfg(target_os = "macos")]
const NO_KEYCHAIN: &str = "the HTTP token lives in your login keychain, which Tidings could not \
    use; unlock it (Keychain Access > File > Unlock) and try again";
/// What to do when the keychain cannot be used, said before what the keychain said.
#[cfg(not(target_os = "macos"))]
const NO_KEYCHAIN: &str = "the HTTP token lives in the Secret Service, which Tidings could not \
    use; run one (gnome-keyring or KeePassXC) in your D-Bus session and unlock it, or try the \
    endpoint on fake stores without a token: `tidings serve --demo --http 127.0.0.1:3917 \
    --no-auth`";

/// `token show` found nothing to show.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// No token in the keychain yet.
    #[error(
        "no HTTP token yet; one is made when the endpoint first starts (`tidings serve --http \
         127.0.0.1:3917`), or run `tidings token rotate`"
    )]
    NoToken,
}

impl Coded for TokenError {
    fn exit_code(&self) -> u8 {
        FAILURE
    }
}

/// Runs `tidings token …`.
pub async fn run(command: TokenCommand) -> anyhow::Result<()> {
    let command = match command {
        TokenCommand::Create(args) => return create(&args),
        TokenCommand::List(args) => return list(&args),
        TokenCommand::Revoke(args) => return revoke(args).await,
        other => other,
    };
    let keychain = Arc::new(KeyringKeychain::system(SERVICE).context(NO_KEYCHAIN)?);
    match command {
        TokenCommand::Show => {
            let stored = tokio::task::spawn_blocking(move || token::load(keychain.as_ref()))
                .await
                .context("the keychain task failed")?
                .context(NO_KEYCHAIN)?;
            let token = stored.ok_or(TokenError::NoToken)?;
            crate::output::out(format_args!("{}", token.expose()));
            Ok(())
        }
        TokenCommand::Rotate(args) => rotate(keychain, args).await,
        TokenCommand::Create(_) | TokenCommand::List(_) | TokenCommand::Revoke(_) => Ok(()),
    }
}

/// `tidings token create NAME`: the token on stdout, once.
fn create(args: &TokenNameArgs) -> anyhow::Result<()> {
    let (config, _) = resolve_config(args.demo_dir.as_deref(), args.socket.as_deref())?;
    let path = config.join(agent_tokens::FILE_NAME);
    let token = agent_tokens::create(&path, &args.name)?;
    crate::output::out(format_args!("{}", token.expose()));
    crate::output::err(format_args!(
        "tidings: made agent `{name}`'s HTTP token (printed once: {} keeps only its hash). \
         Requests with it are the agent `token:{name}`; `tidings agents` lists it (and its id, \
         for `tidings agents allow|deny`) once it has made one",
        path.display(),
        name = args.name
    ));
    Ok(())
}

/// `tidings token list`: names and dates, never a token.
fn list(args: &TokenListArgs) -> anyhow::Result<()> {
    let (config, _) = resolve_config(args.demo_dir.as_deref(), None)?;
    let path = config.join(agent_tokens::FILE_NAME);
    let file = agent_tokens::load(&path)?;
    if file.tokens.is_empty() {
        crate::output::out(format_args!(
            "No agent tokens (`tidings token create NAME` makes one); the endpoint's own token \
             is `tidings token show`"
        ));
    }
    for token in &file.tokens {
        crate::output::out(format_args!(
            "{}  created {}",
            token.name,
            crate::output::utc(token.created_ms)
        ));
    }
    Ok(())
}

/// `tidings token revoke NAME`: out of the file, then a running daemon told.
async fn revoke(args: TokenNameArgs) -> anyhow::Result<()> {
    let (config, socket) = resolve_config(args.demo_dir.as_deref(), args.socket.as_deref())?;
    let path = config.join(agent_tokens::FILE_NAME);
    agent_tokens::revoke(&path, &args.name)?;
    crate::output::err(format_args!(
        "tidings: removed agent `{}`'s token from {}",
        args.name,
        path.display()
    ));
    let mut client = match Client::connect(&socket).await {
        Ok(client) => client,
        Err(ClientError::NotRunning { .. }) => {
            crate::output::err(format_args!(
                "tidings: no daemon running; the token is refused from its next start"
            ));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let answer = client.call(1, TOKEN_ROTATE, json!({})).await?;
    let reason = Rotation::deserialize(&answer).ok().and_then(|r| r.reason);
    if matches!(
        reason.as_deref(),
        Some(rotation::HTTP_OFF | rotation::NO_AUTH)
    ) {
        crate::output::err(format_args!("tidings: {}", describe(&answer)));
    } else {
        crate::output::err(format_args!(
            "tidings: the running daemon read the tokens again: streams opened with it ended \
             and its requests are refused (401)"
        ));
    }
    Ok(())
}

async fn rotate(keychain: Arc<KeyringKeychain>, args: RotateArgs) -> anyhow::Result<()> {
    tokio::task::spawn_blocking(move || token::rotate(keychain.as_ref()))
        .await
        .context("the keychain task failed")?
        .context(NO_KEYCHAIN)?;
    crate::output::err(format_args!(
        "tidings: stored a new HTTP token in the keychain (`tidings token show` prints it)"
    ));
    let socket = resolve_socket(args.socket.as_deref())?;
    let mut client = match Client::connect(&socket).await {
        Ok(client) => client,
        Err(ClientError::NotRunning { .. }) => {
            crate::output::err(format_args!(
                "tidings: no daemon running; the next start uses the new token"
            ));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let answer = client.call(1, TOKEN_ROTATE, json!({})).await?;
    crate::output::err(format_args!("tidings: {}", describe(&answer)));
    Ok(())
}

/// The daemon's answer in words.
fn describe(answer: &Value) -> String {
    let Ok(rotation) = Rotation::deserialize(answer) else {
        return format!("the running daemon answered {answer}");
    };
    if rotation.rotated {
        let ended = rotation.streams_ended.unwrap_or(0);
        return format!(
            "the running daemon switched to it and ended {ended} stream(s) opened with the old one"
        );
    }
    match rotation.reason.as_deref() {
        Some(rotation::HTTP_OFF) => {
            "the running daemon serves no HTTP endpoint; nothing to switch".into()
        }
        Some(rotation::NO_AUTH) => {
            "the running daemon serves HTTP without a token (--no-auth)".into()
        }
        Some(rotation::UNCHANGED) => "the running daemon already had this token".into(),
        _ => format!("the running daemon answered {answer}"),
    }
}
