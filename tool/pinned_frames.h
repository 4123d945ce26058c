/* CPU decoders writing their frames straight into the library's pinned
 * blocks (qgpu_pinned_alloc), so that qgpu_submit_pinned() uploads them
 * without the staging copy (issue #18). */
#ifndef QGPU_TOOL_PINNED_FRAMES_H
#define QGPU_TOOL_PINNED_FRAMES_H

#include <libavcodec/avcodec.h>

#include "qgpu/qgpu.h"

typedef struct PinnedFrames PinnedFrames;

/* Before avcodec_open2 of a CPU decoder: a pool behind the codec's
 * get_buffer2 (thread-safe: frame threads call it). Until
 * pinned_frames_attach, and for frames the pool has no free block for,
 * FFmpeg's own buffers are used. *pool stays NULL (nothing installed)
 * when QGPU_PINNED_FRAMES=0 or out of memory. */
void pinned_frames_install(PinnedFrames **pool, AVCodecContext *codec);

/* The scoring context whose pinned blocks the pool hands out (on the
 * scoring thread, before its first submit and before the frames are read
 * on another thread): allocates the first blocks, for the frames'
 * layout if a frame was decoded already. NULL-safe. */
void pinned_frames_attach(PinnedFrames *pool, QgpuContext *ctx);

/* qgpu_submit_pinned() when both pictures are decoded frames in the pools'
 * blocks, else qgpu_submit(). On the scoring thread: it also grows the
 * pools (blocks allocated there, never on a decoding thread) while the
 * decoders ask for more than they have. Either pool may be NULL. */
int pinned_frames_submit(QgpuContext *ctx, PinnedFrames *ref_pool, const QgpuPicture *ref,
                         PinnedFrames *dist_pool, const QgpuPicture *dist);

/* What pinned_frames_submit does to each pool after the submit (scoring
 * thread): stale blocks dropped, and one more block made while the
 * decoder's misses are not answered. NULL-safe. */
void pinned_frames_grow(PinnedFrames *pool, QgpuContext *ctx);

/* Pairs submitted from the pools' blocks so far (by pinned_frames_submit
 * with this pool as the reference's), and frames the decoders got
 * FFmpeg's buffers for because no block was free. */
unsigned pinned_frames_submitted(const PinnedFrames *pool);
unsigned pinned_frames_misses(const PinnedFrames *pool);

/* QGPU_TIMING: blocks made at attach (before the run's clock starts) and
 * while the frames were read (inside it, on the scoring thread), and the
 * seconds each took. Zeros for a NULL pool. */
void pinned_frames_setup(const PinnedFrames *pool, unsigned *attach, double *t_attach,
                         unsigned *run, double *t_run);

/* After avcodec_free_context: the decoder's reference; blocks still in
 * frames elsewhere are freed with their last frame. NULL-safe. */
void pinned_frames_close(PinnedFrames **pool);

#endif
