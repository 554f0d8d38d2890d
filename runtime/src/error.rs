use thiserror::Error;

/// Every error of the runtime.
#[derive(Debug, Error)]
pub enum Error {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("timed out after {seconds:.1} s waiting for rank(s) {missing:?} at '{key}'")]
    RendezvousTimeout {
        key: String,
        missing: Vec<usize>,
        seconds: f64,
    },
    #[error("store: {0}")]
    Store(String),
    #[error("environment: {0}")]
    Env(String),
    #[error(
        "allocation '{id}' has {mine} bytes on rank {rank} but {theirs} bytes on rank {other}; every rank must allocate the same size"
    )]
    SizeMismatch {
        id: String,
        rank: usize,
        mine: u64,
        other: usize,
        theirs: u64,
    },
    #[error("CUDA: {0}")]
    Cuda(String),
    /// A CUDA driver call that failed, with the driver's status as a value.
    #[error("CUDA: {what} failed: {status:?}")]
    Driver {
        what: String,
        status: cudarc::driver::sys::CUresult,
    },
    /// A cuBLAS call that failed, with its status as a value.
    #[error("CUDA: cuBLAS {what} failed: {status:?}")]
    Cublas {
        what: String,
        status: cudarc::cublas::sys::cublasStatus_t,
    },
    /// A cuBLASLt call that failed, with its status as a value.
    #[error("CUDA: cuBLASLt {what} failed: {status:?}")]
    CublasLt {
        what: String,
        status: cudarc::cublaslt::sys::cublasStatus_t,
    },
    /// An NCCL call that failed, with its status as a value.
    #[error("CUDA: NCCL {what} failed: {status:?}")]
    Nccl {
        what: String,
        status: cudarc::nccl::sys::ncclResult_t,
    },
    /// An error with advice on what to do about it; the error itself (and
    /// its driver status, if any) stays a value.
    #[error("{source} ({hint})")]
    Hinted {
        #[source]
        source: Box<Error>,
        hint: String,
    },
    #[error("peer did not signal within {seconds:.1} s (dead or hung peer) in {what}")]
    PeerTimeout { what: String, seconds: f64 },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A compiled call's first failure, already worded as "WHAT failed:
    /// WHY" where it happened (a kernel launch, cuBLAS, a token count).
    #[error("{0}")]
    CallFailed(String),
}

impl Error {
    /// The driver's status behind this error, if a driver call failed.
    pub fn driver_status(&self) -> Option<cudarc::driver::sys::CUresult> {
        match self {
            Error::Driver { status, .. } => Some(*status),
            Error::Hinted { source, .. } => source.driver_status(),
            _ => None,
        }
    }
    /// This error with advice appended.
    pub fn hinted(self, hint: impl Into<String>) -> Self {
        Error::Hinted {
            source: Box::new(self),
            hint: hint.into(),
        }
    }
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::{cublas::sys::cublasStatus_t, nccl::sys::ncclResult_t};

    #[test]
    fn library_statuses_stay_values_and_read_as_before() {
        let blas = Error::Cublas {
            what: "cublasGemmEx".into(),
            status: cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
        };
        assert_eq!(
            blas.to_string(),
            "CUDA: cuBLAS cublasGemmEx failed: CUBLAS_STATUS_NOT_SUPPORTED"
        );
        let nccl = Error::Nccl {
            what: "ncclAllReduce".into(),
            status: ncclResult_t::ncclRemoteError,
        };
        assert!(matches!(
            nccl,
            Error::Nccl {
                status: ncclResult_t::ncclRemoteError,
                ..
            }
        ));
        assert_eq!(nccl.driver_status(), None);
    }
}
