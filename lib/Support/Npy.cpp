//===- Npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// A .npy file is the magic "\x93NUMPY", a major and minor version byte, the
// header length (uint16 in 1.0, uint32 in 2.0/3.0, little-endian), a Python
// dict literal such as {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), } padded with spaces and a newline, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "sluice/Support/Npy.h"
#include "sluice/Support/InputLimits.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir::sluice;
using llvm::StringRef;

static constexpr StringRef kMagic("\x93NUMPY", 6);

static llvm::Error npyError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(name + ": " + message);
}

/// Decodes an IEEE binary16 bit pattern.
static double halfToDouble(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -magnitude : magnitude;
}

namespace {
/// A tiny reader for the header's Python dict literal.
struct HeaderParser {
  StringRef rest;

  void skipSpace() { rest = rest.ltrim(" \t\n\r"); }
  bool consume(StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }
  std::optional<std::string> parseString() {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return std::nullopt;
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return std::nullopt;
    std::string value = rest.substr(1, end - 1).str();
    rest = rest.drop_front(end + 1);
    return value;
  }
  std::optional<int64_t> parseInteger() {
    skipSpace();
    unsigned long long value;
    if (rest.consumeInteger(10, value) || value > INT64_MAX)
      return std::nullopt;
    rest.consume_front("L"); // Python 2 longs.
    return static_cast<int64_t>(value);
  }
};
} // namespace

/// Parses the header dict into `descr`, `fortranOrder` and `shape`.
static llvm::Error parseHeader(StringRef header, StringRef name,
                               std::string &descr, bool &fortranOrder,
                               std::vector<int64_t> &shape) {
  HeaderParser parser{header};
  bool sawDescr = false, sawOrder = false, sawShape = false;
  auto malformed = [&](const llvm::Twine &what) {
    return npyError(name,
                    "malformed .npy header (" + what + "): " + header.trim());
  };
  if (!parser.consume("{"))
    return malformed("expected '{'");
  while (!parser.consume("}")) {
    std::optional<std::string> key = parser.parseString();
    if (!key)
      return malformed("expected a quoted key");
    if (!parser.consume(":"))
      return malformed("expected ':' after '" + *key + "'");
    if (*key == "descr") {
      std::optional<std::string> value = parser.parseString();
      if (!value)
        return malformed("'descr' must be a string");
      descr = *value;
      sawDescr = true;
    } else if (*key == "fortran_order") {
      if (parser.consume("True"))
        fortranOrder = true;
      else if (parser.consume("False"))
        fortranOrder = false;
      else
        return malformed("'fortran_order' must be True or False");
      sawOrder = true;
    } else if (*key == "shape") {
      if (!parser.consume("("))
        return malformed("'shape' must be a tuple");
      shape.clear();
      while (!parser.consume(")")) {
        std::optional<int64_t> size = parser.parseInteger();
        if (!size)
          return malformed("'shape' must hold non-negative integers");
        shape.push_back(*size);
        if (!parser.consume(",") &&
            !(parser.skipSpace(), parser.rest.starts_with(")")))
          return malformed("expected ',' or ')' in 'shape'");
      }
      sawShape = true;
    } else {
      return malformed("unknown key '" + *key + "'");
    }
    if (!parser.consume(",") &&
        !(parser.skipSpace(), parser.rest.starts_with("}")))
      return malformed("expected ',' or '}'");
  }
  if (!sawDescr || !sawOrder || !sawShape)
    return malformed("needs 'descr', 'fortran_order' and 'shape'");
  return llvm::Error::success();
}

llvm::Expected<NpyArray> mlir::sluice::parseNpy(StringRef bytes,
                                                StringRef name) {
  if (!bytes.starts_with(kMagic))
    return npyError(name, "not a .npy file (bad magic string; expected "
                          "\"\\x93NUMPY\")");
  if (bytes.size() < 10)
    return npyError(name, "truncated .npy header");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return npyError(name, "unsupported .npy format version " +
                              llvm::Twine(major) + "." + llvm::Twine(minor) +
                              " (supported: 1.0, 2.0, 3.0)");
  auto byteAt = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes)
    return npyError(name, "truncated .npy header");
  uint32_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= byteAt(8 + i) << (8 * i);
  if (headerLength > kMaxNpyHeaderBytes)
    return npyError(name, "the .npy header claims " +
                              llvm::Twine(headerLength) + " bytes; at most " +
                              llvm::Twine(kMaxNpyHeaderBytes) + " are allowed");
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return npyError(name, "truncated .npy header (it claims " +
                              llvm::Twine(headerLength) + " bytes)");
  StringRef header = bytes.slice(8 + lengthBytes, dataStart);

  std::string descr;
  bool fortranOrder = false;
  NpyArray array;
  if (llvm::Error error =
          parseHeader(header, name, descr, fortranOrder, array.shape))
    return error;
  size_t itemSize;
  if (descr == "<f2") {
    array.dtype = NpyDType::F16;
    itemSize = 2;
  } else if (descr == "<f4") {
    array.dtype = NpyDType::F32;
    itemSize = 4;
  } else if (descr == "<f8") {
    array.dtype = NpyDType::F64;
    itemSize = 8;
  } else if (StringRef(descr).starts_with(">")) {
    return npyError(name, "big-endian dtype '" + descr +
                              "' is not supported (use '<f2', '<f4' or "
                              "'<f8')");
  } else {
    return npyError(name, "unsupported dtype '" + descr +
                              "' (supported: '<f2', '<f4', '<f8')");
  }
  if (fortranOrder)
    return npyError(name, "fortran_order True is not supported (save a "
                          "C-contiguous array)");

  uint64_t count = 1;
  for (int64_t size : array.shape) {
    if (size != 0 && count > UINT64_MAX / 8 / static_cast<uint64_t>(size)) {
      std::string shape;
      for (int64_t dim : array.shape)
        shape += (shape.empty() ? "" : ", ") + std::to_string(dim);
      return npyError(name, "shape (" + shape +
                                ") is too large: its data would need more "
                                "than 2^64 bytes (a .npy file may have at "
                                "most " +
                                std::to_string(kMaxNpyFileBytes >> 30) +
                                " GiB)");
    }
    count *= static_cast<uint64_t>(size);
  }
  uint64_t expected = count * itemSize, actual = bytes.size() - dataStart;
  if (actual < expected)
    return npyError(name, "truncated data: the shape needs " +
                              llvm::Twine(expected) + " bytes but " +
                              llvm::Twine(actual) + " follow the header");
  if (actual > expected)
    return npyError(name, llvm::Twine(actual - expected) +
                              " unexpected bytes after the data");

  const char *data = bytes.data() + dataStart;
  array.data.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    const char *item = data + i * itemSize;
    uint64_t bits = 0;
    for (size_t b = 0; b < itemSize; ++b)
      bits |= static_cast<uint64_t>(static_cast<unsigned char>(item[b]))
              << (8 * b);
    if (itemSize == 2) {
      array.data[i] = halfToDouble(static_cast<uint16_t>(bits));
    } else if (itemSize == 4) {
      uint32_t word = static_cast<uint32_t>(bits);
      float value;
      std::memcpy(&value, &word, 4);
      array.data[i] = value;
    } else {
      double value;
      std::memcpy(&value, &bits, 8);
      array.data[i] = value;
    }
  }
  return array;
}

llvm::Expected<NpyArray> mlir::sluice::readNpy(StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readBoundedFile(path, kMaxNpyFileBytes, "a .npy file");
  if (!file)
    return file.takeError();
  return parseNpy((*file)->getBuffer(), path);
}

NonFiniteCount mlir::sluice::countNonFinite(llvm::ArrayRef<double> data) {
  NonFiniteCount count;
  for (auto [index, value] : llvm::enumerate(data)) {
    if (std::isfinite(value))
      continue;
    if (!count.nan && !count.infinite)
      count.firstIndex = index;
    ++(std::isnan(value) ? count.nan : count.infinite);
  }
  return count;
}

llvm::Expected<std::string>
mlir::sluice::serializeNpy(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<double> data, NpyDType dtype) {
  if (dtype == NpyDType::F16)
    return llvm::createStringError("writing f16 .npy files is not supported "
                                   "(write '<f4' or '<f8')");
  uint64_t count = 1;
  std::string shapeText = "(";
  for (int64_t size : shape) {
    if (size < 0)
      return llvm::createStringError("negative dimension in .npy shape");
    count *= static_cast<uint64_t>(size);
    shapeText += std::to_string(size) + (shape.size() == 1 ? ",)" : ", ");
  }
  if (shape.size() != 1) {
    if (!shape.empty())
      shapeText.resize(shapeText.size() - 2);
    shapeText += ")";
  }
  if (count != data.size())
    return llvm::createStringError("the .npy shape holds " +
                                   std::to_string(count) + " elements but " +
                                   std::to_string(data.size()) + " were given");
  bool isF32 = dtype == NpyDType::F32;
  std::string header = std::string("{'descr': '") + (isF32 ? "<f4" : "<f8") +
                       "', 'fortran_order': False, 'shape': " + shapeText +
                       ", }";
  // Pad with spaces and a newline so the data starts on a 64-byte boundary.
  bool version2 = header.size() + 1 + 10 > 65535;
  size_t prefix = version2 ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  for (double value : data) {
    uint64_t bits;
    size_t itemSize;
    if (isF32) {
      float narrow = static_cast<float>(value);
      uint32_t word;
      std::memcpy(&word, &narrow, 4);
      bits = word;
      itemSize = 4;
    } else {
      std::memcpy(&bits, &value, 8);
      itemSize = 8;
    }
    for (size_t b = 0; b < itemSize; ++b)
      out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

llvm::Error mlir::sluice::writeNpy(StringRef path,
                                   llvm::ArrayRef<int64_t> shape,
                                   llvm::ArrayRef<double> data,
                                   NpyDType dtype) {
  llvm::Expected<std::string> bytes = serializeNpy(shape, data, dtype);
  if (!bytes)
    return npyError(path, llvm::toString(bytes.takeError()));

  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  int fd;
  llvm::SmallString<256> tempPath;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, tempPath))
    return npyError(path, "cannot create a temporary file: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << *bytes;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tempPath);
      return npyError(path, "cannot write: " + message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return npyError(path, "cannot write: " + ec.message());
  }
  return llvm::Error::success();
}
