//! The per-side profile a record carries: each category's share of the side's samples with a
//! 95 % Wilson score interval (E. B. Wilson, JASA 1927; sample counts are binomial), the
//! sampling event and frequency, lost samples, the interrupt-skew figures, the top unknown
//! symbols, and on request CPU-ns per byte and "copies' worth" per category.
use super::categories::Category;

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// One category's part of a side's samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CategoryShare {
    pub name: Category,
    pub samples: u64,
    pub share: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// share × the side's CPU-ns per byte, once the caller supplies the latter.
    pub cpu_ns_per_byte: Option<f64>,
}

/// Timer sampling's skew: samples taken where interrupts come back on.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Skew {
    pub irq_reenable_samples: u64,
    pub irq_reenable_share: f64,
    /// Skewed samples charged to a caller in their call chain rather than to the lock release.
    pub recharged_samples: u64,
}

/// A symbol and how many samples were charged to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SymbolCount {
    pub symbol: String,
    pub samples: u64,
}

/// The copy categories' CPU per byte in units of one memcpy of that byte.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CopiesPerByte {
    pub copies: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub memcpy_ns_per_byte: f64,
    pub label: String,
}

/// One side's CPU breakdown over one window.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProfileBlock {
    /// `cycles` or `cpu-clock`.
    pub event: String,
    /// Why that event (e.g. "no PMU: cycles failed with ENOENT").
    pub event_reason: String,
    pub frequency_hz: u64,
    pub threads: usize,
    /// Samples read and categorised.
    pub samples: u64,
    /// Samples the kernel dropped because a ring buffer was full.
    pub lost: u64,
    /// Times the kernel throttled the event for taking too long (PERF_RECORD_THROTTLE).
    pub throttled: u64,
    pub user_samples: u64,
    /// Every category, in `Category::ALL` order, zeros included.
    pub categories: Vec<CategoryShare>,
    pub skew: Skew,
    /// Samples in generic helpers (memcpy, usercopy checks, clocks, timers) charged to a caller.
    pub caller_charged_samples: u64,
    pub top_other: Vec<SymbolCount>,
    pub copies_per_byte: Option<CopiesPerByte>,
    pub method: String,
    /// The copy share in each time block of the window (batch means, `batches`): empty when
    /// the window had too few samples, or the block was written before blocks were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copy_share_blocks: Vec<f64>,
}

impl ProfileBlock {
    /// The entry for `category`.
    pub fn category(&self, category: Category) -> &CategoryShare {
        self.categories
            .iter()
            .find(|c| c.name == category)
            .expect("every category is listed")
    }

    /// `name share % …` for the `n` largest categories with samples, largest first.
    pub fn top_categories(&self, n: usize) -> String {
        let mut cats: Vec<&CategoryShare> =
            self.categories.iter().filter(|c| c.samples > 0).collect();
        cats.sort_by_key(|c| std::cmp::Reverse(c.samples));
        cats.iter()
            .take(n)
            .map(|c| format!("{} {:.0} %", c.name.name(), 100.0 * c.share))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Fills CPU-ns per byte per category (share × `side_cpu_ns_per_byte`) and, given the
    /// memcpy cost per byte (`probe`'s roofline), the copy categories as copies' worth.
    pub fn apply_costs(&mut self, side_cpu_ns_per_byte: f64, memcpy_ns_per_byte: Option<f64>) {
        if !side_cpu_ns_per_byte.is_finite() || side_cpu_ns_per_byte < 0.0 {
            return;
        }
        for c in &mut self.categories {
            c.cpu_ns_per_byte = Some(c.share * side_cpu_ns_per_byte);
        }
        self.copies_per_byte = memcpy_ns_per_byte
            .filter(|m| m.is_finite() && *m > 0.0)
            .map(|m| self.copies(side_cpu_ns_per_byte, m));
    }

    fn copies(&self, side_cpu_ns_per_byte: f64, memcpy_ns_per_byte: f64) -> CopiesPerByte {
        let copy_samples: u64 = self
            .categories
            .iter()
            .filter(|c| c.name.is_copy())
            .map(|c| c.samples)
            .sum();
        let (share, low, high) = wilson(copy_samples, self.samples);
        let scale = side_cpu_ns_per_byte / memcpy_ns_per_byte;
        let copies = share * scale;
        CopiesPerByte {
            copies,
            ci95_low: low * scale,
            ci95_high: high * scale,
            memcpy_ns_per_byte,
            label: format!("≈ {copies:.2} copies' worth of CPU per byte"),
        }
    }
}

/// Share of `k` in `n` with its 95 % Wilson score interval; `(0, 0, 1)` when `n` is 0.
pub fn wilson(k: u64, n: u64) -> (f64, f64, f64) {
    if n == 0 {
        return (0.0, 0.0, 1.0);
    }
    let (k, n) = (k.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    // At k = 0 (k = n) the bound is exactly 0 (1); rounding would leave a speck.
    let low = if k == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (p, low, high)
}

/// The category list of a block from per-category sample counts.
pub fn shares(counts: &[u64; Category::ALL.len()], total: u64) -> Vec<CategoryShare> {
    Category::ALL
        .iter()
        .zip(counts)
        .map(|(&name, &samples)| {
            let (share, ci95_low, ci95_high) = wilson(samples, total);
            CategoryShare {
                name,
                samples,
                share,
                ci95_low,
                ci95_high,
                cpu_ns_per_byte: None,
            }
        })
        .collect()
}

#[cfg(test)]
impl ProfileBlock {
    /// A cpu-clock block of these sample counts per category (in `Category::ALL` order), with
    /// no skew, for tests of what reads blocks.
    pub fn of_counts(counts: [u64; Category::ALL.len()]) -> ProfileBlock {
        let total = counts.iter().sum();
        ProfileBlock {
            event: "cpu-clock".into(),
            event_reason: "test".into(),
            frequency_hz: 3999,
            threads: 1,
            samples: total,
            lost: 0,
            throttled: 0,
            user_samples: 0,
            categories: shares(&counts, total),
            skew: Skew {
                irq_reenable_samples: 0,
                irq_reenable_share: 0.0,
                recharged_samples: 0,
            },
            caller_charged_samples: 0,
            top_other: vec![],
            copies_per_byte: None,
            method: String::new(),
            copy_share_blocks: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_a_worked_example() {
        // 20 of 100: Wilson 95 % interval is [0.1333, 0.2888] (Newcombe 1998, method 3).
        let (p, lo, hi) = wilson(20, 100);
        assert!((p - 0.2).abs() < 1e-12);
        assert!((lo - 0.1333).abs() < 5e-4, "{lo}");
        assert!((hi - 0.2888).abs() < 5e-4, "{hi}");
    }

    #[test]
    fn wilson_stays_inside_zero_and_one_at_the_edges() {
        let (_, lo, hi) = wilson(0, 50);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.0 && hi < 0.1);
        let (_, lo, hi) = wilson(50, 50);
        assert!(lo > 0.9 && hi == 1.0);
        assert_eq!(wilson(0, 0), (0.0, 0.0, 1.0));
    }

    fn block(copy_user_to_kernel: u64, total: u64) -> ProfileBlock {
        let mut counts = [0; Category::ALL.len()];
        counts[0] = copy_user_to_kernel;
        counts[Category::ALL.len() - 1] = total - copy_user_to_kernel;
        ProfileBlock::of_counts(counts)
    }

    #[test]
    fn costs_are_share_times_side_cost_and_copies_divide_by_memcpy() {
        let mut b = block(250, 1000);
        b.apply_costs(2.0, Some(0.25));
        let copy = b.category(Category::CopyUserToKernel);
        assert_eq!(copy.cpu_ns_per_byte, Some(0.5));
        let other = b.category(Category::Other);
        assert_eq!(other.cpu_ns_per_byte, Some(1.5));
        let copies = b.copies_per_byte.unwrap();
        assert!((copies.copies - 2.0).abs() < 1e-12);
        assert!(copies.ci95_low < 2.0 && copies.ci95_high > 2.0);
        assert!(copies.label.contains("copies' worth"), "{}", copies.label);
    }

    #[test]
    fn without_a_memcpy_cost_there_is_no_copies_figure() {
        let mut b = block(10, 100);
        b.apply_costs(1.0, None);
        assert!(b.copies_per_byte.is_none());
        assert!(b.category(Category::Checksum).cpu_ns_per_byte == Some(0.0));
    }

    #[test]
    fn the_block_serializes_with_the_category_keys() {
        let json = serde_json::to_value(block(1, 2)).unwrap();
        assert_eq!(json["categories"][0]["name"], "copy_user_to_kernel");
        assert_eq!(json["categories"][13]["name"], "other");
        assert!(json["categories"][0]["cpu_ns_per_byte"].is_null());
    }
}
