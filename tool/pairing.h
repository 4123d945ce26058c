/*
 * Pairing reference and distorted frames by presentation time.
 *
 * Both inputs are put on a common clock whose zero is each input's first
 * frame after its offset (--ref-offset/--dist-offset skip that many frames),
 * so different start times and time bases do not matter. Then:
 *  - same frame rate (PAIR_INDEX, the default when both nominal rates agree):
 *    frame i with frame i, in presentation order, exactly as libvmaf's CLI
 *    does on decoded files; the timestamps are only checked, and pairs more
 *    than half a frame apart are counted for a warning;
 *  - different frame rates (PAIR_TIME): each reference frame is paired with
 *    the distorted frame nearest to it in presentation time (a distorted
 *    frame may be used twice or skipped), as ffmpeg's fps filter would
 *    resample the distorted input to the reference's rate.
 * Pairing stops at the end of the shorter input. Pure logic (no FFmpeg):
 * frames are opaque handles read through callbacks, so it can be tested on
 * synthetic timestamp lists.
 */
#ifndef QGPU_TOOL_PAIRING_H
#define QGPU_TOOL_PAIRING_H

#include <stddef.h>

enum PairMode { PAIR_AUTO = 0, PAIR_INDEX = 1, PAIR_TIME = 2 };

typedef struct PairSource {
    /* Next frame in presentation order: 1 with *pts (seconds, NAN when
     * unknown) and *frame set, 0 at the end, < 0 on error (message in err). */
    int (*read)(void *opaque, double *pts, void **frame, char *err, size_t err_len);
    /* Another reference to a frame (it is handed out twice), NULL on failure. */
    void *(*ref)(void *opaque, void *frame);
    void (*release)(void *opaque, void *frame);
    /* Frames left after the last one read, without decoding them (may be
     * NULL: then unknown). */
    unsigned (*count_rest)(void *opaque);
    void *opaque;
    double fps;      /* nominal frame rate, 0 when unknown */
    unsigned offset; /* frames skipped at the start */
    /* Frames lost so far to decoding errors (may be NULL: none). Once an
     * input lost frames, index pairing re-aligns by presentation time:
     * the frame of the other input with no partner is left out. */
    unsigned (*lost)(void *opaque);
    /* Presentation time of the input's first packet, used as its clock's
     * zero instead of the first frame's when frames were lost before the
     * first pair (has_start 0: unknown). */
    int has_start;
    double start;
    /* The input's presentation times mean nothing (a y4m header without a
     * frame rate): it is paired by index only, its times never compared. */
    int timeless;
} PairSource;

typedef struct PairStats {
    int mode;              /* PAIR_INDEX or PAIR_TIME */
    unsigned pairs;        /* pairs handed out */
    unsigned frames[2];    /* frames each input had (reference, distorted),
                              offsets included; counted to the end when
                              the other input ended first */
    int complete[2];       /* frames[i] is the input's full length */
    int ended_first;       /* 0 = reference, 1 = distorted, -1 = both at once
                              or the pair limit */
    int limit_reached;     /* stopped at max_pairs */
    unsigned mismatched;   /* pairs whose presentation times differ by more
                              than half a frame (index mode) or by more than
                              one distorted frame (time mode) */
    double max_mismatch;   /* largest |difference| in seconds */
    unsigned reused;       /* time mode: pairs that reused a distorted frame */
    unsigned skipped;      /* time mode: distorted frames never paired */
    unsigned dropped[2];   /* frames left out to re-align the pairs after
                              the other input lost frames (index mode) */
} PairStats;

typedef struct Pairer Pairer;

/* mode: PAIR_AUTO picks PAIR_TIME when both nominal rates are known and
 * differ by more than 0.1 %, else PAIR_INDEX (always when an input is
 * timeless; PAIR_TIME with a timeless input fails: -1). max_pairs 0 = no
 * limit. */
int pairer_init(Pairer **p, const PairSource *ref, const PairSource *dist, int mode,
                unsigned max_pairs);

/* The mode in use (known right after init). */
int pairer_mode(const Pairer *p);

/* Next pair: 1 with both frames set (the caller releases each through its
 * source), 0 at the end, < 0 on a read error (message in err). */
int pairer_next(Pairer *p, void **ref_frame, void **dist_frame, char *err, size_t err_len);

/* Statistics; frames[] and ended_first are final after pairer_next returned 0. */
void pairer_stats(const Pairer *p, PairStats *stats);

/* Releases any frame still held. */
void pairer_free(Pairer **p);

#endif
