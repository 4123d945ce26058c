/*
 * The few CUDA driver API calls the CUDA input (qgpu_cuda.h, cuda_ring.c)
 * needs, from the driver's libcuda.so.1 loaded at run time (dlopen, libc's
 * libdl): no CUDA SDK at build time, no link-time dependency, as FFmpeg
 * loads it.
 *
 * The declarations are our own, written from NVIDIA's CUDA Driver API
 * reference (types and values of CUDA 11+, unchanged since; the _v2 entry
 * points are the ones the 64-bit API uses): only what the ring and the
 * tests call. Internal to the library (tests link libqgpu.a and use it).
 */
#ifndef QGPU_CUDA_DRIVER_H
#define QGPU_CUDA_DRIVER_H

#include <stddef.h>

typedef int CUresult;                     /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;   /* 64-bit builds */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUmemGenericAllocationHandle;

enum {
    CU_MEMORYTYPE_HOST = 1,
    CU_MEMORYTYPE_DEVICE = 2,
    CU_MEM_ALLOCATION_TYPE_PINNED = 1,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
    CU_MEM_LOCATION_TYPE_DEVICE = 1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
    CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    CU_EVENT_DISABLE_TIMING = 2,
    CUDA_ERROR_NOT_READY = 600, /* cuEventQuery: the work before it has not run yet */
};

typedef struct CUmemLocation {
    int type;
    int id;
} CUmemLocation;

typedef struct CUmemAllocationProp {
    int type;
    int requestedHandleTypes;
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc {
    CUmemLocation location;
    int flags;
} CUmemAccessDesc;

typedef struct CUDA_MEMCPY2D {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes;
    size_t Height;
} CUDA_MEMCPY2D;

typedef struct CudaApi {
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
    CUresult (*cuCtxCreate)(CUcontext *ctx, unsigned flags, CUdevice device);
    CUresult (*cuCtxDestroy)(CUcontext ctx);
    CUresult (*cuCtxPushCurrent)(CUcontext ctx);
    CUresult (*cuCtxPopCurrent)(CUcontext *ctx);
    CUresult (*cuCtxGetDevice)(CUdevice *device);
    CUresult (*cuMemGetAllocationGranularity)(size_t *granularity,
                                              const CUmemAllocationProp *prop, int option);
    CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags);
    CUresult (*cuMemRelease)(CUmemGenericAllocationHandle handle);
    CUresult (*cuMemAddressReserve)(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags);
    CUresult (*cuMemAddressFree)(CUdeviceptr ptr, size_t size);
    CUresult (*cuMemMap)(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags);
    CUresult (*cuMemUnmap)(CUdeviceptr ptr, size_t size);
    CUresult (*cuMemSetAccess)(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count);
    CUresult (*cuMemExportToShareableHandle)(void *handle, CUmemGenericAllocationHandle mem,
                                             int type, unsigned long long flags);
    CUresult (*cuMemcpy2DAsync)(const CUDA_MEMCPY2D *copy, CUstream stream);
    CUresult (*cuStreamSynchronize)(CUstream stream);
    CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
    CUresult (*cuEventDestroy)(CUevent event);
    CUresult (*cuEventRecord)(CUevent event, CUstream stream);
    CUresult (*cuEventQuery)(CUevent event);
    CUresult (*cuEventSynchronize)(CUevent event);
    CUresult (*cuGetErrorString)(CUresult error, const char **text);
} CudaApi;

/* The driver's entry points, loaded once (thread-safe): NULL when there is
 * no libcuda.so.1 or it lacks one of them (why in err). */
const CudaApi *qgpu_cuda_api(char *err, size_t err_len);

/* Whether the driver's libcuda.so.1 is there (no cuInit: cheap). */
int qgpu_cuda_driver_loads(void);

/* "cuMemCreate: out of memory" style text for a failed call. */
void qgpu_cuda_message(const CudaApi *cu, CUresult r, const char *what, char *err, size_t err_len);

/* One allocation of device memory that other APIs can import: cuMemCreate
 * with a POSIX file descriptor handle type, mapped read-write for `device`
 * in the current context, exported as *fd. size is rounded up to the
 * allocation granularity (in *size). */
typedef struct CudaExportable {
    CUdeviceptr ptr;
    size_t size;
    int fd;
    CUmemGenericAllocationHandle handle;
} CudaExportable;

/* Current context's device. 0, or a CUresult (message in err). */
int qgpu_cuda_alloc_exportable(const CudaApi *cu, size_t size, CudaExportable *out, char *err,
                          size_t err_len);
/* Unmaps, releases and closes the descriptor (one that failed or was
 * freed is a no-op). */
void qgpu_cuda_free_exportable(const CudaApi *cu, CudaExportable *mem);

/* A 2D copy of rows, enqueued on stream: from device memory src, or from
 * host memory when src_host is non-NULL; to device memory dst, or to host
 * memory when dst_host is non-NULL. */
CUresult qgpu_cuda_copy_2d(const CudaApi *cu, CUdeviceptr dst, void *dst_host, size_t dst_pitch,
                      CUdeviceptr src, const void *src_host, size_t src_pitch, size_t row_bytes,
                      size_t rows, CUstream stream);

#endif
