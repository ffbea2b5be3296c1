/* verdict.c — the checks of a call made on the host and the report of what any check found
 * (see verdict.h). The GPU's check of a call (verify.cu) fills the same lab_call_verdict, so a
 * wrong call reads the same whichever side checked it.
 */
#include "verdict.h"
#include "cuda_check.h"

#include <stdint.h>

/* The checks of a shifted call (c != 0) go over CHECK_CHUNK elements at a time with no branch per
 * element, so the loop vectorises and a host lab's check runs at memory speed (at the benchmark
 * size it is checked 23 times per timed run); only a chunk with a difference is searched. */
#define CHECK_CHUNK 4096

/* Index of the first i with in[i] != h_in[i] + c (wrapping), or n. */
static size_t first_bad_input(const int *in, const int *h_in, size_t n, unsigned c)
{
    if (c == 0)
        return lab_first_mismatch(in, h_in, n);
    for (size_t i = 0; i < n; i += CHECK_CHUNK) {
        const size_t end = n - i < CHECK_CHUNK ? n : i + CHECK_CHUNK;
        unsigned diff = 0;
        for (size_t j = i; j < end; j++)
            diff |= (unsigned)in[j] ^ ((unsigned)h_in[j] + c);
        for (size_t j = i; diff && j < end; j++)
            if ((unsigned)in[j] != (unsigned)h_in[j] + c)
                return j;
    }
    return n;
}

/* The answer at i when every input element is c more than h_in's: h_ref[i] plus c times the
 * number of elements summed (i + 1 inclusive, i exclusive), wrapping. */
static int shifted_ref(const int *h_ref, size_t i, unsigned c, scan_type type)
{
    return (int)((unsigned)h_ref[i] + c * (unsigned)(type == SCAN_INCLUSIVE ? i + 1 : i));
}

/* Index of the first wrong output element, or n. */
static size_t first_bad_output(const int *out, const int *h_ref, size_t n, unsigned c,
                               scan_type type)
{
    if (c == 0)
        return lab_first_mismatch(out, h_ref, n);
    const unsigned first = type == SCAN_INCLUSIVE ? 1u : 0u; /* the count of out[0]'s terms */
    for (size_t i = 0; i < n; i += CHECK_CHUNK) {
        const size_t end = n - i < CHECK_CHUNK ? n : i + CHECK_CHUNK;
        unsigned diff = 0;
        for (size_t j = i; j < end; j++)
            diff |= (unsigned)out[j] ^ ((unsigned)h_ref[j] + c * ((unsigned)j + first));
        for (size_t j = i; diff && j < end; j++)
            if (out[j] != shifted_ref(h_ref, j, c, type))
                return j;
    }
    return n;
}

/* A verdict with nothing found. */
static lab_call_verdict no_verdict(void)
{
    lab_call_verdict v;
    v.out_front = v.out_back = v.in_guard = v.in = v.out = v.sum = -1;
    v.expected = v.got = 0;
    return v;
}

const char *lab_tile_place(const lab_info *lab, size_t bad, size_t n, char *buf, size_t len)
{
    size_t tiles[4];
    buf[0] = '\0';
    if (lab->shape == LAB_TILE || !lab_work_tiles || !len ||
        lab_work_tiles(tiles, sizeof(tiles) / sizeof(tiles[0])) != 1 || !tiles[0] ||
        n <= tiles[0] || bad >= n)
        return buf;
    const size_t t = tiles[0], tile = bad / t, at = bad % t, count = (n + t - 1) / t;
    if (at == 0)
        snprintf(buf, len,
                 "; tile %zu of %zu (%zu elements each) is the first wrong one, from its first "
                 "element: the prefix carried into it is wrong",
                 tile, count, t);
    else
        snprintf(buf, len,
                 "; element %zu of tile %zu of %zu (%zu elements each), every element before it "
                 "right",
                 at, tile, count, t);
    return buf;
}

/* The checks come in the order of lab_call_verdict's fields; guard words and tile totals have no
 * index into out, so they set no mismatch. */
lab_status lab_report_verdict(const lab_info *lab, const lab_call_verdict *v, size_t n,
                              lab_report *r)
{
    if (v->out_front >= 0) {
        r->status = ST_OUT_OF_BOUNDS;
        lab_report_msg(r, "wrote before the output: out[-%lld] changed (n=%zu)", v->out_front, n);
    } else if (v->out_back >= 0) {
        r->status = ST_OUT_OF_BOUNDS;
        lab_report_msg(r, "wrote past the end of the output: out[%zu] changed (n=%zu)",
                       n + (size_t)v->out_back, n);
    } else if (v->in_guard >= 0) {
        r->status = ST_INPUT_MODIFIED;
        lab_report_msg(r, "wrote into the guard words around the input (n=%zu)", n);
        return r->status;
    } else if (v->in >= 0) {
        r->status = ST_INPUT_MODIFIED;
        lab_report_msg(r, "modified the input: in[%lld] was %lld, is now %lld (n=%zu)", v->in,
                       v->expected, v->got, n);
    } else if (v->out >= 0) {
        char place[200];
        r->status = ST_WRONG;
        lab_report_msg(
            r, "out[%lld] expected %lld, got %lld%s (n=%zu, %s scan%s%s)", v->out, v->expected,
            v->got, lab_wrong_value_hint(v->got), n, lab_scan_type_name(lab->type),
            lab->shape == LAB_TILE && (size_t)v->out >= lab->tile ? ", past the first tile" : "",
            lab_tile_place(lab, (size_t)v->out, n, place, sizeof(place)));
    } else if (v->sum >= 0) {
        const size_t first = (size_t)v->sum * lab->tile;
        const size_t last = (first + lab->tile < n ? first + lab->tile : n) - 1;
        r->status = ST_WRONG;
        lab_report_msg(r,
                       "tile_sums[%lld] expected %lld, got %lld%s: the total of tile %lld "
                       "(elements %zu..%zu) (n=%zu)",
                       v->sum, v->expected, v->got, lab_wrong_value_hint(v->got), v->sum, first,
                       last, n);
        return r->status;
    } else {
        return ST_OK;
    }
    r->has_mismatch = 1;
    r->mismatch_index = v->out_front >= 0  ? -v->out_front
                        : v->out_back >= 0 ? (long long)n + v->out_back
                        : v->in >= 0       ? v->in
                                           : v->out;
    r->expected = v->expected;
    r->got = v->got;
    return r->status;
}

lab_status lab_validate(const lab_info *lab, const int *h_in, const int *h_ref, unsigned c,
                        const int *in_base, lab_layout li, const int *out_base, lab_layout lo,
                        lab_report *r)
{
    const size_t n = lo.n;
    lab_call_verdict v = no_verdict();
    size_t k;

    if ((k = lab_canary_check(out_base, lo.front)) < lo.front) {
        v.out_front = (long long)(lo.front - k);
        v.expected = lab_canary_word(k);
        v.got = out_base[k];
    } else if ((k = lab_canary_check(out_base + lo.front + n, lo.back)) < lo.back) {
        v.out_back = (long long)k;
        v.expected = lab_canary_word(k);
        v.got = out_base[lo.front + n + k];
    } else if (lab_canary_check(in_base, li.front) < li.front ||
               lab_canary_check(in_base + li.front + n, li.back) < li.back) {
        v.in_guard = 0;
    } else if ((k = first_bad_input(in_base + li.front, h_in, n, c)) < n) {
        v.in = (long long)k;
        v.expected = (int)((unsigned)h_in[k] + c);
        v.got = in_base[li.front + k];
    } else if ((k = first_bad_output(out_base + lo.front, h_ref, n, c, lab->type)) < n) {
        v.out = (long long)k;
        v.expected = shifted_ref(h_ref, k, c, lab->type);
        v.got = out_base[lo.front + k];
    }
    return lab_report_verdict(lab, &v, n, r);
}

lab_status lab_validate_sums(const lab_info *lab, const int *h_in, size_t n, const int *sums,
                             lab_report *r)
{
    const size_t tiles = CEIL_DIV(n, lab->tile);
    lab_call_verdict v = no_verdict();
    for (size_t t = 0; t < tiles && v.sum < 0; t++) {
        const size_t first = t * lab->tile, end = first + lab->tile < n ? first + lab->tile : n;
        unsigned total = 0;
        for (size_t i = first; i < end; i++)
            total += (unsigned)h_in[i];
        if ((unsigned)sums[t] != total) {
            v.sum = (long long)t;
            v.expected = (int)total;
            v.got = sums[t];
        }
    }
    return lab_report_verdict(lab, &v, n, r);
}
