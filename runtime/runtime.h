/* Everything runtime/ offers: the kernel ABI, tensors, .npy and .npz files, the
 * executable with its static memory plan, and the executor that runs it (kernels called
 * through libffi). */
#ifndef TJ_RUNTIME_RUNTIME_H
#define TJ_RUNTIME_RUNTIME_H

#include "runtime/executable.h"
#include "runtime/kernel.h"
#include "runtime/memory_plan.h"
#include "runtime/npy.h"
#include "runtime/npz.h"
#include "runtime/tensor.h"

#endif
