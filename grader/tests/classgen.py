"""A generated class for the class-report and similarity tests (and the README's screenshot):
labs 01 and 02 only, so that grading it in CPU mode stays quick.

make_class(folder, n) writes n submissions in a fixed mix, by index:
  full       the reference solutions
  own        lab 02 written in another way (OWN_02, not a copy of the reference)
  copy       OWN_02 with its names changed and its layout redone (a near-copy of an `own`)
  skeleton   lab 02 left as handed out
  broken     lab 02 with one of the grader's fixtures planted: a compile error, an exclusive
             scan, a write past n, a bug for n not a power of two, a Thrust call
  nothing    a folder without lab folders (no labs found)
Submission 0 is always `full`; submissions 1 and 2 are the one near-copy pair (own, copy); later
`own` and `copy` slots are `full`. Returns [(name, kind, what)].
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRADER = os.path.dirname(HERE)
ROOT = os.path.dirname(GRADER)
if GRADER not in sys.path:
    sys.path.insert(0, GRADER)

import fixturelib  # noqa: E402

LABS = ("01_serial", "02_naive")
BROKEN = ("compile_error", "exclusive_scan", "write_past_n", "non_power_of_two", "thrust_call")
MIX = ("full", "own", "copy", "broken", "full", "skeleton", "broken", "full", "broken", "nothing")

# Lab 02 as a student might write it without looking at the reference: a pointer walk, a
# grid-stride loop, and its own launcher arithmetic. The walk is a counted for loop: written as a
# while loop it would be a safe point of CPU mode's block scheduler at every 16th pass (rewrite.py,
# fibers.cpp), and its O(n^2) sums would take about 13 s of CPU time a case at n = 65535 instead
# of 0.2 s (verdicts the same): a minute of the suite spent on what this class does not test.
OWN_02 = r'''/* 02_naive: my version. */
#include "course/02_naive.h"
#include "cuda_check.h"

#define BLOCK_SIZE 128

__global__ void naive_scan_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int *end = in + idx + 1;
        unsigned total = 0u;
        for (const int *p = in; p != end; ++p) {
            total = total + (unsigned)(*p);
        }
        out[idx] = (int)total;
    }
}

lab_result naive_scan(const int *d_in, int *d_out, size_t n, void *d_temp)
{
    (void)d_temp;
    if (n == 0) {
        return LAB_OK;
    }
    size_t blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (blocks > 4096) {
        blocks = 4096;
    }
    naive_scan_kernel<<<(unsigned)blocks, BLOCK_SIZE>>>(d_in, d_out, n);
    LAUNCH_CHECK();
    return LAB_OK;
}
'''

# The same code with other names, other comments and another layout: what sim_c is for.
COPY_02 = r'''/* naive scan, lab 2 */
#include "course/02_naive.h"
#include "cuda_check.h"
#define BLOCK_SIZE 128
// each thread owns some outputs
__global__ void naive_scan_kernel(const int *__restrict__ in, int *__restrict__ out, size_t n) {
  size_t jump = (size_t)gridDim.x * blockDim.x;
  for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += jump) {
    const int *stop = in + k + 1;
    unsigned acc = 0u;
    for (const int *q = in; q != stop; ++q) { acc = acc + (unsigned)(*q); }
    out[k] = (int)acc;
  }
}
lab_result naive_scan(const int *d_in, int *d_out, size_t n, void *d_temp) {
  (void)d_temp;
  if (n == 0) { return LAB_OK; }
  size_t nb = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
  if (nb > 4096) { nb = 4096; }
  naive_scan_kernel<<<(unsigned)nb, BLOCK_SIZE>>>(d_in, d_out, n);
  LAUNCH_CHECK();
  return LAB_OK;
}
'''


def _copy(tree, lab, dest):
    os.makedirs(os.path.join(dest, lab), exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, tree, lab, "scan.cu"), os.path.join(dest, lab, "scan.cu"))


def _write(dest, lab, text):
    os.makedirs(os.path.join(dest, lab), exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(os.path.join(dest, lab, "scan.cu"), mode) as f:
        f.write(text)


def make_class(folder, n):
    """Writes n submissions into folder (see the module comment); [(name, kind, what)]."""
    made, broken = [], 0
    pair_done = False
    for k in range(n):
        kind = MIX[k % len(MIX)]
        if kind in ("own", "copy") and pair_done:
            kind = "full"  # one pair of near-copies; everyone else's own work is the reference's
        name = f"s{k:02d}-{kind}"
        dest = os.path.join(folder, name)
        what = ""
        if kind == "nothing":
            os.makedirs(dest)
            with open(os.path.join(dest, "README.txt"), "w") as f:
                f.write("I could not finish.\n")
        else:
            _copy("solutions", LABS[0], dest)
            if kind == "full":
                _copy("solutions", LABS[1], dest)
            elif kind == "own":
                _write(dest, LABS[1], OWN_02)
            elif kind == "copy":
                _write(dest, LABS[1], COPY_02)
                pair_done = True
                what = f"a near-copy of s{k - 1:02d}"
            elif kind == "skeleton":
                _copy("labs", LABS[1], dest)
            elif kind == "broken":
                fixture = BROKEN[broken % len(BROKEN)]
                broken += 1
                _write(dest, LABS[1], fixturelib.source(fixture, LABS[1]))
                what = fixture
        made.append((name, kind, what))
    return made


if __name__ == "__main__":  # python3 classgen.py DIR N: write a class by hand
    for row in make_class(sys.argv[1], int(sys.argv[2])):
        print(*row)
