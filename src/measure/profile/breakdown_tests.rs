//! Charging rules on synthetic chains, and the whole table on chains recorded on this machine
//! (`perf record -e cpu-clock -g` of `bytepath run … --duration 2s`, folded to
//! "count, side, space, leaf;callers" with the chains cut at 4 frames and counts below 5 left
//! out; see fixtures/chains/README).
use super::*;

fn sample(space: Space, frames: &[&str]) -> NamedSample {
    NamedSample {
        space,
        frames: frames.iter().map(|f| Arc::from(*f)).collect(),
    }
}

fn charge(frames: &[&str]) -> Charge {
    Charger::default()
        .charge(&sample(Space::Kernel, frames))
        .unwrap()
}

#[test]
fn an_irqrestore_sample_is_recharged_to_its_caller() {
    let c = charge(&[
        "_raw_spin_unlock_irqrestore",
        "tcp_write_xmit",
        "__tcp_push_pending_frames",
    ]);
    assert_eq!(c.category, Category::Protocol);
    assert_eq!(c.symbol.as_ref(), "tcp_write_xmit");
    assert!(c.skew && c.recharged && !c.caller_charged);
}

#[test]
fn recharging_skips_helpers_and_nested_releases_on_the_way_up() {
    let c = charge(&[
        "_raw_spin_unlock_irqrestore",
        "__mod_timer",
        "_raw_spin_unlock_bh",
        "sk_reset_timer",
        "tcp_rcv_established",
    ]);
    assert_eq!(c.category, Category::Protocol);
    assert_eq!(c.symbol.as_ref(), "sk_reset_timer");
}

#[test]
fn a_skew_point_with_its_own_category_stays_put() {
    let c = charge(&[
        "handle_softirqs",
        "do_softirq.part.0",
        "__local_bh_enable_ip",
    ]);
    assert_eq!(c.category, Category::SoftirqDevice);
    assert!(c.skew && !c.recharged);
    let c = charge(&[
        "_raw_spin_unlock_irqrestore",
        "handle_softirqs",
        "do_softirq.part.0",
    ]);
    assert_eq!(
        c.category,
        Category::SoftirqDevice,
        "recharged to the softirq loop"
    );
    assert!(c.recharged);
}

#[test]
fn without_a_chain_a_release_stays_a_lock() {
    let c = charge(&["_raw_spin_unlock_irqrestore"]);
    assert_eq!(c.category, Category::Locks);
    assert!(c.skew && !c.recharged);
}

#[test]
fn an_unknown_caller_takes_the_sample_and_shows_in_other() {
    let c = charge(&[
        "_raw_spin_unlock_irqrestore",
        "some_unknown_fn",
        "tcp_write_xmit",
    ]);
    assert_eq!(c.category, Category::Other);
    assert_eq!(c.symbol.as_ref(), "some_unknown_fn");
}

#[test]
fn a_kernel_memcpy_is_charged_by_who_called_it() {
    let c = charge(&["memcpy", "skb_copy_ubufs", "ip_local_deliver_finish"]);
    assert_eq!(c.category, Category::CopyUserToKernel);
    assert!(c.caller_charged && !c.skew);
    let c = charge(&[
        "__check_object_size",
        "simple_copy_to_iter",
        "__skb_datagram_iter",
    ]);
    assert_eq!(c.category, Category::CopyKernelToUser);
}

#[test]
fn the_walk_stops_after_charge_depth_frames() {
    let mut frames = vec!["_raw_spin_unlock_irqrestore"];
    frames.extend(std::iter::repeat_n("__mod_timer", CHARGE_DEPTH));
    frames.push("tcp_write_xmit");
    let c = charge(&frames);
    assert_eq!(c.category, Category::Locks);
    assert!(!c.recharged);
}

#[test]
fn a_tally_counts_skew_recharges_and_the_top_unknowns() {
    let mut t = Tally::default();
    t.add(
        &sample(
            Space::Kernel,
            &["_raw_spin_unlock_irqrestore", "tcp_write_xmit"],
        ),
        3,
    );
    t.add(
        &sample(Space::Kernel, &["finish_task_switch.isra.0", "__schedule"]),
        2,
    );
    t.add(&sample(Space::Kernel, &["mystery_a"]), 4);
    t.add(&sample(Space::Kernel, &["mystery_b"]), 1);
    t.add(
        &sample(Space::User, &["__memmove_avx512_unaligned_erms"]),
        10,
    );
    let b = t.into_block(BlockMeta::default());
    assert_eq!(b.samples, 20);
    assert_eq!(b.user_samples, 10);
    assert_eq!(b.skew.irq_reenable_samples, 5);
    assert_eq!(b.skew.recharged_samples, 3);
    assert!((b.skew.irq_reenable_share - 0.25).abs() < 1e-12);
    assert_eq!(b.category(Category::Protocol).samples, 3);
    assert_eq!(b.category(Category::CopyInUser).samples, 10);
    let top: Vec<(&str, u64)> = b
        .top_other
        .iter()
        .map(|s| (s.symbol.as_str(), s.samples))
        .collect();
    assert_eq!(top, [("mystery_a", 4), ("mystery_b", 1)]);
    let sum: f64 = b.categories.iter().map(|c| c.share).sum();
    assert!((sum - 1.0).abs() < 1e-9);
}

#[test]
fn a_kallsyms_excerpt_symbolizes_and_charges_end_to_end() {
    use super::super::kallsyms;
    use super::super::sampler::RawSample;
    use super::super::symbolize::Symbolizer;
    let table = kallsyms::parse(include_str!("fixtures/kallsyms.txt")).unwrap();
    let mut symbolizer = Symbolizer::with_kernel(table);
    let at = |ip: u64, callers: &[u64]| RawSample {
        tid: 1,
        space: Space::Kernel,
        ip,
        callers: callers.iter().map(|r| r + 1).collect(),
    };
    let raw = [
        at(0xffffffff81b6c570, &[]),                   // _copy_from_iter
        at(0xffffffff821f64a8, &[0xffffffff81e42e00]), // memcpy <- skb_copy_ubufs
        at(0xffffffff813a4390, &[]),                   // finish_task_switch.isra.0
    ];
    let named = symbolizer.name_samples(std::process::id(), &raw).unwrap();
    let mut charger = Charger::default();
    let got: Vec<Category> = named
        .iter()
        .map(|s| charger.charge(s).unwrap().category)
        .collect();
    assert_eq!(
        got,
        [
            Category::CopyUserToKernel,
            Category::CopyUserToKernel,
            Category::Scheduler
        ]
    );
}

/// Per side tallies of a folded chain file.
fn tally_chains(text: &str) -> HashMap<String, Tally> {
    let mut sides: HashMap<String, Tally> = HashMap::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut f = line.splitn(4, '\t');
        let count: u64 = f.next().unwrap().parse().unwrap();
        let side = f.next().unwrap().to_string();
        let space = if f.next().unwrap() == "k" {
            Space::Kernel
        } else {
            Space::User
        };
        let frames: Vec<&str> = f.next().unwrap().split(';').collect();
        sides
            .entry(side)
            .or_default()
            .add(&sample(space, &frames), count);
    }
    sides
}

const RECORDED: &[(&str, &str)] = &[
    ("copy 64K", include_str!("fixtures/chains/copy64k.txt")),
    (
        "sendfile 64K",
        include_str!("fixtures/chains/sendfile64k.txt"),
    ),
    (
        "zerocopy 64K",
        include_str!("fixtures/chains/zerocopy64k.txt"),
    ),
    ("splice 64K", include_str!("fixtures/chains/splice64k.txt")),
    (
        "uring-zc 64K",
        include_str!("fixtures/chains/uringzc64k.txt"),
    ),
    ("zc-recv 64K", include_str!("fixtures/chains/zcrecv64k.txt")),
    ("copy 256", include_str!("fixtures/chains/copy256.txt")),
    ("pipe 64K", include_str!("fixtures/chains/pipe64k.txt")),
    ("shm 64K", include_str!("fixtures/chains/shm64k.txt")),
    ("udp 4K", include_str!("fixtures/chains/udp4k.txt")),
];

#[test]
fn recorded_chains_leave_little_in_other() {
    for (name, text) in RECORDED {
        for (side, t) in tally_chains(text) {
            let other = t.share(Category::Other);
            assert!(
                other < 0.03,
                "{name} {side}: other {:.1} %: {:?}",
                100.0 * other,
                top(&t)
            );
        }
    }
}

fn top(t: &Tally) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = t.other.iter().map(|(s, n)| (s.to_string(), *n)).collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v.truncate(8);
    v
}

#[test]
fn recorded_copy_paths_show_the_copies_they_make() {
    let side = |name: &str, side: &str| {
        let text = RECORDED.iter().find(|(n, _)| *n == name).unwrap().1;
        tally_chains(text).remove(side).unwrap()
    };
    let copy = side("copy 64K", "sender");
    let sendfile = side("sendfile 64K", "sender");
    assert!(copy.share(Category::CopyUserToKernel) > 0.10);
    assert!(sendfile.share(Category::CopyUserToKernel) < 0.01);
    assert!(sendfile.share(Category::PageRefs) > copy.share(Category::PageRefs));
    assert!(
        copy.share(Category::CopyInUser) > 0.02,
        "serialization memmove"
    );
    let zerocopy = side("zerocopy 64K", "sender");
    assert!(
        zerocopy.share(Category::CopyUserToKernel) > 0.05,
        "loopback copies zero-copy pages after all (skb_copy_ubufs)"
    );
    for (name, _) in RECORDED
        .iter()
        .filter(|(n, _)| n.contains("64K") && !n.starts_with("shm"))
    {
        let receiver = side(name, "receiver");
        let copies = receiver.share(Category::CopyKernelToUser);
        assert!(copies > 0.0, "{name} receiver copies to user");
    }
}

/// Prints every recorded breakdown (`cargo test recorded_breakdowns -- --nocapture`).
#[test]
fn recorded_breakdowns() {
    for (name, text) in RECORDED {
        let mut sides: Vec<_> = tally_chains(text).into_iter().collect();
        sides.sort_by(|a, b| b.0.cmp(&a.0));
        for (side, t) in sides {
            let parts: Vec<String> = Category::ALL
                .iter()
                .filter(|&&c| t.share(c) >= 0.005)
                .map(|&c| format!("{} {:.1}", c.name(), 100.0 * t.share(c)))
                .collect();
            println!(
                "{name:>13} {side:>8} n={:>5} skew {:.1} recharged {}: {}",
                t.samples,
                100.0 * t.skew_samples as f64 / t.samples as f64,
                t.recharged,
                parts.join(", ")
            );
        }
    }
}
