//! tracefs (Documentation/trace/ftrace.rst, "The File System"): where the kernel lists its
//! tracepoints, each with the `id` perf_event_open(2) takes as `PERF_TYPE_TRACEPOINT`'s config
//! and the `format` file that says where each field sits in the event's raw record
//! (Documentation/trace/events.rst, "Event formats"). A kernel that has tracefs does not
//! always mount it: mounting it at /sys/kernel/tracing (mount(2), as root) is what
//! `mount -t tracefs nodev /sys/kernel/tracing` does, and a mount made here is undone when the
//! handle drops. Fields are read by the offsets the format file gives, never by offsets
//! written into the code: they move between kernel versions.
use super::cvt;
use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted on a current system (Documentation/trace/ftrace.rst).
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// A tracefs with its `events/` folder, mounted here or found mounted.
#[derive(Debug)]
pub struct Tracefs {
    root: PathBuf,
    mounted_here: bool,
}

impl Tracefs {
    /// Finds tracefs at [`TRACEFS`] or, when its `events/` is not there, mounts it there
    /// (root only). `Err` says why there is none.
    pub fn open() -> Result<Tracefs, String> {
        let root = PathBuf::from(TRACEFS);
        if root.join("events").is_dir() {
            return Ok(Tracefs {
                root,
                mounted_here: false,
            });
        }
        if !root.is_dir() {
            return Err(format!(
                "{TRACEFS} does not exist: this kernel has no tracefs (CONFIG_TRACING off)"
            ));
        }
        if !super::is_root() {
            return Err(format!(
                "tracefs is not mounted at {TRACEFS} and mounting it needs root \
                 (mount -t tracefs nodev {TRACEFS})"
            ));
        }
        mount_tracefs(&root).map_err(|e| format!("mounting tracefs at {TRACEFS} failed: {e}"))?;
        let mounted = Tracefs {
            root,
            mounted_here: true,
        };
        if !mounted.root.join("events").is_dir() {
            return Err(format!(
                "tracefs mounted at {TRACEFS} lists no events/: this kernel has no tracepoints"
            ));
        }
        Ok(mounted)
    }

    /// Whether this handle mounted tracefs (and unmounts it when dropped).
    pub fn mounted_here(&self) -> bool {
        self.mounted_here
    }

    /// The event `group:name`: its id and the layout of its raw record.
    pub fn event(&self, group: &str, name: &str) -> Result<EventFormat, String> {
        let dir = self.root.join("events").join(group).join(name);
        let read = |file: &str| {
            std::fs::read_to_string(dir.join(file)).map_err(|e| {
                format!(
                    "tracepoint {group}:{name} is not listed here ({}: {e})",
                    dir.join(file).display()
                )
            })
        };
        let id: u64 = read("id")?
            .trim()
            .parse()
            .map_err(|e| format!("{}/id: not a number ({e})", dir.display()))?;
        let format = EventFormat::parse(&read("format")?)
            .map_err(|e| format!("{}/format: {e}", dir.display()))?;
        if format.id != id {
            return Err(format!(
                "{}: the format file says ID {} and the id file {id}",
                dir.display(),
                format.id
            ));
        }
        Ok(format)
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted_here {
            // Best effort: a mount that another process uses right now is detached from the
            // tree at once and freed when it lets go (MNT_DETACH).
            let _ = unmount_tracefs(&self.root);
        }
    }
}

/// Whether tracefs is mounted at `path` now (/proc/self/mounts).
pub fn is_mounted_at(path: &Path) -> bool {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return false;
    };
    let want = path.to_string_lossy();
    mounts.lines().any(|line| {
        let mut fields = line.split_whitespace();
        let (_, at, kind) = (fields.next(), fields.next(), fields.next());
        at == Some(&want) && kind == Some("tracefs")
    })
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.to_string_lossy().as_bytes()).map_err(io::Error::other)
}

fn mount_tracefs(at: &Path) -> io::Result<()> {
    let target = c_path(at)?;
    // SAFETY: every pointer is a NUL-terminated string that lives across the call; tracefs
    // takes no mount data, so the data pointer is null.
    cvt(unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    })?;
    Ok(())
}

fn unmount_tracefs(at: &Path) -> io::Result<()> {
    let target = c_path(at)?;
    // SAFETY: `target` is a NUL-terminated path that lives across the call.
    cvt(unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) })?;
    Ok(())
}

/// One field of an event's raw record, as its format file gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C declaration's type (`int`, `const void *`, `__data_loc char[]`).
    pub c_type: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

impl Field {
    /// A `__data_loc` field holds where a variable-length value sits in the record: its
    /// offset (low 16 bits) and length (high 16 bits).
    pub fn is_data_loc(&self) -> bool {
        self.c_type.starts_with("__data_loc")
    }

    /// The field as an unsigned integer (sign bits kept as they are in memory).
    pub fn unsigned(&self, raw: &[u8]) -> Option<u64> {
        let bytes = raw.get(self.offset..self.offset + self.size)?;
        Some(match self.size {
            1 => u64::from(bytes[0]),
            2 => u64::from(u16::from_ne_bytes(bytes.try_into().ok()?)),
            4 => u64::from(u32::from_ne_bytes(bytes.try_into().ok()?)),
            8 => u64::from_ne_bytes(bytes.try_into().ok()?),
            _ => return None,
        })
    }

    /// The field as a signed integer when the format says it is signed, else unsigned.
    pub fn integer(&self, raw: &[u8]) -> Option<i64> {
        let value = self.unsigned(raw)?;
        if !self.signed || self.size == 8 {
            return Some(value as i64);
        }
        let shift = 64 - 8 * self.size as u32;
        Some(((value << shift) as i64) >> shift)
    }

    /// A `__data_loc char[]` field's text, up to its NUL.
    pub fn text<'a>(&self, raw: &'a [u8]) -> Option<&'a str> {
        let loc = u32::try_from(self.unsigned(raw)?).ok()?;
        let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        let bytes = raw.get(at..at + len)?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end]).ok()
    }
}

/// An event's format file: its name, id, fields and print format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub name: String,
    pub id: u64,
    pub fields: Vec<Field>,
    pub print_fmt: String,
}

impl EventFormat {
    /// Parses a format file (`name:`, `ID:`, a `field:` line per field, `print fmt:`).
    pub fn parse(text: &str) -> Result<EventFormat, String> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        let mut print_fmt = String::new();
        for line in text.lines().map(str::trim) {
            if let Some(v) = line.strip_prefix("name:") {
                name = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("ID:") {
                id = Some(v.trim().parse().map_err(|e| format!("ID {v:?}: {e}"))?);
            } else if line.starts_with("field:") {
                fields.push(parse_field(line)?);
            } else if let Some(v) = line.strip_prefix("print fmt:") {
                print_fmt = v.trim().to_string();
            }
        }
        Ok(EventFormat {
            name: name.ok_or("no name: line")?,
            id: id.ok_or("no ID: line")?,
            fields,
            print_fmt,
        })
    }

    /// The field called `name`, or why the record cannot be read without it.
    pub fn field(&self, name: &str) -> Result<&Field, String> {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| format!("event {} has no field {name}", self.name))
    }

    /// The names `__print_symbolic(REC-><field>, { value, "NAME" }, …)` in the print format
    /// gives the values of `field` (an enum such as kfree_skb's drop reason), in order.
    pub fn symbols(&self, field: &str) -> Vec<(u64, String)> {
        let call = format!("__print_symbolic(REC->{field},");
        let Some(start) = self.print_fmt.find(&call) else {
            return Vec::new();
        };
        let mut rest = &self.print_fmt[start + call.len()..];
        let mut out = Vec::new();
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let entry = &rest[open + 1..open + close];
            rest = &rest[open + close + 1..];
            if let Some((value, label)) = entry.split_once(',') {
                let label = label.trim().trim_matches('"');
                if let Ok(v) = parse_c_integer(value.trim()) {
                    out.push((v, label.to_string()));
                }
            }
            // The list ends at the call's closing parenthesis.
            if rest.trim_start().starts_with(')') {
                break;
            }
        }
        out
    }
}

/// `field:<declaration>;\toffset:N;\tsize:N;\tsigned:N;`
fn parse_field(line: &str) -> Result<Field, String> {
    let mut parts = line.split(';').map(str::trim).filter(|p| !p.is_empty());
    let declaration = parts
        .next()
        .and_then(|d| d.strip_prefix("field:"))
        .ok_or_else(|| format!("not a field line: {line:?}"))?;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in parts {
        let (key, value) = part.split_once(':').unwrap_or((part, ""));
        let number = || {
            value
                .trim()
                .parse::<usize>()
                .map_err(|e| format!("{key} {value:?} in {line:?}: {e}"))
        };
        match key.trim() {
            "offset" => offset = Some(number()?),
            "size" => size = Some(number()?),
            "signed" => signed = number()? != 0,
            _ => {}
        }
    }
    let (c_type, name) = split_declaration(declaration)
        .ok_or_else(|| format!("no field name in {declaration:?}"))?;
    Ok(Field {
        name,
        c_type,
        offset: offset.ok_or_else(|| format!("no offset in {line:?}"))?,
        size: size.ok_or_else(|| format!("no size in {line:?}"))?,
        signed,
    })
}

/// `const void * skbaddr` → (`const void *`, `skbaddr`); `char comm[16]` → (`char[16]`,
/// `comm`); `__data_loc char[] name` → (`__data_loc char[]`, `name`).
fn split_declaration(declaration: &str) -> Option<(String, String)> {
    let declaration = declaration.trim();
    let cut = declaration.rfind(|c: char| c.is_whitespace() || c == '*')?;
    let (ty, last) = (declaration[..=cut].trim(), declaration[cut + 1..].trim());
    let (name, array) = match last.find('[') {
        Some(at) => (&last[..at], &last[at..]),
        None => (last, ""),
    };
    if name.is_empty() {
        return None;
    }
    Some((format!("{ty}{array}"), name.to_string()))
}

fn parse_c_integer(text: &str) -> Result<u64, std::num::ParseIntError> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    }
}

/// Unit tests that mount or read tracefs take turns: one that unmounts what it mounted would
/// pull the files from under another that found them mounted.
#[cfg(test)]
pub(crate) static TRACEFS_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
#[path = "tracefs_tests.rs"]
mod tests;
