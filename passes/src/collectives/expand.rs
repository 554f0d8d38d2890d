//! `symm-mem-expand-collectives`: each all-reduce becomes the kernels of
//! its algorithm and their launches. The kernels are IR over the
//! `symm_mem` device ops (`kernel_ir`), gathered in `gpu.module
//! @symm_kernels`, one per (algorithm, reduction, element type, world size,
//! vector width, epilogue); the op becomes a byte-count dispatch over
//! `gpu.launch_func`s that take the input's `symm_mem.pool_of`, the data
//! pointers and the vector count. `all_reduce_out` picks one-shot or
//! two-shot per call by size; a fused `all_reduce_epilogue_out`'s region
//! becomes the function its kernel calls per element.
//!
//! The launches are upstream IR and call nothing: convert-symm-mem-to-runtime
//! then lowers `symm_mem.pool_of` to the runtime's pool descriptor and
//! convert-symm-mem-to-nvvm the device ops.

use super::EpilogueDecl;
use super::all_reduce::{
    self as kernels, Algorithm, AllReduceKernel, Epilogue, EpilogueOperand, Push, Reduction,
    RowsEpilogue,
};
use super::prologue::Prologue;
use crate::fuse_rows::ROWS_OUT;
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass,
    builders::{At, replace_terminator},
    ir::{Attr, Ctx, Op, OpBuilder, Ty, Val, emit_error},
    read_after::used_after,
    select_all_reduce::{Facts, Limits, choose},
    to_runtime::{
        KERNEL_MODULE,
        host::{Declarations, Host},
    },
};
use std::collections::BTreeMap;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ExpandCollectives>(
    c"symm-mem-expand-collectives",
    c"ExpandCollectives",
    c"Expand symm_mem all-reduces into gpu.func kernels over the symm_mem device ops and their launches",
    c"builtin.module",
    &[
        PassOption::new(
            c"one-shot-max-bytes",
            c"Largest symm_mem.all_reduce_out that uses one-shot on more than 2 ranks",
            OptionKind::Int64,
            c"1048576",
        ),
        PassOption::new(
            c"two-rank-push-max-bytes",
            c"On 2 ranks, the largest message whose two-shot pushes into the inputs (an output that is not symmetric)",
            OptionKind::Int64,
            c"8388608",
        ),
        PassOption::new(
            c"lamport-max-bytes",
            c"Largest one-shot of bf16 or f16 sums that takes the Lamport kernel (no barrier; at most 524288)",
            OptionKind::Int64,
            c"524288",
        ),
    ],
    file!(),
);

pub struct ExpandCollectives;

/// The ops this pass expands.
fn expands(name: &str) -> bool {
    matches!(
        name,
        "symm_mem.one_shot_all_reduce_out"
            | "symm_mem.two_shot_all_reduce_out"
            | "symm_mem.all_reduce_out"
            | "symm_mem.all_reduce_epilogue_out"
            | "symm_mem.all_reduce_rows_out"
    )
}

/// An all-reduce op's operands by role.
struct Roles {
    input: Val,
    /// A fused op's matmul prologue.
    prologue: Option<Prologue>,
    /// The element-wise epilogue's operands.
    epilogue: Vec<Val>,
    out: Val,
    /// `all_reduce_rows_out`: its rows_out and row operands.
    rows: Option<(Val, Vec<Val>)>,
}

fn roles(op: Op) -> Roles {
    let operands = op.operands();
    // Both fused ops: (input, lhs?, rhs?, partials?, epilogue..., out), and
    // all_reduce_rows_out then (row operands..., rows_out); the other forms
    // (input, out).
    let segments = op.operand_segments();
    let prologue = Prologue::of(op, &operands, &segments);
    let first_epilogue = 1 + segments.get(1..4).map_or(0, |s| s.iter().sum());
    let out = if op.is(ROWS_OUT) {
        first_epilogue + segments.get(4).copied().unwrap_or(0)
    } else {
        operands.len() - 1
    };
    let rows = op.is(ROWS_OUT).then(|| {
        (
            operands[operands.len() - 1],
            operands[out + 1..operands.len() - 1].to_vec(),
        )
    });
    Roles {
        input: operands[0],
        prologue,
        epilogue: operands[first_epilogue..out].to_vec(),
        out: operands[out],
        rows,
    }
}

/// `symm_mem.pool_of %buffer`: the kernel handle of the buffer's pool.
fn pool_of(host: &mut Host, buffer: Val) -> Val {
    let op = OpBuilder::new("symm_mem.pool_of", host.b.loc)
        .operands(&[buffer])
        .results(&[Ty::pool(host.b.ctx)])
        .build();
    host.b.insert(op).result(0)
}

/// State of one run over a module.
struct Expansion {
    ctx: Ctx,
    groups: crate::GroupTable,
    limits: Limits,
    decls: Declarations,
    kernels: BTreeMap<String, AllReduceKernel>,
    /// Fused ops whose region (the index) becomes the named function.
    epilogues: Vec<(String, Op, usize)>,
    failed: bool,
}

impl Expansion {
    fn error(&mut self, op: Op, message: &str) {
        emit_error(op.loc(), message);
        self.failed = true;
    }

    /// The op becomes its kernels' launches: for each size segment, a
    /// `gpu.launch_func` behind a byte-count dispatch, taking the input's
    /// pool (`symm_mem.pool_of`), the pointers and the vector count.
    fn expand_all_reduce(&mut self, op: Op) {
        let name = op.name();
        let roles = roles(op);
        let facts = match self.all_reduce_facts(op, &roles) {
            Ok(facts) => facts,
            Err(message) => return self.error(op, &format!("'{name}' {message}")),
        };
        let segments = facts.segments(self.limits);
        let (input, out) = (roles.input, roles.out);
        let mut host = Host::without_runtime(At::Before(op), op, &mut self.decls);
        let input_ptr = host.ptr_of(input);
        // The kernel finds the peers' copies through the pool and the
        // input's offset from this rank's base.
        let pool = pool_of(&mut host, input);
        let out_ptr = host.ptr_of(out);
        let mut extra = Vec::new();
        for operand in &roles.epilogue {
            extra.push(host.ptr_of(*operand));
        }
        // A rows kernel's: rows_out, the row operands, the initial value.
        if let Some((rows_out, row_operands)) = &roles.rows {
            extra.push(host.ptr_of(*rows_out));
            for operand in row_operands {
                extra.push(host.ptr_of(*operand));
            }
            let f32 = host.b.ctx.ty("f32").expect("f32 parses");
            let init = op.attr("row_init").expect("verified: the op has row_init");
            let constant = OpBuilder::new("arith.constant", host.b.loc)
                .results(&[f32])
                .attr("value", init)
                .build();
            extra.push(host.b.insert(constant).result(0));
        }
        let pushes_into_outputs = segments
            .iter()
            .any(|s| s.kernel.push == Some(Push::IntoOutputs));
        // Peers' outputs: the same offset in the output's pool.
        let out_pool = pushes_into_outputs.then(|| pool_of(&mut host, out));
        // Elements of this call: static, or the leading size times the rest.
        let count = match facts.count {
            Some(count) => host.int(64, count as i64),
            None => {
                let rows = host.dim_i64(input, 0);
                let row = host.int(64, facts.row_elements as i64);
                host.arith("arith.muli", &[rows, row])
            }
        };
        let bytes_per_element = host.int(64, facts.element_bytes as i64);
        let bytes = host.arith("arith.muli", &[count, bytes_per_element]);
        let prologue = roles.prologue;
        let mut prologue_error = None;
        let mut launch = |host: &mut Host, segment: &Segment| {
            let kernel = &segment.kernel;
            // The matmul the kernel's data comes from: split over K into
            // the partials the kernel sums (and takes), or whole into its
            // input.
            let partials = match (&prologue, kernel.split_k) {
                (Some(prologue), Some(_)) => {
                    if let Err(message) = prologue.sliced(host) {
                        prologue_error = Some(message);
                    }
                    Some(host.ptr_of(prologue.partials))
                }
                (Some(prologue), None) => {
                    prologue.whole(host, input);
                    None
                }
                (None, _) => None,
            };
            // A rows kernel counts rows, and a block takes whole rows (the
            // grid rule in "vectors" of THREADS per row).
            let (unit, per_block) = match &kernel.rows {
                Some(rows) => (rows.columns, kernels::THREADS),
                None => (kernel.vector, 1),
            };
            let unit = host.int(64, unit as i64);
            let nvec = host.arith("arith.divui", &[count, unit]);
            let mut args = vec![pool, input_ptr, out_ptr, nvec];
            if kernel.push == Some(Push::IntoOutputs) {
                args.extend(out_pool);
            }
            args.extend(partials);
            args.extend_from_slice(&extra);
            let blocks = match (facts.count, &kernel.rows) {
                (Some(count), Some(rows)) => host.index(
                    (count / rows.columns)
                        .div_ceil(segment.divisor())
                        .clamp(1, kernel.most_blocks()) as i64,
                ),
                (Some(count), None) => {
                    host.index(kernel.grid_blocks(segment.per_rank(count)) as i64)
                }
                (None, _) => {
                    let per_block = host.int(64, per_block as i64);
                    let units = host.arith("arith.muli", &[nvec, per_block]);
                    host.grid_blocks(
                        units,
                        segment.divisor(),
                        kernel.threads(),
                        kernel.most_blocks(),
                    )
                }
            };
            host.launch_on(&kernel.name(), blocks, kernel.threads(), &args);
        };
        host.dispatch(bytes, &segments, |s| s.max_bytes, &mut launch);
        if let Some(message) = prologue_error {
            return self.error(op, &format!("'{name}' {message}"));
        }
        for segment in segments {
            self.kernels.insert(segment.kernel.name(), segment.kernel);
        }
        if !op.is("symm_mem.all_reduce_epilogue_out") && !op.is(ROWS_OUT) {
            op.erase();
        }
    }

    /// What decides an all-reduce's kernels, read once per op.
    fn all_reduce_facts(&mut self, op: Op, roles: &Roles) -> Result<AllReduceFacts, String> {
        let input = roles.input.ty();
        let element = input.element().print();
        let element_bytes =
            kernels::element_bytes(&element).ok_or("has an unsupported element type")?;
        let shape = input.shape();
        let too_large = || {
            format!(
                "has more elements than the kernels address (at most {} bytes)",
                i64::MAX
            )
        };
        // The product of the dims (None when one is dynamic), checked.
        let product = |dims: &[Option<i64>]| -> Result<Option<u64>, String> {
            dims.iter().try_fold(Some(1u64), |acc, d| match (acc, d) {
                (Some(acc), Some(d)) => acc.checked_mul(*d as u64).map(Some).ok_or_else(too_large),
                _ => Ok(None),
            })
        };
        let count = product(&shape)?;
        let row_elements = product(shape.get(1..).unwrap_or(&[]))?;
        let bound = crate::dynamic::enclosing_function(op).and_then(crate::dynamic::max_tokens);
        let (row_elements, max_count) = match (count, row_elements, bound) {
            (Some(count), _, _) => (count, count),
            (None, Some(row), Some(bound)) => (
                row,
                row.checked_mul(bound).ok_or_else(|| {
                    format!(
                        "has up to {bound} rows of {row} elements ({}), more than the kernels \
                         address",
                        crate::dynamic::MAX_TOKENS_ATTR
                    )
                })?,
            ),
            (None, Some(_), None) => {
                return Err(format!(
                    "has a dynamic size, but its function does not bound it: declare the \
                     largest token count with `attributes {{{} = N : i64}}`",
                    crate::dynamic::MAX_TOKENS_ATTR
                ));
            }
            (None, None, _) => {
                return Err(
                    "has dynamic sizes beyond the leading dimension, which the GPU lowering \
                     does not support"
                        .into(),
                );
            }
        };
        if max_count
            .checked_mul(element_bytes)
            .is_none_or(|bytes| bytes > i64::MAX as u64)
        {
            return Err(too_large());
        }
        let world = self.groups.world_size_of(op).ok_or(
            "runs in a group without a declared world_size; kernels are specialized by it",
        )?;
        if !(1..=kernels::MAX_WORLD).contains(&world) {
            return Err(format!(
                "runs on {world} ranks; the kernels support 1 to {}",
                kernels::MAX_WORLD
            ));
        }
        // Enum attributes hold their I32EnumAttr case values.
        let reduction = op
            .attr("reduction")
            .and_then(Attr::int)
            .and_then(Reduction::from_code)
            .ok_or("has no reduction kind")?;
        let fused = op.is("symm_mem.all_reduce_epilogue_out") || op.is(ROWS_OUT);
        let epilogue = fused.then(|| {
            let function = format!("symm_epilogue_{}", self.epilogues.len());
            self.epilogues.push((function.clone(), op, 0));
            function
        });
        let out_shape = roles.out.ty().shape();
        let columns = out_shape.last().copied().flatten().unwrap_or(1) as u64;
        let broadcast_of = |v: &Val| {
            let ty = v.ty();
            let broadcast = ty.shape().len() == 1 && out_shape.len() > 1;
            (ty.element().print(), broadcast)
        };
        let rows = match &roles.rows {
            Some((rows_out, row_operands)) => {
                if columns * element_bytes > kernels::ROW_BYTES_MAX {
                    return Err(format!(
                        "has rows of {} bytes; a fused row statistic takes rows of at most {} bytes",
                        columns * element_bytes,
                        kernels::ROW_BYTES_MAX
                    ));
                }
                let function = epilogue.as_deref().unwrap_or("symm_epilogue");
                let (step, apply) = (format!("{function}_step"), format!("{function}_apply"));
                self.epilogues.push((step.clone(), op, 1));
                self.epilogues.push((apply.clone(), op, 2));
                Some(RowsFacts {
                    step,
                    apply,
                    operands: row_operands.iter().map(broadcast_of).collect(),
                    out_element: rows_out.ty().element().print(),
                })
            }
            None => None,
        };
        let epilogue_types: Vec<(String, bool)> = roles
            .epilogue
            .iter()
            .map(|v| {
                let ty = v.ty();
                let broadcast = ty.shape().len() == 1 && out_shape.len() > 1;
                (ty.element().print(), broadcast)
            })
            .collect();
        let fixed = match op.name().as_str() {
            "symm_mem.one_shot_all_reduce_out" => Some(Algorithm::OneShot),
            "symm_mem.two_shot_all_reduce_out" => Some(Algorithm::TwoShot),
            "symm_mem.all_reduce_epilogue_out" | ROWS_OUT => {
                match op.attr("algorithm").and_then(Attr::int) {
                    Some(1) => Some(Algorithm::OneShot),
                    Some(2) => Some(Algorithm::TwoShot),
                    _ => None,
                }
            }
            _ => None,
        };
        Ok(AllReduceFacts {
            element,
            element_bytes,
            count,
            row_elements,
            max_count,
            world,
            reduction,
            columns,
            epilogue_types,
            epilogue,
            fixed,
            // The push two-shot overwrites the input, so only when nothing
            // reads it afterwards.
            input_read_after: used_after(roles.input, op),
            // Realize made the output symmetric if the push could use it.
            out_symmetric: roles
                .out
                .ty()
                .memory_space()
                .is_some_and(|space| space.allocator().is_some()),
            fused,
            rows,
            split_k: roles.prologue.map(|p| (p.slices(), p.max_rows)),
        })
    }

    /// Builds the kernels into `gpu.module @symm_kernels` and moves each
    /// fused op's region into its epilogue function.
    fn emit_kernels(&mut self, module: Op) {
        if self.kernels.is_empty() {
            return;
        }
        let epilogues: Vec<EpilogueDecl> = self
            .epilogues
            .iter()
            .map(|(function, op, region)| {
                let roles = roles(*op);
                let element = |v: &Val| v.ty().element().print();
                let out = element(&roles.out);
                let f32 = "f32".to_owned();
                let (elements, result) = match (region, &roles.rows) {
                    (1, _) => (vec![out, f32.clone()], f32),
                    (2, Some((rows_out, operands))) => {
                        let mut elements = vec![out, f32];
                        elements.extend(operands.iter().map(element));
                        (elements, element(rows_out))
                    }
                    _ => {
                        let mut elements = vec![element(&roles.input)];
                        elements.extend(roles.epilogue.iter().map(element));
                        (elements, out)
                    }
                };
                EpilogueDecl {
                    function: function.clone(),
                    elements,
                    result,
                }
            })
            .collect();
        let Some(block) = module.entry_block() else {
            return;
        };
        let gpu_module = match crate::collectives::emit_kernel_module(
            self.ctx,
            block,
            KERNEL_MODULE,
            &epilogues,
            self.kernels.values(),
        ) {
            Ok(gpu_module) => gpu_module,
            Err(message) => return self.error(module, &message),
        };
        let functions: BTreeMap<String, Op> = gpu_module
            .entry_block()
            .map(|b| b.ops())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|op| Some((op.symbol_name()?, op)))
            .collect();
        let mut fused = Vec::new();
        for (function, op, region) in std::mem::take(&mut self.epilogues) {
            if let Some(target) = functions.get(&function) {
                target.take_region_at(0, op, region);
                if let Some(body) = target.entry_block() {
                    replace_terminator(body, "func.return");
                }
            }
            if !fused.contains(&op) {
                fused.push(op);
            }
        }
        for op in fused {
            op.erase();
        }
    }
}

/// What decides an all-reduce's kernels.
struct AllReduceFacts {
    element: String,
    element_bytes: u64,
    /// Elements, when static.
    count: Option<u64>,
    /// Elements per leading index (all of them when static).
    row_elements: u64,
    /// Elements at the function's bound (the static count when static).
    max_count: u64,
    world: u64,
    reduction: Reduction,
    columns: u64,
    epilogue_types: Vec<(String, bool)>,
    epilogue: Option<String>,
    /// The algorithm the op names, if it names one.
    fixed: Option<Algorithm>,
    input_read_after: bool,
    out_symmetric: bool,
    fused: bool,
    rows: Option<RowsFacts>,
    /// A matmul prologue's slices of K and the most rows that take them.
    split_k: Option<(u64, u64)>,
}

/// What decides the row half of an `all_reduce_rows_out`'s kernels.
struct RowsFacts {
    step: String,
    apply: String,
    /// Each row operand's element type, and whether it is broadcast.
    operands: Vec<(String, bool)>,
    out_element: String,
}

/// The kernel for messages up to `max_bytes` (and above the previous
/// segment's).
struct Segment {
    kernel: AllReduceKernel,
    max_bytes: u64,
}

impl Segment {
    /// Vectors of one rank: all of them for a one-shot, a slice for a
    /// two-shot.
    fn divisor(&self) -> u64 {
        match self.kernel.algorithm {
            Algorithm::OneShot => 1,
            Algorithm::TwoShot => self.kernel.world,
        }
    }

    fn per_rank(&self, count: u64) -> u64 {
        (count / self.kernel.vector).div_ceil(self.divisor())
    }
}

impl AllReduceFacts {
    /// The kernel for a message of `count` elements.
    fn kernel(&self, count: u64, limits: Limits) -> AllReduceKernel {
        let bytes = count * self.element_bytes;
        let algorithm = self.fixed.unwrap_or_else(|| {
            let facts = Facts {
                world: Some(self.world),
                input_read_after: self.input_read_after,
                output_owned: self.out_symmetric,
            };
            if choose(bytes, facts, limits) == "one_shot" {
                Algorithm::OneShot
            } else {
                Algorithm::TwoShot
            }
        });
        // A rows kernel's two-shot pushes reduced rows into the inputs, and
        // pays only up to ROWS_TWO_SHOT_MAX.
        let algorithm = match (&self.rows, algorithm) {
            (Some(_), Algorithm::TwoShot) if self.input_read_after => Algorithm::OneShot,
            (Some(_), Algorithm::TwoShot)
                if self.fixed.is_none() && bytes > kernels::ROWS_TWO_SHOT_MAX =>
            {
                Algorithm::OneShot
            }
            _ => algorithm,
        };
        // Every message of the op must split into whole vectors: counts are
        // multiples of the row (one leading index) when dynamic.
        let unit = if self.count.is_some() {
            count
        } else {
            self.row_elements
        };
        let mut counts = vec![unit];
        if self.epilogue_types.iter().any(|(_, broadcast)| *broadcast) {
            counts.push(self.columns);
        }
        if self.rows.is_some() {
            // A block takes whole rows; a two-shot's chunks are rows.
            counts = vec![self.columns];
        } else if algorithm == Algorithm::TwoShot {
            // Slices must be whole vectors.
            counts.push(unit.div_ceil(self.world).max(1));
        }
        let vector = kernels::vector_width(self.element_bytes, &counts);
        // Each operand's element type, and its row length in vectors when
        // it is broadcast over rows.
        let operands = |types: &[(String, bool)]| -> Vec<EpilogueOperand> {
            types
                .iter()
                .map(|(element, broadcast)| EpilogueOperand {
                    element: element.clone(),
                    broadcast_row_vectors: broadcast.then_some(self.columns / vector),
                })
                .collect()
        };
        let rows = self.rows.as_ref().map(|rows| RowsEpilogue {
            step: rows.step.clone(),
            apply: rows.apply.clone(),
            operands: operands(&rows.operands),
            out_element: rows.out_element.clone(),
            columns: self.columns,
        });
        let epilogue = self.epilogue.as_ref().map(|function| Epilogue {
            function: function.clone(),
            operands: operands(&self.epilogue_types),
        });
        // The pool holds the input, so its staging slots hold any message
        // up to STAGING_MAX bytes (symm_protocol::staging_layout).
        // The Lamport one-shot (symm_protocol::library::lamport_takes): 16-bit
        // float sums up to the limit, each vector in the block of its index
        // at every size (one per thread); a rows kernel's row in the block
        // of its index (no more rows than channels), up to its own bound.
        let dtype = symm_protocol::abi::DtypeCode::from_text(&self.element);
        let lamport_takes = |vectors: u64| {
            dtype.is_some_and(|dtype| {
                symm_protocol::library::lamport_takes(
                    dtype,
                    self.reduction,
                    bytes as usize,
                    vectors as usize,
                    limits.lamport_max as usize,
                )
            })
        };
        let lamport = algorithm == Algorithm::OneShot
            && match &self.rows {
                None => lamport_takes(count / vector),
                Some(_) => {
                    lamport_takes(1)
                        && count / self.columns <= kernels::MAX_BLOCKS
                        && bytes <= kernels::ROWS_LAMPORT_MAX
                }
            };
        let staged = algorithm == Algorithm::OneShot && bytes <= kernels::STAGING_MAX && !lamport;
        let push = match algorithm {
            Algorithm::TwoShot if self.input_read_after => None,
            Algorithm::TwoShot if self.out_symmetric && !self.fused => Some(Push::IntoOutputs),
            Algorithm::TwoShot => Some(Push::IntoInputs),
            Algorithm::OneShot => None,
        };
        AllReduceKernel {
            algorithm,
            reduction: self.reduction,
            element: self.element.clone(),
            world: self.world,
            vector,
            epilogue,
            staged,
            lamport,
            push,
            tail: false,
            rows,
            split_k: None,
        }
    }

    /// The kernels over the sizes the op can have, each with the largest
    /// message it takes: one for a static size; for a dynamic one, a kernel
    /// per range between the byte sizes where the choice changes.
    fn segments(&self, limits: Limits) -> Vec<Segment> {
        let bytes = |count: u64| count * self.element_bytes;
        let (least, most) = (bytes(self.row_elements), bytes(self.max_count));
        let rows_bounds = self
            .rows
            .as_ref()
            .map(|_| [kernels::ROWS_LAMPORT_MAX, kernels::ROWS_TWO_SHOT_MAX]);
        // A matmul prologue is split over K up to its row bound.
        let split_k_bound = self
            .split_k
            .map(|(_, max_rows)| bytes(self.row_elements).saturating_mul(max_rows));
        let mut bounds: Vec<u64> = [
            limits.lamport_max,
            kernels::STAGING_MAX,
            limits.one_shot_max,
            limits.two_rank_push_max,
        ]
        .into_iter()
        .chain(rows_bounds.into_iter().flatten())
        .chain(split_k_bound)
        .filter(|limit| (least..most).contains(limit))
        .collect();
        bounds.sort_unstable();
        bounds.dedup();
        bounds.push(most);
        let mut segments: Vec<Segment> = Vec::new();
        for limit in bounds {
            // Whole rows: the largest message of the range.
            let count = (limit / self.element_bytes / self.row_elements).max(1) * self.row_elements;
            let mut kernel = self.kernel(count, limits);
            // Split-K kernels are one-shots: a two-shot's blocks read other
            // vectors of the peers' inputs than they would have summed.
            if let (Some((slices, _)), Some(bound)) = (self.split_k, split_k_bound)
                && limit <= bound
                && kernel.algorithm == Algorithm::OneShot
            {
                kernel.split_k = Some(slices);
            }
            match segments.last_mut() {
                Some(last) if last.kernel == kernel => last.max_bytes = limit,
                _ => segments.push(Segment {
                    kernel,
                    max_bytes: limit,
                }),
            }
        }
        segments
    }
}

impl SymmPass for ExpandCollectives {
    fn run(module: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let mut expansion = Expansion {
            ctx: module.ctx(),
            groups: module.group_table(),
            limits: Limits::from_options(options),
            decls: Declarations::default(),
            kernels: BTreeMap::new(),
            epilogues: Vec::new(),
            failed: false,
        };
        let collectives: Vec<Op> = module
            .walk()
            .into_iter()
            .filter(|op| expands(&op.name()))
            .collect();
        for op in collectives {
            expansion.expand_all_reduce(op);
        }
        if expansion.failed {
            return Err(PassFailed);
        }
        expansion.emit_kernels(module);
        if expansion.failed {
            return Err(PassFailed);
        }
        if !expansion.kernels.is_empty() {
            module.set_attr("gpu.container_module", expansion.ctx.unit());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts of a dynamic all-reduce of up to 4096 bf16 rows of 4096
    /// on 2 ranks, its output the caller's, with a row statistic or not.
    fn facts(rows: bool) -> AllReduceFacts {
        AllReduceFacts {
            element: "bf16".into(),
            element_bytes: 2,
            count: None,
            row_elements: 4096,
            max_count: 4096 * 4096,
            world: 2,
            reduction: Reduction::Sum,
            columns: 4096,
            epilogue_types: vec![("bf16".into(), false)],
            epilogue: Some("symm_epilogue_0".into()),
            fixed: None,
            input_read_after: false,
            out_symmetric: false,
            fused: true,
            rows: rows.then(|| RowsFacts {
                step: "symm_epilogue_0_step".into(),
                apply: "symm_epilogue_0_apply".into(),
                operands: vec![("bf16".into(), true)],
                out_element: "bf16".into(),
            }),
            split_k: None,
        }
    }

    const LIMITS: Limits = Limits {
        one_shot_max: 1 << 20,
        two_rank_push_max: 8 << 20,
        lamport_max: 0,
    };

    fn plan(facts: &AllReduceFacts) -> Vec<(Algorithm, bool, u64)> {
        facts
            .segments(LIMITS)
            .into_iter()
            .map(|s| (s.kernel.algorithm, s.kernel.staged, s.max_bytes))
            .collect()
    }

    #[test]
    fn rows_kernels_take_the_two_shot_only_up_to_its_limit() {
        use Algorithm::{OneShot, TwoShot};
        let mb = 1 << 20;
        assert_eq!(
            plan(&facts(true)),
            vec![
                (OneShot, true, 512 << 10),
                (OneShot, false, mb),
                (TwoShot, false, 2 * mb),
                (OneShot, false, 32 * mb),
            ]
        );
        // The plain epilogue keeps the all-reduce's own limits.
        assert_eq!(
            plan(&facts(false)),
            vec![
                (OneShot, true, 512 << 10),
                (OneShot, false, mb),
                (TwoShot, false, 8 * mb),
                (OneShot, false, 32 * mb),
            ]
        );
    }

    #[test]
    fn rows_kernels_take_whole_rows_and_every_channel() {
        let facts = facts(true);
        let kernel = facts.kernel(4096 * 16, LIMITS);
        let rows = kernel.rows.as_ref().expect("a rows kernel");
        assert_eq!(kernel.vector, 8);
        assert_eq!(rows.operands[0].broadcast_row_vectors, Some(512));
        assert_eq!(kernel.most_blocks(), kernels::MAX_BLOCKS);
        assert_eq!(
            kernel.name(),
            "symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply"
        );
        // A two-shot rows kernel pushes into the inputs; read afterwards,
        // the input cannot take it: one-shot.
        let mut read_after = facts;
        read_after.input_read_after = true;
        assert_eq!(
            read_after.kernel(4096 * 256, LIMITS).algorithm,
            Algorithm::OneShot
        );
    }

    #[test]
    fn lamport_takes_small_sums_of_16_bit_floats_only() {
        let limits = Limits {
            lamport_max: 256 << 10,
            ..LIMITS
        };
        let plain = facts(false);
        let at = |facts: &AllReduceFacts, count: u64| {
            let kernel = facts.kernel(count, limits);
            (kernel.lamport, kernel.staged)
        };
        // Up to the limit Lamport, then staged to STAGING_MAX.
        assert_eq!(at(&plain, 4096), (true, false));
        assert_eq!(at(&plain, 4096 * 32), (true, false));
        assert_eq!(at(&plain, 4096 * 33), (false, true));
        assert_eq!(
            plain.kernel(4096, limits).name(),
            "symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0"
        );
        // Its blocks are LAMPORT_THREADS wide, one vector per thread: 8 KB
        // (512 vectors of 8 lanes) on 4 blocks of 128, where the staged
        // kernel's 512-thread blocks take one.
        let lamport = plain.kernel(4096, limits);
        assert_eq!(lamport.threads(), 128);
        assert_eq!(lamport.grid_blocks(512), 4);
        let staged = plain.kernel(4096 * 33, limits);
        assert_eq!(staged.threads(), kernels::THREADS);
        assert_eq!(staged.grid_blocks(512), 1);
        // The largest Lamport message still has a block per 128 vectors.
        assert_eq!(
            lamport.grid_blocks((256 << 10) / 16),
            (256 << 10) / 16 / 128
        );
        // The dispatch gains a segment at the limit.
        let segments: Vec<(bool, u64)> = plain
            .segments(limits)
            .into_iter()
            .map(|s| (s.kernel.lamport, s.max_bytes))
            .take(2)
            .collect();
        assert_eq!(segments, vec![(true, 256 << 10), (false, 512 << 10)]);
        // No sentinel in f32, -0.0 matters to max.
        let mut f32 = facts(false);
        (f32.element, f32.element_bytes) = ("f32".into(), 4);
        assert_eq!(at(&f32, 4096), (false, true));
        let mut max = facts(false);
        max.reduction = Reduction::Max;
        assert_eq!(at(&max, 4096), (false, true));
        // A rows kernel (residual + RMSNorm) takes it too, a block per row
        // of 512 threads: 16 rows of 4096 on 16 blocks.
        let rows = facts(true);
        assert_eq!(at(&rows, 4096 * 16), (true, false));
        // Up to ROWS_LAMPORT_MAX (32 rows of 4096 bf16), then staged.
        assert_eq!(at(&rows, 4096 * 32), (true, false));
        assert_eq!(at(&rows, 4096 * 33), (false, true));
        let kernel = rows.kernel(4096 * 16, limits);
        assert_eq!(kernel.threads(), kernels::THREADS);
        assert!(
            kernel
                .name()
                .starts_with("symm_one_shot_lamport_sum_bf16_w2_v8_")
        );
        // Odd counts take narrow vectors: more than one per thread of the
        // widest grid would move vectors between blocks across sizes.
        let mut odd = facts(false);
        (odd.count, odd.row_elements, odd.max_count) = (Some(135_169), 135_169, 135_169);
        assert_eq!(at(&odd, 135_169), (false, true));
    }

    /// A matmul prologue split over K up to 128 rows of 4096 bf16 (1 MiB):
    /// the one-shots up to that size sum the slices (the Lamport one and the
    /// barrier one), and the kernels above run on the whole product.
    #[test]
    fn split_k_takes_the_one_shots_up_to_its_rows() {
        let limits = Limits {
            lamport_max: 512 << 10,
            ..LIMITS
        };
        let mut split = facts(false);
        split.split_k = Some((2, 128));
        let segments = split.segments(limits);
        let kernels: Vec<(bool, Option<u64>, u64)> = segments
            .iter()
            .map(|s| (s.kernel.lamport, s.kernel.split_k, s.max_bytes))
            .collect();
        assert_eq!(
            kernels[..3],
            [
                (true, Some(2), 512 << 10),
                (false, Some(2), 1 << 20),
                (false, None, 8 << 20),
            ]
        );
        assert!(segments[2].kernel.algorithm == Algorithm::TwoShot);
        assert!(segments[1].kernel.name().ends_with("_splitk2"));
        // A bound below the Lamport limit splits the Lamport range there.
        split.split_k = Some((2, 16));
        let bounds: Vec<(Option<u64>, u64)> = split
            .segments(limits)
            .iter()
            .map(|s| (s.kernel.split_k, s.max_bytes))
            .take(2)
            .collect();
        assert_eq!(bounds, [(Some(2), 16 * 8192), (None, 512 << 10)]);
    }

    /// The rows kernels (residual + RMSNorm) take the split too, in each of
    /// their one-shots up to 128 rows: Lamport up to ROWS_LAMPORT_MAX,
    /// staged up to STAGING_MAX, between barriers up to the bound; the
    /// two-shot above sums no slices.
    #[test]
    fn split_k_takes_the_rows_one_shots() {
        let limits = Limits {
            lamport_max: 512 << 10,
            ..LIMITS
        };
        let mut split = facts(true);
        split.split_k = Some((2, 128));
        let kernels: Vec<(bool, bool, Option<u64>, u64)> = split
            .segments(limits)
            .iter()
            .map(|s| {
                (
                    s.kernel.lamport,
                    s.kernel.staged,
                    s.kernel.split_k,
                    s.max_bytes,
                )
            })
            .take(4)
            .collect();
        assert_eq!(
            kernels,
            [
                (true, false, Some(2), kernels::ROWS_LAMPORT_MAX),
                (false, true, Some(2), 512 << 10),
                (false, false, Some(2), 1 << 20),
                (false, false, None, 2 << 20),
            ]
        );
        let segments = split.segments(limits);
        assert!(segments[3].kernel.algorithm == Algorithm::TwoShot);
        assert!(
            segments[2]
                .kernel
                .name()
                .ends_with("_rows_symm_epilogue_0_apply_splitk2")
        );
    }
}
