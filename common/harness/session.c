/* session.c — the program around the cases (harness.h: lab_main): the options, from the command
 * line or, for `scan --grader`, one case per line on standard input; --help, --describe, --list;
 * CPU mode's default run; the report, on stdout or the grader's channel, with CPU mode's bank and
 * sector tables after it; and the exit guard that catches lab code ending the process.
 *
 * Over 400 lines (about 450) for a reason: it is one job, a process from argv to exit code, read
 * top to bottom; the parts that could leave (the grader's input, CPU mode's tables) are each
 * under 100 lines, called from here alone, and share its report channel.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "call.h"
#include "cuda_check.h"
#include "port.h"
#include "profile_table.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static lab_report *g_report; /* what lab_cuda_fail reports through, once started */
static int g_json;
static FILE *g_report_out; /* stdout, or the grader's private channel (scan --grader's socket) */

/* 1 from just before the lab's code runs until the report is out. The process must not end in
 * that window except through the harness: lab code that calls exit() (after printing a result
 * of its own, say) is caught by on_process_exit. */
static volatile int g_armed;

static void on_process_exit(void)
{
    static const char msg[] = "harness: the process is ending before the harness reported a result "
                              "(the lab's code called exit()?): exit code 8\n";
    if (!g_armed)
        return;
    fflush(stdout);
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) { /* nothing more to do */
    }
    _exit(LAB_EXIT_TAMPERED);
}

#ifdef LAB_CPU_MODE
/* Whether func is one of the functions the course writes in the lab's file (lab.h:
 * lab_given_code): the tables mark its lines "(course's code)" and give it no advice. */
static int course_code(const char *func)
{
    const char *given = lab_given_code ? lab_given_code() : NULL;
    const size_t len = func ? strlen(func) : 0;
    if (!given || !len)
        return 0;
    for (const char *p = given; (p = strstr(p, func)) != NULL; p += len)
        if ((p == given || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return 1;
    return 0;
}

#define COURSE_CODE_MARK "  (course's code)"

/* Adds func to names (", "-separated, each once) for the legend under a table. */
static void add_name(char *names, size_t cap, const char *func)
{
    const size_t len = strlen(names), flen = strlen(func);
    for (const char *p = names; (p = strstr(p, func)) != NULL; p += flen)
        if ((p == names || p[-1] == ' ') && (p[flen] == ',' || p[flen] == '\0'))
            return;
    snprintf(names + len, cap - len, "%s%s", len ? ", " : "", func);
}

/* Under a kernel's row of the bank-conflict table: the source lines of its accesses that conflict,
 * each with its own count, so that a table with conflicts says where they are. Returns how many
 * of them are the course's code. */
static int print_bank_lines(FILE *f, const char *kernel, char *names, size_t cap)
{
    lab_cpu_bank_site_stats s;
    int course = 0;
    for (int i = 0; lab_cpu_bank_sites_get(i, &s); i++) {
        char way[16];
        if (strcmp(s.kernel, kernel) != 0 || !s.extra)
            continue;
        snprintf(way, sizeof(way), "%u-way", s.worst);
        const int given = course_code(s.func);
        fprintf(f, "    %-18s %-5s %22llu %7s %6.2f %12llu%s\n", s.site, s.store ? "store" : "load",
                s.accesses, way, s.mean_degree, s.extra, given ? COURSE_CODE_MARK : "");
        if (given)
            add_name(names, cap, s.func);
        course += given;
    }
    return course;
}

/* The bank-conflict table of the lab's first call, after its result line: a row per kernel, and
 * under a kernel with conflicts, a row per source line that has some. */
static void print_banks(FILE *f, const lab_report *r)
{
    lab_cpu_bank_stats b;
    int worst = 0, course = 0;
    char names[160] = "";
    unsigned long long any = 0;
    for (int i = 0; lab_cpu_banks_get(i, &b); i++)
        any += b.loads + b.stores;
    if (!any || r->status == ST_NOT_IMPLEMENTED)
        return;
    fprintf(f, "shared-memory bank conflicts in call 1, counted by CPU mode as an H100 serves a "
               "warp-wide access (32 banks x 4 bytes):\n");
    fprintf(f, "  %-36s %12s %7s %6s %12s\n", "kernel", "accesses", "worst", "mean", "conflicts");
    for (int i = 0; lab_cpu_banks_get(i, &b); i++) {
        char way[16];
        if (!(b.loads + b.stores))
            continue;
        snprintf(way, sizeof(way), "%u-way", b.worst);
        fprintf(f, "  %-36s %12llu %7s %6.2f %12llu\n", b.kernel, b.loads + b.stores, way,
                b.mean_degree, b.extra_ld + b.extra_st);
        if ((int)b.worst > worst)
            worst = (int)b.worst;
        course += print_bank_lines(f, b.kernel, names, sizeof(names));
    }
    if (worst > 1)
        fprintf(f, "  n-way: n lanes of one warp-wide access read different words of one bank, "
                   "served one after another; conflicts: the extra passes in all (Nsight Compute's "
                   "bank-conflict count); the indented rows: the source lines they come from\n");
    if (course)
        fprintf(f,
                "  (course's code): a line of %s, which the course writes for you: nothing "
                "to change there\n",
                names);
    if (worst <= 1)
        fprintf(f, "  1-way everywhere: every warp-wide shared-memory access is served in one "
                   "pass\n");
}

/* The global-memory table of the lab's first call: per kernel and source line, the 32-byte
 * sectors its warp-wide accesses touched against the fewest that hold their bytes, and the line's
 * share of its kernel's sectors. A site touching r times the sectors it needs matters in
 * proportion to its share: the guarded scalar path of a ragged last tile may be uncoalesced and
 * still cost nothing worth fixing, so the advice names only the sites that carry a real share. */
#define SECTOR_SHARE_THAT_MATTERS 0.05
#define SECTOR_RATIO_THAT_MATTERS 1.5
static void print_sectors(FILE *f, const lab_report *r)
{
    lab_cpu_sector_stats s;
    int big = 0, small = 0, course = 0;
    char names[160] = "";
    if (!lab_cpu_sectors_get(0, &s) || r->status == ST_NOT_IMPLEMENTED)
        return;
    fprintf(f, "global-memory sectors in call 1, counted by CPU mode (32-byte sectors per "
               "warp-wide access; ratio 1.00 = coalesced; share: of the kernel's sectors):\n");
    fprintf(f, "  %-36s %-22s %5s %12s %12s %6s %7s\n", "kernel", "line", "", "accesses", "sectors",
            "share", "ratio");
    for (int i = 0; lab_cpu_sectors_get(i, &s); i++) {
        unsigned long long kernel_sectors = 0;
        lab_cpu_sector_stats o;
        for (int j = 0; lab_cpu_sectors_get(j, &o); j++)
            if (strcmp(o.kernel, s.kernel) == 0)
                kernel_sectors += o.sectors;
        const double ratio = s.min_sectors ? (double)s.sectors / (double)s.min_sectors : 1.0;
        const double share = kernel_sectors ? (double)s.sectors / (double)kernel_sectors : 0.0;
        const int bad = ratio >= SECTOR_RATIO_THAT_MATTERS;
        const int matters = share >= SECTOR_SHARE_THAT_MATTERS;
        const int given = bad && course_code(s.func);
        fprintf(f, "  %-36s %-22s %5s %12llu %12llu %5.1f%% %7.2f%s\n", s.kernel, s.site,
                s.store ? "store" : "load", s.accesses, s.sectors, 100.0 * share, ratio,
                !bad    ? ""
                : given ? COURSE_CODE_MARK
                        : (matters ? "  <- uncoalesced" : "  (small share)"));
        big += bad && matters && !given;
        small += bad && !matters && !given;
        if (given)
            add_name(names, sizeof(names), s.func);
        course += given;
    }
    if (big)
        fprintf(f, "  <- uncoalesced: the lanes of a warp touched r times the sectors their bytes "
                   "need; the memory system moves whole sectors, so a ratio of r costs up to r "
                   "times the bandwidth: give neighbouring lanes neighbouring addresses\n");
    else
        fprintf(f,
                "  coalesced: every access site %swith a share of its kernel's traffic touches "
                "(close to) the fewest sectors its bytes need\n",
                course ? "of your code " : "");
    if (small)
        fprintf(f,
                "  (small share): uncoalesced, but under %.0f%% of the kernel's sectors (a "
                "ragged last tile's guarded accesses, say): little to gain there\n",
                100.0 * SECTOR_SHARE_THAT_MATTERS);
    if (course)
        fprintf(f,
                "  (course's code): uncoalesced in %s, which the course writes for you (a "
                "ragged last tile's guarded scalar path, say): nothing to change there\n",
                names);
}
#endif

static void print_report(const lab_report *r)
{
    FILE *f = g_report_out ? g_report_out : stdout;
    if (g_json)
        lab_print_report_json(f, r);
    else
        lab_print_report_text(f, r);
#ifdef LAB_CPU_MODE
    if (lab_harness_banks && !g_json) {
        print_banks(f, r);
        print_sectors(f, r);
        lab_print_profile(f, r);
    }
#else
    if (lab_harness_banks && !g_json)
        lab_print_profile(f, r); /* where to see it: CPU mode */
#endif
    fflush(f);
    g_armed = 0;
}

/* One line from standard input (the grader's socket) into line (without its newline): 1, or 0 at
 * the end of the input, or -1 when the line is too long. Bytes after the newline are kept for the
 * next call (the grader sends a case only after the report of the one before, but need not). */
static int read_input_line(char *line, size_t len)
{
    static char buf[4096];
    static size_t have;
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            const size_t k = (size_t)(nl - buf);
            if (k + 1 > len)
                return -1;
            memcpy(line, buf, k);
            line[k] = '\0';
            memmove(buf, nl + 1, have - k - 1);
            have -= k + 1;
            return 1;
        }
        if (have == sizeof(buf))
            return -1;
        ssize_t got = read(STDIN_FILENO, buf + have, sizeof(buf) - have);
        if (got <= 0) { /* the end: a last line without its newline still counts */
            if (have == 0 || have + 1 > len)
                return have == 0 ? 0 : -1;
            memcpy(line, buf, have);
            line[have] = '\0';
            have = 0;
            return 1;
        }
        have += (size_t)got;
    }
}

/* --grader: each case comes on standard input (a socket the grader holds), one line of the options
 * above, and its report goes back on it. So every graded run has the same command line, timed or
 * not, and the lab's code cannot tell them apart by reading it. Returns the new argc, 0 at the end
 * of the input, or -1 with a reason in err. */
static int read_grader_case(const char *prog, char **args, int max_args, char *line, size_t len,
                            char *err, size_t errlen)
{
    const int got = read_input_line(line, len);
    if (got == 0)
        return 0;
    if (got < 0) {
        snprintf(err, errlen, "--grader: the case on standard input is too long");
        return -1;
    }
    int argc = 0;
    args[argc++] = (char *)prog;
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (argc == max_args - 1 || strcmp(tok, "--grader") == 0) {
            snprintf(err, errlen, "--grader: bad case on standard input ('%s')", tok);
            return -1;
        }
        args[argc++] = tok;
    }
    args[argc] = NULL;
    return argc;
}

/* On a failed CUDA call: still print the result, with status cuda_error. */
static void on_cuda_fail(const char *what, cudaError_t err)
{
    if (!g_report)
        return;
    g_report->status = ST_CUDA_ERROR;
    g_report->reps = 0;
    lab_report_msg(g_report, "CUDA error %s (%s) in %s", cudaGetErrorName(err),
                   cudaGetErrorString(err), what);
    print_report(g_report);
}

/* A judge whose lab process failed mid-call (port.h): the report says how, and the process ends. */
static void on_port_fail(lab_status st, const char *msg, int exit_code)
{
    if (g_report) {
        g_report->status = st;
        g_report->reps = 0;
        lab_report_msg(g_report, "%s", msg);
        print_report(g_report);
    }
    fflush(NULL);
    _exit(exit_code);
}

/* Takes the judge's options from the front of argv (`--judge BINARY [--run-as UID:GID]
 * [--wrap 'COMMAND ...'] [--output-cap BYTES]`, then the harness's usual ones) and starts the lab
 * process. Returns the count of words taken (0: not a judge), or -1 after printing why. */
static int start_judge(int argc, char **argv)
{
    long uid = -1, gid = -1;
    const char *binary = NULL, *wrap = NULL;
    char why[300] = "";
    int i = 1;
    if (argc < 3 || strcmp(argv[1], "--judge") != 0)
        return 0;
    binary = argv[2];
    for (i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--run-as") == 0) {
            if (sscanf(argv[i + 1], "%ld:%ld", &uid, &gid) != 2 || uid < 0 || gid < 0) {
                fprintf(stderr, "%s: --run-as takes UID:GID (is '%s')\n", argv[0], argv[i + 1]);
                return -1;
            }
        } else if (strcmp(argv[i], "--wrap") == 0) {
            wrap = argv[i + 1];
        } else if (strcmp(argv[i], "--output-cap") == 0) {
            char *end;
            const long long cap = strtoll(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end || cap < 0) {
                fprintf(stderr, "%s: --output-cap takes a number of bytes (is '%s')\n", argv[0],
                        argv[i + 1]);
                return -1;
            }
            lab_port_set_output_cap(cap);
        } else {
            break;
        }
    }
    if (lab_port_judge_start(binary, uid, gid, wrap, why, sizeof(why)) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], why);
        return -1;
    }
    lab_port_fail_hook = on_port_fail;
    return i - 1;
}

/* Checks that LAB is well formed, so a broken descriptor is a message, not a crash. */
static int lab_info_ok(const lab_info *lab, char *why, size_t whylen)
{
    if (lab->n_variants <= 0 || !lab->variants) {
        snprintf(why, whylen, "LAB lists no variants");
        return 0;
    }
    if (lab->shape == LAB_TILE && (lab->tile == 0 || (lab->tile & (lab->tile - 1)) != 0)) {
        snprintf(why, whylen, "LAB.tile must be a power of two (is %zu)", lab->tile);
        return 0;
    }
    for (int i = 0; i < lab->n_variants; i++) {
        const lab_variant *v = &lab->variants[i];
        if (!v->name || !lab_entry_set(lab->shape, v->op, v->fn) ||
            (v->op != LAB_OP_ADD && (lab->shape != LAB_WHOLE || lab->type != SCAN_INCLUSIVE))) {
            snprintf(why, whylen, "variant %d has no name or no entry point for this lab's shape",
                     i);
            return 0;
        }
    }
    return 1;
}

/* Opens the report channel fd (close-on-exec) before any of the lab's code runs. Returns 0, or
 * -1 with a reason in err. */
static int open_report_channel(int fd, char *err, size_t errlen)
{
    if (fd > STDERR_FILENO)
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    g_report_out = fd == STDOUT_FILENO ? stdout : fdopen(fd, "w");
    if (!g_report_out) {
        snprintf(err, errlen, "the report channel (fd %d): cannot write to it", fd);
        return -1;
    }
    return 0;
}

/* The options of this process, from the command line or, for `scan --grader`, from the next case
 * on standard input (then sandboxed); opens the report channel of either (once). Returns 0, -1 at
 * the end of a graded run's input, or LAB_EXIT_USAGE after printing why on stderr. */
static int read_options(int argc, char **argv, const char *prog, lab_options *o)
{
    static char case_line[4096];
    static char *case_args[64];
    char err[256] = "";
    int report_fd = -1, ok;
    const int grader = argc == 2 && strcmp(argv[1], "--grader") == 0;

    lab_default_options(o);
    if (grader) {
        argc =
            read_grader_case(prog, case_args, 64, case_line, sizeof(case_line), err, sizeof(err));
        if (argc == 0 && g_report_out)
            return -1; /* the end of the cases */
        if (argc == 0)
            snprintf(err, sizeof(err), "--grader: no case on standard input");
        argv = case_args;
        report_fd = g_report_out ? -1 : STDIN_FILENO;
        ok = argc > 0;
    } else {
        ok = 1; /* the report goes to stdout */
    }
    ok = ok && (report_fd < 0 || open_report_channel(report_fd, err, sizeof(err)) == 0) &&
         lab_parse_args(argc, argv, o, err, sizeof(err)) == 0;
    if (!ok) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (grader)
        o->sandbox = 1;
    return 0;
}

/* The largest default n of a GPU lab in CPU mode (--n overrides it). */
#define LAB_CPU_DEFAULT_MAX_N ((size_t)1 << 20)

#ifdef LAB_CPU_MODE
/* The largest tile a lab's code works in: its tile, else the tiles it reports (lab.h:
 * lab_work_tiles), else LAB_DEFAULT_TILE, as the grader's sizes take it. */
static size_t largest_tile(const lab_info *lab)
{
    if (lab->tile)
        return lab->tile;
    size_t tiles[8], big = 0;
    const size_t k = lab_work_tiles ? lab_work_tiles(tiles, sizeof(tiles) / sizeof(tiles[0])) : 0;
    for (size_t i = 0; i < k && i < sizeof(tiles) / sizeof(tiles[0]); i++)
        if (tiles[i] > big)
            big = tiles[i];
    return big ? big : LAB_DEFAULT_TILE;
}

/* CPU mode's default run of a GPU lab (no --n, no --sizes) is meant to catch the common bugs at
 * the first make run: three calls, the first at a ragged n (the benchmark size, at most 2^20,
 * or the lab's cpu_n, plus 7: a last tile cut short), the second and third at sixteen of the lab's
 * largest tiles and one element. The second, at a new n, shows state the first left behind, or a
 * leak; the harness zeroes the scratch for each new n (lab.h), so only the third, at the second's n
 * again, shows state never reset for the next call (lab 08's ticket counter) and, on its sixteen
 * tiles, a look-back that takes the second call's descriptor for its own (with two tiles it passed
 * for six scheduler seeds of eight). Every input's first element is negative (LAB_CPU_DEFAULT_SEED:
 * a max scan whose identity is 0 instead of INT_MIN is wrong from out[0]). The grader's cases call
 * the same way (grader/gradelib/evaluate.py, case_calls). */
static void cpu_default_calls(lab_options *o, const lab_info *lab)
{
    size_t n = lab->bench_n < LAB_CPU_DEFAULT_MAX_N ? lab->bench_n : LAB_CPU_DEFAULT_MAX_N;
    if (lab->cpu_n) /* a lab whose CPU-mode run costs more per element (lab 10's sorts) */
        n = lab->cpu_n;
    if (!lab->max_n || n + 7 <= lab->max_n)
        n += 7;
    size_t second = 16 * largest_tile(lab) + 1;
    if (second >= n)
        second = n / 2 + 1;
    o->n = n;
    o->sizes[0] = n;
    o->sizes[1] = second;
    o->sizes[2] = second;
    o->n_sizes = 3;
    if (!o->calls_given)
        o->calls = 3;
    if (!o->seed_given)
        o->seed = LAB_CPU_DEFAULT_SEED;
}
#endif

/* What a run without --n scans: the lab's benchmark size. CPU mode (common/cpu/) checks
 * correctness: three calls of smaller ragged sizes by default (cpu_default_calls), and no timing of
 * GPU labs unless asked for with --reps (the emulation's times say nothing about a GPU). */
static void settle_defaults(lab_options *o, const lab_info *lab)
{
    if (!o->n_given)
        o->n = lab->bench_n;
#ifdef LAB_CPU_MODE
    if (lab->shape != LAB_HOST) {
        if (!o->n_given)
            cpu_default_calls(o, lab);
        if (!o->reps_given)
            o->reps = 0;
    }
#else
    (void)lab;
#endif
}

/* Runs variant vi of LAB with the atexit check armed and prints the report; returns the exit
 * code of its status. */
static int run_and_report(const lab_options *o, int vi)
{
    lab_report r;
    g_json = o->json;
    if (g_json) /* the counts print only after a text result line: with --json, none to count
                 * but the algorithm's profile when the report names it */
        lab_harness_banks = o->algorithm ? 2 : 0;
    lab_report_init(&r, &LAB, LAB.variants[vi].name, o);
    g_report = &r;
    lab_cuda_fail_hook = on_cuda_fail;

    g_armed = 1; /* the lab's code runs from here until the report is out */
    lab_run(&LAB, vi, o, &r);

    lab_cuda_fail_hook = NULL;
    g_report = NULL;
    print_report(&r);
    return lab_status_exit_code(r.status);
}

/* One case of the process: its options (read_options), then --help, --describe/--list, or the
 * run. Returns its exit code, or -1 at the end of a graded run's input. */
static int one_case(int argc, char **argv, const char *prog)
{
    lab_options o;
    char err[256] = "";
    const int rc = read_options(argc, argv, prog, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        lab_print_usage(stdout, prog);
        return LAB_EXIT_OK;
    }
    if (!lab_info_ok(&LAB, err, sizeof(err))) {
        fprintf(stderr, "%s: the lab descriptor is broken: %s\n", prog, err);
        return LAB_EXIT_USAGE;
    }
    if (o.describe || o.list) { /* --describe, for programs, wins over --list */
        if (o.describe)
            lab_print_describe(stdout, &LAB, LAB_MODE_NAME);
        else
            lab_print_list(stdout, &LAB);
        return LAB_EXIT_OK;
    }
    int vi = lab_find_variant(&LAB, o.variant);
    if (vi < 0) {
        fprintf(stderr, "%s: unknown variant '%s' (see --list)\n", prog, o.variant);
        return LAB_EXIT_USAGE;
    }
    settle_defaults(&o, &LAB);
    return run_and_report(&o, vi);
}

int lab_main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "scan";
    static int exit_check_registered;

    /* the lab process of a judge (port.h): the lab's calls, and nothing else */
    if (argc == 4 && strcmp(argv[1], "--serve") == 0) {
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
        return lab_port_serve(atoi(argv[2]), atoi(argv[3]));
    }
    /* every kernel is loaded when CUDA starts, before the sandbox (no module loads inside it) */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    /* a judge: the lab's code runs in the lab process it starts; the rest is as below */
    const int taken = start_judge(argc, argv);
    if (taken < 0)
        return LAB_EXIT_USAGE;
    if (taken > 0) {
        argv[taken] = argv[0];
        argv += taken;
        argc -= taken;
    }
    const int grader = argc == 2 && strcmp(argv[1], "--grader") == 0;

    if (!exit_check_registered && atexit(on_process_exit) == 0)
        exit_check_registered = 1;
    lab_harness_banks = !grader;
    int rc = one_case(argc, argv, prog);
    /* a graded run: the next case, until the input ends or a case is not ok */
    while (grader && rc == LAB_EXIT_OK) {
        const int next = one_case(argc, argv, prog);
        if (next < 0)
            break;
        rc = next;
    }
    return lab_port_judge_finish(rc);
}
