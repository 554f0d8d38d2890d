//! Facts about IR that several stages read; nothing here rewrites IR.

pub mod all_reduce;
pub mod dynamic;
pub mod group_table;
pub mod linalg;
pub mod matmul_groups;
pub mod read_after;
pub mod row_reduction;
