//! `bytepath probe`: what this machine can do, measured (`probe/`), printed as a text block
//! or one JSON document.
use crate::cli::ProbeArgs;
use crate::error::{Error, Status};
use crate::probe::{probe, text, Effort};

/// `bytepath probe [--json] [--quick] [--canary]`: prints the text block or one JSON document.
pub fn command(args: &ProbeArgs) -> Result<Status, Error> {
    if let Some(list) = &args.canary.canary_child {
        return canary_child(list);
    }
    let cpus = super::allowed_cpus()?;
    if args.canary.canary {
        return canary(args.json.json, &cpus);
    }
    let effort = if args.quick {
        Effort::quick()
    } else {
        Effort::full()
    };
    let mut probe = probe(&effort, &cpus);
    probe.sink = Some(crate::probe::sink::measure());
    if args.json.json {
        let json = serde_json::to_string_pretty(&probe)
            .map_err(|e| Error::Failed(format!("serializing the probe: {e}")))?;
        println!("{json}");
    } else {
        print!("{}", text::render(&probe));
    }
    Ok(Status::Success)
}

/// `probe --canary-child CPUS` (hidden): a study's round's canary on the study's CPUs, as the
/// one JSON line the study reads (probe::canary_process).
fn canary_child(list: &str) -> Result<Status, Error> {
    use crate::probe::canary_process::{child_line, parse_cpu_list};
    let cpus = parse_cpu_list(list).map_err(crate::error::ConfigError)?;
    println!("{}", child_line(&crate::probe::canary::measure(&cpus)));
    Ok(Status::Success)
}

/// `probe --canary`: the canary alone, as text or one JSON document.
fn canary(json: bool, cpus: &[usize]) -> Result<Status, Error> {
    let c = crate::probe::canary::measure(cpus);
    if json {
        let text = serde_json::to_string_pretty(&c)
            .map_err(|e| Error::Failed(format!("serializing the canary: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", crate::probe::canary::render(&c));
    }
    Ok(Status::Success)
}
