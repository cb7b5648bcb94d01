/* A kernel restricted to a run of channels. In NCHW with one image, channel c of a
 * tensor [1, F, H, W] is one contiguous plane, so a run of channels is a contiguous
 * slice: a kernel whose every channel is computed from the same channel of its inputs
 * (a depthwise conv, a batch-norm epilogue) or from inputs without that dim (a 1x1
 * conv's F output channels from its C input channels) can run on channels [c0, c0 + G)
 * as a kernel over G channels, given pointers c0 planes into every buffer with F.
 * This is how an expand 1x1 conv and the depthwise conv after it are run a group of
 * channels at a time (jit/channel_groups.c), so that the expand's output
 * stays in L2 instead of going through L3 (docs/cpu-schedule.md).
 *
 * The proof is row_split.h's with the channel extent F as the "row" var: F is replaced
 * by a var in every buffer shape, loop extent and block iter domain, and the result must
 * be row-independent along it (F only in one dim of a buffer after 1s, every channel
 * iter spatial and indexing only that dim). A constant F anywhere else (an index
 * expression, another dim of the same size) makes the check fail, and nothing is
 * sliced. */
#ifndef TJ_TRANSFORMS_TIR_CHANNEL_SLICE_H
#define TJ_TRANSFORMS_TIR_CHANNEL_SLICE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/tir.h"
#include "support/arena.h"
#include "support/status.h"

/* True when f computes each of `channels` channels independently, as above (f has no
 * scalar params). `arena` holds the scratch copy the check is made on. */
bool tj_tir_channels_independent(tj_arena_t *arena, const tj_prim_func_t *f, int64_t channels);

/* f over `count` channels instead of `channels` (same params; every buffer with the
 * channel dim has `count` there). Only for an f that tj_tir_channels_independent
 * accepts: its results on channels [c0, c0 + count) are f's, element for element, when
 * called with every such buffer advanced c0 channels. */
tj_status_t *tj_tir_channel_slice(tj_arena_t *arena, const tj_prim_func_t *f, int64_t channels, int64_t count,
                                  const tj_prim_func_t **out);

#endif
