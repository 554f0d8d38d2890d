//! The matmul prologue of an `all_reduce_epilogue_out` or an
//! `all_reduce_rows_out` (see `symm-mem-split-k`), as the ops each size
//! branch of its expansion runs before the kernel: the whole product into
//! the all-reduce's input, or its split-K slices into `partials` (one
//! `linalg.batch_matmul` over strided views of the operands), which the
//! kernel sums. Both overwrite their output (`convert-symm-mem-to-runtime`
//! calls cuBLAS with beta = 0).

use crate::PassError;
use crate::analysis::linalg::OVERWRITES_ATTR;
use crate::ir::host::Host;
use crate::ir::{Op, Val};

/// The operands and bound of a matmul prologue.
#[derive(Clone, Copy)]
pub struct Prologue {
    pub lhs: Val,
    pub rhs: Val,
    pub partials: Val,
    /// Calls of at most this many rows take the split-K kernels.
    pub max_rows: u64,
}

impl Prologue {
    /// The prologue of a fused all-reduce, given its operands in ODS order
    /// and their segment sizes (input, lhs, rhs, partials, epilogue
    /// operands, out, and for the rows op its row operands and rows_out).
    pub fn of(op: Op, operands: &[Val], segments: &[usize]) -> Option<Self> {
        if segments.get(1..4)? != [1, 1, 1] {
            return None;
        }
        let max_rows = op.attr("split_k_max_rows")?.int()?;
        Some(Self {
            lhs: operands[1],
            rhs: operands[2],
            partials: operands[3],
            max_rows: u64::try_from(max_rows).ok()?,
        })
    }

    /// Slices of K: `partials`' leading size (static, by the verifier).
    pub fn slices(&self) -> u64 {
        self.partials.ty().shape()[0].unwrap_or(1) as u64
    }

    /// `input = lhs @ rhs`, overwriting.
    pub fn whole(&self, host: &mut Host, input: Val) {
        let matmul = host
            .b
            .linalg_named("linalg.matmul", &[self.lhs, self.rhs], input);
        matmul.set_attr(OVERWRITES_ATTR, matmul.ctx().unit());
    }

    /// `partials[s] = lhs[:, s k : (s+1) k] @ rhs[s k : (s+1) k, :]` for
    /// each slice s of k = K / S columns, as one batched matmul over views:
    /// lhs as `S x rows x k` (strides k, K, 1) and rhs as `S x k x N`.
    pub fn sliced(&self, host: &mut Host) -> Result<(), PassError> {
        let (lhs, rhs) = (self.lhs.ty(), self.rhs.ty());
        let (Some(k_total), Some(columns)) = (rhs.shape()[0], rhs.shape()[1]) else {
            return Err("has a matmul prologue whose rhs is not static".into());
        };
        let slices = self.slices() as i64;
        let k = k_total / slices;
        let element = lhs.element();
        let ctx = host.b.ctx;
        let rows = lhs.shape()[0];
        // lhs as S x rows x k with strides (k, K, 1); rhs as S x k x N.
        let lhs_view = ctx.memref(
            &[Some(slices), rows, Some(k)],
            element,
            Some((&[k, k_total, 1], 0)),
            lhs.memory_space(),
        );
        let rhs_view = ctx.memref(
            &[Some(slices), Some(k), Some(columns)],
            element,
            None,
            rhs.memory_space(),
        );
        let dynamic_rows: Vec<Val> = match rows {
            Some(_) => Vec::new(),
            None => vec![host.b.dim(self.lhs, 0)],
        };
        let lhs_slices = host.b.reinterpret_cast(self.lhs, lhs_view, &dynamic_rows);
        let rhs_slices = host.b.reinterpret_cast(self.rhs, rhs_view, &[]);
        let batched = host.b.linalg_named(
            "linalg.batch_matmul",
            &[lhs_slices, rhs_slices],
            self.partials,
        );
        batched.set_attr(OVERWRITES_ATTR, batched.ctx().unit());
        Ok(())
    }
}
