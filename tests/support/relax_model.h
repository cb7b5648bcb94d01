/* Small models for operator tests: the text of `main` (from `def main` on) under the
 * module header TVM prints, loaded with the default pipeline through the public API. */
#ifndef TU_RELAX_MODEL_H
#define TU_RELAX_MODEL_H

#include "tvmjit.h"

/* The whole module text for `main_text` (a static buffer, valid until the next call). */
const char *tu_model_source(const char *main_text);
/* The load error of the model (a static copy), or NULL when it loads. */
const char *tu_model_error(const char *main_text);
/* Loads the model and calls main on n_in inputs; the n_out outputs go to outs (the caller
 * frees them). Any failure fails the test with the library's message. */
void tu_run_model(const char *main_text, int n_in, tvmjit_tensor_t *const *in, int n_out, tvmjit_tensor_t **outs);

#endif
