/* Small test harness: counters, checks, random pictures, a device context. */
#ifndef QGPU_TEST_UTIL_H
#define QGPU_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "qgpu/qgpu.h"

/* Counts a check; prints "FAIL file:line: message" when cond is false.
 * Returns cond so callers can stop early. */
int test_check(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define CHECK(cond, ...) test_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Prints "N passed, N failed" and returns the exit status. */
int test_finish(void);

/* Opens a context on $QGPU_DEVICE (default "auto") or fails the test. */
QgpuContext *test_open(int pipeline_depth);

/* Deterministic random numbers (xorshift). */
void test_seed(uint64_t seed);
uint32_t test_rand(void);
int test_rand_range(int lo, int hi); /* inclusive */

/* A picture that owns its planes (ceil-size chroma, given extra stride). */
typedef struct TestPicture {
    QgpuPicture pic;
    void *planes[3];
} TestPicture;

int test_picture_alloc(TestPicture *t, int w, int h, int layout, int bitdepth, int extra_stride);
void test_picture_free(TestPicture *t);
/* Fills with random samples in [0, 2^bitdepth). */
void test_picture_random(TestPicture *t);
/* Copies a with random noise of amplitude amp added (clamped). */
void test_picture_noisy_copy(TestPicture *dst, const TestPicture *src, int amp);
/* Luma only, for the VIF/ADM tests: a structured picture (kind 0..2: flat,
 * ramp, texture and noise blocks; kind 3: an extreme checkerboard), and a
 * distorted copy of it (mode 0: same, 1: noise, 2: contrast stretch,
 * 3: horizontal blur); both draw from test_rand(). */
void test_picture_structured(TestPicture *t, int kind);
void test_picture_distort(TestPicture *dst, const TestPicture *src, int mode);
/* The luma plane packed without stride (malloc'ed; NULL when out of memory). */
void *test_luma_copy(const QgpuPicture *p);
/* Plane geometry helpers (ceil chroma as stored). */
int test_plane_w(const QgpuPicture *p, int plane);
int test_plane_h(const QgpuPicture *p, int plane);
/* The same with NV12 (plane 1: the Cb Cr pairs) as the library reads it:
 * planes of a layout, a plane's rows, and the bytes of a row's samples. */
int test_plane_count(int layout);
int test_plane_rows(const QgpuPicture *p, int plane);
size_t test_row_bytes(const QgpuPicture *p, int plane);
/* Copies the samples of src into dst, a picture of the same size, layout
 * (NV12 included) and depth, row by row (their strides may differ). */
void test_picture_copy_rows(QgpuPicture *dst, const QgpuPicture *src);
/* Sample read/write. */
unsigned test_sample(const QgpuPicture *p, int plane, int x, int y);
void test_set_sample(TestPicture *t, int plane, int x, int y, unsigned v);
/* Sample x of a row of 1- or 2-byte samples (native words). */
void test_store_sample(unsigned char *row, size_t x, int bytes_per_sample, unsigned v);

/* A picture's bytes in one block, as GPU memory holds them: random bytes,
 * then the planes from byte `first` on, rows `pad` bytes longer than their
 * samples, `gap` bytes between planes; nv12: luma and the Cb Cr pairs,
 * MSB-aligned words above 8 bits. (test_extmem: an OpenCL buffer;
 * test_cuda: CUDA memory.) */
typedef struct TestBlock {
    unsigned char *data;
    size_t size, offset[3], pitch[3];
    int planes;
} TestBlock;
int test_block_make(TestBlock *b, const QgpuPicture *src, int nv12, int pad, size_t first,
                    size_t gap); /* 0, or -1 out of memory */
/* The host picture of the block's bytes, as qgpu_submit() takes it. */
void test_block_picture(const TestBlock *b, const QgpuPicture *src, int nv12, QgpuPicture *out);
void test_block_free(TestBlock *b);

/* Enables the '|'-separated features (may be NULL), a model spec (may be
 * NULL) and a compute bit depth (0: none): 0 or the first error. */
int test_configure(QgpuContext *ctx, const char *features, const char *model,
                   int compute_bitdepth);

/* Collects the finished frames of both contexts, without waiting. */
void test_collect_both(QgpuContext *a, QgpuContext *b);
/* Flushes both contexts, collects every frame and checks that they hold
 * the same scores (test_same_scores); 0 when it got that far. */
int test_flush_compare(const char *label, QgpuContext *a, const char *a_name, QgpuContext *b,
                       const char *b_name, unsigned frames);

/* Checks that two contexts hold the same score names and, for each of
 * `frames` frames, identical bits for every score (NaN equals NaN); the
 * messages name the case and the two paths ("host", "images"). */
void test_same_scores(const char *label, const QgpuContext *a, const char *a_name,
                      const QgpuContext *b, const char *b_name, unsigned frames);

/* Path of a file under the source tree ($QGPU_SRC, default "."). */
const char *test_src_path(const char *relative, char *buf, size_t len);

#endif
