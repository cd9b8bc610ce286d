//! The category table checked on names taken from this machine's kallsyms and user binaries.
use super::*;

fn kernel(name: &str) -> Category {
    rule_for(name, Space::Kernel).category
}

fn user(name: &str) -> Category {
    rule_for(name, Space::User).category
}

#[test]
fn the_kallsyms_excerpt_lands_in_the_expected_categories() {
    let expected = [
        ("_copy_from_iter", C::CopyUserToKernel),
        ("_copy_to_iter", C::CopyKernelToUser),
        ("simple_copy_to_iter", C::CopyKernelToUser),
        ("skb_copy_ubufs", C::CopyUserToKernel),
        ("csum_partial", C::Checksum),
        ("ip_send_check", C::Checksum),
        ("tcp_v4_send_check", C::Checksum),
        ("tcp_sendmsg_locked", C::Protocol),
        ("__tcp_transmit_skb", C::Protocol),
        ("tcp_write_xmit", C::Protocol),
        ("unix_stream_read_generic", C::Protocol),
        ("anon_pipe_write", C::Protocol),
        ("__alloc_skb", C::SkbAlloc),
        ("kmem_cache_alloc_node_noprof", C::SkbAlloc),
        ("tcp_stream_alloc_skb", C::SkbAlloc),
        ("get_page_from_freelist", C::SkbAlloc),
        ("gup_fast_fallback", C::PageRefs),
        ("shmem_file_splice_read", C::PageRefs),
        ("splice_to_socket", C::PageRefs),
        ("page_cache_pipe_buf_release", C::PageRefs),
        ("tcp_zerocopy_receive", C::PageRefs),
        ("__pv_queued_spin_lock_slowpath", C::Locks),
        ("_raw_spin_lock_bh", C::Locks),
        ("__rcu_read_lock", C::Locks),
        ("__schedule", C::Scheduler),
        ("__wake_up_sync_key", C::Scheduler),
        ("sock_def_readable", C::Scheduler),
        ("do_syscall_64", C::Syscall),
        ("entry_SYSCALL_64_after_hwframe", C::Syscall),
        ("__x64_sys_sendto", C::Syscall),
        ("fdget", C::Syscall),
        ("net_rx_action", C::SoftirqDevice),
        ("loopback_xmit", C::SoftirqDevice),
        ("enqueue_to_backlog", C::SoftirqDevice),
        ("__netif_receive_skb_one_core", C::SoftirqDevice),
        ("io_submit_sqes", C::IoUring),
        ("__io_submit_flush_completions", C::IoUring),
        ("io_schedule", C::Scheduler),
    ];
    for (name, category) in expected {
        assert_eq!(kernel(name), category, "{name}");
    }
}

#[test]
fn compiler_suffixes_are_ignored() {
    assert_eq!(kernel("finish_task_switch.isra.0"), C::Scheduler);
    assert_eq!(kernel("tcp_schedule_loss_probe.part.0"), C::Protocol);
    assert_eq!(
        kernel("__netif_receive_skb_core.constprop.0"),
        C::SoftirqDevice
    );
}

#[test]
fn re_enable_points_are_skew_and_lock_releases_go_to_the_caller() {
    for name in [
        "_raw_spin_unlock_irqrestore",
        "_raw_spin_unlock_irq",
        "_raw_spin_unlock_bh",
        "_raw_write_unlock_irqrestore",
        "__local_bh_enable_ip",
    ] {
        assert_eq!(
            rule_for(name, Space::Kernel).role,
            R::SkewToCaller,
            "{name}"
        );
        assert_eq!(kernel(name), C::Locks, "{name}: fallback without a chain");
    }
    for (name, category) in [
        ("finish_task_switch.isra.0", C::Scheduler),
        ("handle_softirqs", C::SoftirqDevice),
        ("irqentry_exit_to_user_mode", C::SoftirqDevice),
        ("exit_to_user_mode_loop", C::Syscall),
    ] {
        let rule = rule_for(name, Space::Kernel);
        assert_eq!((rule.category, rule.role), (category, R::Skew), "{name}");
    }
    assert_eq!(rule_for("_raw_spin_unlock", Space::Kernel).role, R::Own);
}

#[test]
fn generic_helpers_go_to_their_caller() {
    for name in [
        "memcpy",
        "__pi_memcpy",
        "rep_movs_alternative",
        "__check_object_size",
        "read_tsc",
        "ktime_get",
        "__mod_timer",
        "security_socket_sendmsg",
        "srso_alias_return_thunk",
    ] {
        assert_eq!(rule_for(name, Space::Kernel).role, R::ToCaller, "{name}");
    }
}

#[test]
fn unknown_kernel_symbols_are_other_and_unknown_user_code_is_user_code() {
    assert_eq!(kernel("some_unknown_fn"), C::Other);
    assert_eq!(kernel("[kernel]"), C::Other);
    assert_eq!(user("bytepath::engine::worker::Worker::run"), C::UserCode);
    assert_eq!(
        user("hdrhistogram::Histogram<T>::record_n_inner"),
        C::UserCode
    );
}

#[test]
fn user_copies_and_syscall_stubs_are_recognised() {
    for name in [
        "__memmove_avx512_unaligned_erms",
        "__memcpy_avx_unaligned_erms",
        "memcpy",
        "<bytepath::mechanism::copy::TwoCopy as bytepath::mechanism::SendMechanism>::send",
    ] {
        assert_eq!(user(name), C::CopyInUser, "{name}");
    }
    for name in [
        "__libc_recv",
        "__send",
        "syscall",
        "read",
        "__GI___libc_write",
        "getppid",
    ] {
        assert_eq!(user(name), C::Syscall, "{name}");
    }
    assert_eq!(user("__futex_abstimed_wait_common"), C::Scheduler);
}

#[test]
fn the_same_name_means_different_code_in_each_space() {
    assert_eq!(
        kernel("memcpy"),
        C::Other,
        "kernel memcpy goes to its caller"
    );
    assert_eq!(user("memcpy"), C::CopyInUser);
    assert_eq!(kernel("read"), C::Other);
}

#[test]
fn every_category_is_reachable_from_the_table() {
    let reachable: std::collections::HashSet<Category> = KERNEL
        .iter()
        .chain(USER)
        .map(|&(_, c, _)| c)
        .chain([C::UserCode])
        .collect();
    for c in Category::ALL {
        assert!(reachable.contains(&c), "{}", c.name());
    }
}

#[test]
fn no_row_is_hidden_behind_an_earlier_one() {
    // A row whose literal text an earlier row already matches can never fire.
    for rows in [KERNEL, USER] {
        for (i, &(pattern, _, _)) in rows.iter().enumerate() {
            let literal = pattern.trim_matches('*');
            let shadow = rows[..i]
                .iter()
                .find(|&&(p, c, _)| matches(p, literal) && pattern == literal && c != rows[i].1);
            assert!(
                shadow.is_none(),
                "{pattern} is shadowed by {:?}",
                shadow.unwrap().0
            );
        }
    }
}

#[test]
fn stars_stand_only_at_the_ends_of_a_pattern() {
    for &(pattern, _, _) in KERNEL.iter().chain(USER) {
        let inner = pattern.trim_start_matches('*').trim_end_matches('*');
        assert!(
            !inner.contains('*'),
            "{pattern}: `*` only opens or closes a pattern"
        );
    }
}

#[test]
fn serde_names_are_the_record_keys() {
    for c in Category::ALL {
        assert_eq!(serde_json::to_value(c).unwrap(), c.name());
    }
}

#[test]
fn globs_match_only_at_the_ends_they_open() {
    assert!(matches("tcp_*", "tcp_ack"));
    assert!(!matches("tcp_*", "__tcp_ack"));
    assert!(matches("*_unlock_irq", "_raw_spin_unlock_irq"));
    assert!(!matches("*_unlock_irq", "_raw_spin_unlock_irqrestore"));
    assert!(matches("*memcg*", "mod_memcg_state"));
    assert!(matches("do_syscall_64", "do_syscall_64"));
    assert!(!matches("do_syscall_64", "do_syscall_640"));
}
