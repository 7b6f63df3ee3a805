#pragma once
// A small JSON reader (config.json, safetensors headers, index files) and string escaping for writers.
#include <string>
#include <utility>
#include <vector>

namespace rt {

/** A parsed JSON value; objects keep their key order. */
struct json_value {
  enum class kind { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool b = false;
  double num = 0.0;
  std::string str;
  std::vector<json_value> items;                             // array
  std::vector<std::pair<std::string, json_value>> members;  // object

  bool is_null() const { return type == kind::null; }
  bool is_number() const { return type == kind::number; }
  bool is_string() const { return type == kind::string; }
  bool is_bool() const { return type == kind::boolean; }
  bool is_array() const { return type == kind::array; }
  bool is_object() const { return type == kind::object; }
  /** Member of an object (the last of duplicate keys, as Python and JavaScript read them), or nullptr. */
  const json_value * get(const std::string & key) const;
};

/** Parses `text`; on failure returns false and sets `error` to "offset N: reason". */
bool json_parse(const std::string & text, json_value & out, std::string & error);
/** Parses `len` bytes at `data`. */
bool json_parse(const char * data, size_t len, json_value & out, std::string & error);

/** `s` as a quoted JSON string. */
std::string json_quote(const std::string & s);

}  // namespace rt
