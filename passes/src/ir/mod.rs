//! The IR helpers the passes share, on melior's typed API: inserting ops
//! (`typed_builder`, `host`, `builders`), queries melior does not offer
//! (`melior_ext`, `op_kind`, `scalar`, `memref_size`, `module`), and
//! rewriting through MLIR's own driver and rewriter (`convert`, `rewrite`,
//! `patterns`), so that no erased op can be visited again.

pub mod builders;
pub mod convert;
pub mod host;
pub mod melior_ext;
pub mod memref_size;
pub mod module;
pub mod op_kind;
pub mod patterns;
pub mod rewrite;
pub mod scalar;
pub mod stable_id;
pub mod text;
pub mod typed_builder;
