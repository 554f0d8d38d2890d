//! `symm_mem.kernel_rounds`, `kernel_variant` and `kernel_variant_end`
//! (a measured choice between a generated kernel and the library,
//! `symm-linalg-matmul-to-gpu`) become the runtime's
//! `symm_rt_kernel_rounds`, `symm_rt_kernel_variant` and
//! `symm_rt_kernel_variant_end`, which time both ways on a row count's
//! first call outside a capture and keep the faster.

use super::operand;
use crate::PassError;
use crate::ir::builders::CmpI;
use crate::ir::host::Host;
use crate::ir::melior_ext::OperationExt;
use crate::ir::op_kind::OpKind;
use melior::ir::{OperationRef, Type, Value};
use symm_protocol::abi;

/// The op's integer attribute `name` as an i64 value.
pub(super) fn attribute<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, '_>,
    name: &str,
) -> Result<Value<'c, 'a>, PassError> {
    let value = op
        .int_attribute(name)
        .ok_or_else(|| format!("has no integer attribute '{name}'"))?;
    Ok(host.int(64, value))
}

pub fn lower<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let i64 = host.int_type(64);
    let site = attribute(host, op, "site")?;
    let rows = host.cast(operand(op, 0)?, i64);
    match op.kind() {
        OpKind::KernelRounds => {
            let max_rows = attribute(host, op, "max_rows")?;
            // The site whose generated GEMV may run just before (0: none).
            let before = op.int_attribute("after_gemv").unwrap_or(0);
            let after_gemv = host.int(64, before);
            let rounds = host.call_value(&abi::KERNEL_ROUNDS, &[site, rows, max_rows, after_gemv]);
            let index = host.cast(rounds, Type::index(host.context()));
            super::replace_result(op, index)?;
        }
        OpKind::KernelVariant => {
            let round = host.cast(operand(op, 1)?, i64);
            let max_rows = attribute(host, op, "max_rows")?;
            let chosen = host.call_value(&abi::KERNEL_VARIANT, &[site, rows, round, max_rows]);
            let zero = host.int(32, 0);
            let generated = host.at.cmpi(CmpI::Ne, chosen, zero);
            super::replace_result(op, generated)?;
        }
        OpKind::KernelVariantEnd => {
            let round = host.cast(operand(op, 1)?, i64);
            host.call(&abi::KERNEL_VARIANT_END, &[site, rows, round]);
        }
        _ => return Err(format!("is not a kernel choice ({})", op.name_text()).into()),
    }
    Ok(())
}
