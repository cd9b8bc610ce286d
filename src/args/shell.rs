//! `bytepath completions SHELL` and `bytepath man`: generated from the clap definitions in
//! `cli` (clap_complete, clap_mangen), so they never drift from the flags the binary takes.
//! The man page is printed by the binary rather than made by a build step: the page installed
//! is always the one of the binary installed, and building needs nothing extra.
use crate::cli::{Cli, CompletionsArgs};
use crate::error::{ConfigError, Error, Status};
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::Write;

/// The shells `completions` writes for.
const SHELLS: [(&str, Shell); 3] = [
    ("bash", Shell::Bash),
    ("zsh", Shell::Zsh),
    ("fish", Shell::Fish),
];

/// `bytepath completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<Status, Error> {
    let shell = SHELLS
        .iter()
        .find(|(name, _)| *name == args.shell)
        .map(|&(_, shell)| shell)
        .ok_or_else(|| {
            ConfigError(format!(
                "completions {}: not a shell this writes for; allowed: bash, zsh, fish",
                args.shell
            ))
        })?;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "bytepath", &mut out);
    print_all(&out)
}

/// `bytepath man`: one page (roff) with the commands and, after them, every command's options.
pub fn man() -> Result<Status, Error> {
    let out = man_page().map_err(|e| Error::Failed(format!("rendering the man page: {e}")))?;
    print_all(&out)
}

/// The page: clap_mangen's sections for `bytepath`, then a section per command with its
/// description and options, so `man bytepath` answers what a flag of `sweep` does.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let cli = Cli::command();
    let mut out = Vec::new();
    let top = clap_mangen::Man::new(cli.clone());
    top.render_title(&mut out)?;
    top.render_name_section(&mut out)?;
    top.render_synopsis_section(&mut out)?;
    top.render_description_section(&mut out)?;
    top.render_options_section(&mut out)?;
    top.render_subcommands_section(&mut out)?;
    for sub in cli.get_subcommands() {
        let page = clap_mangen::Man::new(sub.clone());
        writeln!(out, ".SH \"BYTEPATH {}\"", sub.get_name().to_uppercase())?;
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            writeln!(out, "{}", roff_text(&about.to_string()))?;
        }
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.render_options_section(&mut out)?;
        }
    }
    top.render_version_section(&mut out)?;
    Ok(out)
}

/// Text as a roff paragraph: a leading dot or quote would start a request, a backslash an
/// escape.
fn roff_text(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    text.lines()
        .map(|l| match l.chars().next() {
            Some('.' | '\'') => format!("\\&{l}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes all of `bytes` to stdout; a closed pipe (`| head`) is not an error worth a line.
fn print_all(bytes: &[u8]) -> Result<Status, Error> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::Failed(format!("writing to stdout: {e}")))
        }
        _ => Ok(Status::Success),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_has_a_section_per_command_with_its_flags() {
        let page = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH bytepath"),
            "{page}"
        );
        assert!(page.contains(".SH \"BYTEPATH SWEEP\""));
        assert!(
            page.contains("json\\-stream"),
            "the stream flag is documented"
        );
    }

    #[test]
    fn a_line_starting_with_a_dot_is_not_a_request() {
        assert_eq!(
            roff_text(".hidden\nplain \\ back"),
            "\\&.hidden\nplain \\e back"
        );
    }
}
