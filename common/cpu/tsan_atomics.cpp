/* tsan_atomics.cpp (CPU mode) — the atomic entry points of GCC's ThreadSanitizer instrumentation,
 * which a lab object compiled for bank and sector counting calls (banks.h): each does the
 * operation, always sequentially consistent (at least as strong as any order asked for). They
 * are not counted (they are the __atomic builtins of instrumented code); CUDA's atomic functions
 * and cuda::atomic_ref are plain code in CPU mode (lab_cpu.h), counted as their loads and stores
 * (banks.cpp). */
extern "C" {

#define LAB_TSAN_ATOMIC(bits, T)                                                                   \
    T __tsan_atomic##bits##_load(const volatile T *a, int)                                         \
    {                                                                                              \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                               \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int)                                      \
    {                                                                                              \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                  \
    }                                                                                              \
    T __tsan_atomic##bits##_exchange(volatile T *a, T v, int)                                      \
    {                                                                                              \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int)                                      \
    {                                                                                              \
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                          \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int)                                     \
    {                                                                                              \
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                         \
    }                                                                                              \
    T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int)                                    \
    {                                                                                              \
        return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                        \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int, int)          \
    {                                                                                              \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
    }                                                                                              \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int, int)            \
    {                                                                                              \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
    }                                                                                              \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int, int)                \
    {                                                                                              \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
        return c;                                                                                  \
    }
LAB_TSAN_ATOMIC(8, unsigned char)
LAB_TSAN_ATOMIC(16, unsigned short)
LAB_TSAN_ATOMIC(32, unsigned)
LAB_TSAN_ATOMIC(64, unsigned long long)
#undef LAB_TSAN_ATOMIC

void __tsan_atomic_thread_fence(int)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

} /* extern "C" */
