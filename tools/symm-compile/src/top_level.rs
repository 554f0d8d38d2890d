//! What may sit in the input module's body: symbols (functions, globals,
//! groups, GPU modules) and the LLVM dialect's module-level ops. Anything
//! else there would run nowhere: an op that computes or calls at the top
//! level has no function to run in, and would reach LLVM as an
//! instruction without a parent.

use melior::ir::{BlockLike, Module, OperationRef, operation::OperationLike};

/// An error at the first op of `module`'s body that is neither a symbol
/// nor an LLVM module-level op (`file:line:col: error: ...`).
pub fn check(module: &Module) -> Result<(), String> {
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        if let Some(problem) = problem(op) {
            let location =
                crate::location::plain(&symm_dialects::location_text(op.location().to_raw()));
            return Err(format!("{location}: error: {problem}"));
        }
    }
    Ok(())
}

fn problem(op: OperationRef) -> Option<String> {
    let name = op.name();
    let name = name.as_string_ref().as_str().unwrap_or("?");
    if op.has_attribute("sym_name") || name.starts_with("llvm.") {
        return None;
    }
    Some(format!(
        "'{name}' sits in the module's body, where only functions, globals and other symbols \
         may: it has no function to run in; move it into one"
    ))
}
