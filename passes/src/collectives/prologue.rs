//! The matmul prologue of an `all_reduce_epilogue_out` or an
//! `all_reduce_rows_out` (see `symm-mem-split-k`), as the ops each size
//! branch of its expansion runs before the kernel: the whole product into
//! the all-reduce's input, or its split-K slices into `partials` (one
//! `linalg.batch_matmul` over strided views of the operands), which the
//! kernel sums. Both overwrite their output (`convert-symm-mem-to-runtime`
//! calls cuBLAS with beta = 0).

use crate::PassError;
use crate::analysis::linalg::{MIN_ROWS_ATTR, OVERWRITES_ATTR};
use crate::ir::builders::{linalg_named_op, reinterpret_cast_op};
use crate::ir::host::Host;
use crate::ir::melior_ext::{OperationExt, ValueExt, strided_memref_type};
use crate::ir::typed_builder::static_dim;
use melior::ir::{
    Attribute, OperationRef, Value,
    r#type::{MemRefType, ShapedTypeLike},
};

/// The operands and bound of a matmul prologue.
#[derive(Clone, Copy)]
pub struct Prologue<'c, 'a> {
    pub lhs: Value<'c, 'a>,
    pub rhs: Value<'c, 'a>,
    pub partials: Value<'c, 'a>,
    /// Calls of at most this many rows take the split-K kernels.
    pub max_rows: u64,
}

impl<'c, 'a> Prologue<'c, 'a> {
    /// The prologue of a fused all-reduce, given its operands in ODS order
    /// and their segment sizes (input, lhs, rhs, partials, epilogue
    /// operands, out, and for the rows op its row operands and rows_out).
    pub fn of(
        op: OperationRef<'c, 'a>,
        operands: &[Value<'c, 'a>],
        segments: &[usize],
    ) -> Option<Self> {
        if segments.get(1..4)? != [1, 1, 1] {
            return None;
        }
        let max_rows = op.int_attribute("split_k_max_rows")?;
        Some(Self {
            lhs: operands[1],
            rhs: operands[2],
            partials: operands[3],
            max_rows: u64::try_from(max_rows).ok()?,
        })
    }

    /// Slices of K: `partials`' leading size (static, by the verifier).
    pub fn slices(&self) -> u64 {
        self.partials
            .memref_type()
            .and_then(|ty| static_dim(ty, 0))
            .unwrap_or(1) as u64
    }

    /// `input = lhs @ rhs`, overwriting, for calls of at least `min_rows`
    /// rows where those are known (`MIN_ROWS_ATTR`).
    pub fn whole(&self, host: &mut Host<'c, '_, '_>, input: Value<'c, '_>, min_rows: Option<u64>) {
        let (c, l) = (host.context(), host.at.location);
        let matmul = host.at.put(linalg_named_op(
            c,
            l,
            "linalg.matmul",
            &[self.lhs, self.rhs],
            input,
        ));
        matmul.set_attribute_to(OVERWRITES_ATTR, Attribute::unit(c));
        if let Some(rows) = min_rows.and_then(|rows| i64::try_from(rows).ok()) {
            matmul.set_int_attribute(MIN_ROWS_ATTR, 64, rows);
        }
    }

    /// `partials[s] = lhs[:, s k : (s+1) k] @ rhs[s k : (s+1) k, :]` for
    /// each slice s of k = K / S columns, as one batched matmul over views:
    /// lhs as `S x rows x k` (strides k, K, 1) and rhs as `S x k x N`.
    /// `lamport_send`: the elements per channel of the Lamport kernel the
    /// slices feed (`LAMPORT_SEND_ATTR`), if they feed one.
    pub fn sliced(
        &self,
        host: &mut Host<'c, '_, '_>,
        lamport_send: Option<u64>,
    ) -> Result<(), PassError> {
        let (Some(lhs), Some(rhs)) = (self.lhs.memref_type(), self.rhs.memref_type()) else {
            return Err("has a matmul prologue whose operands are not memrefs".into());
        };
        let (Some(k_total), Some(columns)) = (static_dim(rhs, 0), static_dim(rhs, 1)) else {
            return Err("has a matmul prologue whose rhs is not static".into());
        };
        let slices = self.slices() as i64;
        let k = k_total / slices;
        let element = lhs.element();
        let (c, l) = (host.context(), host.at.location);
        let rows = static_dim(lhs, 0);
        // lhs as S x rows x k with strides (k, K, 1); rhs as S x k x N.
        let lhs_view = strided_memref_type(
            c,
            &[Some(slices), rows, Some(k)],
            element,
            (&[k, k_total, 1], 0),
            lhs.memory_space(),
        );
        let rhs_view = MemRefType::new(element, &[slices, k, columns], None, rhs.memory_space());
        let dynamic_rows: Vec<Value> = match rows {
            Some(_) => Vec::new(),
            None => vec![host.at.dim(self.lhs, 0)],
        };
        let lhs_slices =
            host.at
                .value(reinterpret_cast_op(c, l, self.lhs, lhs_view, &dynamic_rows));
        let rhs_slices = host
            .at
            .value(reinterpret_cast_op(c, l, self.rhs, rhs_view, &[]));
        let batched = host.at.put(linalg_named_op(
            c,
            l,
            "linalg.batch_matmul",
            &[lhs_slices, rhs_slices],
            self.partials,
        ));
        batched.set_attribute_to(OVERWRITES_ATTR, Attribute::unit(c));
        if let Some(elements) = lamport_send {
            let i64 = melior::ir::r#type::IntegerType::new(c, 64).into();
            batched.set_attribute_to(
                super::LAMPORT_SEND_ATTR,
                melior::ir::attribute::IntegerAttribute::new(i64, elements as i64).into(),
            );
        }
        Ok(())
    }
}
