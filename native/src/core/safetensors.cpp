#include "core/safetensors.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/json.h"

namespace rt {

size_t dtype_size(dtype t) {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::f16: return 2;
    case dtype::bf16: return 2;
    case dtype::u8: return 1;
  }
  return 0;
}

const char * dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::f16: return "F16";
    case dtype::bf16: return "BF16";
    case dtype::u8: return "U8";
  }
  return "?";
}

bool dtype_parse(const std::string & s, dtype & out) {
  if (s == "F32") out = dtype::f32;
  else if (s == "F16") out = dtype::f16;
  else if (s == "BF16") out = dtype::bf16;
  else if (s == "U8") out = dtype::u8;
  else return false;
  return true;
}

bool safetensors_parse(const unsigned char * data, size_t size, const std::string & path, safetensors_header & out,
                       std::string & error) {
  out = safetensors_header{};
  if (size < 8) {
    error = path + ": truncated safetensors file (" + std::to_string(size) + " bytes, no header length)";
    return false;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > size - 8) {
    error = path + ": bad safetensors header: header length " + std::to_string(n) + " exceeds the file size " +
            std::to_string(size) + " (truncated or not a safetensors file)";
    return false;
  }
  if (n > (100u << 20)) {
    error = path + ": bad safetensors header: header length " + std::to_string(n) + " is implausibly large";
    return false;
  }
  json_value root;
  std::string jerr;
  if (!json_parse(reinterpret_cast<const char *>(data + 8), static_cast<size_t>(n), root, jerr)) {
    error = path + ": bad safetensors header JSON (" + jerr + ")";
    return false;
  }
  if (!root.is_object()) {
    error = path + ": bad safetensors header: the header is not a JSON object";
    return false;
  }
  out.data_start = 8 + static_cast<size_t>(n);
  const size_t data_len = size - out.data_start;
  std::unordered_set<std::string> names;
  for (const auto & m : root.members) {
    if (m.first == "__metadata__") {
      if (m.second.is_object()) {
        for (const auto & kv : m.second.members) {
          if (kv.second.is_string()) out.metadata.emplace_back(kv.first, kv.second.str);
        }
      }
      continue;
    }
    if (!names.insert(m.first).second) {
      error = path + ": bad safetensors header: tensor '" + m.first + "' is listed twice";
      return false;
    }
    const json_value & t = m.second;
    const json_value * dt = t.get("dtype");
    const json_value * shape = t.get("shape");
    const json_value * offs = t.get("data_offsets");
    if (!t.is_object() || !dt || !dt->is_string() || !shape || !shape->is_array() || !offs || !offs->is_array() ||
        offs->items.size() != 2) {
      error = path + ": bad safetensors header: tensor '" + m.first + "' lacks dtype/shape/data_offsets";
      return false;
    }
    safetensors_entry e;
    e.name = m.first;
    if (!dtype_parse(dt->str, e.type)) {
      error = path + ": tensor '" + m.first + "' has dtype " + dt->str + ", which is not supported (BF16, F16, F32, U8)";
      return false;
    }
    // JSON numbers are doubles: above 2^53 they are no longer exact, and a wrapped product could match a crafted span.
    constexpr double kMaxExact = 9007199254740992.0;
    uint64_t numel = 1;
    for (const auto & d : shape->items) {
      if (!d.is_number() || d.num < 0 || d.num != std::floor(d.num) || d.num > kMaxExact) {
        error = path + ": bad safetensors header: tensor '" + m.first + "' has a bad shape";
        return false;
      }
      const uint64_t dim = static_cast<uint64_t>(d.num);
      if (dim != 0 && numel > (static_cast<uint64_t>(kMaxExact) / dtype_size(e.type)) / dim) {
        error = path + ": bad safetensors header: tensor '" + m.first + "' has a shape too large to address";
        return false;
      }
      e.shape.push_back(static_cast<int64_t>(dim));
      numel *= dim;
    }
    const json_value & b = offs->items[0];
    const json_value & en = offs->items[1];
    if (!b.is_number() || !en.is_number() || b.num < 0 || en.num < b.num || en.num > kMaxExact ||
        b.num != std::floor(b.num) || en.num != std::floor(en.num)) {
      error = path + ": bad safetensors header: tensor '" + m.first + "' has bad data_offsets";
      return false;
    }
    const uint64_t begin = static_cast<uint64_t>(b.num);
    const uint64_t end = static_cast<uint64_t>(en.num);
    if (end - begin != numel * dtype_size(e.type)) {
      error = path + ": bad safetensors header: tensor '" + m.first + "' spans " + std::to_string(end - begin) +
              " bytes but its shape and dtype need " + std::to_string(numel * dtype_size(e.type));
      return false;
    }
    if (end > data_len) {
      error = path + ": truncated: tensor '" + m.first + "' ends at data byte " + std::to_string(end) +
              " but the file holds only " + std::to_string(data_len) + " data bytes";
      return false;
    }
    e.begin = out.data_start + static_cast<size_t>(begin);
    e.end = out.data_start + static_cast<size_t>(end);
    out.tensors.push_back(std::move(e));
  }
  // As the reference loader requires: the tensors tile the data exactly, so none aliases another's bytes (two
  // experts packed from the same bytes) and no bytes are unaccounted for.
  std::vector<const safetensors_entry *> by_begin;
  for (const safetensors_entry & t : out.tensors) by_begin.push_back(&t);
  std::stable_sort(by_begin.begin(), by_begin.end(),
                   [](const safetensors_entry * a, const safetensors_entry * b) { return a->begin < b->begin; });
  size_t at = out.data_start;
  const safetensors_entry * prev = nullptr;
  for (const safetensors_entry * t : by_begin) {
    if (t->begin != at) {
      error = path + ": bad safetensors header: tensor '" + t->name + "' starts at data byte " +
              std::to_string(t->begin - out.data_start) +
              (prev ? (t->begin < at ? ", inside tensor '" + prev->name + "'" : ", leaving a gap after tensor '" + prev->name + "'")
                    : ", not at 0") +
              " (the tensors must tile the data)";
      return false;
    }
    at = t->end;
    prev = t;
  }
  if (at != out.data_start + data_len) {
    error = path + ": bad safetensors header: the tensors cover " + std::to_string(at - out.data_start) + " of its " +
            std::to_string(data_len) + " data bytes";
    return false;
  }
  return true;
}

}  // namespace rt
