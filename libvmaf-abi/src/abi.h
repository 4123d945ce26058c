/*
 * libvmaf-qgpu's private declarations: the libvmaf 3.x API (libvmaf/ headers)
 * served by libqgpu. Options and models go to libqgpu as the spec strings
 * its public API takes (qgpu_enable_feature, qgpu_use_model): the same
 * parser and model code as the qgpu filter and tool, no second copy.
 */
#ifndef LIBVMAF_QGPU_ABI_H
#define LIBVMAF_QGPU_ABI_H

#include "libvmaf/libvmaf.h"
#include "qgpu/qgpu.h"

/* What the library exports: libvmaf's names only (the version script
 * libvmaf-abi/libvmaf.map hides libqgpu's). */
#define VMAF_API __attribute__((visibility("default")))

struct VmafFeatureDictionary {
    char **keys;
    char **values;
    int nb;
};

/* A model as libqgpu's model spec ("version=...:name=...:adm.x=y"); a
 * collection holds its lead model. */
struct VmafModel {
    char *spec;
    char *name;                      /* score name */
    VmafModelCollection *collection; /* owner, when the lead of one */
};

struct VmafModelCollection {
    VmafModel lead;
};

/* One model or collection in use by a context. */
typedef struct VmafAbiModel {
    const void *handle; /* the VmafModel or VmafModelCollection */
    char *name;
} VmafAbiModel;

struct VmafContext {
    QgpuContext *q;
    VmafConfiguration cfg;
    VmafAbiModel *models;
    int nb_models;
    unsigned nb_read;   /* pictures read: the next index expected */
    int flushed;
    double start_time;  /* first picture, seconds (the log's fps) */
    double end_time;    /* flush */
};

/* libqgpu's error code as a negative errno. */
int vmaf_abi_errno(int qgpu_err);
/* Logs at level (enum VmafLogLevel) to stderr, as libvmaf does, when the
 * context's log level allows; vmaf may be NULL (errors only). */
void vmaf_abi_log(const VmafContext *vmaf, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failed libqgpu call: logs its message, returns the errno. */
int vmaf_abi_fail(const VmafContext *vmaf, int qgpu_err);

/* "key=value:key=value" of the dictionary, with each key prefixed by
 * prefix ("" or "adm."); NULL when out of memory or a key or value holds
 * ':' or '=' (which the spec syntax cannot carry): *err says which. */
char *vmaf_abi_dict_spec(const VmafFeatureDictionary *d, const char *prefix, int *err);

/* A malloc'ed concatenation of the NULL-terminated strings. */
char *vmaf_abi_concat(const char *first, ...);

/* Waits until frame index is final (it must have been read): 0, -EAGAIN
 * when it needs pictures not read yet, or another negative errno. */
int vmaf_abi_wait_frame(VmafContext *vmaf, unsigned index);

#endif /* LIBVMAF_QGPU_ABI_H */
