/* tvmjit cache: show or clear the on-disk kernel cache. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tvmjit.h"

static void print_bytes(uint64_t n) {
  if (n < 1024) printf("%" PRIu64 " bytes", n);
  else if (n < ((uint64_t)1 << 20)) printf("%.1f KiB", (double)n / 1024.0);
  else printf("%.1f MiB", (double)n / 1048576.0);
}

static int cache_info(const char *dir) {
  tvmjit_cache_info_t info;
  tvmjit_status_t *st = tvmjit_cache_info(dir, &info);
  if (st) return cli_report(st), CLI_FAILED;
  printf("directory: %s%s\n", info.directory, info.exists ? "" : " (does not exist yet)");
  printf("entries: %d (", info.entries);
  print_bytes(info.bytes);
  printf(")\n");
  if (info.runs == 0) printf("last runs: none recorded\n");
  else {
    uint64_t total = info.hits + info.misses;
    printf("last %d run%s: %" PRIu64 " hits, %" PRIu64 " misses (hit rate %.0f%%)\n", info.runs,
           info.runs == 1 ? "" : "s", info.hits, info.misses, total ? 100.0 * (double)info.hits / (double)total : 0.0);
  }
  return CLI_OK;
}

static int cache_clear(const char *dir) {
  int removed = 0;
  uint64_t bytes = 0;
  tvmjit_cache_info_t info;
  tvmjit_status_t *st = tvmjit_cache_info(dir, &info);
  if (!st) st = tvmjit_cache_clear(info.directory, &removed, &bytes);
  if (st) return cli_report(st), CLI_FAILED;
  printf("removed %d entr%s (", removed, removed == 1 ? "y" : "ies");
  print_bytes(bytes);
  printf(") from %s\n", info.directory);
  return CLI_OK;
}

static int run_cache(int argc, char **argv) {
  const char *action = NULL, *dir = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (cli_option(argc, argv, &i, "dir", true, &v)) {
      if (!v || !*v) return cli_usage_error("cache", "--dir needs a directory");
      dir = v;
    } else if (argv[i][0] == '-') return cli_usage_error("cache", "unknown option '%s'", argv[i]);
    else if (action) return cli_usage_error("cache", "expected one action, got '%s' and '%s'", action, argv[i]);
    else action = argv[i];
  }
  if (!action) return cli_usage_error("cache", "missing the action: info or clear");
  if (strcmp(action, "info") == 0) return cache_info(dir);
  if (strcmp(action, "clear") == 0) return cache_clear(dir);
  return cli_usage_error("cache", "unknown action '%s': use info or clear", action);
}

const cli_command_t cli_cmd_cache = {
    "cache", "show or clear the on-disk cache of compiled kernels",
    "usage: tvmjit cache info|clear [--dir DIR]\n"
    "\n"
    "tvmjit run keeps each compiled kernel in a cache directory, so the next run of the\n"
    "same model on this machine compiles nothing.\n"
    "\n"
    "actions:\n"
    "  info      the directory, the number of entries and their size, and the hit rate\n"
    "            of the last runs\n"
    "  clear     remove every entry (only tvmjit's own files in the directory)\n"
    "options:\n"
    "  --dir DIR the cache directory (default: TVMJIT_CACHE_DIR, else\n"
    "            $XDG_CACHE_HOME/tvmjit, else ~/.cache/tvmjit)\n"
    "\n"
    "environment (tvmjit run and the library):\n"
    "  TVMJIT_CACHE=0            do not use the cache (as tvmjit run --no-cache)\n"
    "  TVMJIT_CACHE_DIR=DIR      where the cache lives; created with mode 0700\n"
    "  TVMJIT_CACHE_MAX_BYTES=N  size cap, e.g. 512M (default 256M); least recently used\n"
    "                            entries are removed first\n"
    "  TVMJIT_CACHE_DEBUG=1      as tvmjit run --cache-debug\n"
    "\n"
    "The cache holds machine code that tvmjit runs: whoever can write the directory can\n"
    "run code in your processes. Keep it private.\n"
    "\n"
    "exit status: 0 success, 1 the directory cannot be read or cleared, 2 usage error\n",
    run_cache};
