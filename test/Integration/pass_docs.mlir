// docs/passes.md is what symm-pass-docs generates from the pass registry
// now (summaries, descriptions, options, example runs of each pass's lit
// test, the pipelines, the C++ passes from TableGen). After a change to a
// pass, its options, its lit test or its file's header:
//   cargo run -p symm-pass-docs -- --write docs/passes.md
//
// REQUIRES: symm-pass-docs
// RUN: %symm-pass-docs --check %repo/docs/passes.md | FileCheck %s
// CHECK: docs/passes.md is current

// Every pass of the registry has a section, with an example where its
// test has a short case that its pipeline changes.
// RUN: FileCheck %s --check-prefix=DOC < %repo/docs/passes.md
// DOC: ## `symm-mem-verify-groups`
// DOC: ## `symm-mem-plan`
// DOC: | `alignment` | int64 | `128` |
// DOC: Example, `symm-opt --pass-pipeline='builtin.module(symm-mem-plan{alignment=64})'`:
// DOC: ## `convert-symm-mem-to-runtime`
// DOC: | `cuda-graphs` | bool | `true` |
// DOC: ## `convert-symm-mem-to-nvvm`

// A stale file is reported, with the command that regenerates it.
// RUN: rm -rf %t && mkdir -p %t/docs && echo "edited" > %t/docs/passes.md
// RUN: ln -s %repo/test %t/test && ln -s %repo/passes %t/passes && ln -s %repo/dialects %t/dialects
// RUN: not %symm-pass-docs --check %t/docs/passes.md 2>&1 | FileCheck %s --check-prefix=STALE
// STALE: symm-pass-docs: {{.*}}docs/passes.md is stale: regenerate it with `symm-pass-docs --write {{.*}}docs/passes.md`

// Usage errors exit 2.
// RUN: not %symm-pass-docs --bogus 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: error: unexpected argument '--bogus' found
// USAGE: Usage: symm-pass-docs <--write <FILE>|--check <FILE>>
