/* The disk cache of compiled kernel objects: see jit/cache.h for the format and the
 * rules. Never prints: warnings and debug lines go to the lookup's message sink. */
#include "jit/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "support/alloc.h"
#include "support/strbuf.h"

/* ---------------------------------------------------------------- entry format */

#define ENTRY_MAGIC "TVMJITC\x1a" /* 8 bytes; \x1a stops `type` on other systems */
#define ENTRY_VERSION 2u /* 2: the kernel's metadata between symbol and object */
#define ENTRY_SUFFIX ".tjo"
#define RUN_LOG "runs.log"
#define TMP_PREFIX ".tmp-"
/* Larger files are not objects we wrote: refuse before reading them. */
#define ENTRY_MAX_BYTES ((uint64_t)1 << 30)

/* Native byte order: the key includes the target triple, so a file never crosses to a
 * host of the other order under the same name. */
typedef struct entry_header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint8_t key[16];
  uint64_t payload_size; /* symbol + metadata + object */
  uint64_t checksum;     /* XXH3-64 of the header (this field zero) and the payload */
  uint32_t n_buffers, n_scalars;
  uint32_t symbol_size;
  uint32_t meta_size; /* tj_jit_object_t.meta, opaque here */
} entry_header_t;
_Static_assert(sizeof(entry_header_t) == 64, "the entry header is 64 bytes");

static uint64_t entry_checksum(const entry_header_t *h, const void *payload, size_t n) {
  entry_header_t copy = *h;
  copy.checksum = 0;
  XXH64_hash_t seed = XXH3_64bits(&copy, sizeof copy);
  return XXH3_64bits_withSeed(payload, n, seed);
}

static void key_hex(const uint8_t key[16], char out[33]) {
  for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", key[i]);
}

char *tj_cache_entry_path(const char *dir, const uint8_t key[16]) {
  char hex[33];
  key_hex(key, hex);
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s/%s" ENTRY_SUFFIX, dir, hex);
  return tj_strbuf_take(&sb);
}

/* "<32 hex>.tjo": only such files are ours to count, evict and clear. */
static bool is_entry_name(const char *name) {
  size_t n = strlen(name);
  if (n != 32 + strlen(ENTRY_SUFFIX) || strcmp(name + 32, ENTRY_SUFFIX) != 0) return false;
  for (int i = 0; i < 32; i++)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
  return true;
}

static bool symbol_ok(const char *s, size_t n) {
  if (n == 0 || n > 4096) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return true;
}

/* Checks a whole entry read into memory; on success fills *out (tj_malloc'd fields). */
static bool parse_entry(const unsigned char *buf, size_t size, const uint8_t key[16], tj_jit_object_t *out, char *why,
                        size_t why_len) {
  entry_header_t h;
  if (size < sizeof h) return snprintf(why, why_len, "truncated (%zu bytes; the header alone is %zu)", size, sizeof h), false;
  memcpy(&h, buf, sizeof h);
  if (memcmp(h.magic, ENTRY_MAGIC, 8) != 0) return snprintf(why, why_len, "not a tvmjit cache entry (bad magic)"), false;
  if (h.version != ENTRY_VERSION)
    return snprintf(why, why_len, "format version %" PRIu32 ", this tvmjit reads version %u", h.version, ENTRY_VERSION), false;
  if (h.header_size != sizeof h) return snprintf(why, why_len, "bad header size %" PRIu32, h.header_size), false;
  if (memcmp(h.key, key, 16) != 0) return snprintf(why, why_len, "its key does not match its file name"), false;
  if (h.payload_size != size - sizeof h)
    return snprintf(why, why_len, "%s: the header announces %" PRIu64 " bytes of payload, the file has %zu",
                    h.payload_size > size - sizeof h ? "truncated" : "damaged", h.payload_size, size - sizeof h),
           false;
  const unsigned char *payload = buf + sizeof h;
  if (entry_checksum(&h, payload, h.payload_size) != h.checksum) return snprintf(why, why_len, "damaged (checksum mismatch)"), false;
  /* A matching checksum makes the rest a writer's bug, but check it anyway. */
  uint64_t head = (uint64_t)h.symbol_size + h.meta_size;
  size_t obj_size = head <= h.payload_size ? h.payload_size - head : 0;
  if (head > h.payload_size || !symbol_ok((const char *)payload, h.symbol_size) || obj_size < 4 ||
      memcmp(payload + head, "\x7f" "ELF", 4) != 0 || h.n_buffers > 65536 || h.n_scalars > 65536)
    return snprintf(why, why_len, "malformed contents"), false;
  char *symbol = tj_malloc(h.symbol_size + 1);
  void *meta = tj_malloc(h.meta_size ? h.meta_size : 1);
  void *bytes = tj_malloc(obj_size);
  if (!symbol || !meta || !bytes) {
    tj_free(symbol);
    tj_free(meta);
    tj_free(bytes);
    return snprintf(why, why_len, "out of memory reading it"), false;
  }
  memcpy(symbol, payload, h.symbol_size);
  symbol[h.symbol_size] = '\0';
  memcpy(meta, payload + h.symbol_size, h.meta_size);
  memcpy(bytes, payload + head, obj_size);
  *out = (tj_jit_object_t){symbol, NULL, bytes, obj_size, (int)h.n_buffers, (int)h.n_scalars, meta, h.meta_size};
  return true;
}

static bool read_all(int fd, void *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t r = read(fd, (char *)buf + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t r = write(fd, (const char *)buf + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += (size_t)r;
  }
  return true;
}

/* 1: loaded; 0: no entry; -1: an entry that cannot be used (`why` says why). */
static int read_entry(const char *path, const uint8_t key[16], tj_jit_object_t *out, char *why, size_t why_len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    snprintf(why, why_len, "cannot open it: %s", strerror(errno));
    return -1;
  }
  struct stat st;
  int rc = -1;
  unsigned char *buf = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) snprintf(why, why_len, "not a regular file");
  else if ((uint64_t)st.st_size > ENTRY_MAX_BYTES) snprintf(why, why_len, "too large (%lld bytes)", (long long)st.st_size);
  else if (!(buf = tj_malloc((size_t)st.st_size + 1))) snprintf(why, why_len, "out of memory reading it");
  else if (!read_all(fd, buf, (size_t)st.st_size)) snprintf(why, why_len, "cannot read it (truncated while reading?)");
  else rc = parse_entry(buf, (size_t)st.st_size, key, out, why, why_len) ? 1 : -1;
  tj_free(buf);
  close(fd);
  return rc;
}

/* ---------------------------------------------------------------- the cache */

struct tj_disk_cache {
  char *dir;
  uint64_t max_bytes;
  pthread_mutex_t lock; /* guards the fields below */
  uint64_t hits, misses;
  bool dir_ready;         /* created (or found) this process */
  bool warned_unwritable; /* one warning per cache for a directory we cannot write */
};

void tj_jit_say(const tj_jit_messages_t *m, tj_jit_msg_kind_t kind, const char *fmt, ...) {
  if (!m || !m->emit || (kind == TJ_JIT_MSG_DEBUG && !m->debug)) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  m->emit(m->ctx, kind, buf);
}

/* The debug line of one lookup: the key and a short hash of each part, so two runs'
 * lines show which part changed when a kernel missed. */
static void say_lookup(const tj_jit_cache_lookup_t *lk, const uint8_t key[16], const char *outcome) {
  if (!lk->messages || !lk->messages->debug) return;
  char hex[33], parts[512];
  key_hex(key, hex);
  size_t n = 0;
  for (int i = 0; i < lk->n_parts && n < sizeof parts; i++)
    n += (size_t)snprintf(parts + n, sizeof parts - n, "%s%s=%08" PRIx32, i ? " " : "", lk->parts[i].name,
                          (uint32_t)(XXH3_64bits(lk->parts[i].value, strlen(lk->parts[i].value)) >> 32));
  tj_jit_say(lk->messages, TJ_JIT_MSG_DEBUG, "cache: %s: %s, key %s [%s]", lk->name, outcome, hex, parts);
}

static bool mkdir_p(const char *path) {
  char *p = tj_strdup(path);
  if (!p) return errno = ENOMEM, false;
  bool ok = true;
  for (char *s = p + 1; ok; s++) {
    if (*s != '/' && *s != '\0') continue;
    char saved = *s;
    *s = '\0';
    ok = mkdir(p, 0700) == 0 || errno == EEXIST;
    if (ok && errno == EEXIST) {
      struct stat st;
      ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
      if (!ok) errno = ENOTDIR;
    }
    *s = saved;
    if (saved == '\0') break;
  }
  tj_free(p);
  return ok;
}

/* Creates the directory once per cache; warns once when it cannot. */
static bool ensure_dir(tj_disk_cache_t *c, const tj_jit_cache_lookup_t *lk) {
  pthread_mutex_lock(&c->lock);
  bool ready = c->dir_ready;
  if (!ready) {
    errno = 0;
    ready = c->dir_ready = mkdir_p(c->dir);
    if (!ready && !c->warned_unwritable) {
      c->warned_unwritable = true;
      tj_jit_say(lk->messages, TJ_JIT_MSG_WARNING,
                 "cache directory %s cannot be created (%s); kernels are compiled but not cached (set TVMJIT_CACHE_DIR "
                 "to a writable directory, or TVMJIT_CACHE=0)",
                 c->dir, strerror(errno));
    }
  }
  pthread_mutex_unlock(&c->lock);
  return ready;
}

static void count(tj_disk_cache_t *c, bool hit) {
  pthread_mutex_lock(&c->lock);
  if (hit) c->hits++;
  else c->misses++;
  pthread_mutex_unlock(&c->lock);
}

/* The lookup's key: the driver's, or hashed here when it gave none. */
static const uint8_t *key_of(const tj_jit_cache_lookup_t *lk, uint8_t own[16]) {
  if (lk->key) return lk->key;
  tj_jit_cache_key_hash(lk->parts, lk->n_parts, own);
  return own;
}

static bool disk_load(void *ctx, const tj_jit_cache_lookup_t *lk, tj_jit_object_t *out) {
  tj_disk_cache_t *c = ctx;
  uint8_t own[16];
  const uint8_t *key = key_of(lk, own);
  char *path = tj_cache_entry_path(c->dir, key);
  char why[512] = "";
  tj_jit_object_t obj = {0};
  int r = path ? read_entry(path, key, &obj, why, sizeof why) : 0;
  if (r < 0)
    tj_jit_say(lk->messages, TJ_JIT_MSG_WARNING,
               "cache entry %s for kernel '%s' is unusable: %s; recompiling and replacing it", path, lk->name, why);
  if (r > 0) (void)utimensat(AT_FDCWD, path, NULL, 0); /* least recently used = oldest mtime */
  count(c, r > 0);
  say_lookup(lk, key, r > 0 ? "hit" : r < 0 ? "miss (unusable entry)" : "miss (no entry)");
  tj_free(path);
  if (r > 0) *out = obj;
  return r > 0;
}

/* Writes to a temporary file in the directory and renames it over `path`. */
static bool write_atomically(const char *dir, const char *path, const void *a, size_t na, const void *b, size_t nb,
                             char *why, size_t why_len) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s/" TMP_PREFIX "XXXXXX", dir);
  char *tmp = tj_strbuf_take(&sb);
  if (!tmp) return snprintf(why, why_len, "out of memory"), false;
  int fd = mkostemp(tmp, O_CLOEXEC);
  bool ok = fd >= 0;
  if (!ok) snprintf(why, why_len, "cannot create a temporary file: %s", strerror(errno));
  if (ok && !(ok = write_all(fd, a, na) && write_all(fd, b, nb))) snprintf(why, why_len, "write: %s", strerror(errno));
  if (fd >= 0 && close(fd) != 0 && ok) ok = false, snprintf(why, why_len, "close: %s", strerror(errno));
  if (ok && rename(tmp, path) != 0) ok = false, snprintf(why, why_len, "rename: %s", strerror(errno));
  if (!ok && fd >= 0) unlink(tmp);
  tj_free(tmp);
  return ok;
}

typedef struct dir_entry {
  char *name;
  uint64_t size;
  struct timespec mtime;
} dir_entry_t;

typedef struct dir_list {
  dir_entry_t *v;
  int n, cap;
  uint64_t total;
} dir_list_t;

static void dir_list_free(dir_list_t *l) {
  for (int i = 0; i < l->n; i++) tj_free(l->v[i].name);
  tj_free(l->v);
}

/* The entries of `dir`; stray temporary files older than an hour (a writer that died)
 * are removed on the way when `sweep`. Returns false if the directory cannot be read. */
static bool list_entries(const char *dir, bool sweep, dir_list_t *out) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(dir);
  if (!d) return false;
  time_t now = time(NULL);
  for (struct dirent *de; (de = readdir(d));) {
    bool entry = is_entry_name(de->d_name), temp = strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
    struct stat st;
    if ((!entry && !temp) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (temp) {
      if (sweep && now - st.st_mtime > 3600) unlinkat(dirfd(d), de->d_name, 0);
      continue;
    }
    if (out->n == out->cap) {
      int cap = out->cap ? out->cap * 2 : 64;
      dir_entry_t *p = tj_realloc(out->v, sizeof *p * (size_t)cap);
      if (!p) break;
      out->v = p;
      out->cap = cap;
    }
    char *name = tj_strdup(de->d_name);
    if (!name) break;
    out->v[out->n++] = (dir_entry_t){name, (uint64_t)st.st_size, st.st_mtim};
    out->total += (uint64_t)st.st_size;
  }
  closedir(d);
  return true;
}

static int older_first(const void *x, const void *y) {
  const dir_entry_t *a = x, *b = y;
  if (a->mtime.tv_sec != b->mtime.tv_sec) return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
  return (a->mtime.tv_nsec > b->mtime.tv_nsec) - (a->mtime.tv_nsec < b->mtime.tv_nsec);
}

/* Removes least recently used entries until the total fits the cap; never `keep` (the
 * entry just written). Concurrent evictions may race: a vanished file is fine. */
static void evict(tj_disk_cache_t *c, const char *keep) {
  dir_list_t l;
  if (!list_entries(c->dir, true, &l)) return;
  if (l.total > c->max_bytes) {
    qsort(l.v, (size_t)l.n, sizeof *l.v, older_first);
    const char *keep_name = strrchr(keep, '/') ? strrchr(keep, '/') + 1 : keep;
    for (int i = 0; i < l.n && l.total > c->max_bytes; i++) {
      if (strcmp(l.v[i].name, keep_name) == 0) continue;
      tj_strbuf_t sb;
      tj_strbuf_init(&sb);
      tj_strbuf_printf(&sb, "%s/%s", c->dir, l.v[i].name);
      char *p = tj_strbuf_take(&sb);
      if (p && (unlink(p) == 0 || errno == ENOENT)) l.total -= l.v[i].size;
      tj_free(p);
    }
  }
  dir_list_free(&l);
}

static void disk_store(void *ctx, const tj_jit_cache_lookup_t *lk, const tj_jit_object_t *obj) {
  tj_disk_cache_t *c = ctx;
  if (!ensure_dir(c, lk)) return;
  uint8_t own[16];
  const uint8_t *key = key_of(lk, own);
  char *path = tj_cache_entry_path(c->dir, key);
  size_t sym_len = strlen(obj->symbol), meta_len = obj->meta ? obj->meta_size : 0;
  unsigned char *payload = meta_len <= UINT32_MAX ? tj_malloc(sym_len + meta_len + obj->size) : NULL;
  char why[512] = "out of memory";
  bool ok = path && payload;
  if (ok) {
    memcpy(payload, obj->symbol, sym_len);
    if (meta_len) memcpy(payload + sym_len, obj->meta, meta_len);
    memcpy(payload + sym_len + meta_len, obj->bytes, obj->size);
    entry_header_t h = {.version = ENTRY_VERSION, .header_size = sizeof h,
                        .payload_size = sym_len + meta_len + obj->size, .n_buffers = (uint32_t)obj->n_buffers,
                        .n_scalars = (uint32_t)obj->n_scalars, .symbol_size = (uint32_t)sym_len,
                        .meta_size = (uint32_t)meta_len};
    memcpy(h.magic, ENTRY_MAGIC, 8);
    memcpy(h.key, key, 16);
    h.checksum = entry_checksum(&h, payload, h.payload_size);
    ok = write_atomically(c->dir, path, &h, sizeof h, payload, h.payload_size, why, sizeof why);
  }
  if (!ok)
    tj_jit_say(lk->messages, TJ_JIT_MSG_WARNING,
               "cannot write the cache entry of kernel '%s' in %s (%s); it is compiled but not cached", lk->name,
               c->dir, why);
  else tj_jit_say(lk->messages, TJ_JIT_MSG_DEBUG, "cache: %s: stored %s", lk->name, path);
  if (ok) evict(c, path);
  tj_free(payload);
  tj_free(path);
}

/* ---------------------------------------------------------------- open, close, defaults */

static char *join(const char *a, const char *b) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_strbuf_printf(&sb, "%s/%s", a, b);
  return tj_strbuf_take(&sb);
}

tj_status_t *tj_cache_default_dir(char **out_dir) {
  const char *env = getenv("TVMJIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char *dir = NULL;
  if (env && *env) dir = tj_strdup(env);
  else if (xdg && xdg[0] == '/') dir = join(xdg, "tvmjit"); /* XDG: relative values are ignored */
  else if (home && *home) dir = join(home, ".cache/tvmjit");
  else
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "no cache directory: set TVMJIT_CACHE_DIR (or HOME), or disable the cache with TVMJIT_CACHE=0");
  if (!dir) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  *out_dir = dir;
  return NULL;
}

tj_status_t *tj_cache_default_max_bytes(uint64_t *out_bytes) {
  const char *env = getenv("TVMJIT_CACHE_MAX_BYTES");
  if (!env || !*env) return *out_bytes = TJ_CACHE_DEFAULT_MAX_BYTES, NULL;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(env, &end, 10);
  int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
  if (shift) end++;
  if (env[0] == '-' || end == env || *end || errno || v > (ULLONG_MAX >> shift))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT,
                         "TVMJIT_CACHE_MAX_BYTES='%s': expected a byte count such as 268435456, 256M or 1G", env);
  *out_bytes = (uint64_t)v << shift;
  return NULL;
}

tj_status_t *tj_disk_cache_open(const tj_disk_cache_options_t *options, tj_disk_cache_t **out_cache) {
  tj_disk_cache_t *c = tj_calloc(1, sizeof *c);
  if (!c) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_status_t *s = NULL;
  if (options && options->dir && *options->dir) c->dir = tj_strdup(options->dir);
  else s = tj_cache_default_dir(&c->dir);
  if (!s && !c->dir) s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory");
  c->max_bytes = options ? options->max_bytes : 0;
  if (!s && !c->max_bytes) s = tj_cache_default_max_bytes(&c->max_bytes);
  if (s) {
    tj_free(c->dir);
    tj_free(c);
    return tj_status_annotate(s, "opening the kernel cache");
  }
  pthread_mutex_init(&c->lock, NULL);
  *out_cache = c;
  return NULL;
}

/* Keeps the run log short: past 64 KiB, only its last lines are kept. */
static void trim_run_log(const char *path, const char *dir) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size <= 65536) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char tail[4096];
  bool ok = lseek(fd, st.st_size - (off_t)sizeof tail, SEEK_SET) >= 0 && read_all(fd, tail, sizeof tail);
  close(fd);
  const char *nl = ok ? memchr(tail, '\n', sizeof tail) : NULL;
  if (!nl) return;
  char why[128];
  size_t keep = sizeof tail - (size_t)(nl + 1 - tail);
  (void)write_atomically(dir, path, nl + 1, keep, "", 0, why, sizeof why);
}

void tj_disk_cache_close(tj_disk_cache_t *c) {
  if (!c) return;
  if (c->hits + c->misses > 0) {
    char *path = join(c->dir, RUN_LOG);
    int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (fd >= 0) {
      char line[96];
      int n = snprintf(line, sizeof line, "hits %" PRIu64 " misses %" PRIu64 "\n", c->hits, c->misses);
      (void)write_all(fd, line, (size_t)n); /* one short O_APPEND write: whole lines even when shared */
      close(fd);
      trim_run_log(path, c->dir);
    }
    tj_free(path);
  }
  pthread_mutex_destroy(&c->lock);
  tj_free(c->dir);
  tj_free(c);
}

void tj_disk_cache_hooks(tj_disk_cache_t *cache, tj_jit_object_cache_t *out_hooks) {
  *out_hooks = (tj_jit_object_cache_t){disk_load, disk_store, cache};
}

const char *tj_disk_cache_dir(const tj_disk_cache_t *cache) { return cache->dir; }

/* ---------------------------------------------------------------- info and clear */

static void read_run_log(const char *dir, tj_cache_info_t *info) {
  char *path = join(dir, RUN_LOG);
  FILE *f = path ? fopen(path, "r") : NULL;
  tj_free(path);
  if (!f) return;
  uint64_t h[TJ_CACHE_INFO_RUNS], m[TJ_CACHE_INFO_RUNS];
  long n = 0;
  char line[128];
  while (fgets(line, sizeof line, f)) {
    uint64_t hh, mm;
    if (sscanf(line, "hits %" SCNu64 " misses %" SCNu64, &hh, &mm) != 2) continue;
    h[n % TJ_CACHE_INFO_RUNS] = hh;
    m[n % TJ_CACHE_INFO_RUNS] = mm;
    n++;
  }
  fclose(f);
  info->runs = n < TJ_CACHE_INFO_RUNS ? (int)n : TJ_CACHE_INFO_RUNS;
  for (int i = 0; i < info->runs; i++) {
    info->hits += h[i];
    info->misses += m[i];
  }
}

tj_status_t *tj_cache_info(const char *dir, tj_cache_info_t *out_info) {
  memset(out_info, 0, sizeof *out_info);
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT) return NULL;
    return tj_status_new(TJ_ERR_IO, "cache directory %s: %s", dir, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return tj_status_new(TJ_ERR_IO, "cache directory %s is not a directory", dir);
  dir_list_t l;
  if (!list_entries(dir, false, &l)) return tj_status_new(TJ_ERR_IO, "cannot read the cache directory %s: %s", dir, strerror(errno));
  out_info->exists = 1;
  out_info->entries = l.n;
  out_info->bytes = l.total;
  dir_list_free(&l);
  read_run_log(dir, out_info);
  return NULL;
}

tj_status_t *tj_cache_clear(const char *dir, int *out_removed, uint64_t *out_bytes) {
  *out_removed = 0;
  *out_bytes = 0;
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return NULL;
    return tj_status_new(TJ_ERR_IO, "cannot read the cache directory %s: %s", dir, strerror(errno));
  }
  tj_status_t *s = NULL;
  time_t now = time(NULL);
  for (struct dirent *de; (de = readdir(d)) && !s;) {
    bool entry = is_entry_name(de->d_name), temp = strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
    if (!entry && !temp && strcmp(de->d_name, RUN_LOG) != 0) continue;
    struct stat st;
    bool have = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (temp && have && now - st.st_mtime < 60) continue; /* another process is writing it */
    if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT)
      s = tj_status_new(TJ_ERR_IO, "cannot remove %s/%s: %s", dir, de->d_name, strerror(errno));
    else if (entry) {
      (*out_removed)++;
      *out_bytes += have ? (uint64_t)st.st_size : 0;
    }
  }
  closedir(d);
  return s;
}
