//! Kernel function symbols from /proc/kallsyms (one "address type name \[module\]" line per
//! symbol; addresses read as zero when kptr_restrict hides them, see
//! Documentation/admin-guide/sysctl/kernel.rst).
use super::symtab::SymbolTable;

pub const KALLSYMS: &str = "/proc/kallsyms";

/// Reads and parses /proc/kallsyms; an error says why kernel addresses cannot be named.
pub fn load() -> Result<SymbolTable, String> {
    let text = std::fs::read_to_string(KALLSYMS).map_err(|e| format!("{KALLSYMS}: {e}"))?;
    parse(&text)
}

/// Whether kernel addresses are visible to this process, checked cheaply (first lines only)
/// before a profile starts.
pub fn check_visible() -> Result<(), String> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(KALLSYMS).map_err(|e| format!("{KALLSYMS}: {e}"))?;
    let lines = BufReader::new(file).lines().take(64);
    let mut any = false;
    for line in lines.map_while(Result::ok) {
        any = true;
        if parse_line(&line).is_some_and(|(addr, _)| addr != 0) {
            return Ok(());
        }
    }
    Err(hidden_reason(any))
}

/// Parses kallsyms text, keeping text (function) symbols only.
pub fn parse(text: &str) -> Result<SymbolTable, String> {
    let mut any = false;
    let entries: Vec<(u64, u64, String)> = text
        .lines()
        .filter_map(parse_line)
        .inspect(|_| any = true)
        .filter(|(addr, _)| *addr != 0)
        .map(|(addr, name)| (addr, 0, name.to_string()))
        .collect();
    if entries.is_empty() {
        return Err(hidden_reason(any));
    }
    Ok(SymbolTable::new(entries))
}

fn hidden_reason(had_symbols: bool) -> String {
    if !had_symbols {
        return format!("{KALLSYMS} lists no function symbols");
    }
    let restrict = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    format!(
        "kernel addresses are hidden in {KALLSYMS} (kptr_restrict={restrict}: 0 shows them when \
         perf_event_paranoid <= 1, 0 or 1 to CAP_SYSLOG, 2 never)"
    )
}

/// `(address, name)` of a text symbol line; data symbols and malformed lines give `None`.
fn parse_line(line: &str) -> Option<(u64, &str)> {
    let mut fields = line.split_whitespace();
    let addr = u64::from_str_radix(fields.next()?, 16).ok()?;
    let kind = fields.next()?;
    let name = fields.next()?;
    matches!(kind, "t" | "T" | "w" | "W").then_some((addr, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXCERPT: &str = include_str!("fixtures/kallsyms.txt");

    #[test]
    fn the_excerpt_resolves_copy_and_skew_points() {
        let table = parse(EXCERPT).unwrap();
        let name = |a| table.lookup(a).map(|s| s.name.to_string());
        assert_eq!(name(0xffffffff81b6c570).as_deref(), Some("_copy_from_iter"));
        assert_eq!(
            name(0xffffffff821f64a8).as_deref(),
            Some("memcpy"),
            "aliases keep the plain name"
        );
        assert_eq!(
            name(0xffffffff813a4390).as_deref(),
            Some("finish_task_switch.isra.0")
        );
    }

    #[test]
    fn data_symbols_are_not_functions() {
        let table = parse("ffffffff82000000 D some_data\nffffffff81000000 T f\n").unwrap();
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn zeroed_addresses_say_kptr_restrict() {
        let err = parse("0000000000000000 T _stext\n0000000000000000 t f\n").unwrap_err();
        assert!(err.contains("kptr_restrict"), "{err}");
    }

    #[test]
    fn module_symbols_keep_their_own_name() {
        let table = parse("ffffffffc0201000 t veth_xmit\t[veth]\n").unwrap();
        assert_eq!(
            table.lookup(0xffffffffc0201004).unwrap().name.as_ref(),
            "veth_xmit"
        );
    }

    #[test]
    fn this_machine_shows_kernel_addresses_or_says_why_not() {
        match check_visible() {
            Ok(()) => assert!(load().unwrap().len() > 1000),
            Err(reason) => eprintln!("kernel symbols hidden here: {reason}"),
        }
    }
}
