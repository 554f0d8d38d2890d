//! The GPU a program is compiled for (`symm-compile --chip`): its NVPTX
//! processor name and the PTX version its kernels are written in.

use crate::PassError;
use std::fmt;

/// A target the kernels can be compiled for: NVIDIA's compute capability
/// 8.0 and above (the generated matmuls use `mma.sync` on bf16 and
/// `cp.async`, which need sm_80), as LLVM 22's NVPTX backend names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chip {
    name: &'static str,
    /// The lowest PTX ISA version (times 10) that knows the chip.
    ptx: u32,
}

/// Every chip `--chip` accepts, with its minimum PTX version.
const CHIPS: &[Chip] = &[
    Chip::new("sm_80", 70),
    Chip::new("sm_86", 71),
    Chip::new("sm_87", 74),
    Chip::new("sm_89", 78),
    Chip::new("sm_90", 78),
    Chip::new("sm_90a", 80),
    Chip::new("sm_100", 86),
    Chip::new("sm_100a", 86),
    Chip::new("sm_101", 86),
    Chip::new("sm_101a", 86),
    Chip::new("sm_120", 87),
    Chip::new("sm_120a", 87),
];

impl Chip {
    const fn new(name: &'static str, ptx: u32) -> Self {
        Self { name, ptx }
    }

    /// H100 and H200, what symm is tuned and tested on.
    pub const DEFAULT: Chip = Chip::new("sm_90", 78);

    /// The chip `name` names, or a message listing the ones there are.
    pub fn parse(name: &str) -> Result<Chip, PassError> {
        CHIPS
            .iter()
            .copied()
            .find(|chip| chip.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = CHIPS.iter().map(|c| c.name).collect();
                PassError::BadOption(format!(
                    "unknown chip '{name}': symm compiles for {} (compute capability 8.0 and up)",
                    known.join(", ")
                ))
            })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether kernels can wait for the grids before them
    /// (`griddepcontrol`, programmatic dependent launch): sm_90 and up.
    pub fn has_grid_dependency(&self) -> bool {
        !self.name.starts_with("sm_8")
    }

    /// Whether the chip has Hopper's warpgroup tensor-core instructions
    /// (`wgmma`): sm_90a only (the architecture-specific target; later
    /// chips have other ones).
    pub fn has_wgmma(&self) -> bool {
        self.name == "sm_90a"
    }

    /// The `features` of `nvvm-attach-target`: the PTX version, never
    /// below 8.0, which every kernel symm writes is valid in (the driver
    /// JIT-compiles PTX, so a newer version costs nothing on a newer GPU).
    pub fn features(&self) -> String {
        format!("+ptx{}", self.ptx.max(80))
    }
}

impl fmt::Display for Chip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_dependency_starts_at_sm_90() {
        let has = |name| Chip::parse(name).unwrap().has_grid_dependency();
        assert!(!has("sm_80") && !has("sm_86") && !has("sm_89"));
        assert!(has("sm_90") && has("sm_90a") && has("sm_100a") && has("sm_120"));
        let wgmma = |name: &str| Chip::parse(name).unwrap().has_wgmma();
        assert!(wgmma("sm_90a") && !wgmma("sm_90") && !wgmma("sm_100a"));
    }

    #[test]
    fn parses_known_chips_and_refuses_others() {
        assert_eq!(Chip::parse("sm_90").unwrap(), Chip::DEFAULT);
        assert_eq!(Chip::parse("sm_90a").unwrap().features(), "+ptx80");
        assert_eq!(Chip::parse("sm_100a").unwrap().features(), "+ptx86");
        assert_eq!(Chip::parse("sm_80").unwrap().features(), "+ptx80");
        let error = Chip::parse("sm_75").unwrap_err().to_string();
        assert!(error.contains("unknown chip 'sm_75'") && error.contains("sm_90a"));
        assert!(Chip::parse("").is_err() && Chip::parse("SM_90").is_err());
    }
}
