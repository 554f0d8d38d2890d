//! Which GEMV tilings a matmul runs (`SkinnyMatmul::gemv_tiles_for`), their
//! kernels' names, grids and problems.

use super::tile::{
    Engine, GemvShape, GemvTile, LINE_ELEMENTS, MMA_COLUMNS, PIECE, SHORT_GRID_BLOCKS,
};
use crate::matmul::kernel::SkinnyMatmul;

/// The share of the SMs (numerator, denominator) that a grid must cover
/// for the GEMV with the norm in its loop to take calls of 1 to 8 rows
/// (`SkinnyMatmul::twin_takes_few_rows`).
const FULL_GRID_SHARE: (u64, u64) = (3, 4);

impl SkinnyMatmul {
    /// The sizes its GEMVs' shared memory depends on.
    pub fn gemv_shape(&self) -> GemvShape {
        GemvShape {
            k: self.k,
            weights: self.weights,
            staged: self.prologue.is_some(),
            streamed: self.stream_norm && self.prologue_splits(),
            column_bytes: self.prologue.as_ref().map_or(0, |p| {
                p.columns
                    .iter()
                    .map(|c| c.bytes().unwrap_or(0))
                    .sum::<u64>()
            }),
        }
    }

    /// Whether the prologue is a row factor times column factors
    /// (`Prologue::row_scale`).
    fn prologue_splits(&self) -> bool {
        self.prologue
            .as_ref()
            .is_some_and(|p| p.row_scale.is_some())
    }

    /// Whether every row of `a` (and every split-K slice of it) starts on
    /// a 16-byte boundary, as kernels that stage or hold rows in 16-byte
    /// vectors need; why not, where it does not.
    pub(in crate::matmul) fn rows_vector_problem(&self) -> Option<String> {
        let vectors = self.lda.is_multiple_of(PIECE) && self.a_slice.is_multiple_of(PIECE);
        (!vectors).then(|| "the rows of `a` are staged in 16-byte vectors".to_owned())
    }

    /// The name of the GEMV kernel for up to `rows` rows.
    pub fn gemv_name(&self, tile: GemvTile) -> String {
        let kind = match tile.engine {
            Engine::CudaCores => "gemv",
            Engine::TensorCores => "mma",
            Engine::Tma => "tma",
            Engine::Wgmma => "wgmma",
        };
        let staged = if tile.stage_a { "_staged" } else { "" };
        let normed = if tile.norm_in_loop {
            "_norm_in_loop"
        } else {
            ""
        };
        format!("{}_{kind}{}{staged}{normed}", self.name, tile.rows)
    }

    /// Why GEMV `tile` cannot run this matmul (`None`: it can): the
    /// tiling's problem at this shape, then its weights' layout's, then
    /// (a tiling that stages `a` without a prologue) the rows' alignment.
    pub fn gemv_problem(&self, tile: GemvTile) -> Option<String> {
        tile.problem(&self.gemv_shape())
            .or_else(|| {
                if self.weight_transposed {
                    self.linear_gemv_problem(tile)
                } else {
                    self.row_major_gemv_problem(tile)
                }
            })
            .or_else(|| tile.stage_a.then(|| self.rows_vector_problem()).flatten())
    }

    /// Why GEMV `tile` cannot read weights stored k x n.
    fn row_major_gemv_problem(&self, tile: GemvTile) -> Option<String> {
        match tile.engine {
            Engine::Tma => crate::matmul::gemv_tma::matmul_problem(self, tile),
            Engine::Wgmma => crate::matmul::gemv_wgmma::matmul_problem(self, tile),
            Engine::TensorCores if tile.warp_columns() != MMA_COLUMNS => Some(format!(
                "the tensor-core GEMV of weights stored k x n takes a multiple of 64 columns, not {}",
                tile.columns
            )),
            Engine::TensorCores | Engine::CudaCores => None,
        }
    }

    /// Why GEMV `tile` cannot read weights stored n x k (`gemv_linear`,
    /// `gemv_mma_linear`).
    fn linear_gemv_problem(&self, tile: GemvTile) -> Option<String> {
        if !self.k.is_multiple_of(PIECE) || self.slices != 1 {
            return Some(format!(
                "K = {} of weights stored n x k is read in 16-byte pieces along their rows, in one slice",
                self.k
            ));
        }
        match tile.engine {
            Engine::TensorCores if self.gemv_shape().streamed => Some(
                "the tensor-core GEMV of weights stored n x k stages its rows of `a` (it does not apply the norm as it reads them)"
                    .into(),
            ),
            Engine::TensorCores => None,
            Engine::CudaCores if !tile.k_groups.is_multiple_of(crate::matmul::kernel::WARP) => {
                Some(format!(
                    "{} k-groups are not whole warps (a warp reads one piece's weight rows)",
                    tile.k_groups
                ))
            }
            Engine::CudaCores => None,
            Engine::Tma | Engine::Wgmma => Some(
                "only the CUDA-core and the register-streaming tensor-core GEMVs read weights stored n x k"
                    .into(),
            ),
        }
    }

    /// The GEMVs this matmul runs for `tiles` (ordered by the rows they
    /// take): each as `gemv_tile_for` makes it, and a tiling that makes the
    /// same kernel as the next one merged into it.
    pub fn gemv_tiles_for(&self, tiles: &[GemvTile]) -> Vec<GemvTile> {
        let mut merged: Vec<GemvTile> = Vec::new();
        for tile in tiles.iter().map(|t| self.gemv_tile_for(*t)) {
            match merged.last_mut() {
                Some(last) if GemvTile { calls: 0, ..*last } == GemvTile { calls: 0, ..tile } => {
                    *last = tile;
                }
                _ => merged.push(tile),
            }
        }
        merged
    }

    /// The GEMV this matmul runs for `tile`: a tensor-core GEMV that would
    /// stage `a` without a prologue (`GemvTile::stage_a`) reads it from
    /// global memory instead where the staged rows cannot run (they do not
    /// fit in shared memory, or are not in 16-byte vectors) or would take
    /// the L1 its loads need (`GemvTile::starves_l1`); with a prologue the
    /// rows go through it either way, and the flag is off. Then, where its
    /// grid would waste a wave, it takes bands twice as wide
    /// (`SkinnyMatmul::gemv_widened`, `waves`).
    pub fn gemv_tile_for(&self, tile: GemvTile) -> GemvTile {
        let unstaged = GemvTile {
            stage_a: false,
            ..tile
        };
        let starves = tile.starves_l1(&self.gemv_shape());
        let tile = if tile.stage_a
            && (self.prologue.is_some() || starves || self.gemv_problem(tile).is_some())
        {
            unstaged
        } else {
            tile
        };
        // Widened as staged or not: every tiling of one kernel name alike.
        self.gemv_widened(tile).unwrap_or(tile)
    }

    /// `tiles` with the calls of a 16-row tensor-core GEMV that stages its
    /// rows through a norm prologue (row factor times column factors, not
    /// streamed) given to a GEMV that stages them raw and applies the norm
    /// in its loop (`GemvTile::norm_in_loop`): its calls of 9 to 16 rows,
    /// and where its grid is full (`twin_takes_few_rows`) every call of up
    /// to 16, the CUDA-core GEMVs' (one row) too; elsewhere the calls of
    /// up to 8 keep the pass before the loop, which skips the rows a call
    /// does not have while the loop's work does not shrink with them. On
    /// one H200, with the norm weight staged beside the rows, the
    /// Llama-3-8B block took 48.2-48.3 instead of 49.4-49.6 µs at 16 rows,
    /// 46.3-46.6 instead of 48.1-48.3 at 2, and 44.7-44.8 instead of
    /// 44.9-45.1 at one row, where the one-row GEMV had read the pair at
    /// 4.01 TB/s and the twin reads it at 4.05-4.06 (the GELU block's lone
    /// up projection: 0.9-1.0 µs less;
    /// bench/results/2026-11-29-stage-columns-h200.md).
    pub fn with_norm_in_loop(&self, tiles: Vec<GemvTile>) -> Vec<GemvTile> {
        if !self.prologue_splits() || self.stream_norm {
            return tiles;
        }
        let mut takes_few_rows = false;
        let mut out: Vec<GemvTile> = tiles
            .into_iter()
            .flat_map(|tile| {
                // (With `ahead`'s in-loop prefetches as well, the kernel
                // spills: ptxas, test/Integration/ptxas_generated.mlir.)
                let splits = tile.engine == Engine::TensorCores
                    && tile.rows == 16
                    && tile.takes() > 8
                    && tile.ahead == 0
                    && !self.weight_transposed;
                if !splits {
                    return vec![tile];
                }
                let normed = GemvTile {
                    norm_in_loop: true,
                    ..tile
                };
                // (Its k-groups' parts of the statistics take a little more
                // shared memory.)
                if self.gemv_problem(normed).is_some() || normed.starves_l1(&self.gemv_shape()) {
                    return vec![tile];
                }
                if self.twin_takes_few_rows(normed) {
                    takes_few_rows = true;
                    return vec![normed];
                }
                vec![GemvTile { calls: 8, ..tile }, normed]
            })
            .collect();
        if takes_few_rows {
            out.retain(|t| t.engine != Engine::CudaCores);
        }
        out
    }

    /// Whether the tensor-core GEMV `tile` takes this matmul only by
    /// applying its norm as it reads `a` (`stream_norm`): the rows it would
    /// stage do not fit in shared memory, or would take the L1 its loads
    /// need (`GemvTile::starves_l1`), and streamed they need no room.
    /// Where they fit, staging them measured faster (on one H200 the
    /// Llama-3-8B pair at 2-16 rows 0.5-1.3 µs;
    /// bench/results/2026-11-27-stream-norm-h200.md).
    pub fn norm_must_stream(&self, tile: GemvTile) -> bool {
        if tile.engine != Engine::TensorCores || !self.prologue_splits() {
            return false;
        }
        let with = |stream_norm| SkinnyMatmul {
            stream_norm,
            ..self.clone()
        };
        let (staged, streamed) = (with(false), with(true));
        let staging_loses =
            staged.gemv_problem(tile).is_some() || tile.starves_l1(&staged.gemv_shape());
        staging_loses && streamed.gemv_problem(tile).is_none()
    }

    /// GEMV `tile`'s prefetched loads: the tiling's where the kernel is
    /// launched early (`grid_dependency`: sm_90 and up), a pair's (and a
    /// single matmul's with a prologue, which stages its rows as a pair
    /// does) only where every call it takes follows an all-reduce that
    /// launches it as it starts (`launched_early`); none elsewhere, where
    /// they would only delay the loads themselves.
    pub fn gemv_prefetch(&self, tile: GemvTile) -> u64 {
        // n x k weights: the CUDA-core GEMV's threads take a step's lines
        // only where its k-groups make whole lines of each row.
        if self.weight_transposed
            && tile.engine == Engine::CudaCores
            && !tile.k_groups.is_multiple_of(LINE_ELEMENTS / PIECE)
        {
            return 0;
        }
        let plain = self.weights == 1 && self.prologue.is_none();
        let early = plain || tile.takes() <= self.launched_early;
        if self.grid_dependency && early {
            tile.prefetch
        } else {
            0
        }
    }

    /// Blocks of the GEMV along x (column tiles) and y (slices).
    pub fn gemv_grid(&self, tile: GemvTile) -> (u64, u64) {
        (self.n.div_ceil(tile.columns), self.slices)
    }

    /// Whether the GEMV that applies its norm in its loop (`normed`) takes
    /// the calls of 1 to 8 rows too: where its grid holds a block on at
    /// least `FULL_GRID_SHARE` of the SMs. Each SM then streams a small
    /// share of the weight, and the loop's work for rows a call does not
    /// have hides behind the loads. On one H200 the pair's kernel at 2-8
    /// rows took 28.8-29.2 instead of 30.5-31.6 µs with 112 blocks
    /// (Llama-3-8B at TP 2) and 26.2-26.4 against 26.3-27.1 with 128
    /// (Llama-3.2-3B); with 74 blocks (Qwen2.5-7B at TP 2, 128-column bands)
    /// it tied, and with 27 (a TP-8 shard of a 13824-wide MLP), each SM
    /// streaming four times the share, it lost 0.6-1.3 µs. At one row it
    /// read the Llama-3-8B pair in 28.9-29.0 µs against the one-row
    /// GEMV's 29.3.
    fn twin_takes_few_rows(&self, normed: GemvTile) -> bool {
        let (share, whole) = FULL_GRID_SHARE;
        self.gemv_blocks(normed) * whole >= self.wave_sms * share
    }

    /// Blocks of the GEMV in all (`gemv_grid`'s x times y).
    pub fn gemv_blocks(&self, tile: GemvTile) -> u64 {
        let (columns, slices) = self.gemv_grid(tile);
        columns * slices
    }

    /// Where this matmul takes the short-grid wgmma GEMV `short`
    /// (`GemvTile::SHORT_WGMMA`) among its GEMVs `gemvs` (ordered by the
    /// rows they take): before its first tensor-core GEMV
    /// (`wgmma_ring_at`), where that would run fewer than
    /// `SHORT_GRID_BLOCKS` blocks. `Ok` with the position and the register
    /// GEMV's blocks, `Err` with why not (`None`: the rule does not concern
    /// this matmul, nothing to say).
    pub fn short_grid_wgmma(
        &self,
        gemvs: &[GemvTile],
        short: GemvTile,
    ) -> Result<(usize, u64), Option<String>> {
        let at = self.wgmma_ring_at(gemvs, short).ok_or(None)?;
        // The grid of 64-column bands (the wgmma GEMV's own): a register
        // GEMV widened to one wave (`gemv_widened`) keeps it.
        let blocks = self.gemv_blocks(short);
        if blocks >= SHORT_GRID_BLOCKS {
            return Err(None);
        }
        match self.gemv_problem(short) {
            None => Ok((at, blocks)),
            Some(why) => Err(Some(format!(
                "keeps the register-streaming GEMV for up to {} rows although its grid is short ({blocks} blocks): the wgmma GEMV cannot take it: {why}",
                short.takes()
            ))),
        }
    }

    /// Where this matmul, launched early behind a GEMV that writes none of
    /// its weight (`behind_gemv` in the pass), takes the wgmma GEMV `ring`
    /// (`GemvTile::AFTER_GEMV_WGMMA`, whose ring fills with weight while
    /// that GEMV drains) among its GEMVs `gemvs`: where `wgmma_ring_at`
    /// puts it, on a full grid (a short one is the short-grid rule's: the
    /// early fill measured 0.1-0.6 µs slower on TP 8's down projection,
    /// 64 blocks) that wastes no wave (`waves::wastes_a_wave`: the ring's
    /// 64-column bands cannot widen; on one H200 a 5120/6912 block's 160
    /// blocks ran 0.8 µs slower at 2 and 16 rows than the widened register
    /// GEMV, while Llama-3-70B's 256, two full waves, ran 1.1-2.9 µs
    /// faster). `Ok` with the position, `Err` with why not (`None`: the
    /// rule does not concern this matmul).
    pub fn after_gemv_wgmma(
        &self,
        gemvs: &[GemvTile],
        ring: GemvTile,
    ) -> Result<usize, Option<String>> {
        let at = self.wgmma_ring_at(gemvs, ring).ok_or(None)?;
        let blocks = self.gemv_blocks(ring);
        if blocks < SHORT_GRID_BLOCKS {
            return Err(None);
        }
        if crate::matmul::waves::wastes_a_wave(blocks, self.wave_sms) {
            return Err(Some(format!(
                "keeps the register-streaming GEMV for up to {} rows behind the GEMV before it: the wgmma GEMV's {blocks} blocks would leave part of a wave on {} SMs idle",
                ring.takes(),
                self.wave_sms
            )));
        }
        match self.gemv_problem(ring) {
            None => Ok(at),
            Some(why) => Err(Some(format!(
                "keeps the register-streaming GEMV for up to {} rows behind the GEMV before it: the wgmma GEMV cannot take it: {why}",
                ring.takes()
            ))),
        }
    }

    /// Where a 16-row wgmma ring `ring` goes among this matmul's GEMVs
    /// `gemvs`: before its first tensor-core GEMV (which still takes the
    /// calls where the runtime has no descriptor), for a single matmul
    /// without a prologue whose weights are stored k x n, where no wgmma
    /// GEMV takes its calls of up to 16 rows already (`None`: not here).
    fn wgmma_ring_at(&self, gemvs: &[GemvTile], ring: GemvTile) -> Option<usize> {
        let few_wgmma = gemvs
            .iter()
            .any(|g| g.engine == Engine::Wgmma && g.takes() <= ring.takes());
        if self.weights != 1 || self.prologue.is_some() || self.weight_transposed || few_wgmma {
            return None;
        }
        gemvs.iter().position(|g| g.engine == Engine::TensorCores)
    }
}
