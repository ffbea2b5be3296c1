/* lab.h — the contract between a lab's scan.cu and everything that runs it.
 *
 * Every lab computes the same function: a scan (prefix sum) of n int32 values, n a size_t that
 * may be 0. Sums wrap modulo 2^32, and the CPU reference wraps the same way, so results are
 * compared exactly. Labs 09 and 10 go further (a variant's op): other operators, and the
 * applications built on a scan (compaction, sorting, CSR offsets), each with its own check.
 *
 * Each lab is described by one object, `const lab_info LAB`, listing its variants. The course
 * owns it: common/course/NN_name.c defines it from common/course/NN_name.h, the header the lab's
 * scan.cu includes, which declares the entry points scan.cu defines (C linkage). The harness
 * (common/harness/, the only main), the Criterion tests and the grader all reach the student's
 * code through that object and nothing else (the kernel tests also through course-owned test
 * hooks, tests/hooks/).
 *
 * Three shapes of lab:
 *   LAB_HOST   (01)          scan(in, out, n, temp) on host arrays.
 *   LAB_WHOLE  (02, 07–10)   scan(d_in, d_out, n, d_temp) on device arrays: the whole scan (labs
 *                            09 and 10: or another operation, lab_variant.op below).
 *   LAB_TILE   (03–06)       scan_tiles(d_in, d_out, d_tile_sums, n): scan each tile of
 *                            LAB.tile consecutive elements on its own and write each tile's
 *                            total; common/driver.cu propagates the carries between tiles.
 *
 * Rules every entry point follows (the tests check them):
 *   - Return LAB_OK when the output is written, LAB_NOT_IMPLEMENTED when the student has not
 *     written the code yet (skeletons return it before touching memory).
 *   - n == 0 is legal: return LAB_OK without launching anything (a 0-block launch is an error).
 *   - Write out[0..n) only, never past n (the harness checks canary words around the output),
 *     and never modify the input.
 *   - Work on the default stream; the caller synchronises and checks errors.
 *   - Free what you allocate: every call of a graded run is counted (cudaMalloc without its
 *     cudaFree on every call is a device memory leak). Pointers need not be 16-byte aligned:
 *     the harness also passes in and out at offsets of 4, 8 and 12 bytes.
 *   - A tile lab writes tile_sums[t] = sum of tile t's input (for every tile, also the last,
 *     ragged one), whatever its scan type.
 *
 * Include this from C or CUDA/C++; the names have C linkage.
 */
#ifndef SCAN_LAB_H
#define SCAN_LAB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a lab entry point returns. */
typedef enum {
    LAB_OK = 0,
    LAB_NOT_IMPLEMENTED = 1,
} lab_result;

typedef enum {
    LAB_HOST,  /* host arrays, no GPU (lab 01) */
    LAB_WHOLE, /* device arrays, the whole scan */
    LAB_TILE,  /* device arrays, one tile at a time plus tile totals */
} lab_shape;

typedef enum {
    SCAN_INCLUSIVE, /* out[i] = in[0] + ... + in[i]   */
    SCAN_EXCLUSIVE, /* out[i] = in[0] + ... + in[i-1], out[0] = 0 */
} scan_type;

/* Whole scan (LAB_HOST, LAB_WHOLE). temp points at temp_bytes(n) bytes of scratch (device memory
 * for LAB_WHOLE), zero-filled once when the caller allocates it; it may keep state between calls
 * with the same n. temp is NULL when the variant has no temp_bytes. */
typedef lab_result (*lab_scan_fn)(const int *in, int *out, size_t n, void *temp);

/* Tile scan (LAB_TILE): for each tile t of LAB.tile elements (the last one may be short), scan
 * in[t*tile ..] into out[t*tile ..] and write the tile's total to tile_sums[t]. */
typedef lab_result (*lab_tile_fn)(const int *d_in, int *d_out, int *d_tile_sums, size_t n);

/* Bytes of scratch a whole scan needs for n elements. */
typedef size_t (*lab_temp_fn)(size_t n);

/* What a variant computes (lab 09 scans other operators, lab 10 sorts, compacts and counts CSR
 * offsets; every other lab is LAB_OP_ADD, the 0 a descriptor gets when it does not say). The
 * element is 4 bytes in every case: int32, or float passed through the int pointers (LAB_OP_FADD).
 */
typedef enum {
    LAB_OP_ADD = 0, /* int32 +, wrapping modulo 2^32 */
    LAB_OP_MAX,     /* int32 max (identity INT_MIN) */
    LAB_OP_MIN,     /* int32 min (identity INT_MAX) */
    LAB_OP_FADD,    /* float +: checked against a double-precision reference within a bound */
    LAB_OP_SEG_ADD, /* int32 +, restarting at every segment head (scan_seg) */
    /* lab 10: applications of a scan, each with its own output (common/ops.h checks them) */
    LAB_OP_COMPACT, /* keep the elements x > 0, in order, and their count (compact) */
    LAB_OP_SORT,    /* sort 32-bit unsigned keys ascending (scan: in and out hold the bits) */
    LAB_OP_CSR,     /* CSR row offsets from the row of every (row, col) pair (csr) */
} lab_op;

/* Segmented whole scan (LAB_OP_SEG_ADD): heads[i] != 0 starts a new segment at element i
 * (element 0 starts one whatever heads[0] says); out[i] is the scan of in over i's segment up to
 * i. heads is read-only, like in. */
typedef lab_result (*lab_seg_fn)(const int *in, const int *heads, int *out, size_t n, void *temp);

/* Stream compaction (LAB_OP_COMPACT): writes the elements of in[0..n) with x > 0 to out[0..k),
 * in their input order, and k to *d_count (device memory); out[k..n) stays as it was. */
typedef lab_result (*lab_compact_fn)(const int *in, int *out, size_t n, size_t *d_count,
                                     void *temp);

/* CSR row offsets (LAB_OP_CSR): rows[0..n) holds the row of each of n nonzeros (any order, each
 * in [0, n_rows)); writes offsets[0..n_rows], offsets[r] = the number of nonzeros in rows < r.
 * temp holds temp_bytes(n_rows + 1) bytes. */
typedef lab_result (*lab_csr_fn)(const int *rows, int *offsets, size_t n, size_t n_rows,
                                 void *temp);

/* A variant's entry point: one of five signatures. Which member is set follows from the lab's
 * shape and the variant's op (lab_entry_kind), so the harness has one call path per kind of call,
 * not one field per operator. */
typedef union {
    lab_scan_fn scan;       /* LAB_HOST, LAB_WHOLE: op ADD, MAX, MIN, FADD and SORT */
    lab_tile_fn tiles;      /* LAB_TILE */
    lab_seg_fn seg;         /* LAB_OP_SEG_ADD */
    lab_compact_fn compact; /* LAB_OP_COMPACT */
    lab_csr_fn csr;         /* LAB_OP_CSR */
} lab_entry;

/* The tile algorithms a variant may ask for, recognised from what its kernel does (CPU mode's
 * algorithm profile: common/harness/profile_table.h says how). */
typedef enum {
    LAB_ALG_ANY = 0,        /* none named */
    LAB_ALG_KOGGE_STONE,    /* every element updated at every step: T*log2(T) work, log2(T) steps */
    LAB_ALG_KOGGE_STONE_DB, /* the same, each step reading one buffer and writing the other */
    LAB_ALG_BRENT_KUNG,     /* a work-efficient tree: up and down, one word per thread a step */
    LAB_ALG_BLELLOCH,       /* up-sweep, the root cleared, a down-sweep that swaps: exclusive */
    LAB_ALG_COARSENED,    /* each thread scans its C elements serially, then the totals (lab 06) */
    LAB_ALG_HIERARCHICAL, /* two or more passes over the tiles in a call (lab 07) */
    LAB_ALG_SINGLE_PASS   /* one pass over the tiles in a call (lab 08) */
} lab_algorithm;

/* One way of computing the lab's scan; variants[0] is the default, the one the grader times.
 * Descriptors use designated initialisers: {.name = "serial", .summary = "...", .fn.scan = f}
 * (C++: .fn = {.scan = f}, the fields in this order). */
typedef struct {
    const char *name;       /* short, for --variant: "double_buffer" */
    const char *summary;    /* one line for --list */
    lab_op op;              /* what it computes (0: int32 +) */
    lab_entry fn;           /* the entry point, by shape and op */
    lab_temp_fn temp_bytes; /* optional (NULL: no scratch) */
    int compare; /* 1: a design the reference keeps for comparison, not one the student writes
                  * (labs 09 and 10); the course's weak fallback runs the student's own variant */
    lab_algorithm algorithm; /* the algorithm it asks for, as CPU mode's profile recognises it
                              * (make run CPU=1's last line; 0: none named) */
} lab_variant;

/* Which member of lab_entry a variant of a lab of this shape and op sets. */
typedef enum {
    LAB_ENTRY_SCAN,
    LAB_ENTRY_TILES,
    LAB_ENTRY_SEG,
    LAB_ENTRY_COMPACT,
    LAB_ENTRY_CSR
} lab_entry_kind;

static inline lab_entry_kind lab_entry_of(lab_shape shape, lab_op op)
{
    return shape == LAB_TILE      ? LAB_ENTRY_TILES
           : op == LAB_OP_SEG_ADD ? LAB_ENTRY_SEG
           : op == LAB_OP_COMPACT ? LAB_ENTRY_COMPACT
           : op == LAB_OP_CSR     ? LAB_ENTRY_CSR
                                  : LAB_ENTRY_SCAN;
}

/* Whether the member the variant should set is set (a union's members share one pointer's
 * storage in every ABI the course builds for; reading it as the member written is what counts). */
static inline int lab_entry_set(lab_shape shape, lab_op op, lab_entry fn)
{
    switch (lab_entry_of(shape, op)) {
    case LAB_ENTRY_TILES:
        return fn.tiles != NULL;
    case LAB_ENTRY_SEG:
        return fn.seg != NULL;
    case LAB_ENTRY_COMPACT:
        return fn.compact != NULL;
    case LAB_ENTRY_CSR:
        return fn.csr != NULL;
    default:
        return fn.scan != NULL;
    }
}

/* The description of one lab: `const lab_info LAB`, defined in common/course/NN_name.c. */
typedef struct {
    const char *id;    /* directory name: "03_kogge_stone" */
    const char *title; /* "Kogge-Stone with double buffering" */
    lab_shape shape;
    scan_type type;
    size_t tile;    /* elements per tile (LAB_TILE, a power of two); 0 otherwise */
    size_t max_n;   /* largest n the lab is practical for (0: as much as memory holds) */
    size_t bench_n; /* the size it is timed at by the harness's default and the grader */
    int n_variants;
    const lab_variant *variants;
    size_t cpu_n; /* CPU mode's default run: its first n, less 7 (0: bench_n, at most 2^20) */
} lab_info;

extern const lab_info LAB;

/* Whole-array labs (07-10): the tiles, in elements, that the lab's code works in internally,
 * written to tiles[0..max) (the count returned), so that the grader tests sizes that are exact
 * multiples of each tile and one off them (`scan --describe`: work_tiles). Defined by the lab's
 * descriptor where it knows them; a weak reference, NULL in every other lab's binary. */
size_t lab_work_tiles(size_t *tiles, size_t max) __attribute__((weak));

/* Why variant v returned LAB_NOT_IMPLEMENTED when the reason is not its own TODO(student) parts
 * (lab 10: the scan it is built on is not written yet): the message, one line, written to
 * why[0..len), and the reason's code (contract.h: lab_why, WHY_BASE_UNWRITTEN), which reports
 * name as their "reason"; 0 (WHY_TODO) when the harness's usual message fits. Defined by the lab's
 * descriptor where it needs one; a weak reference, NULL in every other lab's binary. */
int lab_not_implemented_why(const lab_variant *v, char *why, size_t len) __attribute__((weak));

/* The functions that the course writes in the lab's scan.cu (and, for lab 10, in the labs it is
 * built on) and the student is not asked to change, by name, space-separated ("scan_tile"): CPU
 * mode's bank and sector tables mark their lines as the course's code, so that their advice is
 * about the student's own lines. Defined by the lab's descriptor where it has such code; a weak
 * reference, NULL in every other lab's binary. */
const char *lab_given_code(void) __attribute__((weak));

/* The exit codes of a lab binary (LAB_EXIT_*), the statuses of a run and the input distributions
 * are in contract.h, generated from contract.json: lab code never needs them. */

#ifdef __cplusplus
}
#endif

#endif /* SCAN_LAB_H */
