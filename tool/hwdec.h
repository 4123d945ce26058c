/* Hardware decoding through FFmpeg's hwaccel API (--hwdec): NVDEC through
 * CUDA, VAAPI. The decoder writes frames into GPU memory; NVDEC's stay
 * there when they can (cuda_ring.h), the others are copied to host memory
 * (av_hwframe_transfer_data) as NV12/P010, which the library takes as they
 * are (QGPU_LAYOUT_NV12). No link-time dependency on any GPU library:
 * FFmpeg and cuda.c load the driver's libraries at run time. */
#ifndef QGPU_TOOL_HWDEC_H
#define QGPU_TOOL_HWDEC_H

#include <stddef.h>

#include <libavcodec/avcodec.h>


enum HwdecMode {
    HWDEC_AUTO = 0, /* a hardware decoder when one takes the stream, else the CPU */
    HWDEC_NONE,     /* the CPU */
    HWDEC_CUDA,     /* NVDEC, or an error */
    HWDEC_VAAPI,    /* VAAPI, or an error */
};

typedef struct Hwdec Hwdec;

/* "auto", "none", "cuda", "vaapi": 0 and *mode set, or -1. */
int hwdec_parse(const char *name, int *mode);
/* "MODE" (both inputs) or "REF,DIST": 0 and both set, or -1. */
int hwdec_parse_pair(const char *arg, int *ref, int *dist);

/* Before avcodec_open2(): nothing for raw video. For HWDEC_AUTO, the first device type (cuda,
 * then vaapi) that FFmpeg has a hwaccel for with this codec and whose
 * device opens; for HWDEC_CUDA/VAAPI that one. On success *hw is set (NULL
 * when the CPU decodes: HWDEC_NONE, or auto without a usable device, with
 * the reason in note) and the codec context is set up (hw_device_ctx,
 * get_format). -1 with a message in err when an explicit mode cannot be
 * had. */
int hwdec_setup(Hwdec **hw, AVCodecContext *codec, int mode, char *note, size_t note_len,
                char *err, size_t err_len);

/* After the first frame: whether the hardware decodes it (the hwaccel may
 * refuse a profile or size; FFmpeg then decodes on the CPU). */
int hwdec_active(const Hwdec *hw);

/* "cuda", "vaapi" (the hardware decodes) or "cpu" (hw may be NULL). */
const char *hwdec_name(const Hwdec *hw);

/* A frame in GPU memory is replaced by a device frame (NVDEC's zero-copy
 * path, cuda_ring.h: NV12/P010 on the GPU, no host data; samples of
 * bitdepth bits, e.g. 12 for P016 of 12-bit video) or by its copy in host
 * memory (NV12, P010... with the frame's properties); a host frame is left
 * alone. 0 or a negative AVERROR. */
int hwdec_download(Hwdec *hw, AVFrame *frame, int bitdepth);

/* The pipeline depth to score NVDEC's frames from the GPU at (4: the
 * zero-copy path keeps 4 frames in flight, 10-15% faster than 2 on the
 * H200), or 0 (the library's default) when neither input may use it. */
int hwdec_pipeline_depth(int ref_mode, int dist_mode);

/* Device frames (hw may be NULL): whether frame is one (the library's
 * frame behind it: cuda_ring_frame; QGPU_ERR_UNSUPPORTED from
 * qgpu_submit_cuda means the memory could not be imported, the zero-copy
 * path then stops: copy it to the host); its copy in host memory (0 or an
 * AVERROR). */
int hwdec_on_device(const Hwdec *hw, const AVFrame *frame);

/* The batch slot whose devices hw uses (hwdec_use_slot), 0 without one. */
int hwdec_slot(const Hwdec *hw);

/* Slots of the zero-copy ring, before its first frame (0: the default; a
 * parked ring of the slot with as many slots or more is reused): a
 * decoding session holds a stretch of frames ahead (sessions.h). */
void hwdec_set_ring_slots(Hwdec *hw, int slots);
int hwdec_ring_slots(const Hwdec *hw);
/* Whether the decoder's frames can be held n at a time on the GPU: its
 * frames go through the host (no zero-copy ring: any number), or its ring
 * was asked for n slots or more (hwdec_set_ring_slots). */
int hwdec_holds_frames(const Hwdec *hw, int n);
int hwdec_device_to_host(Hwdec *hw, AVFrame *frame);

/* FFmpeg's CUDA device of an NVDEC decoder whose frames stay on the GPU
 * (the zero-copy path, after the first frame), else NULL: the mixed
 * decode puts the other input's CPU-decoded frames there (cuda_upload.h). */
AVBufferRef *hwdec_zero_copy_device(const Hwdec *hw);

/* With NVDEC: why frames went through host memory ("" when they stayed on
 * the GPU, or no NVDEC). */
const char *hwdec_zero_copy_note(const Hwdec *hw);

/* With NVDEC's zero-copy path: seconds spent copying frames into the ring
 * (cuda_ring_copy_seconds), else 0. */
double hwdec_zero_copy_seconds(const Hwdec *hw);

/* Semi-planar 4:2:0 (NV12, P010, P016: Cb Cr interleaved in plane 1, 16-bit
 * words MSB-aligned): its depth (8, 10, 12, 16), else 0. */
int hwdec_semiplanar_depth(enum AVPixelFormat format);

/* Semi-planar src (sample depth `depth`, MSB-aligned words deeper than 8)
 * to planar 4:2:0 dst (yuv420p or yuv420pNNle of that depth, allocated
 * here); exact. 0 or a negative AVERROR. */
int hwdec_to_planar(const AVFrame *src, int depth, AVFrame *dst);

/* At the end of a batch job, after its library context is closed: the
 * zero-copy ring (cuda_ring.h) is kept for the slot's next decoder on the
 * same device (its allocations reused when the frames fit) instead of
 * being freed with the decoder. Nothing for other decoders. */
void hwdec_park(Hwdec *hw);

void hwdec_free(Hwdec **hw);

/* The decoders that the calling thread opens next use the devices of job
 * slot `slot` (two: the reference's, the distorted's), created at their
 * first use and kept for later runs in that slot; a thread that never
 * calls it uses slot 0. */
void hwdec_use_slot(int slot);

/* The hardware devices kept for later runs, released: at the end, once no
 * decoder is open. */
void hwdec_release_devices(void);

#endif
