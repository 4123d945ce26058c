/*
 * libcuda.so.1 at run time (cuda_driver.h): the entry points, exportable
 * allocations, 2D copies.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda_driver.h"

static CudaApi api;
static const CudaApi *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int driver_present;

/* libcuda.so.1 loads (kept loaded: FFmpeg or load() will want it). */
static void check_driver(void)
{
    driver_present = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != NULL;
}

static void load(void)
{
    static const struct {
        const char *name;
        size_t offset;
    } entries[] = {
#define ENTRY(field, symbol) {symbol, offsetof(CudaApi, field)}
        ENTRY(cuInit, "cuInit"),
        ENTRY(cuDeviceGet, "cuDeviceGet"),
        ENTRY(cuCtxCreate, "cuCtxCreate_v2"),
        ENTRY(cuCtxDestroy, "cuCtxDestroy_v2"),
        ENTRY(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
        ENTRY(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
        ENTRY(cuCtxGetDevice, "cuCtxGetDevice"),
        ENTRY(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity"),
        ENTRY(cuMemCreate, "cuMemCreate"),
        ENTRY(cuMemRelease, "cuMemRelease"),
        ENTRY(cuMemAddressReserve, "cuMemAddressReserve"),
        ENTRY(cuMemAddressFree, "cuMemAddressFree"),
        ENTRY(cuMemMap, "cuMemMap"),
        ENTRY(cuMemUnmap, "cuMemUnmap"),
        ENTRY(cuMemSetAccess, "cuMemSetAccess"),
        ENTRY(cuMemExportToShareableHandle, "cuMemExportToShareableHandle"),
        ENTRY(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2"),
        ENTRY(cuStreamSynchronize, "cuStreamSynchronize"),
        ENTRY(cuEventCreate, "cuEventCreate"),
        ENTRY(cuEventDestroy, "cuEventDestroy_v2"),
        ENTRY(cuEventRecord, "cuEventRecord"),
        ENTRY(cuEventQuery, "cuEventQuery"),
        ENTRY(cuEventSynchronize, "cuEventSynchronize"),
        ENTRY(cuGetErrorString, "cuGetErrorString"),
#undef ENTRY
    };
    /* never closed: FFmpeg holds the same library for the process's life */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof(load_error), "no CUDA driver (libcuda.so.1: %s)",
                 dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
        void *fn = dlsym(lib, entries[i].name);
        if (!fn) {
            snprintf(load_error, sizeof(load_error), "the CUDA driver lacks %s (too old)",
                     entries[i].name);
            return;
        }
        memcpy((char *)&api + entries[i].offset, &fn, sizeof(fn));
    }
    if (api.cuInit(0) != 0) {
        snprintf(load_error, sizeof(load_error), "cuInit failed: no usable NVIDIA GPU");
        return;
    }
    loaded = &api;
}

int qgpu_cuda_driver_loads(void)
{
    static pthread_once_t checked = PTHREAD_ONCE_INIT;
    pthread_once(&checked, check_driver);
    return driver_present;
}

const CudaApi *qgpu_cuda_api(char *err, size_t err_len)
{
    pthread_once(&once, load);
    if (!loaded && err_len)
        snprintf(err, err_len, "%s", load_error);
    return loaded;
}

void qgpu_cuda_message(const CudaApi *cu, CUresult r, const char *what, char *err, size_t err_len)
{
    const char *text = NULL;
    if (cu->cuGetErrorString(r, &text) != 0 || !text)
        text = "unknown error";
    snprintf(err, err_len, "%s: %s (CUDA error %d)", what, text, r);
}

int qgpu_cuda_alloc_exportable(const CudaApi *cu, size_t size, CudaExportable *out, char *err,
                          size_t err_len)
{
    CUmemAllocationProp prop;
    CUmemAccessDesc access;
    CUdevice device;
    size_t granularity = 0;
    const char *what = "cuCtxGetDevice";
    CUresult r;

    memset(out, 0, sizeof(*out));
    out->fd = -1;
    memset(&prop, 0, sizeof(prop));
    r = cu->cuCtxGetDevice(&device);
    if (!r) {
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        what = "cuMemGetAllocationGranularity";
        r = cu->cuMemGetAllocationGranularity(&granularity, &prop,
                                              CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    }
    if (!r) {
        out->size = (size + granularity - 1) / granularity * granularity;
        what = "cuMemCreate";
        r = cu->cuMemCreate(&out->handle, out->size, &prop, 0);
    }
    if (!r) {
        what = "cuMemAddressReserve";
        r = cu->cuMemAddressReserve(&out->ptr, out->size, granularity, 0, 0);
        if (r)
            out->ptr = 0;
    }
    if (!r) {
        what = "cuMemMap";
        r = cu->cuMemMap(out->ptr, out->size, 0, out->handle, 0);
    }
    if (!r) {
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        what = "cuMemSetAccess";
        r = cu->cuMemSetAccess(out->ptr, out->size, &access, 1);
    }
    if (!r) {
        what = "cuMemExportToShareableHandle";
        r = cu->cuMemExportToShareableHandle(&out->fd, out->handle,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        if (r)
            out->fd = -1;
    }
    if (r) {
        qgpu_cuda_message(cu, r, what, err, err_len);
        qgpu_cuda_free_exportable(cu, out);
    }
    return r;
}

void qgpu_cuda_free_exportable(const CudaApi *cu, CudaExportable *mem)
{
    if (mem->ptr) {
        cu->cuMemUnmap(mem->ptr, mem->size); /* fails harmlessly when never mapped */
        cu->cuMemAddressFree(mem->ptr, mem->size);
    }
    if (mem->handle && mem->fd >= 0) /* the descriptor exists only with the memory */
        close(mem->fd);
    if (mem->handle)
        cu->cuMemRelease(mem->handle);
    memset(mem, 0, sizeof(*mem));
    mem->fd = -1;
}

CUresult qgpu_cuda_copy_2d(const CudaApi *cu, CUdeviceptr dst, void *dst_host, size_t dst_pitch,
                      CUdeviceptr src, const void *src_host, size_t src_pitch, size_t row_bytes,
                      size_t rows, CUstream stream)
{
    CUDA_MEMCPY2D copy;
    memset(&copy, 0, sizeof(copy));
    copy.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    copy.srcHost = src_host;
    copy.srcDevice = src;
    copy.srcPitch = src_pitch;
    copy.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    copy.dstHost = dst_host;
    copy.dstDevice = dst;
    copy.dstPitch = dst_pitch;
    copy.WidthInBytes = row_bytes;
    copy.Height = rows;
    return cu->cuMemcpy2DAsync(&copy, stream);
}
