/* harness.h — runs one lab case end to end: inputs, device buffers with canaries, the lab's code,
 * validation against the CPU reference, and timing against a copy of the same bytes.
 *
 * lab_main() is the main of every lab binary (common/main.c calls it). lab_run() is the same
 * work without argument parsing or printing, for the Criterion tests.
 */
#ifndef SCAN_HARNESS_H
#define SCAN_HARNESS_H

#include "inputs.h"
#include "options.h"
#include "report.h"
#include "validate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs variant vi of lab on the case o describes (o->n is used as given) and fills r: status,
 * first mismatch, and timings when o->reps > 0. Returns r->status. A failing CUDA call ends the
 * process through CUDA_CHECK with LAB_EXIT_CUDA_ERROR. */
lab_status lab_run(const lab_info *lab, int vi, const lab_options *o, lab_report *r);

/* 1 when a CUDA device is usable (always 1 in CPU mode); otherwise 0 and, if why is not NULL,
 * the reason. */
int lab_have_device(char *why, size_t whylen);

/* The whole program: parse, run, print one line or one JSON object, exit with the status's code.
 *
 * The report goes to stdout (a graded run's: back on the grader's socket, below). A graded
 * run is judged (harness/port.h): `judge --judge path/to/scan [--run-as UID:GID] [--wrap TOOL]
 * --grader`, where the judge is this same main built without lab code; it runs the lab's binary
 * as `scan --serve CHANNEL ARENA`, the process that makes the lab's calls for it. Its part of the
 * run is `--grader` and nothing else: the options come as one line on standard input (a
 * socket the grader holds), the report goes back on it, and the run is sandboxed (sandbox.h);
 * so every graded run has the same command line, and a result line printed by the lab's own
 * code is never read as the harness's. A graded run may carry several cases: after each report
 * the harness reads the next line, and the process ends (with the last case's exit code) at the
 * end of the input or after a case that is not ok; each case is run exactly as it would be
 * alone (its own buffers, inputs and checks), the sandbox entered once, before the lab's first
 * call. While the lab's code runs and until the report is out, an
 * atexit check is armed: a process that ends in that window through exit() (the lab's code printing
 * a result of its own and exiting, say) prints one line on stderr and ends with LAB_EXIT_TAMPERED.
 */
int lab_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_HARNESS_H */
