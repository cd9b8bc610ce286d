//! Where a side's CPU goes: sampling its threads with perf_event_open(2), naming the samples
//! (kallsyms, ELF symbols) and charging them to categories, each share with a 95 % interval.
pub mod block;
pub mod breakdown;
pub mod categories;
pub mod demangle;
pub mod elf;
pub mod kallsyms;
pub mod symtab;
