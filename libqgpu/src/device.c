/* OpenCL platform/device enumeration and selection, and the context's
 * device and OpenCL objects. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

typedef struct DeviceEntry {
    int platform_index;
    int device_index;
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    char name[256];
    char platform_name[256];
    double speed; /* compute units x clock: a rough ranking for "auto" */
} DeviceEntry;

/* Lists every device of every platform. Returns the count or a negative
 * error (with msg filled). */
static int enumerate(DeviceEntry *list, int max, char *msg, size_t msg_len)
{
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint nb_platforms = 0;
    int count = 0;
    cl_int status = clGetPlatformIDs(MAX_PLATFORMS, platforms, &nb_platforms);

    if (status != CL_SUCCESS || nb_platforms == 0) {
        snprintf(msg, msg_len,
                 "no OpenCL platform found (%s): install an OpenCL driver, e.g. Debian's "
                 "pocl-opencl-icd for the CPU, and check /etc/OpenCL/vendors",
                 qgpu_cl_status_name(status));
        return QGPU_ERR_NO_DEVICE;
    }
    if (nb_platforms > MAX_PLATFORMS)
        nb_platforms = MAX_PLATFORMS;
    for (cl_uint p = 0; p < nb_platforms; p++) {
        cl_device_id devices[MAX_DEVICES];
        cl_uint nb_devices = 0;
        char platform_name[256] = "";
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof(platform_name), platform_name,
                          NULL);
        status = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devices,
                                &nb_devices);
        if (status != CL_SUCCESS)
            continue;
        if (nb_devices > MAX_DEVICES)
            nb_devices = MAX_DEVICES;
        for (cl_uint d = 0; d < nb_devices && count < max; d++) {
            DeviceEntry *e = &list[count++];
            cl_uint units = 0, clock = 0;
            memset(e, 0, sizeof(*e));
            e->platform_index = (int)p;
            e->device_index = (int)d;
            e->platform = platforms[p];
            e->device = devices[d];
            clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof(e->type), &e->type, NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof(e->name), e->name, NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units,
                            NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(clock), &clock,
                            NULL);
            e->speed = (double)units * (clock ? clock : 1);
            snprintf(e->platform_name, sizeof(e->platform_name), "%s", platform_name);
        }
    }
    if (count == 0) {
        snprintf(msg, msg_len, "OpenCL platforms found but no device");
        return QGPU_ERR_NO_DEVICE;
    }
    return count;
}

static const char *type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "gpu";
    if (type & CL_DEVICE_TYPE_CPU)
        return "cpu";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

static int contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Index of the fastest device of the given type (0 = any), or -1. */
static int fastest(const DeviceEntry *list, int count, cl_device_type type)
{
    int best = -1;
    for (int i = 0; i < count; i++) {
        if (type && !(list[i].type & type))
            continue;
        if (best < 0 || list[i].speed > list[best].speed)
            best = i;
    }
    return best;
}

static int find(const DeviceEntry *list, int count, const char *selector)
{
    int p, d;
    char extra;
    if (!strcmp(selector, "auto")) {
        int i = fastest(list, count, CL_DEVICE_TYPE_GPU);
        if (i < 0)
            i = fastest(list, count, CL_DEVICE_TYPE_CPU);
        return i >= 0 ? i : fastest(list, count, 0);
    }
    if (!strcmp(selector, "gpu"))
        return fastest(list, count, CL_DEVICE_TYPE_GPU);
    if (!strcmp(selector, "cpu"))
        return fastest(list, count, CL_DEVICE_TYPE_CPU);
    if (sscanf(selector, "%d:%d%c", &p, &d, &extra) == 2) {
        for (int i = 0; i < count; i++)
            if (list[i].platform_index == p && list[i].device_index == d)
                return i;
        return -1;
    }
    for (int i = 0; i < count; i++)
        if (contains_nocase(list[i].name, selector) ||
            contains_nocase(list[i].platform_name, selector))
            return i;
    return -1;
}

int qgpu_device_select(QgpuContext *ctx, const char *selector)
{
    DeviceEntry list[MAX_DEVICES];
    int count = enumerate(list, MAX_DEVICES, ctx->error, sizeof(ctx->error));
    int i;

    if (count < 0)
        return count;
    i = find(list, count, selector);
    if (i < 0) {
        char names[2048] = "";
        size_t len = 0;
        for (int k = 0; k < count && len < sizeof(names) - 1; k++)
            len += snprintf(names + len, sizeof(names) - len, "%s%d:%d %s", k ? ", " : "",
                            list[k].platform_index, list[k].device_index, list[k].name);
        return qgpu_error(ctx, QGPU_ERR_NO_DEVICE,
                          "no OpenCL device matches '%s' (use auto, gpu, cpu, P:D or a "
                          "name substring); devices: %s",
                          selector, names);
    }
    ctx->device = list[i].device;
    return qgpu_device_describe(ctx);
}

int qgpu_device_describe(QgpuContext *ctx)
{
    char driver[128] = "", version[128] = "", platform_version[128] = "";
    cl_int status = clGetDeviceInfo(ctx->device, CL_DEVICE_PLATFORM, sizeof(ctx->platform),
                                    &ctx->platform, NULL);
    if (status != CL_SUCCESS)
        return qgpu_error(ctx, QGPU_ERR_INVALID_ARG, "not an OpenCL device: %s (%d)",
                          qgpu_cl_status_name(status), (int)status);
    clGetDeviceInfo(ctx->device, CL_DEVICE_NAME, sizeof(ctx->device_name), ctx->device_name,
                    NULL);
    clGetPlatformInfo(ctx->platform, CL_PLATFORM_NAME, sizeof(ctx->platform_name),
                      ctx->platform_name, NULL);
    clGetDeviceInfo(ctx->device, CL_DRIVER_VERSION, sizeof(driver), driver, NULL);
    clGetDeviceInfo(ctx->device, CL_DEVICE_VERSION, sizeof(version), version, NULL);
    clGetPlatformInfo(ctx->platform, CL_PLATFORM_VERSION, sizeof(platform_version),
                      platform_version, NULL);
    snprintf(ctx->device_cache_id, sizeof(ctx->device_cache_id), "%s|%s|%s|%s|%s",
             ctx->platform_name, ctx->device_name, driver, version, platform_version);
    return 0;
}

int qgpu_list_devices(QgpuDeviceCallback cb, void *opaque)
{
    DeviceEntry list[MAX_DEVICES];
    char msg[512];
    int count = enumerate(list, MAX_DEVICES, msg, sizeof(msg));
    if (count < 0)
        return count;
    if (!cb)
        return QGPU_ERR_INVALID_ARG;
    for (int i = 0; i < count; i++)
        cb(opaque, list[i].platform_index, list[i].device_index, type_name(list[i].type),
           list[i].name, list[i].platform_name);
    return count;
}

const char *qgpu_device_name(const QgpuContext *ctx)
{
    return ctx ? ctx->device_name : "";
}

const char *qgpu_platform_name(const QgpuContext *ctx)
{
    return ctx ? ctx->platform_name : "";
}

cl_context qgpu_cl_context(QgpuContext *ctx)
{
    return ctx->cl;
}

cl_device_id qgpu_cl_device(QgpuContext *ctx)
{
    return ctx->device;
}

cl_command_queue qgpu_compute_queue(QgpuContext *ctx)
{
    return ctx->compute_queue;
}

int qgpu_fp64_variant(QgpuContext *ctx, const char *env, cl_device_fp_config need,
                      int by_default)
{
    cl_device_fp_config fp64 = 0;
    const char *force = getenv(env);
    int has;
    clGetDeviceInfo(ctx->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL);
    has = fp64 != 0 && (fp64 & need) == need;
    if (force && (*force == '0' || *force == '1'))
        return *force == '1' && has;
    return by_default && has;
}

int qgpu_fp32_correctly_rounded(QgpuContext *ctx)
{
    cl_device_fp_config fp = 0;
    clGetDeviceInfo(ctx->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
    return (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
}

int qgpu_device_has_extension(QgpuContext *ctx, const char *name)
{
    size_t size = 0, len = strlen(name);
    int found = 0;
    char *list;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS ||
        !size || !(list = malloc(size + 1)))
        return 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, size, list, NULL) == CL_SUCCESS) {
        list[size] = '\0';
        for (const char *p = strstr(list, name); p && !found; p = strstr(p + 1, name))
            found = (p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0');
    }
    free(list);
    return found;
}
