//! Buffer planning algorithms, independent of MLIR: live intervals in, byte
//! offsets out.

mod liveness;
mod offsets;

pub use liveness::Numbering;
pub use offsets::{Interval, Placement, assign_offsets, lower_bound};
