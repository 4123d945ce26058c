#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int passed, failed;
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

int test_check(int cond, const char *file, int line, const char *fmt, ...)
{
    if (cond) {
        passed++;
        return 1;
    }
    failed++;
    va_list ap;
    fprintf(stdout, "FAIL %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fprintf(stdout, "\n");
    fflush(stdout);
    return 0;
}

int test_finish(void)
{
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

QgpuContext *test_open(int pipeline_depth)
{
    QgpuConfig cfg;
    QgpuContext *ctx = NULL;
    qgpu_config_default(&cfg);
    cfg.pipeline_depth = pipeline_depth;
    int err = qgpu_open(&ctx, &cfg);
    if (!CHECK(err == 0, "qgpu_open: %s: %s", qgpu_strerror(err), qgpu_open_error()))
        return NULL;
    return ctx;
}

void test_seed(uint64_t seed)
{
    rng_state = seed ? seed : 1;
}

uint32_t test_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

int test_rand_range(int lo, int hi)
{
    return lo + (int)(test_rand() % (uint32_t)(hi - lo + 1));
}

int test_plane_w(const QgpuPicture *p, int plane)
{
    int ss = plane && (p->layout == QGPU_LAYOUT_420 || p->layout == QGPU_LAYOUT_422);
    return ss ? (p->width + 1) / 2 : p->width;
}

int test_plane_h(const QgpuPicture *p, int plane)
{
    int ss = plane && p->layout == QGPU_LAYOUT_420;
    return ss ? (p->height + 1) / 2 : p->height;
}

int test_plane_count(int layout)
{
    return layout == QGPU_LAYOUT_400 ? 1 : layout == QGPU_LAYOUT_NV12 ? 2 : 3;
}

/* NV12's planes have 4:2:0's sizes (plane 1: twice the samples a row) */
static QgpuPicture as_planar(const QgpuPicture *p)
{
    QgpuPicture planar = *p;
    if (planar.layout == QGPU_LAYOUT_NV12)
        planar.layout = QGPU_LAYOUT_420;
    return planar;
}

int test_plane_rows(const QgpuPicture *p, int plane)
{
    QgpuPicture planar = as_planar(p);
    return test_plane_h(&planar, plane);
}

size_t test_row_bytes(const QgpuPicture *p, int plane)
{
    QgpuPicture planar = as_planar(p);
    size_t row = (size_t)test_plane_w(&planar, plane) * (p->bitdepth > 8 ? 2 : 1);
    return p->layout == QGPU_LAYOUT_NV12 && plane == 1 ? 2 * row : row;
}

void test_picture_copy_rows(QgpuPicture *dst, const QgpuPicture *src)
{
    for (int p = 0; p < test_plane_count(src->layout); p++)
        for (int y = 0; y < test_plane_rows(src, p); y++)
            memcpy((unsigned char *)dst->data[p] + y * dst->stride[p],
                   (const unsigned char *)src->data[p] + y * src->stride[p],
                   test_row_bytes(src, p));
}

int test_picture_alloc(TestPicture *t, int w, int h, int layout, int bitdepth, int extra_stride)
{
    int bps = bitdepth > 8 ? 2 : 1;
    memset(t, 0, sizeof(*t));
    t->pic.width = w;
    t->pic.height = h;
    t->pic.layout = layout;
    t->pic.bitdepth = bitdepth;
    for (int p = 0; p < (layout == QGPU_LAYOUT_400 ? 1 : 3); p++) {
        ptrdiff_t stride = (ptrdiff_t)test_plane_w(&t->pic, p) * bps + extra_stride;
        t->planes[p] = calloc(1, (size_t)stride * test_plane_h(&t->pic, p));
        if (!t->planes[p])
            return -1;
        t->pic.data[p] = t->planes[p];
        t->pic.stride[p] = stride;
    }
    return 0;
}

void test_picture_free(TestPicture *t)
{
    for (int p = 0; p < 3; p++)
        free(t->planes[p]);
    memset(t, 0, sizeof(*t));
}

unsigned test_sample(const QgpuPicture *p, int plane, int x, int y)
{
    const unsigned char *row = (const unsigned char *)p->data[plane] + p->stride[plane] * y;
    if (p->bitdepth > 8) {
        /* memcpy: rows of an odd byte stride are not 2-byte aligned (UBSan) */
        uint16_t v;
        memcpy(&v, row + 2 * (size_t)x, sizeof(v));
        return v;
    }
    return row[x];
}

void test_store_sample(unsigned char *row, size_t x, int bytes_per_sample, unsigned v)
{
    if (bytes_per_sample == 2) {
        uint16_t s16 = (uint16_t)v; /* memcpy: odd strides are unaligned */
        memcpy(row + 2 * x, &s16, sizeof(s16));
    } else {
        row[x] = (unsigned char)v;
    }
}

int test_block_make(TestBlock *b, const QgpuPicture *src, int nv12, int pad, size_t first,
                    size_t gap)
{
    int bps = src->bitdepth > 8 ? 2 : 1, shift = nv12 && src->bitdepth > 8 ? 16 - src->bitdepth : 0;
    size_t at = first;

    memset(b, 0, sizeof(*b));
    b->planes = nv12 ? 2 : src->layout == QGPU_LAYOUT_400 ? 1 : 3;
    for (int p = 0; p < b->planes; p++) {
        size_t row = (size_t)test_plane_w(src, p) * bps * (nv12 && p ? 2 : 1);
        b->offset[p] = at;
        b->pitch[p] = row + (size_t)pad;
        at += b->pitch[p] * (size_t)test_plane_h(src, p) + gap;
    }
    b->size = at;
    if (!(b->data = malloc(b->size)))
        return -1;
    for (size_t i = 0; i < b->size; i++)
        b->data[i] = (unsigned char)test_rand();
    for (int p = 0; p < b->planes; p++)
        for (int y = 0; y < test_plane_h(src, p); y++) {
            unsigned char *row = b->data + b->offset[p] + (size_t)y * b->pitch[p];
            for (int x = 0; x < test_plane_w(src, p); x++) {
                if (nv12 && p == 1) {
                    test_store_sample(row, 2 * (size_t)x, bps,
                                      test_sample(src, 1, x, y) << shift);
                    test_store_sample(row, 2 * (size_t)x + 1, bps,
                                      test_sample(src, 2, x, y) << shift);
                } else {
                    test_store_sample(row, (size_t)x, bps, test_sample(src, p, x, y) << shift);
                }
            }
        }
    return 0;
}

void test_block_picture(const TestBlock *b, const QgpuPicture *src, int nv12, QgpuPicture *out)
{
    memset(out, 0, sizeof(*out));
    out->width = src->width;
    out->height = src->height;
    out->layout = nv12 ? QGPU_LAYOUT_NV12 : src->layout;
    out->bitdepth = src->bitdepth;
    for (int p = 0; p < b->planes; p++) {
        out->data[p] = b->data + b->offset[p];
        out->stride[p] = (ptrdiff_t)b->pitch[p];
    }
}

void test_block_free(TestBlock *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

void test_set_sample(TestPicture *t, int plane, int x, int y, unsigned v)
{
    unsigned char *row = (unsigned char *)t->planes[plane] + t->pic.stride[plane] * y;
    test_store_sample(row, (size_t)x, t->pic.bitdepth > 8 ? 2 : 1, v);
}

void test_picture_random(TestPicture *t)
{
    unsigned max = (1u << t->pic.bitdepth) - 1;
    for (int p = 0; p < 3 && t->planes[p]; p++)
        for (int y = 0; y < test_plane_h(&t->pic, p); y++)
            for (int x = 0; x < test_plane_w(&t->pic, p); x++)
                test_set_sample(t, p, x, y, test_rand() & max);
}

void test_picture_noisy_copy(TestPicture *dst, const TestPicture *src, int amp)
{
    int max = (1 << src->pic.bitdepth) - 1;
    for (int p = 0; p < 3 && src->planes[p]; p++)
        for (int y = 0; y < test_plane_h(&src->pic, p); y++)
            for (int x = 0; x < test_plane_w(&src->pic, p); x++) {
                int v = (int)test_sample(&src->pic, p, x, y) + test_rand_range(-amp, amp);
                test_set_sample(dst, p, x, y, (unsigned)(v < 0 ? 0 : v > max ? max : v));
            }
}

const char *test_src_path(const char *relative, char *buf, size_t len)
{
    const char *root = getenv("QGPU_SRC");
    snprintf(buf, len, "%s/%s", root && *root ? root : ".", relative);
    return buf;
}

void test_picture_structured(TestPicture *t, int kind)
{
    const QgpuPicture *p = &t->pic;
    unsigned maxv = (1u << p->bitdepth) - 1;
    for (int y = 0; y < p->height; y++) {
        for (int x = 0; x < p->width; x++) {
            unsigned v;
            int block = ((x / 13) + (y / 11) * 3 + kind) % 5;
            if (kind == 3) {
                v = ((x + y) & 1) ? maxv : 0; /* extreme checkerboard */
            } else if (block == 0) {
                v = maxv / 3; /* flat */
            } else if (block == 1) {
                v = (unsigned)((double)maxv * (x + 2 * y) / (p->width + 2 * p->height));
            } else {
                v = test_rand() % (maxv + 1);
                if (block == 2)
                    v = maxv / 2 + (v % ((maxv >> 4) + 1)); /* low contrast texture */
            }
            test_set_sample(t, 0, x, y, v);
        }
    }
}

void test_picture_distort(TestPicture *d, const TestPicture *r, int mode)
{
    const QgpuPicture *p = &r->pic;
    int maxv = (1 << p->bitdepth) - 1;
    for (int y = 0; y < p->height; y++) {
        for (int x = 0; x < p->width; x++) {
            int v = (int)test_sample(p, 0, x, y);
            if (mode == 1)
                v += (int)(test_rand() % 9) - 4;
            else if (mode == 2)
                v = 2 * (v - maxv / 2) + maxv / 2 + (int)(test_rand() % 3) - 1;
            else if (mode == 3)
                v = (v + (int)test_sample(p, 0, x > 0 ? x - 1 : x, y)) / 2;
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            test_set_sample(d, 0, x, y, (unsigned)v);
        }
    }
}

void *test_luma_copy(const QgpuPicture *p)
{
    int bps = p->bitdepth > 8 ? 2 : 1;
    unsigned char *out = malloc((size_t)p->width * p->height * bps);
    if (!out)
        return NULL;
    for (int y = 0; y < p->height; y++)
        memcpy(out + (size_t)y * p->width * bps,
               (const unsigned char *)p->data[0] + y * p->stride[0], (size_t)p->width * bps);
    return out;
}

int test_configure(QgpuContext *ctx, const char *features, const char *model,
                   int compute_bitdepth)
{
    char list[256], *save = NULL;
    int err = 0;
    if (features) {
        snprintf(list, sizeof(list), "%s", features);
        for (char *f = strtok_r(list, "|", &save); f && !err; f = strtok_r(NULL, "|", &save))
            err = qgpu_enable_feature(ctx, f);
    }
    if (!err && model)
        err = qgpu_use_model(ctx, model);
    if (!err && compute_bitdepth)
        err = qgpu_set_compute_bitdepth(ctx, compute_bitdepth);
    return err;
}

void test_same_scores(const char *label, const QgpuContext *a, const char *a_name,
                      const QgpuContext *b, const char *b_name, unsigned frames)
{
    int n = qgpu_score_count(a), bad = 0;
    CHECK(n > 0 && n == qgpu_score_count(b), "%s: %d scores, %s %d", label, n, b_name,
          qgpu_score_count(b));
    CHECK(qgpu_frame_count(a) == frames && qgpu_frame_count(b) == frames,
          "%s: frames %u and %u, expected %u", label, qgpu_frame_count(a), qgpu_frame_count(b),
          frames);
    for (int i = 0; i < n && i < qgpu_score_count(b); i++) {
        const char *name = qgpu_score_name(a, i);
        for (unsigned f = 0; f < frames; f++) {
            double x = NAN, y = NAN;
            int ex = qgpu_get_score(a, f, name, &x), ey = qgpu_get_score(b, f, name, &y);
            int same = ex == ey && (memcmp(&x, &y, sizeof(x)) == 0 || (isnan(x) && isnan(y)));
            if (!same && bad++ < 5)
                CHECK(0, "%s: frame %u %s: %s %.17g (%d), %s %.17g (%d)", label, f, name,
                      a_name, x, ex, b_name, y, ey);
        }
    }
    CHECK(bad == 0, "%s: %u of %d x %u scores equal to the %s path's", label,
          (unsigned)n * frames - (unsigned)bad, n, frames, a_name);
}

void test_collect_both(QgpuContext *a, QgpuContext *b)
{
    unsigned frame;
    while (qgpu_collect(a, &frame, 0) == 1)
        ;
    while (qgpu_collect(b, &frame, 0) == 1)
        ;
}

int test_flush_compare(const char *label, QgpuContext *a, const char *a_name, QgpuContext *b,
                       const char *b_name, unsigned frames)
{
    unsigned frame;
    if (!CHECK(qgpu_flush(a) == 0 && qgpu_flush(b) == 0, "%s: flush: %s / %s", label,
               qgpu_last_error(a), qgpu_last_error(b)))
        return -1;
    while (qgpu_collect(a, &frame, 1) == 1)
        ;
    while (qgpu_collect(b, &frame, 1) == 1)
        ;
    test_same_scores(label, a, a_name, b, b_name, frames);
    return 0;
}
