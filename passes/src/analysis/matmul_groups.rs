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
//!   a `linalg.matmul`. A lone `linalg.matmul` (no sibling sharing its
//!   left operand) takes, as a pair does, the RMSNorm-style prologue that
//!   writes its left operand (a QKV projection after the input norm) and
//!   an element-wise generic of its product alone that is the product's
//!   only reader (the activation of a non-gated MLP: GELU, ReLU).
//!
//! Between the ops of a group only ops without side effects (views,
//! sizes, constants, allocations) may sit. Every refusal is a remark at
//! the op that says why the library keeps it.

use crate::analysis::{
    linalg::{
        OVERWRITES_ATTR, body_captures_only_constants, default_maps, generic_body, generic_maps,
        loop_kinds, matmul_layout, zero_constant,
    },
    read_after::is_view_of,
    row_reduction::match_row_reduction,
};
use crate::ir::builders::FloatOp;
use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt, op_key, type_text, value_key};
use crate::ir::op_kind::{OpDialect, OpKind};
use crate::ir::scalar::Scalar;
use crate::{PassError, Refusal};
use melior::ir::{
    BlockLike, OperationRef, Type, Value, ValueLike, operation::OperationLike,
    r#type::ShapedTypeLike,
};
use symm_protocol::abi::LayoutCode;

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
pub struct PrologueOps<'c, 'a> {
    pub fill: OperationRef<'c, 'a>,
    pub reduction: OperationRef<'c, 'a>,
    pub normalize: OperationRef<'c, 'a>,
    /// `x`, the reduction's and the normalization's input.
    pub x: Value<'c, 'a>,
    pub init: Value<'c, 'a>,
    pub args: Vec<Arg>,
    pub columns: Vec<Value<'c, 'a>>,
}

impl<'c, 'a> PrologueOps<'c, 'a> {
    /// The prologue's ops in program order.
    pub fn ops(&self) -> [OperationRef<'c, 'a>; 3] {
        [self.fill, self.reduction, self.normalize]
    }
}

/// A fusable group.
pub enum Group<'c, 'a> {
    Pair {
        prologue: Option<PrologueOps<'c, 'a>>,
        fills: [OperationRef<'c, 'a>; 2],
        matmuls: [OperationRef<'c, 'a>; 2],
        epilogue: OperationRef<'c, 'a>,
        epilogue_args: Vec<Arg>,
    },
    Single {
        fill: Option<OperationRef<'c, 'a>>,
        matmul: OperationRef<'c, 'a>,
        /// A lone matmul's fused neighbours (none for split-K slices).
        prologue: Option<PrologueOps<'c, 'a>>,
        epilogue: Option<EpilogueOps<'c, 'a>>,
    },
}

/// A lone matmul's element-wise epilogue: the generic and its parameters.
pub struct EpilogueOps<'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub args: Vec<Arg>,
}

impl<'c, 'a> Group<'c, 'a> {
    /// The group's ops in program order.
    pub fn ops(&self) -> Vec<OperationRef<'c, 'a>> {
        match self {
            Group::Pair {
                prologue,
                fills,
                matmuls,
                epilogue,
                ..
            } => {
                let mut ops: Vec<_> = prologue.iter().flat_map(PrologueOps::ops).collect();
                ops.extend([fills[0], matmuls[0], fills[1], matmuls[1], *epilogue]);
                ops
            }
            Group::Single {
                fill,
                matmul,
                prologue,
                epilogue,
            } => {
                let mut ops: Vec<_> = prologue.iter().flat_map(PrologueOps::ops).collect();
                ops.extend(fill.iter().copied().chain([*matmul]));
                ops.extend(epilogue.iter().map(|e| e.op));
                ops
            }
        }
    }
}

/// How a block is read: what did not fuse and why (remarks for the
/// caller), and whether it is read before symm-mem-plan, which removes the
/// deallocations of the buffers it plans (so a group it will see then is
/// one already, a deallocation between its ops aside).
#[derive(Default)]
pub struct Matching<'c, 'a> {
    pub notes: Vec<Refusal<'c, 'a>>,
    pub before_planning: bool,
}

/// Ops that may sit between a group's ops: no side effect on memory (and,
/// before planning, deallocations).
fn is_pure(op: OperationRef, before_planning: bool) -> bool {
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
fn next_effect<'c, 'a>(
    op: OperationRef<'c, 'a>,
    before_planning: bool,
) -> Option<OperationRef<'c, 'a>> {
    std::iter::successors(op.next_in_block(), |o| o.next_in_block())
        .find(|candidate| !is_pure(*candidate, before_planning))
}

/// The op before `op` that is not pure.
pub(crate) fn previous_effect<'c, 'a>(
    op: OperationRef<'c, 'a>,
    before_planning: bool,
) -> Option<OperationRef<'c, 'a>> {
    // melior's `previous_in_block` is not in the C API: read the block.
    let ops = op.block()?.ops();
    let at = ops.iter().position(|o| op_key(*o) == op_key(op))?;
    ops[..at]
        .iter()
        .rev()
        .copied()
        .find(|candidate| !is_pure(*candidate, before_planning))
}

/// Operand `index` of `op`, if it has one.
fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Option<Value<'c, 'a>> {
    op.operand(index).ok()
}

/// Whether two values are one.
fn same(a: Value, b: Value) -> bool {
    value_key(a) == value_key(b)
}

/// Whether `op` is a `linalg.fill` of `buffer` with a zero constant.
fn zero_fill_of(op: OperationRef, buffer: Value) -> bool {
    op.isa(OpKind::LinalgFill)
        && op.operand_count() == 2
        && operand(op, 1).is_some_and(|b| same(b, buffer))
        && operand(op, 0).is_some_and(zero_constant)
}

/// Whether every reader or writer of `value` is one of `ops` (sizes and
/// deallocations aside).
fn only_used_by(value: Value, ops: &[OperationRef]) -> bool {
    value.uses().iter().all(|(user, _)| {
        ops.iter().any(|op| op_key(*op) == op_key(*user))
            || user.isa(OpKind::MemrefDim)
            || user.isa(OpKind::MemrefDealloc)
    })
}

/// The scalar of the elements of memref `value` (`None` for another value).
fn element_scalar(value: Value) -> Option<Scalar> {
    Scalar::of_type(value.memref_type()?.element())
}

/// Whether `value` is a bf16 memref.
pub fn is_bf16(value: Value) -> bool {
    element_scalar(value) == Some(Scalar::Bf16)
}

/// An element-wise generic's inputs, the loops each reads, and its output.
type Elementwise<'c, 'a> = (Vec<Value<'c, 'a>>, Vec<Vec<usize>>, Value<'c, 'a>);

/// An element-wise generic of rank 2 whose maps are projections:
/// `(inputs, their dims, output)`, with the body's output argument unused.
fn elementwise<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Elementwise<'c, 'a>, PassError> {
    if !op.isa(OpKind::LinalgGeneric) {
        return Err("is not a linalg.generic".into());
    }
    let kinds = loop_kinds(op).ok_or("has no iterator types")?;
    if kinds != [false, false] {
        return Err("is not element-wise over two loops".into());
    }
    let maps = generic_maps(op)?;
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let (output, inputs) = operands.split_last().ok_or("has no operands")?;
    let (out_map, in_maps) = maps.split_last().ok_or("has no maps")?;
    if out_map.1 != [0, 1] {
        return Err("writes its output through a map that is not the identity".into());
    }
    body_captures_only_constants(op)?;
    let body = generic_body(op)?;
    let last = body
        .argument_count()
        .checked_sub(1)
        .ok_or("has no block arguments")?;
    let output_argument = body.argument(last).map_err(|_| "has no block arguments")?;
    if !Value::from(output_argument).uses().is_empty() {
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
pub fn group_at<'c, 'a>(
    op: OperationRef<'c, 'a>,
    m: &mut Matching<'c, 'a>,
) -> Result<Option<Group<'c, 'a>>, Refusal<'c, 'a>> {
    let before = m.before_planning;
    // A 2-D matmul may read its weight stored n x k (nn.Linear's layout):
    // its GEMV reads that (`SkinnyMatmul::weight_transposed`).
    let linear_weight =
        op.isa(OpKind::LinalgMatmul) && matmul_layout(op) == Some(LayoutCode::TransposedB);
    if (op.isa(OpKind::LinalgMatmul) || op.isa(OpKind::LinalgBatchMatmul))
        && !default_maps(op)
        && !linear_weight
    {
        let why = match matmul_layout(op) {
            Some(layout) => format!(
                "reads its inputs {}; the generated kernels read a as m x k and b as k x n, \
                 row-major",
                layout.text()
            ),
            None => "reads or writes through broadcast or transposed-output maps".to_owned(),
        };
        return Err((op, why.into()));
    }
    if op.isa(OpKind::LinalgBatchMatmul) {
        if op.attribute_of(OVERWRITES_ATTR).is_none() {
            return Err((
                op,
                "accumulates into its output; the generated kernel overwrites".into(),
            ));
        }
        return Ok(Some(Group::Single {
            fill: None,
            matmul: op,
            prologue: None,
            epilogue: None,
        }));
    }
    if !op.isa(OpKind::LinalgMatmul) || op.operand_count() != 3 {
        return Ok(None);
    }
    let (Some(a), Some(g)) = (operand(op, 0), operand(op, 2)) else {
        return Ok(None);
    };
    if op.attribute_of(OVERWRITES_ATTR).is_some() {
        return Ok(Some(Group::Single {
            fill: None,
            matmul: op,
            prologue: None,
            epilogue: None,
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
                && matmul_layout(matmul1) == matmul_layout(op)
                && matmul1.operand_count() == 3
                && operand(matmul1, 0).is_some_and(|a1| same(a1, a))
                && operand(matmul1, 2).is_some_and(|u| zero_fill_of(fill1, u)))
            .then_some((fill1, matmul1))
        });
    let Some((fill1, matmul1)) = sibling else {
        let (prologue, epilogue) = lone_fusions(op, fill0, (a, g), m);
        return Ok(Some(Group::Single {
            fill: Some(fill0),
            matmul: op,
            prologue,
            epilogue,
        }));
    };
    let single = Group::Single {
        fill: Some(fill0),
        matmul: op,
        prologue: None,
        epilogue: None,
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

/// What fuses into a lone matmul `op` (after its zero fill `fill`): the
/// RMSNorm-style prologue right before it that writes its left operand
/// `a`, and the element-wise generic right after it that reads its
/// product alone; a note at each candidate that does not fuse says why.
/// The second matmul of a pair that did not fuse (a matmul of the same
/// left operand right before its fill) takes neither: the pair's note
/// already says why.
fn lone_fusions<'c, 'a>(
    op: OperationRef<'c, 'a>,
    fill: OperationRef<'c, 'a>,
    (a, product): (Value<'c, 'a>, Value<'c, 'a>),
    m: &mut Matching<'c, 'a>,
) -> (Option<PrologueOps<'c, 'a>>, Option<EpilogueOps<'c, 'a>>) {
    let before = m.before_planning;
    let second_of_pair = previous_effect(fill, before).is_some_and(|p| {
        p.isa(OpKind::LinalgMatmul) && operand(p, 0).is_some_and(|a0| same(a0, a))
    });
    if second_of_pair {
        return (None, None);
    }
    let epilogue = next_effect(op, before)
        .filter(|next| next.isa(OpKind::LinalgGeneric))
        .and_then(|next| match lone_epilogue(next, fill, op, product) {
            Ok(epilogue) => epilogue,
            Err(why) => {
                m.notes.push((
                    next,
                    format!("not fused as the matmul's epilogue: it {why}").into(),
                ));
                None
            }
        });
    let prologue = noted_prologue(m, (fill, a), &[op], "the matmul's");
    (prologue, epilogue)
}

/// The element-wise epilogue `next` of a lone matmul `op` (after `fill`):
/// `Ok(None)` where `next` does not read the product (or a view of it),
/// `Err` where it reads it but cannot fuse.
fn lone_epilogue<'c, 'a>(
    next: OperationRef<'c, 'a>,
    fill: OperationRef<'c, 'a>,
    op: OperationRef<'c, 'a>,
    product: Value<'c, 'a>,
) -> Result<Option<EpilogueOps<'c, 'a>>, String> {
    if !next.operands().any(|v| is_view_of(v, product)) {
        return Ok(None);
    }
    let (inputs, dims, _out) = elementwise(next).map_err(|why| why.to_string())?;
    if inputs.len() != 1 || !same(inputs[0], product) || dims[0] != [0, 1] {
        return Err(
            "reads more than the product element by element (the generated kernels take an \
             epilogue of the product alone, or of a gate and up pair's two)"
                .into(),
        );
    }
    let Some(out_type) = next
        .operands()
        .last()
        .and_then(element_scalar)
        .filter(|s| *s == Scalar::Bf16)
    else {
        return Err("writes no bf16 output".into());
    };
    if !only_used_by(product, &[fill, op, next]) {
        return Err("is not the product's only reader".into());
    }
    Ok(Some(EpilogueOps {
        op: next,
        args: vec![Arg::Product(0), Arg::Unused(out_type)],
    }))
}

/// The pair of `op` (after its zero fill `fill0`) and `matmul1` (after
/// `fill1`), with its epilogue and, if it fuses, its prologue.
fn pair_after<'c, 'a>(
    op: OperationRef<'c, 'a>,
    [fill0, fill1]: [OperationRef<'c, 'a>; 2],
    matmul1: OperationRef<'c, 'a>,
    (a, g): (Value<'c, 'a>, Value<'c, 'a>),
    m: &mut Matching<'c, 'a>,
) -> Result<Group<'c, 'a>, Refusal<'c, 'a>> {
    let before = m.before_planning;
    let u = operand(matmul1, 2).ok_or((matmul1, "has no output".into()))?;
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
        if same(*input, g) {
            epilogue_args.push(Arg::Product(0));
        } else if same(*input, u) {
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
        .and_then(element_scalar)
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
    let prologue = noted_prologue(m, (fill0, a), &[op, matmul1], "the matmul pair's");

    Ok(Group::Pair {
        prologue,
        fills: [fill0, fill1],
        matmuls: [op, matmul1],
        epilogue,
        epilogue_args,
    })
}

/// `prologue_before`'s prologue of `matmuls` (whose: "the matmul's", "the
/// matmul pair's"), or `None` with a note at the op that does not fuse.
fn noted_prologue<'c, 'a>(
    m: &mut Matching<'c, 'a>,
    (first, a): (OperationRef<'c, 'a>, Value<'c, 'a>),
    matmuls: &[OperationRef<'c, 'a>],
    whose: &str,
) -> Option<PrologueOps<'c, 'a>> {
    match prologue_before(first, a, matmuls, m.before_planning) {
        Ok(p) => p,
        Err((at, why)) => {
            m.notes
                .push((at, format!("not fused as {whose} prologue: {why}").into()));
            None
        }
    }
}

/// The RMSNorm-style prologue that writes `a` right before `first` (the
/// pair's first fill), if there is one.
fn prologue_before<'c, 'a>(
    first: OperationRef<'c, 'a>,
    a: Value<'c, 'a>,
    matmuls: &[OperationRef<'c, 'a>],
    before: bool,
) -> Result<Option<PrologueOps<'c, 'a>>, Refusal<'c, 'a>> {
    let Some(normalize) = previous_effect(first, before) else {
        return Ok(None);
    };
    if !normalize.isa(OpKind::LinalgGeneric)
        || !normalize.operands().last().is_some_and(|out| same(out, a))
    {
        return Ok(None);
    }
    let (inputs, dims, _) =
        elementwise(normalize).map_err(|why| (normalize, format!("it {why}").into()))?;
    let Some(reduction) = previous_effect(normalize, before) else {
        return Ok(None);
    };
    let Some(r) = match_row_reduction(reduction).map_err(|why| (reduction, why))? else {
        return Ok(None);
    };
    body_captures_only_constants(reduction).map_err(|why| (reduction, why.into()))?;
    if r.combiner.op != FloatOp::Add {
        return Err((reduction, "the row statistic is not a sum".into()));
    }
    let operands: Vec<Value<'c, 'a>> = reduction.operands().collect();
    let (Some(&x), Some(&statistic)) = (operands.first(), operands.last()) else {
        return Err((reduction, "the row statistic has no operands".into()));
    };
    if operands.len() != 2 || !is_bf16(x) || element_scalar(statistic) != Some(Scalar::F32) {
        return Err((
            reduction,
            "the row statistic is not an f32 sum over one bf16 input".into(),
        ));
    }
    let Some(fill) = previous_effect(reduction, before).filter(|f| {
        f.isa(OpKind::LinalgFill)
            && f.operand_count() == 2
            && operand(*f, 1).is_some_and(|s| same(s, statistic))
    }) else {
        return Err((
            reduction,
            "the row statistic is not filled right before it".into(),
        ));
    };
    let init = operand(fill, 0).ok_or((fill, "has no value".into()))?;
    if Scalar::of_type(init.r#type()) != Some(Scalar::F32) {
        return Err((fill, "the row statistic's initial value is not f32".into()));
    }
    let mut args = Vec::new();
    let mut columns = Vec::new();
    for (input, dims) in inputs.iter().zip(&dims) {
        match dims.as_slice() {
            [0, 1] if same(*input, x) => args.push(Arg::Product(0)),
            [0] if same(*input, statistic) => args.push(Arg::Statistic),
            [1] => {
                let element: Option<Type> = input.memref_type().map(|ty| ty.element());
                if !matches!(
                    element.and_then(Scalar::of_type),
                    Some(Scalar::Bf16 | Scalar::F32)
                ) {
                    let shown = element.map(type_text).unwrap_or_default();
                    return Err((
                        normalize,
                        format!("a column operand of type {shown}").into(),
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
    let Some(a_element) = element_scalar(a) else {
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
pub fn output_of(value: Value) -> Option<Output> {
    match element_scalar(value)? {
        Scalar::Bf16 => Some(Output::Bf16),
        Scalar::F32 => Some(Output::F32),
        _ => None,
    }
}

/// The buffers a group reads and writes: the generated kernel reads its
/// inputs while it writes its output, and a measured choice runs the group
/// more than once, so none of them may share memory with another
/// (symm-mem-plan keeps them all live across the whole group).
pub fn buffers<'c, 'a>(group: &Group<'c, 'a>) -> Vec<Value<'c, 'a>> {
    let mut values: Vec<Value<'c, 'a>> = Vec::new();
    for op in group.ops() {
        for operand in op.operands() {
            if operand.memref_type().is_some() && !values.iter().any(|v| same(*v, operand)) {
                values.push(operand);
            }
        }
    }
    values
}
