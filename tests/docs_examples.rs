//! The examples in README.md and docs/*.md, run against the built binary, and the links between
//! those pages.
//!
//! An example is a line `$ bytepath …` in a fenced block tagged `console`; lines without `$ `
//! are output shown to the reader. A block whose line before the fence is
//! `<!-- not run: REASON -->` holds examples that cannot run here (root, another host, minutes
//! of measuring): each of their command lines is still handed to the real parser with `--help`
//! appended, so a misspelled or removed flag, or a stray argument, fails the test; values are
//! not judged there. Every other example runs: one page's examples in order, in a temporary
//! folder of the page's own (so `report DIR` finds the folder a `sweep --out DIR` above it
//! wrote), with settling off and no visit marked disturbed (as every study test runs), and must
//! exit 0 and leave what it promises (`--out DIR`: a results.csv with a row; `--json`: one JSON
//! document; `--json-stream`: JSON lines; `export`: the format asked for). Only the part of a
//! line before a shell operator (`|`, `>`, `&&`, `;`, `#`) is bytepath's and is run or checked.
//! A runnable example may not use `sudo` or name another host (`--remote`, `--hosts…`,
//! `--launch`).
mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest one runnable example may take on a loaded two-CPU machine (debug build).
const EXAMPLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Flags a runnable example may not carry: they reach beyond this machine.
const REMOTE_FLAGS: [&str; 5] = [
    "--remote",
    "--hosts",
    "--hosts-file",
    "--hosts-from-dns",
    "--launch",
];

#[derive(Debug, Clone, PartialEq)]
struct Example {
    page: String,
    line: usize,
    /// The words after `bytepath`, up to the first shell operator.
    args: Vec<String>,
    sudo: bool,
    /// `Some(reason)` for a block marked `<!-- not run: reason -->`.
    not_run: Option<String>,
}

impl Example {
    fn place(&self) -> String {
        format!(
            "{}:{}: bytepath {}",
            self.page,
            self.line,
            self.args.join(" ")
        )
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page in docs/, as (name relative to the root, text).
fn pages() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|name| {
            let text = fs::read_to_string(root().join(&name)).unwrap();
            (name, text)
        })
        .collect()
}

/// Splits a command line into words as a POSIX shell would (quotes, backslashes), stopping at
/// the first unquoted shell operator or comment.
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("unclosed ' in: {line}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => word.push(chars.next().unwrap_or('\\')),
                        Some(other) => word.push(other),
                        None => return Err(format!("unclosed \" in: {line}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '|' | '>' | '<' | ';' | '&' => break,
            '#' if !in_word => break,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        // A redirection such as `2>/dev/null` leaves its descriptor number as the last word.
        let is_descriptor =
            word.chars().all(|c| c.is_ascii_digit()) && line.contains(&format!("{word}>"));
        if !is_descriptor {
            words.push(word);
        }
    }
    Ok(words)
}

/// The marker on the line before a fence: `<!-- not run: REASON -->`.
fn not_run_reason(line: &str) -> Option<String> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let reason = inner.strip_prefix("not run:")?.trim();
    Some(reason.to_string())
}

/// Every example of one page, with the problems found while reading it.
fn examples_of(page: &str, text: &str) -> (Vec<Example>, Vec<String>) {
    let mut examples = Vec::new();
    let mut problems = Vec::new();
    let mut fence: Option<(String, Option<String>)> = None;
    let mut marker: Option<String> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let number = index + 1;
        if let Some(rest) = line.strip_prefix("```") {
            match fence {
                Some(_) => fence = None,
                None => fence = Some((rest.trim().to_string(), marker.take())),
            }
            continue;
        }
        match &fence {
            None => {
                if let Some(reason) = not_run_reason(line) {
                    if reason.is_empty() {
                        problems.push(format!("{page}:{number}: `not run` needs a reason"));
                    }
                    marker = Some(reason);
                } else if !line.is_empty() {
                    marker = None;
                }
            }
            Some((info, not_run)) if info == "console" => {
                let Some(command) = line.strip_prefix("$ ") else {
                    continue;
                };
                match example_of(page, number, command, not_run.clone()) {
                    Ok(example) => examples.push(example),
                    Err(problem) => problems.push(problem),
                }
            }
            Some(_) => {}
        }
    }
    if fence.is_some() {
        problems.push(format!("{page}: a code fence is never closed"));
    }
    (examples, problems)
}

fn example_of(
    page: &str,
    number: usize,
    command: &str,
    not_run: Option<String>,
) -> Result<Example, String> {
    let mut words = shell_words(command).map_err(|e| format!("{page}:{number}: {e}"))?;
    let sudo = words.first().map(String::as_str) == Some("sudo");
    if sudo {
        words.remove(0);
    }
    if words.first().map(String::as_str) != Some("bytepath") {
        return Err(format!(
            "{page}:{number}: a console example must start with `bytepath` (other commands \
             belong in an sh block): {command}"
        ));
    }
    words.remove(0);
    let example = Example {
        page: page.to_string(),
        line: number,
        args: words,
        sudo,
        not_run,
    };
    if example.not_run.is_none() {
        if example.sudo {
            return Err(format!(
                "{}: needs root; mark its block <!-- not run: … -->",
                example.place()
            ));
        }
        if let Some(flag) = example
            .args
            .iter()
            .find(|a| REMOTE_FLAGS.contains(&a.split('=').next().unwrap_or("")))
        {
            return Err(format!(
                "{}: {flag} reaches another host; mark its block <!-- not run: … -->",
                example.place()
            ));
        }
    }
    Ok(example)
}

/// The real parser's judgement of a command line it is not to run: the line with `--help`
/// appended must be accepted (clap stops at the first unknown flag or stray argument).
fn check_parses(args: &[String]) -> Result<(), String> {
    let output = common::bytepath()
        .args(args)
        .arg("--help")
        .timeout(Duration::from_secs(30))
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// The value of `--flag VALUE` or `--flag=VALUE` in an example's words.
fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, a)| {
        if a == flag {
            args.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix(flag)?.strip_prefix('=')
        }
    })
}

/// What an example that ran promises, checked on what it left.
fn check_promises(args: &[String], dir: &Path, stdout: &str) -> Result<(), String> {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if let Some(out) = flag_value(args, "--out") {
        let csv = fs::read_to_string(dir.join(out).join("results.csv"))
            .map_err(|e| format!("{out}/results.csv: {e}"))?;
        if csv.lines().count() < 2 {
            return Err(format!("{out}/results.csv holds no row"));
        }
    }
    if has("--json") {
        serde_json::from_str::<serde_json::Value>(stdout)
            .map_err(|e| format!("--json printed no JSON document: {e}"))?;
    }
    if has("--json-stream") {
        for line in stdout.lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .map_err(|e| format!("--json-stream printed a line that is not JSON: {e}"))?;
        }
    }
    if args.first().map(String::as_str) == Some("export") {
        let format = flag_value(args, "--format").unwrap_or("openmetrics");
        let ok = match format {
            "openmetrics" => stdout.trim_end().ends_with("# EOF"),
            "json" => stdout
                .lines()
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
            _ => stdout.lines().count() >= 2,
        };
        if !ok {
            return Err(format!("export --format {format} printed something else"));
        }
    }
    Ok(())
}

fn run_example(example: &Example, dir: &Path) -> Result<Duration, String> {
    let started = Instant::now();
    let output = common::bytepath()
        .args(&example.args)
        .current_dir(dir)
        .timeout(EXAMPLE_TIMEOUT)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        return Err(format!(
            "exit {:?}; stderr ends:\n    {}",
            output.status.code(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
        ));
    }
    check_promises(&example.args, dir, &stdout)?;
    Ok(started.elapsed())
}

#[test]
fn every_example_in_the_docs_runs_or_parses() {
    let mut problems = Vec::new();
    let (mut ran, mut checked) = (0, 0);
    let started = Instant::now();
    for (page, text) in pages() {
        let (examples, page_problems) = examples_of(&page, &text);
        problems.extend(page_problems);
        let dir = tempfile::tempdir().unwrap();
        for example in &examples {
            match &example.not_run {
                Some(reason) => {
                    checked += 1;
                    if let Err(why) = check_parses(&example.args) {
                        problems.push(format!(
                            "{} (not run: {reason}) does not parse: {why}",
                            example.place()
                        ));
                    }
                }
                None => {
                    ran += 1;
                    match run_example(example, dir.path()) {
                        Ok(took) => {
                            eprintln!("ran     {} ({:.1} s)", example.place(), took.as_secs_f64())
                        }
                        Err(why) => problems.push(format!("{} failed: {why}", example.place())),
                    }
                }
            }
        }
    }
    // Straight to stderr, past the test harness's capture: the counts show in every run.
    writeln!(
        std::io::stderr(),
        "docs examples: {ran} run, {checked} only checked (not run, parsed with --help), in {:.0} s",
        started.elapsed().as_secs_f64()
    )
    .unwrap();
    assert!(ran > 0 && checked > 0, "no examples found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            found.push(anchor_of(line.trim_start_matches('#')));
        }
    }
    found
}

/// The targets of a page's Markdown links `](target)` outside code blocks.
fn link_targets(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut targets = Vec::new();
    for line in text.lines() {
        if line.trim().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_docs_page_is_linked_from_the_readme_and_every_link_resolves() {
    let pages = pages();
    let readme = &pages[0].1;
    let mut problems = Vec::new();
    for (page, _) in pages.iter().skip(1) {
        let name = page.trim_start_matches("docs/");
        if !readme.contains(&format!("(docs/{name}")) {
            problems.push(format!("README.md does not link {page}"));
        }
    }
    for (page, text) in &pages {
        let base = root().join(page).parent().unwrap().to_path_buf();
        for target in link_targets(text) {
            // `crate::…` is an intra-doc link (docs/ARCHITECTURE.md is compiled into the
            // crate's documentation): `cargo doc` in .ci/run resolves those, with warnings denied.
            if target.contains("://")
                || target.starts_with("mailto:")
                || target.starts_with("crate::")
            {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                root().join(page)
            } else {
                base.join(file)
            };
            if !path.exists() {
                problems.push(format!("{page}: link to {target}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    problems.push(format!("{page}: link to {target}: no such heading"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_misspelled_flag_fails_the_check_and_a_right_one_passes() {
    let words = |line: &str| shell_words(line).unwrap();
    assert!(check_parses(&words("run -m copy -s 64K --duration 2s --profile")).is_ok());
    let wrong = check_parses(&words("run -m copy -s 64K --duraton 2s")).unwrap_err();
    assert!(wrong.contains("--duraton"), "{wrong}");
    assert!(check_parses(&words("report results/a results/b")).is_err());
    assert!(check_parses(&words("sweeep --out a")).is_err());
}

#[test]
fn examples_are_read_from_console_blocks_with_their_markers() {
    let text = "\
```console
$ bytepath run -m copy --netem \"delay 1ms\" | jq . > out
output line
```

<!-- not run: needs root -->
```console
$ sudo bytepath run --netns 2>/dev/null
```

```sh
bytepath not-an-example
```
";
    let (examples, problems) = examples_of("page.md", text);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(examples.len(), 2);
    assert_eq!(
        examples[0].args,
        ["run", "-m", "copy", "--netem", "delay 1ms"]
    );
    assert_eq!(examples[0].not_run, None);
    assert_eq!(examples[1].args, ["run", "--netns"]);
    assert!(examples[1].sudo);
    assert_eq!(examples[1].not_run.as_deref(), Some("needs root"));
    let (_, problems) = examples_of("page.md", "```console\n$ sudo bytepath run\n```\n");
    assert_eq!(problems.len(), 1, "sudo in a runnable block: {problems:?}");
    let (_, problems) = examples_of("page.md", "```console\n$ bytepath run --remote h\n```\n");
    assert_eq!(
        problems.len(),
        1,
        "another host in a runnable block: {problems:?}"
    );
    let (_, problems) = examples_of("page.md", "```console\n$ ls -l\n```\n");
    assert_eq!(problems.len(), 1, "not bytepath: {problems:?}");
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        anchor_of(" What a connection costs: `--pattern crr`"),
        "what-a-connection-costs---pattern-crr"
    );
    assert_eq!(
        anchor_of("compare: verdicts and the between-sweep spread τ"),
        "compare-verdicts-and-the-between-sweep-spread-τ"
    );
}
