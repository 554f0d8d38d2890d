//! The codes that cross the C ABI and the compiler/runtime boundary: element
//! types, reductions and algorithms. Applications see them as the enums of
//! `runtime/include/symm_abi.h` (generated from here, kept current by a
//! test); compiled programs pass the same numbers to the runtime's
//! `symm_rt_*` calls; the runtime decodes them with `from_code`.

use core::fmt;

macro_rules! codes {
    ($(#[$doc:meta])* $name:ident, $c_enum:literal, [$($variant:ident = $code:literal, $text:literal, $c_name:literal;)*]) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum $name {
            $($variant = $code,)*
        }

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];
            /// The name of the C enum that holds these codes.
            pub const C_ENUM: &'static str = $c_enum;

            pub fn from_code(code: i64) -> Option<Self> {
                Self::ALL.iter().copied().find(|value| *value as i64 == code)
            }
            /// The MLIR spelling (`bf16`, `sum`, `one_shot`).
            pub fn text(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }
            pub fn from_text(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|value| value.text() == text)
            }
            /// The C enumerator (`SYMM_BF16`).
            pub fn c_name(self) -> &'static str {
                match self {
                    $(Self::$variant => $c_name,)*
                }
            }
        }
    };
}

codes!(
    /// Element types (`enum symm_dtype`).
    DtypeCode, "symm_dtype", [
        F32 = 0, "f32", "SYMM_F32";
        F16 = 1, "f16", "SYMM_F16";
        Bf16 = 2, "bf16", "SYMM_BF16";
    ]
);

codes!(
    /// Reductions (`enum symm_reduce`); the same numbers as the ODS enum
    /// `ReductionKind` that collectives carry.
    ReduceCode, "symm_reduce", [
        Sum = 0, "sum", "SYMM_SUM";
        Max = 1, "max", "SYMM_MAX";
        Min = 2, "min", "SYMM_MIN";
    ]
);

codes!(
    /// All-reduce algorithms of the runtime's C API (`enum symm_algorithm`).
    AlgorithmCode, "symm_algorithm", [
        OneShot = 0, "one_shot", "SYMM_ONE_SHOT";
        TwoShot = 1, "two_shot", "SYMM_TWO_SHOT";
    ]
);

codes!(
    /// How a matmul's inputs are stored (`enum symm_matmul_layout`): each
    /// row-major as written (a: m x k, b: k x n), or as its transpose. A
    /// transposed b (n x k) is nn.Linear's weight, as checkpoints, vLLM and
    /// TensorRT-LLM keep it.
    LayoutCode, "symm_matmul_layout", [
        RowMajor = 0, "row_major", "SYMM_ROW_MAJOR";
        TransposedB = 1, "transposed_b", "SYMM_TRANSPOSED_B";
        TransposedA = 2, "transposed_a", "SYMM_TRANSPOSED_A";
        TransposedBoth = 3, "transposed_both", "SYMM_TRANSPOSED_BOTH";
    ]
);

impl LayoutCode {
    /// The layout with `a` and `b` each stored transposed or not.
    pub fn of(a_transposed: bool, b_transposed: bool) -> Self {
        match (a_transposed, b_transposed) {
            (false, false) => Self::RowMajor,
            (false, true) => Self::TransposedB,
            (true, false) => Self::TransposedA,
            (true, true) => Self::TransposedBoth,
        }
    }
    /// Whether `a` is stored as its transpose (k x m).
    pub fn a_transposed(self) -> bool {
        matches!(self, Self::TransposedA | Self::TransposedBoth)
    }
    /// Whether `b` is stored as its transpose (n x k).
    pub fn b_transposed(self) -> bool {
        matches!(self, Self::TransposedB | Self::TransposedBoth)
    }
}

impl DtypeCode {
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
        }
    }
}

/// The kind of a value that crosses into a `symm_rt_*` function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A pointer (`!llvm.ptr`; `void*`, `symm_runtime*`, `int64_t*`).
    Ptr,
    I32,
    I64,
}

/// A `symm_rt_*` function that compiled programs call: its symbol and C
/// signature, the runtime handle first. The GPU lowering declares and calls
/// them from this table; a runtime test checks that every one is exported
/// with this signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeCall {
    pub name: &'static str,
    pub params: &'static [Kind],
    pub result: Option<Kind>,
}

macro_rules! runtime_calls {
    ($($(#[$doc:meta])* $constant:ident = $name:literal ($($param:ident),*) $(-> $result:ident)?;)*) => {
        $(
            $(#[$doc])*
            pub const $constant: RuntimeCall = RuntimeCall {
                name: $name,
                params: &[$(Kind::$param),*],
                result: runtime_calls!(@result $($result)?),
            };
        )*
        /// Every `symm_rt_*` function of the ABI.
        pub const RUNTIME_CALLS: &[RuntimeCall] = &[$($constant),*];
    };
    (@result) => { None };
    (@result $result:ident) => { Some(Kind::$result) };
}

runtime_calls! {
    /// Starts an asynchronous call on the caller's stream (null: the runtime's).
    ENTER_ASYNC = "symm_rt_enter_async"(Ptr, Ptr);
    /// Ends an asynchronous call: 0, or -1 with the failure kept.
    EXIT_ASYNC = "symm_rt_exit_async"(Ptr) -> I32;
    /// Ends a synchronizing call: waits, and any failure ends the process.
    EXIT = "symm_rt_exit"(Ptr);
    /// Runs the body (1) or replays its CUDA graph (0), keyed by the arguments.
    GRAPH_BEGIN = "symm_rt_graph_begin"(Ptr, Ptr, Ptr, I64) -> I32;
    GRAPH_END = "symm_rt_graph_end"(Ptr, Ptr);
    /// Buffer (partition, index, bytes) of the partition's run in progress:
    /// the same address for every run with the same arguments.
    GRAPH_BUFFER = "symm_rt_graph_buffer"(Ptr, Ptr, I64, I64) -> Ptr;
    /// A persistent symmetric pool by id and size.
    GLOBAL = "symm_rt_global"(Ptr, I64, I64) -> Ptr;
    /// The kernel descriptor of the pool that holds an address.
    POOL_DESCRIPTOR = "symm_rt_pool_descriptor"(Ptr, Ptr) -> Ptr;
    RANK = "symm_rt_rank"(Ptr) -> I32;
    CHECK_WORLD = "symm_rt_check_world"(Ptr, I64);
    /// The SMs the program's GEMV grids were balanced over (`symm-compile
    /// --sms`), against the GPU's: a mismatch is logged once (it costs
    /// speed, not correctness).
    CHECK_SMS = "symm_rt_check_sms"(Ptr, I64);
    /// The `PROTOCOL_FINGERPRINT` the program was compiled with, against
    /// the runtime's.
    CHECK_PROTOCOL = "symm_rt_check_protocol"(Ptr, I64);
    /// The call's token count against the function's bound.
    CHECK_TOKENS = "symm_rt_check_tokens"(Ptr, I64, I64);
    /// A buffer argument's address (argument index, alignment in bytes).
    CHECK_ALIGNED = "symm_rt_check_aligned"(Ptr, Ptr, I64, I64);
    ALLOC = "symm_rt_alloc"(Ptr, I64) -> Ptr;
    FREE = "symm_rt_free"(Ptr, Ptr);
    COPY = "symm_rt_copy"(Ptr, Ptr, Ptr, I64);
    /// Waits for the call's work, before the host reads a copy's result.
    HOST_WAIT = "symm_rt_host_wait"(Ptr);
    /// c (+)= a b: a, b, c, m, n, k, dtype code, accumulate.
    MATMUL = "symm_rt_matmul"(Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I32, I32);
    /// c0 (+)= a b0 and c1 (+)= a b1 as one batched GEMM where the strides
    /// allow: a, b0, c0, b1, c1, m, n, k, dtype code, accumulate, layout
    /// code (how a and the weights are stored).
    MATMUL_PAIR = "symm_rt_matmul_pair"(Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I32, I32, I32);
    /// c_i (+)= a_i b_i for i < batch, strided row-major matrices: a, b,
    /// c, batch, m, n, k, then each operand's row stride and batch stride
    /// (a's, b's, c's, in elements), the inputs' dtype code, the output's,
    /// accumulate, the layout code (a and b each as written, m x k and
    /// k x n, or stored transposed).
    BATCH_MATMUL = "symm_rt_batch_matmul"(
        Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, I64, I64, I32, I32, I32, I32
    );
    /// Rounds of a measured choice between a generated kernel and the
    /// library (site, rows, max rows, 1 where the site's input comes from a
    /// generated GEMV launched just before): 1 once decided, more while
    /// timing.
    KERNEL_ROUNDS = "symm_rt_kernel_rounds"(Ptr, I64, I64, I64, I64) -> I64;
    /// 1 where the round runs the generated kernel (site, rows, round, max
    /// rows); starts the round's timing while measuring.
    KERNEL_VARIANT = "symm_rt_kernel_variant"(Ptr, I64, I64, I64, I64) -> I32;
    /// Ends the round's timing (site, rows, round); decides after the last.
    KERNEL_VARIANT_END = "symm_rt_kernel_variant_end"(Ptr, I64, I64, I64);
    /// The device address of a TMA descriptor (`symm_mem.tensor_map`) of a
    /// bf16 matrix: its address, rows, columns, row stride (elements), box
    /// rows and box columns; 0 where the runtime has none for it.
    TENSOR_MAP = "symm_rt_tensor_map"(Ptr, Ptr, I64, I64, I64, I64, I64) -> I64;
    /// The P2P ring: a, b, c, m, k, n, dtype code.
    ALL_GATHER_MATMUL = "symm_rt_all_gather_matmul"(Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I32);
}

/// `runtime/include/symm_abi.h` (its `Display`).
pub struct CAbiHeader;

impl fmt::Display for CAbiHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "/* Generated from runtime/protocol/src/abi.rs by its test `c_abi_header_is_current`;\n   do not edit. The codes of symm's C ABI, shared with compiled programs. */"
        )?;
        writeln!(f, "#ifndef SYMM_ABI_H\n#define SYMM_ABI_H\n")?;
        fn one<T: Copy>(
            f: &mut fmt::Formatter<'_>,
            name: &str,
            all: &[T],
            entry: impl Fn(T) -> (&'static str, i32),
        ) -> fmt::Result {
            write!(f, "enum {name} {{")?;
            for (index, value) in all.iter().enumerate() {
                let (c_name, code) = entry(*value);
                let separator = if index == 0 { " " } else { ", " };
                write!(f, "{separator}{c_name} = {code}")?;
            }
            writeln!(f, " }};")
        }
        one(f, DtypeCode::C_ENUM, DtypeCode::ALL, |v| {
            (v.c_name(), v as i32)
        })?;
        one(f, ReduceCode::C_ENUM, ReduceCode::ALL, |v| {
            (v.c_name(), v as i32)
        })?;
        one(f, AlgorithmCode::C_ENUM, AlgorithmCode::ALL, |v| {
            (v.c_name(), v as i32)
        })?;
        one(f, LayoutCode::C_ENUM, LayoutCode::ALL, |v| {
            (v.c_name(), v as i32)
        })?;
        writeln!(f, "\n#endif /* SYMM_ABI_H */")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn codes_round_trip() {
        for dtype in DtypeCode::ALL {
            assert_eq!(DtypeCode::from_code(*dtype as i64), Some(*dtype));
            assert_eq!(DtypeCode::from_text(dtype.text()), Some(*dtype));
        }
        assert_eq!(ReduceCode::from_code(3), None);
        assert_eq!(
            AlgorithmCode::from_text("two_shot"),
            Some(AlgorithmCode::TwoShot)
        );
        for layout in LayoutCode::ALL {
            let (a, b) = (layout.a_transposed(), layout.b_transposed());
            assert_eq!(LayoutCode::of(a, b), *layout);
            assert_eq!(LayoutCode::from_code(*layout as i64), Some(*layout));
        }
        assert!(LayoutCode::TransposedB.b_transposed() && !LayoutCode::TransposedB.a_transposed());
    }

    #[test]
    fn c_abi_header_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/symm_abi.h");
        crate::assert_generated_current(path, &CAbiHeader.to_string());
    }
}
