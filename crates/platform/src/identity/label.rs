//! A signature's label, `TEAMID:identifier`: how an update's signer is recorded
//! (`Staged.signed_by`) and compared with this copy's, since macOS ties Full Disk Access to
//! the designated requirement, which a Developer ID app's team and identifier pin.

use super::Signing;

/// The longest label read back: a team id is 10 characters and a bundle identifier at most
/// 255, so anything longer is not a label.
pub const MAX_LABEL_BYTES: usize = 300;

/// A label that is not `TEAMID:identifier`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    /// Longer than [`MAX_LABEL_BYTES`].
    #[error("a signing label is at most {MAX_LABEL_BYTES} bytes, this one is {0}")]
    TooLong(usize),
    /// No `:` between the team and the identifier.
    #[error(
        "a signing label is TEAMID:identifier (e.g. Q6L2SF6YDW:dev.tidings.Tidings); no ':' in {0:?}"
    )]
    NoColon(String),
    /// The team part is empty or not ASCII letters and digits.
    #[error("a signing label's team id is ASCII letters and digits (e.g. Q6L2SF6YDW), not {0:?}")]
    BadTeam(String),
    /// Nothing after the `:`.
    #[error("a signing label names an identifier after the ':' (e.g. dev.tidings.Tidings)")]
    NoIdentifier,
}

impl Signing {
    /// `TEAMID:identifier` (`Q6L2SF6YDW:dev.tidings.Tidings`); `None` without a team (ad-hoc
    /// and Apple's own signatures), which no other build can share.
    pub fn label(&self) -> Option<String> {
        let team = self.team.as_deref().filter(|t| !t.is_empty())?;
        Some(format!("{team}:{}", self.identifier))
    }

    /// The signature a [`Signing::label`] names (who signed it, `signer`, is not in a label).
    pub fn from_label(label: &str) -> Result<Signing, LabelError> {
        if label.len() > MAX_LABEL_BYTES {
            return Err(LabelError::TooLong(label.len()));
        }
        // A team id has no ':', so the first one ends it; an identifier may hold one.
        let (team, identifier) = label
            .split_once(':')
            .ok_or_else(|| LabelError::NoColon(label.to_owned()))?;
        if team.is_empty() || !team.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(LabelError::BadTeam(team.to_owned()));
        }
        if identifier.trim().is_empty() {
            return Err(LabelError::NoIdentifier);
        }
        Ok(Signing {
            identifier: identifier.to_owned(),
            team: Some(team.to_owned()),
            signer: None,
        })
    }

    /// Whether `other` comes from the same developer as this one, so a Full Disk Access grant
    /// to one applies to the other: both have a team, the teams are equal and so are the
    /// identifiers. Ad-hoc signatures (no team) never match, not even each other: macOS ties
    /// their grant to the one build.
    pub fn same_developer(&self, other: &Signing) -> bool {
        match (self.team.as_deref(), other.team.as_deref()) {
            (Some(a), Some(b)) => !a.is_empty() && a == b && self.identifier == other.identifier,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(team: Option<&str>, identifier: &str) -> Signing {
        Signing {
            identifier: identifier.into(),
            team: team.map(str::to_owned),
            signer: Some("Tidings Dev".into()),
        }
    }

    #[test]
    fn a_label_reads_back_as_the_same_developer() {
        let ours = signed(Some("Q6L2SF6YDW"), "dev.tidings.Tidings");
        let label = ours.label().unwrap();
        assert_eq!(label, "Q6L2SF6YDW:dev.tidings.Tidings");
        let back = Signing::from_label(&label).unwrap();
        assert_eq!(back.team.as_deref(), Some("Q6L2SF6YDW"));
        assert_eq!(back.identifier, "dev.tidings.Tidings");
        assert_eq!(back.signer, None);
        assert!(ours.same_developer(&back));
        assert!(back.same_developer(&ours));
    }

    #[test]
    fn another_team_another_identifier_or_no_team_is_another_developer() {
        let ours = signed(Some("Q6L2SF6YDW"), "dev.tidings.Tidings");
        assert!(!ours.same_developer(&signed(Some("ABCDE12345"), "dev.tidings.Tidings")));
        assert!(!ours.same_developer(&signed(Some("Q6L2SF6YDW"), "dev.tidings.Other")));
        let ad_hoc = signed(None, "dev.tidings.Tidings");
        assert!(!ours.same_developer(&ad_hoc));
        assert!(!ad_hoc.same_developer(&ad_hoc.clone()));
        assert_eq!(ad_hoc.label(), None);
        assert!(!signed(Some(""), "x").same_developer(&signed(Some(""), "x")));
    }

    #[test]
    fn an_identifier_may_hold_a_colon_the_team_may_not() {
        let s = Signing::from_label("Q6L2SF6YDW:a:b").unwrap();
        assert_eq!(s.identifier, "a:b");
        assert_eq!(s.label().unwrap(), "Q6L2SF6YDW:a:b");
    }

    #[test]
    fn a_malformed_label_is_refused_naming_the_shape() {
        assert!(matches!(
            Signing::from_label("dev.tidings.Tidings"),
            Err(LabelError::NoColon(_))
        ));
        assert!(matches!(
            Signing::from_label(":dev.tidings.Tidings"),
            Err(LabelError::BadTeam(_))
        ));
        assert!(matches!(
            Signing::from_label("Q6L2 SF6YDW:x"),
            Err(LabelError::BadTeam(_))
        ));
        assert_eq!(
            Signing::from_label("Q6L2SF6YDW: "),
            Err(LabelError::NoIdentifier)
        );
        let long = format!("Q6L2SF6YDW:{}", "a".repeat(MAX_LABEL_BYTES));
        let error = Signing::from_label(&long).unwrap_err();
        assert!(error.to_string().contains("at most 300 bytes"), "{error}");
        assert!(
            Signing::from_label("x")
                .unwrap_err()
                .to_string()
                .contains("TEAMID:identifier")
        );
    }
}
