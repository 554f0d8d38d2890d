//! Buffer planning algorithms, independent of MLIR: live intervals in, byte
//! offsets out.

mod offsets;

pub use offsets::{Interval, Placement, assign_offsets, lower_bound};
