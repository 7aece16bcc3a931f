//! TEMPORARY stub of the agent identity contract; replaced by the real module on merge.
#![allow(missing_docs, clippy::missing_errors_doc)]

use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentIdentity {
    pub key: String,
    pub name: String,
    pub signer: Option<String>,
    pub program: Option<PathBuf>,
}

impl AgentIdentity {
    pub fn unidentified() -> Self {
        AgentIdentity {
            key: "unidentified".into(),
            name: "Unidentified program".into(),
            signer: None,
            program: None,
        }
    }
    pub fn token(name: &str) -> Self {
        AgentIdentity {
            key: format!("token:{name}"),
            name: name.into(),
            signer: None,
            program: None,
        }
    }
    pub fn id(&self) -> String {
        if self.is_unidentified() {
            return "unidentified".into();
        }
        agent_id(&self.name, &self.key)
    }
    pub fn is_unidentified(&self) -> bool {
        self.key == "unidentified"
    }
}

pub fn agent_id(name: &str, key: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    format!("{slug}-{:06x}", h & 0xff_ffff)
}

pub struct Identifier;

pub fn default_identifier() -> Identifier {
    Identifier
}

impl Identifier {
    pub fn identify(&self, pid: i32, _uid: u32) -> AgentIdentity {
        let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
            return AgentIdentity::unidentified();
        };
        AgentIdentity {
            key: format!("exe:{}", exe.display()),
            name: exe
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            signer: None,
            program: Some(exe),
        }
    }
}
