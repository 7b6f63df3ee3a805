#pragma once
// Safetensors header parsing: 8-byte little-endian header length, JSON header, then the raw tensor bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/model-weights.h"

namespace rt {

/** One tensor record; offsets are absolute byte offsets in the file. */
struct safetensors_entry {
  std::string name;
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  size_t begin = 0;
  size_t end = 0;
};

struct safetensors_header {
  size_t data_start = 0;  // 8 + header length
  std::vector<safetensors_entry> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
};

/**
 * Parses and validates the header of a safetensors file of `size` bytes at `data` (only the first bytes are read
 * when the file is valid). Errors name `path` and the tensor: bad header, unsupported dtype, size mismatch,
 * data past the end of the file (truncated).
 */
bool safetensors_parse(const unsigned char * data, size_t size, const std::string & path, safetensors_header & out,
                       std::string & error);

/** Parses a dtype spelling; false when unsupported. */
bool dtype_parse(const std::string & s, dtype & out);

}  // namespace rt
