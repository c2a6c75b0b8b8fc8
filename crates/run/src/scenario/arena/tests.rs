//! Arena folders in the shapes of real ones (HttpArena's Go, Rust, Python and
//! Node entries; the-benchmarker's Go, Python and Rust languages), written
//! here from their structure, not copied: what the reader makes of each.

use std::path::{Path, PathBuf};

use super::*;

struct Folder(PathBuf);

impl Folder {
    fn new(label: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!("stampede-arena-test-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn file(&self, path: &str, text: &str) -> &Folder {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.0.join(sub)
    }

    /// The manifest of the framework folder `sub`; its build folder goes with this one.
    fn load(&self, sub: &str) -> Result<Manifest, ScenarioError> {
        crate::scenario::apps::load(&self.path(sub))
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        for entry in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
            for framework in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
                let _ = std::fs::remove_dir_all(work_root(&framework.path()));
            }
            let _ = std::fs::remove_dir_all(work_root(&entry.path()));
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const META: &str = r#"{"display_name": "demo", "language": "Go", "type": "production", "engine": "net/http",
  "description": "A demo.", "repo": "https://example.org", "enabled": true,
  "tests": ["baseline", "pipelined", "json", "upload", "static", "async-db", "baseline-h2"], "maintainers": []}"#;

fn recipe(dockerfile: &str) -> Result<dockerfile::Recipe, dockerfile::Unsupported> {
    dockerfile::read(Path::new("fw/Dockerfile"), dockerfile, Path::new("/src/fw"), Path::new("/w"))
}

#[test]
fn a_go_multi_stage_dockerfile_builds_in_the_image_folder_and_starts_the_copied_binary() {
    let r = recipe(
        "FROM golang:1.26-alpine AS build\nWORKDIR /app\nCOPY go.mod go.sum ./\nRUN go mod download\nCOPY main.go ./\n\
         RUN CGO_ENABLED=0 go build -o server main.go\n\nFROM alpine:3.23\nCOPY --from=build /app/server /server\nEXPOSE 8080\nCMD [\"/server\"]\n",
    )
    .unwrap();
    assert_eq!(r.toolchains, vec![("go".to_string(), "fw/Dockerfile:1: FROM golang:1.26-alpine".to_string())]);
    assert!(r.build.contains("SRC='/src/fw'"), "{}", r.build);
    assert!(
        r.build.contains(
            "mkdir -p '/w/app'\ncd '/w/app'\ncopy '/w/app/' $SRC/go.mod\ncopy '/w/app/' $SRC/go.sum\n(\ngo mod download\n)\n"
        ),
        "{}",
        r.build
    );
    assert!(r.build.contains("copy '/w/server' /w/app/server\n"), "{}", r.build);
    assert_eq!(r.run, "exec /w/server");
    assert_eq!(r.workdir, Path::new("/w"));
}

#[test]
fn a_rust_dependency_cache_trick_runs_in_the_image_folder_not_the_sources() {
    let r = recipe(
        "FROM rust:1.94 AS build\nWORKDIR /app\nCOPY Cargo.toml .\n\
         RUN mkdir src && echo \"fn main() {}\" > src/main.rs && cargo build --release && rm -rf src/ \\\n    target/release/demo*\n\
         COPY src ./src\nRUN RUSTFLAGS=\"-C target-cpu=native\" cargo build --release\n\n\
         FROM debian:bookworm-slim\nCOPY --from=build /app/target/release/demo /server\nCMD [\"/server\"]\n",
    )
    .unwrap();
    let cd = r.build.find("cd '/w/app'").unwrap();
    let trick = r.build.find("rm -rf src/").unwrap();
    assert!(cd < trick, "the rm runs in the image folder: {}", r.build);
    assert!(r.build.contains("copy '/w/app/src' $SRC/src\n"), "{}", r.build);
    assert_eq!(r.toolchains[0].0, "cargo");
    assert_eq!(r.run, "exec /w/server");
}

#[test]
fn a_python_dockerfile_keeps_its_workdir_env_and_exec_form_arguments() {
    let r = recipe(
        "FROM python:3.13-slim\nWORKDIR /app\nENV PYTHONUNBUFFERED=1 WORKERS=\"2 3\"\nARG LEVEL=info\nCOPY requirements.txt .\n\
         RUN pip install --no-cache-dir -r requirements.txt\nCOPY . .\nEXPOSE 8080 8081\n\
         CMD [ \"python3\", \"launcher.py\", \"gunicorn\", \"--config\", \"gunicorn_conf.py\", \"app:app\" ]\n",
    )
    .unwrap();
    assert_eq!(r.workdir, Path::new("/w/app"));
    assert_eq!(
        r.run,
        "export PYTHONUNBUFFERED=1; export WORKERS=\"2 3\"; export LEVEL=\"${LEVEL:-info}\"; exec python3 launcher.py gunicorn --config gunicorn_conf.py app:app"
    );
    assert!(r.build.contains("copy '/w/app/' $SRC/.\n"), "{}", r.build);
    assert_eq!(r.toolchains[0].0, "python3");
}

#[test]
fn system_package_lines_are_skipped_when_harmless_and_refused_with_their_line_when_missing() {
    let r = recipe(
        "FROM node:22 AS build\nRUN git config --global url.\"https://github.com/\".insteadOf \"ssh://git@github.com/\"\nWORKDIR /app\n\
         COPY package.json .\nRUN npm install --omit=dev\nFROM ubuntu:24.04\nRUN apt-get update && \\\n  apt-get install -y --no-install-recommends ca-certificates && \\\n\
           rm -rf /var/lib/apt/lists/*\nWORKDIR /app\nCOPY --from=build /app/node_modules ./node_modules\nCOPY app.js .\nENV NODE_ENV=production\nCMD [\"node\", \"app.js\"]\n",
    )
    .unwrap();
    assert_eq!(r.skipped.len(), 2, "{:?}", r.skipped);
    assert!(r.skipped[0].starts_with("fw/Dockerfile:2: `git config --global`"), "{:?}", r.skipped);
    assert!(
        r.skipped[1].starts_with("fw/Dockerfile:7: system packages (apt-get, apk, …): none missing"),
        "{:?}",
        r.skipped
    );
    assert!(!r.build.contains("apt-get") && !r.build.contains("git config"), "{}", r.build);
    assert!(!r.build.contains("node_modules"), "a copy onto itself is left out: {}", r.build);
    assert_eq!(r.run, "export NODE_ENV=production; exec node app.js");
    let e = recipe(
        "FROM debian:12\nWORKDIR /app\nRUN apt-get update && apt-get install -y libzzzstampede-dev\nCMD [\"./x\"]\n",
    )
    .unwrap_err();
    assert!(
        e.0.starts_with("fw/Dockerfile:3: RUN installs system packages not on this host (libzzzstampede-dev)"),
        "{e:?}"
    );
}

#[test]
fn no_cmd_or_an_instruction_without_meaning_is_one_line_naming_the_file() {
    let e = recipe("FROM golang:1.26\nWORKDIR /app\nRUN go build -o s .\n").unwrap_err();
    assert!(e.0.starts_with("fw/Dockerfile: no CMD or ENTRYPOINT in its last stage: add run = "), "{e:?}");
    let e = recipe("FROM golang:1.26\nONBUILD RUN x\nCMD [\"x\"]\n").unwrap_err();
    assert!(e.0.starts_with("fw/Dockerfile:2: ONBUILD has no meaning without Docker"), "{e:?}");
    let ok = recipe("FROM golang:1.26\n# CMD in a comment\nENTRYPOINT [\"/app/s\"]\nCMD [\"-v\"]\n").unwrap();
    assert_eq!(ok.run, "exec /app/s -v", "/app was never made, so it is left alone");
}

#[test]
fn only_paths_the_dockerfile_made_are_moved_and_only_at_whole_components() {
    let prefixes = vec!["/go/bin/app".to_string(), "/go/bin".to_string(), "/app".to_string()];
    assert_eq!(
        dockerfile::map_paths("go build -o /go/bin/app ./ && ls /application /app/x /usr/bin '/app'", &prefixes, "/w"),
        "go build -o /w/go/bin/app ./ && ls /application /w/app/x /usr/bin '/w/app'"
    );
}

#[test]
fn an_httparena_folder_is_a_manifest_on_8080_judged_by_httparena_with_its_data_supplied() {
    let f = Folder::new("httparena");
    f.file("fw/meta.json", META)
        .file("fw/Dockerfile", "FROM python:3.13-slim\nWORKDIR /app\nCOPY . .\nCMD [\"python3\", \"server.py\"]\n");
    let m = f.load("fw").unwrap();
    assert_eq!((m.name.as_str(), m.fixed_port, m.contract().as_deref()), ("fw", Some(8080), Some("httparena")));
    let info = m.arena.as_ref().unwrap();
    assert_eq!(info.driven, ["baseline", "pipelined", "json", "upload"]);
    assert_eq!(info.not_driven, ["static", "async-db", "baseline-h2"]);
    assert_eq!(m.urls.pairs(), ["baseline11=/baseline11", "json=/json/", "pipeline=/pipeline", "upload=/upload"]);
    assert!(m.run.contains("DATASET_PATH='") && m.run.ends_with("exec python3 server.py"), "{}", m.run);
    let dataset = m.run.split("DATASET_PATH='").nth(1).unwrap().split('\'').next().unwrap();
    let items: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(dataset).unwrap()).unwrap();
    assert_eq!(items.len(), 50);
    assert_eq!(supplies::dataset_json(), supplies::dataset_json(), "the same bytes every time");
    assert!(m.command_dir().ends_with("app"), "{}", m.command_dir().display());
    assert_eq!(m.requires, ["python3"]);
}

#[test]
fn an_app_toml_beside_overrides_fields_and_stands_in_for_what_the_dockerfile_cannot_give() {
    let f = Folder::new("overlay");
    f.file("fw/meta.json", META).file("fw/Dockerfile", "FROM golang:1.26\nRUN go build -o s .\n");
    let e = f.load("fw").unwrap_err().to_string();
    assert!(e.contains("Dockerfile: no CMD or ENTRYPOINT") && e.contains("app.toml"), "{e}");
    f.file("fw/app.toml", "run = \"exec ./s\"\nbuild = \"go build -o s .\"\ncontract = \"none\"\n");
    let m = f.load("fw").unwrap();
    assert_eq!((m.run.as_str(), m.build.as_deref(), m.contract()), ("exec ./s", Some("go build -o s ."), None));
    assert_eq!(m.fixed_port, Some(8080));
    f.file("fw/app.toml", "runn = \"x\"\n");
    let e = f.load("fw").unwrap_err().to_string();
    assert!(e.contains("app.toml") && e.contains("unknown field `runn`"), "{e}");
}

#[test]
fn a_benchmarker_framework_renders_its_languages_template_with_its_engine() {
    let f = Folder::new("benchmarker");
    f.file(
        "go/config.yaml",
        "language:\n  version: 1.25\n\n  engines:\n    net-http:\n      command: /go/bin/app\n\nframework:\n  engines:\n    - net-http\n\n  files:\n    - \"**/*.go\"\n    - go.mod\n",
    )
    .file(
        "go/Dockerfile",
        "{{#language.version}}\n  FROM golang:{{{.}}}\n{{/language.version}}\nWORKDIR /go/src/app\n{{#files}}\n  COPY '{{source}}' '{{target}}'\n{{/files}}\n\
         RUN go build -o /go/bin/app ./\n\nFROM debian:trixie-slim\nWORKDIR /go/bin\n{{#environment}}\nENV {{{.}}}\n{{/environment}}\n\
         COPY --from=0 /go/bin/app /go/bin/app\nRUN apt-get -qq update\nHEALTHCHECK CMD curl --fail http://0.0.0.0:3000 || exit 1\nENTRYPOINT {{{command}}}\n",
    )
    .file("go/gin/config.yaml", "framework:\n  website: gin-gonic.com\n  version: 1.11\n  environment:\n    GIN_MODE: release\n")
    .file(
        "python/config.yaml",
        "language:\n  version: 3.14\n  engines:\n    gunicorn:\n      build_deps:\n        - gcc\n      bootstrap:\n        - pip install gunicorn\n      \
         environment:\n        PYTHON_APP: server:app\n      command: >\n        gunicorn \\\n          --bind 0.0.0.0:3000 \\\n          ${PYTHON_APP}\n\
         framework:\n  engines:\n    - gunicorn\n",
    )
    .file(
        "python/Dockerfile",
        "FROM python:{{language.version}}-slim\nWORKDIR /usr/src/app\n{{#files}}\nCOPY {{source}} {{target}}\n{{/files}}\n{{#bootstrap}}\nRUN {{{.}}}\n{{/bootstrap}}\n\
         {{#environment}}\nENV {{{.}}}\n{{/environment}}\nENTRYPOINT {{{command}}}\n",
    )
    .file("python/flask/config.yaml", "framework:\n  website: flask.palletsprojects.com\n  version: 3.1\n");
    let gin = f.load("go/gin").unwrap();
    assert_eq!(
        (gin.name.as_str(), gin.fixed_port, gin.contract().as_deref()),
        ("go-gin", Some(3000), Some("web-frameworks"))
    );
    let root = gin.command_dir();
    assert!(root.ends_with("go/bin"), "{}", root.display());
    let w = root.parent().unwrap().parent().unwrap().display().to_string();
    assert!(gin.build.as_deref().unwrap().contains(&format!("go build -o {w}/go/bin/app ./")), "{:?}", gin.build);
    assert_eq!(gin.run, format!("export GIN_MODE=release; exec {w}/go/bin/app"));
    assert_eq!(gin.requires, ["go"]);
    let flask = f.load("python/flask").unwrap();
    assert!(flask.build.as_deref().unwrap().contains("(\npip install gunicorn\n)"), "{:?}", flask.build);
    assert!(flask.run.ends_with("exec gunicorn --bind 0.0.0.0:3000 ${PYTHON_APP}"), "{}", flask.run);
    assert_eq!(flask.arena.as_ref().unwrap().driven, ["GET /", "GET /user/{id}", "POST /user"]);
    assert_eq!(kind_of(&f.path("go")), None, "a language folder is not a framework");
}

#[test]
fn each_run_line_is_its_own_shell_and_copies_land_in_the_image_folder_not_the_sources() {
    let f = Folder::new("script");
    f.file("fw/main.txt", "source").file("fw/src/lib.txt", "lib");
    let root = f.path("root");
    let r = dockerfile::read(
        Path::new("Dockerfile"),
        "FROM golang:1.26\nWORKDIR /app\nCOPY main.txt ./\nCOPY src ./src\nRUN mkdir sub && cd sub && touch a\nRUN touch b && rm -rf src\nCMD [\"x\"]\n",
        &f.path("fw"),
        &root,
    )
    .unwrap();
    let status = std::process::Command::new("sh").arg("-c").arg(&r.build).status().unwrap();
    assert!(status.success(), "{}", r.build);
    assert!(root.join("app/sub/a").is_file() && root.join("app/b").is_file(), "a cd ends with its RUN line");
    assert_eq!(std::fs::read_to_string(root.join("app/main.txt")).unwrap(), "source");
    assert!(!root.join("app/src").exists(), "the RUN line removed the copy");
    assert!(f.path("fw/src/lib.txt").is_file(), "and never the framework's own sources");
}
