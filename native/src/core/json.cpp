#include "core/json.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rt {

const json_value * json_value::get(const std::string & key) const {
  if (type != kind::object) return nullptr;
  for (const auto & m : members) {
    if (m.first == key) return &m.second;
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
  bool string(std::string & o) {
    if (p >= end || *p != '"') return fail("expected string");
    ++p;
    while (true) {
      if (p >= end) return fail("unterminated string");
      const char c = *p++;
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
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
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            p += 2;
            unsigned lo = 0;
            if (!hex4(lo)) return false;
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
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const char * s = p;
      if (*p == '-') ++p;
      while (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')) ++p;
      std::string tok(s, p);
      char * stop = nullptr;
      v.type = json_value::kind::number;
      v.num = std::strtod(tok.c_str(), &stop);
      if (stop == tok.c_str() || *stop != '\0') return fail("bad number");
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
