//! Interpreters and the script they run: which executables are interpreters (node, python*,
//! ruby, perl, bun, deno, php), and which argument names the program, past the interpreter's
//! own options.

use std::path::{Path, PathBuf};

/// The interpreter families, each with its own option rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interpreter {
    Node,
    Python,
    Ruby,
    Perl,
    Bun,
    Deno,
    Php,
}

/// What an interpreter was asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A script file, as given (maybe relative).
    Script(String),
    /// `python -m NAME`.
    Module(String),
    /// Code on the command line (`-c`, `-e`): nothing names the program.
    Inline,
    /// No program at all (a REPL).
    Nothing,
}

/// One family's options: which run inline code, which name a module, which take a value
/// (as the next argument, or glued to a short one: `-Wignore`).
struct Options {
    inline: &'static [&'static str],
    module: &'static [&'static str],
    script: &'static [&'static str],
    value: &'static [&'static str],
    /// Subcommands skipped before the script (`deno run x.ts`); those in `inline` mean code.
    subcommands: &'static [&'static str],
}

impl Interpreter {
    /// The family an executable's file name belongs to: `python3.12` and `ruby3.2` count,
    /// matched without case (macOS's framework Python is `Python`).
    pub(super) fn of(file_name: &str) -> Option<Self> {
        let lower = file_name.to_ascii_lowercase();
        // Versioned names: `python3.12`, `perl5.34`, `ruby3.2`.
        let base = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match (base, base.len() == lower.len()) {
            ("node" | "nodejs", true) => Interpreter::Node,
            ("python", _) => Interpreter::Python,
            ("ruby", _) => Interpreter::Ruby,
            ("perl", _) => Interpreter::Perl,
            ("php", _) => Interpreter::Php,
            ("bun", true) => Interpreter::Bun,
            ("deno", true) => Interpreter::Deno,
            _ => return None,
        })
    }

    fn options(self) -> Options {
        match self {
            Interpreter::Node => Options {
                inline: &["-e", "--eval", "-p", "--print"],
                module: &[],
                script: &[],
                value: &[
                    "-r",
                    "--require",
                    "--import",
                    "--loader",
                    "--experimental-loader",
                    "-C",
                    "--conditions",
                    "--inspect-port",
                    "--title",
                ],
                subcommands: &[],
            },
            Interpreter::Python => Options {
                inline: &["-c"],
                module: &["-m"],
                script: &[],
                value: &["-W", "-X", "--check-hash-based-pycs"],
                subcommands: &[],
            },
            Interpreter::Ruby => Options {
                inline: &["-e"],
                module: &[],
                script: &[],
                value: &["-I", "-r", "-C", "-E", "--encoding"],
                subcommands: &[],
            },
            Interpreter::Perl => Options {
                inline: &["-e", "-E"],
                module: &[],
                script: &[],
                value: &["-I", "-M", "-m"],
                subcommands: &[],
            },
            Interpreter::Php => Options {
                inline: &["-r"],
                module: &[],
                script: &["-f"],
                value: &["-c", "-d", "-z"],
                subcommands: &[],
            },
            Interpreter::Bun => Options {
                inline: &["-e", "--eval", "-p", "--print"],
                module: &[],
                script: &[],
                value: &["-r", "--preload", "--cwd", "--config", "-c"],
                subcommands: &["run"],
            },
            Interpreter::Deno => Options {
                inline: &["eval"],
                module: &[],
                script: &[],
                value: &["--config", "-c", "--import-map", "--location"],
                subcommands: &["run", "eval"],
            },
        }
    }

    /// What `args` (`argv[0]` first) ask this interpreter to run: the first argument past
    /// its own options that does not start with '-'.
    pub(super) fn target(self, args: &[String]) -> Target {
        let opts = self.options();
        let mut rest = args.iter().skip(1);
        let mut first = true;
        while let Some(arg) = rest.next() {
            let arg = arg.as_str();
            if first && opts.subcommands.contains(&arg) {
                first = false;
                if opts.inline.contains(&arg) {
                    return Target::Inline;
                }
                continue;
            }
            first = false;
            if arg == "--" {
                return rest
                    .next()
                    .map_or(Target::Nothing, |s| Target::Script(s.clone()));
            }
            if arg == "-" || !arg.starts_with('-') {
                // `-` is the script read from stdin: no file names the program.
                return if arg == "-" {
                    Target::Nothing
                } else {
                    Target::Script(arg.to_owned())
                };
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (option, glued) = match long.split_once('=') {
                    Some((o, _)) => (format!("--{o}"), true),
                    None => (arg.to_owned(), false),
                };
                let option = option.as_str();
                if opts.inline.contains(&option) {
                    return Target::Inline;
                }
                if opts.value.contains(&option) && !glued {
                    rest.next();
                }
                continue;
            }
            // A cluster of short options (`-Bu`, `-Wignore`, `-mhttp.server`): the first
            // letter that runs code, names a module or takes a value ends it.
            for (at, letter) in arg.char_indices().skip(1) {
                let option = format!("-{letter}");
                let option = option.as_str();
                let glued = &arg[at + letter.len_utf8()..];
                let mut value = || {
                    if glued.is_empty() {
                        rest.next().cloned()
                    } else {
                        Some(glued.to_owned())
                    }
                };
                if opts.inline.contains(&option) {
                    return Target::Inline;
                }
                if opts.module.contains(&option) {
                    return value().map_or(Target::Nothing, Target::Module);
                }
                if opts.script.contains(&option) {
                    return value().map_or(Target::Nothing, Target::Script);
                }
                if opts.value.contains(&option) {
                    if glued.is_empty() {
                        rest.next();
                    }
                    break;
                }
            }
        }
        Target::Nothing
    }

    /// For a Node-family script inside a package under `node_modules`, the package's name
    /// (its last segment: `@anthropic-ai/claude-code` gives "claude-code").
    pub(super) fn package_name(self, script: &Path) -> Option<String> {
        if !matches!(
            self,
            Interpreter::Node | Interpreter::Bun | Interpreter::Deno
        ) {
            return None;
        }
        let parts: Vec<String> = script
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let at = parts.iter().rposition(|p| p == "node_modules")?;
        // The script itself must lie inside the package, not be the package directory.
        let package = parts.get(at + 1..parts.len().saturating_sub(1))?;
        let name = if package.first()?.starts_with('@') {
            package.get(1)?
        } else {
            package.first()?
        };
        Some(name.clone()).filter(|n| !n.is_empty())
    }
}

/// `given` as an absolute path: joined to the process's working directory when relative,
/// then canonicalized (symlinks resolved) when the file can be found; else as far as it got.
pub(super) fn resolve(given: &str, cwd: Option<&Path>) -> PathBuf {
    let path = Path::new(given);
    let joined = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    std::fs::canonicalize(&joined).unwrap_or(joined)
}

/// Whether an interpreter's script is a launcher that passes the connection on: `npx` and
/// `npm` (`npx-cli.js` and `npm-cli.js` once their symlinks are resolved).
pub(super) fn is_pass_through_script(file_name: &str) -> bool {
    let stem = file_name.strip_suffix(".js").unwrap_or(file_name);
    let stem = stem.strip_suffix("-cli").unwrap_or(stem);
    matches!(stem, "npx" | "npm" | "tidings-mcp" | "tidings")
}
