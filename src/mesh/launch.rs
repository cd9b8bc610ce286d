//! `mesh --launch ssh`: starts `bytepath server` on every host through the system's OpenSSH
//! client (ssh(1): `ssh HOST COMMAND` runs COMMAND there with its standard streams carried
//! back) for the duration of the mesh. Each server binds the host's address, allows exactly
//! the mesh's hosts as peers, reads the token from the first line of its standard input (never
//! a command line, never a file there), and exits when that input ends
//! (`--until-stdin-closes`). The driver holds the write end: closing it stops the servers, and
//! so does the driver's death, however it dies. A server is ready when it prints its
//! "listening" line; its output goes to `servers/HOST.log` in the results folder.
use super::spec::Launch;
use crate::config::Target;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a host may take from the ssh command to the server's "listening" line.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit once its input closed, before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// One started server.
struct Started {
    host: String,
    child: Child,
    stdin: Option<ChildStdin>,
}

/// The servers this mesh started; dropping it stops them.
pub struct Launched {
    servers: Vec<Started>,
}

/// The command run on each host.
pub fn remote_command(launch: &Launch, bind: IpAddr, port: u16, peers: &[IpAddr]) -> String {
    let allow: Vec<String> = peers.iter().map(|ip| ip.to_string()).collect();
    format!(
        "{} server --bind {bind} --port {port} --allow-peers {} --token-file - --until-stdin-closes",
        launch.binary,
        allow.join(",")
    )
}

/// The address a host's server binds and its peers are allowed by: the host itself when it is
/// an address, else what its name resolves to here.
pub fn address(target: &Target) -> Result<IpAddr, String> {
    if let Ok(ip) = target.host.parse() {
        return Ok(ip);
    }
    (target.host.as_str(), target.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip())
        .ok_or_else(|| format!("{}: does not resolve here", target.host))
}

/// Starts every host's server at once and waits for each to be ready; returns the servers
/// and (host index, why) for every host whose server did not start.
pub fn start(
    launch: &Launch,
    hosts: &[Target],
    token: &[u8],
    logs: &Path,
) -> (Launched, Vec<(usize, String)>) {
    let mut failures = Vec::new();
    let mut addrs = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        match address(host) {
            Ok(ip) => addrs.push(Some(ip)),
            Err(why) => {
                failures.push((i, format!("--launch ssh: {why}")));
                addrs.push(None);
            }
        }
    }
    let peers: Vec<IpAddr> = addrs.iter().flatten().copied().collect();
    let _ = std::fs::create_dir_all(logs);
    let mut waiting = Vec::new();
    for (i, host) in hosts.iter().enumerate() {
        let Some(bind) = addrs[i] else { continue };
        let command = remote_command(launch, bind, host.port, &peers);
        match spawn(launch, host, &command, token, &log_path(logs, host)) {
            Ok((started, ready)) => waiting.push((i, started, ready)),
            Err(why) => failures.push((i, why)),
        }
    }
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut servers = Vec::new();
    for (i, mut started, ready) in waiting {
        let wait = deadline.saturating_duration_since(Instant::now());
        match ready.recv_timeout(wait) {
            Ok(Ok(line)) => {
                println!("launch: {}: {line}", started.host);
                servers.push(started);
            }
            Ok(Err(why)) => failures.push((i, format!("--launch ssh: {}: {why}", started.host))),
            Err(_) => {
                let _ = started.child.kill();
                failures.push((
                    i,
                    format!(
                        "--launch ssh: {}: the server did not say it was listening within {} s",
                        started.host,
                        READY_TIMEOUT.as_secs()
                    ),
                ));
                servers.push(started);
            }
        }
    }
    (Launched { servers }, failures)
}

/// `servers/HOST_PORT.log`.
pub fn log_path(logs: &Path, host: &Target) -> PathBuf {
    let name: String = host
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    logs.join(format!("{name}.log"))
}

/// Runs `SSH… HOST COMMAND`, hands it the token, and watches its output for the listening
/// line (sent on the returned channel; or why it never came), copying the rest to the log.
fn spawn(
    launch: &Launch,
    host: &Target,
    command: &str,
    token: &[u8],
    log: &Path,
) -> Result<(Started, mpsc::Receiver<Result<String, String>>), String> {
    // Appended: a resumed mesh keeps the logs of the servers it started before.
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|f| Ok((f.try_clone()?, f)));
    let (log_out, log_err) = opened.map_err(|e| format!("--launch ssh: {}: {e}", log.display()))?;
    let mut child = Command::new(&launch.ssh[0])
        .args(&launch.ssh[1..])
        .arg(&host.host)
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_err))
        .spawn()
        .map_err(|e| {
            format!(
                "--launch ssh: {}: cannot run {}: {e}",
                host.host, launch.ssh[0]
            )
        })?;
    let mut stdin = child.stdin.take();
    if let Some(input) = stdin.as_mut() {
        // The token's line; the pipe then stays open for as long as the server should run.
        let handed = input
            .write_all(token)
            .and_then(|()| input.write_all(b"\n"))
            .and_then(|()| input.flush());
        if let Err(e) = handed {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "--launch ssh: {}: handing over the token: {e}",
                host.host
            ));
        }
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    let started = Started {
        host: host.to_string(),
        child,
        stdin,
    };
    std::thread::Builder::new()
        .name("bytepath-launch-log".into())
        .spawn(move || watch_output(stdout, log_out, tx))
        .map_err(|e| format!("--launch ssh: {}: {e}", host.host))?;
    Ok((started, rx))
}

/// Copies the server's output to its log, sending its listening line (or, if the output ends
/// first, what it said) as soon as it is seen.
fn watch_output(
    stdout: std::process::ChildStdout,
    mut log: File,
    ready: mpsc::Sender<Result<String, String>>,
) {
    let mut said = Vec::new();
    let mut told = false;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let _ = writeln!(log, "{line}");
        if !told && line.contains("listening on") {
            let _ = ready.send(Ok(line));
            told = true;
        } else if !told {
            said.push(line);
        }
    }
    if !told {
        let why = match said.last() {
            Some(last) => format!("the server ended before it was listening: {last}"),
            None => "the server (or ssh) ended before it was listening; see its log".into(),
        };
        let _ = ready.send(Err(why));
    }
}

impl Drop for Launched {
    /// Closes every server's input (each exits by itself), then waits; one still running after
    /// `STOP_TIMEOUT` has its ssh killed.
    fn drop(&mut self) {
        for s in &mut self.servers {
            s.stdin.take();
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        for s in &mut self.servers {
            while Instant::now() < deadline && matches!(s.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(s.child.try_wait(), Ok(None)) {
                eprintln!(
                    "bytepath: launch: {}: still running after its input closed; killing ssh",
                    s.host
                );
                let _ = s.child.kill();
            }
            let _ = s.child.wait();
        }
        if !self.servers.is_empty() {
            println!("launch: stopped {} servers", self.servers.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_command_allows_exactly_the_mesh_and_reads_the_token_from_stdin() {
        let launch = Launch {
            ssh: vec!["ssh".into()],
            binary: "/opt/bytepath".into(),
        };
        let peers = ["10.0.0.1".parse().unwrap(), "fd00::2".parse().unwrap()];
        assert_eq!(
            remote_command(&launch, peers[0], 5301, &peers),
            "/opt/bytepath server --bind 10.0.0.1 --port 5301 --allow-peers 10.0.0.1,fd00::2 --token-file - --until-stdin-closes"
        );
        let host = Target {
            host: "fd00::2".into(),
            port: 7000,
        };
        assert_eq!(
            log_path(Path::new("l"), &host),
            Path::new("l/_fd00__2__7000.log")
        );
    }
}
