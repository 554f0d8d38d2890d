//! `symm_mem.kernel_rounds`, `kernel_variant` and `kernel_variant_end`
//! (a measured choice between a generated kernel and the library,
//! `symm-linalg-matmul-to-gpu`) become the runtime's
//! `symm_rt_kernel_rounds`, `symm_rt_kernel_variant` and
//! `symm_rt_kernel_variant_end`, which time both ways on a row count's
//! first call outside a capture and keep the faster.

use crate::PassError;
use crate::ir::Op;
use crate::ir::host_handles::{Host, int_type};
use crate::ir::op_kind::OpKind;
use symm_protocol::abi;

/// The op's integer attribute `name` as an i64 value.
pub(super) fn attribute(host: &mut Host, op: Op, name: &str) -> Result<crate::ir::Val, PassError> {
    let value = op
        .attr(name)
        .and_then(|a| a.int())
        .ok_or_else(|| format!("has no integer attribute '{name}'"))?;
    Ok(host.int(64, value))
}

pub fn lower(host: &mut Host, op: Op) -> Result<(), PassError> {
    let ctx = op.ctx();
    let i64 = int_type(ctx, 64);
    let site = attribute(host, op, "site")?;
    let rows = host.cast(op.operand(0), i64);
    match op.kind() {
        OpKind::KernelRounds => {
            let max_rows = attribute(host, op, "max_rows")?;
            let after_gemv = host.int(64, i64::from(op.attr("after_gemv").is_some()));
            let rounds = host.call_value(&abi::KERNEL_ROUNDS, &[site, rows, max_rows, after_gemv]);
            let index = host.cast(rounds, ctx.index_type());
            op.result(0).replace_all_uses_with(index);
        }
        OpKind::KernelVariant => {
            let round = host.cast(op.operand(1), i64);
            let max_rows = attribute(host, op, "max_rows")?;
            let chosen = host.call_value(&abi::KERNEL_VARIANT, &[site, rows, round, max_rows]);
            let zero = host.int(32, 0);
            let generated = host.b.cmpi(crate::ir::builders::CmpI::Ne, chosen, zero);
            op.result(0).replace_all_uses_with(generated);
        }
        OpKind::KernelVariantEnd => {
            let round = host.cast(op.operand(1), i64);
            host.call(&abi::KERNEL_VARIANT_END, &[site, rows, round]);
        }
        _ => return Err(format!("is not a kernel choice ({})", op.name()).into()),
    }
    Ok(())
}
