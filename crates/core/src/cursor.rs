//! Cursors: `v2.<dev>-<ino>-<birth>.<rowid>`, a store file's identity and a `SQLite` ROWID.
//!
//! A ROWID is a position only within one file. Mail rebuilds its index with fresh ROWIDs, so
//! the cursor also names the file: device and inode, and the file's birth time, because Linux
//! (and sometimes APFS) hands a just-freed inode straight to the next new file, so a store
//! deleted and created again can have the old device and inode. A cursor for another file is a
//! gap, not a position. The two stores are different files, so a Mail cursor sent to Messages
//! is a gap too. The older `v1.<dev>-<ino>.<rowid>` form (no birth time) is still accepted.

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::UNIX_EPOCH;

/// The identity of a store file: device, inode and birth time. A rebuilt or recreated store
/// has a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
    /// Birth time in nanoseconds since 1970 (`statx` btime on Linux, `st_birthtime` on
    /// macOS); 0 when the file system does not record one (or the cursor predates it).
    pub birth: u64,
}

impl FileIdentity {
    /// The identity of the file at `path`.
    pub fn of(path: &Path) -> std::io::Result<FileIdentity> {
        let meta = std::fs::metadata(path)?;
        Ok(FileIdentity::from_metadata(&meta))
    }

    /// The identity of a file from its metadata.
    pub fn from_metadata(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        // `created()` is statx's btime on Linux and st_birthtime on macOS; a file system
        // without one (or a birth before 1970) leaves the birth unknown.
        let birth = meta
            .created()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            birth,
        }
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

impl Cursor {
    /// Whether this cursor is a position in the file `current`. An unknown birth (a `v1`
    /// cursor, or a file system without birth times) matches on device and inode alone.
    pub fn is_in(&self, current: FileIdentity) -> bool {
        self.identity.dev == current.dev
            && self.identity.ino == current.ino
            && (self.identity.birth == 0 || self.identity.birth == current.birth)
    }
}

/// The longest cursor we accept: `v2.` plus four u64-sized numbers and separators.
const MAX_CURSOR_LEN: usize = 96;

/// Why a string is not a cursor. Only the message reaches clients.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("cursor is not a Tidings cursor (expected `v2.<dev>-<ino>-<birth>.<rowid>`): {0}")]
pub struct CursorParseError(&'static str);

impl FromStr for Cursor {
    type Err = CursorParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() > MAX_CURSOR_LEN {
            return Err(CursorParseError("longer than 96 characters"));
        }
        let (version, rest) = s
            .split_once('.')
            .ok_or(CursorParseError("no `v2.` prefix"))?;
        let (file, rowid) = rest
            .split_once('.')
            .ok_or(CursorParseError("no `.` before the rowid"))?;
        let number = |part: &str, what: &'static str| -> Result<u64, CursorParseError> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(CursorParseError(what));
            }
            part.parse().map_err(|_| CursorParseError(what))
        };
        let mut parts = file.split('-');
        let (dev, ino) = (parts.next().unwrap_or(""), parts.next());
        let birth = parts.next();
        let (ino, birth) = match (version, ino, birth, parts.next()) {
            ("v1", Some(ino), None, None) => (ino, None),
            ("v2", Some(ino), Some(birth), None) => (ino, Some(birth)),
            ("v1", ..) => return Err(CursorParseError("a v1 cursor names `<dev>-<ino>`")),
            ("v2", ..) => {
                return Err(CursorParseError("a v2 cursor names `<dev>-<ino>-<birth>`"));
            }
            _ => return Err(CursorParseError("no `v2.` prefix")),
        };
        let dev = number(dev, "device is not a number")?;
        let ino = number(ino, "inode is not a number")?;
        let birth = match birth {
            Some(b) => number(b, "birth time is not a number")?,
            None => 0,
        };
        let rowid = number(rowid, "rowid is not a number")?;
        let rowid = i64::try_from(rowid).map_err(|_| CursorParseError("rowid out of range"))?;
        Ok(Cursor {
            identity: FileIdentity { dev, ino, birth },
            rowid,
        })
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FileIdentity { dev, ino, birth } = self.identity;
        write!(f, "v2.{dev}-{ino}-{birth}.{}", self.rowid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(dev: u64, ino: u64, birth: u64) -> FileIdentity {
        FileIdentity { dev, ino, birth }
    }

    #[test]
    fn round_trips_through_its_string_form() {
        let c = Cursor {
            identity: id(2049, 1_234_567, 1_796_037_325_672_921_391),
            rowid: 42,
        };
        assert_eq!(c.to_string(), "v2.2049-1234567-1796037325672921391.42");
        assert_eq!(c.to_string().parse::<Cursor>(), Ok(c));
        let max = Cursor {
            identity: id(u64::MAX, u64::MAX, u64::MAX),
            rowid: i64::MAX,
        };
        assert_eq!(max.to_string().parse::<Cursor>(), Ok(max));
    }

    #[test]
    fn a_v1_cursor_has_an_unknown_birth_and_matches_on_device_and_inode() {
        let c: Cursor = "v1.2049-1234567.42".parse().unwrap();
        assert_eq!(c.identity, id(2049, 1_234_567, 0));
        assert!(c.is_in(id(2049, 1_234_567, 99)));
        assert!(!c.is_in(id(2049, 7, 99)));
    }

    #[test]
    fn a_new_birth_on_the_same_inode_is_another_file() {
        let c = Cursor {
            identity: id(1, 2, 3),
            rowid: 4,
        };
        assert!(c.is_in(id(1, 2, 3)));
        assert!(!c.is_in(id(1, 2, 5)), "recreated on a reused inode");
        assert!(!c.is_in(id(9, 2, 3)));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "garbage",
            "v3.1-2-3.3",
            "v1.1-2",
            "v1.1.2",
            "v1.a-2.3",
            "v1.1-2-3.4",
            "v2.1-2.3",
            "v2.1-2-3-4.5",
            "v2.1-2-x.5",
            "v2.1-2-.5",
            "v2.1--3.5",
            "v2.-2-3.5",
            "v2.1-2-3.-3",
            "v2.1-2-+3.3",
            "v1.1-2.-3",
            "v1.1-2.+3",
            "v1.1-2.3.4",
            "v1.1-2.99999999999999999999",
            "v1.1-2.18446744073709551615",
            "v2.1-2-18446744073709551616.3",
        ] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad:?} parsed");
        }
        assert!(
            format!("v2.1-2-3.{}", "9".repeat(100))
                .parse::<Cursor>()
                .is_err()
        );
    }
}
