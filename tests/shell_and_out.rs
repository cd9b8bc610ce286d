//! The tools around the measurements: completion scripts for bash, zsh and fish that name
//! every command, a man page that renders, and `--out` refusals that come before anything is
//! measured, in one line with exit 2.
mod common;

use clap::CommandFactory;
use std::path::Path;

fn commands() -> Vec<String> {
    bytepath::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn completions_for_each_shell_name_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let out = common::bytepath()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in commands() {
            assert!(script.contains(&command), "{shell}: no {command}");
        }
        assert!(script.contains("json-stream"), "{shell}: flags too");
    }
    let out = common::bytepath()
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim(),
        "bytepath: completions tcsh: not a shell this writes for; allowed: bash, zsh, fish"
    );
}

#[test]
fn the_man_page_renders() {
    let out = common::bytepath().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH bytepath 1"), "{page}");
    for command in commands() {
        assert!(
            page.contains(&format!(".SH \"BYTEPATH {}\"", command.to_uppercase())),
            "no section for {command}"
        );
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &page).unwrap();
    // man -l renders it where man is installed; a renderer that chokes on the roff says so
    // on stderr.
    let rendered = std::process::Command::new("man")
        .arg("-l")
        .arg(file.path())
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .output();
    match rendered {
        Ok(out) if out.status.success() => {
            let text = plain(&String::from_utf8_lossy(&out.stdout));
            assert!(text.contains("BYTEPATH SWEEP"), "{text}");
            assert!(text.contains("--json-stream"), "{text}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("warning"), "{err}");
        }
        other => common::skip_part(
            "the rendering check",
            format!("man -l is not usable here ({other:?})"),
        ),
    }
}

/// man's output to a pipe without its overstrikes (bold "N\x08N") and with plain hyphens.
fn plain(text: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
            continue;
        }
        out.push(match c {
            '\u{2010}' | '\u{2212}' => '-',
            c => c,
        });
    }
    out.into_iter().collect()
}

/// `args` with `--out dir`: refused in one line naming `dir`, exit 2, and nothing measured
/// (no results folder, no text on stdout).
fn refused(args: &[&str], dir: &Path, reason: &str) {
    refused_by(common::bytepath(), args, dir, reason)
}

/// `refused`, run by `command` (bytepath itself, or bytepath under another privilege).
fn refused_by(mut command: assert_cmd::Command, args: &[&str], dir: &Path, reason: &str) {
    let out = command
        .args(args)
        .arg("--out")
        .arg(dir)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    let line = err.trim();
    assert!(
        line.starts_with(&format!("bytepath: --out {}: ", dir.display())),
        "{line}"
    );
    assert!(line.contains(reason), "{line}");
    assert!(line.contains("choose"), "says what to do: {line}");
    assert_eq!(line.matches("os error").count(), 0, "{line}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: nothing measured, nothing printed"
    );
}

#[test]
fn an_out_that_cannot_be_used_is_refused_before_anything_is_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let studies: [&[&str]; 5] = [
        &[
            "sweep",
            "--mechanisms",
            "send",
            "--sizes",
            "4K",
            "--threads",
            "1",
        ],
        &["ipc", "--transports", "pipe", "--sizes", "64"],
        &["file", "--sizes", "64K", "--reps", "1"],
        &["servers", "--models", "epoll", "--clients", "2"],
        &["mesh", "--hosts", "127.0.0.1:1,127.0.0.1:2"],
    ];
    for study in studies {
        refused(
            study,
            Path::new("/proc/bytepath-x"),
            "cannot be created (No such file or directory)",
        );
        refused(
            study,
            &file.join("sub"),
            "cannot be created (Not a directory)",
        );
        refused(study, &file, "exists and is not a folder");
    }
    // A folder this user may not write. Root writes anywhere through CAP_DAC_OVERRIDE, so root
    // runs bytepath with that capability out of its bounding set (setpriv).
    let locked = tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    let as_this_user = std::fs::write(locked.join("probe"), "x").is_err();
    let _ = std::fs::remove_file(locked.join("probe"));
    if !as_this_user && !common::has_command("setpriv") {
        return common::skip_part(
            "the unwritable-folder case",
            "this user writes into a 0500 folder (root) and setpriv is missing to drop CAP_DAC_OVERRIDE",
        );
    }
    let command = || match as_this_user {
        true => common::bytepath(),
        false => without_dac_override(),
    };
    for study in studies {
        refused_by(
            command(),
            study,
            &locked.join("run"),
            "cannot be created (Permission denied)",
        );
        refused_by(
            command(),
            study,
            &locked,
            "cannot be written (Permission denied)",
        );
    }
}

/// bytepath as root without the capabilities that let root write any folder.
fn without_dac_override() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new("setpriv");
    command
        .arg("--bounding-set=-dac_override,-dac_read_search")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_bytepath"))
        .env("BYTEPATH_SETTLE", "off")
        .env("BYTEPATH_QUIET_THRESHOLD", "100%");
    command
}
