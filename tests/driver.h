/* The checkasm-style driver of the kernel tests: a test is a table of rows
 * {feature spec, reference, outputs, tolerance}; the driver draws the random
 * cases (sizes, layouts, bit depths, strides, pipeline depths, clip lengths),
 * fills the pictures, submits, collects and flushes, looks the outputs up by
 * name and compares them with the reference. A metric's test file is its
 * table plus small functions for what a table cannot say (option errors,
 * limits, hand-computed values), listed as extras.
 *
 * Every test binary takes `--seed N` (or $QGPU_TEST_SEED; the seed is
 * printed on every run), `--test NAME` (only the rows and extras whose name
 * starts with NAME) and `--list`. Each row and extra draws from its own
 * stream (the seed mixed with its name), so `--test NAME` replays exactly
 * what the full run did. See doc/testing.md. */
#ifndef QGPU_TEST_DRIVER_H
#define QGPU_TEST_DRIVER_H

#include "test_util.h"

/* One case: a clip of `frames` pairs scored on one context. */
typedef struct TestCase {
    int w, h, layout, bitdepth;
    int depth;      /* pipeline depth */
    int frames;
    int stride_pad; /* extra bytes per row: reference pad, distorted 2 * pad */
    int variant;    /* free for the row's fill function (e.g. motion speed) */
} TestCase;

/* What fill and reference functions see: the case and its pictures. */
typedef struct TestClip {
    const TestCase *c;
    TestPicture *ref, *dist; /* c->frames each */
    int nb_outputs;          /* of the row: expect[] holds frames x nb_outputs */
    /* frames x nb_outputs, NAN: the row's tolerance; a reference may set an
     * absolute bound for one value where the bound depends on the value
     * (e.g. SSIM in dB: d(dB) = 4.34 d(ssim) / (1 - ssim)) */
    double *bound;
} TestClip;

/* Fills frame `frame` of the clip (both pictures are allocated, zeroed);
 * earlier frames are filled already. */
typedef void (*TestFillFn)(TestClip *clip, int frame);

/* Writes the expected value of output k of frame i to
 * expect[i * nb_outputs + k] (every one: a NAN expects a NaN from the
 * device, libvmaf's non-finite scores). Returns 0, or -1 when it could not
 * compute (out of memory): a failed check. */
typedef int (*TestRefFn)(const TestClip *clip, const void *arg, double *expect);
/* The same for one frame, for features without temporal state (most):
 * expect and bound point at the frame's nb_outputs values. */
typedef int (*TestFrameRefFn)(const TestClip *clip, int frame, const void *arg, double *expect,
                              double *bound);

/* A value passes when |got - expect| <= abs + rel * max(rel_floor,
 * |expect|). All zero: got must equal expect exactly (integer features and
 * anything computed in the same order). A NaN expects a NaN, an infinity
 * the same infinity. */
typedef struct TestTolerance {
    double abs, rel, rel_floor;
} TestTolerance;

/* The shape of a row's random cases: case i gets a random size in the
 * ranges, random padding in [0, max_pad], the (i % n)-th of the n allowed
 * layouts, the ((i + i / n) % m)-th of the m bit depths (so that every
 * layout meets every bit depth), pipeline depth 1 + i % max_depth,
 * 1 + i % max_frames frames and variant 1 + i % max_variant (0 when
 * max_variant is 0). */
typedef struct TestRandom {
    int min_w, max_w, min_h, max_h;
    int layouts;          /* bit mask: 1 << QGPU_LAYOUT_*; 0: all four */
    const int *bitdepths; /* zero-terminated; NULL: 8, 10, 12, 16 */
    int max_frames, max_depth, max_pad, max_variant;
} TestRandom;

typedef struct TestRow {
    const char *name;
    const char *spec; /* a feature spec, or several separated by spaces */
    TestRefFn reference;            /* the whole clip (temporal features), or */
    TestFrameRefFn frame_reference; /* frame by frame */
    const void *ref_arg;            /* handed to the reference (the row's options) */
    const char *const *outputs; /* NULL-terminated; expect[] in this order */
    const char *suffix; /* NULL, or appended to every output and absent name
                         * (libvmaf's option suffix, e.g. "_egl_1") */
    TestTolerance tol;
    const TestTolerance *output_tol; /* NULL, or one per output (overrides tol) */
    const char *const *absent;       /* NULL, or names that must not exist */
    TestFillFn fill;                 /* NULL: test_fill_noisy */
    const TestCase *cases;           /* fixed cases (edge sizes, odd corpus sizes) */
    int nb_cases;
    const TestRandom *random;        /* and nb_random random cases of this shape */
    int nb_random;
} TestRow;

/* A check a table cannot express; runs after the rows. */
typedef struct TestExtra {
    const char *name;
    void (*run)(void);
} TestExtra;

/* Reads --seed, --test, --list; exits with usage on anything else. Returns
 * 1 when the test should only list its rows. */
int test_parse_args(int argc, char **argv);
/* Runs the rows (and extras) that --test selects; each is seeded from the
 * run's seed and its name. */
void test_run_rows(const TestRow *rows, int nb_rows);
void test_run_extras(const TestExtra *extras, int nb_extras);
/* All of the above, then test_finish(): a test's main. */
int test_main(int argc, char **argv, const TestRow *rows, int nb_rows, const TestExtra *extras,
              int nb_extras);

/* test_main for features with two kernel paths chosen by an environment
 * variable (QGPU_VIF_FP64, QGPU_ADM_FP64: the integer emulation of
 * libvmaf's doubles or native doubles; QGPU_CAMBI_CVALUES: sliding
 * histograms or direct counts): the rows run with env=value0, then with
 * env=value1, so that every device checks both. */
int test_main_both_paths(int argc, char **argv, const char *env, const char *value0,
                         const char *value1, const TestRow *rows, int nb_rows,
                         const TestExtra *extras, int nb_extras);

/* test_main over several settings of up to two environment variables
 * (a NULL name: unused): the rows run once per path, then the extras with
 * the variables unset (test_vif: QGPU_VIF_FP64 and QGPU_VIF_S1FP64). */
typedef struct TestPath {
    const char *env[2], *value[2];
} TestPath;
int test_main_paths(int argc, char **argv, const TestPath *paths, int nb_paths,
                    const TestRow *rows, int nb_rows, const TestExtra *extras, int nb_extras);

/* Frame `frame`'s luma planes packed without padding (what the references
 * take): malloc'ed, freed by test_luma_free. Returns 0, or -1 when out of
 * memory (nothing to free then). */
typedef struct TestLuma {
    void *ref, *dist;
} TestLuma;
int test_luma(const TestClip *clip, int frame, TestLuma *l);
void test_luma_free(TestLuma *l);

/* Fill functions for rows. noisy: random reference, distorted = reference
 * plus noise of amplitude 1 + 3 * frame. structured (luma; VIF/ADM):
 * every third frame random, else test_picture_structured of kind
 * (frame + w) % 4, distorted by test_picture_distort mode (frame + h) % 4;
 * chroma random. */
void test_fill_noisy(TestClip *clip, int frame);
void test_fill_structured(TestClip *clip, int frame);
/* For the motion features: the reference's luma a textured pattern moving
 * by frame * variant pixels plus a little noise, every fourth frame a
 * repeat of the one before (motion 0); chroma and distorted random. */
void test_fill_moving(TestClip *clip, int frame);
/* Every luma sample of t set to v. */
void test_fill_flat_luma(TestPicture *t, unsigned v);

/* Extras' helper: a context of the given pipeline depth with spec enabled
 * (several specs separated by spaces) that has scored the n pairs, flushed
 * and collected them all; NULL after a failed check. */
QgpuContext *test_score_pairs(const char *spec, int depth, const TestPicture *ref,
                              const TestPicture *dist, int n);
/* Extras' helper (lanes, doc/design.md): scores spec over the n pairs on
 * one compute queue, then on 2, 3 and 4 (QGPU_LANES); every score of every
 * frame must be the same bit for bit (non-finite in both where it is in
 * one), with at least min_names names scored. */
void test_expect_lanes_identical(const char *spec, int depth, const TestPicture *ref,
                                 const TestPicture *dist, int n, int min_names);
/* Extras' helper (temporal features): on a context of depth 4, frame 0
 * must not be final (collect with wait returns 0) before `needed` frames
 * are submitted, and must be once they are. */
void test_expect_lookahead(const char *spec, int needed);
/* Extras' helper: every spec of the NULL-terminated list must be refused
 * at enable with QGPU_ERR_BAD_OPTION (out-of-range or malformed values,
 * unknown options). */
void test_expect_bad_options(const char *const *specs);
/* Extras' helper: spec enabled, submitting a random w x h picture (layout,
 * bitdepth) must fail with `code` and a message holding both words (word2
 * may be NULL). */
void test_expect_refused(const char *spec, int w, int h, int layout, int bitdepth, int code,
                         const char *word1, const char *word2);

#endif
