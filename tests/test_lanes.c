/*
 * Lanes (doc/design.md, "Lanes"): the frames of a context on 2, 3 or 4
 * compute queues at once (QGPU_LANES) must give the same scores, bit for
 * bit, as on one queue. Every feature runs, with the options that add
 * device work or history (motion's five-frame window, float_motion's half
 * scale and chroma, cambi's full reference, ms_ssim's and ssim's l, c, s
 * outputs), over more frames than slots, so that every slot and lane
 * wraps. PoCL runs a context's queues concurrently, so a feature whose
 * device scratch or history is not kept per lane (or not chained) fails
 * here on CI too.
 */
#include <math.h>
#include <stdlib.h>

#include "driver.h"

#define N 11
#define DEPTH 4

static const char *const spec =
    "vif adm motion motion=motion_five_frame_window=true psnr float_ssim=enable_lcs=true "
    "float_ms_ssim=enable_lcs=true ciede psnr_hvs cambi=full_ref=true ssimulacra2 "
    "speed_chroma float_vif float_adm float_ansnr float_moment float_psnr "
    "float_motion=motion_add_uv=true float_motion=motion_add_scale1=true";

/* Scores of every name of `one` over the N frames equal in `ctx`. */
static int same_scores(QgpuContext *one, QgpuContext *ctx, int *total)
{
    int names = qgpu_score_count(one), same = 0;
    for (int k = 0; k < names; k++) {
        const char *name = qgpu_score_name(one, k);
        for (unsigned f = 0; f < N; f++) {
            double a = NAN, b = NAN;
            int ok = qgpu_get_score(one, f, name, &a) == 0 &&
                     qgpu_get_score(ctx, f, name, &b) == 0;
            /* bit for bit; a non-finite score must be non-finite in both */
            same += ok && (a == b || (isnan(a) && isnan(b)));
        }
    }
    *total = names * N;
    return same;
}

static void test_lanes(void)
{
    TestPicture ref[N], dist[N];
    QgpuContext *one;
    for (int i = 0; i < N; i++) {
        test_picture_alloc(&ref[i], 256, 192, QGPU_LAYOUT_420, 8, 3);
        test_picture_alloc(&dist[i], 256, 192, QGPU_LAYOUT_420, 8, 0);
        test_picture_structured(&ref[i], i % 4);
        test_picture_distort(&dist[i], &ref[i], i % 4);
    }
    setenv("QGPU_LANES", "1", 1);
    one = test_score_pairs(spec, DEPTH, ref, dist, N);
    for (int lanes = 2; one && lanes <= 4; lanes++) {
        char value[2] = {(char)('0' + lanes), 0};
        int total = 0, same = 0;
        setenv("QGPU_LANES", value, 1);
        QgpuContext *ctx = test_score_pairs(spec, DEPTH, ref, dist, N);
        if (ctx)
            same = same_scores(one, ctx, &total);
        CHECK(ctx && total >= 60 * N && same == total,
              "%d lanes: %d of %d scores equal those of one lane", lanes, same, total);
        qgpu_close(&ctx);
    }
    unsetenv("QGPU_LANES");
    qgpu_close(&one);
    for (int i = 0; i < N; i++) {
        test_picture_free(&ref[i]);
        test_picture_free(&dist[i]);
    }
}

static const TestExtra extras[] = {
    {"lanes", test_lanes},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, NULL, 0, extras, 1);
}
