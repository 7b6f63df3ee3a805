// The JSON reader: a table of inputs and the value each parses to (written back compactly) or the error it gives.
// To add a case, add a row to PARSE_CASES (want = the compact value, or nullptr and the error text expected).
#include <clocale>

#include "core/json.h"
#include "test-helpers.h"

using namespace rt;

static std::string dump(const json_value & v) {
  switch (v.type) {
    case json_value::kind::null: return "null";
    case json_value::kind::boolean: return v.b ? "true" : "false";
    case json_value::kind::number: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.num);
      return buf;
    }
    case json_value::kind::string: return json_quote(v.str);
    case json_value::kind::array: {
      std::string o = "[";
      for (size_t i = 0; i < v.items.size(); ++i) o += (i ? "," : "") + dump(v.items[i]);
      return o + "]";
    }
    case json_value::kind::object: {
      std::string o = "{";
      for (size_t i = 0; i < v.members.size(); ++i) o += (i ? "," : "") + json_quote(v.members[i].first) + ":" + dump(v.members[i].second);
      return o + "}";
    }
  }
  return "?";
}

struct parse_case {
  const char * input;
  const char * want;   // compact value, or nullptr when the input must be refused
  const char * error;  // part of the error message when refused
};

static const parse_case PARSE_CASES[] = {
    {"{\"a\": [1, 2.5, -0, true, false, null], \"b\": \"x\"}", "{\"a\":[1,2.5,-0,true,false,null],\"b\":\"x\"}", nullptr},
    // Numbers: RFC 8259 grammar only; underflow reads as 0 (as Python's json), overflow is refused.
    {"1E+2", "100", nullptr},
    {"2.5e-3", "0.0025000000000000001", nullptr},
    {"123456789012345678901234567890", "1.2345678901234568e+29", nullptr},
    {"1e-400", "0", nullptr},
    {"-1e-400", "-0", nullptr},
    {"0.00000000000000000000000000001e-300", "0", nullptr},
    {"1.7976931348623157e308", "1.7976931348623157e+308", nullptr},
    {"[1e999]", nullptr, "offset 1: number out of range"},
    {"-1e999", nullptr, "offset 0: number out of range"},
    {"1.7976931348623159e308", nullptr, "number out of range"},
    {"0.001e312", nullptr, "number out of range"},
    {"-.5", nullptr, "offset 0: bad number"},
    {".5", nullptr, "offset 0: unexpected character"},
    {"01", nullptr, "offset 0: bad number (leading zero)"},
    {"-01", nullptr, "bad number (leading zero)"},
    {"1.", nullptr, "offset 0: bad number"},
    {"1.e5", nullptr, "bad number"},
    {"1e", nullptr, "bad number"},
    {"1e+", nullptr, "bad number"},
    {"+1", nullptr, "unexpected character"},
    {"-", nullptr, "bad number"},
    {"--1", nullptr, "bad number"},
    {"0x10", nullptr, "trailing characters"},
    {"NaN", nullptr, "unexpected character"},
    {"Infinity", nullptr, "unexpected character"},
    // \u escapes: surrogates only as a high + low pair.
    {"\"\\u00e9\\u20ac\"", "\"\xc3\xa9\xe2\x82\xac\"", nullptr},
    {"\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"", nullptr},
    {"\"\\ud800\\u0041\"", nullptr, "offset 1: high surrogate in \\u escape without a low surrogate"},
    {"\"\\ud800\\ud800\"", nullptr, "high surrogate in \\u escape without a low surrogate"},
    {"\"\\ud800x\"", nullptr, "high surrogate in \\u escape without a low surrogate"},
    {"\"\\ud800\"", nullptr, "high surrogate in \\u escape without a low surrogate"},
    {"\"ab\\udc00\"", nullptr, "offset 3: lone low surrogate in \\u escape"},
    // Raw bytes must be UTF-8.
    {"\"\xe2\x82\xac \xf4\x8f\xbf\xbf\"", "\"\xe2\x82\xac \xf4\x8f\xbf\xbf\"", nullptr},
    {"\"a\xff\"", nullptr, "offset 2: invalid UTF-8 in string"},
    {"\"\xc0\x80\"", nullptr, "invalid UTF-8"},             // overlong NUL
    {"\"\xe0\x80\xaf\"", nullptr, "invalid UTF-8"},         // overlong '/'
    {"\"\xed\xa0\x80\"", nullptr, "invalid UTF-8"},         // an encoded surrogate
    {"\"\xf4\x90\x80\x80\"", nullptr, "invalid UTF-8"},     // past U+10FFFF
    {"\"\xe2\x82\"", nullptr, "invalid UTF-8"},             // truncated
    {"\"\x80\"", nullptr, "invalid UTF-8"},                 // a lone continuation byte
    {"{\"k\xe9y\": 1}", nullptr, "invalid UTF-8"},          // in a key too
    {"\"\xc2\xa9 \xdf\xbf \xf0\x90\x80\x80\"", "\"\xc2\xa9 \xdf\xbf \xf0\x90\x80\x80\"", nullptr},  // lowest and highest leads
    {"\"\xc1\xbf\"", nullptr, "invalid UTF-8"},         // overlong 2-byte form
    {"\"\xf5\x80\x80\x80\"", nullptr, "invalid UTF-8"},  // lead past U+10FFFF
    {"\"a\xff", nullptr, "offset 2: invalid UTF-8 in string"},  // invalid byte, then the end of the input
    {"tru", nullptr, "offset 0: invalid literal"},
    {"[fals]", nullptr, "offset 1: invalid literal"},
    {"nul", nullptr, "offset 0: invalid literal"},
    // Duplicate keys are kept in order (get() reads the last, below).
    {"{\"a\": 1, \"a\": 2}", "{\"a\":1,\"a\":2}", nullptr},
};

struct get_case {
  const char * input;
  const char * key;
  double want;
};

static const get_case GET_CASES[] = {
    {"{\"a\": 1, \"b\": 5, \"a\": 2}", "a", 2},
    {"{\"eos_token_id\": 1, \"eos_token_id\": [7]}", "eos_token_id", -1},  // -1: the array
    {"{\"b\": 5}", "b", 5},
};

int main() {
  for (const parse_case & tc : PARSE_CASES) {
    json_value v;
    std::string err;
    const bool ok = json_parse(tc.input, v, err);
    if (tc.want) {
      CHECK(ok, "%s: refused (%s)", tc.input, err.c_str());
      if (ok) CHECK(dump(v) == tc.want, "%s: parsed as %s, expected %s", tc.input, dump(v).c_str(), tc.want);
    } else {
      CHECK(!ok, "%s: accepted as %s", tc.input, dump(v).c_str());
      CHECK(err.find(tc.error) != std::string::npos, "%s: error '%s' lacks '%s'", tc.input, err.c_str(), tc.error);
    }
  }
  // Every short escape decodes to its character.
  const std::pair<const char *, const char *> escapes[] = {{"\"\\t\"", "\t"}, {"\"\\n\"", "\n"}, {"\"\\r\"", "\r"},
                                                           {"\"\\b\"", "\b"}, {"\"\\f\"", "\f"}, {"\"\\/\"", "/"},
                                                           {"\"\\\\\"", "\\"}, {"\"\\\"\"", "\""}};
  for (const auto & [input, want] : escapes) {
    json_value v;
    std::string err;
    CHECK(json_parse(input, v, err) && v.is_string() && v.str == want, "%s: %s", input, err.c_str());
  }
  for (const get_case & tc : GET_CASES) {
    json_value v;
    std::string err;
    CHECK(json_parse(tc.input, v, err), "%s: %s", tc.input, err.c_str());
    const json_value * m = v.get(tc.key);
    const double got = !m ? -2 : m->is_number() ? m->num : -1;
    CHECK(got == tc.want, "%s: get(%s) gave %g, expected %g", tc.input, tc.key, got, tc.want);
  }
  // Numbers do not depend on LC_NUMERIC (a decimal comma locale, where one is installed).
  const char * comma_locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "German_Germany.1252"};
  const char * used = nullptr;
  for (const char * name : comma_locales) {
    if (std::setlocale(LC_NUMERIC, name)) { used = name; break; }
  }
  if (used) {
    json_value v;
    std::string err;
    CHECK(json_parse("[0.5, 1e-5]", v, err) && v.items.size() == 2 && v.items[0].num == 0.5 && v.items[1].num == 1e-5,
          "0.5 and 1e-5 under locale %s: %s", used, err.c_str());
    std::setlocale(LC_NUMERIC, "C");
  } else {
    std::printf("test-json: no decimal-comma locale installed; the LC_NUMERIC case did not run\n");
  }
  return test_util::finish("test-json");
}
