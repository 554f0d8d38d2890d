//! The GEMVs' tilings and choices at Llama's and other shapes.

use super::tile::{Engine, GemvShape, GemvTile};
use crate::ir::scalar::Scalar;
use crate::matmul::kernel::{Epilogue, Output, Prologue, RowScaleFunctions, SkinnyMatmul, Tile};

/// A single matmul's slice of K rows and N columns (a's rows `lda`
/// apart), or with `norm` a pair whose prologue splits (RMSNorm).
pub(in crate::matmul) fn matmul(k: u64, n: u64, lda: u64, norm: bool) -> SkinnyMatmul {
    let prologue = norm.then(|| Prologue {
        step: "step".into(),
        apply: "apply".into(),
        args: Vec::new(),
        columns: vec![Scalar::Bf16],
        row_scale: Some(RowScaleFunctions {
            row: "row".into(),
            columns: "columns".into(),
        }),
    });
    SkinnyMatmul {
        name: "k".into(),
        k,
        n,
        lda,
        a_slice: 0,
        w_slice: 0,
        slices: 1,
        weights: if norm { 2 } else { 1 },
        output: Output::Bf16,
        epilogue: norm.then(|| Epilogue {
            function: "epilogue".into(),
            args: Vec::new(),
        }),
        prologue,
        tile: if norm { Tile::PAIR } else { Tile::SINGLE },
        grid_dependency: false,
        stream_norm: false,
        wave_sms: crate::matmul::waves::DEFAULT_WAVE_SMS,
        lamport_send: None,
        launched_early: 0,
        weight_transposed: false,
    }
}

/// The tensor-core tilings of the default options: reading `a` from
/// global memory for up to 8 rows, staging it for up to 16.
pub(in crate::matmul) fn mma_tiles(kind: GemvTile) -> [GemvTile; 2] {
    [
        GemvTile { calls: 8, ..kind },
        GemvTile {
            stage_a: true,
            ..kind
        },
    ]
}

/// The runtime keeps its choice between the generated branch and
/// cuBLAS per site: the same matmul with the same kernels in the same
/// function is one site; other GEMV tilings, other kernel options or
/// another function are another.
#[test]
fn a_site_is_its_matmul_and_its_generated_kernels() {
    let down = matmul(3584, 4096, 7168, false);
    let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
    let site = |k: &SkinnyMatmul, g: &[GemvTile]| crate::matmul::site_id("f", k, g);
    assert_eq!(site(&down, &tiles), site(&down.clone(), &tiles.clone()));
    let other = [
        GemvTile {
            k_groups: 8,
            ..tiles[0]
        },
        tiles[1],
    ];
    assert_ne!(site(&down, &tiles), site(&down, &other));
    assert_ne!(site(&down, &tiles), site(&down, &[]));
    let early = SkinnyMatmul {
        grid_dependency: true,
        ..down.clone()
    };
    assert_ne!(site(&down, &tiles), site(&early, &tiles));
    assert_ne!(
        site(&down, &tiles),
        crate::matmul::site_id("g", &down, &tiles)
    );
    assert!(site(&down, &tiles) >= 0);
}

/// The short-grid wgmma GEMV goes before the tensor-core GEMVs of a
/// single matmul whose register GEMV runs under 128 blocks (TP 2's
/// o_proj: 64), not where two slices make 128 (the down projection),
/// nor for pairs, n x k weights or where a wgmma GEMV takes 16 rows
/// already; where it cannot read the matmul the caller gets why.
#[test]
fn short_grids_take_the_wgmma_ring() {
    let short = GemvTile::SHORT_WGMMA;
    assert_eq!((short.takes(), short.unroll), (16, 8));
    let o_proj = SkinnyMatmul {
        grid_dependency: true,
        ..matmul(2048, 4096, 2048, false)
    };
    let mut tiles = vec![GemvTile::SINGLE];
    tiles.extend(o_proj.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA)));
    assert_eq!(o_proj.short_grid_wgmma(&tiles, short), Ok((1, 64)));
    assert_eq!(o_proj.gemv_name(short), "k_wgmma16");
    let down = SkinnyMatmul {
        slices: 2,
        ..matmul(3584, 4096, 7168, false)
    };
    assert_eq!(down.short_grid_wgmma(&tiles, short), Err(None));
    let pair = matmul(4096, 7168, 4096, true);
    assert_eq!(pair.short_grid_wgmma(&tiles, short), Err(None));
    let transposed = SkinnyMatmul {
        weight_transposed: true,
        ..o_proj.clone()
    };
    assert_eq!(transposed.short_grid_wgmma(&tiles, short), Err(None));
    let mut with_few = tiles.clone();
    with_few.insert(1, short);
    assert_eq!(o_proj.short_grid_wgmma(&with_few, short), Err(None));
    // No tensor-core GEMV to stand before: nothing to say.
    assert_eq!(o_proj.short_grid_wgmma(&tiles[..1], short), Err(None));
    // Rows of K = 1004 are not in 16-byte vectors, which the TMA needs.
    let odd = SkinnyMatmul {
        k: 1004,
        lda: 1004,
        ..o_proj.clone()
    };
    let why = odd.short_grid_wgmma(&tiles, short).unwrap_err().unwrap();
    assert!(why.contains("grid is short (64 blocks)"), "{why}");
}

/// The after-GEMV wgmma GEMV fills its ring before its wait and goes
/// before the tensor-core GEMVs of a single matmul on a full grid (the
/// down projection's two slices: 128 blocks) that wastes no wave, not on a
/// short one (the short-grid rule's), nor for pairs, n x k weights or where a wgmma GEMV
/// takes 16 rows already; where it cannot read the matmul (split-K slices
/// of 864 rows of K: not whole stages of 128) the caller gets why.
#[test]
fn a_matmul_behind_a_gemv_takes_the_ring_filled_before_its_wait() {
    let ring = GemvTile::AFTER_GEMV_WGMMA;
    assert!(ring.fills_before_wait && !GemvTile::SHORT_WGMMA.fills_before_wait);
    assert_eq!((ring.takes(), ring.unroll), (16, 8));
    // Slices side by side in `a`'s rows, each a whole matrix of weight.
    let slices = |k: u64, n: u64| SkinnyMatmul {
        slices: 2,
        a_slice: k,
        w_slice: k * n,
        grid_dependency: true,
        ..matmul(k, n, 2 * k, false)
    };
    let down = slices(3584, 4096);
    let mut tiles = vec![GemvTile::SINGLE];
    tiles.extend(down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA)));
    assert_eq!(down.after_gemv_wgmma(&tiles, ring), Ok(1));
    assert_eq!(down.gemv_blocks(ring), 128);
    assert_eq!(down.gemv_name(ring), "k_wgmma16");
    // A short grid (TP 8's down projection: 2 slices of 32 bands) is the
    // short-grid rule's, as is TP 2's unsplit o_proj (64 bands).
    assert_eq!(slices(896, 2048).after_gemv_wgmma(&tiles, ring), Err(None));
    let o_proj = SkinnyMatmul {
        grid_dependency: true,
        ..matmul(2048, 4096, 2048, false)
    };
    assert_eq!(o_proj.after_gemv_wgmma(&tiles, ring), Err(None));
    assert!(
        o_proj
            .short_grid_wgmma(&tiles, GemvTile::SHORT_WGMMA)
            .is_ok()
    );
    // Two full waves (Llama-3-70B at TP 2: 128 bands of 2 slices) take it;
    // 160 blocks (0.61 of two waves) would waste one, and say so.
    assert_eq!(slices(7168, 8192).after_gemv_wgmma(&tiles, ring), Ok(1));
    let why = slices(3456, 5120)
        .after_gemv_wgmma(&tiles, ring)
        .unwrap_err()
        .unwrap();
    assert!(
        why.contains("160 blocks would leave part of a wave on 132 SMs idle"),
        "{why}"
    );
    let pair = matmul(4096, 7168, 4096, true);
    assert_eq!(pair.after_gemv_wgmma(&tiles, ring), Err(None));
    let transposed = SkinnyMatmul {
        weight_transposed: true,
        ..down.clone()
    };
    assert_eq!(transposed.after_gemv_wgmma(&tiles, ring), Err(None));
    let mut with_few = tiles.clone();
    with_few.insert(1, GemvTile::SHORT_WGMMA);
    assert_eq!(down.after_gemv_wgmma(&with_few, ring), Err(None));
    let uneven = slices(864, 4096);
    let why = uneven.after_gemv_wgmma(&tiles, ring).unwrap_err().unwrap();
    assert!(why.contains("behind the GEMV before it"), "{why}");
    assert!(why.contains("K = 864"), "{why}");
}

#[test]
fn a_single_matmul_stages_a_from_nine_rows_where_the_rows_fit() {
    let down = matmul(3584, 4096, 7168, false);
    let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
    assert_eq!(tiles.len(), 2);
    assert_eq!((tiles[0].takes(), tiles[0].stage_a), (8, false));
    assert_eq!((tiles[1].takes(), tiles[1].stage_a), (16, true));
    assert_eq!(down.gemv_name(tiles[0]), "k_mma16");
    assert_eq!(down.gemv_name(tiles[1]), "k_mma16_staged");
    assert!(tiles.iter().all(|t| down.gemv_problem(*t).is_none()));
    // 16 staged rows of K = 16384 do not fit, nor do rows that are not
    // in 16-byte vectors: one GEMV reads `a` from global memory for 2
    // to 16 rows, as before.
    for unstaged in [
        matmul(16384, 4096, 16384, false),
        matmul(3584, 4096, 3588, false),
    ] {
        let tiles = unstaged.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
        assert_eq!(tiles.len(), 1, "{tiles:?}");
        assert_eq!((tiles[0].takes(), tiles[0].stage_a), (16, false));
        assert!(unstaged.gemv_problem(tiles[0]).is_none());
    }
}

#[test]
fn a_pair_with_a_prologue_keeps_one_tensor_core_gemv() {
    let pair = matmul(4096, 7168, 4096, true);
    let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert_eq!(tiles.len(), 1);
    assert_eq!((tiles[0].takes(), tiles[0].stage_a), (16, false));
    assert_eq!(pair.gemv_name(tiles[0]), "k_mma16");
    assert!(!pair.norm_must_stream(tiles[0]));
    // At K = 8192 its 16 staged rows do not fit: it streams the norm.
    let wide = matmul(8192, 7168, 8192, true);
    let tiles = wide.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert_eq!(tiles.len(), 1);
    assert!(wide.gemv_problem(tiles[0]).is_some());
    assert!(wide.norm_must_stream(tiles[0]));
    let streamed = SkinnyMatmul {
        stream_norm: true,
        ..wide
    };
    assert!(streamed.gemv_shape().streamed);
    assert_eq!(streamed.gemv_problem(tiles[0]), None);
}

#[test]
fn the_pair_applies_its_norm_in_its_loop() {
    // Llama-3-8B's TP-2 pair (112 blocks, most of the 132 SMs): its twin
    // with the norm in the loop takes every call of 2 to 16 rows.
    let pair = matmul(4096, 7168, 4096, true);
    let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    let all = pair.with_norm_in_loop(tiles.clone());
    let named = |kernel: &SkinnyMatmul, tiles: &[GemvTile]| -> Vec<(u64, String)> {
        tiles
            .iter()
            .map(|t| (t.takes(), kernel.gemv_name(*t)))
            .collect()
    };
    assert_eq!(named(&pair, &all), [(16, "k_mma16_norm_in_loop".into())]);
    // The one-row CUDA-core GEMV before it runs no call: the twin takes
    // those too.
    let with_one_row: Vec<GemvTile> = std::iter::once(GemvTile::PAIR)
        .chain(tiles.iter().copied())
        .collect();
    assert_eq!(GemvTile::PAIR.engine, Engine::CudaCores);
    assert_eq!(pair.with_norm_in_loop(with_one_row), all);
    // A short grid (a TP-8 shard of a 13824-wide MLP at hidden 5120: 27
    // blocks): up to 8 rows the kernel with the norm's pass before its
    // loop, 9 to 16 the twin, which keeps each k-group's part of the 16
    // rows' statistics and the norm weight besides.
    let short = matmul(5120, 1728, 5120, true);
    let short_tiles = short.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert_eq!(short.gemv_blocks(short_tiles[0]), 27);
    let split = short.with_norm_in_loop(short_tiles.clone());
    assert_eq!(
        named(&short, &split),
        [(8, "k_mma16".into()), (16, "k_mma16_norm_in_loop".into())]
    );
    // There the one-row GEMV keeps its calls.
    let short_one_row: Vec<GemvTile> = std::iter::once(GemvTile::PAIR)
        .chain(short_tiles.iter().copied())
        .collect();
    assert_eq!(short.with_norm_in_loop(short_one_row)[0], GemvTile::PAIR);
    let shape = short.gemv_shape();
    let parts = split[1].k_groups * split[1].rows * 4;
    let norm_weight = 5120 * 2;
    assert_eq!(
        split[1].shared_bytes(&shape),
        (split[0].shared_bytes(&shape) + parts).next_multiple_of(16) + norm_weight
    );
    assert!(split.iter().all(|t| short.gemv_problem(*t).is_none()));
    assert!(all.iter().all(|t| pair.gemv_problem(*t).is_none()));
    // No split where the norm streams (K = 8192), without a norm (the down
    // projection), or with the in-loop prefetches (`ahead`), which spill.
    let wide = SkinnyMatmul {
        stream_norm: true,
        ..matmul(8192, 7168, 8192, true)
    };
    let wide_tiles = wide.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert_eq!(wide.with_norm_in_loop(wide_tiles.clone()), wide_tiles);
    let down = matmul(3584, 4096, 3584, false);
    let down_tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
    assert_eq!(down.with_norm_in_loop(down_tiles.clone()), down_tiles);
    let ahead: Vec<GemvTile> = tiles.iter().map(|t| GemvTile { ahead: 4, ..*t }).collect();
    assert_eq!(pair.with_norm_in_loop(ahead.clone()), ahead);
}

#[test]
fn staging_that_would_starve_l1_gives_way() {
    // K = 6656 (LLaMA-30B's hidden size): the pair's 16 staged rows fit
    // in shared memory (213.5 KB), but leave the loads 28 KB of L1, so
    // the pair streams its norm instead.
    let pair = matmul(6656, 7168, 6656, true);
    let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert_eq!(pair.gemv_problem(tiles[0]), None);
    assert!(tiles[0].starves_l1(&pair.gemv_shape()));
    assert!(pair.norm_must_stream(tiles[0]));
    // K = 6144 stays staged: 197.2 KB, the 196 KB step's.
    let staged = matmul(6144, 7168, 6144, true);
    let tiles = staged.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
    assert!(!tiles[0].starves_l1(&staged.gemv_shape()));
    assert!(!staged.norm_must_stream(tiles[0]));
    // A down projection slice of K = 6912 (Qwen2.5-14B's MLP, 13824,
    // in two slices) reads `a` from global memory rather than staging
    // 221.7 KB of it; one of K = 3584 stages it.
    for (k, stages) in [(6912, false), (3584, true)] {
        let down = matmul(k, 4096, k, false);
        let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
        let sixteen = tiles.iter().find(|t| t.takes() == 16).expect("16 rows");
        assert_eq!(sixteen.stage_a, stages, "K = {k}: {tiles:?}");
        assert!(!sixteen.starves_l1(&down.gemv_shape()));
    }
}

proptest::proptest! {
    /// At any K, the tensor-core GEMV a matmul runs keeps the L1 its
    /// loads need wherever it can: a staged pair or single matmul
    /// starves L1 only where its other way (the streamed norm, `a` read
    /// from global memory) cannot run.
    #[test]
    fn the_chosen_gemv_starves_l1_only_without_another_way(
        steps in 1u64..=1024,
        pair in proptest::bool::ANY,
    ) {
        let k = steps * 16;
        let kernel = matmul(k, 4096, k, pair);
        let kind = if pair { GemvTile::PAIR_MMA } else { GemvTile::SINGLE_MMA };
        for tile in kernel.gemv_tiles_for(&mma_tiles(kind)) {
            let streams = kernel.norm_must_stream(tile);
            let runs = SkinnyMatmul { stream_norm: streams, ..kernel.clone() };
            if runs.gemv_problem(tile).is_some() {
                continue;
            }
            if tile.starves_l1(&runs.gemv_shape()) {
                // Staged and starving: the streamed norm could not run.
                proptest::prop_assert!(pair && !streams, "K = {k}: {tile:?}");
                let streamed = SkinnyMatmul { stream_norm: true, ..kernel.clone() };
                proptest::prop_assert!(streamed.gemv_problem(tile).is_some(), "K = {k}");
            }
        }
    }
}

proptest::proptest! {
    /// At any K, the pair's tilings with the norm in the loop take the same
    /// calls as before (up to 8 rows, then up to 16), under names of their
    /// own, and each runs wherever the tiling it replaces ran, without
    /// starving L1 where that did not.
    #[test]
    fn the_norm_in_the_loop_takes_what_the_pass_took(steps in 1u64..=1024) {
        let k = steps * 16;
        let kernel = matmul(k, 4096, k, true);
        let tiles = kernel.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
        let streams = tiles.iter().any(|t| kernel.norm_must_stream(*t));
        let kernel = SkinnyMatmul { stream_norm: streams, ..kernel };
        let split = kernel.with_norm_in_loop(tiles.clone());
        let most = |t: &[GemvTile]| t.iter().map(|t| t.takes()).max();
        proptest::prop_assert_eq!(most(&split), most(&tiles));
        let names: std::collections::HashSet<String> =
            split.iter().map(|t| kernel.gemv_name(*t)).collect();
        proptest::prop_assert_eq!(names.len(), split.len(), "K = {}: {:?}", k, split);
        let shape = kernel.gemv_shape();
        let ran = tiles.iter().all(|t| kernel.gemv_problem(*t).is_none() && !t.starves_l1(&shape));
        if ran {
            for tile in &split {
                proptest::prop_assert!(kernel.gemv_problem(*tile).is_none(), "K = {}: {:?}", k, tile);
                proptest::prop_assert!(!tile.starves_l1(&shape), "K = {}: {:?}", k, tile);
            }
        }
        if streams {
            proptest::prop_assert_eq!(split, tiles);
        }
    }
}

fn shape(k: u64, weights: u64) -> GemvShape {
    GemvShape {
        k,
        weights,
        staged: weights == 2,
        streamed: false,
        column_bytes: if weights == 2 { 2 } else { 0 },
    }
}

#[test]
fn the_default_tilings_fit_llama_shapes() {
    assert_eq!(GemvTile::PAIR.problem(&shape(4096, 2)), None);
    assert_eq!(GemvTile::SINGLE.problem(&shape(3584, 1)), None);
    assert_eq!(GemvTile::PAIR.threads(2), 1024);
    assert_eq!(GemvTile::SINGLE.threads(1), 512);
    assert_eq!(GemvTile::PAIR_FEW.problem(&shape(4096, 2)), None);
    assert_eq!(GemvTile::SINGLE_FEW.problem(&shape(3584, 1)), None);
    // Four rows of a 16K-wide K do not fit.
    assert!(GemvTile::SINGLE_FEW.problem(&shape(14336, 1)).is_some());
}

#[test]
fn tilings_that_cannot_run_are_refused() {
    let odd = GemvTile {
        columns: 12,
        ..GemvTile::PAIR
    };
    assert!(
        odd.problem(&shape(4096, 2))
            .unwrap()
            .contains("multiple of 8")
    );
    assert!(odd.tiling_problem(1).is_some());
    let wide = GemvTile {
        k_groups: 256,
        ..GemvTile::PAIR
    };
    assert!(
        wide.problem(&shape(4096, 2))
            .unwrap()
            .contains("at most 1024")
    );
    assert!(
        GemvTile::SINGLE
            .problem(&shape(1 << 20, 1))
            .unwrap()
            .contains("shared memory")
    );
}

#[test]
fn weights_stored_n_by_k_take_the_register_streaming_gemvs() {
    let linear = |k: u64, n: u64| SkinnyMatmul {
        weight_transposed: true,
        grid_dependency: true,
        ..matmul(k, n, k, false)
    };
    let down = linear(7168, 4096);
    assert_eq!(down.problem(), None);
    assert_eq!(down.gemv_problem(GemvTile::SINGLE_LINEAR), None);
    // 128 blocks of 32 columns, 4 pieces of 64 k-groups each.
    assert_eq!(down.gemv_grid(GemvTile::SINGLE_LINEAR), (128, 1));
    assert_eq!(GemvTile::SINGLE_LINEAR.threads(1), 256);
    // The pair: one wave of 112 blocks of 512 threads at N = 7168.
    let pair = SkinnyMatmul {
        weights: 2,
        ..linear(4096, 7168)
    };
    assert_eq!(pair.gemv_grid(GemvTile::PAIR_LINEAR), (112, 1));
    assert_eq!(GemvTile::PAIR_LINEAR.threads(2), 512);
    // The lone matmul prefetches its first steps before the wait, the
    // pair (with its prologue, first in a call) nothing; the CUDA-core
    // GEMV only where its k-groups make whole lines of a row.
    assert_eq!(down.gemv_prefetch(GemvTile::SINGLE_LINEAR), 8);
    assert_eq!(down.gemv_prefetch(GemvTile::SINGLE_MMA_LINEAR), 4);
    assert_eq!(pair.gemv_prefetch(GemvTile::PAIR_MMA_LINEAR), 0);
    assert_eq!(pair.gemv_prefetch(GemvTile::PAIR_LINEAR), 0);
    // Launched early behind an all-reduce, the one-row pair prefetches
    // too; its 16-row tensor-core GEMV, which that launch never takes,
    // does not.
    let early_pair = SkinnyMatmul {
        launched_early: 1,
        ..pair.clone()
    };
    assert_eq!(early_pair.gemv_prefetch(GemvTile::PAIR_LINEAR), 4);
    assert_eq!(early_pair.gemv_prefetch(GemvTile::PAIR_MMA_LINEAR), 0);
    let ragged_groups = GemvTile {
        k_groups: 36,
        ..GemvTile::SINGLE_LINEAR
    };
    assert_eq!(down.gemv_prefetch(ragged_groups), 0);
    let not_early = SkinnyMatmul {
        grid_dependency: false,
        ..down.clone()
    };
    assert_eq!(not_early.gemv_prefetch(GemvTile::SINGLE_LINEAR), 0);
    // The register-streaming tensor-core GEMV reads them too (its own
    // loop: `gemv_mma_linear`), the TMA's and wgmma's do not.
    assert_eq!(down.gemv_problem(GemvTile::SINGLE_MMA_LINEAR), None);
    let tma = linear(2048, 4096)
        .gemv_problem(GemvTile::SINGLE_TMA)
        .unwrap();
    assert!(
        tma.contains("only the CUDA-core and the register-streaming"),
        "{tma}"
    );
    // Its norm is staged, never streamed: a pair with the RMSNorm
    // prologue whose rows would stream is refused, so `norm_must_stream`
    // never turns streaming on for it.
    let streamed = SkinnyMatmul {
        weight_transposed: true,
        stream_norm: true,
        ..matmul(16384, 7168, 16384, true)
    };
    assert!(streamed.gemv_shape().streamed);
    assert!(
        streamed
            .gemv_problem(GemvTile::PAIR_MMA_LINEAR)
            .unwrap()
            .contains("stages its rows")
    );
    let pair_norm = SkinnyMatmul {
        stream_norm: false,
        ..streamed
    };
    assert!(!pair_norm.norm_must_stream(GemvTile::PAIR_MMA_LINEAR));
    // A warp's lanes are k-groups of one piece.
    let ragged = GemvTile {
        k_groups: 48,
        ..GemvTile::SINGLE_LINEAR
    };
    assert!(down.gemv_problem(ragged).unwrap().contains("whole warps"));
    // K in 16-byte pieces of a row; N anything (a column is a row).
    assert_eq!(linear(1000, 2063).problem(), None);
    assert!(
        linear(1004, 4096)
            .problem()
            .unwrap()
            .contains("multiple of 8")
    );
    assert!(matmul(1000, 4096, 1000, false).problem().is_some());
}
