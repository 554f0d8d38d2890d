//! `symm-linalg-elementwise-to-gpu`: an element-wise `linalg.generic` (every
//! loop parallel, on buffers) becomes a `gpu.launch` in which each thread
//! handles one 16-byte vector of the output's last dimension: eight bf16 or
//! f16 lanes, four f32. Operands that span the last loop are read with one
//! `vector.load` each, operands that do not (a row statistic, a scalar) with
//! one scalar load, and the result is written with one `vector.store`; the
//! body is copied once per lane between them. Upstream's lowering
//! (`convert-linalg-to-parallel-loops`) gives one thread per element and
//! 2-byte accesses for bf16, which left the SiLU and RMSNorm kernels of a
//! Llama MLP at a fraction of the memory bandwidth.
//!
//! Vector accesses need every vector operand 16-byte aligned at each row:
//! its address, offset and outer strides (in bytes) multiples of 16, and
//! the last dimension a multiple of the lanes. Static facts are checked
//! here; the rest is checked on the host at run time, and an operand that
//! fails it (a view at an odd offset) runs the generic as before, in the
//! `else` branch, so no input is misread.
//!
//! What qualifies: buffer semantics, one output with the identity map, input
//! maps that are projections keeping the last loop last when they read it,
//! unit stride along the last dimension, 1/2/4/8-byte elements, and a body
//! without regions or `linalg.index`. Other generics keep the upstream
//! lowering, with a remark saying why when they are element-wise.

use crate::PassError;
use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    analysis::linalg::{generic_body, generic_maps, loop_kinds},
    gpu_codegen::linalg_gpu::{self, Mapping},
    ir::builders::{CmpI, IntOp},
    ir::melior_ext::{OperationExt, ValueExt, element_bytes, strides_and_offset, value_key},
    ir::typed_builder::{Inserter, static_dim},
};
use melior::{
    Context,
    ir::{
        BlockLike, OperationRef, Type, Value,
        operation::OperationLike,
        r#type::{MemRefType, ShapedTypeLike},
    },
};
use std::collections::HashMap;
use symm_dialects::emit_remark;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ElementwiseToGpu>(
    c"symm-linalg-elementwise-to-gpu",
    c"SymmLinalgElementwiseToGpu",
    c"Lower element-wise linalg.generic ops to GPU kernels with 16-byte vector accesses",
    c"func.func",
    &[],
    file!(),
);

pub struct ElementwiseToGpu;

/// Threads per block.
pub const THREADS: u64 = 256;

/// Bytes one thread reads from each vector operand at a time.
pub const VECTOR_BYTES: u64 = 16;

/// Lanes per thread for operands of these element sizes: 16 bytes of the
/// narrowest (eight bf16 lanes, four f32), at most 8 and at least 1.
pub fn lanes(element_bytes: &[u64]) -> u64 {
    let narrowest = element_bytes.iter().copied().min().unwrap_or(1).max(1);
    (VECTOR_BYTES / narrowest).clamp(1, 8)
}

/// How the kernel reads one input of the generic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Spans the last loop (as its last dimension): a vector per thread.
    /// The loops each of its dimensions reads.
    Vector(Vec<usize>),
    /// Does not read the last loop: one element per thread.
    Broadcast(Vec<usize>),
    /// Not a memref (a fill's scalar): used as it is.
    Value,
}

/// Each input's access, from its map's dims (`None` for a non-memref
/// input); `Err` when an input reads the last loop other than last.
pub fn accesses(input_dims: &[Option<Vec<usize>>], loops: usize) -> Result<Vec<Access>, PassError> {
    let last = loops - 1;
    input_dims
        .iter()
        .map(|dims| match dims {
            None => Ok(Access::Value),
            Some(dims) if dims.last() == Some(&last) => Ok(Access::Vector(dims.clone())),
            Some(dims) if dims.contains(&last) => {
                Err("reads the last loop through a dimension other than its last".into())
            }
            Some(dims) => Ok(Access::Broadcast(dims.clone())),
        })
        .collect()
}

/// A generic this pass lowers, taken apart.
pub(crate) struct Elementwise<'c, 'a> {
    pub(crate) inputs: Vec<Value<'c, 'a>>,
    pub(crate) output: Value<'c, 'a>,
    pub(crate) accesses: Vec<Access>,
    pub(crate) loops: usize,
    pub(crate) lanes: u64,
}

/// The memrefs read or written a vector at a time: the inputs read as
/// vectors, and the output.
fn vector_operands<'c, 'a>(
    inputs: &[Value<'c, 'a>],
    accesses: &[Access],
    output: Value<'c, 'a>,
) -> Vec<Value<'c, 'a>> {
    inputs
        .iter()
        .zip(accesses)
        .filter(|(_, a)| matches!(a, Access::Vector(_)))
        .map(|(v, _)| *v)
        .chain(std::iter::once(output))
        .collect()
}

/// The memref type of `value`, which the match has checked it has.
pub(crate) fn memref_of<'c>(value: Value<'c, '_>) -> MemRefType<'c> {
    value
        .memref_type()
        .expect("internal: checked to be a memref")
}

/// Whether a memref type's last dimension has unit stride (`None`: not
/// known statically).
pub(crate) fn unit_last_stride(ty: MemRefType) -> bool {
    strides_and_offset(ty).is_some_and(|(strides, _)| strides.last().is_none_or(|s| *s == Some(1)))
}

/// The lanes for reading each of `values` a 16-byte vector at a time along
/// its last dimension, whose static extent is `last` (`None`: known at run
/// time only); `Err` saying why when an element size or a stride does not
/// allow it, or `last` does not hold whole vectors.
pub(crate) fn vector_lanes(values: &[Value], last: Option<u64>) -> Result<u64, PassError> {
    let mut element_bytes_of = Vec::new();
    for value in values {
        let ty = memref_of(*value);
        let bytes = element_bytes(ty.element())
            .filter(|b| matches!(b, 1 | 2 | 4 | 8))
            .ok_or_else(|| format!("has {} elements", ty.element()))?;
        if !unit_last_stride(ty) {
            return Err(format!("has an operand ({ty}) strided along its last dimension").into());
        }
        element_bytes_of.push(bytes);
    }
    let lanes = lanes(&element_bytes_of);
    match last {
        Some(last) if !last.is_multiple_of(lanes) => {
            Err(format!("has a last dimension of {last}, not a multiple of {lanes} lanes").into())
        }
        _ => Ok(lanes),
    }
}

/// Why `op` is not an element-wise generic this pass lowers (`Err`), or
/// `Ok(None)` when it is not element-wise at all.
pub(crate) fn match_elementwise<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Result<Option<Elementwise<'c, 'a>>, PassError> {
    let Some(reduced) = loop_kinds(op) else {
        return Ok(None);
    };
    if reduced.iter().any(|r| *r) {
        return Ok(None);
    }
    let loops = reduced.len();
    if loops == 0 {
        return Err("has no loops".into());
    }
    let maps = generic_maps(op)?;
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let (output_map, input_maps) = maps.split_last().ok_or("has no output")?;
    if *output_map != (loops, (0..loops).collect()) {
        return Err("has an output map that is not the identity".into());
    }
    let output = operands[operands.len() - 1];
    let inputs = operands[..operands.len() - 1].to_vec();
    let input_dims: Vec<Option<Vec<usize>>> = inputs
        .iter()
        .zip(input_maps)
        .map(|(input, (_, dims))| input.memref_type().map(|_| dims.clone()))
        .collect();
    let accesses = accesses(&input_dims, loops)?;
    let Some(output_ty) = output.memref_type() else {
        return Err("writes into something other than a memref".into());
    };
    let last = static_dim(output_ty, output_ty.rank() - 1).map(|l| l as u64);
    let lanes = vector_lanes(&vector_operands(&inputs, &accesses, output), last)?;
    generic_body(op)?;
    Ok(Some(Elementwise {
        inputs,
        output,
        accesses,
        loops,
        lanes,
    }))
}

/// On the host: whether every vector operand is 16-byte aligned at each of
/// its rows and the last dimension holds whole vectors.
pub(crate) fn aligned<'c, 'a>(
    host: &mut Inserter<'c, 'a>,
    e: &Elementwise<'c, 'a>,
    last: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let values = vector_operands(&e.inputs, &e.accesses, e.output);
    aligned_values(host, &values, e.lanes, last)
}

/// On the host: whether each of `values` (memrefs with unit stride along
/// their last dimension) is 16-byte aligned at each of its rows, and
/// `last` (the extent of that dimension) a multiple of `lanes` (at most 8).
pub(crate) fn aligned_values<'c, 'a>(
    host: &mut Inserter<'c, 'a>,
    values: &[Value<'c, 'a>],
    lanes: u64,
    last: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let lanes = host.index(lanes as i64);
    let rest = host.int_op(IntOp::RemU, last, lanes);
    // OR of every byte address and outer stride: aligned when its low 4
    // bits are clear.
    let mut bits = rest;
    for value in values {
        let ty = memref_of(*value);
        let rank = ty.rank();
        let bytes = element_bytes(ty.element()).expect("checked by the match");
        let bytes = host.index(bytes as i64);
        let metadata = host.strided_metadata(*value);
        let result = |i: usize| -> Value<'c, 'a> {
            metadata
                .result(i)
                .expect("internal: the metadata's results")
                .into()
        };
        let offset = result(1);
        let pointer = host.aligned_pointer(*value);
        let offset_bytes = host.int_op(IntOp::Mul, offset, bytes);
        let address = host.int_op(IntOp::Add, pointer, offset_bytes);
        bits = host.int_op(IntOp::Or, bits, address);
        for d in 0..rank.saturating_sub(1) {
            let stride_bytes = host.int_op(IntOp::Mul, result(2 + rank + d), bytes);
            bits = host.int_op(IntOp::Or, bits, stride_bytes);
        }
    }
    // The lane remainder is below 16 only when it is 0 (lanes <= 8), so
    // one mask checks it with the addresses: bits % 16 == 0.
    let mask = host.index((VECTOR_BYTES - 1) as i64);
    let low = host.int_op(IntOp::And, bits, mask);
    let zero = host.index(0);
    host.cmpi(CmpI::Eq, low, zero)
}

/// `vector<lanes x element>` read from `memref` at `at` (16-byte aligned).
pub(crate) fn vector_load<'c, 'a>(
    t: &mut Inserter<'c, 'a>,
    memref: Value<'c, 'a>,
    at: &[Value<'c, 'a>],
    lanes: u64,
) -> Value<'c, 'a> {
    let ty = Type::vector(&[lanes], memref_of(memref).element());
    t.vector_load(memref, at, ty, VECTOR_BYTES as i64)
}

fn lower<'c, 'a>(context: &'c Context, op: OperationRef<'c, 'a>, e: &Elementwise<'c, 'a>) {
    let location = op.location();
    let Some(mut host) = Inserter::before(context, op) else {
        return;
    };

    let extents: Vec<Value> = (0..e.loops).map(|d| host.dim(e.output, d)).collect();
    let (last, outer) = extents.split_last().expect("at least one loop");
    let condition = aligned(&mut host, e, *last);
    // The generic itself is the fallback.
    let mut host = linalg_gpu::unless_fallback(&mut host, condition, &[op]);

    // Work: rows x vectors per row, one vector per thread.
    let lanes = host.index(e.lanes as i64);
    let per_row = host.int_op(IntOp::DivU, *last, lanes);
    let mut vectors = per_row;
    for extent in outer {
        vectors = host.int_op(IntOp::Mul, vectors, *extent);
    }
    let threads = host.index(THREADS as i64);
    let blocks = host.int_op(IntOp::CeilDivU, vectors, threads);
    let launch = linalg_gpu::launch(&mut host, blocks, threads);

    let mut kernel = Inserter::at_start(context, location, launch.body);
    let first = kernel.int_op(IntOp::Mul, launch.block_x, launch.block_dim_x);
    let id = kernel.int_op(IntOp::Add, first, launch.thread_x);
    let inside = kernel.cmpi(CmpI::Ult, id, vectors);
    let guard = kernel.if_then(inside, false);
    kernel.gpu_terminator();

    let guard_yield = linalg_gpu::branch_yield(guard, 0);
    let Some(mut t) = Inserter::before_at(context, location, guard_yield) else {
        return;
    };
    let row = t.int_op(IntOp::DivU, id, per_row);
    let vector_in_row = t.int_op(IntOp::RemU, id, per_row);
    let column = t.int_op(IntOp::Mul, vector_in_row, lanes);
    let mut loop_ids = linalg_gpu::unflatten(&mut t, row, outer);
    loop_ids.push(column);
    vector_step(&mut t, op, e, &loop_ids, &HashMap::new());
}

/// One thread's step of the generic `op` at `loop_ids` (the last one the
/// first of `e.lanes` columns): each input loaded once (a vector, or one
/// element), the body copied per lane, the output stored as one vector.
/// `given`: inputs whose element is already known (by input position),
/// used for every lane instead of a load.
pub(crate) fn vector_step<'c, 'a>(
    t: &mut Inserter<'c, 'a>,
    op: OperationRef<'c, 'a>,
    e: &Elementwise<'c, 'a>,
    loop_ids: &[Value<'c, 'a>],
    given: &HashMap<usize, Value<'c, 'a>>,
) {
    let indices =
        |dims: &[usize]| -> Vec<Value<'c, 'a>> { dims.iter().map(|d| loop_ids[*d]).collect() };
    // Every input once, before the lanes.
    enum Loaded<'c, 'a> {
        Vector(Value<'c, 'a>),
        Scalar(Value<'c, 'a>),
    }
    let body = op.first_block().expect("checked by the match");
    let mut loaded: Vec<Loaded> = Vec::new();
    for (i, (input, access)) in e.inputs.iter().zip(&e.accesses).enumerate() {
        loaded.push(match (given.get(&i), access) {
            (Some(value), _) => Loaded::Scalar(*value),
            (None, Access::Vector(dims)) => {
                Loaded::Vector(vector_load(t, *input, &indices(dims), e.lanes))
            }
            (None, Access::Broadcast(dims)) => Loaded::Scalar(t.load(*input, &indices(dims))),
            (None, Access::Value) => Loaded::Scalar(*input),
        });
    }
    let arguments: Vec<Value<'c, 'a>> = (0..body.argument_count())
        .filter_map(|i| body.argument(i).ok().map(Into::into))
        .collect();
    let output_arg = arguments[arguments.len() - 1];
    let all: Vec<usize> = (0..e.loops).collect();
    let output_at = indices(&all);
    if !output_arg.uses().is_empty() {
        loaded.push(Loaded::Vector(vector_load(
            t, e.output, &output_at, e.lanes,
        )));
    }
    let out_element = memref_of(e.output).element();
    let mut results = Vec::new();
    for lane in 0..e.lanes {
        let mut mapping: Mapping = HashMap::new();
        for (i, value) in loaded.iter().enumerate() {
            let element = match value {
                Loaded::Scalar(v) => *v,
                Loaded::Vector(v) => t.vector_extract(*v, lane as i64),
            };
            mapping.insert(value_key(arguments[i]), element);
        }
        let yielded = linalg_gpu::inline_body(t, body, &mut mapping, None);
        results.push(yielded[0]);
    }
    let out_ty = Type::vector(&[e.lanes], out_element);
    let vector = t.vector_from_elements(&results, out_ty);
    t.vector_store(vector, e.output, &output_at, VECTOR_BYTES as i64);
}

impl TypedPass for ElementwiseToGpu {
    fn run_typed<'c>(
        context: &'c Context,
        function: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        for op in linalg_gpu::host_generics(function) {
            match match_elementwise(op) {
                Ok(Some(elementwise)) => lower(context, op, &elementwise),
                Ok(None) => {}
                Err(why) => emit_remark(
                    op.location(),
                    &format!("element-wise generic kept on scalar accesses: it {why}"),
                ),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_fill_sixteen_bytes_of_the_narrowest_element() {
        assert_eq!(lanes(&[2, 2, 2]), 8);
        assert_eq!(lanes(&[4]), 4);
        assert_eq!(lanes(&[2, 4]), 8);
        assert_eq!(lanes(&[1]), 8);
        assert_eq!(lanes(&[8]), 2);
        assert_eq!(lanes(&[]), 8);
    }

    #[test]
    fn inputs_read_vectors_only_along_their_last_dimension() {
        // x: (d0, d1), a row statistic: (d0), a weight: (d1), a fill value.
        let dims = vec![Some(vec![0, 1]), Some(vec![0]), Some(vec![1]), None];
        assert_eq!(
            accesses(&dims, 2),
            Ok(vec![
                Access::Vector(vec![0, 1]),
                Access::Broadcast(vec![0]),
                Access::Vector(vec![1]),
                Access::Value,
            ])
        );
        // A transposed input cannot be read a vector at a time.
        assert!(accesses(&[Some(vec![1, 0])], 2).is_err());
    }
}
