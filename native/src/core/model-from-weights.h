#pragma once
// A model over weights already in memory: what rt_model_load does once its files are read. The GPU benchmark builds
// random OLMoE-shaped weights this way and runs them through rt_model_generate, as the app's runs do.
#include <memory>

#include "core/model-weights.h"
#include "rt/rt-runtime.h"

namespace rt {

/** Takes `weights` (whose tensors must outlive the model) onto `options.backend`; `options.dir` and `.weights` unused. */
std::shared_ptr<model> rt_model_from_weights(std::unique_ptr<model_weights> weights, const model_load_options & options,
                                             rt_error & error);

}  // namespace rt
