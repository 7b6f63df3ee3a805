#include "core/json.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace rt {

const json_value * json_value::get(const std::string & key) const {
  if (type != kind::object) return nullptr;
  // Of duplicate keys the last counts, as in Python's json and JavaScript's JSON.parse.
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

namespace {

struct parser {
  const char * p;
  const char * begin;
  const char * end;
  std::string err;
  int depth = 0;

  bool fail(const char * what) {
    if (err.empty()) err = "offset " + std::to_string(p - begin) + ": " + what;
    return false;
  }
  bool fail_at(const char * at, const char * what) {
    p = at;
    return fail(what);
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  void ws() {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  }
  bool lit(const char * s) {
    const size_t n = std::strlen(s);
    if (static_cast<size_t>(end - p) < n || std::memcmp(p, s, n) != 0) return fail("invalid literal");
    p += n;
    return true;
  }
  static void put_utf8(std::string & o, unsigned cp) {
    if (cp < 0x80) {
      o += static_cast<char>(cp);
    } else if (cp < 0x800) {
      o += static_cast<char>(0xc0 | (cp >> 6));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      o += static_cast<char>(0xe0 | (cp >> 12));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      o += static_cast<char>(0xf0 | (cp >> 18));
      o += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool hex4(unsigned & v) {
    if (end - p < 4) return fail("truncated \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }
  // Appends the multi-byte UTF-8 sequence whose lead byte is at p[-1]; rejects overlong forms, encoded surrogates,
  // code points past U+10FFFF and truncated sequences.
  bool utf8_sequence(std::string & o) {
    const char * at = p - 1;
    const unsigned char lead = static_cast<unsigned char>(*at);
    int n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // range of the first continuation byte
    if (lead >= 0xc2 && lead <= 0xdf) n = 1;
    else if (lead >= 0xe0 && lead <= 0xef) { n = 2; if (lead == 0xe0) lo = 0xa0; if (lead == 0xed) hi = 0x9f; }
    else if (lead >= 0xf0 && lead <= 0xf4) { n = 3; if (lead == 0xf0) lo = 0x90; if (lead == 0xf4) hi = 0x8f; }
    else return fail_at(at, "invalid UTF-8 in string");
    if (end - p < n) return fail_at(at, "invalid UTF-8 in string");
    for (int k = 0; k < n; ++k) {
      const unsigned char b = static_cast<unsigned char>(p[k]);
      if (b < (k == 0 ? lo : 0x80) || b > (k == 0 ? hi : 0xbf)) return fail_at(at, "invalid UTF-8 in string");
    }
    o.append(at, static_cast<size_t>(n) + 1);
    p += n;
    return true;
  }
  // RFC 8259 number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, read without the C locale (strtod
  // would take the decimal point from LC_NUMERIC).
  bool number(double & out) {
    const char * s = p;
    if (p < end && *p == '-') ++p;
    if (p >= end || !digit(*p)) return fail_at(s, "bad number");
    if (*p == '0') {
      ++p;
      if (p < end && digit(*p)) return fail_at(s, "bad number (leading zero)");
    } else {
      while (p < end && digit(*p)) ++p;
    }
    const char * int_end = p;
    if (p < end && *p == '.') {
      ++p;
      if (p >= end || !digit(*p)) return fail_at(s, "bad number");
      while (p < end && digit(*p)) ++p;
    }
    const char * mant_end = p;
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (p >= end || !digit(*p)) return fail_at(s, "bad number");
      while (p < end && digit(*p)) ++p;
    }
    const auto r = std::from_chars(s, p, out);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars reports underflow and overflow alike. Underflow reads as zero, as in Python's json; overflow
      // would be infinite, which JSON cannot express.
      long long lead = 0;  // decimal exponent of the first significant digit, before the e part
      bool nonzero = false;
      const char * d0 = *s == '-' ? s + 1 : s;
      for (const char * q = d0; q < mant_end && !nonzero; ++q) {
        if (*q == '.' || *q == '0') continue;
        nonzero = true;
        lead = q < int_end ? (int_end - q) - 1 : -(q - int_end);
      }
      long long e = 0;
      if (mant_end < p) {
        const char * q = mant_end + 1;
        const bool neg = *q == '-';
        if (*q == '+' || *q == '-') ++q;
        for (; q < p; ++q) e = e < 100000000 ? e * 10 + (*q - '0') : e;
        if (neg) e = -e;
      }
      if (nonzero && lead + e > 0) return fail_at(s, "number out of range (not a finite double)");
      out = *s == '-' ? -0.0 : 0.0;
      return true;
    }
    if (r.ec != std::errc() || r.ptr != p) return fail_at(s, "bad number");
    return true;
  }
  bool string(std::string & o) {
    if (p >= end || *p != '"') return fail("expected string");
    ++p;
    while (true) {
      if (p >= end) return fail("unterminated string");
      const char c = *p++;
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        if (!utf8_sequence(o)) return false;
        continue;
      }
      if (c != '\\') { o += c; continue; }
      if (p >= end) return fail("unterminated escape");
      const char e = *p++;
      switch (e) {
        case '"': o += '"'; break;
        case '\\': o += '\\'; break;
        case '/': o += '/'; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'n': o += '\n'; break;
        case 'r': o += '\r'; break;
        case 't': o += '\t'; break;
        case 'u': {
          // A surrogate must come as a high + low pair: a lone one has no UTF-8 encoding (the safetensors reference
          // reader, serde_json, rejects it too).
          const char * at = p - 2;
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xdc00 && cp < 0xe000) return fail_at(at, "lone low surrogate in \\u escape");
          if (cp >= 0xd800 && cp < 0xdc00) {
            if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return fail_at(at, "high surrogate in \\u escape without a low surrogate");
            p += 2;
            unsigned lo = 0;
            if (!hex4(lo)) return false;
            if (lo < 0xdc00 || lo >= 0xe000) return fail_at(at, "high surrogate in \\u escape without a low surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          put_utf8(o, cp);
          break;
        }
        default: return fail("bad escape");
      }
    }
  }
  bool value(json_value & v) {
    if (++depth > 200) return fail("nesting too deep");
    ws();
    if (p >= end) return fail("unexpected end");
    bool ok = true;
    const char c = *p;
    if (c == '{') {
      v.type = json_value::kind::object;
      ++p;
      ws();
      if (p < end && *p == '}') { ++p; --depth; return true; }
      while (ok) {
        ws();
        std::pair<std::string, json_value> m;
        if (!string(m.first)) return false;
        ws();
        if (p >= end || *p != ':') return fail("expected ':'");
        ++p;
        if (!value(m.second)) return false;
        v.members.push_back(std::move(m));
        ws();
        if (p < end && *p == ',') { ++p; continue; }
        if (p < end && *p == '}') { ++p; break; }
        return fail("expected ',' or '}'");
      }
    } else if (c == '[') {
      v.type = json_value::kind::array;
      ++p;
      ws();
      if (p < end && *p == ']') { ++p; --depth; return true; }
      while (ok) {
        json_value item;
        if (!value(item)) return false;
        v.items.push_back(std::move(item));
        ws();
        if (p < end && *p == ',') { ++p; continue; }
        if (p < end && *p == ']') { ++p; break; }
        return fail("expected ',' or ']'");
      }
    } else if (c == '"') {
      v.type = json_value::kind::string;
      if (!string(v.str)) return false;
    } else if (c == 't') {
      v.type = json_value::kind::boolean;
      v.b = true;
      if (!lit("true")) return false;
    } else if (c == 'f') {
      v.type = json_value::kind::boolean;
      if (!lit("false")) return false;
    } else if (c == 'n') {
      if (!lit("null")) return false;
    } else if (c == '-' || digit(c)) {
      v.type = json_value::kind::number;
      if (!number(v.num)) return false;
    } else {
      return fail("unexpected character");
    }
    --depth;
    return true;
  }
};

}  // namespace

bool json_parse(const char * data, size_t len, json_value & out, std::string & error) {
  parser ps{data, data, data + len, {}};
  out = json_value{};
  if (!ps.value(out)) { error = ps.err; return false; }
  ps.ws();
  if (ps.p != ps.end) { ps.fail("trailing characters"); error = ps.err; return false; }
  return true;
}

bool json_parse(const std::string & text, json_value & out, std::string & error) {
  return json_parse(text.data(), text.size(), out, error);
}

std::string json_quote(const std::string & s) {
  std::string o = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

}  // namespace rt
