/* Decoding on its own thread: reads (reference, distorted) pairs ahead of
 * the GPU work so decoding and scoring overlap. Frames are paired by
 * presentation time (pairing.h). */
#ifndef QGPU_TOOL_READER_H
#define QGPU_TOOL_READER_H

#include <signal.h>

#include "decode.h"
#include "pairing.h"

typedef struct Reader Reader;

typedef struct FramePair {
    QgpuPicture ref, dist;
    void *ref_owner, *dist_owner;
} FramePair;

typedef struct ReaderOptions {
    unsigned max_frames;          /* at most this many pairs (0 = all) */
    unsigned ref_offset, dist_offset; /* frames skipped at the start */
    int mode;                     /* enum PairMode */
    /* reader_next returns 0 (the end) soon after *cancel becomes non-zero
     * (a signal handler's flag; NULL: none) */
    volatile sig_atomic_t *cancel;
} ReaderOptions;

/* Starts the thread. The pairing mode is known on return (reader_mode).
 * 0, or -1 with a message in err. */
int reader_start(Reader **reader, Decoder *ref, Decoder *dist, const ReaderOptions *opts,
                 char *err, size_t err_len);

/* PAIR_INDEX or PAIR_TIME. */
int reader_mode(const Reader *reader);

/* Next pair: 1 = got one (release it with reader_release), 0 = end of the
 * shorter input, < 0 = decoding error (message in err). */
int reader_next(Reader *reader, FramePair *pair, char *err, size_t err_len);
void reader_release(FramePair *pair);

/* Pairing statistics: frames each input had, which ended first, timestamp
 * mismatches. Final after reader_next returned 0. */
void reader_stats(Reader *reader, PairStats *stats);

/* QGPU_TIMING: the reading thread's seconds so far reading pairs
 * (decoding them, or waiting for the decoding threads) and waiting for
 * room in its queue of pairs. */
void reader_timing(Reader *reader, double *read, double *full);

/* Stops the thread (also mid-stream, also while it waits on a stalled
 * pipe) and frees everything. */
void reader_stop(Reader **reader);

#endif
