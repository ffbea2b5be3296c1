/* banks.h (CPU mode, internal) — counting shared-memory bank conflicts and global-memory sectors,
 * between the scheduler (blocks.cpp) and the counter (banks.cpp). Lab code never includes it.
 *
 * A lab file that declares __shared__ memory is compiled with GCC's ThreadSanitizer
 * instrumentation (-fsanitize=thread, no libtsan): the compiler then calls __tsan_read4(p),
 * __tsan_write4(p), ... before each memory access, and banks.cpp defines those functions. While
 * counting is on, every access that lands in shared memory or in a cudaMalloc buffer is recorded
 * with the thread that made it and its call site (the return address of the hook: one site per
 * machine instruction that accesses memory). When a barrier opens or the block ends, the records of
 * each warp are grouped: the k-th execution of one site by each lane of the warp, in the same
 * iteration of the same loops, since the last barrier is one warp-wide access, as the lanes of a
 * warp execute each instruction together (rewrite.py marks every loop's condition so that
 * iterations are known).
 */
#ifndef LAB_CPU_BANKS_H
#define LAB_CPU_BANKS_H

namespace lab_cpu {
namespace banks {

extern bool g_on; /* counting (lab_cpu_banks_record) */

void launch_begin(const char *kernel); /* a launch starts (while counting) */
void block_start(int nthreads);        /* a block starts: no records yet */
void flush();                          /* a barrier opens or the block ends: count the records */
/* Blocks resident together (blocks.cpp): the running block's records are put aside when the
 * scheduler switches to the block of another slot, and come back with it. */
void save_block(int slot);
void load_block(int slot);
void loop_tick(unsigned id, bool c); /* a loop's condition gave c (counting only) */
void shuffled(); /* the running thread made a warp shuffle (counting only; the profile's) */

} /* namespace banks */

/* fibers.cpp, memory.cpp: the running GPU thread's index in its block (-1 outside a kernel), and
 * whether p is in this block's shared memory (a static __shared__ array or the dynamic shared
 * memory). */
int current_thread();
bool in_shared(const void *p);
/* memory.cpp: the name of the __shared__ array that holds p ("extern __shared__" for the dynamic
 * shared memory, "__shared__" when unknown), its start in *base. */
const char *shared_name(const void *p, const void **base);
/* memory.cpp: the start of the cudaMalloc buffer that holds p, or NULL. */
const void *global_buffer(const void *p);

} /* namespace lab_cpu */

#endif /* LAB_CPU_BANKS_H */
