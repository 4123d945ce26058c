/*
 * --hwdec auto's choice between NVDEC and the CPU decoder, by measured
 * speed (probe.h measures; this file decides and remembers).
 *
 * The rates are the decode-only floors of the two paths for one pair of
 * inputs: NVDEC's sessions decode the two inputs at once, each on its own
 * thread, so NVDEC's pairs/s is the slower input's frames/s; the CPU
 * decoders are read in turn on one thread, their frame threads sharing
 * the cores, and are measured that way, in pairs/s. Decisions are kept for
 * the process (a batch of many jobs of the same kind measures once), by
 * what decides the speed: codec, profile, size, pixel format and bit rate
 * (in half-octave buckets of bits per pixel) of both inputs.
 */
#ifndef QGPU_TOOL_DECODER_CHOICE_H
#define QGPU_TOOL_DECODER_CHOICE_H

/* The CPU path is taken only when its floor is this much above NVDEC's:
 * scoring reached 72-86% of the CPU decoders' floor (the host staging
 * copies share the cores with them) against 86-98% of NVDEC's with the
 * zero-copy path (H200, doc/performance.md, issue #18). */
#define DECODER_CHOICE_CPU_MARGIN 1.15

/* What decides one input's decoding speed. */
typedef struct DecoderStreamKey {
    int codec_id, profile, width, height;
    char pix_fmt[32];
    int rate_bucket; /* decoder_choice_bucket */
} DecoderStreamKey;

/* Both inputs, and how many jobs of the process decode at once. */
typedef struct DecoderChoiceKey {
    DecoderStreamKey in[2];
    int host_jobs;
} DecoderChoiceKey;

typedef struct DecoderChoice {
    int mode;         /* HWDEC_NONE (the CPU) or HWDEC_CUDA (NVDEC), hwdec.h */
    double cpu_pairs; /* the measured floors, pairs/s (0: not measured) */
    double hw_pairs;
} DecoderChoice;

/* floor(2 log2(bits per pixel)) of a stream of bit_rate bits/s, w x h
 * pixels at fps frames/s; DECODER_CHOICE_NO_BUCKET when a figure is
 * unknown (0). */
#define DECODER_CHOICE_NO_BUCKET (-1000)
int decoder_choice_bucket(double bit_rate, int width, int height, double fps);

/* NVDEC's pairs/s from each input's frames/s: the slower one (0 when
 * either is unknown). */
double decoder_choice_hw_pairs(double ref_fps, double dist_fps);

/* HWDEC_NONE or HWDEC_CUDA for the measured floors (pairs/s of one pair
 * alone). host_jobs > 1 (a batch's jobs at once): the CPU decoders' cores
 * are shared by that many jobs, its floor divided by it; NVDEC's is not (a
 * GPU has several decoder engines: 8 processes at once decoded 3.5 times
 * one session's pairs/s on the H200). NVDEC when a floor is unknown (0,
 * NaN) or the CPU's is not DECODER_CHOICE_CPU_MARGIN above. */
int decoder_choice_pick(double cpu_pairs, double hw_pairs, int host_jobs);

/* The process's table of decisions. decoder_choice_claim: 1 and *out set
 * when key was decided before (waiting while another thread measures it);
 * else 0, and the caller measures, then calls decoder_choice_store (or
 * decoder_choice_abandon when it could not measure: the next run tries).
 * decoder_choice_store also enters a decision found elsewhere (the saved
 * file) without a claim. */
int decoder_choice_claim(const DecoderChoiceKey *key, DecoderChoice *out);
void decoder_choice_store(const DecoderChoiceKey *key, const DecoderChoice *choice);
/* 1 and *out set when key is decided already; 0 otherwise (nothing
 * claimed, no waiting). */
int decoder_choice_peek(const DecoderChoiceKey *key, DecoderChoice *out);
/* 1 when some kind of pair was decided for the CPU in this process. */
int decoder_choice_has_cpu(void);
void decoder_choice_abandon(const DecoderChoiceKey *key);

/* Forgets every decision (tests). */
void decoder_choice_reset(void);

#endif
