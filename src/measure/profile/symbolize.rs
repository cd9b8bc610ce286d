//! Naming sample addresses once per profile: kernel addresses through /proc/kallsyms, user
//! addresses through `/proc/<pid>/maps` (proc(5)) and the ELF symbols of the file mapped there
//! (the vDSO read from `/proc/<pid>/mem`). Each distinct address is resolved once.
use super::breakdown::NamedSample;
use super::categories::Space;
use super::elf::ElfSymbols;
use super::kallsyms;
use super::sampler::RawSample;
use super::symtab::SymbolTable;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

/// One executable mapping of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    /// The mapped file, `[vdso]`, or empty for anonymous memory.
    pub path: String,
}

/// Symbol tables kept across profiles: kallsyms once, each mapped file once.
#[derive(Debug, Default)]
pub struct Symbolizer {
    kernel: Option<SymbolTable>,
    files: HashMap<String, Option<ElfSymbols>>,
    /// Where each file's names came from, for the files that named something.
    sources: BTreeMap<String, String>,
}

impl Symbolizer {
    pub fn new() -> Symbolizer {
        Symbolizer::default()
    }

    /// A symbolizer over a given kernel table (fixtures, tests).
    pub fn with_kernel(kernel: SymbolTable) -> Symbolizer {
        Symbolizer {
            kernel: Some(kernel),
            ..Symbolizer::default()
        }
    }

    fn kernel(&mut self) -> Result<&SymbolTable, String> {
        if self.kernel.is_none() {
            self.kernel = Some(kallsyms::load()?);
        }
        Ok(self.kernel.as_ref().expect("loaded above"))
    }

    /// Names every sample of process `pid`, reading its maps now (call while it runs).
    pub fn name_samples(
        &mut self,
        pid: u32,
        samples: &[RawSample],
    ) -> Result<Vec<NamedSample>, String> {
        self.kernel()?;
        let maps = read_maps(pid)?;
        let mut names: HashMap<(Space, u64), Arc<str>> = HashMap::new();
        let mut named = Vec::with_capacity(samples.len());
        for s in samples {
            let mut frames = Vec::with_capacity(1 + s.callers.len());
            frames.push(self.cached(&mut names, pid, &maps, s.space, s.ip));
            for &ret in s.callers.iter() {
                // A return address points after the call; one byte back is inside the caller.
                frames.push(self.cached(
                    &mut names,
                    pid,
                    &maps,
                    Space::Kernel,
                    ret.saturating_sub(1),
                ));
            }
            named.push(NamedSample {
                space: s.space,
                frames,
            });
        }
        Ok(named)
    }

    fn cached(
        &mut self,
        names: &mut HashMap<(Space, u64), Arc<str>>,
        pid: u32,
        maps: &[Mapping],
        space: Space,
        addr: u64,
    ) -> Arc<str> {
        if let Some(name) = names.get(&(space, addr)) {
            return name.clone();
        }
        let name: Arc<str> = match space {
            Space::Kernel => self.kernel_name(addr),
            Space::User => self.user_name(pid, maps, addr),
        }
        .into();
        names.insert((space, addr), name.clone());
        name
    }

    fn kernel_name(&mut self, addr: u64) -> String {
        let table = self.kernel.as_ref().expect("loaded by name_samples");
        table
            .lookup(addr)
            .map_or_else(|| "[kernel]".to_string(), |s| s.name.to_string())
    }

    /// The function at a user address, or `[file]` / `[anon]` when nothing names it.
    pub fn user_name(&mut self, pid: u32, maps: &[Mapping], addr: u64) -> String {
        let Some(map) = maps.iter().find(|m| (m.start..m.end).contains(&addr)) else {
            return "[unmapped]".into();
        };
        if map.path.is_empty() {
            return "[anon]".into();
        }
        let symbols = self
            .files
            .entry(map.path.clone())
            .or_insert_with(|| load_mapped(pid, map));
        let found = symbols.as_ref().and_then(|s| {
            s.lookup_file_offset(addr - map.start + map.offset)
                .map(|f| (f, s))
        });
        match found {
            Some((sym, file)) => {
                self.sources
                    .entry(file_name(&map.path).to_string())
                    .or_insert_with(|| file.source.clone());
                sym.name.to_string()
            }
            None => format!("[{}]", file_name(&map.path)),
        }
    }

    /// "file: where its names came from" for every file that named a sample.
    pub fn sources(&self) -> Vec<String> {
        self.sources
            .iter()
            .map(|(f, s)| format!("{f}: {s}"))
            .collect()
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The symbols of a mapped file; the vDSO comes from the process's memory, a deleted file
/// (rebuilt while running) from `/proc/<pid>/map_files`.
fn load_mapped(pid: u32, map: &Mapping) -> Option<ElfSymbols> {
    if map.path == "[vdso]" {
        let bytes = read_memory(pid, map.start, map.end - map.start)?;
        return ElfSymbols::parse(&bytes, None).ok();
    }
    if map.path.starts_with('[') {
        return None;
    }
    let path = match map.path.strip_suffix(" (deleted)") {
        Some(_) => PathBuf::from(format!(
            "/proc/{pid}/map_files/{:x}-{:x}",
            map.start, map.end
        )),
        None => PathBuf::from(&map.path),
    };
    ElfSymbols::load(&path).ok()
}

fn read_memory(pid: u32, addr: u64, len: u64) -> Option<Vec<u8>> {
    let mut mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    mem.seek(SeekFrom::Start(addr)).ok()?;
    let mut buf = vec![0; usize::try_from(len).ok()?];
    mem.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// The executable mappings of `pid`.
pub fn read_maps(pid: u32) -> Result<Vec<Mapping>, String> {
    let path = format!("/proc/{pid}/maps");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text.lines().filter_map(parse_map_line).collect())
}

fn parse_map_line(line: &str) -> Option<Mapping> {
    let mut fields = line.splitn(6, ' ');
    let (lo, hi) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    let offset = u64::from_str_radix(fields.next()?, 16).ok()?;
    let path = fields.nth(2).unwrap_or("").trim().to_string();
    if !perms.contains('x') {
        return None;
    }
    Some(Mapping {
        start: u64::from_str_radix(lo, 16).ok()?,
        end: u64::from_str_radix(hi, 16).ok()?,
        offset,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_keep_executable_mappings_with_their_paths() {
        let text = "55d0a000-55d0b000 r--p 00000000 fd:01 123 /usr/bin/x\n\
                    55d0b000-55d0c000 r-xp 00001000 fd:01 123 /usr/bin/x\n\
                    7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n\
                    7f000000-7f001000 rwxp 00000000 00:00 0 \n";
        let maps: Vec<Mapping> = text.lines().filter_map(parse_map_line).collect();
        assert_eq!(maps.len(), 3);
        assert_eq!(maps[0].path, "/usr/bin/x");
        assert_eq!(maps[0].offset, 0x1000);
        assert_eq!(maps[1].path, "[vdso]");
        assert_eq!(maps[2].path, "");
    }

    #[inline(never)]
    fn a_function_with_a_name() -> u64 {
        std::hint::black_box(7)
    }

    #[test]
    fn a_user_address_of_this_process_gets_its_function_name() {
        let pid = std::process::id();
        let maps = read_maps(pid).unwrap();
        let mut sym = Symbolizer::new();
        let addr = a_function_with_a_name as *const () as usize as u64 + 1;
        let name = sym.user_name(pid, &maps, addr);
        assert!(name.ends_with("a_function_with_a_name"), "{name}");
        assert!(!sym.sources().is_empty());
        assert_eq!(sym.user_name(pid, &maps, 8), "[unmapped]");
    }

    #[test]
    fn the_vdso_is_named_from_memory() {
        let pid = std::process::id();
        let maps = read_maps(pid).unwrap();
        let Some(vdso) = maps.iter().find(|m| m.path == "[vdso]") else {
            crate::skip_test(None, "no vDSO mapped");
            return;
        };
        let mut sym = Symbolizer::new();
        let names: Vec<String> = (vdso.start..vdso.end)
            .step_by(16)
            .map(|a| sym.user_name(pid, &maps, a))
            .collect();
        assert!(
            names.iter().any(|n| n.contains("clock_gettime")),
            "{:?}",
            &names[..names.len().min(8)]
        );
    }

    #[test]
    fn kernel_samples_name_leaf_and_callers_from_the_table() {
        let table = kallsyms::parse(include_str!("fixtures/kallsyms.txt")).unwrap();
        let mut sym = Symbolizer::with_kernel(table);
        let sample = RawSample {
            tid: 1,
            space: Space::Kernel,
            ip: 0xffffffff81b6c570,
            callers: vec![0xffffffff821f64a8 + 1].into_boxed_slice(),
        };
        let named = sym.name_samples(std::process::id(), &[sample]).unwrap();
        let frames: Vec<&str> = named[0].frames.iter().map(|f| f.as_ref()).collect();
        assert_eq!(frames, ["_copy_from_iter", "memcpy"]);
    }
}
