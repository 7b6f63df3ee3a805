#include "core/batch-check.h"

#include <unordered_set>

namespace rt {

bool check_batch(const std::vector<batch_entry> & batch, const std::function<int(int)> & cached_length, int max_ctx, int vocab,
                 const char * who, rt_error & error) {
  const std::string w = who;
  std::unordered_set<int> listed;
  for (const batch_entry & e : batch) {
    const int cached = cached_length(e.seq_id);
    if (cached < 0) {
      return fail(error, rt_status::invalid_request, w + ": unknown sequence " + std::to_string(e.seq_id));
    }
    if (!listed.insert(e.seq_id).second) {
      return fail(error, rt_status::invalid_request, w + ": sequence " + std::to_string(e.seq_id) + " appears twice in one batch");
    }
    if (e.tokens.empty()) {
      return fail(error, rt_status::invalid_request, w + ": sequence " + std::to_string(e.seq_id) + " has no tokens to process");
    }
    if (e.start_pos < 0 || e.start_pos > cached) {
      return fail(error, rt_status::invalid_request, w + ": start position " + std::to_string(e.start_pos) + " is past the " + std::to_string(cached) +
              " cached tokens of sequence " + std::to_string(e.seq_id));
    }
    if (e.logits_from < 0 || static_cast<size_t>(e.logits_from) >= e.tokens.size()) {
      return fail(error, rt_status::invalid_request, w + ": logits from token " + std::to_string(e.logits_from) + " of sequence " +
              std::to_string(e.seq_id) + ", which has " + std::to_string(e.tokens.size()) + " tokens to process");
    }
    const size_t end = static_cast<size_t>(e.start_pos) + e.tokens.size();
    if (end > static_cast<size_t>(max_ctx)) {
      return fail(error, rt_status::invalid_request, w + ": sequence " + std::to_string(e.seq_id) + " would exceed the context of " + std::to_string(max_ctx) +
              " tokens (" + std::to_string(end) + ")");
    }
    for (int32_t t : e.tokens) {
      if (t < 0 || t >= vocab) {
        return fail(error, rt_status::invalid_request, w + ": token id " + std::to_string(t) + " is outside the vocabulary (0.." + std::to_string(vocab - 1) + ")");
      }
    }
  }
  return true;
}

}  // namespace rt
