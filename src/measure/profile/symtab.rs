//! A sorted table of function symbols searched by address (binary search), shared by the
//! kernel's /proc/kallsyms (Documentation/admin-guide/sysctl/kernel.rst, kptr_restrict) and the
//! ELF symbol tables of mapped files (elf(5)).

/// One function: `[start, end)`; `end` is the next symbol's start where the source gives no
/// size (kallsyms), so a lookup never runs past a neighbour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub start: u64,
    pub end: u64,
    pub name: Box<str>,
}

/// Function symbols sorted by start address, one per address.
#[derive(Debug, Default)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
}

/// The longest gap a symbol without a size may cover; beyond it an address is unresolved
/// rather than charged to a distant function.
const MAX_UNSIZED_SPAN: u64 = 1 << 20;

impl SymbolTable {
    /// Builds the table from `(start, size, name)` triples; `size` 0 means unknown. Aliases (one
    /// address, several names) keep the most plain name: `memcpy` over `__memcpy`.
    pub fn new(mut entries: Vec<(u64, u64, String)>) -> SymbolTable {
        entries.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| plainness(&a.2).cmp(&plainness(&b.2)))
        });
        entries.dedup_by(|later, first| later.0 == first.0);
        let starts: Vec<u64> = entries.iter().map(|e| e.0).collect();
        let symbols = entries
            .into_iter()
            .enumerate()
            .map(|(i, (start, size, name))| {
                let next = starts.get(i + 1).copied().unwrap_or(u64::MAX);
                let end = if size > 0 {
                    start.saturating_add(size).min(next.max(start + 1))
                } else {
                    next.min(start.saturating_add(MAX_UNSIZED_SPAN))
                };
                Symbol {
                    start,
                    end,
                    name: name.into_boxed_str(),
                }
            })
            .collect();
        SymbolTable { symbols }
    }

    /// The function holding `addr`, if any.
    pub fn lookup(&self, addr: u64) -> Option<&Symbol> {
        let i = self.symbols.partition_point(|s| s.start <= addr);
        let sym = self.symbols.get(i.checked_sub(1)?)?;
        (addr < sym.end).then_some(sym)
    }

    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }
}

/// Sort key among aliases: fewer leading underscores first, then the shorter name.
fn plainness(name: &str) -> (usize, usize) {
    let underscores = name.len() - name.trim_start_matches('_').len();
    (underscores, name.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SymbolTable {
        SymbolTable::new(vec![
            (0x2000, 0x10, "sized".into()),
            (0x1000, 0, "first".into()),
            (0x3000, 0, "__pi_memcpy".into()),
            (0x3000, 0, "memcpy".into()),
            (0x3000, 0, "__memcpy".into()),
        ])
    }

    #[test]
    fn an_address_resolves_to_the_function_below_it() {
        let t = table();
        assert_eq!(t.lookup(0x1000).unwrap().name.as_ref(), "first");
        assert_eq!(t.lookup(0x1fff).unwrap().name.as_ref(), "first");
        assert_eq!(t.lookup(0x200f).unwrap().name.as_ref(), "sized");
        assert!(t.lookup(0xfff).is_none());
    }

    #[test]
    fn a_sized_symbol_does_not_cover_the_gap_after_it() {
        assert!(table().lookup(0x2010).is_none());
    }

    #[test]
    fn aliases_keep_the_plain_name() {
        let t = table();
        assert_eq!(t.len(), 3);
        assert_eq!(t.lookup(0x3004).unwrap().name.as_ref(), "memcpy");
    }

    #[test]
    fn an_unsized_last_symbol_covers_a_bounded_span() {
        let t = table();
        assert!(t.lookup(0x3000 + MAX_UNSIZED_SPAN - 1).is_some());
        assert!(t.lookup(0x3000 + MAX_UNSIZED_SPAN).is_none());
    }
}
