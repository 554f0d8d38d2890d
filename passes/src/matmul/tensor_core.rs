//! Typed builders for what the matmul kernels need beyond `emit::Emitter`:
//! the upstream NVVM ops (`mma.sync`, `ldmatrix`, `mbarrier.*`,
//! `cp.async`) built with the op builders that `melior::dialect!`
//! generates from MLIR's own `NVVMOps.td` (`symm_dialects::nvvm`), their
//! attributes through our small C API (`symm-c/Nvvm.h`), shared-memory
//! pointers (`!llvm.ptr<3>`) and the LLVM struct and vector plumbing
//! between them. No op is built from a name or from text.

use crate::collectives::emit::Val;
use crate::collectives::emit::{Emitter, SHARED};
use melior::{
    dialect::{llvm, ods},
    ir::{
        Type, ValueLike,
        attribute::{
            DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute,
            IntegerAttribute, StringAttribute,
        },
        operation::OperationMutLike,
        r#type::IntegerType,
    },
};
use symm_dialects::{attributes, nvvm};

/// LLVM's address spaces for NVPTX (shared memory's: `emit::SHARED`).
const GLOBAL: u32 = 1;
/// `shared::cluster`: the window of the cluster's shared memory, which
/// holds this block's (what the TMA's destination is given as).
const SHARED_CLUSTER: u32 = 7;

/// The dynamic shared memory symbol of a kernel module.
pub const DYNAMIC_SHARED: &str = "__symm_dynamic_shared";

/// The tensor-core and bulk-copy ops on an `Emitter`.
pub trait TensorCore<'c> {
    fn shared_ptr(&self) -> Type<'c>;
    fn i32(&self) -> Type<'c>;
    fn f32(&self) -> Type<'c>;
    fn c32(&self, number: i64) -> Val<'c>;
    /// Declares the kernels' dynamic shared memory in a gpu.module's body.
    fn declare_dynamic_shared(&self);
    /// The address of the dynamic shared memory plus `bytes`.
    fn dynamic_shared(&self) -> Val<'c>;
    /// `ptr + bytes` for a pointer of any address space.
    fn byte_offset(&self, ptr: Val<'c>, bytes: Val<'c>) -> Val<'c>;
    /// A generic pointer as a global one (`!llvm.ptr<1>`).
    fn to_global(&self, ptr: Val<'c>) -> Val<'c>;
    fn mbarrier_init(&self, bar: Val<'c>, count: i64);
    /// `fence.mbarrier_init.release.cluster`: the barriers initialized
    /// before it are visible to the async proxy (the TMA) after it.
    fn fence_mbarrier_init(&self);
    /// `mbarrier.arrive.expect_tx`: this thread arrives on `bar`, whose
    /// phase also waits for `bytes` (i32) of asynchronous copies.
    fn mbarrier_arrive_expect_tx(&self, bar: Val<'c>, bytes: Val<'c>);
    /// `mbarrier.arrive`: this thread arrives on `bar`.
    fn mbarrier_arrive(&self, bar: Val<'c>);
    /// `cp.async.bulk.tensor.2d`: the TMA copies the box at column `x` and
    /// row `y` (i32s) of the matrix that `descriptor` (a generic pointer
    /// to a `CUtensorMap`) describes into shared `dst`, and completes its
    /// bytes on `bar`.
    fn tma_load_2d(&self, dst: Val<'c>, descriptor: Val<'c>, at: (Val<'c>, Val<'c>), bar: Val<'c>);
    /// `barrier.cluster.arrive.aligned` then `barrier.cluster.wait.aligned`
    /// (release, then acquire): every thread of the cluster's blocks meets,
    /// and what each did before (its mbarriers' initialization too) is
    /// visible to all after. Every thread of the block must reach it.
    fn cluster_sync(&self);
    /// `%cluster_ctarank`: this block's rank in its cluster (i32).
    fn cluster_rank(&self) -> Val<'c>;
    /// `mapa` then `mbarrier.arrive.shared::cluster`: this thread arrives
    /// on the mbarrier at shared `bar`'s offset in the block of rank
    /// `rank` (an i32) of its cluster.
    fn mbarrier_arrive_in(&self, bar: Val<'c>, rank: Val<'c>);
    /// `tma_load_2d` with `options` (policy, multicast): an L2 cache policy
    /// (an i64, `l2_evict_first`), and a multicast (`.multicast::cluster`) to the
    /// blocks of the cluster whose rank's bit the mask (an i16) sets, the
    /// box landing at `dst`'s offset in each block's shared memory and
    /// completing its bytes on each block's own mbarrier at `bar`'s offset.
    fn tma_load_2d_with(
        &self,
        dst: Val<'c>,
        descriptor: Val<'c>,
        at: (Val<'c>, Val<'c>),
        bar: Val<'c>,
        options: (Option<Val<'c>>, Option<Val<'c>>),
    );
    /// `createpolicy.fractional.L2::evict_first.b64`: an L2 cache policy
    /// (i64) under which the lines a copy brings in go first, for a stream
    /// read once (the weights), leaving L2 to what is read again. One PTX
    /// instruction (no op upstream makes one).
    fn l2_evict_first(&self) -> Val<'c>;
    /// `prefetch.tensormap`: the TMA descriptor at generic `descriptor`
    /// moves into the descriptor cache before the first copy needs it.
    fn prefetch_tensormap(&self, descriptor: Val<'c>);
    /// Waits until the phase of parity `parity` (i32) of `bar` completes.
    fn mbarrier_wait(&self, bar: Val<'c>, parity: Val<'c>);
    /// `cp.async.cg.shared.global`: 16 bytes from global `src` to shared
    /// `dst`, of which the first `valid` (i32: 16 or 0) are read and the
    /// rest zero-filled.
    fn async_copy_16(&self, dst: Val<'c>, src: Val<'c>, valid: Val<'c>);
    /// `cp.async.mbarrier.arrive.noinc`: `bar` sees this thread's arrival
    /// once its earlier `cp.async` copies have landed.
    fn async_copies_arrive(&self, bar: Val<'c>);
    /// `ldmatrix.sync.aligned.m8n8.x4.trans.b16`: four 8x8 matrices of
    /// 16-bit elements, transposed, as four i32 registers.
    fn ldmatrix_x4_trans(&self, row: Val<'c>) -> [Val<'c>; 4];
    /// 16 bytes of global memory read once, as `ty` (a 16-byte vector):
    /// `ld.global.L1::no_allocate.v4.b32`, one PTX instruction (no op
    /// upstream carries this cache hint, and NVPTX drops `nontemporal`).
    /// Kept out of L1, the streamed weight leaves its room to the loads in
    /// flight: 30.8 against 32.7 µs for the probe's GEMV pair
    /// (bench/gemv_probe/fma_gemv.cu, LOAD_MODE).
    fn load_streaming_16(&self, ptr: Val<'c>, ty: Type<'c>) -> Val<'c>;
    /// `prefetch.global.L2`: the line holding global `ptr` moves into L2,
    /// with no register waiting for it.
    fn prefetch_l2(&self, ptr: Val<'c>);
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`: returns the
    /// four f32 accumulators.
    fn mma_bf16(&self, a: [Val<'c>; 4], b: [Val<'c>; 2], c: [Val<'c>; 4]) -> [Val<'c>; 4];
    /// `wgmma.fence.sync.aligned`: the warpgroup's accumulator registers
    /// and shared-memory operands are ready for the `wgmma`s after it.
    fn wgmma_fence(&self);
    /// `wgmma.commit_group.sync.aligned`: the `wgmma`s issued so far form
    /// a group.
    fn wgmma_commit(&self);
    /// `wgmma.wait_group.sync.aligned pending`: at most `pending` groups
    /// are still running.
    fn wgmma_wait(&self, pending: i64);
    /// `wgmma.mma_async.sync.aligned.m64n<n>k16.f32.bf16.bf16`, the
    /// product added to `accumulators` (an LLVM struct of `n / 2` f32s):
    /// A (64 x 16) is M-major and B (16 x n) K-major in shared memory, as
    /// the matrix descriptors `a` and `b` (i64s) describe them. Returns the
    /// new accumulators (ready only after a `wgmma_wait`).
    fn wgmma_bf16(&self, accumulators: Val<'c>, a: Val<'c>, b: Val<'c>, n: u64) -> Val<'c>;
    /// `bar.warp.sync 0xffffffff`: the warp's lanes meet.
    fn sync_warp(&self);
    /// The sum of an f32 over the warp's 32 lanes, in every lane
    /// (`gpu.shuffle xor` by 16, 8, 4, 2 and 1). Every lane must reach it.
    fn warp_sum(&self, v: Val<'c>) -> Val<'c>;
    /// The sum of an f32 over the lanes whose ids differ from this lane's
    /// only in the bits of `lanes` (a mask below 32), in each of them:
    /// `gpu.shuffle xor` by each of its bits. Every lane must reach it.
    fn lanes_sum(&self, v: Val<'c>, lanes: u32) -> Val<'c>;
    /// Member `index` of an LLVM struct.
    fn member(&self, container: Val<'c>, index: i64, ty: Type<'c>) -> Val<'c>;
    /// Two 16-bit floats packed into an i32 (lane 0 in the low half).
    fn pack(&self, low: Val<'c>, high: Val<'c>) -> Val<'c>;
    /// `llvm.bitcast`.
    fn reinterpret(&self, v: Val<'c>, to: Type<'c>) -> Val<'c>;
}

/// `cp.async.bulk.tensor.2d` (`TensorCore::tma_load_2d`), with an L2
/// cache policy where one is given.
fn tma_load<'c>(
    e: &Emitter<'c>,
    dst: Val<'c>,
    descriptor: Val<'c>,
    (x, y): (Val<'c>, Val<'c>),
    bar: Val<'c>,
    (policy, multicast): (Option<Val<'c>>, Option<Val<'c>>),
) {
    let cluster = llvm::r#type::pointer(e.ctx, SHARED_CLUSTER);
    let dst = e.one(ods::llvm::addrspacecast(e.ctx, cluster, dst, e.loc).into());
    let mut builder = nvvm::CpAsyncBulkTensorGlobalToSharedClusterOperation::builder(e.ctx, e.loc)
        .dst_mem(dst)
        .tma_descriptor(descriptor)
        .coordinates(&[x, y])
        .mbar(bar)
        .im_2_col_offsets(&[]);
    if let Some(mask) = multicast {
        builder = builder.multicast_mask(mask);
    }
    if let Some(policy) = policy {
        builder = builder.l_2_cache_hint(policy);
    }
    let mut op: melior::ir::Operation = builder.build().into();
    // dstMem, tmaDescriptor, coordinates, mbar, im2colOffsets,
    // multicastMask, l2CacheHint, predicate.
    let (mask, hint) = (i32::from(multicast.is_some()), i32::from(policy.is_some()));
    op.set_attribute(
        "operandSegmentSizes",
        DenseI32ArrayAttribute::new(e.ctx, &[1, 1, 2, 1, 0, mask, hint, 0]).into(),
    );
    e.push(op);
}

impl<'c> TensorCore<'c> for Emitter<'c> {
    fn shared_ptr(&self) -> Type<'c> {
        llvm::r#type::pointer(self.ctx, SHARED)
    }
    fn i32(&self) -> Type<'c> {
        IntegerType::new(self.ctx, 32).into()
    }
    fn f32(&self) -> Type<'c> {
        Type::float32(self.ctx)
    }
    fn c32(&self, number: i64) -> Val<'c> {
        self.constant(self.i32(), number)
    }

    fn declare_dynamic_shared(&self) {
        let array = llvm::r#type::array(IntegerType::new(self.ctx, 8).into(), 0);
        self.push(crate::ir::builders::llvm_global_op(
            self.ctx,
            self.loc,
            (DYNAMIC_SHARED, array),
            llvm::attributes::Linkage::External,
            SHARED,
            Some(128),
        ));
    }

    fn dynamic_shared(&self) -> Val<'c> {
        self.one(
            ods::llvm::mlir_addressof(
                self.ctx,
                self.shared_ptr(),
                FlatSymbolRefAttribute::new(self.ctx, DYNAMIC_SHARED),
                self.loc,
            )
            .into(),
        )
    }

    fn byte_offset(&self, ptr: Val<'c>, bytes: Val<'c>) -> Val<'c> {
        let ty = ptr.r#type();
        self.one(llvm::get_element_ptr_dynamic(
            self.ctx,
            ptr,
            &[bytes],
            IntegerType::new(self.ctx, 8).into(),
            ty,
            self.loc,
        ))
    }

    fn to_global(&self, ptr: Val<'c>) -> Val<'c> {
        let global = llvm::r#type::pointer(self.ctx, GLOBAL);
        self.one(ods::llvm::addrspacecast(self.ctx, global, ptr, self.loc).into())
    }

    fn mbarrier_init(&self, bar: Val<'c>, count: i64) {
        let count = self.c32(count);
        self.push(nvvm::mbarrier_init(self.ctx, bar, count, self.loc).into());
    }

    fn fence_mbarrier_init(&self) {
        self.push(nvvm::fence_mbarrier_init(self.ctx, self.loc).into());
    }

    fn mbarrier_arrive_expect_tx(&self, bar: Val<'c>, bytes: Val<'c>) {
        let op = nvvm::MBarrierArriveExpectTxOperation::builder(self.ctx, self.loc)
            .addr(bar)
            .txcount(bytes)
            .build();
        self.push(op.into());
    }

    fn mbarrier_arrive(&self, bar: Val<'c>) {
        let op = nvvm::MBarrierArriveOperation::builder(self.ctx, self.loc)
            .addr(bar)
            .build();
        self.push(op.into());
    }

    fn tma_load_2d(&self, dst: Val<'c>, descriptor: Val<'c>, at: (Val<'c>, Val<'c>), bar: Val<'c>) {
        tma_load(self, dst, descriptor, at, bar, (None, None));
    }

    fn cluster_sync(&self) {
        let aligned = melior::ir::Attribute::unit(self.ctx);
        let arrive = nvvm::ClusterArriveOperation::builder(self.ctx, self.loc)
            .aligned(aligned)
            .build();
        self.push(arrive.into());
        let wait = nvvm::ClusterWaitOperation::builder(self.ctx, self.loc)
            .aligned(aligned)
            .build();
        self.push(wait.into());
    }

    fn cluster_rank(&self) -> Val<'c> {
        let op = nvvm::ClusterIdOperation::builder(self.ctx, self.loc)
            .res(self.i32())
            .build();
        self.one(op.into())
    }

    fn mbarrier_arrive_in(&self, bar: Val<'c>, rank: Val<'c>) {
        let cluster = llvm::r#type::pointer(self.ctx, SHARED_CLUSTER);
        let mapa = nvvm::MapaOperation::builder(self.ctx, self.loc)
            .res(cluster)
            .a(bar)
            .b(rank)
            .build();
        let remote = self.one(mapa.into());
        // The default `.release.cta`, as CUTLASS's, Triton's and TileLang's
        // remote arrives. What it orders is a write after a read: the
        // stage's readers (`wgmma`) completed at `wgmma.wait_group` before
        // this arrive issues, so no copy the other block starts after
        // seeing it can reach what they read. `.release.cluster` cost an
        // ERRBAR per arrive: twice the kernel's time on one H200
        // (bench/results/2026-11-29-cluster-multicast-h200.md).
        self.mbarrier_arrive(remote);
    }

    fn tma_load_2d_with(
        &self,
        dst: Val<'c>,
        descriptor: Val<'c>,
        at: (Val<'c>, Val<'c>),
        bar: Val<'c>,
        options: (Option<Val<'c>>, Option<Val<'c>>),
    ) {
        tma_load(self, dst, descriptor, at, bar, options);
    }

    fn l2_evict_first(&self) -> Val<'c> {
        self.one(
            ods::llvm::InlineAsmOperationBuilder::new(self.ctx, self.loc)
                .res(self.i64())
                .operands(&[])
                .asm_string(StringAttribute::new(
                    self.ctx,
                    "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;",
                ))
                .constraints(StringAttribute::new(self.ctx, "=l"))
                .build()
                .into(),
        )
    }

    fn prefetch_tensormap(&self, descriptor: Val<'c>) {
        let op = nvvm::PrefetchOperation::builder(self.ctx, self.loc)
            .addr(descriptor)
            .tensormap(melior::ir::Attribute::unit(self.ctx))
            .build();
        self.push(op.into());
    }

    fn mbarrier_wait(&self, bar: Val<'c>, parity: Val<'c>) {
        // Ticks: the suspend-time hint in ns (the PTX loop retries until done).
        let ticks = self.c32(0x989680);
        self.push(nvvm::mbarrier_try_wait_parity(self.ctx, bar, parity, ticks, self.loc).into());
    }

    fn async_copy_16(&self, dst: Val<'c>, src: Val<'c>, valid: Val<'c>) {
        let src = self.to_global(src);
        let cg = attributes::nvvm_cache_global(self.ctx);
        let op = nvvm::CpAsyncOperation::builder(self.ctx, self.loc)
            .dst(dst)
            .src(src)
            .size(IntegerAttribute::new(self.i32(), 16))
            .modifier(cg)
            .cp_size(valid)
            .build();
        self.push(op.into());
    }

    fn async_copies_arrive(&self, bar: Val<'c>) {
        let mut op: melior::ir::Operation =
            nvvm::cp_async_mbarrier_arrive(self.ctx, bar, self.loc).into();
        op.set_attribute(
            "noinc",
            IntegerAttribute::new(IntegerType::new(self.ctx, 1).into(), 1).into(),
        );
        self.push(op);
    }

    fn load_streaming_16(&self, ptr: Val<'c>, ty: Type<'c>) -> Val<'c> {
        let i32 = self.i32();
        let result = llvm::r#type::r#struct(self.ctx, &[i32, i32, i32, i32], false);
        let global = self.to_global(ptr);
        let loaded = self.one(
            ods::llvm::InlineAsmOperationBuilder::new(self.ctx, self.loc)
                .res(result)
                .operands(&[global])
                .asm_string(StringAttribute::new(
                    self.ctx,
                    "ld.global.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];",
                ))
                .constraints(StringAttribute::new(self.ctx, "=r,=r,=r,=r,l"))
                .build()
                .into(),
        );
        let mut words = self.zero(self.vector(4, i32));
        for i in 0..4 {
            words = self.insert(words, self.member(loaded, i, i32), i as u64);
        }
        self.reinterpret(words, ty)
    }

    fn prefetch_l2(&self, ptr: Val<'c>) {
        let global = self.to_global(ptr);
        let op = nvvm::PrefetchOperation::builder(self.ctx, self.loc)
            .addr(global)
            .cache_level(attributes::nvvm_prefetch_l2(self.ctx))
            .build();
        self.push(op.into());
    }

    fn ldmatrix_x4_trans(&self, row: Val<'c>) -> [Val<'c>; 4] {
        let i32 = self.i32();
        let result = llvm::r#type::r#struct(self.ctx, &[i32, i32, i32, i32], false);
        let layout = attributes::nvvm_mma_layout(self.ctx, true);
        let shape = attributes::nvvm_ld_matrix_shape_8x8(self.ctx);
        let element = attributes::nvvm_ld_matrix_b16(self.ctx);
        let loaded = self.one(
            nvvm::ldmatrix(
                self.ctx,
                result,
                row,
                IntegerAttribute::new(i32, 4),
                layout,
                shape,
                element,
                self.loc,
            )
            .into(),
        );
        std::array::from_fn(|i| self.member(loaded, i as i64, i32))
    }

    fn mma_bf16(&self, a: [Val<'c>; 4], b: [Val<'c>; 2], c: [Val<'c>; 4]) -> [Val<'c>; 4] {
        let f32 = self.f32();
        let result = llvm::r#type::r#struct(self.ctx, &[f32, f32, f32, f32], false);
        let a: Vec<_> = a.to_vec();
        let b: Vec<_> = b.to_vec();
        let c: Vec<_> = c.to_vec();
        let shape = attributes::nvvm_mma_shape(self.ctx, 16, 8, 16);
        let row = attributes::nvvm_mma_layout(self.ctx, false);
        let col = attributes::nvvm_mma_layout(self.ctx, true);
        let bf16 = attributes::nvvm_mma_type_bf16(self.ctx);
        let mut op: melior::ir::Operation =
            nvvm::mma_sync(self.ctx, result, &a, &b, &c, shape, row, col, self.loc).into();
        // A, B and C's operand counts (the builder leaves them to us).
        op.set_attribute(
            "operandSegmentSizes",
            DenseI32ArrayAttribute::new(self.ctx, &[4, 2, 4]).into(),
        );
        op.set_attribute("multiplicandAPtxType", bf16);
        op.set_attribute("multiplicandBPtxType", bf16);
        let d = self.one(op);
        std::array::from_fn(|i| self.member(d, i as i64, f32))
    }

    fn wgmma_fence(&self) {
        self.push(nvvm::wgmma_fence_aligned(self.ctx, self.loc).into());
    }

    fn wgmma_commit(&self) {
        self.push(nvvm::wgmma_commit_group_sync_aligned(self.ctx, self.loc).into());
    }

    fn wgmma_wait(&self, pending: i64) {
        let pending = IntegerAttribute::new(self.i64(), pending);
        self.push(nvvm::wgmma_wait_group_sync_aligned(self.ctx, pending, self.loc).into());
    }

    fn wgmma_bf16(&self, accumulators: Val<'c>, a: Val<'c>, b: Val<'c>, n: u64) -> Val<'c> {
        let op = nvvm::WgmmaMmaAsyncOperation::builder(self.ctx, self.loc)
            .results(accumulators.r#type())
            .inouts(accumulators)
            .descriptor_a(a)
            .descriptor_b(b)
            .shape(attributes::nvvm_mma_shape(self.ctx, 64, n as i32, 16))
            .type_a(attributes::nvvm_wgmma_type(self.ctx, false))
            .type_b(attributes::nvvm_wgmma_type(self.ctx, false))
            .type_d(attributes::nvvm_wgmma_type(self.ctx, true))
            .scale_d(attributes::nvvm_wgmma_scale_out_one(self.ctx))
            .scale_a(attributes::nvvm_wgmma_scale_in_one(self.ctx))
            .scale_b(attributes::nvvm_wgmma_scale_in_one(self.ctx))
            // `col` A is M-major (imm-trans-a 1), `col` B K-major.
            .layout_a(attributes::nvvm_mma_layout(self.ctx, true))
            .layout_b(attributes::nvvm_mma_layout(self.ctx, true))
            .build();
        self.one(op.into())
    }

    fn sync_warp(&self) {
        let mask = self.c32(-1);
        self.push(nvvm::bar_warp_sync(self.ctx, mask, self.loc).into());
    }

    fn warp_sum(&self, v: Val<'c>) -> Val<'c> {
        self.lanes_sum(v, 31)
    }

    fn lanes_sum(&self, v: Val<'c>, lanes: u32) -> Val<'c> {
        self.xor_butterfly(v, lanes, |e, a, b| e.addf(a, b))
    }

    fn member(&self, container: Val<'c>, index: i64, ty: Type<'c>) -> Val<'c> {
        self.one(llvm::extract_value(
            self.ctx,
            container,
            DenseI64ArrayAttribute::new(self.ctx, &[index]),
            ty,
            self.loc,
        ))
    }

    fn pack(&self, low: Val<'c>, high: Val<'c>) -> Val<'c> {
        let pair = self.vector(2, low.r#type());
        let packed = self.poison(pair);
        let packed = self.insert(packed, low, 0);
        let packed = self.insert(packed, high, 1);
        self.reinterpret(packed, self.i32())
    }

    fn reinterpret(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(llvm::bitcast(v, to, self.loc))
    }
}
