/* A picture of a Relax function: its dataflow as Graphviz DOT (`tvmjit print --graph`).
 * Params are ellipses (weights after num_input: cylinders), kernel and operator calls
 * boxes labelled with the callee, the kernel's op pattern and the output's dtype and
 * shape; the calls inside a fused function (after FuseOps) form a cluster. */
#ifndef TJ_IR_DOT_H
#define TJ_IR_DOT_H

#include "ir/module.h"

/* The DOT text (free with tj_free), or NULL when the module has no Relax function
 * `func_name` or memory ran out. `note` (may be NULL) is shown in a box beside the
 * graph, one line per line (e.g. the memory plan). */
char *tj_dot_function(const tj_module_t *m, const char *func_name, const char *note);

#endif
