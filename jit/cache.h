/* The disk cache of compiled kernel objects (plugs into tj_jit_set_object_cache).
 *
 * One file per key, <dir>/<32 hex digits of the XXH3-128 key>.tjo: a header (magic,
 * format version, key, payload length, checksum over header and payload, buffer and
 * scalar counts, symbol length) then the kernel symbol and the ELF object. Entries are
 * written to a temporary file in the same directory and renamed, so a concurrent reader
 * sees a whole entry or none. Everything is checked on load; a truncated, damaged,
 * mismatched or wrong-version entry is a miss with a warning, and the compile that
 * follows replaces it. The directory is trusted code: whoever can write it can run code
 * in every process that uses it. Size cap with least-recently-used eviction (a hit
 * touches the entry's mtime). Thread-safe; several processes may share a directory. */
#ifndef TJ_JIT_CACHE_H
#define TJ_JIT_CACHE_H

#include <stdint.h>

#include "jit/jit.h"

#define TJ_CACHE_DEFAULT_MAX_BYTES ((uint64_t)256 << 20)

typedef struct tj_disk_cache tj_disk_cache_t;

typedef struct tj_disk_cache_options {
  const char *dir;    /* NULL: tj_cache_default_dir() */
  uint64_t max_bytes; /* 0: TVMJIT_CACHE_MAX_BYTES, else TJ_CACHE_DEFAULT_MAX_BYTES */
} tj_disk_cache_options_t;

/* TVMJIT_CACHE_DIR, else $XDG_CACHE_HOME/tvmjit, else $HOME/.cache/tvmjit (caller frees
 * with tj_free). Fails when none of the three can be formed. */
tj_status_t *tj_cache_default_dir(char **out_dir);
/* TVMJIT_CACHE_MAX_BYTES (a byte count, optionally with K, M or G), else the default. */
tj_status_t *tj_cache_default_max_bytes(uint64_t *out_bytes);

/* Opens (does not create: the directory is made, mode 0700, at the first store). */
tj_status_t *tj_disk_cache_open(const tj_disk_cache_options_t *options, tj_disk_cache_t **out_cache);
/* Appends this process's hit and miss counts to the directory's run log (best effort). */
void tj_disk_cache_close(tj_disk_cache_t *cache);
/* The hooks for tj_jit_set_object_cache (ctx = cache). */
void tj_disk_cache_hooks(tj_disk_cache_t *cache, tj_jit_object_cache_t *out_hooks);
const char *tj_disk_cache_dir(const tj_disk_cache_t *cache);

/* What `tvmjit cache info` shows. */
typedef struct tj_cache_info {
  int exists;         /* the directory exists */
  int entries;        /* .tjo files */
  uint64_t bytes;     /* their total size */
  int runs;           /* runs in the log (the last TJ_CACHE_INFO_RUNS at most) */
  uint64_t hits, misses; /* over those runs */
} tj_cache_info_t;
enum { TJ_CACHE_INFO_RUNS = 20 };
tj_status_t *tj_cache_info(const char *dir, tj_cache_info_t *out_info);
/* Removes the entries, the run log and temporary files older than a minute (younger
 * ones are writes in flight in another process); nothing else. */
tj_status_t *tj_cache_clear(const char *dir, int *out_removed, uint64_t *out_bytes);

/* The file of one key: "<dir>/<hex>.tjo" (caller frees). */
char *tj_cache_entry_path(const char *dir, const uint8_t key[16]);

#endif
