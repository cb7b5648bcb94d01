/* The thread pool (see thread_pool.h for the contract and why not OpenMP).
 *
 * One job at a time per pool: the caller that wins `dispatch` (a trylock; losers run
 * inline) writes the job (body, ctx, n, the chunks' home ranges) and publishes it by
 * bumping `generation`, then claims chunks like any worker. Claiming takes no lock:
 * thread t's home range is one atomic word {generation, next, end}; its owner takes
 * `next` with a compare-and-swap, a thread whose own range is done takes `end - 1` of
 * the fullest range the same way. The generation in the word makes a late worker's
 * claim fail once its job is over, and a claim that succeeds proves that the job
 * fields it read before are that job's (the next job is only written once every chunk
 * is done, and this one was not yet claimed). Completion is an atomic count; the caller
 * returns once every chunk is done, and no worker touches the job after its last chunk,
 * so the job may live on the caller's stack. Waiting (workers for a job, the caller for
 * the last chunk) spins, then sleeps on a condition variable; `lock` only serves those
 * sleeps.
 *
 * Why no mutex on the claim path: on this loaded 2-vCPU host (load average 10-17 from
 * other processes) a thread is often preempted for milliseconds, and a worker preempted
 * while it held the claim mutex (taken after every chunk, to count it done and claim the
 * next) stalled the caller on the mutex. With TVMJIT_POOL_TRACE, ResNet-18 at 2 threads
 * at that load, 726 loops: with the mutex the caller spent 3.09 s outside its chunks
 * (median 1.9 ms per loop) against 0.37 s in them; without, a run minutes later, 1.95 s
 * (median 0.23 ms) against 1.84 s. */
#include "runtime/thread_pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/alloc.h"

enum {
  /* Chunks per thread: a few, so that a worker the OS does not schedule promptly (a
   * loaded machine) delays only a small share of the loop, which others take over. */
  CHUNKS_PER_THREAD = 4,
  /* An idle worker spins this long for the next job (enough to catch the next kernel of
   * a model run), then sleeps. */
  IDLE_SPIN_NS = 50 * 1000,
  /* The caller waiting for chunks that are running spins longer: the wait is bounded by
   * a chunk, and sleeping would give its core away, which on a loaded machine costs a
   * whole scheduling delay to get back. */
  DONE_SPIN_NS = 2000 * 1000,
  WORKER_STACK = 8 * 1024 * 1024,    /* kernels keep buffers up to 64 KiB on the stack */
};
_Static_assert(TJ_THREAD_POOL_MAX_THREADS * CHUNKS_PER_THREAD <= 0xffff, "a chunk index must fit a home word's 16 bits");

struct tj_thread_pool {
  int n_threads;               /* caller included */
  pthread_mutex_t dispatch;    /* held by the caller running a job on this pool */
  /* Set under `dispatch`: */
  pthread_t *workers;
  int n_started;
  bool started;                /* workers were started (or that failed: run with fewer) */
  uint64_t start_generation;   /* the generation workers start from */

  /* The job: written by the caller before it publishes `generation`, read by the
   * threads after they see it (atomics: a late worker may read them while the next job
   * is written; it then fails its claim and never uses what it read). */
  _Atomic(tj_parallel_body_t) body;
  _Atomic(void *) ctx;
  _Atomic int64_t n;
  atomic_int n_chunks;
  /* Thread t's home range (the caller is 0, workers 1..): home_word(generation, next,
   * end); it runs [next, end) from the front, others take from the end. Without delays
   * each thread runs the same rows in every kernel of a run, so what one kernel writes
   * the next reads from the same core's cache. */
  _Atomic uint64_t *homes;
  int n_homes;
  atomic_int chunks_done;
  atomic_uint_fast64_t generation; /* bumped per job; the low 32 bits tag the homes */
  atomic_bool stop;

  pthread_mutex_t lock;        /* for the condition variables */
  pthread_cond_t wake;         /* a new job or stop */
  pthread_cond_t done_cv;      /* the last chunk of the job finished */
  atomic_int sleepers;         /* workers in (or about to enter) wait on `wake` */
  atomic_bool caller_waiting;  /* the caller is in (or about to enter) wait on `done_cv` */
  atomic_int next_worker_id;
  /* TVMJIT_POOL_TRACE set: per job and thread, what it ran (each thread writes its own;
   * the caller reads them after the last chunk); else NULL. */
  struct thread_trace *trace;
  int64_t trace_publish_ns;
  int trace_asleep;         /* workers asleep on `wake` when the job was published */
  int64_t trace_end_ns;     /* when the previous job's last chunk was done (0: none) */
};

/* One thread's part of one job, for the trace (see thread_pool.h). */
typedef struct thread_trace {
  int64_t chunks, iters, wall_ns, cpu_ns, first_ns;
} thread_trace_t;

static _Thread_local tj_thread_pool_t *current_pool;
static _Thread_local bool inside_chunk; /* this thread is running a chunk */

/* ---------------- sizing ---------------- */

static int cores_available(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

tj_status_t *tj_thread_pool_resolve_threads(int requested, int *out_threads) {
  if (requested < 0 || requested > TJ_THREAD_POOL_MAX_THREADS)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "num_threads %d is out of range: use a count from 1 to %d, or 0 for TVMJIT_NUM_THREADS or "
                         "every core",
                         requested, TJ_THREAD_POOL_MAX_THREADS);
  if (requested > 0) return *out_threads = requested, NULL;
  const char *env = getenv("TVMJIT_NUM_THREADS");
  if (env && *env) {
    char *end = NULL;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno || *end || v < 1 || v > TJ_THREAD_POOL_MAX_THREADS)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                           "TVMJIT_NUM_THREADS='%s' is not a thread count: set it to a number from 1 to %d, or unset "
                           "it to use every core",
                           env, TJ_THREAD_POOL_MAX_THREADS);
    return *out_threads = (int)v, NULL;
  }
  *out_threads = cores_available();
  if (*out_threads > TJ_THREAD_POOL_MAX_THREADS) *out_threads = TJ_THREAD_POOL_MAX_THREADS;
  return NULL;
}

int tj_thread_pool_num_chunks(int64_t n, int n_threads) {
  if (n <= 0) return 0;
  int64_t want = (int64_t)(n_threads > 1 ? n_threads : 1) * CHUNKS_PER_THREAD;
  return (int)(n < want ? n : want);
}

/* Chunk i of n_chunks near-equal contiguous chunks: [n*i/n_chunks, n*(i+1)/n_chunks).
 * The longer chunks are spread out rather than all first, so that a thread's home range
 * (a run of n_chunks/threads chunks) holds its share of n to one iteration: with the
 * first n % n_chunks chunks one longer, 28 rows in 8 chunks over 2 threads went 16/12
 * (the caller's range took all four long chunks, 14% over the even split), 10 went 6/4. */
void tj_thread_pool_chunk(int64_t n, int n_chunks, int i, int64_t *out_begin, int64_t *out_end) {
  *out_begin = n * i / n_chunks;
  *out_end = n * (i + 1) / n_chunks;
}

int tj_thread_pool_home_chunk(int n_chunks, int n_threads, int t) {
  return (int)((int64_t)n_chunks * t / n_threads);
}

/* ---------------- waiting ---------------- */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until the generation differs from `seen` (or stop), for at most IDLE_SPIN_NS. */
static void spin_for_job(tj_thread_pool_t *p, uint64_t seen) {
  int64_t deadline = now_ns() + IDLE_SPIN_NS;
  for (int i = 1;; i++) {
    if (atomic_load_explicit(&p->generation, memory_order_relaxed) != seen) return;
    if (atomic_load_explicit(&p->stop, memory_order_relaxed)) return;
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > deadline) return;
  }
}

static void spin_for_done(tj_thread_pool_t *p, int n_chunks) {
  int64_t deadline = now_ns() + DONE_SPIN_NS;
  for (int i = 1;; i++) {
    if (atomic_load_explicit(&p->chunks_done, memory_order_acquire) >= n_chunks) return;
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > deadline) return;
  }
}

/* ---------------- the trace ---------------- */

/* Thread `self`'s record of a chunk it ran (its own slot: no lock). */
static void trace_chunk(tj_thread_pool_t *p, int self, int64_t begin, int64_t end, int64_t start_ns, int64_t wall_ns,
                        int64_t cpu_ns) {
  thread_trace_t *t = &p->trace[self];
  if (t->chunks++ == 0) t->first_ns = start_ns - p->trace_publish_ns;
  t->iters += end - begin;
  t->wall_ns += wall_ns;
  t->cpu_ns += cpu_ns;
}

/* One line per job (format in thread_pool.h); by the caller, after the last chunk. The
 * line is built first and written with one call (stderr is unbuffered: each fprintf was
 * a write of its own), and the job's end for the next gap_us is taken after the write,
 * so gap_us counts the time outside the pool, not the trace's own output: the GEMV
 * 1x768x768's gaps were 6.5-7 us with the end taken before five writes. */
static void print_trace(tj_thread_pool_t *p, int64_t n, int n_chunks) {
  char line[2048];
  int64_t end = now_ns();
  int len = snprintf(line, sizeof line, "pool n=%lld chunks=%d wall_us=%.1f asleep=%d gap_us=%.1f", (long long)n,
                     n_chunks, (double)(end - p->trace_publish_ns) / 1e3, p->trace_asleep,
                     p->trace_end_ns ? (double)(p->trace_publish_ns - p->trace_end_ns) / 1e3 : -1.0);
  for (int t = 0; t < p->n_threads && len > 0 && (size_t)len < sizeof line; t++) {
    const thread_trace_t *tt = &p->trace[t];
    len += snprintf(line + len, sizeof line - (size_t)len,
                    " | t%d chunks=%lld iters=%lld wall_us=%.1f cpu_us=%.1f first_us=%.1f", t, (long long)tt->chunks,
                    (long long)tt->iters, (double)tt->wall_ns / 1e3, (double)tt->cpu_ns / 1e3,
                    (double)tt->first_ns / 1e3);
  }
  fprintf(stderr, "%s\n", line);
  p->trace_end_ns = now_ns();
}

/* ---------------- claiming chunks ---------------- */

/* A home range as one word: the job's generation (low 32 bits), next and end chunk. */
static uint64_t home_word(uint64_t generation, int next, int end) {
  return (generation & 0xffffffffu) << 32 | (uint64_t)next << 16 | (uint64_t)end;
}
static uint32_t home_generation(uint64_t w) { return (uint32_t)(w >> 32); }
static int home_next(uint64_t w) { return (int)(w >> 16 & 0xffff); }
static int home_end(uint64_t w) { return (int)(w & 0xffff); }

/* Sets the job's home ranges (the caller, before publishing generation `g`). */
static void assign_homes(tj_thread_pool_t *p, uint64_t g, int n_chunks) {
  for (int t = 0; t < p->n_homes; t++) {
    uint64_t w = home_word(g, tj_thread_pool_home_chunk(n_chunks, p->n_homes, t),
                           tj_thread_pool_home_chunk(n_chunks, p->n_homes, t + 1));
    atomic_store_explicit(&p->homes[t], w, memory_order_relaxed);
  }
}

/* Takes the front chunk of home t (own = true) or its last one, if it belongs to job g. */
static int take_chunk(tj_thread_pool_t *p, int t, uint64_t g, bool own) {
  uint64_t w = atomic_load_explicit(&p->homes[t], memory_order_acquire);
  for (;;) {
    if (home_generation(w) != (uint32_t)g) return -1;
    int next = home_next(w), end = home_end(w);
    if (next >= end) return -1;
    uint64_t taken = own ? home_word(g, next + 1, end) : home_word(g, next, end - 1);
    if (atomic_compare_exchange_weak_explicit(&p->homes[t], &w, taken, memory_order_acq_rel, memory_order_acquire))
      return own ? next : end - 1;
  }
}

/* The next chunk of job g for thread `self`, or -1 when none is left. */
static int claim_chunk(tj_thread_pool_t *p, int self, uint64_t g) {
  int i = take_chunk(p, self, g, true);
  while (i < 0) {
    int victim = -1, most = 0;
    for (int t = 0; t < p->n_homes; t++) {
      uint64_t w = atomic_load_explicit(&p->homes[t], memory_order_relaxed);
      if (home_generation(w) == (uint32_t)g && home_end(w) - home_next(w) > most)
        most = home_end(w) - home_next(w), victim = t;
    }
    if (victim < 0) return -1;
    i = take_chunk(p, victim, g, false);
  }
  return i;
}

/* ---------------- running chunks ---------------- */

static void run_chunk(tj_parallel_body_t body, void *ctx, int64_t begin, int64_t end) {
  bool was_inside = inside_chunk;
  inside_chunk = true;
  body(begin, end, ctx);
  inside_chunk = was_inside;
}

/* Claims and runs chunks of job g until none is left. The job's fields are read
 * before each claim and used only when it succeeds (see the top of the file). */
static void run_chunks(tj_thread_pool_t *p, int self, uint64_t g) {
  for (;;) {
    tj_parallel_body_t body = atomic_load_explicit(&p->body, memory_order_relaxed);
    void *ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
    int64_t n = atomic_load_explicit(&p->n, memory_order_relaxed);
    int n_chunks = atomic_load_explicit(&p->n_chunks, memory_order_relaxed);
    int i = claim_chunk(p, self, g);
    if (i < 0) return;
    int64_t begin, end;
    tj_thread_pool_chunk(n, n_chunks, i, &begin, &end);
    int64_t wall0 = p->trace ? now_ns() : 0, cpu0 = p->trace ? thread_cpu_ns() : 0;
    run_chunk(body, ctx, begin, end);
    if (p->trace) trace_chunk(p, self, begin, end, wall0, now_ns() - wall0, thread_cpu_ns() - cpu0);
    /* seq_cst, against the caller's store of caller_waiting and load of chunks_done */
    int done = atomic_fetch_add(&p->chunks_done, 1) + 1;
    if (done == n_chunks && atomic_load(&p->caller_waiting)) {
      pthread_mutex_lock(&p->lock);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->lock);
    }
  }
}

/* Sleeps until the generation differs from `seen` or the pool stops. */
static void sleep_for_job(tj_thread_pool_t *p, uint64_t seen) {
  pthread_mutex_lock(&p->lock);
  /* Count ourselves a sleeper before re-checking (seq_cst both), so that a publisher
   * that bumps the generation after our check sees us and broadcasts. */
  atomic_fetch_add(&p->sleepers, 1);
  while (!atomic_load(&p->stop) && atomic_load(&p->generation) == seen) pthread_cond_wait(&p->wake, &p->lock);
  atomic_fetch_sub(&p->sleepers, 1);
  pthread_mutex_unlock(&p->lock);
}

static void *worker_main(void *arg) {
  tj_thread_pool_t *p = arg;
  uint64_t seen = p->start_generation; /* written before pthread_create */
  int self = atomic_fetch_add(&p->next_worker_id, 1);
  for (;;) {
    if (atomic_load_explicit(&p->generation, memory_order_acquire) == seen && !atomic_load(&p->stop)) {
      spin_for_job(p, seen);
      if (atomic_load_explicit(&p->generation, memory_order_acquire) == seen) sleep_for_job(p, seen);
    }
    if (atomic_load(&p->stop)) break;
    seen = atomic_load_explicit(&p->generation, memory_order_acquire);
    run_chunks(p, self, seen);
  }
  return NULL;
}

/* Starts the workers; caller holds `dispatch`. A worker that cannot be created is
 * simply missing: the others (and the caller) take its chunks. */
static void start_workers(tj_thread_pool_t *p) {
  p->started = true;
  int want = p->n_threads - 1;
  p->workers = tj_calloc((size_t)want, sizeof *p->workers);
  if (!p->workers) return;
  atomic_store(&p->next_worker_id, 1);
  /* Every worker starts from the current generation (no job is running now). */
  p->start_generation = atomic_load(&p->generation);
  pthread_attr_t attr;
  bool have_attr = pthread_attr_init(&attr) == 0;
  if (have_attr) pthread_attr_setstacksize(&attr, WORKER_STACK);
  /* Workers inherit a full signal mask: the host's signals go to the host's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (int i = 0; i < want; i++) {
    if (pthread_create(&p->workers[p->n_started], have_attr ? &attr : NULL, worker_main, p) != 0) break;
    p->n_started++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (have_attr) pthread_attr_destroy(&attr);
}

/* ---------------- the pool ---------------- */

tj_status_t *tj_thread_pool_create(int num_threads, tj_thread_pool_t **out_pool) {
  int n = 0;
  TJ_RETURN_IF_ERROR(tj_thread_pool_resolve_threads(num_threads, &n));
  tj_thread_pool_t *p = tj_calloc(1, sizeof *p);
  if (!p) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  p->n_threads = n;
  p->n_homes = n;
  p->homes = tj_calloc((size_t)n, sizeof *p->homes);
  if (!p->homes) {
    tj_free(p);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  }
  for (int t = 0; t < n; t++) atomic_init(&p->homes[t], 0);
  pthread_mutex_init(&p->dispatch, NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  atomic_init(&p->body, NULL);
  atomic_init(&p->ctx, NULL);
  atomic_init(&p->n, 0);
  atomic_init(&p->n_chunks, 0);
  atomic_init(&p->chunks_done, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->stop, false);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->caller_waiting, false);
  atomic_init(&p->next_worker_id, 1);
  const char *trace = getenv("TVMJIT_POOL_TRACE");
  if (trace && *trace && strcmp(trace, "0") != 0) p->trace = tj_calloc((size_t)n, sizeof *p->trace); /* NULL: off */
  *out_pool = p;
  return NULL;
}

void tj_thread_pool_free(tj_thread_pool_t *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  atomic_store(&p->stop, true); /* ends the spins too */
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->n_started; i++) pthread_join(p->workers[i], NULL);
  tj_free(p->workers);
  tj_free(p->homes);
  tj_free(p->trace);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->dispatch);
  tj_free(p);
}

int tj_thread_pool_num_threads(const tj_thread_pool_t *p) { return p ? p->n_threads : 1; }

static void run_inline(int64_t n, tj_parallel_body_t body, void *ctx) {
  bool was_inside = inside_chunk;
  inside_chunk = true;
  body(0, n, ctx);
  inside_chunk = was_inside;
}

/* Writes the job and publishes it as generation g (the caller, holding `dispatch`). */
static void publish(tj_thread_pool_t *p, uint64_t g, int64_t n, int n_chunks, tj_parallel_body_t body, void *ctx) {
  atomic_store_explicit(&p->body, body, memory_order_relaxed);
  atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
  atomic_store_explicit(&p->n, n, memory_order_relaxed);
  atomic_store_explicit(&p->n_chunks, n_chunks, memory_order_relaxed);
  atomic_store_explicit(&p->chunks_done, 0, memory_order_relaxed);
  assign_homes(p, g, n_chunks);
  if (p->trace) {
    memset(p->trace, 0, sizeof *p->trace * (size_t)p->n_threads);
    p->trace_publish_ns = now_ns();
  }
  atomic_store(&p->generation, g); /* seq_cst: against a sleeper's count and check */
  int asleep = atomic_load(&p->sleepers);
  if (p->trace) p->trace_asleep = asleep;
  if (asleep > 0) {
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
  }
}

/* Returns once all n_chunks chunks are done: spins, then sleeps on done_cv. */
static void wait_for_done(tj_thread_pool_t *p, int n_chunks) {
  if (atomic_load_explicit(&p->chunks_done, memory_order_acquire) >= n_chunks) return;
  spin_for_done(p, n_chunks);
  if (atomic_load_explicit(&p->chunks_done, memory_order_acquire) >= n_chunks) return;
  pthread_mutex_lock(&p->lock);
  atomic_store(&p->caller_waiting, true); /* seq_cst: against the last chunk's count */
  while (atomic_load(&p->chunks_done) < n_chunks) pthread_cond_wait(&p->done_cv, &p->lock);
  atomic_store(&p->caller_waiting, false);
  pthread_mutex_unlock(&p->lock);
}

void tj_thread_pool_parallel_for(tj_thread_pool_t *p, int64_t n, tj_parallel_body_t body, void *ctx) {
  if (n <= 0) return;
  if (!p || p->n_threads <= 1 || n == 1 || inside_chunk || pthread_mutex_trylock(&p->dispatch) != 0) {
    run_inline(n, body, ctx);
    return;
  }
  if (!p->started) start_workers(p);
  int n_chunks = tj_thread_pool_num_chunks(n, p->n_threads);
  uint64_t g = atomic_load_explicit(&p->generation, memory_order_relaxed) + 1;
  publish(p, g, n, n_chunks, body, ctx);
  run_chunks(p, 0, g);
  wait_for_done(p, n_chunks);
  if (p->trace) print_trace(p, n, n_chunks);
  pthread_mutex_unlock(&p->dispatch);
}

tj_thread_pool_t *tj_thread_pool_current(void) { return current_pool; }

tj_thread_pool_t *tj_thread_pool_set_current(tj_thread_pool_t *pool) {
  tj_thread_pool_t *prev = current_pool;
  current_pool = pool;
  return prev;
}
