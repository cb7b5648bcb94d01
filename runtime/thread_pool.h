/* The thread pool that runs parallel loops of kernels (TIR `T.parallel`).
 *
 * parallel_for(n, body, ctx) splits [0, n) statically into contiguous chunks that
 * depend only on n and the pool size, and calls body(begin, end, ctx) once per chunk,
 * the calling thread taking chunks alongside the workers. Each chunk runs its
 * iterations in order, and parallel iterations are independent, so results are the
 * same bits for any thread count and for any assignment of chunks to threads.
 *
 * Why not OpenMP: libgomp spins idle workers for a long time by default
 * (GOMP_SPINCOUNT), its team size is a process/thread setting rather than a per-instance
 * one, several host threads each entering a parallel region get one team each (8 API
 * threads x N workers), and ThreadSanitizer needs an instrumented libgomp. This pool is
 * ~300 lines of pthreads: one per instance, workers spin briefly then sleep on a
 * condition variable, and a caller that finds the pool busy (another host thread is
 * using it, or it is called from inside a chunk) runs its loop inline, which static
 * partitioning makes indistinguishable in results.
 *
 * TVMJIT_POOL_TRACE=1 (read when a pool is created) prints one line per parallel loop
 * to stderr, for finding out how loops split (bench/pool_trace.py sums them up):
 *   pool n=N chunks=C wall_us=W asleep=S gap_us=G | t0 chunks=.. iters=.. wall_us=.. cpu_us=.. first_us=.. | t1 ...
 * S: workers asleep (past their idle spin) when the job was published; G: time from the
 * previous traced loop's end (after its trace line was written) to this one's
 * publication (-1 for the first). Per thread: chunks and iterations it ran, wall and
 * thread-CPU time inside them (each chunk reads the thread-CPU clock twice, which
 * lengthens short loops), and when it started its first chunk after the job was
 * published (t0 is the caller).
 *
 * Kernels reach the pool through a thread-local "current pool" that the executor sets
 * around a run (tj_thread_pool_set_current); with no current pool, loops run inline. */
#ifndef TJ_RUNTIME_THREAD_POOL_H
#define TJ_RUNTIME_THREAD_POOL_H

#include <stdint.h>

#include "support/status.h"

typedef struct tj_thread_pool tj_thread_pool_t;

/* One chunk of a parallel loop: iterations [begin, end). */
typedef void (*tj_parallel_body_t)(int64_t begin, int64_t end, void *ctx);

/* Most threads a pool may have (and --threads / TVMJIT_NUM_THREADS accept). */
#define TJ_THREAD_POOL_MAX_THREADS 1024

/* The thread count for a requested count: `requested` when > 0, else the environment
 * variable TVMJIT_NUM_THREADS, else the number of cores this process may run on.
 * A bad TVMJIT_NUM_THREADS is an error naming it. */
tj_status_t *tj_thread_pool_resolve_threads(int requested, int *out_threads);

/* A pool of `num_threads` threads in all, the caller of parallel_for included (so
 * num_threads - 1 workers); num_threads <= 0 resolves as above. Workers start at the
 * first parallel loop that needs them. */
tj_status_t *tj_thread_pool_create(int num_threads, tj_thread_pool_t **out_pool);
/* Stops and joins the workers. No parallel_for may be running on the pool. NULL ok. */
void tj_thread_pool_free(tj_thread_pool_t *pool);
int tj_thread_pool_num_threads(const tj_thread_pool_t *pool);

/* Runs body over [0, n) as described above and returns when every chunk is done.
 * pool may be NULL (runs inline). Thread-safe; never blocks on another caller. */
void tj_thread_pool_parallel_for(tj_thread_pool_t *pool, int64_t n, tj_parallel_body_t body, void *ctx);

/* The chunks of [0, n) for `n_threads` threads: how many, and chunk i's bounds. */
int tj_thread_pool_num_chunks(int64_t n, int n_threads);
void tj_thread_pool_chunk(int64_t n, int n_chunks, int i, int64_t *out_begin, int64_t *out_end);
/* The first chunk of thread t's home range (t = n_threads: n_chunks). Thread t (the
 * caller is 0) runs chunks [home_chunk(t), home_chunk(t + 1)) unless others are faster;
 * these hold n * t / n_threads to n * (t + 1) / n_threads, an even split of n to one
 * iteration for any n and thread count. */
int tj_thread_pool_home_chunk(int n_chunks, int n_threads, int t);

/* The calling thread's current pool (NULL = none). set_current returns the previous
 * one so that callers can restore it. */
tj_thread_pool_t *tj_thread_pool_current(void);
tj_thread_pool_t *tj_thread_pool_set_current(tj_thread_pool_t *pool);

#endif
