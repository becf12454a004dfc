// .npy and CSV reading/writing, and the atomic file writer.
#include "io/matrix_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "base/number_text.hpp"

namespace al {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

// ---------------------------------------------------------------------------
// The .npy header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This parser reads exactly the subset numpy writes: string keys, and values
// that are strings, True/False or tuples of integers.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<Index> shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  Result<NpyHeader> parse() {
    NpyHeader h;
    skip_space();
    if (!eat('{')) return fail("the header does not start with '{'");
    for (;;) {
      skip_space();
      if (eat('}')) break;
      std::string key;
      if (!read_string(key)) return fail("expected a quoted key");
      skip_space();
      if (!eat(':')) return fail("expected ':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (!read_string(h.descr)) {
          // A list here is a structured dtype (several named fields).
          return make_error(ErrorCode::UnsupportedFormat,
                            name_ + ": structured arrays are not supported; save a plain "
                                    "float32 array (arr.astype(numpy.float32))",
                            {{"file", name_}});
        }
        h.has_descr = true;
      } else if (key == "fortran_order") {
        if (match_word("True")) h.fortran_order = true;
        else if (match_word("False")) h.fortran_order = false;
        else return fail("fortran_order is not True or False");
        h.has_order = true;
      } else if (key == "shape") {
        if (!read_shape(h.shape)) return fail("the shape is not a tuple of whole numbers");
        h.has_shape = true;
      } else {
        return fail("unknown header key '" + key + "'");
      }
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat('}')) break;
      return fail("expected ',' or '}'");
    }
    if (!h.has_descr || !h.has_order || !h.has_shape)
      return fail("the header lacks 'descr', 'fortran_order' or 'shape'");
    return h;
  }

 private:
  Error fail(const std::string& what) const {
    return make_error(ErrorCode::ParseError, name_ + ": not a valid .npy header (" + what + ")",
                      {{"file", name_}});
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  bool match_word(const char* w) {
    size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }
  bool read_string(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) return false;
    out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool read_shape(std::vector<Index>& shape) {
    if (!eat('(')) return false;
    for (;;) {
      skip_space();
      if (eat(')')) return true;
      Index value = 0;
      auto [ptr, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), value);
      if (ec != std::errc() || value < 0) return false;
      pos_ = static_cast<size_t>(ptr - s_.data());
      shape.push_back(value);
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat(')')) return true;
      return false;
    }
  }

  const std::string& s_;
  const std::string& name_;
  size_t pos_ = 0;
};

std::uint32_t load_le32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}
std::uint64_t load_le64(const unsigned char* p) {
  return std::uint64_t(load_le32(p)) | std::uint64_t(load_le32(p + 4)) << 32;
}

std::string describe_errno(int err) {
  switch (err) {
    case ENOENT: return "the file or its folder does not exist";
    case EACCES:
    case EPERM: return "permission denied";
    case ENOSPC: return "the disk is full";
    case EDQUOT: return "the disk quota is exceeded";
    case EROFS: return "the file system is read-only";
    case EISDIR: return "it is a folder, not a file";
    default: return std::strerror(err);
  }
}

// Shortest text that reads back as the same float ("0.1", not "0.100000001").
void append_float(std::string& out, float value) {
  if (std::isnan(value)) { out += "NaN"; return; }
  if (std::isinf(value)) { out += value > 0 ? "inf" : "-inf"; return; }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, res.ptr);
}

// "[0][3]": where the flat index i of a C-order array is.
std::string element_path(const std::vector<Index>& shape, size_t i) {
  std::string path;
  for (size_t d = shape.size(); d-- > 0;) {
    path.insert(0, "[" + std::to_string(i % static_cast<size_t>(shape[d])) + "]");
    i /= static_cast<size_t>(shape[d]);
  }
  return path;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

enum class Cell { Number, NotNumber, TooLarge };

// One CSV cell: a number, or nan/inf in any case (optionally signed, optionally quoted).
Cell parse_csv_number(std::string cell, float& out) {
  if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = trim(cell.substr(1, cell.size() - 2));
  if (cell.empty()) return Cell::NotNumber;
  const char* begin = cell.data();
  const char* end = begin + cell.size();
  if (*begin == '+') ++begin;  // from_chars rejects a leading '+'
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ptr != end) return Cell::NotNumber;
  if (ec == std::errc::result_out_of_range) {
    // Beyond the double range either way: 1e-400 is 0 (as float32 would make it), 1e400 too large.
    const size_t exponent = cell.find_first_of("eE");
    const bool tiny = exponent != std::string::npos ? cell[exponent + 1] == '-'
                                                    : cell.find_first_not_of("+-0") == cell.find('.');
    if (!tiny) return Cell::TooLarge;
    value = *begin == '-' ? -0.0 : 0.0;
  } else if (ec != std::errc()) {
    return Cell::NotNumber;
  }
  if (std::isfinite(value) && std::fabs(value) >= kFloatOverflow) return Cell::TooLarge;
  out = static_cast<float>(value);
  return Cell::Number;
}

}  // namespace

Result<Tensor> parse_npy(const std::string& bytes, const std::string& name) {
  auto parse_error = [&](const std::string& what) {
    return make_error(ErrorCode::ParseError, name + ": " + what, {{"file", name}});
  };
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kNpyMagicSize || bytes.compare(0, kNpyMagicSize, kNpyMagic, kNpyMagicSize) != 0)
    return parse_error("not a .npy file (it does not start with \\x93NUMPY)");
  if (bytes.size() < 10) return parse_error("the .npy file is truncated (no header)");
  const int major = raw[6], minor = raw[7];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = size_t(raw[8]) | size_t(raw[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return parse_error("the .npy file is truncated (no header)");
    header_len = load_le32(raw + 8);
    header_start = 12;
  } else {
    return make_error(ErrorCode::UnsupportedFormat,
                      name + ": .npy format version " + std::to_string(major) + "." +
                          std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)",
                      {{"file", name}});
  }
  if (header_len > bytes.size() - header_start)
    return parse_error("the .npy file is truncated (the header says " + std::to_string(header_len) +
                       " bytes, the file has " + std::to_string(bytes.size() - header_start) + ")");
  const std::string header_text = bytes.substr(header_start, header_len);
  auto header = HeaderParser(header_text, name).parse();
  if (!header) return header.error();

  const std::string& descr = header->descr;
  size_t item_size = 0;
  if (descr == "<f4") item_size = 4;
  else if (descr == "<f8") item_size = 8;
  else if (descr == ">f4" || descr == ">f8")
    return make_error(ErrorCode::UnsupportedFormat,
                      name + ": the array is big-endian ('" + descr +
                          "'); save it little-endian, e.g. arr.astype('<f4')",
                      {{"file", name}, {"dtype", descr}});
  else
    return make_error(ErrorCode::UnsupportedFormat,
                      name + ": dtype '" + descr +
                          "' is not supported; only float32 ('<f4') and float64 ('<f8') are "
                          "(convert with arr.astype(numpy.float32))",
                      {{"file", name}, {"dtype", descr}});
  if (header->fortran_order)
    return make_error(ErrorCode::UnsupportedFormat,
                      name + ": the array is stored in Fortran (column-major) order; save it "
                             "in C order, e.g. numpy.save(path, numpy.ascontiguousarray(arr))",
                      {{"file", name}});

  const std::vector<Index>& shape = header->shape;
  if (shape.empty())
    return make_error(ErrorCode::UnsupportedFormat,
                      name + ": the array is a 0-d scalar; a vector or matrix is needed",
                      {{"file", name}});
  // The element count, checked against the bytes actually present before
  // anything is allocated, so an absurd shape cannot exhaust memory or overflow.
  const size_t data_bytes = bytes.size() - header_start - header_len;
  const size_t max_elements = data_bytes / item_size;
  // A zero dimension makes the array empty, but the other dimensions must still
  // multiply without overflow (every later shape_product() relies on it).
  size_t count = 1;
  bool too_many = false, has_zero = false, overflows = false;
  for (Index d : shape) {
    if (d == 0) { has_zero = true; continue; }
    if (overflows || count > static_cast<size_t>(std::numeric_limits<Index>::max()) / static_cast<size_t>(d))
      overflows = true;
    else count *= static_cast<size_t>(d);
    if (overflows || count > max_elements) too_many = true;
  }
  if (has_zero) {
    if (overflows)
      return parse_error("the shape " + shape_string(shape) + " in the header is not a possible array size");
    count = 0;
    too_many = false;
  }
  if (too_many || count * item_size > data_bytes)
    return parse_error("the .npy file is truncated: shape " + shape_string(shape) + " of '" + descr +
                       "' needs more than the " + std::to_string(data_bytes) + " data bytes it has");
  if (count * item_size != data_bytes)
    return parse_error("the .npy file has " + std::to_string(data_bytes - count * item_size) +
                       " bytes after the data of shape " + shape_string(shape) +
                       " (not a single array?)");

  std::vector<float> data(count);
  const unsigned char* p = raw + header_start + header_len;
  for (size_t i = 0; i < count; ++i) {
    if (item_size == 4) {
      std::uint32_t bits = load_le32(p + 4 * i);
      std::memcpy(&data[i], &bits, 4);
    } else {
      std::uint64_t bits = load_le64(p + 8 * i);
      double d;
      std::memcpy(&d, &bits, 8);
      if (std::isfinite(d) && std::fabs(d) >= kFloatOverflow)
        return make_error(ErrorCode::InvalidConfig,
                          name + ": value " + element_path(shape, i) + " is " + shortest_text(d) +
                              ", too large for a float32 (at most about 3.4e38)",
                          {{"file", name}});
      data[i] = static_cast<float>(d);
    }
  }
  return Tensor(shape, std::move(data));
}

Result<Tensor> read_npy(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return parse_npy(*bytes, path);
}

std::string npy_bytes(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) shape += ", ";
    shape += std::to_string(t.shape[i]);
  }
  if (t.shape.size() == 1) shape += ",";  // Python's one-element tuple
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that magic + version + length + header ends on a
  // 64-byte boundary, the header ending with '\n' (as numpy writes it).
  const size_t preamble = 10;
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::string out(kNpyMagic, kNpyMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.reserve(out.size() + t.data.size() * 4);
  for (float f : t.data) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int b = 0; b < 4; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

Result<Tensor> parse_csv(const std::string& text, const std::string& name) {
  std::vector<float> values;
  Index cols = -1, rows = 0, first_line = 0;
  // Excel's "CSV UTF-8" starts with a byte-order mark, which is no part of the first number.
  size_t line_start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  Index line_number = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string line = trim(text.substr(line_start, line_end - line_start));
    line_start = line_end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;  // blank lines and numpy.savetxt's "# " headers

    Index count = 0;
    size_t cell_start = 0;
    for (;;) {
      size_t comma = line.find(',', cell_start);
      std::string cell = trim(line.substr(cell_start, comma == std::string::npos ? std::string::npos
                                                                                  : comma - cell_start));
      float value;
      const Cell kind = parse_csv_number(cell, value);
      if (kind == Cell::TooLarge)
        return make_error(ErrorCode::InvalidConfig,
                          name + ": line " + std::to_string(line_number) + ", value " + std::to_string(count + 1) +
                              " is " + cell + ", too large for a float32 (at most about 3.4e38)",
                          {{"file", name}, {"line", std::to_string(line_number)}});
      if (kind == Cell::NotNumber)
        return make_error(ErrorCode::ParseError,
                          name + ": line " + std::to_string(line_number) + ", value " +
                              std::to_string(count + 1) + " is '" + cell +
                              "', not a number (NaN, inf and -inf are allowed)",
                          {{"file", name}, {"line", std::to_string(line_number)}});
      values.push_back(value);
      ++count;
      if (comma == std::string::npos) break;
      cell_start = comma + 1;
    }
    if (cols < 0) {
      cols = count;
      first_line = line_number;
    } else if (count != cols) {
      return make_error(ErrorCode::ParseError,
                        name + ": line " + std::to_string(line_number) + " has " +
                            std::to_string(count) + " values but line " + std::to_string(first_line) +
                            " has " + std::to_string(cols) + " (every row needs the same length)",
                        {{"file", name}, {"line", std::to_string(line_number)}});
    }
    ++rows;
  }
  if (rows == 0)
    return make_error(ErrorCode::ParseError, name + ": the CSV file holds no numbers",
                      {{"file", name}});
  return Tensor({rows, cols}, std::move(values));
}

Result<Tensor> read_csv(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_csv(*text, path);
}

std::string csv_text(const Tensor& t) {
  std::string out;
  const Index cols = t.cols();
  if (cols == 0) return out;
  for (Index i = 0; i < t.size(); ++i) {
    append_float(out, t.data[static_cast<size_t>(i)]);
    out += ((i + 1) % cols == 0) ? '\n' : ',';
  }
  return out;
}

std::optional<Error> read_only_refusal(const std::string& path) {
  // A read-only file is not replaced, though renaming over it would succeed in a writable folder: whoever
  // marked it so meant to keep it. The mode bits too, since access() lets root write anything. stat() and
  // access() follow a link to the file it names.
  struct stat existing {};
  if (::stat(path.c_str(), &existing) != 0 || !S_ISREG(existing.st_mode)) return std::nullopt;
  if ((existing.st_mode & 0222) != 0 && (::access(path.c_str(), W_OK) == 0 || errno != EACCES)) return std::nullopt;
  return make_error(ErrorCode::IoError,
                    "cannot save '" + path + "': the file is read-only; it is unchanged. "
                    "Save under another name, or make the file writable first",
                    {{"path", path}});
}

std::optional<Error> write_file_atomic(const std::string& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  auto failure = [&](const std::string& what, int err) {
    return make_error(ErrorCode::IoError,
                      "cannot save '" + path + "': " + what + " (" + describe_errno(err) +
                          "); any previous file there is unchanged",
                      {{"path", path}});
  };
  // A link (a session kept in a synced folder, linked from the desktop) is saved through: the file it
  // points to is replaced, and the link stays a link (renaming onto it replaced the link itself).
  fs::path target(path);
  std::error_code link_error;
  if (fs::is_symlink(target, link_error)) {
    const fs::path resolved = fs::weakly_canonical(target, link_error);
    if (!link_error) target = resolved;
  }
  if (auto refusal = read_only_refusal(path)) return refusal;
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // mkstemp in the same folder: rename() is atomic only within one file system.
  std::string temp = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return failure("cannot create a temporary file in '" + folder.string() + "'", errno);

  auto abandon = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return failure(what, err);
  };
  // Keep the permissions of the file being replaced; a new file gets rw-r--r--.
  ::fchmod(fd, exists ? (existing.st_mode & 07777) : 0644);

  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return abandon("writing failed", errno);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return abandon("flushing to disk failed", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return failure("closing the file failed", err);
  }
  // A test kills the app while it waits here, between the complete temporary
  // file and the rename, to check that the previous file stays intact; another
  // one edits on while the autosave waits here (ATTENTION_LAB_TEST_PAUSE_SECONDS).
  if (const char* pause_path = std::getenv("ATTENTION_LAB_TEST_PAUSE_BEFORE_RENAME"); pause_path && path == pause_path) {
    const char* seconds = std::getenv("ATTENTION_LAB_TEST_PAUSE_SECONDS");
    std::this_thread::sleep_for(std::chrono::milliseconds(seconds ? std::atol(seconds) * 1000 : 60000));
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return failure("replacing the file failed", err);
  }
  // Make the rename itself durable.
  int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return std::nullopt;
}

Result<std::string> read_file(const std::string& path) {
  auto failure = [&](int err) {
    return make_error(ErrorCode::IoError, "cannot read '" + path + "': " + describe_errno(err),
                      {{"path", path}});
  };
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return failure(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int err = errno;
    ::close(fd);
    return failure(err);
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return failure(EISDIR);
  }
  std::string out;
  if (S_ISREG(info.st_mode)) out.reserve(static_cast<size_t>(info.st_size));
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return failure(err);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace al
