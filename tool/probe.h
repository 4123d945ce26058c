/*
 * --hwdec auto by measurement: when NVDEC took both inputs, decode their
 * first frames with NVDEC and with the CPU decoders, keep the faster path
 * (decoder_choice.h) and hand back its decoders at the start of the
 * inputs: the CPU's rewound (decoder_rewind), NVDEC's opened afresh (the
 * measured ones are closed on a closing thread).
 */
#ifndef QGPU_TOOL_PROBE_H
#define QGPU_TOOL_PROBE_H

#include <stddef.h>

#include "decode.h"
#include "decoder_choice.h"
#include "options.h"

/* Frames timed per measurement, the seconds it may take once
 * PROBE_MIN_FRAMES are timed (five times as long at most), and the fewest
 * that make a measurement. */
#define PROBE_FRAMES 48
#define PROBE_SECONDS 0.1
#define PROBE_MIN_FRAMES 16

/* Pairs below which a single run does not measure (the measurement costs
 * ~0.25-0.35 s on the H200: more than it can save on a short pair); a
 * batch's jobs share the decision (decoder_choice.h) and measure from
 * 2 x PROBE_FRAMES pairs. */
#define PROBE_MIN_PAIRS 300

typedef struct ProbeResult {
    const char *how;      /* NULL: no choice made here (not auto, not NVDEC,
                             a stream, a short pair); "measured", "cached" (an
                             earlier run of the process), "saved" (an earlier
                             process on this machine: decoder_choice_file.h),
                             "forced" ($QGPU_HWDEC_PROBE) */
    DecoderChoice choice; /* when how is set */
    double seconds;       /* spent measuring */
    int before_nvdec;     /* the CPU taken before any NVDEC session was
                             opened (probe_known_cpu) */
    char note[256];       /* why nothing was measured, or why the measurement
                             failed (then NVDEC is kept) */
} ProbeResult;

/* After decoder_start of both decoders (opened with --hwdec auto): when
 * both are NVDEC's and the pair is long enough (pairs: the known pair
 * count, 0 unknown), measure and choose; *ref and *dis may then be replaced
 * by the CPU's decoders (the others closed). host_jobs: the jobs of the
 * process that decode at once (1 or 0: alone). $QGPU_HWDEC_PROBE: "0" no
 * measurement (NVDEC, as before), "cpu" or "cuda" that result without
 * measuring, "1" measure even when a decision was saved on this machine; $QGPU_HWDEC_PROBE_TEST=1 (tests): CPU decoders stand for
 * NVDEC's. 0, or < 0 with a message in err (an input could not be
 * rewound). */
/* Before any decoder is opened, --hwdec auto on both inputs: when the
 * process's table or the saved file (or QGPU_HWDEC_PROBE=cpu) already says
 * the CPU for this kind of pair, opens and starts the CPU decoders into
 * *ref and *dis and returns 1 (res says how): no NVDEC session is opened
 * only to be closed. 0 otherwise, nothing opened (NVDEC possible, then
 * probe_choose as before). The key comes from the CPU decoders (the
 * stream's pixel format, not the frames': the same key as NVDEC's). */
int probe_known_cpu(const Options *o, int host_jobs, Decoder **ref, Decoder **dis,
                    ProbeResult *res);

int probe_choose(const Options *o, int host_jobs, unsigned pairs, Decoder **ref,
                 Decoder **dis, ProbeResult *res, char *err, size_t err_len);

/* The measurements (exposed for the tests): after warm unmeasured reads,
 * up to count reads timed (`seconds` once PROBE_MIN_FRAMES are), reading a
 * alone or a and b in turn: frames or pairs per second, 0 when fewer than
 * PROBE_MIN_FRAMES were timed (a short input, an error). */
double probe_rate(Decoder *a, Decoder *b, int warm, int count, double seconds);

#endif
