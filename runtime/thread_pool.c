/* The thread pool (see thread_pool.h for the contract and why not OpenMP).
 *
 * One job at a time per pool: the caller that wins `dispatch` (a trylock; losers run
 * inline) publishes the job under `lock` by bumping `generation`, then claims chunks
 * like any worker. A chunk is claimed under `lock`, which also guards the job fields,
 * so a worker that wakes late can never run a chunk of one job with another job's
 * body: everything it reads about a job it reads together with the claim. Completion
 * is counted under `lock` too; the caller returns once every chunk is done, and no
 * worker touches the job after its last chunk, so the job may live on the caller's
 * stack. Waiting (workers for a job, the caller for the last chunk) spins for a few
 * tens of microseconds, enough to catch the next kernel of a model run, then sleeps
 * on a condition variable; the spin reads atomic mirrors, never the guarded fields. */
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

struct tj_thread_pool {
  int n_threads;               /* caller included */
  pthread_mutex_t dispatch;    /* held by the caller running a job on this pool */
  /* Set under `dispatch`: */
  pthread_t *workers;
  int n_started;
  bool started;                /* workers were started (or that failed: run with fewer) */
  uint64_t start_generation;

  pthread_mutex_t lock;        /* guards everything below that is not atomic */
  pthread_cond_t wake;         /* a new job or stop */
  pthread_cond_t done_cv;      /* the last chunk of the job finished */
  bool stop;
  uint64_t generation;         /* bumped per job */
  int sleepers;                /* workers in (or about to enter) wait on `wake` */
  bool caller_waiting;
  tj_parallel_body_t body;
  void *ctx;
  int64_t n;
  int n_chunks;
  /* Chunk claiming: thread t (the caller is 0, workers 1..) owns the contiguous chunks
   * [home_next[t], home_end[t]) and runs them from the front; a thread whose range is
   * empty takes the last chunk of the range with the most left. Without delays each
   * thread runs the same rows in every kernel of a run, so what one kernel writes the
   * next reads from the same core's cache. */
  int *home_next, *home_end;
  int n_homes;
  int next_worker_id;
  atomic_int chunks_done;      /* written under `lock`; read by the spinning caller */
  atomic_uint_fast64_t generation_hint; /* mirror of `generation` (and stop) for spinners */
  /* TVMJIT_POOL_TRACE set: per job and thread, what it ran (under `lock`); else NULL. */
  struct thread_trace *trace;
  int64_t trace_publish_ns;
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

/* Spins until the generation hint differs from `seen`, for at most SPIN_NS. */
static void spin_for_job(tj_thread_pool_t *p, uint64_t seen) {
  int64_t deadline = now_ns() + IDLE_SPIN_NS;
  for (int i = 1;; i++) {
    if (atomic_load_explicit(&p->generation_hint, memory_order_relaxed) != seen) return;
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > deadline) return;
  }
}

static void spin_for_done(tj_thread_pool_t *p, int n_chunks) {
  int64_t deadline = now_ns() + DONE_SPIN_NS;
  for (int i = 1;; i++) {
    if (atomic_load_explicit(&p->chunks_done, memory_order_relaxed) >= n_chunks) return;
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > deadline) return;
  }
}

/* ---------------- the trace ---------------- */

static void trace_chunk(tj_thread_pool_t *p, int self, int i, int64_t start_ns, int64_t wall_ns, int64_t cpu_ns) {
  thread_trace_t *t = &p->trace[self];
  int64_t begin, end;
  tj_thread_pool_chunk(p->n, p->n_chunks, i, &begin, &end);
  if (t->chunks++ == 0) t->first_ns = start_ns - p->trace_publish_ns;
  t->iters += end - begin;
  t->wall_ns += wall_ns;
  t->cpu_ns += cpu_ns;
}

/* One line per job (format in thread_pool.h); under `lock`, after the last chunk. */
static void print_trace(const tj_thread_pool_t *p) {
  fprintf(stderr, "pool n=%lld chunks=%d wall_us=%.1f", (long long)p->n, p->n_chunks,
          (double)(now_ns() - p->trace_publish_ns) / 1e3);
  for (int t = 0; t < p->n_threads; t++) {
    const thread_trace_t *tt = &p->trace[t];
    fprintf(stderr, " | t%d chunks=%lld iters=%lld wall_us=%.1f cpu_us=%.1f first_us=%.1f", t, (long long)tt->chunks,
            (long long)tt->iters, (double)tt->wall_ns / 1e3, (double)tt->cpu_ns / 1e3, (double)tt->first_ns / 1e3);
  }
  fputc('\n', stderr);
}

/* ---------------- running chunks ---------------- */

static void run_chunk(tj_parallel_body_t body, void *ctx, int64_t n, int n_chunks, int i) {
  int64_t begin, end;
  tj_thread_pool_chunk(n, n_chunks, i, &begin, &end);
  bool was_inside = inside_chunk;
  inside_chunk = true;
  body(begin, end, ctx);
  inside_chunk = was_inside;
}

/* Splits the job's chunks into the threads' home ranges (under `lock`). */
static void assign_homes(tj_thread_pool_t *p) {
  for (int t = 0; t < p->n_homes; t++) {
    p->home_next[t] = tj_thread_pool_home_chunk(p->n_chunks, p->n_homes, t);
    p->home_end[t] = tj_thread_pool_home_chunk(p->n_chunks, p->n_homes, t + 1);
  }
}

/* The next chunk for thread `self` (under `lock`), or -1 when none is left. */
static int claim_chunk(tj_thread_pool_t *p, int self) {
  if (p->home_next[self] < p->home_end[self]) return p->home_next[self]++;
  int victim = -1, most = 0;
  for (int t = 0; t < p->n_homes; t++)
    if (p->home_end[t] - p->home_next[t] > most) most = p->home_end[t] - p->home_next[t], victim = t;
  return victim < 0 ? -1 : --p->home_end[victim];
}

/* Claims and runs chunks of the current job until none is left. Called and returns
 * with p->lock held; releases it while a chunk runs. */
static void run_chunks_locked(tj_thread_pool_t *p, int self) {
  for (int i; (i = claim_chunk(p, self)) >= 0;) {
    tj_parallel_body_t body = p->body;
    void *ctx = p->ctx;
    int64_t n = p->n;
    int n_chunks = p->n_chunks;
    pthread_mutex_unlock(&p->lock);
    int64_t wall0 = p->trace ? now_ns() : 0, cpu0 = p->trace ? thread_cpu_ns() : 0;
    run_chunk(body, ctx, n, n_chunks, i);
    int64_t wall1 = p->trace ? now_ns() : 0, cpu1 = p->trace ? thread_cpu_ns() : 0;
    pthread_mutex_lock(&p->lock);
    if (p->trace) trace_chunk(p, self, i, wall0, wall1 - wall0, cpu1 - cpu0);
    int done = atomic_load_explicit(&p->chunks_done, memory_order_relaxed) + 1;
    atomic_store_explicit(&p->chunks_done, done, memory_order_release);
    if (done == n_chunks && p->caller_waiting) pthread_cond_signal(&p->done_cv);
  }
}

static void *worker_main(void *arg) {
  tj_thread_pool_t *p = arg;
  pthread_mutex_lock(&p->lock);
  int self = p->next_worker_id++;
  uint64_t seen = p->start_generation;
  for (;;) {
    while (!p->stop && p->generation == seen) {
      pthread_mutex_unlock(&p->lock);
      spin_for_job(p, seen);
      pthread_mutex_lock(&p->lock);
      /* Count ourselves a sleeper before re-checking, so a publisher that bumps the
       * generation after our check sees us and broadcasts. */
      p->sleepers++;
      while (!p->stop && p->generation == seen) pthread_cond_wait(&p->wake, &p->lock);
      p->sleepers--;
    }
    if (p->stop) break;
    seen = p->generation;
    run_chunks_locked(p, self);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Starts the workers; caller holds `dispatch`. A worker that cannot be created is
 * simply missing: the others (and the caller) take its chunks. */
static void start_workers(tj_thread_pool_t *p) {
  p->started = true;
  int want = p->n_threads - 1;
  p->workers = tj_calloc((size_t)want, sizeof *p->workers);
  if (!p->workers) return;
  pthread_mutex_lock(&p->lock);
  p->start_generation = p->generation;
  p->next_worker_id = 1;
  pthread_mutex_unlock(&p->lock);
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
  p->home_next = tj_calloc((size_t)n, sizeof *p->home_next);
  p->home_end = tj_calloc((size_t)n, sizeof *p->home_end);
  if (!p->home_next || !p->home_end) {
    tj_free(p->home_next);
    tj_free(p->home_end);
    tj_free(p);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  }
  pthread_mutex_init(&p->dispatch, NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  atomic_init(&p->chunks_done, 0);
  atomic_init(&p->generation_hint, 0);
  const char *trace = getenv("TVMJIT_POOL_TRACE");
  if (trace && *trace && strcmp(trace, "0") != 0) p->trace = tj_calloc((size_t)n, sizeof *p->trace); /* NULL: off */
  *out_pool = p;
  return NULL;
}

void tj_thread_pool_free(tj_thread_pool_t *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  atomic_fetch_add_explicit(&p->generation_hint, 1, memory_order_relaxed); /* end the spins */
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->n_started; i++) pthread_join(p->workers[i], NULL);
  tj_free(p->workers);
  tj_free(p->home_next);
  tj_free(p->home_end);
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

void tj_thread_pool_parallel_for(tj_thread_pool_t *p, int64_t n, tj_parallel_body_t body, void *ctx) {
  if (n <= 0) return;
  if (!p || p->n_threads <= 1 || n == 1 || inside_chunk || pthread_mutex_trylock(&p->dispatch) != 0) {
    run_inline(n, body, ctx);
    return;
  }
  if (!p->started) start_workers(p);
  int n_chunks = tj_thread_pool_num_chunks(n, p->n_threads);
  pthread_mutex_lock(&p->lock);
  p->body = body;
  p->ctx = ctx;
  p->n = n;
  p->n_chunks = n_chunks;
  assign_homes(p);
  if (p->trace) {
    memset(p->trace, 0, sizeof *p->trace * (size_t)p->n_threads);
    p->trace_publish_ns = now_ns();
  }
  atomic_store_explicit(&p->chunks_done, 0, memory_order_relaxed);
  p->generation++;
  atomic_store_explicit(&p->generation_hint, p->generation, memory_order_relaxed);
  if (p->sleepers > 0) pthread_cond_broadcast(&p->wake);
  run_chunks_locked(p, 0);
  while (atomic_load_explicit(&p->chunks_done, memory_order_relaxed) < n_chunks) {
    pthread_mutex_unlock(&p->lock);
    spin_for_done(p, n_chunks);
    pthread_mutex_lock(&p->lock);
    p->caller_waiting = true;
    while (atomic_load_explicit(&p->chunks_done, memory_order_relaxed) < n_chunks)
      pthread_cond_wait(&p->done_cv, &p->lock);
    p->caller_waiting = false;
  }
  if (p->trace) print_trace(p);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&p->dispatch);
}

tj_thread_pool_t *tj_thread_pool_current(void) { return current_pool; }

tj_thread_pool_t *tj_thread_pool_set_current(tj_thread_pool_t *pool) {
  tj_thread_pool_t *prev = current_pool;
  current_pool = pool;
  return prev;
}
