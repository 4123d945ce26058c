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

static void test_lanes(void)
{
    TestPicture ref[N], dist[N];
    for (int i = 0; i < N; i++) {
        test_picture_alloc(&ref[i], 256, 192, QGPU_LAYOUT_420, 8, 3);
        test_picture_alloc(&dist[i], 256, 192, QGPU_LAYOUT_420, 8, 0);
        test_picture_structured(&ref[i], i % 4);
        test_picture_distort(&dist[i], &ref[i], i % 4);
    }
    test_expect_lanes_identical(spec, DEPTH, ref, dist, N, 60);
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
