//! Cursors: `v1.<dev>-<ino>.<rowid>`, a store file's identity and a SQLite ROWID.
//!
//! A ROWID is a position only within one file. Mail rebuilds its index with fresh ROWIDs, so
//! the cursor also names the file (device and inode): a cursor for another file is a gap, not a
//! position. The two stores are different files, so a Mail cursor sent to Messages is a gap too.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The identity of a store file: its device and inode. A rebuilt store has a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl FileIdentity {
    /// The identity of the file at `path`.
    pub fn of(path: &Path) -> std::io::Result<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        Ok(FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// A position in one store file: events after `rowid` are still to come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// The file this position belongs to.
    pub identity: FileIdentity,
    /// The last ROWID already delivered (or skipped).
    pub rowid: i64,
}

/// The longest cursor we accept: `v1.` plus three u64-sized numbers and separators.
const MAX_CURSOR_LEN: usize = 64;

/// Why a string is not a cursor. Only the message reaches clients.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("cursor is not a Tidings cursor (expected `v1.<dev>-<ino>.<rowid>`): {0}")]
pub struct CursorParseError(&'static str);

impl FromStr for Cursor {
    type Err = CursorParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() > MAX_CURSOR_LEN {
            return Err(CursorParseError("longer than 64 characters"));
        }
        let rest = s
            .strip_prefix("v1.")
            .ok_or(CursorParseError("no `v1.` prefix"))?;
        let (file, rowid) = rest
            .split_once('.')
            .ok_or(CursorParseError("no `.` before the rowid"))?;
        let (dev, ino) = file
            .split_once('-')
            .ok_or(CursorParseError("no `-` between device and inode"))?;
        let number = |part: &str, what: &'static str| -> Result<u64, CursorParseError> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(CursorParseError(what));
            }
            part.parse().map_err(|_| CursorParseError(what))
        };
        let dev = number(dev, "device is not a number")?;
        let ino = number(ino, "inode is not a number")?;
        let rowid = number(rowid, "rowid is not a number")?;
        let rowid = i64::try_from(rowid).map_err(|_| CursorParseError("rowid out of range"))?;
        Ok(Cursor {
            identity: FileIdentity { dev, ino },
            rowid,
        })
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "v1.{}-{}.{}",
            self.identity.dev, self.identity.ino, self.rowid
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_its_string_form() {
        let c = Cursor {
            identity: FileIdentity {
                dev: 2049,
                ino: 1234567,
            },
            rowid: 42,
        };
        assert_eq!(c.to_string(), "v1.2049-1234567.42");
        assert_eq!("v1.2049-1234567.42".parse::<Cursor>(), Ok(c));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "garbage",
            "v2.1-2.3",
            "v1.1-2",
            "v1.1.2",
            "v1.a-2.3",
            "v1.1-2.-3",
            "v1.1-2.+3",
            "v1.1-2.3.4",
            "v1.1-2.99999999999999999999",
            "v1.1-2.18446744073709551615",
        ] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad:?} parsed");
        }
        assert!(
            format!("v1.1-2.{}", "9".repeat(80))
                .parse::<Cursor>()
                .is_err()
        );
    }
}
