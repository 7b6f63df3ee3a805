#pragma once
// The checks every backend makes of a batch before running it, in one place so that they say the same thing.
#include <functional>
#include <string>
#include <vector>

#include "core/backend.h"

namespace rt {

/**
 * Checks `batch` against what a backend holds: each sequence known (`cached_length(seq_id)` >= 0, -1 when the
 * backend holds no such sequence) and listed once, with tokens to process, starting within its cache, ending within
 * `max_ctx`, every token id in 0..vocab-1, logits_from within its tokens. On a problem sets `error` (invalid_request,
 * "<who>: ...") and returns false.
 */
bool check_batch(const std::vector<batch_entry> & batch, const std::function<int(int)> & cached_length, int max_ctx, int vocab,
                 const char * who, rt_error & error);

}  // namespace rt
