//! The runtime's library kernels (`symm_protocol::library`), built from
//! the same kernel IR as compiled programs' collectives and lowered by the
//! same pipeline (`registration::upstream_gpu_to_llvm`), to PTX that
//! `symm-kernels` commits under `runtime/kernels/` with a table the
//! runtime embeds. The runtime thus needs no MLIR and no CUDA toolkit, and
//! has no kernel of its own.

use crate::PassError;
use crate::analysis::all_reduce::{Algorithm, AllReduceKernel, Push, THREADS};
use crate::collectives::emit::{Emitter, Val, building};
use crate::collectives::kernel_ir;
use crate::ir::melior_ext::{BlockExt, OperationExt};
use crate::ir::op_kind::OpKind;
use melior::{
    Context,
    dialect::{arith::CmpiPredicate, ods},
    ir::{
        Attribute, Block, BlockLike, Location, Module, Region, RegionLike,
        attribute::StringAttribute,
    },
    pass::PassManager,
};
use std::fmt::Write;
use symm_protocol::library::{AllReduce, Kernel, Variant};

/// Entries of the barrier kernels.
const BARRIER: &str = "symm_barrier";
const BARRIER_TEST: &str = "symm_barrier_test";

/// The all-reduce kernel IR of a library key.
pub fn all_reduce_kernel(key: AllReduce) -> AllReduceKernel {
    AllReduceKernel {
        algorithm: match key.variant {
            Variant::TwoShot => Algorithm::TwoShot,
            Variant::OneShot | Variant::OneShotStaged | Variant::Lamport => Algorithm::OneShot,
        },
        reduction: key.reduce,
        element: key.dtype.into(),
        world: u64::from(key.world),
        vector: (16 / key.dtype.bytes()) as u64,
        epilogue: None,
        staged: key.variant == Variant::OneShotStaged,
        lamport: key.variant == Variant::Lamport,
        push: (key.variant == Variant::TwoShot).then_some(Push::IntoInputs),
        tail: key.tail,
        rows: None,
        split_k: None,
        matmul_sends: false,
    }
}

/// A library kernel's PTX entry and elements per vector access (1 for
/// kernels that move no elements).
pub fn entry_of(kernel: Kernel) -> (String, usize) {
    match kernel {
        Kernel::AllReduce(key) => {
            let ir = all_reduce_kernel(key);
            (ir.name(), ir.vector as usize)
        }
        Kernel::AllReduceRmsNorm { staged, world } => (
            kernel_ir::all_reduce_rms_norm_name(u64::from(world), staged),
            8,
        ),
        Kernel::RmsNorm => (kernel_ir::RMS_NORM.to_owned(), 8),
        Kernel::Barrier => (BARRIER.to_owned(), 1),
        Kernel::BarrierTest => (BARRIER_TEST.to_owned(), 1),
    }
}

/// One generated kernel.
pub struct Generated {
    pub kernel: Kernel,
    pub name: String,
    pub vector: usize,
    pub ptx: String,
}

/// Library kernels as IR, before lowering: a module holding a
/// `gpu.module` per kernel of `kernels`, named as its entry, in order.
pub fn build_module(
    context: &Context,
    kernels: impl IntoIterator<Item = Kernel>,
) -> Result<Module<'_>, PassError> {
    let location = Location::name(context, "symm-library", Location::unknown(context));
    let module = Module::new(location);
    module
        .as_operation()
        .set_attribute_to("gpu.container_module", Attribute::unit(context));
    for kernel in kernels {
        let (name, _) = entry_of(kernel);
        let body = Block::new(&[]);
        let e = Emitter::new(context, location, building(&body));
        build(&e, kernel, &name)?;
        let region = Region::new();
        region.append_block(body);
        module.body().append_operation(
            ods::gpu::module(
                context,
                region,
                StringAttribute::new(context, &name),
                location,
            )
            .into(),
        );
    }
    Ok(module)
}

/// Builds every library kernel (`build_module`), lowers them and returns
/// their PTX, in `symm_protocol::library::all()` order.
pub fn generate(context: &Context) -> Result<Vec<Generated>, PassError> {
    let module = build_module(context, symm_protocol::library::all())?;
    let keys: Vec<Kernel> = symm_protocol::library::all().collect();
    let mut module = module;
    let pass_manager = PassManager::new(context);
    melior::utility::parse_pass_pipeline(
        pass_manager.as_operation_pass_manager(),
        &format!(
            "builtin.module({})",
            crate::registration::upstream_gpu_to_llvm(
                None,
                crate::gpu_codegen::chip::Chip::DEFAULT,
                false,
            )
        ),
    )
    .map_err(|error| PassError::Build(format!("the library pipeline does not parse: {error}")))?;
    pass_manager.run(&mut module).map_err(|_| {
        PassError::Build("the library kernels do not lower (see the errors above)".into())
    })?;
    let mut binaries = std::collections::HashMap::new();
    for op in module.body().ops() {
        if !op.isa(OpKind::GpuBinary) {
            continue;
        }
        let name = op
            .symbol_or_string("sym_name")
            .ok_or("a gpu.binary without a name")?;
        let text = crate::gpu_codegen::ptx::extract(&symm_dialects::op_text(op.to_raw()));
        crate::gpu_codegen::ptx::check_resolved(&text)?;
        binaries.insert(name, text);
    }
    keys.into_iter()
        .map(|kernel| {
            let (name, vector) = entry_of(kernel);
            let ptx = binaries
                .remove(&name)
                .ok_or_else(|| format!("no PTX for {name}"))?;
            Ok(Generated {
                kernel,
                name,
                vector,
                ptx,
            })
        })
        .collect()
}

fn build<'c>(e: &Emitter<'c>, kernel: Kernel, name: &str) -> Result<(), PassError> {
    let module = e.block;
    match kernel {
        // Launched the ordinary way (no programmatic launch to signal).
        Kernel::AllReduce(key) => all_reduce_kernel(key).build(e, module, 0)?,
        Kernel::AllReduceRmsNorm { staged, world } => {
            kernel_ir::build_all_reduce_rms_norm(e, module, u64::from(world), staged);
        }
        Kernel::RmsNorm => kernel_ir::build_rms_norm(e, module),
        // Both run one block.
        Kernel::Barrier => {
            e.kernel(module, name, &[e.pool()], (THREADS, 1), |k| {
                k.barrier(k.arg(0), k.block_id())
            });
        }
        Kernel::BarrierTest => {
            e.kernel(
                module,
                name,
                &[e.pool(), e.ptr(), e.ptr(), e.i64()],
                (THREADS, 1),
                barrier_test,
            );
        }
    }
    Ok(())
}

/// The protocol's stress test, one block: `iterations` times thread 0
/// stores the iteration number in word 0 of this rank's buffer, the block
/// meets its peers, thread 0 reads every rank's word 0 and counts each
/// value other than the iteration in `mismatches` (a lost or stale signal
/// shows), and the block meets its peers again before the next store.
fn barrier_test<'c>(e: &Emitter<'c>) {
    let arg = |index| e.arg(index);
    let (pool, mine, mismatches, iterations) = (arg(0), arg(1), arg(2), arg(3));
    let channel = e.block_id();
    let world = e.cast(e.pool_world_size(pool), e.i64());
    let i32 = e.int_type(32);
    let first = e.cmp(CmpiPredicate::Eq, e.cast(e.thread_id(), e.i64()), e.c64(0));
    e.for_range(e.c64(0), iterations, e.c64(1), |e, iteration| {
        let expected = e.trunci(iteration, i32);
        e.when(first, |e| e.store_relaxed(expected, mine, 4));
        e.barrier(pool, channel);
        e.when(first, |e| {
            e.for_range(e.c64(0), world, e.c64(1), |e, peer| {
                let peer: Val<'c> = e.cast(peer, e.index());
                let word = e.load_relaxed(e.peer_ptr(pool, peer, mine), i32, 4);
                let stale = e.cmp(CmpiPredicate::Ne, word, expected);
                e.when(stale, |e| e.atomic_add(mismatches, e.constant(i32, 1)));
            });
        });
        e.barrier(pool, channel);
    });
}

/// The table the runtime embeds (`runtime/kernels/table.rs`): an
/// `Entry` per kernel, its PTX from `DIR/<entry>.ptx`.
pub fn render_table(kernels: &[Generated], llvm_version: &str) -> String {
    let mut out = format!(
        "// Generated by `symm-kernels --write runtime/kernels` from the compiler's kernel\n\
         // IR and pipeline (LLVM {llvm_version}); do not edit. The lit test\n\
         // Integration/library-kernels.test fails when it is stale.\n\
         pub const KERNELS: &[Entry] = &[\n"
    );
    for kernel in kernels {
        let key = match kernel.kernel {
            Kernel::AllReduce(key) => format!(
                "Kernel::AllReduce(AllReduce {{ variant: Variant::{:?}, dtype: DtypeCode::{:?}, \
                 reduce: ReduceCode::{:?}, world: {}, tail: {} }})",
                key.variant, key.dtype, key.reduce, key.world, key.tail
            ),
            Kernel::AllReduceRmsNorm { staged, world } => {
                format!("Kernel::AllReduceRmsNorm {{ staged: {staged}, world: {world} }}")
            }
            other => format!("Kernel::{other:?}"),
        };
        let _ = writeln!(
            out,
            "    Entry {{\n        kernel: {key},\n        name: \"{name}\",\n        vector: {vector},\n        ptx: include_str!(\"{name}.ptx\"),\n    }},",
            name = kernel.name,
            vector = kernel.vector,
        );
    }
    out.push_str("];\n");
    out
}
