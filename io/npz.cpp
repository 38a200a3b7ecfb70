// .npy / .npz encoding and decoding. The ZIP layout (PKWARE APPNOTE 6.3) we need:
//   local header  "PK\3\4" ... crc, sizes, name, extra, then the member's bytes
//   central dir   "PK\1\2" ... crc, sizes, name, extra, comment, offset of the local header
//   end record    "PK\5\6" ... entry count, central directory size and offset, comment
// Readers trust the central directory (sizes there are final even when a data descriptor
// follows the data) and cross-check the local header's name and method.
#include "io/npz.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>

#include <xtensor/xmanipulation.hpp>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "npz.cpp copies little-endian file data straight into memory");

namespace attnlab {

// ------------------------------------------------------------------ NpyArray, Npz

const char* dtype_descr(DType d) {
  switch (d) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "?";
}

namespace {
std::size_t item_size(DType d) {
  switch (d) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}
template <class E> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<Index>() { return DType::Int64; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
}  // namespace

Shape NpyArray::shape() const {
  return std::visit([](const auto& a) { return shape_of(a); }, v_);
}
std::size_t NpyArray::size() const {
  return std::visit([](const auto& a) { return a.size(); }, v_);
}

template <class E>
const xt::xarray<E, xt::layout_type::row_major>& NpyArray::get() const {
  using A = xt::xarray<E, xt::layout_type::row_major>;
  if (const A* a = std::get_if<A>(&v_)) return *a;
  throw IoError(std::string("NpyArray: holds ") + dtype_descr(dtype()) + ", not " +
                dtype_descr(dtype_of<E>()));
}

template <class T>
Array<T> NpyArray::to() const {
  if (dtype() == DType::Bool)
    throw IoError(std::string("NpyArray: cannot convert |b1 to ") + dtype_descr(dtype_of<T>()));
  return std::visit([](const auto& a) { return Array<T>(xt::cast<T>(a)); }, v_);
}

void Npz::add(const std::string& key, NpyArray a) {
  if (key.empty()) throw IoError("Npz: empty key");
  if (contains(key)) throw IoError("Npz: key '" + key + "' appears twice");
  index_[key] = entries_.size();
  entries_.emplace_back(key, std::move(a));
}

const NpyArray& Npz::at(const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) throw IoError("Npz: no array named '" + key + "'");
  return entries_[it->second].second;
}

std::vector<std::string> Npz::keys() const {
  std::vector<std::string> k;
  for (const auto& e : entries_) k.push_back(e.first);
  return k;
}

// ------------------------------------------------------------------ .npy

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw IoError(what + ": " + why);
}

std::string header_dict(DType d, const Shape& shape) {
  std::ostringstream os;
  os << "{'descr': '" << dtype_descr(d) << "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ",";  // Python's 1-tuple
  os << "), }";
  return os.str();
}

// A tiny parser for the header's Python dict literal: string keys; values are strings,
// True/False, or tuples of non-negative integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& s, const std::string& what) : s_(s), what_(what) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      std::string key = string_literal();
      expect(':');
      if (key == "descr" && !seen_descr) {
        descr = string_literal();
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_fortran) {
        fortran = boolean();
        seen_fortran = true;
      } else if (key == "shape" && !seen_shape) {
        shape = tuple();
        seen_shape = true;
      } else {
        error("unexpected or repeated key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') ++i_;
      else if (peek() != '}') error("expected ',' or '}'");
    }
    ++i_;
    skip_ws();
    if (i_ != s_.size()) error("text after the closing '}'");
    if (!seen_descr || !seen_fortran || !seen_shape)
      error("needs the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void error(const std::string& why) const {
    bad(what_, "bad .npy header (" + why + " at offset " + std::to_string(i_) + "): " + s_);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') error("expected a quoted string");
    std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) error("unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(i_, 4, "True") == 0) { i_ += 4; return true; }
    if (s_.compare(i_, 5, "False") == 0) { i_ += 5; return false; }
    error("expected True or False");
  }
  Shape tuple() {
    Shape out;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') error("expected a non-negative integer");
      std::size_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        std::size_t digit = static_cast<std::size_t>(peek() - '0');
        if (v > (std::numeric_limits<std::size_t>::max() - digit) / 10) error("dimension overflows");
        v = v * 10 + digit;
        ++i_;
      }
      out.push_back(v);
      skip_ws();
      if (peek() == ',') ++i_;
      else if (peek() != ')') error("expected ',' or ')'");
    }
    ++i_;
    return out;
  }

  const std::string& s_;
  const std::string& what_;
  std::size_t i_ = 0;
};

DType parse_descr(const std::string& descr, const std::string& what) {
  for (DType d : {DType::Float32, DType::Float64, DType::Int64, DType::Bool})
    if (descr == dtype_descr(d)) return d;
  bad(what, "unsupported dtype '" + descr + "' (supported: <f4, <f8, <i8, |b1)");
}

// Copy `count` items into a new array of `shape` (C order), or of the reversed shape and then
// transposed (Fortran order: the first index varies fastest).
template <class E>
NpyArray make_array(const char* data, Shape shape, bool fortran, const std::string& what) {
  using A = xt::xarray<E, xt::layout_type::row_major>;
  Shape stored = shape;
  if (fortran) std::reverse(stored.begin(), stored.end());
  A a = A::from_shape(stored);
  if constexpr (std::is_same_v<E, bool>) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (bytes[i] > 1) bad(what, "bool item " + std::to_string(i) + " has byte value " +
                                      std::to_string(bytes[i]) + " (must be 0 or 1)");
      a.data()[i] = bytes[i] != 0;
    }
  } else {
    if (a.size()) std::memcpy(a.data(), data, a.size() * sizeof(E));
  }
  if (fortran && a.dimension() > 1) return NpyArray(A(xt::transpose(a)));
  return NpyArray(std::move(a));
}

}  // namespace

std::string npy_encode(const NpyArray& a) {
  const Shape shape = a.shape();
  std::string dict = header_dict(a.dtype(), shape);
  // magic(6) + version(2) + length(2) + dict + padding + '\n' is a multiple of 64.
  std::size_t unpadded = 10 + dict.size() + 1;
  std::size_t header_len = dict.size() + 1 + (64 - unpadded % 64) % 64;
  if (header_len > 0xFFFF) throw IoError("npy_encode: header too long for format 1.0: " + dict);
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header_len & 0xFF));
  out.push_back(static_cast<char>(header_len >> 8));
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out.push_back('\n');
  a.visit([&](const auto& arr) {
    using E = typename std::decay_t<decltype(arr)>::value_type;
    if constexpr (std::is_same_v<E, bool>) {
      for (bool b : arr) out.push_back(b ? '\1' : '\0');
    } else {
      out.append(reinterpret_cast<const char*>(arr.data()), arr.size() * sizeof(E));
    }
  });
  return out;
}

NpyArray npy_decode(const std::string& b, const std::string& what) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0)
    bad(what, "not a .npy file (missing the \\x93NUMPY magic)");
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(b[i])); };
  std::size_t major = byte(6), minor = byte(7);
  if (major < 1 || major > 3 || minor != 0)
    bad(what, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor));
  // Version 1.0 stores the header length in 2 bytes, versions 2.0 and 3.0 in 4.
  std::size_t prefix = major == 1 ? 10 : 12;
  if (b.size() < prefix) bad(what, "truncated .npy preamble");
  std::size_t header_len = byte(8) | byte(9) << 8;
  if (major > 1) header_len |= byte(10) << 16 | byte(11) << 24;
  if (b.size() < prefix + header_len)
    bad(what, "truncated .npy header: needs " + std::to_string(header_len) + " bytes, file has " +
                  std::to_string(b.size() - prefix));
  std::string header = b.substr(prefix, header_len);
  if (header.empty() || header.back() != '\n') bad(what, "the .npy header does not end in a newline");
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(header, what).parse(descr, fortran, shape);
  DType d = parse_descr(descr, what);

  // The nonzero sizes are checked too: (0, 2^62, 4) holds nothing, but its strides would wrap.
  std::size_t count = 0;
  if (!size_within_limit(shape, count)) bad(what, "shape " + shape_str(shape) + " has more than 2^48 entries");
  std::size_t need = count * item_size(d), have = b.size() - prefix - header_len;
  if (have < need)
    bad(what, "truncated data: shape " + shape_str(shape) + " of " + descr + " needs " +
                  std::to_string(need) + " bytes, found " + std::to_string(have));
  if (have > need)
    bad(what, std::to_string(have - need) + " unexpected bytes after the data of shape " +
                  shape_str(shape));
  const char* data = b.data() + prefix + header_len;
  switch (d) {
    case DType::Float32: return make_array<float>(data, shape, fortran, what);
    case DType::Float64: return make_array<double>(data, shape, fortran, what);
    case DType::Int64: return make_array<Index>(data, shape, fortran, what);
    case DType::Bool: return make_array<bool>(data, shape, fortran, what);
  }
  bad(what, "unreachable dtype");
}

// ------------------------------------------------------------------ files

void save_npy(const std::string& path, const NpyArray& a) {
  write_file_atomic(path, npy_encode(a), "save_npy");
}

NpyArray load_npy(const std::string& path) {
  // read_file refuses folders and devices by name.
  return npy_decode(read_file(path, "load_npy"), "load_npy: '" + path + "'");
}

// ------------------------------------------------------------------ .npz (ZIP)

namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr std::uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // fixed: reproducible bytes

void put16(std::string& o, std::uint32_t v) {
  o.push_back(static_cast<char>(v & 0xFF));
  o.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void put32(std::string& o, std::uint32_t v) {
  put16(o, v & 0xFFFF);
  put16(o, v >> 16);
}

std::uint32_t crc_of(const char* data, std::size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib's length is a uInt: feed huge buffers in pieces.
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

// Bounds-checked little-endian reads from the whole archive.
struct Reader {
  const std::string& b;
  const std::string& what;
  void need(std::uint64_t off, std::uint64_t n, const char* part) const {
    if (off > b.size() || n > b.size() - off)
      bad(what, std::string("truncated archive: ") + part + " runs past the end of the file");
  }
  std::uint64_t u(std::uint64_t off, int bytes) const {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[off + i]);
    return v;
  }
  std::uint64_t u16(std::uint64_t off) const { return u(off, 2); }
  std::uint64_t u32(std::uint64_t off) const { return u(off, 4); }
  std::uint64_t u64(std::uint64_t off) const { return u(off, 8); }
};

std::string inflate_raw(const char* data, std::size_t csize, std::size_t usize,
                        const std::string& what) {
  // Deflate cannot compress better than about 1032:1; a larger claim is corruption, and
  // allocating it could exhaust memory.
  if (usize > csize * 1032 + 1024) bad(what, "declared uncompressed size is impossible");
  std::string out(usize, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) bad(what, "zlib inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  zs.avail_in = static_cast<uInt>(csize);
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(usize);
  int rc = inflate(&zs, Z_FINISH);
  std::string msg = zs.msg ? zs.msg : "";
  std::size_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc == Z_DATA_ERROR) bad(what, "corrupt deflate data (" + msg + ")");
  if (rc != Z_STREAM_END)
    bad(what, "deflate stream does not end where declared (uncompressed size " +
                  std::to_string(usize) + ", zlib code " + std::to_string(rc) + ")");
  if (produced != usize) bad(what, "inflated size differs from the declared size");
  return out;
}

}  // namespace

void save_npz(const std::string& path, const Npz& arrays) {
  const std::string what = "save_npz: '" + path + "'";
  std::string out, central;
  for (const auto& [key, array] : arrays.entries()) {
    const std::string name = key + ".npy";
    const std::string data = npy_encode(array);
    if (name.size() > 0xFFFF) bad(what, "key too long: " + key);
    // Without ZIP64 every size and offset must fit in 32 bits.
    if (data.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu)
      bad(what, "array '" + key + "' or archive exceeds 4 GiB (ZIP64 is not written)");
    const std::uint32_t crc = crc_of(data.data(), data.size());
    const auto offset = static_cast<std::uint32_t>(out.size());
    const auto size = static_cast<std::uint32_t>(data.size());
    put32(out, kLocalSig);
    put16(out, 20);            // version needed: 2.0
    put16(out, 0);             // flags
    put16(out, 0);             // method: stored
    put16(out, 0);             // time 00:00:00
    put16(out, kDosDate1980);  // date
    put32(out, crc);
    put32(out, size);  // compressed size
    put32(out, size);  // uncompressed size
    put16(out, static_cast<std::uint32_t>(name.size()));
    put16(out, 0);  // extra length
    out += name;
    out += data;

    put32(central, kCentralSig);
    put16(central, 0x0314);  // made by: Unix, 2.0
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, kDosDate1980);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, static_cast<std::uint32_t>(name.size()));
    put16(central, 0);  // extra
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0644u << 16);  // external attributes: Unix rw-r--r--
    put32(central, offset);
    central += name;
  }
  if (arrays.size() >= 0xFFFF || out.size() + central.size() >= 0xFFFFFFFFu)
    bad(what, "too many arrays or archive exceeds 4 GiB (ZIP64 is not written)");
  const auto cd_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, kEndSig);
  put16(out, 0);  // this disk
  put16(out, 0);  // disk with the central directory
  put16(out, static_cast<std::uint32_t>(arrays.size()));
  put16(out, static_cast<std::uint32_t>(arrays.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, cd_offset);
  put16(out, 0);  // comment length
  write_file_atomic(path, out, "save_npz");
}

Npz load_npz(const std::string& path) {
  // read_file refuses folders and devices by name: a folder would read as 0 bytes, /dev/zero
  // would never end.
  return npz_decode(read_file(path, "load_npz"), "load_npz: '" + path + "'");
}

Npz npz_decode(const std::string& b, const std::string& what) {
  Reader r{b, what};

  // The end record is the last 22 bytes plus a comment of up to 65535 bytes.
  if (b.size() < 22) bad(what, "not a ZIP archive (" + std::to_string(b.size()) + " bytes)");
  std::uint64_t end = b.size() - 22, end_pos = 0;
  bool found = false;
  for (std::uint64_t back = 0; back <= 0xFFFF && back <= end; ++back) {
    std::uint64_t p = end - back;
    if (r.u32(p) == kEndSig && r.u16(p + 20) == back) {
      end_pos = p;
      found = true;
      break;
    }
  }
  if (!found) bad(what, "not a ZIP archive, or truncated (no end-of-central-directory record)");
  if (r.u16(end_pos + 4) != 0 || r.u16(end_pos + 6) != 0)
    bad(what, "multi-disk ZIP archives are not supported");
  std::uint64_t entries = r.u16(end_pos + 10), cd_size = r.u32(end_pos + 12),
                cd_offset = r.u32(end_pos + 16);
  if (entries == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    // ZIP64: a locator just before the end record points at the ZIP64 end record.
    if (end_pos < 20 || r.u32(end_pos - 20) != kZip64LocatorSig)
      bad(what, "ZIP64 end-of-central-directory locator missing");
    std::uint64_t z = r.u64(end_pos - 20 + 8);
    r.need(z, 56, "ZIP64 end record");
    if (r.u32(z) != kZip64EndSig) bad(what, "bad ZIP64 end-of-central-directory signature");
    entries = r.u64(z + 32);
    cd_size = r.u64(z + 40);
    cd_offset = r.u64(z + 48);
  }
  r.need(cd_offset, cd_size, "central directory");

  Npz result;
  std::uint64_t p = cd_offset;
  for (std::uint64_t e = 0; e < entries; ++e) {
    r.need(p, 46, "central directory entry");
    if (r.u32(p) != kCentralSig)
      bad(what, "bad central directory signature at entry " + std::to_string(e));
    const std::uint64_t flags = r.u16(p + 8), method = r.u16(p + 10), crc = r.u32(p + 16);
    std::uint64_t csize = r.u32(p + 20), usize = r.u32(p + 24), local = r.u32(p + 42);
    const std::uint64_t name_len = r.u16(p + 28), extra_len = r.u16(p + 30),
                        comment_len = r.u16(p + 32);
    r.need(p + 46, name_len + extra_len + comment_len, "central directory entry");
    const std::string name = b.substr(p + 46, name_len);
    const std::string member = what + " member '" + name + "'";
    // ZIP64 extra field (id 1): 64-bit values for whichever fields hold 0xFFFFFFFF, in order.
    for (std::uint64_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
      std::uint64_t id = r.u16(x), len = r.u16(x + 2), q = x + 4;
      if (x + 4 + len > p + 46 + name_len + extra_len) bad(member, "extra field overruns its entry");
      if (id == 1) {
        for (std::uint64_t* field : {&usize, &csize, &local}) {
          if (*field != 0xFFFFFFFF) continue;
          if (q + 8 > x + 4 + len) bad(member, "ZIP64 extra field too short");
          *field = r.u64(q);
          q += 8;
        }
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;

    if (flags & 1) bad(member, "encrypted members are not supported");
    if (method != 0 && method != 8)
      bad(member, "compression method " + std::to_string(method) + " is not supported (only stored or deflated)");
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0)
      bad(member, "not an .npy member");

    r.need(local, 30, "local header");
    if (r.u32(local) != kLocalSig) bad(member, "bad local header signature");
    const std::uint64_t lname = r.u16(local + 26), lextra = r.u16(local + 28);
    r.need(local + 30, lname + lextra, "local header");
    if (b.compare(local + 30, lname, name) != 0) bad(member, "local header names another file");
    if (r.u16(local + 8) != method) bad(member, "local and central headers disagree on the method");
    const std::uint64_t data = local + 30 + lname + lextra;
    r.need(data, csize, "member data");
    if (data + csize > cd_offset) bad(member, "member data overlaps the central directory");

    std::string raw;
    if (method == 0) {
      if (csize != usize) bad(member, "stored member with different compressed and uncompressed sizes");
      raw = b.substr(data, csize);
    } else {
      if (csize > 0xFFFFFFFFu || usize > 0xFFFFFFFFu) bad(member, "deflated member over 4 GiB");
      raw = inflate_raw(b.data() + data, csize, usize, member);
    }
    const std::uint32_t got = crc_of(raw.data(), raw.size());
    if (got != crc) {
      std::ostringstream os;
      os << "CRC-32 mismatch (stored " << std::hex << crc << ", computed " << got << "): corrupt data";
      bad(member, os.str());
    }
    NpyArray a = npy_decode(raw, member);
    const std::string key = name.substr(0, name.size() - 4);
    if (result.contains(key)) bad(what, "key '" + key + "' appears twice");
    result.add(key, std::move(a));
  }
  if (p != cd_offset + cd_size) bad(what, "central directory size does not match its entries");
  return result;
}

#define ATTNLAB_INSTANTIATE_GET(E) \
  template const xt::xarray<E, xt::layout_type::row_major>& NpyArray::get<E>() const;
ATTNLAB_INSTANTIATE_GET(float)
ATTNLAB_INSTANTIATE_GET(double)
ATTNLAB_INSTANTIATE_GET(Index)
ATTNLAB_INSTANTIATE_GET(bool)
#undef ATTNLAB_INSTANTIATE_GET
template Array<float> NpyArray::to<float>() const;
template Array<double> NpyArray::to<double>() const;

}  // namespace attnlab
