//! All-reduce fused with RMSNorm (the epilogue of a tensor-parallel layer),
//! and RMSNorm alone for comparison: `out[r] = x[r] / rms(x[r]) * gamma`
//! with `x = sum over ranks of input`, bf16 rows of `hidden` elements, f32
//! arithmetic. The fused kernel writes the reduced row (rounded to bf16, as
//! an all-reduce would) and normalizes it in place while it is in L2, so it
//! matches all-reduce followed by RMSNorm.

use crate::kernels::{
    Algorithm, AllReduceSpec, Dtype, KERNEL_END, ReduceOp, STAGED_PARAMS, barrier, bump_epoch,
    counter_barrier, kernel_start, load_epoch, load_peer_bases, load_vector, pack, reduce_loaded,
    unpack, world_entry,
};
use std::fmt::Write;

/// Entry base of the fused kernel; the entry is `world_entry` of it.
pub const FUSED: &str = "symm_all_reduce_rmsnorm_bf16";
/// The staged fused kernel (one barrier), for inputs that fit the staging
/// slots; it takes the staging parameters before the RMSNorm ones.
pub const FUSED_STAGED: &str = "symm_all_reduce_rmsnorm_staged_bf16";
pub const ALONE: &str = "symm_rmsnorm_bf16";

const NORM_PARAMS: &str = ",\n  .param .u64 p_gamma, .param .u32 p_hidden, .param .f32 p_eps";

/// Sum of squares of the bf16 words %r60..%r63 into %f100.
fn accumulate_squares(out: &mut String) {
    unpack(out, Dtype::Bf16, 60, 0);
    for lane in 0..8 {
        let _ = writeln!(out, "  fma.rn.f32 %f100, %f{lane}, %f{lane}, %f100;");
    }
}

/// Block-wide sum of %f100 into %f102 = rsqrt(mean + eps) for every thread.
fn block_rms(out: &mut String) {
    for offset in [16, 8, 4, 2, 1] {
        let _ = writeln!(
            out,
            "  mov.b32 %r81, %f100;\n  shfl.sync.bfly.b32 %r80, %r81, {offset}, 31, -1;\n  mov.b32 %f101, %r80;\n  add.f32 %f100, %f100, %f101;"
        );
    }
    out.push_str(
        "  and.b32 %r82, %r1, 31;
  shr.u32 %r83, %r1, 5;
  setp.eq.u32 %p11, %r82, 0;
  mul.wide.u32 %rd80, %r83, 4;
  mov.u64 %rd81, partials;
  add.u64 %rd82, %rd81, %rd80;
  @%p11 st.shared.f32 [%rd82], %f100;
  bar.sync 0;
  setp.ne.u32 %p12, %r1, 0;
  @%p12 bra rms_wait;
  shr.u32 %r84, %r3, 5;
  mov.f32 %f103, 0f00000000;
  mov.u32 %r85, 0;
rms_sum:
  setp.ge.u32 %p13, %r85, %r84;
  @%p13 bra rms_store;
  mul.wide.u32 %rd80, %r85, 4;
  add.u64 %rd82, %rd81, %rd80;
  ld.shared.f32 %f104, [%rd82];
  add.f32 %f103, %f103, %f104;
  add.u32 %r85, %r85, 1;
  bra rms_sum;
rms_store:
  cvt.rn.f32.u32 %f105, %r50;
  div.rn.f32 %f103, %f103, %f105;
  add.f32 %f103, %f103, %f106;
  rsqrt.approx.f32 %f103, %f103;
  st.shared.f32 [partials+128], %f103;
rms_wait:
  bar.sync 0;
  ld.shared.f32 %f102, [partials+128];
",
    );
}

/// Pass 2: out row = out row * rms * gamma, vector v of the row at byte
/// offset %rd100 (row offset in %rd70, element offset in %rd71).
fn normalize_row(out: &mut String) {
    out.push_str(
        "  mov.u32 %r86, %r1;
norm_loop:
  setp.ge.u32 %p14, %r86, %r51;
  @%p14 bra norm_done;
  mul.wide.u32 %rd71, %r86, 16;
  add.u64 %rd100, %rd70, %rd71;
  add.u64 %rd41, %rd3, %rd100;
  ld.global.v4.b32 {%r60, %r61, %r62, %r63}, [%rd41];
  add.u64 %rd72, %rd90, %rd71;
  ld.global.v4.b32 {%r64, %r65, %r66, %r67}, [%rd72];
",
    );
    unpack(out, Dtype::Bf16, 60, 0);
    unpack(out, Dtype::Bf16, 64, 20);
    for lane in 0..8 {
        let _ = writeln!(
            out,
            "  mul.f32 %f{lane}, %f{lane}, %f102;\n  mul.f32 %f{lane}, %f{lane}, %f{};",
            20 + lane
        );
    }
    pack(out, Dtype::Bf16, 0, 60);
    out.push_str(
        "  st.global.v4.b32 [%rd41], {%r60, %r61, %r62, %r63};
  add.u32 %r86, %r86, %r3;
  bra norm_loop;
norm_done:
  bar.sync 0;
",
    );
}

/// Opens an RMSNorm kernel (standard parameters, `extra_params`, then the
/// RMSNorm ones) and loads the latter: %rd90 gamma, %r50 hidden, %r51
/// vectors per row, %f106 eps.
fn norm_kernel_start(name: &str, extra_params: &str) -> String {
    let mut out = kernel_start(
        name,
        &format!("{extra_params}{NORM_PARAMS}"),
        "  .shared .align 16 .f32 partials[36];\n",
    );
    out.push_str(
        "  ld.param.u64 %rd90, [p_gamma];
  ld.param.u32 %r50, [p_hidden];
  shr.u32 %r51, %r50, 3;
  ld.param.f32 %f106, [p_eps];
",
    );
    out
}

/// Vectors of the current row handled by this thread: %r86 = tid, tid +
/// ntid, ... < %r51, with %rd100 the vector's byte offset in the buffers.
fn vector_loop_head(out: &mut String, head: &str, done: &str) {
    let _ = write!(
        out,
        "{head}:
  setp.ge.u32 %p14, %r86, %r51;
  @%p14 bra {done};
  mul.wide.u32 %rd71, %r86, 16;
  add.u64 %rd100, %rd70, %rd71;
"
    );
}

fn vector_loop_tail(out: &mut String, head: &str, done: &str) {
    let _ = write!(out, "  add.u32 %r86, %r86, %r3;\n  bra {head};\n{done}:\n");
}

/// Loads the current vector at `base` + %rd100 into %r60..%r63.
fn load_row_vector(out: &mut String, base: &str) {
    let _ = writeln!(
        out,
        "  add.u64 %rd41, {base}, %rd100;\n  ld.global.v4.b32 {{%r60, %r61, %r62, %r63}}, [%rd41];"
    );
}

/// Stores %r60..%r63 to the current vector at `base` + %rd100.
fn store_row_vector(out: &mut String, base: &str) {
    let _ = writeln!(
        out,
        "  add.u64 %rd41, {base}, %rd100;\n  st.global.v4.b32 [%rd41], {{%r60, %r61, %r62, %r63}};"
    );
}

/// Rows handled by this block: r = ctaid, ctaid + nctaid, ... < %rd4.
fn row_loop_head(out: &mut String) {
    row_loop_head_named(out, "row_loop", "rows_done");
}

fn row_loop_head_named(out: &mut String, head: &str, done: &str) {
    let _ = write!(
        out,
        "  cvt.u64.u32 %rd73, %r2;
{head}:
  setp.ge.u64 %p15, %rd73, %rd4;
  @%p15 bra {done};
  cvt.u64.u32 %rd74, %r50;
  mul.lo.u64 %rd70, %rd73, %rd74;
  shl.b64 %rd70, %rd70, 1;
  mov.f32 %f100, 0f00000000;
  mov.u32 %r86, %r1;
"
    );
}

fn row_loop_tail(out: &mut String) {
    row_loop_tail_named(out, "row_loop", "rows_done");
}

fn row_loop_tail_named(out: &mut String, head: &str, done: &str) {
    let _ = write!(
        out,
        "  cvt.u64.u32 %rd75, %r4;
  add.u64 %rd73, %rd73, %rd75;
  bra {head};
{done}:
"
    );
}

/// The fused kernel for `world` ranks: one-shot all-reduce of each row,
/// then RMSNorm. Plain: start and end barriers as the plain one-shot.
/// Staged: this block's rows are first copied to its staging slot, one
/// counter barrier, peers' slots are read (see the staged one-shot).
pub fn fused_ptx(world: usize, staged: bool) -> String {
    let spec = AllReduceSpec {
        algorithm: Algorithm::OneShot,
        dtype: Dtype::Bf16,
        op: ReduceOp::Sum,
        world,
        staged: false,
    };
    let (base, extra) = if staged {
        (FUSED_STAGED, STAGED_PARAMS)
    } else {
        (FUSED, "")
    };
    let mut out = norm_kernel_start(&world_entry(base, world), extra);
    load_peer_bases(&mut out, world);
    if staged {
        load_epoch(&mut out);
        row_loop_head_named(&mut out, "stage_rows", "stage_rows_done");
        vector_loop_head(&mut out, "stage_vectors", "stage_vectors_done");
        load_row_vector(&mut out, "%rd18");
        store_row_vector(&mut out, "%rd19");
        vector_loop_tail(&mut out, "stage_vectors", "stage_vectors_done");
        row_loop_tail_named(&mut out, "stage_rows", "stage_rows_done");
        counter_barrier(&mut out, world);
        for p in 0..world {
            let _ = writeln!(out, "  add.u64 %rd{r}, %rd{r}, %rd17;", r = 20 + p);
        }
    } else {
        barrier(&mut out, "start", world);
    }
    row_loop_head(&mut out);
    vector_loop_head(&mut out, "reduce_loop", "reduce_done");
    load_vector(&mut out, &spec, 0);
    reduce_loaded(&mut out, &spec, 0);
    store_row_vector(&mut out, "%rd3");
    accumulate_squares(&mut out);
    vector_loop_tail(&mut out, "reduce_loop", "reduce_done");
    block_rms(&mut out);
    normalize_row(&mut out);
    row_loop_tail(&mut out);
    if staged {
        bump_epoch(&mut out);
    } else {
        barrier(&mut out, "end", world);
    }
    out.push_str(KERNEL_END);
    out
}

/// RMSNorm alone, for all-reduce-then-RMSNorm: x at p_bufs (a plain
/// pointer here), result at p_out; the barrier parameters are unused.
pub fn alone_ptx() -> String {
    let mut out = norm_kernel_start(ALONE, "");
    row_loop_head(&mut out);
    vector_loop_head(&mut out, "square_loop", "square_done");
    load_row_vector(&mut out, "%rd1");
    store_row_vector(&mut out, "%rd3");
    accumulate_squares(&mut out);
    vector_loop_tail(&mut out, "square_loop", "square_done");
    block_rms(&mut out);
    normalize_row(&mut out);
    row_loop_tail(&mut out);
    out.push_str(KERNEL_END);
    out
}
