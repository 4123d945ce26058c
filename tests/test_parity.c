/*
 * Corpus parity: every case of tests/parity_cases.txt decodes a fate/ pair,
 * scores it with the listed features, and compares every score those
 * features produce, on every frame, with libvmaf's golden log.
 *
 * QGPU_PARITY_ONLY=substring runs only the cases whose line contains it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libavutil/log.h>

#include "decode.h"
#include "test_util.h"

#define MAX_SPECS 16

typedef struct Pair {
    char name[128];
    char ref[256];
    char dis[256];
} Pair;

static int find_pair(const char *name, Pair *out)
{
    char path[512], line[1024];
    FILE *f = fopen(test_src_path("fate/pairs.txt", path, sizeof(path)), "r");
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof(line), f)) {
        if (line[0] == '#')
            continue;
        if (sscanf(line, "%127s %255s %255s", out->name, out->ref, out->dis) == 3 &&
            !strcmp(out->name, name))
            found = 1;
    }
    fclose(f);
    return found;
}

/* Golden value of `metric` at frame i: 1 and *value, 0 when the log has no
 * such metric, -1 when it prints null (libvmaf's NaN or infinity, e.g.
 * psnr_hvs_cb of a grey clip). */
static int golden_value(json_object *frames, int i, const char *metric, double *value)
{
    json_object *frame = json_object_array_get_idx(frames, i), *metrics, *v = NULL;
    if (!frame || !json_object_object_get_ex(frame, "metrics", &metrics) ||
        !json_object_object_get_ex(metrics, metric, &v))
        return 0;
    if (!v)
        return -1;
    *value = json_object_get_double(v);
    return 1;
}

static int open_pair(const Pair *pair, Decoder **ref, Decoder **dis)
{
    char rel[300], path[512], err[512] = "";
    DecoderInfo ri, di;
    snprintf(rel, sizeof(rel), "fate/%s", pair->ref);
    if (!CHECK(decoder_open(ref, test_src_path(rel, path, sizeof(path)), err, sizeof(err)) == 0,
               "%s", err))
        return -1;
    snprintf(rel, sizeof(rel), "fate/%s", pair->dis);
    if (!CHECK(decoder_open(dis, test_src_path(rel, path, sizeof(path)), err, sizeof(err)) == 0,
               "%s", err))
        return -1;
    decoder_get_info(*ref, &ri);
    decoder_get_info(*dis, &di);
    /* as the golden runs did: distorted scaled to the reference with bicubic */
    if (ri.width != di.width || ri.height != di.height || ri.layout != di.layout ||
        ri.bitdepth != di.bitdepth)
        decoder_set_output(*dis, ri.width, ri.height, ri.layout, ri.bitdepth, "bicubic", err,
                           sizeof(err));
    return 0;
}

/* "shift10" case token: 8-bit input handed to the library as 10-bit samples
 * (x4), as the corpus's *_10bit goldens were made (limited-range << 2). */
static int shift10(const QgpuPicture *in, QgpuPicture *out, uint16_t *buf[3], size_t cap[3])
{
    *out = *in;
    if (in->bitdepth != 8)
        return 0;
    out->bitdepth = 10;
    for (int p = 0; p < (in->layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
        int w = test_plane_w(in, p), h = test_plane_h(in, p);
        size_t need = (size_t)w * h;
        if (need > cap[p]) {
            uint16_t *nb = realloc(buf[p], need * sizeof(uint16_t));
            if (!nb)
                return -1;
            buf[p] = nb;
            cap[p] = need;
        }
        for (int y = 0; y < h; y++) {
            const uint8_t *src = (const uint8_t *)in->data[p] + y * in->stride[p];
            for (int x = 0; x < w; x++)
                buf[p][(size_t)y * w + x] = (uint16_t)(src[x] << 2);
        }
        out->data[p] = buf[p];
        out->stride[p] = (ptrdiff_t)w * 2;
    }
    return 0;
}

static void run_case(const char *line)
{
    char pair_name[128], golden_suffix[64], path[512], rel[512], err[512] = "";
    char specs[MAX_SPECS][256];
    int nb_specs = 0, n = 0, offset = 0;
    double tolerance = 5e-5;
    Pair pair;
    Decoder *ref = NULL, *dis = NULL;
    QgpuContext *ctx = NULL;
    json_object *golden = NULL, *frames = NULL;
    unsigned submitted = 0, frame;
    int to10 = 0, partial = 0, compared = 0;
    uint16_t *buf10[2][3] = {{NULL}};
    size_t cap10[2][3] = {{0}};

    if (sscanf(line, "%127s %63s%n", pair_name, golden_suffix, &offset) != 2)
        return;
    for (const char *p = line + offset; nb_specs < MAX_SPECS; p += n) {
        char token[256];
        if (sscanf(p, "%255s%n", token, &n) != 1)
            break;
        if (!strncmp(token, "tol=", 4))
            tolerance = atof(token + 4);
        else if (!strcmp(token, "shift10"))
            to10 = 1;
        else if (!strcmp(token, "partial"))
            partial = 1;
        else
            snprintf(specs[nb_specs++], sizeof(specs[0]), "%s", token);
    }
    if (!CHECK(find_pair(pair_name, &pair), "pair %s not in fate/pairs.txt", pair_name))
        return;
    snprintf(rel, sizeof(rel), "fate/pairs/%s/%s.%s.json", pair_name, pair_name, golden_suffix);
    golden = json_object_from_file(test_src_path(rel, path, sizeof(path)));
    if (!CHECK(golden && json_object_object_get_ex(golden, "frames", &frames),
               "cannot read golden %s", rel))
        goto out;
    if (open_pair(&pair, &ref, &dis))
        goto out;
    ctx = test_open(3);
    if (!ctx)
        goto out;
    for (int i = 0; i < nb_specs; i++) {
        int is_model = !strncmp(specs[i], "model:", 6);
        int status = is_model ? qgpu_use_model(ctx, specs[i] + 6)
                              : qgpu_enable_feature(ctx, specs[i]);
        if (!CHECK(status == 0, "%s: enable %s: %s", pair_name, specs[i], qgpu_last_error(ctx)))
            goto out;
    }
    for (;;) {
        QgpuPicture rp, dp;
        int r1 = decoder_read(ref, &rp, err, sizeof(err));
        int r2 = r1 == 1 ? decoder_read(dis, &dp, err, sizeof(err)) : 0;
        if (r1 < 0 || r2 < 0) {
            CHECK(0, "%s: decode: %s", pair_name, err);
            goto out;
        }
        if (r1 != 1 || r2 != 1)
            break; /* the shorter input ends the run, as in libvmaf */
        if (to10 && !CHECK(shift10(&rp, &rp, buf10[0], cap10[0]) == 0 &&
                               shift10(&dp, &dp, buf10[1], cap10[1]) == 0,
                           "%s: out of memory", pair_name))
            goto out;
        if (!CHECK(qgpu_submit(ctx, &rp, &dp) == 0, "%s: submit: %s", pair_name,
                   qgpu_last_error(ctx)))
            goto out;
        submitted++;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            ;
    }
    CHECK(qgpu_flush(ctx) == 0, "%s: flush: %s", pair_name, qgpu_last_error(ctx));
    while (qgpu_collect(ctx, &frame, 1) == 1)
        ;
    CHECK(submitted == json_object_array_length(frames) && qgpu_frame_count(ctx) == submitted,
          "%s: scored %u frames, golden has %zu", pair_name, qgpu_frame_count(ctx),
          json_object_array_length(frames));
    for (int k = 0; k < qgpu_score_count(ctx); k++) {
        const char *metric = qgpu_score_name(ctx, k);
        double max_diff = 0.0;
        int worst = 0, missing = 0;
        for (unsigned i = 0; i < submitted; i++) {
            double ours = NAN, gold = NAN;
            int found = golden_value(frames, (int)i, metric, &gold);
            qgpu_get_score(ctx, i, metric, &ours);
            if (found == 0) {
                missing = 1;
                break;
            }
            /* null in the golden: libvmaf's non-finite value; ours must be too */
            double diff = found < 0 ? (isfinite(ours) ? INFINITY : 0.0) : fabs(ours - gold);
            if (!(diff <= max_diff)) { /* NaN counts as worst */
                max_diff = isnan(diff) ? INFINITY : diff;
                worst = (int)i;
            }
        }
        if (missing && partial)
            continue; /* an older libvmaf that does not write this score */
        if (!CHECK(!missing, "%s: %s is not in golden %s", pair_name, metric, rel))
            continue;
        compared++;
        printf("%-40s %-28s max|diff| %.3g (frame %d)\n", pair_name, metric, max_diff, worst);
        CHECK(max_diff <= tolerance, "%s %s: max |diff| %.9g at frame %d > %g", pair_name,
              metric, max_diff, worst, tolerance);
    }
    CHECK(compared > 0, "%s: no score of ours is in golden %s", pair_name, rel);
out:
    qgpu_close(&ctx);
    decoder_close(&ref);
    decoder_close(&dis);
    json_object_put(golden);
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 3; p++)
            free(buf10[i][p]);
}

int main(void)
{
    char path[512], line[2048];
    const char *only = getenv("QGPU_PARITY_ONLY");
    FILE *f = fopen(test_src_path("tests/parity_cases.txt", path, sizeof(path)), "r");
    int cases = 0;
    av_log_set_level(AV_LOG_ERROR);
    if (!CHECK(f != NULL, "cannot open %s", path))
        return test_finish();
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (only && !strstr(line, only))
            continue;
        run_case(line);
        cases++;
    }
    fclose(f);
    CHECK(cases > 0 || only, "no parity case ran");
    return test_finish();
}
