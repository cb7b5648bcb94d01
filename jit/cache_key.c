/* The object cache key: every input that decides the bytes of a kernel's object, as
 * named parts (so `--cache-debug` can show which one changed), hashed with XXH3-128.
 *
 * The tvmjit part carries the library's GNU build id, not only the version number: a
 * rebuilt library with a changed code generator must never load objects made by the
 * old one, and during development the version number does not move. */
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "jit/internal.h"

/* Bump when the cache entry's contents change meaning (not its file format: that has
 * its own version in jit/cache.c). v3: keyed by the un-lowered PrimFunc and the
 * schedule options, not the lowered text; the entry holds the kernel's metadata. */
#define TJ_CACHE_KEY_FORMAT "tvmjit-object-v3"

static pthread_once_t ids_once = PTHREAD_ONCE_INIT;
static char tvmjit_id[128], llvm_id[32];

/* The build id of the object that contains this function, as hex. */
typedef struct build_id_search {
  uintptr_t addr;
  char *out;
  size_t len;
} build_id_search_t;

static int note_build_id(const ElfW(Phdr) *ph, ElfW(Addr) base, build_id_search_t *q) {
  const char *p = (const char *)(base + ph->p_vaddr), *end = p + ph->p_memsz;
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
    const char *name = p + sizeof *nh;
    const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
    if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
      size_t n = 0;
      for (unsigned i = 0; i < nh->n_descsz && n + 3 < q->len; i++) n += (size_t)snprintf(q->out + n, 3, "%02x", desc[i]);
      return 1;
    }
    p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
  }
  return 0;
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  build_id_search_t *q = data;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_NOTE && note_build_id(&info->dlpi_phdr[i], info->dlpi_addr, q)) return 1;
  return 1; /* our object, without a build id */
}

static void ids_init(void) {
  char build[96] = "none";
  build_id_search_t q = {(uintptr_t)&tj_jit_cache_key_parts, build, sizeof build};
  dl_iterate_phdr(find_build_id, &q);
  snprintf(tvmjit_id, sizeof tvmjit_id, "%s build %s", TVMJIT_VERSION, build);
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  snprintf(llvm_id, sizeof llvm_id, "%u.%u.%u", major, minor, patch);
}

static const char *opt_text(int opt_level) {
  static const char *const names[] = {"O0", "O1", "O2", "O3"};
  return names[opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level];
}

int tj_jit_cache_key_parts(const char *schedule, const char *func, int opt_level, tj_jit_key_part_t *parts) {
  pthread_once(&ids_once, ids_init);
  int n = 0;
  parts[n++] = (tj_jit_key_part_t){"format", TJ_CACHE_KEY_FORMAT};
  parts[n++] = (tj_jit_key_part_t){"tvmjit", tvmjit_id};
  parts[n++] = (tj_jit_key_part_t){"llvm", llvm_id};
  parts[n++] = (tj_jit_key_part_t){"triple", tj_jit_host_triple()};
  parts[n++] = (tj_jit_key_part_t){"cpu", tj_jit_host_cpu()};
  parts[n++] = (tj_jit_key_part_t){"features", tj_jit_host_features()};
  parts[n++] = (tj_jit_key_part_t){"opt", opt_text(opt_level)};
  parts[n++] = (tj_jit_key_part_t){"codegen", tj_jit_codegen_options()};
  parts[n++] = (tj_jit_key_part_t){"schedule", schedule};
  parts[n++] = (tj_jit_key_part_t){"func", func};
  return n;
}

void tj_jit_cache_key_hash(const tj_jit_key_part_t *parts, int n_parts, uint8_t out_key[16]) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  for (int i = 0; i < n_parts; i++) {
    /* Length-prefixed, so no two different part lists hash the same input. */
    uint64_t lens[2] = {strlen(parts[i].name), strlen(parts[i].value)};
    XXH3_128bits_update(&st, lens, sizeof lens);
    XXH3_128bits_update(&st, parts[i].name, lens[0]);
    XXH3_128bits_update(&st, parts[i].value, lens[1]);
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
  memcpy(out_key, c.digest, 16);
}
