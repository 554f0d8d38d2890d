//! Remarks and warnings, which the MLIR C API does not offer.

use crate::ffi;
use melior::{StringRef, ir::Location};

pub fn emit_remark(location: Location, message: &str) {
    // SAFETY: the location is live and the message is copied.
    unsafe { ffi::symmMemEmitRemark(location.to_raw(), StringRef::new(message).to_raw()) }
}

pub fn emit_warning(location: Location, message: &str) {
    // SAFETY: as above.
    unsafe { ffi::symmMemEmitWarning(location.to_raw(), StringRef::new(message).to_raw()) }
}
