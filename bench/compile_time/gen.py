#!/usr/bin/env python3
"""Inputs for symm-compile's scaling benchmark (bench/compile_time/run.sh).

gen.py collectives N   one public function with N chained all-reduces
gen.py entries N       N public functions with one all-reduce each
"""
import sys


def collectives(n):
    out = ["symm_mem.group @tp world_size(2)", "",
           "func.func @chain(%x: memref<64xf32>, %out: memref<64xf32>) {",
           "  %v0 = symm_mem.all_reduce sum %x group @tp : memref<64xf32> -> memref<64xf32>"]
    for i in range(1, n):
        out.append(f"  %v{i} = symm_mem.all_reduce sum %v{i-1} group @tp : "
                   "memref<64xf32> -> memref<64xf32>")
    out.append(f"  memref.copy %v{n-1}, %out : memref<64xf32> to memref<64xf32>")
    out += ["  return", "}"]
    return "\n".join(out) + "\n"


def entries(n):
    out = ["symm_mem.group @tp world_size(2)", ""]
    for i in range(n):
        out += [f"func.func @layer{i}(%x: memref<64xf32>, %out: memref<64xf32>) {{",
                "  %v = symm_mem.all_reduce sum %x group @tp : memref<64xf32> -> memref<64xf32>",
                "  memref.copy %v, %out : memref<64xf32> to memref<64xf32>",
                "  return", "}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    kind, n = sys.argv[1], int(sys.argv[2])
    sys.stdout.write({"collectives": collectives, "entries": entries}[kind](n))
