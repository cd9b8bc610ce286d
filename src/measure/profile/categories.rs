//! The one table that maps sampled function names to where the CPU went, after the method of
//! the terabit-network-stack-profiling artifact (Cai et al., SIGCOMM '21: kernel symbols into
//! data copy, TCP/IP, netdev, skb, memory, locks, scheduling). Patterns were read off
//! `perf record -e cpu-clock -g` of bytepath's mechanisms on Linux 6.18 (see the fixtures).
//! First matching row wins, so specific rows come before the prefixes that would swallow them.

/// Where a sample's CPU time went. The names are the record and CSV keys: never rename one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    CopyUserToKernel,
    CopyKernelToUser,
    CopyInUser,
    Checksum,
    Protocol,
    SkbAlloc,
    PageRefs,
    Locks,
    Scheduler,
    Syscall,
    SoftirqDevice,
    IoUring,
    /// User-space instructions outside the copy routines and system-call stubs (application
    /// logic, spinning on a shared ring, timestamps); added because `--transport shm` spends
    /// most samples there and they would otherwise bury the unknown kernel symbols in `other`.
    UserCode,
    Other,
}

impl Category {
    pub const ALL: [Category; 14] = [
        Category::CopyUserToKernel,
        Category::CopyKernelToUser,
        Category::CopyInUser,
        Category::Checksum,
        Category::Protocol,
        Category::SkbAlloc,
        Category::PageRefs,
        Category::Locks,
        Category::Scheduler,
        Category::Syscall,
        Category::SoftirqDevice,
        Category::IoUring,
        Category::UserCode,
        Category::Other,
    ];

    /// The record and CSV key.
    pub fn name(self) -> &'static str {
        match self {
            Category::CopyUserToKernel => "copy_user_to_kernel",
            Category::CopyKernelToUser => "copy_kernel_to_user",
            Category::CopyInUser => "copy_in_user",
            Category::Checksum => "checksum",
            Category::Protocol => "protocol",
            Category::SkbAlloc => "skb_alloc",
            Category::PageRefs => "page_refs",
            Category::Locks => "locks",
            Category::Scheduler => "scheduler",
            Category::Syscall => "syscall",
            Category::SoftirqDevice => "softirq_device",
            Category::IoUring => "io_uring",
            Category::UserCode => "user_code",
            Category::Other => "other",
        }
    }

    /// The categories that move payload bytes: what "copies' worth per byte" adds up.
    pub fn is_copy(self) -> bool {
        matches!(
            self,
            Category::CopyUserToKernel | Category::CopyKernelToUser | Category::CopyInUser
        )
    }
}

/// Which address space a symbol lives in: the same name means different code in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    Kernel,
    User,
}

/// How a matched sample is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The function's own work.
    Own,
    /// A point where interrupts are re-enabled and which keeps its own category (the context
    /// switch, the softirq loop, the interrupt exit): counted in the skew, not moved.
    Skew,
    /// An interrupt or bottom-half re-enable inside a lock release: timer samples that fell
    /// due while interrupts were off land here, so the sample goes to the first categorised
    /// caller in the call chain (counted as recharged); the category is the fallback.
    SkewToCaller,
    /// A generic helper (memcpy, usercopy checks, clocks, timers, LSM hooks) whose work belongs
    /// to whoever called it; the category is the fallback when the chain names no caller.
    ToCaller,
}

/// What the table says about one function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub category: Category,
    pub role: Role,
}

use Category as C;
use Role as R;

/// Kernel rows: (pattern, category, role). `*` may open and/or close a pattern.
#[rustfmt::skip]
const KERNEL: &[(&str, Category, Role)] = &[
    // irq and bottom-half re-enable points (timer sampling skew)
    ("*_unlock_irqrestore", C::Locks, R::SkewToCaller),
    ("*_unlock_irq", C::Locks, R::SkewToCaller),
    ("*_unlock_bh", C::Locks, R::SkewToCaller),
    ("__local_bh_enable_ip", C::Locks, R::SkewToCaller),
    ("local_bh_enable*", C::Locks, R::SkewToCaller),
    ("pv_native_irq_enable", C::Other, R::SkewToCaller),
    ("finish_task_switch", C::Scheduler, R::Skew),
    ("handle_softirqs", C::SoftirqDevice, R::Skew),
    ("__do_softirq", C::SoftirqDevice, R::Skew),
    ("irqentry_exit*", C::SoftirqDevice, R::Skew),
    ("exit_to_user_mode*", C::Syscall, R::Skew),
    // generic helpers charged to their caller
    ("memcpy*", C::Other, R::ToCaller), ("__memcpy*", C::Other, R::ToCaller),
    ("__pi_memcpy*", C::Other, R::ToCaller), ("memmove*", C::Other, R::ToCaller),
    ("__memmove*", C::Other, R::ToCaller), ("__pi_memmove*", C::Other, R::ToCaller),
    ("rep_movs_alternative", C::Other, R::ToCaller), ("copy_user_generic*", C::Other, R::ToCaller),
    ("__check_object_size", C::Other, R::ToCaller), ("check_object_size", C::Other, R::ToCaller),
    ("__virt_addr_valid", C::Other, R::ToCaller), ("check_stack_object", C::Other, R::ToCaller),
    ("is_vmalloc_addr", C::Other, R::ToCaller), ("*check_heap_object", C::Other, R::ToCaller),
    ("read_tsc", C::Other, R::ToCaller), ("ktime_get*", C::Other, R::ToCaller),
    ("native_sched_clock", C::Other, R::ToCaller), ("kvm_clock_*", C::Other, R::ToCaller),
    ("pvclock_*", C::Other, R::ToCaller),
    ("__mod_timer", C::Other, R::ToCaller), ("mod_timer*", C::Other, R::ToCaller),
    ("*hrtimer_start*", C::Other, R::ToCaller), ("hrtimer_try_to_cancel", C::Other, R::ToCaller),
    ("hrtimer_cancel", C::Other, R::ToCaller), ("*internal_add_timer", C::Other, R::ToCaller),
    ("enqueue_hrtimer", C::Other, R::ToCaller), ("__remove_hrtimer", C::Other, R::ToCaller),
    ("timerqueue_*", C::Other, R::ToCaller), ("detach_if_pending", C::Other, R::ToCaller),
    ("lock_timer_base", C::Locks, R::Own),
    ("security_*", C::Syscall, R::ToCaller), ("bpf_lsm_*", C::Syscall, R::ToCaller),
    ("apparmor_*", C::Syscall, R::ToCaller), ("selinux_*", C::Syscall, R::ToCaller),
    ("__bpf_prog_*", C::Other, R::ToCaller), ("bpf_*", C::Other, R::ToCaller),
    ("copy_from_kernel_nofault*", C::Other, R::ToCaller),
    ("srso_*", C::Other, R::ToCaller), ("__x86_return_thunk", C::Other, R::ToCaller),
    ("__x86_indirect_thunk*", C::Other, R::ToCaller), ("entry_untrain_ret", C::Other, R::ToCaller),
    ("_find_next*", C::Other, R::ToCaller), ("_find_first*", C::Other, R::ToCaller),
    ("__list_del_entry_valid*", C::Other, R::ToCaller), ("__list_add_valid*", C::Other, R::ToCaller),
    ("llist_*", C::Other, R::ToCaller), ("plist_*", C::Other, R::ToCaller),
    ("xa_load", C::Other, R::ToCaller), ("minmax_*", C::Other, R::ToCaller),
    ("*_to_jiffies*", C::Other, R::ToCaller), ("jiffies_*", C::Other, R::ToCaller),
    ("timer_*", C::Other, R::ToCaller), ("add_timer*", C::Other, R::ToCaller),
    ("hrtimer_active", C::Other, R::ToCaller), ("*hrtimer_setup*", C::Other, R::ToCaller),
    ("capable", C::Syscall, R::ToCaller), ("ns_capable*", C::Syscall, R::ToCaller),
    ("make_vfs*", C::Syscall, R::ToCaller), ("task_work_add", C::Syscall, R::ToCaller),
    ("*send_IPI*", C::Scheduler, R::ToCaller), ("smp_call_function*", C::Other, R::ToCaller),
    ("on_each_cpu*", C::Other, R::ToCaller),
    ("skb_copy_bits", C::Other, R::ToCaller), ("skb_headers_offset_update", C::SkbAlloc, R::ToCaller),
    ("put_pid", C::Other, R::ToCaller),
    ("rb_next", C::Other, R::ToCaller), ("rb_first", C::Other, R::ToCaller),
    ("rb_insert*", C::Other, R::ToCaller), ("rb_erase*", C::Other, R::ToCaller),
    ("memcmp", C::Other, R::ToCaller), ("memset*", C::Other, R::ToCaller),
    ("__memset*", C::Other, R::ToCaller), ("native_write_msr*", C::Other, R::ToCaller),
    ("task_work_run", C::Syscall, R::ToCaller),
    // data copies between user and kernel
    ("_copy_from_iter*", C::CopyUserToKernel, R::Own), ("copy_from_iter*", C::CopyUserToKernel, R::Own),
    ("copy_page_from_iter*", C::CopyUserToKernel, R::Own), ("_copy_from_user", C::CopyUserToKernel, R::Own),
    ("__copy_from_user*", C::CopyUserToKernel, R::Own), ("copy_from_user*", C::CopyUserToKernel, R::Own),
    ("__copy_user_nocache", C::CopyUserToKernel, R::Own), ("skb_do_copy_data_nocache", C::CopyUserToKernel, R::Own),
    ("skb_copy_to_page_nocache", C::CopyUserToKernel, R::Own), ("skb_copy_datagram_from_iter", C::CopyUserToKernel, R::Own),
    ("csum_and_copy_from_iter*", C::CopyUserToKernel, R::Own), ("ip_generic_getfrag", C::CopyUserToKernel, R::Own),
    // zero-copy pages copied after all when delivered to a local socket (msg_zerocopy.rst)
    ("skb_copy_ubufs", C::CopyUserToKernel, R::Own),
    ("_copy_to_iter*", C::CopyKernelToUser, R::Own), ("copy_to_iter*", C::CopyKernelToUser, R::Own),
    ("copy_page_to_iter*", C::CopyKernelToUser, R::Own), ("_copy_to_user", C::CopyKernelToUser, R::Own),
    ("__copy_to_user*", C::CopyKernelToUser, R::Own), ("copy_to_user*", C::CopyKernelToUser, R::Own),
    ("simple_copy_to_iter", C::CopyKernelToUser, R::Own), ("skb_copy_datagram_iter", C::CopyKernelToUser, R::Own),
    ("__skb_datagram_iter", C::CopyKernelToUser, R::Own), ("csum_and_copy_to_iter*", C::CopyKernelToUser, R::Own),
    // checksums
    ("csum_*", C::Checksum, R::Own), ("__csum_*", C::Checksum, R::Own),
    ("ip_fast_csum", C::Checksum, R::Own), ("ip_send_check", C::Checksum, R::Own),
    ("*_send_check", C::Checksum, R::Own), ("udp4_hwcsum", C::Checksum, R::Own),
    ("udp_csum*", C::Checksum, R::Own), ("*skb_checksum*", C::Checksum, R::Own),
    ("skb_csum_*", C::Checksum, R::Own), ("*checksum_complete*", C::Checksum, R::Own),
    ("inet_proto_csum_*", C::Checksum, R::Own), ("nf_ip_checksum", C::Checksum, R::Own),
    // io_uring (before the scheduler's io_schedule and the syscall prefixes)
    ("io_schedule*", C::Scheduler, R::Own),
    ("io_*", C::IoUring, R::Own), ("__io_*", C::IoUring, R::Own), ("tctx_*", C::IoUring, R::Own),
    ("*_sys_io_uring_*", C::IoUring, R::Own), ("ctx_flush_and_put", C::IoUring, R::Own),
    // page pinning and references: zero copy, splice, sendfile, zc-recv mappings, faults
    ("tcp_zerocopy_*", C::PageRefs, R::Own), ("gup_*", C::PageRefs, R::Own),
    ("*get_user_pages*", C::PageRefs, R::Own), ("*pin_user_page*", C::PageRefs, R::Own),
    ("iov_iter_extract_*", C::PageRefs, R::Own), ("*iov_iter_get_pages*", C::PageRefs, R::Own),
    ("get_netmem", C::PageRefs, R::Own), ("put_netmem", C::PageRefs, R::Own),
    ("put_page*", C::PageRefs, R::Own), ("__put_page", C::PageRefs, R::Own),
    ("folio_put*", C::PageRefs, R::Own), ("__folio_put*", C::PageRefs, R::Own),
    ("folios_put*", C::PageRefs, R::Own), ("release_pages", C::PageRefs, R::Own),
    ("*_pipe_buf_*", C::PageRefs, R::Own), ("skb_append_pagefrags", C::PageRefs, R::Own),
    ("skb_splice_from_iter", C::PageRefs, R::Own), ("splice_*", C::PageRefs, R::Own),
    ("*do_splice*", C::PageRefs, R::Own), ("direct_splice_actor", C::PageRefs, R::Own),
    ("iter_file_splice_write", C::PageRefs, R::Own), ("*vmsplice*", C::PageRefs, R::Own),
    ("*_sys_splice", C::PageRefs, R::Own), ("*sendfile*", C::PageRefs, R::Own),
    ("filemap_*", C::PageRefs, R::Own), ("__filemap_*", C::PageRefs, R::Own),
    ("shmem_*", C::PageRefs, R::Own), ("xas_*", C::PageRefs, R::Own),
    ("folio_mark_accessed", C::PageRefs, R::Own), ("folio_unlock", C::PageRefs, R::Own),
    ("*zerocopy_*", C::PageRefs, R::Own), ("*_zcopy_*", C::PageRefs, R::Own),
    ("mm_account_pinned_pages", C::PageRefs, R::Own), ("mm_unaccount_pinned_pages", C::PageRefs, R::Own),
    ("vm_insert_page*", C::PageRefs, R::Own), ("insert_page*", C::PageRefs, R::Own),
    ("zap_*", C::PageRefs, R::Own), ("unmap_page_range", C::PageRefs, R::Own),
    ("flush_tlb*", C::PageRefs, R::Own), ("*handle_mm_fault", C::PageRefs, R::Own),
    ("do_anonymous_page", C::PageRefs, R::Own), ("do_user_addr_fault", C::PageRefs, R::Own),
    ("*exc_page_fault", C::PageRefs, R::Own), ("lock_vma_under_rcu", C::PageRefs, R::Own),
    ("*pte_offset_map*", C::PageRefs, R::Own), ("mas_*", C::PageRefs, R::Own),
    ("tlb_*", C::PageRefs, R::Own), ("p4d_*", C::PageRefs, R::Own),
    ("pud_*", C::PageRefs, R::Own), ("pmd_*", C::PageRefs, R::Own),
    ("folio_batch_*", C::PageRefs, R::Own),
    ("find_vma*", C::PageRefs, R::Own), ("uprobe_munmap", C::PageRefs, R::Own),
    ("iov_iter_*", C::Other, R::ToCaller),
    // socket, skb and buffer memory: slab, page allocator, memcg charging
    ("*alloc_skb*", C::SkbAlloc, R::Own), ("kmalloc*", C::SkbAlloc, R::Own),
    ("__kmalloc*", C::SkbAlloc, R::Own), ("kmem_cache_*", C::SkbAlloc, R::Own),
    ("kfree*", C::SkbAlloc, R::Own), ("__kfree_skb*", C::SkbAlloc, R::Own),
    ("krealloc*", C::SkbAlloc, R::Own), ("*slab_*", C::SkbAlloc, R::Own),
    ("put_cpu_partial", C::SkbAlloc, R::Own), ("__put_partials", C::SkbAlloc, R::Own),
    ("get_partial*", C::SkbAlloc, R::Own), ("*obj_stock*", C::SkbAlloc, R::Own),
    ("obj_cgroup_*", C::SkbAlloc, R::Own), ("*memcg*", C::SkbAlloc, R::Own),
    ("*mem_cgroup_*", C::SkbAlloc, R::Own), ("page_counter_*", C::SkbAlloc, R::Own),
    ("uncharge_*", C::SkbAlloc, R::Own), ("*css_rstat_*", C::SkbAlloc, R::Own),
    ("skb_release_*", C::SkbAlloc, R::Own), ("sk_skb_reason_drop", C::SkbAlloc, R::Own),
    ("consume_skb", C::SkbAlloc, R::Own), ("napi_consume_skb", C::SkbAlloc, R::Own),
    ("__consume_stateless_skb", C::SkbAlloc, R::Own), ("skb_free_head", C::SkbAlloc, R::Own),
    ("skb_clone", C::SkbAlloc, R::Own), ("__skb_clone", C::SkbAlloc, R::Own),
    ("__copy_skb_header", C::SkbAlloc, R::Own), ("skb_defer_free_flush", C::SkbAlloc, R::Own),
    ("skb_attempt_defer_free", C::SkbAlloc, R::Own), ("napi_skb_cache_*", C::SkbAlloc, R::Own),
    ("*page_frag*", C::SkbAlloc, R::Own), ("sock_alloc_send_*", C::SkbAlloc, R::Own),
    ("pskb_expand_head", C::SkbAlloc, R::Own), ("skb_set_owner_w", C::SkbAlloc, R::Own),
    ("sock_wfree", C::SkbAlloc, R::Own), ("sock_rfree", C::SkbAlloc, R::Own),
    ("tcp_wfree", C::SkbAlloc, R::Own), ("__sk_mem_*", C::SkbAlloc, R::Own),
    ("sk_mem_*", C::SkbAlloc, R::Own), ("sk_forced_mem_schedule", C::SkbAlloc, R::Own),
    ("tcp_wmem_schedule", C::SkbAlloc, R::Own), ("tcp_try_rmem_schedule", C::SkbAlloc, R::Own),
    ("get_page_from_freelist", C::SkbAlloc, R::Own), ("*alloc_pages*", C::SkbAlloc, R::Own),
    ("*alloc_frozen_pages*", C::SkbAlloc, R::Own), ("__free_pages*", C::SkbAlloc, R::Own),
    ("*free_frozen_page*", C::SkbAlloc, R::Own), ("free_unref_*", C::SkbAlloc, R::Own),
    ("free_pcppages_bulk", C::SkbAlloc, R::Own), ("*rmqueue*", C::SkbAlloc, R::Own),
    ("*zone_watermark*", C::SkbAlloc, R::Own), ("*get_pfnblock_*", C::SkbAlloc, R::Own),
    ("free_tail_page_prepare", C::SkbAlloc, R::Own), ("policy_nodemask", C::SkbAlloc, R::Own),
    ("*mod_zone_page_state", C::SkbAlloc, R::Own), ("prep_new_page", C::SkbAlloc, R::Own),
    ("post_alloc_hook", C::SkbAlloc, R::Own), ("free_pages_prepare", C::SkbAlloc, R::Own),
    ("kmalloc_size_roundup", C::SkbAlloc, R::Own), ("*sk_free", C::SkbAlloc, R::Own),
    ("*sk_destruct", C::SkbAlloc, R::Own), ("*sock_wfree", C::SkbAlloc, R::Own),
    ("*build_skb*", C::SkbAlloc, R::Own), ("build_detached_freelist", C::SkbAlloc, R::Own),
    ("allocate_slab", C::SkbAlloc, R::Own), ("*sheaf*", C::SkbAlloc, R::Own),
    ("clear_page*", C::SkbAlloc, R::Own), ("refill_stock", C::SkbAlloc, R::Own),
    ("propagate_protected_usage", C::SkbAlloc, R::Own), ("*lruvec*", C::SkbAlloc, R::Own),
    // locks
    ("_raw_*", C::Locks, R::Own), ("*queued_spin_*", C::Locks, R::Own),
    ("queued_read_lock*", C::Locks, R::Own), ("queued_write_lock*", C::Locks, R::Own), ("*vcpu_is_preempted", C::Locks, R::Own),
    ("mutex_*", C::Locks, R::Own), ("__mutex_*", C::Locks, R::Own),
    ("rwsem_*", C::Locks, R::Own), ("down_read*", C::Locks, R::Own),
    ("down_write*", C::Locks, R::Own), ("up_read", C::Locks, R::Own),
    ("up_write", C::Locks, R::Own), ("osq_*", C::Locks, R::Own),
    ("lock_sock*", C::Locks, R::Own), ("release_sock", C::Locks, R::Own),
    ("sockopt_lock_sock", C::Locks, R::Own), ("sockopt_release_sock", C::Locks, R::Own),
    ("pipe_lock", C::Locks, R::Own), ("pipe_unlock", C::Locks, R::Own),
    ("pipe_double_lock", C::Locks, R::Own), ("*rcu_read_lock*", C::Locks, R::Own),
    ("*rcu_read_unlock*", C::Locks, R::Own),
    // scheduler, waiting and wake-ups
    ("__schedule", C::Scheduler, R::Own), ("schedule*", C::Scheduler, R::Own),
    ("try_to_wake_up", C::Scheduler, R::Own), ("wake_up_*", C::Scheduler, R::Own),
    ("__wake_up*", C::Scheduler, R::Own), ("*_wake_function", C::Scheduler, R::Own),
    ("wait_woken", C::Scheduler, R::Own), ("prepare_to_wait*", C::Scheduler, R::Own),
    ("finish_wait", C::Scheduler, R::Own), ("*wait_queue*", C::Scheduler, R::Own),
    ("sk_wait_data", C::Scheduler, R::Own), ("sk_stream_wait_memory", C::Scheduler, R::Own),
    ("sock_def_readable", C::Scheduler, R::Own), ("sock_def_write_space", C::Scheduler, R::Own),
    ("sk_stream_write_space", C::Scheduler, R::Own), ("unix_write_space", C::Scheduler, R::Own),
    ("ep_*", C::Scheduler, R::Own), ("pollwake", C::Scheduler, R::Own),
    ("enqueue_to_backlog", C::SoftirqDevice, R::Own),
    ("enqueue_*", C::Scheduler, R::Own), ("dequeue_*", C::Scheduler, R::Own),
    ("pick_next_*", C::Scheduler, R::Own), ("pick_task*", C::Scheduler, R::Own),
    ("put_prev_*", C::Scheduler, R::Own), ("set_next_*", C::Scheduler, R::Own),
    ("update_curr*", C::Scheduler, R::Own), ("*update_load_avg*", C::Scheduler, R::Own),
    ("update_cfs_*", C::Scheduler, R::Own), ("select_task_rq*", C::Scheduler, R::Own),
    ("ttwu_*", C::Scheduler, R::Own), ("sched_*", C::Scheduler, R::Own),
    ("psi_*", C::Scheduler, R::Own), ("*cond_resched", C::Scheduler, R::Own),
    ("resched_*", C::Scheduler, R::Own), ("check_preempt*", C::Scheduler, R::Own),
    ("wakeup_preempt*", C::Scheduler, R::Own), ("*send_reschedule", C::Scheduler, R::Own),
    ("futex_*", C::Scheduler, R::Own), ("__futex_*", C::Scheduler, R::Own),
    ("get_futex_key", C::Scheduler, R::Own), ("do_futex", C::Scheduler, R::Own),
    ("*_sys_futex*", C::Scheduler, R::Own), ("do_nanosleep", C::Scheduler, R::Own),
    ("hrtimer_nanosleep", C::Scheduler, R::Own), ("common_nsleep*", C::Scheduler, R::Own),
    ("*_sys_clock_nanosleep", C::Scheduler, R::Own), ("*sys_poll", C::Scheduler, R::Own),
    ("*sys_ppoll", C::Scheduler, R::Own), ("do_poll*", C::Scheduler, R::Own),
    ("do_select", C::Scheduler, R::Own), ("core_sys_select", C::Scheduler, R::Own),
    ("sock_poll", C::Scheduler, R::Own), ("*epoll_wait*", C::Scheduler, R::Own),
    ("kick_process", C::Scheduler, R::Own), ("kill_fasync", C::Scheduler, R::Own),
    ("poll_*", C::Scheduler, R::Own), ("__pollwait", C::Scheduler, R::Own),
    ("init_wait_entry", C::Scheduler, R::Own), ("wake_q_*", C::Scheduler, R::Own),
    ("sk_error_report", C::Scheduler, R::Own), ("update_sd_*", C::Scheduler, R::Own),
    ("update_group_*", C::Scheduler, R::Own),
    ("raw_spin_rq_*", C::Scheduler, R::Own), ("update_rq_clock*", C::Scheduler, R::Own),
    ("kvm_sched_clock_read", C::Scheduler, R::Own), ("__switch_to*", C::Scheduler, R::Own),
    ("switch_mm*", C::Scheduler, R::Own), ("rcu_note_context_switch", C::Scheduler, R::Own),
    // system call entry and exit, descriptors, argument marshalling
    ("entry_SYSCALL*", C::Syscall, R::Own), ("do_syscall_64", C::Syscall, R::Own),
    ("syscall_*", C::Syscall, R::Own), ("x64_sys_call", C::Syscall, R::Own),
    ("__x64_sys_*", C::Syscall, R::Own), ("__ia32_sys_*", C::Syscall, R::Own),
    ("__sys_*", C::Syscall, R::Own), ("___sys_*", C::Syscall, R::Own),
    ("____sys_*", C::Syscall, R::Own), ("__do_sys_*", C::Syscall, R::Own),
    ("ksys_*", C::Syscall, R::Own), ("fdget*", C::Syscall, R::Own),
    ("fget*", C::Syscall, R::Own), ("__fget*", C::Syscall, R::Own),
    ("fput*", C::Syscall, R::Own), ("__fput*", C::Syscall, R::Own),
    ("rw_verify_area", C::Syscall, R::Own), ("vfs_read", C::Syscall, R::Own),
    ("vfs_write", C::Syscall, R::Own), ("do_iter_*", C::Syscall, R::Own),
    ("*import_iovec", C::Syscall, R::Own), ("import_ubuf", C::Syscall, R::Own),
    ("*iovec_from_user", C::Syscall, R::Own), ("*copy_msghdr*", C::Syscall, R::Own),
    ("move_addr_to_*", C::Syscall, R::Own), ("sock_sendmsg*", C::Syscall, R::Own),
    ("__sock_sendmsg", C::Syscall, R::Own), ("sock_recvmsg*", C::Syscall, R::Own),
    ("sock_read_iter", C::Syscall, R::Own), ("sock_write_iter", C::Syscall, R::Own),
    ("sockfd_lookup*", C::Syscall, R::Own), ("*rseq*", C::Syscall, R::Own),
    ("__get_user_*", C::Syscall, R::Own), ("__put_user_*", C::Syscall, R::Own),
    ("copy_from_sockptr*", C::Syscall, R::Own), ("touch_atime", C::Syscall, R::Own),
    ("atime_needs_update", C::Syscall, R::Own), ("current_time", C::Syscall, R::Own),
    ("file_update_time", C::Syscall, R::Own), ("*fsnotify*", C::Syscall, R::Own),
    ("do_sock_getsockopt", C::Syscall, R::Own), ("do_sock_setsockopt", C::Syscall, R::Own),
    ("copy_to_sockptr*", C::Syscall, R::Own), ("sock_from_file", C::Syscall, R::Own),
    ("blkcg_maybe_throttle_current", C::Syscall, R::Own), ("get_signal", C::Syscall, R::Own),
    ("arch_do_signal_or_restart", C::Syscall, R::Own), ("__task_pid_nr_ns", C::Syscall, R::Own),
    ("getrusage", C::Syscall, R::Own),
    // interrupts, softirqs and the (loopback, veth, virtio) device
    ("*irq_exit*", C::SoftirqDevice, R::Own), ("irq_enter*", C::SoftirqDevice, R::Own),
    ("do_softirq*", C::SoftirqDevice, R::Own), ("net_rx_action", C::SoftirqDevice, R::Own),
    ("*napi_*", C::SoftirqDevice, R::Own), ("process_backlog", C::SoftirqDevice, R::Own),
    ("*netif_receive_skb*", C::SoftirqDevice, R::Own), ("*netif_rx*", C::SoftirqDevice, R::Own),
    ("loopback_xmit", C::SoftirqDevice, R::Own),
    ("*dev_queue_xmit*", C::SoftirqDevice, R::Own), ("dev_hard_start_xmit", C::SoftirqDevice, R::Own),
    ("validate_xmit_*", C::SoftirqDevice, R::Own), ("netif_skb_features", C::SoftirqDevice, R::Own),
    ("eth_type_trans", C::SoftirqDevice, R::Own), ("skb_clone_tx_timestamp", C::SoftirqDevice, R::Own),
    ("veth_*", C::SoftirqDevice, R::Own), ("virtnet_*", C::SoftirqDevice, R::Own),
    ("virtqueue_*", C::SoftirqDevice, R::Own), ("vring_*", C::SoftirqDevice, R::Own),
    ("sch_direct_xmit", C::SoftirqDevice, R::Own), ("*qdisc*", C::SoftirqDevice, R::Own),
    ("pfifo_*", C::SoftirqDevice, R::Own), ("fq_codel_*", C::SoftirqDevice, R::Own),
    ("netem_*", C::SoftirqDevice, R::Own), ("rps_*", C::SoftirqDevice, R::Own),
    ("*sysvec_*", C::SoftirqDevice, R::Own), ("*common_interrupt", C::SoftirqDevice, R::Own),
    ("hrtimer_interrupt", C::SoftirqDevice, R::Own), ("__hrtimer_run_queues", C::SoftirqDevice, R::Own),
    ("hrtimer_run_*", C::SoftirqDevice, R::Own), ("*run_timer*", C::SoftirqDevice, R::Own),
    ("call_timer_fn", C::SoftirqDevice, R::Own), ("rcu_*", C::SoftirqDevice, R::Own),
    ("tasklet_*", C::SoftirqDevice, R::Own), ("tick_*", C::SoftirqDevice, R::Own),
    ("update_process_times", C::SoftirqDevice, R::Own), ("*gro_*", C::SoftirqDevice, R::Own),
    ("netdev_*", C::SoftirqDevice, R::Own), ("skb_network_protocol", C::SoftirqDevice, R::Own),
    ("tmigr_*", C::SoftirqDevice, R::Own), ("note_gp_changes", C::SoftirqDevice, R::Own),
    ("mix_interrupt_randomness", C::SoftirqDevice, R::Own),
    // the transport's own code: TCP/IP, UDP, AF_UNIX, pipes
    ("tcp_*", C::Protocol, R::Own), ("__tcp_*", C::Protocol, R::Own),
    ("tcp4_*", C::Protocol, R::Own), ("do_tcp_*", C::Protocol, R::Own),
    ("bbr_*", C::Protocol, R::Own), ("*cubic*", C::Protocol, R::Own),
    ("dctcp_*", C::Protocol, R::Own), ("ip_*", C::Protocol, R::Own),
    ("__ip_*", C::Protocol, R::Own), ("ipv4_*", C::Protocol, R::Own),
    ("ipv6_*", C::Protocol, R::Own), ("ip6_*", C::Protocol, R::Own),
    ("__ip6_*", C::Protocol, R::Own), ("inet_*", C::Protocol, R::Own),
    ("__inet_*", C::Protocol, R::Own), ("inet6_*", C::Protocol, R::Own),
    ("udp_*", C::Protocol, R::Own), ("__udp*", C::Protocol, R::Own),
    ("udp4_*", C::Protocol, R::Own), ("udpv6_*", C::Protocol, R::Own),
    ("raw_local_deliver", C::Protocol, R::Own), ("raw_v4_input", C::Protocol, R::Own),
    ("icmp_*", C::Protocol, R::Own), ("sk_filter*", C::Protocol, R::Own),
    ("sk_reset_timer", C::Protocol, R::Own), ("sk_stop_timer*", C::Protocol, R::Own),
    ("sk_stream_*", C::Protocol, R::Own), ("*sk_dst_check", C::Protocol, R::Own),
    ("dst_*", C::Protocol, R::Own), ("fib_*", C::Protocol, R::Own),
    ("skb_try_coalesce", C::Protocol, R::Own), ("skb_shift", C::Protocol, R::Own),
    ("skb_segment*", C::Protocol, R::Own), ("*gso_segment*", C::Protocol, R::Own),
    ("skb_condense", C::Protocol, R::Own), ("*pskb_trim*", C::Protocol, R::Own),
    ("*skb_pull*", C::Protocol, R::Own), ("skb_push", C::Protocol, R::Own),
    ("skb_put", C::Protocol, R::Own), ("*skb_recv_*", C::Protocol, R::Own),
    ("__skb_try_recv_*", C::Protocol, R::Own), ("__skb_wait_for_more_packets", C::Protocol, R::Own),
    ("skb_consume_udp", C::Protocol, R::Own), ("unix_*", C::Protocol, R::Own),
    ("__unix_*", C::Protocol, R::Own), ("wait_for_unix_gc", C::Protocol, R::Own),
    ("scm_*", C::Protocol, R::Own), ("__scm_*", C::Protocol, R::Own),
    ("anon_pipe_*", C::Protocol, R::Own), ("pipe_*", C::Protocol, R::Own),
    ("__pipe_*", C::Protocol, R::Own), ("get_pipe_info", C::Protocol, R::Own),
    ("sock_common_*", C::Protocol, R::Own), ("__release_sock", C::Protocol, R::Own),
    ("*xfrm_*", C::Protocol, R::Own), ("skb_gso_validate_*", C::Protocol, R::Own),
    ("wait_for_space", C::Protocol, R::Own), ("skb_split", C::Protocol, R::Own),
];

/// User-space rows; a resolved user function no row names is `user_code`.
#[rustfmt::skip]
const USER: &[(&str, Category, Role)] = &[
    ("__memmove*", C::CopyInUser, R::Own), ("__memcpy*", C::CopyInUser, R::Own),
    ("memmove*", C::CopyInUser, R::Own), ("memcpy*", C::CopyInUser, R::Own),
    ("__mempcpy*", C::CopyInUser, R::Own), ("mempcpy*", C::CopyInUser, R::Own),
    // bytepath's serialization (the `copy` mechanism) and shared-ring copies
    ("bytepath::mechanism::copy::*", C::CopyInUser, R::Own),
    ("<bytepath::mechanism::copy::*", C::CopyInUser, R::Own),
    ("bytepath::sys::ring::Ring::copy_*", C::CopyInUser, R::Own),
    // libc's system-call stubs: the user half of entry and exit
    ("__libc_*", C::Syscall, R::Own), ("__GI___libc_*", C::Syscall, R::Own),
    ("__send", C::Syscall, R::Own), ("__recv", C::Syscall, R::Own),
    ("send", C::Syscall, R::Own), ("recv", C::Syscall, R::Own),
    ("sendmsg", C::Syscall, R::Own), ("recvmsg", C::Syscall, R::Own),
    ("sendto", C::Syscall, R::Own), ("recvfrom", C::Syscall, R::Own),
    ("syscall", C::Syscall, R::Own), ("read", C::Syscall, R::Own),
    ("write", C::Syscall, R::Own), ("__read*", C::Syscall, R::Own),
    ("__write*", C::Syscall, R::Own), ("readv", C::Syscall, R::Own),
    ("writev", C::Syscall, R::Own), ("pread*", C::Syscall, R::Own),
    ("pwrite*", C::Syscall, R::Own), ("splice", C::Syscall, R::Own),
    ("vmsplice", C::Syscall, R::Own), ("sendfile*", C::Syscall, R::Own),
    ("__getsockopt", C::Syscall, R::Own), ("getsockopt", C::Syscall, R::Own),
    ("__setsockopt", C::Syscall, R::Own), ("setsockopt", C::Syscall, R::Own),
    ("*asynccancel", C::Syscall, R::Own), ("*getppid", C::Syscall, R::Own),
    ("__poll", C::Scheduler, R::Own), ("poll", C::Scheduler, R::Own),
    ("*ppoll*", C::Scheduler, R::Own), ("epoll_wait", C::Scheduler, R::Own),
    ("*futex*", C::Scheduler, R::Own), ("__lll_lock_wait*", C::Scheduler, R::Own),
    ("*clock_nanosleep*", C::Scheduler, R::Own), ("*nanosleep", C::Scheduler, R::Own),
];

/// The table's verdict on one function. Compiler suffixes (`.isra.0`, `.constprop.0`,
/// `.part.0`, `.cold`) are ignored; unknown kernel functions are `other`, unknown user ones
/// `user_code`.
pub fn rule_for(name: &str, space: Space) -> Rule {
    let base = name.split_once('.').map_or(name, |(b, _)| b);
    let (rows, fallback) = match space {
        Space::Kernel => (KERNEL, C::Other),
        Space::User => (USER, C::UserCode),
    };
    rows.iter()
        .find(|(pattern, _, _)| matches(pattern, base))
        .map_or(
            Rule {
                category: fallback,
                role: R::Own,
            },
            |&(_, category, role)| Rule { category, role },
        )
}

/// Glob with `*` allowed at either end only.
fn matches(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(rest), _) if rest.ends_with('*') => name.contains(&rest[..rest.len() - 1]),
        (Some(suffix), _) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        (None, None) => name == pattern,
    }
}

#[cfg(test)]
#[path = "categories_tests.rs"]
mod tests;
