//! Identities per host on the real binary over loopback: `keygen --identity` writes a key pair
//! with the right modes; a driver whose key the server authorizes runs, and the server's
//! audit line names its key; an unknown driver key is refused, and so is a server key the
//! driver does not trust (before any request); the token and identities together work, and
//! a setup that gives one half of a pair is refused with one line, exit 2.
mod common;
use common::bytepath;
use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// `keygen --identity DIR/NAME --name NAME`: the private key's path.
fn key_pair(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let out = bytepath()
        .args(["keygen", "--identity"])
        .arg(&path)
        .args(["--name", name])
        .output()
        .unwrap();
    common::assert_success(&out);
    path
}

fn public(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

/// A list file holding the public lines of `keys`.
fn list(dir: &Path, file: &str, keys: &[&Path]) -> PathBuf {
    let text: String = keys
        .iter()
        .map(|k| std::fs::read_to_string(public(k)).unwrap())
        .collect();
    let path = dir.join(file);
    std::fs::write(&path, format!("# {file}\n{text}")).unwrap();
    path
}

/// A server with `extra` flags and `--log-format json`, its log in `log`; its address.
struct Server {
    child: std::process::Child,
    address: String,
}

impl Server {
    fn start(extra: &[&std::ffi::OsStr], log: &Path) -> Server {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bytepath"))
            .args([
                "server",
                "--port",
                "0",
                "--timeout",
                "5s",
                "--log-format",
                "json",
            ])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .split_whitespace()
            .nth(4)
            .unwrap_or_else(|| panic!("no address in {line:?}: {}", read(log)))
            .to_string();
        Server { child, address }
    }

    /// Stops the server; its audit lines (JSON objects with a session number).
    fn sessions(mut self, log: &Path) -> Vec<serde_json::Value> {
        std::thread::sleep(Duration::from_millis(300));
        let _ = self.child.kill();
        let _ = self.child.wait();
        read(log)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|v: &serde_json::Value| v["session"].is_u64())
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `--identity KEY --authorized-drivers DRIVERS`, as the server takes them.
fn identity_flags<'a>(key: &'a Path, drivers: &'a Path) -> Vec<&'a std::ffi::OsStr> {
    vec![
        "--identity".as_ref(),
        key.as_os_str(),
        "--authorized-drivers".as_ref(),
        drivers.as_os_str(),
    ]
}

/// `run --remote` (rr, 300 ms) with `extra` flags.
fn drive(address: &str, extra: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = bytepath();
    cmd.args(["run", "--json", "-m", "send", "-p", "rr"]).args([
        "--duration",
        "300ms",
        "--warmup",
        "100ms",
        "--remote",
        address,
    ]);
    for (flag, path) in extra {
        cmd.arg(flag).arg(path);
    }
    cmd.timeout(Duration::from_secs(60)).output().unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn keygen_identity_writes_an_owner_only_private_key_and_a_public_line_never_over_them() {
    let dir = tempfile::tempdir().unwrap();
    let key = key_pair(dir.path(), "node-1");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&key), 0o600);
    assert_eq!(mode(&public(&key)), 0o644);
    let line = read(&public(&key));
    let (hex, name) = line.trim().split_once(' ').unwrap();
    assert_eq!((hex.len(), name), (64, "node-1"), "{line}");
    assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
    assert!(
        !read(&key).contains(hex),
        "the private file holds the public key"
    );
    // Never overwritten: one line naming the file, exit 2, both files unchanged.
    let private = read(&key);
    let again = bytepath()
        .args(["keygen", "--identity"])
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert_eq!(stderr(&again).lines().count(), 1, "{}", stderr(&again));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
    assert_eq!((read(&key), read(&public(&key))), (private, line));
    // A key file others may read is refused by the server with the fix, exit 2.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let drivers = list(dir.path(), "drivers", &[&key]);
    let out = bytepath()
        .args(["server", "--port", "0", "--identity"])
        .arg(&key)
        .arg("--authorized-drivers")
        .arg(&drivers)
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("chmod 600 {}", key.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_authorized_driver_runs_and_the_audit_line_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let (server_key, driver_key) = (key_pair(dir.path(), "srv"), key_pair(dir.path(), "ana"));
    let drivers = list(dir.path(), "drivers", &[&driver_key]);
    let trusted = list(dir.path(), "trusted", &[&server_key]);
    let log = dir.path().join("log");
    let server = Server::start(&identity_flags(&server_key, &drivers), &log);
    let out = drive(
        &server.address,
        &[("--identity", &driver_key), ("--trusted-servers", &trusted)],
    );
    common::assert_success(&out);
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "completed", "{}", record["errors"]);
    let sessions = server.sessions(&log);
    let fingerprint = &read(&public(&driver_key))[..16];
    let ran: Vec<_> = sessions.iter().filter(|s| s["ran"].is_string()).collect();
    assert_eq!(ran.len(), 1, "{sessions:?}");
    assert_eq!(ran[0]["identity"], format!("key ana ({fingerprint})"));
    assert!(sessions.iter().all(|s| s["result"] == "ok"), "{sessions:?}");
}

#[test]
fn an_unknown_driver_key_is_refused_and_logged_unauthenticated() {
    let dir = tempfile::tempdir().unwrap();
    let server_key = key_pair(dir.path(), "srv");
    let (driver_key, stranger) = (key_pair(dir.path(), "ana"), key_pair(dir.path(), "eve"));
    let drivers = list(dir.path(), "drivers", &[&driver_key]);
    let trusted = list(dir.path(), "trusted", &[&server_key]);
    let log = dir.path().join("log");
    let server = Server::start(&identity_flags(&server_key, &drivers), &log);
    let out = drive(
        &server.address,
        &[("--identity", &stranger), ("--trusted-servers", &trusted)],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let fingerprint = &read(&public(&stranger))[..16];
    assert!(
        err.contains(&format!("the driver's key {fingerprint} is not among")),
        "{err}"
    );
    assert!(err.contains("--authorized-drivers"), "{err}");
    // The authorized one still gets in.
    let ok = drive(
        &server.address,
        &[("--identity", &driver_key), ("--trusted-servers", &trusted)],
    );
    common::assert_success(&ok);
    let sessions = server.sessions(&log);
    assert!(
        sessions
            .iter()
            .all(|s| s["identity"] != format!("key eve ({fingerprint})")),
        "{sessions:?}"
    );
    assert!(
        sessions
            .iter()
            .filter(|s| s["asked"].is_string())
            .all(|s| s["identity"].as_str().unwrap().starts_with("key ana ")),
        "{sessions:?}"
    );
}

#[test]
fn a_server_key_the_driver_does_not_trust_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let (server_key, other) = (key_pair(dir.path(), "srv"), key_pair(dir.path(), "other"));
    let driver_key = key_pair(dir.path(), "ana");
    let drivers = list(dir.path(), "drivers", &[&driver_key]);
    let trusted = list(dir.path(), "trusted", &[&other]);
    let log = dir.path().join("log");
    let server = Server::start(&identity_flags(&server_key, &drivers), &log);
    let out = drive(
        &server.address,
        &[("--identity", &driver_key), ("--trusted-servers", &trusted)],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let fingerprint = &read(&public(&server_key))[..16];
    assert!(
        err.contains(&format!(
            "the server's key {fingerprint} is not among --trusted-servers"
        )),
        "{err}"
    );
    // The server saw no request and ran nothing; a driver without an identity is refused too.
    let bare = drive(&server.address, &[]);
    assert_eq!(bare.status.code(), Some(2), "{}", stderr(&bare));
    assert!(
        stderr(&bare).contains("takes only drivers with an identity"),
        "{}",
        stderr(&bare)
    );
    let sessions = server.sessions(&log);
    assert!(
        sessions
            .iter()
            .all(|s| s["asked"].is_null() && s["ran"].is_null()),
        "{sessions:?}"
    );
}

#[test]
fn the_token_and_identities_together_need_both() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (server_key, driver_key) = (key_pair(dir.path(), "srv"), key_pair(dir.path(), "ana"));
    let drivers = list(dir.path(), "drivers", &[&driver_key]);
    let trusted = list(dir.path(), "trusted", &[&server_key]);
    let log = dir.path().join("log");
    let mut extra = identity_flags(&server_key, &drivers);
    extra.extend(["--token-file".as_ref(), token.as_os_str()]);
    let server = Server::start(&extra, &log);
    let both = [
        ("--identity", driver_key.as_path()),
        ("--trusted-servers", trusted.as_path()),
        ("--token-file", token.as_path()),
    ];
    common::assert_success(&drive(&server.address, &both));
    // The identity without the token: refused by the server at the first message.
    let keys_only = drive(&server.address, &both[..2]);
    assert_eq!(keys_only.status.code(), Some(2), "{}", stderr(&keys_only));
    assert!(
        stderr(&keys_only).contains("wrong token"),
        "{}",
        stderr(&keys_only)
    );
    // The token without the identity: refused by the driver, which sees the server's key.
    let token_only = drive(&server.address, &both[2..]);
    assert_eq!(token_only.status.code(), Some(2), "{}", stderr(&token_only));
    let sessions = server.sessions(&log);
    let ran: Vec<_> = sessions.iter().filter(|s| s["ran"].is_string()).collect();
    assert_eq!(ran.len(), 1, "{sessions:?}");
    let fingerprint = &read(&public(&driver_key))[..16];
    assert_eq!(
        ran[0]["identity"],
        format!("key ana ({fingerprint}) and token")
    );
}

#[test]
fn half_an_identity_setup_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let key = key_pair(dir.path(), "srv");
    let keys = list(dir.path(), "keys", &[&key]);
    let cases: [(Vec<&std::ffi::OsStr>, &str); 4] = [
        (
            vec![
                "server".as_ref(),
                "--port".as_ref(),
                "0".as_ref(),
                "--authorized-drivers".as_ref(),
                keys.as_os_str(),
            ],
            "--authorized-drivers without --identity",
        ),
        (
            vec![
                "server".as_ref(),
                "--port".as_ref(),
                "0".as_ref(),
                "--identity".as_ref(),
                key.as_os_str(),
            ],
            "--identity without --authorized-drivers",
        ),
        (
            vec![
                "run".as_ref(),
                "-m".as_ref(),
                "send".as_ref(),
                "--remote".as_ref(),
                "127.0.0.1:1".as_ref(),
                "--identity".as_ref(),
                key.as_os_str(),
            ],
            "--identity without --trusted-servers",
        ),
        (
            vec![
                "run".as_ref(),
                "-m".as_ref(),
                "send".as_ref(),
                "--identity".as_ref(),
                key.as_os_str(),
                "--trusted-servers".as_ref(),
                keys.as_os_str(),
            ],
            "--identity: applies with --remote",
        ),
    ];
    for (args, expected) in cases {
        let out = bytepath()
            .args(&args)
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}
