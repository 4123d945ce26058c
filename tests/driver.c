#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* The seed when neither --seed nor $QGPU_TEST_SEED gives one (make
 * check's). Other seeds draw other cases; doc/testing.md lists what some of
 * them find (ciede2000 of 1- and 2-pixel pictures beyond test_ciede's
 * bound). */
static uint64_t run_seed = 2;
static const char *only_prefix;
static int list_only, nb_selected;

static int parse_seed(const char *text)
{
    char *end;
    run_seed = strtoull(text, &end, 0);
    return *text && !*end;
}

int test_parse_args(int argc, char **argv)
{
    const char *env = getenv("QGPU_TEST_SEED");
    if (env && *env && !parse_seed(env)) {
        fprintf(stderr, "%s: QGPU_TEST_SEED=%s is not a number\n", argv[0], env);
        exit(2);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            if (!parse_seed(argv[++i]))
                goto usage;
        } else if (!strcmp(argv[i], "--test") && i + 1 < argc) {
            only_prefix = argv[++i];
        } else if (!strcmp(argv[i], "--list")) {
            list_only = 1;
        } else {
            goto usage;
        }
    }
    if (!list_only)
        printf("seed %llu (replay: %s --seed %llu [--test NAME])\n", (unsigned long long)run_seed,
               argv[0], (unsigned long long)run_seed);
    return list_only;
usage:
    fprintf(stderr, "usage: %s [--seed N] [--test NAME] [--list]\n", argv[0]);
    exit(2);
}

static int selected(const char *name)
{
    if (list_only) {
        printf("%s\n", name);
        return 0;
    }
    if (only_prefix && strncmp(name, only_prefix, strlen(only_prefix)))
        return 0;
    nb_selected++;
    return 1;
}

/* A --test that selects nothing is a mistake, not a pass. */
static int finish(void)
{
    if (only_prefix)
        CHECK(nb_selected > 0, "--test %s matches no row or extra (see --list)", only_prefix);
    return test_finish();
}

/* The run's seed mixed with a name (FNV-1a), so that each row draws the
 * same numbers whether it runs alone or with the others. */
static void seed_for(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ run_seed;
    for (const char *s = name; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    test_seed(h);
}

static int enable_specs(QgpuContext *ctx, const char *specs)
{
    char buf[512];
    char *save = NULL;
    if (!CHECK(strlen(specs) < sizeof(buf), "spec too long: %s", specs))
        return 0;
    strcpy(buf, specs);
    for (char *s = strtok_r(buf, " ", &save); s; s = strtok_r(NULL, " ", &save))
        if (!CHECK(qgpu_enable_feature(ctx, s) == 0, "enable %s: %s", s, qgpu_last_error(ctx)))
            return 0;
    return 1;
}

static int count_names(const char *const *names)
{
    int n = 0;
    while (names && names[n])
        n++;
    return n;
}

static int within(double got, double expect, const TestTolerance *t)
{
    if (isnan(expect))
        return isnan(got);
    if (isinf(expect)) /* e.g. ciede2000 of identical pictures: +inf dB */
        return got == expect;
    if (t->abs == 0 && t->rel == 0)
        return got == expect;
    return fabs(got - expect) <= t->abs + t->rel * fmax(t->rel_floor, fabs(expect));
}

/* Per-row tallies of toleranced comparisons, printed after the row. */
static int compared, identical;
static double max_diff;

static const char *output_name(char *buf, size_t len, const TestRow *row, const char *name)
{
    snprintf(buf, len, "%s%s", name, row->suffix ? row->suffix : "");
    return buf;
}

static void compare_outputs(const TestRow *row, const TestClip *clip, QgpuContext *ctx,
                            const double *expect)
{
    const TestCase *c = clip->c;
    int nb_out = count_names(row->outputs), checked = 0;
    char name[160];
    for (int i = 0; i < c->frames; i++) {
        for (int k = 0; k < nb_out; k++) {
            TestTolerance tol = row->output_tol ? row->output_tol[k] : row->tol;
            double want = expect[i * nb_out + k], got = NAN;
            if (!isnan(clip->bound[i * nb_out + k]))
                tol = (TestTolerance){clip->bound[i * nb_out + k], 0, 0};
            output_name(name, sizeof(name), row, row->outputs[k]);
            int err = qgpu_get_score(ctx, (unsigned)i, name, &got);
            int ok = err == 0 && within(got, want, &tol);
            CHECK(ok, "%s %dx%d layout %d %d-bit depth %d pad %d variant %d frame %d/%d %s: "
                  "%.12g vs ref %.12g (err %d)", row->name, c->w, c->h, c->layout, c->bitdepth,
                  c->depth, c->stride_pad, c->variant, i, c->frames, name, got, want, err);
            checked++;
            if (tol.abs != 0 || tol.rel != 0) {
                compared++;
                identical += err == 0 && got == want;
                if (err == 0 && fabs(got - want) > max_diff)
                    max_diff = fabs(got - want);
            }
        }
        for (int k = 0; row->absent && row->absent[k]; k++) {
            double got;
            output_name(name, sizeof(name), row, row->absent[k]);
            CHECK(qgpu_get_score(ctx, (unsigned)i, name, &got) != 0,
                  "%s frame %d: '%s' must not exist", row->name, i, name);
        }
    }
    if (checked == 0) /* a row without outputs would pass whatever the device does */
        CHECK(0, "%s %dx%d: nothing to compare", row->name, c->w, c->h);
}

/* Submits the clip's frames, collecting what is ready on the way, then
 * flushes and collects the rest; checks frame order and count. */
static int score_clip(QgpuContext *ctx, const TestRow *row, TestClip *clip)
{
    const TestCase *c = clip->c;
    TestFillFn fill = row->fill ? row->fill : test_fill_noisy;
    unsigned frame, got = 0;
    for (int i = 0; i < c->frames; i++) {
        if (!CHECK(test_picture_alloc(&clip->ref[i], c->w, c->h, c->layout, c->bitdepth,
                                      c->stride_pad) == 0 &&
                       test_picture_alloc(&clip->dist[i], c->w, c->h, c->layout, c->bitdepth,
                                          2 * c->stride_pad) == 0,
                   "out of memory"))
            return 0;
        fill(clip, i);
        int err = qgpu_submit(ctx, &clip->ref[i].pic, &clip->dist[i].pic);
        if (!CHECK(err == 0, "%s submit %dx%d layout %d %d-bit: %s", row->name, c->w, c->h,
                   c->layout, c->bitdepth, qgpu_last_error(ctx)))
            return 0;
        while (qgpu_collect(ctx, &frame, 0) == 1)
            CHECK(frame == got++, "%s: frames out of order", row->name);
    }
    CHECK(qgpu_flush(ctx) == 0, "%s flush: %s", row->name, qgpu_last_error(ctx));
    while (qgpu_collect(ctx, &frame, 1) == 1)
        CHECK(frame == got++, "%s: frames out of order", row->name);
    return CHECK(got == (unsigned)c->frames, "%s: collected %u of %d frames", row->name, got,
                 c->frames);
}

static int run_reference(const TestRow *row, const TestClip *clip, double *expect)
{
    int nb_out = clip->nb_outputs;
    if (row->reference)
        return row->reference(clip, row->ref_arg, expect);
    for (int i = 0; i < clip->c->frames; i++)
        if (row->frame_reference(clip, i, row->ref_arg, expect + i * nb_out,
                                 clip->bound + i * nb_out))
            return -1;
    return 0;
}

static void run_case(const TestRow *row, const TestCase *c)
{
    int nb_out = count_names(row->outputs);
    TestClip clip = {c, calloc(c->frames, sizeof(TestPicture)),
                     calloc(c->frames, sizeof(TestPicture)), nb_out,
                     malloc((size_t)c->frames * nb_out * sizeof(double))};
    double *expect = malloc((size_t)c->frames * nb_out * sizeof(double));
    QgpuContext *ctx = test_open(c->depth);
    if (!CHECK(clip.ref && clip.dist && clip.bound && expect, "out of memory") || !ctx)
        goto out;
    if (!enable_specs(ctx, row->spec) || !score_clip(ctx, row, &clip))
        goto out;
    for (int k = 0; k < c->frames * nb_out; k++)
        expect[k] = clip.bound[k] = NAN;
    if (!CHECK(run_reference(row, &clip, expect) == 0, "%s: reference failed", row->name))
        goto out;
    compare_outputs(row, &clip, ctx, expect);
out:
    for (int i = 0; clip.ref && clip.dist && i < c->frames; i++) {
        test_picture_free(&clip.ref[i]);
        test_picture_free(&clip.dist[i]);
    }
    free(clip.ref);
    free(clip.dist);
    free(clip.bound);
    free(expect);
    qgpu_close(&ctx);
}

static int layouts_allowed(int mask, int *allowed)
{
    int n = 0;
    for (int l = 0; l < 4; l++)
        if (!mask || (mask & (1 << l)))
            allowed[n++] = l;
    return n;
}

static int count_depths(const int *depths)
{
    int n = 0;
    while (depths[n])
        n++;
    return n;
}

static TestCase random_case(const TestRandom *r, int i)
{
    static const int default_depths[] = {8, 10, 12, 16, 0};
    const int *depths = r->bitdepths ? r->bitdepths : default_depths;
    TestCase c;
    c.w = test_rand_range(r->min_w, r->max_w);
    c.h = test_rand_range(r->min_h, r->max_h);
    int allowed[4], nb_layouts = layouts_allowed(r->layouts, allowed);
    /* layout i % n, bit depth shifted by one every n cases: every pair of
     * layout and bit depth comes up, not only the diagonal */
    c.layout = allowed[i % nb_layouts];
    c.bitdepth = depths[(i + i / nb_layouts) % count_depths(depths)];
    c.depth = 1 + i % (r->max_depth ? r->max_depth : 1);
    c.frames = 1 + i % (r->max_frames ? r->max_frames : 1);
    c.stride_pad = test_rand_range(0, r->max_pad);
    c.variant = r->max_variant ? 1 + i % r->max_variant : 0;
    return c;
}

static void run_row(const TestRow *row)
{
    compared = identical = 0;
    max_diff = 0;
    for (int i = 0; i < row->nb_cases; i++)
        run_case(row, &row->cases[i]);
    for (int i = 0; i < row->nb_random; i++) {
        TestCase c = random_case(row->random, i);
        run_case(row, &c);
    }
    if (compared)
        printf("%s: %d of %d compared scores bit-identical to the reference, max |diff| %.3g\n",
               row->name, identical, compared, max_diff);
}

void test_run_rows(const TestRow *rows, int nb_rows)
{
    for (int i = 0; i < nb_rows; i++) {
        if (!selected(rows[i].name))
            continue;
        seed_for(rows[i].name);
        run_row(&rows[i]);
    }
}

void test_run_extras(const TestExtra *extras, int nb_extras)
{
    for (int i = 0; i < nb_extras; i++) {
        if (!selected(extras[i].name))
            continue;
        seed_for(extras[i].name);
        extras[i].run();
    }
}

int test_main(int argc, char **argv, const TestRow *rows, int nb_rows, const TestExtra *extras,
              int nb_extras)
{
    int list = test_parse_args(argc, argv);
    test_run_rows(rows, nb_rows);
    test_run_extras(extras, nb_extras);
    return list ? 0 : finish();
}

int test_main_both_paths(int argc, char **argv, const char *env, const char *value0,
                         const char *value1, const TestRow *rows, int nb_rows,
                         const TestExtra *extras, int nb_extras)
{
    if (test_parse_args(argc, argv)) { /* --list */
        test_run_rows(rows, nb_rows);
        test_run_extras(extras, nb_extras);
        return 0;
    }
    for (int path = 0; path <= 1; path++) {
        printf("%s=%s\n", env, path ? value1 : value0);
        setenv(env, path ? value1 : value0, 1);
        test_run_rows(rows, nb_rows);
    }
    unsetenv(env);
    test_run_extras(extras, nb_extras);
    return finish();
}

int test_main_paths(int argc, char **argv, const TestPath *paths, int nb_paths,
                    const TestRow *rows, int nb_rows, const TestExtra *extras, int nb_extras)
{
    if (test_parse_args(argc, argv)) { /* --list */
        test_run_rows(rows, nb_rows);
        test_run_extras(extras, nb_extras);
        return 0;
    }
    for (int p = 0; p < nb_paths; p++) {
        for (int i = 0; i < 2; i++) {
            if (!paths[p].env[i])
                continue;
            printf("%s%s=%s", i ? " " : "", paths[p].env[i], paths[p].value[i]);
            setenv(paths[p].env[i], paths[p].value[i], 1);
        }
        printf("\n");
        test_run_rows(rows, nb_rows);
        for (int i = 0; i < 2; i++)
            if (paths[p].env[i])
                unsetenv(paths[p].env[i]);
    }
    test_run_extras(extras, nb_extras);
    return finish();
}

int test_luma(const TestClip *clip, int frame, TestLuma *l)
{
    l->ref = test_luma_copy(&clip->ref[frame].pic);
    l->dist = test_luma_copy(&clip->dist[frame].pic);
    if (l->ref && l->dist)
        return 0;
    test_luma_free(l);
    return -1;
}

void test_luma_free(TestLuma *l)
{
    free(l->ref);
    free(l->dist);
    l->ref = l->dist = NULL;
}

void test_fill_noisy(TestClip *clip, int frame)
{
    test_picture_random(&clip->ref[frame]);
    test_picture_noisy_copy(&clip->dist[frame], &clip->ref[frame], 1 + 3 * frame);
}

void test_fill_structured(TestClip *clip, int frame)
{
    const TestCase *c = clip->c;
    TestPicture *ref = &clip->ref[frame], *dist = &clip->dist[frame];
    test_picture_random(dist); /* chroma: noise */
    if (frame % 3 == 2)
        test_picture_random(ref);
    else
        test_picture_structured(ref, (frame + c->w) % 4);
    test_picture_distort(dist, ref, (frame + c->h) % 4);
}

void test_fill_moving(TestClip *clip, int frame)
{
    TestPicture *t = &clip->ref[frame];
    const QgpuPicture *p = &t->pic;
    unsigned maxv = (1u << p->bitdepth) - 1;
    int speed = clip->c->variant;
    test_picture_random(&clip->dist[frame]);
    test_picture_random(t);
    if (frame % 4 == 3) { /* a repeated frame: motion 0 */
        for (int y = 0; y < p->height; y++)
            for (int x = 0; x < p->width; x++)
                test_set_sample(t, 0, x, y, test_sample(&clip->ref[frame - 1].pic, 0, x, y));
        return;
    }
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++) {
            int xs = x + frame * speed, ys = y + (frame * speed) / 2;
            unsigned v = ((xs / 5 + ys / 7) & 1) ? maxv * 3 / 4 : maxv / 5;
            v += (unsigned)((xs * 7 + ys * 3) % 17) * (maxv / 255 + 1);
            v += test_rand() % (maxv / 64 + 2);
            test_set_sample(t, 0, x, y, v > maxv ? maxv : v);
        }
}

void test_fill_flat_luma(TestPicture *t, unsigned v)
{
    for (int y = 0; y < t->pic.height; y++)
        for (int x = 0; x < t->pic.width; x++)
            test_set_sample(t, 0, x, y, v);
}

/* Scores of every name of `one` over n frames equal in `ctx`. */
static int same_scores(QgpuContext *one, QgpuContext *ctx, int n, int *total)
{
    int names = qgpu_score_count(one), same = 0;
    for (int k = 0; k < names; k++) {
        const char *name = qgpu_score_name(one, k);
        for (int f = 0; f < n; f++) {
            double a = NAN, b = NAN;
            int ok = qgpu_get_score(one, (unsigned)f, name, &a) == 0 &&
                     qgpu_get_score(ctx, (unsigned)f, name, &b) == 0;
            same += ok && (a == b || (isnan(a) && isnan(b)));
        }
    }
    *total = names * n;
    return same;
}

void test_expect_lanes_identical(const char *spec, int depth, const TestPicture *ref,
                                 const TestPicture *dist, int n, int min_names)
{
    QgpuContext *one;
    setenv("QGPU_LANES", "1", 1);
    one = test_score_pairs(spec, depth, ref, dist, n);
    for (int lanes = 2; one && lanes <= 4; lanes++) {
        char value[2] = {(char)('0' + lanes), 0};
        int total = 0, same = 0;
        QgpuContext *ctx;
        setenv("QGPU_LANES", value, 1);
        ctx = test_score_pairs(spec, depth, ref, dist, n);
        if (ctx)
            same = same_scores(one, ctx, n, &total);
        CHECK(ctx && total >= min_names * n && same == total,
              "%d lanes: %d of %d scores equal those of one lane", lanes, same, total);
        qgpu_close(&ctx);
    }
    unsetenv("QGPU_LANES");
    qgpu_close(&one);
}

QgpuContext *test_score_pairs(const char *spec, int depth, const TestPicture *ref,
                              const TestPicture *dist, int n)
{
    QgpuContext *ctx = test_open(depth);
    unsigned frame, got = 0;
    if (!ctx)
        return NULL;
    if (!enable_specs(ctx, spec))
        goto fail;
    for (int i = 0; i < n; i++)
        if (!CHECK(qgpu_submit(ctx, &ref[i].pic, &dist[i].pic) == 0, "%s submit: %s", spec,
                   qgpu_last_error(ctx)))
            goto fail;
    if (!CHECK(qgpu_flush(ctx) == 0, "%s flush: %s", spec, qgpu_last_error(ctx)))
        goto fail;
    while (qgpu_collect(ctx, &frame, 1) == 1)
        got++;
    if (!CHECK(got == (unsigned)n, "%s: collected %u of %d frames", spec, got, n))
        goto fail;
    return ctx;
fail:
    qgpu_close(&ctx);
    return NULL;
}

void test_expect_lookahead(const char *spec, int needed)
{
    QgpuContext *ctx = test_open(4);
    TestPicture a;
    unsigned frame;
    if (!ctx)
        return;
    if (!enable_specs(ctx, spec) ||
        !CHECK(test_picture_alloc(&a, 32, 32, QGPU_LAYOUT_420, 8, 0) == 0, "out of memory")) {
        qgpu_close(&ctx);
        return;
    }
    test_picture_random(&a);
    for (int i = 0; i < needed; i++) {
        CHECK(qgpu_submit(ctx, &a.pic, &a.pic) == 0, "%s submit: %s", spec, qgpu_last_error(ctx));
        int r = qgpu_collect(ctx, &frame, 1);
        if (i + 1 < needed)
            CHECK(r == 0, "%s: frame 0 cannot be final after %d frames (got %d)", spec, i + 1, r);
        else
            CHECK(r == 1 && frame == 0, "%s: frame 0 final after %d frames (got %d)", spec,
                  needed, r);
    }
    test_picture_free(&a);
    qgpu_close(&ctx);
}

void test_expect_bad_options(const char *const *specs)
{
    QgpuContext *ctx = test_open(1);
    if (!ctx)
        return;
    for (int i = 0; specs[i]; i++) {
        int err = qgpu_enable_feature(ctx, specs[i]);
        CHECK(err == QGPU_ERR_BAD_OPTION, "%s must be refused at enable (got %d: %s)", specs[i],
              err, qgpu_last_error(ctx));
    }
    qgpu_close(&ctx);
}

void test_expect_refused(const char *spec, int w, int h, int layout, int bitdepth, int code,
                         const char *word1, const char *word2)
{
    QgpuContext *ctx = test_open(1);
    TestPicture a;
    if (!ctx)
        return;
    if (!enable_specs(ctx, spec) ||
        !CHECK(test_picture_alloc(&a, w, h, layout, bitdepth, 0) == 0, "out of memory")) {
        qgpu_close(&ctx);
        return;
    }
    test_picture_random(&a);
    int err = qgpu_submit(ctx, &a.pic, &a.pic);
    CHECK(err == code, "%s %dx%d %d-bit: got %d (%s), want %d", spec, w, h, bitdepth, err,
          qgpu_strerror(err), code);
    const char *msg = qgpu_last_error(ctx);
    CHECK(strstr(msg, word1) && (!word2 || strstr(msg, word2)),
          "%s: the message names '%s' and '%s': '%s'", spec, word1, word2 ? word2 : "", msg);
    test_picture_free(&a);
    qgpu_close(&ctx);
}
