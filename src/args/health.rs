//! `--health-port` -> the port the server's health endpoint listens on, if any.
use crate::cli::health::HealthArgs;
use crate::error::ConfigError;

/// The health endpoint's port; `None` when the flag is absent. Port 0 is refused: a probe
/// must know the port in advance.
pub fn health_port(args: &HealthArgs) -> Result<Option<u16>, ConfigError> {
    let Some(text) = &args.health_port else {
        return Ok(None);
    };
    match text.trim().parse::<u16>() {
        Ok(port) if port > 0 => Ok(Some(port)),
        _ => Err(ConfigError(format!(
            "--health-port {text:?}: allowed: 1 to 65535 (a port other than --port)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(text: &str) -> Result<Option<u16>, ConfigError> {
        health_port(&HealthArgs {
            health_port: Some(text.into()),
        })
    }

    #[test]
    fn a_health_port_is_one_to_65535_and_absent_means_none() {
        assert_eq!(port("8080").unwrap(), Some(8080));
        for bad in ["0", "65536", "http", ""] {
            let e = port(bad).unwrap_err().0;
            assert!(
                e.starts_with("--health-port") && e.contains("1 to 65535"),
                "{e}"
            );
        }
        assert_eq!(
            health_port(&HealthArgs { health_port: None }).unwrap(),
            None
        );
    }
}
