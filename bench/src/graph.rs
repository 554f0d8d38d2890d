//! Generated tensor-parallel graphs: `n` layers, each filling a buffer
//! and all-reducing it, with residual reads of earlier layers' results so
//! that lifetimes vary. Deterministic for a given seed.

use crate::rng::Rng;
use std::fmt::Write;

/// MLIR source of a function with `collectives` all-reduces.
pub fn generate(collectives: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(collectives * 400);
    out.push_str("symm_mem.group @tp world_size(8)\nsymm_mem.group @dp world_size(2)\n");
    out.push_str("func.func @graph(%x: memref<256xf32>) -> memref<256xf32> {\n");
    out.push_str("  %c0 = arith.constant 0 : index\n");
    let mut results: Vec<(String, u64)> = vec![("%x".to_owned(), 256)];
    for i in 0..collectives {
        let elements = [64u64, 256, 1024, 4096][rng.below(4) as usize];
        let group = if rng.below(10) == 0 { "dp" } else { "tp" };
        // Mostly the previous layer; sometimes a residual from up to 16 back.
        let back = if rng.below(5) == 0 {
            1 + rng.below(16) as usize
        } else {
            1
        };
        let (source, source_elements) = &results[results.len().saturating_sub(back)];
        let ty = format!("memref<{elements}xf32>");
        let _ = writeln!(
            out,
            "  %v{i} = memref.load {source}[%c0] : memref<{source_elements}xf32>\n  \
             %p{i} = memref.alloc() : {ty}\n  \
             linalg.fill ins(%v{i} : f32) outs(%p{i} : {ty})\n  \
             %h{i} = symm_mem.all_reduce sum %p{i} group @{group} : {ty} -> {ty}"
        );
        results.push((format!("%h{i}"), elements));
    }
    let (last, last_elements) = &results[results.len() - 1];
    let _ = writeln!(
        out,
        "  %last = memref.load {last}[%c0] : memref<{last_elements}xf32>\n  \
         %out = memref.alloc() : memref<256xf32>\n  \
         linalg.fill ins(%last : f32) outs(%out : memref<256xf32>)\n  \
         return %out : memref<256xf32>\n}}"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::{Module, operation::OperationLike};

    #[test]
    fn generated_graphs_parse_and_verify() {
        let context = symm_dialects::create_context();
        for n in [0, 1, 50] {
            let source = generate(n, 7);
            let module = Module::parse(&context, &source).expect("generated IR parses");
            assert!(module.as_operation().verify());
            assert_eq!(source.matches("symm_mem.all_reduce").count(), n);
        }
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(generate(100, 3), generate(100, 3));
        assert_ne!(generate(100, 3), generate(100, 4));
    }
}
