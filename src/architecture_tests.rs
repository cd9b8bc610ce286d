//! The word lists of docs/ARCHITECTURE.md's vocabulary, held to the code: each bullet names
//! exactly the transports, mechanisms, receive paths, patterns and studies bytepath has, so
//! adding one without saying so in the map fails here.
use crate::config::Pattern;
use crate::mechanism::receive::path::RecvPath;
use crate::mechanism::MechanismKind;
use crate::transport::Transport;

const DOCUMENT: &str = include_str!("../docs/ARCHITECTURE.md");

/// The backquoted words, sorted, after the dash of the vocabulary bullet that defines `term`, up to the
/// end of that clause (a period or the next bold term).
fn listed(term: &str) -> Vec<String> {
    let bold = format!("**{term}**");
    let line = DOCUMENT
        .lines()
        .find(|l| l.starts_with("- ") && l.contains(&bold))
        .unwrap_or_else(|| panic!("the vocabulary defines {bold}"));
    let after = &line[line.find(&bold).unwrap() + bold.len()..];
    let list = after.split_once(" — ").map_or("", |(_, l)| l);
    let clause = list.split(['.', '*']).next().unwrap_or("");
    let mut words: Vec<String> = clause
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    words.sort();
    words
}

/// The names the code has, in the order `listed` gives them.
fn names(list: impl IntoIterator<Item = &'static str>) -> Vec<String> {
    let mut names: Vec<String> = list.into_iter().map(str::to_string).collect();
    names.sort();
    names
}

#[test]
fn the_vocabulary_lists_every_transport_mechanism_receive_path_and_pattern() {
    assert_eq!(
        listed("transport"),
        names(Transport::ALL.iter().map(|t| t.name()))
    );
    assert_eq!(
        listed("mechanism"),
        names(MechanismKind::ALL.iter().map(|m| m.name()))
    );
    assert_eq!(
        listed("receive path"),
        names(RecvPath::ALL.iter().map(|r| r.name()))
    );
    assert_eq!(
        listed("pattern"),
        names(Pattern::ALL.iter().map(|p| p.name()))
    );
}

#[test]
fn the_vocabulary_lists_every_study_that_writes_a_folder() {
    let studies = names(crate::studies::STUDIES.iter().map(|s| s.command()));
    assert_eq!(listed("study"), studies);
}

#[test]
fn a_list_that_differs_from_the_code_is_seen() {
    assert!(listed("transport").contains(&"shm".to_string()));
    assert_ne!(
        listed("mechanism"),
        names(MechanismKind::ALL.iter().skip(1).map(|m| m.name()))
    );
}
