//! `--margin`: the equivalence margin of every command that states verdicts. Declared once
//! here and flattened into each such command, so the flag reads the same everywhere.
use crate::config::parse_percent;
use crate::error::ConfigError;
use clap::Args;

#[derive(Debug, Args, Clone, serde::Serialize, serde::Deserialize)]
pub struct MarginArgs {
    /// Equivalence margin: two figures are called "equivalent" only when the 90 % interval of
    /// their ratio lies within ±this share of 1 (two one-sided tests); otherwise a difference
    /// that is not shown reads "undecided", never "no difference".
    #[arg(long, default_value = "5%", value_name = "PCT")]
    pub margin: String,
}

impl MarginArgs {
    /// The margin as a share (0.05 for 5 %); above 0 and at most 50 %.
    pub fn share(&self) -> Result<f64, ConfigError> {
        parse_percent("--margin", &self.margin, 50.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_margin_is_a_share_and_a_bad_one_names_the_flag() {
        let m = |t: &str| MarginArgs { margin: t.into() }.share();
        assert_eq!(m("5%").unwrap(), 0.05);
        assert_eq!(m("2.5").unwrap(), 0.025);
        let err = m("80%").unwrap_err().to_string();
        assert!(
            err.contains("--margin \"80%\"") && err.contains("at most 50"),
            "{err}"
        );
        assert!(m("0").is_err());
    }
}
