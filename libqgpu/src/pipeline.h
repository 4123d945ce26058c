/* The steps of a submit, shared by qgpu_submit() (host pictures, pipeline.c),
 * qgpu_submit_cl() (OpenCL images, external.c) and qgpu_submit_cl_buffer()
 * (OpenCL buffers, extmem.c). Private.
 *
 * A submit: qgpu_submit_check() (no state change), then qgpu_submit_slot()
 * (starts the stream at the first frame, frees a slot), then the input is
 * put into qgpu_submit_target()'s buffers on the upload queue, then
 * qgpu_submit_enqueue() queues the rest. An error after qgpu_submit_slot()
 * leaves the context failed (qgpu_submit_failed()). */
#ifndef QGPU_PIPELINE_H
#define QGPU_PIPELINE_H

#include "internal.h"

/* Fills a format from a picture description (data and strides unused). */
void qgpu_format_from_picture(QgpuVideoFormat *fmt, const QgpuPicture *pic);

/* Checks one picture's geometry (and, with check_data, its host planes
 * and strides); `which` names it in messages. */
int qgpu_picture_check(QgpuContext *ctx, const QgpuPicture *pic, const char *which,
                       int check_data);

/* Checks the context's state and both pictures' geometry (and, with
 * check_data, their host planes and strides). */
int qgpu_submit_check(QgpuContext *ctx, const QgpuPicture *ref, const QgpuPicture *dist,
                      int check_data);

/* Starts the stream (first frame) or checks the pair against it, waits for
 * the oldest frame when every slot is busy, and returns the frame's slot. */
int qgpu_submit_slot(QgpuContext *ctx, const QgpuPicture *ref, QgpuSlot **slot);

/* Where picture `which` (0 reference, 1 distorted) of a slot goes: the
 * buffer and the byte offset of its plane 0; plane p follows at
 * ctx->in_fmt.plane_offset[p] from there, packed (rows of plane_w samples).
 * Only the first ctx->upload_bytes bytes of a picture are read. */
cl_mem qgpu_submit_target(QgpuContext *ctx, const QgpuSlot *slot, int which, size_t *offset);

/* After the input is enqueued on the upload queue (`uploaded` completes
 * after it; the caller keeps its reference): a barrier on the compute queue,
 * the right shift of picture i's 16-bit samples by shift[i] when > 0 (shift
 * may be NULL), widening, every feature, the readback. Counts the frame as
 * submitted. */
int qgpu_submit_enqueue(QgpuContext *ctx, QgpuSlot *slot, cl_event uploaded, const int shift[2]);

/* external.c: the end of a submit whose input was copied on the device
 * (qgpu_submit_cl, qgpu_submit_cl_buffer): `err` is the copies' status.
 * A marker after the copies on the upload queue, qgpu_submit_enqueue(),
 * then a wait for the copies, so that the caller's memory is free again
 * when the submit returns; the frame counted as from device memory.
 * `what`: the wait's error message. */
int qgpu_submit_device_finish(QgpuContext *ctx, QgpuSlot *slot, const int shift[2], int err,
                              const char *what);

/* semiplanar.c: QGPU_LAYOUT_NV12 input when chroma is read. Bytes of one
 * picture's interleaved Cb Cr pairs; the split kernel (at start); the
 * upload of the staged pair (luma to the target, pairs to
 * slot->interleaved; *uploaded: the last write); the split into planes 1
 * and 2 on the compute queue. */
size_t qgpu_interleaved_bytes(const QgpuContext *ctx);
int qgpu_split_chroma_create(QgpuContext *ctx);
cl_int qgpu_upload_semiplanar(QgpuContext *ctx, QgpuSlot *slot, cl_event *uploaded);
int qgpu_split_chroma(QgpuContext *ctx, QgpuSlot *slot);

/* pinned.c: the references a slot holds to the pinned blocks of its pair
 * (qgpu_submit_pinned). Release drops them (the upload must be complete,
 * or the queues finished); poll drops those of the frames in flight whose
 * upload is complete. */
void qgpu_pinned_slot_release(QgpuSlot *slot);
void qgpu_pinned_slots_poll(QgpuContext *ctx);

/* Marks the context failed; returns err. */
int qgpu_submit_failed(QgpuContext *ctx, int err);

#endif /* QGPU_PIPELINE_H */
