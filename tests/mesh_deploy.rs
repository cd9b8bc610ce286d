//! The Kubernetes manifests in deploy/kubernetes/, read as a cluster would read them (YAML,
//! several documents a file; no cluster here): every container's arguments, with the
//! `$(VAR)` references Kubernetes expands filled from the container's own env, are accepted by
//! bytepath's own argument parser and by the checks its commands make of their values; the
//! token reaches every container from the Secret as a read-only file, never as a literal; the
//! Job's --hosts-from-dns names the headless Service of the DaemonSet's pods on its port.
//! Review's rules too: every pod template meets Pod Security "restricted" field by field (the
//! host-network variant breaks host networking only), with requests and limits, a read-only
//! root and a size-limited emptyDir /tmp; probes ask `--health-port`; the NetworkPolicy
//! admits only the driver and the peers; the Dockerfile's bases are pinned by digest; and
//! kubernetes-validate checks every document against the API schemas when installed.
mod common;

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
                    // The identity way serves --remote drivers only: mesh keeps the token way.
                    assert!(
                        !peers.is_empty() || file == IDENTITY_FILE,
                        "{file}: a server without --allow-peers"
                    );
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
        (3, 1),
        "three DaemonSets (pod network, host network, identities) and one Job"
    );
}

#[test]
fn the_token_comes_from_the_secret_as_a_read_only_file() {
    for (file, doc) in workloads().into_iter().filter(|(f, _)| f != IDENTITY_FILE) {
        let pod = &doc["spec"]["template"]["spec"];
        let secret_volumes: Vec<&str> = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["secret"]["secretName"] == SECRET)
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(secret_volumes.len(), 1, "{file}");
        // Owner read only. YAML 1.2 (serde_norway) reads 0400 as a string; Kubernetes reads
        // YAML 1.1, octal 256 (the schema test below checks it as an integer). fsGroup makes
        // the root-owned file readable by the pod's group, the one group-read bytepath takes.
        let secret = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["secret"]["secretName"] == SECRET)
            .unwrap();
        assert_eq!(secret["secret"]["defaultMode"], "0400", "{file}");
        assert_eq!(pod["securityContext"]["fsGroup"], 65532, "{file}");
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

/// The host-network variant: the one workload allowed host networking (and with it the host
/// ports its container ports become), in a namespace of its own at the "privileged" level.
const HOST_NETWORK_FILE: &str = "daemonset-hostnetwork.yaml";
/// The identity way: each node's own key, read from the node (a hostPath, like an SSH host
/// key), so it too is admitted by the "privileged" namespace only.
const IDENTITY_FILE: &str = "daemonset-identity.yaml";

/// Kubernetes quantities as these manifests write them (Ki, Mi, Gi), in bytes.
fn quantity(text: &str) -> u64 {
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let scale = match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        other => panic!("quantity {text}: unit {other} not expected here"),
    };
    digits.parse::<u64>().unwrap() * scale
}

/// Every rule of Pod Security "restricted" (v1.25+, which includes "baseline") that a pod
/// template can break, checked field by field; `host_network` allowed only where said.
fn assert_restricted(file: &str, pod: &Value, host_network: bool) {
    let pod_context = &pod["securityContext"];
    if !host_network {
        assert_ne!(pod["hostNetwork"], true, "{file}: hostNetwork");
    }
    for host in ["hostPID", "hostIPC", "hostUsers"] {
        assert!(pod[host] != true, "{file}: {host}");
    }
    assert_eq!(pod["automountServiceAccountToken"], false, "{file}");
    for volume in pod["volumes"].as_array().unwrap() {
        let kinds: Vec<&String> = volume
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "name")
            .collect();
        let allowed = [
            "configMap",
            "csi",
            "downwardAPI",
            "emptyDir",
            "ephemeral",
            "persistentVolumeClaim",
            "projected",
            "secret",
        ];
        // The identity way's one exception: the node's key file, read-only.
        let node_key = file == IDENTITY_FILE && volume["hostPath"]["type"] == "File";
        assert!(
            kinds.iter().all(|k| allowed.contains(&k.as_str())) || node_key,
            "{file}: volume {volume}"
        );
    }
    let seccomp_ok = |context: &Value| {
        matches!(
            context["seccompProfile"]["type"].as_str(),
            Some("RuntimeDefault" | "Localhost")
        )
    };
    assert!(pod_context["runAsUser"] != 0, "{file}: runAsUser 0");
    let containers = pod["containers"]
        .as_array()
        .unwrap()
        .iter()
        .chain(pod["initContainers"].as_array().into_iter().flatten());
    for container in containers {
        let name = format!("{file}: container {}", container["name"]);
        let context = &container["securityContext"];
        assert!(context["privileged"] != true, "{name}: privileged");
        assert_eq!(context["allowPrivilegeEscalation"], false, "{name}");
        assert!(
            context["runAsNonRoot"] == true || pod_context["runAsNonRoot"] == true,
            "{name}: runAsNonRoot"
        );
        assert!(context["runAsUser"] != 0, "{name}: runAsUser 0");
        assert!(
            seccomp_ok(context) || (context["seccompProfile"].is_null() && seccomp_ok(pod_context)),
            "{name}: seccompProfile"
        );
        let drop = context["capabilities"]["drop"].as_array();
        assert!(
            drop.is_some_and(|d| d.iter().any(|c| c == "ALL")),
            "{name}: capabilities.drop ALL"
        );
        let added = context["capabilities"]["add"]
            .as_array()
            .into_iter()
            .flatten();
        assert!(
            added.into_iter().all(|c| c == "NET_BIND_SERVICE"),
            "{name}: capabilities.add"
        );
        for port in container["ports"].as_array().into_iter().flatten() {
            assert!(
                host_network || port["hostPort"].is_null() || port["hostPort"] == 0,
                "{name}: hostPort"
            );
        }
        // Beyond the profile, what review asked for: a read-only root, requests and limits.
        assert_eq!(context["readOnlyRootFilesystem"], true, "{name}");
        for side in ["requests", "limits"] {
            for resource in ["cpu", "memory"] {
                assert!(
                    container["resources"][side][resource].is_string(),
                    "{name}: {side}.{resource}"
                );
            }
        }
    }
}

#[test]
fn every_workload_meets_pod_security_restricted_but_the_host_network_variant_only_needs_that() {
    let mut checked = Vec::new();
    for (file, doc) in workloads() {
        let pod = &doc["spec"]["template"]["spec"];
        let host_network = pod["hostNetwork"] == true;
        assert!(
            !host_network || file == HOST_NETWORK_FILE,
            "{file}: hostNetwork"
        );
        assert_restricted(&file, pod, host_network);
        checked.push(file);
    }
    assert_eq!(checked.len(), 4, "{checked:?}");
    // The namespaces that admit them: restricted enforced, privileged only for host network.
    let docs = documents();
    let level = |name: &str| {
        docs.iter()
            .map(|(_, d)| d)
            .find(|d| d["kind"] == "Namespace" && d["metadata"]["name"] == name)
            .unwrap()["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
            .clone()
    };
    assert_eq!(level("bytepath"), "restricted");
    assert_eq!(level("bytepath-nodes"), "privileged");
}

#[test]
fn tmp_is_a_size_limited_emptydir_and_the_largest_test_file_fits_in_it() {
    for (file, doc) in workloads() {
        let pod = &doc["spec"]["template"]["spec"];
        for container in pod["containers"].as_array().unwrap() {
            let mount = container["volumeMounts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["mountPath"] == "/tmp")
                .unwrap_or_else(|| panic!("{file}: no /tmp"));
            let volume = pod["volumes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == mount["name"])
                .unwrap();
            let limit = quantity(
                volume["emptyDir"]["sizeLimit"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{file}: /tmp is not a size-limited emptyDir")),
            );
            let args = expanded_args(container);
            if let Some(at) = args.iter().position(|a| a == "--max-file-size") {
                let largest = bytepath::config::parse_bytes(&args[at + 1]).unwrap();
                assert!(
                    largest < limit,
                    "{file}: --max-file-size {largest} B does not fit /tmp's {limit} B"
                );
            } else {
                assert_ne!(
                    args[0], "server",
                    "{file}: a server with the default 4G --max-file-size"
                );
            }
        }
    }
}

#[test]
fn probes_ask_the_health_port_never_the_control_port() {
    let mut servers = 0;
    for (file, doc) in workloads() {
        let container = &doc["spec"]["template"]["spec"]["containers"][0];
        let args = expanded_args(container);
        if args[0] != "server" {
            continue;
        }
        servers += 1;
        let health = &args[args.iter().position(|a| a == "--health-port").unwrap() + 1];
        let named = container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "health")
            .unwrap();
        assert_eq!(named["containerPort"].to_string(), *health, "{file}");
        for probe in ["readinessProbe", "livenessProbe"] {
            let get = &container[probe]["httpGet"];
            assert_eq!(get["path"], "/healthz", "{file}: {probe}");
            assert_eq!(get["port"], "health", "{file}: {probe}");
        }
    }
    assert_eq!(
        servers, 3,
        "the pod network, host network and identity DaemonSets"
    );
}

#[test]
fn the_network_policy_admits_only_the_driver_and_the_peers_to_the_servers() {
    let docs = documents();
    let labels_of = |kind: &str, name: &str| {
        docs.iter()
            .map(|(_, d)| d)
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap()["spec"]["template"]["metadata"]["labels"]
            .clone()
    };
    let (server, driver) = (
        labels_of("DaemonSet", "bytepath-server"),
        labels_of("Job", "bytepath-mesh"),
    );
    let policy = docs
        .iter()
        .map(|(_, d)| d)
        .find(|d| d["kind"] == "NetworkPolicy" && d["spec"]["podSelector"]["matchLabels"] == server)
        .expect("a policy for the servers");
    assert!(policy["spec"]["policyTypes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "Ingress"));
    let rules = policy["spec"]["ingress"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    let mut from: Vec<Value> = rules[0]["from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(
                f.as_object().unwrap().len(),
                1,
                "a podSelector alone (this namespace): {f}"
            );
            f["podSelector"]["matchLabels"].clone()
        })
        .collect();
    from.sort_by_key(|v| v.to_string());
    let mut expected = vec![driver.clone(), server];
    expected.sort_by_key(|v| v.to_string());
    assert_eq!(from, expected);
    // The driver itself admits nothing.
    let own = docs
        .iter()
        .map(|(_, d)| d)
        .find(|d| d["kind"] == "NetworkPolicy" && d["spec"]["podSelector"]["matchLabels"] == driver)
        .expect("a policy for the driver");
    assert!(own["spec"]["ingress"]
        .as_array()
        .is_none_or(|r| r.is_empty()));
}

#[test]
fn the_dockerfile_pins_every_base_image_by_a_digest_the_build_must_be_given() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Dockerfile")).unwrap();
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    for from in froms {
        let image = from.split_whitespace().nth(1).unwrap();
        let (_, digest) = image
            .split_once("@")
            .unwrap_or_else(|| panic!("not by digest: {from}"));
        let arg = digest
            .strip_prefix("${")
            .and_then(|d| d.strip_suffix('}'))
            .unwrap_or_else(|| panic!("{from}"));
        // Declared without a default: no digest is made up here, and none is silently skipped.
        assert!(
            text.lines().any(|l| l.trim() == format!("ARG {arg}")),
            "ARG {arg} with no default"
        );
    }
}

/// kubernetes-validate (PyPI, installed by .ci/run) checks every document against the API's
/// schemas offline, rejecting unknown fields; skipped with the reason when it is missing.
#[test]
fn the_manifests_validate_against_the_kubernetes_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let run = std::process::Command::new("kubernetes-validate")
        .args(["--strict", "--no-warn"])
        .args(&files)
        .output();
    let Ok(out) = run else {
        common::skip("kubernetes-validate is not installed (pip install kubernetes-validate)");
        return;
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let passed = text
        .lines()
        .filter(|l| l.contains(" passed for resource "))
        .count();
    assert_eq!(passed, documents().len(), "{text}");
}
