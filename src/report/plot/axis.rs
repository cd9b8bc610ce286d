//! Axes of the report's plots: linear, log2 and log10 scales, and ticks at round values (1, 2,
//! 5 × 10^k on linear axes, powers of two on log2 axes, decades on log10 axes) with short
//! labels.
use crate::analysis::size_label;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log2,
    /// For figures spanning decades (latency percentiles, per-byte costs).
    Log10,
}

/// How tick values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// Message sizes: 64 B, 4 KiB, 1 MiB.
    Bytes,
    /// Plain numbers, 12k / 3.5M beyond ten thousand.
    Number,
}

/// A data range mapped onto a pixel range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    pub scale: Scale,
    pub min: f64,
    pub max: f64,
    pub format: TickFormat,
}

impl Axis {
    /// An axis covering `values`; linear axes start at zero and end on a round value, log2
    /// axes on the enclosing powers of two. A single value gets some room either side.
    pub fn fit(values: &[f64], scale: Scale, format: TickFormat) -> Axis {
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let (min, max) = match scale {
            Scale::Log2 => {
                let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
                let hi = if hi.is_finite() && hi >= lo { hi } else { lo };
                let (a, b) = (lo.log2().floor(), hi.log2().ceil());
                if a == b {
                    (2f64.powf(a - 1.0), 2f64.powf(b + 1.0))
                } else {
                    (2f64.powf(a), 2f64.powf(b))
                }
            }
            Scale::Linear => {
                let hi = if hi.is_finite() && hi > 0.0 { hi } else { 1.0 };
                let step = nice_step(hi / 5.0);
                (0.0, (hi / step).ceil() * step)
            }
            Scale::Log10 => {
                let positive = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0);
                let (lo, hi) =
                    positive.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
                let lo = if lo.is_finite() { lo } else { 1.0 };
                let (a, b) = (lo.log10().floor(), hi.max(lo).log10().ceil());
                (10f64.powf(a), 10f64.powf(if a == b { b + 1.0 } else { b }))
            }
        };
        Axis {
            scale,
            min,
            max,
            format,
        }
    }

    /// Where `v` falls between the axis ends, 0..=1.
    pub fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.min) / (self.max - self.min),
            Scale::Log2 => (v.log2() - self.min.log2()) / (self.max.log2() - self.min.log2()),
            // Zero and below have no place on a log axis: they sit on its floor.
            Scale::Log10 if v <= 0.0 => 0.0,
            Scale::Log10 => (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10()),
        }
    }

    /// Tick values with their labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        match self.scale {
            Scale::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let count = ((self.max - self.min) / step).round() as usize;
                (0..=count)
                    .map(|i| self.min + i as f64 * step)
                    .map(|v| (v, self.label(v, step)))
                    .collect()
            }
            Scale::Log2 => {
                let (a, b) = (
                    self.min.log2().round() as i32,
                    self.max.log2().round() as i32,
                );
                let every = ((b - a) as usize).div_ceil(8).max(1);
                (a..=b)
                    .step_by(every)
                    .map(|p| 2f64.powi(p))
                    .map(|v| (v, self.label(v, v)))
                    .collect()
            }
            Scale::Log10 => {
                let (a, b) = (
                    self.min.log10().round() as i32,
                    self.max.log10().round() as i32,
                );
                // Few decades: 1, 2, 5 in each; many: every decade.
                let mantissas: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                (a..=b)
                    .flat_map(|p| mantissas.iter().map(move |m| m * 10f64.powi(p)))
                    .filter(|v| *v <= self.max * (1.0 + 1e-9))
                    .map(|v| (v, self.label(v, v)))
                    .collect()
            }
        }
    }

    fn label(&self, v: f64, step: f64) -> String {
        match self.format {
            TickFormat::Bytes => size_label(v),
            TickFormat::Number => number_label(v, step),
        }
    }
}

/// 1, 2 or 5 × 10^k, the smallest at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// A tick label with as many decimals as the step needs.
pub fn number_label(v: f64, step: f64) -> String {
    if v.abs() >= 1e6 {
        return format!("{}M", trim(v / 1e6, step / 1e6));
    }
    if v.abs() >= 1e4 {
        return format!("{}k", trim(v / 1e3, step / 1e3));
    }
    trim(v, step)
}

fn trim(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(42.0), 50.0);
    }

    #[test]
    fn linear_axes_start_at_zero_and_end_on_a_tick() {
        let a = Axis::fit(&[3.0, 17.2], Scale::Linear, TickFormat::Number);
        assert_eq!((a.min, a.max), (0.0, 20.0));
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "5", "10", "15", "20"]);
    }

    #[test]
    fn log2_axes_tick_powers_of_two_as_sizes() {
        let a = Axis::fit(&[64.0, 1048576.0], Scale::Log2, TickFormat::Bytes);
        let ticks = a.ticks();
        assert_eq!(ticks.first().unwrap().1, "64 B");
        assert_eq!(ticks.last().unwrap().1, "1 MiB");
        assert!(ticks.len() <= 9, "{}", ticks.len());
        assert!((a.fraction(1024.0) - 4.0 / 14.0).abs() < 1e-12);
    }

    #[test]
    fn log10_axes_span_whole_decades() {
        let a = Axis::fit(&[0.3, 70.0], Scale::Log10, TickFormat::Number);
        assert_eq!((a.min, a.max), (0.1, 100.0));
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.1", "1", "10", "100"]);
        let b = Axis::fit(&[15.0, 40.0], Scale::Log10, TickFormat::Number);
        let labels: Vec<String> = b.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["10", "20", "50", "100"]);
        assert_eq!(b.fraction(0.0), 0.0);
        assert!((a.fraction(1.0) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_single_value_gets_room_either_side() {
        let a = Axis::fit(&[4.0], Scale::Log2, TickFormat::Number);
        assert_eq!((a.min, a.max), (2.0, 8.0));
        let b = Axis::fit(&[], Scale::Linear, TickFormat::Number);
        assert_eq!((b.min, b.max), (0.0, 1.0));
    }

    #[test]
    fn big_numbers_get_short_labels() {
        assert_eq!(number_label(60000.0, 10000.0), "60k");
        assert_eq!(number_label(2.5e6, 5e5), "2.5M");
        assert_eq!(number_label(0.25, 0.05), "0.25");
    }
}
