/*
 * Pairs whose device copies are still running: with NVDEC's zero-copy
 * path, the scoring thread submits each pair with
 * qgpu_submit_cl_buffer_async() and keeps the pair's frames (and so their
 * slots of the CUDA ring, tool/cuda_ring.h) here until the library's copies
 * of them completed; only then are the frames freed and their slots free
 * to be rewritten by the decoding thread. The scoring thread does not wait
 * for the copies unless INFLIGHT_MAX pairs are out.
 *
 * One thread (the scoring thread) uses an Inflight.
 */
#ifndef QGPU_TOOL_INFLIGHT_H
#define QGPU_TOOL_INFLIGHT_H

#include "qgpu/qgpu_opencl.h"

#include "reader.h"

#define INFLIGHT_MAX 4

typedef struct Inflight {
    FramePair pair[INFLIGHT_MAX];
    cl_event copied[INFLIGHT_MAX];
    int head, count;
    double wait_seconds; /* blocked on the oldest pair's copies */
} Inflight;

void inflight_init(Inflight *f);

/* Takes pair (and the event, released here): first frees the pairs whose
 * copies completed, then, when all INFLIGHT_MAX places are taken, waits
 * for the oldest. 0, or -1 when a copy failed (the device's error). */
int inflight_add(Inflight *f, FramePair *pair, cl_event copied);

/* Waits for every pair's copies and frees them all: 0, or -1 when a copy
 * failed. */
int inflight_drain(Inflight *f);

#endif
