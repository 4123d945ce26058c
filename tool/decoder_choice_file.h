/*
 * --hwdec auto's decisions kept between runs on this machine, in
 * $XDG_CACHE_HOME/qgpu/hwdec-choices (else ~/.cache/qgpu/; none with
 * QGPU_NO_CACHE=1; QGPU_HWDEC_CHOICES=FILE names the file itself, whose
 * folder must exist), so that a later run of the same kind of pair does not
 * measure again (decoder_choice.h). One line per decision, appended; the
 * last line of a key wins. The key names the host and its processor count.
 */
#ifndef QGPU_TOOL_DECODER_CHOICE_FILE_H
#define QGPU_TOOL_DECODER_CHOICE_FILE_H

#include "decoder_choice.h"

/* 1 and *out set when the file has key, else 0. */
int decoder_choice_file_find(const DecoderChoiceKey *key, DecoderChoice *out);

/* 1 when the file holds a decision for the CPU on this machine (any kind
 * of pair): only then can a pair's decision be the CPU before NVDEC is
 * tried (probe_known_cpu). */
int decoder_choice_file_has_cpu(void);

/* Adds the decision (errors ignored: the file is only a cache). */
void decoder_choice_file_add(const DecoderChoiceKey *key, const DecoderChoice *choice);

#endif
