//! The subset of a Dockerfile that runs on the host's toolchains, turned into
//! a build script and a start command (docs/arenas.md). Every stage shares one
//! folder standing for the image's root (`root`): `WORKDIR /app` is
//! `<root>/app`, `COPY` copies from the framework's folder into it, `COPY
//! --from` copies within it (a copy onto itself is skipped), `RUN` lines run
//! there in order, and absolute paths the Dockerfile made (its WORKDIRs and
//! COPY targets) are rewritten under `root` in RUN, ENV and CMD. The
//! framework's own folder is never written to: a Rust Dockerfile's
//! dependency-cache trick (`rm -rf src/`) would delete its sources. `FROM`
//! names only the toolchain the stage needs. What does not fit (a system
//! package the host lacks, an instruction with no meaning here, no CMD) is
//! one error naming the file and line.

use std::path::{Path, PathBuf};

/// What a Dockerfile becomes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recipe {
    /// A `sh` script: the stages' COPY and RUN lines.
    pub build: String,
    /// The start command (the last stage's ENTRYPOINT and CMD), with its ENV.
    pub run: String,
    /// The folder `run` starts in: the last stage's WORKDIR under `root`.
    pub workdir: PathBuf,
    /// Programs the stages' images stand for (`go` for `golang:1.26`), each
    /// with the line naming it.
    pub toolchains: Vec<(String, String)>,
    /// Lines left out, each with why (`apt-get install curl`: on PATH).
    pub skipped: Vec<String>,
}

/// A Dockerfile line Stampede cannot replay: `file:line: what; what to do`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported(pub String);

/// Images that provide a toolchain, by the last part of their name.
const TOOLCHAINS: &[(&str, &str)] = &[
    ("golang", "go"),
    ("rust", "cargo"),
    ("node", "node"),
    ("python", "python3"),
    ("pypy", "pypy3"),
    ("bun", "bun"),
    ("deno", "deno"),
    ("ruby", "ruby"),
    ("php", "php"),
    ("openjdk", "java"),
    ("eclipse-temurin", "java"),
    ("maven", "mvn"),
    ("gradle", "gradle"),
    ("sdk", "dotnet"),
    ("elixir", "elixir"),
    ("crystal", "crystal"),
    ("dart", "dart"),
    ("swift", "swift"),
    ("gcc", "cc"),
    ("zig", "zig"),
];

/// System packages that name a program of another name.
const PACKAGE_PROGRAMS: &[(&str, &str)] =
    &[("nodejs", "node"), ("build-essential", "cc"), ("python3-pip", "pip3"), ("g++", "c++"), ("golang", "go")];

/// Packages a host always has or that only matter inside an image.
const HARMLESS_PACKAGES: &[&str] = &["ca-certificates", "tzdata", "gnupg", "apt-transport-https", "lsb-release"];

struct Instruction {
    line: usize,
    keyword: String,
    args: String,
}

/// Reads `file` (shown in errors) into a recipe whose image root is `root`
/// and whose COPY sources are in `folder`.
pub fn read(file: &Path, text: &str, folder: &Path, root: &Path) -> Result<Recipe, Unsupported> {
    let instructions = instructions(text);
    let mut replay = Replay::new(file, folder, root, made_paths(&instructions));
    for ins in &instructions {
        replay.step(ins)?;
    }
    replay.finish()
}

/// The Dockerfile replayed as a shell script, one instruction at a time:
/// the script so far, the current stage's WORKDIR, ENV and start command.
struct Replay<'a> {
    file: &'a Path,
    root: &'a Path,
    root_text: String,
    prefixes: Vec<String>,
    recipe: Recipe,
    script: String,
    env: Vec<String>,
    entrypoint: Option<String>,
    cmd: Option<String>,
    stages: usize,
}

impl<'a> Replay<'a> {
    fn new(file: &'a Path, folder: &Path, root: &'a Path, prefixes: Vec<String>) -> Replay<'a> {
        let mut script = format!("set -e\nSRC='{}'\n", folder.display());
        script.push_str("copy() { dest=$1; shift; for s in \"$@\"; do if [ -d \"$s\" ]; then mkdir -p \"$dest\"; cp -a \"$s/.\" \"$dest/\"; else case $dest in */) mkdir -p \"$dest\";; *) mkdir -p \"$(dirname \"$dest\")\";; esac; cp -a \"$s\" \"$dest\"; fi; done; }\n");
        Replay {
            file,
            root,
            root_text: root.display().to_string(),
            prefixes,
            recipe: Recipe { workdir: root.to_path_buf(), ..Recipe::default() },
            script,
            env: Vec::new(),
            entrypoint: None,
            cmd: None,
            stages: 0,
        }
    }

    fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.file.display())
    }

    fn map(&self, text: &str) -> String {
        map_paths(text, &self.prefixes, &self.root_text)
    }

    fn step(&mut self, ins: &Instruction) -> Result<(), Unsupported> {
        let args = ins.args.trim();
        match ins.keyword.as_str() {
            "FROM" => self.from(ins, args),
            "WORKDIR" => self.workdir(args),
            "ENV" | "ARG" => self.assign(&ins.keyword, args),
            "COPY" | "ADD" => {
                let map = |text: &str| self.map(text);
                let lines = copy(ins, &self.at(ins.line), &self.recipe.workdir, self.root, &map)?;
                self.script.push_str(&lines);
            }
            "RUN" => self.run(ins, args)?,
            "CMD" => self.cmd = Some(self.map(&exec_or_shell(args))),
            "ENTRYPOINT" => self.entrypoint = Some(self.map(&exec_or_shell(args))),
            "EXPOSE" | "LABEL" | "HEALTHCHECK" | "USER" | "STOPSIGNAL" | "VOLUME" | "MAINTAINER" => {}
            other => {
                return Err(Unsupported(format!(
                    "{}: {other} has no meaning without Docker: give build and run in an app.toml beside it",
                    self.at(ins.line)
                )))
            }
        }
        Ok(())
    }

    /// A new stage: its own subshell from the image root, its own ENV and start.
    fn from(&mut self, ins: &Instruction, args: &str) {
        if self.stages > 0 {
            self.script.push_str(")\n");
        }
        self.stages += 1;
        self.script.push_str(&format!("(\nmkdir -p '{0}'\ncd '{0}'\n", self.root_text));
        self.recipe.workdir = self.root.to_path_buf();
        self.env.clear();
        (self.entrypoint, self.cmd) = (None, None);
        let image = args.split_whitespace().find(|w| !w.starts_with("--")).unwrap_or_default();
        if let Some(program) = toolchain_of(image) {
            self.recipe.toolchains.push((program.to_string(), format!("{}: FROM {image}", self.at(ins.line))));
        }
    }

    fn workdir(&mut self, args: &str) {
        let dir = clean(&if args.starts_with('/') {
            self.root.join(args.trim_start_matches('/'))
        } else {
            self.recipe.workdir.join(args)
        });
        self.script.push_str(&format!("mkdir -p '{0}'\ncd '{0}'\n", dir.display()));
        self.recipe.workdir = dir;
    }

    /// ENV sets a value; ARG a default the environment may override.
    fn assign(&mut self, keyword: &str, args: &str) {
        for (name, value) in assignments(args) {
            let line = match (&value, keyword) {
                (Some(v), "ENV") => format!("export {name}={}", self.map(v)),
                (Some(v), _) => format!("export {name}=\"${{{name}:-{}}}\"", self.map(v).trim_matches('"')),
                (None, _) => continue,
            };
            self.script.push_str(&line);
            self.script.push('\n');
            self.env.push(line);
        }
    }

    fn run(&mut self, ins: &Instruction, args: &str) -> Result<(), Unsupported> {
        let command = exec_or_shell(args);
        match skip_reason(&command) {
            // Each RUN in its own shell, as in Docker: a `cd` ends with it.
            Skip::No => self.script.push_str(&format!("(\n{}\n)\n", self.map(&command))),
            Skip::Yes(why) => self.recipe.skipped.push(format!("{}: {why}", self.at(ins.line))),
            Skip::Missing(packages) => {
                return Err(Unsupported(format!(
                    "{}: RUN installs system packages not on this host ({packages}): install them, or give build and run in an app.toml beside it",
                    self.at(ins.line)
                )))
            }
        }
        Ok(())
    }

    /// The recipe: the script closed, the last stage's ENTRYPOINT and CMD
    /// (one is needed) started with its ENV.
    fn finish(mut self) -> Result<Recipe, Unsupported> {
        if self.stages > 0 {
            self.script.push_str(")\n");
        }
        let start = match (self.entrypoint, self.cmd) {
            (Some(e), Some(c)) => format!("{e} {c}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => {
                return Err(Unsupported(format!(
                    "{}: no CMD or ENTRYPOINT in its last stage: add run = \"<the start command>\" to an app.toml beside it",
                    self.file.display()
                )))
            }
        };
        let mut run: String = self.env.iter().map(|e| format!("{e}; ")).collect();
        run.push_str(&format!("exec {start}"));
        self.recipe.run = run;
        self.recipe.build = self.script;
        Ok(self.recipe)
    }
}

/// The Dockerfile's instructions: continuation lines joined, comments left out.
fn instructions(text: &str) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut pending: Option<Instruction> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_none()) {
            continue;
        }
        let (body, continues) = match trimmed.strip_suffix('\\') {
            Some(body) => (body, true),
            None => (trimmed, false),
        };
        match pending.as_mut() {
            Some(ins) => {
                ins.args.push(' ');
                ins.args.push_str(body);
            }
            None => {
                let (keyword, args) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                pending = Some(Instruction { line: i + 1, keyword: keyword.to_ascii_uppercase(), args: args.into() });
            }
        }
        if !continues {
            out.extend(pending.take());
        }
    }
    out.extend(pending);
    out
}

/// `path` without `.` components and with `..` applied.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `["a", "b c"]` as `a 'b c'`; shell form as it is.
fn exec_or_shell(args: &str) -> String {
    match serde_json::from_str::<Vec<String>>(args) {
        Ok(words) => words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "),
        Err(_) => args.to_string(),
    }
}

fn quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `ENV A=1 B="x y"` or `ENV A 1`: names and values (quotes kept for the shell).
fn assignments(args: &str) -> Vec<(String, Option<String>)> {
    if !args.contains('=') || args.split_whitespace().next().is_some_and(|w| !w.contains('=')) {
        let (name, value) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        let value = value.trim();
        return vec![(name.to_string(), (!value.is_empty()).then(|| quote(value)))];
    }
    let mut out = Vec::new();
    let mut rest = args.trim();
    while !rest.is_empty() {
        let (name, after) = rest.split_once('=').unwrap_or((rest, ""));
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            (format!("\"{}\"", &quoted[..end]), quoted.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (quote(&after[..end]), &after[end..])
        };
        out.push((name.trim().to_string(), Some(value)));
        rest = next.trim_start();
        if !name.contains(char::is_whitespace) && after.is_empty() {
            break;
        }
    }
    out
}

/// A COPY or ADD as shell: from the framework's folder, or (`--from`) within root.
fn copy(
    ins: &Instruction,
    at: &str,
    workdir: &Path,
    root: &Path,
    map: &dyn Fn(&str) -> String,
) -> Result<String, Unsupported> {
    let words = match serde_json::from_str::<Vec<String>>(ins.args.trim()) {
        Ok(words) => words,
        Err(_) => ins.args.split_whitespace().map(|w| w.trim_matches(['\'', '"']).to_string()).collect(),
    };
    let from = words.iter().find_map(|w| w.strip_prefix("--from=")).map(str::to_string);
    let paths: Vec<&String> = words.iter().filter(|w| !w.starts_with("--")).collect();
    let Some((dest, sources)) = paths.split_last().filter(|(_, s)| !s.is_empty()) else {
        return Err(Unsupported(format!("{at}: {} needs a source and a destination", ins.keyword)));
    };
    if sources.iter().any(|s| s.contains("://")) {
        return Err(Unsupported(format!("{at}: ADD of a URL: download it into the folder and COPY it instead")));
    }
    let into_folder = dest.ends_with('/') || dest.as_str() == "." || sources.len() > 1;
    let dest = clean(&if dest.starts_with('/') { root.join(dest.trim_start_matches('/')) } else { workdir.join(dest) });
    let mut dest_text = dest.display().to_string();
    if into_folder {
        dest_text.push('/');
    }
    let mut line = String::new();
    for source in sources {
        let from_path = match &from {
            Some(_) => PathBuf::from(map(source)),
            None => PathBuf::from(format!("$SRC/{}", source.trim_start_matches("./"))),
        };
        if from.is_some()
            && (from_path == dest
                || from_path.to_string_lossy().trim_end_matches('/') == dest_text.trim_end_matches('/'))
        {
            continue;
        }
        let shown = from_path.display().to_string();
        // Unquoted so the shell expands COPY's globs (`*.go`); $SRC has no space.
        line.push_str(&format!("copy '{dest_text}' {shown}\n"));
    }
    Ok(line)
}

enum Skip {
    No,
    Yes(String),
    Missing(String),
}

/// RUN lines that install system packages (skipped when the host has what
/// they install) or change the user's machine outside the image.
fn skip_reason(command: &str) -> Skip {
    if command.trim_start().starts_with("git config --global") {
        return Skip::Yes("`git config --global` would change your own git settings".into());
    }
    let installers = ["apt-get", "apt ", "apk ", "yum ", "dnf ", "microdnf "];
    if !installers.iter().any(|i| command.contains(i)) {
        return Skip::No;
    }
    let mut missing = Vec::new();
    for part in command.split(['&', ';', '|']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "install" || *w == "add") else { continue };
        if !words[..at].iter().any(|w| installers.iter().any(|i| i.trim() == *w)) {
            continue;
        }
        for package in words[at + 1..].iter().filter(|w| !w.starts_with('-')) {
            let name = package.split(['=', ':']).next().unwrap_or(package);
            let program = PACKAGE_PROGRAMS.iter().find(|(p, _)| *p == name).map_or(name, |(_, prog)| *prog);
            let present = HARMLESS_PACKAGES.contains(&name)
                || crate::scenario::manifest::which(program).is_some()
                || name.starts_with("lib") && name.ends_with("-dev") && header_present(name);
            if !present {
                missing.push(name.to_string());
            }
        }
    }
    if missing.is_empty() {
        Skip::Yes("system packages (apt-get, apk, …): none missing on this host".into())
    } else {
        Skip::Missing(missing.join(" "))
    }
}

/// A `libfoo-dev` package counts as present when `/usr/include` has `foo`.
fn header_present(package: &str) -> bool {
    let stem = package.trim_start_matches("lib").trim_end_matches("-dev");
    Path::new("/usr/include").join(stem).exists() || Path::new("/usr/include").join(format!("{stem}.h")).exists()
}

/// The program an image stands for: `golang:1.26-alpine` -> `go`.
pub fn toolchain_of(image: &str) -> Option<&'static str> {
    let name = image.split([':', '@']).next().unwrap_or(image);
    let last = name.rsplit('/').next().unwrap_or(name);
    TOOLCHAINS.iter().find(|(image, _)| *image == last).map(|(_, program)| *program)
}

/// The absolute paths the Dockerfile makes: its WORKDIRs and COPY targets,
/// longest first so `/go/bin/app` wins over `/go/bin`.
fn made_paths(instructions: &[Instruction]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ins in instructions {
        let last = match ins.keyword.as_str() {
            "WORKDIR" => Some(ins.args.trim().to_string()),
            "COPY" | "ADD" => ins.args.split_whitespace().last().map(|w| w.trim_matches(['"', '\'', ']']).to_string()),
            _ => None,
        };
        if let Some(path) = last.filter(|p| p.starts_with('/') && p.len() > 1) {
            out.push(path.trim_end_matches('/').to_string());
        }
    }
    out.sort_by_key(|p| std::cmp::Reverse(p.len()));
    out.dedup();
    out
}

/// `text` with each made path (at a word's start, whole components) moved under `root`.
pub fn map_paths(text: &str, prefixes: &[String], root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < text.len() {
        let starts_word = i == 0 || matches!(bytes[i - 1], b' ' | b'"' | b'\'' | b'=' | b':' | b'\t' | b'(');
        let hit = starts_word
            .then(|| {
                prefixes.iter().find(|p| {
                    text[i..].starts_with(p.as_str())
                        && text[i + p.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '-' && c != '.')
                })
            })
            .flatten();
        match hit {
            Some(prefix) => {
                out.push_str(root);
                out.push_str(prefix);
                i += prefix.len();
            }
            None => {
                let c = text[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}
