/* driver.h — runs a lab's entry point as a full scan on device arrays.
 *
 * For LAB_WHOLE labs this calls the variant's scan. For LAB_TILE labs it calls the variant's
 * scan_tiles, then propagates the carries with known-good code: an exclusive scan of the tile
 * totals and an add-back of each tile's carry. The harness, the tests and the grader all go
 * through here, so a tile lab is always judged as a full scan of any n.
 */
#ifndef SCAN_DRIVER_H
#define SCAN_DRIVER_H

#include "lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of device scratch lab_device_scan needs for variant v at n elements. */
size_t lab_scratch_bytes(const lab_info *lab, const lab_variant *v, size_t n);

/* Full scan of d_in[0..n) into d_out[0..n); d_scratch holds lab_scratch_bytes() bytes, zeroed
 * once when allocated. Returns what the lab's code returned. Errors are left for the caller's
 * cudaGetLastError / cudaDeviceSynchronize. */
lab_result lab_device_scan(const lab_info *lab, const lab_variant *v, const int *d_in, int *d_out,
                           size_t n, void *d_scratch);

/* LAB_TILE only: the tile pass alone (scan_tiles into d_out and the tile totals), for timing it
 * without the carry propagation and for the per-tile tests. Returns the tile-totals array inside
 * d_scratch through *d_tile_sums when that is not NULL. */
lab_result lab_device_tile_pass(const lab_info *lab, const lab_variant *v, const int *d_in,
                                int *d_out, size_t n, void *d_scratch, int **d_tile_sums);

/* LAB_TILE only: the carries after a tile pass, the known-good way: an exclusive scan of the tile
 * totals lab_device_tile_pass left in d_scratch (in place), then each tile's carry added to its
 * outputs. lab_device_scan is lab_device_tile_pass followed by this. */
void lab_device_carries(const lab_info *lab, int *d_out, size_t n, void *d_scratch);

/* Launches one empty kernel on the default stream (the judge's calibration of its channel). */
void lab_launch_empty(void);

/* --squeeze (options.h): a checked call with the lab's kernels kept to a few SMs, so that a
 * single-pass scan has many more tiles than resident blocks and an ordering or forward-progress
 * bug shows as a wrong answer or a hang, not as luck. lab_squeeze_begin(k) starts a course kernel
 * on a stream of its own that fills every SM but k (two blocks of 1024 threads and half an SM's
 * shared memory each, so no block of the lab's fits beside them) and returns once its blocks are
 * resident; lab_squeeze_end() waits for the lab's work on the default stream, then lets the
 * holder end. The holder also ends by itself after LAB_SQUEEZE_MAX_MS (a lab that synchronises the
 * whole device inside its call waits that long, then goes on unsqueezed). lab_squeeze_prepare
 * makes the stream and the flags beforehand (the lab process calls it before its sandbox). CPU
 * mode: no-ops (its scheduler keeps CPU_RESIDENT_BLOCKS blocks resident anyway). */
#define LAB_SQUEEZE_MAX_MS 2000
void lab_squeeze_prepare(void);
void lab_squeeze_begin(int sms);
void lab_squeeze_end(void);

/* bytes rounded up to 256, so that every sub-buffer of a scratch keeps cudaMalloc's alignment. */
static inline size_t lab_align256(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* Known-good exclusive scan of d_data[0..m) in place (wrapping), used for the carries. Needs
 * ref_scan_temp_bytes(m) bytes at d_temp. Not a lab: plain and obviously correct. */
size_t ref_scan_temp_bytes(size_t m);
void ref_exclusive_scan_inplace(int *d_data, size_t m, void *d_temp);

/* Adds d_carry[i / tile] to d_out[i] for tile <= i < n (tile a power of two). */
void ref_add_carries(int *d_out, const int *d_carry, size_t n, size_t tile);

#ifdef __cplusplus
}
#endif

#endif /* SCAN_DRIVER_H */
