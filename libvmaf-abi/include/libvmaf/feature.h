/*
 * libvmaf-qgpu: feature option dictionaries of the libvmaf 3.x API.
 * Written for libqgpu from the API's documentation and its callers; the
 * declarations match libvmaf 3.x's (doc/libvmaf-abi.md).
 */
#ifndef LIBVMAF_QGPU_FEATURE_H
#define LIBVMAF_QGPU_FEATURE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Options for one feature extractor: key -> value strings. */
typedef struct VmafFeatureDictionary VmafFeatureDictionary;

/* Sets key to val (both copied) in *dict, creating the dictionary when
 * *dict is NULL; an existing key takes the new value. 0, or -EINVAL /
 * -ENOMEM. */
int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                const char *val);

/* Frees *dict (NULL is fine) and sets it to NULL. 0, or -EINVAL when dict
 * is NULL. */
int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict);

#ifdef __cplusplus
}
#endif

#endif /* LIBVMAF_QGPU_FEATURE_H */
