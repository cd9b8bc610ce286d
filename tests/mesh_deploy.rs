//! The Kubernetes manifests in deploy/kubernetes/, read as a cluster would read them (YAML,
//! several documents a file; no cluster here): every container's arguments, with the
//! `$(VAR)` references Kubernetes expands filled from the container's own env, are accepted by
//! bytepath's own argument parser and by the checks its commands make of their values; the
//! token reaches every container from the Secret as a read-only file, never as a literal; the
//! Job's --hosts-from-dns names the headless Service of the DaemonSet's pods on its port.
use bytepath::cli::{Cli, Command};
use clap::Parser;
use serde_json::Value;
use std::path::Path;

const SECRET: &str = "bytepath-token";

/// Every document of every manifest, as JSON values.
fn documents() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        for doc in serde_norway::Deserializer::from_str(&text) {
            let value: serde_norway::Value = serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let json = serde_json::to_value(value).unwrap();
            out.push((path.file_name().unwrap().to_string_lossy().into(), json));
        }
    }
    out
}

/// A container's arguments with `$(NAME)` filled from its env (a fieldRef gets an example
/// address, as the kubelet would give one).
fn expanded_args(container: &Value) -> Vec<String> {
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let value = match e["value"].as_str() {
                Some(v) => v.to_string(),
                None => {
                    assert!(e["valueFrom"]["fieldRef"].is_object(), "{e}");
                    "10.244.1.7".to_string()
                }
            };
            (e["name"].as_str().unwrap().to_string(), value)
        })
        .collect();
    container["args"]
        .as_array()
        .unwrap_or_else(|| panic!("no args: {container}"))
        .iter()
        .map(|a| {
            let mut arg = a
                .as_str()
                .unwrap_or_else(|| panic!("not text: {a}"))
                .to_string();
            for (name, value) in &env {
                arg = arg.replace(&format!("$({name})"), value);
            }
            assert!(!arg.contains("$("), "an unexpanded reference: {arg}");
            arg
        })
        .collect()
}

fn workloads() -> Vec<(String, Value)> {
    documents()
        .into_iter()
        .filter(|(_, d)| matches!(d["kind"].as_str(), Some("DaemonSet" | "Job")))
        .collect()
}

#[test]
fn every_container_command_line_is_one_bytepath_accepts() {
    let mut seen = (0, 0);
    for (file, doc) in workloads() {
        for container in doc["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
        {
            let args = expanded_args(container);
            let cli = Cli::try_parse_from(std::iter::once("bytepath".to_string()).chain(args))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            match cli.command {
                Command::Server(server) => {
                    seen.0 += 1;
                    assert!(server.bind.parse::<std::net::IpAddr>().is_ok(), "{file}");
                    let peers =
                        bytepath::remote::allow::AllowPeers::parse(server.allow_peers.as_deref())
                            .unwrap_or_else(|e| panic!("{file}: {e}"));
                    assert!(!peers.is_empty(), "{file}: a server without --allow-peers");
                    let port: u16 = server.port.parse().unwrap();
                    let declared = container["ports"][0]["containerPort"].as_u64();
                    assert_eq!(declared, Some(port as u64), "{file}");
                }
                Command::Mesh(mesh) => {
                    seen.1 += 1;
                    assert!(mesh.hosts_from_dns.is_some(), "{file}");
                    assert!(
                        mesh.folder.resume && mesh.folder.folder.out.is_some(),
                        "{file}: a rerun must resume"
                    );
                }
                other => panic!("{file}: runs {other:?}"),
            }
        }
    }
    assert_eq!(
        seen,
        (2, 1),
        "two DaemonSets (pod network, host network) and one Job"
    );
}

#[test]
fn the_token_comes_from_the_secret_as_a_read_only_file() {
    for (file, doc) in workloads() {
        let pod = &doc["spec"]["template"]["spec"];
        let secret_volumes: Vec<&str> = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["secret"]["secretName"] == SECRET)
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(secret_volumes.len(), 1, "{file}");
        for container in pod["containers"].as_array().unwrap() {
            let args = expanded_args(container);
            let at = args
                .iter()
                .position(|a| a == "--token-file")
                .expect("a token file");
            let path = &args[at + 1];
            let mount = container["volumeMounts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| path.starts_with(m["mountPath"].as_str().unwrap()))
                .unwrap_or_else(|| panic!("{file}: {path} is on no volume"));
            assert_eq!(mount["name"].as_str(), Some(secret_volumes[0]), "{file}");
            assert_eq!(mount["readOnly"], true, "{file}");
            assert!(
                !container.to_string().contains("token="),
                "{file}: a literal token"
            );
        }
    }
}

#[test]
fn the_job_measures_the_headless_service_of_the_daemonset_and_a_host_network_variant_exists() {
    let docs = documents();
    let find = |kind: &str, name: &str| {
        docs.iter()
            .map(|(_, d)| d)
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    let job = find("Job", "bytepath-mesh");
    let args = expanded_args(&job["spec"]["template"]["spec"]["containers"][0]);
    let at = args.iter().position(|a| a == "--hosts-from-dns").unwrap();
    let (service_name, port) = args[at + 1].split_once(':').unwrap();
    let service = find("Service", service_name);
    assert_eq!(
        service["spec"]["clusterIP"], "None",
        "headless: one address per pod"
    );
    assert_eq!(
        service["spec"]["ports"][0]["port"].as_u64(),
        port.parse().ok()
    );
    let daemonset = find("DaemonSet", "bytepath-server");
    assert_eq!(
        service["spec"]["selector"],
        daemonset["spec"]["template"]["metadata"]["labels"]
    );
    let results = &job["spec"]["template"]["spec"]["volumes"];
    assert!(results
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["persistentVolumeClaim"]["claimName"] == "bytepath-results"));
    let nodes = find("DaemonSet", "bytepath-server-nodes");
    assert_eq!(nodes["spec"]["template"]["spec"]["hostNetwork"], true);
    let node_service = find("Service", "bytepath-mesh-nodes");
    assert_eq!(
        node_service["spec"]["selector"],
        nodes["spec"]["template"]["metadata"]["labels"]
    );
}
