//! The middle end, in pipeline order: groups verified, collectives into
//! destination-passing style, epilogues fused into all-reduces, algorithms
//! chosen, K split, symmetric operands realized, buffers planned.

pub mod fuse_epilogue;
pub mod plan;
pub mod realize;
pub mod select_all_reduce;
pub mod split_k;
pub mod to_dps;
pub mod verify_groups;
