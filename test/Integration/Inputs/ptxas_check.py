"""Assembles PTX files for sm_90 with ptxas -v, in parallel, and checks
that each one assembles and fits the grid the runtime launches it on: at
most 65536 / (its block's threads, its .reqntid or else 512, x blocks per SM)
registers a thread, where a two-shot (at most 132 blocks) or a barrier
(one block) needs one block per SM of an H100/H200 and every other kernel
(up to 264 blocks) two (symm_protocol::blocks_per_sm). Prints one line per kernel that spills,
then a summary; exit status 1 on any failure.

usage: ptxas_check.py PTXAS FILE.ptx...
"""
import concurrent.futures
import re
import subprocess
import sys

REGISTERS_PER_SM, MOST_PER_THREAD = 65536, 255


def check(ptxas, path):
    name = path.rsplit("/", 1)[-1]
    per_sm = 1 if "two_shot" in name or "barrier" in name else 2
    with open(path) as ptx:
        block = re.search(r"\.reqntid\s+(\d+)", ptx.read())
    # Without one, the runtime's block (symm_protocol::THREADS).
    threads = int(block.group(1)) if block else 512
    most = min(MOST_PER_THREAD, REGISTERS_PER_SM // (threads * per_sm))
    run = subprocess.run([ptxas, "-arch=sm_90", "-v", path, "-o", "/dev/null"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return path, f"does not assemble: {run.stderr.strip()}", 0
    used = re.search(r"Used (\d+) registers", run.stderr)
    spill = re.search(r"(\d+) bytes spill stores", run.stderr)
    registers, spilled = int(used.group(1)) if used else 0, int(spill.group(1)) if spill else 0
    if registers > most:
        return path, f"uses {registers} registers, more than the {most} its launch allows", 0
    return path, None, spilled


def main():
    ptxas, files = sys.argv[1], sys.argv[2:]
    failures, spilling = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for path, failure, spilled in pool.map(lambda f: check(ptxas, f), files):
            if failure:
                failures.append(f"FAIL {path}: {failure}")
            elif spilled:
                spilling.append(f"spills {spilled} bytes: {path}")
    finish(spilling, failures, len(files) - len(failures), len(files))


def finish(spills, failures, fitting, kernels):
    """Prints the spills (sorted), then the failures, then the summary, and
    exits 1 on a failure or when there was no kernel (shared with
    ptxas_generated.py)."""
    for line in sorted(spills) + failures:
        print(line)
    print(f"{fitting} of {kernels} kernels assembled within their launch's registers; "
          f"{len(spills)} spill")
    sys.exit(1 if failures or not kernels else 0)


if __name__ == "__main__":
    main()
