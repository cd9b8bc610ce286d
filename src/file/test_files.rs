//! The files `bytepath file` serves: test files created once in a folder of their own under
//! the temporary directory and removed when the study ends (success, failure or Ctrl-C, since
//! the folder is removed on drop and the command returns normally on Ctrl-C), or the user's own
//! file, opened read-only and never modified.
use crate::error::ConfigError;
use crate::sys::file as sysfile;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use xxhash_rust::xxh3::Xxh3;

/// Test files are written in pieces of this size, so a 1 GiB file never needs 1 GiB of memory.
const WRITE_PIECE: usize = 1 << 20;

/// A file to serve: its path, length and, with --verify, its xxh3-64 hash.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedFile {
    pub path: PathBuf,
    pub len: u64,
    pub hash: Option<u64>,
}

/// How every test folder's name begins (then the creating process's id).
pub const FOLDER_PREFIX: &str = "bytepath-file-";

/// The folder holding this run's test files; removed with everything in it on drop.
#[derive(Debug)]
pub struct TestFolder {
    pub dir: PathBuf,
}

impl TestFolder {
    /// Creates `bytepath-file-<pid>-<nanoseconds>` under `parent`.
    pub fn create(parent: &Path) -> io::Result<TestFolder> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = parent.join(format!("{FOLDER_PREFIX}{}-{nanos}", std::process::id()));
        fs::create_dir(&dir)?;
        Ok(TestFolder { dir })
    }

    /// Writes a test file of `len` bytes (a pseudo-random pattern, so neither compression nor
    /// deduplication flatters a mechanism), fsynced; hashes it on the way when asked.
    /// Stops early, with an `Interrupted` error, when `interrupt` is set.
    pub fn write(&self, len: u64, hash: bool, interrupt: &AtomicBool) -> io::Result<ServedFile> {
        let path = self.dir.join(format!("{len}.bin"));
        let mut file = File::create(&path)?;
        let mut piece = vec![0u8; WRITE_PIECE];
        let mut state = 0x243F_6A88_85A3_08D3u64 ^ len;
        let mut hasher = Xxh3::new();
        let mut left = len;
        while left > 0 {
            if interrupt.load(Ordering::Relaxed) {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            fill_pattern(&mut piece, &mut state);
            let n = WRITE_PIECE.min(left as usize);
            file.write_all(&piece[..n])?;
            if hash {
                hasher.update(&piece[..n]);
            }
            left -= n as u64;
        }
        // Dirty pages cannot be dropped, so --cache cold needs them on disk first.
        file.sync_all()?;
        Ok(ServedFile {
            path,
            len,
            hash: hash.then(|| hasher.digest()),
        })
    }
}

impl Drop for TestFolder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// xorshift64: cheap, and no two 8-byte words of a file repeat in any useful way.
fn fill_pattern(buf: &mut [u8], state: &mut u64) {
    for word in buf.chunks_exact_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        word.copy_from_slice(&state.to_le_bytes());
    }
}

/// The user's `--file`: must be a readable, non-empty regular file. Hashed (one read) when
/// --verify asks for it.
pub fn user_file(path: &Path, hash: bool) -> Result<ServedFile, ConfigError> {
    let refuse = |why: String| {
        ConfigError(format!(
            "--file {}: {why}; allowed: a readable, non-empty regular file",
            path.display()
        ))
    };
    let mut file = File::open(path).map_err(|e| refuse(format!("cannot be opened ({e})")))?;
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("cannot be read ({e})")))?;
    if !meta.is_file() {
        return Err(refuse("is not a regular file".into()));
    }
    if meta.len() == 0 {
        return Err(refuse("is empty".into()));
    }
    let hash = if hash {
        let mut hasher = Xxh3::new();
        let mut piece = vec![0u8; WRITE_PIECE];
        loop {
            let n = file
                .read(&mut piece)
                .map_err(|e| refuse(format!("cannot be read ({e})")))?;
            if n == 0 {
                break;
            }
            hasher.update(&piece[..n]);
        }
        Some(hasher.digest())
    } else {
        None
    };
    Ok(ServedFile {
        path: path.to_path_buf(),
        len: meta.len(),
        hash,
    })
}

/// Refuses sizes whose test files would not fit in `available` bytes, up front.
pub fn check_space(sizes: &[u64], dir: &Path, available: u64) -> Result<(), ConfigError> {
    let needed: u64 = sizes.iter().sum();
    // Leave some room: filling a file system to the last byte hurts everything else on it.
    let margin = 64 << 20;
    if needed.saturating_add(margin) > available {
        return Err(ConfigError(format!(
            "--sizes: the test files need {needed} B (plus a 64 MiB margin) in {}, but only {available} B are available; allowed: sizes that fit, or --file PATH",
            dir.display()
        )));
    }
    Ok(())
}

/// Free space where test files go.
pub fn available_space(dir: &Path) -> io::Result<u64> {
    sysfile::free_space(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_hold_their_size_and_hash_and_vanish_with_the_folder() {
        let parent = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let folder = TestFolder::create(parent.path()).unwrap();
        let f = folder
            .write(3 * WRITE_PIECE as u64 + 5, true, &stop)
            .unwrap();
        let bytes = fs::read(&f.path).unwrap();
        assert_eq!(bytes.len() as u64, f.len);
        assert_eq!(Some(xxhash_rust::xxh3::xxh3_64(&bytes)), f.hash);
        assert!(
            bytes.iter().filter(|&&b| b == 0).count() < bytes.len() / 100,
            "not zeros"
        );
        let dir = folder.dir.clone();
        drop(folder);
        assert!(!dir.exists());
    }

    #[test]
    fn sizes_that_do_not_fit_are_refused_with_both_figures() {
        let e = check_space(&[1 << 30, 1 << 30], Path::new("/tmp"), 1 << 30).unwrap_err();
        assert!(
            e.0.contains("2147483648 B") && e.0.contains("1073741824 B"),
            "{e}"
        );
        assert!(check_space(&[1 << 20], Path::new("/tmp"), 1 << 30).is_ok());
    }

    #[test]
    fn a_missing_or_empty_user_file_is_one_clear_error() {
        let e = user_file(Path::new("/nonexistent"), false).unwrap_err();
        assert!(e.0.contains("/nonexistent") && e.0.contains("cannot be opened"));
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("e");
        File::create(&empty).unwrap();
        assert!(user_file(&empty, false).unwrap_err().0.contains("is empty"));
        assert!(user_file(dir.path(), false).is_err(), "a folder is refused");
    }
}
