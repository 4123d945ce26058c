/*
 * --hwdec auto by measurement: see probe.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "closer.h"
#include "qgpu/qgpu_cuda.h"
#include "decoder_choice_file.h"
#include "hwdec.h"
#include "probe.h"

/* Warnings while measuring are left to the run, which decodes the same
 * frames again. */
static void quiet_warn(void *opaque, const char *message)
{
    (void)opaque;
    (void)message;
}

double probe_rate(Decoder *a, Decoder *b, int warm, int count, double seconds)
{
    QgpuPicture pic;
    char err[256];
    double start = 0.0, last = 0.0;
    int timed = 0;
    if (warm < 1)
        warm = 1; /* the first read starts the clock */
    for (int i = 0; i < warm + count; i++) {
        if (decoder_read(a, &pic, err, sizeof(err)) != 1 ||
            (b && decoder_read(b, &pic, err, sizeof(err)) != 1))
            break;
        last = monotonic_seconds();
        if (i + 1 == warm)
            start = last;
        if (i + 1 <= warm)
            continue;
        timed++;
        /* the time allowed, once PROBE_MIN_FRAMES are timed (a slow
         * decoder gets up to five times as long for them) */
        if ((timed >= PROBE_MIN_FRAMES && last - start >= seconds) ||
            last - start >= 5.0 * seconds)
            break;
    }
    return timed >= PROBE_MIN_FRAMES && last > start ? timed / (last - start) : 0.0;
}

/* What decides an input's decoding speed (decoder_choice.h). */
static void stream_key(const Decoder *dec, DecoderStreamKey *k)
{
    DecoderInfo info;
    decoder_get_info(dec, &info);
    memset(k, 0, sizeof(*k));
    k->codec_id = info.codec_id;
    k->profile = info.profile;
    k->width = info.width;
    k->height = info.height;
    /* the stream's format, not the frames' (NVDEC's nv12 is the CPU's
     * yuv420p): the key is the same from either decoder */
    snprintf(k->pix_fmt, sizeof(k->pix_fmt), "%s",
             info.stream_pix_fmt ? info.stream_pix_fmt : "");
    k->rate_bucket = decoder_choice_bucket(info.bit_rate, info.width, info.height, info.fps);
}

/* An input whose decoder is NVDEC's, not a stream. $QGPU_HWDEC_PROBE_TEST=1
 * (tests): CPU decoders stand for NVDEC's, so that the measurement, the
 * choice and the rewinding run on machines without NVDEC. */
/* NVDEC could be opened: a CUDA driver (or the tests' stand-in). */
static int nvdec_possible(void)
{
    const char *test = getenv("QGPU_HWDEC_PROBE_TEST");
    return qgpu_cuda_driver_present() || (test && !strcmp(test, "1"));
}

static int is_cuda(const Decoder *dec)
{
    const char *test = getenv("QGPU_HWDEC_PROBE_TEST");
    DecoderInfo info;
    decoder_get_info(dec, &info);
    return (!strcmp(info.decoder, "cuda") || (test && !strcmp(test, "1"))) && !info.stream;
}

/* The CPU decoders of both inputs, started, or -1 (why in note). */
static int open_cpu(const Options *o, Decoder *cpu[2], char *note, size_t note_len)
{
    const char *path[2] = {o->reference, o->distorted};
    char err[1024];
    for (int i = 0; i < 2; i++) {
        if (decoder_open_hw(&cpu[i], path[i], HWDEC_NONE, err, sizeof(err)) ||
            (decoder_set_warn(cpu[i], "", quiet_warn, NULL),
             decoder_start(cpu[i], err, sizeof(err)))) {
            snprintf(note, note_len, "the CPU decoder could not be measured: %.200s", err);
            return -1;
        }
    }
    return 0;
}

/* Both paths measured: 0 with c set, or -1 (why in note). */
static int measure(const Options *o, Decoder *hw[2], Decoder *cpu[2], DecoderChoice *c,
                   int host_jobs, char *note, size_t note_len)
{
    DecoderInfo info;
    double fps[2];
    for (int i = 0; i < 2; i++) {
        /* a few frames for NVDEC's surfaces; its frames go out as they are
         * (the zero-copy path), as in the run */
        decoder_set_semiplanar(hw[i], 1);
        fps[i] = probe_rate(hw[i], NULL, 8, PROBE_FRAMES, PROBE_SECONDS);
        decoder_set_semiplanar(hw[i], 0);
    }
    c->hw_pairs = decoder_choice_hw_pairs(fps[0], fps[1]);
    if (!(c->hw_pairs > 0.0)) {
        snprintf(note, note_len, "too few frames to measure NVDEC");
        return -1;
    }
    if (open_cpu(o, cpu, note, note_len))
        return -1;
    /* frame threads: the first frames come out in a burst (decoded side
     * by side from the start), which timed would inflate the rate by half
     * (H200: 1,020-1,100 pairs/s measured after one frame per thread
     * against a floor of 696-731 for HEVC): timed after two frames per
     * thread, when each frame out has waited for its own decoding */
    decoder_get_info(cpu[0], &info);
    c->cpu_pairs = probe_rate(cpu[0], cpu[1], 2 * info.threads + 2, PROBE_FRAMES,
                              PROBE_SECONDS);
    if (!(c->cpu_pairs > 0.0)) {
        snprintf(note, note_len, "too few frames to measure the CPU decoders");
        return -1;
    }
    c->mode = decoder_choice_pick(c->cpu_pairs, c->hw_pairs, host_jobs);
    return 0;
}

/* $QGPU_HWDEC_PROBE=1: measure even when this machine measured the kind of
 * pair before (decoder_choice_file.h). */
static int remeasure(void)
{
    const char *env = getenv("QGPU_HWDEC_PROBE");
    return env && !strcmp(env, "1");
}

/* $QGPU_HWDEC_PROBE: 1 and c set for "cpu"/"cuda", 0 otherwise (-1: "0"). */
static int forced(DecoderChoice *c)
{
    const char *env = getenv("QGPU_HWDEC_PROBE");
    memset(c, 0, sizeof(*c));
    if (!env || !*env)
        return 0;
    if (!strcmp(env, "0"))
        return -1;
    if (!strcmp(env, "cpu") || !strcmp(env, "none")) {
        c->mode = HWDEC_NONE;
        return 1;
    }
    if (!strcmp(env, "cuda")) {
        c->mode = HWDEC_CUDA;
        return 1;
    }
    return 0;
}

int probe_known_cpu(const Options *o, int host_jobs, Decoder **ref, Decoder **dis,
                    ProbeResult *res)
{
    Decoder *cpu[2] = {NULL, NULL};
    DecoderChoiceKey key;
    DecoderInfo info[2];
    char note[256];
    int force;

    memset(res, 0, sizeof(*res));
    if (o->hwdec != HWDEC_AUTO || o->hwdec_dist != HWDEC_AUTO || o->raw_spec ||
        (force = forced(&res->choice)) < 0 || remeasure() || !nvdec_possible())
        return 0;
    if (force && res->choice.mode != HWDEC_NONE)
        return 0;
    /* the key needs the CPU decoders opened: only worth it when some
     * decision for the CPU exists (else every NVDEC run would pay it) */
    if (!force && !decoder_choice_has_cpu() && !decoder_choice_file_has_cpu())
        return 0;
    if (open_cpu(o, cpu, note, sizeof(note)))
        goto not_known;
    decoder_get_info(cpu[0], &info[0]);
    decoder_get_info(cpu[1], &info[1]);
    if (info[0].stream || info[1].stream)
        goto not_known;
    if (force) {
        res->how = "forced";
    } else {
        memset(&key, 0, sizeof(key));
        stream_key(cpu[0], &key.in[0]);
        stream_key(cpu[1], &key.in[1]);
        key.host_jobs = host_jobs > 1 ? host_jobs : 1;
        if (decoder_choice_peek(&key, &res->choice)) {
            res->how = "cached";
        } else if (decoder_choice_file_find(&key, &res->choice)) {
            res->how = "saved";
        }
        if (!res->how || res->choice.mode != HWDEC_NONE)
            goto not_known; /* probe_choose takes it from there */
        if (!strcmp(res->how, "saved"))
            decoder_choice_store(&key, &res->choice); /* for the process's next runs */
    }
    res->before_nvdec = 1;
    *ref = cpu[0];
    *dis = cpu[1];
    return 1;

not_known:
    decoder_close(&cpu[0]);
    decoder_close(&cpu[1]);
    memset(res, 0, sizeof(*res));
    return 0;
}

int probe_choose(const Options *o, int host_jobs, unsigned pairs, Decoder **ref,
                 Decoder **dis, ProbeResult *res, char *err, size_t err_len)
{
    Decoder *hw[2] = {*ref, *dis}, *cpu[2] = {NULL, NULL};
    DecoderChoiceKey key;
    double start = monotonic_seconds();
    int force, ret = 0, measured = 0;

    memset(res, 0, sizeof(*res));
    if (o->hwdec != HWDEC_AUTO || o->hwdec_dist != HWDEC_AUTO || o->raw_spec ||
        !is_cuda(*ref) || !is_cuda(*dis))
        return 0;
    if ((force = forced(&res->choice)) < 0)
        return 0;
    if (force) {
        res->how = "forced";
    } else {
        memset(&key, 0, sizeof(key));
        stream_key(*ref, &key.in[0]);
        stream_key(*dis, &key.in[1]);
        key.host_jobs = host_jobs > 1 ? host_jobs : 1;
        if (decoder_choice_claim(&key, &res->choice)) {
            res->how = "cached";
        } else if (!remeasure() && decoder_choice_file_find(&key, &res->choice)) {
            decoder_choice_store(&key, &res->choice); /* for the process's next runs */
            res->how = "saved";
        } else if (pairs && pairs < (host_jobs > 0 ? 2u * PROBE_FRAMES : PROBE_MIN_PAIRS)) {
            decoder_choice_abandon(&key);
            snprintf(res->note, sizeof(res->note), "%u pairs: too short to measure the "
                     "decoders", pairs);
            return 0;
        } else {
            for (int i = 0; i < 2; i++)
                decoder_set_warn(hw[i], "", quiet_warn, NULL);
            if (measure(o, hw, cpu, &res->choice, key.host_jobs, res->note,
                        sizeof(res->note))) {
                decoder_choice_abandon(&key);
                res->choice.mode = HWDEC_CUDA;
            } else {
                decoder_choice_store(&key, &res->choice);
                decoder_choice_file_add(&key, &res->choice);
                res->how = "measured";
            }
            measured = 1;
        }
    }
    if (res->choice.mode == HWDEC_NONE && !cpu[0] && open_cpu(o, cpu, res->note,
                                                              sizeof(res->note))) {
        res->how = NULL; /* the CPU decoders do not open: NVDEC's, then */
        res->choice.mode = HWDEC_CUDA;
    }
    if (res->choice.mode == HWDEC_NONE) {
        for (int i = 0; i < 2; i++) {
            closer_close(&hw[i]); /* NVDEC's tear-down off this thread */
            hw[i] = cpu[i];
            cpu[i] = NULL;
            if (!ret && measured)
                ret = decoder_rewind(hw[i], err, err_len);
        }
    } else if (measured) {
        /* NVDEC's decoders measured are replaced by fresh ones rather than
         * rewound: H.264's NVDEC decoded the pair at 515 pairs/s after a
         * rewind (its flush re-creates the NVDEC decoder) against 741
         * opened afresh (H200, doc/performance.md) */
        const char *path[2] = {o->reference, o->distorted};
        for (int i = 0; i < 2; i++) {
            /* its zero-copy ring (no frame out, nothing imported) goes to
             * the fresh decoder of the same device (hwdec_park), asked for
             * as many slots (sessions': run.c) */
            int slots = decoder_ring_slots(hw[i]);
            decoder_park(hw[i]);
            closer_close(&hw[i]);
            if (!ret && !(ret = decoder_open_hw(&hw[i], path[i], HWDEC_AUTO, err, err_len))) {
                decoder_set_ring_slots(hw[i], slots);
                ret = decoder_start(hw[i], err, err_len);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        decoder_close(&cpu[i]);
    *ref = hw[0];
    *dis = hw[1];
    res->seconds = monotonic_seconds() - start;
    return ret;
}
