//! The pass's options as tilings: the GEMVs' (`gemv-*`, `mma-gemv-*`,
//! `wgmma-gemv-*`) and the tensor-core kernel's (`bn`, `bk`, `stages`,
//! `warps`).

use super::gemv::GemvTile;
use super::kernel::Tile;
use crate::{PassError, PassOptions};

/// Sets each field whose option is positive (0 keeps the default; a
/// negative value is an error).
fn override_fields<const N: usize>(
    options: &PassOptions,
    fields: [(&str, &mut u64); N],
) -> Result<(), PassError> {
    for (name, field) in fields {
        match options.int(name).unwrap_or(0) {
            0 => {}
            v if v > 0 => *field = v as u64,
            v => {
                return Err(PassError::BadOption(format!(
                    "{name} = {v} must be positive"
                )));
            }
        }
    }
    Ok(())
}

/// The GEMV tilings of the pair kernels and of the single-matmul kernels,
/// each ordered by rows (empty: the GEMVs are off): the CUDA-core GEMVs
/// (`gemv-*` options), then the tensor-core one (`mma-gemv-*`); then those
/// of pairs and single matmuls whose weights are stored n x k: the
/// CUDA-core GEMVs for one row (`gemv-*` options too) and for up to 4, the
/// one kernel kind that reads them.
pub(super) fn gemv_tiles_from(options: &PassOptions) -> Result<[Vec<GemvTile>; 4], PassError> {
    let max_rows = options.int("gemv-max-rows").unwrap_or(1);
    if !(1..=16).contains(&max_rows) {
        return Err(PassError::BadOption(format!(
            "gemv-max-rows = {max_rows}: a GEMV takes 1 to 16 rows"
        )));
    }
    let mma_rows = options
        .int("mma-gemv-rows")
        .unwrap_or(symm_protocol::GEMV_MAX_ROWS as i64);
    if mma_rows != 8 && mma_rows != 16 {
        return Err(PassError::BadOption(format!(
            "mma-gemv-rows = {mma_rows}: the tensor-core GEMV takes 8 or 16 rows"
        )));
    }
    let prefetch = options.flag("prefetch");
    let with_options = |default: GemvTile, prefix: &str| -> Result<GemvTile, PassError> {
        let mut tile = default;
        if !prefetch {
            tile.prefetch = 0;
        }
        let [columns, k_groups, unroll] =
            ["columns", "k-groups", "unroll"].map(|field| format!("{prefix}-{field}"));
        override_fields(
            options,
            [
                (columns.as_str(), &mut tile.columns),
                (k_groups.as_str(), &mut tile.k_groups),
                (unroll.as_str(), &mut tile.unroll),
            ],
        )?;
        Ok(tile)
    };
    let wgmma = wgmma_tiles_from(options)?;
    let kinds = |one: GemvTile,
                 few: GemvTile,
                 tma: Option<GemvTile>,
                 mma: GemvTile,
                 wgmma: &[GemvTile],
                 stages_every_call: bool|
     -> Result<Vec<GemvTile>, PassError> {
        let mut tiles = Vec::new();
        if options.flag("gemv") {
            tiles.push(with_options(one, "gemv")?);
            if max_rows > 1 {
                tiles.push(with_options(
                    GemvTile {
                        rows: max_rows as u64,
                        ..few
                    },
                    "gemv",
                )?);
            }
        }
        if let Some(tma) = tma.filter(|_| options.flag("tma-gemv")) {
            let mut tile = GemvTile {
                rows: mma_rows as u64,
                ..tma
            };
            if !prefetch {
                tile.prefetch = 0;
            }
            override_fields(
                options,
                [
                    ("tma-gemv-k-groups", &mut tile.k_groups),
                    ("tma-gemv-stages", &mut tile.unroll),
                    ("tma-gemv-stage-rows", &mut tile.stage_rows),
                ],
            )?;
            tiles.push(tile);
        }
        // A wgmma kernel for calls of up to 16 rows goes before the
        // tensor-core GEMV (which still takes them where the runtime has no
        // descriptor), one for more rows after it.
        let (small, large): (Vec<GemvTile>, Vec<GemvTile>) = wgmma
            .iter()
            .partition(|t| t.takes() <= symm_protocol::GEMV_MAX_ROWS);
        tiles.extend(small);
        if options.flag("mma-gemv") {
            let mut tile = with_options(mma, "mma-gemv")?;
            override_fields(options, [("mma-gemv-ahead", &mut tile.ahead)])?;
            // A single matmul's calls of up to 8 rows read `a` from global
            // memory, more stage it (`mma-gemv-stage-a`), both in the
            // 16-row kernel's layout (an 8-row one read the down projection
            // 0.8 µs slower at 8 rows on one H200). A pair (`stages_every_call`)
            // stages it for every call.
            if mma_rows == 16 && options.flag("mma-gemv-stage-a") {
                if !stages_every_call {
                    tiles.push(GemvTile {
                        rows: 16,
                        calls: 8,
                        ..tile
                    });
                }
                tiles.push(GemvTile {
                    rows: 16,
                    stage_a: true,
                    ..tile
                });
            } else {
                tiles.push(GemvTile {
                    rows: mma_rows as u64,
                    ..tile
                });
            }
        }
        tiles.extend(large);
        Ok(tiles)
    };
    // Weights stored n x k: the one-row CUDA-core GEMV (`gemv-*` options),
    // then, as for k x n weights, the CUDA-core one for up to
    // `gemv-max-rows` rows where that is above 1, and the tensor-core one
    // (`mma-gemv-*`) for up to `mma-gemv-rows`; without the tensor-core
    // GEMV, the CUDA-core one for up to 4 rows (or `gemv-max-rows`).
    let linear =
        |one: GemvTile, mma: GemvTile, few_mma: bool| -> Result<Vec<GemvTile>, PassError> {
            let mut tiles = Vec::new();
            let tensor_cores = options.flag("mma-gemv");
            if options.flag("gemv") {
                tiles.push(with_options(one, "gemv")?);
                if max_rows > 1 || !tensor_cores {
                    let rows = if tensor_cores {
                        max_rows as u64
                    } else {
                        (max_rows as u64).max(GemvTile::LINEAR_FEW.rows)
                    };
                    tiles.push(GemvTile {
                        rows,
                        ..GemvTile::LINEAR_FEW
                    });
                }
            }
            if tensor_cores {
                // With `few_mma`, an 8-row kernel for calls of up to 8 rows
                // (half the `mma`s of the 16-row one) before the 16-row one: on
                // one H200 the down projection's at 2 and 8 rows read 1.5 µs
                // faster, the pair's 1-4 µs slower
                // (bench/results/2026-11-27-linear-mma-h200.md).
                let tile = with_options(mma, "mma-gemv")?;
                if few_mma && mma_rows == 16 {
                    tiles.push(GemvTile { rows: 8, ..tile });
                }
                tiles.push(GemvTile {
                    rows: mma_rows as u64,
                    ..tile
                });
            }
            Ok(tiles)
        };
    Ok([
        // The pairs keep `mma16`: with their RMSNorm prologue staged in
        // front of the ring, the TMA pair measured 5-7 µs slower on one H200
        // (bench/results/2026-11-26-tma-gemv-h200.md). A pair without a
        // prologue (the decoder's, behind its all-reduce's norm) stages its
        // rows for calls of 2 to 8 rows too: on one H200 the Llama-3-8B
        // decoder's pair took 29.2-29.5 instead of 29.5-30.1 µs there, and
        // the half-layer 0.4-1.3 µs less (two calls), where the down
        // projection read its rows 0.1-0.2 µs faster from global memory
        // (bench/results/2026-11-29-stage-few-h200.md). With a prologue the
        // rows go through it either way (`with_norm_in_loop` splits them).
        kinds(
            GemvTile::PAIR,
            GemvTile::PAIR_FEW,
            None,
            GemvTile::PAIR_MMA,
            &[],
            true,
        )?,
        kinds(
            GemvTile::SINGLE,
            GemvTile::SINGLE_FEW,
            Some(GemvTile::SINGLE_TMA),
            GemvTile::SINGLE_MMA,
            &wgmma,
            false,
        )?,
        linear(GemvTile::PAIR_LINEAR, GemvTile::PAIR_MMA_LINEAR, false)?,
        linear(GemvTile::SINGLE_LINEAR, GemvTile::SINGLE_MMA_LINEAR, true)?,
    ])
}

/// The single matmuls' wgmma GEMVs (`wgmma-gemv*` options), ordered by
/// rows: a 16-row kernel where calls of up to 16 rows take it
/// (`wgmma-gemv-few`), a 64-row one for calls of up to 64, a 128-row one
/// for more, up to `wgmma-gemv-max-rows` (the accumulators of a call's
/// rows cost registers and the multiplies time, so each call takes the
/// smallest kernel that holds it).
fn wgmma_tiles_from(options: &PassOptions) -> Result<Vec<GemvTile>, PassError> {
    if !options.flag("wgmma-gemv") {
        return Ok(Vec::new());
    }
    let few = options.flag("wgmma-gemv-few");
    let max_rows = options.int("wgmma-gemv-max-rows").unwrap_or(128);
    let takes = (17..=128).contains(&max_rows) || (few && (2..=16).contains(&max_rows));
    if !takes {
        return Err(PassError::BadOption(format!(
            "wgmma-gemv-max-rows = {max_rows}: the wgmma GEMV takes calls of up to 17 to 128 rows (2 to 16 with wgmma-gemv-few)"
        )));
    }
    let mut base = GemvTile::SINGLE_WGMMA;
    override_fields(
        options,
        [
            ("wgmma-gemv-prefetch", &mut base.prefetch),
            ("wgmma-gemv-stages", &mut base.unroll),
            ("wgmma-gemv-stage-rows", &mut base.stage_rows),
        ],
    )?;
    let base = with_wgmma_policy(options, base);
    let max_rows = max_rows as u64;
    let sizes: &[u64] = if few { &[16, 64, 128] } else { &[64, 128] };
    let mut tiles = Vec::new();
    let mut below = 0;
    for &rows in sizes {
        if below < max_rows {
            tiles.push(GemvTile {
                rows,
                calls: max_rows.min(rows),
                ..base
            });
        }
        below = rows;
    }
    Ok(tiles)
}

/// The wgmma GEMV of single matmuls with a short grid
/// (`wgmma-gemv-short`, `SkinnyMatmul::short_grid_wgmma`), or none.
pub(super) fn short_wgmma_from(options: &PassOptions) -> Option<GemvTile> {
    options
        .flag("wgmma-gemv-short")
        .then(|| with_wgmma_policy(options, GemvTile::SHORT_WGMMA))
}

/// The wgmma GEMV of single matmuls launched early behind a GEMV
/// (`wgmma-gemv-after-gemv`, `SkinnyMatmul::after_gemv_wgmma`), or none.
pub(super) fn after_gemv_wgmma_from(options: &PassOptions) -> Option<GemvTile> {
    options
        .flag("wgmma-gemv-after-gemv")
        .then(|| with_wgmma_policy(options, GemvTile::AFTER_GEMV_WGMMA))
}

/// `tile` (a wgmma GEMV) under the options every wgmma GEMV follows: its
/// weight copies' L2 policy (`wgmma-gemv-evict-first`), its cluster
/// (`wgmma-gemv-cluster` where given, else the tile's own), and no
/// prefetch without `prefetch`.
fn with_wgmma_policy(options: &PassOptions, tile: GemvTile) -> GemvTile {
    GemvTile {
        // Checked by `wgmma_cluster_from` before any GEMV is built.
        cluster: wgmma_cluster_from(options)
            .ok()
            .flatten()
            .unwrap_or(tile.cluster),
        evict_first: options.flag("wgmma-gemv-evict-first"),
        prefetch: if options.flag("prefetch") {
            tile.prefetch
        } else {
            0
        },
        ..tile
    }
}

/// The blocks of a cluster that share `a` in every wgmma GEMV
/// (`wgmma-gemv-cluster`, `GemvTile::cluster`): 1 (none), 2 or 4; `None`
/// (0, the default) leaves each ring its own.
pub(super) fn wgmma_cluster_from(options: &PassOptions) -> Result<Option<u64>, PassError> {
    let cluster = options.int("wgmma-gemv-cluster").unwrap_or(0);
    match u64::try_from(cluster) {
        Ok(0) => Ok(None),
        Ok(cluster) if GemvTile::CLUSTERS.contains(&cluster) => Ok(Some(cluster)),
        _ => Err(PassError::BadOption(format!(
            "wgmma-gemv-cluster = {cluster}: blocks of a cluster that share `a`, 1, 2 or 4 (0: each ring's own)"
        ))),
    }
}

/// The SMs the GEMVs' grids are balanced over (`wave-sms`).
pub(super) fn wave_sms_from(options: &PassOptions) -> Result<u64, PassError> {
    use super::waves::{DEFAULT_WAVE_SMS, MAX_WAVE_SMS};
    let sms = options.int("wave-sms").unwrap_or(DEFAULT_WAVE_SMS as i64);
    if !(1..=MAX_WAVE_SMS as i64).contains(&sms) {
        return Err(PassError::BadOption(format!(
            "wave-sms = {sms}: the SMs of the GPU the kernels run on, 1 to {MAX_WAVE_SMS}"
        )));
    }
    Ok(sms as u64)
}

/// The tilings of the pair kernels and the single-matmul kernels, and the
/// row bound: each kind's default, or what the options set for both.
pub(super) fn tile_from(options: &PassOptions) -> Result<([Tile; 2], u64), PassError> {
    let get = |name: &str, default: i64| options.int(name).unwrap_or(default);
    let max_rows = get("max-rows", 16);
    if !(0..=64).contains(&max_rows) || max_rows % 16 != 0 {
        return Err(PassError::BadOption(format!(
            "max-rows = {max_rows}: the generated kernels take a multiple of 16 rows, at most 64"
        )));
    }
    let m_tiles = (max_rows as u64 / 16).max(1);
    let with_options = |default: Tile| -> Result<Tile, PassError> {
        let mut tile = Tile { m_tiles, ..default };
        override_fields(
            options,
            [
                ("bn", &mut tile.bn),
                ("bk", &mut tile.bk),
                ("stages", &mut tile.stages),
                ("warps", &mut tile.warps),
            ],
        )?;
        Ok(tile)
    };
    Ok((
        [with_options(Tile::PAIR)?, with_options(Tile::SINGLE)?],
        max_rows as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::gemv::Engine;

    /// With the default options a single matmul's tensor-core GEMVs read
    /// `a` from global memory for calls of up to 8 rows and stage it for
    /// more; a pair's one GEMV stages it for every call of 2 to 16 rows.
    #[test]
    fn a_pair_stages_its_rows_for_every_call() {
        let options = PassOptions::defaults(&crate::matmul::DESCRIPTOR);
        let [pairs, singles, ..] = gemv_tiles_from(&options).expect("the defaults are valid");
        let tensor_cores = |tiles: &[GemvTile]| -> Vec<(u64, bool)> {
            tiles
                .iter()
                .filter(|t| t.engine == Engine::TensorCores)
                .map(|t| (t.takes(), t.stage_a))
                .collect()
        };
        assert_eq!(tensor_cores(&pairs), [(16, true)]);
        assert_eq!(tensor_cores(&singles), [(8, false), (16, true)]);
    }

    /// `wgmma-gemv-cluster` 0 (the default) leaves each ring its own
    /// cluster (the after-GEMV ring's 2, the short grid's none); 1, 2 or
    /// 4 gives every wgmma GEMV that one; anything else is refused.
    #[test]
    fn the_cluster_option_overrides_each_rings_own() {
        let defaults = PassOptions::defaults(&crate::matmul::DESCRIPTOR);
        let clusters = |options: &PassOptions| {
            let on = options
                .clone()
                .with("wgmma-gemv-short", "true")
                .with("wgmma-gemv-after-gemv", "true");
            let short = short_wgmma_from(&on).expect("asked for");
            let after = after_gemv_wgmma_from(&on).expect("asked for");
            (short.cluster, after.cluster)
        };
        assert_eq!(wgmma_cluster_from(&defaults), Ok(None));
        assert_eq!(clusters(&defaults), (1, 2));
        for n in [1, 2, 4] {
            let given = defaults.clone().with("wgmma-gemv-cluster", &n.to_string());
            assert_eq!(wgmma_cluster_from(&given), Ok(Some(n)));
            assert_eq!(clusters(&given), (n, n));
        }
        for bad in ["3", "8", "-1"] {
            let given = defaults.clone().with("wgmma-gemv-cluster", bad);
            let err = wgmma_cluster_from(&given).expect_err(bad).to_string();
            assert!(err.contains("1, 2 or 4 (0: each ring's own)"), "{err}");
        }
    }
}
