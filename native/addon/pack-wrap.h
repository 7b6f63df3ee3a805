#pragma once
#include <napi.h>

namespace horizon_addon {

/** Registers pack (the qpacked-v2 packer, a cancellable job with progress) on `exports`. */
void pack_wrap_init(Napi::Env env, Napi::Object exports);

}  // namespace horizon_addon
