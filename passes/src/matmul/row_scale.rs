//! The RMSNorm prologue's row factor, moved after the products.
//!
//! A normalization such as Llama's `bf16(x · rsqrt(mean + eps) · w)` is a
//! product of a factor that depends only on the row's statistic
//! (`rsqrt(mean + eps)`) and factors that do not (`x`, `w`). The row factor
//! is the same along the whole row, so it commutes with the matmul:
//! `(x · r · w) @ W = r · ((x · w) @ W)`. A kernel may then stage
//! `bf16(x · w)` in the same pass that sums the row's squares, and scale
//! each row's sums by `r` before its epilogue: one pass over `a` and no
//! barrier between the statistic and the elements (on one H200 the two in
//! sequence cost the Llama-3-8B pair 1.2-2.4 µs per call,
//! bench/results/2026-11-26-prefetch-variants-h200.md). The staged element
//! is rounded to bf16 before `r` instead of after it.
//!
//! `split` reads the normalization's body: its yield must be an
//! `arith.truncf` of an `arith.mulf` tree whose factors each depend on the
//! statistic's argument alone (the row factor) or not at all (the column
//! factor). The factors are named by position in the body, so that they
//! can be found again in a copy of it (`ValueAt::in_body`).

use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt};
use crate::ir::op_kind::OpKind;
use melior::dialect::arith;
use melior::ir::{
    BlockLike, BlockRef, OperationRef, Value, ValueLike, attribute::FloatAttribute,
    block::BlockArgument, operation::OperationLike,
};
use std::collections::BTreeSet;

/// A value of the normalization's body, by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueAt {
    /// The body's argument `index`.
    Argument(usize),
    /// Result `result` of the body's op `from_end` places before its
    /// terminator (counted from the end: copies of the body get the
    /// constants it reads from outside prepended).
    Result { from_end: usize, result: usize },
}

/// The normalization as its row factor and its column factor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Split {
    /// f32 factors that depend on the statistic alone; their product is
    /// the row's scale.
    pub row: Vec<ValueAt>,
    /// f32 factors that do not depend on the statistic; their product,
    /// rounded as the yield rounds, is the staged element.
    pub columns: Vec<ValueAt>,
}

/// The split of a normalization body whose argument `statistic` is the
/// row statistic, if it has one (see the module's doc).
pub fn split(body: BlockRef, statistic: usize) -> Option<Split> {
    let ops = body.ops();
    let yielded = ops.last()?.operand(0).ok()?;
    let truncation = yielded.defining_op()?;
    if !truncation.isa(OpKind::ArithTruncf) {
        return None;
    }
    let mut factors = Vec::new();
    let mut pending = vec![truncation.operand(0).ok()?];
    while let Some(value) = pending.pop() {
        match value.defining_op() {
            Some(op) if op.isa(OpKind::ArithMulf) && op.block() == Some(body) => {
                pending.extend(op.operands());
            }
            _ => factors.push(value),
        }
    }
    let mut split = Split {
        row: Vec::new(),
        columns: Vec::new(),
    };
    for factor in factors {
        let uses = arguments_used(factor, body)?;
        let at = position(factor, body, &ops)?;
        if uses.contains(&statistic) {
            if uses.len() > 1 {
                return None;
            }
            split.row.push(at);
        } else {
            split.columns.push(at);
        }
    }
    (!split.row.is_empty()).then_some(split)
}

/// The body's arguments that `value` depends on (through ops of the body
/// and constants from outside it; `None` when it reads another value from
/// outside, or an op with regions).
fn arguments_used(value: Value, body: BlockRef) -> Option<BTreeSet<usize>> {
    let mut used = BTreeSet::new();
    let mut pending = vec![value];
    let mut seen = BTreeSet::new();
    while let Some(value) = pending.pop() {
        if !seen.insert(value.to_raw().ptr as usize) {
            continue;
        }
        if let Ok(argument) = BlockArgument::try_from(value) {
            if value.argument_of() != Some(body) {
                return None;
            }
            used.insert(argument.argument_number());
            continue;
        }
        let op = value.defining_op()?;
        // Constants from outside the body come along into its copies.
        if op.block() != Some(body) && op.isa(OpKind::Constant) {
            continue;
        }
        if op.block() != Some(body) || op.region_count() > 0 {
            return None;
        }
        pending.extend(op.operands());
    }
    Some(used)
}

/// Where `value` sits in the body.
fn position(value: Value, body: BlockRef, ops: &[OperationRef]) -> Option<ValueAt> {
    if let Ok(argument) = BlockArgument::try_from(value) {
        return (value.argument_of() == Some(body))
            .then(|| ValueAt::Argument(argument.argument_number()));
    }
    let op = value.defining_op()?;
    let index = ops.iter().position(|candidate| *candidate == op)?;
    let result = (0..op.result_count()).find(|i| {
        op.result(*i)
            .is_ok_and(|result| Value::from(result) == value)
    })?;
    Some(ValueAt::Result {
        from_end: ops.len() - 1 - index,
        result,
    })
}

/// Which factor a copy of the normalization's body returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The row's scale (f32): the product of the row factors.
    Row,
    /// The staged element: the product of the column factors, rounded as
    /// the normalization rounds (bf16).
    Columns,
}

impl Split {
    /// Makes `entry`, a function's copy of the normalization's body ending
    /// in `func.return %element`, return `part` instead (its other ops
    /// become dead, for canonicalization to remove). `None` when the copy
    /// is not the analysed body.
    pub fn return_part<'c>(
        &self,
        context: &'c melior::Context,
        entry: BlockRef<'c, '_>,
        part: Part,
    ) -> Option<()> {
        let terminator = entry.terminator()?;
        let location = terminator.location();
        let factors = match part {
            Part::Row => &self.row,
            Part::Columns => &self.columns,
        };
        let values: Vec<Value> = factors
            .iter()
            .map(|at| at.in_body(entry))
            .collect::<Option<_>>()?;
        let f32: melior::ir::Type = melior::ir::r#type::Type::float32(context);
        let mut product = match values.split_first() {
            Some((first, _)) => *first,
            None => entry
                .insert_operation_before(
                    terminator,
                    arith::constant(
                        context,
                        FloatAttribute::new(context, f32, 1.0).into(),
                        location,
                    ),
                )
                .result(0)
                .ok()?
                .into(),
        };
        for value in values.iter().skip(1) {
            product = entry
                .insert_operation_before(terminator, arith::mulf(product, *value, location))
                .result(0)
                .ok()?
                .into();
        }
        if part == Part::Columns {
            let rounded = terminator.operand(0).ok()?.r#type();
            product = entry
                .insert_operation_before(terminator, arith::truncf(product, rounded, location))
                .result(0)
                .ok()?
                .into();
        }
        terminator.set_operand_to(0, product).then_some(())
    }
}

impl ValueAt {
    /// The value at this position in `body` (a copy of the analysed body).
    pub fn in_body<'c, 'a>(self, body: BlockRef<'c, 'a>) -> Option<Value<'c, 'a>> {
        match self {
            ValueAt::Argument(index) => body.argument(index).ok().map(Value::from),
            ValueAt::Result { from_end, result } => {
                let ops = body.ops();
                let op = ops
                    .len()
                    .checked_sub(1 + from_end)
                    .map(|index| ops[index])?;
                op.result(result).ok().map(Value::from)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::Module;

    /// The `linalg.generic` of `@f`'s body.
    fn generic_in<'c, 'a>(entry: BlockRef<'c, 'a>) -> OperationRef<'c, 'a> {
        entry
            .ops()
            .into_iter()
            .find(|op| op.isa(OpKind::LinalgGeneric))
            .expect("the generic")
    }

    /// The body of `@f`'s `linalg.generic` (with the context and the
    /// module it is in).
    fn with_body(source: &str, check: impl FnOnce(&melior::Context, &Module, BlockRef)) {
        let context = symm_dialects::create_context();
        let module = Module::parse(&context, source).expect("parses");
        let function = module.body().first_operation().expect("@f");
        let entry = function.first_block().expect("a body");
        let body = generic_in(entry).first_block().expect("its body");
        check(&context, &module, body)
    }

    fn normalization(body: &str) -> String {
        format!(
            r#"
            #id = affine_map<(d0, d1) -> (d0, d1)>
            #row = affine_map<(d0, d1) -> (d0)>
            #col = affine_map<(d0, d1) -> (d1)>
            func.func @f(%x: memref<4x8xbf16>, %s: memref<4xf32>, %w: memref<8xbf16>,
                         %y: memref<4x8xbf16>) {{
              // The constants outside the body, as the examples write them.
              %k = arith.constant 8.0 : f32
              %eps = arith.constant 1.0e-5 : f32
              linalg.generic {{indexing_maps = [#id, #row, #col, #id],
                              iterator_types = ["parallel", "parallel"]}}
                  ins(%x, %s, %w : memref<4x8xbf16>, memref<4xf32>, memref<8xbf16>)
                  outs(%y : memref<4x8xbf16>) {{
              ^bb0(%v: bf16, %sum: f32, %g: bf16, %unused: bf16):
                {body}
              }}
              return
            }}
            "#
        )
    }

    /// Llama's RMSNorm element, as `examples/llama_mlp.mlir` writes it.
    const LLAMA: &str = "%mean = arith.divf %sum, %k : f32
             %var = arith.addf %mean, %eps : f32
             %inv = math.rsqrt %var : f32
             %f = arith.extf %v : bf16 to f32
             %n = arith.mulf %f, %inv : f32
             %wf = arith.extf %g : bf16 to f32
             %p = arith.mulf %n, %wf : f32
             %r = arith.truncf %p : f32 to bf16
             linalg.yield %r : bf16";

    #[test]
    fn llamas_rms_norm_splits_into_its_row_and_column_factors() {
        let source = normalization(LLAMA);
        with_body(&source, |_, _, body| {
            let split = split(body, 1).expect("separable");
            // rsqrt is 6 ops before the yield; the extensions 5 and 3.
            let at = |from_end| ValueAt::Result {
                from_end,
                result: 0,
            };
            assert_eq!(split.row, vec![at(6)]);
            assert_eq!(split.columns.len(), 2);
            assert!(split.columns.contains(&at(5)) && split.columns.contains(&at(3)));
            for at in split.row.iter().chain(&split.columns) {
                assert!(at.in_body(body).is_some());
            }
        });
    }

    #[test]
    fn a_copy_returns_its_row_or_its_column_factor() {
        let source = normalization(LLAMA);
        for part in [Part::Columns, Part::Row] {
            with_body(&source, |context, module, body| {
                let split = split(body, 1).expect("separable");
                // As the pass's copies get the constants they read from outside
                // prepended.
                let f32 = melior::ir::r#type::Type::float32(context);
                let constant = arith::constant(
                    context,
                    FloatAttribute::new(context, f32, 2.0).into(),
                    melior::ir::Location::unknown(context),
                );
                body.insert_operation_before(body.first_operation().expect("ops"), constant);
                split.return_part(context, body, part).expect("rewritten");
                let returned = body
                    .terminator()
                    .and_then(|yield_op| yield_op.operand(0).ok())
                    .and_then(|value| value.defining_op())
                    .expect("a new value");
                match part {
                    // bf16(x · w): a truncation of a product of the two
                    // extensions, and the generic still verifies.
                    Part::Columns => {
                        assert!(returned.isa(OpKind::ArithTruncf));
                        let product = returned.operand(0).ok().and_then(|v| v.defining_op());
                        assert!(product.is_some_and(|p| p.isa(OpKind::ArithMulf)
                            && p.operands().all(|v| {
                                v.defining_op()
                                    .is_some_and(|d| d.to_string().contains("arith.extf"))
                            })));
                        assert!(module.as_operation().verify());
                    }
                    // rsqrt(mean + eps) itself (f32; the function declared for
                    // it returns f32).
                    Part::Row => assert!(returned.to_string().contains("math.rsqrt"), "{returned}"),
                }
            });
        }
    }

    #[test]
    fn a_factor_mixing_the_statistic_with_the_element_does_not_split() {
        for (why, body) in [
            (
                "(x + s) · w: the statistic does not factor out",
                "%a = arith.addf %f, %sum : f32\n %p = arith.mulf %a, %wf : f32",
            ),
            (
                "no statistic at all: nothing to move",
                "%p = arith.mulf %f, %wf : f32",
            ),
            (
                "a truncation of an exp, not of a product",
                "%n = arith.mulf %f, %sum : f32\n %p = math.exp %n : f32",
            ),
        ] {
            let source = normalization(&format!(
                "%f = arith.extf %v : bf16 to f32\n %wf = arith.extf %g : bf16 to f32\n {body}\n \
                 %r = arith.truncf %p : f32 to bf16\n linalg.yield %r : bf16"
            ));
            with_body(&source, |_, _, body| {
                assert_eq!(split(body, 1), None, "{why}")
            });
        }
    }
}
