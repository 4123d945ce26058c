/*
 * The contract between the pipeline and one metric ("feature").
 *
 * A feature is libqgpu/src/feature/<name>.c, which defines
 * `const QgpuFeatureClass qgpu_feature_<name> = {` (on one line: the build
 * finds the classes by it and generates the table of them), beside its
 * kernels in libqgpu/src/feature/<name>.cl (built after common.cl, the
 * shared prelude). The class declares every name it outputs. Nothing else
 * needs to change to add a metric. A feature includes only this header.
 *
 * Life cycle of an enabled feature (all calls on the context's thread):
 *   init()      once, at the first qgpu_submit(), when the video format is
 *               known: check the format/size (QGPU_ERR_UNSUPPORTED with a
 *               message naming the metric and the limit), register its
 *               outputs (qgpu_output_register), build kernels
 *               (qgpu_program_get), allocate device buffers and reserve
 *               readback space (qgpu_results_reserve).
 *   enqueue()   per frame: launch kernels (qgpu_launch, with the slot)
 *               reading slot->ref / slot->dist, writing partial results
 *               into slot->results at the reserved offset. Never wait, never
 *               read back: the pipeline does one read of slot->results per
 *               frame after every feature has enqueued.
 *   collect()   per frame, in order, once the slot's work is done on the
 *               device: turn slot->results_host + offset into scores with
 *               qgpu_score_set() (double arithmetic on the host).
 *   flush()     optional, at the end of the stream: finish frames held for
 *               look-ahead, set aggregates.
 *   uninit()    free everything init allocated (also after a failed init).
 *
 * Lanes: the frames of a context run on one in-order compute queue, or on
 * several ("lanes", qgpu_lanes(); slot->lane says which) when every enabled
 * feature sets QGPU_FEATURE_LANES. Frames on different lanes run at once,
 * so such a feature keeps the device scratch it writes per lane (frames of
 * one lane are still in order), and work that reads another frame's
 * results (motion's history) goes through qgpu_launch_after().
 *
 * Features that need earlier or later frames (motion) keep their own device
 * history (with one lane the in-order compute queue runs frame n's kernels
 * before frame n+1's; with several, qgpu_launch_after() does). A feature
 * that can only score frame n after frame n + k sets `lookahead = k`; frame
 * n becomes final (visible to the user) once frame n + max(lookahead) has
 * been collected, or at flush.
 */
#ifndef QGPU_FEATURE_H
#define QGPU_FEATURE_H

#include <stddef.h>
#include <stdint.h>

#include "qgpu/qgpu.h"

#include "ocl.h"
#include "options.h"

typedef struct QgpuContext QgpuContext;
typedef struct QgpuFeature QgpuFeature;

/* Geometry of the stream, fixed at the first submit. */
typedef struct QgpuVideoFormat {
    int width;
    int height;
    int layout;          /* enum QgpuLayout */
    int bitdepth;        /* 8..16 */
    int bytes_per_sample; /* 1 for 8-bit, 2 above */
    int nb_planes;       /* 1 for 4:0:0, else 3 */
    /* Planes as stored on the device: chroma is ceil(w/2) (x ceil(h/2))
     * for subsampled layouts, i.e. every sample the picture has. Row pitch
     * on the device is plane_w[p] samples (no padding); plane p starts at
     * plane_offset[p] bytes inside slot->ref / slot->dist. */
    int plane_w[3];
    int plane_h[3];
    size_t plane_offset[3];
    size_t frame_bytes;  /* all planes */
    /* Plane sizes libvmaf uses: floor(w/2) x floor(h/2) chroma for 4:2:0,
     * floor(w/2) x h for 4:2:2. Most metrics read only this part. */
    int vmaf_plane_w[3];
    int vmaf_plane_h[3];
} QgpuVideoFormat;

/* Kernel events of one frame, kept with its slot while QGPU_PROFILE=1 and
 * read when the frame is collected (profile.c). */
typedef struct QgpuSlotProfile {
    cl_event *events;
    const char **names;     /* the launches' labels (static strings) */
    int count;
    int cap;
} QgpuSlotProfile;

/* One pipeline slot: everything one frame pair in flight owns. Features
 * read ref, dist and results in enqueue() (and pass the slot to the launch
 * helper), results_host in collect(); the rest is the pipeline's. */
typedef struct QgpuSlot {
    int index;              /* 0 .. slot count - 1 */
    int lane;               /* compute queue of the slot's frames: 0 .. lanes - 1 */
    unsigned frame_index;   /* frame held by the slot */
    cl_mem ref;             /* planes as in QgpuVideoFormat */
    cl_mem dist;
    cl_mem results;         /* features write their partial sums here */
    void *results_host;     /* mapped pinned copy, valid in collect() */

    /* the pipeline's (pipeline.c, profile.c) */
    cl_mem staging;         /* pinned host memory: ref then dist, as uploaded */
    void *staging_host;     /* its mapping */
    cl_mem raw;             /* 8-bit pictures before widening, when widened */
    cl_mem interleaved;     /* NV12 layout: both pictures' CbCr as uploaded */
    cl_mem results_pinned;  /* the pinned buffer behind results_host */
    cl_event done;          /* the readback of results: the frame's only wait */
    struct QgpuPinned *pinned[2]; /* qgpu_submit_pinned's blocks, held until read */
    cl_event pinned_read;   /* their last write (pinned.c) */
    QgpuSlotProfile profile;
} QgpuSlot;

/* Flags of a feature class. */
enum {
    QGPU_FEATURE_NEEDS_CHROMA = 1 << 0, /* reads planes 1 and 2 (else luma only) */
    QGPU_FEATURE_LANES = 1 << 1,        /* scratch per lane: frames may run at once */
};

/* One score a feature can output. Every name a feature registers comes
 * from its class's table of these (qgpu_output_register), and models find
 * their extractors through the same tables: the table is the one place a
 * name is written. */
typedef struct QgpuFeatureOutput {
    const char *name;       /* libvmaf's printed name, before the option suffix */
    const char *model_name; /* libvmaf's internal name, as model files may give it;
                             * NULL when models use the printed name */
    unsigned flags;         /* QGPU_OUTPUT_* */
} QgpuFeatureOutput;

enum {
    QGPU_OUTPUT_NO_SUFFIX = 1 << 0, /* printed without the option suffix (libvmaf quirk) */
};

typedef struct QgpuFeatureClass {
    const char *name;              /* libvmaf extractor name: "psnr" */
    const QgpuFeatureOutput *outputs; /* every name it can output; ends with name NULL */
    const QgpuOptionDef *options;  /* terminated by an entry with name NULL */
    size_t priv_size;              /* options struct + state, zeroed, options at offset 0.. */
    unsigned flags;
    int lookahead;                 /* frames of look-ahead needed (0 for most) */
    /* Optional: flags that depend on options (e.g. psnr without chroma). */
    unsigned (*dynamic_flags)(const QgpuFeature *f);
    int (*init)(QgpuFeature *f, const QgpuVideoFormat *fmt);
    int (*enqueue)(QgpuFeature *f, QgpuSlot *slot);
    int (*collect)(QgpuFeature *f, const QgpuSlot *slot);
    int (*flush)(QgpuFeature *f);  /* may be NULL */
    void (*uninit)(QgpuFeature *f);
    /* Optional: look-ahead that depends on options (replaces lookahead). */
    int (*dynamic_lookahead)(const QgpuFeature *f);
} QgpuFeatureClass;

struct QgpuFeature {
    const QgpuFeatureClass *cls;
    QgpuContext *ctx;
    const QgpuVideoFormat *fmt; /* the stream's format, from init() on */
    void *priv;            /* cls->priv_size bytes; options parsed into it */
    char *spec;            /* canonical "name=opt=val:..." (for de-duplication) */
    char *name_suffix;     /* libvmaf's output-name suffix, "" or "_egl_1" */
};

/* ---- services the pipeline offers to features (errors.c, device.c, ...) */

/* Records a detailed message for the context and returns err. */
int qgpu_error(QgpuContext *ctx, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps an OpenCL status to a qgpu error with "what: CL_XXX" as message. */
int qgpu_cl_error(QgpuContext *ctx, cl_int status, const char *what);
void qgpu_log(QgpuContext *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The OpenCL objects of the context. */
cl_context qgpu_cl_context(QgpuContext *ctx);
cl_device_id qgpu_cl_device(QgpuContext *ctx);
cl_command_queue qgpu_compute_queue(QgpuContext *ctx);
/* Whether a feature builds its fp64 variant (doc/design.md: the kernels'
 * double forms where the device has double precision): by_default unless
 * environment variable env is "0" or "1" (tests, measurements), and never
 * when the device's double precision lacks the config bits `need` (0: any
 * double precision at all, e.g. CL_FP_DENORM: denormals kept). */
int qgpu_fp64_variant(QgpuContext *ctx, const char *env, cl_device_fp_config need,
                      int by_default);
/* Whether the device divides and takes square roots in single precision
 * correctly rounded (CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT), as libvmaf's
 * IEEE arithmetic does: features then build with
 * -cl-fp32-correctly-rounded-divide-sqrt. */
int qgpu_fp32_correctly_rounded(QgpuContext *ctx);
/* Whether the device lists OpenCL extension `name` (a whole word of
 * CL_DEVICE_EXTENSIONS). */
int qgpu_device_has_extension(QgpuContext *ctx, const char *name);
/* Lanes of the stream (1 .. QGPU_MAX_LANES), fixed before init(): a
 * QGPU_FEATURE_LANES feature allocates its per-frame scratch this many
 * times and uses copy number slot->lane in enqueue(). */
#define QGPU_MAX_LANES 4
int qgpu_lanes(QgpuContext *ctx);

/* Builds (or loads from the cache) the program of <name>.cl (the feature's
 * kernel file, after the common.cl prelude) with build options `options`
 * (may be NULL). Programs are shared by the context: do not release the
 * returned program. */
int qgpu_program_get(QgpuContext *ctx, const char *name, const char *options,
                     cl_program *program);

/* ---- kernels and buffers (launch.c) ----
 * Create in init(), release in uninit(); the release calls take NULL and
 * leave NULL behind, so uninit() may run after a partial init(). */
int qgpu_kernel_create(QgpuContext *ctx, cl_program program, const char *name,
                       cl_kernel *kernel);
void qgpu_kernel_release(cl_kernel *kernel);
/* A device buffer of `bytes` (read and written by kernels). */
int qgpu_buffer_create(QgpuContext *ctx, size_t bytes, cl_mem *buffer);
/* A device buffer holding a copy of `data` (tables kernels only read);
 * `what` names it in errors ("vif: log2 table"). */
int qgpu_buffer_upload(QgpuContext *ctx, size_t bytes, const void *data, cl_mem *buffer,
                       const char *what);
/* Writes `bytes` of `data` at the start of a buffer, waiting until done:
 * only in init() (per frame, everything stays on the device). */
int qgpu_buffer_write(QgpuContext *ctx, cl_mem buffer, size_t bytes, const void *data,
                      const char *what);
void qgpu_buffer_release(cl_mem *buffer);

/* v rounded up to a multiple of m (global sizes from work-group sizes). */
static inline size_t qgpu_round_up(size_t v, size_t m)
{
    return (v + m - 1) / m * m;
}

/* One kernel argument, built with the qgpu_arg_*() functions below. The
 * name is the kernel's parameter name: it is what an error message shows. */
typedef enum QgpuArgKind {
    QGPU_ARG_MEM,    /* a buffer (may be NULL) */
    QGPU_ARG_INT,
    QGPU_ARG_UINT,
    QGPU_ARG_LONG,
    QGPU_ARG_ULONG,
    QGPU_ARG_FLOAT,
    QGPU_ARG_LOCAL,  /* __local memory of `bytes` bytes */
    QGPU_ARG_VALUE,  /* any other type by value (int4, float8, short): `bytes` at `ptr` */
} QgpuArgKind;

typedef struct QgpuArg {
    const char *name;
    QgpuArgKind kind;
    union {
        cl_mem mem;
        cl_int i;
        cl_uint u;
        cl_long l;
        cl_ulong ul;
        cl_float f;
        struct {
            size_t bytes;
            const void *ptr; /* QGPU_ARG_VALUE: must stay valid until the launch */
        } raw;
    } v;
} QgpuArg;

static inline QgpuArg qgpu_arg_mem(const char *name, cl_mem mem)
{
    QgpuArg a = {name, QGPU_ARG_MEM, {.mem = mem}};
    return a;
}

static inline QgpuArg qgpu_arg_int(const char *name, cl_int value)
{
    QgpuArg a = {name, QGPU_ARG_INT, {.i = value}};
    return a;
}

static inline QgpuArg qgpu_arg_uint(const char *name, cl_uint value)
{
    QgpuArg a = {name, QGPU_ARG_UINT, {.u = value}};
    return a;
}

static inline QgpuArg qgpu_arg_long(const char *name, cl_long value)
{
    QgpuArg a = {name, QGPU_ARG_LONG, {.l = value}};
    return a;
}

static inline QgpuArg qgpu_arg_ulong(const char *name, cl_ulong value)
{
    QgpuArg a = {name, QGPU_ARG_ULONG, {.ul = value}};
    return a;
}

static inline QgpuArg qgpu_arg_float(const char *name, cl_float value)
{
    QgpuArg a = {name, QGPU_ARG_FLOAT, {.f = value}};
    return a;
}

static inline QgpuArg qgpu_arg_local(const char *name, size_t bytes)
{
    QgpuArg a = {name, QGPU_ARG_LOCAL, {.raw = {bytes, NULL}}};
    return a;
}

static inline QgpuArg qgpu_arg_value(const char *name, size_t bytes, const void *ptr)
{
    QgpuArg a = {name, QGPU_ARG_VALUE, {.raw = {bytes, ptr}}};
    return a;
}

#define QGPU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Sets the kernel's arguments from args[0 .. nb_args - 1] and enqueues it
 * on the compute queue as part of the slot's frame (no wait): dims 1..3,
 * global[dims], local[dims] or NULL (the driver picks). nb_args must be the
 * kernel's argument count. On failure the message names `what`, the first
 * argument that failed (index and name) and the OpenCL status. `what`
 * labels the launch in QGPU_PROFILE=1 profiles too: a string literal
 * ("vif: scale 0"). */
int qgpu_launch(QgpuContext *ctx, QgpuSlot *slot, cl_kernel kernel, const char *what,
                const QgpuArg *args, int nb_args, cl_uint dims, const size_t *global,
                const size_t *local);
/* qgpu_launch() that first waits for *chain (when not NULL) and leaves its
 * own event there (the caller releases the last one in uninit()): launches
 * chained so run in submission order whatever their lanes. */
int qgpu_launch_after(QgpuContext *ctx, QgpuSlot *slot, cl_kernel kernel, const char *what,
                      const QgpuArg *args, int nb_args, cl_uint dims, const size_t *global,
                      const size_t *local, cl_event *chain);

/* Reserves `bytes` (rounded up to 8) in every slot's results buffer;
 * returns the byte offset (a multiple of 8). Kernels get slot->results plus
 * the offset as an element index (offset / 8 for ulong/double-sized
 * elements, offset / 4 for float/uint), not a sub-buffer. Only in init(). */
int qgpu_results_reserve(QgpuContext *ctx, size_t bytes, size_t *offset);

/* Registers output `index` of the feature's class table (its name plus
 * the feature's option suffix) and sets *id to its score id; 0 or a
 * negative error. Only during init(). */
int qgpu_output_register(QgpuFeature *f, int index, int *id);
/* Registers outputs first .. first + count - 1 of the class table, their
 * ids into ids[first ..]; 0 or a negative error. */
int qgpu_outputs_register(QgpuFeature *f, int first, int count, int *ids);
/* Registers a score name as is (models' scores); id or negative error. */
int qgpu_score_register(QgpuContext *ctx, const char *name);
/* Sets the score of a frame (any frame not yet final). */
int qgpu_score_set(QgpuContext *ctx, int score_id, unsigned frame_index, double value);
/* Whole-clip value (apsnr_y, ...). */
int qgpu_aggregate_set(QgpuContext *ctx, const char *name, double value);

/* ---- frame hooks: work done when a frame becomes final (VMAF models) ----
 * init() runs once after every feature's init() (register output names
 * there); run() runs for each frame just before it becomes final, in order,
 * when every feature's score of that frame is set; free() at close. */
typedef struct QgpuFrameHook {
    int (*init)(void *opaque, QgpuContext *ctx, const QgpuVideoFormat *fmt);
    /* optional; runs after every hook's init() (outputs listed after those) */
    int (*init_late)(void *opaque, QgpuContext *ctx, const QgpuVideoFormat *fmt);
    int (*run)(void *opaque, QgpuContext *ctx, unsigned frame_index);
    void (*free)(void *opaque);
    void *opaque;
} QgpuFrameHook;

/* Adds a hook (before the first submit). The context owns it from then on,
 * also when this call fails (free() is called). */
int qgpu_frame_hook_add(QgpuContext *ctx, const QgpuFrameHook *hook);
/* Id of a registered output name, or QGPU_ERR_UNKNOWN_FEATURE. */
int qgpu_score_find(const QgpuContext *ctx, const char *name);
/* Value of a score of a frame whose features are done (from a hook's run()
 * as well as after the frame is final); NAN when the feature did not set it. */
double qgpu_score_value(const QgpuContext *ctx, int score_id, unsigned frame_index);

#endif /* QGPU_FEATURE_H */
