/* vmaf_feature_dictionary_*: feature options as key/value strings. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"

char *vmaf_abi_concat(const char *first, ...)
{
    va_list ap;
    size_t len = 0;
    char *out;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        len += strlen(s);
    va_end(ap);
    out = malloc(len + 1);
    if (!out)
        return NULL;
    out[0] = '\0';
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        strcat(out, s);
    va_end(ap);
    return out;
}

VMAF_API int vmaf_feature_dictionary_set(VmafFeatureDictionary **dict, const char *key,
                                         const char *val)
{
    VmafFeatureDictionary *d;
    char *k, *v, **keys, **values;
    if (!dict || !key || !val || !*key)
        return -EINVAL;
    if (!*dict && !(*dict = calloc(1, sizeof(**dict))))
        return -ENOMEM;
    d = *dict;
    if (!(v = malloc(strlen(val) + 1)))
        return -ENOMEM;
    strcpy(v, val);
    for (int i = 0; i < d->nb; i++) {
        if (!strcmp(d->keys[i], key)) {
            free(d->values[i]);
            d->values[i] = v;
            return 0;
        }
    }
    if (!(k = malloc(strlen(key) + 1))) {
        free(v);
        return -ENOMEM;
    }
    strcpy(k, key);
    keys = realloc(d->keys, (size_t)(d->nb + 1) * sizeof(*keys));
    if (keys)
        d->keys = keys;
    values = keys ? realloc(d->values, (size_t)(d->nb + 1) * sizeof(*values)) : NULL;
    if (!values) {
        free(k);
        free(v);
        return -ENOMEM;
    }
    d->values = values;
    d->keys[d->nb] = k;
    d->values[d->nb] = v;
    d->nb++;
    return 0;
}

VMAF_API int vmaf_feature_dictionary_free(VmafFeatureDictionary **dict)
{
    if (!dict)
        return -EINVAL;
    if (*dict) {
        for (int i = 0; i < (*dict)->nb; i++) {
            free((*dict)->keys[i]);
            free((*dict)->values[i]);
        }
        free((*dict)->keys);
        free((*dict)->values);
        free(*dict);
        *dict = NULL;
    }
    return 0;
}

char *vmaf_abi_dict_spec(const VmafFeatureDictionary *d, const char *prefix, int *err)
{
    size_t len = 1, plen = strlen(prefix);
    char *out;
    *err = 0;
    for (int i = 0; d && i < d->nb; i++) {
        if (strpbrk(d->keys[i], ":=") || strchr(d->values[i], ':')) {
            *err = -EINVAL;
            return NULL;
        }
        len += plen + strlen(d->keys[i]) + strlen(d->values[i]) + 2;
    }
    if (!(out = malloc(len))) {
        *err = -ENOMEM;
        return NULL;
    }
    out[0] = '\0';
    for (int i = 0; d && i < d->nb; i++) {
        if (i)
            strcat(out, ":");
        strcat(out, prefix);
        strcat(out, d->keys[i]);
        strcat(out, "=");
        strcat(out, d->values[i]);
    }
    return out;
}
