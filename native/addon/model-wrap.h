#pragma once
#include <napi.h>

namespace horizon_addon {

/** Registers loadModel (Promise<NativeModelHandle>) on `exports`. */
void model_wrap_init(Napi::Env env, Napi::Object exports);

}  // namespace horizon_addon
