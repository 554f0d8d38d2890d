//! How the runtime picks between two ways of running something (a matmul
//! pair's GEMMs, a site's generated kernel or cuBLAS): fixed by an
//! environment variable, or measured on first use.

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice<W> {
    Always(W),
    Measured,
}

impl<W: Copy> Choice<W> {
    /// The choice a value of `env` names: unset, empty or `measured`, or
    /// the name of one of `ways`.
    pub fn parse(env: &str, value: Option<&str>, ways: [(&str, W); 2]) -> Result<Self> {
        match value.map(str::trim) {
            None | Some("") | Some("measured") => Ok(Self::Measured),
            Some(name) => ways
                .iter()
                .find(|(way, _)| *way == name)
                .map(|(_, way)| Self::Always(*way))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "{env}={name:?}: expected {}, {} or measured",
                        ways[0].0, ways[1].0
                    ))
                }),
        }
    }

    /// The choice `env` holds in this process's environment.
    pub fn from_env(env: &str, ways: [(&str, W); 2]) -> Result<Self> {
        Self::parse(env, std::env::var(env).ok().as_deref(), ways)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_names_a_way_or_is_refused_with_the_ways() {
        let ways = [("batched", 1), ("two", 2)];
        let parse = |value| Choice::parse("SYMM_GEMM_PAIR", value, ways);
        assert_eq!(parse(None).unwrap(), Choice::Measured);
        assert_eq!(parse(Some(" measured ")).unwrap(), Choice::Measured);
        assert_eq!(parse(Some("two")).unwrap(), Choice::Always(2));
        assert_eq!(
            parse(Some("fast")).unwrap_err().to_string(),
            "invalid argument: SYMM_GEMM_PAIR=\"fast\": expected batched, two or measured"
        );
    }
}
