/* The disk cache of kernel objects (jit/cache.h) and its public face (tvmjit.h):
 * least-recently-used eviction, damaged entries, messages reaching the caller, key
 * parts, info and clear, the size cap from the environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit/cache.h"
#include "support/alloc.h"
#include "testutil.h"
#include "tvmjit.h"

/* ---- a message sink that records what it gets ---- */
typedef struct sink {
  int warnings, debugs;
  char last_warning[2048], all_debug[8192];
} sink_t;

static void sink_emit(void *ctx, tj_jit_msg_kind_t kind, const char *text) {
  sink_t *s = ctx;
  if (kind == TJ_JIT_MSG_WARNING) {
    s->warnings++;
    snprintf(s->last_warning, sizeof s->last_warning, "%s", text);
  } else {
    s->debugs++;
    size_t n = strlen(s->all_debug);
    snprintf(s->all_debug + n, sizeof s->all_debug - n, "%s\n", text);
  }
}

/* A lookup for a made-up kernel: the key parts are the real ones over `text`. */
typedef struct lookup {
  tj_jit_key_part_t parts[TJ_JIT_KEY_PARTS];
  tj_jit_cache_lookup_t lk;
  tj_jit_messages_t msgs;
} lookup_t;

static void make_lookup(lookup_t *l, const char *text, sink_t *sink) {
  l->msgs = (tj_jit_messages_t){sink_emit, sink, true};
  l->lk = (tj_jit_cache_lookup_t){text, l->parts, tj_jit_cache_key_parts("enabled=1", text, 2, l->parts), &l->msgs};
}

/* An "object" of `size` bytes: ELF magic, then a pattern from `seed`. */
static tj_jit_object_t make_object(const char *symbol, size_t size, int seed) {
  unsigned char *b = tj_malloc(size);
  memcpy(b, "\x7f" "ELF", 4);
  for (size_t i = 4; i < size; i++) b[i] = (unsigned char)(i * 7 + (size_t)seed);
  char *meta = tj_malloc(24);
  snprintf(meta, 24, "meta of %s", symbol);
  return (tj_jit_object_t){tj_strdup(symbol), NULL, b, size, 3, 1, meta, 24};
}

static bool load_ok(tj_jit_object_cache_t *h, const char *text, sink_t *sink, const tj_jit_object_t *want) {
  lookup_t l;
  make_lookup(&l, text, sink);
  tj_jit_object_t got = {0};
  if (!h->load(h->ctx, &l.lk, &got)) return false;
  ck_assert_str_eq(got.symbol, want->symbol);
  ck_assert_uint_eq(got.size, want->size);
  ck_assert_int_eq(memcmp(got.bytes, want->bytes, want->size), 0);
  ck_assert_int_eq(got.n_buffers, 3);
  ck_assert_int_eq(got.n_scalars, 1);
  ck_assert_uint_eq(got.meta_size, want->meta_size); /* the kernel's metadata comes back whole */
  ck_assert_int_eq(memcmp(got.meta, want->meta, want->meta_size), 0);
  tj_jit_object_free(&got);
  return true;
}

static void store(tj_jit_object_cache_t *h, const char *text, sink_t *sink, const tj_jit_object_t *obj) {
  lookup_t l;
  make_lookup(&l, text, sink);
  h->store(h->ctx, &l.lk, obj);
}

static char *entry_path(const char *dir, const char *text) {
  lookup_t l;
  make_lookup(&l, text, NULL);
  uint8_t key[16];
  tj_jit_cache_key_hash(l.parts, l.lk.n_parts, key);
  return tj_cache_entry_path(dir, key);
}

START_TEST(least_recently_used_entry_is_evicted_first) {
  const char *dir = tu_make_tmp_dir("tj_cache_lru");
  char saved[256];
  snprintf(saved, sizeof saved, "%s", dir);
  /* Entries are 64 + 3 + 1000 bytes: the cap holds two of them. */
  tj_disk_cache_options_t o = {saved, 2500};
  tj_disk_cache_t *c;
  TU_OK(tj_disk_cache_open(&o, &c));
  tj_jit_object_cache_t h;
  tj_disk_cache_hooks(c, &h);
  sink_t sink = {0};
  tj_jit_object_t a = make_object("k_a", 1000, 1), b = make_object("k_b", 1000, 2), d = make_object("k_d", 1000, 3);
  store(&h, "kernel a", &sink, &a);
  usleep(30000); /* mtimes are coarse (a few ms): keep the order unambiguous */
  store(&h, "kernel b", &sink, &b);
  usleep(30000);
  ck_assert(load_ok(&h, "kernel a", &sink, &a)); /* a is now the most recently used */
  usleep(30000);
  store(&h, "kernel d", &sink, &d);
  ck_assert_int_eq(tu_count_entries(saved), 2);
  ck_assert(!load_ok(&h, "kernel b", &sink, &b));
  ck_assert(load_ok(&h, "kernel a", &sink, &a));
  ck_assert(load_ok(&h, "kernel d", &sink, &d));
  ck_assert_int_eq(sink.warnings, 0);
  ck_assert_ptr_nonnull(strstr(sink.all_debug, "cache: kernel b: miss (no entry), key "));
  ck_assert_ptr_nonnull(strstr(sink.all_debug, "cache: kernel a: hit, key "));
  tj_disk_cache_close(c);
  tj_jit_object_free(&a);
  tj_jit_object_free(&b);
  tj_jit_object_free(&d);
  tu_remove_tree(saved);
}
END_TEST

/* Rewrites byte `at` of a file (negative: from the end) with `xor`, or truncates it to
 * `at` bytes when xor is 0. */
static void damage(const char *path, long at, int xor) {
  size_t n;
  char *b = tu_read_file(path, &n);
  ck_assert_ptr_nonnull(b);
  if (xor) b[at < 0 ? (long)n + at : at] ^= (char)xor;
  else n = (size_t)at;
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
}

START_TEST(damaged_entries_are_misses_with_a_warning_then_replaced) {
  const char *dir = tu_make_tmp_dir("tj_cache_damage");
  char saved[256];
  snprintf(saved, sizeof saved, "%s", dir);
  tj_disk_cache_options_t o = {saved, 1 << 20};
  tj_disk_cache_t *c;
  TU_OK(tj_disk_cache_open(&o, &c));
  tj_jit_object_cache_t h;
  tj_disk_cache_hooks(c, &h);
  tj_jit_object_t a = make_object("k_a", 300, 1);
  char *path = entry_path(saved, "kernel a");
  struct {
    long at;
    int xor;
    const char *why;
  } cases[] = {
      {-1, 0x01, "checksum mismatch"},   /* last byte of the object */
      {52, 0x01, "checksum mismatch"},   /* n_scalars in the header */
      {8, 0x01, "format version 3"},     /* version 2 -> 3 */
      {60, 0x01, "checksum mismatch"},   /* the metadata's size in the header */
      {20, 0x80, "does not match its file name"},
      {100, 0, "truncated: the header announces"},
      {10, 0, "truncated (10 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sink_t sink = {0};
    store(&h, "kernel a", &sink, &a);
    ck_assert(load_ok(&h, "kernel a", &sink, &a));
    damage(path, cases[i].at, cases[i].xor);
    ck_assert_msg(!load_ok(&h, "kernel a", &sink, &a), "case %zu loaded", i);
    ck_assert_int_eq(sink.warnings, 1);
    ck_assert_msg(strstr(sink.last_warning, cases[i].why) && strstr(sink.last_warning, path), "case %zu: %s", i,
                  sink.last_warning);
    ck_assert_ptr_nonnull(strstr(sink.all_debug, "miss (unusable entry)"));
  }
  sink_t sink = {0};
  store(&h, "kernel a", &sink, &a); /* what the compile after a miss does */
  ck_assert(load_ok(&h, "kernel a", &sink, &a));
  ck_assert_int_eq(sink.warnings, 0);
  tj_free(path);
  tj_disk_cache_close(c);
  tj_jit_object_free(&a);
  tu_remove_tree(saved);
}
END_TEST

START_TEST(uncreatable_directory_warns_once) {
  const char *dir = tu_make_tmp_dir("tj_cache_unwritable");
  char saved[256], sub[300];
  snprintf(saved, sizeof saved, "%s", dir);
  snprintf(sub, sizeof sub, "%s/file/cache", saved);
  char file[300];
  snprintf(file, sizeof file, "%s/file", saved);
  FILE *f = fopen(file, "w");
  fclose(f);
  tj_disk_cache_options_t o = {sub, 1 << 20};
  tj_disk_cache_t *c;
  TU_OK(tj_disk_cache_open(&o, &c));
  tj_jit_object_cache_t h;
  tj_disk_cache_hooks(c, &h);
  sink_t sink = {0};
  tj_jit_object_t a = make_object("k_a", 300, 1);
  ck_assert(!load_ok(&h, "kernel a", &sink, &a));
  ck_assert_int_eq(sink.warnings, 0); /* a missing directory is just a miss */
  store(&h, "kernel a", &sink, &a);
  store(&h, "kernel b", &sink, &a);
  ck_assert_int_eq(sink.warnings, 1);
  ck_assert_ptr_nonnull(strstr(sink.last_warning, "cannot be created"));
  ck_assert_ptr_nonnull(strstr(sink.last_warning, sub));
  tj_disk_cache_close(c);
  tj_jit_object_free(&a);
  tu_remove_tree(saved);
}
END_TEST

START_TEST(every_key_part_changes_the_key) {
  tj_jit_key_part_t base[TJ_JIT_KEY_PARTS], alt[TJ_JIT_KEY_PARTS];
  int n = tj_jit_cache_key_parts("enabled=1", "0123abcd", 2, base);
  const char *names[] = {"format", "tvmjit", "llvm", "triple", "cpu", "features", "opt", "codegen", "schedule", "func"};
  ck_assert_int_eq(n, (int)(sizeof names / sizeof names[0]));
  uint8_t k0[16], k1[16];
  tj_jit_cache_key_hash(base, n, k0);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(base[i].name, names[i]);
    ck_assert(base[i].value[0] != '\0');
    memcpy(alt, base, sizeof base);
    char changed[4096];
    snprintf(changed, sizeof changed, "%s+", base[i].value);
    alt[i].value = changed;
    tj_jit_cache_key_hash(alt, n, k1);
    ck_assert_msg(memcmp(k0, k1, 16) != 0, "part %s does not change the key", names[i]);
  }
  tj_jit_cache_key_parts("enabled=1", "0123abcd", 3, alt);
  tj_jit_cache_key_hash(alt, n, k1);
  ck_assert(memcmp(k0, k1, 16) != 0);
  /* Moving text between parts must not give the same key (length-prefixed). */
  tj_jit_key_part_t x[2] = {{"a", "bc"}, {"d", "e"}}, y[2] = {{"a", "b"}, {"cd", "e"}};
  tj_jit_cache_key_hash(x, 2, k0);
  tj_jit_cache_key_hash(y, 2, k1);
  ck_assert(memcmp(k0, k1, 16) != 0);
  ck_assert_ptr_nonnull(strstr(base[1].value, "build "));
}
END_TEST

START_TEST(info_counts_and_clear_removes_only_entries) {
  const char *dir = tu_make_tmp_dir("tj_cache_info");
  char saved[256], other[300];
  snprintf(saved, sizeof saved, "%s", dir);
  tj_disk_cache_options_t o = {saved, 1 << 20};
  tj_disk_cache_t *c;
  TU_OK(tj_disk_cache_open(&o, &c));
  tj_jit_object_cache_t h;
  tj_disk_cache_hooks(c, &h);
  sink_t sink = {0};
  tj_jit_object_t a = make_object("k_a", 300, 1);
  store(&h, "kernel a", &sink, &a);
  store(&h, "kernel b", &sink, &a);
  ck_assert(load_ok(&h, "kernel a", &sink, &a));
  ck_assert(!load_ok(&h, "kernel c", &sink, &a));
  tj_disk_cache_close(c); /* logs 1 hit, 1 miss */
  snprintf(other, sizeof other, "%s/notes.txt", saved);
  FILE *f = fopen(other, "w");
  fclose(f);
  tvmjit_cache_info_t info;
  ck_assert_ptr_null(tvmjit_cache_info(saved, &info));
  ck_assert_str_eq(info.directory, saved);
  ck_assert_int_eq(info.exists, 1);
  ck_assert_int_eq(info.entries, 2);
  ck_assert_uint_eq(info.bytes, 2 * (64 + 3 + 24 + 300)); /* header, symbol, metadata, object */
  ck_assert_int_eq(info.runs, 1);
  ck_assert_uint_eq(info.hits, 1);
  ck_assert_uint_eq(info.misses, 1);
  int removed;
  uint64_t bytes;
  ck_assert_ptr_null(tvmjit_cache_clear(saved, &removed, &bytes));
  ck_assert_int_eq(removed, 2);
  ck_assert_uint_eq(bytes, 2 * (64 + 3 + 24 + 300));
  ck_assert_int_eq(tu_count_entries(saved), 1); /* notes.txt stays */
  ck_assert_ptr_null(tvmjit_cache_info(saved, &info));
  ck_assert_int_eq(info.entries, 0);
  ck_assert_int_eq(info.runs, 0);
  tj_jit_object_free(&a);
  tu_remove_tree(saved);
}
END_TEST

START_TEST(size_cap_and_directory_come_from_the_environment) {
  uint64_t cap;
  unsetenv("TVMJIT_CACHE_MAX_BYTES");
  TU_OK(tj_cache_default_max_bytes(&cap));
  ck_assert_uint_eq(cap, TJ_CACHE_DEFAULT_MAX_BYTES);
  setenv("TVMJIT_CACHE_MAX_BYTES", "512M", 1);
  TU_OK(tj_cache_default_max_bytes(&cap));
  ck_assert_uint_eq(cap, (uint64_t)512 << 20);
  setenv("TVMJIT_CACHE_MAX_BYTES", "4096", 1);
  TU_OK(tj_cache_default_max_bytes(&cap));
  ck_assert_uint_eq(cap, 4096);
  const char *bad[] = {"lots", "-1", "12Q", "", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("TVMJIT_CACHE_MAX_BYTES", bad[i], 1);
    tj_status_t *s = tj_cache_default_max_bytes(&cap);
    if (!*bad[i]) {
      ck_assert_ptr_null(s); /* empty: the default */
      continue;
    }
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(strstr(tj_status_text(s), "TVMJIT_CACHE_MAX_BYTES"));
    tj_status_free(s);
  }
  unsetenv("TVMJIT_CACHE_MAX_BYTES");
  char *d;
  setenv("TVMJIT_CACHE_DIR", "/x/y", 1);
  TU_OK(tj_cache_default_dir(&d));
  ck_assert_str_eq(d, "/x/y");
  tj_free(d);
  unsetenv("TVMJIT_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  TU_OK(tj_cache_default_dir(&d));
  ck_assert_str_eq(d, "/xdg/tvmjit");
  tj_free(d);
  setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, as the XDG spec says */
  setenv("HOME", "/home/u", 1);
  TU_OK(tj_cache_default_dir(&d));
  ck_assert_str_eq(d, "/home/u/.cache/tvmjit");
  tj_free(d);
}
END_TEST

/* ---- through the public API ---- */

static const char *relu_model =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((8, 16), dtype=\"float32\")) -> R.Tensor((8, 16), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            gv = R.nn.relu(x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

typedef struct api_sink {
  int warnings, debugs;
} api_sink_t;

static void api_emit(void *user, tvmjit_message_kind_t kind, const char *text) {
  api_sink_t *s = user;
  if (kind == TVMJIT_MESSAGE_WARNING) s->warnings++;
  else s->debugs++;
}

/* Loads the relu model into a new instance with the cache in `dir`; returns the
 * module's messages (copied) and checks relu on a few values. */
static char *load_relu(const char *dir, int use_cache, api_sink_t *sink, char *report, size_t report_len) {
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.cache.enable = 1;
  io.cache.directory = dir;
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(&io, &inst));
  tvmjit_module_options_t mo;
  tvmjit_module_options_init(&mo);
  mo.use_cache = use_cache;
  mo.cache_debug = 1;
  mo.on_message = api_emit;
  mo.message_user = sink;
  tvmjit_module_t *mod;
  tvmjit_function_t *fn;
  ck_assert_ptr_null(tvmjit_module_load_string(inst, "relu.rx", relu_model, strlen(relu_model), &mo, &mod));
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  float in[128], *out;
  for (int i = 0; i < 128; i++) in[i] = (float)(i - 64);
  int64_t shape[2] = {8, 16};
  tvmjit_tensor_t *x, *y;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, shape, in, &x));
  ck_assert_ptr_null(tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&x, 1, &y));
  out = tvmjit_tensor_data(y);
  for (int i = 0; i < 128; i++) ck_assert_float_eq(out[i], in[i] > 0 ? in[i] : 0);
  char *msgs = strdup(tvmjit_module_messages(mod));
  snprintf(report, report_len, "%s", tvmjit_module_report(mod));
  tvmjit_tensor_free(x);
  tvmjit_tensor_free(y);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return msgs;
}

START_TEST(api_second_instance_loads_from_cache_and_reports_it) {
  const char *dir = tu_make_tmp_dir("tj_cache_api");
  char saved[256], report[1024];
  snprintf(saved, sizeof saved, "%s", dir);
  api_sink_t s1 = {0}, s2 = {0}, s3 = {0};
  char *m1 = load_relu(saved, 1, &s1, report, sizeof report);
  ck_assert_ptr_nonnull(strstr(report, "1 compiled, 0 loaded from cache"));
  ck_assert_ptr_nonnull(strstr(m1, ": miss (no entry), key "));
  ck_assert_int_eq(s1.warnings, 0);
  ck_assert_int_ge(s1.debugs, 1);
  char *m2 = load_relu(saved, 1, &s2, report, sizeof report);
  ck_assert_ptr_nonnull(strstr(report, "0 compiled, 1 loaded from cache"));
  ck_assert_ptr_nonnull(strstr(m2, ": hit, key "));
  ck_assert_int_eq(s2.warnings, 0);
  char *m3 = load_relu(saved, 0, &s3, report, sizeof report); /* use_cache = 0 */
  ck_assert_ptr_nonnull(strstr(report, "1 compiled, 0 loaded from cache"));
  ck_assert_ptr_nonnull(strstr(m3, "cache: off for this module"));
  free(m1);
  free(m2);
  free(m3);
  tu_remove_tree(saved);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("cache");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, least_recently_used_entry_is_evicted_first);
  tcase_add_test(tc, damaged_entries_are_misses_with_a_warning_then_replaced);
  tcase_add_test(tc, uncreatable_directory_warns_once);
  tcase_add_test(tc, every_key_part_changes_the_key);
  tcase_add_test(tc, info_counts_and_clear_removes_only_entries);
  tcase_add_test(tc, size_cap_and_directory_come_from_the_environment);
  tcase_add_test(tc, api_second_instance_loads_from_cache_and_reports_it);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
