//! macOS's side of identity: [`Codesign`] reads a program's signature with `codesign`, and
//! [`DarwinTable`] reads a process through libc (`proc_pidpath`, `proc_pidinfo`, `sysctl
//! KERN_PROCARGS2`). The parsers are plain functions, shared and tested on Linux; only the
//! libc calls are macOS-only.

use std::path::Path;

use super::{CodeSigning, MAX_ARGS_BYTES, Signing};
use crate::command::CommandRunner;

/// `codesign` by absolute path: a lookup on `PATH` could run another program, which would
/// then say whose signature a binary carries.
const CODESIGN: &str = "/usr/bin/codesign";

/// A program's signature as `codesign -dv --verbose=2 PATH` prints it, through a
/// [`CommandRunner`].
#[derive(Debug)]
pub struct Codesign<R: CommandRunner> {
    runner: R,
}

impl<R: CommandRunner> Codesign<R> {
    /// `codesign` through `runner`.
    pub fn new(runner: R) -> Self {
        Codesign { runner }
    }

    /// The runner it asks through.
    pub fn runner(&self) -> &R {
        &self.runner
    }
}

impl<R: CommandRunner> CodeSigning for Codesign<R> {
    fn signing(&self, program: &Path) -> Option<Signing> {
        // A path that is not UTF-8 cannot be passed as it is; a lossy copy would name
        // another file.
        let path = program.to_str()?;
        let out = self
            .runner
            .run(CODESIGN, &["-dv", "--verbose=2", path])
            .ok()?;
        if !out.is_success() {
            // "code object is not signed at all", or the file is gone.
            return None;
        }
        // codesign writes its report to stderr; read stdout too in case that ever changes.
        let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
        text.push('\n');
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        parse_codesign(&text)
    }
}

/// The signature in `codesign -dv --verbose=2` output: `Identifier=`, `TeamIdentifier=`
/// ("not set" for ad-hoc and Apple's own signatures) and the first `Authority=` line, the
/// leaf certificate. `None` without an identifier.
pub fn parse_codesign(text: &str) -> Option<Signing> {
    let field = |name: &str| {
        text.lines().find_map(|line| {
            line.trim()
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .map(str::trim)
                .filter(|v| !v.is_empty())
        })
    };
    let identifier = field("Identifier")?.to_owned();
    let team = field("TeamIdentifier")
        .filter(|t| *t != "not set")
        .map(str::to_owned);
    let signer = field("Authority").map(signer_name);
    Some(Signing {
        identifier,
        team,
        signer,
    })
}

/// Who an authority names: the person or company of a developer certificate
/// ("Developer ID Application: Anthropic PBC (Q6L2SF6YDW)" gives "Anthropic PBC"), "Apple"
/// for Apple's own signing authorities, else the authority as written.
fn signer_name(authority: &str) -> String {
    const APPLE: &[&str] = &[
        "Software Signing",
        "Apple Code Signing Certification Authority",
        "Apple Mac OS Application Signing",
        "Apple iPhone OS Application Signing",
    ];
    const DEVELOPER: &[&str] = &[
        "Developer ID Application:",
        "Apple Development:",
        "Apple Distribution:",
        "Mac Developer:",
        "3rd Party Mac Developer Application:",
    ];
    if APPLE.contains(&authority) {
        return "Apple".to_owned();
    }
    let Some(holder) = DEVELOPER
        .iter()
        .find_map(|prefix| authority.strip_prefix(prefix))
    else {
        return authority.to_owned();
    };
    let holder = holder.trim();
    // The trailing "(TEAMID)" is the team, already in the key.
    let holder = match holder.rfind(" (") {
        Some(at) if holder.ends_with(')') => &holder[..at],
        _ => holder,
    };
    holder.trim().to_owned()
}

/// The arguments in a `sysctl KERN_PROCARGS2` buffer: `argc` (a native-endian `i32`), the
/// executable's path, NUL padding, then `argc` NUL-terminated arguments (the environment
/// follows and is never read). At most [`MAX_ARGS_BYTES`] are looked at; arguments cut
/// there are dropped or kept cut, as lossy UTF-8. `None` if the buffer is too short to hold
/// `argc`.
pub fn parse_procargs2(buffer: &[u8]) -> Option<Vec<String>> {
    let buffer = &buffer[..buffer.len().min(MAX_ARGS_BYTES)];
    let argc = i32::from_ne_bytes(buffer.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let rest = &buffer[4..];
    // Past the executable's path and the padding after it.
    let path_end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    let rest = &rest[path_end..];
    let start = rest.iter().position(|b| *b != 0).unwrap_or(rest.len());
    let rest = &rest[start..];
    if rest.is_empty() {
        return Some(Vec::new());
    }
    Some(
        rest.split(|b| *b == 0)
            .take(argc)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

#[cfg(target_os = "macos")]
pub use darwin::DarwinTable;

#[cfg(target_os = "macos")]
mod darwin {
    //! The libc calls, which exist on macOS only.
    #![allow(unsafe_code)]

    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    use super::super::ProcessTable;
    use super::parse_procargs2;

    /// The most `KERN_PROCARGS2` buffer asked for, whatever `KERN_ARGMAX` says.
    const ARGS_BUFFER_MAX: usize = 4 * 1024 * 1024;

    /// A process table read through libc.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct DarwinTable;

    impl DarwinTable {
        fn bsd_info(pid: i32) -> Option<libc::proc_bsdinfo> {
            let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::zeroed();
            let size = i32::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
            // SAFETY: the buffer is a zeroed proc_bsdinfo of `size` bytes, which is what
            // PROC_PIDTBSDINFO fills; the return value says how many bytes it wrote.
            let written = unsafe {
                libc::proc_pidinfo(
                    pid,
                    libc::PROC_PIDTBSDINFO,
                    0,
                    info.as_mut_ptr().cast(),
                    size,
                )
            };
            // SAFETY: all-zero is a valid proc_bsdinfo (plain integers and byte arrays),
            // and a full write replaced it.
            (written == size).then(|| unsafe { info.assume_init() })
        }

        fn argmax() -> usize {
            let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
            let mut value: libc::c_int = 0;
            let mut size = std::mem::size_of::<libc::c_int>();
            // SAFETY: `value` is a c_int and `size` its size, as KERN_ARGMAX answers.
            let ok = unsafe {
                libc::sysctl(
                    mib.as_mut_ptr(),
                    2,
                    (&raw mut value).cast(),
                    &raw mut size,
                    std::ptr::null_mut(),
                    0,
                )
            } == 0;
            usize::try_from(value)
                .ok()
                .filter(|v| ok && *v > 0)
                .map_or(super::MAX_ARGS_BYTES, |v| v.min(ARGS_BUFFER_MAX))
        }
    }

    impl ProcessTable for DarwinTable {
        fn parent(&self, pid: i32) -> Option<i32> {
            i32::try_from(Self::bsd_info(pid)?.pbi_ppid).ok()
        }

        fn uid(&self, pid: i32) -> Option<u32> {
            // The effective id, as the socket peer's credentials carry.
            Some(Self::bsd_info(pid)?.pbi_uid)
        }

        fn exe(&self, pid: i32) -> Option<PathBuf> {
            let mut buf = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
            let len = u32::try_from(buf.len()).ok()?;
            // SAFETY: `buf` holds `len` bytes; proc_pidpath writes at most that and returns
            // the path's length (0 on failure).
            let n = unsafe { libc::proc_pidpath(pid, buf.as_mut_ptr().cast(), len) };
            let n = usize::try_from(n).ok().filter(|n| *n > 0)?;
            buf.truncate(n);
            Some(PathBuf::from(std::ffi::OsStr::from_bytes(&buf)))
        }

        fn args(&self, pid: i32) -> Option<Vec<String>> {
            let mut buf = vec![0u8; Self::argmax()];
            let mut size = buf.len();
            let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
            // SAFETY: `buf` holds `size` bytes; sysctl writes at most that and stores the
            // count written in `size`.
            let ok = unsafe {
                libc::sysctl(
                    mib.as_mut_ptr(),
                    3,
                    buf.as_mut_ptr().cast(),
                    &raw mut size,
                    std::ptr::null_mut(),
                    0,
                )
            } == 0;
            if !ok {
                return None;
            }
            buf.truncate(size);
            parse_procargs2(&buf)
        }

        fn cwd(&self, pid: i32) -> Option<PathBuf> {
            let mut info = std::mem::MaybeUninit::<libc::proc_vnodepathinfo>::zeroed();
            let size = i32::try_from(std::mem::size_of::<libc::proc_vnodepathinfo>()).ok()?;
            // SAFETY: the buffer is a zeroed proc_vnodepathinfo of `size` bytes, which is
            // what PROC_PIDVNODEPATHINFO fills.
            let written = unsafe {
                libc::proc_pidinfo(
                    pid,
                    libc::PROC_PIDVNODEPATHINFO,
                    0,
                    info.as_mut_ptr().cast(),
                    size,
                )
            };
            if written != size {
                return None;
            }
            // SAFETY: all-zero is valid for this plain-data struct, and a full write
            // replaced it.
            let info = unsafe { info.assume_init() };
            // `vip_path` is MAXPATHLEN bytes, declared as 32 rows of 32 by libc.
            let bytes: Vec<u8> = info
                .pvi_cdir
                .vip_path
                .iter()
                .flatten()
                .map(|c| c.cast_unsigned())
                .collect();
            let path = CStr::from_bytes_until_nul(&bytes).ok()?;
            let path = std::ffi::OsStr::from_bytes(path.to_bytes());
            (!path.is_empty()).then(|| PathBuf::from(path))
        }
    }
}
