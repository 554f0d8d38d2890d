//! Command line of symm-compile.

use std::path::PathBuf;

pub const USAGE: &str = "usage: symm-compile INPUT.mlir -o OUTPUT.o [--emit=llvm,ptx,mlir]
                    [--no-fuse-epilogue] [--one-shot-max-bytes=N] [--no-cuda-graphs]
                    [--libdevice=PATH | --no-libdevice]

Writes OUTPUT.o and OUTPUT.h (the entry points); --emit adds OUTPUT.ll
(LLVM IR), OUTPUT.ptx (the kernels) and OUTPUT.llvm.mlir (the lowered module).
Entry points become CUDA graphs on their second call with the same arguments
unless --no-cuda-graphs (or SYMM_CUDA_GRAPHS=0 at run time).
Math ops in kernels (exp, rsqrt, tanh, erf, ...) link CUDA's libdevice:
--libdevice, else $SYMM_LIBDEVICE, else the copy ./dev setup installs, else
a CUDA toolkit's; without one, a kernel that needs it is a compile error.";

/// Extra outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Llvm,
    Ptx,
    Mlir,
}

#[derive(Debug)]
pub struct Args {
    pub input: String,
    pub output: PathBuf,
    pub emit: Vec<Emit>,
    pub fuse_epilogue: bool,
    pub one_shot_max_bytes: u64,
    pub cuda_graphs: bool,
    pub libdevice: Libdevice,
}

/// Which libdevice to link.
#[derive(Debug, PartialEq, Eq)]
pub enum Libdevice {
    /// The first one `symm_passes::libdevice::find` finds.
    Search,
    Path(PathBuf),
    /// None: kernels may not call math functions.
    Off,
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut input = None;
    let mut output = None;
    let mut emit = Vec::new();
    let mut fuse_epilogue = true;
    let mut one_shot_max_bytes = 1 << 20;
    let mut cuda_graphs = true;
    let mut libdevice = Libdevice::Search;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-o" {
            output = Some(iter.next().ok_or("-o needs a file name")?.into());
        } else if let Some(list) = arg.strip_prefix("--emit=") {
            for item in list.split(',') {
                emit.push(match item {
                    "llvm" => Emit::Llvm,
                    "ptx" => Emit::Ptx,
                    "mlir" => Emit::Mlir,
                    other => {
                        return Err(format!(
                            "--emit: unknown output '{other}' (llvm, ptx, mlir)"
                        ));
                    }
                });
            }
        } else if arg == "--no-fuse-epilogue" {
            fuse_epilogue = false;
        } else if arg == "--no-libdevice" {
            libdevice = Libdevice::Off;
        } else if let Some(path) = arg.strip_prefix("--libdevice=") {
            libdevice = Libdevice::Path(path.into());
        } else if arg == "--no-cuda-graphs" {
            cuda_graphs = false;
        } else if let Some(value) = arg.strip_prefix("--one-shot-max-bytes=") {
            one_shot_max_bytes = value
                .parse()
                .map_err(|_| format!("--one-shot-max-bytes: '{value}' is not a byte count"))?;
        } else if arg == "-h" || arg == "--help" {
            return Err("help".into());
        } else if arg.starts_with('-') {
            return Err(format!("unknown option '{arg}'"));
        } else if input.replace(arg.clone()).is_some() {
            return Err("more than one input file".into());
        }
    }
    let input = input.ok_or("no input file")?;
    let output = output.unwrap_or_else(|| PathBuf::from(&input).with_extension("o"));
    Ok(Args {
        input,
        output,
        emit,
        fuse_epilogue,
        one_shot_max_bytes,
        cuda_graphs,
        libdevice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_every_option() {
        let args = parse(&strings(&[
            "a.mlir",
            "-o",
            "b.o",
            "--emit=llvm,ptx",
            "--no-fuse-epilogue",
            "--one-shot-max-bytes=64",
            "--no-cuda-graphs",
            "--libdevice=/x/libdevice.10.bc",
        ]))
        .unwrap();
        assert_eq!(args.input, "a.mlir");
        assert_eq!(args.output, PathBuf::from("b.o"));
        assert_eq!(args.emit, vec![Emit::Llvm, Emit::Ptx]);
        assert!(!args.fuse_epilogue);
        assert_eq!(args.one_shot_max_bytes, 64);
        assert!(!args.cuda_graphs);
        assert_eq!(args.libdevice, Libdevice::Path("/x/libdevice.10.bc".into()));
        assert_eq!(
            parse(&strings(&["a.mlir", "--no-libdevice"]))
                .unwrap()
                .libdevice,
            Libdevice::Off
        );
        assert!(parse(&strings(&["a.mlir"])).unwrap().cuda_graphs);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse(&strings(&[])).is_err());
        assert!(parse(&strings(&["a.mlir", "--emit=asm"])).is_err());
        assert!(parse(&strings(&["a.mlir", "b.mlir"])).is_err());
        assert!(parse(&strings(&["a.mlir", "-o"])).is_err());
    }
}
