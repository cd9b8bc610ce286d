//! Charging symbolized samples to categories, the way `perf report --no-children --sort sym`
//! charges a sample to its leaf, with two exceptions taken from the call chain: interrupt
//! re-enable points (timer sampling skew) and generic helpers are charged to their caller.
use super::block::{shares, ProfileBlock, Skew, SymbolCount};
use super::categories::{rule_for, Category, Role, Rule, Space};
use std::collections::HashMap;
use std::sync::Arc;

/// How far up the chain a skewed or helper sample looks for its owner.
pub const CHARGE_DEPTH: usize = 8;
/// How many unknown symbols the block lists.
pub const TOP_OTHER: usize = 10;

/// One sample as names: the leaf first, then its callers (kernel chains only; a user-space
/// sample has its leaf alone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedSample {
    pub space: Space,
    pub frames: Vec<Arc<str>>,
}

/// Where one sample was charged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub category: Category,
    /// The function the sample counts for (the leaf, or the caller it moved to).
    pub symbol: Arc<str>,
    /// The leaf is an interrupt re-enable point.
    pub skew: bool,
    /// The sample moved up the chain from a re-enable point.
    pub recharged: bool,
    /// The sample moved up the chain from a generic helper.
    pub caller_charged: bool,
}

/// Applies the category table, remembering each name's rule (one lookup per distinct name).
#[derive(Debug, Default)]
pub struct Charger {
    rules: HashMap<(Space, Arc<str>), Rule>,
}

impl Charger {
    pub fn rule(&mut self, space: Space, name: &Arc<str>) -> Rule {
        *self
            .rules
            .entry((space, name.clone()))
            .or_insert_with(|| rule_for(name, space))
    }

    /// Charges one sample. A re-enable point inside a lock release, or a generic helper, goes
    /// to the first caller whose own work the table names (unknown callers included, so they
    /// surface in `top_other`); with no such caller within `CHARGE_DEPTH` frames it keeps the
    /// row's fallback category.
    pub fn charge(&mut self, sample: &NamedSample) -> Option<Charge> {
        let leaf = sample.frames.first()?;
        let rule = self.rule(sample.space, leaf);
        let skew = matches!(rule.role, Role::Skew | Role::SkewToCaller);
        let mut charge = Charge {
            category: rule.category,
            symbol: leaf.clone(),
            skew,
            recharged: false,
            caller_charged: false,
        };
        if !matches!(rule.role, Role::SkewToCaller | Role::ToCaller) {
            return Some(charge);
        }
        let owner = sample.frames[1..]
            .iter()
            .take(CHARGE_DEPTH)
            .map(|f| (f, self.rule(sample.space, f)))
            .find(|(_, r)| matches!(r.role, Role::Own | Role::Skew));
        if let Some((frame, caller)) = owner {
            charge.category = caller.category;
            charge.symbol = frame.clone();
            charge.recharged = rule.role == Role::SkewToCaller;
            charge.caller_charged = rule.role == Role::ToCaller;
        }
        Some(charge)
    }
}

/// Counts over one side's samples, ready to become a block.
#[derive(Debug, Default)]
pub struct Tally {
    pub samples: u64,
    pub user_samples: u64,
    pub counts: [u64; Category::ALL.len()],
    pub skew_samples: u64,
    pub recharged: u64,
    pub caller_charged: u64,
    pub other: HashMap<Arc<str>, u64>,
    charger: Charger,
}

impl Tally {
    /// Adds `weight` identical samples.
    pub fn add(&mut self, sample: &NamedSample, weight: u64) {
        let Some(charge) = self.charger.charge(sample) else {
            return;
        };
        self.samples += weight;
        if sample.space == Space::User {
            self.user_samples += weight;
        }
        let slot = Category::ALL
            .iter()
            .position(|&c| c == charge.category)
            .expect("ALL lists every category");
        self.counts[slot] += weight;
        self.skew_samples += weight * u64::from(charge.skew);
        self.recharged += weight * u64::from(charge.recharged);
        self.caller_charged += weight * u64::from(charge.caller_charged);
        if charge.category == Category::Other {
            *self.other.entry(charge.symbol).or_default() += weight;
        }
    }

    /// Shares of `category` among the samples so far (0 when there are none).
    pub fn share(&self, category: Category) -> f64 {
        let slot = Category::ALL.iter().position(|&c| c == category).unwrap();
        if self.samples == 0 {
            return 0.0;
        }
        self.counts[slot] as f64 / self.samples as f64
    }

    /// The block, given what the sampler knows (event, frequency, lost samples, method).
    pub fn into_block(self, meta: BlockMeta) -> ProfileBlock {
        let mut top: Vec<SymbolCount> = self
            .other
            .iter()
            .map(|(s, &n)| SymbolCount {
                symbol: s.to_string(),
                samples: n,
            })
            .collect();
        top.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then_with(|| a.symbol.cmp(&b.symbol))
        });
        top.truncate(TOP_OTHER);
        let skew_share = if self.samples == 0 {
            0.0
        } else {
            self.skew_samples as f64 / self.samples as f64
        };
        ProfileBlock {
            event: meta.event,
            event_reason: meta.event_reason,
            frequency_hz: meta.frequency_hz,
            threads: meta.threads,
            samples: self.samples,
            lost: meta.lost,
            throttled: meta.throttled,
            user_samples: self.user_samples,
            categories: shares(&self.counts, self.samples),
            skew: Skew {
                irq_reenable_samples: self.skew_samples,
                irq_reenable_share: skew_share,
                recharged_samples: self.recharged,
            },
            caller_charged_samples: self.caller_charged,
            top_other: top,
            copies_per_byte: None,
            method: meta.method,
            copy_share_blocks: Vec::new(),
        }
    }
}

/// What the block states about how it was sampled.
#[derive(Debug, Clone, Default)]
pub struct BlockMeta {
    pub event: String,
    pub event_reason: String,
    pub frequency_hz: u64,
    pub threads: usize,
    pub lost: u64,
    pub throttled: u64,
    pub method: String,
}

#[cfg(test)]
#[path = "breakdown_tests.rs"]
mod tests;
