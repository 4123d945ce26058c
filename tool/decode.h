/* Decoding any container/codec FFmpeg reads into QgpuPictures. */
#ifndef QGPU_TOOL_DECODE_H
#define QGPU_TOOL_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qgpu/qgpu_cuda.h"
#include "qgpu/qgpu_opencl.h" /* also qgpu.h */

typedef struct Decoder Decoder;

typedef struct DecoderInfo {
    int width, height;
    int layout;          /* enum QgpuLayout of the output pictures */
    int bitdepth;
    const char *pix_fmt; /* the frames' own pixel format name */
    const char *stream_pix_fmt; /* the coded stream's (the container's word,
                                   the same whichever decoder; "" unknown) */
    double fps;          /* 0 when unknown (also a y4m header without a rate) */
    unsigned frames;     /* frames the container announces (or its duration
                            times fps), 0 when unknown */
    /* the frames themselves (after decoder_start: the first frame's,
     * else the container's) */
    int full_range;      /* 1 full (pc, yuvj*), 0 limited or not said */
    int range_known;     /* the input says which */
    int chroma_location; /* enum AVChromaLocation, 0 unspecified */
    int interlaced;      /* 1 interlaced, 0 progressive or not said */
    int native_bitdepth; /* bit depth of the frames (or of the planar format
                            they are converted to) */
    int timestamps;      /* 0: the frames' times mean nothing (a y4m without
                            a frame rate): pair by index only */
    int stream;          /* a pipe or other stream: read once, not counted */
    const char *decoder; /* who decodes: "cpu", "cuda" (NVDEC), "vaapi" (after
                            decoder_start: the hwaccel may refuse the stream) */
    const char *hw_note; /* why --hwdec auto found no hardware decoder ("" if
                            it did, or the codec has none) */
    int hw_refused;      /* a hardware device was set up but the hwaccel
                            refused the stream (profile, size): the CPU
                            decodes (known after decoder_start) */
    int semiplanar;      /* the frames are NV12/P010 (hardware decoders); they
                            go out as QGPU_LAYOUT_NV12 after
                            decoder_set_semiplanar(dec, 1) */
    /* the coded stream (--hwdec auto's choice, decoder_choice.h) */
    int codec_id;        /* enum AVCodecID */
    int profile;         /* the codec's profile (FF_PROFILE_UNKNOWN: -99) */
    double bit_rate;     /* bits/s of the stream (else of the file), 0 unknown */
    int threads;         /* the decoder's threads (1 for hardware decoders' own) */
    int sessions;        /* decoders at work on the input (decoder_use_sessions), 1 */
    int read_ahead;      /* frames the reading thread may queue ahead (prefetch.c):
                            SESSIONS_READ_AHEAD with sessions when the frames'
                            ring holds them, else 0 (its default) */
} DecoderInfo;

/* Decoding errors mid-stream (a corrupt packet, a frame decoded with
 * errors) are not fatal: the packet or frame is skipped, counted and
 * reported through this callback (message without "qgpu: warning: "),
 * rate-limited: the first few, then every 100th. Called on the thread
 * that reads. */
typedef void (*DecoderWarn)(void *opaque, const char *message);

/* Consecutive decoding errors (no good frame between them) after which
 * the input is given up as undecodable. */
#define DECODER_MAX_ERRORS_IN_A_ROW 200

/* Opens a file or stream (any container; "-" is standard input; see
 * input.h). Returns 0 or a negative AVERROR/-1 with a message in err. */
int decoder_open(Decoder **dec, const char *path, char *err, size_t err_len);

/* decoder_open with hardware decoding (enum HwdecMode, hwdec.h): returns
 * DECODER_ERR_HWDEC when an explicit --hwdec cuda/vaapi cannot be had
 * (no device, or this FFmpeg has no such decoder for the codec). */
#define DECODER_ERR_HWDEC (-1000000)
int decoder_open_hw(Decoder **dec, const char *path, int hwdec, char *err, size_t err_len);

/* Checks a --raw spec "WxH:PIXFMT[:FPS]": 0, or -1 with a message in err. */
int decoder_check_raw_spec(const char *spec, char *err, size_t err_len);

/* Opens raw planar video: spec "WxH:PIXFMT" (e.g. 1920x1080:yuv420p10le). */
int decoder_open_raw(Decoder **dec, const char *path, const char *spec, char *err,
                     size_t err_len);

/* Labels the input in warnings ("reference", "distorted") and sets the
 * warning callback (default: a line on stderr). */
void decoder_set_warn(Decoder *dec, const char *label, DecoderWarn warn, void *opaque);

/* Decodes the input with n decoders like this one at once (this one and
 * n - 1 sessions) and n_cpu sessions on the CPU beside it (only beside a
 * hardware decoder whose frames stay on the GPU as they are:
 * decoder_can_add_cpu_sessions), on stretches of frames between key
 * frames (sessions.h), while decoder_read delivers the frames in order, as
 * one decoder would. After decoder_start and the output settings
 * (decoder_set_output, decoder_set_limited_range, decoder_set_semiplanar),
 * before the first read. 0 when it does, 1 when it does not apply (n < 2
 * and n_cpu < 1, or why in note: a stream, raw video, too few key
 * frames...), < 0 an error (message in err). */
int decoder_use_sessions(Decoder *dec, int n, int n_cpu, char *note, size_t note_len,
                         char *err, size_t err_len);
int decoder_can_add_cpu_sessions(const Decoder *dec);
/* Slots of the zero-copy ring NVDEC's frames go into (before decoder_start,
 * which makes it; default 16): with sessions the reading thread queues
 * more of them (sessions.h). */
void decoder_set_ring_slots(Decoder *dec, int slots);
int decoder_ring_slots(const Decoder *dec);

/* QGPU_TIMING's lines about the sessions (nothing without them). */
void decoder_print_timing(const Decoder *dec, const char *label, FILE *out);

/* For sessions.c. A decoder of proto's file as proto was opened (same
 * hardware decoding; on_cpu: on the CPU with `threads` threads (0: its
 * choice), its frames put on the GPU beside proto's NVDEC frames,
 * cuda_upload.h), with a zero-copy ring of ring_slots, started and given
 * proto's output settings; an error when its frames are not proto's size,
 * depth and range. */
int decoder_open_session(const Decoder *proto, int on_cpu, int threads, int ring_slots,
                         Decoder **out, char *err, size_t err_len);
/* Positions a session's decoder on the stretch of frames whose time
 * stamps (the stream's time base) lie in [start, end) (start INT64_MIN:
 * from the stream's start; end INT64_MAX: to its end): it seeks to the key
 * frame at start, and decoder_read returns 0 after the stretch; its frames
 * are counted from `first`. 0 or an AVERROR (message in err). */
int decoder_seek_window(Decoder *dec, int64_t start, int64_t end, unsigned first, char *err,
                        size_t err_len);
/* The time stamp of the first frame decoded in the window (good or
 * damaged), AV_NOPTS_VALUE when none yet. */
int64_t decoder_window_first(const Decoder *dec);
/* For sessions.c, the input's own decoder decoding on in windows: goes on
 * into [start, end) where it is, without seeking, when that window
 * follows its last one (the frame that ended it is the window's first)
 * or is the stream's first and nothing was read yet: 1 (window set, frames
 * counted from first), else 0 (seek: decoder_seek_window). */
int decoder_window_follow(Decoder *dec, int64_t start, int64_t end, unsigned first);
/* Its next frame of the window, owned as decoder_read_owned's (counted in
 * decoder_frame_count): 1, 0 at the window's end, < 0 an error. */
int decoder_read_window(Decoder *dec, void **owner, char *err, size_t err_len);
/* Its own decoding errors and corrupt frames so far (decoder_error_count
 * gives the sessions' total). */
void decoder_own_counts(const Decoder *dec, unsigned *errors, unsigned *corrupt);
/* Whether owner (a frame it delivered) is one of dec's frames in GPU memory. */
int decoder_owns_frame(const Decoder *dec, const void *owner);

/* Decodes the first frame (kept for the first decoder_read), so that
 * decoder_get_info describes the frames rather than what the container
 * announced: size, pixel format, range, chroma siting, interlacing.
 * 0 (also when the input has no frame), or < 0 with a message. */
int decoder_start(Decoder *dec, char *err, size_t err_len);

/* Output geometry: what decoder_read delivers (the native planar format
 * unless decoder_set_output asked for another). */
void decoder_get_info(const Decoder *dec, DecoderInfo *info);

/* Checks a scaler name (NULL: the default): 0, or -1 with a message. */
int decoder_check_scaler(const char *scaler, char *err, size_t err_len);

/* Scales/converts every frame to w x h, layout, bitdepth with the given
 * swscale algorithm ("bicubic", "bilinear", "lanczos", ...). A higher bit
 * depth than the frames' is reached by shifting the samples left (exact,
 * as libvmaf's CLI brings inputs to a common depth), after any scaling. */
int decoder_set_output(Decoder *dec, int w, int h, int layout, int bitdepth,
                       const char *scaler, char *err, size_t err_len);

/* Converts full-range frames to limited range (swscale). */
void decoder_set_limited_range(Decoder *dec);

/* The mixed decode (cuda_upload.h): dec, decoded on the CPU, puts its
 * frames (yuv420p at 8 bits, yuv420p10le at 10) on the GPU beside nvdec's,
 * whose frames stay there (NVDEC's zero-copy path), and delivers them
 * semi-planar (set decoder_set_semiplanar on both). After decoder_start;
 * 1 when set, 0 when it does not apply (then nothing changes). */
int decoder_upload_beside(Decoder *dec, const Decoder *nvdec, int bitdepth);

/* With the mixed decode: frames put on the GPU, and frames that went
 * through host memory for want of a free slot (0 without it). */
unsigned decoder_uploaded(const Decoder *dec);
unsigned decoder_upload_misses(const Decoder *dec);

/* pass != 0: NV12/P010 frames go out as QGPU_LAYOUT_NV12 pictures when
 * they need no conversion (set it on both inputs or neither: the library
 * takes one layout per pair); else they are split into planar 4:2:0. */
void decoder_set_semiplanar(Decoder *dec, int pass);

/* The format of the pictures decoder_read will deliver (width, height,
 * layout, bitdepth; no data), known once decoder_start and the output
 * settings are done: 1 and *fmt set, 0 when not known before the first
 * picture (no frame yet; the mixed decode). The tool starts the library's
 * stream with it (qgpu_start) in its set-up. */
int decoder_picture_format(const Decoder *dec, QgpuPicture *fmt);

/* Next picture: 1 and *pic filled (valid until the next call), 0 at the end,
 * negative on an error that ends the input (message in err): a read
 * error, out of memory, a failed conversion, a frame whose size, pixel
 * format or range differs from the first frame's, a y4m stream that lost
 * its framing, or more than DECODER_MAX_ERRORS_IN_A_ROW decoding errors in
 * a row. Single decoding errors are skipped (see DecoderWarn). */
int decoder_read(Decoder *dec, QgpuPicture *pic, char *err, size_t err_len);

/* As decoder_read, but the picture stays valid until decoder_release(*owner)
 * (for handing pictures to another thread). */
int decoder_read_owned(Decoder *dec, QgpuPicture *pic, void **owner, char *err,
                       size_t err_len);
void decoder_release(void *owner);

/* Presentation time in seconds of the last picture delivered (NAN when
 * the file has none, or when they mean nothing: see timestamps). */
double decoder_last_pts(const Decoder *dec);

/* Another reference to an owned picture's buffers (release it with
 * decoder_release), NULL when out of memory. */
void *decoder_ref_frame(void *owner);

/* The picture of an owned frame. */
void decoder_owner_picture(const Decoder *dec, void *owner, QgpuPicture *pic);

/* Owned frames that NVDEC's zero-copy path kept on the GPU (hwdec.h): their
 * picture has no host data. decoder_device_frame: the library's frame
 * (qgpu_submit_cuda), NULL when the frame is in host memory.
 * decoder_owner_to_host: a device frame copied to host memory, pic
 * refilled (0 or an AVERROR; a host frame is left alone). */
QgpuCudaFrame *decoder_device_frame(const Decoder *dec, void *owner);
int decoder_owner_to_host(Decoder *dec, void *owner, QgpuPicture *pic);

/* Why NVDEC's frames went through host memory ("" when they did not, or
 * no NVDEC). */
const char *decoder_zero_copy_note(const Decoder *dec);

/* Seconds the decoding thread spent copying NVDEC's frames on the GPU
 * (hwdec_zero_copy_seconds); 0 without the zero-copy path. */
double decoder_zero_copy_seconds(const Decoder *dec);

/* Frames left in the input, counted from its packets without decoding
 * them (reads to the end of the file; no frame can be read afterwards). */
unsigned decoder_count_rest(Decoder *dec);

/* Back to the first frame, to decode the input again from its start
 * (--hwdec auto measures the decoders on the first frames, probe.h): the
 * demuxer seeks to the stream's start, the decoder is flushed and the
 * counts (frames, errors) start again; the frames delivered afterwards are
 * those of a fresh decoder. Not for streams (pipes are read once). 0, or
 * < 0 with a message in err. */
int decoder_rewind(Decoder *dec, char *err, size_t err_len);

/* Frames delivered so far. */
unsigned decoder_frame_count(const Decoder *dec);

/* Decoding errors skipped so far, and how many of them were frames
 * decoded with errors (not delivered). Read them on the reading thread or
 * after it stopped. */
unsigned decoder_error_count(const Decoder *dec);
unsigned decoder_corrupt_count(const Decoder *dec);

/* Presentation time in seconds of the stream's first packet (NAN when
 * unknown). */
double decoder_start_time(const Decoder *dec);

/* Makes the reads of the input stop (an error), also one waiting on a
 * stalled pipe; safe from another thread. */
void decoder_abort(Decoder *dec);

/* The CPU decoder's pool of pinned blocks its frames are decoded into
 * (pinned_frames.h), NULL when none (hardware decoding,
 * QGPU_PINNED_FRAMES=0) or when the frames are converted before they are
 * scored (decoder_set_output, decoder_set_limited_range), so that no
 * block is made for nothing. */
struct PinnedFrames *decoder_pinned_frames(const Decoder *dec);
/* Off: the decoder's frames are copied into the library's staging memory
 * as before (decoder_pinned_frames then gives NULL, no block is made). */
void decoder_use_pinned_frames(Decoder *dec, int on);

/* Batch jobs: the hardware decoder's reusable parts (hwdec_park) kept for
 * the slot's next job; call it after the library context the frames went
 * to is closed, before decoder_close. */
void decoder_park(Decoder *dec);

void decoder_close(Decoder **dec);

#endif
