//! Which names an entry point may have: it becomes an external C function
//! declared in the generated header, compiled as C or C++ and linked into
//! an application beside libc, libm and the CUDA driver. A name that is
//! not an identifier, a keyword, a name the C standard or POSIX reserves, a
//! macro or typedef of the headers the header includes, or a function of
//! those libraries would make the header fail to compile or, worse, link
//! and replace the library's function (`malloc`, `exp`, `cuInit`).

/// Keywords of C (C89 to C23) and C++ (to C++20): the header is both.
const KEYWORDS: &[&str] = &[
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_BitInt",
    "_Bool",
    "_Complex",
    "_Decimal128",
    "_Decimal32",
    "_Decimal64",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "char8_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "const",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "typeof",
    "typeof_unqual",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// Macros of the headers the generated header includes (stdint.h,
/// stdbool.h, and the stddef.h that symm_runtime.h includes) that are not
/// matched by `is_limit_macro`.
const MACROS: &[&str] = &["NULL", "offsetof", "assert"];

/// Functions of the C standard library (C11/C23), of POSIX's most used
/// interfaces and the program's entry, which an object defining them would
/// replace at link time. Math functions come with their `f` and `l` forms
/// (`math_names`).
const LIBRARY: &[&str] = &[
    // stdlib.h
    "abort",
    "abs",
    "aligned_alloc",
    "at_quick_exit",
    "atexit",
    "atof",
    "atoi",
    "atol",
    "atoll",
    "bsearch",
    "calloc",
    "div",
    "exit",
    "free",
    "getenv",
    "labs",
    "ldiv",
    "llabs",
    "lldiv",
    "malloc",
    "mblen",
    "mbstowcs",
    "mbtowc",
    "qsort",
    "quick_exit",
    "rand",
    "realloc",
    "srand",
    "strtod",
    "strtof",
    "strtol",
    "strtold",
    "strtoll",
    "strtoul",
    "strtoull",
    "system",
    "wcstombs",
    "wctomb",
    "free_sized",
    "free_aligned_sized",
    "memalignment",
    // string.h
    "memchr",
    "memcmp",
    "memcpy",
    "memmove",
    "memset",
    "memset_explicit",
    "memccpy",
    "strcat",
    "strchr",
    "strcmp",
    "strcoll",
    "strcpy",
    "strcspn",
    "strdup",
    "strndup",
    "strerror",
    "strlen",
    "strncat",
    "strncmp",
    "strncpy",
    "strpbrk",
    "strrchr",
    "strspn",
    "strstr",
    "strtok",
    "strxfrm",
    // stdio.h
    "clearerr",
    "fclose",
    "feof",
    "ferror",
    "fflush",
    "fgetc",
    "fgetpos",
    "fgets",
    "fopen",
    "fprintf",
    "fputc",
    "fputs",
    "fread",
    "freopen",
    "fscanf",
    "fseek",
    "fsetpos",
    "ftell",
    "fwrite",
    "getc",
    "getchar",
    "gets",
    "perror",
    "printf",
    "putc",
    "putchar",
    "puts",
    "remove",
    "rename",
    "rewind",
    "scanf",
    "setbuf",
    "setvbuf",
    "snprintf",
    "sprintf",
    "sscanf",
    "tmpfile",
    "tmpnam",
    "ungetc",
    "vfprintf",
    "vfscanf",
    "vprintf",
    "vscanf",
    "vsnprintf",
    "vsprintf",
    "vsscanf",
    // ctype.h, signal.h, setjmp.h, locale.h, time.h, threads.h, stdarg.h
    "isalnum",
    "isalpha",
    "isblank",
    "iscntrl",
    "isdigit",
    "isgraph",
    "islower",
    "isprint",
    "ispunct",
    "isspace",
    "isupper",
    "isxdigit",
    "tolower",
    "toupper",
    "raise",
    "signal",
    "longjmp",
    "setjmp",
    "localeconv",
    "setlocale",
    "asctime",
    "clock",
    "ctime",
    "difftime",
    "gmtime",
    "localtime",
    "mktime",
    "strftime",
    "time",
    "timespec_get",
    "call_once",
    "cnd_broadcast",
    "cnd_destroy",
    "cnd_init",
    "cnd_signal",
    "cnd_timedwait",
    "cnd_wait",
    "mtx_destroy",
    "mtx_init",
    "mtx_lock",
    "mtx_timedlock",
    "mtx_trylock",
    "mtx_unlock",
    "thrd_create",
    "thrd_current",
    "thrd_detach",
    "thrd_equal",
    "thrd_exit",
    "thrd_join",
    "thrd_sleep",
    "thrd_yield",
    "tss_create",
    "tss_delete",
    "tss_get",
    "tss_set",
    "va_arg",
    "va_copy",
    "va_end",
    "va_start",
    // POSIX and the program
    "main",
    "close",
    "dlclose",
    "dlerror",
    "dlopen",
    "dlsym",
    "dup",
    "dup2",
    "execv",
    "execve",
    "execvp",
    "fork",
    "getpid",
    "ioctl",
    "kill",
    "mmap",
    "munmap",
    "nanosleep",
    "open",
    "pipe",
    "poll",
    "posix_memalign",
    "read",
    "select",
    "setenv",
    "sleep",
    "socket",
    "unsetenv",
    "usleep",
    "wait",
    "waitpid",
    "write",
    "connect",
    "accept",
    "bind",
    "listen",
    "send",
    "recv",
];

/// Functions of math.h (C99 and later) without their `f`/`l` forms.
const MATH: &[&str] = &[
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "hypot",
    "ilogb",
    "ldexp",
    "lgamma",
    "llrint",
    "llround",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "lrint",
    "lround",
    "modf",
    "nan",
    "nearbyint",
    "nextafter",
    "nexttoward",
    "pow",
    "remainder",
    "remquo",
    "rint",
    "round",
    "scalbln",
    "scalbn",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "trunc",
    "rsqrt",
    "exp10",
    "sincos",
    "roundeven",
];

/// Prefixes of the runtime, the compiler and the libraries an application
/// links, with what they belong to.
const RESERVED_PREFIXES: &[(&str, &str)] = &[
    ("symm_", "the symm runtime"),
    ("SYMM_", "the symm runtime's macros"),
    ("mgpu", "the GPU launch calls the compiler emits"),
    ("pthread_", "POSIX threads"),
];

/// `INT8_MAX`, `UINT64_C`, `SIZE_MAX`, `INT_LEAST16_MIN`, `INTPTR_WIDTH`...:
/// the limit and constant macros of stdint.h.
fn is_limit_macro(name: &str) -> bool {
    let Some((stem, suffix)) = name.rsplit_once('_') else {
        return false;
    };
    if !matches!(suffix, "MAX" | "MIN" | "C" | "WIDTH") {
        return false;
    }
    let stem = stem.strip_prefix('U').unwrap_or(stem);
    stem.starts_with("INT") || ["PTRDIFF", "SIZE", "SIG_ATOMIC", "WCHAR", "WINT"].contains(&stem)
}

/// `cuInit`, `cudaMalloc`, `ncclAllReduce`, `nvrtcCompileProgram`: the CUDA
/// driver's, runtime's and libraries' functions (a lower-case prefix, then
/// a capital).
fn cuda_prefix(name: &str) -> Option<&'static str> {
    [
        "cu",
        "cuda",
        "cublas",
        "cublasLt",
        "nccl",
        "nvrtc",
        "nvJitLink",
    ]
    .into_iter()
    .filter(|prefix| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
    })
    .max_by_key(|prefix| prefix.len())
}

fn is_math_function(name: &str) -> bool {
    let base = |n: &str| MATH.contains(&n);
    base(name)
        || name.strip_suffix('f').is_some_and(base)
        || name.strip_suffix('l').is_some_and(base)
}

/// Why `name` cannot be an entry point's C name, if it cannot.
pub fn problem(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Some(format!(
            "its name {name:?} is not a C identifier (letters, digits and '_', not starting \
             with a digit); entry points are C functions: rename it"
        ));
    }
    if KEYWORDS.contains(&name) {
        return Some(format!(
            "its name '{name}' is a C or C++ keyword: rename it"
        ));
    }
    if name.starts_with('_') || name.contains("__") {
        return Some(format!(
            "its name '{name}' is reserved: C reserves names that begin with '_' at file \
             scope, and C++ names that contain '__': rename it"
        ));
    }
    if name.ends_with("_t") {
        return Some(format!(
            "its name '{name}' ends in '_t', which POSIX reserves for type names (int64_t, \
             size_t): rename it"
        ));
    }
    if MACROS.contains(&name) || is_limit_macro(name) {
        return Some(format!(
            "its name '{name}' is a macro of the C headers the generated header includes: \
             rename it"
        ));
    }
    if LIBRARY.contains(&name) || is_math_function(name) {
        return Some(format!(
            "its name '{name}' is a function of the C library or POSIX; the entry point \
             would replace it in the application that links it: rename it"
        ));
    }
    if let Some(prefix) = cuda_prefix(name) {
        return Some(format!(
            "its name '{name}' is in the namespace of the CUDA libraries ('{prefix}' and a \
             capital), which the application links: rename it"
        ));
    }
    if let Some((prefix, owner)) = RESERVED_PREFIXES
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
    {
        return Some(format!(
            "its name '{name}' begins with '{prefix}', which {owner} reserves: rename it"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn plain_names_are_accepted() {
        for name in [
            "llama_mlp",
            "layer2",
            "tp_mlp",
            "Layer",
            "cuda_layer",
            "culling",
            "exponent",
            "expert",
            "main_layer",
            "INT8_TABLE",
            "tokens",
            "runtime",
            "stream",
        ] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    #[test]
    fn refuses_what_breaks_the_header_or_the_link() {
        let why = |name: &str| problem(name).unwrap_or_else(|| panic!("{name} accepted"));
        assert!(why("x(void); int evil").contains("not a C identifier"));
        assert!(why("2x").contains("not a C identifier"));
        assert!(why("").contains("not a C identifier"));
        assert!(why("caf\u{e9}").contains("not a C identifier"));
        for keyword in [
            "int",
            "_Bool",
            "_Atomic",
            "_Static_assert",
            "_Noreturn",
            "typeof",
        ] {
            assert!(why(keyword).contains("keyword"), "{keyword}");
        }
        for reserved in ["_layer", "_X", "a__b"] {
            assert!(why(reserved).contains("reserved"), "{reserved}");
        }
        for typedef in ["int64_t", "size_t", "uint16_t", "layer_t"] {
            assert!(why(typedef).contains("'_t'"), "{typedef}");
        }
        for mac in [
            "NULL",
            "INT64_MAX",
            "UINT8_C",
            "SIZE_MAX",
            "INT_FAST16_MIN",
            "UINTPTR_MAX",
        ] {
            assert!(why(mac).contains("macro"), "{mac}");
        }
        for function in [
            "main", "malloc", "memcpy", "exp", "expf", "sqrtl", "printf", "write",
        ] {
            assert!(why(function).contains("C library or POSIX"), "{function}");
        }
        for cuda in ["cuInit", "cudaMalloc", "ncclAllReduce", "cublasLtMatmul"] {
            assert!(why(cuda).contains("CUDA"), "{cuda}");
        }
        assert!(why("symm_rt_exit").contains("'symm_'"));
        assert!(why("SYMM_RUNTIME_H").contains("'SYMM_'"));
        assert!(why("mgpuLaunchKernel").contains("'mgpu'"));
    }
}
