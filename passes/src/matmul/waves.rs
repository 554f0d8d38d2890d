//! Waves: a register GEMV runs one block an SM (it takes the whole
//! register file), so a grid of a few more blocks than SMs runs a second
//! wave of those few while the rest of the GPU idles, the weight's read
//! stalled on them. Where a matmul's 64-column bands would waste a wave
//! that way, its GEMVs take bands twice as wide with half the k-groups
//! (the same threads, shared memory and loads in flight a thread): one
//! wave of half the blocks. Llama-3-8B's TP-2 shapes take one wave of
//! 64-column bands already (112 and 128 blocks); Qwen2.5-7B's pair (148
//! bands), LLaMA-30B's (140), Qwen2.5-32B's (216) and Llama-3-70B's (224)
//! and the down projections of hidden 5120 and 6656 (160 and 208 blocks in
//! two slices) do not (bench/results/2026-11-28-widths-h200x2.md).

use super::gemv::{Engine, GemvTile, MMA_COLUMNS};
use super::kernel::SkinnyMatmul;

/// The SMs a GEMV's grid is balanced over unless the pass's `wave-sms`
/// says otherwise (`SkinnyMatmul::wave_sms`): H100 SXM's and H200's 132
/// (sm_90's parts for which the kernels are tuned; H100 PCIe has 114,
/// H20 78). A grid of more blocks runs in waves, one block an SM (the
/// register GEMVs take the whole register file).
pub const DEFAULT_WAVE_SMS: u64 = 132;
/// The most SMs `wave-sms` takes.
pub const MAX_WAVE_SMS: u64 = 1024;

/// The wave efficiency below which a register GEMV of more blocks than
/// the GPU's SMs takes bands twice as wide (`GemvTile::widened`), one wave:
/// its blocks over the SMs of its waves. On 2x H200 (TP 2) the pairs of
/// Qwen2.5-7B (148 bands, 0.56), LLaMA-30B (140, 0.53), Qwen2.5-32B (216,
/// 0.82) and Llama-3-70B (224, 0.85) read 4-19% faster in 128-column
/// bands, and the 16-row down projections of LLaMA-30B (208 blocks, 0.79),
/// Llama-2-13B and Qwen2.5-32B (160, 0.61) 15-17% faster; Llama-3-70B's
/// down projection (256 blocks, 0.97: two full waves) read 2-4% slower so
/// (bench/results/2026-11-28-widths-h200x2.md).
pub const WIDEN_BELOW_WAVE_EFFICIENCY: f64 = 0.9;

/// Whether a grid of `blocks` blocks on `sms` SMs loses a part of a wave
/// worth widening for: more blocks than SMs, and under
/// `WIDEN_BELOW_WAVE_EFFICIENCY` of its waves' SMs busy.
pub fn wastes_a_wave(blocks: u64, sms: u64) -> bool {
    let waves = blocks.div_ceil(sms);
    waves > 1 && (blocks as f64) < WIDEN_BELOW_WAVE_EFFICIENCY * (waves * sms) as f64
}

impl GemvTile {
    /// The same GEMV over column bands twice as wide with half the
    /// k-groups (the same threads, shared memory and loads in flight a
    /// thread), where it has 64 columns and an even number of k-groups:
    /// half the blocks, for a grid that would waste a wave
    /// (`SkinnyMatmul::gemv_tile_for`).
    pub fn widened(&self) -> Option<GemvTile> {
        (self.columns == MMA_COLUMNS && self.k_groups.is_multiple_of(2)).then_some(GemvTile {
            columns: 2 * self.columns,
            k_groups: self.k_groups / 2,
            ..*self
        })
    }
}

impl SkinnyMatmul {
    /// GEMV `tile` over 128-column bands (`GemvTile::widened`), where
    /// its grid of 64-column bands would waste a wave (`wastes_a_wave`)
    /// and the wider one fits in one, for weights stored k x n: the
    /// tensor-core GEMVs, and the CUDA-core GEMV of a pair (a single
    /// matmul's one-row GEMV read the down projections of LLaMA-30B and
    /// Qwen2.5-32B 3-10% slower so: its short blocks take a second wave
    /// well).
    pub fn gemv_widened(&self, tile: GemvTile) -> Option<GemvTile> {
        let kinds = match tile.engine {
            Engine::TensorCores => true,
            Engine::CudaCores => self.weights == 2,
            Engine::Tma | Engine::Wgmma => false,
        };
        let wide = tile
            .widened()
            .filter(|_| kinds && !self.weight_transposed)?;
        // It runs as the narrow one would: staged, or applying the norm as
        // it reads `a` where the staged rows do not fit (`norm_must_stream`,
        // decided after the tilings).
        let runs = self.gemv_problem(wide).is_none() || self.norm_must_stream(wide);
        let sms = self.wave_sms;
        (wastes_a_wave(self.gemv_blocks(tile), sms) && self.gemv_blocks(wide) <= sms && runs)
            .then_some(wide)
    }

    /// What the group's remark says of GEMV `tile` where `gemv_widened`
    /// made it: its bands' width and the grid it avoids; empty elsewhere.
    pub fn gemv_band_note(&self, tile: GemvTile) -> String {
        let narrow = GemvTile {
            columns: tile.columns / 2,
            k_groups: tile.k_groups * 2,
            ..tile
        };
        // Only a widened tile's narrow one widens back to it.
        if self.gemv_widened(narrow) != Some(tile) {
            return String::new();
        }
        format!(
            ", in {}-column bands: {}-column ones would take {} blocks, a wave of {} SMs and part of another",
            tile.columns,
            narrow.columns,
            self.gemv_blocks(narrow),
            self.wave_sms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::gemv::tests::{matmul, mma_tiles};
    use crate::matmul::kernel::Output;

    /// A split-K single matmul of `slices` slices of K rows and N columns.
    fn sliced(k: u64, n: u64, slices: u64) -> SkinnyMatmul {
        SkinnyMatmul {
            slices,
            a_slice: k,
            w_slice: k * n,
            output: Output::F32,
            ..matmul(k, n, k * slices, false)
        }
    }

    /// The register GEMVs whose 64-column grid would waste a wave take
    /// 128-column bands (the same threads): TP 2's pairs of Qwen2.5-7B and
    /// Llama-3-70B, LLaMA-30B's down projection on the tensor cores; not
    /// Llama-3-8B's (one wave), not Llama-3-70B's down projection (two full
    /// waves), not a single matmul's CUDA-core GEMV, not n x k weights.
    #[test]
    fn grids_that_waste_a_wave_take_wider_bands() {
        let llama_pair = matmul(4096, 7168, 4096, true);
        let llama_down = sliced(3584, 4096, 2);
        for (kernel, kinds) in [
            (&llama_pair, [GemvTile::PAIR, GemvTile::PAIR_MMA]),
            (&llama_down, [GemvTile::SINGLE, GemvTile::SINGLE_MMA]),
        ] {
            for tile in kinds {
                assert_eq!(kernel.gemv_tile_for(tile).columns, 64, "{tile:?}");
                assert_eq!(kernel.gemv_band_note(tile), "");
            }
        }
        for (k, n) in [(3584, 9472), (8192, 14336)] {
            let pair = matmul(k, n, k, true);
            for kind in [GemvTile::PAIR, GemvTile::PAIR_MMA] {
                let wide = pair.gemv_tile_for(kind);
                assert_eq!((wide.columns, wide.k_groups), (128, kind.k_groups / 2));
                assert_eq!(wide.threads(2), kind.threads(2));
                assert_eq!(pair.gemv_blocks(wide), n / 128);
            }
        }
        // Every tiling of one kernel name alike: the staged 16-row tiling
        // too, even where the rows do not fit staged (K = 8192: the pair
        // streams its norm), so the two merge into one kernel.
        for k in [3584, 8192] {
            let pair = matmul(k, 14336, k, true);
            let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
            assert_eq!(tiles.len(), 1, "K = {k}: {tiles:?}");
            assert_eq!(tiles[0].columns, 128, "K = {k}");
        }
        let note =
            matmul(3584, 9472, 3584, true).gemv_band_note(GemvTile::PAIR_MMA.widened().unwrap());
        assert!(
            note.contains("64-column ones would take 148 blocks"),
            "{note}"
        );
        let down = sliced(4480, 6656, 2);
        let wide = down.gemv_tile_for(GemvTile::SINGLE_MMA);
        assert_eq!((wide.columns, down.gemv_blocks(wide)), (128, 104));
        assert_eq!(down.gemv_tile_for(GemvTile::SINGLE).columns, 64);
        let seventy_b_down = sliced(7168, 8192, 2);
        assert_eq!(
            seventy_b_down.gemv_tile_for(GemvTile::SINGLE_MMA).columns,
            64
        );
        // The short-grid wgmma rule counts the 64-column grid: 208 blocks
        // is no short grid, though the widened register GEMV runs 104.
        let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
        assert_eq!(
            down.short_grid_wgmma(&tiles, GemvTile::SHORT_WGMMA),
            Err(None)
        );
        let transposed = SkinnyMatmul {
            weight_transposed: true,
            ..matmul(3584, 9472, 3584, true)
        };
        assert_eq!(transposed.gemv_widened(GemvTile::PAIR_MMA_LINEAR), None);
    }

    /// The grid is balanced over the SMs of the GPU the kernels are built
    /// for (`wave-sms`): on H100 PCIe's 114 the Llama-3-8B down
    /// projection's 128 blocks would take a second wave of 14, so it takes
    /// 128-column bands (64 blocks); its pair's 112 blocks fit one wave.
    #[test]
    fn the_waves_are_the_target_gpus() {
        let pcie = |kernel: SkinnyMatmul| SkinnyMatmul {
            wave_sms: 114,
            ..kernel
        };
        let down = pcie(sliced(3584, 4096, 2));
        let wide = down.gemv_tile_for(GemvTile::SINGLE_MMA);
        assert_eq!((wide.columns, down.gemv_blocks(wide)), (128, 64));
        let note = down.gemv_band_note(wide);
        assert!(
            note.contains("64-column ones would take 128 blocks, a wave of 114 SMs"),
            "{note}"
        );
        let pair = pcie(matmul(4096, 7168, 4096, true));
        assert_eq!(pair.gemv_tile_for(GemvTile::PAIR_MMA).columns, 64);
        // On H20's 78 the pair's 112 bands would waste a wave too, and
        // 56 wider ones fit in one.
        let h20 = SkinnyMatmul {
            wave_sms: 78,
            ..matmul(4096, 7168, 4096, true)
        };
        let wide = h20.gemv_tile_for(GemvTile::PAIR_MMA);
        assert_eq!((wide.columns, h20.gemv_blocks(wide)), (128, 56));
    }

    proptest::proptest! {
        /// At any width, K and SM count, a GEMV is widened only where its 64-column
        /// grid wastes a wave and the wider one fits in one, with the same
        /// threads and shared memory, and the tilings a matmul runs keep
        /// one kernel a name.
        #[test]
        fn widening_fits_one_wave_with_the_same_threads(
            bands in 1u64..=400,
            slices in 1u64..=2,
            pair in proptest::bool::ANY,
            steps in 64u64..=640,
            sms in proptest::sample::select(vec![78u64, 114, 132, 148]),
        ) {
            let (n, k) = (bands * 64, steps * 16);
            let kernel = if pair { matmul(k, n, k, true) } else { sliced(k, n, slices) };
            let kernel = SkinnyMatmul { wave_sms: sms, ..kernel };
            // One kernel a name: the tilings the matmul runs differ in name
            // wherever they differ in more than the calls they take.
            let kind = if pair { GemvTile::PAIR_MMA } else { GemvTile::SINGLE_MMA };
            let runs = kernel.gemv_tiles_for(&mma_tiles(kind));
            for (i, a) in runs.iter().enumerate() {
                for b in &runs[i + 1..] {
                    proptest::prop_assert!(
                        kernel.gemv_name(*a) != kernel.gemv_name(*b),
                        "{n}, K = {k}: {runs:?}"
                    );
                }
            }
            let kinds = if pair {
                [GemvTile::PAIR, GemvTile::PAIR_MMA]
            } else {
                [GemvTile::SINGLE, GemvTile::SINGLE_MMA]
            };
            for kind in kinds {
                let chosen = kernel.gemv_tile_for(kind);
                let wastes = wastes_a_wave(kernel.gemv_blocks(kind), sms);
                if chosen.columns == 128 {
                    proptest::prop_assert!(wastes);
                    proptest::prop_assert!(kernel.gemv_blocks(chosen) <= sms);
                    proptest::prop_assert_eq!(chosen.threads(kernel.weights), kind.threads(kernel.weights));
                    proptest::prop_assert_eq!(
                        chosen.shared_bytes(&kernel.gemv_shape()),
                        GemvTile { stage_a: chosen.stage_a, ..kind }.shared_bytes(&kernel.gemv_shape())
                    );
                } else {
                    let fits_wide = kind.widened().is_some_and(|w| kernel.gemv_blocks(w) <= sms);
                    let widens = kind.engine == Engine::TensorCores || pair;
                    proptest::prop_assert!(!(wastes && fits_wide && widens), "{n}: {chosen:?}");
                }
            }
        }
    }
}
