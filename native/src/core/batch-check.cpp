#include "core/batch-check.h"

#include <unordered_set>

namespace rt {

bool check_batch(const std::vector<batch_entry> & batch, const std::function<int(int)> & cached_length, int max_ctx, int vocab,
                 const char * who, std::string & error) {
  const std::string w = who;
  std::unordered_set<int> listed;
  for (const batch_entry & e : batch) {
    const int cached = cached_length(e.seq_id);
    if (cached < 0) {
      error = w + ": unknown sequence " + std::to_string(e.seq_id);
      return false;
    }
    if (!listed.insert(e.seq_id).second) {
      error = w + ": sequence " + std::to_string(e.seq_id) + " appears twice in one batch";
      return false;
    }
    if (e.tokens.empty()) {
      error = w + ": sequence " + std::to_string(e.seq_id) + " has no tokens to process";
      return false;
    }
    if (e.start_pos < 0 || e.start_pos > cached) {
      error = w + ": start position " + std::to_string(e.start_pos) + " is past the " + std::to_string(cached) +
              " cached tokens of sequence " + std::to_string(e.seq_id);
      return false;
    }
    const size_t end = static_cast<size_t>(e.start_pos) + e.tokens.size();
    if (end > static_cast<size_t>(max_ctx)) {
      error = w + ": sequence " + std::to_string(e.seq_id) + " would exceed the context of " + std::to_string(max_ctx) +
              " tokens (" + std::to_string(end) + ")";
      return false;
    }
    for (int32_t t : e.tokens) {
      if (t < 0 || t >= vocab) {
        error = w + ": token id " + std::to_string(t) + " is outside the vocabulary (0.." + std::to_string(vocab - 1) + ")";
        return false;
      }
    }
  }
  return true;
}

}  // namespace rt
