#!/usr/bin/env python3
"""Every lit input that symm-compile accepts has a header that compiles as C
and as C++ (issue 35). Splits each .mlir under the given folders the way the
lit tests do (`// -----` for -split-input-file, `//--- NAME` for
split-file), runs symm-compile on each piece, and compiles each header it
writes with `cc` and `c++ -fsyntax-only`.

headers_compile.py SYMM_COMPILE RUNTIME_INCLUDE WORKDIR FOLDER...
"""
import concurrent.futures
import os
import re
import subprocess
import sys


def pieces(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    if re.search(r"^//--- ", text, re.M):
        parts = re.split(r"^//--- (\S+)\n", text, flags=re.M)
        return [p for p in parts[2::2] if "func.func" in p]
    return [p for p in text.split("\n// -----\n") if "func.func" in p]


def check(job):
    compile_tool, include, work, index, text = job
    source = os.path.join(work, f"piece{index}.mlir")
    with open(source, "w") as f:
        f.write(text)
    obj = os.path.join(work, f"piece{index}.o")
    header = os.path.join(work, f"piece{index}.h")
    done = subprocess.run([compile_tool, source, "-o", obj],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode != 0 or not os.path.exists(header):
        return None
    for compiler, language in (("cc", "c"), ("c++", "c++")):
        out = subprocess.run([compiler, "-fsyntax-only", "-x", language, "-I", include, header],
                             capture_output=True, text=True)
        if out.returncode != 0:
            return f"{source}: the header does not compile as {language}:\n{out.stderr}"
    return "ok"


def main():
    compile_tool, include, work, *folders = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    jobs = []
    for folder in folders:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if name.endswith(".mlir"):
                    for text in pieces(os.path.join(root, name)):
                        jobs.append((compile_tool, include, work, len(jobs), text))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(check, jobs))
    failures = [r for r in results if r not in (None, "ok")]
    compiled = sum(1 for r in results if r == "ok")
    for failure in failures:
        print(failure)
    print(f"headers_compile: {len(jobs)} pieces, {compiled} compiled by symm-compile, "
          f"{compiled - len(failures)} headers compile as C and C++, {len(failures)} do not")
    sys.exit(1 if failures or compiled == 0 else 0)


main()
