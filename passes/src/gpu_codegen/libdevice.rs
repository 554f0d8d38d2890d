//! Where the libdevice bitcode (CUDA's math library: `__nv_expf`, ...)
//! comes from. `convert-gpu-to-nvvm` lowers `math` ops in kernels to calls
//! into it, and `gpu-module-to-binary` links it into each kernel module.
//! `./dev setup` installs it from NVIDIA's `nvidia-nvvm` wheel.

use crate::PassError;
use std::path::{Path, PathBuf};

/// The file name every CUDA release uses.
pub const FILE_NAME: &str = "libdevice.10.bc";

/// Environment variable naming the bitcode file.
pub const ENV: &str = "SYMM_LIBDEVICE";

/// Where `./dev setup` puts it, in this source tree.
const INSTALLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../.deps/libdevice");

/// The libdevice to link: `explicit` (a `--libdevice` flag) if given, else
/// `$SYMM_LIBDEVICE`, else an installed tree's (`PREFIX/share/symm`, beside
/// the running tool's `bin/`), else the copy `./dev setup` installed, else a CUDA
/// toolkit's (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`). A path given
/// explicitly or by the environment must exist; `Ok(None)` means none was
/// found, so kernels calling math functions fail to compile, by name.
pub fn find(explicit: Option<&Path>) -> Result<Option<PathBuf>, PassError> {
    let given = explicit
        .map(|p| (p.to_path_buf(), "--libdevice"))
        .or_else(|| std::env::var_os(ENV).map(|p| (PathBuf::from(p), ENV)));
    if let Some((path, source)) = given {
        return checked(&path)
            .map(Some)
            .map_err(|why| PassError::File(format!("{source}: {}: {why}", path.display())));
    }
    let toolkits = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("nvvm/libdevice"))
        .chain([PathBuf::from("/usr/local/cuda/nvvm/libdevice")]);
    // An installed symm-compile (./dev install) finds it in
    // PREFIX/share/symm, beside its own bin/.
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("share/symm")));
    Ok(beside
        .into_iter()
        .chain([PathBuf::from(INSTALLED)])
        .chain(toolkits)
        .map(|folder| folder.join(FILE_NAME))
        .find_map(|path| checked(&path).ok()))
}

/// `path` if it is a readable file that a pass pipeline option can carry.
fn checked(path: &Path) -> Result<PathBuf, PassError> {
    let path = path
        .canonicalize()
        .map_err(|e| PassError::File(format!("cannot read it: {e}")))?;
    if !path.is_file() {
        return Err(PassError::File("not a file".into()));
    }
    let text = path
        .to_str()
        .ok_or_else(|| PassError::File("the path is not UTF-8".into()))?;
    // The path travels inside a pass pipeline's option list.
    if let Some(bad) = text.chars().find(|c| ",{}\"' ".contains(*c)) {
        return Err(PassError::File(format!("the path may not contain {bad:?}")));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_path_must_exist() {
        let error = find(Some(Path::new("/nonexistent/libdevice.10.bc"))).unwrap_err();
        assert!(matches!(error, PassError::File(_)));
        assert!(
            error
                .to_string()
                .starts_with("--libdevice: /nonexistent/libdevice.10.bc: cannot read it")
        );
    }

    #[test]
    fn paths_that_break_a_pipeline_are_refused() {
        let folder = std::env::temp_dir().join("symm libdevice,test");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join(FILE_NAME);
        std::fs::write(&file, b"BC").unwrap();
        let error = find(Some(&file)).unwrap_err().to_string();
        assert!(error.contains("may not contain"), "{error}");
    }
}
