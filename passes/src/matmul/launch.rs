//! The host side of a generated matmul: the group's ops move into the
//! library's branch of a measured choice (`symm_mem.kernel_rounds`,
//! `kernel_variant`, `kernel_variant_end`), whose other branch launches
//! the kernel. Built with typed builders into a detached block, then moved
//! in place after the group's last op.

use super::{KERNEL_MODULE, Planned};
use crate::collectives::emit::{Emitter, Val, building};
use crate::ir::builders::{gpu_launch_func_op, reinterpret_cast_op};
use crate::ir::melior_ext::{
    OperationExt, ValueExt, element_bytes, nested_symbol, strided_memref_type, strides_and_offset,
};
use melior::{
    Context,
    dialect::{arith::CmpiPredicate, ods, scf},
    ir::{
        Block, BlockLike, Region, RegionLike, Value, attribute::IntegerAttribute,
        operation::OperationMutLike,
    },
};
use symm_dialects::symm_mem;

/// The address of `memref`'s first element as an i64.
fn address<'c>(e: &Emitter<'c>, memref: Value<'c, '_>) -> Val<'c> {
    let index = e
        .one(ods::memref::extract_aligned_pointer_as_index(e.ctx, e.index(), memref, e.loc).into());
    let mut address = e.cast(index, e.i64());
    let layout = memref.memref_type().map(|ty| {
        (
            strides_and_offset(ty),
            element_bytes(melior::ir::r#type::ShapedTypeLike::element(&ty)),
        )
    });
    if let Some((Some((_, Some(offset))), Some(bytes))) = layout
        && offset != 0
    {
        address = e.add(address, e.c64(offset * bytes as i64));
    }
    address
}

/// Whether every address is a multiple of `symm_protocol::VECTOR_ALIGNMENT`
/// (an i1).
fn all_aligned<'c>(e: &Emitter<'c>, addresses: &[Val<'c>]) -> Val<'c> {
    let Some((first, rest)) = addresses.split_first() else {
        return e.constant(e.int_type(1), 1);
    };
    let any = rest.iter().fold(*first, |any, a| e.or(any, *a));
    // The entry point checks its arguments; a view inside the program may
    // still start mid-vector.
    let low = e.and(any, e.c64(symm_protocol::VECTOR_ALIGNMENT as i64 - 1));
    e.cmp(CmpiPredicate::Eq, low, e.c64(0))
}

/// `memref.dim %memref, dim` as an index.
fn rows<'c>(e: &Emitter<'c>, memref: Value<'c, '_>, dim: usize) -> Val<'c> {
    let dim = e.c_index(dim as i64);
    e.one(melior::dialect::memref::dim(memref, dim, e.loc))
}

/// Replaces the group's ops with the measured choice between the kernel
/// and themselves. A call whose operands are not all 16-byte aligned (a
/// view that starts mid-vector) runs the library's branch without
/// measuring: the kernels' vector loads would fault on it. So does a call
/// of more rows than the tensor-core kernel takes whose GEMV has no
/// weight descriptor (`generated_can_run`). `after_gemv`: the site of the
/// group whose output is this group's input, and whose GEMV, where that
/// site takes it, runs just before this one
/// (`symm_mem.kernel_rounds ... after_gemv(site)`).
pub(super) fn dispatch<'c>(
    context: &'c Context,
    p: &Planned<'c, '_>,
    site: i64,
    max_rows: u64,
    after_gemv: Option<i64>,
) {
    use melior::ir::operation::OperationLike;
    let ops = p.group.ops();
    let Some(last) = ops.last().copied() else {
        return;
    };
    let Some(after) = last.next_in_block() else {
        return;
    };
    let mut library_block = None;
    Emitter::build_before(context, after, ops[0], |e| {
        let loc = e.loc;
        let i64 = e.i64();
        let site_attr = IntegerAttribute::new(i64, site);
        let max_attr = IntegerAttribute::new(i64, max_rows as i64);
        let m = rows(e, p.a, p.rows_dim);
        let (args, addresses) = arguments(e, p, m);
        let mut runnable = all_aligned(e, &addresses);
        if let Some(can_run) = generated_can_run(e, p, m) {
            runnable = e.and(runnable, can_run);
        }
        let rounds = e.choose(
            runnable,
            e.index(),
            |e| {
                let mut rounds: melior::ir::Operation =
                    symm_mem::kernel_rounds(context, e.index(), m, site_attr, max_attr, loc).into();
                if let Some(before) = after_gemv {
                    rounds.set_attribute("after_gemv", IntegerAttribute::new(i64, before).into());
                }
                e.one(rounds)
            },
            |e| e.c_index(1),
        );
        e.for_range(e.c_index(0), rounds, e.c_index(1), |e, round| {
            let generated = e.choose(
                runnable,
                e.int_type(1),
                |e| {
                    e.one(
                        symm_mem::kernel_variant(
                            context,
                            e.int_type(1),
                            m,
                            round,
                            site_attr,
                            max_attr,
                            loc,
                        )
                        .into(),
                    )
                },
                |e| e.constant(e.int_type(1), 0),
            );
            // The kernel's branch. A GEMV that sends its product to the
            // all-reduce (`lamport_send`) does so in the last round only:
            // the all-reduce runs once, after the rounds.
            let then_block = Block::new(&[]);
            let then = e.into_block(building(&then_block));
            let send = p.lamport_pool.map(|pool| {
                let last = e.cmp(CmpiPredicate::Eq, e.add(round, e.c_index(1)), rounds);
                [pool, e.extui(last, e.int_type(32))]
            });
            choose_kernel(&then, p, &args, &p.gemv, send);
            then.push(scf::r#yield(&[], loc));
            // The library's branch: the group's ops move here.
            let else_block = Block::new(&[]);
            let otherwise = building(&else_block);
            e.into_block(otherwise).push(scf::r#yield(&[], loc));
            library_block = Some(otherwise);
            let then_region = Region::new();
            then_region.append_block(then_block);
            let else_region = Region::new();
            else_region.append_block(else_block);
            e.push(scf::r#if(generated, &[], then_region, else_region, loc));
            e.when(runnable, |e| {
                e.push(symm_mem::kernel_variant_end(context, m, round, site_attr, loc).into());
            });
        });
    });
    if let Some(library) = library_block
        && let Some(end) = library.terminator()
    {
        for op in ops {
            op.move_before_op(end);
        }
    }
}

/// Which of a group's generated kernels a launch runs.
#[derive(Clone, Copy)]
enum Kernel {
    TensorCore,
    Gemv(super::gemv::GemvTile),
}

/// Launches the first GEMV of `gemvs` (ordered by rows) that takes the
/// call's row count, else the tensor-core kernel; a group of weights
/// stored n x k has none, and its last GEMV takes every call that reaches
/// it (the runtime gives calls of more rows the library). A GEMV whose weight the
/// TMA streams takes the call only where the runtime has the weights'
/// descriptors (`symm_mem.tensor_map`), which it gets as extra arguments.
fn choose_kernel<'c>(
    e: &Emitter<'c>,
    p: &Planned<'_, '_>,
    args: &[Val<'c>],
    gemvs: &[super::gemv::GemvTile],
    send: Option<[Val<'c>; 2]>,
) {
    let Some((gemv, rest)) = gemvs.split_first() else {
        launch(e, p, args, Kernel::TensorCore);
        return;
    };
    if rest.is_empty() && p.kernel.weight_transposed {
        launch(e, p, args, Kernel::Gemv(*gemv));
        return;
    }
    let mut fits = e.cmp(
        CmpiPredicate::Ule,
        args[p.weights.len() + 2],
        e.c64(gemv.takes() as i64),
    );
    let mut gemv_args = args.to_vec();
    if gemv.streams_by_tma() {
        // Asked for only where the call's rows fit: a descriptor of `a` is
        // made per row count and box, and one for a kernel the call does
        // not take would only fill the runtime's table.
        for descriptor in descriptors(e, p, gemv, Some(fits)) {
            fits = e.and(fits, e.cmp(CmpiPredicate::Ne, descriptor, e.c64(0)));
            gemv_args.push(descriptor);
        }
    }
    if p.kernel.sends(*gemv)
        && let Some(send) = send
    {
        gemv_args.extend(send);
    }
    e.if_else(
        fits,
        |e| launch(e, p, &gemv_args, Kernel::Gemv(*gemv)),
        |e| choose_kernel(e, p, args, rest, send),
    );
}

/// The runtime's TMA descriptors (`symm_mem.tensor_map`: 0 where it has
/// none) that GEMV `gemv` takes: each weight's for its boxes of
/// `stage_rows` x 64, and with `wgmma` that of the call's rows of `a` for
/// boxes of its `rows` x 64. With `when` (an i1), each is asked for only
/// where it holds, and is 0 elsewhere.
fn descriptors<'c>(
    e: &Emitter<'c>,
    p: &Planned<'c, 'c>,
    gemv: &super::gemv::GemvTile,
    when: Option<Val<'c>>,
) -> Vec<Val<'c>> {
    let map = |e: &Emitter<'c>, matrix: Option<Value<'c, 'c>>, rows: u64| {
        let ask = |e: &Emitter<'c>| {
            let matrix = matrix.unwrap_or_else(|| a_matrix(e, p));
            e.one(
                symm_mem::tensor_map(
                    e.ctx,
                    e.i64(),
                    matrix,
                    IntegerAttribute::new(e.i64(), rows as i64),
                    IntegerAttribute::new(e.i64(), gemv.columns as i64),
                    e.loc,
                )
                .into(),
            )
        };
        match when {
            Some(when) => e.choose(when, e.i64(), ask, |e| e.c64(0)),
            None => ask(e),
        }
    };
    let mut descriptors: Vec<Val<'c>> = p
        .weights
        .iter()
        .map(|w| map(e, Some(*w), gemv.stage_rows))
        .collect();
    if gemv.engine == super::gemv::Engine::Wgmma {
        descriptors.push(map(e, None, gemv.rows));
    }
    descriptors
}

/// `a` as one row-major matrix of the call's rows: itself, or for split-K
/// slices side by side in its rows (`S x M x K` with strides `K, S K, 1`)
/// a view of `M x S K`.
fn a_matrix<'c>(e: &Emitter<'c>, p: &Planned<'c, 'c>) -> Value<'c, 'c> {
    let Some(ty) = p.a.memref_type() else {
        return p.a;
    };
    if melior::ir::r#type::ShapedTypeLike::rank(&ty) != 3 {
        return p.a;
    }
    let k = &p.kernel;
    let columns = (k.slices * k.k) as i64;
    let offset = strides_and_offset(ty)
        .and_then(|(_, offset)| offset)
        .unwrap_or(0);
    let view = strided_memref_type(
        e.ctx,
        &[None, Some(columns)],
        melior::ir::r#type::ShapedTypeLike::element(&ty),
        (&[k.lda as i64, 1], offset),
        ty.memory_space(),
    );
    let m = rows(e, p.a, p.rows_dim);
    e.one(reinterpret_cast_op(e.ctx, e.loc, p.a, view, &[m]))
}

/// Whether the generated branch can run a call of `m` rows (an i1): a call
/// of more rows than the tensor-core kernel takes runs only a GEMV whose
/// operands the TMA streams, which needs the runtime's descriptors (it
/// makes none while a CUDA graph is captured); without them such a call
/// takes the library. Only the descriptors of the GEMV the call would take
/// are asked for.
fn generated_can_run<'c>(e: &Emitter<'c>, p: &Planned<'c, 'c>, m: Val<'c>) -> Option<Val<'c>> {
    let tiled = p.kernel.tile.rows();
    let beyond: Vec<&super::gemv::GemvTile> = p
        .gemv
        .iter()
        .filter(|g| g.streams_by_tma() && g.takes() > tiled)
        .collect();
    if beyond.is_empty() {
        return None;
    }
    let i1 = e.int_type(1);
    let have = |e: &Emitter<'c>, gemv: &super::gemv::GemvTile| {
        descriptors(e, p, gemv, None)
            .into_iter()
            .fold(e.constant(i1, 1), |all, d| {
                e.and(all, e.cmp(CmpiPredicate::Ne, d, e.c64(0)))
            })
    };
    fn first_that_takes<'c>(
        e: &Emitter<'c>,
        m: Val<'c>,
        tiles: &[&super::gemv::GemvTile],
        have: &dyn Fn(&Emitter<'c>, &super::gemv::GemvTile) -> Val<'c>,
    ) -> Val<'c> {
        let i1 = e.int_type(1);
        let Some((gemv, rest)) = tiles.split_first() else {
            return e.constant(i1, 0);
        };
        let takes = e.cmp(CmpiPredicate::Ule, m, e.c_index(gemv.takes() as i64));
        e.choose(
            takes,
            i1,
            |e| have(e, gemv),
            |e| first_that_takes(e, m, rest, have),
        )
    }
    let within = e.cmp(CmpiPredicate::Ule, m, e.c_index(tiled as i64));
    Some(e.choose(
        within,
        i1,
        |e| e.constant(i1, 1),
        |e| first_that_takes(e, m, &beyond, &have),
    ))
}

/// The most rows a group's generated branch takes: its tensor-core
/// kernel's, or more where a GEMV takes more.
pub(super) fn max_rows(p: &Planned<'_, '_>) -> u64 {
    rows_taken(&p.kernel, &p.gemv)
}

/// The most rows `kernel`'s tensor-core kernel (none for weights stored
/// n x k) and `gemvs` take.
pub(super) fn rows_taken(
    kernel: &super::kernel::SkinnyMatmul,
    gemvs: &[super::gemv::GemvTile],
) -> u64 {
    let tensor_core = if kernel.weight_transposed {
        0
    } else {
        kernel.tile.rows()
    };
    gemvs.iter().map(|g| g.takes()).fold(tensor_core, u64::max)
}

/// The kernels' arguments (every kernel of a group takes the same), and
/// the addresses of the memrefs among them.
fn arguments<'c>(e: &Emitter<'c>, p: &Planned<'c, 'c>, m: Val<'c>) -> (Vec<Val<'c>>, Vec<Val<'c>>) {
    let a = address(e, p.a);
    let weights: Vec<Val<'c>> = p.weights.iter().map(|w| address(e, *w)).collect();
    let out = address(e, p.out);
    let columns: Vec<Val<'c>> = p.columns.iter().map(|c| address(e, *c)).collect();
    let mut args = vec![e.int_to_ptr(a)];
    args.extend(weights.iter().map(|w| e.int_to_ptr(*w)));
    args.push(e.int_to_ptr(out));
    args.push(e.cast(m, e.i64()));
    if let Some(init) = p.init {
        args.push(init);
    }
    args.extend(columns.iter().map(|c| e.int_to_ptr(*c)));
    let mut addresses = vec![a, out];
    addresses.extend(weights);
    addresses.extend(columns);
    (args, addresses)
}

/// `gpu.launch_func` of one of the planned kernels on its grid, with its
/// dynamic shared memory.
fn launch<'c>(e: &Emitter<'c>, p: &Planned<'_, '_>, args: &[Val<'c>], which: Kernel) {
    let k = &p.kernel;
    let (name, (x, y), threads, shared) = match which {
        Kernel::TensorCore => (
            k.name.clone(),
            k.grid(),
            k.tile.threads(),
            k.tile.shared_bytes(k.weights),
        ),
        Kernel::Gemv(tile) => (
            k.gemv_name(tile),
            k.gemv_grid(tile),
            tile.threads(k.weights),
            tile.shared_bytes(&k.gemv_shape()),
        ),
    };
    let one = e.c_index(1);
    let grid = [e.c_index(x as i64), e.c_index(y as i64), one];
    let block = [e.c_index(threads as i64), one, one];
    let shared = e.constant(e.int_type(32), shared as i64);
    let kernel = nested_symbol(e.ctx, KERNEL_MODULE, &name);
    e.push(gpu_launch_func_op(
        e.ctx,
        e.loc,
        kernel,
        [grid, block],
        Some(shared),
        args,
    ));
}
