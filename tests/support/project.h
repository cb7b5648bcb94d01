/* Paths to the project's own models and data, so that every test runs in a plain clone
 * (no ../shared next to the source tree). */
#ifndef TJ_TESTS_PROJECT_H
#define TJ_TESTS_PROJECT_H

/* "<source dir>/<relative>" (TVMJIT_SOURCE_DIR, else "."), in one of a few rotating static
 * buffers: the result stays valid across the next three calls. */
const char *tu_project_path(const char *relative);

/* examples/seed/model.rx: the float16 conv/relu/layer_norm network of TVM issue #17254,
 * already legalized (main calls conv2d2, relu and layer_norm PrimFuncs). */
#define TU_SEED_MODEL "examples/seed/model.rx"

/* For a test program that needs TVM's conformance corpus (../shared/conformance, which a
 * user's clone does not have): prints why and returns 77 (ctest SKIP_RETURN_CODE) when
 * it is absent, else 0. Use as: `int skip = tu_corpus_skip("name"); if (skip) return skip;` */
int tu_corpus_skip(const char *suite);

#endif
