//! The passes' one error type: why a pass cannot do what it was asked,
//! before the pass reports it at an op (`emit_error`, or a remark when the
//! op keeps a slower way). Its text is the diagnostic's, so each variant
//! is a kind of failure with the words that explain it.

use std::fmt;

/// Why an op keeps a slower way (the library's kernel, an unfused
/// consumer): the op the remark goes to, and the reason, worded to follow
/// it (`PassError::Unsupported`).
pub type Refusal<'c, 'a> = (melior::ir::OperationRef<'c, 'a>, PassError);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PassError {
    /// The op is a form this pass does not take (its shape, types,
    /// layout or body); the text follows the op's name.
    Unsupported(String),
    /// A pass option has a value the pass cannot take.
    BadOption(String),
    /// A file the pass reads (libdevice) is missing or unreadable.
    File(String),
    /// IR the pass builds or lowers failed to (a kernel that cannot be
    /// built, an internal pipeline that refused its input).
    Build(String),
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassError::Unsupported(why)
            | PassError::BadOption(why)
            | PassError::File(why)
            | PassError::Build(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for PassError {}

impl PassError {
    /// The same failure, its text after the op's quoted name (`'linalg.matmul' has ...`).
    pub fn of_op(self, name: &str) -> PassError {
        let at = |why: String| format!("'{name}' {why}");
        match self {
            PassError::Unsupported(why) => PassError::Unsupported(at(why)),
            PassError::BadOption(why) => PassError::BadOption(at(why)),
            PassError::File(why) => PassError::File(at(why)),
            PassError::Build(why) => PassError::Build(at(why)),
        }
    }
}

/// A refusal's reason, the common case: `?` on a `&str` or `String` reason.
impl From<&str> for PassError {
    fn from(why: &str) -> Self {
        PassError::Unsupported(why.to_owned())
    }
}
impl From<String> for PassError {
    fn from(why: String) -> Self {
        PassError::Unsupported(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_diagnostics() {
        let refusal: PassError = "has more than one output".into();
        assert_eq!(
            refusal,
            PassError::Unsupported("has more than one output".into())
        );
        assert_eq!(refusal.to_string(), "has more than one output");
        assert_eq!(
            PassError::Build("cannot be built".into()).of_op("linalg.matmul"),
            PassError::Build("'linalg.matmul' cannot be built".into())
        );
        let option = PassError::BadOption("max-rows = 7: a multiple of 16".into());
        assert_eq!(option.to_string(), "max-rows = 7: a multiple of 16");
    }
}
