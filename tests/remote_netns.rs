//! A udp join spoofed from another network namespace's address: a hello that carries the
//! session's cookie and a valid flow index, sent from an address other than the control
//! connection's peer (here a namespace joined to this one by a veth pair, as a host on the path
//! that learned the cookie would be), is never echoed and never joins, and the legitimate
//! client then joins as usual. Needs root, ip and python3; skipped with the reason otherwise.
mod common;
mod mesh_common;
use bytepath::remote::channel::{self, ControlStream};
use bytepath::remote::protocol::{self, Message, RunRequest};
use common::Server;
use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
/// This namespace's end of the veth pair, and the other namespace's.
const HERE: &str = "10.79.0.1";
const THERE: &str = "10.79.0.2";

/// A namespace joined to this one by a veth pair, removed (with the pair) when dropped.
struct Neighbour {
    ns: String,
}

impl Neighbour {
    fn new() -> Neighbour {
        let ns = format!("bpu{}", std::process::id());
        let here = format!("{ns}a");
        mesh_common::ip(&["netns", "add", &ns]);
        let neighbour = Neighbour { ns: ns.clone() };
        mesh_common::ip(&[
            "link", "add", &here, "type", "veth", "peer", "name", "v0", "netns", &ns,
        ]);
        mesh_common::ip(&["addr", "add", &format!("{HERE}/24"), "dev", &here]);
        mesh_common::ip(&["link", "set", &here, "up"]);
        mesh_common::ip(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{THERE}/24"),
            "dev",
            "v0",
        ]);
        mesh_common::ip(&["-n", &ns, "link", "set", "v0", "up"]);
        mesh_common::ip(&["-n", &ns, "link", "set", "lo", "up"]);
        neighbour
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        // Removing the namespace removes the pair (its end here included).
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
    }
}

fn skip_reason() -> Option<&'static str> {
    mesh_common::cannot_create().or_else(|| {
        (!common::has_command("python3"))
            .then_some("python3 is missing (it sends from the namespace)")
    })
}

/// Hello and handshake keyed by `TOKEN`, then a udp rr run request; returns the control
/// connection, the cookie and the flows' ports.
fn udp_session(server: &Server) -> (ControlStream, Vec<u8>, Vec<u16>) {
    let (mut s, hello, answer) = common::send_hello(&server.address());
    let prologue = channel::prologue(&hello, &answer);
    s.client_handshake(TOKEN.as_bytes(), &prologue).unwrap();
    let system = protocol::read_message(&mut s).unwrap();
    assert_eq!(system.kind(), "system");
    let request = RunRequest::plain(("udp", "send", "rr"), 1024, 200);
    protocol::write_message(&mut s, &Message::Run { request }).unwrap();
    match protocol::read_message(&mut s).unwrap() {
        Message::Accepted {
            cookie, udp_ports, ..
        } => (s, protocol::from_hex(&cookie).unwrap(), udp_ports),
        other => panic!("got {}", other.kind()),
    }
}

#[test]
fn a_udp_join_from_another_namespaces_address_is_never_echoed_nor_joined() {
    if let Some(why) = skip_reason() {
        common::skip(why);
        return;
    }
    let neighbour = Neighbour::new();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    common::write_token(&token, TOKEN);
    let log = dir.path().join("server.log");
    let token = token.to_str().unwrap();
    let server = Server::start_logged("5s", &["--bind", "0.0.0.0", "--token-file", token], &log);
    let (mut control, cookie, ports) = udp_session(&server);
    // The valid hello, from the other namespace, 20 times over 1 s: no echo may come back.
    let tag = bytepath::remote::data_tag(&cookie, 0);
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.05)\n\
         echoed = 0\n\
         for _ in range(20):\n    \
             s.sendto(bytes.fromhex('{hex}'), ('{HERE}', {port}))\n    \
             try: s.recv(64); echoed += 1\n    \
             except OSError: pass\n\
         print(echoed)",
        port = ports[0]
    );
    let out = Command::new("ip")
        .args(["netns", "exec", &neighbour.ns, "python3", "-c", &script])
        .output()
        .unwrap();
    let echoed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        echoed.trim(),
        "0",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The control peer then joins as always, and the run goes on to `Ready`.
    let server_addr: SocketAddr = server.address().parse().unwrap();
    let joined =
        bytepath::remote::udp::join_at_client(server_addr, &ports, &cookie, Duration::from_secs(5))
            .unwrap();
    assert_eq!(joined.len(), 1);
    protocol::write_message(&mut control, &Message::Joined).unwrap();
    let ready = protocol::read_message(&mut control).unwrap();
    assert_eq!(ready.kind(), "ready");
    drop(control);
    std::thread::sleep(Duration::from_millis(300));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains(&format!("dropped a stray udp datagram from {THERE}:")),
        "{logged}"
    );
}
