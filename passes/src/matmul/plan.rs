//! Which matmul groups take a generated kernel, with what fused into it
//! (`plan`), and the remark that says so (`describe`).

use super::gemv::GemvTile;
use super::kernel::{Epilogue, Output, Prologue, RowScaleFunctions, SkinnyMatmul, Tile};
use super::{kernel, launch, row_scale};
use crate::analysis::matmul_groups::{Group, is_bf16, output_of};
use crate::ir::melior_ext::{
    OperationExt, ValueExt, element_bytes, has_identity_layout, strides_and_offset,
};
use crate::ir::typed_builder::dims;
use melior::ir::{
    OperationRef, Value, ValueLike, operation::OperationLike, r#type::ShapedTypeLike,
};

/// A group and the kernel it takes.
pub(super) struct Planned<'c, 'a> {
    pub(super) group: Group<'c, 'a>,
    pub(super) kernel: SkinnyMatmul,
    /// The left operand (x with a prologue), the weights and the output.
    pub(super) a: Value<'c, 'a>,
    pub(super) weights: Vec<Value<'c, 'a>>,
    pub(super) out: Value<'c, 'a>,
    /// Dimension of `a` that counts rows.
    pub(super) rows_dim: usize,
    /// Element functions: their names, the generics whose bodies they
    /// copy, and the factor of the body a function returns.
    pub(super) functions: Vec<ElementFunction<'c, 'a>>,
    pub(super) columns: Vec<Value<'c, 'a>>,
    pub(super) init: Option<Value<'c, 'a>>,
    /// The GEMV kernels, by rows, where they can run.
    pub(super) gemv: Vec<GemvTile>,
    /// With `kernel.lamport_send`: the pool of the all-reduce kernel the
    /// product goes to.
    pub(super) lamport_pool: Option<Value<'c, 'a>>,
}

/// A function made of a generic's body (the element function), or of one
/// factor of it (`row_scale`).
pub(super) struct ElementFunction<'c, 'a> {
    pub(super) name: String,
    pub(super) generic: OperationRef<'c, 'a>,
    pub(super) part: Option<(row_scale::Split, row_scale::Part)>,
}

impl<'c, 'a> ElementFunction<'c, 'a> {
    fn whole(name: String, generic: OperationRef<'c, 'a>) -> Self {
        Self {
            name,
            generic,
            part: None,
        }
    }
}

/// A memref's sizes and strides (`None`: dynamic).
type Layout = (Vec<Option<i64>>, Vec<Option<i64>>);

/// The sizes and strides of a memref with a strided layout at a static
/// offset (which the host adds to its address, `launch::pointer`).
fn strides(value: Value) -> Option<Layout> {
    let ty = value.memref_type()?;
    let (strides, offset) = strides_and_offset(ty)?;
    // The host adds the offset's bytes to the address (launch::pointer).
    offset?.checked_mul(i64::try_from(element_bytes(ty.element())?).ok()?)?;
    Some((dims(ty), strides))
}

/// Whether `value` is a memref of the identity layout.
fn contiguous(value: Value) -> bool {
    has_identity_layout(value.r#type())
}

/// Whether weight `value` is a whole row-major matrix: the identity
/// layout, or a view of static shape whose strides are that shape's
/// row-major ones at a static offset (a row range of a larger matrix:
/// the gate or up half of a merged gate_up weight stored n x k, whose
/// address the host moves by the offset, `launch::address`).
fn dense_weight(value: Value) -> bool {
    if contiguous(value) {
        return true;
    }
    let Some((shape, strides)) = strides(value) else {
        return false;
    };
    let mut expected = 1i64;
    for (size, stride) in shape.iter().zip(&strides).rev() {
        let (Some(size), Some(stride)) = (size, stride) else {
            return false;
        };
        if *stride != expected {
            return false;
        }
        expected = expected.saturating_mul(*size);
    }
    true
}

/// Operand `index` of a matched op (the matcher checked its operands).
fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Value<'c, 'a> {
    op.operand(index)
        .expect("internal: a matched matmul has its operands")
}

/// How the planned kernels are built (the pass's options).
#[derive(Clone, Copy)]
pub(super) struct KernelChoices {
    /// The GEMVs let the next grid launch early (`launch-dependents`).
    pub(super) grid_dependency: bool,
    /// A norm prologue that splits is applied as row and column factors
    /// (`row-scale`).
    pub(super) row_scale: bool,
    /// The tensor-core GEMV applies such a norm as it reads `a` where its
    /// staged rows would not fit (`stream-norm`).
    pub(super) stream_norm: bool,
    /// The tensor-core GEMV stages the rows raw and applies such a norm as
    /// it reads them from shared memory (`norm-in-loop`).
    pub(super) norm_in_loop: bool,
    /// A single matmul's GEMVs send its product to a Lamport all-reduce
    /// (`lamport-send`).
    pub(super) lamport_send: bool,
    /// The SMs the GEMVs' grids are balanced over (`wave-sms`).
    pub(super) wave_sms: u64,
}

/// The kernel for `group`, or why it has none.
pub(super) fn plan<'c, 'a>(
    group: Group<'c, 'a>,
    index: usize,
    tile: Tile,
    choices: KernelChoices,
) -> Result<Planned<'c, 'a>, crate::Refusal<'c, 'a>> {
    let KernelChoices {
        grid_dependency, ..
    } = choices;
    let name = format!("symm_matmul_{index}");
    match &group {
        Group::Pair {
            prologue,
            matmuls,
            epilogue,
            epilogue_args,
            ..
        } => {
            let out = epilogue
                .operands()
                .last()
                .expect("an elementwise generic has an output");
            let fused = Fused {
                matmuls,
                out,
                prologue: prologue.as_ref(),
                epilogue: Some((*epilogue, epilogue_args)),
            };
            plan_fused(&name, fused, tile, choices).map(|parts| parts.planned(group))
        }
        Group::Single {
            matmul,
            prologue,
            epilogue,
            ..
        } if prologue.is_some() || epilogue.is_some() => {
            let out = epilogue.as_ref().map_or(operand(*matmul, 2), |e| {
                e.op.operands()
                    .last()
                    .expect("an elementwise generic has an output")
            });
            let fused = Fused {
                matmuls: std::slice::from_ref(matmul),
                out,
                prologue: prologue.as_ref(),
                epilogue: epilogue.as_ref().map(|e| (e.op, e.args.as_slice())),
            };
            plan_fused(&name, fused, tile, choices).map(|parts| parts.planned(group))
        }
        Group::Single { matmul, .. } => {
            let op = *matmul;
            let (a, w, c) = (operand(op, 0), operand(op, 1), operand(op, 2));
            let refuse = |why: &str| Err((op, format!("keeps cuBLAS: {why}").into()));
            let (Some((a_shape, a_strides)), Some((w_shape, w_strides))) = (strides(a), strides(w))
            else {
                return refuse("an operand without a strided layout at a static offset");
            };
            if !is_bf16(a) || !is_bf16(w) {
                return refuse("the generated kernel takes bf16 operands");
            }
            let Some(output) = output_of(c) else {
                return refuse("the generated kernel writes bf16 or f32");
            };
            if !contiguous(c) {
                return refuse("an output that is not contiguous");
            }
            let batched = a_shape.len() == 3;
            let transposed = weight_transposed(op);
            let (slices, k, n, lda, a_slice, w_slice) = if batched {
                let static_of = |v: &[Option<i64>], i: usize| v.get(i).copied().flatten();
                let (Some(slices), Some(k), Some(n), Some(lda), Some(a_slice), Some(w_row)) = (
                    static_of(&w_shape, 0),
                    static_of(&w_shape, 1),
                    static_of(&w_shape, 2),
                    static_of(&a_strides, 1),
                    static_of(&a_strides, 0),
                    static_of(&w_strides, 1),
                ) else {
                    return refuse("split-K slices of dynamic shape or strides");
                };
                let w_slice = static_of(&w_strides, 0).unwrap_or(k * n);
                if a_strides.get(2) != Some(&Some(1))
                    || w_row != n
                    || w_strides.get(2) != Some(&Some(1))
                {
                    return refuse("slices whose rows are not contiguous");
                }
                (slices, k, n, lda, a_slice, w_slice)
            } else {
                let (Some(Some(k)), Some(Some(n))) = k_by_n(transposed, &w_shape) else {
                    return refuse("a weight of dynamic shape");
                };
                let Some(Some(lda)) = a_strides.first() else {
                    return refuse("a left operand of dynamic row stride");
                };
                if !dense_weight(w) || a_strides.get(1) != Some(&Some(1)) {
                    return refuse("operands whose rows are not contiguous");
                }
                (1, k, n, *lda, 0, 0)
            };
            let kernel = SkinnyMatmul {
                name,
                k: k as u64,
                n: n as u64,
                lda: lda as u64,
                a_slice: a_slice as u64,
                w_slice: w_slice as u64,
                slices: slices as u64,
                weights: 1,
                output,
                prologue: None,
                epilogue: None,
                tile,
                grid_dependency,
                stream_norm: false,
                wave_sms: choices.wave_sms,
                lamport_send: None,
                launched_early: 0,
                weight_transposed: transposed,
            };
            if let Some(problem) = kernel.problem() {
                return refuse(&problem);
            }
            Ok(Planned {
                kernel,
                a,
                weights: vec![w],
                out: c,
                rows_dim: if batched { 1 } else { 0 },
                functions: Vec::new(),
                columns: Vec::new(),
                init: None,
                gemv: Vec::new(),
                lamport_pool: None,
                group,
            })
        }
    }
}

/// Whether `matmul` reads its weight stored n x k (nn.Linear's layout),
/// which `group_at` lets through beside the default maps.
fn weight_transposed(matmul: OperationRef) -> bool {
    crate::analysis::linalg::matmul_layout(matmul)
        == Some(symm_protocol::abi::LayoutCode::TransposedB)
}

/// (K, N) of a 2-D matmul's weight of shape `w_shape`: k x n as written,
/// or n x k where the matmul reads it `transposed`.
fn k_by_n(transposed: bool, w_shape: &[Option<i64>]) -> (Option<Option<i64>>, Option<Option<i64>>) {
    let (rows, columns) = (w_shape.first().copied(), w_shape.get(1).copied());
    if transposed {
        (columns, rows)
    } else {
        (rows, columns)
    }
}

/// A group whose kernel fuses what surrounds its matmuls (one, or a pair
/// sharing `a`): the matmuls, the output the kernel writes (the epilogue's,
/// or the product's without one), the prologue and the epilogue.
struct Fused<'g, 'c, 'a> {
    matmuls: &'g [OperationRef<'c, 'a>],
    out: Value<'c, 'a>,
    prologue: Option<&'g crate::analysis::matmul_groups::PrologueOps<'c, 'a>>,
    epilogue: Option<(OperationRef<'c, 'a>, &'g [kernel::Arg])>,
}

/// A fused group's kernel and what `Planned` takes besides its group.
struct FusedParts<'c, 'a> {
    kernel: SkinnyMatmul,
    a: Value<'c, 'a>,
    weights: Vec<Value<'c, 'a>>,
    out: Value<'c, 'a>,
    functions: Vec<ElementFunction<'c, 'a>>,
    columns: Vec<Value<'c, 'a>>,
    init: Option<Value<'c, 'a>>,
}

impl<'c, 'a> FusedParts<'c, 'a> {
    fn planned(self, group: Group<'c, 'a>) -> Planned<'c, 'a> {
        Planned {
            kernel: self.kernel,
            a: self.a,
            weights: self.weights,
            out: self.out,
            rows_dim: 0,
            functions: self.functions,
            columns: self.columns,
            init: self.init,
            gemv: Vec::new(),
            lamport_pool: None,
            group,
        }
    }
}

/// The kernel of a fused group: its operands must be contiguous row-major
/// bf16 matrices (the weights of one shape) and its output bf16.
fn plan_fused<'c, 'a>(
    name: &str,
    fused: Fused<'_, 'c, 'a>,
    tile: Tile,
    choices: KernelChoices,
) -> Result<FusedParts<'c, 'a>, crate::Refusal<'c, 'a>> {
    let Fused {
        matmuls,
        out,
        prologue,
        epilogue,
    } = fused;
    let first = matmuls[0];
    let a = operand(first, 0);
    let weights: Vec<Value<'c, 'a>> = matmuls.iter().map(|m| operand(*m, 1)).collect();
    let refuse = |why: &str| Err((first, format!("keeps cuBLAS: {why}").into()));
    let (Some((a_shape, _)), Some((w_shape, _))) = (strides(a), strides(weights[0])) else {
        return refuse("an operand without a strided layout at a static offset");
    };
    let one_shape = weights
        .iter()
        .all(|w| strides(*w).map(|s| s.0) == Some(w_shape.clone()));
    if !one_shape || !contiguous(a) || !contiguous(out) || !weights.iter().all(|w| dense_weight(*w))
    {
        return refuse(if weights.len() == 2 {
            "the pair's operands are not contiguous row-major matrices of one shape"
        } else {
            "operands that are not contiguous row-major matrices"
        });
    }
    let transposed = weight_transposed(first);
    let (Some(Some(k)), Some(Some(n))) = k_by_n(transposed, &w_shape) else {
        return refuse("a weight of dynamic shape");
    };
    let out_shape = out.memref_type().map(dims).unwrap_or_default();
    if a_shape.get(1) != Some(&Some(k)) || out_shape.get(1) != Some(&Some(n)) {
        return refuse("shapes that do not match");
    }
    if !is_bf16(a) || !weights.iter().all(|w| is_bf16(*w)) || output_of(out) != Some(Output::Bf16) {
        return refuse("the generated kernel takes bf16 operands and a bf16 result");
    }
    let Fusions {
        functions,
        a: kernel_a,
        columns,
        init,
        prologue,
        epilogue,
    } = fusions(name, a, prologue, epilogue, choices.row_scale);
    let kernel = SkinnyMatmul {
        name: name.to_owned(),
        k: k as u64,
        n: n as u64,
        lda: k as u64,
        a_slice: 0,
        w_slice: 0,
        slices: 1,
        weights: weights.len() as u64,
        output: Output::Bf16,
        prologue,
        epilogue,
        tile,
        grid_dependency: choices.grid_dependency,
        stream_norm: false,
        wave_sms: choices.wave_sms,
        lamport_send: None,
        launched_early: 0,
        weight_transposed: transposed,
    };
    if let Some(problem) = kernel.problem() {
        return refuse(&problem);
    }
    Ok(FusedParts {
        kernel,
        a: kernel_a,
        weights,
        out,
        functions,
        columns,
        init,
    })
}

/// What a group's generated kernels fuse: the element functions they call,
/// the operand they read as `a` (x where a prologue normalizes it), the
/// prologue's column vectors and statistic's initial value, and the
/// prologue's and epilogue's descriptions.
struct Fusions<'c, 'a> {
    functions: Vec<ElementFunction<'c, 'a>>,
    a: Value<'c, 'a>,
    columns: Vec<Value<'c, 'a>>,
    init: Option<Value<'c, 'a>>,
    prologue: Option<Prologue>,
    epilogue: Option<Epilogue>,
}

/// The fusions of kernel `name` whose matmuls read `a`: its prologue (an
/// RMSNorm-style normalization of x into `a`, split into row and column
/// factors with `row_scale` where it splits) and its epilogue (a generic
/// and its parameters).
fn fusions<'c, 'a>(
    name: &str,
    a: Value<'c, 'a>,
    prologue: Option<&crate::analysis::matmul_groups::PrologueOps<'c, 'a>>,
    epilogue: Option<(OperationRef<'c, 'a>, &[kernel::Arg])>,
    row_scale: bool,
) -> Fusions<'c, 'a> {
    let mut functions = Vec::new();
    let epilogue = epilogue.map(|(generic, args)| {
        functions.push(ElementFunction::whole(format!("{name}_epilogue"), generic));
        Epilogue {
            function: format!("{name}_epilogue"),
            args: args.to_vec(),
        }
    });
    let Some(p) = prologue else {
        return Fusions {
            functions,
            a,
            columns: Vec::new(),
            init: None,
            prologue: None,
            epilogue,
        };
    };
    functions.push(ElementFunction::whole(format!("{name}_step"), p.reduction));
    functions.push(ElementFunction::whole(
        format!("{name}_prologue"),
        p.normalize,
    ));
    let split = row_scale
        .then(|| normalization_split(p.normalize, &p.args))
        .flatten();
    let row_scale = split.map(|split| {
        let functions_of = RowScaleFunctions {
            row: format!("{name}_prologue_row"),
            columns: format!("{name}_prologue_columns"),
        };
        for (function, part) in [
            (&functions_of.row, row_scale::Part::Row),
            (&functions_of.columns, row_scale::Part::Columns),
        ] {
            functions.push(ElementFunction {
                name: function.clone(),
                generic: p.normalize,
                part: Some((split.clone(), part)),
            });
        }
        functions_of
    });
    let spec = Prologue {
        step: format!("{name}_step"),
        apply: format!("{name}_prologue"),
        args: p.args.clone(),
        columns: p
            .columns
            .iter()
            .filter_map(|c| crate::ir::scalar::Scalar::of_type(c.memref_type()?.element()))
            .collect(),
        row_scale,
    };
    Fusions {
        functions,
        a: p.x,
        columns: p.columns.clone(),
        init: Some(p.init),
        prologue: Some(spec),
        epilogue,
    }
}

/// The split of a pair's normalization into its row and column factors
/// (`row_scale`), where it has one.
fn normalization_split(normalize: OperationRef, args: &[kernel::Arg]) -> Option<row_scale::Split> {
    let statistic = args.iter().position(|a| *a == kernel::Arg::Statistic)?;
    let body = normalize.first_block()?;
    row_scale::split(body, statistic)
}

/// What fused, for the remark.
pub(super) fn describe(planned: &Planned<'_, '_>) -> String {
    let k = &planned.kernel;
    let what = match &planned.group {
        Group::Pair { prologue, .. } => format!(
            "matmul pair ({}x{} per weight){} with the element-wise epilogue",
            k.k,
            k.n,
            match (prologue, &k.prologue) {
                (
                    Some(_),
                    Some(Prologue {
                        row_scale: Some(_), ..
                    }),
                ) => {
                    " with the row-norm prologue (its row factor applied to the sums)"
                }
                (Some(_), _) => " with the row-norm prologue",
                (None, _) => "",
            }
        ),
        Group::Single {
            prologue, epilogue, ..
        } if prologue.is_some() || epilogue.is_some() => format!(
            "matmul {}x{}{}{}",
            k.k,
            k.n,
            match (prologue, &k.prologue) {
                (
                    Some(_),
                    Some(Prologue {
                        row_scale: Some(_), ..
                    }),
                ) => " with the row-norm prologue (its row factor applied to the sums)",
                (Some(_), _) => " with the row-norm prologue",
                (None, _) => "",
            },
            if epilogue.is_some() {
                " with the element-wise epilogue"
            } else {
                ""
            }
        ),
        Group::Single { .. } if k.slices > 1 => {
            format!("matmul in {} split-K slices of {}x{}", k.slices, k.k, k.n)
        }
        Group::Single { .. } => format!("matmul {}x{}", k.k, k.n),
    };
    let what = if k.weight_transposed {
        format!("{what}, the weights stored n x k")
    } else {
        what
    };
    let (x, y) = k.grid();
    let gemv: String = planned
        .gemv
        .iter()
        .map(|g| {
            let (gx, gy) = k.gemv_grid(*g);
            format!(
                " (up to {} row(s): the GEMV @{}, {gx}x{gy} blocks of {} threads{}{})",
                g.takes(),
                k.gemv_name(*g),
                g.threads(k.weights),
                g.cluster_note(),
                k.gemv_band_note(*g)
            )
        })
        .collect();
    if k.weight_transposed {
        return format!(
            "{what}: generated GEMVs{gemv}, chosen against cuBLAS by measurement for up to {} rows whose operands are 16-byte aligned (others take cuBLAS; n x k weights take no tiled tensor-core kernel)",
            launch::max_rows(planned)
        );
    }
    format!(
        "{what}: generated kernel @{} ({x}x{y} blocks of {} threads, {} bytes of shared memory, {} stages of {} rows){gemv}, chosen against cuBLAS by measurement for up to {} rows whose operands are 16-byte aligned (others take cuBLAS)",
        k.name,
        k.tile.threads(),
        k.tile.shared_bytes(k.weights),
        k.tile.stages,
        k.tile.bk,
        launch::max_rows(planned)
    )
}
