//! An app that calls a compiled layer through the C ABI only: its
//! declarations come from symm-compile (OUT_DIR/scale.rs), which also links
//! the runtime, so the app writes no `extern "C"` block and no
//! `use symm_runtime as _`.

mod layer {
    include!(concat!(env!("OUT_DIR"), "/scale.rs"));
}

fn main() {
    // Taking the entry points' addresses links the layer's object, and with
    // it every runtime function the object calls.
    let entries = [layer::scale as *const (), layer::scale_async as *const ()];
    println!("linked {} entry points", entries.iter().filter(|e| !e.is_null()).count());
}
