use thiserror::Error;

/// Errors of the passes crate.
#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Melior(#[from] melior::Error),
    #[error("{0}")]
    InvalidIr(String),
}
