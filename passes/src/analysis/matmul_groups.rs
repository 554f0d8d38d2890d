//! Which matmuls become generated kernels, and what fuses into them: the
//! ops of a block, read in order, taken apart into groups.
//!
//! - A **pair**: two `linalg.matmul`s that share their left operand, each
//!   right after a zero fill of its output, followed by an element-wise
//!   `linalg.generic` of the two products (SiLU(gate) * up) that is their
//!   only reader. Before them, optionally, the **prologue**: a zero fill of
//!   a row statistic, the row reduction (sum of squares) of `x` into it,
//!   and the element-wise generic of `x`, the statistic and column vectors
//!   that writes the left operand (RMSNorm); it fuses when the left
//!   operand and the statistic have no other reader.
//! - A **single** matmul: `linalg.batch_matmul {symm.overwrites}` over
//!   split-K slices (from `symm-mem-split-k`), or a zero fill followed by
//!   a `linalg.matmul`.
//!
//! Between the ops of a group only ops without side effects (views,
//! sizes, constants, allocations) may sit. Every refusal is a remark at
//! the op that says why the library keeps it.

use crate::analysis::{
    linalg::{
        OVERWRITES_ATTR, buffer_maps, captures_only_constants, has_default_maps, is_zero_constant,
        iterator_kinds,
    },
    row_reduction::match_row_reduction,
};
use crate::ir::builders::FloatOp;
use crate::ir::op_kind::{OpDialect, OpKind};
use crate::ir::scalar::Scalar;
use crate::ir::{Op, Val};
use crate::{PassError, Refusal};

/// What the output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    Bf16,
    F32,
}

impl Output {
    pub fn bytes(self) -> u64 {
        match self {
            Output::Bf16 => 2,
            Output::F32 => 4,
        }
    }
}

/// One parameter of an element function (a generic's block arguments).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    /// The element of `a` (prologue) or of product `i` (epilogue).
    Product(usize),
    /// The row's statistic (prologue).
    Statistic,
    /// Column operand `i` at the element's column (prologue).
    Column(usize),
    /// The generic's output element, which the body does not read.
    Unused(Scalar),
}

/// The prologue's ops and operands.
pub struct PrologueOps {
    pub fill: Op,
    pub reduction: Op,
    pub normalize: Op,
    /// `x`, the reduction's and the normalization's input.
    pub x: Val,
    pub init: Val,
    pub args: Vec<Arg>,
    pub columns: Vec<Val>,
}

/// A fusable group.
pub enum Group {
    Pair {
        prologue: Option<PrologueOps>,
        fills: [Op; 2],
        matmuls: [Op; 2],
        epilogue: Op,
        epilogue_args: Vec<Arg>,
    },
    Single {
        fill: Option<Op>,
        matmul: Op,
    },
}

impl Group {
    /// The group's ops in program order.
    pub fn ops(&self) -> Vec<Op> {
        match self {
            Group::Pair {
                prologue,
                fills,
                matmuls,
                epilogue,
                ..
            } => {
                let mut ops = Vec::new();
                if let Some(p) = prologue {
                    ops.extend([p.fill, p.reduction, p.normalize]);
                }
                ops.extend([fills[0], matmuls[0], fills[1], matmuls[1], *epilogue]);
                ops
            }
            Group::Single { fill, matmul } => fill.iter().copied().chain([*matmul]).collect(),
        }
    }
}

/// How a block is read: what did not fuse and why (remarks for the
/// caller), and whether it is read before symm-mem-plan, which removes the
/// deallocations of the buffers it plans (so a group it will see then is
/// one already, a deallocation between its ops aside).
#[derive(Default)]
pub struct Matching {
    pub notes: Vec<Refusal>,
    pub before_planning: bool,
}

/// Ops that may sit between a group's ops: no side effect on memory (and,
/// before planning, deallocations).
fn is_pure(op: Op, before_planning: bool) -> bool {
    if before_planning && op.isa(OpKind::MemrefDealloc) {
        return true;
    }
    matches!(op.dialect(), OpDialect::Arith | OpDialect::Index)
        || matches!(
            op.kind(),
            OpKind::MemrefView
                | OpKind::MemrefDim
                | OpKind::MemrefAlloc
                | OpKind::MemrefSubview
                | OpKind::MemrefCast
                | OpKind::MemrefReinterpretCast
                | OpKind::MemrefExpandShape
                | OpKind::MemrefCollapseShape
                | OpKind::MemrefExtractAlignedPointerAsIndex
                | OpKind::SymmPoolOf
                | OpKind::SymmGetGlobal
        )
}

/// The next op after `op` that is not pure.
fn next_effect(op: Op, before_planning: bool) -> Option<Op> {
    let mut next = op.next();
    while let Some(candidate) = next {
        if !is_pure(candidate, before_planning) {
            return Some(candidate);
        }
        next = candidate.next();
    }
    None
}

/// The op before `op` that is not pure.
fn previous_effect(op: Op, before_planning: bool) -> Option<Op> {
    let block = op.block()?;
    let ops = block.ops();
    let at = ops.iter().position(|o| *o == op)?;
    ops[..at]
        .iter()
        .rev()
        .copied()
        .find(|o| !is_pure(*o, before_planning))
}

/// Whether `op` is a `linalg.fill` of `buffer` with a zero constant.
fn zero_fill_of(op: Op, buffer: Val) -> bool {
    op.isa(OpKind::LinalgFill)
        && op.num_operands() == 2
        && op.operand(1) == buffer
        && is_zero_constant(op.operand(0))
}

/// Whether every reader or writer of `value` is one of `ops` (sizes and
/// deallocations aside).
fn only_used_by(value: Val, ops: &[Op]) -> bool {
    value.uses().iter().all(|(user, _)| {
        ops.contains(user) || user.isa(OpKind::MemrefDim) || user.isa(OpKind::MemrefDealloc)
    })
}

/// Whether `value` is a bf16 memref.
pub fn is_bf16(value: Val) -> bool {
    value.ty().element().scalar() == Some(Scalar::Bf16)
}

/// An element-wise generic of rank 2 whose maps are projections:
/// `(inputs, their dims, output)`, with the body's output argument unused.
/// An element-wise generic's inputs, the loops each reads, and its output.
type Elementwise = (Vec<Val>, Vec<Vec<usize>>, Val);

fn elementwise(op: Op) -> Result<Elementwise, PassError> {
    if !op.isa(OpKind::LinalgGeneric) {
        return Err("is not a linalg.generic".into());
    }
    let kinds = iterator_kinds(op).ok_or("has no iterator types")?;
    if kinds != [false, false] {
        return Err("is not element-wise over two loops".into());
    }
    let maps = buffer_maps(op)?;
    let operands = op.operands();
    let (output, inputs) = operands.split_last().ok_or("has no operands")?;
    let (out_map, in_maps) = maps.split_last().ok_or("has no maps")?;
    if out_map.1 != [0, 1] {
        return Err("writes its output through a map that is not the identity".into());
    }
    captures_only_constants(op)?;
    let body = crate::analysis::linalg::body(op)?;
    if !body.arg(body.num_args() - 1).uses().is_empty() {
        return Err("reads its output's old value".into());
    }
    Ok((
        inputs.to_vec(),
        in_maps.iter().map(|(_, dims)| dims.clone()).collect(),
        *output,
    ))
}

/// The group at `op` (a matmul), or why there is none (`Err`, with the op
/// to put the remark on). `Ok(None)`: not an anchor.
pub fn group_at(op: Op, m: &mut Matching) -> Result<Option<Group>, Refusal> {
    let before = m.before_planning;
    if (op.isa(OpKind::LinalgMatmul) || op.isa(OpKind::LinalgBatchMatmul)) && !has_default_maps(op)
    {
        return Err((
            op,
            "reads or writes through transposed or broadcast indexing maps; the generated \
             kernels take row-major operands as written"
                .into(),
        ));
    }
    if op.isa(OpKind::LinalgBatchMatmul) {
        if op.attr(OVERWRITES_ATTR).is_none() {
            return Err((
                op,
                "accumulates into its output; the generated kernel overwrites".into(),
            ));
        }
        return Ok(Some(Group::Single {
            fill: None,
            matmul: op,
        }));
    }
    if !op.isa(OpKind::LinalgMatmul) || op.num_operands() != 3 {
        return Ok(None);
    }
    let (a, g) = (op.operand(0), op.operand(2));
    if op.attr(OVERWRITES_ATTR).is_some() {
        return Ok(Some(Group::Single {
            fill: None,
            matmul: op,
        }));
    }
    let fill0 = previous_effect(op, before).filter(|f| zero_fill_of(*f, g));
    let Some(fill0) = fill0 else {
        return Err((
            op,
            "adds to its output (no zero fill right before it); the generated kernel overwrites"
                .into(),
        ));
    };
    // A pair: the sibling matmul and the epilogue.
    let sibling = next_effect(op, before)
        .filter(|f| f.isa(OpKind::LinalgFill))
        .and_then(|fill1| {
            let matmul1 = next_effect(fill1, before)?;
            (matmul1.isa(OpKind::LinalgMatmul)
                && has_default_maps(matmul1)
                && matmul1.num_operands() == 3
                && matmul1.operand(0) == a
                && zero_fill_of(fill1, matmul1.operand(2)))
            .then_some((fill1, matmul1))
        });
    let Some((fill1, matmul1)) = sibling else {
        return Ok(Some(Group::Single {
            fill: Some(fill0),
            matmul: op,
        }));
    };
    let single = Group::Single {
        fill: Some(fill0),
        matmul: op,
    };
    match pair_after(op, [fill0, fill1], matmul1, (a, g), m) {
        Ok(pair) => Ok(Some(pair)),
        // The pair does not fuse: the first matmul takes a kernel alone
        // (the second is an anchor of its own), with the reason as a note.
        Err(note) => {
            m.notes.push(note);
            Ok(Some(single))
        }
    }
}

/// The pair of `op` (after its zero fill `fill0`) and `matmul1` (after
/// `fill1`), with its epilogue and, if it fuses, its prologue.
fn pair_after(
    op: Op,
    [fill0, fill1]: [Op; 2],
    matmul1: Op,
    (a, g): (Val, Val),
    m: &mut Matching,
) -> Result<Group, Refusal> {
    let before = m.before_planning;
    let u = matmul1.operand(2);
    let epilogue = next_effect(matmul1, before).ok_or((
        matmul1,
        "not fused as a matmul pair: no element-wise epilogue of both products follows".into(),
    ))?;
    let (inputs, dims, _out) = elementwise(epilogue).map_err(|why| {
        (
            epilogue,
            format!("not fused as the matmul pair's epilogue: it {why}").into(),
        )
    })?;
    if inputs.len() != 2 || dims.iter().any(|d| d != &[0, 1]) {
        return Err((
            epilogue,
            "not fused as the matmul pair's epilogue: it does not read exactly the two products element by element".into(),
        ));
    }
    let mut epilogue_args = Vec::new();
    for input in &inputs {
        if *input == g {
            epilogue_args.push(Arg::Product(0));
        } else if *input == u {
            epilogue_args.push(Arg::Product(1));
        } else {
            return Err((
                epilogue,
                "not fused as the matmul pair's epilogue: it reads an operand other than the two products".into(),
            ));
        }
    }
    let Some(out_type) = epilogue
        .operands()
        .last()
        .and_then(|v| v.ty().element().scalar())
        .filter(|s| matches!(s, Scalar::Bf16 | Scalar::F32))
    else {
        return Err((
            epilogue,
            "not fused as the matmul pair's epilogue: its output is neither bf16 nor f32".into(),
        ));
    };
    epilogue_args.push(Arg::Unused(out_type));
    let pair_ops = [fill0, op, fill1, matmul1, epilogue];
    if !only_used_by(g, &pair_ops) || !only_used_by(u, &pair_ops) {
        return Err((
            epilogue,
            "not fused: the matmul pair's products are read elsewhere too".into(),
        ));
    }
    let prologue = match prologue_before(fill0, a, &[op, matmul1], before) {
        Ok(p) => p,
        Err((at, why)) => {
            m.notes.push((
                at,
                format!("not fused as the matmul pair's prologue: {why}").into(),
            ));
            None
        }
    };

    Ok(Group::Pair {
        prologue,
        fills: [fill0, fill1],
        matmuls: [op, matmul1],
        epilogue,
        epilogue_args,
    })
}

/// The RMSNorm-style prologue that writes `a` right before `first` (the
/// pair's first fill), if there is one.
fn prologue_before(
    first: Op,
    a: Val,
    matmuls: &[Op],
    before: bool,
) -> Result<Option<PrologueOps>, Refusal> {
    let Some(normalize) = previous_effect(first, before) else {
        return Ok(None);
    };
    if !normalize.isa(OpKind::LinalgGeneric) || normalize.operands().last() != Some(&a) {
        return Ok(None);
    }
    let (inputs, dims, _) =
        elementwise(normalize).map_err(|why| (normalize, format!("it {why}").into()))?;
    let Some(reduction) = previous_effect(normalize, before) else {
        return Ok(None);
    };
    let Some(r) = match_row_reduction(crate::ir::bridge::operation(reduction))
        .map_err(|why| (reduction, why))?
    else {
        return Ok(None);
    };
    captures_only_constants(reduction).map_err(|why| (reduction, why.into()))?;
    if r.combiner.op != FloatOp::Add {
        return Err((reduction, "the row statistic is not a sum".into()));
    }
    let (x, statistic) = (
        reduction.operand(0),
        reduction.operand(reduction.num_operands() - 1),
    );
    if reduction.num_operands() != 2
        || !is_bf16(x)
        || statistic.ty().element().scalar() != Some(Scalar::F32)
    {
        return Err((
            reduction,
            "the row statistic is not an f32 sum over one bf16 input".into(),
        ));
    }
    let Some(fill) = previous_effect(reduction, before).filter(|f| {
        f.isa(OpKind::LinalgFill) && f.num_operands() == 2 && f.operand(1) == statistic
    }) else {
        return Err((
            reduction,
            "the row statistic is not filled right before it".into(),
        ));
    };
    let init = fill.operand(0);
    if init.ty().scalar() != Some(Scalar::F32) {
        return Err((fill, "the row statistic's initial value is not f32".into()));
    }
    let mut args = Vec::new();
    let mut columns = Vec::new();
    for (input, dims) in inputs.iter().zip(&dims) {
        match dims.as_slice() {
            [0, 1] if *input == x => args.push(Arg::Product(0)),
            [0] if *input == statistic => args.push(Arg::Statistic),
            [1] => {
                let element = input.ty().element();
                if !matches!(element.scalar(), Some(Scalar::Bf16 | Scalar::F32)) {
                    return Err((
                        normalize,
                        format!("a column operand of type {}", element.print()).into(),
                    ));
                }
                args.push(Arg::Column(columns.len()));
                columns.push(*input);
            }
            _ => {
                return Err((
                    normalize,
                    "reads an operand other than x, its row statistic and column vectors".into(),
                ));
            }
        }
    }
    let Some(a_element) = a.ty().element().scalar() else {
        return Err((
            normalize,
            "writes an element type the kernels do not take".into(),
        ));
    };
    args.push(Arg::Unused(a_element));
    let ops = [fill, reduction, normalize];
    let mut readers_of_a = matmuls.to_vec();
    readers_of_a.push(normalize);
    if !only_used_by(statistic, &ops) || !only_used_by(a, &readers_of_a) {
        return Err((
            normalize,
            "its output or the row statistic is read elsewhere too".into(),
        ));
    }
    Ok(Some(PrologueOps {
        fill,
        reduction,
        normalize,
        x,
        init,
        args,
        columns,
    }))
}

/// The output's element type as the kernel writes it.
pub fn output_of(value: Val) -> Option<Output> {
    match value.ty().element().scalar()? {
        Scalar::Bf16 => Some(Output::Bf16),
        Scalar::F32 => Some(Output::F32),
        _ => None,
    }
}

/// The buffers a group reads and writes: the generated kernel reads its
/// inputs while it writes its output, and a measured choice runs the group
/// more than once, so none of them may share memory with another
/// (symm-mem-plan keeps them all live across the whole group).
pub fn buffers(group: &Group) -> Vec<Val> {
    let mut values = Vec::new();
    for op in group.ops() {
        for operand in op.operands() {
            if operand.ty().is_memref() && !values.contains(&operand) {
                values.push(operand);
            }
        }
    }
    values
}
