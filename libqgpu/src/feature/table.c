/* Every metric the library knows. Adding one: declare its class here and
 * add it to the list (keep both in the same order). */
#include <stddef.h>

#include "internal.h"

extern const QgpuFeatureClass qgpu_feature_psnr;
extern const QgpuFeatureClass qgpu_feature_ssimulacra2;
extern const QgpuFeatureClass qgpu_feature_cambi;
extern const QgpuFeatureClass qgpu_feature_float_ssim;
extern const QgpuFeatureClass qgpu_feature_float_ms_ssim;

extern const QgpuFeatureClass qgpu_feature_adm;
extern const QgpuFeatureClass qgpu_feature_ciede;
extern const QgpuFeatureClass qgpu_feature_psnr_hvs;
extern const QgpuFeatureClass qgpu_feature_vif;
extern const QgpuFeatureClass qgpu_feature_motion;
extern const QgpuFeatureClass qgpu_feature_float_vif;
extern const QgpuFeatureClass qgpu_feature_speed_chroma;
extern const QgpuFeatureClass qgpu_feature_float_motion;
extern const QgpuFeatureClass qgpu_feature_float_psnr;
extern const QgpuFeatureClass qgpu_feature_float_ansnr;
extern const QgpuFeatureClass qgpu_feature_float_moment;
extern const QgpuFeatureClass qgpu_feature_float_adm;
const QgpuFeatureClass *const qgpu_feature_classes[] = {
    &qgpu_feature_psnr,
    &qgpu_feature_ssimulacra2,
    &qgpu_feature_cambi,
    &qgpu_feature_float_ssim,
    &qgpu_feature_float_ms_ssim,
    &qgpu_feature_adm,
    &qgpu_feature_ciede,
    &qgpu_feature_psnr_hvs,
    &qgpu_feature_vif,
    &qgpu_feature_motion,
    &qgpu_feature_float_vif,
    &qgpu_feature_speed_chroma,
    &qgpu_feature_float_motion,
    &qgpu_feature_float_psnr,
    &qgpu_feature_float_ansnr,
    &qgpu_feature_float_moment,
    &qgpu_feature_float_adm,
    NULL,
};
