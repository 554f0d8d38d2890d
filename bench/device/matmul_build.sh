#!/usr/bin/env bash
# Builds what matmul_h200.sh runs into DIR (issue: decode at the weight-read
# floor): the runtime (shared, for the Python layers), symm-launch and
# symm-gpu-tests, and
#   - the Llama MLP block at world size 1 as Python layers at several widths
#     (D hidden, F the MLP width the rank holds): 4096/7168 (a TP-2 rank
#     of Llama-3-8B), 3072/8192 (Llama-3.2-3B), 5120/1728 (a TP-8
#     shard of a 13824-wide MLP: not a multiple of 128, split-K slices of
#     864 rows, a K tail in the last stage), 2064/1000 (K = 2064 leaves a
#     16-row tail of the 64-row stage; N = 1000 a partial column tile; the
#     down projection's K = 1000 is no multiple of 16, so it keeps cuBLAS);
#   - the C++ Llama apps (llama_mlp, llama_decoder) at world size 1 (full
#     widths) and 2 (the shipped examples, run with ranks sharing a GPU).
#
#   bench/device/matmul_build.sh target/mN
# WIDTHS ("DxF ...") replaces the four widths. TP_WORLDS ("2 4 ...") also
# builds each width tensor-parallel on that many ranks (F the width a rank
# holds) as layers mlp_tp<W>_<D>x<F>, for matmul_check.py under
# symm-launch -n W. DECODER_WIDTHS ("DxAxF ...", A the attention features
# a rank holds) builds the decoder half-layer the same way (dec_<D>x<A>x<F>
# at world size 1, dec_tp<W>_... on TP_WORLDS), for matmul_check.py --decoder A.
# GELU_WIDTHS ("DxF ...") builds the non-gated block bench/model/gelu_mlp.mlir
# (gelu_<D>x<F>, gelu_tp<W>_... on TP_WORLDS), for matmul_check.py --gelu.
# LINEAR_WIDTHS ("DxF ...") builds bench/model/linear_mlp.mlir, the block with
# nn.Linear-layout weights (linear_<D>x<F>, linear_tp<W>_... on TP_WORLDS),
# for matmul_check.py --linear. MERGED_WIDTHS ("DxF ...") does the same for
# bench/model/merged_mlp.mlir (merged_<D>x<F>, ...), for matmul_check.py --merged.
# LAYER_FLAGS adds symm-compile options to every layer and app.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: matmul_build.sh DIR}
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher -p symm-opt
mkdir -p "$out/src" "$out/layers"
cp $release/{symm-launch,symm-gpu-tests} "$out/"
soname=$(readelf -d $release/libsymm_runtime.so | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
cp $release/libsymm_runtime.so "$out/layers/$soname"
cp $release/libsymm_runtime.so "$out/layers/" # a copy: carries drop links
# The MLP block at hidden D, MLP width F (a rank's), world size W (1 unless given).
widths() { # D F mlir [W]
  sed -e "s/world_size(2)/world_size(${4:-1})/" -e "s/4096/$1/g" -e "s/7168/$2/g" examples/llama_mlp.mlir > "$3"
}
layer() { # name mlir [symm-compile flags...]
  local name=$1 mlir=$2
  shift 2
  # shellcheck disable=SC2086 # the flags are words
  $release/symm-compile "$mlir" -o "$out/src/$name.o" "$@" ${LAYER_FLAGS:-}
  c++ -shared -o "$out/layers/lib$name.so" "$out/src/$name.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
}
for w in ${WIDTHS:-4096x7168 3072x8192 5120x1728 2064x1000}; do
  widths "${w%x*}" "${w#*x}" "$out/src/mlp_$w.mlir"
  layer "mlp_$w" "$out/src/mlp_$w.mlir"
  for world in ${TP_WORLDS:-}; do
    widths "${w%x*}" "${w#*x}" "$out/src/mlp_tp${world}_$w.mlir" "$world"
    layer "mlp_tp${world}_$w" "$out/src/mlp_tp${world}_$w.mlir"
  done
done
# The decoder half-layer at hidden D, A attention features and MLP width F
# (a rank's), world size W.
decoder_widths() { # D A F W mlir
  sed -e "s/world_size(2)/world_size($4)/" -e "s/2048x4096xbf16/@A@x4096xbf16/g" \
    -e "s/?x2048xbf16/?x@A@xbf16/g" -e "s/4096/$1/g" -e "s/7168/$3/g" -e "s/@A@/$2/g" \
    examples/llama_decoder.mlir > "$5"
}
for w in ${DECODER_WIDTHS:-}; do
  IFS=x read -r d a f <<< "$w"
  for world in 1 ${TP_WORLDS:-}; do
    name=dec_tp${world}_$w
    [[ $world == 1 ]] && name=dec_$w
    decoder_widths "$d" "$a" "$f" "$world" "$out/src/$name.mlir"
    layer "$name" "$out/src/$name.mlir"
  done
done
# A block of bench/model (hidden 4096, 7168 a rank, world size 2 in the
# source) at each "DxF" of WIDTHS, world size 1 and each of TP_WORLDS, as
# layers PREFIX_<D>x<F> and PREFIX_tp<W>_<D>x<F>.
model_widths() { # PREFIX mlir "DxF ..."
  local prefix=$1 mlir=$2 w world name
  for w in $3; do
    for world in 1 ${TP_WORLDS:-}; do
      name=${prefix}_tp${world}_$w
      [[ $world == 1 ]] && name=${prefix}_$w
      sed -e "s/world_size(2)/world_size($world)/" -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" \
        "$mlir" > "$out/src/$name.mlir"
      layer "$name" "$out/src/$name.mlir"
    done
  done
}
model_widths gelu bench/model/gelu_mlp.mlir "${GELU_WIDTHS:-}"
model_widths linear bench/model/linear_mlp.mlir "${LINEAR_WIDTHS:-}"
# The merged gate_up block: its weight's 2F rows and the up half's offset
# F D go in before the widths.
for w in ${MERGED_WIDTHS:-}; do
  d=${w%x*} f=${w#*x}
  sed -e "s/29360128/$((f * d))/g" -e "s/14336/$((2 * f))/g" bench/model/merged_mlp.mlir > "$out/src/merged_src_$w.mlir"
  model_widths merged "$out/src/merged_src_$w.mlir" "$w"
done
# The C++ apps: world 1 at full widths, and the shipped world-2 examples.
for layer in llama_mlp llama_decoder; do
  sed -e 's/world_size(2)/world_size(1)/' -e 's/7168/14336/g' -e 's/2048x4096xbf16/4096x4096xbf16/g' \
    -e 's/?x2048xbf16/?x4096xbf16/g' examples/$layer.mlir > "$out/src/${layer}_w1.mlir"
  for world in w1 w2; do
    mlir=examples/$layer.mlir
    [[ $world == w1 ]] && mlir=$out/src/${layer}_w1.mlir
    mkdir -p "$out/src/$world"
    # shellcheck disable=SC2086 # the flags are words
    $release/symm-compile "$mlir" -o "$out/src/$world/$layer.o" ${LAYER_FLAGS:-}
    c++ -O2 -std=c++17 -I runtime/include -I "$out/src/$world" -I examples/cpp "examples/cpp/$layer.cpp" \
      "$out/src/$world/$layer.o" $release/libsymm_runtime.a -lpthread -ldl -lm -o "$out/${layer}_$world"
  done
done
strip "$out"/llama_* "$out"/symm-* "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1)): $(cd "$out" && find . -type f | sort | tr '\n' ' ')"
