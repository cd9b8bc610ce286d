//! One shape per study (docs/ARCHITECTURE.md, "One shape per study"): every file the table
//! names for a study's spec, study, answers and report is there, every study the one list
//! (`studies`) registers has a row, and its study file holds the `Study` the driver runs and
//! the study's descriptor.
use std::path::Path;

/// The table's rows: (study, the files its cells name).
fn rows(document: &str) -> Vec<(String, Vec<String>)> {
    let section = document
        .split("## One shape per study")
        .nth(1)
        .expect("docs/ARCHITECTURE.md has its 'One shape per study' section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            let named = |cell: &str| -> Vec<String> {
                cell.split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(|n| n.ends_with(".rs"))
                    .map(str::to_string)
                    .collect()
            };
            let study = cells[0].trim().trim_matches('`').to_string();
            (study, cells[1..].iter().flat_map(|c| named(c)).collect())
        })
        .collect()
}

#[test]
fn every_study_has_its_parts_where_the_document_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let document = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let rows = rows(&document);
    let studies: Vec<&str> = rows.iter().map(|(s, _)| s.as_str()).collect();
    let registered: Vec<&str> = bytepath::studies::STUDIES
        .iter()
        .map(|s| s.command())
        .collect();
    assert_eq!(
        studies,
        [&["run"][..], &registered].concat(),
        "one row per study: run's, then each study the list in src/studies.rs registers"
    );
    for (study, files) in &rows {
        assert!(files.len() >= 3, "{study}: {files:?}");
        for f in files {
            assert!(
                f.starts_with(&format!("{study}/")),
                "{study}'s part {f} is outside its module"
            );
            assert!(
                root.join("src").join(f).is_file(),
                "{study}: src/{f} is missing"
            );
        }
    }
}

/// Every study the list registers is what the study driver runs: its `study` file implements
/// `Study` and holds the study's descriptor, which the list names.
#[test]
fn every_registered_study_implements_study_and_describes_it_in_its_study_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for study in &bytepath::studies::STUDIES {
        let name = study.command();
        let path = root.join("src").join(name).join("study.rs");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("impl Study for "),
            "{}: the study driver runs no Study of {name}",
            path.display()
        );
        assert!(
            text.contains("static DESCRIPTOR: StudyDescriptor = "),
            "{}: {name}'s descriptor is not beside its Study",
            path.display()
        );
    }
}

#[test]
fn a_row_naming_a_missing_file_is_read_as_such() {
    let doc = "## One shape per study\n| study | spec |\n|---|---|\n| `x` | `x/spec.rs` | `x/study.rs` |\n## Next\n| `y` | `y/a.rs` |";
    assert_eq!(
        rows(doc),
        vec![(
            "x".to_string(),
            vec!["x/spec.rs".to_string(), "x/study.rs".to_string()]
        )]
    );
}
