/*
 * qgpu batch JOBS: many pairs, every device of the host, resumable, one
 * shard of a cluster's job array; qgpu batch-merge JOBS: the check that
 * every job of the list is done once, and the combined summary. User
 * guide: doc/batch.md.
 */
#ifndef QGPU_TOOL_BATCH_H
#define QGPU_TOOL_BATCH_H

/* argv[0] is "batch" or "batch-merge"; merge: the second. Returns the exit
 * status (doc/batch.md). */
int batch_main(int argc, char **argv, int merge);

#endif
