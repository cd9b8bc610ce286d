//! Function symbols of one mapped ELF file (elf(5)) for naming user-space sample addresses: the
//! file's .symtab and .dynsym, or the detached debug file found by build id under
//! /usr/lib/debug/.build-id (the GDB convention Debian's -dbg packages follow), which holds the
//! internal functions a stripped library (libc's memmove variants) no longer lists.
use super::demangle::demangle;
use super::symtab::{Symbol, SymbolTable};
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
use std::path::{Path, PathBuf};

const DEBUG_ROOT: &str = "/usr/lib/debug/.build-id";

/// One loadable segment: bytes `[file_offset, file_offset + size)` of the file appear at
/// `vaddr` in the ELF's own address space.
#[derive(Debug, Clone, Copy)]
struct Load {
    file_offset: u64,
    size: u64,
    vaddr: u64,
}

/// A file's function symbols, looked up by file offset (what `/proc/<pid>/maps` gives).
#[derive(Debug)]
pub struct ElfSymbols {
    table: SymbolTable,
    loads: Vec<Load>,
    /// Where the names came from ("symtab", "dynsym", "debug file …"), for the method text.
    pub source: String,
}

impl ElfSymbols {
    /// Reads `path` and, when there is one, its detached debug file.
    pub fn load(path: &Path) -> Result<ElfSymbols, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let debug = debug_file(&data).and_then(|p| std::fs::read(&p).ok().map(|d| (p, d)));
        ElfSymbols::parse(
            &data,
            debug.as_ref().map(|(p, d)| (p.as_path(), d.as_slice())),
        )
    }

    /// Parses an ELF image; `debug` supplies the symbols instead when it has any.
    pub fn parse(data: &[u8], debug: Option<(&Path, &[u8])>) -> Result<ElfSymbols, String> {
        let file = object::File::parse(data).map_err(|e| format!("not an ELF file: {e}"))?;
        let loads = file
            .segments()
            .map(|s| {
                let (file_offset, size) = s.file_range();
                Load {
                    file_offset,
                    size,
                    vaddr: s.address(),
                }
            })
            .collect();
        let from_debug = debug.and_then(|(path, bytes)| {
            let dbg = object::File::parse(bytes).ok()?;
            let entries = functions(&dbg);
            (!entries.is_empty()).then(|| (entries, format!("debug file {}", path.display())))
        });
        let (entries, source) = from_debug.unwrap_or_else(|| {
            let source = if file.symbols().next().is_some() {
                "symtab"
            } else {
                "dynsym only"
            };
            (functions(&file), source.to_string())
        });
        Ok(ElfSymbols {
            table: SymbolTable::new(entries),
            loads,
            source,
        })
    }

    /// The function at `file_offset` (a mapping's offset plus the address's distance into it).
    pub fn lookup_file_offset(&self, file_offset: u64) -> Option<&Symbol> {
        let load = self
            .loads
            .iter()
            .find(|l| (l.file_offset..l.file_offset + l.size).contains(&file_offset))?;
        self.table
            .lookup(file_offset - load.file_offset + load.vaddr)
    }
}

/// Defined function symbols of both tables, demangled.
fn functions(file: &object::File<'_>) -> Vec<(u64, u64, String)> {
    file.symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.address() != 0)
        .filter_map(|s| Some((s.address(), s.size(), demangle(s.name().ok()?))))
        .collect()
}

/// /usr/lib/debug/.build-id/ab/cdef….debug for the image's GNU build id, if it exists.
fn debug_file(data: &[u8]) -> Option<PathBuf> {
    let file = object::File::parse(data).ok()?;
    let id = file.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let (dir, rest) = hex.split_at_checked(2)?;
    let path = Path::new(DEBUG_ROOT)
        .join(dir)
        .join(format!("{rest}.debug"));
    path.exists().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_names_one_of_its_own_functions() {
        let exe = std::env::current_exe().unwrap();
        let syms = ElfSymbols::load(&exe).unwrap();
        assert!(syms.table.len() > 100, "{}", syms.source);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let addr = this_test_binary_names_one_of_its_own_functions as *const () as usize as u64;
        let offset = maps
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (lo, hi) = f.next()?.split_once('-')?;
                let (lo, hi) = (
                    u64::from_str_radix(lo, 16).ok()?,
                    u64::from_str_radix(hi, 16).ok()?,
                );
                let off = u64::from_str_radix(f.nth(1)?, 16).ok()?;
                (lo..hi).contains(&addr).then_some(addr - lo + off)
            })
            .next()
            .unwrap();
        let sym = syms.lookup_file_offset(offset).unwrap();
        assert!(
            sym.name
                .contains("this_test_binary_names_one_of_its_own_functions"),
            "{}",
            sym.name
        );
    }

    #[test]
    fn a_non_elf_file_says_so() {
        let err = ElfSymbols::parse(b"#!/bin/sh\n", None).unwrap_err();
        assert!(err.contains("not an ELF"), "{err}");
    }
}
