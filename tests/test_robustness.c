/* Bad input and failure handling at the library level, beyond test_api.c:
 * NULL and out-of-range arguments on every entry point, calls in the wrong
 * order (collect without submit, submit after flush, flush twice, enable
 * after flush), pictures the device cannot hold (device out of memory must
 * come back as an error, the context must close cleanly and the device stay
 * usable), and two contexts used from two threads at once giving the same
 * scores as one thread alone. A device lost mid-run (libqgpu/src/fault.c's
 * hook): a clear error, the frames before it kept, everything freed, in the
 * library and in the qgpu tool (exit status, complete log). Use after close
 * is undefined behaviour in C (the pointer is freed and set to NULL) and is
 * not tested. */
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "internal.h"
#include "test_util.h"

static void count_device(void *opaque, int platform, int device, const char *type,
                         const char *name, const char *platform_name)
{
    (*(int *)opaque)++;
}

/* Every entry point with NULL or out-of-range arguments: an error code or a
 * neutral value, never a crash. */
static void test_null_arguments(void)
{
    QgpuContext *ctx = test_open(2);
    unsigned frame;
    double v;
    if (!ctx)
        return;
    CHECK(qgpu_collect(NULL, &frame, 0) == QGPU_ERR_INVALID_ARG, "collect NULL ctx");
    CHECK(qgpu_collect(ctx, NULL, 0) == QGPU_ERR_INVALID_ARG, "collect NULL frame pointer");
    CHECK(qgpu_flush(NULL) == QGPU_ERR_INVALID_ARG, "flush NULL");
    CHECK(qgpu_enable_feature(ctx, "") == QGPU_ERR_INVALID_ARG, "empty spec");
    CHECK(qgpu_enable_feature(ctx, "=") == QGPU_ERR_UNKNOWN_FEATURE, "spec '='");
    CHECK(qgpu_enable_feature(ctx, "psnr=") == 0, "'psnr=' means no options");
    CHECK(qgpu_submit(ctx, NULL, NULL) == QGPU_ERR_INVALID_ARG, "submit NULL pictures");
    CHECK(qgpu_enable_feature(ctx, "psnr=:::") == 0, "empty option items are skipped");
    CHECK(qgpu_enable_feature(ctx, "psnr=enable_chroma") == QGPU_ERR_BAD_OPTION,
          "option without value");
    CHECK(qgpu_enable_feature(ctx, "psnr=enable_chroma=maybe") == QGPU_ERR_BAD_OPTION,
          "bad bool");
    CHECK(qgpu_enable_feature(ctx, "psnr=min_sse=abc") == QGPU_ERR_BAD_OPTION, "bad double");
    CHECK(qgpu_enable_feature(ctx, "psnr=min_sse=1e999") == QGPU_ERR_BAD_OPTION ||
              qgpu_enable_feature(ctx, "psnr=min_sse=1e999") == QGPU_ERR_UNKNOWN_FEATURE,
          "double overflow");
    {
        char longspec[600];
        memset(longspec, 'a', sizeof(longspec) - 1);
        longspec[sizeof(longspec) - 1] = '\0';
        CHECK(qgpu_enable_feature(ctx, longspec) == QGPU_ERR_UNKNOWN_FEATURE, "long name");
        memcpy(longspec, "psnr=", 5);
        CHECK(qgpu_enable_feature(ctx, longspec) == QGPU_ERR_BAD_OPTION, "long option");
    }
    CHECK(qgpu_use_model(NULL, "version=vmaf_v0.6.1") == QGPU_ERR_INVALID_ARG, "model NULL ctx");
    CHECK(qgpu_use_model(ctx, "version=no_such_model") == QGPU_ERR_MODEL, "unknown model");
    CHECK(qgpu_use_model(ctx, "path=/nonexistent/model.json") == QGPU_ERR_IO, "missing file");
    CHECK(qgpu_use_model(ctx, "bogus=1") == QGPU_ERR_BAD_OPTION, "bad model spec");
    CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1:path=x") == QGPU_ERR_BAD_OPTION,
          "version and path");
    CHECK(qgpu_use_model(ctx, "path=/dev/null") == QGPU_ERR_MODEL, "empty model file");

    CHECK(qgpu_get_score(NULL, 0, "psnr_y", &v) == QGPU_ERR_INVALID_ARG, "score NULL ctx");
    CHECK(qgpu_get_score(ctx, 0, NULL, &v) == QGPU_ERR_INVALID_ARG, "score NULL name");
    CHECK(qgpu_get_score(ctx, 0, "psnr_y", NULL) == QGPU_ERR_INVALID_ARG, "score NULL value");
    CHECK(qgpu_get_pooled(NULL, "psnr_y", QGPU_POOL_MEAN, &v) == QGPU_ERR_INVALID_ARG,
          "pooled NULL ctx");
    CHECK(qgpu_get_pooled(ctx, NULL, QGPU_POOL_MEAN, &v) == QGPU_ERR_INVALID_ARG,
          "pooled NULL name");
    CHECK(qgpu_get_pooled(ctx, "psnr_y", QGPU_POOL_MEAN, NULL) == QGPU_ERR_INVALID_ARG,
          "pooled NULL value");
    CHECK(qgpu_get_pooled(ctx, "psnr_y", -1, &v) == QGPU_ERR_INVALID_ARG, "pool method -1");
    CHECK(qgpu_get_aggregate(NULL, "x", &v) == QGPU_ERR_INVALID_ARG, "aggregate NULL ctx");
    CHECK(qgpu_get_aggregate(ctx, NULL, &v) == QGPU_ERR_INVALID_ARG, "aggregate NULL name");
    CHECK(qgpu_get_aggregate(ctx, "x", NULL) == QGPU_ERR_INVALID_ARG, "aggregate NULL value");
    CHECK(qgpu_score_name(ctx, -1) == NULL && qgpu_score_name(ctx, 1 << 30) == NULL &&
              qgpu_score_name(NULL, 0) == NULL, "score_name out of range");
    CHECK(qgpu_aggregate_name(ctx, -1) == NULL && qgpu_aggregate_name(NULL, 0) == NULL,
          "aggregate_name out of range");
    CHECK(qgpu_score_count(NULL) == 0 && qgpu_aggregate_count(NULL) == 0 &&
              qgpu_frame_count(NULL) == 0, "counts of NULL");
    CHECK(qgpu_write_log(NULL, "-", QGPU_LOG_FORMAT_JSON, 0) == QGPU_ERR_INVALID_ARG,
          "log NULL ctx");
    CHECK(qgpu_write_log(ctx, NULL, QGPU_LOG_FORMAT_JSON, 0) == QGPU_ERR_INVALID_ARG,
          "log NULL path");
    CHECK(qgpu_write_log(ctx, "/dev/null", 7, 0) == QGPU_ERR_INVALID_ARG, "log format 7");
    CHECK(qgpu_write_log(ctx, "/dev/null", -1, 0) == QGPU_ERR_INVALID_ARG, "log format -1");
    {
        /* fuzz_log finding: a NaN or infinite fps made the JSON log invalid
         * ("fps": -nan); it is written as 0 (unknown) now */
        char path[] = "/tmp/qgpu-robust-XXXXXX", text[4096] = "";
        int fd = mkstemp(path);
        if (fd >= 0) {
            FILE *f;
            size_t n = 0;
            close(fd);
            CHECK(qgpu_write_log(ctx, path, QGPU_LOG_FORMAT_JSON, -NAN) == 0, "log, fps NaN");
            f = fopen(path, "r");
            if (f) {
                n = fread(text, 1, sizeof(text) - 1, f);
                fclose(f);
            }
            text[n] = '\0';
            CHECK(strstr(text, "\"fps\": 0.00,") && !strstr(text, "nan"),
                  "fps NaN written as 0: %.80s", text);
            CHECK(qgpu_write_log(ctx, path, QGPU_LOG_FORMAT_XML, INFINITY) == 0, "XML, fps inf");
            remove(path);
        }
    }
    CHECK(qgpu_list_devices(NULL, NULL) >= 0 || qgpu_list_devices(NULL, NULL) ==
              QGPU_ERR_INVALID_ARG, "list devices without callback");
    CHECK(qgpu_last_error(NULL) != NULL && qgpu_device_name(NULL) != NULL &&
              qgpu_platform_name(NULL) != NULL, "names of NULL");
    CHECK(qgpu_feature_name(-1) == NULL && qgpu_feature_name(1 << 20) == NULL,
          "feature_name out of range");
    CHECK(qgpu_model_name(-1) == NULL && qgpu_model_name(1 << 20) == NULL,
          "model_name out of range");
    qgpu_config_default(NULL);
    qgpu_close(&ctx);
    CHECK(ctx == NULL, "close sets the pointer to NULL");
}

/* Calls in the wrong order, on a context that otherwise works. */
static void test_call_order(void)
{
    QgpuContext *ctx = test_open(3);
    TestPicture a, b;
    unsigned frame;
    double v;
    if (!ctx)
        return;
    test_picture_alloc(&a, 32, 24, QGPU_LAYOUT_420, 10, 6);
    test_picture_alloc(&b, 32, 24, QGPU_LAYOUT_420, 10, 0);
    test_picture_random(&a);
    test_picture_noisy_copy(&b, &a, 9);

    /* nothing enabled, nothing submitted */
    CHECK(qgpu_collect(ctx, &frame, 0) == 0, "collect without submit (no wait)");
    CHECK(qgpu_collect(ctx, &frame, 1) == 0, "collect without submit (wait) returns at once");
    CHECK(qgpu_frame_count(ctx) == 0, "no frames");
    CHECK(qgpu_get_pooled(ctx, "psnr_y", QGPU_POOL_MEAN, &v) == QGPU_ERR_UNKNOWN_FEATURE,
          "pooled before any feature");
    CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "enable");
    CHECK(qgpu_collect(ctx, &frame, 1) == 0, "collect without submit after enable");
    CHECK(qgpu_get_pooled(ctx, "psnr_y", QGPU_POOL_MEAN, &v) != 0 || isnan(v),
          "pooled over zero frames is an error or NaN");
    /* frames, collected one by one while more are submitted */
    for (int i = 0; i < 5; i++) {
        CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == 0, "submit %d: %s", i, qgpu_last_error(ctx));
        CHECK(qgpu_collect(ctx, &frame, 0) >= 0, "collect while submitting");
    }
    CHECK(qgpu_flush(ctx) == 0, "flush");
    CHECK(qgpu_flush(ctx) == 0, "flush twice");
    CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == QGPU_ERR_STATE, "submit after flush");
    CHECK(strlen(qgpu_last_error(ctx)) > 0, "message for submit after flush");
    CHECK(qgpu_enable_feature(ctx, "psnr=enable_mse=true") == QGPU_ERR_STATE,
          "enable after flush");
    CHECK(qgpu_use_model(ctx, "version=vmaf_v0.6.1") == QGPU_ERR_STATE, "model after flush");
    while (qgpu_collect(ctx, &frame, 1) == 1)
        ;
    CHECK(qgpu_frame_count(ctx) == 5, "5 frames (%u)", qgpu_frame_count(ctx));
    CHECK(qgpu_collect(ctx, &frame, 1) == 0 && qgpu_collect(ctx, &frame, 0) == 0,
          "collect past the end");
    CHECK(qgpu_get_score(ctx, 4, "psnr_y", &v) == 0 && isfinite(v), "last frame scored");
    CHECK(qgpu_get_score(ctx, 5, "psnr_y", &v) == QGPU_ERR_INVALID_ARG, "frame 5 not there");
    CHECK(qgpu_get_score(ctx, (unsigned)-1, "psnr_y", &v) == QGPU_ERR_INVALID_ARG,
          "frame UINT_MAX");
    qgpu_close(&ctx);

    /* flush with nothing submitted, then every call still answers */
    ctx = test_open(1);
    if (ctx) {
        CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "enable");
        CHECK(qgpu_flush(ctx) == 0, "flush of an empty stream");
        CHECK(qgpu_collect(ctx, &frame, 1) == 0, "nothing to collect");
        CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == QGPU_ERR_STATE, "submit after empty flush");
        CHECK(qgpu_write_log(ctx, "/dev/null", QGPU_LOG_FORMAT_XML, 0) == 0, "empty log");
        qgpu_close(&ctx);
    }
    /* closing with frames in flight discards them */
    ctx = test_open(4);
    if (ctx) {
        qgpu_enable_feature(ctx, "float_ssim");
        for (int i = 0; i < 3; i++)
            CHECK(qgpu_submit(ctx, &a.pic, &b.pic) == 0, "submit: %s", qgpu_last_error(ctx));
        qgpu_close(&ctx);
        CHECK(ctx == NULL, "close with frames in flight");
    }
    test_picture_free(&a);
    test_picture_free(&b);
}

/* The largest picture the API accepts (32768 x 32768, 16-bit 4:4:4: 6 GiB a
 * picture) on a device that cannot hold it: the submit must fail with a
 * device-memory (or unsupported) error and a message, the context must
 * close cleanly, and a new context on the device must work. The samples are
 * one 2 GiB read-only mapping of zero pages shared by all planes of both
 * pictures (MAP_NORESERVE: no memory is committed). */
static void test_device_out_of_memory(void)
{
    const int w = 32768, h = 32768;
    const size_t plane_bytes = (size_t)w * h * 2;
    QgpuContext *ctx = test_open(2);
    QgpuPicture pic;
    cl_ulong max_alloc = 0;
    void *zeros;
    int err;
    if (!ctx)
        return;
    clGetDeviceInfo(qgpu_cl_device(ctx), CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc),
                    &max_alloc, NULL);
    if (max_alloc >= 3 * plane_bytes) {
        /* a big GPU could hold it: skip rather than copy 12 GiB */
        printf("skip device out of memory: max allocation %llu bytes on %s\n",
               (unsigned long long)max_alloc, qgpu_device_name(ctx));
        qgpu_close(&ctx);
        return;
    }
    zeros = mmap(NULL, plane_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                 0);
    if (!CHECK(zeros != MAP_FAILED, "mmap 2 GiB of zero pages")) {
        qgpu_close(&ctx);
        return;
    }
    memset(&pic, 0, sizeof(pic));
    pic.width = w;
    pic.height = h;
    pic.layout = QGPU_LAYOUT_444;
    pic.bitdepth = 16;
    for (int p = 0; p < 3; p++) {
        pic.data[p] = zeros;
        pic.stride[p] = (ptrdiff_t)w * 2;
    }
    CHECK(qgpu_enable_feature(ctx, "psnr") == 0, "enable");
    err = qgpu_submit(ctx, &pic, &pic);
    CHECK(err == QGPU_ERR_DEVICE_MEMORY || err == QGPU_ERR_UNSUPPORTED,
          "huge picture: %s (%d): %s", qgpu_strerror(err), err, qgpu_last_error(ctx));
    CHECK(strlen(qgpu_last_error(ctx)) > 0, "message: %s", qgpu_last_error(ctx));
    printf("huge picture: %s: %s\n", qgpu_strerror(err), qgpu_last_error(ctx));
    CHECK(qgpu_submit(ctx, &pic, &pic) < 0, "the failed context refuses more frames");
    qgpu_close(&ctx);
    munmap(zeros, plane_bytes);

    /* the device is still usable */
    ctx = test_open(2);
    if (ctx) {
        TestPicture a;
        unsigned frame;
        double v = 0;
        test_picture_alloc(&a, 64, 48, QGPU_LAYOUT_444, 16, 0);
        test_picture_random(&a);
        qgpu_enable_feature(ctx, "psnr");
        CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "submit after OOM: %s",
              qgpu_last_error(ctx));
        qgpu_flush(ctx);
        CHECK(qgpu_collect(ctx, &frame, 1) == 1, "collect after OOM");
        CHECK(qgpu_get_score(ctx, 0, "psnr_y", &v) == 0 && v > 0, "score after OOM");
        test_picture_free(&a);
        qgpu_close(&ctx);
    }
}

/* ---- a device lost mid-run (libqgpu/src/fault.c's hook) ---- */

enum { LOST_FRAMES = 10 };

typedef struct LostRun {
    int err;            /* the first error, 0 if none */
    const char *where;  /* "submit", "collect" or "flush" */
    unsigned delivered; /* frames handed out by collect before it */
} LostRun;

/* Scores LOST_FRAMES frames of a noisy pair with psnr, float_ssim and
 * motion (which keeps a frame of look-ahead), with collect_each a blocking
 * collect after every submit, else none before flush; stops at the first
 * error. The context is left open. */
static void lost_run(QgpuContext *ctx, const TestPicture *ref, const TestPicture *dist,
                     int collect_each, LostRun *run)
{
    unsigned frame;
    int ret;
    run->err = 0;
    run->where = "";
    run->delivered = 0;
    for (int i = 0; i < LOST_FRAMES; i++) {
        if ((ret = qgpu_submit(ctx, &ref->pic, &dist->pic))) {
            run->err = ret;
            run->where = "submit";
            return;
        }
        while (collect_each && (ret = qgpu_collect(ctx, &frame, 1)) == 1)
            run->delivered++;
        if (collect_each && ret < 0) {
            run->err = ret;
            run->where = "collect";
            return;
        }
    }
    if ((ret = qgpu_flush(ctx))) {
        run->err = ret;
        run->where = "flush";
        return;
    }
    while ((ret = qgpu_collect(ctx, &frame, 1)) == 1)
        run->delivered++;
    if (ret < 0) {
        run->err = ret;
        run->where = "collect";
    }
}

static QgpuContext *lost_open(int depth)
{
    QgpuContext *ctx = test_open(depth);
    if (ctx && (qgpu_enable_feature(ctx, "psnr") || qgpu_enable_feature(ctx, "float_ssim") ||
                qgpu_enable_feature(ctx, "motion"))) {
        CHECK(0, "enable: %s", qgpu_last_error(ctx));
        qgpu_close(&ctx);
    }
    return ctx;
}

/* The JSON log of a failed context: it parses and holds `frames` frames. */
static void check_lost_log(QgpuContext *ctx, unsigned frames)
{
    char path[] = "/tmp/qgpu-lost-XXXXXX";
    int fd = mkstemp(path);
    json_object *root, *list;
    if (!CHECK(fd >= 0, "temporary log file"))
        return;
    close(fd);
    CHECK(qgpu_write_log(ctx, path, QGPU_LOG_FORMAT_JSON, 0) == 0,
          "log of a failed context: %s", qgpu_last_error(ctx));
    root = json_object_from_file(path);
    CHECK(root != NULL, "the log is valid JSON");
    if (root && CHECK(json_object_object_get_ex(root, "frames", &list), "log has frames"))
        CHECK(json_object_array_length(list) == frames, "log has %u frames (%zu)", frames,
              json_object_array_length(list));
    json_object_put(root);
    unlink(path);
}

/* The device reports CL_DEVICE_NOT_AVAILABLE at the Nth frame readback
 * (as a lost GPU does): the call that meets it returns QGPU_ERR_OPENCL with
 * the status in the message; the frames finished before it keep their
 * exact scores and can be logged; every later call gets QGPU_ERR_STATE;
 * close frees everything (frames still in flight included: ASan/valgrind
 * runs check that); once the device is back a new context scores. The
 * failure is met in collect, in submit (all slots busy) and in flush. */
static void test_device_lost(void)
{
    static const char *const names[3] = {"psnr_y", "float_ssim", "integer_motion2"};
    static const struct {
        int fail_at, depth, collect_each;
        const char *where;
    } cases[] = {
        {4, 3, 1, "collect"}, /* collect waits for frame 3 */
        {1, 2, 0, "submit"},  /* the third submit waits for frame 0 */
        {7, 4, 0, "flush"},   /* nothing collected before flush */
    };
    TestPicture ref, dist;
    double clean[LOST_FRAMES][3];
    QgpuContext *ctx;
    LostRun run;
    unsigned frame;

    test_seed(77);
    test_picture_alloc(&ref, 72, 40, QGPU_LAYOUT_420, 8, 1);
    test_picture_alloc(&dist, 72, 40, QGPU_LAYOUT_420, 8, 0);
    test_picture_random(&ref);
    test_picture_noisy_copy(&dist, &ref, 9);

    /* the reference run, hook off */
    qgpu_fault_fail_after(0);
    ctx = lost_open(3);
    if (!ctx)
        goto done;
    lost_run(ctx, &ref, &dist, 1, &run);
    CHECK(run.err == 0 && run.delivered == LOST_FRAMES, "clean run: %s", qgpu_last_error(ctx));
    for (int i = 0; i < LOST_FRAMES; i++)
        for (int k = 0; k < 3; k++)
            clean[i][k] = NAN;
    for (unsigned i = 0; i < qgpu_frame_count(ctx) && i < LOST_FRAMES; i++)
        for (int k = 0; k < 3; k++)
            qgpu_get_score(ctx, i, names[k], &clean[i][k]);
    qgpu_close(&ctx);

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned final;
        int same = 1;
        ctx = lost_open(cases[c].depth);
        if (!ctx)
            break;
        qgpu_fault_fail_after(cases[c].fail_at);
        lost_run(ctx, &ref, &dist, cases[c].collect_each, &run);
        CHECK(run.err == QGPU_ERR_OPENCL, "lost at wait %d: QGPU_ERR_OPENCL (%d)",
              cases[c].fail_at, run.err);
        CHECK(!strcmp(run.where, cases[c].where), "lost at wait %d: met in %s (%s)",
              cases[c].fail_at, cases[c].where, run.where);
        CHECK(strstr(qgpu_last_error(ctx), "CL_DEVICE_NOT_AVAILABLE") != NULL,
              "message names the status: %s", qgpu_last_error(ctx));
        /* frames final before the loss: at most those waited for, minus the
         * look-ahead; each with the clean run's exact scores */
        final = qgpu_frame_count(ctx);
        CHECK(final < (unsigned)cases[c].fail_at, "%u final frames before wait %d", final,
              cases[c].fail_at);
        CHECK(final >= run.delivered, "delivered frames are final");
        for (unsigned i = 0; i < final; i++)
            for (int k = 0; k < 3; k++) {
                double v = NAN;
                if (qgpu_get_score(ctx, i, names[k], &v) || v != clean[i][k])
                    same = 0;
            }
        CHECK(same, "frames finished before the loss keep their scores");
        check_lost_log(ctx, final);
        CHECK(qgpu_submit(ctx, &ref.pic, &dist.pic) == QGPU_ERR_STATE, "submit after loss");
        CHECK(qgpu_collect(ctx, &frame, 1) == QGPU_ERR_STATE, "collect after loss");
        CHECK(qgpu_flush(ctx) == QGPU_ERR_STATE, "flush after loss");
        CHECK(strstr(qgpu_last_error(ctx), "failed earlier") != NULL, "says why: %s",
              qgpu_last_error(ctx));
        qgpu_close(&ctx);
        CHECK(ctx == NULL, "closed");
        qgpu_fault_fail_after(0);
    }

    /* the device is back: a new context scores as before */
    ctx = lost_open(2);
    if (ctx) {
        double v = NAN;
        lost_run(ctx, &ref, &dist, 0, &run);
        CHECK(run.err == 0 && run.delivered == LOST_FRAMES, "after the loss: %s",
              qgpu_last_error(ctx));
        CHECK(qgpu_get_score(ctx, LOST_FRAMES - 1, "psnr_y", &v) == 0 &&
                  v == clean[LOST_FRAMES - 1][0], "same score after the loss");
        qgpu_close(&ctx);
    }
done:
    qgpu_fault_fail_after(0);
    test_picture_free(&ref);
    test_picture_free(&dist);
}

/* ---- the qgpu tool when the device is lost ---- */

/* $QGPU_BUILD/qgpu, else the qgpu next to this test's directory. */
static int find_tool(const char *argv0, char *tool, size_t len)
{
    const char *build = getenv("QGPU_BUILD");
    char tmp[1024];
    if (build && *build) {
        snprintf(tool, len, "%s/qgpu", build);
        return access(tool, X_OK) == 0;
    }
    snprintf(tmp, sizeof(tmp), "%s", argv0);
    snprintf(tool, len, "%s/../qgpu", dirname(tmp));
    if (access(tool, X_OK) != 0 || !realpath(tool, tmp))
        return 0;
    snprintf(tool, len, "%s", tmp);
    return 1;
}

static int read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, len - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return f != NULL;
}

/* Every line of the --log-stream file is a complete JSON object, frames
 * 0, 1, ... in order; returns the number of lines, -1 on a bad one. */
static int stream_lines(const char *path)
{
    char line[8192];
    int n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        json_object *obj = json_tokener_parse(line), *num;
        int ok = obj && json_object_object_get_ex(obj, "frameNum", &num) &&
                 json_object_get_int(num) == n;
        json_object_put(obj);
        if (!ok) {
            n = -1;
            break;
        }
        n++;
    }
    fclose(f);
    return n;
}

/* QGPU_TEST_FAIL_AFTER=N: the tool exits with its device status (4), says
 * what failed, and leaves a complete -o log of the frames finished before
 * the loss (none and no file when the first frame is lost) and a
 * --log-stream of whole lines. Skipped when the tool is not built. */
static void test_tool_device_lost(const char *argv0)
{
    char tool[1024], ref[1024], dist[1024], dir[] = "/tmp/qgpu-lost-XXXXXX";
    char cmd[8192], path[1100], err[4096];
    static const int fail_at[2] = {3, 1};

    if (!find_tool(argv0, tool, sizeof(tool))) {
        printf("qgpu tool not built (%s): its device-lost runs skipped\n", tool);
        return;
    }
    test_src_path("fate/refs/nf_sparks_480x270_10b_5f.mkv", ref, sizeof(ref));
    test_src_path("fate/pairs/nf_sparks_480x270_10b_nfdis/dis.mkv", dist, sizeof(dist));
    if (!CHECK(access(ref, R_OK) == 0 && access(dist, R_OK) == 0, "fate pair %s (QGPU_SRC)",
               ref) ||
        !CHECK(mkdtemp(dir) != NULL, "temporary directory"))
        return;
    for (int i = 0; i < 2; i++) {
        json_object *root = NULL, *frames = NULL;
        int st, lines;
        snprintf(cmd, sizeof(cmd),
                 "cd %s && rm -f log.json stream.jsonl && QGPU_TEST_FAIL_AFTER=%d %s -q -r %s "
                 "-d %s -n --feature psnr --feature float_ssim --feature motion --json -o log.json "
                 "--log-stream stream.jsonl 2>stderr.txt",
                 dir, fail_at[i], tool, ref, dist);
        st = system(cmd);
        snprintf(path, sizeof(path), "%s/stderr.txt", dir);
        read_text(path, err, sizeof(err));
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4, "tool, lost at wait %d: exit 4 (%d): %s",
              fail_at[i], WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
        CHECK(strstr(err, "CL_DEVICE_NOT_AVAILABLE") != NULL, "tool says why: %s", err);
        snprintf(path, sizeof(path), "%s/stream.jsonl", dir);
        lines = stream_lines(path);
        CHECK(lines >= 0 && lines < fail_at[i], "--log-stream: %d whole lines", lines);
        snprintf(path, sizeof(path), "%s/log.json", dir);
        if (fail_at[i] == 1) {
            CHECK(access(path, F_OK) != 0, "no frame finished: no -o log");
            continue;
        }
        root = json_object_from_file(path);
        CHECK(root && json_object_object_get_ex(root, "frames", &frames), "-o log is valid JSON");
        if (frames)
            CHECK((int)json_object_array_length(frames) >= lines &&
                      (int)json_object_array_length(frames) < fail_at[i],
                  "-o log: %zu frames finished before the loss (stream %d)",
                  json_object_array_length(frames), lines);
        json_object_put(root);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
}

/* ---- two contexts, two threads ---- */

enum { THREAD_FRAMES = 12 };

typedef struct ThreadJob {
    int width, height, layout, bitdepth;
    uint64_t seed;
    double scores[THREAD_FRAMES][3]; /* psnr_y, float_ssim, integer_motion2 */
    int ok;
} ThreadJob;

/* Scores THREAD_FRAMES frames; only this thread touches its context and
 * pictures. The pictures come from an xorshift of the job's own seed (the
 * test_util random generator is global, so not used here). */
static void *thread_run(void *opaque)
{
    ThreadJob *job = opaque;
    QgpuConfig cfg;
    QgpuContext *ctx = NULL;
    TestPicture ref, dist;
    uint64_t s = job->seed;
    unsigned frame;
    const char *names[3] = {"psnr_y", "float_ssim", "integer_motion2"};

    job->ok = 0;
    qgpu_config_default(&cfg);
    cfg.pipeline_depth = 2;
    if (qgpu_open(&ctx, &cfg))
        return NULL;
    if (qgpu_enable_feature(ctx, "psnr") || qgpu_enable_feature(ctx, "float_ssim") ||
        qgpu_enable_feature(ctx, "motion")) {
        qgpu_close(&ctx);
        return NULL;
    }
    test_picture_alloc(&ref, job->width, job->height, job->layout, job->bitdepth, 2);
    test_picture_alloc(&dist, job->width, job->height, job->layout, job->bitdepth, 0);
    for (int i = 0; i < THREAD_FRAMES; i++) {
        unsigned max = (1u << job->bitdepth) - 1;
        for (int p = 0; p < 3 && ref.planes[p]; p++)
            for (int y = 0; y < test_plane_h(&ref.pic, p); y++)
                for (int x = 0; x < test_plane_w(&ref.pic, p); x++) {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    unsigned r = (unsigned)(s >> 11) & max, n = (unsigned)(s >> 40) & 15;
                    test_set_sample(&ref, p, x, y, r);
                    test_set_sample(&dist, p, x, y, r + n > max ? max : r + n);
                }
        if (qgpu_submit(ctx, &ref.pic, &dist.pic))
            goto done;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            ;
    }
    qgpu_flush(ctx);
    while (qgpu_collect(ctx, &frame, 1) == 1)
        ;
    if (qgpu_frame_count(ctx) != THREAD_FRAMES)
        goto done;
    for (int i = 0; i < THREAD_FRAMES; i++)
        for (int k = 0; k < 3; k++)
            if (qgpu_get_score(ctx, i, names[k], &job->scores[i][k]))
                goto done;
    job->ok = 1;
done:
    test_picture_free(&ref);
    test_picture_free(&dist);
    qgpu_close(&ctx);
    return NULL;
}

static void test_two_threads(void)
{
    ThreadJob alone[2] = {
        {96, 64, QGPU_LAYOUT_420, 8, 11, {{0}}, 0},
        {80, 72, QGPU_LAYOUT_444, 10, 22, {{0}}, 0},
    };
    ThreadJob together[2];
    pthread_t th[2];

    /* each job alone, one after the other */
    thread_run(&alone[0]);
    thread_run(&alone[1]);
    CHECK(alone[0].ok && alone[1].ok, "jobs alone");
    /* both at once, three rounds: same scores, bit for bit */
    for (int round = 0; round < 3; round++) {
        memcpy(together, alone, sizeof(together));
        for (int t = 0; t < 2; t++)
            CHECK(pthread_create(&th[t], NULL, thread_run, &together[t]) == 0, "thread");
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < 2; t++) {
            CHECK(together[t].ok, "round %d thread %d ran", round, t);
            CHECK(!memcmp(together[t].scores, alone[t].scores, sizeof(alone[t].scores)),
                  "round %d thread %d: same scores as alone", round, t);
        }
    }
    /* and many short-lived contexts opened and closed by several threads */
}

static void *open_close_run(void *opaque)
{
    int *failures = opaque;
    for (int i = 0; i < 8; i++) {
        QgpuContext *ctx = NULL;
        QgpuConfig cfg;
        int devices = 0;
        qgpu_config_default(&cfg);
        if (qgpu_open(&ctx, &cfg) || qgpu_enable_feature(ctx, "psnr"))
            (*failures)++;
        if (qgpu_list_devices(count_device, &devices) <= 0)
            (*failures)++;
        qgpu_close(&ctx);
    }
    return NULL;
}

static void test_open_close_threads(void)
{
    pthread_t th[3];
    int failures[3] = {0, 0, 0};
    for (int t = 0; t < 3; t++)
        CHECK(pthread_create(&th[t], NULL, open_close_run, &failures[t]) == 0, "thread");
    for (int t = 0; t < 3; t++) {
        pthread_join(th[t], NULL);
        CHECK(failures[t] == 0, "thread %d: %d failed opens", t, failures[t]);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    test_null_arguments();
    test_call_order();
    test_device_out_of_memory();
    test_device_lost();
    test_tool_device_lost(argv[0]);
    test_two_threads();
    test_open_close_threads();
    return test_finish();
}
